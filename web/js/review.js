// The review beside the replay viewer (web/js/pages/match.js): one player's decisions as the
// strong bot values them (GET /api/matches/{id}/review?player=NAME). A mark for each of the
// player's decisions in the hand shown (those where the player and the bot disagree stand
// out), its two values on hover, focus or tap; the note of the decision at the step shown;
// and the match's biggest misses, each a link to its turn. Pure views: the page owns the state.
import { html, nothing } from "./vendor/lit-html.js";
import { playerName } from "./render.js";
import { tileKey } from "./tiles.js";

const MISSES_SHOWN = 10;

/** The step (frame index) of a hand's frames that shows its action `index` (0-based, among
 * every player's logged actions of the hand): each frame lists the actions that led to it. */
export function stepOfAction(frames, index) {
  let seen = 0;
  for (let step = 0; step < frames.length; step += 1) {
    seen += (frames[step].actions || []).length;
    if (seen > index) return step;
  }
  return frames.length - 1;
}

/** An action (`{type, tile}`) in words: "discard 5m", "pung". */
export function actionText(t, action) {
  const tile = action.tile ? t(tileKey(action.tile)) : "";
  return t(`replay.review.act.${action.type}`, { tile }).trim();
}

const value = (v) => Number(v).toFixed(2);

/** The two values of a decision in words. */
function valuesText(t, d) {
  return t("replay.review.values", {
    taken: actionText(t, d.taken), taken_value: value(d.taken_value),
    preferred: actionText(t, d.preferred), preferred_value: value(d.preferred_value), loss: value(d.loss),
  });
}

/**
 * The review panel. `r`: { t, names, seat, hand, frames, step, review (the API's answer or
 * null), loading, error, onLoad(), onJump(decision) }.
 */
export function reviewPanel(r) {
  const t = r.t;
  const name = playerName(t, r.names, r.seat);
  const review = r.review && r.review.player === r.seat ? r.review : null;
  if (!review) {
    return html`<section class="review" aria-label=${t("replay.review.title")}>
      <button class="review-load" ?disabled=${r.loading} @click=${r.onLoad}>${t("replay.review.load", { name })}</button>
      ${r.loading ? html`<span class="hint">${t("replay.review.loading")}</span>` : nothing}
      ${r.error ? html`<p class="table-error" role="alert">${r.error}</p>` : nothing}
    </section>`;
  }
  const decisions = review.decisions;
  const here = decisions.filter((d) => d.hand_no === r.hand);
  const at = here.filter((d) => stepOfAction(r.frames, d.index) === r.step);
  const misses = review.misses.slice(0, MISSES_SHOWN).map((i) => decisions[i]);
  return html`<section class="review" aria-label=${t("replay.review.title")}>
    <p class="review-summary">${t("replay.review.summary", { name, decisions: decisions.length, agreed: review.agreed })}
      ${review.stand_in ? html`<span class="review-stand-in">${t("replay.review.stand_in", { name, count: review.stand_in })}</span>` : nothing}
      <span class="hint">${t("replay.review.scale", { scale: review.scale })}</span></p>
    <div class="review-marks" role="list" aria-label=${t("replay.review.marks", { hand: r.hand })}>
      ${here.map((d) => mark(r, d, at.includes(d)))}
    </div>
    <p class="review-note" aria-live="polite">${at.length
      ? at.map((d) => html`<span class=${d.agrees ? "agree" : "apart"}>${d.agrees ? "✓" : "✗"} ${valuesText(t, d)}</span> `)
      : "\u00a0"}</p>
    <details class="review-misses" ?open=${misses.length > 0}>
      <summary>${t("replay.review.misses", { count: review.misses.length })}</summary>
      ${misses.length === 0 ? html`<p>${t("replay.review.no_miss")}</p>` : html`<ol>${misses.map((d) => html`<li>
        <a href="#" @click=${(e) => (e.preventDefault(), r.onJump(d))}>${t("replay.review.where", { hand: d.hand_no, action: d.index + 1 })}</a>:
        ${valuesText(t, d)}</li>`)}</ol>`}
    </details>
  </section>`;
}

/** One decision's mark: a button that jumps to its turn; its values show on hover and focus
 * (and so on a tap, which focuses it), and in the note once its turn is shown. */
function mark(r, d, current) {
  const t = r.t;
  const label = `${t("replay.review.where", { hand: d.hand_no, action: d.index + 1 })}: ${valuesText(t, d)}`;
  return html`<span role="listitem" class="review-item"><button
      class="review-mark ${d.agrees ? "agree" : "apart"} ${current ? "current" : ""}"
      aria-label=${label} aria-current=${current ? "step" : "false"} @click=${() => r.onJump(d)}
    >${d.agrees ? "" : "!"}</button><span class="review-tip" role="tooltip">${valuesText(t, d)}</span></span>`;
}

// The match page (`#/match/:id`): seats, final scores, every hand with its fans; and the
// replay viewer (`#/match/:id/:hand/:step`) fed by GET /api/matches/{id}/replay?hand=N,
// drawn by the live table's renderer with every hand open, and beside it the review of the
// seat it is seen from (web/js/review.js), asked for with a button. Keys: ←/→ a turn, ↑/↓ or
// PageUp/PageDown a hand, Home/End the hand's start/end, Space autoplay. A private table's
// match opens only with the table's invite code (`?invite=CODE` after the address): every
// request for it carries the code, and every address of it the page makes keeps it.
import { html, nothing } from "../vendor/lit-html.js";
import { matchAddress } from "../app.js";
import { changeText, deltaClass } from "../rating.js";
import { describeEvents, fanLabel, foldResult, lastDiscard, playerName, resultView, signed, tableView } from "../render.js";
import { reviewPanel, stepOfAction } from "../review.js";
import { rulesName } from "./lobby.js";
import { missingView } from "./notfound.js";
import { when } from "./player.js";

const AUTOPLAY_MS = 800;
let s = null;

export const matchPage = {
  title(app) {
    return s ? app.t("replay.title", { id: s.id }) : "";
  },
  /** Another address of the same page (an edited address, back or forward): another match,
   * or another hand and step of this one, which the page then shows. */
  update(app, params) {
    if (s && s.id === params.id && s.invite === params.invite) return goTo(params.hand || 1, params.step || 0);
    matchPage.leave(app);
    matchPage.enter(app, params);
  },
  enter(app, params) {
    const hand = Number(params.hand) || 1;
    const step = Number(params.step) || 0;
    // `hand`, `step`: what the address names (the hand shown once its frames are in);
    // `handError`: why that hand cannot be shown; `asked`: the latest hand asked for.
    s = { app, id: params.id, invite: params.invite || null, match: null, error: null, replay: null, hand, step, autoplay: null, loading: false, seat: 0,
      reviews: {}, reviewing: false, reviewError: null, handError: null, asked: 0 };
    document.addEventListener("keydown", onKey);
    load(app);
  },
  leave() {
    if (!s) return;
    clearInterval(s.autoplay);
    document.removeEventListener("keydown", onKey);
    s = null;
  },
  view(app) {
    if (!s) return nothing;
    return html`<section class="match-page">${body(app)}</section>`;
  },
};

/** GET `path` of the match's API (`/api/matches/{id}` + `path`, its own query in `query`),
 * with the invite code of a private table's match; a refusal is thrown with its status and
 * whether it is a private table's (`private`: the code is missing or wrong). */
async function getJson(path, query = {}) {
  const params = new URLSearchParams(query);
  if (s.invite) params.set("invite", s.invite);
  const search = params.toString();
  const reply = await fetch(`/api/matches/${encodeURIComponent(s.id)}${path}${search ? `?${search}` : ""}`);
  const data = await reply.json();
  if (!reply.ok) throw Object.assign(new Error(data.error || `${reply.status}`), { status: reply.status, private: data.private === true });
  return data;
}

/** The key of the words for a refusal of a private table's match: no code, or another. */
function privateKey() {
  return s.invite ? "replay.wrong_invite" : "replay.private";
}

/** This match's address (`hand`, `step`: a replay's), its invite code kept. */
function address(hand = null, step = 0) {
  return matchAddress(s.id, { hand, step, invite: s.invite });
}

async function load(app) {
  const here = s;
  try {
    here.match = await getJson("");
  } catch (error) {
    // No such match (404), an address that names none (400: not a match number), no answer
    // at all (the network, a reply that is not JSON): said in the page's words, kept as keys
    // (its language may change while it shows them); any other refusal in the server's own.
    const gone = { 404: "replay.missing", 400: "replay.bad_address" }[error.status];
    if (gone) here.error = { key: gone, gone: true };
    else if (error.private) here.error = { key: privateKey(), gone: false }; // no code, or another
    else if (error.status === 403) here.error = { key: "replay.held", gone: false }; // a duplicate session's, until it ends
    else here.error = error.status ? String(error.message) : { key: "app.player.unreachable", gone: false };
  }
  app.refresh();
  if (here.match && here.match.finished) await loadHand(here.hand, here.step);
}

/** Fetch hand `hand`'s frames and show frame `step` (clamped; -1: the last; `{ index }`:
 * the one that shows the hand's action `index`). Only the latest hand asked for is shown
 * (the address may change again while one loads); a hand the match does not have leaves no
 * other hand's board on screen but says so, in the visitor's words. */
async function loadHand(hand, step) {
  const here = s;
  const asked = ++here.asked;
  here.loading = true;
  let replay = null;
  let failed = null;
  try {
    replay = await getJson("/replay", { hand });
  } catch (error) {
    failed = error;
  }
  if (s !== here || here.asked !== asked) return; // left, or another hand asked for since
  here.loading = false;
  if (failed) {
    // 404: no such hand (the server: 400 for a number it cannot read, as too long a one).
    const missing = failed.status === 404 || failed.status === 400;
    here.replay = null;
    here.hand = hand;
    here.step = 0;
    stopAutoplay();
    if (missing) here.handError = { key: "replay.no_hand" };
    else if (failed.private) here.handError = { key: privateKey() };
    else if (failed.status === 403) here.handError = { key: "replay.held" };
    else here.handError = failed.status ? String(failed.message) : { key: "app.player.unreachable" };
    here.app.refresh();
    return;
  }
  here.replay = replay;
  here.hand = hand;
  here.handError = null;
  if (typeof step === "object") step = stepOfAction(replay.frames, step.index);
  show(step < 0 ? replay.frames.length - 1 : step);
}

/** Show hand `hand` at `step`, as an address names them. */
function goTo(hand, step) {
  if (!s.match) {
    s.hand = hand; // the match is still loading: its first hand to show is this one
    s.step = step;
    return;
  }
  if (!s.match.finished) return;
  if (!s.replay || s.replay.hand_no !== hand) return loadHand(hand, step);
  s.asked += 1; // the hand on screen after all: one still loading is no longer wanted
  s.loading = false;
  show(step);
}

/** Show frame `step` of the loaded hand, and keep the address a deep link to it. */
function show(step) {
  const frames = s.replay.frames;
  s.step = Math.max(0, Math.min(frames.length - 1, step));
  history.replaceState(null, "", address(s.hand, s.step));
  s.app.refresh();
}

/** Ask for the review of the seat the replay is seen from (once per seat). */
async function loadReview() {
  const here = s;
  const seat = here.seat;
  here.reviewing = true;
  here.reviewError = null;
  here.app.refresh();
  try {
    const name = here.match.seats[seat] || "";
    here.reviews[seat] = await getJson("/review", { player: name });
  } catch (error) {
    if (s === here) here.reviewError = String(error.message);
  }
  if (s !== here) return;
  here.reviewing = false;
  here.app.refresh();
}

/** Show the turn of a reviewed decision. */
function jumpTo(decision) {
  stopAutoplay();
  if (s.replay && s.replay.hand_no === decision.hand_no) return show(stepOfAction(s.replay.frames, decision.index));
  loadHand(decision.hand_no, { index: decision.index });
}

function stepBy(delta) {
  if (!s.replay || s.loading) return;
  const last = s.replay.frames.length - 1;
  const next = s.step + delta;
  if (next > last && s.hand < s.replay.hands) return loadHand(s.hand + 1, 0);
  if (next < 0 && s.hand > 1) return loadHand(s.hand - 1, -1);
  show(next);
  if (next >= last && delta > 0 && s.hand >= s.replay.hands) stopAutoplay();
}

function handBy(delta) {
  if (!s.replay || s.loading) return;
  const hand = s.hand + delta;
  if (hand >= 1 && hand <= s.replay.hands) loadHand(hand, 0);
}

function toggleAutoplay() {
  if (s.autoplay) return stopAutoplay();
  s.autoplay = setInterval(() => stepBy(1), AUTOPLAY_MS);
  s.app.refresh();
}

function stopAutoplay() {
  clearInterval(s.autoplay);
  s.autoplay = null;
  s.app.refresh();
}

function onKey(event) {
  if (!s || !s.replay || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target.closest && event.target.closest("input, textarea, select")) return;
  const keys = {
    ArrowRight: () => stepBy(1), ArrowLeft: () => stepBy(-1),
    ArrowDown: () => handBy(1), PageDown: () => handBy(1), ArrowUp: () => handBy(-1), PageUp: () => handBy(-1),
    Home: () => show(0), End: () => show(s.replay.frames.length - 1), " ": toggleAutoplay,
  };
  const run = keys[event.key];
  if (!run || (event.key === " " && event.target.closest?.("button"))) return;
  event.preventDefault();
  run();
}

// ------------------------------------------------------------------- views ---

/** The frame at `step` with what the frames up to it taught: last discard, the result. */
export function replayState(frames, step) {
  let last = null;
  let result = null;
  for (const frame of frames.slice(0, step + 1)) {
    last = lastDiscard(last, frame.events);
    for (const e of frame.events) result = foldResult(result, e, frame.hand_no, frame.scores);
  }
  return { frame: frames[step], last, result };
}

function body(app) {
  const t = app.t;
  if (s.error && !s.match) {
    const text = s.error.key ? t(s.error.key, { id: s.id }) : s.error;
    const title = s.error.gone ? t("replay.no_match") : t("replay.title", { id: s.id });
    return missingView({ title, text, href: "#/lobby", back: t("table.to_lobby") });
  }
  if (!s.match) return html`<p class="loading">${t("table.loading")}</p>`;
  const m = s.match;
  const names = m.seats;
  return html`<h1>${t("replay.title", { id: m.match })}</h1>
    <p class="match-meta">${t("replay.meta", { rules: rulesName(app, m.rules), table: m.table, when: when(m.ended_at || m.started_at) })}</p>
    <table class="payments"><thead><tr><th>${t("table.result.player")}</th><th class="num">${t("replay.final")}</th></tr></thead>
      <tbody>${names.map((name, p) => html`<tr><td>${name && !name.startsWith("bot:") ? html`<a href="#/player/${encodeURIComponent(name)}">${name}</a>` : playerName(t, names, p)}</td>
        <td class="num">${m.final_scores ? signed(m.final_scores[p]) : "…"}</td></tr>`)}</tbody></table>
    ${m.rated ? ratingsTable(app, m) : nothing}
    ${m.finished ? viewer(app, names) : html`<p>${t("replay.in_play")}</p>`}
    ${handsTable(app, m)}`;
}

/** A rated match's line per player: rank, score, rating before → after. */
function ratingsTable(app, m) {
  const t = app.t;
  const changes = [...(m.rating_changes || [])].sort((a, b) => a.rank - b.rank || a.player - b.player);
  const ladder = encodeURIComponent(m.rules);
  return html`<section class="match-ratings" aria-labelledby="match-ratings-title">
    <h2 id="match-ratings-title">${t("replay.ratings")}</h2>
    ${changes.length === 0
      ? html`<p class="hint">${t("replay.ratings_pending")}</p>`
      : html`<table class="payments ratings"><thead><tr><th class="num">${t("replay.rank")}</th><th>${t("table.result.player")}</th>
          <th class="num">${t("replay.score")}</th><th>${t("replay.rating_change")}</th></tr></thead>
        <tbody>${changes.map((c) => html`<tr>
          <td class="num">${c.rank}</td>
          <td><a href="#/player/${encodeURIComponent(c.name)}">${c.name}</a></td>
          <td class="num">${signed(c.score)}</td>
          <td class="rating-change ${deltaClass(c.rating_before, c.rating_after)}">${changeText(app.lang, c.rating_before, c.rating_after)}</td>
        </tr>`)}</tbody></table>`}
    <p><a href="#/ladder/${ladder}">${t("table.see_ladder")}</a></p>
  </section>`;
}

function handsTable(app, m) {
  const t = app.t;
  const name = (p) => playerName(t, m.seats, p);
  const fanName = (f) => fanLabel(f, app.lang);
  return html`<h2>${t("replay.hands")}</h2>
    <table class="match-hands"><thead><tr><th>#</th><th>${t("replay.outcome")}</th><th>${t("replay.fans")}</th><th>${t("replay.deltas")}</th><th></th></tr></thead>
    <tbody>${m.hands.map((h) => html`<tr>
      <td>${h.hand_no}</td>
      <td class="outcome">${h.result === "win" ? h.discarder === null ? t("table.result.self_drawn", { name: name(h.winner) }) : t("table.result.won_on", { name: name(h.winner), from: name(h.discarder) }) : t("replay.drawn")}</td>
      <td class="fan-list">${h.fans.map((f) => html`<span>${fanName(f)}${f.count > 1 ? ` ×${f.count}` : ""} ${f.points * f.count}</span>; `)}${h.result === "win" ? html`<b>${h.fan_total} ${t("table.fan")}</b>` : nothing}</td>
      <td>${h.deltas.map(signed).join(" / ")}</td>
      <td>${m.finished ? html`<a href=${address(h.hand_no, 0)} @click=${(e) => (e.preventDefault(), loadHand(h.hand_no, 0))}>${t("replay.watch")}</a>` : nothing}</td>
    </tr>`)}</tbody></table>`;
}

/** In place of the viewer: the hand the address names cannot be shown (none such, or the
 * server could not replay it), and the way to the first hand. */
function noHand(app) {
  const t = app.t;
  const error = s.handError;
  const text = error.key ? t(error.key, { id: s.id, hand: s.hand }) : error;
  return html`<div class="replay replay-missing">
    <p class="error" role="alert">${text}</p>
    ${s.hand !== 1
      ? html`<p><a class="button" href=${address(1, 0)} @click=${(e) => (e.preventDefault(), loadHand(1, 0))}>${t("replay.first_hand")}</a></p>`
      : nothing}
  </div>`;
}

function viewer(app, names) {
  const t = app.t;
  if (s.handError) return noHand(app);
  if (!s.replay) return html`<p class="loading">${t("table.loading")}</p>`;
  const r = s.replay;
  const { frame, last, result } = replayState(r.frames, s.step);
  const ctx = {
    t, state: frame, names, perspective: s.seat, last, legal: [], interactive: false, selected: null,
    raisedTile: null, deadlineAt: null, now: 0, onTile: () => {}, onAction: () => {},
  };
  const wild = frame.view.wild_tiles || [];
  const button = (label, key, run, disabled = false) =>
    html`<button class="replay-${label}" ?disabled=${disabled} @click=${run} title=${t(`replay.${label}`) + ` (${key})`}>${t(`replay.${label}`)}</button>`;
  return html`<div class="replay" aria-label=${t("replay.viewer")}>
    <div class="replay-controls" role="toolbar" aria-label=${t("replay.controls")}>
      ${button("prev_hand", "↑", () => handBy(-1), s.hand <= 1)}
      ${button("prev", "←", () => stepBy(-1), s.hand <= 1 && s.step === 0)}
      ${button(s.autoplay ? "pause" : "play", "Space", toggleAutoplay)}
      ${button("next", "→", () => stepBy(1), s.hand >= r.hands && s.step >= r.frames.length - 1)}
      ${button("next_hand", "↓", () => handBy(1), s.hand >= r.hands)}
      <label class="replay-seat">${t("replay.seen_from")}
        <select @change=${(e) => ((s.seat = Number(e.target.value)), (s.reviewError = null), app.refresh())}>${names.map((_, p) =>
          html`<option value=${p} ?selected=${p === s.seat}>${playerName(t, names, p)}</option>`)}</select></label>
      <span class="replay-step" aria-live="polite">${t("replay.position", { hand: s.hand, hands: r.hands, step: s.step, steps: r.frames.length - 1 })}</span>
    </div>
    ${reviewPanel({
      t, names, seat: s.seat, hand: s.hand, frames: r.frames, step: s.step, review: s.reviews[s.seat] || null,
      loading: s.reviewing, error: s.reviewError, onLoad: loadReview, onJump: jumpTo,
    })}
    <p class="replay-actions" aria-live="polite">${describeEvents(t, names, frame.events) || "\u00a0"}</p>
    ${tableView(ctx)}
    ${result && frame.view.phase === "over" ? html`<div class="replay-result">${resultView(t, app.lang, names, result, wild)}</div>` : nothing}
    <p class="help keys-only">${t("replay.keys")}</p>
  </div>`;
}

// `#/player/:name`: a player's grade, counts and recent matches (GET /api/players/{name}),
// each match linking to its page and replay.
import { html, nothing } from "../vendor/lit-html.js";
import { NARROW, WIDE, chartView } from "../chart.js";
import { deltaClass, deltaText, gradeText, ratingText } from "../rating.js";
import { botName } from "../bots.js";
import { rulesName } from "./lobby.js";
import { missingView } from "./notfound.js";

export const RECENT_CHANGES = 10; // the rating changes listed under the chart

// ladders: ladder id -> its entry of GET /api/ladders (provisional_matches);
// histories: ladder id -> GET /api/ladders/{id}/players/{name} (the season's changes)
// error: the refusal there is no page for, `{ status, body }` (status 0: no answer), put in
// words when shown (the visitor may change the language meanwhile)
const state = { name: null, player: null, error: null, ladders: {}, histories: {} };

async function load(app, name) {
  try {
    const response = await fetch(`/api/players/${encodeURIComponent(name)}`);
    const body = await response.json();
    if (state.name !== name) return; // the visitor moved on to another player meanwhile
    if (response.ok) state.player = body;
    else state.error = { status: response.status, body };
  } catch (error) {
    if (state.name === name) state.error = { status: 0, body: null };
  }
  app.refresh();
  if (state.player && (state.player.ratings || []).length) await loadLadders(app, name, state.player.ratings);
}

/** Each rated ladder's history of this season, and the ladders' thresholds. */
async function loadLadders(app, name, ratings) {
  const json = async (url) => {
    const response = await fetch(url);
    return response.ok ? response.json() : null;
  };
  try {
    const [ladders, ...histories] = await Promise.all([
      json("/api/ladders"),
      ...ratings.map((r) => json(`/api/ladders/${encodeURIComponent(r.ladder)}/players/${encodeURIComponent(name)}`)),
    ]);
    if (state.name !== name) return;
    for (const entry of (ladders && ladders.ladders) || []) state.ladders[entry.id] = entry;
    ratings.forEach((r, i) => histories[i] && (state.histories[r.ladder] = histories[i]));
  } catch {
    // the ratings themselves are shown already; a history that does not load is left out
  }
  app.refresh();
}

/** What to say when the server has no page for `name`: its own words, except for a 404. */
export function refusal(app, name, status, body) {
  if (status === 404) return app.t("app.player.unknown", { name });
  return (body && body.error) || app.t("app.player.unreachable");
}

/** "2026-12-01 10:00" in the visitor's own time zone. */
export function when(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso || "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

function stat(label, value) {
  // Words (a provisional player's standing) in a smaller size than figures, so they fit.
  const words = typeof value === "string" && value.length > 8;
  return html`<div class="stat"><dt>${label}</dt><dd class=${words ? "words" : ""}>${value}</dd></div>`;
}

function others(app, seats, me) {
  return seats
    .map((name, i) => (i === me ? null : name && name.startsWith("bot:") ? botName(app.t, name) : name))
    .filter((name) => name !== null)
    .join(", ");
}

function recent(app, player) {
  if (player.recent.length === 0) return html`<p class="empty">${app.t("app.player.no_matches")}</p>`;
  const t = app.t;
  return html`<div class="table-scroll"><table class="matches">
    <caption class="visually-hidden">${t("app.player.recent")}</caption>
    <thead><tr><th scope="col">${t("app.player.match")}</th><th scope="col">${t("app.player.ended")}</th>
      <th scope="col">${t("app.create.rules")}</th><th scope="col">${t("app.player.score")}</th>
      <th scope="col">${t("app.player.hands")}</th><th scope="col">${t("app.player.with")}</th></tr></thead>
    <tbody>${player.recent.map(
      (m) => html`<tr>
        <td><a href="#/match/${m.match}" aria-label=${t("app.player.open_match", { n: m.match })}>#${m.match}</a></td>
        <td>${when(m.ended_at)}</td>
        <td>${rulesName(app, m.rules)}</td>
        <td class=${m.score > 0 ? "plus" : m.score < 0 ? "minus" : ""}>${m.score > 0 ? "+" : ""}${m.score}</td>
        <td>${t("app.player.won_lost_drawn", { won: m.won, lost: m.lost, drawn: m.drawn })}</td>
        <td>${others(app, m.seats, m.player)}</td>
      </tr>`,
    )}</tbody>
  </table></div>`;
}

/** "#3" for a ranked player, "provisional (2 of 10 matches)" for one still provisional. */
export function standing(app, rating, needed) {
  if (!rating.provisional && rating.rank !== null) return app.t("app.rating.rank", { rank: rating.rank });
  return needed
    ? app.t("app.rating.provisional_of", { n: rating.matches, of: needed })
    : app.t("app.rating.provisional");
}

function chartLabels(app, rating, history) {
  const t = app.t;
  const values = history.map((c) => c.rating_after);
  return {
    id: `chart-${rating.ladder}`,
    title: t("app.rating.chart_title", { name: state.name, ladder: rulesName(app, rating.ladder), season: rating.season }),
    desc: t("app.rating.chart_desc", {
      n: history.length,
      first: ratingText(app.lang, history[0].rating_before),
      last: ratingText(app.lang, values.at(-1)),
      best: ratingText(app.lang, Math.max(...values)),
    }),
    point: (p, change) => t("app.rating.point", { n: p.number, match: p.match, change }),
    rating: t("app.rating.line_rating"),
    mu: t("app.rating.line_mu"),
    matchAxis: t("app.rating.axis_match"),
  };
}

function changesTable(app, history) {
  const t = app.t;
  const last = history.slice(-RECENT_CHANGES).reverse();
  return html`<div class="table-scroll"><table class="matches rating-changes">
    <caption class="visually-hidden">${t("app.rating.changes")}</caption>
    <thead><tr><th scope="col">${t("app.player.match")}</th><th scope="col" class="num">${t("replay.rank")}</th>
      <th scope="col" class="num">${t("app.player.score")}</th><th scope="col">${t("app.ladder.rating")}</th></tr></thead>
    <tbody>${last.map((c) => html`<tr>
      <td><a href="#/match/${c.match}" aria-label=${t("app.player.open_match", { n: c.match })}>#${c.match}</a></td>
      <td class="num">${c.rank}</td>
      <td class="num ${c.score > 0 ? "plus" : c.score < 0 ? "minus" : ""}">${c.score > 0 ? "+" : ""}${c.score}</td>
      <td class="rating-change">${ratingText(app.lang, c.rating_before)} \u2192 ${ratingText(app.lang, c.rating_after)}
        <span class=${deltaClass(c.rating_before, c.rating_after)}>(${deltaText(app.lang, c.rating_before, c.rating_after)})</span></td>
    </tr>`)}</tbody></table></div>`;
}

function ratingView(app, rating) {
  const t = app.t;
  const found = state.histories[rating.ladder];
  const history = (found && found.history) || [];
  const needed = state.ladders[rating.ladder]?.provisional_matches;
  const size = globalThis.innerWidth && innerWidth < 560 ? NARROW : WIDE;
  return html`<section class="ladder-rating" aria-labelledby="rating-${rating.ladder}">
    <h2 id="rating-${rating.ladder}">${t("app.rating.title", { ladder: rulesName(app, rating.ladder), season: rating.season })}</h2>
    <dl class="stats">
      ${stat(t("app.ladder.rating"), ratingText(app.lang, rating.rating))}
      ${stat(t("app.ladder.rank"), standing(app, rating, needed))}
      ${stat(t("app.rating.matches"), rating.matches)}
    </dl>
    ${history.length
      ? html`${chartView(app.lang, history, chartLabels(app, rating, history), size)}
          <h3>${t("app.rating.changes")}</h3>${changesTable(app, history)}`
      : found ? nothing : html`<p class="hint">${t("app.lobby.loading")}</p>`}
    <p><a href="#/ladder/${encodeURIComponent(rating.ladder)}">${t("app.rating.to_ladder")}</a></p>
  </section>`;
}

export const playerPage = {
  enter(app, params) {
    Object.assign(state, { name: params.name, player: null, error: null, ladders: {}, histories: {} });
    load(app, params.name);
  },
  update(app, params) {
    playerPage.enter(app, params);
  },
  leave() {},
  title(app) {
    return state.error?.status === 404 ? app.t("app.player.missing") : state.name;
  },
  view(app) {
    const t = app.t;
    const p = state.player;
    if (state.error) {
      // No such player (or no answer): the same kind of page as a missing match's or table's.
      const { status, body } = state.error;
      const title = status === 404 ? t("app.player.missing") : state.name;
      return missingView({ title, text: refusal(app, state.name, status, body), href: "#/lobby", back: t("table.to_lobby") });
    }
    return html`<h1>${state.name}${p && p.guest ? html` <span class="badge">${t("app.guest")}</span>` : nothing}</h1>
      ${!p ? html`<p class="hint">${t("app.lobby.loading")}</p>` : nothing}
      ${p
        ? html`<dl class="stats">
              ${stat(t("app.player.grade"), gradeText(app.lang, p.grade))} ${stat(t("app.player.score"), p.score)}
              ${stat(t("app.player.matches"), p.matches)} ${stat(t("app.player.won"), p.hands_won)}
              ${stat(t("app.player.lost"), p.hands_lost)} ${stat(t("app.player.drawn"), p.hands_drawn)}
            </dl>
            <p class="hint">${t("app.player.since", { date: when(p.created_at) })}</p>
            ${(p.ratings || []).map((r) => ratingView(app, r))}
            <h2>${t("app.player.recent")}</h2>
            ${recent(app, p)}`
        : nothing}`;
  },
};

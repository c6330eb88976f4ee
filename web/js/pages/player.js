// `#/player/:name`: a player's grade, counts and recent matches (GET /api/players/{name}),
// each match linking to its page and replay.
import { html, nothing } from "../vendor/lit-html.js";
import { rulesName } from "./lobby.js";

const state = { name: null, player: null, error: null };

async function load(app, name) {
  try {
    const response = await fetch(`/api/players/${encodeURIComponent(name)}`);
    const body = await response.json();
    if (state.name !== name) return; // the visitor moved on to another player meanwhile
    if (response.ok) state.player = body;
    else state.error = refusal(app, name, response.status, body);
  } catch (error) {
    if (state.name === name) state.error = app.t("app.player.unreachable");
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
  return html`<div class="stat"><dt>${label}</dt><dd>${value}</dd></div>`;
}

function others(app, seats, me) {
  return seats
    .map((name, i) => (i === me ? null : name && name.startsWith("bot:") ? app.t("app.seat.bot") : name))
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

export const playerPage = {
  enter(app, params) {
    Object.assign(state, { name: params.name, player: null, error: null });
    load(app, params.name);
  },
  update(app, params) {
    playerPage.enter(app, params);
  },
  leave() {},
  title() {
    return state.name;
  },
  view(app) {
    const t = app.t;
    const p = state.player;
    return html`<h1>${state.name}${p && p.guest ? html` <span class="badge">${t("app.guest")}</span>` : nothing}</h1>
      ${state.error ? html`<p class="error" role="alert">${state.error}</p>` : nothing}
      ${!p && !state.error ? html`<p class="hint">${t("app.lobby.loading")}</p>` : nothing}
      ${p
        ? html`<dl class="stats">
              ${stat(t("app.player.grade"), p.grade)} ${stat(t("app.player.score"), p.score)}
              ${stat(t("app.player.matches"), p.matches)} ${stat(t("app.player.won"), p.hands_won)}
              ${stat(t("app.player.lost"), p.hands_lost)} ${stat(t("app.player.drawn"), p.hands_drawn)}
            </dl>
            <p class="hint">${t("app.player.since", { date: when(p.created_at) })}</p>
            <h2>${t("app.player.recent")}</h2>
            ${recent(app, p)}`
        : nothing}`;
  },
};

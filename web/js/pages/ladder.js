// The leaderboard: `#/ladder` (the first ladder of GET /api/ladders) and `#/ladder/:id`. A
// season's table 50 players a page, ordered by the conservative rating, with a filter
// (established / provisional / everyone), a search by name prefix and a season picker (a
// past season's table is its final one). Every change of those asks the server again.
import { html, nothing } from "../vendor/lit-html.js";
import { dateText, gradeText, ratingText } from "../rating.js";
import { rulesName } from "./lobby.js";
import { missingView } from "./notfound.js";

export const PAGE_SIZE = 50;
export const FILTERS = ["false", "true", "all"]; // the API's `provisional`
const SEARCH_DELAY_MS = 250;

let s = null; // the page's state while it is shown

function fresh(app, params) {
  return {
    app, id: params.id || null, ladders: null, seasons: [], season: null, filter: "false",
    q: "", offset: 0, board: null, error: null, asked: 0, typing: null,
    missing: false, // no ladder of this id (or none at all): a page saying so, not a board
  };
}

async function getJson(url) {
  const reply = await fetch(url);
  const body = await reply.json();
  if (!reply.ok) throw new Error(body.error || String(reply.status));
  return body;
}

/** The leaderboard's address for the page's choices. */
export function boardUrl(id, { season = null, filter = "false", q = "", offset = 0 } = {}) {
  const query = new URLSearchParams({ offset: String(offset), limit: String(PAGE_SIZE), provisional: filter });
  if (season !== null) query.set("season", String(season));
  if (q.trim()) query.set("q", q.trim());
  return `/api/ladders/${encodeURIComponent(id)}?${query}`;
}

async function start(here) {
  try {
    here.ladders = (await getJson("/api/ladders")).ladders;
    if (s !== here) return;
    if (!here.id && here.ladders.length) here.id = here.ladders[0].id;
    if (!here.ladders.some((l) => l.id === here.id)) {
      here.missing = true;
      return here.app.refresh();
    }
    const [seasons] = await Promise.all([
      getJson(`/api/seasons?ladder=${encodeURIComponent(here.id)}`),
      loadBoard(here),
    ]);
    if (s === here) here.seasons = seasons.seasons;
  } catch (error) {
    if (s === here) here.error = error.message || here.app.t("app.player.unreachable");
  }
  if (s === here) here.app.refresh();
}

/** Ask for the page of the current choices; an answer to an older question is dropped. */
async function loadBoard(here) {
  const asked = ++here.asked;
  here.app.refresh();
  try {
    const board = await getJson(boardUrl(here.id, here));
    if (s !== here || asked !== here.asked) return;
    here.board = board;
    here.error = null;
  } catch (error) {
    if (s !== here || asked !== here.asked) return;
    here.error = error.message || here.app.t("app.player.unreachable");
  }
  here.app.refresh();
}

function choose(change) {
  Object.assign(s, change);
  loadBoard(s);
}

function onSearch(event) {
  const q = event.target.value;
  clearTimeout(s.typing);
  s.typing = setTimeout(() => s && s.q !== q && choose({ q, offset: 0 }), SEARCH_DELAY_MS);
}

function onSubmit(event) {
  event.preventDefault();
  clearTimeout(s.typing);
  choose({ q: event.target.elements.q.value, offset: 0 });
}

export const ladderPage = {
  enter(app, params) {
    s = fresh(app, params);
    start(s);
  },
  update(app, params) {
    ladderPage.leave();
    ladderPage.enter(app, params);
  },
  leave() {
    if (s) clearTimeout(s.typing);
    s = null;
  },
  title(app) {
    if (s && s.missing) return app.t(s.ladders.length ? "app.ladder.missing" : "app.ladder.no_ladder");
    return app.t("app.ladder.title");
  },
  view(app) {
    if (!s) return nothing;
    const t = app.t;
    if (s.missing) return missingLadder(app);
    const ladder = s.ladders && s.ladders.find((l) => l.id === s.id);
    return html`<h1>${ladder ? t("app.ladder.title_of", { ladder: rulesName(app, ladder.id) }) : t("app.ladder.title")}</h1>
      ${s.ladders && s.ladders.length > 1 ? ladderLinks(app) : nothing}
      ${s.error ? html`<p class="error" role="alert">${s.error}</p>` : nothing}
      ${ladder ? html`${seasonLine(app, ladder)} ${controls(app, ladder)} ${boardView(app, ladder)}` : nothing}
      ${!s.ladders && !s.error ? html`<p class="hint">${t("app.lobby.loading")}</p>` : nothing}`;
  },
};

/** The page for an id that names no ladder (the way to the server's first ladder), or for a
 * server that runs none (the way to the lobby): the same kind as a missing match's. Its words
 * are made here, not kept, so that they follow a change of language. */
function missingLadder(app) {
  const t = app.t;
  return s.ladders.length
    ? missingView({ title: t("app.ladder.missing"), text: t("app.ladder.unknown", { id: s.id }), href: "#/ladder", back: t("app.rating.to_ladder") })
    : missingView({ title: t("app.ladder.no_ladder"), text: t("app.ladder.none"), href: "#/lobby", back: t("table.to_lobby") });
}

function ladderLinks(app) {
  return html`<nav class="ladder-links" aria-label=${app.t("app.ladder.ladders")}>
    ${s.ladders.map((l) => html`<a class="button" href="#/ladder/${encodeURIComponent(l.id)}"
      aria-current=${l.id === s.id ? "page" : nothing}>${rulesName(app, l.id)}</a>`)}
  </nav>`;
}

/** The season shown: its name and dates (the board's own, else the ladder's current). */
function shownSeason(ladder) {
  return (s.board && s.board.season) || (s.season === null ? ladder.season : s.seasons.find((x) => x.number === s.season)) || null;
}

/** A season's name: the server's default one ("Season 3") in the visitor's language, a name
 * an operator gave as it is. */
export function seasonName(app, season) {
  return season.name === `Season ${season.number}` ? app.t("app.ladder.season_n", { n: season.number }) : season.name;
}

function seasonLine(app, ladder) {
  const t = app.t;
  const season = shownSeason(ladder);
  if (!season) return html`<p class="season-line">${t("app.ladder.no_season")}</p>`;
  const ended = season.ends_at && new Date(season.ends_at).getTime() <= Date.now();
  const dates = season.ends_at
    ? t("app.ladder.from_to", { from: dateText(season.starts_at), to: dateText(season.ends_at) })
    : t("app.ladder.since", { from: dateText(season.starts_at) });
  return html`<p class="season-line"><strong>${seasonName(app, season)}</strong> · ${dates}
    ${ended ? html` · <span class="badge">${t("app.ladder.final")}</span>` : nothing}
    · ${t("app.ladder.rated_matches", { n: season.rated_matches })}</p>`;
}

function controls(app, ladder) {
  const t = app.t;
  const current = ladder.season ? ladder.season.number : null;
  const seasons = [...s.seasons].sort((a, b) => b.number - a.number);
  return html`<form class="ladder-controls" role="search" @submit=${onSubmit}>
    ${seasons.length > 1
      ? html`<label class="field"><span>${t("app.ladder.season")}</span>
          <select name="season" @change=${(e) => choose({ season: Number(e.target.value) === current ? null : Number(e.target.value), offset: 0 })}>
            ${seasons.map((x) => html`<option value=${x.number} ?selected=${(s.season ?? current) === x.number}>${seasonName(app, x)}${x.number === current ? ` (${t("app.ladder.current")})` : ""}</option>`)}
          </select></label>`
      : nothing}
    <label class="field"><span>${t("app.ladder.show")}</span>
      <select name="filter" @change=${(e) => choose({ filter: e.target.value, offset: 0 })}>
        ${FILTERS.map((f) => html`<option value=${f} ?selected=${s.filter === f}>${t(`app.ladder.filter_${f}`)}</option>`)}
      </select></label>
    <label class="field"><span>${t("app.ladder.search")}</span>
      <input name="q" type="search" maxlength="32" spellcheck="false" autocapitalize="off" autocomplete="off"
        .value=${s.q} @input=${onSearch}></label>
  </form>
  ${s.filter !== "true" ? html`<p class="hint">${t("app.ladder.ranked_after", { n: ladder.provisional_matches })}</p>` : nothing}`;
}

/** What an empty page of the board says, by what was asked. */
export function emptyText(app, board) {
  if (board.search) return app.t("app.ladder.empty_search", { q: board.search });
  if (!board.season) return app.t("app.ladder.empty");
  if (board.provisional === "false") return app.t("app.ladder.empty_established", { n: board.provisional_matches });
  return app.t("app.ladder.empty");
}

function boardView(app, ladder) {
  const t = app.t;
  const board = s.board;
  if (!board) return html`<p class="hint">${t("app.lobby.loading")}</p>`;
  if (board.players.length === 0) return html`<p class="empty">${emptyText(app, board)}</p>`;
  const first = board.offset + 1;
  const last = board.offset + board.players.length;
  // `total`: the players listed before paging (with a search, those it found).
  const more = last < board.total;
  const range = t(board.search ? "app.ladder.range_found" : "app.ladder.range", { first, last, total: board.total });
  return html`<div class="table-scroll"><table class="matches leaderboard">
      <caption class="visually-hidden">${t("app.ladder.caption", { season: shownSeason(ladder) ? seasonName(app, shownSeason(ladder)) : "" })}</caption>
      <thead><tr><th scope="col" class="num">${t("app.ladder.rank")}</th><th scope="col">${t("app.ladder.player")}</th>
        <th scope="col" class="num">${t("app.ladder.rating")}</th><th scope="col" class="num wide-only">${t("app.player.matches")}</th>
        <th scope="col" class="num">${t("app.player.grade")}</th><th scope="col" class="wide-only">${t("app.ladder.last_played")}</th></tr></thead>
      <tbody>${board.players.map((p) => html`<tr class=${p.provisional ? "provisional" : ""}>
        <td class="num">${p.rank}</td>
        <td><a href="#/player/${encodeURIComponent(p.name)}">${p.name}</a>${p.provisional ? html` <span class="badge">${t("app.ladder.provisional")}</span>` : nothing}</td>
        <td class="num">${ratingText(app.lang, p.rating)}</td>
        <td class="num wide-only">${p.matches}</td>
        <td class="num">${gradeText(app.lang, p.grade)}</td>
        <td class="wide-only">${dateText(p.last_played)}</td>
      </tr>`)}</tbody>
    </table></div>
    <div class="pager">
      <span class="pager-text" aria-live="polite">${range}</span>
      <button class="button" type="button" ?disabled=${board.offset === 0}
        @click=${() => choose({ offset: Math.max(0, board.offset - PAGE_SIZE) })}>${t("app.ladder.previous")}</button>
      <button class="button" type="button" ?disabled=${!more}
        @click=${() => choose({ offset: board.offset + PAGE_SIZE })}>${t("app.ladder.next")}</button>
    </div>`;
}

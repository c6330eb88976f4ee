// A tournament's page: `#/tournament/:id[/:session]` (the session shown; by default the
// latest one seated). The tournament comes from `tournament_get` for a logged-in visitor
// (its reply adds `you`: registration, check-in, seat, director) or GET /api/tournaments/{id}
// otherwise; the session from GET /api/tournaments/{id}/sessions/{n}. Both are asked again
// on a `tournament_changed` push for it, after a reconnection, and every 10 s while a
// session plays (a spectator gets no pushes). A player registers, withdraws and checks in
// from the "your seat" box; a director runs the tournament from the console below it. Every
// request's reply is the tournament again, and the page is drawn from it.
import { html, nothing } from "../vendor/lit-html.js";
import { botName } from "../bots.js";
import { registered } from "../queue.js";
import { rulesName } from "./lobby.js";

export const METHODS = ["random", "balanced", "avoid", "swiss", "top4"];
export const KINDS = ["penalty", "score", "points"];
const POLL_MS = 10000;
const LOCALES = { en: "en-US", zh: "zh-CN" };

let s = null; // the page's state while it is shown

function fresh(app, params) {
  return {
    app, id: params.id, picked: params.session, t: null, detail: null, error: null, detailError: null,
    seatDetail: null, busy: false, failure: null, confirm: null, poll: null, stops: [], asked: 0, askedSession: 0,
  };
}

/** The JSON at `url`; an Error with the server's `error` text (and the `status`) when refused. */
export async function getJson(url) {
  const reply = await fetch(url);
  const body = await reply.json();
  if (!reply.ok) throw Object.assign(new Error(body.error || String(reply.status)), { status: reply.status });
  return body;
}

/** The value of an exact figure as the API writes it: "7/3", "-1/2", "4" → a number. */
export function fractionValue(text) {
  if (typeof text === "number") return text;
  const match = /^\s*(-?\d+)(?:\s*\/\s*(\d+))?\s*$/.exec(String(text ?? ""));
  if (!match) return Number.NaN;
  return Number(match[1]) / (match[2] ? Number(match[2]) : 1);
}

/** Table points as shown: at most two decimals ("2.33", "4", "−0.5" with a true minus). */
export function pointsText(lang, value) {
  const number = typeof value === "number" ? value : fractionValue(value);
  if (Number.isNaN(number)) return value === null || value === undefined ? "–" : String(value);
  const text = new Intl.NumberFormat(LOCALES[lang] || LOCALES.en, { maximumFractionDigits: 2 }).format(Math.abs(number));
  return number < 0 && text !== "0" ? `\u2212${text}` : text;
}

/** "2026-12-01 17:05" of an ISO time, in the visitor's own time zone ("" for none). */
export function timeText(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** The latest session of the tournament (the highest number), or null before the first. */
export function lastSession(t) {
  return t.sessions.reduce((last, x) => (!last || x.number > last.number ? x : last), null);
}

/** The session a "seat" would seat: the seated one again, else the one after the last
 * finished; null while one plays or once all are done. */
export function seatableSession(t) {
  const last = lastSession(t);
  if (last && last.state === "playing") return null;
  if ("next_session" in t) return t.next_session; // the server's word (null once all are seated)
  const n = !last ? 1 : last.state === "seated" ? last.number : last.state === "finished" ? last.number + 1 : null;
  return n !== null && n <= t.settings.sessions && t.state !== "finished" ? n : null;
}

/** The session a check-in is for: the one seated but not started, else the next one; null
 * once all are played. */
export function checkInSession(t) {
  if ("next_session" in t) return t.next_session;
  const last = lastSession(t);
  const n = !last ? 1 : last.state === "seated" ? last.number : last.number + 1;
  return n <= t.settings.sessions && t.state !== "finished" ? n : null;
}

/** The seating method a session uses by the settings (one for all, or a list per session,
 * the last repeated). */
export function methodOf(settings, n) {
  const seating = settings.seating;
  if (!Array.isArray(seating)) return seating || "random";
  return seating[Math.min(n, seating.length) - 1] || "random";
}

/** The session numbers that have a column in the standings, in order. */
export function sessionColumns(standings) {
  const numbers = new Set();
  for (const row of standings) for (const line of row.sessions) numbers.add(line.session);
  return [...numbers].sort((a, b) => a - b);
}

/** The names of the "add players" box: split at commas (or spaces, or new lines), each
 * name once, empty ones dropped. */
export function splitNames(text) {
  return [...new Set(text.split(/[\s,，]+/).map((x) => x.trim()).filter(Boolean))];
}

// The server's bound on an amount (server/messages/inbound.py): a whole number below 10^9
// either way, or a fraction as text of at most nine digits above and below the line.
const AMOUNT_DIGITS = 9;

/** The penalty form's fields checked as the server will (docs/tournaments.md, "Penalties and
 * corrections"): `{payload}` to send, or `{problem, params}`, the key of what to tell the
 * director. A whole amount goes as a number, exact: never one a JSON number would round. */
export function penaltyPayload({ player, kind, amount, reason, session }, sessions = 32) {
  const text = String(amount).trim().replace(/^\+/, "");
  const whole = /^(-?)(\d+)$/.exec(text);
  const fraction = /^(-?)(\d+)\s*\/\s*(\d+)$/.exec(text);
  const digits = (x) => x.replace(/^0+(?=\d)/, "");
  let value;
  if (whole) {
    if (digits(whole[2]).length > AMOUNT_DIGITS) return { problem: "app.tournament.amount_range" };
    value = Number(`${whole[1]}${digits(whole[2])}`) || 0; // (no "-0")
  } else if (fraction) {
    if (kind !== "points") return { problem: "app.tournament.amount_whole", params: { kind } };
    const [top, bottom] = [digits(fraction[2]), digits(fraction[3])];
    if (/^0+$/.test(bottom)) return { problem: "app.tournament.amount_bad" };
    if (top.length > AMOUNT_DIGITS || bottom.length > AMOUNT_DIGITS) return { problem: "app.tournament.amount_range" };
    value = top === "0" ? 0 : bottom === "1" ? Number(`${fraction[1]}${top}`) : `${fraction[1]}${top}/${bottom}`;
  } else {
    return { problem: "app.tournament.amount_bad" };
  }
  if (kind === "penalty" && !(value < 0)) return { problem: "app.tournament.penalty_negative" };
  const number = String(session ?? "").trim();
  if (kind === "score" && !number) return { problem: "app.tournament.score_needs_session" };
  if (number && !(/^\d+$/.test(number) && Number(number) >= 1 && Number(number) <= sessions)) {
    return { problem: "app.tournament.session_bad", params: { n: sessions } };
  }
  const payload = { player, kind, amount: value, reason: String(reason).trim() };
  if (number) payload.session = Number(number);
  return { payload };
}

// Refusals whose words depend on the request: `tournament_state` and `bad_message` say why
// in the server's English `reason`, which the page never shows (docs/protocol.md: the reason
// may change, the code does not).
const REFUSALS = {
  tournament_state: {
    tournament_seat: "app.tournament.refused_seat_state",
    tournament_start_session: "app.tournament.refused_start_state",
    tournament_close: "app.tournament.refused_close_state",
    tournament_check_in: "app.tournament.refused_check_in_state",
    tournament_substitute: "app.tournament.refused_substitute_state",
    default: "app.tournament.refused_state",
  },
  bad_message: {
    tournament_create: "app.tournament.refused_create_bad",
    tournament_add_players: "app.tournament.refused_add_players_bad",
    tournament_seat: "app.tournament.refused_seat_bad",
    tournament_swap: "app.tournament.refused_swap_bad",
    tournament_substitute: "app.tournament.refused_substitute_bad",
    tournament_penalty: "app.tournament.refused_penalty_bad",
    tournament_undo: "app.tournament.refused_undo_bad",
    default: "app.tournament.refused_bad",
  },
  no_seating: {
    tournament_swap: "app.tournament.refused_swap_seating",
    tournament_substitute: "app.tournament.refused_substitute_seating",
  },
  already_registered: { tournament_check_in: "app.tournament.refused_check_in_again" },
  not_registered: { default: "app.tournament.guests_cannot" }, // a guest: the shared text speaks of rated play
  server_busy: { default: "app.tournament.refused_busy" },
};

/** A refused tournament request (or a failed fetch of the tournament's pages) in the
 * visitor's words, never the server's English `reason` (nor an HTTP answer's `error`): by
 * the code and the request `type`, else the app's words for the code, else a general
 * sentence. `over`: the tournament is finished (what any `tournament_state` then means);
 * `missing`: the key for a fetch answered 404. */
export function refusalText(app, error, type = null, { over = false, missing = null } = {}) {
  const code = error && error.code;
  if (!code) {
    // A fetch: no answer at all (the network), or an HTTP status, which has no code.
    if (!error || !error.status) return app.t("app.player.unreachable");
    if (error.status === 404 && missing) return app.t(missing);
    return app.t(error.status >= 500 ? "app.error.internal_error" : "app.tournament.refused");
  }
  if (code === "tournament_state" && over) return app.t("app.tournament.refused_over");
  const byType = REFUSALS[code];
  const key = byType && (byType[type] || byType.default);
  if (key) return app.t(key, { bot: "bot" });
  if (code === "rate_limited") return app.errorText(error); // with its retry_after
  const known = `app.error.${code}`;
  if (app.t(known) !== known) return app.errorText(error);
  return app.t("app.tournament.refused");
}

async function fetchTournament(app, id) {
  if (app.session) {
    try {
      return await app.net.request("tournament_get", { tournament: id });
    } catch (error) {
      // A guest (tournaments are for accounts), a session the server no longer knows, or a
      // server without the message: the page as a visitor sees it.
      if (!["not_registered", "not_authenticated", "unknown_type"].includes(error.code)) throw error;
    }
  }
  try {
    return { ...(await getJson(`/api/tournaments/${encodeURIComponent(id)}`)), you: null };
  } catch (error) {
    // The page's own words for no such tournament (its socket twin has the code), or for an
    // address that names none (400: not a tournament number).
    if (error.status === 404 || error.status === 400) error.code = "no_such_tournament";
    throw error;
  }
}

/** The session shown: the one picked, else the latest one seated. */
function shown(here) {
  if (here.picked !== null) return here.picked;
  return here.t && here.t.session > 0 ? here.t.session : null;
}

async function load(here) {
  const asked = ++here.asked;
  here.app.refresh();
  try {
    const t = await fetchTournament(here.app, here.id);
    if (s !== here || asked !== here.asked) return;
    here.t = t;
    here.error = null;
    await loadSession(here);
  } catch (error) {
    if (s !== here || asked !== here.asked) return;
    here.error = refusalText(here.app, error, "tournament_get");
  }
  if (s === here) here.app.refresh();
}

/** The player's seat's session (for the state of its table), when it is not the one shown. */
function seatSession(here) {
  const seat = here.t && here.t.you && here.t.you.seat;
  return seat && seat.table_id && seat.session !== shown(here) ? seat.session : null;
}

async function loadSession(here) {
  const n = shown(here);
  const mine = seatSession(here);
  const asked = ++here.askedSession;
  const url = (k) => `/api/tournaments/${encodeURIComponent(here.id)}/sessions/${k}`;
  if (mine === null) here.seatDetail = null;
  if (n === null) {
    here.detail = null;
  } else {
    try {
      const detail = await getJson(url(n));
      if (s !== here || asked !== here.askedSession) return;
      here.detail = detail;
      here.detailError = null;
    } catch (error) {
      if (s !== here || asked !== here.askedSession) return;
      here.detail = null;
      here.detailError = refusalText(here.app, error, null, { missing: "app.tournament.no_such_session" });
    }
  }
  if (mine !== null) {
    try {
      const detail = await getJson(url(mine));
      if (s !== here || asked !== here.askedSession) return;
      here.seatDetail = detail;
    } catch {
      if (s !== here || asked !== here.askedSession) return;
      here.seatDetail = null; // (the seat is shown as the tournament gives it)
    }
  }
  here.app.refresh();
}

function playing(here) {
  return Boolean(here.t && here.t.sessions.some((x) => x.state === "playing"));
}

/** Sends a request of the player box (`where` "you") or the console ("console"); the reply
 * is the tournament, drawn at once. */
async function act(where, type, payload = {}, after = null) {
  const here = s;
  here.busy = true;
  here.failure = null;
  here.confirm = null;
  here.app.refresh();
  try {
    const reply = await here.app.net.request(type, { tournament: here.id, ...payload });
    if (s !== here) return;
    here.t = reply;
    if (after) after(reply);
    await loadSession(here);
  } catch (error) {
    const text = refusalText(here.app, error, type, { over: Boolean(here.t && here.t.state === "finished") });
    if (s === here) here.failure = { where, text };
  } finally {
    if (s === here) {
      here.busy = false;
      here.app.refresh();
    }
  }
}

function ask(key) {
  s.confirm = key;
  s.failure = null;
  s.app.refresh();
}

export const tournamentPage = {
  enter(app, params) {
    const here = fresh(app, params);
    s = here;
    const mine = (payload) => s === here && payload.tournament === here.id;
    here.stops = [
      app.net.on("tournament_changed", (payload) => mine(payload) && load(here)),
      app.net.on("tournament_session", (payload) => mine(payload) && load(here)),
      app.net.onReady(() => load(here)),
    ];
    here.poll = setInterval(() => playing(here) && load(here), POLL_MS);
    load(here);
  },
  update(app, params) {
    if (s && params.id === s.id) {
      s.picked = params.session;
      s.confirm = null;
      loadSession(s);
      return;
    }
    tournamentPage.leave();
    tournamentPage.enter(app, params);
  },
  leave() {
    if (!s) return;
    for (const stop of s.stops) stop();
    clearInterval(s.poll);
    s = null;
  },
  title(app) {
    return s && s.t ? s.t.name : app.t("app.tournament.title");
  },
  view(app) {
    if (!s) return nothing;
    const t = s.t;
    if (!t) {
      return html`<h1>${app.t("app.tournament.title")}</h1>
        ${s.error ? html`<p class="error" role="alert">${s.error}</p>` : html`<p class="hint">${app.t("app.lobby.loading")}</p>`}
        <p><a href="#/tournaments">${app.t("app.tournaments.back")}</a></p>`;
    }
    const you = t.you || null;
    return html`<p class="crumbs"><a href="#/tournaments">${app.t("app.tournaments.back")}</a></p>
      <h1>${t.name}</h1>
      ${s.error ? html`<p class="error" role="alert">${s.error}</p>` : nothing}
      ${summary(app, t)}
      ${yourSeat(app, t, you)}
      ${you && you.director ? directorConsole(app, t) : nothing}
      ${standingsView(app, t)}
      ${sessionsView(app, t)}
      ${duplicateView(app, t)}
      ${playersView(app, t)}
      ${logView(app, t)}
      ${exportsView(app, t)}`;
  },
};

// ---- the parts ---------------------------------------------------------------------

function stateWords(app, t) {
  return app.t(`app.tournaments.state_${t.state}`);
}

function summary(app, t) {
  const x = t.settings;
  const tr = app.t;
  return html`<section class="card tournament-summary" aria-labelledby="summary-title">
    <h2 id="summary-title" class="visually-hidden">${tr("app.tournament.settings")}</h2>
    <p class="facts">
      <span class="badge">${stateWords(app, t)}</span>
      ${x.duplicate ? html`<span class="badge duplicate">${tr("app.tournaments.duplicate")}</span>` : nothing}
      <span>${rulesName(app, t.rules)}</span>
      <span>${x.sessions === 1 ? tr("app.tournament.one_session") : tr("app.tournament.sessions_n", { n: x.sessions })}</span>
      <span>${tr(x.hands === 1 ? "app.tournament.one_hand" : "app.tournament.hands_n", { n: x.hands })}</span>
      <span>${x.time_cap_minutes ? tr("app.tournament.time_cap", { n: x.time_cap_minutes }) : tr("app.tournament.no_time_cap")}</span>
      ${x.turn_seconds ? html`<span>${tr("app.lobby.turn", { n: x.turn_seconds })}</span>` : nothing}
      <span>${tr(x.check_in ? "app.tournament.check_in_on" : "app.tournament.check_in_off")}</span>
      <span>${tr(x.fill === "substitutes" ? "app.tournament.fill_substitutes" : "app.tournament.fill_byes")}</span>
      ${x.spectator_delay_seconds ? html`<span>${tr("app.tournament.delay", { n: x.spectator_delay_seconds })}</span>` : nothing}
      ${x.aids === false ? html`<span>${tr("app.lobby.aids_off")}</span>` : nothing}
    </p>
    <p class="facts">
      <span>${t.session > 0 ? tr("app.tournaments.session_of", { n: t.session, of: x.sessions }) : tr("app.tournaments.not_started")}</span>
      <span>${tr(t.registration_open ? "app.tournament.registration_open" : "app.tournament.registration_closed")}</span>
      ${t.directors && t.directors.length ? html`<span>${tr("app.tournament.directors", { names: t.directors.join(", ") })}</span>` : nothing}
    </p>
  </section>`;
}

function failureFor(where, id = null) {
  return failed(where) ? html`<p class="error" role="alert" id=${id ?? nothing}>${s.failure.text}</p>` : nothing;
}

/** A confirmation asked inside the page: the question, "yes" and "cancel". */
function confirmBox(app, question, yes, onYes) {
  return html`<div class="confirm" role="group" aria-label=${question}>
    <p>${question}</p>
    <div class="button-row">
      <button class="button danger" type="button" ?disabled=${s.busy} @click=${onYes}>${yes}</button>
      <button class="button" type="button" @click=${() => ask(null)}>${app.t("app.tournament.cancel")}</button>
    </div>
  </div>`;
}

function seatLine(app, seat) {
  return app.t("app.tournament.seat_line", { session: seat.session, table: seat.table, wind: app.t(`table.wind.${seat.wind}`) });
}

/** A finished tournament's box: it is over, and the player's final place in the standings
 * (a withdrawn player's too: the results played stay in them). Nobody is asked to register,
 * check in or log in to take part any more. */
function finishedSeat(app, t, you) {
  const tr = app.t;
  const rows = t.standings || [];
  const name = registered(app) ? app.session.username : null;
  const mine = name === null ? null : rows.find((row) => row.player === name);
  const played = Boolean(mine || (you && you.player));
  let result = nothing;
  if (mine) {
    const points = pointsText(app.lang, mine.table_points_decimal ?? mine.table_points);
    result = html`<p class="my-place">${tr("app.tournament.final_place", { place: mine.place, of: rows.length, points })}</p>`;
  } else if (played) {
    result = html`<p class="hint">${tr("app.tournament.no_result")}</p>`;
  }
  return html`<section class="card my-seat" aria-labelledby="my-seat-title">
    <h2 id="my-seat-title">${tr(played ? "app.tournament.your_result" : "app.tournament.you")}</h2>
    <p class="my-status">${tr("app.tournament.over")}</p>
    ${result}
    ${you && you.status === "withdrawn" ? html`<p class="hint">${tr("app.tournament.you_withdrawn")}</p>` : nothing}
    ${failureFor("you")}
  </section>`;
}

function yourSeat(app, t, you) {
  const tr = app.t;
  if (t.state === "finished") return finishedSeat(app, t, you);
  if (!app.session) {
    return html`<section class="card my-seat" aria-labelledby="my-seat-title">
      <h2 id="my-seat-title">${tr("app.tournament.you")}</h2>
      <p>${tr("app.tournament.sign_in")} <a href="#/">${tr("app.lobby.to_login")}</a></p>
    </section>`;
  }
  if (!registered(app)) {
    return html`<section class="card my-seat" aria-labelledby="my-seat-title">
      <h2 id="my-seat-title">${tr("app.tournament.you")}</h2>
      <p class="hint">${tr("app.tournament.guests_cannot")}</p>
    </section>`;
  }
  if (!you) return nothing;
  const isIn = you.status === "registered";
  const checkIn = t.settings.check_in ? checkInSession(t) : null;
  const status = isIn ? "app.tournament.you_registered" : you.status === "withdrawn" ? "app.tournament.you_withdrawn" : "app.tournament.you_not_registered";
  return html`<section class="card my-seat" aria-labelledby="my-seat-title">
    <h2 id="my-seat-title">${tr("app.tournament.you")}</h2>
    <p class="my-status">${tr(status)}
      ${isIn && checkIn !== null
        ? html` <span class="badge ${you.checked_in ? "checked" : ""}">${tr(you.checked_in ? "app.tournament.checked_in_for" : "app.tournament.not_checked_in_for", { n: checkIn })}</span>`
        : nothing}</p>
    ${you.seat
      ? html`<p class="my-next-seat"><strong>${tr("app.tournament.your_seat")}</strong> ${seatLine(app, you.seat)}</p>
        ${myTableView(app, t, you.seat)}`
      : isIn ? html`<p class="hint">${tr("app.tournament.no_seat_yet")}</p>` : nothing}
    ${s.confirm === "withdraw"
      ? confirmBox(app, tr("app.tournament.withdraw_confirm"), tr("app.tournament.withdraw_yes"), () => act("you", "tournament_withdraw"))
      : html`<div class="button-row">
        ${!isIn && t.registration_open
          ? html`<button class="button primary" type="button" ?disabled=${s.busy} @click=${() => act("you", "tournament_register")}>${tr("app.tournament.register")}</button>`
          : nothing}
        ${isIn && checkIn !== null && !you.checked_in
          ? html`<button class="button primary" type="button" ?disabled=${s.busy} @click=${() => act("you", "tournament_check_in")}>${tr("app.tournament.check_in", { n: checkIn })}</button>`
          : nothing}
        ${isIn
          ? html`<button class="button" type="button" ?disabled=${s.busy} @click=${() => ask("withdraw")}>${tr("app.tournament.withdraw")}</button>`
          : nothing}
      </div>`}
    ${!isIn && !t.registration_open ? html`<p class="hint">${tr("app.tournament.registration_closed_hint")}</p>` : nothing}
    ${failureFor("you")}
  </section>`;
}

/** Whether session `d`'s results are held back: a duplicate session's, until its last table
 * has finished (docs/tournaments.md, "Duplicate MCR"): its tables' matches answer 403. */
export function heldBack(t, d) {
  return Boolean(t.settings && t.settings.duplicate) && d.state !== "finished";
}

/** Where the player's seat leads (`you.seat`, its session's detail `d` if known): `table`
 * (its live table), `result` (the table finished: its match), `held` (finished, the result
 * held back until the session ends), or `none` (no table made yet). A finished table is no
 * lobby table any more ("no such table"), and a held match answers 403: neither is linked. */
export function seatTarget(t, seat, d) {
  if (!seat || !seat.table_id) return { kind: "none" };
  const table = d && d.number === seat.session ? d.tables.find((x) => x.table === seat.table) : null;
  if (!table || table.state !== "finished") return { kind: "table", href: `#/table/${encodeURIComponent(seat.table_id)}` };
  if (heldBack(t, d)) return { kind: "held" };
  return table.match ? { kind: "result", href: `#/match/${table.match}` } : { kind: "done" };
}

function myTableView(app, t, seat) {
  const d = s.detail && s.detail.number === seat.session ? s.detail : s.seatDetail;
  const target = seatTarget(t, seat, d);
  const tr = app.t;
  if (target.kind === "table") return html`<p><a class="button primary" href=${target.href}>${tr("app.tournament.go_to_table")}</a></p>`;
  if (target.kind === "held") return html`<p class="hint my-table-done">${tr("app.tournament.table_done_held")}</p>`;
  if (target.kind === "result") {
    return html`<p class="my-table-done">${tr("app.tournament.table_done")} <a class="button" href=${target.href}>${tr("app.tournament.see_result")}</a></p>`;
  }
  if (target.kind === "done") return html`<p class="my-table-done">${tr("app.tournament.table_done")}</p>`;
  return nothing;
}

// ---- the director's console -----------------------------------------------------------

/** The options of a player field; `picked`: the index chosen at first (the swap's second
 * field starts at another player than its first). */
function playerOptions(names, picked = 0) {
  return names.map((name, k) => html`<option value=${name} ?selected=${k === Math.min(picked, names.length - 1)}>${name}</option>`);
}

/** Shows `text` at `where` instead of sending a form (returns null: nothing to send). */
function refuse(where, text) {
  s.failure = { where, text };
  s.app.refresh();
  return null;
}

/** Takes back what `where` was told once the director changes the form. */
function clearFailure(where) {
  if (!failed(where)) return;
  s.failure = null;
  s.app.refresh();
}

function failed(where) {
  return Boolean(s.failure && s.failure.where === where);
}

function registeredNames(t) {
  return t.players.filter((p) => p.status === "registered").map((p) => p.name);
}

/** The players of the shown session's seating (its tables' and its byes), else the
 * registered ones: those a swap or a substitution is about. */
function seatedNames(t, n) {
  const d = s.detail;
  if (!d || d.number !== n) return registeredNames(t);
  const names = d.tables.flatMap((x) => x.seats.map((seat) => seat.player)).filter(Boolean); // null: a substitute's seat
  return [...names, ...(d.byes || [])];
}

function submitter(where, type, build, after = null) {
  return (event) => {
    event.preventDefault();
    const form = event.target;
    const payload = build(form.elements);
    if (payload) act(where, type, payload, (reply) => (form.reset(), after && after(reply)));
  };
}

function directorConsole(app, t) {
  const tr = app.t;
  const seatable = seatableSession(t);
  const last = lastSession(t);
  const startable = last && last.state === "seated" ? last.number : null;
  const inPlay = last && last.state === "playing" ? last.number : null;
  const open = t.state !== "finished";
  const names = registeredNames(t);
  const seated = seatedNames(t, startable ?? inPlay);
  const everyone = t.players.map((p) => p.name);
  const undoable = t.log.filter((e) => e.in_force && e.kind !== "undo");
  return html`<section class="card console" aria-labelledby="console-title">
    <h2 id="console-title">${tr("app.tournament.console")}</h2>
    ${failureFor("console")}
    ${open ? html`
    <div class="console-grid">
      <div class="console-part">
        <h3>${tr("app.tournament.registration")}</h3>
        <p>${tr(t.registration_open ? "app.tournament.registration_open" : "app.tournament.registration_closed")}</p>
        ${t.settings?.registration === "open" // (with "director" the players never register)
          ? html`<button class="button" type="button" ?disabled=${s.busy}
          @click=${() => act("console", "tournament_registration", { open: !t.registration_open })}>${tr(t.registration_open ? "app.tournament.close_registration" : "app.tournament.open_registration")}</button>`
          : nothing}
      </div>

      <form class="console-part" @submit=${submitter("console", "tournament_add_players", (f) => {
        const players = splitNames(f.players.value);
        return players.length ? { players } : null;
      })}>
        <h3>${tr("app.tournament.add_players")}</h3>
        <label class="field"><span>${tr("app.tournament.names")}</span>
          <input name="players" type="text" autocapitalize="off" spellcheck="false" autocomplete="off" required></label>
        <button class="button" type="submit" ?disabled=${s.busy}>${tr("app.tournament.add")}</button>
      </form>

      ${names.length ? html`<form class="console-part" @submit=${(e) => { e.preventDefault(); ask(`remove:${e.target.elements.player.value}`); }}>
        <h3>${tr("app.tournament.remove_player")}</h3>
        <label class="field"><span>${tr("app.tournament.player")}</span>
          <select name="player">${playerOptions(names)}</select></label>
        ${s.confirm && s.confirm.startsWith("remove:")
          ? confirmBox(app, tr("app.tournament.remove_confirm", { name: s.confirm.slice(7) }), tr("app.tournament.remove"),
              () => act("console", "tournament_remove_player", { player: s.confirm.slice(7) }))
          : html`<button class="button" type="submit" ?disabled=${s.busy}>${tr("app.tournament.remove")}</button>`}
      </form>` : nothing}

      ${seatable !== null ? html`<form class="console-part" @submit=${submitter("console", "tournament_seat", (f) => ({ method: f.method.value }), () => (s.picked = null))}>
        <h3>${tr("app.tournament.seat_title", { n: seatable })}</h3>
        <label class="field"><span>${tr("app.tournament.method")}</span>
          <select name="method">${METHODS.map((m) => html`<option value=${m} ?selected=${m === methodOf(t.settings, seatable)}>${tr(`app.tournament.method_${m}`)}</option>`)}</select></label>
        <button class="button primary" type="submit" ?disabled=${s.busy}>${tr(startable === seatable ? "app.tournament.seat_again" : "app.tournament.seat", { n: seatable })}</button>
      </form>` : nothing}

      ${startable !== null ? html`<div class="console-part">
        <h3>${tr("app.tournament.start_title", { n: startable })}</h3>
        <form class="swap" @submit=${submitter("swap", "tournament_swap", (f) => {
          if (f.a.value && f.a.value === f.b.value) return refuse("swap", tr("app.tournament.swap_same"));
          return f.a.value && f.b.value ? { a: f.a.value, b: f.b.value } : null;
        })} @change=${() => clearFailure("swap")}>
          <label class="field"><span>${tr("app.tournament.swap_a")}</span><select name="a">${playerOptions(seated)}</select></label>
          <label class="field"><span>${tr("app.tournament.swap_b")}</span><select name="b">${playerOptions(seated, 1)}</select></label>
          ${failureFor("swap", "swap-error")}
          <button class="button" type="submit" ?disabled=${s.busy} aria-describedby=${failed("swap") ? "swap-error" : nothing}>${tr("app.tournament.swap")}</button>
        </form>
        <button class="button primary" type="button" ?disabled=${s.busy}
          @click=${() => act("console", "tournament_start_session")}>${tr("app.tournament.start", { n: startable })}</button>
      </div>` : nothing}

      ${inPlay !== null || startable !== null ? html`<form class="console-part" @submit=${submitter("console", "tournament_substitute", (f) => ({ player: f.player.value, substitute: f.substitute.value.trim() }))}>
        <h3>${tr("app.tournament.substitute_title")}</h3>
        <label class="field"><span>${tr("app.tournament.player")}</span><select name="player">${playerOptions(seated)}</select></label>
        <label class="field"><span>${tr("app.tournament.substitute", { bot: "bot" })}</span>
          <input name="substitute" type="text" autocapitalize="off" spellcheck="false" autocomplete="off" required placeholder="bot"></label>
        <button class="button" type="submit" ?disabled=${s.busy}>${tr("app.tournament.substitute_do")}</button>
      </form>` : nothing}
    </div>` : nothing}

    <div class="console-grid">
      ${everyone.length ? html`<form class="console-part penalty" novalidate @submit=${submitter("penalty", "tournament_penalty", (f) => {
        if (!f.reason.value.trim()) return refuse("penalty", tr("app.tournament.reason_needed"));
        const fields = { player: f.player.value, kind: f.kind.value, amount: f.amount.value, reason: f.reason.value,
          session: f.session.validity && f.session.validity.badInput ? "?" : f.session.value };
        const checked = penaltyPayload(fields, t.settings.sessions);
        return checked.payload || refuse("penalty", tr(checked.problem, { kind: tr(`app.tournament.kind_${f.kind.value}`), ...checked.params }));
      })} @input=${() => clearFailure("penalty")} @change=${() => clearFailure("penalty")}>
        <h3>${tr("app.tournament.correction")}</h3>
        <label class="field"><span>${tr("app.tournament.player")}</span><select name="player">${playerOptions(everyone)}</select></label>
        <label class="field"><span>${tr("app.tournament.kind")}</span>
          <select name="kind">${KINDS.map((k) => html`<option value=${k}>${tr(`app.tournament.kind_${k}`)}</option>`)}</select></label>
        <label class="field"><span>${tr("app.tournament.amount")}</span>
          <input name="amount" type="text" inputmode="text" autocomplete="off" required placeholder=${tr("app.tournament.amount_hint")}
            aria-invalid=${failed("penalty") ? "true" : "false"} aria-describedby=${failed("penalty") ? "penalty-error" : nothing}></label>
        <label class="field"><span>${tr("app.tournament.reason")}</span>
          <input name="reason" type="text" maxlength="80" autocomplete="off" required></label>
        <label class="field"><span>${tr("app.tournament.session_optional")}</span>
          <input name="session" type="number" inputmode="numeric" min="1" max=${t.settings.sessions}></label>
        ${failureFor("penalty", "penalty-error")}
        <button class="button" type="submit" ?disabled=${s.busy}>${tr("app.tournament.correction_do")}</button>
      </form>` : nothing}

      ${undoable.length ? html`<form class="console-part" @submit=${submitter("console", "tournament_undo", (f) => ({ entry: Number(f.entry.value), reason: f.reason.value.trim() || null }))}>
        <h3>${tr("app.tournament.undo_title")}</h3>
        <label class="field"><span>${tr("app.tournament.entry")}</span>
          <select name="entry">${undoable.map((e) => html`<option value=${e.id}>${logLine(app, e)}</option>`)}</select></label>
        <label class="field"><span>${tr("app.tournament.reason")}</span>
          <input name="reason" type="text" maxlength="80" autocomplete="off"></label>
        <button class="button" type="submit" ?disabled=${s.busy}>${tr("app.tournament.undo")}</button>
      </form>` : nothing}

      ${open ? html`<div class="console-part">
        <h3>${tr("app.tournament.close_title")}</h3>
        ${s.confirm === "close"
          ? confirmBox(app, tr("app.tournament.close_confirm"), tr("app.tournament.close"), () => act("console", "tournament_close"))
          : html`<button class="button" type="button" ?disabled=${s.busy} @click=${() => ask("close")}>${tr("app.tournament.close")}</button>`}
      </div>` : nothing}
    </div>
  </section>`;
}

// ---- standings, sessions, players, log -------------------------------------------------

/** Table points on screen: the decimal, the exact fraction in its title. */
function points(app, exact, decimal = null) {
  const value = decimal ?? fractionValue(exact);
  return html`<span class="points" title=${exact ?? ""}>${pointsText(app.lang, Number.isNaN(value) ? exact : value)}</span>`;
}

function playerLink(name) {
  return html`<a href="#/player/${encodeURIComponent(name)}">${name}</a>`;
}

function standingsView(app, t) {
  const tr = app.t;
  const rows = t.standings || [];
  const columns = sessionColumns(rows);
  return html`<section class="standings-part" aria-labelledby="standings-title">
    <h2 id="standings-title">${tr("app.tournament.standings")}</h2>
    ${rows.length === 0
      ? html`<p class="empty">${tr("app.tournament.no_standings")}</p>`
      : html`<div class="table-scroll"><table class="matches standings">
        <thead><tr><th scope="col" class="num">${tr("app.tournament.place")}</th><th scope="col">${tr("app.tournament.player")}</th>
          <th scope="col" class="num">${tr("app.tournament.table_points")}</th><th scope="col" class="num">${tr("app.player.score")}</th>
          ${columns.map((n) => html`<th scope="col" class="num">${tr("app.tournament.session_short", { n })}</th>`)}</tr></thead>
        <tbody>${rows.map((row) => {
          const by = new Map(row.sessions.map((line) => [line.session, line]));
          return html`<tr>
            <td class="num">${row.place}</td>
            <td>${playerLink(row.player)}</td>
            <td class="num">${points(app, row.table_points, row.table_points_decimal)}</td>
            <td class="num">${row.score}</td>
            ${columns.map((n) => {
              const line = by.get(n);
              return html`<td class="num">${line ? points(app, line.table_points) : "–"}</td>`;
            })}
          </tr>`;
        })}</tbody>
      </table></div>`}
  </section>`;
}

function sessionsView(app, t) {
  const tr = app.t;
  const n = shown(s);
  const numbers = [...t.sessions].map((x) => x.number).sort((a, b) => a - b);
  return html`<section class="sessions-part" aria-labelledby="sessions-title">
    <h2 id="sessions-title">${tr("app.tournament.sessions")}</h2>
    ${numbers.length === 0
      ? html`<p class="empty">${tr("app.tournament.no_sessions")}</p>`
      : html`<nav class="session-picker" aria-label=${tr("app.tournament.sessions")}>
          ${numbers.map((k) => html`<a class="button" href="#/tournament/${t.id}/${k}"
            aria-current=${k === n ? "page" : nothing}>${tr("app.tournament.session_n", { n: k })}</a>`)}
        </nav>`}
    ${s.detailError ? html`<p class="error" role="alert">${s.detailError}</p>` : nothing}
    ${s.detail && s.detail.number === n ? sessionView(app, s.detail) : nothing}
  </section>`;
}

/** A seat: its player (a link), "(played by …)" when a substitute plays it; a seat the
 * seating gave a substitute (no player) is named "Substitute". */
function seatName(app, seat) {
  const by = seat.substitute && (seat.substitute.startsWith("bot:") ? botName(app.t, seat.substitute) : seat.substitute);
  if (!seat.player) {
    return html`<span class="seat-sub">${app.t("app.tournament.sub_seat")}</span>${by ? html` <span class="substituted">${app.t("app.tournament.played_by", { name: by })}</span>` : nothing}`;
  }
  if (!by) return playerLink(seat.player);
  return html`${playerLink(seat.player)} <span class="substituted">${app.t("app.tournament.played_by", { name: by })}</span>`;
}

function tableState(app, x) {
  if (x.state === "seated") return app.t("app.tournament.table_seated");
  if (x.state === "playing" && x.hand_no > 0) return app.t("app.lobby.state_playing", { n: x.hand_no });
  return app.t(`app.lobby.state_${x.state === "playing" ? "started" : x.state}`);
}

function sessionView(app, d) {
  const tr = app.t;
  return html`<div class="session" data-session=${d.number}>
    <p class="facts">
      <span class="badge">${tr(`app.tournament.session_${d.state}`)}</span>
      <span>${tr("app.tournament.method_is", { method: tr(`app.tournament.method_${d.method}`) })}</span>
      ${d.started_at ? html`<span>${tr("app.tournament.started_at", { at: timeText(d.started_at) })}</span>` : nothing}
      ${d.ends_at ? html`<span>${tr("app.tournament.ends_at", { at: timeText(d.ends_at) })}</span>` : nothing}
      ${d.finished_at ? html`<span>${tr("app.tournament.finished_at", { at: timeText(d.finished_at) })}</span>` : nothing}
    </p>
    ${d.repeats && d.repeats.length
      ? html`<p class="repeats-message">${repeatsText(app, d)}</p><ul class="repeats">${d.repeats.map((r) => html`<li>${tr("app.tournament.repeat", { a: r.players[0], b: r.players[1], sessions: r.sessions.join(", ") })}</li>`)}</ul>`
      : html`<p class="hint">${tr("app.tournament.no_repeats")}</p>`}
    ${d.byes && d.byes.length ? html`<p class="byes">${tr("app.tournament.byes", { names: d.byes.join(", ") })}</p>` : nothing}
    <ul class="session-tables">${d.tables.map((x) => tableCard(app, x, heldBack(s.t, d)))}</ul>
    ${d.walls && d.walls.length ? html`<details class="walls"><summary>${tr("app.tournament.walls")}</summary>
      <ul>${d.walls.map((w) => html`<li>${tr("app.tournament.wall", { n: w.hand_no })} <code>${w.seed_hex}</code></li>`)}</ul>
      ${d.tables.filter((x) => x.commitments && x.commitments.length).map((x) => html`<p class="salts-of">${tr("app.tournament.salts_of", { n: x.table })}</p>
        <ul class="salts">${x.commitments.map((c) => html`<li>${tr("app.tournament.wall", { n: c.hand_no })} <code>${c.salt}</code></li>`)}</ul>`)}</details>` : nothing}
  </div>`;
}

/** The seating's `message` in the visitor's words (the server's is English): how many
 * pairs meet again, and what is known of doing better. A method that avoids repeats says
 * "no seating could do better" only when the server proved it (`fewest`), else how many a
 * lower bound says no seating avoids (`unavoidable`); the others say they do not try. */
export function repeatsText(app, d) {
  const n = d.repeats.length;
  const searched = d.method === "avoid" || d.method === "balanced";
  if (!searched) return app.t("app.tournament.repeats_allowed", { n, method: app.t(`app.tournament.method_${d.method}`) });
  if (d.fewest) return app.t("app.tournament.repeats_fewest", { n });
  if (d.unavoidable > 0) return app.t("app.tournament.repeats_unavoidable", { n, m: d.unavoidable });
  return app.t("app.tournament.repeats_unproven", { n });
}

function tableCard(app, x, held) {
  const tr = app.t;
  const results = x.scores !== null && x.scores !== undefined;
  // A held-back session's match answers 403 until the session ends: no link to it.
  return html`<li class="table-card session-table" aria-labelledby="stable-${x.table}">
    <h3 id="stable-${x.table}">${tr("app.tournament.table_n", { n: x.table })}</h3>
    <p class="facts"><span>${tableState(app, x)}</span>
      ${x.match && !held ? html`<a href="#/match/${x.match}">${tr("app.player.open_match", { n: x.match })}</a>` : nothing}
      ${held && x.state === "finished" ? html`<span class="held">${tr("app.tournament.result_held")}</span>` : nothing}</p>
    <div class="table-scroll"><table class="matches seating">
      <thead><tr><th scope="col" class="wind">${tr("table.seat_wind")}</th><th scope="col">${tr("app.tournament.player")}</th>
        ${results ? html`<th scope="col" class="num">${tr("app.player.score")}</th><th scope="col" class="num">${tr("app.tournament.table_points")}</th>` : nothing}</tr></thead>
      <tbody>${x.seats.map((seat, k) => html`<tr>
        <td class="wind">${tr(`table.wind.${seat.wind}`)}</td><td>${seatName(app, seat)}</td>
        ${results ? html`<td class="num">${x.scores[k]}</td><td class="num">${x.table_points ? points(app, x.table_points[k]) : "–"}</td>` : nothing}
      </tr>`)}</tbody>
    </table></div>
    ${x.table_id && x.watchable && x.state !== "seated"
      ? html`<div class="button-row"><a class="button" href="#/watch/${encodeURIComponent(x.table_id)}"
          aria-label=${tr("app.tournament.watch_table", { n: x.table })}>${tr("app.lobby.watch")}</a></div>`
      : nothing}
  </li>`;
}

function duplicateView(app, t) {
  if (!t.duplicate || t.duplicate.length === 0) return nothing;
  const tr = app.t;
  return html`<section aria-labelledby="duplicate-title">
    <h2 id="duplicate-title">${tr("app.tournament.duplicate_results")}</h2>
    <div class="table-scroll"><table class="matches duplicate-results">
      <thead><tr><th scope="col">${tr("app.tournament.player")}</th><th scope="col" class="num">${tr("app.tournament.deals")}</th>
        <th scope="col" class="num">${tr("app.tournament.difference")}</th><th scope="col" class="num">${tr("app.tournament.imps")}</th></tr></thead>
      <tbody>${t.duplicate.map((row) => html`<tr><td>${playerLink(row.player)}</td>
        <td class="num">${Array.isArray(row.deals) ? row.deals.length : row.deals}</td>
        <td class="num">${points(app, String(row.difference))}</td><td class="num">${row.imps}</td></tr>`)}</tbody>
    </table></div>
  </section>`;
}

function playersView(app, t) {
  const tr = app.t;
  const n = t.settings.check_in ? checkInSession(t) : null;
  return html`<section aria-labelledby="players-title">
    <h2 id="players-title">${tr("app.tournament.players_n", { n: t.players.filter((p) => p.status === "registered").length })}</h2>
    ${t.players.length === 0
      ? html`<p class="empty">${tr("app.tournament.no_players")}</p>`
      : html`<div class="table-scroll"><table class="matches tournament-players">
        <thead><tr><th scope="col">${tr("app.tournament.player")}</th><th scope="col">${tr("app.tournament.status")}</th>
          ${n !== null ? html`<th scope="col">${tr("app.tournament.checked_in_col", { n })}</th>` : nothing}</tr></thead>
        <tbody>${t.players.map((p) => html`<tr class=${p.status}>
          <td>${playerLink(p.name)}</td><td>${tr(`app.tournament.status_${p.status}`)}</td>
          ${n !== null ? html`<td>${p.checked_in ? tr("app.tournament.yes") : tr("app.tournament.no")}</td>` : nothing}
        </tr>`)}</tbody>
      </table></div>`}
  </section>`;
}

/** One correction in words: "#3 penalty: alice −8 (session 2)". */
export function logLine(app, e) {
  const what = app.t(`app.tournament.kind_${e.kind}`);
  if (e.kind === "undo") return app.t("app.tournament.log_undo", { id: e.id, of: e.of });
  const where = e.session ? ` ${app.t("app.tournament.log_session", { n: e.session })}` : "";
  return `#${e.id} ${what}: ${e.player} ${e.amount}${where}`;
}

function logView(app, t) {
  const tr = app.t;
  return html`<section aria-labelledby="log-title">
    <h2 id="log-title">${tr("app.tournament.log")}</h2>
    ${t.log.length === 0
      ? html`<p class="empty">${tr("app.tournament.no_log")}</p>`
      : html`<div class="table-scroll"><table class="matches tournament-log">
        <thead><tr><th scope="col">${tr("app.tournament.entry")}</th><th scope="col">${tr("app.tournament.reason")}</th>
          <th scope="col">${tr("app.tournament.by")}</th><th scope="col">${tr("app.tournament.at")}</th></tr></thead>
        <tbody>${t.log.map((e) => html`<tr class=${e.in_force ? "" : "undone"}>
          <td>${logLine(app, e)}${e.in_force ? nothing : html` <span class="badge">${tr("app.tournament.undone")}</span>`}</td>
          <td>${e.reason}</td><td>${e.by}</td><td>${timeText(e.at)}</td></tr>`)}</tbody>
      </table></div>`}
  </section>`;
}

function exportsView(app, t) {
  const base = `/api/tournaments/${encodeURIComponent(t.id)}`;
  return html`<p class="exports">${app.t("app.tournament.export")}
    <a href="${base}/export.csv" download>${app.t("app.tournament.export_csv")}</a> ·
    <a href="${base}/export.json" download>${app.t("app.tournament.export_json")}</a></p>`;
}

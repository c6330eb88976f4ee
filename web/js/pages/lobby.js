// The lobby: the live list of tables (subscribe_lobby, or polling list_tables on a server
// without it), the player's own table while it waits (seats, invite link, bots, leave) and
// the form that creates a table.
import { html, nothing } from "../vendor/lit-html.js";
import { seatOf } from "../app.js";
import { chosenLevel, levelPicker } from "../bots.js";
import { playerName } from "../render.js";
import { loadQueueSizes, queueBox, registered, tableLink } from "../queue.js";

export const PRESETS = ["mcr", "custom", "custom-before", "custom-after", "custom-flowers", "custom-nowild", "custom-8fan", "custom-norepeat"];
const POLL_MS = 5000;
// The decision times the form offers: the server's own (`welcome`), or these of its defaults
// while it has not answered (an older server does not say).
const TURN = { min: 3, max: 120, default: 15 };
const MATCH_LENGTHS = [16, 8, 4, 2, 1]; // create_table `hands`: a whole match is 16 deals

const state = {
  tables: [],
  loaded: false,
  polling: null, // the timer of the list_tables fallback
  stops: [], // unsubscribe functions of this visit
  busy: false,
  error: "",
  errorTable: null, // the table the error names (already_seated: hers), to go to
};

function show(app, tables) {
  state.tables = tables;
  state.loaded = true;
  // The seated players hear of lobby changes, not of every new hand: the listing is newer.
  // It goes the way of a `table` message: should it be the first to say the match began,
  // the player is still taken to her seat.
  const mine = app.myTable && tables.find((s) => s.table === app.myTable.table);
  if (mine) app.tableSummary(mine);
  app.refresh();
}

/** The live listing; a visitor (no session) follows it too, and may watch any table. */
async function follow(app) {
  if (state.polling) return;
  try {
    show(app, (await app.net.request("subscribe_lobby", { on: true })).tables);
  } catch (error) {
    if (error.code === "disconnected") return; // onReady follows again once reconnected
    if (error.code !== "unknown_type") return app.fail(error);
    // An older server: ask every few seconds while the lobby is shown.
    const poll = () => app.net.request("list_tables", {}).then((r) => show(app, r.tables), () => {});
    poll();
    state.polling = setInterval(poll, POLL_MS);
  }
}

/** Runs a lobby step with its errors shown above the list. */
async function act(app, step) {
  state.busy = true;
  state.error = "";
  state.errorTable = null;
  app.refresh();
  try {
    await step();
  } catch (error) {
    state.error = app.errorText(error);
    state.errorTable = error.table || null;
  } finally {
    state.busy = false;
    app.refresh();
  }
}

export function rulesName(app, rules) {
  return PRESETS.includes(rules) ? app.t(`app.rules.${rules}`) : rules;
}

export function stateText(app, summary) {
  if (summary.state !== "playing") return app.t(`app.lobby.state_${summary.state}`);
  if (summary.hand_no > 0) return app.t("app.lobby.state_playing", { n: summary.hand_no });
  return app.t("app.lobby.state_started"); // no hand dealt yet, or one seen late: its number held back
}

/** "16 hands", "1 hand": the length of a table's match. */
export function matchLength(app, hands) {
  return app.t(hands === 1 ? "app.lobby.one_hand" : "app.lobby.hands", { n: hands });
}

function seatName(app, seats, i) {
  const name = seats[i];
  if (name === null) return html`<span class="seat-free">${app.t("app.seat.free")}</span>`;
  // A bot as the table names it ("Bot 2 · Strong"): the same words in the lobby and at the table.
  if (name.startsWith("bot:")) return html`<span class="seat-bot">${playerName(app.t, seats, i)}</span>`;
  return html`<a href="#/player/${encodeURIComponent(name)}">${name}</a>`;
}

function seats(app, summary) {
  return html`<ol class="seats" aria-label=${app.t("app.lobby.seats")}>
    ${summary.seats.map((_, i) => html`<li>${seatName(app, summary.seats, i)}</li>`)}
  </ol>`;
}

function facts(app, summary) {
  return html`<p class="facts">
    <span>${rulesName(app, summary.rules)}</span>
    <span>${app.t("app.lobby.turn", { n: summary.turn_seconds })}</span>
    ${summary.hands && summary.hands < 16 ? html`<span>${matchLength(app, summary.hands)}</span>` : nothing}
    <span>${stateText(app, summary)}</span>
    ${summary.rated ? html`<span class="badge rated">${app.t("app.lobby.rated")}</span>` : nothing}
    ${summary.private ? html`<span class="badge">${app.t("app.lobby.private")}</span>` : nothing}
    ${summary.aids === false ? html`<span class="badge">${app.t("app.lobby.aids_off")}</span>` : nothing}
  </p>`;
}

function copyInvite(app, link, input) {
  const copied = () => app.toast(app.t("app.invite.copied"));
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(link).then(copied, () => input.select());
  } else {
    input.select(); // no clipboard API on a plain-http page: the text is ready for Ctrl+C
    app.toast(app.t("app.invite.select"));
  }
}

export function inviteBox(app, table) {
  const code = app.invites[table];
  if (!code) return nothing;
  const link = app.inviteLink(table, code);
  const id = `invite-${table}`;
  return html`<div class="invite">
    <label for=${id}>${app.t("app.invite.label")}</label>
    <div class="invite-row">
      <input id=${id} class="invite-link" readonly .value=${link} @focus=${(e) => e.target.select()}>
      <button class="button" type="button"
        @click=${(e) => copyInvite(app, link, e.target.closest(".invite").querySelector("input"))}>${app.t("app.invite.copy")}</button>
    </div>
    <p class="hint">${app.t("app.invite.hint")}</p>
  </div>`;
}

function myTable(app) {
  const summary = app.myTable;
  if (!summary) return nothing;
  const waiting = summary.state === "waiting";
  const id = summary.table;
  return html`<section class="card my-table" aria-labelledby="my-table-title">
    <h2 id="my-table-title">${app.t("app.lobby.my_table", { table: id })}</h2>
    ${facts(app, summary)} ${seats(app, summary)}
    ${waiting ? html`<p class="hint">${app.t(summary.rated ? "app.lobby.rated_starts_when_full" : "app.lobby.starts_when_full")}</p>` : nothing}
    ${summary.private ? inviteBox(app, id) : nothing}
    ${waiting && !summary.rated ? levelPicker(app, "lobby-level") : nothing}
    <div class="button-row">
      <a class="button primary" href="#/table/${id}">${app.t("app.lobby.open")}</a>
      ${waiting && !summary.rated
        ? html`<button class="button" type="button" ?disabled=${state.busy}
            @click=${() => act(app, () => app.net.request("add_bots", { table: id, bot: chosenLevel(app) }))}>${app.t("app.lobby.add_bots")}</button>`
        : nothing}
      <button class="button" type="button" ?disabled=${state.busy}
        @click=${() => act(app, () => app.leave(id))}>${app.t("app.lobby.leave")}</button>
    </div>
  </section>`;
}

function row(app, summary) {
  const id = summary.table;
  const mine = app.session && seatOf(summary, app.session.username) >= 0;
  const canSit = !app.myTable && summary.state === "waiting" && summary.seats.includes(null);
  return html`<li class="table-card" aria-labelledby="table-${id}">
    <h3 id="table-${id}">${app.t("app.lobby.table", { table: id })}</h3>
    ${facts(app, summary)} ${seats(app, summary)}
    <div class="button-row">
      ${canSit
        ? html`<button class="button primary" type="button" ?disabled=${state.busy}
            aria-label=${app.t("app.lobby.sit_at", { table: id })}
            @click=${() => act(app, async () => (app.session || (await app.guest()), app.join(id)))}>${app.t("app.lobby.sit")}</button>`
        : nothing}
      ${mine
        ? html`<a class="button" href="#/table/${id}" aria-label=${app.t("app.lobby.open_at", { table: id })}>${app.t("app.lobby.open")}</a>`
        : html`<a class="button" href="#/watch/${id}" aria-label=${app.t("app.lobby.watch_at", { table: id })}>${app.t("app.lobby.watch")}</a>`}
    </div>
  </li>`;
}

function createTable(app, event) {
  event.preventDefault();
  const form = event.target.elements;
  const payload = {
    rules: form.rules.value,
    turn_seconds: Number(form.turn.value),
    hands: Number(form.hands.value),
    private: form.private.checked,
    aids: form.aids.checked,
  };
  if (form.rated.checked) payload.rated = true; // the flag only when set: older servers lack it
  act(app, async () => {
    const created = await app.net.request("create_table", payload);
    if (created.invite_code) app.rememberInvite(created.table, created.invite_code);
    await app.join(created.table, { code: created.invite_code });
  });
}

function createForm(app) {
  const blocked = Boolean(app.myTable);
  const told = app.net.welcome || {};
  const turn = { min: told.min_turn_seconds ?? TURN.min, max: told.max_turn_seconds ?? TURN.max, default: told.turn_seconds ?? TURN.default };
  return html`<form class="card create" @submit=${(e) => createTable(app, e)} aria-labelledby="create-title">
    <h2 id="create-title">${app.t("app.create.title")}</h2>
    <label class="field"><span>${app.t("app.create.rules")}</span>
      <select name="rules">${PRESETS.map((p) => html`<option value=${p}>${app.t(`app.rules.${p}`)}</option>`)}</select></label>
    <label class="field"><span>${app.t("app.create.turn")}</span>
      <input name="turn" type="number" inputmode="numeric" min=${turn.min} max=${turn.max} value=${turn.default} required></label>
    <label class="field"><span>${app.t("app.create.hands")}</span>
      <select name="hands">${MATCH_LENGTHS.map((n) => html`<option value=${n}>${n === 16 ? app.t("app.create.full") : matchLength(app, n)}</option>`)}</select></label>
    <label class="check"><input name="private" type="checkbox"> <span>${app.t("app.create.private")}</span></label>
    <label class="check"><input name="aids" type="checkbox" checked> <span>${app.t("app.create.aids")}</span></label>
    <label class="check"><input name="rated" type="checkbox" ?disabled=${!registered(app)}
      aria-describedby=${registered(app) ? nothing : "rated-why"}> <span>${app.t("app.create.rated")}</span></label>
    ${registered(app) ? nothing : html`<p class="hint" id="rated-why">${app.t("app.create.rated_guest")}</p>`}
    ${blocked ? html`<p class="hint">${app.t("app.create.seated")}</p>` : nothing}
    <button class="button primary" type="submit" ?disabled=${blocked || state.busy}>${app.t("app.create.submit")}</button>
  </form>`;
}

function signIn(app) {
  return html`<section class="card">
    <p>${app.t("app.lobby.sign_in")}</p>
    <div class="button-row">
      <button class="button primary" type="button" ?disabled=${state.busy}
        @click=${() => act(app, () => app.guest())}>${app.t("app.account.guest")}</button>
      <a class="button" href="#/">${app.t("app.lobby.to_login")}</a>
    </div>
  </section>`;
}

/** Tables with a free seat first (most taken first: they start soonest), then those in play. */
export function byOpenness(a, b) {
  const free = (s) => (s.state === "waiting" ? s.seats.filter((x) => x === null).length : 9);
  return free(a) - free(b);
}

function list(app) {
  const others = state.tables.filter((s) => !app.myTable || s.table !== app.myTable.table).sort(byOpenness);
  if (!state.loaded) return html`<p class="hint">${app.t("app.lobby.loading")}</p>`;
  if (others.length === 0) return html`<p class="empty">${app.t("app.lobby.empty")}</p>`;
  return html`<ul class="table-list">${others.map((s) => row(app, s))}</ul>`;
}

export const lobbyPage = {
  enter(app) {
    loadQueueSizes(app);
    Object.assign(state, { tables: [], loaded: false, busy: false, error: "", errorTable: null });
    state.stops = [
      app.net.on("tables", (payload) => show(app, payload.tables)),
      app.net.onReady(() => follow(app)), // after every reconnection: subscribe again
    ];
    if (app.net.ready) follow(app);
  },
  leave(app) {
    for (const stop of state.stops) stop();
    state.stops = [];
    if (state.polling) clearInterval(state.polling);
    else app.net.send("subscribe_lobby", { on: false });
    state.polling = null;
  },
  title(app) {
    return app.t("app.lobby.title");
  },
  view(app) {
    return html`<h1>${app.t("app.lobby.title")}</h1>
      ${state.error ? html`<p class="error" role="alert">${state.error}</p>${tableLink(app, state.errorTable)}` : nothing}
      ${myTable(app)}
      ${queueBox(app)}
      <div class="lobby-grid">
        <section aria-labelledby="open-tables">
          <h2 id="open-tables">${app.t("app.lobby.open_tables")}</h2>
          ${list(app)}
        </section>
        ${app.session ? createForm(app) : signIn(app)}
      </div>`;
  },
};

// The app context every page receives: the connection, the session, the settings, the
// texts, navigation and the few account and lobby steps that several pages share. State
// lives here and pages only read it and ask for a refresh, so one render path draws all.
import { defaultLang, errorText, translate } from "./i18n.js";
import { chosenLevel } from "./bots.js";
import { createNet, serverError, socketUrl } from "./net.js";
import { attachQueue } from "./queue.js";
import { readJson, writeJson } from "./storage.js";

const SESSION_KEY = "guobiao.session";
const SETTINGS_KEY = "guobiao.settings";
const INVITES_KEY = "guobiao.invites";
const RESULTS_KEY = "guobiao.results"; // the hand results this device has shown
const TOAST_MS = 6000;
const INVITES_KEPT = 20; // the invite codes remembered, the latest ones
const RESULTS_KEPT = 20; // the hand results remembered as shown, the latest ones

// No auto-flower setting: the server sets aside and replaces every flower itself (the rules
// leave the player no choice), so the client never has a flower to play. `botLevel`: the
// level of the bots this player adds and plays against (bots.js). `notify`: "your turn" as a
// notification while the tab is hidden (notify.js).
export const DEFAULT_SETTINGS = { lang: "en", sound: false, autoPass: false, aids: false, botLevel: "normal", notify: false };

/** The route a location hash names: `{name, params}` (`notfound` for anything else). A
 * query after the path (`#/match/12?invite=CODE`) gives the match page a private table's
 * invite code, which every request for the match then carries. */
export function parseRoute(hash) {
  const address = hash.replace(/^#\/?/, "");
  const mark = address.indexOf("?");
  const path = mark < 0 ? address : address.slice(0, mark);
  const query = new URLSearchParams(mark < 0 ? "" : address.slice(mark + 1));
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const [head, a, b, c] = parts;
  const number = (text) => (text === undefined || !/^\d+$/.test(text) ? null : Number(text));
  if (head === undefined) return { name: "home", params: {} };
  if (head === "lobby" && !a) return { name: "lobby", params: {} };
  if (head === "join" && a && b) return { name: "join", params: { table: a, code: b } };
  if (head === "player" && a) return { name: "player", params: { name: a } };
  if (head === "ladder" && !b) return { name: "ladder", params: { id: a || null } };
  if (head === "tournaments" && !a) return { name: "tournaments", params: {} };
  if (head === "tournament" && number(a) !== null && (b === undefined || number(b) !== null) && !c) {
    return { name: "tournament", params: { id: number(a), session: number(b) } };
  }
  if ((head === "table" || head === "watch") && a) {
    return { name: "table", params: { table: a, mode: head === "watch" ? "watch" : "play" } };
  }
  if (head === "match" && number(a) !== null) {
    const invite = query.get("invite") || null;
    return { name: "match", params: { id: number(a), hand: number(b), step: number(c), invite } };
  }
  return { name: "notfound", params: {} };
}

/** The address of match `id`'s page (`hand` and `step`: a replay's, else none), with the
 * invite code of a private table's match (`invite`) when there is one. */
export function matchAddress(id, { hand = null, step = 0, invite = null } = {}) {
  const where = hand ? `#/match/${id}/${hand}/${step}` : `#/match/${id}`;
  return invite ? `${where}?invite=${encodeURIComponent(invite)}` : where;
}

/** Whether `update` ends a hand of the player's own table (`myTable`, its summary) while
 * the page is on another `route`: its result is read by nobody, the table is told so. */
export function unreadElsewhere(update, route, myTable) {
  const here = route.name === "table" && route.params.table === update.table;
  return !here && update.view?.phase === "over" && myTable?.table === update.table;
}

/** The seat `username` holds in a table summary, or -1. */
export function seatOf(summary, username) {
  return username ? summary.seats.indexOf(username) : -1;
}

/** Builds the app. `onRender` draws; `env` replaces the browser's parts in tests. */
export function createApp({ onRender, env = {} }) {
  const storage = env.storage || globalThis.localStorage;
  const location = env.location || globalThis.location;
  let renderQueued = false;

  const app = {
    net: null,
    session: readJson(storage, SESSION_KEY, null),
    settings: { ...DEFAULT_SETTINGS, lang: defaultLang(), ...readJson(storage, SETTINGS_KEY, {}) },
    connection: { status: "connecting", retryAt: null },
    route: parseRoute(location.hash),
    myTable: null, // the summary of the table this player sits at, from `table` messages
    lastEnd: null, // the last match end told: {table, summary, update, reveal, matchEnd}
    invites: readJson(storage, INVITES_KEY, {}), // table -> invite code, for invite links
    toasts: [],

    get lang() {
      return app.settings.lang;
    },
    t(key, params) {
      return translate(app.settings.lang, key, params);
    },
    /** A refused request in words (see i18n.js). */
    errorText(error) {
      return errorText(app.settings.lang, error);
    },
    saveSettings() {
      writeJson(storage, SETTINGS_KEY, app.settings);
      app.refresh();
    },
    navigate(hash) {
      if (location.hash === hash) app.refresh();
      else location.hash = hash;
    },
    refresh() {
      if (renderQueued) return;
      renderQueued = true;
      queueMicrotask(() => {
        renderQueued = false;
        onRender(app);
      });
    },
    toast(text) {
      const toast = { text };
      app.toasts = [...app.toasts, toast];
      app.refresh();
      setTimeout(() => {
        app.toasts = app.toasts.filter((t) => t !== toast);
        app.refresh();
      }, TOAST_MS);
    },
    /** Shows a refused request as a toast; use where a page has no place of its own for it. */
    fail(error) {
      app.toast(app.errorText(error));
    },

    setSession(session, why) {
      app.session = session;
      writeJson(storage, SESSION_KEY, session);
      if (!session) app.myTable = app.lastEnd = null;
      if (why === "expired") app.toast(app.t("app.session.expired"));
      app.refresh();
    },
    async login(username, password) {
      app.setSession(await app.net.request("login", { username, password }));
    },
    async register(username, password) {
      app.setSession(await app.net.request("register", { username, password }));
    },
    async guest() {
      app.setSession(await app.net.request("guest", {}));
    },
    async logout() {
      await app.net.request("logout", {});
      app.setSession(null);
    },
    /** The invite link of a private table, as a full address to paste anywhere. */
    inviteLink(table, code) {
      return `${location.origin}${location.pathname}#/join/${encodeURIComponent(table)}/${encodeURIComponent(code)}`;
    },
    /** Whether this device has shown the hand result `key` (a reload must not show it again). */
    resultShown(key) {
      return readJson(storage, RESULTS_KEY, []).includes(key);
    },
    rememberResult(key) {
      const kept = readJson(storage, RESULTS_KEY, []);
      if (!Array.isArray(kept) || kept.includes(key)) return;
      writeJson(storage, RESULTS_KEY, [...kept, key].slice(-RESULTS_KEPT));
    },
    rememberInvite(table, code) {
      const kept = Object.entries(app.invites).filter(([id]) => id !== table).slice(1 - INVITES_KEPT);
      app.invites = { ...Object.fromEntries(kept), [table]: code };
      writeJson(storage, INVITES_KEY, app.invites);
    },
    /** Sit at `table`; the `table` message that follows fills in app.myTable. */
    async join(table, { seat = null, code = null } = {}) {
      const payload = { table, invite_code: code ?? app.invites[table] ?? null };
      if (seat !== null) payload.seat = seat;
      const joined = await app.net.request("join_table", payload);
      if (code) app.rememberInvite(table, code);
      return joined;
    },
    /** Leave `table`: before its match starts the seat is freed; during the match the
     * server plays it and it stays hers (protocol.md, `leave_table`), so the lobby keeps it
     * as her table, to open again (its `sync` seats her back), and she cannot make another. */
    async leave(table) {
      await app.net.request("leave_table", { table });
      const mine = app.myTable && app.myTable.table === table;
      if (mine && app.myTable.state === "waiting") app.myTable = null;
      app.refresh();
    },
    /** The home page's one click: a guest if need be, a table, a seat, three bots of the
     * level chosen beside the button. */
    async playNow() {
      if (app.myTable) {
        app.toast(app.t("app.play.already", { table: app.myTable.table }));
        return app.navigate(`#/table/${app.myTable.table}`);
      }
      if (!app.session) await app.guest();
      const { table } = await app.net.request("create_table", { rules: "mcr" });
      await app.join(table, { seat: 0 });
      // The table page starts listening before the bots fill the table and the deal begins.
      app.navigate(`#/table/${table}`);
      await app.net.request("add_bots", { table, bot: chosenLevel(app) });
    },
  };

  /** A summary of a table (a `table` message, or the lobby listing's line of the player's
   * own table, whichever comes first): the player's table kept, and when her match begins
   * while she waits elsewhere, she is taken to her seat. */
  function tableMessage(summary) {
    const mine = app.session && seatOf(summary, app.session.username) >= 0;
    const before = app.myTable && app.myTable.table === summary.table ? app.myTable : null;
    if (mine && summary.state !== "finished") app.myTable = summary;
    else if (before) app.myTable = null;
    // The match began while this player waited elsewhere: take it to its seat.
    const here = app.route.name === "table" && app.route.params.table === summary.table;
    if (mine && before && before.state === "waiting" && summary.state === "playing" && !here) {
      app.navigate(`#/table/${summary.table}`);
    }
    app.refresh();
  }

  app.net = createNet({
    url: env.url || socketUrl(location),
    env: env.net,
    session: { get: () => app.session, set: (session, why) => app.setSession(session, why) },
    onState(state) {
      app.connection = state;
      if (state.status !== "connected") app.myTable = null; // the server says again on resume
      app.refresh();
    },
  });
  app.net.on("table", tableMessage);
  app.tableSummary = tableMessage;
  // A match's end as it was told (the table's last summary, full update and reveal, then
  // `match_end`), kept: a player back after her match ended is told it at once on `resume`,
  // often before the table page's module has loaded to listen, and her table is gone by
  // then (its `sync` is refused). The table page shows what is kept here when it opens at
  // that table. (Only a full update is kept: one that follows another cannot be shown alone.)
  const unseen = (table) => ({ table, summary: null, update: null, reveal: null });
  let seen = unseen(null); // the last table's summary, full update and reveal, as told
  const see = (key) => (p) => {
    if (seen.table !== p.table) seen = unseen(p.table);
    seen[key] = key === "update" && !p.full ? null : p;
  };
  app.net.on("table", see("summary"));
  app.net.on("update", see("update"));
  app.net.on("reveal", see("reveal"));
  // The match is over: the header's "Back to table" link goes (its last summary said playing).
  app.net.on("match_end", (payload) => {
    app.lastEnd = { ...(seen.table === payload.table ? seen : unseen(payload.table)), matchEnd: payload };
    if (app.myTable && app.myTable.table === payload.table) {
      app.myTable = null;
      app.refresh();
    }
  });
  // A tournament session started with this player seated: the server has attached the
  // connection to the table (the `table` message links back to it); say where it is.
  app.net.on("tournament_session", (p) => {
    app.toast(app.t("app.tournament.session_started", { session: p.session, table: p.table, wind: app.t(`table.wind.${p.wind}`) }));
  });
  // A hand of this player's table ended while she is elsewhere in the app (the lobby, the
  // ladder): nobody reads its result here, so the table is not held for her between hands
  // (`next_hand`; the table page says it itself, on Continue or when it is left).
  let told = "";
  app.net.on("update", (p) => {
    const key = `${p.table}/${p.hand_no}`;
    if (told !== key && unreadElsewhere(p, app.route, app.myTable)) {
      told = key;
      app.net.send("next_hand", { table: p.table, hand_no: p.hand_no });
    }
  });
  attachQueue(app);
  // Errors answering no request (actions are sent without an id): the table page shows its
  // own; a `stale` one only means a duplicate was ignored, as designed.
  app.net.on("error", (payload) => {
    if (payload.code !== "stale" && app.route.name !== "table") app.fail(serverError(payload));
  });
  return app;
}

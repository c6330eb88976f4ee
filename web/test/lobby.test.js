// The lobby and player pages against a scripted app: the live feed, the fallback to polling
// on a server without subscribe_lobby, what a table card offers, a player's results.
import { eq, ok, test } from "./harness.js";
import { render } from "../js/vendor/lit-html.js";
import { translate } from "../js/i18n.js";
import { byOpenness, lobbyPage } from "../js/pages/lobby.js";
import { playerPage } from "../js/pages/player.js";

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

const TABLE = {
  table: "t9", rules: "mcr", turn_seconds: 15, seats: ["mei", null, "bot:default", null],
  state: "waiting", hand_no: 0, private: false, claim_window_ms: 0,
};

/** An app whose server answers `replies[type]` (a payload, or an Error to reject with). */
function scriptedApp(replies) {
  const asked = [];
  const handlers = {};
  const app = {
    asked,
    session: { username: "lin", guest: false },
    myTable: null,
    invites: {},
    t: (key, params) => translate("en", key, params),
    refresh() {},
    summaries: [], // what the page passed on as its table's summary (app.js: tableSummary)
    tableSummary(summary) {
      app.summaries.push(summary);
      app.myTable = summary;
    },
    fail(error) {
      throw error;
    },
    net: {
      ready: true,
      request(type, payload) {
        asked.push([type, payload]);
        const reply = replies[type];
        return reply instanceof Error ? Promise.reject(reply) : Promise.resolve(reply);
      },
      send(type, payload) {
        asked.push([type, payload]);
      },
      on(type, handler) {
        handlers[type] = handler;
        return () => delete handlers[type];
      },
      onReady(handler) {
        app.reconnected = handler;
        return () => (app.reconnected = null);
      },
    },
    push: (type, payload) => handlers[type] && handlers[type](payload),
  };
  return app;
}

function shown(app) {
  const root = document.createElement("div");
  render(lobbyPage.view(app), root);
  return root;
}

test("the lobby subscribes, shows the listing and follows its pushes", async () => {
  const app = scriptedApp({ subscribe_lobby: { tables: [TABLE] } });
  lobbyPage.enter(app, {});
  await settle();
  eq(app.asked, [["subscribe_lobby", { on: true }]]);
  let root = shown(app);
  ok(root.querySelector("#table-t9"), "the table is listed");
  const sit = root.querySelector('[aria-label="Take a seat at table t9"]');
  ok(sit && sit.textContent.trim() === "Take a seat", "a free seat can be taken");
  ok(root.querySelector('[aria-label="Watch table t9"]').getAttribute("href") === "#/watch/t9", "watch link");
  eq([...root.querySelectorAll("#table-t9 ~ .seats li")].map((li) => li.textContent.trim()), ["mei", "Free seat", "Bot 3 · Normal", "Free seat"]);
  app.push("tables", { tables: [{ ...TABLE, table: "t10", state: "playing", hand_no: 2, seats: ["a", "b", "c", "d"] }] });
  root = shown(app);
  ok(!root.querySelector("#table-t9"), "gone from the listing");
  ok(root.textContent.includes("Playing: hand 2"), "the state of the new one");
  ok(!root.querySelector('[aria-label="Take a seat at table t10"]'), "no seat at a full table");
  app.reconnected(); // a new connection has no subscription: the lobby asks again
  eq(app.asked.at(-1), ["subscribe_lobby", { on: true }]);
  lobbyPage.leave(app);
  eq(app.asked.at(-1), ["subscribe_lobby", { on: false }]);
  eq(app.reconnected, null, "a lobby left no longer follows reconnections");
});

test("a server without subscribe_lobby is polled with list_tables", async () => {
  const unknown = Object.assign(new Error("unknown type"), { code: "unknown_type" });
  const app = scriptedApp({ subscribe_lobby: unknown, list_tables: { tables: [TABLE] } });
  lobbyPage.enter(app, {});
  await settle();
  await settle();
  eq(app.asked.map(([type]) => type), ["subscribe_lobby", "list_tables"]);
  ok(shown(app).querySelector("#table-t9"), "the polled listing is shown");
  lobbyPage.leave(app);
  eq(app.asked.length, 2, "no unsubscribe for a feed it never had");
});

test("the player's own waiting table offers bots, leaving and its invite link", async () => {
  const app = scriptedApp({ subscribe_lobby: { tables: [] } });
  app.inviteLink = (table, code) => `http://host/#/join/${table}/${code}`;
  app.invites = { t9: "K3y" };
  app.myTable = { ...TABLE, private: true, seats: ["lin", null, null, null] };
  lobbyPage.enter(app, {});
  await settle();
  const root = shown(app);
  eq(root.querySelector("#my-table-title").textContent, "Your table: t9");
  eq(root.querySelector(".invite-link").value, "http://host/#/join/t9/K3y");
  const buttons = [...root.querySelectorAll(".my-table button, .my-table a.button")].map((b) => b.textContent.trim());
  eq(buttons, ["Copy the link", "Open the table", "Add bots", "Leave"]);
  ok(root.querySelector("form.create button[type=submit]").disabled, "one table at a time");
  lobbyPage.leave(app);
});

test("tables about to start come first, tables in play last", () => {
  const table = (id, state, free) => ({ table: id, state, seats: [...Array(4)].map((_, i) => (i < free ? null : "x")) });
  const sorted = [table("a", "playing", 0), table("b", "waiting", 3), table("c", "waiting", 1)].sort(byOpenness);
  eq(sorted.map((s) => s.table), ["c", "b", "a"]);
});

test("the player page shows the grade, the counts and each recent match with its link", async () => {
  const body = {
    username: "lin", guest: false, created_at: "2026-12-01T09:00:00Z", grade: 2.5, score: 40,
    hands_won: 3, hands_lost: 2, hands_drawn: 11, matches: 1,
    recent: [{ match: 12, table: "t4", rules: "mcr", ended_at: "2026-12-01T10:00:00Z", player: 0, score: 40,
      won: 3, lost: 2, drawn: 11, final_scores: [40, -24, 8, -24], seats: ["lin", "bot:default", "mei", "bot:fast"] }],
  };
  const realFetch = globalThis.fetch;
  const asked = [];
  globalThis.fetch = async (url) => (asked.push(url), { ok: true, status: 200, json: async () => body });
  try {
    const app = scriptedApp({});
    playerPage.enter(app, { name: "lin" });
    await settle();
    const root = document.createElement("div");
    render(playerPage.view(app), root);
    eq(asked, ["/api/players/lin"]);
    const stat = (s) => `${s.querySelector("dt").textContent} ${s.querySelector("dd").textContent}`;
    eq([...root.querySelectorAll(".stat")].map(stat),
      ["Grade 2.50", "Score 40", "Matches 1", "Hands won 3", "Hands lost 2", "Hands drawn 11"]);
    const link = root.querySelector('a[href="#/match/12"]');
    ok(link && link.getAttribute("aria-label") === "Match 12", "the match links to its page");
    const cells = [...root.querySelectorAll(".matches tbody td")].map((td) => td.textContent.trim());
    eq([cells[2], cells[3], cells[4], cells[5]], ["MCR (Chinese Official)", "+40", "3 / 2 / 11", "Bot · Normal, mei, Bot · Load test"]);
  } finally {
    globalThis.fetch = realFetch;
  }
});

test("the listing's line of the player's own table goes the way of a table message", async () => {
  const playing = { ...TABLE, state: "playing", hand_no: 1, seats: ["lin", "a", "b", "c"] };
  const app = scriptedApp({ subscribe_lobby: { tables: [playing] } });
  app.myTable = { ...TABLE, seats: ["lin", "a", "b", null] };
  lobbyPage.enter(app, {});
  await settle();
  eq(app.summaries, [playing], "the listing may be the first to say the match began");
  eq(app.myTable, playing);
  lobbyPage.leave(app);
});

// The tournament pages in the client: the routes, the figures (table points as decimals
// with the exact fraction), which session a seat or a check-in is for, the forms' payloads,
// and the page drawn from a scripted connection: the standings, the seating, the player's
// seat and the director's console sending the spec's messages.
import { eq, ok, test } from "./harness.js";
import { render } from "../js/vendor/lit-html.js";
import { translate } from "../js/i18n.js";
import { parseRoute } from "../js/app.js";
import {
  amountValue, checkInSession, fractionValue, methodOf, pointsText, repeatsText, seatableSession, sessionColumns, splitNames, tournamentPage,
} from "../js/pages/tournament.js";
import { createPayload, tournamentsPage } from "../js/pages/tournaments.js";

const settle = async () => {
  for (let i = 0; i < 6; i++) await new Promise((resolve) => setTimeout(resolve, 0));
};
const en = (key, params) => translate("en", key, params);
const zh = (key, params) => translate("zh", key, params);

const SETTINGS = {
  name: "Winter cup", rules: "mcr", sessions: 3, hands: 1, time_cap_minutes: 90, turn_seconds: 5, aids: true,
  spectator_delay_seconds: 0, public: true, registration: "open", fill: "byes", duplicate: false, check_in: true,
  tie_breaks: ["table_points", "score"], seating: ["random", "avoid"],
};

function tournament(extra = {}) {
  return {
    id: 7, name: "Winter cup", rules: "mcr", state: "running", settings: SETTINGS, registration_open: false,
    directors: ["dora"],
    players: ["ann", "bob", "cat", "dan", "eve"].map((name) => ({ name, status: name === "eve" ? "withdrawn" : "registered", checked_in: name !== "dan", registered_at: "2026-12-01T10:00:00Z" })),
    sessions: [{ number: 1, state: "finished", method: "random", started_at: "2026-12-01T11:00:00Z", ends_at: null, finished_at: "2026-12-01T11:30:00Z", tables: 1 }],
    session: 1,
    standings: [
      { place: 1, player: "ann", table_points: "4", table_points_decimal: 4, score: 24, firsts: 1, best_session: "4", sessions: [{ session: 1, table: 1, seat: 0, score: 24, table_points: "4" }] },
      { place: 2, player: "bob", table_points: "3/2", table_points_decimal: 1.5, score: -8, firsts: 0, best_session: "3/2", sessions: [{ session: 1, table: 1, seat: 1, score: -8, table_points: "3/2" }] },
      { place: 2, player: "cat", table_points: "3/2", table_points_decimal: 1.5, score: -8, firsts: 0, best_session: "3/2", sessions: [{ session: 1, table: 1, seat: 2, score: -8, table_points: "3/2" }] },
      { place: 4, player: "dan", table_points: "0", table_points_decimal: 0, score: -8, firsts: 0, best_session: "0", sessions: [{ session: 1, table: 1, seat: 3, score: -8, table_points: "0" }] },
    ],
    duplicate: null,
    log: [{ id: 1, kind: "penalty", player: "dan", session: 1, amount: "-8", reason: "late", of: null, by: "dora", at: "2026-12-01T11:31:00Z", in_force: true }],
    ...extra,
  };
}

const SESSION_1 = {
  tournament: 7, number: 1, state: "finished", method: "random", seed: 5, message: "", repeats: [], byes: [],
  started_at: "2026-12-01T11:00:00Z", ends_at: null, finished_at: "2026-12-01T11:30:00Z",
  tables: [{
    table: 1, table_id: "t9abc", match: 12, state: "finished", hand_no: 1, watchable: true,
    seats: [["E", "ann"], ["S", "bob"], ["W", "cat"], ["N", "dan"]].map(([wind, player]) => ({ wind, player, substitute: player === "dan" ? "bot:strong" : null })),
    scores: [24, -8, -8, -8], table_points: ["4", "3/2", "3/2", "0"],
  }],
  walls: null,
};

/** An app whose connection answers `replies[type]` (a function of the payload, or an
 * Error to refuse), and whose fetch answers `/api/...` from `bodies`. */
function scripted(replies, { session = { username: "ann", guest: false }, t = en, lang = "en" } = {}) {
  const handlers = {};
  const app = {
    asked: [], navigated: [], session, t, lang,
    refresh() {},
    errorText: (error) => `${error.code}: ${error.message}`,
    navigate(hash) {
      app.navigated.push(hash);
    },
    net: {
      request(type, payload) {
        app.asked.push([type, payload]);
        const reply = replies[type];
        if (reply instanceof Error) return Promise.reject(reply);
        return Promise.resolve(typeof reply === "function" ? reply(payload) : reply);
      },
      on(type, handler) {
        handlers[type] = handler;
        return () => delete handlers[type];
      },
      onReady: () => () => {},
    },
    push: (type, payload) => handlers[type](payload),
  };
  return app;
}

async function withFetch(bodies, step) {
  const realFetch = globalThis.fetch;
  const asked = [];
  globalThis.fetch = async (url) => {
    asked.push(url);
    const body = bodies[url];
    return { ok: body !== undefined, status: body === undefined ? 404 : 200, json: async () => body ?? { error: `no ${url}` } };
  };
  try {
    await step(asked);
  } finally {
    globalThis.fetch = realFetch;
  }
}

let shownRoot = null;

/** The page drawn into the document (a form submits only there). */
function drawn(page, app) {
  if (shownRoot) shownRoot.remove();
  shownRoot = document.createElement("div");
  shownRoot.hidden = true;
  document.body.append(shownRoot);
  render(page.view(app), shownRoot);
  return shownRoot;
}

/** The Latin words of every text and every option on the page. */
function latinWords(root) {
  const words = new Set();
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) for (const w of walker.currentNode.textContent.match(/[A-Za-z][A-Za-z0-9_-]+/g) || []) words.add(w);
  return words;
}

const cells = (row) => [...row.cells].map((c) => c.textContent.trim().replace(/\s+/g, " "));

function refused(code) {
  const error = new Error(`refused: ${code}`);
  error.code = code;
  return error;
}

test("tournament routes: the list, a tournament, one of its sessions", () => {
  eq(parseRoute("#/tournaments"), { name: "tournaments", params: {} });
  eq(parseRoute("#/tournament/7"), { name: "tournament", params: { id: 7, session: null } });
  eq(parseRoute("#/tournament/7/2"), { name: "tournament", params: { id: 7, session: 2 } });
  eq(parseRoute("#/tournament/x").name, "notfound");
  eq(parseRoute("#/tournament/7/2/3").name, "notfound");
  eq(parseRoute("#/tournaments/7").name, "notfound");
});

test("tournament figures: exact table points read and shown with at most two decimals", () => {
  eq([fractionValue("7/3"), fractionValue("-1/2"), fractionValue("4"), fractionValue(2.5)], [7 / 3, -0.5, 4, 2.5]);
  ok(Number.isNaN(fractionValue("x")), "not a figure");
  eq([pointsText("en", "7/3"), pointsText("en", "3/2"), pointsText("en", "4"), pointsText("en", -0.5), pointsText("en", "1/1000")], ["2.33", "1.5", "4", "\u22120.5", "0"]);
  eq(pointsText("en", null), "–");
  eq(sessionColumns(tournament().standings), [1]);
});

test("tournament steps: the session a seat or a check-in is for, the method by the settings", () => {
  const t = (sessions, state = "running") => ({ state, settings: SETTINGS, sessions: sessions.map(([number, s]) => ({ number, state: s })) });
  eq([seatableSession(t([], "registering")), checkInSession(t([], "registering"))], [1, 1], "before the first");
  eq([seatableSession(t([[1, "seated"]])), checkInSession(t([[1, "seated"]]))], [1, 1], "seated: again, or check in for it");
  eq([seatableSession(t([[1, "finished"], [2, "playing"]])), checkInSession(t([[1, "finished"], [2, "playing"]]))], [null, 3]);
  eq([seatableSession(t([[2, "finished"], [1, "finished"]])), checkInSession(t([[1, "finished"]]))], [3, 2]);
  eq([seatableSession(t([[3, "finished"]])), checkInSession(t([[3, "finished"]]))], [null, null], "all played");
  eq(seatableSession(t([[1, "finished"]], "finished")), null, "closed");
  const told = { ...t([[1, "finished"]]), next_session: 2 };
  eq([seatableSession(told), checkInSession(told), seatableSession({ ...told, next_session: null })], [2, 2, null], "the server's next_session");
  eq([methodOf(SETTINGS, 1), methodOf(SETTINGS, 2), methodOf(SETTINGS, 3), methodOf({ seating: "swiss" }, 2)], ["random", "avoid", "avoid", "swiss"]);
});

test("tournament seating message: the pairs meeting again, in words", () => {
  const d = (method, more = {}) => ({ method, message: "server words", repeats: [{ players: ["ann", "bob"], sessions: [1] }], ...more });
  // "could do better" only when the server proved it; else what a lower bound says, or nothing.
  eq(repeatsText({ t: en }, d("avoid", { fewest: true, unavoidable: 1 })), "1 pair(s) meet again; no seating could do better (proven by the search).");
  eq(repeatsText({ t: en }, d("balanced", { fewest: false, unavoidable: 1 })), "1 pair(s) meet again; at least 1 cannot be avoided.");
  eq(repeatsText({ t: en }, d("avoid", { fewest: false, unavoidable: 0 })), "1 pair(s) meet again; a seating with fewer may exist.");
  eq(repeatsText({ t: en }, d("avoid")), "1 pair(s) meet again; a seating with fewer may exist.", "a server that does not say");
  eq(repeatsText({ t: zh }, d("avoid", { fewest: true })), "1 对选手再次同桌；已证明没有更好的编排。");
  eq(repeatsText({ t: en }, d("random")), "1 pair(s) meet again (seating “random” does not avoid repeats).");
  eq(repeatsText({ t: zh }, d("swiss")), "1 对选手再次同桌（“瑞士制（按排名）”编排不避免重复）。");
});

test("tournament forms: names split at commas, amounts, the create payload", () => {
  eq(splitNames(" ann, bob,,cat \n dan, ann"), ["ann", "bob", "cat", "dan"]);
  eq([amountValue(" -8 "), amountValue("3/2"), amountValue("+2")], [-8, "3/2", 2]);
  const fields = {
    name: " Cup ", rules: "mcr", sessions: "4", hands: "1", time_cap_minutes: "0", turn_seconds: "", spectator_delay_seconds: "0",
    registration: "open", fill: "byes", check_in: true, duplicate: false, public: true, aids: true, seating: "",
  };
  eq(createPayload(fields), {
    name: "Cup", rules: "mcr", sessions: 4, hands: 1, time_cap_minutes: 0, spectator_delay_seconds: 0, registration: "open",
    fill: "byes", check_in: true, duplicate: false, public: true, aids: true,
  }, "the server's turn time and seating when left empty");
  const chosen = createPayload({ ...fields, turn_seconds: "5", seating: "swiss" });
  eq([chosen.turn_seconds, chosen.seating], [5, "swiss"]);
});

test("tournament page: standings as decimals with the fraction, the session's seating, the player's seat", async () => {
  const you = { player: true, status: "registered", checked_in: false, director: false, seat: { session: 1, table: 1, wind: "E", table_id: "t9abc" } };
  const app = scripted({ tournament_get: () => tournament({ you }), tournament_check_in: () => tournament({ you: { ...you, checked_in: true } }) });
  await withFetch({ "/api/tournaments/7/sessions/1": SESSION_1 }, async (asked) => {
    tournamentPage.enter(app, { id: 7, session: null });
    await settle();
    eq(app.asked[0], ["tournament_get", { tournament: 7 }]);
    eq(asked, ["/api/tournaments/7/sessions/1"], "the latest session shown");
    let root = drawn(tournamentPage, app);
    eq(root.querySelector("h1").textContent, "Winter cup");
    const heads = cells(root.querySelector(".standings thead tr"));
    eq(heads, ["Place", "Player", "Table points", "Score", "S1"]);
    const bob = root.querySelectorAll(".standings tbody tr")[1];
    eq(cells(bob), ["2", "bob", "1.5", "-8", "1.5"]);
    eq(bob.querySelector(".points").title, "3/2", "the exact figure in the title");
    const seats = [...root.querySelectorAll(".seating tbody tr")].map(cells);
    eq(seats[0], ["East", "ann", "24", "4"]);
    eq(seats[3], ["North", "dan (played by Bot · Strong)", "-8", "0"]);
    eq(root.querySelector(".session-table a.button").getAttribute("href"), "#/watch/t9abc");
    const box = root.querySelector(".my-seat");
    eq(box.querySelector(".my-next-seat").textContent.replace(/\s+/g, " ").trim(), "Your seat: session 1, table 1, East");
    eq(box.querySelector("a.button").getAttribute("href"), "#/table/t9abc");
    ok(!root.querySelector(".console"), "no console for a player");
    const checkIn = [...box.querySelectorAll("button")].find((b) => b.textContent === "Check in for session 2");
    ok(checkIn, "check in for the next session");
    checkIn.click();
    await settle();
    eq(app.asked.at(-1), ["tournament_check_in", { tournament: 7 }]);
    root = drawn(tournamentPage, app);
    eq(root.querySelector(".my-status .badge").textContent, "Checked in for session 2");

    // Withdraw asks first; a push for another tournament asks nothing.
    [...root.querySelectorAll(".my-seat button")].find((b) => b.textContent === "Withdraw").click();
    root = drawn(tournamentPage, app);
    ok(root.querySelector(".my-seat .confirm"), "a confirmation first");
    const before = app.asked.length;
    app.push("tournament_changed", { tournament: 8, what: "players" });
    await settle();
    eq(app.asked.length, before);
    app.push("tournament_changed", { tournament: 7, what: "log" });
    await settle();
    eq(app.asked.at(-1), ["tournament_get", { tournament: 7 }]);
  });
  tournamentPage.leave();
});

test("tournament page: the director's console sends the spec's messages and shows refusals in words", async () => {
  const you = { player: false, status: null, checked_in: false, director: true, seat: null };
  const seated = tournament({ you, sessions: [...tournament().sessions, { number: 2, state: "seated", method: "avoid", started_at: null, ends_at: null, finished_at: null, tables: 1 }], session: 2 });
  const replies = {
    tournament_get: () => seated,
    tournament_swap: () => seated,
    tournament_start_session: refused("too_few_players"),
    tournament_add_players: () => seated,
    tournament_penalty: () => ({ ...seated, entry: 2 }),
  };
  const app = scripted(replies, { session: { username: "dora", guest: false } });
  const seats = [...SESSION_1.tables[0].seats.slice(0, 3), { wind: "N", player: null, substitute: "bot:strong" }]; // a substitute's seat
  const session2 = { ...SESSION_1, number: 2, state: "seated", finished_at: null, started_at: null, tables: [{ ...SESSION_1.tables[0], seats, state: "seated", table_id: null, match: null, scores: null, table_points: null }] };
  await withFetch({ "/api/tournaments/7/sessions/2": session2 }, async () => {
    tournamentPage.enter(app, { id: 7, session: null });
    await settle();
    let root = drawn(tournamentPage, app);
    const console = root.querySelector(".console");
    ok(console, "the console for a director");
    const buttons = [...console.querySelectorAll("button")].map((b) => b.textContent.trim());
    for (const name of ["Open registration", "Add", "Remove", "Seat session 2 again", "Swap the two", "Start session 2", "Enter it", "Undo it", "Close the tournament"]) {
      ok(buttons.includes(name), `a "${name}" button in ${JSON.stringify(buttons)}`);
    }
    ok(!root.querySelector(".session-table a.button"), "no Watch link before the table starts");
    eq(cells(root.querySelectorAll(".seating tbody tr")[3]), ["North", "Substitute (played by Bot · Strong)"]);
    eq([...console.querySelector("form select[name=a]").options].map((o) => o.value), ["ann", "bob", "cat"], "the seated players");

    const swap = [...console.querySelectorAll("form")].find((f) => f.elements.a);
    swap.elements.a.value = "ann";
    swap.elements.b.value = "cat";
    swap.requestSubmit();
    await settle();
    eq(app.asked.at(-1), ["tournament_swap", { tournament: 7, a: "ann", b: "cat" }]);

    const add = [...console.querySelectorAll("form")].find((f) => f.elements.players);
    add.elements.players.value = "fay, gus";
    add.requestSubmit();
    await settle();
    eq(app.asked.at(-1), ["tournament_add_players", { tournament: 7, players: ["fay", "gus"] }]);

    const penalty = [...console.querySelectorAll("form")].find((f) => f.elements.kind);
    Object.assign(penalty.elements.player, { value: "dan" });
    penalty.elements.amount.value = "-16";
    penalty.elements.reason.value = "slow play";
    penalty.elements.session.value = "1";
    penalty.requestSubmit();
    await settle();
    eq(app.asked.at(-1), ["tournament_penalty", { tournament: 7, player: "dan", kind: "penalty", amount: -16, reason: "slow play", session: 1 }]);

    root = drawn(tournamentPage, app);
    [...root.querySelectorAll(".console button")].find((b) => b.textContent.trim() === "Start session 2").click();
    await settle();
    eq(app.asked.at(-1), ["tournament_start_session", { tournament: 7 }]);
    root = drawn(tournamentPage, app);
    eq(root.querySelector(".console [role=alert]").textContent, "too_few_players: refused: too_few_players");
  });
  tournamentPage.leave();
});

test("a finished duplicate session shows its walls' seeds and each table's salts", async () => {
  // docs/tournaments.md: the seeds and each table's salts are published on the session's page.
  const commitments = [{ hand_no: 1, salt: "5a17ab", commitment: "c0ffee" }];
  const session = {
    ...SESSION_1, walls: [{ hand_no: 1, seed_hex: "8000000000003039" }],
    tables: [{ ...SESSION_1.tables[0], commitments }, { ...SESSION_1.tables[0], table: 2, commitments: [{ hand_no: 1, salt: "b0b0b0", commitment: "beef" }] }],
  };
  const app = scripted({ tournament_get: () => tournament() });
  await withFetch({ "/api/tournaments/7/sessions/1": session }, async () => {
    tournamentPage.enter(app, { id: 7, session: 1 });
    await settle();
    const walls = drawn(tournamentPage, app).querySelector("details.walls");
    ok(walls, "the walls revealed");
    eq([...walls.querySelectorAll("code")].map((c) => c.textContent), ["8000000000003039", "5a17ab", "b0b0b0"]);
    eq([...walls.querySelectorAll(".salts-of")].map((p) => p.textContent.split(" ")[0] + " " + p.textContent.split(" ")[1]), ["Table 1's", "Table 2's"]);
    tournamentPage.leave(app);
  });
});

test("tournament page in Chinese: no English left but the names", async () => {
  const you = { player: true, status: "registered", checked_in: true, director: true, seat: { session: 1, table: 1, wind: "S", table_id: null } };
  const app = scripted({ tournament_get: () => tournament({ you }) }, { t: zh, lang: "zh" });
  await withFetch({ "/api/tournaments/7/sessions/1": SESSION_1 }, async () => {
    tournamentPage.enter(app, { id: 7, session: 1 });
    await settle();
    const root = drawn(tournamentPage, app);
    const names = new Set(["Winter", "cup", "ann", "bob", "cat", "dan", "eve", "dora", "late"]); // names, and a reason typed
    const left = [...latinWords(root)].filter((w) => !names.has(w));
    eq(left, [], "English words on the Chinese page");
    ok(root.textContent.includes("第 1 轮，第 1 桌，南位"), "the seat in Chinese");
  });
  tournamentPage.leave();
});

test("tournaments list: state, session n of N, players, the duplicate badge, links", async () => {
  const list = { tournaments: [
    { id: 3, name: "Spring", rules: "mcr", state: "running", sessions: 4, session: 2, players: 12, public: true, registration_open: false, duplicate: true, created_at: "2026-12-01T10:00:00Z" },
    { id: 4, name: "Open", rules: "custom", state: "registering", sessions: 2, session: 0, players: 3, public: true, registration_open: true, duplicate: false, created_at: "2026-12-01T10:00:00Z" },
  ] };
  const app = scripted({ tournament_create: refused("not_director") });
  await withFetch({ "/api/tournaments": list }, async () => {
    tournamentsPage.enter(app, {});
    await settle();
    let root = drawn(tournamentsPage, app);
    const cards = [...root.querySelectorAll(".tournament-card")];
    eq(cards.map((c) => c.querySelector("a").getAttribute("href")), ["#/tournament/3", "#/tournament/4"]);
    eq([...cards[0].querySelectorAll(".facts > *")].map((x) => x.textContent), ["Running", "Duplicate", "MCR (Chinese Official)", "Session 2 of 4", "12 players"]);
    eq([...cards[1].querySelectorAll(".facts > *")].map((x) => x.textContent), ["Registration", "Custom: indicator wild, dealer repeats", "2 sessions planned", "3 players", "Registration open"]);
    const form = root.querySelector("form.create-tournament");
    form.elements.name.value = "Mine";
    form.requestSubmit();
    await settle();
    eq(app.asked.at(-1)[0], "tournament_create");
    eq(app.asked.at(-1)[1].name, "Mine");
    root = drawn(tournamentsPage, app);
    eq(root.querySelector(".create-tournament [role=alert]").textContent, "not_director: refused: not_director");
  });
  tournamentsPage.leave();
});

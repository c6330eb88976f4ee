// The tournament pages in the client: the routes, the figures (table points as decimals
// with the exact fraction), which session a seat or a check-in is for, the forms' payloads,
// and the page drawn from a scripted connection: the standings, the seating, the player's
// seat and the director's console sending the spec's messages.
import { eq, ok, test } from "./harness.js";
import { render } from "../js/vendor/lit-html.js";
import { errorText, translate } from "../js/i18n.js";
import { parseRoute } from "../js/app.js";
import {
  checkInSession, fractionValue, heldBack, methodOf, penaltyPayload, pointsText, refusalText, repeatsText, seatableSession, seatTarget, sessionColumns,
  splitNames, tournamentPage,
} from "../js/pages/tournament.js";
import { createPayload, tournamentsPage } from "../js/pages/tournaments.js";
import { heldTournament } from "../js/pages/table.js";

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
    errorText: (error) => errorText(lang, error), // the app's own: a code it knows in words, else the reason
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

/** A refusal as net.js makes it, with the server's English `reason` (never to be shown). */
function refused(code, reason = `the server's English reason for ${code}`) {
  return Object.assign(new Error(reason), { code, reason });
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
    // Its table has finished (the session shown says so): no lobby table any more, its match instead.
    eq(box.querySelector(".my-table-done").textContent.replace(/\s+/g, " ").trim(), "Your table has finished. See my table's result");
    eq(box.querySelector("a.button").getAttribute("href"), "#/match/12");
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

test("a finished tournament's box says it is over and gives the player's final place, asking nothing more", async () => {
  // It said "Your place: You are registered." after the last session, as if still to come.
  const over = { state: "finished", registration_open: false, next_session: null };
  const text = (root, selector) => [...root.querySelectorAll(selector)].map((e) => e.textContent.replace(/\s+/g, " ").trim());
  const shown = async (name, you, { lang = "en", session = { username: name, guest: false } } = {}) => {
    const app = scripted({ tournament_get: () => tournament({ ...over, you }) }, { session, t: lang === "zh" ? zh : en, lang });
    let root = null;
    await withFetch({ "/api/tournaments/7": tournament(over), "/api/tournaments/7/sessions/1": SESSION_1 }, async () => {
      tournamentPage.enter(app, { id: 7, session: null });
      await settle();
      root = drawn(tournamentPage, app).querySelector(".my-seat");
    });
    tournamentPage.leave();
    return root;
  };
  const player = (status) => ({ player: true, status, checked_in: false, director: false, seat: null });
  let box = await shown("ann", player("registered"));
  eq(text(box, "h2, p"), ["Your result", "This tournament is over.", "Your final place: 1 of 4. Table points: 4."]);
  eq(box.querySelectorAll("button").length, 0, "nothing to register, check in or withdraw from");
  box = await shown("bob", player("registered"), { lang: "zh" });
  eq(text(box, "h2, p"), ["我的成绩", "本赛事已结束。", "你的最终名次：第 2 名（共 4 人）。标准分：1.5。"]);
  box = await shown("eve", player("withdrawn"));
  eq(text(box, "h2, p"), ["Your result", "This tournament is over.", "You have no result in its standings.", "You have withdrawn."]);
  box = await shown("fay", { player: false, status: null, checked_in: false, director: false, seat: null });
  eq(text(box, "h2, p"), ["Your place", "This tournament is over."], "not a player: no result, no register button");
  eq(box.querySelectorAll("button").length, 0);
  box = await shown(null, null, { session: null });
  eq(text(box, "h2, p"), ["Your place", "This tournament is over."], "a visitor is not asked to log in to take part");
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
    eq(root.querySelector(".console [role=alert]").textContent, "Too few players to seat a table of four.");
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
    eq(root.querySelector(".create-tournament [role=alert]").textContent, "Only a tournament director may do that: your account is not one.");
  });
  tournamentsPage.leave();
});

// ---- refusals in words, the seat of a finished table, the console's forms checked --------

const LATIN = /[A-Za-z][A-Za-z0-9_-]+/g;

test("tournament refusals in words: by code and request, never the server's English reason", () => {
  const apps = { en: { t: en, errorText: (e) => errorText("en", e) }, zh: { t: zh, errorText: (e) => errorText("zh", e) } };
  const cases = [
    ["tournament_state", "tournament_start_session", "That session has started already.", "这一轮已经开始了。"],
    ["tournament_state", "tournament_close", "A session is being played: close the tournament after it ends.", null],
    // Refused only while the last session is being played (once it is over, `over` says so).
    ["tournament_state", "tournament_check_in", "Check-in is for the next session, and the session being played is the last: there is none after it.", "签到是为下一轮进行的，而正在进行的已是最后一轮，之后没有轮次了。"],
    ["tournament_state", "tournament_register", "That is not possible at this point of the tournament.", null],
    ["bad_message", "tournament_add_players", "One of the names is not a registered account: nobody was added.", "其中有名字不是已注册的账号，未添加任何人。"],
    ["bad_message", "tournament_penalty", null, null],
    ["bad_message", "tournament_substitute", "That substitute cannot take the seat: name a registered account that has no seat in this session, or “bot”.", null],
    ["bad_message", "tournament_configure", "The server could not accept what was entered: check it and try again.", null],
    ["no_seating", "tournament_swap", "Seats are swapped in a seated session before it starts.", null],
    ["no_seating", "tournament_start_session", "Seat the session before starting it.", null],
    ["already_registered", "tournament_check_in", "You have checked in already.", null],
    ["not_director", "tournament_seat", "Only a tournament director may do that: your account is not one.", null],
    ["not_registered", "tournament_register", "Guests cannot play tournaments: register an account first.", null],
    ["server_busy", "tournament_seat", "The server is busy: try again in a moment.", "服务器正忙，请稍后再试。"],
    ["not_seated", "tournament_substitute", "You do not sit at that table.", null],
    ["a_code_from_the_future", "tournament_seat", "The server refused that: nothing changed.", "服务器拒绝了这个请求，未做任何更改。"],
  ];
  for (const [code, type, english, chinese] of cases) {
    const error = refused(code);
    const words = { en: refusalText(apps.en, error, type), zh: refusalText(apps.zh, error, type) };
    if (english) eq(words.en, english, `${code} on ${type}`);
    if (chinese) eq(words.zh, chinese, `${code} on ${type} in Chinese`);
    ok(!words.en.includes(error.reason) && !words.zh.includes(error.reason), `${code}: the server's reason shown`);
    eq((words.zh.match(LATIN) || []).filter((w) => w !== "bot"), [], `${code} on ${type}: English words on a Chinese page: ${words.zh}`);
    ok(words.en !== `app.tournament.${code}` && !words.en.startsWith("app."), `${code}: a key shown`);
  }
  eq(refusalText(apps.zh, refused("tournament_state"), "tournament_seat", { over: true }), "赛事已结束，不能再做更改。", "over: whatever was asked");
  eq(refusalText(apps.zh, Object.assign(refused("rate_limited"), { retryAfter: 4 })), "尝试次数过多，请 4 秒后再试。");
  // A fetch that failed: no code, an HTTP status (its `error` is English) or none at all.
  const http = (status) => Object.assign(new Error("no session 5"), { status });
  eq(refusalText(apps.zh, http(404), null, { missing: "app.tournament.no_such_session" }), "没有这一轮（或尚未编排）。");
  eq(refusalText(apps.zh, http(403)), "服务器拒绝了这个请求，未做任何更改。");
  eq(refusalText(apps.zh, http(500)), "服务器处理失败，未做任何更改，请重试。");
  eq(refusalText(apps.zh, new TypeError("Failed to fetch")), "无法连接服务器，请稍后再试。");
});

test("tournament penalty form: the amount checked as the server takes it, a whole one sent exact", () => {
  const form = (amount, kind = "penalty", session = "") => penaltyPayload({ player: "dan", kind, amount, reason: " slow ", session }, 3);
  eq(form(" -16 ", "penalty", "1"), { payload: { player: "dan", kind: "penalty", amount: -16, reason: "slow", session: 1 } });
  eq(form("+8", "score", "2").payload.amount, 8);
  eq(form("-000000008", "penalty").payload.amount, -8, "leading zeros are no digits");
  eq(form("-999999999").payload.amount, -999999999, "the largest the server takes");
  eq(form("3/2", "points").payload.amount, "3/2");
  eq(form("-6/1", "points").payload.amount, -6);
  eq(form("12345678901234567890", "score", "1"), { problem: "app.tournament.amount_range" }, "20 digits: never a rounded JSON number");
  eq(form("-12345678901234567890"), { problem: "app.tournament.amount_range" });
  eq(form("-1000000000"), { problem: "app.tournament.amount_range" });
  eq(form("1/1234567890", "points"), { problem: "app.tournament.amount_range" });
  eq(form("1e3", "points"), { problem: "app.tournament.amount_bad" });
  eq(form("1.5", "points"), { problem: "app.tournament.amount_bad" });
  eq(form(""), { problem: "app.tournament.amount_bad" });
  eq(form("1/0", "points"), { problem: "app.tournament.amount_bad" });
  eq(form("-1/2", "penalty"), { problem: "app.tournament.amount_whole", params: { kind: "penalty" } });
  eq(form("8", "penalty"), { problem: "app.tournament.penalty_negative" });
  eq(form("0", "penalty"), { problem: "app.tournament.penalty_negative" });
  eq(form("8", "score"), { problem: "app.tournament.score_needs_session" });
  eq(form("8", "score", "4"), { problem: "app.tournament.session_bad", params: { n: 3 } });
  eq(en("app.tournament.amount_whole", { kind: en("app.tournament.kind_score") }), "A score correction is a whole number.");
});

/** A director's page with session 2 seated; `replies` beside the tournament's. */
async function directorPage(replies, step, { t = en, lang = "en" } = {}) {
  const you = { player: false, status: null, checked_in: false, director: true, seat: null };
  const seated = tournament({ you, sessions: [...tournament().sessions, { number: 2, state: "seated", method: "avoid", started_at: null, ends_at: null, finished_at: null, tables: 1 }], session: 2 });
  const app = scripted({ tournament_get: () => seated, ...replies(seated) }, { session: { username: "dora", guest: false }, t, lang });
  const session2 = { ...SESSION_1, number: 2, state: "seated", finished_at: null, started_at: null, tables: [{ ...SESSION_1.tables[0], state: "seated", table_id: null, match: null, scores: null, table_points: null }] };
  await withFetch({ "/api/tournaments/7/sessions/2": session2 }, async () => {
    tournamentPage.enter(app, { id: 7, session: null });
    await settle();
    await step(app, () => drawn(tournamentPage, app));
  });
  tournamentPage.leave();
}

const formOf = (root, field) => [...root.querySelectorAll(".console form")].find((f) => f.elements[field]);
const typed = (input, value) => {
  input.value = value;
  input.dispatchEvent(new Event("input", { bubbles: true }));
};

test("tournament console: a penalty's amount checked in the form, the error gone on an edit and on success", async () => {
  let refuse = false;
  await directorPage((seated) => ({ tournament_penalty: () => (refuse ? Promise.reject(refused("bad_message")) : { ...seated, entry: 2 }) }), async (app, draw) => {
    let root = draw();
    let penalty = formOf(root, "amount");
    penalty.elements.player.value = "dan";
    penalty.elements.amount.value = "-12345678901234567890";
    penalty.elements.reason.value = "slow play";
    const before = app.asked.length;
    penalty.requestSubmit();
    await settle();
    eq(app.asked.length, before, "nothing sent");
    root = draw();
    penalty = formOf(root, "amount");
    const alert = penalty.querySelector("[role=alert]");
    ok(alert, "said in the form");
    eq(alert.textContent, en("app.tournament.amount_range"));
    eq(penalty.elements.amount.getAttribute("aria-invalid"), "true");
    eq(penalty.elements.amount.getAttribute("aria-describedby"), alert.id);
    ok(!root.querySelector(".console > [role=alert]"), "not at the console's head as well");

    typed(penalty.elements.amount, "-1234");
    root = draw();
    ok(!root.querySelector(".console [role=alert]"), "an edit takes it back");

    // Refused by the server: its words for the request; then a success takes them away.
    refuse = true;
    penalty = formOf(root, "amount");
    penalty.elements.amount.value = "-16";
    penalty.elements.reason.value = "slow play";
    penalty.requestSubmit();
    await settle();
    root = draw();
    eq(formOf(root, "amount").querySelector("[role=alert]").textContent, en("app.tournament.refused_penalty_bad"));
    refuse = false;
    penalty = formOf(root, "amount");
    penalty.elements.amount.value = "-16";
    penalty.elements.reason.value = "slow play";
    penalty.requestSubmit();
    await settle();
    eq(app.asked.at(-1), ["tournament_penalty", { tournament: 7, player: "ann", kind: "penalty", amount: -16, reason: "slow play" }]);
    root = draw();
    ok(!root.querySelector(".console [role=alert]"), "no error left after the success");

    // An empty reason and a session beyond the tournament's are said in words too.
    penalty = formOf(root, "amount");
    penalty.elements.amount.value = "-8";
    penalty.requestSubmit();
    root = draw();
    eq(formOf(root, "amount").querySelector("[role=alert]").textContent, en("app.tournament.reason_needed"));
    penalty = formOf(root, "amount");
    penalty.elements.amount.value = "-8";
    penalty.elements.reason.value = "late";
    penalty.elements.session.value = "9";
    penalty.requestSubmit();
    root = draw();
    eq(formOf(root, "amount").querySelector("[role=alert]").textContent, "Enter a session from 1 to 3, or leave it empty.");
  });
});

test("tournament console: swapping a player with themself is said, not silently dropped", async () => {
  await directorPage((seated) => ({ tournament_swap: () => seated }), async (app, draw) => {
    let root = draw();
    let swap = formOf(root, "a");
    eq([swap.elements.a.value, swap.elements.b.value], ["ann", "bob"], "the second field starts at another player");
    swap.elements.b.value = "ann";
    const before = app.asked.length;
    swap.requestSubmit();
    await settle();
    eq(app.asked.length, before, "nothing sent");
    root = draw();
    swap = formOf(root, "a");
    eq(swap.querySelector("[role=alert]").textContent, "Pick two different players to swap.");
    eq(swap.querySelector("button").getAttribute("aria-describedby"), swap.querySelector("[role=alert]").id);
    swap.elements.b.value = "cat";
    swap.dispatchEvent(new Event("change", { bubbles: true }));
    root = draw();
    swap = formOf(root, "a");
    ok(!swap.querySelector("[role=alert]"), "a change takes it back");
    swap.elements.b.value = "cat";
    swap.requestSubmit();
    await settle();
    eq(app.asked.at(-1), ["tournament_swap", { tournament: 7, a: "ann", b: "cat" }]);
  });
});

test("tournament console in Chinese: a refusal is the page's sentence, not the server's English", async () => {
  const replies = () => ({ tournament_start_session: refused("tournament_state", "session 2 has started already") });
  await directorPage(replies, async (app, draw) => {
    let root = draw();
    const start = [...root.querySelectorAll(".console button")].find((b) => b.textContent.trim() === "开始第 2 轮");
    ok(start, "the start button in Chinese");
    start.click();
    await settle();
    root = draw();
    const alert = root.querySelector(".console [role=alert]");
    eq(alert.textContent, "这一轮已经开始了。");
    eq(alert.textContent.match(LATIN), null, "no English in the refusal");
  }, { t: zh, lang: "zh" });
});

/** A duplicate tournament whose session 1 is being played: table 1 (ann's) finished, table
 * 2 still playing. */
function duplicateInPlay(you) {
  const settings = { ...SETTINGS, duplicate: true };
  const t = tournament({ you, settings, standings: [], duplicate: [], sessions: [{ number: 1, state: "playing", method: "random", started_at: "2026-12-01T11:00:00Z", ends_at: null, finished_at: null, tables: 2 }] });
  const table = (n, state, match) => ({ ...SESSION_1.tables[0], table: n, table_id: `t${n}`, match, state, watchable: false, scores: null, table_points: null });
  const session = { ...SESSION_1, state: "playing", finished_at: null, tables: [table(1, "finished", 12), table(2, "playing", 13)] };
  return { t, session };
}

test("tournament seat: a finished table of a held duplicate session is said, not linked (no table, a 403 match)", async () => {
  const you = { player: true, status: "registered", checked_in: true, director: false, seat: { session: 1, table: 1, wind: "E", table_id: "t1" } };
  const { t, session } = duplicateInPlay(you);
  eq(heldBack(t, session), true);
  eq(seatTarget(t, you.seat, session), { kind: "held" });
  eq(seatTarget(t, { ...you.seat, table: 2, table_id: "t2" }, session), { kind: "table", href: "#/table/t2" }, "a table still playing");
  eq(seatTarget(t, you.seat, null), { kind: "table", href: "#/table/t1" }, "nothing known yet of the table");
  const plain = { ...t, settings: SETTINGS };
  eq(heldBack(plain, session), false);
  eq(seatTarget(plain, you.seat, session), { kind: "result", href: "#/match/12" }, "not duplicate: its result is there");

  for (const [lang, words] of [["en", en], ["zh", zh]]) {
    const app = scripted({ tournament_get: () => t }, { t: words, lang });
    await withFetch({ "/api/tournaments/7/sessions/1": session }, async () => {
      tournamentPage.enter(app, { id: 7, session: null });
      await settle();
      const root = drawn(tournamentPage, app);
      const box = root.querySelector(".my-seat");
      eq(box.querySelector(".my-table-done").textContent.trim(), words("app.tournament.table_done_held"));
      eq([...root.querySelectorAll("a")].map((a) => a.getAttribute("href")).filter((h) => /^#\/(table|match|watch)\//.test(h)), [], "no link to a refusal");
      const cards = [...root.querySelectorAll(".session-table .facts")].map((x) => x.textContent.replace(/\s+/g, " ").trim());
      eq(cards[0], `${words("app.lobby.state_finished")} ${words("app.tournament.result_held")}`);
      if (lang === "zh") {
        const names = new Set(["Winter", "cup", "ann", "bob", "cat", "dan", "eve", "dora", "late"]);
        eq([...latinWords(root)].filter((w) => !names.has(w)), [], "English words on the Chinese page");
      }
    });
    tournamentPage.leave();
  }
});

test("tournament seat: another session shown, the seat's own session is asked for its table's state", async () => {
  const you = { player: true, status: "registered", checked_in: true, director: false, seat: { session: 2, table: 1, wind: "E", table_id: "t1" } };
  const { t, session } = duplicateInPlay(you);
  const two = { ...t, sessions: [{ ...tournament().sessions[0] }, { ...t.sessions[0], number: 2 }], session: 2 };
  const app = scripted({ tournament_get: () => two });
  await withFetch({ "/api/tournaments/7/sessions/1": SESSION_1, "/api/tournaments/7/sessions/2": { ...session, number: 2 } }, async (asked) => {
    tournamentPage.enter(app, { id: 7, session: 1 });
    await settle();
    eq(asked, ["/api/tournaments/7/sessions/1", "/api/tournaments/7/sessions/2"]);
    const root = drawn(tournamentPage, app);
    eq(root.querySelector(".my-seat .my-table-done").textContent.trim(), en("app.tournament.table_done_held"));
    ok(!root.querySelector(".my-seat a.button"), "no Go to my table");
    eq(root.querySelector(".session-table .facts a").getAttribute("href"), "#/match/12", "session 1, over, links its match");
  });
  tournamentPage.leave();
});

test("a held duplicate table's match end leads to the tournament, not to its 403 match page", () => {
  eq(heldTournament({ reveals: false, tournament: { id: 3, session: 2, table: 1 } }), { id: 3, session: 2, table: 1 });
  eq(heldTournament({ reveals: true, tournament: { id: 3, session: 2, table: 1 } }), null, "not duplicate");
  eq(heldTournament({ reveals: true, tournament: null }), null);
  eq(heldTournament(null), null);
});

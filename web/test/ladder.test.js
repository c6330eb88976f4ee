// The ladder in the client: the rating chart's geometry (pure), the figures in words, the
// routes, the leaderboard's questions, the player page's ratings and the queue's states
// against a scripted app.
import { eq, ok, test } from "./harness.js";
import { render } from "../js/vendor/lit-html.js";
import { errorText, translate } from "../js/i18n.js";
import { parseRoute } from "../js/app.js";
import { NARROW, WIDE, chartGeometry, chartView, niceStep, ticksBetween } from "../js/chart.js";
import { changeText, clockText, deltaText, gradeText, ratingText } from "../js/rating.js";
import { boardUrl, emptyText, seasonName } from "../js/pages/ladder.js";
import { playerPage, standing } from "../js/pages/player.js";
import { attachQueue, joinPayload, queueBox, waitedNow } from "../js/queue.js";

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
const en = (key, params) => translate("en", key, params);

/** Rating changes as the API gives them, from a list of [rating_after, mu_after]. */
function history(points, start = 0) {
  let before = start;
  return points.map(([after, mu], i) => {
    const change = { match: 100 + i, rating_before: before, rating_after: after, mu_after: mu, rank: 1, score: 0 };
    before = after;
    return change;
  });
}

test("chart: nice steps are 1, 2 or 5 times a power of ten", () => {
  eq([niceStep(10, 4), niceStep(7, 4), niceStep(0.9, 4), niceStep(40, 4), niceStep(3, 6)], [5, 2, 0.5, 10, 0.5]);
  eq(ticksBetween(-2.5, 7.5, 2.5), [-2.5, 0, 2.5, 5, 7.5]);
  eq(ticksBetween(0.3, 1.9, 0.5), [0.5, 1, 1.5]);
  ok(!Object.is(ticksBetween(-1, 1, 1)[1], -0), "a zero tick is 0, never -0 (labelled \"-0\")");
});

test("chart: one point per match, x by match number, y falling as the rating rises", () => {
  const h = history([[2, 20], [5, 22], [4, 21.5], [9, 24]]);
  const g = chartGeometry(h, WIDE);
  eq(g.points.length, 4);
  eq(g.points.map((p) => p.number), [1, 2, 3, 4]);
  eq(g.points.map((p) => p.match), [100, 101, 102, 103]);
  eq(g.points[0].x, WIDE.left, "the first match at the left edge");
  eq(g.points[3].x, WIDE.width - WIDE.right, "the last at the right edge");
  const xs = g.points.map((p) => p.x);
  ok(xs.every((x, i) => i === 0 || x > xs[i - 1]), "x grows with the match number");
  const [a, b, c, d] = g.points.map((p) => p.y);
  ok(b < a && c > b && d < c, "a higher rating is drawn higher (a smaller y)");
  ok(g.points.every((p) => p.muY < p.y), "mu, above the conservative figure, is drawn above it");
  ok(g.lo <= 2 && g.hi >= 24, "the range holds every rating and every mu");
  ok(g.points.every((p) => p.y >= g.plot.top && p.y <= g.plot.bottom), "inside the plot");
  ok(g.line.startsWith(`M${g.points[0].x} ${g.points[0].y} L`) && g.line.split("L").length === 4, "one segment per step");
  ok(g.muLine.startsWith("M") && g.muLine !== g.line, "mu has its own line");
  ok(g.yTicks.length >= 3 && g.yTicks.every((t) => t.value >= g.lo && t.value <= g.hi), "y ticks inside the range");
  eq(g.xTicks[0].value, 1, "the x axis starts at match 1");
  ok(g.xTicks.every((t) => Number.isInteger(t.value) && t.value <= 4), "x ticks are match numbers");
});

test("chart: a single match is centred, a flat history gets an axis, none gets nothing", () => {
  const one = chartGeometry(history([[3.2, 21]]), NARROW);
  eq(one.points.length, 1);
  eq(one.points[0].x, NARROW.left + (NARROW.width - NARROW.left - NARROW.right) / 2);
  eq(one.line, `M${one.points[0].x} ${one.points[0].y}`);
  const flat = chartGeometry(history([[5, 5], [5, 5]]));
  ok(flat.hi > flat.lo, "a range however flat the history");
  eq(chartGeometry([]), null);
});

test("chart: the SVG has a title, a description and a linked point per match", () => {
  const h = history([[1, 20], [2.5, 21], [2.1, 21.2]]);
  const labels = {
    id: "c1", title: "Rating of lin", desc: "3 rated matches", rating: "Rating", mu: "mu", matchAxis: "Rated match",
    point: (p, change) => `Match ${p.number} (#${p.match}): ${change}`,
  };
  const root = document.createElement("div");
  render(chartView("en", h, labels), root);
  const svg = root.querySelector("svg");
  eq(svg.getAttribute("aria-labelledby"), "c1-title");
  eq(svg.querySelector("title").textContent, "Rating of lin");
  eq(svg.querySelector("desc").textContent, "3 rated matches");
  const points = [...svg.querySelectorAll("a.point")];
  eq(points.map((a) => a.getAttribute("href")), ["#/match/100", "#/match/101", "#/match/102"]);
  eq(points.map((a) => a.querySelector("title").textContent), [
    "Match 1 (#100): 0.0 → 1.0 (+1.0)",
    "Match 2 (#101): 1.0 → 2.5 (+1.5)",
    "Match 3 (#102): 2.5 → 2.1 (\u22120.4)",
  ]);
  ok(svg.querySelector("path.rating-line").getAttribute("d").startsWith("M"), "the rating line");
  ok(svg.querySelector("path.mu-line"), "the mu line");
  ok(svg.querySelectorAll("text.tick").length >= 4, "axis labels");
});

test("figures: ratings one decimal, grades two, changes signed with a true minus", () => {
  eq([ratingText("en", 1204.26), ratingText("en", -3.04), ratingText("zh", 12.45), ratingText("en", null)], ["1,204.3", "-3.0", "12.5", "–"]);
  eq(gradeText("en", 2.5), "2.50");
  eq([deltaText("en", 12.4, 13.1), deltaText("en", 13.1, 12.4), deltaText("en", 5, 5.02)], ["+0.7", "\u22120.7", "\u00b10.0"]);
  eq(changeText("en", 1204.3, 1210.8), "1,204.3 → 1,210.8 (+6.5)");
  eq([clockText(7), clockText(65.9), clockText(3723)], ["0:07", "1:05", "1:02:03"]);
});

test("routes: the leaderboard with and without a ladder", () => {
  eq(parseRoute("#/ladder"), { name: "ladder", params: { id: null } });
  eq(parseRoute("#/ladder/mcr"), { name: "ladder", params: { id: "mcr" } });
  eq(parseRoute("#/ladder/mcr/x").name, "notfound");
});

test("leaderboard: the question for each choice, and what an empty page says", () => {
  eq(boardUrl("mcr"), "/api/ladders/mcr?offset=0&limit=50&provisional=false");
  eq(boardUrl("mcr", { season: 2, filter: "all", q: " li ", offset: 50 }), "/api/ladders/mcr?offset=50&limit=50&provisional=all&season=2&q=li");
  const app = { t: en };
  eq(emptyText(app, { season: null, provisional: "false", search: null }), en("app.ladder.empty"));
  eq(emptyText(app, { season: {}, provisional: "false", provisional_matches: 10, search: null }),
    "No ranked players yet: a player is ranked after 10 rated matches. Choose “Everyone” to see the provisional ones.");
  eq(emptyText(app, { season: {}, provisional: "all", search: "zz" }), "No player whose name starts with “zz”.");
  eq(seasonName({ t: (k, p) => translate("zh", k, p) }, { number: 3, name: "Season 3" }), "第 3 赛季");
  eq(seasonName(app, { number: 3, name: "Winter 2026" }), "Winter 2026", "an operator's name as it is");
});

test("player page: a rating with its rank or its provisional count, its chart and its changes", async () => {
  const player = {
    username: "lin", guest: false, created_at: "2026-12-01T09:00:00Z", grade: 2.5, score: 40, hands_won: 3,
    hands_lost: 2, hands_drawn: 11, matches: 3, recent: [],
    ratings: [{ ladder: "mcr", season: 1, rank: null, name: "lin", rating: 2.1, mu: 21.2, sigma: 6.4, matches: 3, provisional: true, grade: 2.5, last_played: "2026-12-01T10:00:00Z" }],
  };
  const replies = {
    "/api/players/lin": player,
    "/api/ladders": { ladders: [{ id: "mcr", provisional_matches: 10, season: null, players: 4, established: 0 }] },
    "/api/ladders/mcr/players/lin": { ladder: "mcr", name: "lin", history: history([[1, 20], [2.5, 21], [2.1, 21.2]]) },
  };
  const realFetch = globalThis.fetch;
  const asked = [];
  globalThis.fetch = async (url) => (asked.push(url), { ok: true, status: 200, json: async () => replies[url] });
  try {
    const app = { t: en, lang: "en", refresh() {} };
    playerPage.enter(app, { name: "lin" });
    await settle();
    await settle();
    await settle();
    eq(asked, ["/api/players/lin", "/api/ladders", "/api/ladders/mcr/players/lin"]);
    const root = document.createElement("div");
    render(playerPage.view(app), root);
    const section = root.querySelector(".ladder-rating");
    eq(section.querySelector("h2").textContent, "Ladder: MCR (Chinese Official), season 1");
    const stats = [...section.querySelectorAll(".stat")].map((s) => `${s.querySelector("dt").textContent}: ${s.querySelector("dd").textContent}`);
    eq(stats, ["Rating: 2.1", "Rank: Provisional (3 of 10 matches)", "Rated matches: 3"]);
    eq(section.querySelectorAll("svg a.point").length, 3);
    const rows = [...section.querySelectorAll(".rating-changes tbody tr")].map((tr) => [...tr.cells].map((c) => c.textContent.trim().replace(/\s+/g, " ")));
    eq(rows[0], ["#102", "1", "0", "2.5 → 2.1 (\u22120.4)"], "the latest change first");
    eq(rows.length, 3);
  } finally {
    globalThis.fetch = realFetch;
    playerPage.leave();
  }
  eq(standing({ t: en }, { provisional: false, rank: 3 }, 10), "#3");
});

/** An app with a scripted connection: `replies[type]` answers requests (or rejects). */
function queueApp(replies, session = { username: "lin", guest: false }) {
  const handlers = {};
  const ready = [];
  const app = {
    asked: [],
    navigated: [],
    session,
    t: en,
    lang: "en",
    refresh() {},
    errorText: (error) => error.code,
    navigate(hash) {
      app.navigated.push(hash);
    },
    async guest() {
      app.session = { username: "guest-1", guest: true };
    },
    net: {
      request(type, payload) {
        app.asked.push([type, payload]);
        const reply = replies[type];
        return reply instanceof Error ? Promise.reject(reply) : Promise.resolve(reply);
      },
      on(type, handler) {
        handlers[type] = handler;
        return () => delete handlers[type];
      },
      onReady(handler) {
        ready.push(handler);
        return () => {};
      },
    },
    push: (type, payload) => handlers[type](payload),
    reconnect: () => ready.forEach((h) => h()),
  };
  attachQueue(app);
  return app;
}

const shownBox = (app) => {
  const root = document.createElement("div");
  render(queueBox(app), root);
  return root;
};

test("queue: join, the wait with its figures, pushes, then matched goes to the table", async () => {
  const waiting = { state: "waiting", ladder: "mcr", casual: false, size: 3, waited_seconds: 0, gap: 3 };
  const app = queueApp({ queue_join: waiting });
  const buttons = [...shownBox(app).querySelectorAll("button")].map((b) => [b.textContent.trim(), b.disabled]);
  eq(buttons, [["Find a rated match", false], ["Quick casual match", false]]);
  await app.joinQueue(false);
  eq(app.asked, [["queue_join", {}]]);
  let root = shownBox(app);
  eq(root.querySelector("h2").textContent, "Looking for a rated match…");
  eq([".queue-size", ".queue-waited", ".queue-gap"].map((c) => root.querySelector(c).textContent), ["3", "0:00", "±3.0"]);
  app.push("queue", { ...waiting, size: 5, waited_seconds: 12, gap: 4 });
  root = shownBox(app);
  eq([".queue-size", ".queue-waited", ".queue-gap"].map((c) => root.querySelector(c).textContent), ["5", "0:12", "±4.0"]);
  eq(Math.floor(waitedNow(app.queue, app.queue.at + 3500)), 15, "the wait ticks on between pushes");
  app.reconnect(); // the server forgot the place: the client queues again, on the same ladder
  eq(app.asked.at(-1), ["queue_join", { ladder: "mcr" }]);
  await settle();
  app.push("queue", { state: "matched", ladder: "mcr", casual: false, table: "t7", seat: 2 });
  eq(app.queue, null);
  eq(app.navigated, ["#/table/t7"]);
  eq(shownBox(app).querySelector("button").textContent.trim(), "Find a rated match", "the buttons again");
});

test("queue: Cancel leaves; a guest may only play casual, a visitor becomes a guest first", async () => {
  const app = queueApp({
    queue_join: { state: "waiting", ladder: "mcr", casual: true, size: 1, waited_seconds: 0, gap: null },
    queue_leave: { state: "left", ladder: "mcr", casual: true },
  }, null);
  const rated = shownBox(app).querySelector("button");
  ok(rated.disabled && rated.getAttribute("aria-describedby") === "queue-why", "rated play says why it is closed");
  await app.joinQueue(false);
  eq(app.asked, [], "nothing asked of the server");
  eq(app.queueError, en("app.error.not_registered"));
  await app.joinQueue(true);
  eq(app.session.guest, true);
  eq(app.asked, [["queue_join", { casual: true, bot: "normal" }]], "with the level of the bots that may fill the table");
  const root = shownBox(app);
  eq(root.querySelector("h2").textContent, "Looking for a casual match…");
  ok(!root.querySelector(".queue-gap"), "no rating gap for a casual match");
  const cancel = root.querySelector("button");
  eq(cancel.textContent.trim(), "Cancel");
  cancel.click();
  await settle();
  eq(app.asked.at(-1), ["queue_leave", {}]);
  eq(app.queue, null);
  eq(joinPayload(false, "custom"), { ladder: "custom" });
});

test("queue: a refusal is shown in words and leaves the buttons", async () => {
  const refused = Object.assign(new Error("seated"), { code: "already_seated" });
  const app = queueApp({ queue_join: refused });
  app.errorText = (error) => translate("en", `app.error.${error.code}`);
  await app.joinQueue(false);
  eq(app.queue, null);
  const root = shownBox(app);
  eq(root.querySelector('[role="alert"]').textContent, "You already sit at another table.");
  eq(root.querySelector("button").textContent.trim(), "Find a rated match");
  ok(!root.querySelector("a.button"), "no table named, none to go to");
});

test("queue: a refusal naming the player's table offers to go there, in either language", async () => {
  const refused = Object.assign(new Error("seated"), { code: "already_seated", table: "t9" });
  for (const [lang, said, go] of [
    ["en", "You already sit at table t9: one table at a time, and a match you left keeps your seat until it ends.", "Go to table t9"],
    ["zh", "你已在牌桌 t9 入座：每次只能坐一张牌桌，离开的对局在结束前仍保留你的座位。", "前往牌桌 t9"],
  ]) {
    const app = queueApp({ queue_join: refused });
    app.t = (key, params) => translate(lang, key, params);
    app.errorText = (error) => errorText(lang, error);
    await app.joinQueue(true);
    const root = shownBox(app);
    eq(root.querySelector('[role="alert"]').textContent, said);
    const link = root.querySelector("a.button");
    eq([link.textContent, link.getAttribute("href")], [go, "#/table/t9"]);
  }
});

/** Replaces fetch by `answer(url)` (a body, or null for a 404) while `step` runs. */
async function withFetch(answer, step) {
  const realFetch = globalThis.fetch;
  const asked = [];
  globalThis.fetch = async (url) => {
    asked.push(url);
    const body = answer(url);
    return { ok: body !== null, status: body === null ? 404 : 200, json: async () => body ?? { error: "no" } };
  };
  try {
    await step(asked);
  } finally {
    globalThis.fetch = realFetch;
  }
}

const SEASON_1 = { id: 1, ladder: "mcr", number: 1, name: "Season 1", starts_at: "2026-11-01T00:00:00Z", ends_at: "2026-12-01T00:00:00Z", rated_matches: 9 };
const SEASON_2 = { id: 2, ladder: "mcr", number: 2, name: "Season 2", starts_at: "2026-12-01T00:00:00Z", ends_at: null, rated_matches: 1 };

function boardOf(season, players, extra = {}) {
  return { ladder: "mcr", season, provisional: "false", provisional_matches: 10, search: null, total: players.length, offset: 0, limit: 50, players, ...extra };
}

const row = (rank, name, rating) => ({ rank, name, rating, mu: 25, sigma: 5, matches: 12, provisional: false, grade: 1.5, last_played: "2026-12-01T10:00:00Z" });

test("leaderboard page: the current season, a past season's final table, the filter and the search", async () => {
  const { ladderPage } = await import("../js/pages/ladder.js");
  const answer = (url) => {
    if (url === "/api/ladders") return { ladders: [{ id: "mcr", season: SEASON_2, players: 2, established: 2, provisional_matches: 10 }] };
    if (url === "/api/seasons?ladder=mcr") return { seasons: [SEASON_1, SEASON_2] };
    const query = new URL(url, "http://x").searchParams;
    if (query.get("q") === "zz") return boardOf(SEASON_1, [], { search: "zz", total: 2 });
    if (query.get("season") === "1") return boardOf(SEASON_1, [row(1, "old", 9.25)]);
    return boardOf(SEASON_2, [row(1, "mei", 1204.26), row(2, "lin", 3)], { provisional: query.get("provisional") });
  };
  await withFetch(answer, async (asked) => {
    const app = { t: en, lang: "en", refresh() {} };
    const view = () => {
      const root = document.createElement("div");
      render(ladderPage.view(app), root);
      return root;
    };
    ladderPage.enter(app, { id: null });
    for (let i = 0; i < 4; i++) await settle();
    let root = view();
    eq(root.querySelector("h1").textContent, "Ladder: MCR (Chinese Official)");
    ok(root.querySelector(".season-line").textContent.includes("Season 2"), "the current season");
    const cells = [...root.querySelectorAll(".leaderboard tbody tr")].map((tr) => [...tr.cells].map((c) => c.textContent.trim()));
    eq(cells[0], ["1", "mei", "1,204.3", "12", "1.50", "2026-12-01"]);
    eq(root.querySelector(".leaderboard a").getAttribute("href"), "#/player/mei");
    eq([...root.querySelectorAll('select[name="season"] option')].map((o) => o.textContent), ["Season 2 (current)", "Season 1"]);

    const season = root.querySelector('select[name="season"]');
    season.value = "1";
    season.dispatchEvent(new Event("change"));
    await settle();
    eq(asked.at(-1), "/api/ladders/mcr?offset=0&limit=50&provisional=false&season=1");
    root = view();
    ok(root.querySelector(".season-line").textContent.includes("Final standings"), "a past season is final");
    eq(root.querySelector(".leaderboard tbody td:nth-child(2)").textContent.trim(), "old");

    const filter = root.querySelector('select[name="filter"]');
    filter.value = "all";
    filter.dispatchEvent(new Event("change"));
    await settle();
    eq(asked.at(-1), "/api/ladders/mcr?offset=0&limit=50&provisional=all&season=1");

    const form = root.querySelector("form");
    form.elements.q.value = "zz";
    form.dispatchEvent(new Event("submit", { cancelable: true }));
    await settle();
    eq(asked.at(-1), "/api/ladders/mcr?offset=0&limit=50&provisional=all&season=1&q=zz");
    eq(view().querySelector(".empty").textContent, "No player whose name starts with “zz”.");
    ladderPage.leave();
  });
});

test("leaderboard page: an unknown ladder and a ladder without a rated match say so", async () => {
  const { ladderPage } = await import("../js/pages/ladder.js");
  const answer = (url) => {
    if (url === "/api/ladders") return { ladders: [{ id: "mcr", season: null, players: 0, established: 0, provisional_matches: 10 }] };
    if (url === "/api/seasons?ladder=mcr") return { seasons: [] };
    return { ladder: "mcr", season: null, total: 0, players: [], offset: 0, limit: 50, provisional: "false", search: null };
  };
  await withFetch(answer, async () => {
    const app = { t: en, lang: "en", refresh() {} };
    const view = () => {
      const root = document.createElement("div");
      render(ladderPage.view(app), root);
      return root;
    };
    ladderPage.enter(app, { id: "nope" });
    for (let i = 0; i < 3; i++) await settle();
    eq(view().querySelector('[role="alert"]').textContent, "There is no ladder named nope.");
    ladderPage.enter(app, { id: "mcr" });
    for (let i = 0; i < 4; i++) await settle();
    const root = view();
    eq(root.querySelector(".season-line").textContent, en("app.ladder.no_season"));
    eq(root.querySelector(".empty").textContent, "No one has played a rated match in this season yet.");
    ok(!root.querySelector('select[name="season"]'), "no season picker for fewer than two seasons");
    ladderPage.leave();
  });
});

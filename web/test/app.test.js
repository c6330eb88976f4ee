// The shell's pure parts: the dictionaries, the texts, the errors in words, the routes.
import { eq, ok, test } from "./harness.js";
import { DICTIONARIES, errorText, missingKeys, mergeDictionaries, translate, defaultLang } from "../js/i18n.js";
import { matchAddress, parseRoute, seatOf, unreadElsewhere } from "../js/app.js";
import { connectionText } from "../js/header.js";
import { serverError } from "../js/net.js";
import { refusal, when } from "../js/pages/player.js";
import { rulesName, stateText } from "../js/pages/lobby.js";

const fakeApp = (lang) => ({ t: (key, params) => translate(lang, key, params) });

test("every dictionary has the same keys in both languages", () => {
  for (const [name, dictionary] of Object.entries(DICTIONARIES)) {
    eq(missingKeys(dictionary), [], `${name} dictionary`);
    ok(Object.keys(dictionary.en).length > 0, `${name} has texts`);
  }
  eq(missingKeys(mergeDictionaries()), [], "merged");
});

test("missingKeys names the key and the language that lacks it", () => {
  eq(missingKeys({ en: { a: "1", b: "2" }, zh: { a: "一", c: "三" } }), ["en lacks c", "zh lacks b"]);
});

test("the shell's keys are all app.* and no text is empty", () => {
  for (const lang of ["en", "zh"]) {
    for (const [key, text] of Object.entries(DICTIONARIES.app[lang])) {
      ok(key.startsWith("app."), `${key} is namespaced`);
      ok(text.trim().length > 0, `${lang} ${key} has a text`);
    }
  }
});

test("the Chinese texts are Chinese, not English left over", () => {
  // Texts that are the same in both languages would be untranslated ones; the few allowed are
  // made only of placeholders, digits and signs ("{won} / {lost} / {drawn}").
  const en = DICTIONARIES.app.en;
  for (const [key, text] of Object.entries(DICTIONARIES.app.zh)) {
    if (key === "app.header.lang" || key === "app.header.lang_label") continue; // the other language's name
    const words = text.replace(/\{\w+\}/g, "").replace(/guest-|Ctrl\+C|⌘C|_|-/g, "");
    ok(!/[A-Za-z]{2,}/.test(words), `zh ${key} has no English word: ${text}`);
    if (/[\u4e00-\u9fff]/.test(en[key])) ok(false, `en ${key} is not Chinese`);
  }
});

test("Chinese says 对局 for a match and 赛事 for a tournament, never 比赛 for either", () => {
  // 比赛 stood for both, so "没有这场比赛" said nothing of which was missing. (国际比赛分, the
  // IMPs, is a name of its own.)
  const zh = mergeDictionaries().zh;
  const both = Object.entries(zh).filter(([, text]) => text.replaceAll("国际比赛分", "").includes("比赛"));
  eq(both.map(([key]) => key), [], "texts saying 比赛");
  const en = mergeDictionaries().en;
  for (const [key, text] of Object.entries(en)) {
    if (/\btournament/i.test(text) && !/\bmatch/i.test(text)) ok(!zh[key].includes("对局"), `${key}: a tournament is not 对局: ${zh[key]}`);
    if (/\bmatch/i.test(text) && !/\btournament/i.test(text)) ok(!zh[key].includes("赛事"), `${key}: a match is not 赛事: ${zh[key]}`);
  }
});

test("Chinese texts use Chinese punctuation: a full-width colon, no ASCII one beside Chinese", () => {
  // "第1局: ..." and "打 三条： 3 向听" read as typed on an English keyboard.
  const zh = mergeDictionaries().zh;
  const ascii = Object.entries(zh).filter(([, text]) => /[\u4e00-\u9fff][^\n]*: |: [\u4e00-\u9fff]|： /.test(text));
  eq(ascii.map(([key]) => key), [], "texts with an ASCII colon, or a space after a full-width one");
  eq(translate("zh", "table.result.heading", { n: 1, what: "流局" }), "第1局：流局");
});

test("a label's English text has its colon before what it names, as the Chinese has its full-width one", () => {
  // "Rules MCR (Chinese Official), 20 s per decision" ran the label into the rules' name.
  const params = { rules: "MCR (Chinese Official)", seconds: 20, table: "t4", when: "today" };
  eq(translate("en", "table.rules_line", params), "Rules: MCR (Chinese Official), 20 s per decision");
  eq(translate("zh", "table.rules_line", { ...params, rules: "国标麻将" }), "规则：国标麻将，每次决定 20 秒");
  eq(translate("en", "replay.meta", params), "Rules: MCR (Chinese Official) · table t4 · today");
});

test("translate fills placeholders and shows an unknown key as itself", () => {
  eq(translate("en", "app.lobby.turn", { n: 15 }), "15 s per move");
  eq(translate("zh", "app.lobby.turn", { n: 15 }), "每步 15 秒");
  eq(translate("zh", "app.home.play_now"), "立即开局（对战三个机器人）");
  eq(translate("en", "app.no.such.key"), "app.no.such.key");
  eq(translate("en", "app.lobby.turn"), "{n} s per move", "a missing parameter stays visible");
});

test("the browser's languages choose the first language", () => {
  eq(defaultLang(["zh-CN", "en"]), "zh");
  eq(defaultLang(["en-US", "zh-TW"]), "zh");
  eq(defaultLang(["de-DE", "en"]), "en");
  eq(defaultLang([]), "en");
});

test("server errors are shown in words, with the wait of a rate limit", () => {
  const refused = (payload) => serverError(payload);
  eq(errorText("en", refused({ code: "auth_failed", reason: "bad" })), "Wrong username or password.");
  eq(errorText("zh", refused({ code: "username_taken", reason: "x" })), "该用户名已被使用，请换一个。");
  eq(errorText("en", refused({ code: "rate_limited", reason: "r", retry_after: 4 })), "Too many attempts: try again in 4 s.");
  eq(errorText("zh", refused({ code: "rate_limited", reason: "r", retry_after: 4 })), "尝试次数过多，请 4 秒后再试。");
  eq(errorText("en", refused({ code: "rate_limited", reason: "r" })), "Too many attempts: wait a moment and try again.");
  for (const code of ["weak_password", "bad_username", "username_confusable", "table_full", "seat_taken", "wrong_invite", "table_started"]) {
    const text = errorText("en", refused({ code, reason: "the server's words" }));
    ok(text !== "the server's words" && !text.startsWith("app."), `${code} has its own text`);
  }
  eq(errorText("en", refused({ code: "tile_not_in_hand", reason: "you hold no 5p" })), "you hold no 5p");
});

test("already_seated names the table where the player sits, when the server says which", () => {
  const seated = serverError({ code: "already_seated", reason: "you already sit at table t9", table: "t9" });
  eq(seated.table, "t9");
  eq(errorText("en", seated), "You already sit at table t9: one table at a time, and a match you left keeps your seat until it ends.");
  eq(errorText("zh", seated), "你已在牌桌 t9 入座：每次只能坐一张牌桌，离开的对局在结束前仍保留你的座位。");
  eq(errorText("en", serverError({ code: "already_seated", reason: "x" })), "You already sit at another table.");
  eq(serverError({ code: "stale" }).table, null);
});

test("serverError keeps code, reason and retry_after", () => {
  const error = serverError({ code: "rate_limited", reason: "slow down", retry_after: 3 });
  eq([error.code, error.reason, error.retryAfter, error.message], ["rate_limited", "slow down", 3, "slow down"]);
  eq(serverError({ code: "stale" }).retryAfter, null);
});

test("routes: every page of the client and nothing else", () => {
  eq(parseRoute(""), { name: "home", params: {} });
  eq(parseRoute("#/"), { name: "home", params: {} });
  eq(parseRoute("#/lobby"), { name: "lobby", params: {} });
  eq(parseRoute("#/join/t4/AbC9"), { name: "join", params: { table: "t4", code: "AbC9" } });
  eq(parseRoute("#/player/lin"), { name: "player", params: { name: "lin" } });
  eq(parseRoute("#/player/guest-12%2Fx"), { name: "player", params: { name: "guest-12/x" } });
  eq(parseRoute("#/table/t4"), { name: "table", params: { table: "t4", mode: "play" } });
  eq(parseRoute("#/watch/t4"), { name: "table", params: { table: "t4", mode: "watch" } });
  eq(parseRoute("#/match/12"), { name: "match", params: { id: 12, hand: null, step: null, invite: null } });
  eq(parseRoute("#/match/12/3/40"), { name: "match", params: { id: 12, hand: 3, step: 40, invite: null } });
  // A private table's match: its invite code after the address, kept by the page's links.
  eq(parseRoute("#/match/12?invite=Ab-3_x"), { name: "match", params: { id: 12, hand: null, step: null, invite: "Ab-3_x" } });
  eq(parseRoute("#/match/12/3/40?invite=a%2Bb"), { name: "match", params: { id: 12, hand: 3, step: 40, invite: "a+b" } });
  eq(parseRoute("#/match/12?invite="), { name: "match", params: { id: 12, hand: null, step: null, invite: null } });
  eq(parseRoute("#/lobby?x=1"), { name: "lobby", params: {} });
  for (const hash of ["#/match/x", "#/join/t4", "#/nowhere", "#/lobby/extra", "#/table"]) {
    eq(parseRoute(hash).name, "notfound", hash);
  }
});

test("a match's address keeps a private table's invite code", () => {
  eq(matchAddress(12), "#/match/12");
  eq(matchAddress(12, { hand: 3, step: 40 }), "#/match/12/3/40");
  eq(matchAddress(12, { invite: "a+b/c" }), "#/match/12?invite=a%2Bb%2Fc");
  eq(matchAddress(12, { hand: 1, step: 0, invite: "Ab-3_x" }), "#/match/12/1/0?invite=Ab-3_x");
  const { params } = parseRoute(matchAddress(12, { hand: 2, step: 5, invite: "a+b/c" }));
  eq(params, { id: 12, hand: 2, step: 5, invite: "a+b/c" });
});

test("seatOf finds a player's seat in a summary", () => {
  const summary = { seats: ["lin", null, "bot:default", "mei"] };
  eq([seatOf(summary, "lin"), seatOf(summary, "mei"), seatOf(summary, "bot:default") >= 0], [0, 3, true]);
  eq(seatOf(summary, "nobody"), -1);
  eq(seatOf(summary, null), -1);
});

test("the header counts down to the next connection attempt", () => {
  const app = (connection, lang = "en") => ({ connection, ...fakeApp(lang) });
  eq(connectionText(app({ status: "connected", retryAt: null })), "Connected");
  eq(connectionText(app({ status: "connecting", retryAt: null }, "zh")), "正在连接…");
  eq(connectionText(app({ status: "reconnecting", retryAt: 10_500 }), 6_000), "Reconnecting in 5 s");
  eq(connectionText(app({ status: "reconnecting", retryAt: 10_500 }, "zh"), 6_000), "5 秒后重新连接");
  eq(connectionText(app({ status: "reconnecting", retryAt: 10_000 }), 10_000), "Reconnecting…");
});

test("the player page says why there is no page, in words", () => {
  eq(refusal(fakeApp("en"), "nobody", 404, { error: "no player nobody" }), "There is no player named nobody.");
  eq(refusal(fakeApp("zh"), "nobody", 404, {}), "没有名为 nobody 的玩家。");
  eq(refusal(fakeApp("en"), "x", 500, { error: "the database is away" }), "the database is away");
  eq(refusal(fakeApp("en"), "x", 502, null), "The server could not be reached. Try again in a moment.");
});

test("times show in the visitor's zone; a broken time shows as sent", () => {
  const date = new Date("2026-12-01T10:05:00Z");
  const pad = (n) => String(n).padStart(2, "0");
  const local = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  eq(when("2026-12-01T10:05:00Z"), `${local} ${pad(date.getHours())}:${pad(date.getMinutes())}`);
  eq(when("soon"), "soon");
});

test("the lobby names the rules and the state of a table", () => {
  eq(rulesName(fakeApp("zh"), "mcr"), "国标麻将");
  eq(rulesName(fakeApp("en"), "custom-flowers"), "Custom: flowers are wild");
  eq(rulesName(fakeApp("en"), "house-rules"), "house-rules", "a preset the client does not know");
  eq(stateText(fakeApp("en"), { state: "playing", hand_no: 3 }), "Playing: hand 3");
  eq(stateText(fakeApp("zh"), { state: "waiting", hand_no: 0 }), "等待玩家");
  eq(stateText(fakeApp("en"), { state: "playing", hand_no: 0 }), "Playing");
});

test("a hand of the player's table that ends while the page is elsewhere is told read", () => {
  const over = { table: "t7", hand_no: 3, view: { phase: "over" } };
  const mine = { table: "t7", state: "playing" };
  const lobby = { name: "lobby", params: {} };
  eq(unreadElsewhere(over, lobby, mine), true, "in the lobby");
  eq(unreadElsewhere(over, { name: "table", params: { table: "t7" } }, mine), false, "its page reads it");
  eq(unreadElsewhere(over, { name: "table", params: { table: "t8" } }, mine), true, "another table's page");
  eq(unreadElsewhere({ ...over, view: { phase: "discard" } }, lobby, mine), false, "not over");
  eq(unreadElsewhere(over, lobby, { table: "t9" }), false, "not her table");
  eq(unreadElsewhere(over, lobby, null), false, "seated nowhere");
});

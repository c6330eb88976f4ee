// render.js's pure helpers: seats around the viewer, the last discard, legal actions as
// buttons, the own hand with its drawn tile apart, a winning hand split.
import { eq, ok, test } from "./harness.js";
import { actionButtons, callsOf, lastDiscard, legalGroups, ownHand, playerName, seatsAround, secondsLeft, signed, splitHand } from "../js/render.js";

const seat = (player) => ({ player, wind: "E", concealed_count: 13, melds: [], flowers: [], river: [] });

test("seatsAround: the viewer at the bottom, the next player on the right", () => {
  const view = { seats: [seat(2), seat(3), seat(0), seat(1)] };
  const around = seatsAround(view, 0);
  eq([around.bottom.player, around.right.player, around.top.player, around.left.player], [0, 1, 2, 3]);
  eq(seatsAround(view, 3).right.player, 0);
});

test("lastDiscard follows discards, forgets on a claim or a new hand", () => {
  eq(lastDiscard(null, [{ kind: "discard", player: 1, tile: "7p" }, { kind: "draw", player: 2, source: "wall" }]), 1);
  eq(lastDiscard(1, [{ kind: "claim", player: 2, type: "pung", tile: "7p", from: 1, meld: "[777p,3]" }]), null);
  eq(lastDiscard(3, []), 3, "carried over");
  eq(lastDiscard(3, [{ kind: "hand_start" }]), null);
});

test("callsOf: claims, kongs and wins announced at the claimer's seat, draws and discards not", () => {
  const events = [
    { kind: "discard", player: 1, tile: "7p" },
    { kind: "claim", player: 2, type: "pung", tile: "7p", from: 1, meld: "[777p,3]" },
    { kind: "concealed_kong", player: 3 },
    { kind: "add_kong", player: 0, tile: "C" },
    { kind: "draw", player: 0, source: "wall" },
    { kind: "win", winner: 1, discarder: null, tile: "7m" },
  ];
  eq(callsOf(events), [{ player: 2, call: "pung" }, { player: 3, call: "kong" }, { player: 0, call: "kong" }, { player: 1, call: "win" }]);
  eq(callsOf([{ kind: "discard", player: 1, tile: "7p" }]), []);
});

test("actionButtons: exactly the legal claims, win first, pass last, chows with tiles", () => {
  const legal = [{ type: "chow", tile: "6p" }, { type: "chow", tile: "7p" }, { type: "pass" }, { type: "pung" }, { type: "win" }];
  const buttons = actionButtons(legal);
  eq(buttons.map((b) => b.action.type), ["win", "pung", "chow", "chow", "pass"]);
  eq(buttons[3].tiles, ["7p", "8p", "9p"]);
  eq(actionButtons([{ type: "discard", tile: "1m" }]), [], "a discard is a tile, not a button");
  eq(actionButtons([]), []);
  ok(legalGroups([{ type: "discard", tile: "1m" }]).discards.has("1m"));
});

test("ownHand: sorted, the drawn tile apart; splitHand: melds and the winning tile last", () => {
  const mine = { ...seat(0), concealed: "123m456p378899sEE" };
  const hand = ownHand(mine, "3s");
  eq(hand.drawn, "3s");
  eq(hand.tiles.length, 13);
  eq(ownHand(mine, null).drawn, null);
  const split = splitHand("[678s,1][678p,2]678m56m44p7m");
  eq(split.melds, ["[678s,1]", "[678p,2]"]);
  eq(split.tiles.at(-1), "7m");
});

test("small formatting helpers", () => {
  const t = (key, p) => `${key}:${p ? p.n : ""}`;
  eq(playerName(t, ["lin", "bot:default", null, null], 0), "lin");
  eq(playerName(t, ["lin", "bot:default", null, null], 1), "table.bot_level:2");
  eq(playerName(t, null, 3), "table.player:4");
  eq([signed(8), signed(-8), signed(0)], ["+8", "-8", "0"]);
  eq(secondsLeft(10500, 10000), 1);
  eq(secondsLeft(9000, 10000), 0);
});

test("the table dictionary has the same keys in both languages", async () => {
  const { default: dict } = await import("../js/i18n/table.js");
  eq(Object.keys(dict.zh).sort(), Object.keys(dict.en).sort());
  ok(Object.keys(dict.en).length > 80, "tiles and table texts");
});

test("aids: a wait in words, 'needs 8' when short; the raised tile's discard picked", async () => {
  const { aidsPicks, waitText, fanLabel } = await import("../js/render.js");
  const t = (key, p = {}) => `${key}(${Object.values(p).join(",")})`;
  const wait = { tile: "2s", unseen: 3, discard: { total: 6, meets_minimum: false }, self_drawn: { total: 9, meets_minimum: true } };
  eq(waitText(t, wait, 8), "tile.2s() ×3 · table.aids.on_discard(6) table.aids.needs(8) · table.aids.self_drawn(9)");
  eq(waitText(t, { tile: "*", unseen: 2, discard: null, self_drawn: { total: null, meets_minimum: true } }, 8),
    "tile.any_wild() ×2 · table.aids.self_drawn(?)");
  const analysis = { min_fan: 8, shanten: 0, discards: [{ tile: "9p", shanten: 0, waits: [wait] }, { tile: "2m", shanten: 1, waits: [] }, { tile: "E", shanten: 1, waits: [] }, { tile: "W", shanten: 2, waits: [] }] };
  eq(aidsPicks(analysis, "2m").discards.map((d) => d.tile), ["2m"]);
  eq(aidsPicks(analysis, null).discards.map((d) => d.tile), ["9p", "2m", "E"], "the best three");
  eq(aidsPicks({ min_fan: 8, shanten: 0, waits: [wait] }, null).kind, "waits");
  eq(aidsPicks(null, null), null);
  eq(fanLabel({ name: "Seat Flower", name_zh: "季花" }, "zh"), "★ 季花");
  eq(fanLabel({ name: "All Chows", name_zh: "平和" }, "en"), "All Chows");
});

// A synthetic update as the server shapes it (docs/protocol.md), drawn into a detached node.
const { render } = await import("../js/vendor/lit-html.js");
const { tableView } = await import("../js/render.js");

function drawn(update, extra = {}) {
  const node = document.createElement("div");
  const ctx = {
    t: (key) => key, state: update, names: ["lin", "bot:default", "bot:default", "bot:default"],
    perspective: update.view.you ?? update.view.seats[0].player, last: 3, legal: update.view.legal || [],
    interactive: update.view.you !== undefined, selected: null, raisedTile: null, deadlineAt: null, now: 0,
    onTile: () => {}, onAction: () => {}, ...extra,
  };
  render(tableView(ctx), node);
  return node;
}

const customUpdate = () => ({
  table: "t5", seq: 12, hand_no: 5, hands_total: null, scores: [12, -4, -4, -4],
  events: [{ kind: "draw", player: 0, tile: "7s", source: "wall" }],
  view: {
    phase: "turn", round_wind: "E", dealer: 0, dice: [[4, 2], [6, 3]], wall_remaining: 88, current: 0,
    seats: [
      { player: 0, wind: "E", concealed_count: 14, melds: [], flowers: ["f1"], river: [], concealed: "77s117m18p1445sEFP" },
      { player: 1, wind: "S", concealed_count: 10, melds: ["[????]"], flowers: [], river: ["W", "6m*"] },
      { player: 2, wind: "W", concealed_count: 13, melds: [], flowers: [], river: [] },
      { player: 3, wind: "N", concealed_count: 10, melds: ["[EEE,2]"], flowers: [], river: ["9p"] },
    ],
    drawn: "7s", you: 0, legal: [{ type: "discard", tile: "1m" }, { type: "discard", tile: "E" }, { type: "win" }],
    rules: { name: "custom", min_fan: 0 }, indicator: "6s", dead_flowers: [], wild_tiles: ["7s"],
  },
});

test("renderer: wild tiles marked and kept left, the drawn tile apart, buttons only for legal", () => {
  const node = drawn(customUpdate());
  const own = [...node.querySelectorAll(".own-hand .htile")];
  eq(own.map((x) => x.dataset.tile), ["7s", "1m", "1m", "7m", "1p", "8p", "1s", "4s", "4s", "5s", "E", "F", "P", "7s"]);
  ok(own[0].querySelector(".wild-badge"), "the held wild tile has the badge");
  ok(own.at(-1).classList.contains("drawn"), "the drawn tile is apart");
  eq([...node.querySelectorAll(".own-hand button.htile")].map((b) => b.dataset.tile), ["1m", "1m", "E"], "only legal discards are buttons");
  eq([...node.querySelectorAll(".actions button")].map((b) => b.dataset.action), ["win"]);
  ok(node.querySelector(".rules-mark .indicator"), "the indicator is shown");
  eq(node.querySelectorAll('.seat[data-player="1"] .river .taken').length, 1, "a claimed river tile is marked");
  eq(node.querySelectorAll('.seat[data-player="3"] .river .last').length, 1, "the last discard is highlighted");
  eq(node.querySelectorAll('.seat[data-player="3"] .claimed-in').length, 1, "the claimed tile of a pung is marked");
});

test("renderer: a spectator's view has only backs for concealed tiles, no buttons", () => {
  const update = customUpdate();
  delete update.view.you;
  delete update.view.legal;
  delete update.view.drawn;
  delete update.view.seats[0].concealed;
  const node = drawn(update);
  eq(node.querySelectorAll("button").length, 0, "no control");
  const faces = [...node.querySelectorAll(".hand img")].map((i) => i.getAttribute("src"));
  ok(faces.length === 14 + 10 + 13 + 10, `every concealed tile drawn as a back (${faces.length})`);
  ok(faces.every((src) => src === "/tiles/back.svg"), "backs only");
  eq(node.querySelectorAll('.seat[data-player="1"] .meld img[src="/tiles/back.svg"]').length, 4, "a face-down kong");
});

test("replayState: the last discard and the result as of a step", async () => {
  const { replayState } = await import("../js/pages/match.js");
  const frames = [
    { hand_no: 1, scores: [0, 0, 0, 0], events: [{ kind: "hand_start" }] },
    { hand_no: 1, scores: [0, 0, 0, 0], events: [{ kind: "discard", player: 2, tile: "7p" }] },
    { hand_no: 1, scores: [8, -8, 0, 0], events: [{ kind: "win", winner: 0, discarder: 1, fans: [], deltas: [8, -8, 0, 0] }, { kind: "hand_end", hands: [] }] },
  ];
  eq(replayState(frames, 1).last, 2);
  eq(replayState(frames, 1).result, null);
  const end = replayState(frames, 2);
  eq([end.result.win.winner, end.result.hands, end.result.scores], [0, [], [8, -8, 0, 0]]);
});

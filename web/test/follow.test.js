// follow.js: the seats followed from the events (protocol version 2), on small hand-made
// tables; tests/web/test_follow_js.py checks it against the engine over thousands of changes.
import { eq, ok, test } from "./harness.js";
import { follow, wholeUpdate } from "../js/follow.js";

const WINDS = ["E", "S", "W", "N"];

/** A seat as the server writes it; `concealed` only where the viewer sees it. */
function seat(player, { count = 13, melds = [], flowers = [], river = [], concealed } = {}) {
  const out = { player, wind: WINDS[player], concealed_count: count, melds, flowers, river };
  if (concealed !== undefined) out.concealed = concealed;
  return out;
}

/** A view with its seats (player 0 to 3 in position order), as the viewer `you` has it. */
function view(you, seats, more = {}) {
  const out = { phase: "turn", current: 0, seats, ...more };
  if (you !== null) out.you = you;
  return out;
}

const brief = (you, more = {}) => {
  const out = { phase: "turn", current: 0, players: [0, 1, 2, 3], ...more };
  if (you !== null) out.you = you;
  return out;
};

function throws(fn, words) {
  try {
    fn();
  } catch (error) {
    ok(String(error).includes(words), `${error} says "${words}"`);
    return;
  }
  throw new Error(`no error; expected one saying "${words}"`);
}

test("follow: a hand starts with empty seats, then the deal and a flower", () => {
  const events = [
    { kind: "match", hand_no: 1, scores: [0, 0, 0, 0] },
    { kind: "hand_start", dealer: 0, round_wind: "E", seat_winds: ["S", "W", "N", "E"] },
    { kind: "deal", player: 3, count: 13 },
    { kind: "deal", player: 0, tiles: ["E", "9s", "1m", "f2", "5p", "1m", "3s", "2m", "S", "4p", "7s", "3p", "9s", "8s"] },
    { kind: "flower", player: 0, flower: "f2" },
    { kind: "draw", player: 0, tile: "C", source: "flower" },
  ];
  const seats = follow(null, events, { ...brief(0), players: [3, 0, 1, 2] });
  eq(seats.map((x) => [x.player, x.wind]), [[3, "E"], [0, "S"], [1, "W"], [2, "N"]], "position order, their winds");
  eq(seats[1], { player: 0, wind: "S", concealed_count: 14, melds: [], flowers: ["f2"], river: [], concealed: "112m345p37899sESC" });
  eq(seats[0], { player: 3, wind: "E", concealed_count: 13, melds: [], flowers: [], river: [] }, "no tiles shown");
  eq(seats[2].concealed_count, 0, "not dealt yet");
});

test("follow: a claim marks the discard in the river and takes the tiles from the hand", () => {
  const before = view(2, [
    seat(0, { river: ["9m"] }),
    seat(1, { count: 13, river: ["1m", "5p"] }),
    seat(2, { concealed: "1236m55p789sEESS" }),
    seat(3),
  ], { phase: "claim", claim: { tile: "5p", from: 1, kind: "discard" } });
  const events = [{ kind: "claim", player: 2, from: 1, tile: "5p", type: "pung", meld: "[555p,1]" }];
  const seats = follow(before, events, brief(2));
  eq(seats[1].river, ["1m", "5p*"], "the claimed discard");
  eq(seats[0].river, ["9m"], "others' rivers stay");
  eq(seats[2], seat(2, { count: 11, melds: ["[555p,1]"], concealed: "1236m789sEESS" }));
  // The same claim as player 0 sees it: a count, no tiles.
  const other = follow({ ...before, you: 0, seats: before.seats.map((x) => seat(x.player, { count: x.concealed_count, river: x.river })) }, events, brief(0));
  eq(other[2], seat(2, { count: 11, melds: ["[555p,1]"] }));
  eq(before.seats[1].river, ["1m", "5p"], "the view before is left as it was");
});

test("follow: a chow takes the two tiles that are not the claimed one", () => {
  const before = view(1, [seat(0, { river: ["4m"] }), seat(1, { concealed: "35m123p456sEESSW" }), seat(2), seat(3)]);
  const seats = follow(before, [{ kind: "claim", player: 1, from: 0, tile: "4m", type: "chow", meld: "[345m,2]" }], brief(1));
  eq(seats[1].concealed, "123p456sEESSW");
  eq(seats[1].melds, ["[345m,2]"]);
  eq(seats[0].river, ["4m*"]);
});

test("follow: a concealed kong shows to its owner and is [????] to others, after the melds they see", () => {
  const mine = view(3, [seat(0), seat(1), seat(2), seat(3, { count: 14, melds: [], concealed: "5555p123sEEESSWN" })]);
  const kong = [{ kind: "concealed_kong", player: 3, tile: "5p" }, { kind: "draw", player: 3, tile: "N", source: "kong" }];
  const own = follow(mine, kong, brief(3))[3];
  eq(own, seat(3, { count: 11, melds: ["[5555p]"], concealed: "123sEEESSWNN" }));

  const theirs = view(0, [seat(0, { concealed: "123456789m123pE" }), seat(1), seat(2), seat(3, { count: 11, melds: ["[123m,1]"] })]);
  const hidden = follow(theirs, [{ kind: "concealed_kong", player: 3 }, { kind: "draw", player: 3, source: "kong" }], brief(0));
  eq(hidden[3], seat(3, { count: 8, melds: ["[123m,1]", "[????]"] }));
  // A later claim shows before the face-down kong; the hand's end shows the kong.
  const later = view(0, [seat(0, { concealed: "123456789m123pE", river: ["E"] }), seat(1), seat(2), hidden[3]]);
  const claimed = follow(later, [{ kind: "claim", player: 3, from: 0, tile: "E", type: "pung", meld: "[EEE,3]" }], brief(0));
  eq(claimed[3].melds, ["[123m,1]", "[EEE,3]", "[????]"]);
  eq(claimed[3].concealed_count, 6);
});

test("follow: an added kong stands at once; a robbing win makes it a pung again", () => {
  const before = view(0, [
    seat(0, { concealed: "123m456p789sSSNN" }),
    seat(1, { count: 11, melds: ["[CCC,2]"] }),
    seat(2),
    seat(3),
  ]);
  // While the others may rob it, the kong stands: the tile is on the meld, not in the hand.
  const open = follow(before, [{ kind: "add_kong", player: 1, tile: "C" }], brief(0));
  eq(open[1], seat(1, { count: 10, melds: ["[CCCC,2]"] }));
  const answered = view(0, open, { phase: "rob", claim: { tile: "C", from: 1, kind: "add_kong" } });
  const done = follow(answered, [{ kind: "draw", player: 1, source: "kong" }], brief(0));
  eq(done[1], seat(1, { count: 11, melds: ["[CCCC,2]"] }), "its replacement: one tile more, nothing else");
  // Robbed: a pung again, the tile gone to the robber.
  const robbed = follow(answered, [{ kind: "win", winner: 0, discarder: 1, tile: "C" }], brief(0));
  eq(robbed[1], seat(1, { count: 10, melds: ["[CCC,2]"] }));
  // Without a claim window: the added kong and its draw in one update; the owner's view.
  const own = view(1, [seat(0), seat(1, { count: 8, melds: ["[123m,1]", "[555p,3]"], concealed: "5p789sEEEN" }), seat(2), seat(3)]);
  const events = [{ kind: "add_kong", player: 1, tile: "5p" }, { kind: "draw", player: 1, tile: "W", source: "kong" }];
  eq(follow(own, events, brief(1))[1], seat(1, { count: 8, melds: ["[123m,1]", "[5555p,3]"], concealed: "789sEEEWN" }));
  // A win on a discard by someone else while no kong is added changes no seat.
  const plain = follow(before, [{ kind: "win", winner: 2, discarder: 1, tile: "C" }], brief(0));
  eq(plain[1].melds, ["[CCC,2]"]);
});

test("follow: the hand's end shows every hand", () => {
  const before = view(null, [seat(0, { count: 13, melds: [] }), seat(1, { count: 10, melds: ["[????]"] }), seat(2, { count: 13 }), seat(3, { count: 13 })]);
  const hands = [
    { concealed: "123m456p789s1122m", melds: [] },
    { concealed: "123456789m1s", melds: ["[EEEE]"] },
    { concealed: "1112345678999m", melds: [] },
    { concealed: "1m2p3sESWNCFP159m", melds: [] },
  ];
  const seats = follow(before, [{ kind: "win", player: 1 }, { kind: "hand_end", hands }], brief(null, { phase: "over" }));
  eq(seats.map((x) => x.concealed), ["1112223m456p789s", "123456789m1s", "1112345678999m", "1159m2p3sESWNCFP"], "sorted as the server writes them");
  eq(seats[1].melds, ["[EEEE]"], "the face-down kong turned over");
  eq(seats.map((x) => x.concealed_count), [13, 10, 13, 13]);
});

test("follow: wild tiles are written first, flowers first when they are wild", () => {
  const dealt = (tiles, wild) => follow(null, [
    { kind: "hand_start", seat_winds: WINDS },
    { kind: "deal", player: 0, tiles },
  ], brief(0, { wild_tiles: wild }))[0].concealed;
  eq(dealt(["1m", "7s", "2m", "E", "7s", "3p", "8m"], ["7s", "8m"]), "8m77s12m3pE");
  eq(dealt(["1m", "f3", "2m", "f1", "C"], ["f1", "f3"]), "f1f312mC");
  eq(dealt(["1m", "f3", "2m", "f1", "C"], []), "12mCf1f3", "held flowers last when they are not wild");
});

test("follow: what does not fit is refused, saying what", () => {
  const before = view(0, [seat(0, { concealed: "123m456p789sEESSW" }), seat(1, { river: [] }), seat(2), seat(3)]);
  throws(() => follow(before, [{ kind: "discard", player: 0, tile: "9p" }], brief(0)), "player 0 has no 9p to give up");
  throws(() => follow(before, [{ kind: "discard", player: 0, tile: "0x" }], brief(0)), '"0x" is not a tile');
  throws(() => follow(before, [{ kind: "claim", player: 0, from: 1, tile: "E", type: "pung", meld: "[EEE,2]" }], brief(0)), "player 1 has no discard to be claimed");
  throws(() => follow(before, [{ kind: "draw", player: 7, source: "wall" }], brief(0)), "no such player");
  throws(() => follow(before, [{ kind: "teleport", player: 0 }], brief(0)), "unknown kind");
  throws(() => follow(null, [{ kind: "discard", player: 0, tile: "5m" }], brief(0)), "no seats to follow");
  throws(() => follow(null, [], brief(0)), "no seats to follow");
  const pung = view(0, [seat(0, { concealed: "1m" }), seat(1, { river: ["1m"] }), seat(2), seat(3)]);
  throws(() => follow(pung, [{ kind: "claim", player: 0, from: 1, tile: "1m", type: "chow", meld: "[124m,1]" }], brief(0)), "is not a chow, pung or kong");
});

test("wholeUpdate: a view with seats as it is; the next update followed; a gap refused", () => {
  const last = { seq: 7, events: [], view: view(0, [seat(0, { concealed: "123m456p789sEESSW", count: 14 }), seat(1), seat(2), seat(3)]) };
  const full = { seq: 9, full: true, events: [], view: last.view };
  ok(wholeUpdate(last, full) === full, "a full update is taken as it is");
  const next = { seq: 8, events: [{ kind: "discard", player: 0, tile: "W" }], view: brief(0, { phase: "claim" }) };
  const whole = wholeUpdate(last, next);
  eq(Object.keys(whole.view).includes("players"), false, "no players: the pages read seats");
  eq(whole.view.seats[0].river, ["W"]);
  eq(whole.view.phase, "claim");
  eq(whole.seq, 8);
  throws(() => wholeUpdate(last, { ...next, seq: 9 }), "no seats to follow");
  throws(() => wholeUpdate(last, { ...next, seq: 7 }), "no seats to follow");
  throws(() => wholeUpdate(null, next), "no seats to follow");
  // After a gap a new hand can still be followed: it needs nothing before it.
  const start = { seq: 20, events: [{ kind: "hand_start", seat_winds: WINDS }, { kind: "deal", player: 1, count: 13 }], view: brief(0) };
  eq(wholeUpdate(last, start).view.seats[1].concealed_count, 13);
});

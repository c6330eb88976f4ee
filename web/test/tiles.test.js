// tiles.js: the notation of runs and melds, the sort order, the claimed tile of a meld.
import { eq, ok, test } from "./harness.js";
import { TILE_NAMES, chowTiles, claimedIndex, formatMeld, formatTiles, parseMeld, parseTiles, sortTiles, withoutOne } from "../js/tiles.js";

test("parseTiles reads runs, honours and flowers", () => {
  eq(parseTiles("123m456p378899sEE"), ["1m", "2m", "3m", "4p", "5p", "6p", "3s", "7s", "8s", "8s", "9s", "9s", "E", "E"]);
  eq(parseTiles("f1f8CFP"), ["f1", "f8", "C", "F", "P"]);
  eq(parseTiles(""), []);
  eq(parseTiles("*55p3s"), ["*", "5p", "5p", "3s"], "a wild tile of no kind");
});

test("parseTiles refuses what is not the notation", () => {
  for (const bad of ["12", "1x", "m", "f9", "1E"]) {
    let threw = false;
    try {
      parseTiles(bad);
    } catch (e) {
      threw = String(e).includes(JSON.stringify(bad));
    }
    ok(threw, `${bad} refused, quoted`);
  }
});

test("parseMeld: chow, pung, kong, concealed and hidden kongs", () => {
  eq(parseMeld("[123m,1]"), { tiles: ["1m", "2m", "3m"], offer: 1, kind: "chow", hidden: false, concealed: false });
  eq(parseMeld("[EEE,2]").kind, "pung");
  eq(parseMeld("[CCCC,3]").kind, "kong");
  eq(parseMeld("[5555p]"), { tiles: ["5p", "5p", "5p", "5p"], offer: null, kind: "kong", hidden: false, concealed: true });
  eq(parseMeld("[????]").hidden, true);
});

test("formatTiles and formatMeld write as the server writes", () => {
  eq(formatTiles(["E", "2m", "1m", "f1", "5p", "9s", "3s", "1m"]), "112m5p39sEf1");
  eq(formatTiles([]), "");
  eq(formatTiles(parseTiles("123m456p378899sEE")), "123m456p378899sEE");
  for (const meld of ["[123m,1]", "[EEE,2]", "[CCCC,3]", "[5555p]", "[????]"]) eq(formatMeld(parseMeld(meld)), meld, meld);
  eq(TILE_NAMES.length, 42, "34 kinds and 8 flowers");
  eq([TILE_NAMES[0], TILE_NAMES[27], TILE_NAMES[33], TILE_NAMES[41]], ["1m", "E", "P", "f8"]);
});

test("claimedIndex: a chow's claimed tile, a pung's side", () => {
  eq(claimedIndex(parseMeld("[789p,3]")), 2, "chow: the third");
  eq(claimedIndex(parseMeld("[EEE,1]")), 0, "from the left");
  eq(claimedIndex(parseMeld("[EEE,2]")), 1, "from across");
  eq(claimedIndex(parseMeld("[EEEE,3]")), 3, "from the right");
  eq(claimedIndex(parseMeld("[5555p]")), -1, "concealed");
});

test("sortTiles: suits, honours, flowers, wild tiles first", () => {
  eq(sortTiles(["E", "3s", "f2", "1m", "C", "9p", "2m"]), ["1m", "2m", "9p", "3s", "E", "C", "f2"]);
  eq(sortTiles(["1m", "7s", "2m", "7s"], ["7s"]), ["7s", "7s", "1m", "2m"]);
  eq(sortTiles(["1m", "*"]), ["*", "1m"]);
  eq(withoutOne(["1m", "1m", "2m"], "1m"), ["1m", "2m"]);
  eq(chowTiles("7p"), ["7p", "8p", "9p"]);
});

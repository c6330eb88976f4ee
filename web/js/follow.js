// Following the seats from the events: the web client's side of protocol version 2, the twin
// of engine/follow.py (same rules, same output; docs/protocol.md, "Version 2: following the
// seats"). An update that is not full carries its view without `seats` (with `players`, the
// players in position order): its seats are the last view's, changed by the update's events
// as this viewer got them:
//
// - hand_start: new seats, empty, in the order of `players`, with their `seat_winds`; the
//   viewer's own seat has (no) concealed tiles;
// - deal: the player's tiles (its own: the tiles; the others': a count);
// - flower: set aside (one concealed tile fewer);
// - add_kong: the pung becomes a kong, the added tile leaves the hand (at once, while others
//   may still rob it); a win that robs it makes it a pung again;
// - draw: one concealed tile more (its own: the tile);
// - discard: into the river, out of the hand;
// - claim: the meld is added; its tiles but the claimed one leave the hand; the claimed
//   discard gets its `*` in the discarder's river;
// - concealed_kong: four tiles leave the hand; the meld shows to its owner (`tile`) and is
//   "[????]" to the others (listed after the melds they can see);
// - hand_end: every hand shown, concealed tiles and melds as the event has them;
// - match, indicator, head_bump, win (but a robbing one), exhausted: no seat changes.
//
// Concealed tiles are written as the server writes them: sorted, the view's `wild_tiles`
// first. Pure: no I/O, no DOM (web/test/follow.test.js, tests/web/test_follow_js.py).
import { TILE_NAMES, chowTiles, formatMeld, formatTiles, parseMeld, parseTiles, tileRank } from "./tiles.js";

const HIDDEN_KONG = "[????]"; // a face-down kong the viewer may not see
const CLAIMED_MARK = "*"; // after a river tile: claimed by another player
const KNOWN = new Set(TILE_NAMES);
const UNCHANGED = new Set(["match", "indicator", "head_bump", "win", "exhausted"]);

/** The seats of `view` (an update's view without them): those of `before` (the last view,
 * with its seats; null: none yet) changed by `events` (the update's events, as the viewer
 * got them). Throws an Error saying what did not fit when they cannot be followed: no seats
 * before and no hand starting, or an event that does not fit them (the client then asks for
 * a full update, `sync`). */
export function follow(before, events, view) {
  const you = view.you;
  let seats = before && before.seats ? before.seats.map(readSeat) : null;
  let adding = null; // an added kong being answered: {player, tile}
  const claim = before ? before.claim : null;
  if (claim && claim.kind === "add_kong") adding = { player: claim.from, tile: tileName(claim.tile, "claim.tile") };
  for (const event of events) {
    const kind = event.kind;
    if (kind === "hand_start") {
      seats = view.players.map((p) => emptySeat(p, event.seat_winds[p], p === you));
      adding = null;
      continue;
    }
    const robbed = kind === "win" && adding !== null && event.discarder === adding.player;
    if (UNCHANGED.has(kind) && !robbed) continue;
    if (seats === null) throw new Error(`a ${JSON.stringify(kind)} event, and no seats to follow (sync first)`);
    const byPlayer = new Map(seats.map((x) => [x.player, x]));
    const seat = byPlayer.get(event.player ?? -1);
    if (robbed) {
      setKong(byPlayer.get(adding.player), adding.tile, false); // a pung again
      adding = null;
    } else if (kind === "add_kong") {
      if (!seat) throw new Error(`event ${JSON.stringify(event)}: no such player at the table`);
      adding = { player: event.player, tile: tileName(event.tile, "add_kong.tile") };
      setKong(seat, adding.tile, true);
    } else if (kind === "hand_end") {
      const hands = event.hands;
      if (!Array.isArray(hands) || hands.length !== seats.length) {
        throw new Error(`hand_end: ${JSON.stringify(hands)} is not one hand for each of ${seats.length} seats`);
      }
      [...seats].sort((a, b) => a.player - b.player).forEach((x, i) => {
        x.concealed = readTiles(hands[i].concealed, "hand_end.concealed");
        x.count = x.concealed.length;
        x.melds = [...hands[i].melds];
        x.hidden = 0;
      });
      adding = null;
    } else if (!seat) {
      throw new Error(`event ${JSON.stringify(event)}: no such player at the table`);
    } else if (kind === "deal") {
      if ("tiles" in event) {
        const tiles = event.tiles.map((x) => tileName(x, "deal.tiles"));
        seat.count = tiles.length;
        if (seat.concealed !== null) seat.concealed = tiles;
      } else seat.count = count(event.count, "deal.count");
    } else if (kind === "flower") {
      seat.flowers.push(tileName(event.flower, "flower.flower"));
      take(seat, [event.flower]);
    } else if (kind === "draw") {
      adding = null; // (the kong stood: its replacement)
      seat.count += 1;
      if (seat.concealed !== null && "tile" in event) seat.concealed.push(tileName(event.tile, "draw.tile"));
    } else if (kind === "discard") {
      seat.river.push(tileName(event.tile, "discard.tile"));
      take(seat, [event.tile]);
    } else if (kind === "claim") {
      const meld = readMeld(event.meld, "claim.meld");
      const given = byPlayer.get(event.from);
      if (!given || !given.river.length) throw new Error(`player ${event.from} has no discard to be claimed`);
      given.river[given.river.length - 1] += CLAIMED_MARK;
      const claimed = meld.tiles.indexOf(tileName(event.tile, "claim.tile"));
      if (claimed < 0) throw new Error(`claim: ${event.tile} is not a tile of ${event.meld}`);
      seat.melds.push(event.meld);
      take(seat, meld.tiles.filter((_, i) => i !== claimed));
    } else if (kind === "concealed_kong") {
      if ("tile" in event) {
        const four = Array(4).fill(tileName(event.tile, "concealed_kong.tile"));
        seat.melds.push(formatMeld({ tiles: four, offer: null }));
        take(seat, four);
      } else {
        seat.hidden += 1;
        seat.count -= 4;
      }
    } else {
      throw new Error(`an event of unknown kind ${JSON.stringify(kind)}`);
    }
  }
  if (seats === null) throw new Error("no seats to follow (sync first)");
  const wild = new Set((view.wild_tiles || []).map((x) => tileName(x, "wild_tiles")));
  return seats.map((x) => writeSeat(x, wild));
}

/** `update` with a whole view, the only kind the pages read: as sent when its view has its
 * seats (a full update, or one of protocol version 1); else with the seats followed from
 * `last` (the last update taken, whole) if it is the next one (`seq` one more), or from
 * nothing (then only a hand's start can be followed), and without `players`. Throws when it
 * cannot be followed (the twin of server/client.py's `_whole_view`). */
export function wholeUpdate(last, update) {
  const view = update.view;
  if ("seats" in view) return update;
  const next = last && Number.isInteger(update.seq) && last.seq === update.seq - 1;
  const seats = follow(next ? last.view : null, update.events || [], view);
  const whole = { ...view, seats };
  delete whole.players;
  return { ...update, view: whole };
}

// ------------------------------------------------------------------- seats ---

// A seat while events change it: `melds` those the viewer may see, in the order declared;
// `hidden` the face-down kongs it may not; `concealed` the tiles (null: not the viewer's).

function emptySeat(player, wind, own) {
  if (typeof wind !== "string") throw new Error(`hand_start: no wind for player ${player}`);
  return { player, wind, count: 0, melds: [], hidden: 0, flowers: [], river: [], concealed: own ? [] : null };
}

function readSeat(seat) {
  const melds = [...seat.melds];
  const concealed = seat.concealed ?? null;
  return {
    player: seat.player,
    wind: seat.wind,
    count: count(seat.concealed_count, "seat.concealed_count"),
    melds: melds.filter((m) => m !== HIDDEN_KONG),
    hidden: melds.filter((m) => m === HIDDEN_KONG).length,
    flowers: [...seat.flowers],
    river: [...seat.river],
    concealed: concealed === null ? null : readTiles(concealed, "seat.concealed"),
  };
}

function writeSeat(seat, wild) {
  const out = {
    player: seat.player,
    wind: seat.wind,
    concealed_count: seat.count,
    melds: [...seat.melds, ...Array(seat.hidden).fill(HIDDEN_KONG)],
    flowers: seat.flowers,
    river: seat.river,
  };
  if (seat.concealed !== null) {
    out.concealed = formatTiles(seat.concealed.filter((x) => wild.has(x))) + formatTiles(seat.concealed.filter((x) => !wild.has(x)));
  }
  return out;
}

/** `tiles` leave the hand (the viewer's own tiles, when it sees them). */
function take(seat, tiles) {
  seat.count -= tiles.length;
  if (seat.concealed === null) return;
  for (const tile of tiles) {
    const i = seat.concealed.indexOf(tile);
    if (i < 0) throw new Error(`player ${seat.player} has no ${tile} to give up`);
    seat.concealed.splice(i, 1);
  }
}

/** The pung of `tile` becomes a kong; the added tile leaves the hand. */
/** `standing`: the exposed pung of `tile` becomes a kong, the added tile leaving the hand;
 * else that kong, robbed, is a pung again (the tile gone to the robber). */
function setKong(seat, tile, standing) {
  const [was, size] = standing ? ["pung", 4] : ["kong", 3];
  for (const [i, text] of seat.melds.entries()) {
    const meld = readMeld(text, "melds");
    if (meld.kind === was && meld.offer !== null && meld.tiles[0] === tile) {
      seat.melds[i] = formatMeld({ tiles: Array(size).fill(tile), offer: meld.offer });
      if (standing) take(seat, [tile]);
      return;
    }
  }
  throw new Error(`player ${seat.player} has no ${was} of ${tile}`);
}

// ------------------------------------------------------------- the notation ---

function tileName(name, what) {
  if (!KNOWN.has(name)) throw new Error(`${what}: ${JSON.stringify(name)} is not a tile`);
  return name;
}

function count(n, what) {
  if (!Number.isInteger(n)) throw new Error(`${what}: ${JSON.stringify(n)} is not a number of tiles`);
  return n;
}

/** Concealed tiles as written (held flowers first, then a run): their names. */
function readTiles(text, what) {
  if (typeof text !== "string") throw new Error(`${what}: ${JSON.stringify(text)} is not a tile run`);
  return parseTiles(text).map((x) => tileName(x, what));
}

/** A meld of a claim or a seat, checked as the server checks it (engine.wire.decode_meld):
 * a chow, a pung or a kong; only a concealed kong without an offer. */
function readMeld(text, what) {
  if (typeof text !== "string") throw new Error(`${what}: ${JSON.stringify(text)} is not a meld`);
  const meld = parseMeld(text);
  const tiles = meld.hidden ? [] : meld.tiles.map((x) => tileName(x, what)).sort((a, b) => tileRank(a) - tileRank(b));
  const same = tiles.every((x) => x === tiles[0]);
  const chow = tiles.length === 3 && chowTiles(tiles[0]).every((x, k) => x === tiles[k]);
  const kind = tiles.length === 4 && same ? "kong" : tiles.length === 3 && same ? "pung" : chow ? "chow" : null;
  if (kind === null) throw new Error(`${what} ${JSON.stringify(text)} is not a chow, pung or kong`);
  if (meld.offer === null && kind !== "kong") throw new Error(`${what} ${JSON.stringify(text)}: only a concealed kong has no offer`);
  return { kind, tiles, offer: meld.offer };
}

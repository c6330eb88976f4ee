// Tiles in the protocol's notation: runs ("123m456pEE"), melds ("[123m,1]", "[5555p]",
// "[????]"), read and written as the server writes them, the table's sort order, and the one
// tile template (an <img> of /tiles/X.svg with its name in the current language as alt text).
import { html } from "./vendor/lit-html.js";

const SUITS = "mps";
const HONOURS = "ESWNCFP";
export const HIDDEN = "back"; // a tile nobody may see: its back
export const ANY_WILD = "*"; // a wild tile standing for no kind in particular (a won hand's text)
/** Every tile's name, in the server's order (engine.tiles.NAMES): suits, honours, flowers. */
export const TILE_NAMES = [
  ...[...SUITS].flatMap((suit) => [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => `${n}${suit}`)),
  ...HONOURS,
  ...[1, 2, 3, 4, 5, 6, 7, 8].map((n) => `f${n}`),
];

/** The tiles of a run: "123m45pEEf1" → ["1m","2m","3m","4p","5p","E","E","f1"] ("*" is
 * `ANY_WILD`, written first by the server). Throws on
 * anything that is not the notation, quoting it, so a malformed view shows where. */
export function parseTiles(text) {
  const out = [];
  let digits = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c >= "1" && c <= "9") digits += c;
    else if (SUITS.includes(c) && digits) {
      for (const d of digits) out.push(d + c);
      digits = "";
    } else if (c === "f" && !digits && text[i + 1] >= "1" && text[i + 1] <= "8") {
      out.push(c + text[++i]);
    } else if ((HONOURS.includes(c) || c === ANY_WILD) && !digits) out.push(c);
    else throw new Error(`not a tile run: ${JSON.stringify(text)} (at ${i})`);
  }
  if (digits) throw new Error(`not a tile run: ${JSON.stringify(text)} (digits without a suit)`);
  return out;
}

/** A meld: "[123m,1]" → {tiles, offer: 1, kind: "chow", hidden: false, concealed: false}.
 * `offer`: for a chow which of its tiles was claimed (1..3); for a pung or kong who gave it
 * (1 the previous player, 2 the opposite one, 3 the next one). "[5555p]" is a concealed
 * kong, "[????]" another player's face-down kong (its tiles unknown). */
export function parseMeld(text) {
  const m = /^\[([^,\]]+)(?:,([1-3]))?\]$/.exec(text);
  if (!m) throw new Error(`not a meld: ${JSON.stringify(text)}`);
  if (m[1] === "????") {
    return { tiles: [HIDDEN, HIDDEN, HIDDEN, HIDDEN], offer: null, kind: "kong", hidden: true, concealed: true };
  }
  const tiles = parseTiles(m[1]);
  const kind = tiles.length === 4 ? "kong" : tiles[0] === tiles[1] ? "pung" : "chow";
  const offer = m[2] ? Number(m[2]) : null;
  return { tiles, offer, kind, hidden: false, concealed: offer === null };
}

/** A run as the server writes it (engine.notation.format_tiles): sorted, digits grouped
 * before their suit letter. ["E","2m","1m","f1","5p"] → "12m5pEf1". */
export function formatTiles(tiles) {
  let out = "";
  let run = "";
  let suit = "";
  for (const tile of [...tiles].sort((a, b) => tileRank(a) - tileRank(b))) {
    const suited = tile.length === 2 && SUITS.includes(tile[1]);
    if (run && (!suited || tile[1] !== suit)) {
      out += run + suit;
      run = "";
    }
    if (suited) {
      run += tile[0];
      suit = tile[1];
    } else out += tile;
  }
  return out + (run ? run + suit : "");
}

/** A meld as the server writes it (engine.hand.Meld): `parseMeld`'s inverse, from its
 * `tiles` and `offer` (null: a concealed kong). */
export function formatMeld({ tiles, offer, hidden = false }) {
  if (hidden) return "[????]";
  return `[${formatTiles(tiles)}${offer ? `,${offer}` : ""}]`;
}

/** Which tile of a meld shows the claim: the claimed one of a chow; for a pung or kong the
 * side it came from (previous player: left, opposite: middle, next player: right), as tables
 * lay them. -1 for a concealed meld. */
export function claimedIndex(meld) {
  if (meld.offer === null) return -1;
  if (meld.kind === "chow") return meld.offer - 1;
  return meld.offer === 1 ? 0 : meld.offer === 2 ? 1 : meld.tiles.length - 1;
}

/** A number that orders tiles as players sort them: characters, dots, bamboo, winds,
 * dragons, flowers. */
export function tileRank(tile) {
  if (tile.length === 2 && SUITS.includes(tile[1])) return SUITS.indexOf(tile[1]) * 10 + Number(tile[0]);
  if (HONOURS.includes(tile)) return 30 + HONOURS.indexOf(tile);
  if (tile[0] === "f") return 40 + Number(tile[1]);
  return tile === ANY_WILD ? -1 : 99;
}

/** Sorted copy of `tiles`, the wild ones (`wild`, a list of tile names) first, as the server
 * lists them and as players keep them. */
export function sortTiles(tiles, wild = []) {
  const key = (t) => (wild.includes(t) ? -100 : 0) + tileRank(t);
  return [...tiles].sort((a, b) => key(a) - key(b));
}

/** `tiles` without one copy of `tile` (the drawn tile is shown apart from the rest). */
export function withoutOne(tiles, tile) {
  const i = tiles.indexOf(tile);
  return i < 0 ? [...tiles] : [...tiles.slice(0, i), ...tiles.slice(i + 1)];
}

/** The three tiles of a chow from its lowest tile ("3p" → ["3p","4p","5p"]). */
export const chowTiles = (low) => [0, 1, 2].map((k) => `${Number(low[0]) + k}${low[1]}`);

/** The i18n key of a tile's name. */
export const tileKey = (tile) => (tile === HIDDEN ? "tile.back" : tile === ANY_WILD ? "tile.any_wild" : `tile.${tile}`);

/** One tile: `<img>` of its face, alt text in the current language; `wild` adds the wild
 * badge; `cls` more classes. */
export function tileImg(t, tile, { wild = false, cls = "", title = "" } = {}) {
  const name = t(tileKey(tile));
  if (tile === ANY_WILD) {
    return html`<span class="tile-wild any ${cls}" role="img" aria-label=${name} title=${title || name}><img class="tile" src="/tiles/back.svg" alt=""><img class="wild-badge" src="/tiles/wild.svg" alt=""></span>`;
  }
  const img = html`<img class="tile ${cls}" src="/tiles/${tile}.svg" alt=${name} title=${title || name} draggable="false">`;
  if (!wild) return img;
  return html`<span class="tile-wild ${cls}">${img}<img class="wild-badge" src="/tiles/wild.svg" alt=${t("tile.wild")}></span>`;
}

"""Shanten (向听数) and waits (听牌) for every hand form of Chinese Official Mahjong.

The shanten of a hand is how many tiles it is from ready (听牌): 0 is ready, -1 is
complete (和牌). A hand is a 34-slot count array of its standing tiles (立牌), with
``melds`` sets already declared (副露, concealed kongs included); it holds
``13 - 3 * melds`` tiles between turns, ``14 - 3 * melds`` after a draw. A
14-tile hand's shanten is that of its best 13-tile subset, or -1 when complete.

The forms (和牌型):

- regular (基本和型): four sets (面子: chows 顺子, pungs 刻子) and a pair (将);
- Seven Pairs (七对), Thirteen Orphans (十三幺), Honors and Knitted Tiles (全不靠,
  and Greater Honors and Knitted Tiles 七星不靠): fully concealed, no meld;
- Knitted Straight (组合龙): the nine tiles 147/258/369 of three different suits,
  plus a set and a pair; the set may be declared, so at most one meld.

The values and useful tiles (有效牌) are those of the reference calculator
(ChineseOfficialMahjongHelper, bound to Python as PyMahjongGB), and are tested
against it. Shanten counts blocks, as the reference does: it does not look at how
many copies of a tile are left. A hand whose only completion needs a fifth copy
of a tile it holds four of, like ``1111m`` with three melds, counts as ready
(shanten 0) but has no wait, since ``useful_tiles`` and ``waits`` never list a
tile the hand holds four of (the reference lists it when the hand is ready). The
counts see only the standing tiles: callers that know more (melds, discards) can
filter the lists further.

Speed: a hand is read as four parts, the three suits and the honors, each summed
up once per count pattern and cached: for the regular form a table saying, with or
without the pair and for each number of sets, the most partial sets (搭子: two tiles
of a set) the part can hold; for the special forms its pairs, terminals and knitted
tiles. Tables are interned as small ints and combined pairwise through a cache, so
a shanten is a handful of dict lookups once the caches are warm. The caches grow
with the patterns seen; a suit has at most about 400,000 patterns of up to 14
tiles, and play meets mostly the few thousand short ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import permutations
from typing import Final

from engine import forms
from engine.errors import InvalidHand
from engine.forms import HONORS, KNITTED
from engine.tiles import EAST, N_KINDS, TERMINALS_AND_HONORS

_KNITTED: Final = KNITTED  # the six knitted sequences 147/258/369 (组合龙)
# Which rank class (0: 147, 1: 258, 2: 369) each suit takes, in the order of ``KNITTED``.
_KNITTED_CLASSES: Final = tuple(permutations(range(3)))
_HONORS: Final = HONORS
_NEVER: Final = 99  # the shanten of a form the hand cannot take (too many melds)

# --- the regular form: tables -----------------------------------------------------------------
#
# A table is 10 ints: index ``pair * 5 + sets`` (pair 0 or 1, sets 0..4) holds the most partial
# sets that can go with them, or -1 when that many sets cannot be made. Partial sets are capped
# at ``4 - sets``: more can never count (see ``_value``), and the cap keeps the tables few (a
# hundred or so).

_Table = tuple[int, ...]

_EMPTY: Final[_Table] = (0, -1, -1, -1, -1, -1, -1, -1, -1, -1)

# Ways to use one copy of the lowest tile of a pattern: (tiles taken as (offset, copies),
# pair, sets, partial sets). Each copy of the lowest tile is the lowest tile of its block.
_Move = tuple[tuple[tuple[int, int], ...], int, int, int]
_HONOR_MOVES: Final[tuple[_Move, ...]] = (
    (((0, 1),), 0, 0, 0),  # left alone (孤张)
    (((0, 2),), 1, 0, 0),  # the pair (将)
    (((0, 2),), 0, 0, 1),  # two of a kind waiting for a third (对子搭子)
    (((0, 3),), 0, 1, 0),  # pung (刻子)
)
_SUIT_MOVES: Final[tuple[_Move, ...]] = (
    *_HONOR_MOVES,
    (((0, 1), (1, 1), (2, 1)), 0, 1, 0),  # chow (顺子)
    (((0, 1), (1, 1)), 0, 0, 1),  # two-sided or edge partial chow (两面, 边张)
    (((0, 1), (2, 1)), 0, 0, 1),  # closed partial chow (嵌张)
)

_tables: list[_Table] = []  # table id -> table
_table_ids: dict[_Table, int] = {}
_shanten_by_melds: list[tuple[int, ...]] = []  # table id -> regular shanten for 0..4 melds
_pattern_ids: dict[tuple[bytes, bool], int] = {}  # (pattern, chows allowed) -> table id
_sum_ids: dict[tuple[int, int], int] = {}  # two table ids -> the id of their combination


def _value(table: _Table, melds: int) -> int:
    """The regular shanten of a whole hand whose table is ``table``.

    With ``s`` sets (declared ones included), ``p`` partial sets and the pair ``h`` (0/1),
    shanten = 8 - 2s - min(p, 4 - s) - h: each missing set costs two tiles, one less when a
    partial set stands for it, and the pair one more tile.
    """
    best = _NEVER
    for index, partials in enumerate(table):
        sets = index % 5 + melds
        if partials >= 0 and sets <= 4:
            best = min(best, 8 - 2 * sets - min(partials, 4 - sets) - index // 5)
    return best


def _intern(table: _Table) -> int:
    found = _table_ids.get(table)
    if found is None:
        found = _table_ids[table] = len(_tables)
        _tables.append(table)
        _shanten_by_melds.append(tuple(_value(table, melds) for melds in range(5)))
    return found


def _pattern_id(pattern: bytes, chows: bool) -> int:
    """The table id of a count pattern: one suit's counts, or the honors' (no chows).

    Zeros at the ends are stripped first: blocks need all their tiles, so a table does not
    depend on where the pattern sits.
    """
    pattern = pattern.strip(b"\0")
    found = _pattern_ids.get((pattern, chows))
    if found is not None:
        return found
    best = [-1] * 10 if pattern else list(_EMPTY)
    moves = (_SUIT_MOVES if chows else _HONOR_MOVES) if pattern else ()
    for taken, pair, sets, partials in moves:
        rest = bytearray(pattern)
        if any(offset >= len(rest) or rest[offset] < n for offset, n in taken):
            continue
        for offset, n in taken:
            rest[offset] -= n
        for index, have in enumerate(_tables[_pattern_id(bytes(rest), chows)]):
            h, s = divmod(index, 5)
            if have < 0 or h + pair > 1 or s + sets > 4:
                continue
            target = (h + pair) * 5 + s + sets
            best[target] = max(best[target], min(have + partials, 4 - s - sets))
    found = _pattern_ids[pattern, chows] = _intern(tuple(best))
    return found


def _sum(a: int, b: int) -> int:
    """The table id of two disjoint parts of a hand taken together."""
    key = (a, b) if a <= b else (b, a)
    found = _sum_ids.get(key)
    if found is None:
        best = [-1] * 10
        for i, pa in enumerate(_tables[a]):
            if pa < 0:
                continue
            for j, pb in enumerate(_tables[b]):
                h, s = i // 5 + j // 5, i % 5 + j % 5
                if pb < 0 or h > 1 or s > 4:
                    continue
                target = h * 5 + s
                best[target] = max(best[target], min(pa + pb, 4 - s))
        found = _sum_ids[key] = _intern(tuple(best))
    return found


# --- parts of a hand: the three suits and the honors ------------------------------------------
#
# A part's summary holds what every form needs from it: its table id; its pairs (four of a kind
# count two); the terminal or honor kinds it holds (幺九) and 1 if one of them is held twice or
# more; for a suit, how many of its ranks 147, 258 and 369 it holds, and the table ids of the
# suit less one of each of those ranks, for the knitted straight (for the honors: 0s and the
# honors' own table id).

_Summary = tuple[int, int, int, int, int, int, int, int, int, int]
_Parts = tuple[_Summary, _Summary, _Summary, _Summary]

_suit_summaries: dict[bytes, _Summary] = {}
_honor_summaries: dict[bytes, _Summary] = {}


def _suit(counts: Sequence[int], start: int) -> _Summary:
    key = bytes(counts[start : start + 9])
    found = _suit_summaries.get(key)
    if found is None:
        knitted = [  # the suit less one of each rank 147, 258, 369 it holds
            bytes(n - 1 if n and rank % 3 == first else n for rank, n in enumerate(key))
            for first in range(3)
        ]
        found = _suit_summaries[key] = (
            _pattern_id(key, True),
            sum(n // 2 for n in key),
            (key[0] > 0) + (key[8] > 0),
            int(key[0] > 1 or key[8] > 1),
            3 - key[0::3].count(0),
            3 - key[1::3].count(0),
            3 - key[2::3].count(0),
            _pattern_id(knitted[0], True),
            _pattern_id(knitted[1], True),
            _pattern_id(knitted[2], True),
        )
    return found


def _honors(counts: Sequence[int]) -> _Summary:
    key = bytes(counts[EAST:N_KINDS])
    found = _honor_summaries.get(key)
    if found is None:
        table = _pattern_id(key, False)
        found = _honor_summaries[key] = (
            table,
            sum(n // 2 for n in key),
            7 - key.count(0),
            int(max(key) > 1),
            0,
            0,
            0,
            table,
            table,
            table,
        )
    return found


def _parts(counts: Sequence[int]) -> _Parts:
    try:  # the common case, inlined: every pattern seen before
        return (
            _suit_summaries[bytes(counts[0:9])],
            _suit_summaries[bytes(counts[9:18])],
            _suit_summaries[bytes(counts[18:27])],
            _honor_summaries[bytes(counts[EAST:N_KINDS])],
        )
    except KeyError:
        return _suit(counts, 0), _suit(counts, 9), _suit(counts, 18), _honors(counts)


def _regular(parts: _Parts, melds: int) -> int:
    m, p, s, z = parts
    return _shanten_by_melds[_sum(_sum(_sum(m[0], p[0]), s[0]), z[0])][melds]


def _seven_pairs(parts: _Parts) -> int:
    # Four of a kind count as two pairs, as in the reference (its seven_pairs_shanten starts a
    # new pair at every second copy) and in MCR scoring, where such a hand scores Seven Pairs
    # and Tile Hog (四归一).
    return 6 - sum(part[1] for part in parts)


def _thirteen_orphans(parts: _Parts) -> int:
    return 13 - sum(part[2] for part in parts) - max(part[3] for part in parts)


def _knitted_present(parts: _Parts) -> list[int]:
    """For each knitted sequence, how many of its nine tiles the hand holds."""
    m, p, s, _ = parts
    return [m[4 + a] + p[4 + b] + s[4 + c] for a, b, c in _KNITTED_CLASSES]


def _honors_and_knitted(parts: _Parts, present: list[int]) -> int:
    return 13 - parts[3][2] - max(present)


_draw_ids: dict[tuple[bytes, bool], tuple[tuple[int, int], ...]] = {}


def _draws(counts: Sequence[int], start: int) -> tuple[tuple[int, int], ...]:
    """For the part starting at ``start``: (offset, table id after drawing that tile) for the
    tiles that could change its table. Not a fifth copy, nor a tile that would stand alone
    (with no tile of its suit within two ranks, or a new honor): it joins no block."""
    chows = start < EAST
    key = bytes(counts[start : start + 9] if chows else counts[EAST:N_KINDS])
    found = _draw_ids.get((key, chows))
    if found is None:
        draws = []
        for offset, n in enumerate(key):
            near = key[max(offset - 2, 0) : offset + 3] if chows else b""
            if n == 4 or (n == 0 and not any(near)):
                continue
            drawn = bytearray(key)
            drawn[offset] += 1
            draws.append((offset, _pattern_id(bytes(drawn), chows)))
        found = _draw_ids[key, chows] = tuple(draws)
    return found


def _regular_useful(counts: list[int], melds: int, current: int) -> set[int]:
    """The tiles whose draw lowers the regular shanten ``current`` of ``counts``."""
    a, b, c, d = (part[0] for part in _parts(counts))
    # A draw changes one part: combine it with the other three.
    others = (_sum(_sum(b, c), d), _sum(_sum(a, c), d), _sum(_sum(a, b), d), _sum(_sum(a, b), c))
    useful = set()
    for start, rest in zip((0, 9, 18, EAST), others, strict=True):
        for offset, table in _draws(counts, start):
            if _shanten_by_melds[_sum(table, rest)][melds] < current:
                useful.add(start + offset)
    return useful


def _knitted_rest(counts: Sequence[int], seq: tuple[int, ...]) -> list[int]:
    """The hand without one of each tile of the knitted sequence it holds."""
    rest = list(counts)
    for tile in seq:
        if rest[tile]:
            rest[tile] -= 1
    return rest


def _knitted_straight(parts: _Parts, melds: int, present: list[int], below: int) -> int:
    """The knitted straight shanten, exact when it is less than ``below`` (else ``below``).

    For each sequence: the tiles it misses, plus the regular shanten of the other tiles
    with the nine counting as three sets. That regular part is at least -1, which bounds
    the sequences worth computing.
    """
    best = below
    m, p, s, z = parts
    for (a, b, c), have in zip(_KNITTED_CLASSES, present, strict=True):
        missing = 9 - have
        if missing - 1 < best:
            rest = _sum(_sum(_sum(m[7 + a], p[7 + b]), s[7 + c]), z[0])
            best = min(best, missing + _shanten_by_melds[rest][melds + 3])
    return best


def _knitted_useful(counts: list[int], melds: int, current: int, present: list[int]) -> set[int]:
    useful: set[int] = set()
    for seq, have in zip(_KNITTED, present, strict=True):
        missing = 9 - have
        if missing - 1 > current:
            continue
        rest = _knitted_rest(counts, seq)
        rest_shanten = _regular(_parts(rest), melds + 3)
        if missing + rest_shanten == current:
            useful.update(tile for tile in seq if not counts[tile])
            useful.update(_regular_useful(rest, melds + 3, rest_shanten))
    return {tile for tile in useful if counts[tile] < 4}


# --- checks and the public API ---------------------------------------------------------------


_COUNTS: Final = frozenset(range(5))


def _checked(counts: Sequence[int], melds: int, *sizes: int, wilds: int = 0) -> list[int]:
    """``counts`` as a list, after checking it is a hand of ``sizes`` tiles (melds apart),
    ``wilds`` wild tiles beside the counted ones (``engine.wilds``)."""
    hand = list(counts)
    if len(hand) != N_KINDS:
        raise InvalidHand(f"a hand is a count array of {N_KINDS} kinds, got {len(hand)} counts")
    if not 0 <= melds <= 4:
        raise InvalidHand(f"a hand has 0 to 4 declared melds, got {melds!r}")
    if not _COUNTS.issuperset(hand):
        raise InvalidHand(f"tile counts must be 0 to 4, got {hand!r}")
    n = sum(hand) + wilds
    if n + 3 * melds not in sizes:
        expected = " or ".join(str(size - 3 * melds) for size in sizes)
        included = " (wilds included)" if wilds else ""
        raise InvalidHand(f"with {melds} meld(s) a hand holds {expected} tiles{included}, got {n}")
    return hand


def regular_shanten(counts: Sequence[int], melds: int = 0) -> int:
    """Shanten of the regular form (基本和型): four sets and a pair, ``melds`` sets declared."""
    return _regular(_parts(_checked(counts, melds, 13, 14)), melds)


def seven_pairs_shanten(counts: Sequence[int]) -> int:
    """Shanten of Seven Pairs (七对); four of a kind count as two pairs."""
    return _seven_pairs(_parts(_checked(counts, 0, 13, 14)))


def thirteen_orphans_shanten(counts: Sequence[int]) -> int:
    """Shanten of Thirteen Orphans (十三幺): each terminal and honor, one of them twice."""
    return _thirteen_orphans(_parts(_checked(counts, 0, 13, 14)))


def honors_and_knitted_shanten(counts: Sequence[int]) -> int:
    """Shanten of Honors and Knitted Tiles (全不靠, 七星不靠).

    Fourteen different tiles from one knitted sequence (147, 258, 369 in three suits) and
    the seven honors.
    """
    parts = _parts(_checked(counts, 0, 13, 14))
    return _honors_and_knitted(parts, _knitted_present(parts))


def knitted_straight_shanten(counts: Sequence[int], melds: int = 0) -> int:
    """Shanten of the Knitted Straight form (组合龙): the nine knitted tiles, a set and a pair.

    The set may be declared, so ``melds`` is 0 or 1.
    """
    hand = _checked(counts, melds, 13, 14)
    if melds > 1:
        raise InvalidHand(f"a knitted straight hand has at most one declared meld, got {melds}")
    parts = _parts(hand)
    return _knitted_straight(parts, melds, _knitted_present(parts), _NEVER)


def _shanten(hand: list[int], melds: int) -> int:
    parts = _parts(hand)
    best = _regular(parts, melds)
    if best < 0 or melds > 1:
        return best
    present = _knitted_present(parts)
    if melds == 0:
        best = min(
            best,
            _seven_pairs(parts),
            _thirteen_orphans(parts),
            _honors_and_knitted(parts, present),
        )
    return _knitted_straight(parts, melds, present, best) if best >= 0 else best


def shanten(counts: Sequence[int], melds: int = 0) -> int:
    """Shanten over every form the hand may take: the special forms only without melds, the
    knitted straight with at most one."""
    return _shanten(_checked(counts, melds, 13, 14), melds)


def is_winning(counts: Sequence[int], melds: int = 0) -> bool:
    """Whether a hand of ``14 - 3 * melds`` standing tiles is complete in some form (和牌型).

    This is the shape only: the fan minimum is the scorer's business.
    """
    return forms.is_winning(_checked(counts, melds, 14), melds)


def useful_tiles(counts: Sequence[int], melds: int = 0) -> list[int]:
    """The tile kinds whose draw lowers the shanten of a ``13 - 3 * melds`` tile hand.

    Sorted; never a tile the hand holds four of. For a ready hand these are its waits.
    """
    hand = _checked(counts, melds, 13)
    parts = _parts(hand)
    present = _knitted_present(parts)
    regular = _regular(parts, melds)
    seven_pairs = orphans = honors_knitted = knitted = _NEVER
    if melds == 0:
        seven_pairs = _seven_pairs(parts)
        orphans = _thirteen_orphans(parts)
        honors_knitted = _honors_and_knitted(parts, present)
    best = min(regular, seven_pairs, orphans, honors_knitted)
    if melds <= 1:
        knitted = _knitted_straight(parts, melds, present, best + 1)
        best = min(best, knitted)

    useful: set[int] = set()
    if regular == best:
        useful |= _regular_useful(hand, melds, best)
    if seven_pairs == best:
        useful.update(tile for tile, n in enumerate(hand) if n % 2)
    if orphans == best:
        paired = max(part[3] for part in parts)
        useful.update(tile for tile in TERMINALS_AND_HONORS if not (paired and hand[tile]))
    if honors_knitted == best:
        for seq, have in zip(_KNITTED, present, strict=True):
            if have == max(present):
                useful.update(tile for tile in (*seq, *_HONORS) if not hand[tile])
    if knitted == best:
        useful |= _knitted_useful(hand, melds, best, present)
    return sorted(useful)


def waits(counts: Sequence[int], melds: int = 0) -> list[int]:
    """The tile kinds that complete a ``13 - 3 * melds`` tile hand (听牌), in any form.

    Sorted; empty when the hand is not ready. A tile the hand holds four of is never a
    wait, since there is no fifth copy. Whether copies remain elsewhere is not looked at.
    """
    hand = _checked(counts, melds, 13)
    return useful_tiles(hand, melds) if _shanten(hand, melds) == 0 else []


# --- part tables, for callers that count shanten on part of a hand ----------------------------
# ``engine.bots`` counts shanten on a flush suit or on the tiles beside a plan's fixed sets,
# which the whole-hand functions above do not do. These are the same cached tables:
# ``pattern_table(bytes(counts[lo:hi]), chows)`` is a part's table id, ``combine_tables(a, b)``
# the id of two parts taken together, ``TABLE_SHANTEN[table][melds]`` the regular shanten.
pattern_table: Final[Callable[[bytes, bool], int]] = _pattern_id
combine_tables: Final[Callable[[int, int], int]] = _sum
TABLE_SHANTEN: Final[list[tuple[int, ...]]] = _shanten_by_melds


def form_shanten(
    counts: Sequence[int], melds: int = 0, below: int = _NEVER
) -> tuple[int, int, int, int]:
    """The shanten of each form but Seven Pairs, unchecked, for ``engine.wilds``: regular,
    Thirteen Orphans, Honors and Knitted Tiles, Knitted Straight.

    ``counts`` may hold any number of tiles (a hand less its wild tiles); a form the melds
    rule out is ``_NEVER``. The knitted straight is exact when it is less than ``below`` and
    the other three (else it is that bound), as in ``shanten``.
    """
    parts = _parts(counts)
    regular = _regular(parts, melds)
    if melds > 1:
        return regular, _NEVER, _NEVER, _NEVER
    present = _knitted_present(parts)
    orphans = honors_knitted = _NEVER
    if melds == 0:
        orphans = _thirteen_orphans(parts)
        honors_knitted = _honors_and_knitted(parts, present)
    bound = min(below, regular, orphans, honors_knitted)
    return regular, orphans, honors_knitted, _knitted_straight(parts, melds, present, bound)


def form_useful(counts: Sequence[int], melds: int, best: int) -> set[int]:
    """The tiles whose draw lowers each form but Seven Pairs whose shanten is ``best``, as in
    ``useful_tiles``, unchecked, for ``engine.wilds`` (may list a tile held four times)."""
    hand = list(counts)
    parts = _parts(hand)
    useful: set[int] = set()
    if _regular(parts, melds) == best:
        useful |= _regular_useful(hand, melds, best)
    if melds > 1:
        return useful
    present = _knitted_present(parts)
    if melds == 0:
        if _thirteen_orphans(parts) == best:
            paired = max(part[3] for part in parts)
            useful.update(tile for tile in TERMINALS_AND_HONORS if not (paired and hand[tile]))
        if _honors_and_knitted(parts, present) == best:
            for seq, have in zip(_KNITTED, present, strict=True):
                if have == max(present):
                    useful.update(tile for tile in (*seq, *_HONORS) if not hand[tile])
    if _knitted_straight(parts, melds, present, best + 1) == best:
        useful |= _knitted_useful(hand, melds, best, present)
    return useful

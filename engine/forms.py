"""Winning hand forms (和牌型): readings, completeness and waits.

The forms of MCR: regular (4 sets + a pair, 基本和型), Seven Pairs (七对),
Thirteen Orphans (十三幺), Honors and Knitted Tiles (全不靠 / 七星不靠) and
Knitted Straight with a set and a pair (组合龙). ``counts`` are 34-slot arrays
of the concealed tiles; ``melds`` is the number of declared sets beside them.

Regular hands are read one suit at a time: the readings, completeness and
waits of a suit's 9 (or 7 honor) counts are cached by pattern, so a whole hand
is four dictionary lookups.

Waits here are *formal* (by shape): a tile counts even when the hand holds
all four copies of it (ruling 2 of docs/rulings.md). ``engine.shanten``
gives the playable waits.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from engine.tiles import EAST, N_KINDS, Tile

# A set is ``(kind, tile, concealed)``; ``tile`` is the lowest tile of a chow.
CHOW, PUNG, KONG, PAIR = 0, 1, 2, 3
Set = tuple[int, int, bool]
Reading = tuple[tuple[Set, ...], int]  # concealed sets, pair tile (-1: none)

# The four groups of a hand: three suits and the honors.
GROUPS = ((0, 9, False), (9, 18, False), (18, 27, False), (27, 34, True))

# The six knitted sequences 147/258/369 over the three suits (组合龙).
KNITTED: tuple[tuple[Tile, ...], ...] = tuple(
    tuple(suit * 9 + r for suit, start in enumerate(starts) for r in (start, start + 3, start + 6))
    for starts in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))
)
THIRTEEN: tuple[Tile, ...] = (0, 8, 9, 17, 18, 26, *range(EAST, N_KINDS))
HONORS: tuple[Tile, ...] = tuple(range(EAST, N_KINDS))


@lru_cache(maxsize=1 << 16)
def suit_readings(pattern: tuple[int, ...], base: int, honors: bool) -> tuple[Reading, ...]:
    """Every way to read one group's tiles as sets and at most one pair, each once."""
    out: list[Reading] = []
    work = list(pattern)
    sets: list[Set] = []

    def walk(i: int, pair: int) -> None:
        while i < len(work) and work[i] == 0:
            i += 1
        if i == len(work):
            out.append((tuple(sorted(sets)), pair))
            return
        tile = base + i
        if work[i] >= 3:
            work[i] -= 3
            sets.append((PUNG, tile, True))
            walk(i, pair)
            sets.pop()
            work[i] += 3
        if not honors and i <= 6 and work[i + 1] and work[i + 2]:
            for k in (0, 1, 2):
                work[i + k] -= 1
            sets.append((CHOW, tile, True))
            walk(i, pair)
            sets.pop()
            for k in (0, 1, 2):
                work[i + k] += 1
        if pair < 0 and work[i] >= 2:
            work[i] -= 2
            walk(i, tile)
            work[i] += 2

    walk(0, -1)
    return tuple(dict.fromkeys(out))  # a pair and a chow at one tile are found in both orders


@lru_cache(maxsize=1 << 16)
def _shape(pattern: tuple[int, ...], honors: bool) -> tuple[int, int, int]:
    """``(kind, waits_without_pair, waits_with_pair)`` of one group's pattern.

    ``kind`` is -1 when the tiles cannot be read as sets, 0 when they read as
    sets only, 1 as sets and one pair. The waits are bit masks of the indexes
    whose addition makes the pattern kind 0 or kind 1.
    """
    readings = suit_readings(pattern, 0, honors)
    kind = -1 if not readings else (1 if readings[0][1] >= 0 else 0)
    to_sets = to_pair = 0
    work = list(pattern)
    for i in range(len(work)):
        if work[i] >= 5:
            continue
        work[i] += 1
        grown = suit_readings(tuple(work), 0, honors)
        work[i] -= 1
        if grown:
            if grown[0][1] >= 0:
                to_pair |= 1 << i
            else:
                to_sets |= 1 << i
    return kind, to_sets, to_pair


def _shapes(counts: Sequence[int]) -> list[tuple[int, int, int]]:
    return [_shape(tuple(counts[lo:hi]), honors) for lo, hi, honors in GROUPS]


def regular_readings(counts: Sequence[int]) -> list[Reading]:
    """Every reading of ``counts`` as sets and exactly one pair (unordered)."""
    result: list[Reading] = [((), -1)]
    for lo, hi, honors in GROUPS:
        options = suit_readings(tuple(counts[lo:hi]), lo, honors)
        if not options:
            return []
        result = [
            (sets + more, pair if pair >= 0 else p)
            for sets, p in result
            for more, pair in options
            if not (pair >= 0 and p >= 0)
        ]
    return [reading for reading in result if reading[1] >= 0]


def is_regular(counts: Sequence[int]) -> bool:
    """4 - melds sets and a pair (the tile count is the caller's business)."""
    pairs = 0
    for kind, _, _ in _shapes(counts):
        if kind < 0:
            return False
        pairs += kind
    return pairs == 1


def regular_waits(counts: Sequence[int]) -> set[Tile]:
    """Formal waits of a hand one tile short of the regular form."""
    shapes = _shapes(counts)
    waits: set[Tile] = set()
    for g, (lo, _, _) in enumerate(GROUPS):
        others = [shapes[k][0] for k in range(4) if k != g]
        if min(others) < 0:
            continue
        pairs = sum(others)
        if pairs > 1:
            continue
        mask = shapes[g][2] if pairs == 0 else shapes[g][1]
        i = 0
        while mask:
            if mask & 1:
                waits.add(lo + i)
            mask >>= 1
            i += 1
    return waits


def is_seven_pairs(counts: Sequence[int]) -> bool:
    """Seven pairs; four of a kind counts as two pairs (ruling 6)."""
    return sum(counts) == 14 and all(n in (0, 2, 4) for n in counts)


def is_thirteen_orphans(counts: Sequence[int]) -> bool:
    return (
        sum(counts) == 14
        and all(counts[t] for t in THIRTEEN)
        and (sum(counts[t] for t in THIRTEEN) == 14)
    )


def is_honors_and_knitted(counts: Sequence[int]) -> bool:
    """14 different tiles: knitted 147/258/369 in the three suits and honors (全不靠)."""
    if sum(counts) != 14 or any(n > 1 for n in counts):
        return False
    suited = {t for t in range(EAST) if counts[t]}
    return any(suited.issubset(seq) for seq in KNITTED)


def knitted_straight_rest(counts: Sequence[int]) -> tuple[tuple[Tile, ...], list[int]] | None:
    """The knitted straight in ``counts`` and the tiles beside it, if those read regular."""
    for seq in KNITTED:
        if all(counts[t] for t in seq):
            rest = list(counts)
            for t in seq:
                rest[t] -= 1
            return (seq, rest) if is_regular(rest) else None
    return None


def is_winning(counts: Sequence[int], melds: int = 0) -> bool:
    """Whether ``counts`` (14 - 3 * melds tiles) is a complete hand in any form."""
    if is_regular(counts):
        return True
    if melds == 0 and (
        is_seven_pairs(counts) or is_honors_and_knitted(counts) or is_thirteen_orphans(counts)
    ):
        return True
    return melds <= 1 and _kinds(counts) >= 9 and knitted_straight_rest(counts) is not None


def _kinds(counts: Sequence[int]) -> int:
    return sum(1 for n in counts if n)


def formal_waits(counts: Sequence[int], melds: int = 0) -> set[Tile]:
    """Every tile that makes ``counts`` (13 - 3 * melds tiles) a complete hand, by shape."""
    waits = regular_waits(counts)
    if melds <= 1 and _kinds(counts) >= 8:
        waits |= _knitted_straight_waits(counts)
    if melds == 0:
        odd = [t for t in range(N_KINDS) if counts[t] % 2]
        if len(odd) == 1:
            waits.add(odd[0])  # seven pairs
        if _kinds(counts) >= 12:
            waits |= _thirteen_orphans_waits(counts) | _honors_and_knitted_waits(counts)
    return waits


def _thirteen_orphans_waits(counts: Sequence[int]) -> set[Tile]:
    if sum(counts[t] for t in THIRTEEN) != 13:
        return set()
    missing = [t for t in THIRTEEN if not counts[t]]
    if not missing:
        return set(THIRTEEN)
    return set(missing) if len(missing) == 1 else set()


def _honors_and_knitted_waits(counts: Sequence[int]) -> set[Tile]:
    if any(n > 1 for n in counts):
        return set()
    suited = {t for t in range(EAST) if counts[t]}
    waits: set[Tile] = set()
    for seq in KNITTED:
        if suited.issubset(seq):
            waits.update(t for t in (*seq, *HONORS) if not counts[t])
    return waits


def _knitted_straight_waits(counts: Sequence[int]) -> set[Tile]:
    waits: set[Tile] = set()
    for seq in KNITTED:
        missing = [t for t in seq if not counts[t]]
        if len(missing) > 1:
            continue
        rest = list(counts)
        for t in seq:
            if counts[t]:
                rest[t] -= 1
        if missing:
            if is_regular(rest):
                waits.add(missing[0])
        else:
            waits |= regular_waits(rest)
    return waits

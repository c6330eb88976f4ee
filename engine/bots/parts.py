"""Count tables for reading a hand in parts: a suit, the honors, sets of tiles as masks.

``engine.shanten`` reads a hand as four groups (the three suits, where chows are allowed, and
the honors), each a count pattern with an interned table id; two ids combine into the id of
the two parts taken together, and ``SHANTEN_OF[id][melds]`` is the regular shanten (向听数)
of that many tiles with ``melds`` sets declared. The plan strategy counts shanten on part of
a hand (a flush suit, the tiles beside a plan's fixed sets), so it needs these tables one
group at a time; the functions here memoise every step (a discard changes one group, so it
costs a lookup or two).

Sets of tiles are also kept as ints with a byte per tile (bit ``8 * t`` for tile ``t``):
``at_least`` turns a count array into one in a single C call (``bytes.translate``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from engine import shanten as _shanten
from engine.tiles import EAST, N_KINDS

_pattern_id = _shanten.pattern_table
_sum = _shanten.combine_tables
SHANTEN_OF: Final = _shanten.TABLE_SHANTEN  # regular shanten by table id, then declared sets

# Four groups: the three suits (chows allowed) and the honors.
GROUP_OF: Final = tuple(t // 9 if t < EAST else 3 for t in range(N_KINDS))
GROUP_START: Final = (0, 9, 18, EAST)
GROUP_END: Final = (9, 18, 27, N_KINDS)
ALL_GROUPS: Final = 0b1111
EMPTY_ID: Final = _pattern_id(b"", True)

_ids: dict[tuple[bytes, bool], int] = {}


def table_id(pattern: bytes, chows: bool) -> int:
    """The table id of one group's count pattern, read with or without chows."""
    key = (pattern, chows)
    found = _ids.get(key)
    if found is None:
        found = _ids[key] = _pattern_id(pattern, chows)
    return found


# ``engine.shanten`` interns a hundred or so tables: the sums of two are memoised here in a
# flat list, ids below ``_SUM_SPAN`` (a dictionary beyond, should there ever be more).
_SUM_SPAN: Final = 256
_sum_list: list[int] = [-1] * (_SUM_SPAN * _SUM_SPAN)
_sum_dict: dict[tuple[int, int], int] = {}


def join(a: int, b: int) -> int:
    """The table id of two parts taken together."""
    if a < _SUM_SPAN and b < _SUM_SPAN:
        index = a * _SUM_SPAN + b
        found = _sum_list[index]
        if found < 0:
            found = _sum_list[index] = _sum(a, b)
        return found
    key = (a, b)
    found = _sum_dict.get(key, -1)
    if found < 0:
        found = _sum_dict[key] = _sum(a, b)
    return found


def join4(ids: Sequence[int]) -> int:
    """The table id of the four groups taken together."""
    return join(join(ids[0], ids[1]), join(ids[2], ids[3]))


def patterns_of(counts: Sequence[int]) -> list[bytes]:
    """The count patterns of the four groups of a 34-slot count array."""
    return [bytes(counts[0:9]), bytes(counts[9:18]), bytes(counts[18:27]), bytes(counts[27:34])]


def group_ids(patterns: Sequence[bytes]) -> list[int]:
    """The table ids of the four groups' patterns (chows in the suits, none in the honors)."""
    return [
        table_id(patterns[0], True),
        table_id(patterns[1], True),
        table_id(patterns[2], True),
        table_id(patterns[3], False),
    ]


_grow_cache: dict[tuple[bytes, bool], tuple[tuple[int, int], ...]] = {}


def grow(pattern: bytes, chows: bool) -> tuple[tuple[int, int], ...]:
    """(offset, table id after drawing it) for the draws that may join a block of the group:
    not a fifth copy, not a tile with no neighbour (a new single joins nothing)."""
    key = (pattern, chows)
    found = _grow_cache.get(key)
    if found is None:
        out = []
        for offset, n in enumerate(pattern):
            if n == 4:
                continue
            if n == 0 and not (chows and any(pattern[max(offset - 2, 0) : offset + 3])):
                continue
            grown = bytearray(pattern)
            grown[offset] += 1
            out.append((offset, table_id(bytes(grown), chows)))
        found = _grow_cache[key] = tuple(out)
    return found


_shrink_cache: dict[tuple[bytes, bool], tuple[int, ...]] = {}


def shrink(pattern: bytes, chows: bool) -> tuple[int, ...]:
    """For each offset, the table id once one tile there is taken away (-1: none there)."""
    key = (pattern, chows)
    found = _shrink_cache.get(key)
    if found is None:
        out = []
        for offset, n in enumerate(pattern):
            if not n:
                out.append(-1)
                continue
            shrunk = bytearray(pattern)
            shrunk[offset] -= 1
            out.append(table_id(bytes(shrunk), chows))
        found = _shrink_cache[key] = tuple(out)
    return found


# ------------------------------------------------------------ tile masks ---

_AT_LEAST: Final = tuple(bytes(int(n >= k) for n in range(256)) for k in range(5))


def tile_mask(tiles: Iterable[int]) -> int:
    """A set of tiles as an int with a byte per tile (see ``at_least``)."""
    return sum(1 << (8 * t) for t in set(tiles))


_HALF: Final = bytes(n >> 1 for n in range(256))


def pairs(counts: Sequence[int]) -> int:
    """The pairs in a count array (four of a kind: two), summed in C."""
    return sum(bytes(counts).translate(_HALF))


def at_least(counts: bytes, k: int) -> int:
    """The tiles of which ``counts`` holds ``k`` or more, as a mask."""
    return int.from_bytes(counts.translate(_AT_LEAST[k]), "little")

"""Fan tables: plain lists of counts indexed like ``Fan``, the ids of its members, their points."""

from __future__ import annotations

from importlib.machinery import EXTENSION_SUFFIXES
from itertools import compress
from typing import Final

from engine.fans import Fan

# ---------------------------------------------------------------- fan ids ---
# Fan tables are plain lists indexed by these ints (the order of ``Fan``).
FANS: Final[tuple[Fan, ...]] = tuple(Fan)
# Written out, each a ``Final`` int: compiled, a use is the constant itself (a module
# global that is not ``Final`` is looked up in the module's dict at every use).
# ``tests/engine/test_exclusions.py`` checks each against its ``Fan``.
BIG_FOUR_WINDS: Final = 0
BIG_THREE_DRAGONS: Final = 1
ALL_GREEN: Final = 2
NINE_GATES: Final = 3
FOUR_KONGS: Final = 4
SEVEN_SHIFTED_PAIRS: Final = 5
THIRTEEN_ORPHANS: Final = 6
ALL_TERMINALS: Final = 7
LITTLE_FOUR_WINDS: Final = 8
LITTLE_THREE_DRAGONS: Final = 9
ALL_HONORS: Final = 10
FOUR_CONCEALED_PUNGS: Final = 11
PURE_TERMINAL_CHOWS: Final = 12
QUADRUPLE_CHOW: Final = 13
FOUR_PURE_SHIFTED_PUNGS: Final = 14
FOUR_PURE_SHIFTED_CHOWS: Final = 15
THREE_KONGS: Final = 16
ALL_TERMINALS_AND_HONORS: Final = 17
SEVEN_PAIRS: Final = 18
GREATER_HONORS_AND_KNITTED_TILES: Final = 19
ALL_EVEN_PUNGS: Final = 20
FULL_FLUSH: Final = 21
PURE_TRIPLE_CHOW: Final = 22
PURE_SHIFTED_PUNGS: Final = 23
UPPER_TILES: Final = 24
MIDDLE_TILES: Final = 25
LOWER_TILES: Final = 26
PURE_STRAIGHT: Final = 27
THREE_SUITED_TERMINAL_CHOWS: Final = 28
PURE_SHIFTED_CHOWS: Final = 29
ALL_FIVE: Final = 30
TRIPLE_PUNG: Final = 31
THREE_CONCEALED_PUNGS: Final = 32
LESSER_HONORS_AND_KNITTED_TILES: Final = 33
KNITTED_STRAIGHT: Final = 34
UPPER_FOUR: Final = 35
LOWER_FOUR: Final = 36
BIG_THREE_WINDS: Final = 37
MIXED_STRAIGHT: Final = 38
REVERSIBLE_TILES: Final = 39
MIXED_TRIPLE_CHOW: Final = 40
MIXED_SHIFTED_PUNGS: Final = 41
CHICKEN_HAND: Final = 42
LAST_TILE_DRAW: Final = 43
LAST_TILE_CLAIM: Final = 44
OUT_WITH_REPLACEMENT_TILE: Final = 45
ROBBING_THE_KONG: Final = 46
ALL_PUNGS: Final = 47
HALF_FLUSH: Final = 48
MIXED_SHIFTED_CHOWS: Final = 49
ALL_TYPES: Final = 50
MELDED_HAND: Final = 51
TWO_CONCEALED_KONGS: Final = 52
TWO_DRAGONS_PUNGS: Final = 53
OUTSIDE_HAND: Final = 54
FULLY_CONCEALED_HAND: Final = 55
TWO_MELDED_KONGS: Final = 56
LAST_TILE: Final = 57
DRAGON_PUNG: Final = 58
PREVALENT_WIND: Final = 59
SEAT_WIND: Final = 60
CONCEALED_HAND: Final = 61
ALL_CHOWS: Final = 62
TILE_HOG: Final = 63
DOUBLE_PUNG: Final = 64
TWO_CONCEALED_PUNGS: Final = 65
CONCEALED_KONG: Final = 66
ALL_SIMPLES: Final = 67
PURE_DOUBLE_CHOW: Final = 68
MIXED_DOUBLE_CHOW: Final = 69
SHORT_STRAIGHT: Final = 70
TWO_TERMINAL_CHOWS: Final = 71
PUNG_OF_TERMINALS_OR_HONORS: Final = 72
MELDED_KONG: Final = 73
ONE_VOIDED_SUIT: Final = 74
NO_HONORS: Final = 75
EDGE_WAIT: Final = 76
CLOSED_WAIT: Final = 77
SINGLE_WAIT: Final = 78
SELF_DRAWN: Final = 79
FLOWER_TILES: Final = 80
CONCEALED_KONG_AND_MELDED_KONG: Final = 81
# the starred fans of document 000 (rule sets with ``extra_fans``)
HEAVENLY_HAND: Final = 82
EARTHLY_HAND: Final = 83
HUMAN_HAND: Final = 84
BIG_FOUR_WINDS_AND_GREEN_DRAGON: Final = 85
FOUR_WILDS: Final = 86
FOUR_MIXED_SUIT_SHIFTED_PUNGS: Final = 87
MIXED_SUIT_SHIFTED_PUNGS: Final = 88
FOUR_MIXED_SUIT_SHIFTED_CHOWS: Final = 89
MIXED_SUIT_SHIFTED_CHOWS: Final = 90
PAIR_OF_2_5_OR_8: Final = 91
PAIR_OF_1_OR_9: Final = 92
SEAT_FLOWER: Final = 93
N_FANS: Final = len(FANS)
POINTS: Final[tuple[int, ...]] = tuple(fan.points for fan in FANS)

FanTable = list[int]


# ------------------------------------------------------------- the public ---

# Finding the few fans a table counts among its ~90 entries: compiled, a loop over the entries
# is native code, the quickest way; interpreted, ``compress`` picks them out in C, three times
# as fast as a loop (and as a loop's instructions compiled, ``compress`` costs five times).
COMPILED: Final = __file__.endswith(tuple(EXTENSION_SUFFIXES))


def _counted(table: FanTable) -> list[int]:
    """The ids of the fans ``table`` counts (its entries that are not 0), in order."""
    if COMPILED:
        return _counted_by_loop(table)
    return list(compress(_FAN_IDS, table))


def _total(table: FanTable) -> int:
    """The points of a fan table (the calculator totals every reading)."""
    if COMPILED:
        return _total_by_loop(table)
    return sum([POINTS[i] * table[i] for i in compress(_FAN_IDS, table)])


def _blank(table: FanTable) -> bool:
    """Whether ``table`` counts no fan (its entries all 0)."""
    if COMPILED:
        return all(not n for n in table)  # (a native loop, compiled: ``any`` is a call)
    return not any(table)


# The loops the compiled engine runs (the tests check them against the others).


def _counted_by_loop(table: FanTable) -> list[int]:
    return [i for i, n in enumerate(table) if n]


def _total_by_loop(table: FanTable) -> int:
    total = 0
    for i, n in enumerate(table):
        if n:
            total += POINTS[i] * n
    return total


_FAN_IDS: Final = range(N_FANS)

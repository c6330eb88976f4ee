"""Fan tables: plain lists of counts indexed like ``Fan``, the ids of its members, their points."""

from __future__ import annotations

from itertools import compress
from operator import mul

from engine.fans import Fan

# ---------------------------------------------------------------- fan ids ---
# Fan tables are plain lists indexed by these ints (the order of ``Fan``).
FANS: tuple[Fan, ...] = tuple(Fan)
(
    BIG_FOUR_WINDS, BIG_THREE_DRAGONS, ALL_GREEN, NINE_GATES, FOUR_KONGS, SEVEN_SHIFTED_PAIRS,
    THIRTEEN_ORPHANS, ALL_TERMINALS, LITTLE_FOUR_WINDS, LITTLE_THREE_DRAGONS, ALL_HONORS,
    FOUR_CONCEALED_PUNGS, PURE_TERMINAL_CHOWS, QUADRUPLE_CHOW, FOUR_PURE_SHIFTED_PUNGS,
    FOUR_PURE_SHIFTED_CHOWS, THREE_KONGS, ALL_TERMINALS_AND_HONORS, SEVEN_PAIRS,
    GREATER_HONORS_AND_KNITTED_TILES, ALL_EVEN_PUNGS, FULL_FLUSH, PURE_TRIPLE_CHOW,
    PURE_SHIFTED_PUNGS, UPPER_TILES, MIDDLE_TILES, LOWER_TILES, PURE_STRAIGHT,
    THREE_SUITED_TERMINAL_CHOWS, PURE_SHIFTED_CHOWS, ALL_FIVE, TRIPLE_PUNG, THREE_CONCEALED_PUNGS,
    LESSER_HONORS_AND_KNITTED_TILES, KNITTED_STRAIGHT, UPPER_FOUR, LOWER_FOUR, BIG_THREE_WINDS,
    MIXED_STRAIGHT, REVERSIBLE_TILES, MIXED_TRIPLE_CHOW, MIXED_SHIFTED_PUNGS, CHICKEN_HAND,
    LAST_TILE_DRAW, LAST_TILE_CLAIM, OUT_WITH_REPLACEMENT_TILE, ROBBING_THE_KONG, ALL_PUNGS,
    HALF_FLUSH, MIXED_SHIFTED_CHOWS, ALL_TYPES, MELDED_HAND, TWO_CONCEALED_KONGS,
    TWO_DRAGONS_PUNGS, OUTSIDE_HAND, FULLY_CONCEALED_HAND, TWO_MELDED_KONGS, LAST_TILE,
    DRAGON_PUNG, PREVALENT_WIND, SEAT_WIND, CONCEALED_HAND, ALL_CHOWS, TILE_HOG, DOUBLE_PUNG,
    TWO_CONCEALED_PUNGS, CONCEALED_KONG, ALL_SIMPLES, PURE_DOUBLE_CHOW, MIXED_DOUBLE_CHOW,
    SHORT_STRAIGHT, TWO_TERMINAL_CHOWS, PUNG_OF_TERMINALS_OR_HONORS, MELDED_KONG,
    ONE_VOIDED_SUIT, NO_HONORS, EDGE_WAIT, CLOSED_WAIT, SINGLE_WAIT, SELF_DRAWN, FLOWER_TILES,
    CONCEALED_KONG_AND_MELDED_KONG,
    # the starred fans of document 000 (rule sets with ``extra_fans``)
    HEAVENLY_HAND, EARTHLY_HAND, HUMAN_HAND, BIG_FOUR_WINDS_AND_GREEN_DRAGON, FOUR_WILDS,
    FOUR_MIXED_SUIT_SHIFTED_PUNGS, MIXED_SUIT_SHIFTED_PUNGS, FOUR_MIXED_SUIT_SHIFTED_CHOWS,
    MIXED_SUIT_SHIFTED_CHOWS, PAIR_OF_2_5_OR_8, PAIR_OF_1_OR_9, SEAT_FLOWER,
) = range(len(FANS))  # fmt: skip
assert FANS[SEAT_FLOWER] is Fan.SEAT_FLOWER
assert FANS[CONCEALED_KONG_AND_MELDED_KONG] is Fan.CONCEALED_KONG_AND_MELDED_KONG
assert FANS[PURE_DOUBLE_CHOW] is Fan.PURE_DOUBLE_CHOW
N_FANS = len(FANS)
POINTS: tuple[int, ...] = tuple(fan.points for fan in FANS)

FanTable = list[int]


# ------------------------------------------------------------- the public ---


def _total(table: FanTable) -> int:
    """The points of a fan table. A table holds a handful of fans among ~90 entries: the
    points of the entries that count times their counts, both picked out in C (about twice
    as fast as multiplying every entry; the calculator totals every reading)."""
    return sum(map(mul, compress(POINTS, table), filter(None, table)))

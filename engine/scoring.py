"""The fan calculator (算番): the fans of a winning hand and its total.

How a hand is scored:

1. Special forms first: Seven Pairs / Seven Shifted Pairs, Honors and Knitted
   Tiles, Thirteen Orphans, Knitted Straight with a set and a pair, Nine Gates.
2. Otherwise (and also for Seven Pairs, which a regular reading can beat) every
   reading of the standing tiles as sets and a pair is scored, and the highest
   total counts (就高不就低, highest-value principle).
3. Each reading is scored by small detectors that write a fan table (a list of
   counts indexed like ``Fan``), then the exclusions of the rule book (不计,
   non-repetition principle) are applied in ``_exclude``.

Fans that depend only on which tiles the hand holds (suits, terminals, ranges)
are computed once per hand; fans of the sets (chows, pungs, kongs) once per
reading. The chow and pung families follow the non-separation, non-identical
and account-once principles as the reference calculators apply them: a fan of
four sets excludes those of three and two; with a fan of three chows the fourth
chow may combine once; without one, the 1-fan pairs of chows are limited by how
many chows are combined (see ``_four_chows``).

Where the rule book leaves a choice, the decisions are written down in
``docs/rulings.md``; this module cites them as "ruling N".
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from heapq import heappop, heappush, merge
from itertools import chain, compress, product
from itertools import count as numbering
from operator import mul

from engine.errors import InvalidHand, NotWinning
from engine.fans import Fan
from engine.forms import (
    CHOW,
    GROUPS,
    KONG,
    PUNG,
    Reading,
    Set,
    formal_waits,
    is_honors_and_knitted,
    is_seven_pairs,
    is_thirteen_orphans,
    knitted_straight_rest,
    lane_mask,
    lanes,
    regular_readings,
)
from engine.hand import Hand, MeldKind
from engine.rules import MCR, RuleSet
from engine.tiles import (
    EAST,
    GREEN,
    N_KINDS,
    NORTH,
    RED,
    WHITE,
    WILD,
    Tile,
    Wind,
)
from engine.wild_scoring import (
    Substitution,
    ambiguous_chow_masks,
    caps_of,
    regular_parts,
    seven_pairs_substitutions,
    special_substitutions,
    waits_only_on,
)

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

# ------------------------------------------------------------------ input ---


@dataclass(frozen=True, slots=True)
class WinContext:
    """How and where the hand was won: everything but the tiles."""

    self_drawn: bool = False  # 自摸
    last_of_kind: bool = False  # 和绝张: the other three copies were visible
    kong: bool = False  # 杠上开花 when self-drawn, 抢杠和 when on a discard
    wall_last: bool = False  # 妙手回春 when self-drawn, 海底捞月 when on a discard
    seat_wind: Wind = Wind.EAST
    round_wind: Wind = Wind.EAST
    flowers: int = 0
    # Scored only by a rule set with ``extra_fans`` (document 000, the fans marked *):
    heavenly: bool = False  # 天和: the dealer won on the initial 14 tiles
    earthly: bool = False  # 地和: won on the dealer's first discard
    human: bool = False  # 人和: a non-dealer won before its first discard, no claim made yet
    seat_flowers: int = 0  # 季花: how many of the ``flowers`` are the winner's seat's (0..2)

    def __post_init__(self) -> None:
        if not 0 <= self.flowers <= 8:
            raise InvalidHand(f"flowers must be 0..8, got {self.flowers!r}")
        if not 0 <= self.seat_flowers <= min(2, self.flowers):
            raise InvalidHand(
                f"seat_flowers must be 0..2 and at most flowers ({self.flowers}), "
                f"got {self.seat_flowers!r}"
            )
        if self.heavenly + self.earthly + self.human > 1:
            raise InvalidHand("at most one of heavenly, earthly and human can be set")


@dataclass(frozen=True, slots=True)
class FanCount:
    fan: Fan
    count: int = 1

    @property
    def points(self) -> int:
        """Points of this entry (the fan's value times its count)."""
        return self.fan.points * self.count


@dataclass(frozen=True, slots=True)
class Score:
    fans: tuple[FanCount, ...]  # in rule-book order
    total: int  # flowers included
    meets_minimum: bool  # the rule set's minimum, flowers not counted

    def to_dict(self) -> dict[str, object]:
        """The JSON form of ``guobiao fan --jsonl`` (``points`` is per fan, times ``count``)."""
        return {
            "total": self.total,
            "meets_minimum": self.meets_minimum,
            "fans": [
                {
                    "name": fc.fan.en,
                    "name_zh": fc.fan.zh,
                    "points": fc.fan.points,
                    "count": fc.count,
                }
                for fc in self.fans
            ],
        }


# ------------------------------------------------------------ tile traits ---

# Sort key of the reference calculators' tile order (characters, bamboo, dots,
# honors). Readings are tried in this order, which decides between readings of
# equal value (ruling 1) and which three of four sets form a family first.
_REF_SUIT = (0, 2, 1, 3)
REF_KEY: tuple[int, ...] = tuple(
    (_REF_SUIT[t // 9] * 9 + t % 9) if t < EAST else 27 + t - EAST for t in range(N_KINDS)
)

_GREEN = frozenset((19, 20, 21, 23, 25, GREEN))  # 23468s and 发
_REVERSIBLE = frozenset(
    (9, 10, 11, 12, 13, 16, 17, 19, 21, 22, 23, 25, 26, WHITE)
)  # 1234589p 245689s 白
_TERMINAL_OR_HONOR = frozenset((0, 8, 9, 17, 18, 26, *range(EAST, N_KINDS)))
_WINDS = frozenset(range(EAST, NORTH + 1))
_DRAGONS = frozenset(range(RED, WHITE + 1))


# ---------------------------------------------------------------- readings ---


def _set_key(s: Set) -> int:
    return REF_KEY[s[1]] * 2 + (s[0] == CHOW)


def _ordered_readings(counts: Sequence[int]) -> list[Reading]:
    """The regular readings, in the reference calculators' order (ruling 1)."""
    readings = regular_readings(counts)
    if len(readings) > 1:
        readings.sort(key=lambda reading: sorted(map(_set_key, reading[0])))
    return readings


# ------------------------------------------------------ hand-level context ---


@dataclass(slots=True)
class _Hand:
    """What every reading of one hand shares."""

    hand: Hand
    ctx: WinContext
    win: Tile
    fixed: tuple[Set, ...]  # the declared melds as sets
    exposed: int  # how many of them are exposed
    fours: int  # tile kinds held four times, kongs included
    standing: list[int]  # concealed counts, winning tile included
    merged: list[int]  # every tile of the hand
    self_drawn: bool
    last_tile: bool
    kong: bool
    wall_last: bool
    traits: FanTable  # fans that depend only on the tiles present
    present: int  # the tile kinds in the hand (``forms.lanes``)
    prevalent: Tile  # the prevalent wind's tile
    seat: Tile  # the seat wind's tile
    unique_wait: bool | None = None  # computed on demand
    custom: bool = False  # score the starred fans of document 000 (``RuleSet.extra_fans``)


_SET_KIND = {MeldKind.CHOW: CHOW, MeldKind.PUNG: PUNG, MeldKind.KONG: KONG}


def _prepare(hand: Hand, ctx: WinContext, custom: bool = False) -> _Hand:
    win = hand.win_tile
    standing = [0] * N_KINDS
    for tile in hand.standing:
        standing[tile] += 1
    standing[win] += 1
    merged = standing.copy()
    fixed = tuple([(_SET_KIND[m.kind], m.tile, m.offer == 0) for m in hand.melds])
    fixed_win = exposed = 0  # copies of the winning tile in the melds; exposed melds
    has_kong = False
    for kind, tile, hidden in fixed:
        if kind == CHOW:
            merged[tile] += 1
            merged[tile + 1] += 1
            merged[tile + 2] += 1
            fixed_win += tile <= win <= tile + 2
        else:
            n = 4 if kind == KONG else 3
            merged[tile] += n
            if tile == win:
                fixed_win += n
            has_kong = has_kong or kind == KONG
        exposed += not hidden
    present = lanes(merged)
    # Ruling 4: the situation flags are made consistent with the tiles.
    last_tile = ctx.last_of_kind
    if standing[win] != 1:
        last_tile = False  # the player holds another copy: it was not the last one
    if fixed_win == 3:
        last_tile = True  # three copies are in the player's own exposed melds
    kong = ctx.kong
    if kong:
        kong = has_kong if ctx.self_drawn else fixed_win == 0 and standing[win] == 1
    return _Hand(
        hand=hand,
        ctx=ctx,
        win=win,
        fixed=fixed,
        exposed=exposed,
        fours=merged.count(4),
        standing=standing,
        merged=merged,
        self_drawn=ctx.self_drawn,
        last_tile=last_tile,
        kong=kong,
        wall_last=ctx.wall_last,
        traits=_tile_traits(present),
        present=present,
        prevalent=EAST + ctx.round_wind,
        seat=EAST + ctx.seat_wind,
        custom=custom,
    )


_SUIT_MASKS = (lane_mask(range(9)), lane_mask(range(9, 18)), lane_mask(range(18, 27)))
_HONOR_MASK = lane_mask(range(EAST, N_KINDS))
_WIND_MASK = lane_mask(range(EAST, NORTH + 1))
_DRAGON_MASK = lane_mask(range(RED, WHITE + 1))
_TERMINAL_MASK = lane_mask((0, 8, 9, 17, 18, 26))
_GREEN_MASK = lane_mask(_GREEN)
_REVERSIBLE_MASK = lane_mask(_REVERSIBLE)
# Ranks of the three suits folded onto the lanes of the first: lane r-1 for rank r.
_RANKS = lane_mask(range(9))
_RANKS_1_TO_4, _RANKS_6_TO_9, _RANKS_4_TO_6 = (
    lane_mask(range(4)),
    lane_mask(range(5, 9)),
    lane_mask(range(3, 6)),
)
_RANK_4, _RANK_6 = lane_mask((3,)), lane_mask((5,))


def _tile_traits(present: int) -> FanTable:
    """Fans of the tiles present (``forms.lanes``): suits, terminals and honors, ranges.

    No exclusions yet: ``_exclude`` applies them with the rest.
    """
    table = [0] * N_FANS
    honors = present & _HONOR_MASK
    missing = sum(1 for suit in _SUIT_MASKS if not present & suit)
    if not honors:
        table[NO_HONORS] = 1  # 无字
    if missing == 2:
        if honors:
            table[HALF_FLUSH] = 1  # 混一色
        else:
            table[FULL_FLUSH] = 1  # 清一色
            table[NO_HONORS] = 0  # 清一色 不计无字
    else:
        table[ONE_VOIDED_SUIT] = missing  # 缺一门 (3 for an all-honors hand: removed by 字一色)
    if not missing and present & _WIND_MASK and present & _DRAGON_MASK:
        table[ALL_TYPES] = 1  # 五门齐
    simples = not present & (_TERMINAL_MASK | _HONOR_MASK)
    if simples:
        table[ALL_SIMPLES] = 1  # 断幺
    if not present & ~_REVERSIBLE_MASK:
        table[REVERSIBLE_TILES] = 1  # 推不倒
    if not present & ~_GREEN_MASK:
        table[ALL_GREEN] = 1  # 绿一色
    if not simples:
        if not present & ~_HONOR_MASK:
            table[ALL_HONORS] = 1  # 字一色
        elif not present & ~_TERMINAL_MASK:
            table[ALL_TERMINALS] = 1  # 清幺九
        elif not present & ~(_TERMINAL_MASK | _HONOR_MASK):
            table[ALL_TERMINALS_AND_HONORS] = 1  # 混幺九
    if not honors:
        ranks = (present | present >> 72 | present >> 144) & _RANKS
        if not ranks & ~_RANKS_1_TO_4:
            table[LOWER_FOUR if ranks & _RANK_4 else LOWER_TILES] = 1  # 小于五 / 全小
        elif not ranks & ~_RANKS_6_TO_9:
            table[UPPER_FOUR if ranks & _RANK_6 else UPPER_TILES] = 1  # 大于五 / 全大
        elif not ranks & ~_RANKS_4_TO_6:
            table[MIDDLE_TILES] = 1  # 全中
    return table


def _win_flags(h: _Hand, table: FanTable) -> None:
    """Fans of how the hand was won: 和绝张 妙手回春 海底捞月 杠上开花 抢杠和 自摸."""
    if h.last_tile:
        table[LAST_TILE] = 1
    if h.self_drawn:
        table[SELF_DRAWN] = 1
        if h.wall_last:
            table[LAST_TILE_DRAW] = 1  # 妙手回春 不计自摸
            table[SELF_DRAWN] = 0
        if h.kong:
            table[OUT_WITH_REPLACEMENT_TILE] = 1  # 杠上开花 不计自摸
            table[SELF_DRAWN] = 0
    else:
        if h.wall_last:
            table[LAST_TILE_CLAIM] = 1
        if h.kong:
            table[ROBBING_THE_KONG] = 1  # 抢杠和 不计和绝张
            table[LAST_TILE] = 0


# ------------------------------------------------------- families of sets ---


def _same_suit(a: Tile, b: Tile) -> bool:
    return a < EAST and b < EAST and a // 9 == b // 9


def _shifted(step: int, *tiles: Tile) -> bool:
    """Ranks increasing by ``step`` in the given order (suits not checked)."""
    return all(tiles[i] % 9 + step == tiles[i + 1] % 9 for i in range(len(tiles) - 1))


def _three_suits(a: Tile, b: Tile, c: Tile) -> bool:
    return len({a // 9, b // 9, c // 9}) == 3


def _shifted_1_unordered(a: Tile, b: Tile, c: Tile) -> bool:
    ranks = sorted((a % 9, b % 9, c % 9))
    return ranks[0] + 1 == ranks[1] and ranks[1] + 1 == ranks[2]


def _four_chows_fan(t: Sequence[Tile]) -> int:
    """一色四步高 / 一色四同顺 of four chows (lowest tiles, sorted)."""
    if all(_same_suit(t[0], x) for x in t):
        if _shifted(2, *t) or _shifted(1, *t):
            return FOUR_PURE_SHIFTED_CHOWS
        if t[0] == t[1] == t[2] == t[3]:
            return QUADRUPLE_CHOW
    return -1


def _three_chows_fan(a: Tile, b: Tile, c: Tile) -> int:
    """A fan of three chows (lowest tiles, in reference order), or -1."""
    if _three_suits(a, b, c):
        if _shifted_1_unordered(a, b, c):
            return MIXED_SHIFTED_CHOWS  # 三色三步高
        if a % 9 == b % 9 == c % 9:
            return MIXED_TRIPLE_CHOW  # 三色三同顺
        if sorted((a % 9, b % 9, c % 9)) == [0, 3, 6]:
            return MIXED_STRAIGHT  # 花龙
    elif _same_suit(a, b) and _same_suit(a, c):
        if a % 9 == 0 and b % 9 == 3 and c % 9 == 6:
            return PURE_STRAIGHT  # 清龙
        if _shifted(2, a, b, c) or _shifted(1, a, b, c):
            return PURE_SHIFTED_CHOWS  # 一色三步高
        if a == b == c:
            return PURE_TRIPLE_CHOW  # 一色三同顺
    return -1


def _two_chows_fan(a: Tile, b: Tile) -> int:
    """A 1-fan family of two chows, or -1."""
    if not _same_suit(a, b):
        if a % 9 == b % 9:
            return MIXED_DOUBLE_CHOW  # 喜相逢
    else:
        if abs(a - b) == 3:
            return SHORT_STRAIGHT  # 连六
        if {a % 9, b % 9} == {0, 6}:
            return TWO_TERMINAL_CHOWS  # 老少副
        if a == b:
            return PURE_DOUBLE_CHOW  # 一般高
    return -1


_PAIR_FANS = (PURE_DOUBLE_CHOW, MIXED_DOUBLE_CHOW, SHORT_STRAIGHT, TWO_TERMINAL_CHOWS)


def _limit_pair_fans(found: Sequence[int], limit: int, table: FanTable) -> None:
    """Account-once (套算一次): keep at most ``limit`` of the 1-fan chow pairs.

    When more pairs are found than the chows allow, repeated fans are dropped
    first (不得相同), from 老少副 back to 一般高.
    """
    tally = [sum(1 for f in found if f == fan) for fan in _PAIR_FANS]
    count = sum(tally)
    keep = 1
    while count > limit and keep >= 0:
        for i in (3, 2, 1, 0):
            while tally[i] > keep and count > limit:
                tally[i] -= 1
                count -= 1
        keep -= 1
    for fan, n in zip(_PAIR_FANS, tally, strict=True):
        table[fan] = n


def _four_chows(t: Sequence[Tile], table: FanTable) -> None:
    fan = _four_chows_fan(t)
    if fan >= 0:
        table[fan] = 1
        return
    for i, j, k, extra in ((0, 1, 2, 3), (0, 1, 3, 2), (0, 2, 3, 1), (1, 2, 3, 0)):
        fan = _three_chows_fan(t[i], t[j], t[k])
        if fan >= 0:
            table[fan] = 1
            # 套算一次: the fourth chow combines once with one of the three.
            pair_fans = {_two_chows_fan(t[x], t[extra]) for x in (i, j, k)}
            for candidate in _PAIR_FANS:
                if candidate in pair_fans:
                    table[candidate] = 1
                    break
            return
    pairs = [
        _two_chows_fan(t[a], t[b]) for a, b in ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
    ]
    # Four chows make at most three 1-fan pairs, one fewer for each chow that
    # combines with none of the others.
    limit = 3
    for mine in ((0, 1, 2), (0, 3, 4), (1, 3, 5), (2, 4, 5)):
        if all(pairs[x] < 0 for x in mine):
            limit -= 1
    if limit > 0:
        _limit_pair_fans(pairs, limit, table)


def _three_chows(t: Sequence[Tile], table: FanTable) -> None:
    fan = _three_chows_fan(t[0], t[1], t[2])
    if fan >= 0:
        table[fan] = 1
        return
    pairs = [_two_chows_fan(t[0], t[1]), _two_chows_fan(t[0], t[2]), _two_chows_fan(t[1], t[2])]
    _limit_pair_fans(pairs, 2, table)


def _four_pungs_fan(t: Sequence[Tile]) -> int:
    if t[0] < EAST and all(_same_suit(t[0], x) for x in t) and _shifted(1, *t):
        return FOUR_PURE_SHIFTED_PUNGS  # 一色四节高
    if list(t) == [EAST, EAST + 1, EAST + 2, NORTH]:
        return BIG_FOUR_WINDS  # 大四喜
    return -1


def _three_pungs_fan(a: Tile, b: Tile, c: Tile) -> int:
    if a < EAST and b < EAST and c < EAST:
        if _three_suits(a, b, c):
            if _shifted_1_unordered(a, b, c):
                return MIXED_SHIFTED_PUNGS  # 三色三节高
            if a % 9 == b % 9 == c % 9:
                return TRIPLE_PUNG  # 三同刻
        elif _same_suit(a, b) and _same_suit(a, c) and _shifted(1, a, b, c):
            return PURE_SHIFTED_PUNGS  # 一色三节高
    else:
        if a in _WINDS and b in _WINDS and c in _WINDS:
            return BIG_THREE_WINDS  # 三风刻
        if a in _DRAGONS and b in _DRAGONS and c in _DRAGONS:
            return BIG_THREE_DRAGONS  # 大三元
    return -1


def _two_pungs_fan(a: Tile, b: Tile) -> int:
    if a < EAST and b < EAST:
        if a % 9 == b % 9:
            return DOUBLE_PUNG  # 双同刻
    elif a in _DRAGONS and b in _DRAGONS:
        return TWO_DRAGONS_PUNGS  # 双箭刻
    return -1


def _count_pairs_of_pungs(t: Sequence[Tile], table: FanTable) -> None:
    for a in range(len(t)):
        for b in range(a + 1, len(t)):
            fan = _two_pungs_fan(t[a], t[b])
            if fan >= 0:
                table[fan] += 1


def _four_pungs(t: Sequence[Tile], table: FanTable) -> None:
    fan = _four_pungs_fan(t)
    if fan >= 0:
        table[fan] = 1
        return
    for i, j, k, free in ((0, 1, 2, 3), (0, 1, 3, 2), (0, 2, 3, 1), (1, 2, 3, 0)):
        fan = _three_pungs_fan(t[i], t[j], t[k])
        if fan >= 0:
            table[fan] = 1
            # 套算一次: the fourth pung combines once with one of the three.
            for x in (i, j, k):
                pair = _two_pungs_fan(t[x], t[free])
                if pair >= 0:
                    table[pair] += 1
                    break
            return
    _count_pairs_of_pungs(t, table)


def _three_pungs(t: Sequence[Tile], table: FanTable) -> None:
    fan = _three_pungs_fan(t[0], t[1], t[2])
    if fan >= 0:
        table[fan] = 1
        return
    _count_pairs_of_pungs(t, table)


def _kongs_and_concealed_pungs(
    concealed_pungs: int, melded_kongs: int, concealed_kongs: int, table: FanTable
) -> None:
    """三杠 四杠 双明杠 双暗杠 明暗杠 明杠 暗杠, and 双暗刻 三暗刻 四暗刻.

    Concealed kongs count as concealed pungs.
    """
    kongs = melded_kongs + concealed_kongs
    if kongs == 4:
        table[FOUR_KONGS] = 1
    elif kongs == 3:
        table[THREE_KONGS] = 1
    elif kongs == 2:
        if concealed_kongs == 0:
            table[TWO_MELDED_KONGS] = 1
        elif concealed_kongs == 1:
            table[CONCEALED_KONG_AND_MELDED_KONG] = 1
        else:
            table[TWO_CONCEALED_KONGS] = 1
    elif kongs == 1:
        table[MELDED_KONG if melded_kongs else CONCEALED_KONG] = 1
    hidden = concealed_pungs + concealed_kongs
    if hidden == 2 and not table[TWO_CONCEALED_KONGS]:  # 双暗杠 already holds 双暗刻
        table[TWO_CONCEALED_PUNGS] = 1
    elif hidden == 3:
        table[THREE_CONCEALED_PUNGS] = 1
    elif hidden == 4:
        table[FOUR_CONCEALED_PUNGS] = 1


# ------------------------------------------------------- a regular reading ---


def _is_terminal_chows(chows: Sequence[Tile], pair: Tile) -> int:
    """一色双龙会 / 三色双龙会 (chows are lowest tiles), or -1."""
    if pair >= EAST or pair % 9 != 4:
        return -1
    if any(c % 9 not in (0, 6) for c in chows):
        return -1
    suit = pair // 9
    suits = [c // 9 for c in chows]
    if all(s == suit for s in suits):
        lows = sum(1 for c in chows if c % 9 == 0)
        return PURE_TERMINAL_CHOWS if lows == 2 else -1
    others = {0, 1, 2} - {suit}
    if suit in suits:
        return -1
    if all((s * 9) in chows and (s * 9 + 6) in chows for s in others):
        return THREE_SUITED_TERMINAL_CHOWS
    return -1


def _mixed_suit_shifted(tiles: Sequence[Tile]) -> bool:
    """混三步 / 混四步 / 混三节 / 混四节: suited sets whose ranks step by one (in any order),
    in exactly two suits."""
    if any(t >= EAST for t in tiles):
        return False
    ranks = sorted(t % 9 for t in tiles)
    if any(ranks[i] + 1 != ranks[i + 1] for i in range(len(ranks) - 1)):
        return False
    return len({t // 9 for t in tiles}) == 2


def _value(entries: Sequence[tuple[int, int]]) -> int:
    return sum(POINTS[fan] * n for fan, n in entries)


_TRIPLES = ((0, 1, 2, 3), (0, 1, 3, 2), (0, 2, 3, 1), (1, 2, 3, 0))


def _best_of(
    mcr: list[tuple[int, int]], options: list[list[tuple[int, int]]]
) -> list[tuple[int, int]]:
    """The highest-value of ``options``, when it beats the MCR families (ties keep MCR)."""
    best, best_value = mcr, _value(mcr)
    for option in options:
        value = _value(option)
        if value > best_value:
            best, best_value = option, value
    return best


def _custom_chows(chows: tuple[Tile, ...], mcr: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Document 000: 混三步 (2) and 混四步 (4) beside the MCR chow families (rulings W8, W9).

    A fan of four chows excludes its three-chow versions; with four chows every
    triple is tried and the highest-value family counts, the fourth chow then
    combining once (套算一次) as in MCR.
    """
    n = len(chows)
    if n == 3:
        if not mcr and _mixed_suit_shifted(chows):
            return [(MIXED_SUIT_SHIFTED_CHOWS, 1)]
        return mcr
    if n != 4 or any(fan <= PURE_SHIFTED_CHOWS for fan, _ in mcr):
        return mcr  # a four-chow fan (一色四步高, 一色四同顺, 双龙会) of 16 or more stands
    options: list[list[tuple[int, int]]] = []
    if _mixed_suit_shifted(chows):
        options.append([(FOUR_MIXED_SUIT_SHIFTED_CHOWS, 1)])
    for i, j, k, extra in _TRIPLES:
        if _mixed_suit_shifted((chows[i], chows[j], chows[k])):
            option = [(MIXED_SUIT_SHIFTED_CHOWS, 1)]
            pair_fans = {_two_chows_fan(chows[x], chows[extra]) for x in (i, j, k)}
            for candidate in _PAIR_FANS:
                if candidate in pair_fans:
                    option.append((candidate, 1))
                    break
            options.append(option)
    return _best_of(mcr, options)


def _custom_pungs(pungs: tuple[Tile, ...], mcr: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Document 000: 混三节 (4) and 混四节 (6) beside the MCR pung families (ruling W9)."""
    n = len(pungs)
    if n == 3:
        if not mcr and _mixed_suit_shifted(pungs):
            return [(MIXED_SUIT_SHIFTED_PUNGS, 1)]
        return mcr
    if n != 4 or any(fan in (FOUR_PURE_SHIFTED_PUNGS, BIG_FOUR_WINDS) for fan, _ in mcr):
        return mcr
    options: list[list[tuple[int, int]]] = []
    if _mixed_suit_shifted(pungs):
        options.append([(FOUR_MIXED_SUIT_SHIFTED_PUNGS, 1)])
    for i, j, k, free in _TRIPLES:
        if _mixed_suit_shifted((pungs[i], pungs[j], pungs[k])):
            option = [(MIXED_SUIT_SHIFTED_PUNGS, 1)]
            for x in (i, j, k):
                pair = _two_pungs_fan(pungs[x], pungs[free])
                if pair >= 0:
                    option.append((pair, 1))
                    break
            options.append(option)
    return _best_of(mcr, options)


def _entries(table: FanTable) -> list[tuple[int, int]]:
    return [(i, n) for i, n in enumerate(table) if n]


@lru_cache(maxsize=1 << 15)
def _families(
    chows: tuple[Tile, ...], pungs: tuple[Tile, ...], pair: Tile, custom: bool = False
) -> tuple[tuple[int, int], ...]:
    """The fans of the chows and pungs among themselves, as ``(fan, count)`` pairs.

    Both tuples are in reference order; ``pair`` matters only with four chows
    (双龙会) and is -1 otherwise, so that readings share the cache. The chow and
    pung families are found apart, so any number of each may be given: chows
    that take part in no family (a wild tile that leaves the chow ambiguous,
    ruling W3) are simply left out. ``custom`` adds 混三步 混四步 混三节 混四节
    (the ``custom`` rule set).
    """
    table = [0] * N_FANS  # chow and pung families are different fans: one table holds both
    n_chows = len(chows)
    if n_chows == 4:
        family = _is_terminal_chows(chows, pair)
        if family >= 0:
            table[family] = 1
        else:
            _four_chows(chows, table)
    elif n_chows == 3:
        _three_chows(chows, table)
    elif n_chows == 2:
        fan = _two_chows_fan(chows[0], chows[1])
        if fan >= 0:
            table[fan] += 1
    chow_fans: list[tuple[int, int]] = []
    if custom:  # the chow families alone, to weigh 混三步 / 混四步 against them
        chow_fans = _custom_chows(chows, _entries(table))
        table = [0] * N_FANS
    n_pungs = len(pungs)
    if n_pungs == 4:
        _four_pungs(pungs, table)
    elif n_pungs == 3:
        _three_pungs(pungs, table)
    elif n_pungs == 2:
        fan = _two_pungs_fan(pungs[0], pungs[1])
        if fan >= 0:
            table[fan] += 1
    if not custom:
        return tuple(_entries(table))
    merged = [0] * N_FANS
    for fan, n in chow_fans + _custom_pungs(pungs, _entries(table)):
        merged[fan] += n
    return tuple(_entries(merged))


# How a set (or the pair) counts toward 全带幺 / 全带五 / 全双刻: 1 it holds a
# terminal or honor, 2 a five, 3 it is an even pung (or pair), 0 none of these.
_OUTSIDE, _FIVE, _EVEN = 1, 2, 3
_CHOW_CLASS = tuple(  # by the chow's lowest tile: 123/789 outside, 345/456/567 five
    _OUTSIDE if t % 9 in (0, 6) else _FIVE if t % 9 in (2, 3, 4) else 0 for t in range(EAST)
)
_PUNG_CLASS = tuple(
    _OUTSIDE
    if t >= EAST or t % 9 in (0, 8)
    else _FIVE
    if t % 9 == 4
    else _EVEN
    if t % 9 in (1, 3, 5, 7)
    else 0
    for t in range(N_KINDS)
)


def _score_regular(
    h: _Hand, concealed: tuple[Set, ...], pair: Tile, skip: int = 0, win_in_chow: bool | None = None
) -> FanTable:
    """One regular reading's fan table.

    ``skip``: a bit mask over ``concealed`` of the chows that take part in no
    chow family (built with a wild tile that leaves them ambiguous, ruling W3).
    ``win_in_chow``: whether a claimed winning tile can complete a concealed chow
    (None: wherever a chow holds its kind; with wild copies of that kind, where
    the placement leaves a real one, ruling W1).
    """
    table = h.traits.copy()
    win = h.win
    chows: list[Tile] = []
    pungs: list[Tile] = []
    concealed_pungs = melded_kongs = concealed_kongs = 0
    classes = [0, 0, 0, 0]
    classes[_PUNG_CLASS[pair]] += 1
    for kind, tile, hidden in h.fixed + concealed:
        if kind == CHOW:
            chows.append(tile)
            classes[_CHOW_CLASS[tile]] += 1
            continue
        pungs.append(tile)
        classes[_PUNG_CLASS[tile]] += 1
        if kind == PUNG:
            concealed_pungs += hidden
        elif hidden:
            concealed_kongs += 1
        else:
            melded_kongs += 1

    _win_flags(h, table)
    # A pung completed by a discard is exposed, unless the winning tile can be
    # read as part of a concealed chow instead (ruling 5).
    if win_in_chow is None:
        win_in_chow = any(kind == CHOW and tile <= win <= tile + 2 for kind, tile, _ in concealed)
    if not h.self_drawn and win in pungs and not win_in_chow:
        concealed_pungs -= sum(1 for kind, tile, _ in concealed if kind == PUNG and tile == win)

    if pungs:
        _kongs_and_concealed_pungs(concealed_pungs, melded_kongs, concealed_kongs, table)
        if len(pungs) == 4 and not table[FOUR_KONGS] and not table[FOUR_CONCEALED_PUNGS]:
            table[ALL_PUNGS] = 1  # 碰碰和 (四杠 and 四暗刻 exclude it)
        for tile in pungs:
            if tile >= RED:
                table[DRAGON_PUNG] += 1  # 箭刻
            elif tile in _TERMINAL_OR_HONOR:
                table[PUNG_OF_TERMINALS_OR_HONORS] += 1  # 幺九刻 (winds adjusted below)
        if len(pungs) > 1:
            pungs.sort(key=REF_KEY.__getitem__)
    if len(chows) > 1:
        chows.sort(key=REF_KEY.__getitem__)

    n_chows = len(chows)
    family = chows
    if skip:
        family = [t for kind, t, _ in h.fixed if kind == CHOW]
        family += [
            t for i, (kind, t, _) in enumerate(concealed) if kind == CHOW and not skip >> i & 1
        ]
        family.sort(key=REF_KEY.__getitem__)
    fans = _families(tuple(family), tuple(pungs), pair if len(family) == 4 else -1, h.custom)
    for fan, count in fans:
        table[fan] += count

    # 不求人 / 门前清 / 全求人 / 自摸: how many melds are exposed.
    exposed = h.exposed
    if exposed == 0:
        table[FULLY_CONCEALED_HAND if h.self_drawn else CONCEALED_HAND] = 1
    elif exposed == 4:
        table[SELF_DRAWN if h.self_drawn else MELDED_HAND] = 1
    elif h.self_drawn:
        table[SELF_DRAWN] = 1

    # The pair: 平和, 小三元, 小四喜.
    if n_chows == 4:
        if pair < EAST:
            table[ALL_CHOWS] = 1
    elif table[TWO_DRAGONS_PUNGS]:
        if pair >= RED:
            table[LITTLE_THREE_DRAGONS] = 1
            table[TWO_DRAGONS_PUNGS] = 0
    elif table[BIG_THREE_WINDS] and EAST <= pair <= NORTH:
        table[LITTLE_FOUR_WINDS] = 1
        table[BIG_THREE_WINDS] = 0

    # Every set and the pair: 全带幺, 全带五, 全双刻.
    if classes[_OUTSIDE] == 5:
        table[OUTSIDE_HAND] = 1
    elif classes[_FIVE] == 5:
        table[ALL_FIVE] = 1
    elif classes[_EVEN] == 5:
        table[ALL_EVEN_PUNGS] = 1

    # 四归一: four of a tile not declared as a kong (一色四同顺 excludes it).
    if not table[QUADRUPLE_CHOW]:
        table[TILE_HOG] = h.fours - melded_kongs - concealed_kongs

    _wait_fans(h, concealed, pair, table)
    _exclude(table)
    if h.present & _WIND_MASK:
        _adjust_winds(h, [t for t in pungs if EAST <= t <= NORTH], table)
    if h.custom:
        _custom_pair_fans(pair, table)
        if table[BIG_FOUR_WINDS] and pair == GREEN:
            # 四方大发财 replaces 大四喜：不计碰碰和、门风刻、圈风刻、三风刻、字一色 (ruling W10)
            table[BIG_FOUR_WINDS] = table[ALL_HONORS] = 0
            table[BIG_FOUR_WINDS_AND_GREEN_DRAGON] = 1
    if not any(table):
        table[CHICKEN_HAND] = 1  # 无番和
    return table


def _custom_pair_fans(pair: Tile, table: FanTable) -> None:
    """二五八将 / 幺九头: the suited pair (将) of a regular or knitted-straight reading, of
    thirteen orphans and of nine gates' reading (ruling W11).

    Not counted where another fan makes it certain (non-repetition): the pair of fives of
    一色双龙会 / 三色双龙会 and of 全带五, the terminal pair of 清幺九.
    """
    if pair >= EAST:
        return
    r = pair % 9
    if r in (1, 4, 7):
        if not (
            table[PURE_TERMINAL_CHOWS] or table[THREE_SUITED_TERMINAL_CHOWS] or table[ALL_FIVE]
        ):
            table[PAIR_OF_2_5_OR_8] = 1
    elif r in (0, 8) and not table[ALL_TERMINALS]:
        table[PAIR_OF_1_OR_9] = 1


def _wait_fans(h: _Hand, concealed: Sequence[Set], pair: Tile, table: FanTable) -> None:
    """边张 / 坎张 / 单钓将 when the hand waited on the winning tile alone (ruling 2).

    Where the winning tile sits in this reading picks the fan: at either end of
    a concealed chow 边张, in its middle 坎张, in the pair 单钓将.
    """
    if table[MELDED_HAND] or table[FOUR_KONGS]:
        return
    win = h.win
    fan = -1
    for kind, tile, _ in concealed:
        if kind == CHOW:
            if win in (tile, tile + 2):
                fan = EDGE_WAIT
                break
            if win == tile + 1:
                fan = CLOSED_WAIT
    if fan < 0 and pair == win:
        fan = SINGLE_WAIT
    if fan >= 0 and _is_unique_wait(h):
        table[fan] = 1


def _adjust_winds(h: _Hand, wind_pungs: Sequence[Tile], table: FanTable) -> None:
    """圈风刻 / 门风刻: the wind pung counts as that fan instead of 幺九刻."""
    if table[BIG_FOUR_WINDS]:
        return  # 大四喜 不计圈风刻、门风刻
    deducted = (
        table[BIG_THREE_WINDS]
        or table[ALL_TERMINALS_AND_HONORS]
        or table[ALL_HONORS]
        or table[LITTLE_FOUR_WINDS]
    )
    prevalent = h.prevalent
    seat = h.seat
    for tile in wind_pungs:
        if tile == prevalent:
            table[PREVALENT_WIND] = 1
            if not deducted:
                table[PUNG_OF_TERMINALS_OR_HONORS] -= 1
        if tile == seat:
            table[SEAT_WIND] = 1
            if seat != prevalent and not deducted:
                table[PUNG_OF_TERMINALS_OR_HONORS] -= 1


def _exclude(t: FanTable) -> None:
    """The exclusions (不计) of the rule book, applied to a reading's fan table."""
    if t[BIG_FOUR_WINDS]:  # 大四喜：不计三风刻、碰碰和、圈风刻、门风刻、幺九刻
        t[ALL_PUNGS] = t[PUNG_OF_TERMINALS_OR_HONORS] = 0
    if t[BIG_THREE_DRAGONS]:  # 大三元：不计双箭刻、箭刻
        t[DRAGON_PUNG] = 0
    if t[ALL_GREEN]:  # 绿一色：不计混一色
        t[HALF_FLUSH] = t[ONE_VOIDED_SUIT] = 0
    if t[FOUR_KONGS]:  # 四杠：不计碰碰和、单钓将
        t[SINGLE_WAIT] = 0
    if t[ALL_TERMINALS]:  # 清幺九：不计碰碰和、全带幺、双同刻、幺九刻、无字
        t[ALL_PUNGS] = t[OUTSIDE_HAND] = t[PUNG_OF_TERMINALS_OR_HONORS] = 0
        t[NO_HONORS] = t[DOUBLE_PUNG] = 0
    if t[LITTLE_FOUR_WINDS]:  # 小四喜：不计三风刻、幺九刻
        t[PUNG_OF_TERMINALS_OR_HONORS] = 0
    if t[LITTLE_THREE_DRAGONS]:  # 小三元：不计双箭刻、箭刻
        t[DRAGON_PUNG] = 0
    if t[ALL_HONORS]:  # 字一色：不计碰碰和、全带幺、幺九刻
        t[ALL_PUNGS] = t[OUTSIDE_HAND] = t[PUNG_OF_TERMINALS_OR_HONORS] = t[ONE_VOIDED_SUIT] = 0
    if t[FOUR_CONCEALED_PUNGS]:  # 四暗刻：不计碰碰和、不求人、门前清
        t[ALL_PUNGS] = t[CONCEALED_HAND] = 0
        if t[FULLY_CONCEALED_HAND]:
            t[FULLY_CONCEALED_HAND] = 0
            t[SELF_DRAWN] = 1
    if t[PURE_TERMINAL_CHOWS]:  # 一色双龙会：不计七对、清一色、平和、一般高、老少副、无字
        t[FULL_FLUSH] = t[ALL_CHOWS] = t[NO_HONORS] = 0
    if t[FOUR_PURE_SHIFTED_PUNGS]:  # 一色四节高：不计一色三同顺、一色三节高、碰碰和
        t[ALL_PUNGS] = 0
    if t[FOUR_MIXED_SUIT_SHIFTED_PUNGS]:  # 混四节 (four pungs) makes 碰碰和 certain (W9)
        t[ALL_PUNGS] = 0
    if t[ALL_TERMINALS_AND_HONORS]:  # 混幺九：不计碰碰和、全带幺、幺九刻
        t[ALL_PUNGS] = t[OUTSIDE_HAND] = t[PUNG_OF_TERMINALS_OR_HONORS] = 0
    if t[ALL_EVEN_PUNGS]:  # 全双刻：不计碰碰和、断幺、无字
        t[ALL_PUNGS] = t[ALL_SIMPLES] = t[NO_HONORS] = 0
    if t[UPPER_TILES]:  # 全大：不计大于五、无字
        t[NO_HONORS] = 0
    if t[MIDDLE_TILES]:  # 全中：不计断幺
        t[ALL_SIMPLES] = t[NO_HONORS] = 0
    if t[LOWER_TILES]:  # 全小：不计小于五、无字
        t[NO_HONORS] = 0
    if t[THREE_SUITED_TERMINAL_CHOWS]:  # 三色双龙会：不计平和、老少副、喜相逢、无字
        t[ALL_CHOWS] = t[NO_HONORS] = 0
    if t[ALL_FIVE]:  # 全带五：不计断幺、无字
        t[ALL_SIMPLES] = t[NO_HONORS] = 0
    if t[UPPER_FOUR]:  # 大于五：不计无字
        t[NO_HONORS] = 0
    if t[LOWER_FOUR]:  # 小于五：不计无字
        t[NO_HONORS] = 0
    # 三风刻：组成三风刻的三副刻子不计幺九刻 (字一色 and 混幺九 removed them all already)
    if t[BIG_THREE_WINDS] and not t[ALL_HONORS] and not t[ALL_TERMINALS_AND_HONORS]:
        t[PUNG_OF_TERMINALS_OR_HONORS] -= 3
    if t[REVERSIBLE_TILES]:  # 推不倒：不计缺一门
        t[ONE_VOIDED_SUIT] = 0
    if t[LAST_TILE_DRAW]:  # 妙手回春：不计自摸
        t[SELF_DRAWN] = 0
    if t[OUT_WITH_REPLACEMENT_TILE]:  # 杠上开花：不计自摸
        t[SELF_DRAWN] = 0
    if t[MELDED_HAND]:  # 全求人：不计单钓将
        t[SINGLE_WAIT] = 0
    if t[TWO_DRAGONS_PUNGS]:  # 双箭刻：不计箭刻
        t[DRAGON_PUNG] = 0
    if t[FULLY_CONCEALED_HAND]:  # 不求人：不计自摸
        t[SELF_DRAWN] = 0
    if t[ALL_CHOWS]:  # 平和：不计无字
        t[NO_HONORS] = 0
    if t[ALL_SIMPLES]:  # 断幺：不计无字
        t[NO_HONORS] = 0


# -------------------------------------------------------------- the waits ---


def _is_unique_wait(h: _Hand) -> bool:
    """Whether the hand, before the winning tile, waited on that tile alone (ruling 2)."""
    if h.unique_wait is None:
        counts = h.standing.copy()
        counts[h.win] -= 1
        h.unique_wait = formal_waits(counts, len(h.hand.melds)) == {h.win}
    return h.unique_wait


# --------------------------------------------------------- special forms ---


def _seven_shifted_pairs(counts: Sequence[int], win: Tile) -> bool:
    if win >= EAST:
        return False
    base = win - win % 9
    run = [counts[base + r] == 2 for r in range(9)]
    return any(all(run[start : start + 7]) for start in range(3))


def _score_seven_pairs(h: _Hand) -> FanTable:
    table = [0] * N_FANS
    if _seven_shifted_pairs(h.standing, h.win):
        # 连七对：不计清一色、七对、不求人、门前清、无字、单钓将
        table[SEVEN_SHIFTED_PAIRS] = 1
        base = h.win - h.win % 9
        if not h.standing[base] and not h.standing[base + 8]:
            table[ALL_SIMPLES] = 1  # 2..8 连七对 counts 断幺
        _win_flags(h, table)
        return table
    table = h.traits.copy()
    table[SEVEN_PAIRS] = 1  # 七对：不计不求人、门前清、单钓将
    table[TILE_HOG] = h.standing.count(4)
    _win_flags(h, table)
    _exclude(table)
    return table


def _score_honors_and_knitted(h: _Hand) -> FanTable:
    table = [0] * N_FANS
    honors = sum(1 for t in range(EAST, N_KINDS) if h.standing[t])
    if honors == 7:
        table[GREATER_HONORS_AND_KNITTED_TILES] = 1  # 七星不靠：不计全不靠、五门齐、不求人、门前清
    else:
        table[LESSER_HONORS_AND_KNITTED_TILES] = 1  # 全不靠：不计五门齐、不求人、门前清
        if honors == 5:
            table[KNITTED_STRAIGHT] = 1  # nine knitted tiles: also 组合龙
    _win_flags(h, table)
    return table


def _score_thirteen_orphans(h: _Hand) -> FanTable:
    table = [0] * N_FANS
    table[THIRTEEN_ORPHANS] = 1  # 十三幺：不计五门齐、不求人、门前清、单钓将
    _win_flags(h, table)
    if h.custom:  # its doubled orphan is a pair (将): 幺九头 when it is a suited terminal
        _custom_pair_fans(h.standing.index(2), table)
    return table


def _score_nine_gates(h: _Hand) -> FanTable | None:
    """九莲宝灯: 1112345678999 of one suit standing, any tile of the suit to win."""
    win = h.win
    if win >= EAST or h.hand.melds:
        return None
    base = win - win % 9
    held = h.standing[base : base + 9]
    if sum(held) != 14:
        return None
    gates = [3, 1, 1, 1, 1, 1, 1, 1, 3]
    gates[win % 9] += 1
    if held != gates:
        return None
    table = [0] * N_FANS
    # 九莲宝灯：不计清一色、不求人、门前清、无字、幺九刻×1; what the winning
    # tile adds beside the gates still counts (清龙+四归一, 双暗刻+幺九刻, 连六).
    table[NINE_GATES] = 1
    r = win % 9 + 1
    if r in (1, 9):
        table[PURE_STRAIGHT] = 1
        table[TILE_HOG] = 1
    elif r in (2, 8):
        table[TWO_CONCEALED_PUNGS] = table[SHORT_STRAIGHT] = table[PUNG_OF_TERMINALS_OR_HONORS] = 1
    elif r == 5:
        table[TWO_CONCEALED_PUNGS] = table[PUNG_OF_TERMINALS_OR_HONORS] = 1
    else:
        table[SHORT_STRAIGHT] = 1
    _win_flags(h, table)
    if h.custom:
        # The pair fan of its regular reading (ruling W11): the pair is the added 2, 5 or 8
        # (111 22 345 678 999), else a pair of 1s or 9s (11 123 456 678 999, ...).
        _custom_pair_fans(base + (win % 9 if r in (2, 5, 8) else 0), table)
    return table


def _score_knitted_straight(h: _Hand) -> FanTable | None:
    """组合龙 with one more set (declared or concealed) and a pair."""
    found = knitted_straight_rest(h.standing)
    if found is None:
        return None
    _, rest = found
    readings = regular_readings(rest)
    if len(readings) != 1:
        return None
    concealed, pair = readings[0]
    sets = [*h.fixed, *concealed]
    if len(sets) != 1:
        return None
    kind, tile, hidden = sets[0]
    table = [0] * N_FANS
    table[KNITTED_STRAIGHT] = 1
    if kind == CHOW:
        if pair < EAST:
            table[ALL_CHOWS] = 1  # 平和
        if h.merged[pair] == 4:
            table[TILE_HOG] = 1
    elif tile >= EAST:
        if tile in _WINDS:
            table[PUNG_OF_TERMINALS_OR_HONORS] = 1
            _adjust_winds(h, [tile], table)
            if pair in _DRAGONS:
                table[ALL_TYPES] = 1
        else:
            table[DRAGON_PUNG] = 1
            if pair in _WINDS:
                table[ALL_TYPES] = 1
    else:
        if tile in _TERMINAL_OR_HONOR:
            table[PUNG_OF_TERMINALS_OR_HONORS] = 1
        if pair < EAST:
            table[NO_HONORS] = 1
        if kind != KONG and h.merged[tile] == 4:
            table[TILE_HOG] = 1
    _win_flags(h, table)
    if hidden:
        if kind == KONG:
            table[CONCEALED_KONG] = 1
        if h.self_drawn:
            table[FULLY_CONCEALED_HAND] = 1
            table[SELF_DRAWN] = 0
        else:
            table[CONCEALED_HAND] = 1
    elif kind == KONG:
        table[MELDED_KONG] = 1
    # Waits: the knitted body is a special set, only the fourth set and the
    # pair can make an edge, closed or single wait (ruling 3).
    if not h.fixed:
        _wait_fans(h, concealed, pair, table)
    elif h.win == pair and _is_unique_wait(h):
        table[SINGLE_WAIT] = 1
    _exclude(table)
    if h.custom:
        _custom_pair_fans(pair, table)
    return table


# ------------------------------------------------------------- the public ---


def _total(table: FanTable) -> int:
    return sum(map(mul, table, POINTS))


def _score_placed(
    h: _Hand, concealed: tuple[Set, ...], pair: Tile, wild: tuple[tuple[Tile, int], ...]
) -> FanTable:
    """A reading of a concrete hand some of whose copies are wild: the wild copies sit
    where they lower the score (rulings W1, W3): which chows they leave ambiguous and,
    on a discard, whether the winning tile can complete a chow rather than a pung."""
    best: FanTable | None = None
    best_total = 0
    merged = h.merged
    full = tuple([t for t in range(N_KINDS) if merged[t] == 4]) if h.fours else ()
    claimed = -1 if h.self_drawn else h.win
    for skip, win_in_chow in ambiguous_chow_masks(concealed, pair, wild, full, claimed):
        table = _score_regular(h, concealed, pair, skip, win_in_chow)
        total = _total(table)
        if best is None or total < best_total:
            best, best_total = table, total
    assert best is not None  # there is always at least one placement
    return best


def _best_table(
    h: _Hand, wild: tuple[tuple[Tile, int], ...] = (), limit: int | None = None
) -> FanTable | None:
    """The highest-value reading of a concrete hand; ``wild``: ``(kind, copies)`` of its
    tiles that are wild copies (then each reading places them to score low, ruling W3).

    With ``limit``, None as soon as one reading (or form) totals more than ``limit``: the
    hand's highest reading then does too (the branch and bound of ``_score_wild``).
    """
    best: FanTable | None = None
    best_total = 0
    seven_pairs = False
    situation = _situation_of(h.ctx, h.custom)
    if not h.hand.melds:
        special: FanTable | None = None
        if is_seven_pairs(h.standing):
            special = _score_seven_pairs(h)
            seven_pairs = bool(special[SEVEN_PAIRS])
        elif is_honors_and_knitted(h.standing):
            special = _score_honors_and_knitted(h)
        elif is_thirteen_orphans(h.standing):
            special = _score_thirteen_orphans(h)
        else:
            nine_kinds = h.standing.count(0) <= N_KINDS - 9  # a knitted straight needs nine
            special = (_score_knitted_straight(h) if nine_kinds else None) or _score_nine_gates(h)
        if special is not None:
            if situation:
                _situation_fans(situation, special)
            best, best_total = special, _total(special)
            if limit is not None and best_total > limit:
                return None
            if not seven_pairs:
                return best
    elif len(h.hand.melds) == 1 and h.standing.count(0) <= N_KINDS - 9:
        special = _score_knitted_straight(h)
        if special is not None:
            if situation:
                _situation_fans(situation, special)
            if limit is not None and _total(special) > limit:
                return None
            return special
    for concealed, pair in _ordered_readings(h.standing):
        if wild:
            table = _score_placed(h, concealed, pair, wild)
        else:
            table = _score_regular(h, concealed, pair)
        if situation:
            _situation_fans(situation, table)
        total = _total(table)
        if limit is not None and total > limit:
            return None
        # Ruling 1: between readings of equal value, prefer a regular reading
        # to seven pairs, and one with 一色三同顺 or 三同刻.
        if total > best_total or (
            total == best_total and (seven_pairs or table[PURE_TRIPLE_CHOW] or table[TRIPLE_PUNG])
        ):
            best, best_total = table, total
    return best


def _score_wild(hand: Hand, ctx: WinContext, custom: bool) -> FanTable:
    """A hand holding wild tiles: the lowest-scoring concrete hand (rulings W1-W7).

    ``engine.wild_scoring`` lists the substitutions of the wild tiles that
    complete the hand; each concrete hand is scored as usual (its highest-value
    reading), the wild copies placed where they score lowest; the lowest
    total counts, the first of equal totals in the substitutions' sorted order.

    The search is a branch and bound with the same result as scoring every
    substitution (``tests/engine/test_wild_scoring.py`` keeps that reference):
    a substitution's score is at least ``_wild_bound`` (fans of the tiles
    present, of how the hand was won and of concealment, proved sound there)
    and at least any one of its readings, so substitutions are taken in order
    of (bound, substitution) and the search stops at the first whose bound
    cannot beat the best (total, substitution) found, and a substitution is
    dropped at the first reading that shows it cannot. Results are memoized:
    the table asks about the same hand again and again.
    """
    return list(_score_wild_cached(hand, ctx, custom))


@lru_cache(maxsize=1 << 11)
def _score_wild_cached(hand: Hand, ctx: WinContext, custom: bool) -> tuple[int, ...]:
    win = hand.win_tile
    wild_win = win == WILD
    if wild_win and not ctx.self_drawn:
        raise InvalidHand(
            f"{_notation(hand)}: a wild tile cannot be discarded, so a wild winning tile "
            "must be self-drawn"
        )
    concrete = hand.concealed_counts()
    merged = hand.all_counts()
    caps = caps_of([a - b for a, b in zip(merged, concrete, strict=True)])
    n_melds = len(hand.melds)
    search = _WildSearch(hand, ctx, concrete, merged, caps, custom=custom)
    if not search.complete():
        raise NotWinning(f"{_notation(hand)} is not a winning hand in any form, wilds included")
    # Situation flags from the real tiles (rulings 4, W6): a wild copy is no copy.
    has_kong = any(m.kind is MeldKind.KONG for m in hand.melds)
    if wild_win:
        last_tile = unique = False
        kong = ctx.kong and has_kong
    else:
        in_melds = sum(meld.tiles.count(win) for meld in hand.melds)
        last_tile = (ctx.last_of_kind and concrete[win] == 1) or in_melds == 3
        kong = ctx.kong and (has_kong if ctx.self_drawn else in_melds == 0 and concrete[win] == 1)
        # Where a wild tile completes the hand as some kind Y other than the winning tile,
        # the hand also won on Y (that wild copy standing for the winning tile instead: the
        # same tiles, within the same copies): no single wait, without trying all 34 kinds.
        unique = search.stands_only_for(win)
        if unique:
            before = concrete.copy()
            before[win] -= 1
            unique = waits_only_on(before, caps, hand.wilds, n_melds, win)
    fixed = tuple([(_SET_KIND[m.kind], m.tile, m.offer == 0) for m in hand.melds])
    exposed = sum(1 for m in hand.melds if m.offer)
    best: FanTable | None = None
    best_total = 0
    best_key: tuple[Substitution, Tile] = ((), -1)  # the substitution, the winning tile's kind
    search.set_flags(ctx, last_tile, kong)
    found: list[tuple[int, Substitution]] = []  # the best (total, substitution) so far
    for _, sub in search.candidates(found):
        standing = concrete.copy()
        for t in sub:
            standing[t] += 1
        # A wild winning tile stands for one of the kinds of the substitution, each a
        # different concrete hand (ruling W1: its kind is part of the substitution).
        for win_as in sorted(set(sub)) if wild_win else (win,):
            key = (sub, win_as)
            # The highest total this concrete hand may have and still be the lowest.
            limit = None
            if best is not None:
                limit = best_total if key < best_key else best_total - 1
                if POINTS[SEVEN_PAIRS] > limit and n_melds == 0 and is_seven_pairs(standing):
                    break  # seven pairs score 24 at least (``_wild_bound``)
            table = _score_concrete(
                search, sub, win_as, standing, hand=hand, ctx=ctx, fixed=fixed, exposed=exposed,
                last_tile=last_tile, kong=kong, unique=unique, limit=limit,
            )  # fmt: skip
            if table is None:
                continue  # a reading scores above ``limit``: this hand cannot be the lowest
            total = _total(table)
            if best is None or total < best_total or (total == best_total and key < best_key):
                best, best_total, best_key = table, total, key
                found[:] = [(total, sub)]
    if best is None:
        raise NotWinning(f"{_notation(hand)} is not a winning hand in any form, wilds included")
    return tuple(best)


def _score_concrete(
    search: _WildSearch,
    sub: Substitution,
    win: Tile,
    standing: list[int],
    *,
    hand: Hand,
    ctx: WinContext,
    fixed: tuple[Set, ...],
    exposed: int,
    last_tile: bool,
    kong: bool,
    unique: bool,
    limit: int | None,
) -> FanTable | None:
    """The concrete hand the substitution ``sub`` makes, won on ``win``, scored as
    ``_best_table`` with the wild copies placed low (None: a reading beats ``limit``)."""
    merged = search.merged
    all_tiles = list(merged)
    present = search.base_present
    fours = search.base_fours
    previous = -1
    for t in sub:
        all_tiles[t] += 1
        present |= _LANE[t]
        if t != previous:
            previous = t
            fours += merged[t] + sub.count(t) == 4
    h = _Hand(
        hand, ctx, win, fixed, exposed, fours, standing, all_tiles,
        ctx.self_drawn, last_tile, kong, ctx.wall_last, _wild_traits(present), present,
        EAST + ctx.round_wind, EAST + ctx.seat_wind, unique, search.custom,
    )  # fmt: skip
    wild = tuple((kind, sub.count(kind)) for kind in sorted(set(sub)))
    return _best_table(h, wild, limit)


def _wild_order(
    hand: Hand,
    ctx: WinContext,
    subs: Sequence[Substitution],
    *,
    concrete: Sequence[int],
    merged: Sequence[int],
    last_tile: bool,
    kong: bool,
) -> list[tuple[int, Substitution, int, int]]:
    """``(bound, substitution, present, fours)`` of each substitution, sorted: ``bound`` as
    ``_WildSearch.sub_bound`` (the tests check it against every concrete hand); ``present``
    (``forms.lanes``) and ``fours`` (kinds held four times) of the whole concrete hand."""
    caps = caps_of([a - b for a, b in zip(merged, concrete, strict=True)])
    search = _WildSearch(hand, ctx, concrete, merged, caps)
    search.set_flags(ctx, last_tile, kong)
    order = []
    for sub in subs:
        present, fours, *_ = search.key(sub, True)
        order.append(
            (search.sub_bound(sub), sub, search.base_present | present, search.base_fours + fours)
        )
    order.sort()
    return order


# present, fours, honor pungs, hidden, reading fans (``_group_reading_fans``)
_Key = tuple[int, int, tuple[Tile, ...], int, tuple[int, int]]


class _WildSearch:
    """The substitutions of a hand's wild tiles in increasing order of (bound, substitution),
    never listing those that cannot beat the best found so far.

    ``bound`` (``sub_bound``) is ``_wild_bound`` plus 2 for each Tile Hog: what the kinds
    present, the kinds held four times and the honor pungs every regular reading holds
    imply. These depend on the substitution only through the parts of it in each group
    (suits, honors), so the regular substitutions are never listed one by one to be
    bounded: ``wild_scoring.regular_parts`` gives them as products of per-group parts, the
    parts of a group are bucketed by what they imply (``key``), and one bound is computed
    per product of buckets; equal to ``sub_bound`` of each substitution of the product (the
    same function of the same present lanes, fours and honor pungs, summed group by group).
    Products are expanded one level of bound at a time, merged into sorted order, and only
    while the level can still beat the best (``found``): a product whose bound exceeds the
    best total is never expanded, since each of its substitutions scores at least its bound.

    The bound also counts the reading fans of the groups (``_group_reading_fans``: part of
    ``key``, so summed group by group like the rest; ``sub_bound`` sums them over the whole
    substitution's groups, the same numbers). The special forms are listed at 12 at least
    (``_SPECIAL_FLOOR``).

    Seven pairs are listed last, lazily, at level 24 (their substitutions can be many; each
    scores at least its seven-pairs reading, 24 and more, as ``_wild_bound`` says): each then
    gets ``max(24, sub_bound)``. A substitution found both as a regular and a special form is
    listed under each bound, both sound; scoring it twice changes nothing.
    """

    def __init__(
        self,
        hand: Hand,
        ctx: WinContext,
        concrete: Sequence[int],
        merged: Sequence[int],
        caps: tuple[int, ...],
        *,
        custom: bool = True,
    ) -> None:
        self.custom = custom
        self.exposed = sum(1 for m in hand.melds if m.offer)
        self.kongs = sum(1 for m in hand.melds if m.kind is MeldKind.KONG)
        self.win = hand.win_tile
        self.self_drawn = ctx.self_drawn
        self.flags = (False, False, False, False, 0, 0)
        self.concrete = tuple(concrete)
        self.merged = tuple(merged)
        self.caps = caps
        self.wilds = hand.wilds
        self.melds = len(hand.melds)
        self.base_present = lanes(merged)
        self.base_fours = merged.count(4)
        self.base_honor_pungs = tuple(t for t in range(EAST, N_KINDS) if concrete[t] == 3)
        # Sets every regular reading holds: the melds' kongs and honor pungs, and a pung of
        # each honor kind standing three times (honors read one way), concealed unless it is
        # the winning tile claimed (ruling 5).
        concealed_kongs = sum(1 for m in hand.melds if m.kind is MeldKind.KONG and not m.offer)
        self.melded_honors = tuple(
            sorted(m.tile for m in hand.melds if m.kind is not MeldKind.CHOW and m.tile >= EAST)
        )
        self.melded_terminals = sum(
            1 for m in hand.melds if m.kind is not MeldKind.CHOW and m.tile in _SUITED_TERMINALS
        )
        prevalent, seat = EAST + ctx.round_wind, EAST + ctx.seat_wind
        self.sets = (self.kongs - concealed_kongs, concealed_kongs, prevalent, seat)
        self.parts = regular_parts(self.concrete, caps, self.wilds)
        self.specials = special_substitutions(self.concrete, caps, self.wilds, self.melds)

    def set_flags(self, ctx: WinContext, last_tile: bool, kong: bool) -> None:
        """The situation flags of ``_wild_bound`` (computed from the real tiles)."""
        exposed = self.exposed
        self.flags = (
            last_tile, ctx.self_drawn, ctx.wall_last, kong, min(exposed, 1) + (exposed == 4),
            _situation_of(ctx, self.custom),
        )  # fmt: skip

    def _seven_pairs(self) -> Iterator[Substitution]:
        if self.melds:
            return iter(())
        return seven_pairs_substitutions(self.concrete, self.caps, self.wilds)

    def complete(self) -> bool:
        """Whether some substitution completes the hand."""
        return bool(self.parts or self.specials) or next(self._seven_pairs(), None) is not None

    def stands_only_for(self, tile: Tile) -> bool:
        """Whether every substitution stands for ``tile`` alone (stops at the first that
        does not)."""
        return all(
            t == tile for parts in self.parts for group in parts for part in group for t in part
        ) and not any(t != tile for sub in chain(self.specials, self._seven_pairs()) for t in sub)

    def key(self, part: Substitution, honors: bool, group: int = -1) -> _Key:
        """What the kinds ``part`` (of one group, or a whole substitution) imply: their lanes,
        the kinds they bring to four copies, the honor pungs of the hand (``honors``: the
        part holds every honor the substitution adds), how many of those are concealed, and
        the reading fans of ``group`` (``GROUPS`` index; -1: ``part`` is the whole
        substitution) as ``_group_reading_fans`` gives them."""
        reading = self._group_fans(part, group) if group >= 0 else self._reading_fans(part)
        present = fours = hidden = 0
        pungs: list[Tile] = []
        previous = -1
        for t in part:
            present |= _LANE[t]
            if t != previous:
                previous = t
                n = part.count(t)
                if self.merged[t] + n == 4:
                    fours += 1
                if t >= EAST and self.concrete[t] + n == 3:
                    pungs.append(t)
                    hidden += self.self_drawn or t != self.win
        if honors:
            for t in self.base_honor_pungs:
                if t not in part:
                    pungs.append(t)
                    hidden += self.self_drawn or t != self.win
        return present, fours, tuple(pungs), hidden, reading

    def _group_fans(self, part: Substitution, group: int) -> tuple[int, int]:
        """``_group_reading_fans`` of one group's concrete tiles with ``part`` added;
        ``(-1, -1)`` when they read as no sets (and pair)."""
        lo, hi, honors = GROUPS[group]
        counts = list(self.concrete[lo:hi])
        for t in part:
            counts[t - lo] += 1
        return _group_reading_fans(tuple(counts), sum(counts) % 3 == 2, honors, self.custom)

    def _reading_fans(self, sub: Substitution) -> tuple[int, int]:
        """The reading fans of a whole substitution: the sums over the groups, each group's
        best decomposition (a regular reading is any choice of one per group, the groups
        being independent); ``(0, 0)`` when the concrete hand has no regular reading."""
        combined = pair_only = pairs = 0
        for group, (lo, hi, _) in enumerate(GROUPS):
            part = tuple(t for t in sub if lo <= t < hi)
            pairs += (sum(self.concrete[lo:hi]) + len(part)) % 3 == 2
            c, p = self._group_fans(part, group)
            if c < 0:
                return 0, 0
            combined += c
            pair_only += p
        if pairs != 1:
            return 0, 0
        return combined, pair_only

    def _bound(
        self,
        present: int,
        fours: int,
        pungs: tuple[Tile, ...],
        hidden: int,
        reading: tuple[int, int],
    ) -> int:
        honor_pungs = tuple(sorted((*self.melded_honors, *pungs)))
        combined, pair_only = reading
        reading = (combined + self.melded_terminals, pair_only)
        bound = _wild_bound(
            self.base_present | present, self.flags, honor_pungs, hidden, self.sets, reading=reading
        )
        return bound + POINTS[TILE_HOG] * (self.base_fours + fours - self.kongs)

    def sub_bound(self, sub: Substitution) -> int:
        """A lower bound of the score of the concrete hand ``sub`` makes (``_wild_bound``)."""
        return self._bound(*self.key(sub, True))

    def candidates(
        self, found: list[tuple[int, Substitution]]
    ) -> Iterator[tuple[int, Substitution]]:
        """``(bound, substitution)`` in increasing order, stopping where the bound cannot beat
        the best ``(total, substitution)`` so far: ``found`` holds it once there is one (the
        caller updates it between two substitutions)."""
        heap: list[tuple[int, int, tuple[tuple[Substitution, ...], ...] | None]] = []
        seq = numbering()
        for options in self.parts:
            buckets = []
            last = len(options) - 1
            for g, parts in enumerate(options):
                by_key: dict[_Key, list[Substitution]] = {}
                for part in parts:
                    by_key.setdefault(self.key(part, g == last, g), []).append(part)
                buckets.append([(key, tuple(group)) for key, group in by_key.items()])
            for combo in product(*buckets):
                present = fours = hidden = combined = pair_only = 0
                pungs: tuple[Tile, ...] = ()
                for (p, f, hp, hd, (c, po)), _ in combo:
                    present |= p
                    fours += f
                    pungs += hp
                    hidden += hd
                    combined += c
                    pair_only += po
                bound = self._bound(present, fours, pungs, hidden, (combined, pair_only))
                heappush(heap, (bound, next(seq), tuple(group for _, group in combo)))
        for sub in self.specials:
            bound = max(_SPECIAL_FLOOR, self.sub_bound(sub))
            heappush(heap, (bound, next(seq), ((sub,),)))
        if self.melds == 0:
            heappush(heap, (POINTS[SEVEN_PAIRS], next(seq), None))
        while heap:
            level = heap[0][0]
            if found and level > found[0][0]:
                return
            streams = []
            while heap and heap[0][0] == level:
                entry = heappop(heap)[2]
                if entry is None:
                    for sub in self._seven_pairs():
                        heappush(heap, (max(level, self.sub_bound(sub)), next(seq), ((sub,),)))
                    continue
                # Within a group every part has the same length, so the product of sorted
                # parts, concatenated, is sorted.
                streams.append(map(_concat, product(*entry)))
            previous: Substitution | None = None
            for sub in merge(*streams):
                if sub == previous:
                    continue
                previous = sub
                if found and (level > found[0][0] or (level == found[0][0] and sub > found[0][1])):
                    break  # sorted: no later substitution of this level can do better
                yield level, sub


def _concat(parts: tuple[Substitution, ...]) -> Substitution:
    return tuple(chain.from_iterable(parts))


_LANE: tuple[int, ...] = tuple(lane_mask((t,)) for t in range(N_KINDS))


@lru_cache(maxsize=1 << 14)
def _wild_traits(present: int) -> FanTable:
    """``_tile_traits`` shared by the substitutions (readers copy it, never change it)."""
    return _tile_traits(present)


# What a substitution of ``special_substitutions`` scores at least. Its concrete hand has
# no regular or seven-pairs reading (its knitted or orphan tiles fit in no set and are not
# pairs), so it scores its special form's table (``_best_table`` returns it at once),
# which holds the form's fan, never excluded: 全不靠 12 (七星不靠 24), 组合龙 12, 十三幺 88.
_SPECIAL_FLOOR = min(
    POINTS[LESSER_HONORS_AND_KNITTED_TILES], POINTS[KNITTED_STRAIGHT], POINTS[THIRTEEN_ORPHANS]
)
_SUITED_TERMINALS = frozenset((0, 8, 9, 17, 18, 26))
_PAIR_FAN_RANKS = frozenset((0, 1, 4, 7, 8))  # 1 or 9 (幺九头), 2, 5 or 8 (二五八将)
# ``_wild_bound`` adds the reading fans as points: each counts 1.
assert POINTS[PUNG_OF_TERMINALS_OR_HONORS] == POINTS[PAIR_OF_1_OR_9] == 1
assert POINTS[PAIR_OF_2_5_OR_8] == 1


@lru_cache(maxsize=1 << 14)
def _group_reading_fans(
    counts: tuple[int, ...], pair: bool, honors: bool, custom: bool
) -> tuple[int, int]:
    """The most reading fans one decomposition of a group's concealed ``counts`` (a suit's
    nine ranks, or the honors) into sets (and the pair, ``pair``) can hold, as
    ``(terminal pungs + pair fan, pair fan)``: 幺九刻 of its suited terminal pungs, and 1
    when ``custom`` and its pair is a suited 1, 2, 5, 8 or 9 (ruling W11). ``(-1, -1)``
    when no decomposition exists. Honor pungs are ``_WildSearch.key``'s (0 here)."""
    i = next((r for r, n in enumerate(counts) if n), -1)
    if i < 0:
        return (-1, -1) if pair else (0, 0)
    ways: list[tuple[int, int]] = []  # (combined, pair fan) of the ways to take rank i
    rest = list(counts)
    if counts[i] >= 3:
        rest[i] -= 3
        c, p = _group_reading_fans(tuple(rest), pair, honors, custom)
        rest[i] += 3
        if c >= 0:
            ways.append((c + (not honors and i in (0, 8)), p))
    if not honors and i <= 6 and counts[i + 1] and counts[i + 2]:
        for r in (i, i + 1, i + 2):
            rest[r] -= 1
        ways.append(_group_reading_fans(tuple(rest), pair, honors, custom))
        for r in (i, i + 1, i + 2):
            rest[r] += 1
    if pair and counts[i] >= 2:
        rest[i] -= 2
        c, p = _group_reading_fans(tuple(rest), False, honors, custom)
        if c >= 0:
            fan = int(custom and not honors and i in _PAIR_FAN_RANKS)
            ways.append((c + fan, p + fan))
    # Each maximum is taken on its own: either is the value of one decomposition.
    return max((c for c, _ in ways), default=-1), max((p for _, p in ways), default=-1)


@lru_cache(maxsize=1 << 14)
def _wild_bound(
    present: int,
    flags: tuple[bool, bool, bool, bool, int, int],
    honor_pungs: tuple[Tile, ...],
    hidden: int,
    sets: tuple[int, int, Tile, Tile],
    *,
    reading: tuple[int, int] = (0, 0),
) -> int:
    """A lower bound of the score of any concrete hand with these kinds ``present``.

    The total, after the exclusions, of the tile traits (``_tile_traits``), the fans of how
    the hand was won and the concealment fans: ``flags`` is ``(last tile, self-drawn, last
    of the wall, kong, exposed, situation)`` with ``exposed`` 0 (no exposed meld), 1 (some)
    or 2 (four) and ``situation`` ``_situation_of`` (天和 地和 人和, applied as to every
    reading by ``_situation_fans``).
    ``honor_pungs``, ``hidden`` and ``sets`` (melded kongs, concealed kongs, prevalent and
    seat wind tiles) add the sets every regular reading holds: the melds' kongs (their kong
    fans), the honor pungs (箭刻, 幺九刻, or 圈风刻 / 门风刻 instead), ``hidden`` of them
    concealed (双暗刻 and up, with the concealed kongs). ``_wild_order`` adds 2 for each Tile
    Hog (four of a kind not declared as a kong). ``reading`` is ``(combined, pair fan)`` of
    ONE regular reading each (``_group_reading_fans`` summed over the groups, the melds'
    suited terminal pungs in ``combined``): ``combined`` its 幺九刻 of suited terminal pungs
    plus its 二五八将 / 幺九头, ``pair fan`` the pair fan alone; ``combined`` is added, or
    ``pair fan`` where 清幺九 / 混幺九 / 字一色 (tile traits, here too) remove every 幺九刻.

    Why it is sound: the concrete hand scores its highest reading, so it is enough that
    one of its forms scores this much.

    - A regular reading's table holds these same fans plus others (all counts >= 0;
      the only deductions, 幺九刻 for wind pungs and 三风刻, take back what the reading
      itself added). An exclusion that removes one of these fans from the reading but not
      from the bound is set off by the fan that excludes it, worth more than all it
      removes: 全带五 16 / 全双刻 24 (断幺 2, 无字 1), 一色双龙会 64 (清一色 24, 平和 2,
      无字 1), 三色双龙会 16 (平和 2, 无字 1), 平和 2 (无字 1), 四暗刻 64 (门前清 2 or
      不求人 4), 四方大发财 168 (字一色 64), 一色四同顺 48 (四归一, at most 3 x 2), 大四喜
      88 / 小四喜 64 / 三风刻 12 (the wind pungs' fans, at most 2 each), 大三元 88 / 小三元
      64 / 双箭刻 6 (箭刻 2 each); more concealed pungs only raise the concealed-pung fan.
      Each of these excluders is itself removed only by one of the others, which then
      pays for both. The other exclusions are between tile traits or flags, applied here too.
    - ``reading``: the concrete hand scores at least EACH of its regular readings, so these
      fans need hold in one reading only, the one they were counted on (the groups are
      independent: a regular reading is any choice of one decomposition per group, so the
      per-group maxima add up in one reading). That reading's table holds the fans above
      and, on top: its suited terminal pungs each add 1 to 幺九刻, which the honor pungs'
      wind adjustment and 三风刻 (-3: exactly its three wind pungs) do not touch; only
      清幺九, 混幺九, 字一色 (tile traits: then ``pair fan`` alone is added), 大四喜 88 and
      小四喜 64 (at most one terminal pung beside the winds, paid for) remove them. Its pair
      fan is set after the exclusions (``_custom_pair_fans``): no exclusion removes it;
      一色双龙会 64 / 三色双龙会 16 stand in for 二五八将 (they pay for it with 平和 and
      the rest), and 四方大发财 has an honor pair. Both fans count 1.
    - Seven pairs (no melds, no honor held three times) keep the tile traits, Tile Hog and
      the flags and add 24 (more than the 4 of 不求人 or 2 of 门前清 they drop). Honors
      and knitted (12 or 24: tile traits at most 6, 五门齐), knitted straight (12: traits
      at most 6, Tile Hog at most one, its one set scored), thirteen orphans, nine gates and
      seven shifted pairs (88: traits at most 64) keep the flags and score more than the
      traits and concealment they drop.
    """
    last_tile, self_drawn, wall_last, kong, exposed, situation = flags
    table = _tile_traits(present)
    if last_tile:
        table[LAST_TILE] = 1
    if self_drawn:
        table[SELF_DRAWN] = 1
        if wall_last:
            table[LAST_TILE_DRAW] = 1
            table[SELF_DRAWN] = 0
        if kong:
            table[OUT_WITH_REPLACEMENT_TILE] = 1
            table[SELF_DRAWN] = 0
    else:
        if wall_last:
            table[LAST_TILE_CLAIM] = 1
        if kong:
            table[ROBBING_THE_KONG] = 1
            table[LAST_TILE] = 0
    if exposed == 0:
        table[FULLY_CONCEALED_HAND if self_drawn else CONCEALED_HAND] = 1
    elif exposed == 2:
        table[SELF_DRAWN if self_drawn else MELDED_HAND] = 1
    elif self_drawn:
        table[SELF_DRAWN] = 1
    melded_kongs, concealed_kongs, prevalent, seat = sets
    if honor_pungs or melded_kongs or concealed_kongs:
        _kongs_and_concealed_pungs(hidden, melded_kongs, concealed_kongs, table)
        for tile in honor_pungs:
            table[DRAGON_PUNG if tile >= RED else PUNG_OF_TERMINALS_OR_HONORS] += 1
    _exclude(table)
    if situation:
        _situation_fans(situation, table)
    if not (
        table[BIG_THREE_WINDS] or table[ALL_TERMINALS_AND_HONORS] or table[ALL_HONORS]
    ):  # as ``_adjust_winds``: a seat or prevalent wind pung counts 2 instead of 1
        for tile in honor_pungs:
            if tile == prevalent:
                table[PREVALENT_WIND] = 1
                table[PUNG_OF_TERMINALS_OR_HONORS] -= 1
            if tile == seat:
                table[SEAT_WIND] = 1
                if seat != prevalent:
                    table[PUNG_OF_TERMINALS_OR_HONORS] -= 1
    combined, pair_only = reading
    if table[ALL_TERMINALS]:
        combined = 0  # 清幺九 removes every 幺九刻 and 幺九头 (its pair is a terminal)
    elif table[ALL_TERMINALS_AND_HONORS] or table[ALL_HONORS]:
        combined = pair_only  # these remove every 幺九刻
    return _total(table) + combined


_HEAVENLY, _EARTHLY, _HUMAN = 1, 2, 3  # ``_situation_of``


def _situation_of(ctx: WinContext, custom: bool) -> int:
    """0, or which of 天和 地和 人和 a rule set with the starred fans scores."""
    if not custom:
        return 0
    return _HEAVENLY if ctx.heavenly else _EARTHLY if ctx.earthly else _HUMAN if ctx.human else 0


def _situation_fans(situation: int, table: FanTable) -> None:
    """天和 地和 人和 in one reading's table, with what they make certain (ruling W12).

    Applied to every reading and form before they are compared (and to the bound of the
    wild search), since it takes fans away: 天和 不计不求人、门前清、自摸 and no wait fan
    (a hand dealt complete waited on nothing); 地和 and 人和 不计门前清 (no claim was made),
    a self-drawn 人和 counting 自摸 instead of 不求人.
    """
    if situation == _HEAVENLY:
        table[HEAVENLY_HAND] = 1
        table[FULLY_CONCEALED_HAND] = table[CONCEALED_HAND] = table[SELF_DRAWN] = 0
        table[EDGE_WAIT] = table[CLOSED_WAIT] = table[SINGLE_WAIT] = 0
    elif situation:
        table[EARTHLY_HAND if situation == _EARTHLY else HUMAN_HAND] = 1
        table[CONCEALED_HAND] = 0
        if table[FULLY_CONCEALED_HAND]:
            table[FULLY_CONCEALED_HAND] = 0
            # 自摸 instead, unless 妙手回春 / 杠上开花 already exclude it
            table[SELF_DRAWN] = int(
                not table[LAST_TILE_DRAW] and not table[OUT_WITH_REPLACEMENT_TILE]
            )
    else:
        return
    table[CHICKEN_HAND] = 0  # 无番和 only when no fan counts


def _hand_fans(hand: Hand, ctx: WinContext, table: FanTable) -> None:
    """The starred fans of the whole hand: 季花, 混杠 (rulings W4, W12)."""
    table[SEAT_FLOWER] = ctx.seat_flowers
    if hand.wilds >= 4:
        table[FOUR_WILDS] = 1
    if table[CHICKEN_HAND] and any(table[HEAVENLY_HAND:SEAT_FLOWER]):
        table[CHICKEN_HAND] = 0  # 无番和 only when no fan counts (季花 is a flower, ruling W12)


def score(hand: Hand, ctx: WinContext = WinContext(), rules: RuleSet = MCR) -> Score:
    """Score a winning hand. Raises ``NotWinning`` when it is not complete in any form.

    With ``rules.extra_fans`` the starred fans of document 000 count too. A hand
    holding wild tiles (``WILD``) needs a rule set with wild tiles (else
    ``InvalidHand``) and scores as its lowest concrete reading (``_score_wild``).
    """
    if hand.wilds:
        if not rules.has_wilds:
            raise InvalidHand(
                f"{_notation(hand)} holds wild tiles (*), but rule set {rules.name!r} has none"
            )
        table = _score_wild(hand, ctx, rules.extra_fans)
    else:
        h = _prepare(hand, ctx, rules.extra_fans)
        best = _best_table(h)
        if best is None:
            raise NotWinning(f"{_notation(hand)} is not a winning hand in any form")
        table = best
    table = table.copy()
    if rules.extra_fans:
        _hand_fans(hand, ctx, table)
    table[FLOWER_TILES] = ctx.flowers
    fans = tuple([_fan_count(i, table[i]) for i in compress(range(N_FANS), table)])
    total = _total(table)
    flowers = ctx.flowers + (ctx.seat_flowers if rules.extra_fans else 0)
    return Score(fans=fans, total=total, meets_minimum=total - flowers >= rules.min_fan)


@lru_cache(maxsize=1024)
def _fan_count(index: int, count: int) -> FanCount:
    return FanCount(FANS[index], count)


def _notation(hand: Hand) -> str:
    from engine.notation import format_hand  # noqa: PLC0415 (notation imports hand, not scoring)

    return repr(format_hand(hand))

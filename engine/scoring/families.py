"""Step 2, the chow and pung families: the fans of the sets among themselves (MCR and the
starred 混三步 混四步 混三节 混四节), following the non-separation, non-identical and
account-once principles as the reference calculators apply them; the kong and concealed-pung
fans.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from itertools import compress
from typing import Final

from engine.scoring.ids import (
    BIG_FOUR_WINDS,
    BIG_THREE_DRAGONS,
    BIG_THREE_WINDS,
    CONCEALED_KONG,
    CONCEALED_KONG_AND_MELDED_KONG,
    DOUBLE_PUNG,
    FOUR_CONCEALED_PUNGS,
    FOUR_KONGS,
    FOUR_MIXED_SUIT_SHIFTED_CHOWS,
    FOUR_MIXED_SUIT_SHIFTED_PUNGS,
    FOUR_PURE_SHIFTED_CHOWS,
    FOUR_PURE_SHIFTED_PUNGS,
    MELDED_KONG,
    MIXED_DOUBLE_CHOW,
    MIXED_SHIFTED_CHOWS,
    MIXED_SHIFTED_PUNGS,
    MIXED_STRAIGHT,
    MIXED_SUIT_SHIFTED_CHOWS,
    MIXED_SUIT_SHIFTED_PUNGS,
    MIXED_TRIPLE_CHOW,
    N_FANS,
    POINTS,
    PURE_DOUBLE_CHOW,
    PURE_SHIFTED_CHOWS,
    PURE_SHIFTED_PUNGS,
    PURE_STRAIGHT,
    PURE_TERMINAL_CHOWS,
    PURE_TRIPLE_CHOW,
    QUADRUPLE_CHOW,
    SHORT_STRAIGHT,
    THREE_CONCEALED_PUNGS,
    THREE_KONGS,
    THREE_SUITED_TERMINAL_CHOWS,
    TRIPLE_PUNG,
    TWO_CONCEALED_KONGS,
    TWO_CONCEALED_PUNGS,
    TWO_DRAGONS_PUNGS,
    TWO_MELDED_KONGS,
    TWO_TERMINAL_CHOWS,
    FanTable,
)
from engine.tiles import (
    EAST,
    NORTH,
    RED,
    Tile,
)

# ------------------------------------------------------- families of sets ---
# Written with plain comparisons of small ints (no sets, sorted lists, generators or
# ``*args``), which compile to native code: every regular reading runs them.


def _same_suit(a: Tile, b: Tile) -> bool:
    return a < EAST and b < EAST and a // 9 == b // 9


def _shifted(step: int, a: Tile, b: Tile, c: Tile) -> bool:
    """Ranks increasing by ``step`` in the given order (suits not checked)."""
    return a % 9 + step == b % 9 and b % 9 + step == c % 9


def _three_suits(a: Tile, b: Tile, c: Tile) -> bool:
    sa, sb, sc = a // 9, b // 9, c // 9
    return sa not in (sb, sc) and sb != sc


def _shifted_1_unordered(a: Tile, b: Tile, c: Tile) -> bool:
    """Three ranks one apart in some order: all different, the highest two above the lowest."""
    ra, rb, rc = a % 9, b % 9, c % 9
    return ra not in (rb, rc) and rb != rc and max(ra, rb, rc) - min(ra, rb, rc) == 2


def _four_chows_fan(t: Sequence[Tile]) -> int:
    """一色四步高 / 一色四同顺 of four chows (lowest tiles, sorted)."""
    a, b, c, d = t[0], t[1], t[2], t[3]
    if _same_suit(a, b) and _same_suit(a, c) and _same_suit(a, d):
        if (_shifted(2, a, b, c) and _shifted(2, b, c, d)) or (
            _shifted(1, a, b, c) and _shifted(1, b, c, d)
        ):
            return FOUR_PURE_SHIFTED_CHOWS
        if a == b == c == d:
            return QUADRUPLE_CHOW
    return -1


def _three_chows_fan(a: Tile, b: Tile, c: Tile) -> int:
    """A fan of three chows (lowest tiles, in reference order), or -1."""
    if _three_suits(a, b, c):
        if _shifted_1_unordered(a, b, c):
            return MIXED_SHIFTED_CHOWS  # 三色三步高
        ra, rb, rc = a % 9, b % 9, c % 9
        if ra == rb == rc:
            return MIXED_TRIPLE_CHOW  # 三色三同顺
        if ra % 3 == rb % 3 == rc % 3 == 0 and ra not in (rb, rc) and rb != rc:
            return MIXED_STRAIGHT  # 花龙: 123 456 789 (chows start at ranks 1 to 7)
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
        if a - b == 3 or b - a == 3:
            return SHORT_STRAIGHT  # 连六
        ra, rb = a % 9, b % 9
        if (ra == 0 and rb == 6) or (ra == 6 and rb == 0):
            return TWO_TERMINAL_CHOWS  # 老少副
        if a == b:
            return PURE_DOUBLE_CHOW  # 一般高
    return -1


_PAIR_FANS: Final = (PURE_DOUBLE_CHOW, MIXED_DOUBLE_CHOW, SHORT_STRAIGHT, TWO_TERMINAL_CHOWS)
assert tuple(range(PURE_DOUBLE_CHOW, PURE_DOUBLE_CHOW + 4)) == _PAIR_FANS  # ``_limit_pair_fans``


def _first_pair_fan(f: int, g: int, h: int) -> int:
    """The first of ``_PAIR_FANS`` among three, or -1."""
    for candidate in _PAIR_FANS:
        if candidate in (f, g, h):
            return candidate
    return -1


def _limit_pair_fans(found: Sequence[int], limit: int, table: FanTable) -> None:
    """Account-once (套算一次): keep at most ``limit`` of the 1-fan chow pairs.

    When more pairs are found than the chows allow, repeated fans are dropped
    first (不得相同), from 老少副 back to 一般高.
    """
    tally = [0, 0, 0, 0]  # of each of ``_PAIR_FANS``, in their order (consecutive ids)
    for fan in found:
        if fan >= 0:
            tally[fan - PURE_DOUBLE_CHOW] += 1
    count = tally[0] + tally[1] + tally[2] + tally[3]
    keep = 1
    while count > limit and keep >= 0:
        for i in (3, 2, 1, 0):
            while tally[i] > keep and count > limit:
                tally[i] -= 1
                count -= 1
        keep -= 1
    for i in range(4):
        table[PURE_DOUBLE_CHOW + i] = tally[i]


_TRIPLES: Final = ((0, 1, 2, 3), (0, 1, 3, 2), (0, 2, 3, 1), (1, 2, 3, 0))


def _four_chows(t: Sequence[Tile], table: FanTable) -> None:
    fan = _four_chows_fan(t)
    if fan >= 0:
        table[fan] = 1
        return
    for i, j, k, extra in _TRIPLES:
        fan = _three_chows_fan(t[i], t[j], t[k])
        if fan >= 0:
            table[fan] = 1
            # 套算一次: the fourth chow combines once with one of the three.
            x = t[extra]
            pair = _first_pair_fan(
                _two_chows_fan(t[i], x), _two_chows_fan(t[j], x), _two_chows_fan(t[k], x)
            )
            if pair >= 0:
                table[pair] = 1
            return
    pairs = [
        _two_chows_fan(t[0], t[1]),
        _two_chows_fan(t[0], t[2]),
        _two_chows_fan(t[0], t[3]),
        _two_chows_fan(t[1], t[2]),
        _two_chows_fan(t[1], t[3]),
        _two_chows_fan(t[2], t[3]),
    ]
    # Four chows make at most three 1-fan pairs, one fewer for each chow that
    # combines with none of the others.
    limit = 3
    for x, y, z in ((0, 1, 2), (0, 3, 4), (1, 3, 5), (2, 4, 5)):
        if pairs[x] < 0 and pairs[y] < 0 and pairs[z] < 0:
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
    a, b, c, d = t[0], t[1], t[2], t[3]
    if (
        a < EAST
        and _same_suit(a, b)
        and _same_suit(a, c)
        and _same_suit(a, d)
        and _shifted(1, a, b, c)
        and _shifted(1, b, c, d)
    ):
        return FOUR_PURE_SHIFTED_PUNGS  # 一色四节高
    if a == EAST and b == EAST + 1 and c == EAST + 2 and d == NORTH:
        return BIG_FOUR_WINDS  # 大四喜
    return -1


def _is_wind(t: Tile) -> bool:
    return EAST <= t <= NORTH


def _is_dragon(t: Tile) -> bool:
    return t >= RED  # (tiles end with the dragons)


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
        if _is_wind(a) and _is_wind(b) and _is_wind(c):
            return BIG_THREE_WINDS  # 三风刻
        if _is_dragon(a) and _is_dragon(b) and _is_dragon(c):
            return BIG_THREE_DRAGONS  # 大三元
    return -1


def _two_pungs_fan(a: Tile, b: Tile) -> int:
    if a < EAST and b < EAST:
        if a % 9 == b % 9:
            return DOUBLE_PUNG  # 双同刻
    elif _is_dragon(a) and _is_dragon(b):
        return TWO_DRAGONS_PUNGS  # 双箭刻
    return -1


def _count_pairs_of_pungs(t: Sequence[Tile], table: FanTable) -> None:
    n = len(t)
    for a in range(n):
        for b in range(a + 1, n):
            fan = _two_pungs_fan(t[a], t[b])
            if fan >= 0:
                table[fan] += 1


def _four_pungs(t: Sequence[Tile], table: FanTable) -> None:
    fan = _four_pungs_fan(t)
    if fan >= 0:
        table[fan] = 1
        return
    for i, j, k, free in _TRIPLES:
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


def _chow_families(chows: Sequence[Tile], pair: Tile, table: FanTable) -> None:
    """The chow families (MCR) of ``chows`` (lowest tiles, in reference order) into
    ``table``, whose chow family entries are 0; ``pair`` matters with four chows (双龙会)."""
    n = len(chows)
    if n == 4:
        family = _is_terminal_chows(chows, pair)
        if family >= 0:
            table[family] = 1
        else:
            _four_chows(chows, table)
    elif n == 3:
        _three_chows(chows, table)
    elif n == 2:
        fan = _two_chows_fan(chows[0], chows[1])
        if fan >= 0:
            table[fan] += 1


def _pung_families(pungs: Sequence[Tile], table: FanTable) -> None:
    """The pung families (MCR) of ``pungs`` (in reference order) into ``table``, whose pung
    family entries are 0."""
    n = len(pungs)
    if n == 4:
        _four_pungs(pungs, table)
    elif n == 3:
        _three_pungs(pungs, table)
    elif n == 2:
        fan = _two_pungs_fan(pungs[0], pungs[1])
        if fan >= 0:
            table[fan] += 1


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
    if hidden == 2:
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
    suit = pair // 9
    lows = in_suit = 0
    others = 0  # a bit for each chow of 123 or 789 in another suit: 2 * suit + (789)
    for c in chows:
        rank = c % 9
        if rank not in (0, 6):
            return -1
        if c // 9 == suit:
            in_suit += 1
            lows += rank == 0
        else:
            others |= 1 << (2 * (c // 9) + (rank == 6))
    if in_suit == len(chows):
        return PURE_TERMINAL_CHOWS if lows == 2 else -1
    if in_suit:
        return -1
    # the 123 and 789 of both other suits (their two bits each; the pair's suit has none)
    if others == 0b111111 & ~(0b11 << (2 * suit)):
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
    # ``compress`` skips the ~90 zero entries in C (a cache miss of ``_families`` runs this
    # up to three times; enumerating every entry was most of its cost)
    return [(i, table[i]) for i in compress(_FAN_IDS, table)]


_FAN_IDS: Final = range(N_FANS)


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
    _chow_families(chows, pair, table)
    chow_fans: list[tuple[int, int]] = []
    if custom:  # the chow families alone, to weigh 混三步 / 混四步 against them
        chow_fans = _custom_chows(chows, _entries(table))
        table = [0] * N_FANS
    _pung_families(pungs, table)
    if not custom:
        return tuple(_entries(table))
    merged = [0] * N_FANS
    for fan, n in chow_fans + _custom_pungs(pungs, _entries(table)):
        merged[fan] += n
    return tuple(_entries(merged))

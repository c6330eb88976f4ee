"""Step 1, hand preparation: what every reading of one hand shares (``_Hand``), the fans of
the tiles present (suits, terminals and honors, ranges) and of how the hand was won.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol

from engine.forms import (
    CHOW,
    KONG,
    PUNG,
    Memo,
    Reading,
    Set,
    _regular_wait_mask,
    group_patterns,
    kind_mask,
    kinds_present,
    readings_of_patterns,
    special_wait_mask,
)
from engine.hand import Hand, MeldKind
from engine.scoring.context import WinContext
from engine.scoring.ids import (
    ALL_GREEN,
    ALL_HONORS,
    ALL_SIMPLES,
    ALL_TERMINALS,
    ALL_TERMINALS_AND_HONORS,
    ALL_TYPES,
    COMPILED,
    CONCEALED_HAND,
    EARTHLY_HAND,
    FULL_FLUSH,
    FULLY_CONCEALED_HAND,
    HALF_FLUSH,
    HEAVENLY_HAND,
    HUMAN_HAND,
    LAST_TILE,
    LAST_TILE_CLAIM,
    LAST_TILE_DRAW,
    LOWER_FOUR,
    LOWER_TILES,
    MELDED_HAND,
    MIDDLE_TILES,
    N_FANS,
    NO_HONORS,
    ONE_VOIDED_SUIT,
    OUT_WITH_REPLACEMENT_TILE,
    REVERSIBLE_TILES,
    ROBBING_THE_KONG,
    SELF_DRAWN,
    UPPER_FOUR,
    UPPER_TILES,
    FanTable,
)
from engine.tiles import (
    EAST,
    GREEN,
    N_KINDS,
    NORTH,
    RED,
    WHITE,
    Tile,
)

# ------------------------------------------------------------ tile traits ---

# Sort key of the reference calculators' tile order (characters, bamboo, dots,
# honors). Readings are tried in this order, which decides between readings of
# equal value (ruling 1) and which three of four sets form a family first.
_REF_SUIT: Final = (0, 2, 1, 3)
REF_KEY: Final[tuple[int, ...]] = tuple(
    (_REF_SUIT[t // 9] * 9 + t % 9) if t < EAST else 27 + t - EAST for t in range(N_KINDS)
)

_GREEN: Final = frozenset((19, 20, 21, 23, 25, GREEN))  # 23468s and 发
_REVERSIBLE: Final = frozenset(
    (9, 10, 11, 12, 13, 16, 17, 19, 21, 22, 23, 25, 26, WHITE)
)  # 1234589p 245689s 白
_TERMINAL_OR_HONOR: Final = frozenset((0, 8, 9, 17, 18, 26, *range(EAST, N_KINDS)))
_WINDS: Final = frozenset(range(EAST, NORTH + 1))
_DRAGONS: Final = frozenset(range(RED, WHITE + 1))


# ---------------------------------------------------------------- readings ---


def _set_key(s: Set) -> int:
    return REF_KEY[s[1]] * 2 + (s[0] == CHOW)


def _ordered_readings(h: _Hand) -> list[Reading]:
    """The regular readings of the standing tiles, in the reference calculators' order
    (ruling 1)."""
    readings = readings_of_patterns(_patterns(h))
    if len(readings) > 1:
        readings.sort(key=lambda reading: sorted(map(_set_key, reading[0])))
    return readings


# ------------------------------------------------------ hand-level context ---


class _Hand:
    """What every reading of one hand shares.

    A plain class, not a dataclass: compiled, its ``__init__`` is native (a dataclass's is
    written by ``dataclasses`` and runs as Python), and one is made for every hand scored.
    """

    def __init__(  # noqa: PLR0917 (positional: a call of 20 keywords costs a microsecond)
        self,
        hand: Hand,
        ctx: WinContext,
        win: Tile,
        fixed: tuple[Set, ...],
        exposed: int,
        fours: int,
        standing: list[int],
        merged: list[int],
        self_drawn: bool,
        last_tile: bool,
        kong: bool,
        wall_last: bool,
        traits: Sequence[int],
        present: int,
        prevalent: Tile,
        seat: Tile,
        unique_wait: bool | None = None,
        custom: bool = False,
        situation: int = -1,
        patterns: tuple[int, int, int, int] | None = None,
        kinds: int = -1,
    ) -> None:
        self.hand = hand
        self.ctx = ctx
        self.win = win
        self.fixed = fixed  # the declared melds as sets
        self.melds = len(fixed)
        self.exposed = exposed  # how many of them are exposed
        self.fours = fours  # tile kinds held four times, kongs included
        self.standing = standing  # concealed counts, winning tile included
        self.merged = merged  # every tile of the hand
        self.self_drawn = self_drawn
        self.last_tile = last_tile
        self.kong = kong
        self.wall_last = wall_last
        self.traits = traits  # fans that depend only on the tiles present (readers copy it)
        self.present = present  # the tile kinds in the hand (``forms.kinds_present``)
        self.prevalent = prevalent  # the prevalent wind's tile
        self.seat = seat  # the seat wind's tile
        self.unique_wait = unique_wait  # computed on demand
        self.custom = custom  # score the starred fans of document 000 (``RuleSet.extra_fans``)
        self.situation = situation  # 天和 地和 人和 when one counts (``_situation_fan``)
        self.patterns = patterns  # of ``standing`` (``_patterns``), when known
        self.kinds = kinds  # ``forms.kinds_present`` of ``standing`` (``_kinds``), -1 unknown


def _patterns(h: _Hand) -> tuple[int, int, int, int]:
    """``forms.group_patterns`` of the standing tiles, computed once a hand."""
    patterns = h.patterns
    if patterns is None:
        patterns = h.patterns = group_patterns(h.standing)
    return patterns


def _kinds(h: _Hand) -> int:
    """``forms.kinds_present`` of the standing tiles, computed once a hand."""
    kinds = h.kinds
    if kinds < 0:
        kinds = h.kinds = kinds_present(h.standing)
    return kinds


_SET_KIND: Final = {MeldKind.CHOW: CHOW, MeldKind.PUNG: PUNG, MeldKind.KONG: KONG}
# A tile's count as it adds to its group's pattern (``forms.group_patterns``: 4 bits a tile,
# the group ``tile // 9``, the honors 3).
_NIBBLE: Final = tuple(1 << (t % 9 << 2) for t in range(N_KINDS))


def _prepare(hand: Hand, ctx: WinContext, custom: bool = False) -> _Hand:
    win = hand.win_tile
    # The counts, the group patterns and the kinds present of the standing tiles in one pass
    # (cheaper than packing the counts afterwards, compiled or not).
    standing = [0] * N_KINDS
    a = b = c = d = present = fours = 0
    for tile in (*hand.standing, win):
        n = standing[tile] + 1  # (compiled, ``+=`` on an item is a generic add)
        standing[tile] = n
        fours += n == 4
        present |= 1 << tile
        group = tile // 9
        if group == 0:
            a += _NIBBLE[tile]
        elif group == 1:
            b += _NIBBLE[tile]
        elif group == 2:
            c += _NIBBLE[tile]
        else:
            d += _NIBBLE[tile]
    kinds = present
    merged = standing.copy()
    fixed = tuple([(_SET_KIND[m.kind], m.tile, m.offer == 0) for m in hand.melds])
    fixed_win = exposed = 0  # copies of the winning tile in the melds; exposed melds
    has_kong = False
    for kind, tile, hidden in fixed:
        if kind == CHOW:
            for t in range(tile, tile + 3):
                n = merged[t] + 1
                merged[t] = n
                fours += n == 4
            present |= 7 << tile
            fixed_win += tile <= win <= tile + 2
        else:
            added = 4 if kind == KONG else 3
            n = merged[tile] + added
            merged[tile] = n
            fours += n == 4
            present |= 1 << tile
            if tile == win:
                fixed_win += added
            has_kong = has_kong or kind == KONG
        exposed += not hidden
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
        hand,
        ctx,
        win,
        fixed,
        exposed,
        fours,
        standing,
        merged,
        ctx.self_drawn,
        last_tile,
        kong,
        ctx.wall_last,
        _tile_traits(present) if COMPILED else _TRAITS[present],
        present,
        EAST + ctx.round_wind,
        EAST + ctx.seat_wind,
        None,
        custom,
        _situation_fan(ctx, custom) if custom else -1,  # no call for MCR
        (a, b, c, d),
        kinds,
    )


_SUIT_MASKS: Final = (kind_mask(range(9)), kind_mask(range(9, 18)), kind_mask(range(18, 27)))
_HONOR_MASK: Final = kind_mask(range(EAST, N_KINDS))
_WIND_MASK: Final = kind_mask(range(EAST, NORTH + 1))
_DRAGON_MASK: Final = kind_mask(range(RED, WHITE + 1))
_TERMINAL_MASK: Final = kind_mask((0, 8, 9, 17, 18, 26))
_GREEN_MASK: Final = kind_mask(_GREEN)
_REVERSIBLE_MASK: Final = kind_mask(_REVERSIBLE)
# Ranks of the three suits folded onto the bits of the first: bit r-1 for rank r.
_RANKS: Final = kind_mask(range(9))
_RANKS_1_TO_4: Final = kind_mask(range(4))
_RANKS_6_TO_9: Final = kind_mask(range(5, 9))
_RANKS_4_TO_6: Final = kind_mask(range(3, 6))
_RANK_4: Final = kind_mask((3,))
_RANK_6: Final = kind_mask((5,))


def _tile_traits(present: int) -> FanTable:
    """Fans of the tiles present (``forms.kinds_present``): suits, terminals and honors, ranges.

    No exclusions yet: ``_exclude`` applies them with the rest.
    """
    table = [0] * N_FANS
    honors = present & _HONOR_MASK
    characters, dots, bamboo = _SUIT_MASKS  # m p s; the three tests written out, no generator
    missing = (not present & characters) + (not present & bamboo) + (not present & dots)
    if not honors:
        table[NO_HONORS] = 1  # 无字
    if missing == 2:
        if honors:
            table[HALF_FLUSH] = 1  # 混一色
        else:
            table[FULL_FLUSH] = 1  # 清一色
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
        ranks = (present | present >> 9 | present >> 18) & _RANKS
        if not ranks & ~_RANKS_1_TO_4:
            table[LOWER_FOUR if ranks & _RANK_4 else LOWER_TILES] = 1  # 小于五 / 全小
        elif not ranks & ~_RANKS_6_TO_9:
            table[UPPER_FOUR if ranks & _RANK_6 else UPPER_TILES] = 1  # 大于五 / 全大
        elif not ranks & ~_RANKS_4_TO_6:
            table[MIDDLE_TILES] = 1  # 全中
    return table


# ``_tile_traits`` of each ``present`` seen, as tuples (lists would stay tracked by the garbage
# collector). Interpreted, a look-up is quicker than the bit tests; compiled, the tests are
# native and quicker than a look-up (half the hands miss, and a miss costs five times the
# tests): ``_prepare`` asks the cache only when interpreted.
_TRAITS: Final = Memo(lambda present: tuple(_tile_traits(present)), 1 << 14)


def _situation_fan(ctx: WinContext, custom: bool) -> int:
    """天和, 地和 or 人和 when a rule set with the starred fans scores one, else -1."""
    if not custom:
        return -1
    if ctx.heavenly:
        return HEAVENLY_HAND
    if ctx.earthly:
        return EARTHLY_HAND
    return HUMAN_HAND if ctx.human else -1


class _WinFlags(Protocol):
    """How a hand was won, as ``_win_flags`` reads it (a ``_Hand``, or the wild search's
    ``_Flags`` for its bound)."""

    @property
    def last_tile(self) -> bool: ...
    @property
    def self_drawn(self) -> bool: ...
    @property
    def wall_last(self) -> bool: ...
    @property
    def kong(self) -> bool: ...
    @property
    def situation(self) -> int: ...


def _win_flags(h: _WinFlags, table: FanTable) -> None:
    """Fans of how the hand was won: 和绝张 妙手回春 海底捞月 杠上开花 抢杠和 自摸, and the
    ``situation`` fan (天和 地和 人和, ``_situation_fan``). What they exclude is
    ``_exclude``'s."""
    if h.last_tile:
        table[LAST_TILE] = 1
    if h.self_drawn:
        table[SELF_DRAWN] = 1
        if h.wall_last:
            table[LAST_TILE_DRAW] = 1
        if h.kong:
            table[OUT_WITH_REPLACEMENT_TILE] = 1
    else:
        if h.wall_last:
            table[LAST_TILE_CLAIM] = 1
        if h.kong:
            table[ROBBING_THE_KONG] = 1
    if h.situation >= 0:
        table[h.situation] = 1


def _concealment_fans(table: FanTable, exposed: int, self_drawn: bool) -> None:
    """不求人 / 门前清 / 全求人 / 自摸 of ``exposed`` melds out of four."""
    if exposed == 0:
        table[FULLY_CONCEALED_HAND if self_drawn else CONCEALED_HAND] = 1
    elif exposed == 4:
        table[SELF_DRAWN if self_drawn else MELDED_HAND] = 1
    elif self_drawn:
        table[SELF_DRAWN] = 1


# -------------------------------------------------------------- the waits ---


def _is_unique_wait(h: _Hand) -> bool:
    """Whether the hand, before the winning tile, waited on that tile alone (ruling 2)."""
    unique = h.unique_wait
    if unique is None:
        win = h.win
        patterns = list(_patterns(h))
        patterns[win // 9] -= _NIBBLE[win]  # the group of the winning tile (9 * 3 = EAST)
        a, b, c, d = patterns
        waits = _regular_wait_mask((a, b, c, d))
        if not waits & ~(1 << win) and h.melds <= 1:  # (another wait settles it)
            counts = h.standing.copy()
            counts[win] -= 1
            kinds = _kinds(h) & ~(1 << win) if not counts[win] else _kinds(h)
            waits |= special_wait_mask(counts, h.melds, (a, b, c, d), kinds)
        unique = h.unique_wait = waits == 1 << win
    return unique


def _notation(hand: Hand) -> str:
    from engine.notation import format_hand  # noqa: PLC0415 (notation imports hand, not scoring)

    return repr(format_hand(hand))

"""The exclusions (不计, non-repetition principle) applied to a reading's fan table."""

from __future__ import annotations

from collections.abc import Sequence

from engine.scoring.context import WinContext
from engine.scoring.ids import (
    ALL_CHOWS,
    ALL_EVEN_PUNGS,
    ALL_FIVE,
    ALL_GREEN,
    ALL_HONORS,
    ALL_PUNGS,
    ALL_SIMPLES,
    ALL_TERMINALS,
    ALL_TERMINALS_AND_HONORS,
    BIG_FOUR_WINDS,
    BIG_THREE_DRAGONS,
    BIG_THREE_WINDS,
    CHICKEN_HAND,
    CLOSED_WAIT,
    CONCEALED_HAND,
    DOUBLE_PUNG,
    DRAGON_PUNG,
    EARTHLY_HAND,
    EDGE_WAIT,
    FOUR_CONCEALED_PUNGS,
    FOUR_KONGS,
    FOUR_MIXED_SUIT_SHIFTED_PUNGS,
    FOUR_PURE_SHIFTED_PUNGS,
    FULL_FLUSH,
    FULLY_CONCEALED_HAND,
    HALF_FLUSH,
    HEAVENLY_HAND,
    HUMAN_HAND,
    LAST_TILE_DRAW,
    LITTLE_FOUR_WINDS,
    LITTLE_THREE_DRAGONS,
    LOWER_FOUR,
    LOWER_TILES,
    MELDED_HAND,
    MIDDLE_TILES,
    NO_HONORS,
    ONE_VOIDED_SUIT,
    OUT_WITH_REPLACEMENT_TILE,
    OUTSIDE_HAND,
    PREVALENT_WIND,
    PUNG_OF_TERMINALS_OR_HONORS,
    PURE_TERMINAL_CHOWS,
    REVERSIBLE_TILES,
    SEAT_WIND,
    SELF_DRAWN,
    SINGLE_WAIT,
    THREE_SUITED_TERMINAL_CHOWS,
    TWO_DRAGONS_PUNGS,
    UPPER_FOUR,
    UPPER_TILES,
    FanTable,
)
from engine.scoring.prepare import _Hand
from engine.tiles import (
    Tile,
)


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

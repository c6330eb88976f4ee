"""The exclusions (不计, non-repetition principle) applied to a reading's fan table."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

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
    BIG_FOUR_WINDS_AND_GREEN_DRAGON,
    BIG_THREE_DRAGONS,
    BIG_THREE_WINDS,
    CLOSED_WAIT,
    COMPILED,
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
    LAST_TILE,
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
    PAIR_OF_1_OR_9,
    PAIR_OF_2_5_OR_8,
    PREVALENT_WIND,
    PUNG_OF_TERMINALS_OR_HONORS,
    PURE_TERMINAL_CHOWS,
    QUADRUPLE_CHOW,
    REVERSIBLE_TILES,
    ROBBING_THE_KONG,
    SEAT_WIND,
    SELF_DRAWN,
    SINGLE_WAIT,
    THREE_SUITED_TERMINAL_CHOWS,
    TILE_HOG,
    TWO_CONCEALED_KONGS,
    TWO_CONCEALED_PUNGS,
    TWO_DRAGONS_PUNGS,
    UPPER_FOUR,
    UPPER_TILES,
    FanTable,
)
from engine.tiles import (
    Tile,
)


def _adjust_winds(prevalent: Tile, seat: Tile, wind_pungs: Sequence[Tile], table: FanTable) -> None:
    """圈风刻 / 门风刻: the wind pung counts as that fan instead of 幺九刻 (after the
    exclusions: which 幺九刻 are left decides)."""
    if table[BIG_FOUR_WINDS] or table[BIG_FOUR_WINDS_AND_GREEN_DRAGON]:
        return  # 大四喜 (四方大发财) 不计圈风刻、门风刻
    deducted = (
        table[BIG_THREE_WINDS]
        or table[ALL_TERMINALS_AND_HONORS]
        or table[ALL_HONORS]
        or table[LITTLE_FOUR_WINDS]
    )
    for tile in wind_pungs:
        if tile == prevalent:
            table[PREVALENT_WIND] = 1
            if not deducted:
                table[PUNG_OF_TERMINALS_OR_HONORS] -= 1
        if tile == seat:
            table[SEAT_WIND] = 1
            if seat != prevalent and not deducted:
                table[PUNG_OF_TERMINALS_OR_HONORS] -= 1


@dataclass(frozen=True, slots=True)
class Exclusion:
    """One row of the table: when ``fan`` counts, ``excludes`` do not (不计).

    ``instead``: a fan that counts in place of the first excluded one when that one was
    there (不求人 is 门前清 and 自摸: 四暗刻 takes 门前清 away, 自摸 stays). ``deduct``: the
    excluded fan loses that many counts, not all of them (三风刻 takes its own three
    幺九刻), never below 0. ``words``: the rule book's (or the ruling's) words.
    """

    fan: int
    excludes: tuple[int, ...]
    words: str
    instead: int = -1
    deduct: int = 0


# The rows are applied in this order, which matters in two places only: a row that takes
# away another row's fan comes before it (四暗刻 before 不求人, 小四喜 before 三风刻), and a
# row that counts 自摸 instead comes before the rows that exclude 自摸 (妙手回春, 杠上开花,
# 不求人). A fan another fan makes certain is excluded even where the rule book does not
# list it (non-repetition: 缺一门 under 绿一色 and 字一色). Where the words list a fan the
# row does not take away, another step of the calculator never sets it with that fan (the
# families of three under those of four, ``_adjust_winds`` for 圈风刻 / 门风刻 under 大四喜).
EXCLUSIONS: Final[tuple[Exclusion, ...]] = (
    Exclusion(BIG_FOUR_WINDS, (ALL_PUNGS, PUNG_OF_TERMINALS_OR_HONORS),
              "大四喜：不计三风刻、碰碰和、圈风刻、门风刻、幺九刻"),
    Exclusion(BIG_THREE_DRAGONS, (DRAGON_PUNG,), "大三元：不计双箭刻、箭刻"),
    Exclusion(ALL_GREEN, (HALF_FLUSH, ONE_VOIDED_SUIT), "绿一色：不计混一色"),
    Exclusion(FOUR_KONGS, (ALL_PUNGS, SINGLE_WAIT), "四杠：不计碰碰和、单钓将"),
    Exclusion(ALL_TERMINALS,
              (ALL_PUNGS, OUTSIDE_HAND, PUNG_OF_TERMINALS_OR_HONORS, NO_HONORS, DOUBLE_PUNG,
               PAIR_OF_1_OR_9),
              "清幺九：不计碰碰和、全带幺、双同刻、幺九刻、无字 (and 幺九头, ruling W11)"),
    Exclusion(LITTLE_FOUR_WINDS, (BIG_THREE_WINDS, PUNG_OF_TERMINALS_OR_HONORS),
              "小四喜：不计三风刻、幺九刻"),
    Exclusion(LITTLE_THREE_DRAGONS, (TWO_DRAGONS_PUNGS, DRAGON_PUNG), "小三元：不计双箭刻、箭刻"),
    Exclusion(ALL_HONORS,
              (ALL_PUNGS, OUTSIDE_HAND, PUNG_OF_TERMINALS_OR_HONORS, ONE_VOIDED_SUIT),
              "字一色：不计碰碰和、全带幺、幺九刻"),
    Exclusion(BIG_FOUR_WINDS_AND_GREEN_DRAGON, (BIG_FOUR_WINDS, ALL_HONORS),
              "四方大发财 (in place of 大四喜)：不计碰碰和、门风刻、圈风刻、三风刻、字一色 (W10)"),
    Exclusion(FOUR_CONCEALED_PUNGS, (FULLY_CONCEALED_HAND, ALL_PUNGS, CONCEALED_HAND),
              "四暗刻：不计碰碰和、不求人、门前清 (自摸 still counts)", instead=SELF_DRAWN),
    # document 000's situation fans (ruling W12), before the rows that exclude 自摸
    Exclusion(HEAVENLY_HAND,
              (FULLY_CONCEALED_HAND, CONCEALED_HAND, SELF_DRAWN, EDGE_WAIT, CLOSED_WAIT,
               SINGLE_WAIT),
              "天和：不计不求人、门前清、自摸; dealt complete, it waited on nothing"),
    Exclusion(EARTHLY_HAND, (FULLY_CONCEALED_HAND, CONCEALED_HAND),
              "地和：不计门前清 (no claim was made)", instead=SELF_DRAWN),
    Exclusion(HUMAN_HAND, (FULLY_CONCEALED_HAND, CONCEALED_HAND),
              "人和：不计门前清; self-drawn, 自摸 instead of 不求人", instead=SELF_DRAWN),
    Exclusion(PURE_TERMINAL_CHOWS, (FULL_FLUSH, ALL_CHOWS, NO_HONORS, PAIR_OF_2_5_OR_8),
              "一色双龙会：不计七对、清一色、平和、一般高、老少副、无字 (its pair of fives: W11)"),
    Exclusion(QUADRUPLE_CHOW, (TILE_HOG,), "一色四同顺：不计一色三同顺、一般高、四归一"),
    Exclusion(FOUR_PURE_SHIFTED_PUNGS, (ALL_PUNGS,),
              "一色四节高：不计一色三同顺、一色三节高、碰碰和"),
    Exclusion(FOUR_MIXED_SUIT_SHIFTED_PUNGS, (ALL_PUNGS,),
              "混四节: four pungs, 碰碰和 is certain (ruling W9)"),
    Exclusion(ALL_TERMINALS_AND_HONORS, (ALL_PUNGS, OUTSIDE_HAND, PUNG_OF_TERMINALS_OR_HONORS),
              "混幺九：不计碰碰和、全带幺、幺九刻"),
    Exclusion(ALL_EVEN_PUNGS, (ALL_PUNGS, ALL_SIMPLES, NO_HONORS),
              "全双刻：不计碰碰和、断幺、无字"),
    Exclusion(FULL_FLUSH, (NO_HONORS,), "清一色：不计无字"),
    Exclusion(UPPER_TILES, (NO_HONORS,), "全大：不计大于五、无字"),
    Exclusion(MIDDLE_TILES, (ALL_SIMPLES, NO_HONORS), "全中：不计断幺 (无字)"),
    Exclusion(LOWER_TILES, (NO_HONORS,), "全小：不计小于五、无字"),
    Exclusion(THREE_SUITED_TERMINAL_CHOWS, (ALL_CHOWS, NO_HONORS, PAIR_OF_2_5_OR_8),
              "三色双龙会：不计平和、老少副、喜相逢、无字 (its pair of fives: W11)"),
    Exclusion(ALL_FIVE, (ALL_SIMPLES, NO_HONORS, PAIR_OF_2_5_OR_8),
              "全带五：不计断幺、无字 (its pair of fives: 二五八将, ruling W11)"),
    Exclusion(UPPER_FOUR, (NO_HONORS,), "大于五：不计无字"),
    Exclusion(LOWER_FOUR, (NO_HONORS,), "小于五：不计无字"),
    Exclusion(BIG_THREE_WINDS, (PUNG_OF_TERMINALS_OR_HONORS,),
              "三风刻：组成三风刻的三副刻子不计幺九刻", deduct=3),
    Exclusion(REVERSIBLE_TILES, (ONE_VOIDED_SUIT,), "推不倒：不计缺一门"),
    Exclusion(LAST_TILE_DRAW, (SELF_DRAWN,), "妙手回春：不计自摸"),
    Exclusion(OUT_WITH_REPLACEMENT_TILE, (SELF_DRAWN,), "杠上开花：不计自摸"),
    Exclusion(ROBBING_THE_KONG, (LAST_TILE,), "抢杠和：不计和绝张"),
    Exclusion(MELDED_HAND, (SINGLE_WAIT,), "全求人：不计单钓将"),
    Exclusion(TWO_CONCEALED_KONGS, (TWO_CONCEALED_PUNGS,), "双暗杠：不计双暗刻"),
    Exclusion(TWO_DRAGONS_PUNGS, (DRAGON_PUNG,), "双箭刻：不计箭刻"),
    Exclusion(FULLY_CONCEALED_HAND, (SELF_DRAWN,), "不求人：不计自摸"),
    Exclusion(ALL_CHOWS, (NO_HONORS,), "平和：不计无字"),
    Exclusion(ALL_SIMPLES, (NO_HONORS,), "断幺：不计无字"),
)  # fmt: skip


def _compile(rows: tuple[Exclusion, ...]) -> Callable[[FanTable], None]:
    """The rows as one function, a test per row in the table's order (as fast as writing
    the tests out by hand, which the calculator runs for every reading)."""
    lines = ["def exclude(t):"]
    for row in rows:
        lines.append(f"    if t[{row.fan}]:")
        first = row.excludes[0]
        if row.deduct:
            lines.append(f"        t[{first}] = max(0, t[{first}] - {row.deduct})")
            continue
        if row.instead >= 0:
            lines.append(f"        if t[{first}]:")
            lines.append(f"            t[{row.instead}] = 1")
        lines.append("        " + " = ".join(f"t[{fan}]" for fan in row.excludes) + " = 0")
    namespace: dict[str, object] = {}
    exec("\n".join(lines), namespace)  # source built from the table above, no input
    exclude = namespace["exclude"]
    assert callable(exclude)
    return exclude


def _apply_rows(table: FanTable) -> None:
    """``EXCLUSIONS`` applied to ``table`` by a loop over the rows."""
    for row in EXCLUSIONS:
        if table[row.fan]:
            first = row.excludes[0]
            if row.deduct:
                table[first] = max(0, table[first] - row.deduct)
                continue
            if row.instead >= 0 and table[first]:
                table[row.instead] = 1
            for fan in row.excludes:
                table[fan] = 0


_STRAIGHT_TESTS: Final[Callable[[FanTable], None]] = _compile(EXCLUSIONS)


def _exclude(table: FanTable) -> None:
    """Apply ``EXCLUSIONS`` to a reading's fan table, row by row in order: compiled, by the
    loop over the rows (native code, quicker than calling the interpreted function of
    ``_compile``); interpreted, by that function (three times as fast as the loop)."""
    if COMPILED:
        _apply_rows(table)
    else:
        _STRAIGHT_TESTS(table)

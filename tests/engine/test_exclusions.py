"""The exclusion table (不计) of the calculator: ``engine.scoring.exclusions.EXCLUSIONS``."""

from __future__ import annotations

import random

from engine.fans import Fan
from engine.scoring import FANS, ids
from engine.scoring.exclusions import _STRAIGHT_TESTS, EXCLUSIONS, _apply_rows, _exclude


def _interpret(table: list[int]) -> None:
    """The table read row by row, the plain way: what the compiled ``_exclude`` must do."""
    for row in EXCLUSIONS:
        if not table[row.fan]:
            continue
        first = row.excludes[0]
        if row.deduct:
            table[first] = max(0, table[first] - row.deduct)
            continue
        if row.instead >= 0 and table[first]:
            table[row.instead] = 1
        for fan in row.excludes:
            table[fan] = 0


def test_the_fan_ids_are_the_fans_in_order() -> None:
    # ``ids`` writes each id out as a constant: each is its fan's place in ``Fan``.
    assert tuple(Fan) == FANS
    for number, fan in enumerate(Fan):
        assert getattr(ids, fan.name) == number, fan
    assert len(Fan) == ids.N_FANS


def test_every_row_names_its_fan_and_excludes_others() -> None:
    seen = set()
    for row in EXCLUSIONS:
        fan = FANS[row.fan]
        assert fan.zh in row.words, row
        assert row.fan not in row.excludes and row.excludes, row
        assert row.fan not in seen  # one row per excluding fan
        seen.add(row.fan)


def test_the_compiled_table_applies_the_rows_in_order() -> None:
    # ``_exclude`` runs the rows as straight tests, or as a loop over them when compiled:
    # both ways, here whichever this engine is.
    rng = random.Random("exclusions")
    fans = [FANS.index(fan) for fan in Fan]
    for _ in range(3000):
        table = [0] * len(FANS)
        for fan in rng.sample(fans, rng.randrange(1, 12)):
            table[fan] = rng.randrange(1, 4)
        expected = table.copy()
        _interpret(expected)
        for exclude in (_exclude, _apply_rows, _STRAIGHT_TESTS):
            applied = table.copy()
            exclude(applied)
            assert applied == expected


def test_a_few_rows_as_the_rule_book_says() -> None:
    i = FANS.index
    table = [0] * len(FANS)
    table[i(Fan.FOUR_CONCEALED_PUNGS)] = table[i(Fan.FULLY_CONCEALED_HAND)] = 1
    table[i(Fan.ALL_PUNGS)] = 1
    _exclude(table)  # 四暗刻：不计碰碰和、不求人、门前清; 自摸 still counts
    assert [FANS[f] for f, n in enumerate(table) if n] == [
        Fan.FOUR_CONCEALED_PUNGS,
        Fan.SELF_DRAWN,
    ]
    table = [0] * len(FANS)
    table[i(Fan.BIG_THREE_WINDS)] = 1
    table[i(Fan.PUNG_OF_TERMINALS_OR_HONORS)] = 4  # three wind pungs and 999m
    _exclude(table)  # 三风刻：组成三风刻的三副刻子不计幺九刻
    assert table[i(Fan.PUNG_OF_TERMINALS_OR_HONORS)] == 1

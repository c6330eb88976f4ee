"""The grade formula of document 000 (docs/rules.md, "The player grade"), and counts."""

from __future__ import annotations

import pytest

from server.grades import (
    Counts,
    average_level,
    grade,
    hand_counts,
    match_counts,
    score_level,
    win_loss_ratio,
)


@pytest.mark.parametrize(
    ("score", "level"),
    [
        (-1000, 0),
        (0, 0),
        (499, 0),
        (500, 1),
        (999, 1),
        (1000, 2),
        (1999, 2),
        (2000, 3),
        (3999, 3),
        (4000, 4),
        (7999, 4),
        (8000, 5),
        (15999, 5),
        (16000, 6),
        (32000, 7),
        (64000, 8),
    ],
)
def test_score_level_doubles(score: int, level: int) -> None:
    assert score_level(score) == level


def test_average_level_is_score_per_hand_over_five() -> None:
    assert average_level(100, 4) == 5.0
    assert average_level(-60, 3) == -4.0
    assert average_level(7, 2) == 0.7


def test_average_level_with_no_hand_counts_one() -> None:
    assert average_level(0, 0) == 0.0
    assert average_level(35, 0) == 7.0


@pytest.mark.parametrize(
    ("won", "lost", "ratio"),
    [
        (6, 3, 4.0),  # won > lost: won / lost * 2
        (5, 2, 5.0),
        (3, 0, 6.0),  # ... lost 0 counts as 1
        (1, 0, 2.0),
        (2, 8, -2.0),  # won < lost: -(lost / won) / 2
        (3, 4, -(4 / 3) / 2),
        (0, 3, -1.5),  # ... won 0 counts as 1
        (0, 1, -0.5),
        (4, 4, 0.0),  # equal
        (0, 0, 0.0),
    ],
)
def test_win_loss_ratio(won: int, lost: int, ratio: float) -> None:
    assert win_loss_ratio(won, lost) == pytest.approx(ratio)


def test_grade_weighs_the_three_parts() -> None:
    # score_level 2, average 1000 / 10 / 5 = 20, ratio 6 / 3 * 2 = 4.
    assert grade(1000, 6, 3, 1) == pytest.approx((75 * 2 + 25 * 20 + 10 * 4) / 100)
    # score_level 0, average -40 / 8 / 5 = -1, ratio -(6 / 2) / 2 = -1.5.
    assert grade(-40, 2, 6, 0) == pytest.approx((0 - 25 - 15) / 100)
    assert grade(0, 0, 0, 0) == 0.0


def test_grade_of_a_player_with_no_hand_uses_denominator_one() -> None:
    assert grade(600, 0, 0, 0) == pytest.approx((75 * 1 + 25 * 120) / 100)


def record(result: str, winner: int | None, deltas: list[int]) -> dict[str, object]:
    return {"result": result, "winner": winner, "deltas": deltas}


def test_discard_win_is_lost_by_every_payer() -> None:
    # mcr: the discarder (2) pays 8 + fan, the two others 8 each.
    counts = hand_counts(record("win", 0, [36, -8, -20, -8]))
    assert counts == (
        Counts(36, won=1),
        Counts(-8, lost=1),
        Counts(-20, lost=1),
        Counts(-8, lost=1),
    )


def test_self_drawn_win() -> None:
    counts = hand_counts(record("win", 3, [-18, -18, -18, 54]))
    assert [c.won for c in counts] == [0, 0, 0, 1]
    assert [c.lost for c in counts] == [1, 1, 1, 0]
    assert all(c.drawn == 0 for c in counts)


def test_drawn_hand_is_drawn_for_all() -> None:
    counts = hand_counts(record("draw", None, [0, 0, 0, 0]))
    assert counts == (Counts(drawn=1),) * 4


def test_a_player_who_did_not_pay_did_not_lose() -> None:
    # A base-0 rule set: only the discarder pays; the bystanders neither win nor lose.
    counts = hand_counts(record("win", 1, [0, 10, -10, 0]))
    assert counts == (Counts(), Counts(10, won=1), Counts(-10, lost=1), Counts())
    assert counts[0].hands == 0


def test_a_record_needs_four_deltas() -> None:
    with pytest.raises(ValueError, match="4 deltas"):
        hand_counts(record("win", 0, [8, -8]))


def test_match_counts_add_up() -> None:
    records = [
        record("win", 0, [36, -8, -20, -8]),
        record("draw", None, [0, 0, 0, 0]),
        record("win", 2, [-10, -10, 30, -10]),
    ]
    totals = match_counts(records)
    assert totals[0] == Counts(26, won=1, lost=1, drawn=1)
    assert totals[2] == Counts(10, won=1, lost=1, drawn=1)
    assert totals[1] == Counts(-18, lost=2, drawn=1)
    assert sum(c.score for c in totals) == 0
    assert totals[0].grade == grade(26, 1, 1, 1)

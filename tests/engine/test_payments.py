"""The payments of a won hand (``engine.payments``), worked by hand from the rules."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.payments import base_payment, dealer_doubled, win_deltas
from engine.rules import MCR


def test_mcr_self_draw_each_other_pays_8_plus_fan() -> None:
    assert win_deltas(10, winner=2, discarder=None, dealer=0, rules=MCR) == (-18, -18, 54, -18)


def test_mcr_discard_the_discarder_pays_8_plus_fan_the_others_8() -> None:
    assert win_deltas(12, winner=1, discarder=3, dealer=0, rules=MCR) == (-8, 36, -8, -20)


def test_mcr_never_doubles_the_dealer() -> None:
    # The dealer wins or pays as anyone else.
    assert win_deltas(8, winner=0, discarder=None, dealer=0, rules=MCR) == (48, -16, -16, -16)
    assert win_deltas(8, winner=1, discarder=0, dealer=0, rules=MCR) == (-16, 32, -8, -8)


def test_custom_base_points_and_the_doubled_dealer() -> None:
    rules = replace(MCR, name="custom", base_points=2, dealer_doubles=True)
    # The dealer (0) wins self-drawn with 3 fan: each pays (2 + 3) doubled.
    assert win_deltas(3, winner=0, discarder=None, dealer=0, rules=rules) == (30, -10, -10, -10)
    # Player 1 wins on player 2's discard: the dealer's 2 is doubled, the others' are not.
    assert win_deltas(3, winner=1, discarder=2, dealer=0, rules=rules) == (-4, 11, -5, -2)
    assert win_deltas(3, winner=1, discarder=0, dealer=0, rules=rules) == (-10, 14, -2, -2)


@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
@pytest.mark.parametrize("discarder", [None, 0, 1, 2, 3])
def test_payments_are_zero_sum(dealer: int, discarder: int | None) -> None:
    rules = replace(MCR, base_points=2, dealer_doubles=True)
    for winner in range(4):
        if winner == discarder:
            continue
        deltas = win_deltas(7, winner, discarder, dealer, rules)
        assert sum(deltas) == 0 and deltas[winner] > 0


def test_the_parts() -> None:
    assert base_payment(5, 8, pays_fan=True) == 13
    assert base_payment(5, 8, pays_fan=False) == 8
    assert dealer_doubled(13, payer=0, winner=2, dealer=0) == 26
    assert dealer_doubled(13, payer=1, winner=0, dealer=0) == 26
    assert dealer_doubled(13, payer=1, winner=2, dealer=0) == 13

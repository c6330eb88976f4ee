"""Who pays whom when a hand is won: pure functions of the fan, the seats and the rules.

MCR (docs/rules.md, "Payments"), the 8-point base: on a self-draw each of the
three others pays 8 + fan; on a discard the discarder pays 8 + fan and each of the two
others 8. Flowers count in the fan. A drawn hand pays nothing.

The ``custom`` rule set (document 000) keeps that form with its own base points
(``RuleSet.base_points``: 0 with wild tiles, 2 without, 8 with the 8-fan option) and, with
dealer repeat (``RuleSet.dealer_doubles``), doubles every payment made by or to the dealer
(庄家 "赢输时自己的番分数翻倍计算", ruling T5); payments between two other players are
unchanged, so the scores stay zero-sum.
"""

from __future__ import annotations

from engine.rules import RuleSet

Deltas = tuple[int, int, int, int]  # by player index 0..3


def base_payment(fan: int, base_points: int, *, pays_fan: bool) -> int:
    """One payer's payment before any doubling: ``base_points + fan`` for the discarder or,
    on a self-draw, for everyone; ``base_points`` alone for the others on a discard."""
    return base_points + fan if pays_fan else base_points


def dealer_doubled(pay: int, payer: int, winner: int, dealer: int) -> int:
    """``pay`` doubled when the dealer pays it or receives it (庄家翻倍), else unchanged."""
    return 2 * pay if dealer in (payer, winner) else pay


def win_deltas(fan: int, winner: int, discarder: int | None, dealer: int, rules: RuleSet) -> Deltas:
    """The score changes of players 0..3 when ``winner`` wins with ``fan`` (flowers
    included) on ``discarder``'s discard, or self-drawn (``discarder`` None).

    A robbed kong (抢杠和) is paid as a discard by the player adding to the kong.
    """
    deltas = [0, 0, 0, 0]
    for payer in range(4):
        if payer == winner:
            continue
        pay = base_payment(fan, rules.base_points, pays_fan=discarder in (None, payer))
        if rules.dealer_doubles:
            pay = dealer_doubled(pay, payer, winner, dealer)
        deltas[payer] -= pay
        deltas[winner] += pay
    return (deltas[0], deltas[1], deltas[2], deltas[3])

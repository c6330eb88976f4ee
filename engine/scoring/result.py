"""A hand's score: its best fan table (``readings``, or ``wild`` for a hand holding wild
tiles), the hand-wide starred fans, and the ``Score`` read off the table.

Apart from the package's ``__init__`` so that it is compiled with the rest (a package's
``__init__`` is not).
"""

from __future__ import annotations

from typing import Final

from engine.errors import InvalidHand, NotWinning
from engine.hand import Hand
from engine.rules import MCR, RuleSet
from engine.scoring.context import FanCount, Score, WinContext, check_situation
from engine.scoring.ids import (
    CHICKEN_HAND,
    FANS,
    FLOWER_TILES,
    FOUR_WILDS,
    HEAVENLY_HAND,
    POINTS,
    SEAT_FLOWER,
    FanTable,
    _counted,
)
from engine.scoring.prepare import _notation, _prepare
from engine.scoring.readings import _best_table
from engine.scoring.wild import _score_wild


def _hand_fans(hand: Hand, ctx: WinContext, table: FanTable) -> None:
    """The starred fans of the whole hand: 季花, 混杠 (rulings W4, W12)."""
    table[SEAT_FLOWER] = ctx.seat_flowers
    if hand.wilds >= 4:
        table[FOUR_WILDS] = 1
    if table[CHICKEN_HAND] and any(table[HEAVENLY_HAND:SEAT_FLOWER]):
        table[CHICKEN_HAND] = 0  # 无番和 only when no fan counts (季花 is a flower, ruling W12)


_PLAIN_WIN: Final = WinContext()  # on a discard, seat and round East, no flowers


def score(hand: Hand, ctx: WinContext = _PLAIN_WIN, rules: RuleSet = MCR) -> Score:
    """Score a winning hand. Raises ``NotWinning`` when it is not complete in any form.

    With ``rules.extra_fans`` the starred fans of document 000 count too. A hand
    holding wild tiles (``WILD``) needs a rule set with wild tiles (else
    ``InvalidHand``) and scores as its lowest concrete reading (``_score_wild``). A
    天和, 地和 or 人和 the hand cannot have been won as is ``InvalidHand`` too
    (``check_situation``).
    """
    if ctx.heavenly or ctx.earthly or ctx.human:
        check_situation(hand, ctx)
    if hand.wilds:
        if not rules.has_wilds:
            raise InvalidHand(
                f"{_notation(hand)} holds wild tiles (*), but rule set {rules.name!r} has none"
            )
        table = _score_wild(hand, ctx, rules.extra_fans).copy()  # the copy: it is cached
    else:
        h = _prepare(hand, ctx, rules.extra_fans)
        best = _best_table(h)
        if best is None:
            raise NotWinning(f"{_notation(hand)} is not a winning hand in any form")
        table = best  # a table of its own
    if rules.extra_fans:
        _hand_fans(hand, ctx, table)
    table[FLOWER_TILES] = ctx.flowers
    counted = _counted(table)
    fans = tuple(
        [
            _FAN_COUNTS[i][table[i]] if 0 < table[i] <= _COUNTS else FanCount(FANS[i], table[i])
            for i in counted
        ]
    )
    total = sum([POINTS[i] * table[i] for i in counted])
    flowers = ctx.flowers + (ctx.seat_flowers if rules.extra_fans else 0)
    return Score(fans, total, total - flowers >= rules.min_fan)


_COUNTS: Final = 8  # the counts a fan is found with (flowers: up to 8)
# Each fan's ``FanCount`` with each count 1..8 (index 0 unused), made once.
_FAN_COUNTS: Final = tuple(tuple(FanCount(fan, n) for n in range(_COUNTS + 1)) for fan in FANS)

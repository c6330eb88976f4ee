"""The fan calculator (算番): the fans of a winning hand and its total.

How a hand is scored:

1. Special forms first: Seven Pairs / Seven Shifted Pairs, Honors and Knitted
   Tiles, Thirteen Orphans, Knitted Straight with a set and a pair, Nine Gates.
2. Otherwise (and also for Seven Pairs, which a regular reading can beat) every
   reading of the standing tiles as sets and a pair is scored, and the highest
   total counts (就高不就低, highest-value principle).
3. Each reading is scored by small detectors that write a fan table (a list of
   counts indexed like ``Fan``), then the exclusions of the rule book (不计,
   non-repetition principle) are applied: one table, ``exclusions.EXCLUSIONS``,
   a row per excluding fan with the rule book's words.

Fans that depend only on which tiles the hand holds (suits, terminals, ranges)
are computed once per hand; fans of the sets (chows, pungs, kongs) once per
reading. The chow and pung families follow the non-separation, non-identical
and account-once principles as the reference calculators apply them: a fan of
four sets excludes those of three and two; with a fan of three chows the fourth
chow may combine once; without one, the 1-fan pairs of chows are limited by how
many chows are combined (see ``_four_chows``).

The modules of this package follow these steps: ``prepare`` (what every reading
of a hand shares: tile traits, how it was won), ``families`` (the chow and pung
families), ``regular`` (one regular reading), ``special`` (the special forms),
``exclusions`` (the 不计 table), ``readings`` (the highest-value reading of a
concrete hand) and ``wild`` (the lowest concrete hand of one holding wild
tiles); ``ids`` and ``context`` hold the fan ids and the input and output types.

Where the rule book leaves a choice, the decisions are written down in
``docs/rulings.md``; the modules cite them as "ruling N".
"""

from __future__ import annotations

from itertools import compress

from engine.errors import InvalidHand, NotWinning
from engine.forms import GROUPS
from engine.hand import Hand
from engine.rules import MCR, RuleSet
from engine.scoring.context import FanCount, Score, WinContext
from engine.scoring.ids import (
    CHICKEN_HAND,
    FANS,
    FLOWER_TILES,
    FOUR_WILDS,
    HEAVENLY_HAND,
    N_FANS,
    POINTS,
    SEAT_FLOWER,
    FanTable,
    _total,
)
from engine.scoring.prepare import REF_KEY, _notation, _prepare
from engine.scoring.readings import _best_table
from engine.scoring.wild import (
    _group_reading_fans,
    _score_wild,
    _score_wild_cached,
    _wild_order,
    _WildSearch,
)

__all__ = ["FANS", "POINTS", "REF_KEY", "FanCount", "FanTable", "Score", "WinContext", "score"]
# The private pieces the tests check one by one (``tests/engine/test_wild_scoring.py``).
_TESTED = (GROUPS, _group_reading_fans, _score_wild_cached, _total, _wild_order, _WildSearch)


def _hand_fans(hand: Hand, ctx: WinContext, table: FanTable) -> None:
    """The starred fans of the whole hand: 季花, 混杠 (rulings W4, W12)."""
    table[SEAT_FLOWER] = ctx.seat_flowers
    if hand.wilds >= 4:
        table[FOUR_WILDS] = 1
    if table[CHICKEN_HAND] and any(table[HEAVENLY_HAND:SEAT_FLOWER]):
        table[CHICKEN_HAND] = 0  # 无番和 only when no fan counts (季花 is a flower, ruling W12)


_PLAIN_WIN = WinContext()  # on a discard, seat and round East, no flowers


def score(hand: Hand, ctx: WinContext = _PLAIN_WIN, rules: RuleSet = MCR) -> Score:
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
    counted = list(compress(_FAN_IDS, table))
    fans = tuple(
        [
            _FAN_COUNTS[i][table[i]] if 0 < table[i] <= _COUNTS else FanCount(FANS[i], table[i])
            for i in counted
        ]
    )
    total = sum([POINTS[i] * table[i] for i in counted])
    flowers = ctx.flowers + (ctx.seat_flowers if rules.extra_fans else 0)
    return Score(fans, total, total - flowers >= rules.min_fan)


_FAN_IDS = range(N_FANS)
_COUNTS = 8  # the counts a fan is found with (flowers: up to 8)
# Each fan's ``FanCount`` with each count 1..8 (index 0 unused), made once.
_FAN_COUNTS = tuple(tuple(FanCount(fan, n) for n in range(_COUNTS + 1)) for fan in FANS)

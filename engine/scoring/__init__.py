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
concrete hand), ``substitutions`` (which tiles the wild tiles of a winning hand
can stand for, knowing nothing of fans) and ``wild`` (the lowest concrete hand
of one holding wild tiles); ``ids`` and ``context`` hold the fan ids and the
input and output types.

Where the rule book leaves a choice, the decisions are written down in
``docs/rulings.md``; the modules cite them as "ruling N".
"""

from __future__ import annotations

from engine.forms import GROUPS
from engine.scoring.context import FanCount, Score, WinContext, check_situation
from engine.scoring.ids import FANS, POINTS, FanTable, _total
from engine.scoring.prepare import REF_KEY, _prepare
from engine.scoring.readings import _best_table
from engine.scoring.result import score
from engine.scoring.wild import (
    _group_reading_fans,
    _score_wild,
    _score_wild_cached,
    _wild_order,
    _WildSearch,
)

__all__ = [
    "FANS",
    "POINTS",
    "REF_KEY",
    "FanCount",
    "FanTable",
    "Score",
    "WinContext",
    "check_situation",
    "score",
]
# The private pieces the tests check one by one (``tests/engine/test_wild_scoring.py``).
_TESTED = (
    GROUPS,
    _best_table,
    _group_reading_fans,
    _prepare,
    _score_wild,
    _score_wild_cached,
    _total,
    _wild_order,
    _WildSearch,
)

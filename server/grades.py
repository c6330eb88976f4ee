"""The player grade (级别) of document 000, and the counts it is computed from.

``grade = (75 * score_level + 25 * average_level + 10 * win_loss_ratio) / 100``

over a player's totals: ``score`` (the sum of the player's deltas over every hand played),
hands ``won``, ``lost`` and ``drawn``. A hand counts as won by its winner, lost by every
player who paid (a negative delta) and drawn for all four when the wall ran out. Under the
``mcr`` payments every other player pays, so each hand is won, lost or drawn; a rule set whose
bystanders pay nothing (base 0) leaves them a hand that counts neither way. See
``docs/rules.md``, "The player grade".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

SCORE_LEVEL_START = 500  # score_level 1 from here, then one more level at each doubling


def score_level(score: int) -> int:
    """0 below 500 points, 1 from 500, 2 from 1000, 3 from 2000, 4 from 4000, ... (doubling).

    >>> [score_level(s) for s in (-40, 499, 500, 999, 1000, 1999, 2000, 4000, 8000)]
    [0, 0, 1, 1, 2, 2, 3, 4, 5]
    """
    level = 0
    threshold = SCORE_LEVEL_START
    while score >= threshold:
        level += 1
        threshold *= 2
    return level


def average_level(score: int, hands: int) -> float:
    """``score / hands / 5``: the average per hand (盘) over five; 0 hands count as 1.

    >>> average_level(100, 4), average_level(0, 0)
    (5.0, 0.0)
    """
    return score / (hands or 1) / 5


def win_loss_ratio(won: int, lost: int) -> float:
    """``won / lost * 2`` when won > lost; ``-(lost / won) / 2`` when won < lost; 0 when
    equal. A zero denominator counts as 1.

    >>> win_loss_ratio(6, 3), win_loss_ratio(3, 0), win_loss_ratio(2, 8), win_loss_ratio(0, 3)
    (4.0, 6.0, -2.0, -1.5)
    """
    if won > lost:
        return won / (lost or 1) * 2
    if won < lost:
        return -(lost / (won or 1)) / 2
    return 0.0


def grade(score: int, won: int, lost: int, drawn: int) -> float:
    """The grade over a player's totals.

    >>> grade(1000, 6, 3, 1)  # (75 * 2 + 25 * 20.0 + 10 * 4.0) / 100
    6.9
    """
    return (
        75 * score_level(score)
        + 25 * average_level(score, won + lost + drawn)
        + 10 * win_loss_ratio(won, lost)
    ) / 100


@dataclass(frozen=True, slots=True)
class Counts:
    """A player's totals over some hands: what the grade is computed from."""

    score: int = 0
    won: int = 0
    lost: int = 0
    drawn: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.score + other.score,
            self.won + other.won,
            self.lost + other.lost,
            self.drawn + other.drawn,
        )

    @property
    def hands(self) -> int:
        """Hands counted: won, lost or drawn (a bystander's hand is none of them)."""
        return self.won + self.lost + self.drawn

    @property
    def grade(self) -> float:
        return grade(self.score, self.won, self.lost, self.drawn)


def hand_counts(record: Mapping[str, Any]) -> tuple[Counts, Counts, Counts, Counts]:
    """Each player's counts from one hand record (``HandRecord.to_dict()``).

    The score is the player's delta; a drawn hand (``"result": "draw"``) is drawn for all;
    otherwise the winner won it and every player with a negative delta lost it.
    """
    deltas = [int(d) for d in record["deltas"]]
    if len(deltas) != 4:
        raise ValueError(f"a hand record needs 4 deltas, got {record['deltas']!r}")
    drawn = record["result"] == "draw"
    winner = record.get("winner")
    counts = [
        Counts(
            score=delta,
            won=int(not drawn and p == winner),
            lost=int(not drawn and delta < 0),
            drawn=int(drawn),
        )
        for p, delta in enumerate(deltas)
    ]
    return counts[0], counts[1], counts[2], counts[3]


def match_counts(records: Iterable[Mapping[str, Any]]) -> tuple[Counts, Counts, Counts, Counts]:
    """Each player's counts over a match's hand records."""
    totals = [Counts(), Counts(), Counts(), Counts()]
    for record in records:
        for p, counts in enumerate(hand_counts(record)):
            totals[p] += counts
    return totals[0], totals[1], totals[2], totals[3]

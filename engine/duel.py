"""Duplicate evaluation of one bot against another (``guobiao duel``): who is better, by how
much, and how sure we are.

A *deal* is one match seed: every hand of a match has the wall ``engine.match.hand_seed(seed,
hand_no)``, so the matches of one deal share their walls whatever the bots do. Each deal is
played once for each *seating*: a pattern of four letters by player index, ``C`` the
challenger, ``R`` the reference. The default, one against three (``ONE_AGAINST_THREE``),
puts the challenger at each player in turn against three of the reference, so luck of the
walls falls on both bots alike and cancels in the comparison.

The figure is the challenger's *margin*: its mean points per seat-hand (the game is
zero-sum: two equal bots give 0), with a 95% interval clustered by deal
(``clustered_interval``: the hands of one deal share their walls, so they are not
independent). Beside it, for the challenger's seats and the reference's: wins, self-draws,
deal-ins, drawn hands, fan and points (``SideTally``), and the defence audit
(``engine.duel_audit``).

Pure: no clock, no I/O. Whoever wants the bots' decision times passes a ``clock``
(``guobiao duel`` passes ``time.perf_counter``); the results are the same without one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields

from engine.actions import ActionKind
from engine.bots import make_bot
from engine.duel_audit import audit_discard
from engine.match import MATCH_HANDS, HandRecord, Match
from engine.rules import MCR, RuleSet
from engine.simulation import match_seeds
from engine.view import Phase

CHALLENGER = "C"
REFERENCE = "R"
# The challenger at each player in turn, the reference at the other three.
ONE_AGAINST_THREE: tuple[str, ...] = ("CRRR", "RCRR", "RRCR", "RRRC")

# Student's t, two-sided 95% (the 0.975 quantile), by degrees of freedom 1..30; past 30 the
# Cornish-Fisher expansion in ``t_quantile`` agrees with the tables to 4 decimals.
_T975 = (
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
)  # fmt: skip
_Z975 = 1.959963984540054  # the normal 0.975 quantile


def parse_seatings(text: str) -> tuple[str, ...]:
    """``"CRRR,CCRR"`` as seatings; ``ValueError`` saying what is wrong. Each is four letters
    ``C`` (challenger) or ``R`` (reference), by player index, with at least one of each."""
    out = []
    for part in text.split(","):
        pattern = part.strip().upper()
        if len(pattern) != 4 or set(pattern) - {CHALLENGER, REFERENCE}:
            raise ValueError(
                f"bad seating {part.strip()!r}: expected four letters C (challenger) or R "
                "(reference) by player index, e.g. CRRR"
            )
        if CHALLENGER not in pattern or REFERENCE not in pattern:
            raise ValueError(f"seating {pattern!r} needs both bots: at least one C and one R")
        out.append(pattern)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class DuelSetup:
    """What every deal of a duel plays: the two bots by registry name (``engine.bots``), the
    seatings, the rules and each match's length in deals (``engine.match``)."""

    challenger: str
    reference: str
    seatings: tuple[str, ...] = ONE_AGAINST_THREE
    rules: RuleSet = MCR
    hands: int = MATCH_HANDS


@dataclass(slots=True)
class SideTally:
    """One side's seat-hands (a player's part in one hand), summed over seats and hands.

    The defence audit's counts (``engine.duel_audit``): of its ``discards``, ``feeding`` left
    the seat one or more tiles from ready and an opponent could win on it; ``feeding_safe``
    of those, the seat held a tile of equal use nobody could win on; ``feeding_known`` of
    those, one the opponents it fed had let pass, which its own view showed.
    """

    seat_hands: int = 0
    wins: int = 0
    self_drawn: int = 0
    deal_ins: int = 0  # it discarded the winning tile (or added the kong robbed)
    draws: int = 0  # the hand was drawn (the wall ran out)
    fan: int = 0  # of its wins, flowers included
    points: int = 0
    discards: int = 0
    feeding: int = 0
    feeding_safe: int = 0
    feeding_known: int = 0

    def add(self, other: SideTally) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def rate(self, count: int) -> float:
        """``count`` per seat-hand (0 before any)."""
        return count / self.seat_hands if self.seat_hands else 0.0

    @property
    def average_fan(self) -> float:
        return self.fan / self.wins if self.wins else 0.0

    def to_dict(self) -> dict[str, float | int]:
        return {
            "seat_hands": self.seat_hands,
            "win_rate": self.rate(self.wins),
            "self_draw_rate": self.rate(self.self_drawn),
            "deal_in_rate": self.rate(self.deal_ins),
            "draw_rate": self.rate(self.draws),
            "average_fan": self.average_fan,
            "points_per_hand": self.rate(self.points),
            **{f.name: getattr(self, f.name) for f in fields(self)},
        }


@dataclass(slots=True)
class DealResult:
    """One deal played in every seating: each side's tally, the hands played (all
    seatings), and the challenger's decision times in seconds when a clock was given."""

    deal: int  # 0-based, in the order of ``deal_seeds``
    seed: int
    challenger: SideTally = field(default_factory=SideTally)
    reference: SideTally = field(default_factory=SideTally)
    hands: int = 0
    decision_times: list[float] = field(default_factory=list)


def deal_seeds(seed: int, deals: int) -> list[int]:
    """The match seed of each deal of a duel, derived from its seed (as a simulation's)."""
    return match_seeds(seed, deals)


def play_deal(
    deal: int, seed: int, setup: DuelSetup, clock: Callable[[], float] | None = None
) -> DealResult:
    """Play the deal of match seed ``seed`` once in each of ``setup.seatings``.

    The bot at player ``p`` is made with the seed ``seed + p`` whichever side it plays for,
    so a bot against itself plays the very same matches in every seating. ``clock``, when
    given, times each of the challenger's decisions."""
    out = DealResult(deal, seed)
    for seating in setup.seatings:
        sides = [out.challenger if role == CHALLENGER else out.reference for role in seating]
        bots = [
            make_bot(setup.challenger if role == CHALLENGER else setup.reference, seed=seed + p)
            for p, role in enumerate(seating)
        ]
        timed = [clock is not None and role == CHALLENGER for role in seating]
        match = Match(seed, setup.rules, match_id=deal, hands=setup.hands)
        while not match.over:
            match.start_hand()
            hand = match.hand
            assert hand is not None
            while hand.phase is not Phase.OVER:
                player = hand.awaiting()[0]
                view = hand.view(player)
                if timed[player]:
                    assert clock is not None
                    started = clock()
                    action = bots[player].choose(view)
                    out.decision_times.append(clock() - started)
                else:
                    action = bots[player].choose(view)
                if action.kind is ActionKind.DISCARD:
                    assert action.tile is not None
                    side = sides[player]
                    audit = audit_discard(hand, player, action.tile)
                    side.discards += 1
                    side.feeding += audit.feeds
                    side.feeding_safe += audit.safe_alternative
                    side.feeding_known += audit.known_safe_alternative
                match.apply(player, action)
            tally_hand(match.records[-1], sides)
            out.hands += 1
    return out


def tally_hand(record: HandRecord, sides: Sequence[SideTally]) -> None:
    """Add one finished hand to the tally of each player's side (``sides`` by player)."""
    result = record.result
    for player, side in enumerate(sides):
        side.seat_hands += 1
        side.points += result.deltas[player]
        if result.winner is None:
            side.draws += 1
        elif result.winner == player:
            side.wins += 1
            side.self_drawn += result.discarder is None
            assert result.score is not None
            side.fan += result.score.total
        elif result.discarder == player:
            side.deal_ins += 1


@dataclass(frozen=True, slots=True)
class Interval:
    """A ratio's estimate with its cluster-robust standard error and 95% interval
    (``low``, ``high``; infinite with fewer than two clusters)."""

    mean: float
    se: float
    low: float
    high: float
    clusters: int

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


def t_quantile(df: int) -> float:
    """Student's t 0.975 quantile with ``df`` (at least 1) degrees of freedom."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {df!r}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def clustered_interval(totals: Sequence[float], counts: Sequence[int]) -> Interval:
    """The ratio ``sum(totals) / sum(counts)`` (a mean per unit over clusters of units: per
    deal, the challenger's points and its seat-hands) with a cluster-robust 95% interval.

    With D clusters, r = ΣY/ΣN and residuals e_d = Y_d − r·N_d, the standard error is
    sqrt(D/(D−1) · Σe_d²) / ΣN (the linearised ratio estimator, each cluster one
    observation) and the interval r ± t·se, t Student's 0.975 quantile with D−1 degrees
    of freedom."""
    if len(totals) != len(counts):
        raise ValueError(f"{len(totals)} totals but {len(counts)} counts")
    units = sum(counts)
    if units <= 0:
        raise ValueError("no units to average over")
    mean = sum(totals) / units
    clusters = len(totals)
    if clusters < 2:
        return Interval(mean, math.inf, -math.inf, math.inf, clusters)
    squares = sum((y - mean * n) ** 2 for y, n in zip(totals, counts, strict=True))
    se = math.sqrt(clusters / (clusters - 1) * squares) / units
    half = t_quantile(clusters - 1) * se
    return Interval(mean, se, mean - half, mean + half, clusters)


@dataclass(frozen=True, slots=True)
class DuelSummary:
    """A duel's figures: each side's tally over every deal, the hands played and the
    challenger's margin in points per hand."""

    deals: int
    hands: int
    challenger: SideTally
    reference: SideTally
    margin: Interval


def summarize(results: Iterable[DealResult]) -> DuelSummary:
    """The figures of the deals ``results`` (at least one), merged in the order given."""
    challenger, reference = SideTally(), SideTally()
    totals: list[float] = []
    counts: list[int] = []
    hands = 0
    for result in results:
        challenger.add(result.challenger)
        reference.add(result.reference)
        totals.append(result.challenger.points)
        counts.append(result.challenger.seat_hands)
        hands += result.hands
    return DuelSummary(
        len(totals), hands, challenger, reference, clustered_interval(totals, counts)
    )

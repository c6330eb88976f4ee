"""Duplicate evaluation (``engine.duel``) and its defence audit (``engine.duel_audit``).

The duel's strongest check is an invariant: a bot against itself, one against three, plays
the same matches in every seating, so the challenger's points over the four seatings of a
deal are the whole table's, zero. The audit is checked on scripted hands (``tablekit``) where
what feeds whom is known.
"""

from __future__ import annotations

import math
import statistics
from itertools import count

import pytest
from tablekit import deal, discard, drive, snapshot, tile

from engine.duel import (
    ONE_AGAINST_THREE,
    DealResult,
    DuelSetup,
    SideTally,
    clustered_interval,
    deal_seeds,
    parse_seatings,
    play_deal,
    summarize,
    t_quantile,
)
from engine.duel_audit import DiscardAudit, audit_discard
from engine.rules import CUSTOM, MCR, RuleSet
from engine.table import HandState


def play(setup: DuelSetup, deals: int, seed: int = 0) -> list[DealResult]:
    return [play_deal(d, s, setup) for d, s in enumerate(deal_seeds(seed, deals))]


# ----------------------------------------------------------------- seatings ---


def test_seatings_are_parsed_and_checked() -> None:
    assert parse_seatings("CRRR,ccrr") == ("CRRR", "CCRR")
    assert parse_seatings(" RRRC ") == ("RRRC",)
    for bad in ("CRR", "CRRRR", "CXRR", "CCCC", "RRRR", "CRRR,"):
        with pytest.raises(ValueError):
            parse_seatings(bad)


# ------------------------------------------------------------------- margin ---


# CUSTOM: wild tiles (翻混), no minimum, dealer repeat (a match's hands depend on the play).
@pytest.mark.parametrize("rules", [MCR, CUSTOM], ids=["mcr", "custom"])
def test_a_bot_against_itself_has_a_margin_of_exactly_zero(rules: RuleSet) -> None:
    results = play(DuelSetup("normal", "normal", rules=rules, hands=4), deals=2, seed=3)
    for result in results:
        assert result.challenger.points == 0  # the four seatings add up to the whole table
        assert result.reference.seat_hands == 3 * result.challenger.seat_hands
    summary = summarize(results)
    margin = summary.margin
    assert (margin.mean, margin.se, margin.low, margin.high) == (0, 0, 0, 0)
    assert margin.clusters == 2 and not margin.excludes_zero()
    assert summary.hands == summary.challenger.seat_hands >= 2 * 4 * 4


def test_normal_beats_fast_with_an_interval_excluding_zero() -> None:
    # fast never reaches the 8-fan minimum: it can only lose points.
    summary = summarize(play(DuelSetup("normal", "fast", hands=4), deals=3))
    assert summary.margin.mean > 0 and summary.margin.low > 0
    assert summary.reference.wins == 0 and summary.challenger.wins > 0
    c, r = summary.challenger, summary.reference
    assert c.points + r.points == 0
    assert c.self_drawn <= c.wins and c.fan >= 8 * c.wins
    # Each hand is a win or a draw, seen from every seat.
    assert c.wins + r.wins + r.draws // 3 == summary.hands


def test_a_deal_replays_the_same_and_a_clock_changes_nothing() -> None:
    setup = DuelSetup("normal", "fast", seatings=parse_seatings("CCRR,RRCC"), hands=4)
    (seed,) = deal_seeds(9, 1)
    ticks = count()
    timed = play_deal(0, seed, setup, clock=lambda: float(next(ticks)))
    plain = play_deal(0, seed, setup)
    assert (timed.challenger, timed.reference, timed.hands) == (
        plain.challenger,
        plain.reference,
        plain.hands,
    )
    assert plain.decision_times == [] and set(timed.decision_times) == {1.0}
    assert timed.challenger.seat_hands == timed.reference.seat_hands == 2 * timed.hands


def test_side_tallies_add_and_give_rates() -> None:
    a = SideTally(seat_hands=4, wins=1, fan=10, points=12, discards=30, feeding=2)
    a.add(
        SideTally(
            seat_hands=4, wins=1, fan=20, points=-4, feeding=1, feeding_safe=1, feeding_known=1
        )
    )
    assert (
        a.seat_hands, a.wins, a.fan, a.points, a.feeding, a.feeding_safe, a.feeding_known
    ) == (8, 2, 30, 8, 3, 1, 1)  # fmt: skip
    assert a.rate(a.wins) == 0.25 and a.average_fan == 15 and a.to_dict()["points_per_hand"] == 1


# ----------------------------------------------------------------- interval ---


def test_the_clustered_interval_by_hand() -> None:
    # Four deals: the challenger's points and seat-hands in each.
    totals, counts = [3.0, -1.0, 4.0, 0.0], [2, 1, 3, 2]
    got = clustered_interval(totals, counts)
    # r = 6/8; residuals 3-1.5, -1-0.75, 4-2.25, 0-1.5; squares 2.25+3.0625+3.0625+2.25.
    se = math.sqrt(4 / 3 * 10.625) / 8
    assert got.mean == 0.75 and got.se == pytest.approx(se) and got.clusters == 4
    assert got.low == pytest.approx(0.75 - 3.1824 * se)
    assert got.high == pytest.approx(0.75 + 3.1824 * se)


def test_with_equal_cluster_sizes_it_is_the_t_interval_of_the_cluster_means() -> None:
    totals = [5.0, -7.0, 12.0, 1.0, -3.0, 8.0]
    means = [y / 4 for y in totals]
    got = clustered_interval(totals, [4] * len(totals))
    se = statistics.stdev(means) / math.sqrt(len(means))
    assert got.mean == pytest.approx(statistics.mean(means))
    assert got.se == pytest.approx(se)
    assert got.high - got.mean == pytest.approx(2.5706 * se)  # t, 5 degrees of freedom


def test_one_cluster_has_no_interval_and_bad_input_is_refused() -> None:
    one = clustered_interval([4.0], [2])
    assert one.mean == 2 and math.isinf(one.se) and not one.excludes_zero()
    with pytest.raises(ValueError):
        clustered_interval([1.0], [1, 2])
    with pytest.raises(ValueError):
        clustered_interval([], [])


def test_t_quantile() -> None:
    assert t_quantile(1) == 12.7062 and t_quantile(30) == 2.0423
    assert t_quantile(30) > t_quantile(31) > t_quantile(120) > t_quantile(10**6) > 1.9599
    assert t_quantile(31) == pytest.approx(2.0395, abs=1e-4)
    assert t_quantile(120) == pytest.approx(1.9799, abs=1e-4)
    with pytest.raises(ValueError):
        t_quantile(0)


# ------------------------------------------------------------ defence audit ---

# Player 0 (the dealer, 14 tiles) is far from ready; player 2 is ready on 5p with Pure
# Straight (16 fan); players 1 and 3 wait on nothing.
FEEDS_5P = {
    0: "5p48m48p48sCFPESWN",
    1: "26m26p26sCFPESW9m",
    2: "123456789s33m46p",
    3: "37m37p37sCFPESW9p",
}
# Player 0 is one tile from ready and keeps the same by letting E or N go; player 2 waits
# on E (or 4m), player 3 on N (or 5s): whichever it discards feeds someone.
BOTH_FED = {
    0: "123m567m11p46p79sEN",
    1: "26m26p26sCFPSW9m8s",
    2: "123456789sEE44m",
    3: "123456789pNN55s",
}


def test_a_discard_feeding_a_waiting_opponent_is_counted_and_the_hand_left_alone() -> None:
    state = deal(FEEDS_5P)
    before = snapshot(state)
    assert audit_discard(state, 0, tile("5p")) == DiscardAudit(feeds=True, safe_alternative=True)
    assert snapshot(state) == before
    # An honor of equal use was safe; discarding it feeds nobody.
    assert audit_discard(state, 0, tile("N")) == DiscardAudit()


def test_a_wait_short_of_the_minimum_is_not_fed() -> None:
    # Player 2 is ready on 5p by shape, but the win would not reach 8 fan: no win offered.
    state = deal({**FEEDS_5P, 2: "234m678p11s789s46p"})
    assert audit_discard(state, 0, tile("5p")) == DiscardAudit()


def let_go_round(state: HandState) -> None:
    """Player 0 lets N go; the others pass every claim and discard what they draw, until
    player 0 has drawn again."""
    state.apply(0, discard("N"))
    drive(state, lambda s: s.awaiting() == [0] and s.drawn is not None)


def test_a_tile_the_fed_opponent_let_pass_is_one_the_seat_could_know_safe() -> None:
    # Player 3 draws and lets W go after player 2's last discard, and player 2, waiting on
    # 5p, lets it pass: the seat's own view shows W safe against player 2.
    state = deal(FEEDS_5P, draws="9m1pW1m")
    let_go_round(state)
    assert state.river[3][-1] == (tile("W"), False)
    assert audit_discard(state, 0, tile("5p")) == DiscardAudit(
        feeds=True, safe_alternative=True, known_safe_alternative=True
    )
    # Had player 3 let 9s go instead, E, S and W were still safe, but no view could tell.
    state = deal(FEEDS_5P, draws="9m1p9s1m")
    let_go_round(state)
    assert audit_discard(state, 0, tile("5p")) == DiscardAudit(feeds=True, safe_alternative=True)


def test_no_safe_alternative_when_every_tile_of_equal_use_feeds() -> None:
    state = deal(BOTH_FED)
    assert audit_discard(state, 0, tile("E")) == DiscardAudit(feeds=True, safe_alternative=False)
    # With nobody waiting on N, N was the safe tile.
    quiet = deal({**BOTH_FED, 3: "37m37p37sCFPSW9p8s"})
    assert audit_discard(quiet, 0, tile("E")) == DiscardAudit(feeds=True, safe_alternative=True)


def test_a_discard_that_leaves_the_seat_ready_is_not_counted() -> None:
    state = deal({**BOTH_FED, 0: "123m567m11p456p79sE"})  # ready on 8s without the E
    assert audit_discard(state, 0, tile("E")) == DiscardAudit()


def test_the_audit_counts_stay_within_the_discards() -> None:
    summary = summarize(play(DuelSetup("normal", "fast", hands=4), deals=2, seed=1))
    for side in (summary.challenger, summary.reference):
        assert side.feeding_known <= side.feeding_safe <= side.feeding <= side.discards
    # fast discards what it draws, far from ready: each of its deal-ins fed a waiting hand.
    assert summary.reference.feeding >= summary.reference.deal_ins > 0


def test_one_against_three_seats_the_challenger_everywhere_once() -> None:
    assert sorted(s.index("C") for s in ONE_AGAINST_THREE) == [0, 1, 2, 3]
    assert all(s.count("C") == 1 for s in ONE_AGAINST_THREE)

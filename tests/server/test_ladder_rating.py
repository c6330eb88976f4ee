"""The rating arithmetic (server/ladder/rating.py), without a database: the library's own
results, the update formula of docs/ladder.md written out independently, ranks with ties, the
conservative figure, the soft reset, provisional status, and invariants (Hypothesis)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openskill.models import PlackettLuce

from server.ladder.rating import (
    Rating,
    RatingParams,
    conservative,
    is_provisional,
    ranks,
    rate,
    soft_reset,
)

PARAMS = RatingParams()


def plackett_luce(before: list[Rating], places: list[int], p: RatingParams) -> list[Rating]:
    """The update as docs/ladder.md states it, written out here on its own."""
    s2 = [r.sigma**2 + p.tau**2 for r in before]
    c = math.sqrt(sum(v + p.beta**2 for v in s2))
    e = [math.exp(r.mu / c) for r in before]
    n = len(before)
    share = [sum(1 for q in range(n) if places[q] == places[i]) for i in range(n)]
    below = [sum(e[s] for s in range(n) if places[s] >= places[q]) for q in range(n)]
    after = []
    for i in range(n):
        above = [q for q in range(n) if places[q] <= places[i]]
        omega = sum(((q == i) - e[i] / below[q]) / share[q] for q in above)
        delta = sum((e[i] / below[q]) * (1 - e[i] / below[q]) / share[q] for q in above)
        gamma = math.sqrt(s2[i]) / c
        mu = before[i].mu + s2[i] / c * omega
        sigma = math.sqrt(s2[i] * max(1 - gamma * s2[i] / c**2 * delta, 0.0001))
        after.append(Rating(mu, sigma))
    return after


ratings = st.builds(
    Rating, st.floats(min_value=0, max_value=50), st.floats(min_value=0.5, max_value=8.4)
)
scores = st.lists(st.integers(min_value=-300, max_value=300), min_size=4, max_size=4)


def test_ranks_share_ties_like_sport() -> None:
    assert ranks([120, -40, -40, -40]) == [1, 2, 2, 2]
    assert ranks([30, 50, 30, -110]) == [2, 1, 2, 4]
    assert ranks([0, 0, 0, 0]) == [1, 1, 1, 1]
    assert ranks([-33, -34, -35, 102]) == [2, 3, 4, 1]


def test_rate_is_the_librarys_update_to_the_last_digit() -> None:
    model = PlackettLuce()
    rng = random.Random(7)
    for _ in range(300):
        before = [Rating(rng.uniform(10, 40), rng.uniform(1, 8.4)) for _ in range(4)]
        result = [rng.choice([-48, -8, 0, 8, 64]) for _ in range(4)]
        teams = [[model.rating(mu=r.mu, sigma=r.sigma)] for r in before]
        expected = model.rate(teams, ranks=[float(r) for r in ranks(result)])
        assert rate(before, result, PARAMS) == [Rating(t[0].mu, t[0].sigma) for t in expected]
        for team in expected:
            assert conservative(team[0].mu, team[0].sigma) == team[0].ordinal()


def test_the_documented_formula_is_the_librarys() -> None:
    """docs/ladder.md's update, written out independently, agrees with the library (to
    rounding) on random matches, ties included, and on the documented example."""
    rng = random.Random(11)
    for _ in range(1000):
        before = [Rating(rng.uniform(5, 45), rng.uniform(0.5, 8.4)) for _ in range(4)]
        result = [rng.choice([-24, 0, 8, 16]) for _ in range(4)]
        mine = plackett_luce(before, ranks(result), PARAMS)
        for a, b in zip(mine, rate(before, result, PARAMS), strict=True):
            assert a.mu == pytest.approx(b.mu, abs=1e-9)
            assert a.sigma == pytest.approx(b.sigma, abs=1e-9)


def test_the_worked_example_of_the_docs() -> None:
    """Match 2 of docs/ladder.md: the ratings after match 1 and the final scores give the
    documented figures."""
    before = [
        Rating(26.55291815138952, 8.17961798837266),  # lin
        Rating(24.689416369722096, 8.084127880168786),  # mei
        Rating(20.962412806387245, 8.084127880168786),  # jun
        Rating(27.795252672501135, 8.263571791259416),  # ana
    ]
    after = rate(before, [2, -11, -19, 28], PARAMS)
    shown = [(round(r.mu, 4), round(r.sigma, 4), round(r.conservative, 2)) for r in after]
    assert shown == [
        (27.838, 8.021, 3.78),
        (24.2031, 7.8529, 0.64),
        (17.6538, 7.8703, -5.96),
        (30.4488, 8.1857, 5.89),
    ]
    # And match 1, from four newcomers.
    first = rate([PARAMS.initial] * 4, [-33, -34, -35, 102], PARAMS)
    assert first == before


@given(st.lists(ratings, min_size=4, max_size=4), scores)
def test_invariants_of_an_update(before: list[Rating], result: list[int]) -> None:
    after = rate(before, result, PARAMS)
    places = ranks(result)
    for old, new in zip(before, after, strict=True):
        assert math.isfinite(new.mu) and 0 < new.sigma <= math.hypot(old.sigma, PARAMS.tau)
    # The sole winner never loses mu; a sole loser never gains it.
    for i, place in enumerate(places):
        if place == 1 and places.count(1) == 1:
            assert after[i].mu >= before[i].mu
        if place == 4:
            assert after[i].mu <= before[i].mu
    # Permuting the players permutes the results.
    order = [2, 0, 3, 1]
    permuted = rate([before[i] for i in order], [result[i] for i in order], PARAMS)
    for k, i in enumerate(order):
        assert permuted[k].mu == pytest.approx(after[i].mu, abs=1e-9)
        assert permuted[k].sigma == pytest.approx(after[i].sigma, abs=1e-9)


@given(ratings, scores)
def test_tied_equal_players_move_alike(rating: Rating, result: list[int]) -> None:
    result = [result[0], result[0], result[1], result[2]]  # players 0 and 1 tie
    after = rate([rating, rating, Rating(25, 5), Rating(20, 3)], result, PARAMS)
    assert after[0].mu == pytest.approx(after[1].mu, abs=1e-12)  # (summation order)
    assert after[0].sigma == pytest.approx(after[1].sigma, abs=1e-12)


def test_equal_results_among_equals_change_only_sigma() -> None:
    after = rate([PARAMS.initial] * 4, [0, 0, 0, 0], PARAMS)
    assert all(r.mu == pytest.approx(after[0].mu) for r in after)
    assert after[0].mu == pytest.approx(25.0)
    assert after[0].sigma < PARAMS.sigma


def test_soft_reset_pulls_toward_a_newcomer_and_widens_sigma() -> None:
    assert soft_reset(Rating(35.0, 2.0), PARAMS) == Rating(30.0, 6.0)
    assert soft_reset(Rating(15.0, 7.5), PARAMS) == Rating(20.0, 7.5)
    assert soft_reset(Rating(40.0, 9.0), PARAMS).sigma == PARAMS.sigma  # never wider than new
    keep_all = RatingParams(reset_keep=1.0, reset_sigma=0.0)
    assert soft_reset(Rating(31.0, 3.0), keep_all) == Rating(31.0, 3.0)
    forget = RatingParams(reset_keep=0.0, reset_sigma=100.0)
    assert soft_reset(Rating(31.0, 3.0), forget) == PARAMS.initial


def test_provisional_until_enough_matches() -> None:
    assert is_provisional(0, 10) and is_provisional(9, 10)
    assert not is_provisional(10, 10) and not is_provisional(0, 0)


def test_params_check_their_values_and_round_trip() -> None:
    assert RatingParams.from_dict(PARAMS.to_dict()) == PARAMS
    for bad in ({"sigma": 0.0}, {"beta": -1.0}, {"tau": -0.1}, {"reset_keep": 1.5}):
        with pytest.raises(ValueError, match="must be"):
            RatingParams(**bad)
    with pytest.raises(ValueError, match="a rating per score"):
        rate([PARAMS.initial] * 3, [1, 2, 3, 4], PARAMS)

"""Tournament seating (server.tournaments.seating), without a server: determinism from the
seed, everyone seated once or on a bye, repeat-free schedules where they exist (16 players
over 4 sessions, 128 over 7) and honest reports where they do not (8 players twice), the
fewest repeats up to 24 seats checked against an enumeration of every seating, true messages
(proven, or a lower bound above), wind balance, the Swiss, top-four and balanced orders, fair
byes, substitutes, the director's swap and refused requests."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.tournaments.seating import (
    EXACT_SEATS,
    Seating,
    SeatingError,
    bye_counts,
    is_substitute,
    pair_counts,
    report,
    seat_session,
    swap,
    wind_counts,
)

FAST = 3_000  # a small search budget keeps the properties quick


def names(n: int) -> list[str]:
    return [f"p{i:03d}" for i in range(n)]


def splits(seats: Sequence[str]) -> Iterator[tuple[tuple[str, ...], ...]]:
    """Every way to split ``seats`` into tables of four (tables unordered, winds ignored)."""
    if not seats:
        yield ()
        return
    first, rest = seats[0], seats[1:]
    for three in itertools.combinations(rest, 3):
        others = [p for p in rest if p not in three]
        for more in splits(others):
            yield ((first, *three), *more)


def weigh(tables: Sequence[Sequence[str]], met: Mapping[frozenset[str], int]) -> tuple[int, int]:
    """Repeats as the seating counts them: the earlier meetings of the pairs at the tables,
    then the number of those pairs."""
    pairs = [
        frozenset(pair)
        for t in tables
        for pair in itertools.combinations([p for p in t if not is_substitute(p)], 2)
    ]
    return sum(met.get(p, 0) for p in pairs), sum(p in met for p in pairs)


def every_seating(seating: Seating) -> list[tuple[tuple[str, ...], ...]]:
    """Every seating of ``seating``'s seats (its players and substitutes), substitutes spread
    as the rule says (one to a table, two only when there are more than tables)."""
    seats = sorted(p for t in seating.tables for p in t)
    subs = sum(map(is_substitute, seats))
    most = max(1, -(-subs // len(seating.tables)))
    return [s for s in splits(seats) if all(sum(map(is_substitute, t)) <= most for t in s)]


def schedule(
    players: list[str], sessions: int, method: str = "avoid", seed: int = 0, **kwargs: object
) -> list[Seating]:
    history: list[Seating] = []
    for k in range(sessions):
        history.append(seat_session(players, history, method, seed * 1000 + k, **kwargs))  # type: ignore[arg-type]
    return history


def test_same_seed_same_seating_and_another_seed_another() -> None:
    players = names(32)
    first = schedule(players, 3, seed=5)
    again = schedule(players, 3, seed=5)
    assert [s.tables for s in first] == [s.tables for s in again]
    other = schedule(players, 3, seed=6)
    assert [s.tables for s in first] != [s.tables for s in other]


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(min_value=4, max_value=23),
    sessions=st.integers(min_value=1, max_value=3),
    method=st.sampled_from(["random", "balanced", "avoid", "swiss", "top4"]),
    fill=st.sampled_from(["byes", "substitutes"]),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_everyone_is_seated_once_or_on_a_bye_and_the_seed_decides(
    n: int, sessions: int, method: str, fill: str, seed: int
) -> None:
    players = names(n)
    standings = list(reversed(players))
    history: list[Seating] = []
    for k in range(sessions):
        seating = seat_session(
            players,
            history,
            method,
            seed + k,
            standings=standings,
            fill=fill,
            budget=FAST,  # type: ignore[arg-type]
        )
        again = seat_session(
            players,
            history,
            method,
            seed + k,
            standings=standings,
            fill=fill,
            budget=FAST,  # type: ignore[arg-type]
        )
        assert seating == again
        seated = seating.players()
        assert sorted(seated + list(seating.byes)) == players
        assert all(len(table) == 4 for table in seating.tables)
        if fill == "byes":
            assert len(seating.byes) == n % 4
            assert not any(is_substitute(p) for t in seating.tables for p in t)
        else:
            assert seating.byes == ()
            subs = [p for t in seating.tables for p in t if is_substitute(p)]
            assert len(subs) == (4 - n % 4) % 4
            most = -(-len(subs) // len(seating.tables))  # one to a table while there are tables
            assert all(sum(map(is_substitute, t)) <= most for t in seating.tables)
        # The repeats reported are exactly the pairs at a table that met before.
        met = pair_counts(history)
        at_tables = {
            frozenset(pair)
            for t in seating.tables
            for pair in itertools.combinations([p for p in t if not is_substitute(p)], 2)
        }
        assert {frozenset(r.players) for r in seating.repeats} == at_tables & met.keys()
        assert bool(seating.message) == bool(seating.repeats)
        assert seating.session == k + 1
        history.append(seating)


@pytest.mark.parametrize("seed", range(5))
def test_sixteen_players_meet_no_one_twice_over_four_sessions(seed: int) -> None:
    history = schedule(names(16), 4, seed=seed)
    assert all(s.repeats == () and s.message == "" for s in history)
    assert max(pair_counts(history).values()) == 1
    assert len(pair_counts(history)) == 4 * 4 * 6  # 96 distinct pairs


def test_128_players_over_7_sessions_repeat_free_with_winds_balanced() -> None:
    history = schedule(names(128), 7, seed=1)
    figures = report(history)
    assert figures.repeat_pairings == 0
    assert figures.wind_imbalance <= 1
    # With 4 sessions each of 64 players sits each wind once.
    four = schedule(names(64), 4, seed=2)
    assert report(four).repeat_pairings == 0
    assert all(c == (1, 1, 1, 1) for c in wind_counts(four).values())


def test_eight_players_cannot_avoid_repeats_and_the_seating_says_so() -> None:
    players = names(8)
    history = schedule(players, 3, seed=3)
    assert history[0].repeats == ()
    second = history[1]
    # Two tables of four from two tables of four: at best two pairs meet again at each.
    assert len(second.repeats) == 4
    assert second.fewest and second.unavoidable == 4
    assert "4 repeat pairing(s), the fewest possible (proven by the search)" in second.message
    assert all(r.sessions == (1,) for r in second.repeats)
    for r in second.repeats:
        assert any(set(r.players) <= set(t) for t in second.tables)
        assert any(set(r.players) <= set(t) for t in history[0].tables)
    assert history[2].repeats and history[2].message


def check_message(seating: Seating, met: Mapping[frozenset[str], int], allowed: list) -> None:  # type: ignore[type-arg]
    """What the seating says of its repeats is true of ``allowed`` (every seating its
    method may choose) and of every seating of its seats."""
    got = weigh(seating.tables, met)
    fewest = min(weigh(s, met) for s in allowed)
    fewest_pairings = min(weigh(s, met)[1] for s in every_seating(seating))
    assert seating.unavoidable <= fewest_pairings  # a lower bound is never above the minimum
    if not seating.repeats:
        assert seating.message == "" and seating.fewest
        return
    assert "budget" not in seating.message
    if seating.fewest:
        assert got == fewest
        assert "proven by the search" in seating.message
    if "the fewest possible" in seating.message:
        assert seating.fewest and got[1] == min(weigh(s, met)[1] for s in allowed)
    if "unavoidable" in seating.message:
        assert f"at least {seating.unavoidable} unavoidable" in seating.message


@pytest.mark.parametrize("seed", range(5))
def test_thirteen_players_get_the_fewest_repeats_of_every_seating(seed: int) -> None:
    # 13 players, one bye a session, random then avoid twice: the third session cannot
    # avoid every repeat. It was seated with more repeat pairings than the fewest of the
    # 5,775 seatings of its twelve and said "no repeat-free seating found within the search
    # budget"; it now has the fewest (earlier meetings, then pairings) and says so.
    players = names(13)
    history: list[Seating] = []
    for k, method in enumerate(("random", "avoid", "avoid")):
        history.append(seat_session(players, history, method, seed * 1000 + k))  # type: ignore[arg-type]
    third = history[2]
    met = pair_counts(history[:2])
    seatings = every_seating(third)
    assert len(seatings) == 5775
    assert weigh(third.tables, met) == min(weigh(s, met) for s in seatings)
    assert third.repeats and third.fewest
    check_message(third, met, seatings)


def random_history(
    players: list[str], sessions: int, fill: str, rng: random.Random
) -> list[Seating]:
    """Sessions seated at random, byes or substitutes as ``fill`` says (a history no
    seating method made: pairs may have met several times)."""
    history: list[Seating] = []
    for k in range(1, sessions + 1):
        order = list(players)
        rng.shuffle(order)
        byes: list[str] = []
        if fill == "byes":
            byes = order[: len(order) % 4]
            order = order[len(order) % 4 :]
        else:
            order += [f"sub:{i}" for i in range(1, (4 - len(order) % 4) % 4 + 1)]
        tables = tuple(
            (order[t], order[t + 1], order[t + 2], order[t + 3]) for t in range(0, len(order), 4)
        )
        history.append(Seating(session=k, method="random", seed=0, tables=tables, byes=tuple(byes)))
    return history


SMALL = [(n, "byes") for n in range(8, 16)] + [(n, "substitutes") for n in range(5, 13)]


@settings(max_examples=30, deadline=None)
@given(
    event=st.sampled_from(SMALL),
    sessions=st.integers(min_value=2, max_value=8),
    method=st.sampled_from(["avoid", "balanced"]),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_the_fewest_repeats_are_those_of_every_seating(
    event: tuple[int, str], sessions: int, method: str, seed: int
) -> None:
    # Up to 12 seats, every seating is enumerated here, apart from the search: the one
    # chosen has the fewest repeats, proven; balanced's among those with one player of each
    # quarter of the standings at each table.
    n, fill = event
    players = names(n)
    standings = players[::-1]
    history = random_history(players, sessions, fill, random.Random(seed))
    seating = seat_session(
        players,
        history,
        method,
        seed,
        standings=standings,
        fill=fill,
        budget=FAST,  # type: ignore[arg-type]
    )
    allowed = every_seating(seating)
    if method == "balanced":
        seated = sorted(seating.players(), key=standings.index)
        subs = sorted(p for t in seating.tables for p in t if is_substitute(p))
        quarter = {p: i // len(seating.tables) for i, p in enumerate(seated + subs)}
        allowed = [s for s in allowed if all(len({quarter[p] for p in t}) == 4 for t in s)]
    met = pair_counts(history)
    assert weigh(seating.tables, met) == min(weigh(s, met) for s in allowed)
    assert seating.fewest
    check_message(seating, met, allowed)


def test_above_the_exact_size_the_message_gives_a_lower_bound() -> None:
    # 32 players after many random sessions: repeats cannot all be avoided, and above
    # EXACT_SEATS the seating is not searched exhaustively: it says how many a lower bound
    # proves unavoidable, never that it has the fewest (unless it meets the bound).
    players = names(32)
    history = random_history(players, 14, "byes", random.Random(7))
    seating = seat_session(players, history, "avoid", 1, budget=FAST)
    assert len(seating.players()) > EXACT_SEATS
    assert 0 < seating.unavoidable <= len(seating.repeats)
    met = pair_counts(history)
    assert len(seating.repeats) == weigh(seating.tables, met)[1]
    if seating.fewest:
        assert "proven by the search" in seating.message
    else:
        assert f"the fewest found; at least {seating.unavoidable} unavoidable" in seating.message
    assert "budget" not in seating.message


def test_random_reports_repeats_without_avoiding_them() -> None:
    history = schedule(names(8), 2, method="random", seed=1)
    assert history[1].repeats
    assert "random seating does not avoid" in history[1].message


def test_winds_balance_over_as_many_sessions_as_winds() -> None:
    history = schedule(names(32), 4, seed=4)
    worst = max(max(c) - min(c) for c in wind_counts(history).values())
    assert worst <= 1
    assert report(history).wind_imbalance == worst


def test_top4_seats_the_standings_in_fours() -> None:
    players = names(12)
    standings = ["p011", "p003", "p007", "p000", "p005", "p001"] + [
        p for p in players if p not in {"p011", "p003", "p007", "p000", "p005", "p001"}
    ]
    seating = seat_session(players, [], "top4", 1, standings=standings)
    assert [sorted(t) for t in seating.tables] == [
        sorted(standings[0:4]),
        sorted(standings[4:8]),
        sorted(standings[8:12]),
    ]


def test_swiss_seats_neighbours_and_steps_around_a_repeat() -> None:
    players = names(16)
    standings = players  # p000 leads
    fresh = seat_session(players, [], "swiss", 1, standings=standings)
    assert [sorted(t) for t in fresh.tables] == [players[i : i + 4] for i in range(0, 16, 4)]
    # After a session where the top four sat together, Swiss keeps the leaders apart.
    again = seat_session(players, [fresh], "swiss", 2, standings=standings)
    first = set(again.tables[0])
    # p000 opens the first table, then the next in the standings p000 has not met: p004,
    # then p008; all the rest within the window met one of them, p001 fewest.
    assert first == {"p000", "p004", "p008", "p001"}
    assert 0 < len(again.repeats) < 4 * 6  # top4 again would repeat all 24 pairs
    assert all(
        max(players.index(p) for p in t) - min(players.index(p) for p in t) < 16
        for t in again.tables
    )


def test_balanced_spreads_the_quarters_and_keeps_them_apart_later() -> None:
    players = names(16)
    standings = players
    history = schedule(players, 3, method="balanced", standings=standings)
    for seating in history:
        for table in seating.tables:
            assert sorted(players.index(p) // 4 for p in table) == [0, 1, 2, 3]
    assert report(history).repeat_pairings == 0
    # Without standings, balanced is a seeded shuffle.
    loose = seat_session(players, [], "balanced", 9)
    assert sorted(loose.players()) == players


def test_byes_go_to_those_with_fewest_so_far() -> None:
    players = names(17)
    history = schedule(players, 8, seed=2, budget=FAST)
    byes = [s.byes for s in history]
    assert all(len(b) == 1 for b in byes)
    assert len({b[0] for b in byes}) == 8  # nobody sits out twice while others have not
    history15 = schedule(names(15), 4, seed=3, budget=FAST)
    counts = bye_counts(history15)
    assert sum(counts.values()) == 12 and max(counts.values()) == 1


@settings(max_examples=15, deadline=None)
@given(n=st.integers(min_value=5, max_value=11), seed=st.integers(0, 10_000))
def test_byes_stay_even_over_many_sessions(n: int, seed: int) -> None:
    players = names(n)
    history: list[Seating] = []
    for k in range(6):
        history.append(seat_session(players, history, "random", seed + k))
        counts = bye_counts(history)
        spread = [counts[p] for p in players]
        assert max(spread) - min(spread) <= 1


def test_substitutes_complete_tables_one_to_a_table() -> None:
    seating = seat_session(names(13), [], "avoid", 1, fill="substitutes")
    subs = sorted(p for t in seating.tables for p in t if is_substitute(p))
    assert subs == ["sub:1", "sub:2", "sub:3"]
    assert len(seating.tables) == 4
    assert all(sum(map(is_substitute, t)) <= 1 for t in seating.tables)


def test_swap_moves_two_players_and_recomputes_repeats() -> None:
    players = names(8)
    history = schedule(players, 1, seed=1)
    second = seat_session(players, history, "avoid", 2)
    east_a, east_b = second.tables[0][0], second.tables[1][0]
    swapped = swap(second, east_a, east_b)
    assert swapped.tables[0][0] == east_b and swapped.tables[1][0] == east_a
    assert second.tables[0][0] == east_a  # the given seating is unchanged
    met = pair_counts(history)
    expected = {
        frozenset(pair)
        for t in swapped.tables
        for pair in itertools.combinations(t, 2)
        if frozenset(pair) in met
    }
    assert {frozenset(r.players) for r in swapped.repeats} == expected
    assert swap(swapped, east_b, east_a).tables == second.tables


def test_a_swap_keeps_the_claim_only_while_it_holds() -> None:
    # 8 players, second session: 4 repeat pairings, proven the fewest. Two of one table
    # swapping winds keep them; two tables swapping a pair of players who met put them with
    # their old tablemates again: more repeats, and the message no longer claims the fewest.
    players = names(8)
    history = schedule(players, 1, seed=1)
    second = seat_session(players, history, "avoid", 2)
    assert second.fewest and second.unavoidable == 4
    table = second.tables[0]
    same = swap(second, table[0], table[1])
    assert same.fewest and same.message.startswith("4 repeat pairing(s), the fewest possible")
    first = history[0].tables[0]
    # Two players of one first-session table who now sit apart, brought together.
    a, b = next(
        (a, b)
        for a, b in itertools.combinations(first, 2)
        if not any({a, b} <= set(t) for t in second.tables)
    )
    here = next(t for t in second.tables if a in t)
    other = next(p for p in here if p != a and frozenset((a, p)) not in pair_counts(history))
    worse = swap(second, other, b)
    assert len(worse.repeats) > 4 and not worse.fewest
    assert worse.message.startswith(
        f"{len(worse.repeats)} repeat pairing(s), after the director's swap; at least 4 unavoidable"
    )


def test_swap_with_a_bye_and_unknown_ids() -> None:
    seating = seat_session(names(5), [], "random", 1)
    (out,) = seating.byes
    seated = seating.tables[0][2]
    swapped = swap(seating, seated, out)
    assert swapped.byes == (seated,)
    assert swapped.tables[0][2] == out
    with pytest.raises(SeatingError, match="'nobody'"):
        swap(seating, "nobody", seated)
    assert swap(seating, seated, seated) == seating


@pytest.mark.parametrize(
    ("players", "method", "kwargs", "match"),
    [
        (names(8), "roundrobin", {}, "unknown seating method 'roundrobin'"),
        (names(8), "avoid", {"fill": "ghosts"}, "unknown fill 'ghosts'"),
        (["a", "b", "c", "a"], "avoid", {}, r"checked in twice: \['a'\]"),
        (["a", "b", "c", ""], "avoid", {}, "non-empty string"),
        (["a", "b", "c", "sub:1"], "avoid", {}, "substitute prefix"),
        (["a", "b", "c"], "avoid", {}, "four players, 3 checked in"),
        ([], "avoid", {"fill": "substitutes"}, "no players"),
        (names(8), "swiss", {}, "needs standings"),
        (names(8), "top4", {"standings": names(7)}, r"missing from the standings: \['p007'\]"),
        (names(8), "avoid", {"budget": -1}, "budget"),
    ],
)
def test_bad_requests_are_refused_with_the_input_quoted(
    players: list[str], method: str, kwargs: dict[str, object], match: str
) -> None:
    with pytest.raises(SeatingError, match=match):
        seat_session(players, [], method, 1, **kwargs)  # type: ignore[arg-type]


def test_a_zero_budget_still_seats_everyone() -> None:
    players = names(16)
    history = schedule(players, 2, seed=1)
    seating = seat_session(players, history, "avoid", 3, budget=0)
    assert sorted(seating.players()) == players


def test_pair_counts_and_report() -> None:
    one = Seating(session=1, method="top4", seed=0, tables=(("a", "b", "c", "d"),), byes=("e",))
    two = Seating(session=2, method="top4", seed=0, tables=(("e", "a", "b", "c"),), byes=("d",))
    counts = pair_counts([one, two])
    assert counts[frozenset(("a", "b"))] == 2
    assert counts[frozenset(("a", "e"))] == 1
    assert len(counts) == 9
    figures = report([one, two])
    assert figures.repeat_pairings == 3  # a-b, a-c, b-c again
    assert figures.wind_imbalance == 1
    assert (figures.byes_min, figures.byes_max) == (0, 1)
    assert wind_counts([one, two])["a"] == (1, 1, 0, 0)

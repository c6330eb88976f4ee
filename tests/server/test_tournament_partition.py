"""The exact search for the fewest repeats (server.tournaments.partition), checked against a
plain enumeration of every split of up to twelve seats: its minimum, its lower bounds (never
above the minimum), ``below`` (only something cheaper is looked for), the substitutes (alike,
one a table) and the limit on its work."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.tournaments.partition import FORBIDDEN, Partition

Split = tuple[tuple[int, ...], ...]


def splits(seats: Sequence[int]) -> Iterator[Split]:
    if not seats:
        yield ()
        return
    first, rest = seats[0], seats[1:]
    for three in itertools.combinations(rest, 3):
        others = [s for s in rest if s not in three]
        for more in splits(others):
            yield ((first, *three), *more)


def cost_of(split: Split, cost: Sequence[Sequence[int]]) -> int:
    return sum(cost[a][b] for table in split for a, b in itertools.combinations(table, 2))


class Event:
    """Seats that met over random earlier sessions, the costs ``seating`` gives them
    (``scale`` * meetings + 1 for a pair that met; two substitutes never together while
    there are tables enough; with ``quarters``, two seats of one quarter never together, the
    substitutes last, as ``balanced`` has them) and the earlier tables as families."""

    def __init__(
        self, n: int, subs: int, sessions: int, rng: random.Random, *, quarters: bool = False
    ) -> None:
        self.n, self.tables = n, n // 4
        self.scale = 6 * self.tables + 1
        players = list(range(subs, n))  # seats 0..subs-1: substitutes
        meetings = [[0] * n for _ in range(n)]
        self.families: list[list[int]] = []
        for _ in range(sessions):
            order = list(players)
            rng.shuffle(order)
            order = order[len(order) % 4 :]  # the rest on a bye
            tables = [order[t : t + 4] for t in range(0, len(order), 4)]
            self.families.append([sum(1 << s for s in table) for table in tables])
            for table in tables:
                for a, b in itertools.combinations(table, 2):
                    meetings[a][b] += 1
                    meetings[b][a] += 1
        self.meetings = meetings
        self.marked = (1 << subs) - 1
        self.cap = max(1, -(-subs // self.tables))
        self.cost = [
            [
                (FORBIDDEN if subs <= self.tables else 0)
                if a < subs and b < subs and a != b
                else self.scale * meetings[a][b] + (1 if meetings[a][b] else 0)
                for b in range(n)
            ]
            for a in range(n)
        ]
        if quarters:
            # Players first, then the substitutes, in four quarters of one seat a table.
            order = list(range(subs, n)) + list(range(subs))
            quarter = {seat: k // self.tables for k, seat in enumerate(order)}
            for a, b in itertools.permutations(range(n), 2):
                if quarter[a] == quarter[b]:
                    self.cost[a][b] = FORBIDDEN

    def partition(self) -> Partition:
        return Partition(
            self.cost, self.families, scale=self.scale, marked=self.marked, cap=self.cap
        )

    def every_split(self) -> list[Split]:
        return [
            s
            for s in splits(list(range(self.n)))
            if all(sum(seat < self.marked.bit_length() for seat in t) <= self.cap for t in s)
            and cost_of(s, self.cost) < FORBIDDEN
        ]


@settings(max_examples=60, deadline=None)
@given(
    n=st.sampled_from([4, 8, 12]),
    subs=st.integers(min_value=0, max_value=3),
    sessions=st.integers(min_value=0, max_value=8),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    quarters=st.booleans(),
)
def test_the_search_finds_the_minimum_and_the_bounds_stay_below_it(
    n: int, subs: int, sessions: int, seed: int, quarters: bool
) -> None:
    event = Event(n, min(subs, n - 1), sessions, random.Random(seed), quarters=quarters)
    every = event.every_split()
    fewest = min(cost_of(s, event.cost) for s in every)
    fewest_pairings = min(
        sum(event.meetings[a][b] > 0 for t in s for a, b in itertools.combinations(t, 2))
        for s in every
    )
    part = event.partition()
    found = part.fewest(fewest + 1)
    assert found.complete and found.tables is not None
    assert found.cost == fewest == cost_of(found.tables, event.cost)
    assert sorted(seat for table in found.tables for seat in table) == list(range(n))
    assert all(
        sum(seat < subs for seat in table) <= event.cap for table in found.tables
    )  # substitutes spread
    # Nothing below the minimum: the search says so, having finished.
    nothing = part.fewest(fewest)
    assert nothing.tables is None and nothing.complete and nothing.cost == fewest
    assert part.bound() <= fewest
    assert part.pairings_bound() <= fewest_pairings


def test_a_search_out_of_work_says_so_and_keeps_what_it_found() -> None:
    event = Event(12, 0, 6, random.Random(3))
    part = event.partition()
    cut = part.fewest(FORBIDDEN, step_limit=0)
    assert not cut.complete
    whole = part.fewest(FORBIDDEN)
    assert whole.complete and whole.tables is not None
    if cut.tables is not None:
        assert cut.cost == cost_of(cut.tables, event.cost) >= whole.cost


def test_bad_seats_are_refused() -> None:
    with pytest.raises(ValueError, match="6 seats do not make tables of four"):
        Partition([[0] * 6 for _ in range(6)], scale=1)
    cost = [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    with pytest.raises(ValueError, match=r"marked seat 0 has a cost: \[0, 1\]"):
        Partition(cost, scale=1, marked=1)

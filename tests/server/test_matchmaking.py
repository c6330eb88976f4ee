"""Forming tables from the queue (server.ladder.matchmaking), without a server: the gap
schedule, one pass's choices, and its invariants as Hypothesis properties (nobody seated
twice, every table within every member's gap, no allowed table left among the leftovers,
widening with time, the same four kept apart while someone else could sit with them)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from server.ladder.matchmaking import Entry, GapSchedule, allowed, form_tables, spread

SCHEDULE = GapSchedule(gap_start=3.0, gap_step=1.0, step_seconds=10.0, gap_max=50.0)


def test_the_gap_widens_by_steps_up_to_its_most() -> None:
    assert SCHEDULE.gap(0) == 3.0
    assert SCHEDULE.gap(9.99) == 3.0
    assert SCHEDULE.gap(10) == 4.0
    assert SCHEDULE.gap(65) == 9.0
    assert SCHEDULE.gap(10_000) == 50.0
    assert SCHEDULE.gap(-5) == 3.0  # a clock stepping back never narrows below the start


def test_four_close_players_make_a_table_in_join_order() -> None:
    entries = [
        Entry("dan", 25.5, joined=4.0),
        Entry("ann", 25.0, joined=1.0),
        Entry("cat", 26.0, joined=3.0),
        Entry("bob", 24.0, joined=2.0),
    ]
    assert form_tables(entries, now=5.0, schedule=SCHEDULE) == [("ann", "bob", "cat", "dan")]


def test_fewer_than_four_make_nothing() -> None:
    entries = [Entry(n, 25.0, 0.0) for n in ("ann", "bob", "cat")]
    assert form_tables(entries, now=100.0, schedule=SCHEDULE) == []


def test_far_apart_players_wait_until_their_gaps_have_grown() -> None:
    # Three at 25 and one at 33: a spread of 8 needs everyone's gap at 8, 50 s of waiting.
    entries = [Entry(n, 25.0, 0.0) for n in ("ann", "bob", "cat")] + [Entry("dan", 33.0, 0.0)]
    assert form_tables(entries, now=0.0, schedule=SCHEDULE) == []
    assert form_tables(entries, now=49.9, schedule=SCHEDULE) == []
    assert form_tables(entries, now=50.0, schedule=SCHEDULE) == [("ann", "bob", "cat", "dan")]
    # The narrowest gap decides: a newcomer at 25 has gap 3, so it cannot replace ann yet.
    late = [Entry("eve", 25.0, 49.0), *entries[1:]]
    assert form_tables(late, now=50.0, schedule=SCHEDULE) == []


def test_the_oldest_player_gets_the_tightest_table_around_them() -> None:
    # ann (oldest) at 25: the tightest four around her are ann, bob, cat, dan (spread 0.3),
    # not the older eve at 27.
    entries = [
        Entry("ann", 25.0, 0.0),
        Entry("eve", 27.0, 0.5),
        Entry("bob", 25.1, 1.0),
        Entry("cat", 25.2, 2.0),
        Entry("dan", 25.3, 3.0),
        Entry("fay", 22.5, 4.0),
    ]
    assert form_tables(entries, now=5.0, schedule=SCHEDULE) == [("ann", "bob", "cat", "dan")]


def test_the_oldest_is_seated_first_even_with_narrower_tablemates() -> None:
    # ann has waited 60 s (gap 9); the others just came (gap 3). bob, cat, dan, eve are the
    # tightest four, but ann goes first: she sits with the three nearest her who fit.
    entries = [
        Entry("ann", 24.0, 0.0),
        Entry("bob", 25.1, 60.0),
        Entry("cat", 25.2, 60.1),
        Entry("dan", 25.3, 60.2),
        Entry("eve", 25.4, 60.3),
    ]
    assert form_tables(entries, now=60.5, schedule=SCHEDULE) == [("ann", "bob", "cat", "dan")]


def test_a_newcomer_between_them_does_not_hide_an_allowed_table() -> None:
    # Four old players (gap 10) spread over 8 points; between them sits a newcomer (gap 3)
    # who cannot join them: the pass looks past her and seats the four.
    old = [Entry(n, mu, 0.0) for n, mu in (("ann", 20.0), ("bob", 22.0), ("cat", 26.0))]
    entries = [*old, Entry("dan", 28.0, 0.0), Entry("new", 24.0, 70.0)]
    assert form_tables(entries, now=70.0, schedule=SCHEDULE) == [("ann", "bob", "cat", "dan")]


def test_the_same_four_wait_for_anyone_else_who_could_sit_with_them() -> None:
    four = frozenset({"ann", "bob", "cat", "dan"})
    again = [Entry(n, 25.0, 0.0, last_four=four) for n in sorted(four)]
    # Alone in the queue, the same four may play again.
    assert form_tables(again, now=1.0, schedule=SCHEDULE) == [("ann", "bob", "cat", "dan")]
    # With eve waiting close enough, the table is a different four.
    tables = form_tables([*again, Entry("eve", 25.0, 0.5)], now=1.0, schedule=SCHEDULE)
    assert len(tables) == 1 and set(tables[0]) != four and "eve" in tables[0]
    # With eve too far to replace anyone, the same four play again rather than wait forever.
    tables = form_tables([*again, Entry("eve", 40.0, 0.5)], now=1.0, schedule=SCHEDULE)
    assert tables == [("ann", "bob", "cat", "dan")]


def test_a_barred_four_is_never_formed() -> None:
    entries = [Entry(n, 25.0, 0.0) for n in ("ann", "bob", "cat", "dan")]
    barred = [frozenset({"ann", "bob", "cat", "dan"})]
    assert form_tables(entries, now=1.0, schedule=SCHEDULE, barred=barred) == []
    tables = form_tables([*entries, Entry("eve", 25.0, 0.5)], 1.0, SCHEDULE, barred)
    assert len(tables) == 1 and "eve" in tables[0]


def test_ties_are_deterministic() -> None:
    entries = [Entry(f"p{i}", 25.0, 0.0) for i in range(9)]
    first = form_tables(entries, now=0.0, schedule=SCHEDULE)
    assert first == form_tables(list(reversed(entries)), now=0.0, schedule=SCHEDULE)
    assert first == [("p0", "p1", "p2", "p3"), ("p4", "p5", "p6", "p7")]


# ------------------------------------------------------------- properties ---

schedules = st.builds(
    GapSchedule,
    gap_start=st.sampled_from([0.0, 1.0, 3.0]),
    gap_step=st.sampled_from([0.0, 0.5, 1.0, 4.0]),
    step_seconds=st.sampled_from([1.0, 10.0]),
    gap_max=st.just(50.0),
)


@st.composite
def queues(draw: st.DrawFn, most: int = 12) -> list[Entry]:
    count = draw(st.integers(0, most))
    mus = st.floats(10.0, 40.0, allow_nan=False).map(lambda x: round(x, 1))
    joined = st.integers(0, 60).map(float)
    return [Entry(f"p{i:02d}", draw(mus), draw(joined)) for i in range(count)]


def check_pass(entries: list[Entry], now: float, schedule: GapSchedule) -> None:
    tables = form_tables(entries, now, schedule)
    by_name = {e.name: e for e in entries}
    seated = [name for table in tables for name in table]
    assert len(seated) == len(set(seated)), "someone seated twice"
    for table in tables:
        members = [by_name[n] for n in table]
        assert allowed(members, now, schedule), table
        assert list(table) == [e.name for e in sorted(members, key=lambda e: (e.joined, e.name))]
    leftovers = [e for e in entries if e.name not in set(seated)]
    for four in itertools.combinations(leftovers, 4):
        assert not allowed(four, now, schedule), f"left out but allowed together: {four}"


@settings(max_examples=300, deadline=None)
@given(queues(), st.integers(0, 120).map(float), schedules)
def test_a_pass_seats_nobody_twice_fits_every_gap_and_leaves_no_table(
    entries: list[Entry], later: float, schedule: GapSchedule
) -> None:
    check_pass(entries, 60.0 + later, schedule)


@settings(max_examples=100, deadline=None)
@given(queues(most=40), schedules)
def test_once_every_gap_covers_the_ratings_everyone_but_the_remainder_is_seated(
    entries: list[Entry], schedule: GapSchedule
) -> None:
    wide = GapSchedule(schedule.gap_start, 1.0, 1.0, 50.0)
    tables = form_tables(entries, now=60.0 + 50.0, schedule=wide)
    assert len(tables) == len(entries) // 4


@settings(max_examples=200, deadline=None)
@given(queues(), st.integers(0, 60).map(float), st.integers(1, 120).map(float))
def test_a_table_allowed_now_is_allowed_later(
    entries: list[Entry], now: float, wait: float
) -> None:
    now += 60.0
    for table in form_tables(entries, now, SCHEDULE):
        members = [e for e in entries if e.name in table]
        assert allowed(members, now + wait, SCHEDULE)
        assert spread(e.mu for e in members) <= min(
            SCHEDULE.gap(now + wait - e.joined) for e in members
        )


@settings(max_examples=200, deadline=None)
@given(queues(), st.integers(0, 60).map(float))
def test_the_same_four_never_sit_again_while_another_could_replace_one(
    entries: list[Entry], now: float
) -> None:
    """Give the first four their own table as ``last_four``: if the pass seats them together
    again, no other unseated player could have taken one of their places."""
    if len(entries) < 4:
        return
    now += 60.0
    four = frozenset(e.name for e in entries[:4])
    marked = [Entry(e.name, e.mu, e.joined, four if e.name in four else None) for e in entries]
    tables = form_tables(marked, now, SCHEDULE)
    if four not in {frozenset(t) for t in tables}:
        return
    table = next(t for t in tables if frozenset(t) == four)
    others_seated = {n for t in tables for n in t if t is not table}
    # Whoever was unseated when that table was formed: at least the final leftovers.
    waiting = [e for e in marked if e.name not in four and e.name not in others_seated]
    members = [e for e in marked if e.name in four]
    for other in waiting:
        for out in members:
            swapped = [m for m in members if m is not out] + [other]
            assert not allowed(swapped, now, SCHEDULE), (other, out)


@st.composite
def chunked_queues(draw: st.DrawFn) -> list[Entry]:
    """Players who all joined together, whose mu order cut in fours gives allowed tables
    (each four within 2.9 of the gap of 3: clear of rounding), with any steps between."""
    mus: list[float] = []
    at = 0.0
    for _ in range(draw(st.integers(1, 12))):
        at += draw(st.floats(0.0, 8.0).map(lambda x: round(x, 1)))
        offsets = sorted(draw(st.lists(st.integers(0, 29), min_size=4, max_size=4)))
        mus.extend(at + o / 10 for o in offsets)
        at = mus[-1]
    order = draw(st.permutations(range(len(mus))))  # names in no relation to mu
    return [Entry(f"p{order[i]:02d}", mu, 0.0) for i, mu in enumerate(mus)]


@settings(max_examples=300, deadline=None)
@given(chunked_queues())
def test_a_queue_that_can_all_be_seated_at_once_is(entries: list[Entry]) -> None:
    tables = form_tables(entries, now=0.0, schedule=SCHEDULE)
    assert 4 * len(tables) == len(entries), tables

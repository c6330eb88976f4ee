"""``server.table.clock``: a table's timers with the time passed in (no event loop, no
sleep): the decision's deadline, the claim window, the hand pause and its readers, the pace
of a table nobody watches, the time cap, away players, and when the task wakes up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pytest import approx

from server.table.clock import (
    TableClock,
    capped,
    nobody_watches,
    plays_itself,
    readers,
    wakeup,
)
from server.table.seats import BOT, HUMAN, Seat

NOW = 1000.0


def test_a_new_decision_starts_a_new_clock_and_the_same_one_keeps_it() -> None:
    clock = TableClock()
    assert clock.decide(seq=3, now=NOW, turn_seconds=20) == NOW + 20
    assert clock.decide(seq=3, now=NOW + 5, turn_seconds=20) == NOW + 20  # the same update
    assert not clock.expired(NOW + 19.9)
    assert clock.expired(NOW + 20)
    assert clock.decide(seq=4, now=NOW + 7, turn_seconds=20) == NOW + 27  # a new update


def test_the_claim_window_holds_until_its_least_time_has_passed() -> None:
    clock = TableClock()
    clock.decide(1, NOW, 20)
    clock.open_window(NOW, claim_window_ms=800)
    clock.open_window(NOW + 0.5, claim_window_ms=800)  # already open: not moved
    assert clock.window_until == NOW + 0.8
    assert clock.window_holds(NOW + 0.7)
    assert clock.deadline is None  # nobody decides while only the window is due
    assert not clock.window_holds(NOW + 0.8)
    clock.close_window()
    assert clock.window_until is None


def test_a_zero_window_closes_as_soon_as_every_answer_is_in() -> None:
    clock = TableClock()
    clock.open_window(NOW, claim_window_ms=0)
    assert not clock.window_holds(NOW)


def test_a_hand_over_pauses_and_a_new_hand_forgets_the_decision_and_the_window() -> None:
    clock = TableClock()
    clock.decide(1, NOW, 20)
    clock.hand_over(NOW, hand_pause_seconds=3)
    assert clock.deadline is None
    assert clock.paused(NOW + 2.9) and not clock.paused(NOW + 3)
    clock.decide(2, NOW + 3, 20)
    clock.open_window(NOW + 3, 500)
    clock.new_hand()
    assert (clock.deadline, clock.window_until) == (None, None)


def test_pace_only_lengthens_a_pause() -> None:
    clock = TableClock()
    clock.hand_over(NOW, hand_pause_seconds=5)
    clock.pace(NOW, seconds=1)
    assert clock.pause_until == NOW + 5
    clock.pace(NOW + 5, seconds=1)
    assert clock.pause_until == NOW + 6


def test_a_pause_moves_every_clock_on_but_a_pause_already_over() -> None:
    clock = TableClock()
    clock.decide(1, NOW, 20)
    clock.pause_until = NOW - 1  # over before the pause began
    away = Seat(HUMAN, "alice", connected=False, away_since=NOW - 2)
    seats = [away, Seat(HUMAN, "bob"), None, Seat(BOT, "fast")]
    clock.move(since=NOW, paused=7.5, seats=seats)
    assert clock.deadline == NOW + 27.5
    assert clock.pause_until == NOW - 1
    assert away.away_since == NOW + 5.5
    clock.pause_until = NOW + 2
    clock.move(since=NOW, paused=1, seats=seats)
    assert clock.pause_until == NOW + 3


def test_the_server_plays_for_bots_empty_seats_and_players_away_long_enough() -> None:
    assert plays_itself(Seat(BOT, "fast"), NOW, 30)
    assert plays_itself(None, NOW, 30)
    assert not plays_itself(Seat(HUMAN, "alice"), NOW, 30)
    away = Seat(HUMAN, "alice", connected=False, away_since=NOW - 29)
    assert not plays_itself(away, NOW, 30)
    assert plays_itself(away, NOW + 1, 30)


def test_nobody_watches_without_a_connected_person() -> None:
    assert nobody_watches([Seat(BOT, "fast"), None, None, None])
    assert nobody_watches([Seat(HUMAN, "alice", connected=False), Seat(BOT, "fast"), None, None])
    assert not nobody_watches([Seat(HUMAN, "alice"), Seat(BOT, "fast"), None, None])


def test_the_time_cap_passes_at_its_moment() -> None:
    cap = datetime(2026, 12, 1, 12, tzinfo=UTC)
    assert not capped(None, cap)
    assert not capped(cap, cap - timedelta(seconds=1))
    assert capped(cap, cap)


def test_the_task_wakes_for_the_first_timer_due() -> None:
    clock = TableClock()
    clock.decide(1, NOW, 20)
    seats = [Seat(HUMAN, "alice", connected=False, away_since=NOW - 5), None, None, None]
    common = {"playing": True, "seats": seats, "disconnected_seconds": 30}
    assert wakeup(NOW, clock, **common) == 20  # the deadline
    clock.open_window(NOW, 800)
    assert wakeup(NOW, clock, **common) == approx(0.8)  # the window first
    assert wakeup(NOW, clock, release=NOW + 0.1, **common) == approx(0.1)  # a spectator's due
    assert wakeup(NOW, clock, empty_due=NOW + 0.05, **common) == approx(0.05)
    clock.close_window()
    clock.deadline = None
    assert wakeup(NOW, clock, **common) == 25  # alice's seat is taken over
    assert wakeup(NOW + 40, clock, **common) is None  # already due: no more waking


def test_a_failing_database_wakes_the_task_only_for_its_next_try_and_releases() -> None:
    clock = TableClock()
    clock.decide(1, NOW, 20)
    common = {"playing": True, "seats": [None] * 4, "disconnected_seconds": 30}
    assert wakeup(NOW, clock, retry_at=NOW + 0.4, **common) == approx(0.4)
    assert wakeup(NOW, clock, retry_at=NOW + 0.4, release=NOW + 0.1, **common) == approx(0.1)
    assert wakeup(NOW, clock, retry_at=NOW - 1, **common) == 0


def test_a_finished_table_wakes_when_its_delayed_spectators_are_shown_its_end() -> None:
    """A finished table whose spectators see it late is listed until they are shown the end
    (``end_shown``): its task wakes then to drop out of the listing, nobody watching it (who
    would wake it for a release) or not, and the database failing or not."""
    common = {"playing": False, "seats": [None] * 4, "disconnected_seconds": 30}
    assert wakeup(NOW, TableClock(), **common) is None
    assert wakeup(NOW, TableClock(), end_shown=NOW + 5, **common) == approx(5)
    assert wakeup(NOW, TableClock(), end_shown=NOW + 5, retry_at=NOW + 9, **common) == approx(5)


def test_a_table_not_playing_wakes_for_no_pause_window_or_away_seat() -> None:
    clock = TableClock(pause_until=NOW + 3, window_until=NOW + 1)
    seats = [Seat(HUMAN, "alice", connected=False, away_since=NOW), None, None, None]
    assert wakeup(NOW, clock, playing=False, seats=seats, disconnected_seconds=30) is None


def test_between_hands_the_table_waits_for_its_readers_until_the_last_has_read() -> None:
    clock = TableClock()
    clock.hand_over(NOW, hand_pause_seconds=1, readers={0, 2}, result_seconds=30)
    assert clock.paused(NOW + 5)  # the pause is over; two still read
    clock.has_read(2)
    assert clock.paused(NOW + 5)
    clock.has_read(0)
    assert not clock.paused(NOW + 5)
    assert clock.paused(NOW + 0.5)  # the pause itself still holds


def test_the_readers_are_waited_for_no_longer_than_the_result_seconds() -> None:
    clock = TableClock()
    clock.hand_over(NOW, hand_pause_seconds=1, readers={1}, result_seconds=30)
    assert clock.paused(NOW + 29.9) and not clock.paused(NOW + 30)
    common = {"playing": True, "seats": [None] * 4, "disconnected_seconds": 30}
    assert wakeup(NOW + 5, clock, **common) == approx(25)  # the task wakes at the limit
    clock.hand_over(NOW, hand_pause_seconds=1, readers={1}, result_seconds=0)
    assert not clock.paused(NOW + 1)  # 0: nobody is waited for
    clock.hand_over(NOW, hand_pause_seconds=1, readers={1}, result_seconds=30)
    clock.new_hand()
    assert clock.reading == set()


def test_a_database_pause_moves_the_readers_limit_on() -> None:
    clock = TableClock()
    clock.hand_over(NOW, hand_pause_seconds=1, readers={1}, result_seconds=30)
    clock.move(since=NOW + 10, paused=5, seats=[None] * 4)
    assert clock.paused(NOW + 34.9) and not clock.paused(NOW + 35)


class _Peer:
    def __init__(self, version: int) -> None:
        self.version = version


def test_the_readers_are_the_people_there_on_a_client_that_says_when_it_has_read() -> None:
    new, old, watcher, away = _Peer(3), _Peer(2), _Peer(3), _Peer(3)
    seats = [
        Seat(HUMAN, "alice"),
        Seat(HUMAN, "bob"),
        Seat(BOT, "strong"),
        Seat(HUMAN, "carol", connected=False, away_since=NOW),
    ]
    peers: dict[Any, int | None] = {new: 0, old: 1, watcher: None, away: 3}
    assert readers(peers, seats) == {0}
    assert readers({_Peer(3): 2}, seats) == set()  # a bot's seat (a peer never holds one)

"""``server.table.spectators``: the delayed spectators' feed with the time passed in: what a
new spectator starts from, what is released when, and what is forgotten."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from server.table.spectators import SpectatorFeed

DELAY = 60.0


def kept(feed: SpectatorFeed[str], at: float, text: str | None, *, dealt: bool = False) -> None:
    feed.keep(at, DELAY, text, {"at": at}, lambda: f"full@{at:g}", dealt)


def test_a_spectator_before_the_delay_starts_from_how_the_table_started() -> None:
    feed: SpectatorFeed[str] = SpectatorFeed()
    kept(feed, 0, None, dealt=True)  # the table as it starts
    kept(feed, 10, "u1", dealt=True)
    summary, full = feed.start("sam", now=30, delay=DELAY)
    assert summary == {"at": 0} and full is None  # nothing old enough to show yet
    assert feed.release(30, DELAY, lambda _: True) == []
    assert feed.next_release(DELAY) == 60
    assert feed.release(60, DELAY, lambda _: True) == [("sam", "full@0")]
    assert feed.release(70, DELAY, lambda _: True) == [("sam", "u1")]


def test_a_spectator_after_the_delay_starts_from_the_table_as_it_was_then() -> None:
    feed: SpectatorFeed[str] = SpectatorFeed()
    kept(feed, 0, None, dealt=True)
    kept(feed, 10, "u1", dealt=True)
    kept(feed, 20, "chat")  # not dealt: the last full update stands
    kept(feed, 80, "u2", dealt=True)
    summary, full = feed.start("sam", now=85, delay=DELAY)
    assert (summary, full) == ({"at": 20}, "full@10")
    assert feed.release(85, DELAY, lambda _: True) == []
    assert feed.next_release(DELAY) == 140
    assert feed.release(140, DELAY, lambda _: True) == [("sam", "u2")]
    assert feed.next_release(DELAY) is None


def test_release_sends_in_order_and_forgets_one_who_stopped_watching() -> None:
    feed: SpectatorFeed[str] = SpectatorFeed()
    kept(feed, 0, None, dealt=True)
    feed.start("sam", now=0, delay=DELAY)
    feed.start("kim", now=0, delay=DELAY)
    kept(feed, 1, "a")
    kept(feed, 2, "b")
    sent = feed.release(62, DELAY, lambda who: who == "sam")
    assert sent == [("sam", "full@0"), ("sam", "a"), ("sam", "b")]
    assert list(feed.watch_next) == ["sam"]


def test_what_everyone_got_is_forgotten_but_where_a_new_spectator_starts() -> None:
    feed: SpectatorFeed[str] = SpectatorFeed()
    for at in range(0, 200, 10):
        kept(feed, at, f"u{at}", dealt=True)
    assert feed.shown[0].at == 130  # the latest as old as the delay: 190 - 60
    feed.start("sam", now=190, delay=DELAY)
    kept(feed, 200, "late")
    assert feed.shown[0].n <= feed.watch_next["sam"]  # what sam still waits for is kept


@given(
    at=st.floats(0, 1e6, allow_nan=False),
    delay=st.floats(0.001, 600, allow_nan=False),
    late=st.floats(0, 1, allow_nan=False),
)
def test_once_the_next_release_is_due_the_release_sends_it(
    at: float, delay: float, late: float
) -> None:
    # The table's task sleeps until ``next_release`` and then calls ``release``: if the
    # two disagreed on when an entry is due (``at + delay <= now`` against ``at <= now -
    # delay``, which floating point need not agree on), the task would wake with nothing
    # to send, find it due at once again and spin on a clock that stands still.
    feed: SpectatorFeed[str] = SpectatorFeed()
    feed.keep(at, delay, None, {}, lambda: "full", dealt=True)
    feed.start("sam", now=at, delay=delay)
    due = feed.next_release(delay)
    assert due is not None
    now = due + late * delay
    assert feed.release(now, delay, lambda _: True) == [("sam", "full")]
    assert feed.next_release(delay) is None

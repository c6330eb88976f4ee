"""``server.table.durable``: the action log's writes, the unknown-outcome reconcile and the
database-failure pause, against an in-memory store that fails on command (``FakeStore``)
and a clock moved by hand."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fakes import FakeStore

from server.db.store import ActionRow, Conflict, TableRow
from server.table.durable import ACTION, CREATE, HAND, ROW, Durable, StorePause, settle

DISCARD = {"type": "discard", "tile": "5m"}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def durable(clock: Clock, resumed: list[tuple[float, float]]) -> Durable:
    return Durable(
        "t1",
        now=clock,
        first=lambda: 0.05,
        most=lambda: 0.3,
        resumed=lambda since, paused: resumed.append((since, paused)),
    )


async def store_with_match() -> tuple[FakeStore, int]:
    store = FakeStore()
    seats = ["a", "b", "c", "d"]
    match_id = await store.create_match("t1", "mcr", 1, "00", seats, datetime.now(UTC))
    return store, match_id


def row() -> TableRow:
    return TableRow("t1", "mcr", 20, False, None, [None] * 4, datetime(2026, 12, 1, tzinfo=UTC))


def test_the_pause_waits_twice_as_long_after_each_failure_up_to_the_most() -> None:
    pause = StorePause()
    assert not pause.down
    waits = [pause.failed(100.0 + n, first=0.05, most=0.3, kind=ROW) for n in range(5)]
    assert waits == [0.05, 0.1, 0.2, 0.3, 0.3]
    assert pause.down and pause.down_since == 100.0  # since the first failure
    assert pause.retry_at == 104.3
    assert not pause.due(104.2) and pause.due(104.3)
    assert pause.worked(110.0, kind=ROW) == 100.0
    assert not pause.down and pause.failures == 0 and not pause.failing
    assert pause.worked(111.0, kind=ROW) is None  # no pause to end
    assert pause.failed(120.0, first=0.05, most=0.3, kind=ROW) == 0.05  # counted afresh


def test_the_pause_counts_from_when_the_failed_write_began() -> None:
    """A write that waited 10 s for SQLite's lock before failing: the table was stuck
    those 10 s as much as after, so they count as paused (no turn runs out meanwhile)."""
    pause = StorePause()
    pause.failed(110.0, first=0.05, most=0.3, kind=ACTION, began=100.0)
    assert pause.down_since == 100.0
    assert pause.worked(111.0, kind=ACTION) == 100.0


def test_a_write_of_another_kind_ends_the_pause_only_until_the_failed_kind_fails_again() -> None:
    """A full disk takes a table row's update but not a new action: the retry's row save
    ends the pause, the next append fails again. The pause goes on from where it ended (the
    time between counts as paused), its waits keep growing, until an append works."""
    pause = StorePause()
    pause.failed(100.0, first=0.05, most=0.3, kind=ACTION)
    assert pause.worked(100.05, kind=ROW) == 100.0  # the retry saved the row
    assert not pause.down and pause.failing and pause.owed == ACTION
    assert pause.failed(101.0, first=0.05, most=0.3, kind=ACTION) == 0.1  # not afresh
    assert pause.down_since == 100.05  # the 0.95 s between are paused too
    assert pause.worked(101.1, kind=ROW) == 100.05
    assert pause.worked(101.2, kind=HAND) is None  # not paused: still owed, since 101.1
    assert pause.failed(102.0, first=0.05, most=0.3, kind=HAND) == 0.2
    assert pause.down_since == 101.1 and pause.owed == HAND
    assert pause.worked(102.5, kind=HAND) == 101.1
    assert not pause.failing and pause.failures == 0  # the kind that failed worked
    pause.failed(200.0, first=0.05, most=0.3, kind=ACTION)
    assert pause.down_since == 200.0  # a new pause, from its own failure


@pytest.mark.parametrize("kind", [ROW, CREATE])
def test_a_write_the_table_goes_on_without_is_not_owed(kind: str) -> None:
    """A row (saved at its next change) or a match to create (only once four sit) may wait
    while the table goes on: another kind of write that works ends their pause for good,
    and a failure much later is a pause of its own, not one going on from then."""
    pause = StorePause()
    pause.failed(100.0, first=0.05, most=0.3, kind=kind)
    assert pause.worked(100.5, kind=ACTION) == 100.0
    assert not pause.failing and pause.failures == 0
    pause.failed(700.0, first=0.05, most=0.3, kind=ACTION)
    assert pause.down_since == 700.0
    # While an append is owed, their failures go on with its pause.
    pause.worked(700.1, kind=ROW)
    pause.failed(701.0, first=0.05, most=0.3, kind=kind)
    assert pause.down_since == 700.1 and pause.owed == ACTION


@pytest.mark.asyncio
async def test_clocks_move_on_by_all_the_time_appends_failed() -> None:
    """Appends fail for 20 s while the table's row saves work (each retry ends the pause):
    the clocks are moved on by every moment from the first failure to the last resume,
    not only by the pauses' slivers."""
    store, match_id = await store_with_match()
    clock, resumed = Clock(), []
    log = durable(clock, resumed)
    store.fail = lambda method, counts: method == "append_action"
    for _ in range(40):
        assert not await log.append(store, match_id, 1, 1, 0, DISCARD)
        clock.now += 0.05
        assert await log.reconcile(store, match_id) is None
        assert await log.save(store, row())  # the retry: it works, the pause ends
        clock.now += 0.45  # a client re-sending its move half a second later
    assert sum(paused for _, paused in resumed) == pytest.approx(19.55)
    store.fail = None
    assert await log.append(store, match_id, 1, 1, 0, DISCARD)
    assert not log.pause.failing


@pytest.mark.asyncio
async def test_an_append_that_waited_for_a_lock_then_failed_pauses_from_its_start() -> None:
    store, match_id = await store_with_match()
    clock, resumed = Clock(), []
    log = durable(clock, resumed)

    def locked(method: str, counts: dict[str, int]) -> bool:
        clock.now += 10  # the busy wait on another process's write lock
        return True

    store.fail = locked
    assert not await log.append(store, match_id, 1, 1, 0, DISCARD)
    assert log.pause.down_since == 100.0 and clock.now == 110.0
    store.fail = None
    assert await log.save(store, row())
    assert resumed == [(100.0, 10.0)]


@pytest.mark.parametrize(
    ("last", "applied"),
    [
        (None, False),  # the first action was not stored
        (ActionRow(6, 1, 2, DISCARD), False),  # the log ends just before it
        (ActionRow(7, 1, 2, DISCARD), True),  # it committed after all
    ],
)
def test_settle_tells_whether_the_unsure_append_committed(
    last: ActionRow | None, applied: bool
) -> None:
    seq = 1 if last is None else 7
    assert (settle(9, seq, last) is not None) == applied
    if applied:
        assert settle(9, seq, last) == last


def test_settle_refuses_a_log_that_ends_elsewhere() -> None:
    with pytest.raises(Conflict, match="the log ends at action 5, the table expected 6 or 7"):
        settle(9, 7, ActionRow(5, 1, 2, DISCARD))


@pytest.mark.asyncio
async def test_a_failed_append_pauses_and_is_unsure_until_reconciled() -> None:
    store, match_id = await store_with_match()
    clock, resumed = Clock(), []
    log = durable(clock, resumed)
    store.fail = lambda method, counts: method == "append_action"
    assert not await log.append(store, match_id, 1, 1, 0, DISCARD)
    assert log.unsure_seq == 1 and log.behind() and log.pause.down
    store.fail = None
    clock.now += 2
    assert await log.reconcile(store, match_id) is None  # it was not stored
    assert log.unsure_seq is None and not log.behind()
    assert await log.append(store, match_id, 1, 1, 0, DISCARD)
    assert not log.pause.down
    assert resumed == [(100.0, 2.0)]  # the clocks move on by the pause
    assert [a.seq for a in await store.match_actions(match_id)] == [1]


@pytest.mark.asyncio
async def test_an_append_that_committed_after_all_is_given_back_to_apply() -> None:
    store, match_id = await store_with_match()
    log = durable(Clock(), [])
    await store.append_action(match_id, 1, 1, 0, DISCARD)  # committed; the answer was lost
    log.unsure_seq = 1
    found = await log.reconcile(store, match_id)
    assert found is not None and (found.seq, found.player, found.action) == (1, 0, DISCARD)
    assert log.unsure_seq is None


@pytest.mark.asyncio
async def test_an_append_says_whether_the_server_played_it_for_the_person() -> None:
    store, match_id = await store_with_match()
    log = durable(Clock(), [])
    assert await log.append(store, match_id, 1, 1, 0, DISCARD, stand_in=True)
    assert await log.append(store, match_id, 2, 1, 1, DISCARD)
    assert [a.stand_in for a in await store.match_actions(match_id)] == [True, False]
    await store.append_action(match_id, 3, 1, 2, DISCARD, stand_in=True)  # the answer lost
    log.unsure_seq = 3
    found = await log.reconcile(store, match_id)
    assert found is not None and found.stand_in  # applied as stored, flag and all


@pytest.mark.asyncio
async def test_reconcile_failing_keeps_the_append_unsure() -> None:
    store, match_id = await store_with_match()
    log = durable(Clock(), [])
    log.unsure_seq = 3
    with pytest.raises(Conflict):  # the log ends at 0: neither 2 nor 3
        await log.reconcile(store, match_id)
    assert log.unsure_seq == 3


@pytest.mark.asyncio
async def test_a_failed_save_is_remembered_until_one_works() -> None:
    store = FakeStore()
    clock, resumed = Clock(), []
    log = durable(clock, resumed)
    store.fail = lambda method, counts: method == "save_table" and counts[method] <= 2
    assert not await log.save(store, row())
    clock.now += 0.5
    assert not await log.save(store, row())
    assert log.unsaved and log.pause.failures == 2 and log.pause.retry_at == 100.6
    clock.now += 1
    assert await log.save(store, row())
    assert not log.unsaved and not log.pause.down
    assert resumed == [(100.0, 1.5)]
    assert store.faults == 2 and "t1" in store.tables


@pytest.mark.asyncio
async def test_finished_hands_are_stored_in_order_and_wait_while_writes_fail() -> None:
    store, match_id = await store_with_match()
    log = durable(Clock(), [])
    assert not log.behind()
    record = _Record(1)
    log.held([], record)  # (a stand-in for a ``HandRecord``)
    assert log.behind() and log.untold_hand_over
    store.fail = lambda method, counts: True
    assert not await log.store_hands(store, match_id)
    assert log.unstored == [record] and log.pause.down
    store.fail = None
    assert await log.store_hands(store, match_id)
    assert log.unstored == [] and not log.pause.down
    assert 1 in store.hands[match_id]


class _Result:
    deltas = (8, -8, 0, 0)


class _Record:
    """A finished hand's record as ``Durable`` stores it: its number, dict and deltas."""

    result = _Result()

    def __init__(self, hand_no: int) -> None:
        self.hand_no = hand_no

    def to_dict(self) -> dict[str, object]:
        return {"hand_no": self.hand_no}

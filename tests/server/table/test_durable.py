"""``server.table.durable``: the action log's writes, the unknown-outcome reconcile and the
database-failure pause, against an in-memory store that fails on command (``FakeStore``)
and a clock moved by hand."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fakes import FakeStore

from server.db.store import ActionRow, Conflict, TableRow
from server.table.durable import Durable, StorePause, settle

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
    waits = [pause.failed(100.0 + n, first=0.05, most=0.3) for n in range(5)]
    assert waits == [0.05, 0.1, 0.2, 0.3, 0.3]
    assert pause.down and pause.down_since == 100.0  # since the first failure
    assert pause.retry_at == 104.3
    assert not pause.due(104.2) and pause.due(104.3)
    assert pause.worked(110.0) == 100.0
    assert not pause.down and pause.failures == 0
    assert pause.worked(111.0) is None  # no pause to end
    assert pause.failed(120.0, first=0.05, most=0.3) == 0.05  # counted afresh


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

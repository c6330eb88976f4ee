"""The SQLite store's writes take turns at a ``WriteGate`` (server/db/transactions.py): one at
a time, in the order they came, the action log's commits (``urgent``) before the others, and
a writer cancelled while it waits (or just as its turn came) never leaves the gate held."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from server.db.models import Player
from server.db.store import Store, upgrade
from server.db.transactions import WriteGate


async def writer(gate: WriteGate, name: str, log: list[str], *, urgent: bool = False) -> None:
    async with gate.turn(urgent=urgent):
        log.append(f"{name} in")
        await asyncio.sleep(0)  # hold the turn over a turn of the loop, as a write does
        await asyncio.sleep(0)
        log.append(f"{name} out")


async def hold(gate: WriteGate, release: asyncio.Event) -> None:
    """Hold the gate until ``release`` is set (a long write)."""
    async with gate.turn():
        await release.wait()


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


@pytest.mark.asyncio
async def test_one_writer_at_a_time_in_order_the_urgent_first() -> None:
    gate, log = WriteGate(), []
    first = asyncio.create_task(writer(gate, "a", log))
    await asyncio.sleep(0)  # a holds the gate
    others = [asyncio.create_task(writer(gate, name, log)) for name in ("b", "c")]
    log_commit = asyncio.create_task(writer(gate, "log", log, urgent=True))
    await asyncio.gather(first, *others, log_commit)
    assert log == ["a in", "a out", "log in", "log out", "b in", "b out", "c in", "c out"]


@pytest.mark.asyncio
async def test_a_writer_cancelled_while_waiting_leaves_its_place() -> None:
    gate, log = WriteGate(), []
    first = asyncio.create_task(writer(gate, "a", log))
    await asyncio.sleep(0)
    gone = asyncio.create_task(writer(gate, "gone", log))
    after = asyncio.create_task(writer(gate, "b", log))
    await asyncio.sleep(0)
    gone.cancel()
    await asyncio.gather(first, after)
    assert gone.cancelled()
    assert log == ["a in", "a out", "b in", "b out"]
    await asyncio.wait_for(writer(gate, "c", log), 1)  # free again


@pytest.mark.asyncio
async def test_a_writer_cancelled_as_its_turn_came_hands_it_on() -> None:
    """The turn was handed to a waiter whose task was cancelled before it ran: it passes the
    turn on instead of keeping the gate."""
    gate, log = WriteGate(), []
    held = asyncio.Event()
    release = asyncio.Event()

    async def holder() -> None:
        async with gate.turn():
            held.set()
            await release.wait()

    first = asyncio.create_task(holder())
    await held.wait()
    unlucky = asyncio.create_task(writer(gate, "unlucky", log))
    await settle()
    release.set()
    await asyncio.sleep(0)  # the holder leaves and hands the turn to unlucky...
    unlucky.cancel()  # ... which is cancelled before it runs
    await first
    with pytest.raises(asyncio.CancelledError):
        await unlucky
    await asyncio.wait_for(writer(gate, "next", log), 1)
    assert log == ["next in", "next out"]


@pytest.mark.asyncio
async def test_a_turn_that_does_not_come_in_time_fails_as_a_locked_database() -> None:
    """A writer holding the gate for longer than the busy timeout (a lock held by another
    process, say): the one waiting fails as SQLite's busy handler would have, and the gate
    is still the holder's, then free."""
    gate, log = WriteGate(wait=0.05), []
    release = asyncio.Event()
    first = asyncio.create_task(hold(gate, release))
    await asyncio.sleep(0)
    with pytest.raises(OperationalError, match="database is locked"):
        await writer(gate, "late", log)
    assert log == []
    release.set()
    await first
    await asyncio.wait_for(writer(gate, "next", log), 1)
    assert log == ["next in", "next out"]


@pytest.mark.asyncio
async def test_a_closed_gate_fails_the_writes_waiting_and_any_later() -> None:
    """When the store closes, a write still waiting for its turn fails rather than open a
    connection on the engine being disposed; so does any write asked for later."""
    gate, log = WriteGate(), []
    release = asyncio.Event()
    first = asyncio.create_task(hold(gate, release))
    await asyncio.sleep(0)
    waiting = asyncio.create_task(writer(gate, "waiting", log))
    await settle()
    gate.close()
    with pytest.raises(OperationalError, match="closed"):
        await waiting
    release.set()
    await first
    with pytest.raises(OperationalError, match="closed"):
        await writer(gate, "later", log)
    assert log == []


@pytest.mark.asyncio
async def test_many_store_writes_at_once_all_commit(tmp_path: Path) -> None:
    """Two hundred accounts made at the same moment on SQLite: they take turns at the gate,
    every one commits, and the gate is free at the end."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'gate.db'}"
    await upgrade(url)
    store = await Store.open(url)
    try:
        await asyncio.gather(*(store.create_player(f"p{i}", "x" * 60, False) for i in range(200)))
        assert store._gate is not None and not store._gate._held
        async with store._read() as session:
            assert await session.scalar(select(func.count()).select_from(Player)) == 200
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_the_action_logs_commit_waits_before_the_other_writes(store: Store) -> None:
    """The store's wiring: while a write holds the gate, an account waits among the others
    and the action log's append among the urgent; both commit once it is free."""
    if store._gate is None:
        pytest.skip("only SQLite's writes take turns")
    start = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    seats = ["lin", "bot:normal", "Mei", "bot:fast"]
    match_id = await store.create_match("t1", "mcr", 42, "ab" * 32, seats, start)
    gate = store._gate
    async with store._write():  # holds the gate, as any write does
        account = asyncio.create_task(store.create_player("late", "x" * 60, False))
        append = asyncio.create_task(store.append_action(match_id, 1, 1, 0, {"type": "pass"}))
        # (the log's flusher task takes a few turns, and a hop to the driver, to get there)
        async with asyncio.timeout(10):
            while not (gate._urgent and gate._others):
                await asyncio.sleep(0.01)
        waiting = (
            [not f.done() for f in gate._urgent],
            [not f.done() for f in gate._others],
        )
        assert not account.done() and not append.done()
    assert waiting == ([True], [True])
    await asyncio.wait_for(asyncio.gather(account, append), 10)
    assert [row.seq for row in await store.match_actions(match_id)] == [1]
    assert await store.get_player("late") is not None

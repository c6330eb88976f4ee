"""A PostgreSQL that stops answering without closing anything: a network partition, a host
paused, a backend stopped. Every statement on its connections waits, with no error.

The faults are real: the PostgreSQL backends serving a database of the test's own are
stopped (SIGSTOP), and any backend that starts for it meanwhile too (as a partition leaves
a new connection unanswered), then continued (SIGCONT). Only that database's backends: the
postmaster and every other database's are left alone. A probe so (2026-12-07) found a
player's move, ``/healthz``, ``/readyz`` and every login unanswered for as long as the
backends were stopped: a wait with no bound (server/db/engine.py).

- ``Store``, in-process: a statement with no answer fails in time; ``ping`` answers within
  its wait; after an append that got no answer the log says how it ended only once the
  backend that had it has ended (an answer before then could be undone by its late
  commit).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pgkit
import pytest
from test_server_recovery import (  # noqa: F401 (serve: its fixture)
    ME,
    TURN_SECONDS,
    check_match_as_offline,
    my_bot,
    serve,
    write_config,
)

from server.db.action_log import UNSETTLED_WAIT
from server.db.engine import POSTGRES_ANSWER_WAIT
from server.db.store import PING_WAIT, Store, TableRow, upgrade

pytestmark = [pytest.mark.postgres, pytest.mark.asyncio]

T0 = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
SEATS = ("ann", "bot:default", "bot:default", "bot:default")


@contextlib.asynccontextmanager
async def own_database() -> AsyncIterator[str]:
    """A PostgreSQL database of this test's own (its URL); skips when there is no server."""
    try:
        url = await pgkit.create_database("guobiao_hang")
    except pgkit.Unavailable as exc:
        pytest.skip(str(exc))
    try:
        yield url
    finally:
        await pgkit.drop_database(url)


class Freezer:
    """Stops the PostgreSQL backends of one database (``freeze``: those there, and every
    one that starts until ``thaw``), and continues them (``thaw``)."""

    def __init__(self, url: str) -> None:
        self.database = url.rsplit("/", 1)[1]
        self.stopped: set[int] = set()
        self._admin: Any = None
        self._task: asyncio.Task[None] | None = None

    async def backends(self) -> list[int]:
        if self._admin is None:  # (connected to the maintenance database: never stopped)
            self._admin = await pgkit.connect(pgkit.POSTGRES_URL)
        rows = await self._admin.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = $1", self.database
        )
        return [int(row["pid"]) for row in rows]

    def stop(self, pid: int) -> None:
        if pid not in self.stopped:
            os.kill(pid, signal.SIGSTOP)
            self.stopped.add(pid)

    async def freeze(self, *, new_ones: bool = True) -> None:
        """Stop every backend of the database; ``new_ones``: and, until ``thaw``, each one
        that starts (looked for every 10 ms)."""
        for pid in await self.backends():
            self.stop(pid)
        if new_ones:
            self._task = asyncio.create_task(self._keep_frozen())

    async def _keep_frozen(self) -> None:
        while True:
            await asyncio.sleep(0.01)
            for pid in await self.backends():
                self.stop(pid)

    async def thaw(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for pid in self.stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        self.stopped.clear()

    async def close(self) -> None:
        await self.thaw()
        if self._admin is not None:
            await self._admin.close()


@contextlib.asynccontextmanager
async def freezer_of(url: str) -> AsyncIterator[Freezer]:
    freezer = Freezer(url)
    try:
        yield freezer
    finally:
        await freezer.close()  # (never leave a backend stopped)


async def within(seconds: float, awaitable: Any) -> tuple[float, Any]:
    """How long ``awaitable`` took, and its result (an exception raised is the result)."""
    began = time.monotonic()
    try:
        result = await asyncio.wait_for(awaitable, seconds)
    except Exception as exc:
        result = exc
    return time.monotonic() - began, result


# ------------------------------------------------------------- the store ---


QUICK = 1.0  # seconds the store waits for an answer here (the server's: 10)


async def test_an_append_with_no_answer_is_settled_only_once_its_backend_ended() -> None:
    """The backend that holds the action log's connection is stopped, then an action is
    appended: the append fails in time (``TimeoutError``, the table's unsure append), and
    the log does not say how it ended while that backend may still commit it (it says so
    in ``UNSETTLED_WAIT``: ``TimeoutError``). Continued, the backend commits it or ends
    first; what the log then says is what it keeps. Before, ``last_action`` answered at
    once that the action was not stored, and the backend, continued, committed it."""
    async with own_database() as url, freezer_of(url) as freezer:
        await upgrade(url)
        store = await Store.open(url, answer_wait=QUICK)
        try:
            await store.save_table(TableRow("t1", "mcr", 15, False, None, SEATS, T0, "playing"))
            match_id = await store.create_match("t1", "mcr", 7, "00" * 16, SEATS, T0)
            await store.append_action(match_id, 1, 1, 0, {"type": "discard", "tile": "1m"})
            assert store._pg_driver is not None
            freezer.stop(store._pg_driver[1].get_server_pid())  # the log's connection's

            took, failed = await within(
                5, store.append_action(match_id, 2, 1, 1, {"type": "discard", "tile": "2m"})
            )
            assert isinstance(failed, TimeoutError), failed
            assert took < QUICK + 1
            took, unsure = await within(10, store.last_action(match_id))
            assert isinstance(unsure, TimeoutError), f"the log answered {unsure!r}"
            assert UNSETTLED_WAIT <= took < UNSETTLED_WAIT + 1

            await freezer.thaw()
            said = await store.last_action(match_id)
            assert said is not None
            await asyncio.sleep(0.5)  # (a late commit would have come by now)
            stored = await store.match_actions(match_id)
            assert stored[-1] == said, "the log said one thing, and kept another"
            # The table goes on from there: its next action is appended.
            await store.append_action(match_id, said.seq + 1, 1, 2, {"type": "pass"})
        finally:
            await store.close()


async def test_ping_answers_in_time_while_the_database_does_not() -> None:
    """The backend of the store's pooled connection stopped: ``ping`` says no within
    ``PING_WAIT``, and again when asked again while that ping still waits (one ping at a
    time: not a connection more for each probe), and yes once the backend goes on. Before,
    it waited as long as the backend was stopped, and /healthz with it."""
    async with own_database() as url, freezer_of(url) as freezer:
        await upgrade(url)
        store = await Store.open(url, answer_wait=POSTGRES_ANSWER_WAIT)
        try:
            assert await store.ping()  # (a connection in the pool, as a server has)
            await freezer.freeze(new_ones=False)
            for _ in range(2):
                took, answer = await within(PING_WAIT + 3, store.ping())
                assert answer is False
                assert took < PING_WAIT + 0.5
            assert len(await freezer.backends()) == 1, "a ping opened another connection"
            await freezer.thaw()
            took, answer = await within(PING_WAIT + 3, store.ping())
            assert answer is True, "no answer once the database went on"
        finally:
            await store.close()

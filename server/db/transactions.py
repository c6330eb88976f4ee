"""The ``Store``'s units of work: each method of the store is one short-lived
``AsyncSession`` (never shared between tasks) from ``_read`` or ``_write``, which begin,
commit (or roll back) and close it.

``Transactions`` is the base of the store's parts (``server.db.store``): accounts, tables,
matches, the action log and the reports each add their methods to it.

On SQLite the process's writes take turns at a ``WriteGate``. SQLite has one writer at a
time, and a connection that finds the write lock taken waits in SQLite's busy handler, which
sleeps in steps growing to 100 ms and looks again: however soon the lock is free, a waiter
may sleep on. A write through SQLAlchemy's asyncio layer holds the lock over several turns
of the event loop (BEGIN, each statement and COMMIT are each a hop to the driver's thread
and back), so on a busy server the writes queued behind each other, every one asleep. When
a thousand tables start together, their players' logins, the tables' rows and the first
actions all write at once: profiled at 4,000 connections, SQLite's threads were found asleep
in the busy handler, and actions waited a second or more. At the gate a writer waits for an
``asyncio`` future instead and is woken the moment the one before it is done; the action
log's commits, which every table's next move waits for, go before the other writes waiting.
A writer in another process (a ``guobiao`` command) still meets the busy handler, as before;
a turn that does not come within the busy timeout fails as SQLite would ("database is
locked"), so that a write lock held elsewhere pauses the tables as it always did.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from typing import TypeVar

from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from server.db.engine import SQLITE_WRITE_WAIT, WRITE_OPTION, sqlite_path
from server.db.postgres_now import PostgresNow
from server.db.sqlite_now import NowWriter
from server.db.write_health import WriteHealth

_T = TypeVar("_T")


class WriteGate:
    """One writer at a time in this process, in the order they came, the urgent ones first
    (module docstring). ``async with gate.turn():`` holds it; a turn not come within
    ``wait`` seconds raises SQLAlchemy's ``OperationalError``, "database is locked"."""

    def __init__(self, wait: float = SQLITE_WRITE_WAIT) -> None:
        self.wait = wait
        self._held = False
        self._closed = False
        self._urgent: deque[asyncio.Future[None]] = deque()
        self._others: deque[asyncio.Future[None]] = deque()

    @asynccontextmanager
    async def turn(self, *, urgent: bool = False) -> AsyncIterator[None]:
        if not self.take_now():  # (a free gate is taken without a timer: most writes)
            try:
                async with asyncio.timeout(self.wait):
                    await self._acquire(urgent)
            except TimeoutError:
                locked = sqlite3.OperationalError("database is locked")
                raise OperationalError(
                    f"(no turn to write within {self.wait:g} s)", None, locked
                ) from None
        try:
            yield
        finally:
            self.release()

    def take_now(self) -> bool:
        """Take the turn if it is free (nobody holds it, so nobody waits for it) and the
        gate open; False, having taken nothing, otherwise. Whoever took it calls
        ``release``."""
        if self._held or self._closed:
            return False
        self._held = True
        return True

    def close(self) -> None:
        """The store is closing: the writes still waiting, and any asking later, fail
        (``OperationalError``) instead of opening a connection on an engine that is going."""
        self._closed = True
        for waiter in (*self._urgent, *self._others):
            if not waiter.done():
                waiter.set_exception(store_closed())
        self._urgent.clear()
        self._others.clear()

    async def _acquire(self, urgent: bool) -> None:
        if self._closed:
            raise store_closed()
        if not self._held:
            self._held = True
            return
        waiter = asyncio.get_running_loop().create_future()
        queue = self._urgent if urgent else self._others
        queue.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed the turn, then cancelled
                self.release()
            # (otherwise the waiter is cancelled, and ``release`` passes over it)
            raise

    def release(self) -> None:
        """Hand the turn to the next waiter (it holds the gate from now), or free it."""
        for queue in (self._urgent, self._others):
            while queue:
                waiter = queue.popleft()
                if not waiter.done():
                    waiter.set_result(None)
                    return
        self._held = False


def store_closed() -> OperationalError:
    """What a write asked of a closed (or closing) store fails with."""
    return OperationalError("(the store is closed)", None, sqlite3.OperationalError("closed"))


class Transactions:
    """The engine, its sessions and the commit timer every part of the ``Store`` uses."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        # Whether the database takes the writes (``/healthz``): every write's outcome.
        self.writes = WriteHealth()
        self._gate = WriteGate() if engine.dialect.name == "sqlite" else None
        # Short writes in the event loop (SQLite on a file: server/db/sqlite_now.py).
        path = sqlite_path(engine.url)
        self._now = NowWriter(path) if path is not None else None
        # Short writes as one statement each on PostgreSQL (server/db/postgres_now.py).
        postgres = engine.dialect.name == "postgresql"
        self._pg_now = PostgresNow(engine, store_closed, self.writes) if postgres else None
        self._closed = False  # set by ``Store.close``: no read opens a connection after it
        self._sessions = async_sessionmaker(engine, expire_on_commit=False)
        # Told how long each committed write of the game's log took: ("actions": a group
        # commit, "hand": finish_hand, "match": finish_match) and seconds; the server's
        # metrics set it (server/metrics.py).
        self.on_commit: Callable[[str, float], None] | None = None

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[AsyncSession]:
        if self._closed:  # (a connection opened now would outlive the engine's disposal)
            raise store_closed()
        async with self._sessions() as session, session.begin():
            yield session

    @asynccontextmanager
    async def _write(self, timed: str | None = None) -> AsyncIterator[AsyncSession]:
        """A write transaction; ``timed``: tell ``on_commit`` how long it took to commit
        (from BEGIN, the wait for SQLite's write lock included), if it did."""
        started = time.perf_counter()
        # The option makes SQLite take its write lock at BEGIN (see server/db/engine.py). The
        # turn spans BEGIN to COMMIT, not the connection's return to the pool after it (a
        # rollback, another hop to the driver's thread).
        try:
            async with self._sessions() as session, self._write_turn(), session.begin():
                await session.connection(execution_options={WRITE_OPTION: True})
                yield session
        except Exception as exc:
            self.writes.failed(exc)  # (counted if the database failed it)
            raise
        self._committed(timed, started)

    def _committed(self, timed: str | None, started: float) -> None:
        """A write committed: ``writes`` is told, and ``on_commit`` how long the write
        ``timed`` took since ``started``, if timed."""
        self.writes.worked()
        if timed is not None and self.on_commit is not None:
            self.on_commit(timed, time.perf_counter() - started)

    async def _write_now(self, body: Callable[[Session], _T], timed: str | None = None) -> _T:
        """``body`` as a write transaction (as ``_write``'s, given its session): in the event
        loop on SQLite when this process's turn to write is free and no other process holds
        the lock (server/db/sqlite_now.py), else through the asyncio layer. Only for short
        writes: the loop is held while it runs. ``timed``: as ``_write``'s."""
        if self._now is not None and self._gate is not None and self._gate.take_now():
            started = time.perf_counter()
            try:
                done, result = self._now.run(body)
            except Exception as exc:
                self.writes.failed(exc)
                raise
            finally:
                self._gate.release()
            if done:
                self._committed(timed, started)
                return result  # type: ignore[return-value]  # (done: body's own)
        async with self._write(timed) as session:
            return await session.run_sync(body)

    def _write_turn(self, *, urgent: bool = False) -> AbstractAsyncContextManager[None]:
        """This process's turn to write (SQLite: module docstring); elsewhere no wait."""
        return self._gate.turn(urgent=urgent) if self._gate is not None else nullcontext()

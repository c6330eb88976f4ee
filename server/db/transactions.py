"""The ``Store``'s units of work: each method of the store is one short-lived
``AsyncSession`` (never shared between tasks) from ``_read`` or ``_write``, which begin,
commit (or roll back) and close it.

``Transactions`` is the base of the store's parts (``server.db.store``): accounts, tables,
matches, the action log and the reports each add their methods to it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from server.db.engine import WRITE_OPTION


class Transactions:
    """The engine, its sessions and the commit timer every part of the ``Store`` uses."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._sessions = async_sessionmaker(engine, expire_on_commit=False)
        # Told how long each committed write of the game's log took: ("actions": a group
        # commit, "hand": finish_hand, "match": finish_match) and seconds; the server's
        # metrics set it (server/metrics.py).
        self.on_commit: Callable[[str, float], None] | None = None

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[AsyncSession]:
        async with self._sessions() as session, session.begin():
            yield session

    @asynccontextmanager
    async def _write(self, timed: str | None = None) -> AsyncIterator[AsyncSession]:
        """A write transaction; ``timed``: tell ``on_commit`` how long it took to commit
        (from BEGIN, the wait for SQLite's write lock included), if it did."""
        started = time.perf_counter()
        # The option makes SQLite take its write lock at BEGIN (see server/db/engine.py).
        async with self._sessions() as session, session.begin():
            await session.connection(execution_options={WRITE_OPTION: True})
            yield session
        if timed is not None and self.on_commit is not None:
            self.on_commit(timed, time.perf_counter() - started)

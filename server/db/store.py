"""The server's repository: every read and write of the database goes through ``Store``.

Each method is one unit of work with its own short-lived ``AsyncSession`` (never shared
between tasks): it begins, does its work, commits (or rolls back) and returns plain frozen
snapshots (``PlayerRow``, ``TableRow``, ``MatchRow``), never ORM objects, so nothing
outside ``server.db`` can lazy-load or mutate a row by accident. The short writes that
seating players takes (a guest's account, a table's row, a match's) are a function of a
``Session`` instead, run in the event loop on SQLite when its write lock is free
(``server.db.sqlite_now``) and through the asyncio layer otherwise.

Times are inputs: every method that stamps a row takes the time from its caller (or an
optional ``now``), as timezone-aware datetimes.

A match is its seed plus its action log. ``append_action`` commits before it returns, so
after a crash ``unfinished_matches`` and ``match_actions`` give back everything needed to
rebuild each match in play by replaying its actions through the engine.

The database must be migrated first (``upgrade(url)``, or ``guobiao db upgrade``):
``Store.open`` does not create tables.

``Store`` is one object made of parts, one module each, on one base of units of work
(``server.db.transactions``):

- ``server.db.accounts``: players, login sessions, the purge of old guests;
- ``server.db.tables``: lobby tables and their fencing tokens (cluster mode);
- ``server.db.matches``: a match's row, its hands, its end (counts, grades, ratings);
- ``server.db.action_log``: a match's action log, appends grouped into commits (past
  SQLAlchemy's statements: ``server.db.sqlite_log``, ``server.db.postgres_log``);
- ``server.db.reports``: what the HTTP API reads (a player's summary, a match's detail);
- ``server.db.rows``: the snapshots all of them give back;
- ``server.db.write_health``: whether the database takes the writes (``store.writes``, for
  ``/healthz``), told by every unit of work that writes;
- ``store.ladder`` (``server.ladder.store``) and ``store.tournaments``
  (``server.tournaments.store``): the ladder's and the tournaments' reads and writes.

The rest of the server imports from ``server.db.store``, which names everything here.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Self

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from server.db.accounts import Accounts
from server.db.action_log import ActionLog
from server.db.engine import make_engine
from server.db.errors import (
    BadDatabaseURL,
    CannotRead,
    Conflict,
    StoreError,
    UsernameLookalike,
    UsernameTaken,
)
from server.db.matches import Matches, NoSuchMatch, NotRateable
from server.db.migrate import current, downgrade, head, upgrade
from server.db.reports import Reports
from server.db.rows import (
    ActionRow,
    FinishedMatch,
    GuestPurge,
    MatchPrivacy,
    MatchRow,
    PlayerRow,
    SessionRow,
    TableRow,
    is_bot,
)
from server.db.tables import Tables
from server.ladder.seasons import SeasonPolicy
from server.ladder.store import LadderStore
from server.tournaments.store import TournamentStore

# How long ``ping`` waits for the database's answer: /healthz and /readyz answer within it.
PING_WAIT = 2.0  # seconds

__all__ = [
    "ActionRow",
    "BadDatabaseURL",
    "CannotRead",
    "Conflict",
    "FinishedMatch",
    "GuestPurge",
    "MatchPrivacy",
    "MatchRow",
    "NoSuchMatch",
    "NotRateable",
    "PlayerRow",
    "SessionRow",
    "Store",
    "StoreError",
    "TableRow",
    "UsernameLookalike",
    "UsernameTaken",
    "current",
    "downgrade",
    "head",
    "is_bot",
    "upgrade",
]


class Store(Accounts, Tables, Matches, ActionLog, Reports):
    """Async access to the database; see the module docstring."""

    def __init__(self, engine: AsyncEngine, policy: SeasonPolicy | None = None) -> None:
        super().__init__(engine)
        # How the ladders run ([ladder] in the configuration); the server sets its own.
        self.policy = policy or SeasonPolicy()
        self.ladder = LadderStore(self._read, self._write, lambda: self.policy)
        self.tournaments = TournamentStore(self._read, self._write)
        self._ping: asyncio.Task[bool] | None = None  # the ping in flight (``ping``)

    @classmethod
    async def open(
        cls, url: str, *, read_only: bool = False, answer_wait: float | None = None
    ) -> Self:
        """A store on ``url`` (``BadDatabaseURL`` if unusable). Connects lazily: use
        ``ping`` to check the database is there. Does not migrate. ``read_only``: for the
        commands that only read, as ``make_engine``'s (its writes fail); ``answer_wait``:
        as ``make_engine``'s (the server's: ``POSTGRES_ANSWER_WAIT``)."""
        return cls(make_engine(url, read_only=read_only, answer_wait=answer_wait))

    async def close(self) -> None:
        if self._ping is not None:  # (it would open a connection on an engine that is going)
            self._ping.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ping
        await self._close_log()  # what was appended is written before the engine goes
        self._closed = True  # no read starts on the engine as it goes
        if self._gate is not None:  # nor any write
            self._gate.close()
        if self._now is not None:
            self._now.close()
        if self._pg_now is not None:
            await self._pg_now.close()
        await self.engine.dispose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def ping(self) -> bool:
        """True if the database answers within ``PING_WAIT`` seconds.

        A database that stops answering without closing anything (a network partition, a
        host paused) left /healthz and /readyz waiting for as long as it did, so that an
        orchestrator's probe timed out and counted the server dead rather than told
        ``degraded``. The answer is awaited ``PING_WAIT`` seconds at most; the ping goes on
        meanwhile (until the engine's own wait ends it, server/db/engine.py), and a probe
        that comes while it is still going waits for it rather than start another: probes
        every second do not pile up connections on a database that does not answer."""
        if self._ping is None or self._ping.done():
            self._ping = asyncio.create_task(self._ping_once(), name="store-ping")
        try:
            async with asyncio.timeout(PING_WAIT):
                return await asyncio.shield(self._ping)
        except TimeoutError:
            return False

    async def _ping_once(self) -> bool:
        try:
            async with self.engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
        except Exception:  # any failure to connect or query means "no"
            return False
        return True

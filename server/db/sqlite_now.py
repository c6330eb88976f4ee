"""Short writes run in the event loop on SQLite, when its write lock is free.

Through SQLAlchemy's asyncio layer, a write transaction on SQLite is a dozen hops to
aiosqlite's thread and back: the pool's checkout, ``BEGIN IMMEDIATE``, each statement (a
cursor made, executed, closed: three hops), ``COMMIT`` and the pool's reset. Each hop wakes
the thread and then the event loop (a write to its self-pipe, a turn of the loop): measured
with ``benchmarks/bench_store_writes.py``, a guest's login (two inserts) cost 2.1 ms of CPU
and each save of a lobby table 1.9 ms, while SQLite itself needs a few tens of microseconds
for either. Seating 4,000 players at human pace kept the server's core busy for 40 s, two
thirds of it in those writes, and players logging in timed out beyond that.

``NowWriter`` runs the same unit of work on a plain SQLAlchemy ``Session`` over a
``sqlite3`` connection of its own, in the event loop itself, in one step: no thread, no
hop. A store method gives its transaction as a function of a ``Session``
(``Transactions._write_now``), which runs here when this process's write gate is free, or
otherwise through the asyncio layer (``AsyncSession.run_sync``), as on PostgreSQL. The loop
never waits for SQLite's lock: this connection's busy timeout is 0, so when another
process (a ``guobiao`` command) holds the lock, ``BEGIN IMMEDIATE`` fails at once, having
done nothing, and the transaction goes the asyncio way, which waits for the lock. Within this
process the gate means the lock is free whenever the gate is (server/db/transactions.py).

What is written is the same: the same models, the same dialect (aiosqlite's is pysqlite's)
and the same pragmas (foreign keys on, WAL, ``synchronous=NORMAL``: a commit is a few writes
to the log file and no sync). Like the action log's connection (server/db/sqlite_log.py),
this one does not checkpoint the write-ahead log on its commits (a checkpoint syncs the
database file: milliseconds, not for the loop): every ``CHECKPOINT_EVERY`` commits the same
background checkpoint runs.

Only short writes belong here (a few rows, found by key): the loop is held while one runs.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import create_engine, event
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from server.db import sqlite_log
from server.db.engine import replace_read_only_connections

_T = TypeVar("_T")


class NowWriter:
    """Write transactions in the event loop on the SQLite database file ``path`` (module
    docstring): ``run(body)``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # One connection, used by this loop's thread only, one transaction at a time (the
        # store's write gate is held around each).
        self.engine = create_engine(f"sqlite:///{path}", poolclass=StaticPool)
        event.listen(self.engine, "connect", _set_up)
        event.listen(self.engine, "begin", _begin_immediate)
        # A connection opened read-only (its folder was, a while) is replaced once it
        # refuses a write, or it would hold this writer read-only for good (StaticPool
        # makes its one connection afresh once it is invalidated).
        replace_read_only_connections(self.engine)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self.commits = 0

    def run(self, body: Callable[[Session], _T]) -> tuple[bool, _T | None]:
        """``(True, body(session))`` committed, or ``(False, None)`` having done nothing
        when another connection holds SQLite's write lock. ``body``'s exceptions (and the
        database's, as SQLAlchemy raises them) roll back and propagate."""
        with self._sessions() as session:
            try:
                session.connection()  # BEGIN IMMEDIATE: SQLite's write lock, or busy now
            except OperationalError as exc:
                if _busy(exc):
                    return False, None
                raise
            result = body(session)
            session.commit()  # (an exception rolls back as the session closes)
        self.commits += 1
        sqlite_log.checkpoint_now_and_then(self.commits, str(self.path))
        return True, result

    def close(self) -> None:
        self.engine.dispose()


def _busy(exc: OperationalError) -> bool:
    return isinstance(exc.orig, sqlite3.OperationalError) and sqlite_log.busy(exc.orig)


def _set_up(connection: Any, _record: Any) -> None:
    connection.isolation_level = None  # SQLAlchemy begins (``_begin_immediate``)
    for pragma in (
        "busy_timeout = 0",  # never wait in the loop (module docstring)
        "foreign_keys = ON",
        "journal_mode = WAL",
        "synchronous = NORMAL",
        "wal_autocheckpoint = 0",  # checkpoints in the background (module docstring)
    ):
        connection.execute(f"PRAGMA {pragma}").fetchall()


def _begin_immediate(connection: Any) -> None:
    connection.exec_driver_sql("BEGIN IMMEDIATE")

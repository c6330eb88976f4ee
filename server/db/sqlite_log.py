"""The action log's appends on SQLite, past SQLAlchemy's per-statement machinery.

Every action a table takes is committed before it is applied (``Store.append_action``), so a
lightly loaded server commits about once per action. Through SQLAlchemy's asyncio layer one
such commit cost the event loop about 0.65 ms of CPU (eight round trips to the driver's thread,
each through greenlets, events and the statement pipeline) where the driver itself needs under
0.1: with ten tables of bots, 0.65 of the 1.55 ms the server spent per action (measured by
stubbing the append out). Here the same rows go straight to the pooled connection's driver
(aiosqlite): ``BEGIN IMMEDIATE`` (what the store's write option asks for), one
``executemany``, ``COMMIT``, on a connection the log holds (no pool checkout per commit).

The transaction is run in the event loop itself when SQLite's write lock is free (with
WAL and ``synchronous=NORMAL`` a commit is a few writes to the log file and no sync: about
10 us of CPU), and in the driver's thread only when another connection holds the lock: a
hand-off to that thread and back costs the loop about 50 us of CPU, five times the commit.
The loop never waits for the lock: on the log's connection the busy timeout is 0, so
``BEGIN IMMEDIATE`` fails at once when the lock is taken, having done nothing, and the
transaction goes to the thread, which waits as every other write does (the connection's
own busy timeout set back for it). Within this process the log never finds the lock taken:
the store's writes take turns at its ``WriteGate`` (server/db/transactions.py), the log's
first; only another process's writer sends it to the thread. The log's connection does not
checkpoint the write-ahead log on its commits (a checkpoint syncs the database file:
milliseconds, not for the loop); every ``CHECKPOINT_EVERY`` commits a checkpoint runs in a
thread of its own, on a connection of its own, and nothing waits for it: in WAL mode the log
goes on committing meanwhile.
(It used to run in the log's own thread, awaited by the commit that asked for it: every
append of every table waited behind the sync, up to a second at 2,000 connections, the tail
of the latency at human pace: docs/performance.md.) The other connections' commits
checkpoint as they always did.

``insert_now`` is the same transaction for a caller that cannot wait: it commits, or does
nothing when the write lock is taken (the action log's appends when nothing else is being
written, ``ActionLog._append_now``); ``insert_rows`` waits.

The values are bound by the columns' own SQLAlchemy types (``server.db.binding``), so the rows
stored are byte for byte what the ORM path stored; a constraint failure is raised as
SQLAlchemy's ``IntegrityError``, as the store expects. PostgreSQL has its own one-statement
append (``server.db.postgres_log``), bound the same way.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.binding import Binder

CHECKPOINT_EVERY = 500  # commits of the log between two checkpoints of its own


def insert_sql(name: str, columns: Sequence[str]) -> str:
    """The ``INSERT`` of ``columns`` into table ``name``, its values as ``?`` parameters."""
    return f"INSERT INTO {name} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"


async def insert_rows(
    connection: AsyncConnection,
    sql: str,
    bind: Binder,
    rows: list[dict[str, Any]],
    *,
    fence: str | None = None,
) -> dict[int, int | None]:
    """Insert ``rows`` in one ``BEGIN IMMEDIATE`` transaction on ``connection``'s driver.
    ``fence``: the key of a row's (table id, fencing token), if it has one: such a row is
    inserted only if the token is its table's, checked in the same transaction (which holds
    SQLite's write lock); the others are returned (``id(row)`` -> the table's token).

    The transaction runs here, in the event loop, unless another connection holds the
    write lock; then in aiosqlite's thread as one call (its ``_execute``), waiting for the
    lock (module docstring). This sets the connection up as the log's (``insert_now`` takes
    its driver, ``log_driver``, from then on)."""
    driver = await log_driver(connection)
    fenced = insert_now(driver, sql, bind, rows, fence=fence)
    if fenced is not None:
        return fenced
    log = _LOGS[driver]
    params, keys = _bound(bind, rows, fence)
    try:
        found = await driver._execute(_insert_waiting, driver._conn, log.wait, sql, params, keys)
    except sqlite3.IntegrityError as exc:
        raise IntegrityError(sql, None, exc) from exc
    _committed(log)
    return {id(rows[i]): token for i, token in found.items()}


async def log_driver(connection: AsyncConnection) -> Any:
    """The driver's connection (aiosqlite's) under ``connection``, set up as the log's: busy
    timeout 0, no automatic checkpoint (module docstring)."""
    raw = await connection.get_raw_connection()
    driver = raw.driver_connection
    assert driver is not None
    if driver not in _LOGS:  # first use: this is the log's connection from now on
        # aiosqlite runs a function in its thread with ``_execute`` (how its own methods
        # run), on its sqlite3 connection ``_conn`` (made with ``check_same_thread=False``);
        # only this module uses the log's connection, one transaction at a time.
        db: sqlite3.Connection = driver._conn
        (wait,) = db.execute("PRAGMA busy_timeout").fetchone()
        db.execute("PRAGMA busy_timeout = 0").fetchall()
        db.execute("PRAGMA wal_autocheckpoint = 0").fetchall()
        path = next((row[2] for row in db.execute("PRAGMA database_list") if row[1] == "main"), "")
        _LOGS[driver] = _Log(wait, path)
    return driver


def insert_now(
    driver: Any,
    sql: str,
    bind: Binder,
    rows: list[dict[str, Any]],
    *,
    fence: str | None = None,
) -> dict[int, int | None] | None:
    """``insert_rows`` on the log's driver connection (``log_driver``) without leaving the
    caller: the transaction in the event loop, or None, having done nothing, when another
    connection holds the write lock (``insert_rows`` then waits for it in the thread). An
    append that commits here costs no task, future or turn of the event loop."""
    log = _LOGS[driver]
    params, keys = _bound(bind, rows, fence)
    try:
        fenced = _insert(driver._conn, sql, params, keys)
    except sqlite3.OperationalError as exc:
        if busy(exc):
            return None
        raise
    except sqlite3.IntegrityError as exc:
        raise IntegrityError(sql, None, exc) from exc
    _committed(log)
    return {id(rows[i]): token for i, token in fenced.items()}


def busy(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused for a lock another connection holds (having done nothing)."""
    return exc.sqlite_errorcode & 0xFF in _BUSY  # (extended codes: BUSY_*)


def _bound(
    bind: Binder, rows: list[dict[str, Any]], fence: str | None
) -> tuple[list[tuple[Any, ...]], list[tuple[str, int] | None]]:
    """The rows' parameters, and each row's (table id, fencing token) or None."""
    params = [bind(row) for row in rows]
    keys = [row.get(fence) if fence is not None else None for row in rows]
    return params, keys


def _committed(log: _Log) -> None:
    """Count a commit of the log; every ``CHECKPOINT_EVERY``, start a checkpoint."""
    log.commits += 1
    checkpoint_now_and_then(log.commits, log.path)


def checkpoint_now_and_then(commits: int, path: str) -> None:
    """After a connection that does not checkpoint on its commits (the log's, and
    ``sqlite_now``'s) made its ``commits``-th: every ``CHECKPOINT_EVERY``, a checkpoint of
    the database file ``path`` ("": none) in a thread, unless one is running."""
    if commits % CHECKPOINT_EVERY == 0 and path and not _CHECKPOINTS:
        task = asyncio.create_task(asyncio.to_thread(checkpoint, path), name="wal-checkpoint")
        _CHECKPOINTS.add(task)
        task.add_done_callback(_checkpoint_done)


async def checkpoints_done() -> None:
    """Wait for the checkpoint running, if one is (before the database is closed)."""
    if _CHECKPOINTS:
        await asyncio.gather(*_CHECKPOINTS, return_exceptions=True)


@dataclass
class _Log:
    """A connection of the log's: how long it waits for the write lock when it does (its
    busy timeout as it was made, milliseconds), the commits it made."""

    wait: int
    path: str  # the database file ("" in memory: no checkpoint)
    commits: int = 0


# The log's connections (aiosqlite's), set up: busy timeout 0, no automatic checkpoint.
_LOGS: weakref.WeakKeyDictionary[Any, _Log] = weakref.WeakKeyDictionary()
_BUSY = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}


# The checkpoint running (one at a time), kept until it ends.
_CHECKPOINTS: set[asyncio.Task[None]] = set()


def checkpoint(path: str) -> None:
    """Copy what the write-ahead log of the database file ``path`` holds into the database,
    as far as no reader needs it, on a connection of its own (in a thread: this syncs the
    database file). PASSIVE: it takes no lock a writer needs."""
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    finally:
        db.close()


def _checkpoint_done(task: asyncio.Task[None]) -> None:
    _CHECKPOINTS.discard(task)
    if not task.cancelled() and task.exception() is not None:
        # A checkpoint that failed loses nothing (the log holds it all); the next one retries.
        logging.getLogger("guobiao.store").warning(
            "checkpoint of the action log failed: %r", task.exception()
        )


def _insert_waiting(
    db: sqlite3.Connection,
    wait: int,
    sql: str,
    params: list[tuple[Any, ...]],
    keys: list[tuple[str, int] | None],
) -> dict[int, int | None]:
    """``_insert`` waiting up to ``wait`` ms for the write lock, as the other connections do
    (in the thread)."""
    db.execute(f"PRAGMA busy_timeout = {int(wait)}").fetchall()
    try:
        return _insert(db, sql, params, keys)
    finally:
        db.execute("PRAGMA busy_timeout = 0").fetchall()


def _insert(
    db: sqlite3.Connection,
    sql: str,
    params: list[tuple[Any, ...]],
    keys: list[tuple[str, int] | None],
) -> dict[int, int | None]:
    """The transaction, in aiosqlite's thread: the rows refused by their fencing token (by
    index, with the table's token) are left out."""
    db.execute("BEGIN IMMEDIATE")
    try:
        tokens: dict[str, int | None] = {}
        fenced: dict[int, int | None] = {}
        for i, key in enumerate(keys):
            if key is None:
                continue
            table_id, token = key
            if table_id not in tokens:
                found = db.execute("SELECT fence FROM tables WHERE id = ?", (table_id,)).fetchone()
                tokens[table_id] = found[0] if found is not None else None
            if tokens[table_id] != token:
                fenced[i] = tokens[table_id]
        kept = [p for i, p in enumerate(params) if i not in fenced]
        if kept:
            db.executemany(sql, kept)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return fenced

"""A SQLite connection opened read-only is replaced once it refuses a write (server/db/engine.py).

SQLite opens a database file read-only, by itself, when it may not open it to write (its
folder remounted read-only, say), and the connection stays so once the file is writable
again. A probe's read-only remount, undone, left the server failing every write until it
was restarted. Here the store's connections are opened read-only the same way, with the
same ``SQLITE_OPEN_READONLY`` (the URI's ``mode=ro``), while ``read_only`` is on, through
SQLAlchemy's ``do_connect`` event, so that no root and no mount are needed: each kind of
write (through the pool, in the event loop, the action log's) fails while they are, then
works at its first try once they are not. Without the fix the connections opened meanwhile
stayed read-only and the writes failed for good. The store counts each failure, and each
write that works, for ``/healthz`` (``Store.writes``: server/db/write_health.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from sqlalchemy import event
from sqlalchemy.exc import OperationalError

from server.db.engine import cannot_write
from server.db.store import Conflict, Store, UsernameTaken
from server.db.transactions import store_closed
from server.db.write_health import WriteHealth

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
READ_ONLY = "attempt to write a readonly database"


class ReadOnlyOpens:
    """While ``on``, every connection the store opens to its file opens it read-only, as
    SQLite does by itself when it may not open the file to write."""

    def __init__(self, store: Store, path: Path) -> None:
        self.on = False
        self.path = path
        assert store._now is not None  # (the writes in the event loop have an engine too)
        for engine in (store.engine.sync_engine, store._now.engine):
            event.listen(engine, "do_connect", self._open)

    def _open(self, _dialect: Any, _record: Any, cargs: list[Any], cparams: dict[str, Any]) -> None:
        if self.on:
            cargs[:] = [f"file:{self.path}?mode=ro"]
            cparams["uri"] = True


@pytest_asyncio.fixture
async def store(tmp_path: Path, migrated_sqlite: Path) -> AsyncIterator[Store]:
    path = tmp_path / "guobiao.db"
    shutil.copy(migrated_sqlite, path)
    with contextlib.closing(sqlite3.connect(path)) as db:  # in WAL mode, as a server leaves it
        db.execute("PRAGMA journal_mode = WAL")  # (a connection opened read-only cannot set it)
    opened = await Store.open(f"sqlite+aiosqlite:///{path}")
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
def opens(store: Store, tmp_path: Path) -> ReadOnlyOpens:
    return ReadOnlyOpens(store, tmp_path / "guobiao.db")


async def stale_connections(store: Store) -> None:
    """Have the pool hold two connections opened now, by two reads at once (reads work on
    a read-only connection): the next write's connection and one more, which a write
    replacing only its own connection would take next."""
    await asyncio.gather(store.get_player("nobody"), store.get_player("no one"))


async def write_through_the_pool(store: Store, name: str) -> None:
    await store.create_player(name, None, True, now=T0)


async def write_in_the_loop(store: Store, name: str) -> None:
    await store.create_account(name, None, True, ("a" * 64, T0), now=T0)


@pytest.mark.parametrize("write", [write_through_the_pool, write_in_the_loop])
@pytest.mark.asyncio
async def test_a_write_works_at_its_first_try_once_the_file_is_writable_again(
    store: Store, opens: ReadOnlyOpens, write: Any
) -> None:
    """The store's writes through SQLAlchemy's pool (``_write``) and in the event loop
    (``_write_now``, a connection of its own), each on a connection opened read-only."""
    opens.on = True
    await stale_connections(store)
    with pytest.raises(OperationalError, match=READ_ONLY):
        await write(store, "lin")
    assert_failing(store)
    opens.on = False
    await write(store, "lin")
    assert (await store.get_player("lin")) is not None
    assert_worked_since(store)


@pytest.mark.parametrize("appends", ["in a batch", "at once"])
@pytest.mark.asyncio
async def test_the_action_log_appends_at_its_first_try_once_the_file_is_writable_again(
    store: Store, opens: ReadOnlyOpens, appends: str
) -> None:
    """The action log holds a connection of its own and writes on the driver's connection,
    past SQLAlchemy: in a batch, or at once in the caller's step when nothing else is
    written (``_append_now``, on a connection a batch set up). A connection opened
    read-only (in a batch), or one that refuses as read-only an append at once (``PRAGMA
    query_only``: the same refusal, on the connection already set up), is replaced before
    the next try, and the pool's others opened read-only with it."""
    match_id = await store.create_match("t1", "mcr", 42, "ab" * 32, ["a", "b", "c", "d"], T0)
    seq = 0
    if appends == "at once":
        await store.append_action(match_id, seq, 1, 0, {"type": "deal"}, now=T0)
        seq += 1
        assert store._log is not None and store._driver is not None  # (the next append at once)
        await store._driver.execute("PRAGMA query_only = ON")
    opens.on = True
    await stale_connections(store)
    with pytest.raises(sqlite3.OperationalError, match=READ_ONLY):
        await store.append_action(match_id, seq, 1, 0, {"type": "pass"}, now=T0)
    assert_failing(store)
    opens.on = False
    await store.append_action(match_id, seq, 1, 0, {"type": "pass"}, now=T0)
    assert [action.seq for action in await store.match_actions(match_id)] == list(range(seq + 1))
    assert_worked_since(store)


def assert_failing(store: Store) -> None:
    """The store says its writes fail, since the one that just did, and why."""
    writes = store.writes
    assert writes.failing and writes.failing_since is not None
    assert (writes.last_failure, writes.last_reason) == (writes.failing_since, READ_ONLY)


def assert_worked_since(store: Store) -> None:
    """The store says its writes work, and still what failed last."""
    assert not store.writes.failing and store.writes.failing_since is None
    assert store.writes.last_failure is not None and store.writes.last_reason == READ_ONLY


@pytest.mark.asyncio
async def test_a_write_refused_for_what_it_asks_is_not_a_failing_database(store: Store) -> None:
    """A name taken (the database's unique index refused it) or a match unknown: the
    database works, and the store does not say its writes fail."""
    await store.create_player("lin", None, True, now=T0)
    with pytest.raises(UsernameTaken):
        await store.create_player("LIN", None, True, now=T0)
    with pytest.raises(UsernameTaken):
        await store.create_account("Lin", None, True, ("a" * 64, T0), now=T0)
    with pytest.raises(Conflict):
        await store.append_action(999, 0, 1, 0, {"type": "deal"}, now=T0)
    assert (store.writes.failing, store.writes.last_failure) == (False, None)


def test_only_sqlites_read_only_refusals_replace_a_connection() -> None:
    """``SQLITE_READONLY`` and its extended codes, raw or as SQLAlchemy raises them; not
    another refusal, nor an error without a code (the store's own "closed")."""
    read_only = sqlite3.connect(":memory:")
    read_only.execute("PRAGMA query_only = ON")
    with pytest.raises(sqlite3.OperationalError) as refused:
        read_only.execute("CREATE TABLE t (a)")
    assert refused.value.sqlite_errorname == "SQLITE_READONLY"
    moved = sqlite3.OperationalError("attempt to write a readonly database")
    moved.sqlite_errorcode = 1032  # SQLITE_READONLY_DBMOVED: the file was moved or removed
    wrapped = OperationalError("INSERT ...", {}, refused.value)
    with pytest.raises(sqlite3.OperationalError) as missing:  # (SQLITE_ERROR)
        read_only.execute("SELECT * FROM nowhere")
    assert [cannot_write(e) for e in (refused.value, moved, wrapped)] == [True] * 3
    assert [cannot_write(e) for e in (missing.value, store_closed(), ValueError())] == [False] * 3


def test_writes_fail_since_the_first_failure_after_the_last_write_that_worked() -> None:
    """``failing_since`` stays at the first of failures in a row; a write that works ends
    them, and the last failure is kept, with its reason. An error that is not the
    database's (a bug's, a refusal's) changes nothing."""
    health = WriteHealth()
    first, second, third = (datetime(2026, 3, 1, 12, minute, tzinfo=UTC) for minute in (1, 2, 3))
    locked = OperationalError("COMMIT", {}, sqlite3.OperationalError("database is locked"))
    health.failed(locked, first)
    health.failed(OSError("disk I/O error"), second)
    health.failed(ValueError("a bug"), third)
    health.failed(Conflict("seq taken"), third)
    assert (health.failing_since, health.last_failure, health.last_reason) == (
        first,
        second,
        "disk I/O error",
    )
    health.worked()
    assert (health.failing, health.last_failure) == (False, second)
    health.failed(locked, third)
    assert (health.failing_since, health.last_reason) == (third, "database is locked")


def test_every_write_the_database_failed_is_counted() -> None:
    """``failures`` (``guobiao_write_failures_total``) counts each write the database
    failed, in a row or not, and never goes down when one works; an error that is not the
    database's is not counted."""
    health = WriteHealth()
    locked = OperationalError("COMMIT", {}, sqlite3.OperationalError("database is locked"))
    health.failed(locked)
    health.failed(OSError("disk I/O error"))
    health.failed(ValueError("a bug"))
    health.failed(Conflict("seq taken"))
    assert health.failures == 2
    health.worked()
    health.failed(locked)
    assert (health.failures, health.failing) == (3, True)

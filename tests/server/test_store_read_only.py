"""A SQLite connection opened read-only is replaced once it refuses a write (server/db/engine.py).

SQLite opens a database file read-only, by itself, when it may not open it to write (its
folder remounted read-only, say), and the connection stays so once the file is writable
again. A probe's read-only remount, undone, left the server failing every write until it
was restarted. Here the store's connections are opened read-only the same way, with the
same ``SQLITE_OPEN_READONLY`` (the URI's ``mode=ro``), while ``read_only`` is on, through
SQLAlchemy's ``do_connect`` event, so that no root and no mount are needed: each kind of
write (through the pool, in the event loop, the action log's) fails while they are, then
works at its first try once they are not. Without the fix the connections opened meanwhile
stayed read-only and the writes failed for good.
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
from server.db.store import Store
from server.db.transactions import store_closed

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
    opens.on = False
    await write(store, "lin")
    assert (await store.get_player("lin")) is not None


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
    opens.on = False
    await store.append_action(match_id, seq, 1, 0, {"type": "pass"}, now=T0)
    assert [action.seq for action in await store.match_actions(match_id)] == list(range(seq + 1))


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

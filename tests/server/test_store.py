"""The Store on SQLite and PostgreSQL: accounts, sessions, tables, the action log, finished
matches with counts and grades, the reports, and a whole match replayed from the log."""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import sqlite3
import threading
from collections.abc import Coroutine, Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError, StatementError

from engine.actions import ActionKind
from engine.match import MATCH_HANDS, Match
from engine.table import Phase
from server.cli import replay as replay_cli
from server.db import postgres_now, sqlite_log
from server.db.errors import Fenced
from server.db.models import GameTable, MatchAction
from server.db.store import (
    ActionRow,
    Conflict,
    MatchPrivacy,
    NoSuchMatch,
    Store,
    TableRow,
    UsernameLookalike,
    UsernameTaken,
    upgrade,
)
from server.grades import grade

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
SEATS = ["lin", "bot:default", "Mei", "bot:fast"]
SALT = "ab" * 32


def win(winner: int, deltas: list[int], hand_no: int = 1) -> dict[str, Any]:
    return {"hand_no": hand_no, "result": "win", "winner": winner, "deltas": deltas}


def draw(hand_no: int = 1) -> dict[str, Any]:
    return {"hand_no": hand_no, "result": "draw", "winner": None, "deltas": [0, 0, 0, 0]}


async def new_match(store: Store, seats: Sequence[str | None] = SEATS, seed: int = 42) -> int:
    """A new match at table t1 (a salt of its own: a table's match is named by its salt)."""
    return await store.create_match("t1", "mcr", seed, secrets.token_hex(32), seats, T0)


# Accounts and sessions.


@pytest.mark.asyncio
async def test_a_refused_account_says_why_only_when_asked(store: Store) -> None:
    """A name like an existing one is refused as a lookalike, naming it; without ``why``
    (a guest's name, tried again with another) as taken, unread."""
    await store.create_account("Lin1", None, False, ("a" * 64, T0), now=T0)
    with pytest.raises(UsernameLookalike) as lookalike:
        await store.create_account("LinI", None, False, ("b" * 64, T0), now=T0)
    assert lookalike.value.existing == "Lin1"
    with pytest.raises(UsernameTaken) as taken:
        await store.create_account("LinI", None, True, ("c" * 64, T0), now=T0, why=False)
    assert type(taken.value) is UsernameTaken
    assert [await store.get_player(n) is None for n in ("Lin1", "LinI")] == [False, True]


@pytest.mark.asyncio
async def test_players_are_found_in_any_case(store: Store) -> None:
    player_id = await store.create_player("Lin_2", "scrypt$x", guest=False, now=T0)
    found = await store.get_player("lIN_2")
    assert found is not None
    assert (found.id, found.username, found.password_hash, found.guest) == (
        player_id,
        "Lin_2",
        "scrypt$x",
        False,
    )
    assert found.created_at == T0
    assert (found.score, found.hands_won, found.matches, found.grade) == (0, 0, 0, 0.0)
    assert await store.get_player("nobody") is None


@pytest.mark.asyncio
async def test_a_name_is_taken_in_any_case(store: Store) -> None:
    await store.create_player("lin", "h", guest=False)
    with pytest.raises(UsernameTaken):
        await store.create_player("LIN", "h", guest=False)
    guest_id = await store.create_player("guest-0001", None, guest=True)
    assert guest_id > 0


@pytest.mark.asyncio
async def test_an_account_and_its_first_session_are_one_write(store: Store) -> None:
    """``create_account`` (a guest's login, a registration): the player and its session
    together; the player it returns is the one stored; a taken name stores neither."""
    expires = T0 + timedelta(days=1)
    player = await store.create_account("Mei", "scrypt$x", False, ("a" * 64, expires), now=T0)
    assert player == await store.get_player("mei")
    session = await store.find_session("a" * 64, T0)
    assert session is not None and session.player == player and session.expires_at == expires
    guest = await store.create_account("guest-0001", None, True, ("b" * 64, expires), now=T0)
    assert guest.guest and guest.password_hash is None and guest.id != player.id
    with pytest.raises(UsernameTaken):
        await store.create_account("MEI", None, True, ("c" * 64, expires), now=T0)
    assert await store.find_session("c" * 64, T0) is None


@pytest.mark.asyncio
async def test_sessions_expire_and_revoke(store: Store) -> None:
    player_id = await store.create_player("lin", "h", guest=False)
    await store.create_session(player_id, "a" * 64, T0 + timedelta(days=1), now=T0)
    await store.create_session(player_id, "b" * 64, T0 + timedelta(days=1), now=T0)

    found = await store.session_player("a" * 64, T0 + timedelta(hours=23))
    assert found is not None and found.username == "lin"
    session = await store.find_session("a" * 64, T0)
    assert session is not None
    assert (session.created_at, session.expires_at) == (T0, T0 + timedelta(days=1))

    assert await store.session_player("a" * 64, T0 + timedelta(days=1)) is None  # expired
    assert await store.session_player("c" * 64, T0) is None  # unknown

    assert await store.revoke_session("b" * 64, now=T0) is True
    assert await store.session_player("b" * 64, T0) is None  # revoked
    assert await store.revoke_session("b" * 64) is False
    assert await store.session_player("a" * 64, T0) is not None  # the other one lives on

    assert await store.delete_expired_sessions(T0 + timedelta(days=2)) == 2


@pytest.mark.asyncio
async def test_a_token_hash_is_stored_once(store: Store) -> None:
    player_id = await store.create_player("lin", "h", guest=False)
    await store.create_session(player_id, "a" * 64, T0 + timedelta(days=1))
    with pytest.raises(Conflict):
        await store.create_session(player_id, "a" * 64, T0 + timedelta(days=1))
    with pytest.raises(Conflict):
        await store.create_session(player_id + 99, "d" * 64, T0 + timedelta(days=1))


@pytest.mark.asyncio
async def test_times_come_back_aware_in_utc(store: Store) -> None:
    beijing = timezone(timedelta(hours=8))
    player_id = await store.create_player("lin", "h", guest=False, now=T0.astimezone(beijing))
    await store.create_session(player_id, "a" * 64, datetime(2026, 3, 2, 8, tzinfo=beijing))
    session = await store.find_session("a" * 64, T0)
    assert session is not None
    assert session.expires_at == datetime(2026, 3, 2, 0, tzinfo=UTC)
    assert session.expires_at.tzinfo is not None and session.expires_at.utcoffset() == timedelta(0)
    player = await store.get_player("lin")
    assert player is not None and player.created_at == T0
    assert player.created_at.utcoffset() == timedelta(0)


@pytest.mark.asyncio
async def test_naive_times_are_refused(store: Store) -> None:
    with pytest.raises(StatementError, match="timezone-aware"):
        await store.create_player("lin", "h", guest=False, now=datetime(2026, 3, 1))


# Tables.


@pytest.mark.asyncio
async def test_tables_are_saved_and_reloaded(store: Store) -> None:
    t1 = TableRow("t1", "mcr", 15, False, None, ("lin", None, "bot:default", None), T0)
    t2 = TableRow("t2", "mcr", 30, True, "k3y", (None,) * 4, T0 + timedelta(seconds=1))
    t10 = TableRow("t10", "mcr", 15, False, None, [None] * 4, T0, state="finished")
    for table in (t1, t2, t10):
        await store.save_table(table)
    assert await store.load_open_tables() == [t1, t2]

    playing = TableRow("t1", "mcr", 15, False, None, ("lin", "bot:fast", "Mei", "x"), T0, "playing")
    await store.save_table(playing)
    await store.save_table(TableRow("t2", "mcr", 30, True, "k3y", (None,) * 4, T0, "finished"))
    assert await store.load_open_tables() == [playing]
    assert await store.max_table_number() == 10


def test_a_save_writes_every_column_of_the_table_but_its_id_and_token() -> None:
    """Both paths write ``TableRow.columns`` (the ORM's, and PostgreSQL's one statement by
    ``postgres_now.TABLE_COLUMNS``): a column added to the table and not to them fails."""
    row = TableRow("t1", "mcr", 15, False, None, (None,) * 4, T0, tournament=(1, 2, 3))
    stored = {column.name for column in GameTable.__table__.columns} - {"id", "fence"}
    assert set(row.columns()) == set(postgres_now.TABLE_COLUMNS) == stored
    assert len(postgres_now.TABLE_COLUMNS) == len(stored)


def test_a_table_row_is_checked() -> None:
    with pytest.raises(ValueError, match="4 seats"):
        TableRow("t1", "mcr", 15, False, None, (None,) * 3, T0)
    with pytest.raises(ValueError, match="state"):
        TableRow("t1", "mcr", 15, False, None, (None,) * 4, T0, "closed")


# The action log.


@pytest.mark.asyncio
async def test_an_appended_action_is_committed(store: Store, migrated_url: str) -> None:
    match_id = await new_match(store)
    await store.append_action(match_id, 1, 1, 0, {"type": "discard", "tile": "5m"})
    other = await Store.open(migrated_url)
    try:
        assert await other.match_actions(match_id) == [
            ActionRow(1, 1, 0, {"type": "discard", "tile": "5m"})
        ]
        assert [m.id for m in await other.unfinished_matches()] == [match_id]
    finally:
        await other.close()


@pytest.mark.asyncio
async def test_an_append_stores_what_the_orm_stores(store: Store) -> None:
    # On SQLite appends bypass SQLAlchemy's statement pipeline (server/db/sqlite_log.py): the
    # row must be the very text the ORM writes, non-ASCII, nesting and microseconds alike.
    match_id = await new_match(store)
    at = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone(timedelta(hours=8)))
    action = {"type": "discard", "tile": "5m", "note": "东风 ✓", "n": [1, {"x": None}]}
    await store.append_action(match_id, 1, 2, 3, action, now=at, stand_in=True)
    async with store.engine.begin() as connection:
        await connection.execute(
            insert(MatchAction),
            [
                {
                    "match_id": match_id,
                    "seq": 2,
                    "hand_no": 2,
                    "player": 3,
                    "action": action,
                    "created_at": at,
                    "stand_in": True,
                }
            ],
        )
        rows = (
            await connection.execute(
                text(
                    "SELECT hand_no, player, action, created_at, stand_in FROM actions "
                    "WHERE match_id = :m ORDER BY seq"
                ),
                {"m": match_id},
            )
        ).all()
    assert len(rows) == 2 and tuple(rows[0]) == tuple(rows[1])
    assert await store.match_actions(match_id) == [
        ActionRow(1, 2, 3, action, stand_in=True),
        ActionRow(2, 2, 3, action, stand_in=True),
    ]


@pytest.mark.asyncio
async def test_on_sqlite_a_locked_log_waits_in_its_thread_not_in_the_loop(
    tmp_path: Path,
) -> None:
    """The log commits in the event loop while SQLite's write lock is free (server/db/
    sqlite_log.py); while another connection holds it, the append waits for it in the
    driver's thread: the loop goes on meanwhile, and the action is stored once the lock
    is let go. Appends before and after commit in the loop. (SQLite's own path.)"""
    migrated_url = f"sqlite+aiosqlite:///{tmp_path / 'guobiao.db'}"
    await upgrade(migrated_url)
    store = await Store.open(migrated_url)
    try:
        await locked_log_waits(store, migrated_url)
    finally:
        await store.close()


async def locked_log_waits(store: Store, migrated_url: str) -> None:
    match_id = await new_match(store)
    await store.append_action(match_id, 1, 1, 0, {"type": "pass"})
    await waits_while_locked(migrated_url, store.append_action(match_id, 2, 1, 1, {"type": "pass"}))
    await store.append_action(match_id, 3, 1, 2, {"type": "pass"})
    assert [a.seq for a in await store.match_actions(match_id)] == [1, 2, 3]


async def waits_while_locked(migrated_url: str, write: Coroutine[Any, Any, Any]) -> None:
    """Run ``write`` while another connection holds SQLite's write lock: it waits, the
    event loop running on meanwhile, and ends once the lock is let go."""
    path = make_url(migrated_url).database
    assert path is not None
    holder = sqlite3.connect(path, timeout=5, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # the write lock, held
    try:
        waiting = asyncio.create_task(write)
        ticks = 0
        for _ in range(20):  # 0.2 s: the loop runs, the write waits
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks == 20 and not waiting.done()
    finally:
        holder.execute("COMMIT")
        holder.close()
    await asyncio.wait_for(waiting, 5)


def sqlite_only(store: Store) -> None:
    if store.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's own path")


def finished_at_once(append: Any) -> bool:
    """Whether the coroutine ``append`` returned in one step, never waiting for the event
    loop (no task, future or hop to a thread on its way); it is run either way."""
    try:
        append.send(None)
    except StopIteration:
        return True
    append.close()
    return False


@pytest.mark.asyncio
async def test_on_sqlite_an_append_with_nothing_else_writing_commits_at_once(
    store: Store,
) -> None:
    """Once the log's connection is set up, an append that finds nothing else being written
    commits in its caller's own step (sqlite_log.insert_now), refusals included; while
    another write holds this process's turn, it waits and joins the next batch."""
    sqlite_only(store)
    match_id = await new_match(store)
    await store.append_action(match_id, 1, 1, 0, {"type": "pass"})  # sets the log up
    assert finished_at_once(store.append_action(match_id, 2, 1, 1, {"type": "pass"}))
    duplicate = store.append_action(match_id, 2, 1, 2, {"type": "pass"})
    with pytest.raises(Conflict):
        duplicate.send(None)  # refused in the same step
    assert [a.seq for a in await store.match_actions(match_id)] == [1, 2]

    gate = store._gate
    assert gate is not None and gate.take_now()  # another write holds the turn
    try:
        waiting = asyncio.create_task(store.append_action(match_id, 3, 1, 2, {"type": "pass"}))
        await asyncio.sleep(0.05)
        assert not waiting.done()
    finally:
        gate.release()
    await asyncio.wait_for(waiting, 5)
    assert [a.seq for a in await store.match_actions(match_id)] == [1, 2, 3]
    assert finished_at_once(store.append_action(match_id, 4, 1, 3, {"type": "pass"}))
    assert [a.seq for a in await store.match_actions(match_id)] == [1, 2, 3, 4]


@pytest.mark.asyncio
async def test_on_sqlite_a_short_write_with_nothing_else_writing_commits_at_once(
    store: Store,
) -> None:
    """A login's account, a table's saves, its match and a finished hand commit in their
    caller's own step (server/db/sqlite_now.py), refusals too (the transaction rolled
    back); while another write holds this process's turn they wait for it and go the
    asyncio way; what either way stores is the same."""
    sqlite_only(store)
    session = ("h" * 64, T0 + timedelta(days=3))
    assert finished_at_once(store.create_account("lin", None, True, session, now=T0))
    with pytest.raises(UsernameTaken):  # refused, rolled back (then told why by a read)
        await store.create_account("LIN", None, True, ("i" * 64, T0), now=T0)
    table = TableRow("t1", "mcr", 15, False, None, ("lin", None, None, None), T0)
    assert finished_at_once(store.save_table(table))
    moved = TableRow("t1", "mcr", 15, False, None, ("lin", "mei", None, None), T0)
    assert finished_at_once(store.save_table(moved, fence=0))
    with pytest.raises(Fenced):
        store.save_table(table, fence=7).send(None)  # refused in the same step
    assert await store.get_table("t1") == moved
    creating = store.create_match("t1", "mcr", 42, SALT, SEATS, T0, fence=0)
    with pytest.raises(StopIteration) as created:
        creating.send(None)  # committed in this one step
    match = await store.get_match(created.value.value)
    assert match is not None and (match.table_id, match.seats, match.seed) == (
        "t1",
        tuple(SEATS),
        42,
    )
    with pytest.raises(Fenced):
        store.create_match("t1", "mcr", 43, SALT, SEATS, T0, fence=7).send(None)
    assert len(await store.table_matches("t1")) == 1
    match_id = match.id
    first = win(0, [24, -8, -8, -8])
    assert finished_at_once(store.finish_hand(match_id, 1, first, first["deltas"], now=T0))
    with pytest.raises(StopIteration) as again:
        store.finish_hand(match_id, 1, first, first["deltas"]).send(None)
    assert again.value.value is False  # stored already, the same: nothing done
    with pytest.raises(Conflict):
        store.finish_hand(match_id, 1, draw(), [0, 0, 0, 0]).send(None)
    with pytest.raises(Conflict, match="unknown"):
        store.finish_hand(match_id + 9, 1, draw(), [0, 0, 0, 0]).send(None)

    gate = store._gate
    assert gate is not None and gate.take_now()  # another write holds the turn
    try:
        mei_login = store.create_account("mei", None, True, ("j" * 64, T0), now=T0)
        waiting = asyncio.create_task(mei_login)
        saving = asyncio.create_task(store.save_table(table))
        second = draw(2)
        storing = asyncio.create_task(store.finish_hand(match_id, 2, second, [0, 0, 0, 0]))
        await asyncio.sleep(0.05)
        assert not waiting.done() and not saving.done() and not storing.done()
    finally:
        gate.release()
    mei = await asyncio.wait_for(waiting, 5)
    await asyncio.wait_for(saving, 5)
    assert await asyncio.wait_for(storing, 5) is True
    assert [h["hand_no"] for h in await store.match_hands(match_id)] == [1, 2]
    lin = await store.get_player("lin")
    assert lin is not None and (lin.guest, lin.password_hash, lin.created_at) == (True, None, T0)
    assert (mei.guest, mei.password_hash, mei.created_at) == (True, None, T0)
    assert mei.id == lin.id + 1
    assert await store.get_table("t1") == table


@pytest.mark.asyncio
async def test_on_sqlite_a_short_write_waits_for_another_process_outside_the_loop(
    store: Store, migrated_url: str
) -> None:
    """While another connection (a ``guobiao`` command) holds SQLite's write lock, a short
    write does not wait in the event loop: it goes the asyncio way and waits there, the loop
    running on, and commits once the lock is let go."""
    sqlite_only(store)
    table = TableRow("t1", "mcr", 15, False, None, (None,) * 4, T0)
    await store.save_table(table)  # (the file in WAL mode, as a running server's is)
    table = TableRow("t1", "mcr", 15, False, None, ("lin", None, None, None), T0)
    await waits_while_locked(migrated_url, store.save_table(table))
    assert await store.get_table("t1") == table
    assert finished_at_once(store.save_table(table))  # the lock free again: in the loop
    match_id = await new_match(store)
    await waits_while_locked(migrated_url, store.finish_hand(match_id, 1, draw(), [0, 0, 0, 0]))
    assert [h["hand_no"] for h in await store.match_hands(match_id)] == [1]


@pytest.mark.asyncio
async def test_a_closing_store_opens_no_connection_for_the_log(migrated_url: str) -> None:
    """An append that comes once the store has begun to close (its log closed, the engine
    about to go) fails, "the store is closed", instead of opening a connection that nobody
    would close (a ``ResourceWarning`` found in CI)."""
    store = await Store.open(migrated_url)
    try:
        match_id = await new_match(store)
        await store._close_log()  # close's first step
        with pytest.raises(OperationalError, match="store is closed"):
            await store.append_action(match_id, 1, 1, 0, {"type": "pass"})
        assert store._log is None
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_a_closed_store_opens_no_connection_to_read(migrated_url: str) -> None:
    """A read asked of a store that has closed (a task still running as the server stops)
    fails, "the store is closed", instead of opening a connection nobody would close."""
    store = await Store.open(migrated_url)
    await store.save_table(TableRow("t1", "mcr", 15, False, None, (None,) * 4, T0))
    await store.close()
    with pytest.raises(OperationalError, match="store is closed"):
        await store.get_table("t1")
    assert store.engine.sync_engine.pool.checkedout() == 0


@pytest.mark.asyncio
async def test_on_postgres_a_connection_the_server_closed_is_replaced_before_use(
    store: Store,
) -> None:
    """PostgreSQL ends the store's idle connections (a restart, an administrator's
    ``pg_terminate_backend``): the next read and write get new ones and succeed (the pool
    pings a connection as it checks it out: server/db/engine.py; a table's save, on a
    connection of its own, opens another: server/db/postgres_now.py)."""
    if store.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's own path")
    await store.save_table(TableRow("t1", "mcr", 15, False, None, (None,) * 4, T0))
    await store.get_table("t1")
    pool = store.engine.sync_engine.pool
    assert pool.checkedin() >= 1  # (a connection idle in the pool, to be closed)
    assert pool.checkedout() >= 1  # (and the saves' own)
    killer = await Store.open(store.engine.url.render_as_string(hide_password=False))
    try:
        async with killer.engine.connect() as connection:
            killed = await connection.scalar(
                text(
                    "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) "
                    "FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            )
    finally:
        await killer.close()
    assert killed >= 2
    await asyncio.sleep(0.2)  # the event loop reads the close off the pooled sockets
    found = await store.get_table("t1")
    assert found is not None and found.id == "t1"
    await store.save_table(TableRow("t2", "mcr", 15, False, None, (None,) * 4, T0))
    assert await store.get_table("t2") is not None


@pytest.mark.asyncio
async def test_on_postgres_a_save_whose_connection_just_ended_is_made_on_another(
    store: Store,
) -> None:
    """The saves' own connection ended by the database, the end not yet read by the event
    loop (a save follows at once): the save fails on it, and is made again on a new one
    (server/db/postgres_now.py), once: the row is stored, and stored once."""
    if store.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's own path")
    await store.save_table(TableRow("t1", "mcr", 15, False, None, (None,) * 4, T0))
    assert store._pg_now is not None
    (held,) = [h.connection for h in store._pg_now.held if h.connection is not None]
    raw = await held.get_raw_connection()
    pid = raw.driver_connection.get_server_pid()  # type: ignore[union-attr]
    killer = await Store.open(store.engine.url.render_as_string(hide_password=False))
    try:
        async with killer.engine.connect() as connection:
            assert await connection.scalar(text(f"SELECT pg_terminate_backend({int(pid)})"))
    finally:
        await killer.close()
    moved = TableRow("t1", "mcr", 15, False, None, ("lin", None, None, None), T0, "waiting")
    await store.save_table(moved)
    assert await store.get_table("t1") == moved
    assert [t.id for t in await store.load_open_tables()] == ["t1"]


@pytest.mark.parametrize("lost", ["ConnectionDoesNotExistError", "AdminShutdownError"])
@pytest.mark.asyncio
async def test_on_postgres_a_save_whose_connection_ends_during_it_is_made_on_another(
    store: Store, lost: str
) -> None:
    """The connection's end read while the save's statement runs (the other order from the
    test above, which the timing chooses): asyncpg raises an error with a SQLSTATE of the
    connection's end (08003; the server's 57P01), not the database's answer on a working
    connection. The save is made again on a new one (before, it was raised: a CI run
    failed so)."""
    if store.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's own path")
    import asyncpg.exceptions  # noqa: PLC0415 (PostgreSQL's tests only)

    error = getattr(asyncpg.exceptions, lost)
    await store.save_table(TableRow("t1", "mcr", 15, False, None, (None,) * 4, T0))
    assert store._pg_now is not None
    (held,) = [h for h in store._pg_now.held if h.connection is not None]
    assert held.driver is not None
    ended = held.driver

    class Ending:  # the held connection, as it is when its end is read mid-statement
        def is_closed(self) -> bool:
            return False

        async def execute(self, *args: Any) -> Any:
            raise error("connection was closed in the middle of operation")

    held.driver = Ending()  # type: ignore[assignment]
    moved = TableRow("t1", "mcr", 15, False, None, ("lin", None, None, None), T0, "waiting")
    await store.save_table(moved)
    assert await store.get_table("t1") == moved
    assert held.driver is not None and held.driver is not ended  # (a new connection)


@pytest.mark.asyncio
async def test_on_postgres_saves_at_once_share_a_few_held_connections(store: Store) -> None:
    """Writes that come at once each take a held connection (up to ``CONNECTIONS``), one
    statement at a time on each; a write after the store closed is refused."""
    if store.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's own path")
    rows = [TableRow(f"t{i}", "mcr", 15, False, None, (None,) * 4, T0) for i in range(40)]
    await asyncio.gather(*(store.save_table(row) for row in rows))
    assert sorted(t.id for t in await store.load_open_tables()) == sorted(r.id for r in rows)
    assert store._pg_now is not None
    opened = [h for h in store._pg_now.held if h.connection is not None]
    assert 1 < len(opened) <= postgres_now.CONNECTIONS
    await store.close()
    with pytest.raises(OperationalError, match="closed"):
        await store.save_table(rows[0])


@pytest.mark.asyncio
async def test_actions_come_back_in_seq_order(store: Store) -> None:
    match_id = await new_match(store)
    for seq in (3, 1, 2):
        await store.append_action(match_id, seq, 1, seq, {"type": "pass"})
    assert [a.seq for a in await store.match_actions(match_id)] == [1, 2, 3]
    seq, hand_no, player, action, stand_in = (await store.match_actions(match_id))[0]
    assert (seq, hand_no, player, action, stand_in) == (1, 1, 1, {"type": "pass"}, False)


@pytest.mark.asyncio
async def test_the_log_says_which_moves_the_server_played_for_a_person(store: Store) -> None:
    """``stand_in`` comes back as appended (false unless said), in reads of the whole log and
    of its last action; a replay takes the row without it (``ActionRow.played``)."""
    match_id = await new_match(store)
    await store.append_action(match_id, 1, 1, 0, {"type": "pass"})
    await store.append_action(match_id, 2, 1, 1, {"type": "pass"}, stand_in=True)
    assert [a.stand_in for a in await store.match_actions(match_id)] == [False, True]
    last = await store.last_action(match_id)
    assert last == ActionRow(2, 1, 1, {"type": "pass"}, stand_in=True)
    assert last.played == (2, 1, 1, {"type": "pass"})


@pytest.mark.asyncio
async def test_the_log_refuses_a_duplicate_seq_and_an_unknown_match(store: Store) -> None:
    match_id = await new_match(store)
    await store.append_action(match_id, 1, 1, 0, {"type": "pass"})
    with pytest.raises(Conflict):
        await store.append_action(match_id, 1, 1, 1, {"type": "pass"})
    with pytest.raises(Conflict):  # foreign keys are enforced on SQLite too
        await store.append_action(match_id + 1, 1, 1, 0, {"type": "pass"})
    assert len(await store.match_actions(match_id)) == 1


@pytest.mark.asyncio
async def test_a_match_keeps_its_secret_seed(store: Store) -> None:
    big = 2**63 - 1
    match_id = await store.create_match("t7", "mcr", big, SALT, SEATS, T0)
    [match] = await store.unfinished_matches()
    assert (match.id, match.table_id, match.seed, match.salt) == (match_id, "t7", big, SALT)
    assert match.seats == tuple(SEATS) and match.ended_at is None
    with pytest.raises(ValueError, match="64-bit"):
        await store.create_match("t7", "mcr", 2**63, SALT, SEATS, T0)
    with pytest.raises(ValueError):
        await store.create_match("t7", "mcr", 1, "not hex", SEATS, T0)


@pytest.mark.asyncio
async def test_a_new_match_reads_back_as_given_fenced_or_not(store: Store) -> None:
    """Every field of a new match comes back as given, with a table's token or without (on
    PostgreSQL each is one statement of its own, server/db/postgres_now.py); a token that is
    not the table's writes nothing and says whose it is."""
    rules = {"name": "mcr", "wilds": "none", "options": [1, None, "x"]}
    await store.save_table(TableRow("t1", "mcr", 15, False, None, tuple(SEATS), T0))
    late = T0 + timedelta(hours=1)
    made = [
        await store.create_match("t1", "mcr", -(2**63), SALT, SEATS, T0, rules, 2, fence=0),
        await store.create_match("t2", "custom", 2**63 - 1, "cd" * 16, [None] * 4, late),
    ]
    await store.take_table("t1")
    with pytest.raises(Fenced, match="its token is 1 now"):
        await store.create_match("t1", "mcr", 5, SALT, SEATS, T0, fence=0)
    with pytest.raises(Fenced, match="it is gone"):
        await store.create_match("t9", "mcr", 5, SALT, SEATS, T0, fence=0)
    found = [await store.get_match(match_id) for match_id in made]
    assert [
        (m.table_id, m.rules, m.seed, m.salt, m.seats, m.started_at, m.rule_options)
        for m in found
        if m is not None
    ] == [
        ("t1", "mcr", -(2**63), SALT, tuple(SEATS), T0, rules),
        ("t2", "custom", 2**63 - 1, "cd" * 16, (None,) * 4, late, None),
    ]
    assert [(m.hands_planned, m.rated, m.ended_at) for m in found if m is not None] == [
        (2, False, None),
        (MATCH_HANDS, False, None),
    ]
    assert [m.id for m in await store.table_matches("t1")] == [made[0]]


@pytest.mark.asyncio
async def test_a_tables_match_is_made_once_whatever_tries_it(store: Store) -> None:
    """A table tries to make its match again when a try failed in its eyes, though that try
    may have committed: a match is named by its table and salt, so the next try gets the
    match made, not a second one. A new salt at the table, or the salt at another table,
    makes a new match; a token not the table's is refused even for a match made."""
    await store.save_table(TableRow("t1", "mcr", 15, False, None, tuple(SEATS), T0))
    first = await store.create_match("t1", "mcr", 42, SALT, SEATS, T0, fence=0)
    tries = [
        await store.create_match("t1", "mcr", 42, SALT, SEATS, T0, fence=0),
        await store.create_match("t1", "mcr", 42, SALT, SEATS, T0),
    ]
    assert tries == [first, first]
    later = await store.create_match("t1", "mcr", 43, "cd" * 32, SEATS, T0, fence=0)
    elsewhere = await store.create_match("t2", "mcr", 42, SALT, SEATS, T0)
    assert len({first, later, elsewhere}) == 3
    assert [m.id for m in await store.table_matches("t1")] == [first, later]
    await store.take_table("t1")
    with pytest.raises(Fenced, match="its token is 1 now"):
        await store.create_match("t1", "mcr", 42, SALT, SEATS, T0, fence=0)
    seats = ["r1", "r2", "r3", "r4"]  # (a rated match is made the ORM's way on both)
    for name in seats:
        await store.create_player(name, "x", guest=False, now=T0)
    made = await store.create_match("t3", "mcr", 1, SALT, seats, T0, rated=True)
    assert await store.create_match("t3", "mcr", 1, SALT, seats, T0, rated=True) == made
    assert [m.id for m in await store.table_matches("t3")] == [made]


@pytest.mark.asyncio
async def test_a_hand_is_stored_once(store: Store) -> None:
    match_id = await new_match(store)
    assert await store.finish_hand(match_id, 1, draw(), (0, 0, 0, 0), now=T0) is True
    assert await store.finish_hand(match_id, 1, draw(), [0, 0, 0, 0]) is False  # a replay
    with pytest.raises(Conflict, match="another record"):
        await store.finish_hand(match_id, 1, win(0, [8, -8, 0, 0]), [8, -8, 0, 0])
    with pytest.raises(Conflict, match="unknown"):
        await store.finish_hand(match_id + 5, 1, draw(), [0, 0, 0, 0])
    assert await store.match_hands(match_id) == [draw()]


# Finishing a match: counts and grades.


@pytest.mark.asyncio
async def test_finish_match_updates_counts_and_grades(store: Store) -> None:
    await store.create_player("lin", "h", guest=False)
    await store.create_player("mei", "h", guest=False)
    match_id = await new_match(store)  # lin is player 0, Mei player 2
    hands = [
        win(0, [36, -8, -20, -8], 1),  # lin wins on Mei's discard
        draw(2),
        win(2, [-18, -18, 54, -18], 3),  # Mei self-draws
    ]
    for hand in hands:
        await store.finish_hand(match_id, hand["hand_no"], hand, hand["deltas"])
    assert await store.finish_match(match_id, [18, -26, 34, -26], T0 + timedelta(hours=1))

    lin = await store.get_player("lin")
    mei = await store.get_player("MEI")
    assert lin is not None and mei is not None
    assert (lin.score, lin.hands_won, lin.hands_lost, lin.hands_drawn, lin.matches) == (
        18,
        1,
        1,
        1,
        1,
    )
    assert (mei.score, mei.hands_won, mei.hands_lost, mei.hands_drawn, mei.matches) == (
        34,
        1,
        1,
        1,
        1,
    )
    assert lin.grade == pytest.approx(grade(18, 1, 1, 1))
    assert mei.grade == pytest.approx(grade(34, 1, 1, 1))

    # A second match adds up.
    second = await new_match(store)
    await store.finish_hand(second, 1, win(0, [600, -200, -200, -200]), [600, -200, -200, -200])
    assert await store.finish_match(second, [600, -200, -200, -200], T0 + timedelta(hours=2))
    lin = await store.get_player("lin")
    assert lin is not None
    assert (lin.score, lin.hands_won, lin.hands_lost, lin.hands_drawn, lin.matches) == (
        618,
        2,
        1,
        1,
        2,
    )
    assert lin.grade == pytest.approx(grade(618, 2, 1, 1))
    assert lin.grade == pytest.approx((75 * 1 + 25 * 618 / 4 / 5 + 10 * 4) / 100)


@pytest.mark.asyncio
async def test_finish_match_twice_counts_once(store: Store) -> None:
    await store.create_player("lin", "h", guest=False)
    match_id = await new_match(store)
    await store.finish_hand(match_id, 1, win(0, [36, -8, -20, -8]), [36, -8, -20, -8])
    first = await store.finish_match(match_id, [36, -8, -20, -8], T0)
    assert (first.ended_now, first.rating_changes) == (True, ())  # not rated
    again = await store.finish_match(match_id, [36, -8, -20, -8], T0)
    assert (again.ended_now, again.rating_changes) == (False, ())
    assert bool(first) and not again  # true as the match ended now
    lin = await store.get_player("lin")
    assert lin is not None and (lin.matches, lin.score) == (1, 36)
    assert await store.unfinished_matches() == []
    with pytest.raises(NoSuchMatch):
        await store.finish_match(match_id + 1, [0, 0, 0, 0], T0)


@pytest.mark.asyncio
async def test_bots_and_empty_seats_have_no_player(store: Store) -> None:
    await store.create_player("lin", "h", guest=False)
    match_id = await new_match(store, ["bot:default", "lin", None, "ghost"])
    await store.finish_hand(match_id, 1, draw(), [0, 0, 0, 0])
    await store.finish_match(match_id, [0, 0, 0, 0], T0)
    async with store.engine.connect() as connection:
        rows = (
            await connection.execute(
                text("SELECT player, player_id, drawn FROM match_players ORDER BY player")
            )
        ).all()
    lin = await store.get_player("lin")
    assert lin is not None
    assert [tuple(r) for r in rows] == [(0, None, 1), (1, lin.id, 1), (2, None, 1), (3, None, 1)]


@pytest.mark.asyncio
async def test_concurrent_matches_of_one_player_all_count(store: Store) -> None:
    await store.create_player("lin", "h", guest=False)
    ids = [await new_match(store, ["lin", "bot:a", "bot:b", "bot:c"]) for _ in range(6)]

    async def play(match_id: int) -> None:
        for seq in range(1, 11):
            await store.append_action(match_id, seq, 1, seq % 4, {"type": "pass"})
        await store.finish_hand(match_id, 1, win(0, [30, -10, -10, -10]), [30, -10, -10, -10])
        await store.save_table(TableRow(f"t{match_id}", "mcr", 15, False, None, SEATS, T0))
        assert await store.finish_match(match_id, [30, -10, -10, -10], T0)

    await asyncio.gather(*(play(i) for i in ids))
    lin = await store.get_player("lin")
    assert lin is not None
    assert (lin.matches, lin.score, lin.hands_won) == (6, 180, 6)


# Reports.


@pytest.mark.asyncio
async def test_player_summary(store: Store) -> None:
    await store.create_player("Lin", "h", guest=False, now=T0)
    assert await store.player_summary("nobody") is None
    first = await new_match(store, ["Lin", "bot:a", "bot:b", "bot:c"])
    second = await new_match(store, ["bot:a", "lin", "bot:b", "bot:c"])
    await store.finish_hand(first, 1, win(0, [36, -8, -20, -8]), [36, -8, -20, -8])
    await store.finish_match(first, [36, -8, -20, -8], T0 + timedelta(hours=1))
    await store.finish_hand(second, 1, draw(), [0, 0, 0, 0])
    await store.finish_match(second, [0, 0, 0, 0], T0 + timedelta(hours=2))

    summary = await store.player_summary("LIN")
    assert summary is not None
    assert summary["username"] == "Lin" and summary["guest"] is False
    assert (summary["score"], summary["hands_won"], summary["hands_drawn"]) == (36, 1, 1)
    assert summary["matches"] == 2 and summary["grade"] == pytest.approx(grade(36, 1, 0, 1))
    assert summary["created_at"] == "2026-03-01T12:00:00Z"
    recent = summary["recent"]
    assert [m["match"] for m in recent] == [second, first]
    assert recent[1] == {
        "match": first,
        "table": "t1",
        "rules": "mcr",
        "ended_at": "2026-03-01T13:00:00Z",
        "player": 0,
        "score": 36,
        "won": 1,
        "lost": 0,
        "drawn": 0,
        "final_scores": [36, -8, -20, -8],
        "seats": ["Lin", "bot:a", "bot:b", "bot:c"],
    }
    assert recent[0]["player"] == 1
    json.dumps(summary)  # ready for the HTTP API


@pytest.mark.asyncio
async def test_match_detail_and_log_hide_the_seed_until_the_end(store: Store) -> None:
    match_id = await store.create_match("t1", "mcr", -5, SALT, SEATS, T0)
    await store.append_action(match_id, 1, 1, 0, {"type": "discard", "tile": "5m"})
    await store.append_action(match_id, 2, 1, 1, {"type": "win"})
    hand = win(1, [16, -16, 0, 0])
    await store.finish_hand(match_id, 1, hand, hand["deltas"], now=T0)
    await store.append_action(match_id, 3, 2, 1, {"type": "discard", "tile": "E"}, stand_in=True)

    assert await store.match_detail(match_id + 1) is None
    assert await store.match_log(match_id + 1) is None
    detail = await store.match_detail(match_id)
    assert detail is not None
    assert "seed" not in detail and "salt" not in detail and detail["finished"] is False
    assert detail["hands"] == [{**hand, "finished_at": "2026-03-01T12:00:00Z"}]
    assert await store.match_log(match_id) is None  # in play: the seed is secret

    await store.finish_hand(match_id, 2, draw(2), [0, 0, 0, 0])
    await store.finish_match(match_id, [16, -16, 0, 0], T0 + timedelta(minutes=30))
    detail = await store.match_detail(match_id)
    assert detail is not None
    assert (detail["seed"], detail["salt"], detail["finished"]) == (-5, SALT, True)
    assert detail["final_scores"] == [16, -16, 0, 0]
    assert detail["started_at"] == "2026-03-01T12:00:00Z"
    assert detail["ended_at"] == "2026-03-01T12:30:00Z"
    assert [h["hand_no"] for h in detail["hands"]] == [1, 2]

    log = await store.match_log(match_id)
    assert log == [
        {
            "type": "match",
            "match": match_id,
            "seed": -5,
            "rules": "mcr",
            "table": "t1",
            "seats": SEATS,
            "hands": 16,
        },
        {"type": "action", "match": match_id, "hand": 1, "player": 0,
         "action": {"type": "discard", "tile": "5m"}},
        {"type": "action", "match": match_id, "hand": 1, "player": 1, "action": {"type": "win"}},
        {"type": "result", "match": match_id, "hand": 1, "record": hand},
        {"type": "action", "match": match_id, "hand": 2, "player": 1,
         "action": {"type": "discard", "tile": "E"}, "stand_in": True},
        {"type": "result", "match": match_id, "hand": 2, "record": draw(2)},
    ]  # fmt: skip


# A whole match through the engine, stored as the server stores it, then replayed.


def play_match(seed: int, match_id: int) -> Match:
    """A match where each player wins when it can, else pungs, else discards, else passes."""
    match = Match(seed, match_id=match_id)
    while not match.over:
        match.start_hand()
        assert match.hand is not None
        while match.hand.phase is not Phase.OVER:
            player = match.awaiting()[0]
            legal = match.legal_actions(player)
            for kind in (ActionKind.WIN, ActionKind.PUNG, ActionKind.DISCARD, ActionKind.PASS):
                choice = next((a for a in legal if a.kind is kind), None)
                if choice is not None:
                    break
            assert choice is not None, legal
            match.apply(player, choice)
    return match


@pytest.mark.asyncio
async def test_what_decides_who_reads_a_match_and_how_much(store: Store) -> None:
    """``match_privacy``: a private table's invite code (a public table's, or no row: none),
    its spectators' delay, the match's end; ``player_summary`` counts a private table's
    match but lists it not; ``match_detail`` up to ``shown_until`` lists the hands finished
    by then, the match as in play."""
    await store.create_player("Lin", "h", guest=False, now=T0)
    private = TableRow("tp", "mcr", 15, True, "k3y", SEATS, T0, state="finished")
    delayed = TableRow("td", "mcr", 15, False, None, SEATS, T0, spectator_delay_seconds=30)
    await store.save_table(private)
    await store.save_table(delayed)
    hidden = await store.create_match("tp", "mcr", 1, SALT, SEATS, T0)
    late = await store.create_match("td", "mcr", 2, SALT, SEATS, T0)
    # A private tournament's table is private too, but its match is the tournament's.
    tournament = TableRow("tt", "mcr", 15, True, "c0de", SEATS, T0, tournament=(1, 1, 1))
    await store.save_table(tournament)
    theirs = await store.create_match("tt", "mcr", 3, SALT, SEATS, T0)
    await store.finish_match(theirs, [0, 0, 0, 0], T0 + timedelta(minutes=3))
    assert await store.match_privacy(theirs) == MatchPrivacy(None, 0, T0 + timedelta(minutes=3))
    rowless = await new_match(store)  # (no table row: "t1")
    assert await store.match_privacy(rowless + 1) is None
    assert await store.match_privacy(rowless) == MatchPrivacy(None, 0, None)
    assert await store.match_privacy(late) == MatchPrivacy(None, 30, None)
    for match_id in (hidden, late):
        await store.finish_hand(match_id, 1, win(0, [8, -8, 0, 0]), [8, -8, 0, 0], now=T0)
        later = T0 + timedelta(minutes=1)
        await store.finish_hand(match_id, 2, draw(2), [0, 0, 0, 0], now=later)
        await store.finish_match(match_id, [8, -8, 0, 0], T0 + timedelta(minutes=2))
    ended = T0 + timedelta(minutes=2)
    assert await store.match_privacy(hidden) == MatchPrivacy("k3y", 0, ended)

    summary = await store.player_summary("lin")
    assert summary is not None and summary["matches"] == 3
    assert [m["match"] for m in summary["recent"]] == [theirs, late]

    detail = await store.match_detail(late, shown_until=T0 + timedelta(seconds=59))
    assert detail is not None and [h["hand_no"] for h in detail["hands"]] == [1]
    assert (detail["finished"], detail["ended_at"], detail["final_scores"]) == (False, None, None)
    assert "seed" not in detail and "salt" not in detail
    detail = await store.match_detail(late, shown_until=T0 + timedelta(minutes=1))
    assert detail is not None and [h["hand_no"] for h in detail["hands"]] == [1, 2]
    assert detail["finished"] is False
    detail = await store.match_detail(late)
    assert detail is not None and detail["finished"] is True and detail["seed"] == 2


@pytest.mark.asyncio
async def test_a_stored_match_replays(store: Store, tmp_path: Path) -> None:
    await store.create_player("lin", "h", guest=False)
    seed = 2
    match_id = await new_match(store, ["lin", "bot:a", "bot:b", "bot:c"], seed=seed)
    match = play_match(seed, match_id)
    records = iter(match.records)
    for seq, (hand_index, player, action) in enumerate(match.log, 1):
        # (Every fifth move as if the server played it for lin: the log says so, and replays.)
        stand_in = player == 0 and seq % 5 == 0
        await store.append_action(
            match_id, seq, hand_index + 1, player, action.to_dict(), stand_in=stand_in
        )
        if seq == len(match.log) or match.log[seq][0] != hand_index:
            record = next(records).to_dict()
            await store.finish_hand(match_id, record["hand_no"], record, record["deltas"])
    assert await store.finish_match(match_id, match.scores, T0 + timedelta(hours=1))

    log = await store.match_log(match_id)
    assert log is not None
    flagged = [line for line in log if line.get("stand_in")]
    assert flagged and all(line["player"] == 0 for line in flagged)
    path = tmp_path / "match.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in log), encoding="utf-8")
    assert replay_cli.run(argparse.Namespace(file=str(path), quiet=True)) == 0

    lin = await store.get_player("lin")
    assert lin is not None
    won = sum(1 for r in match.records if r.result.winner == 0)
    drawn = sum(1 for r in match.records if r.result.result == "draw")
    lost = sum(1 for r in match.records if r.result.deltas[0] < 0)
    assert (lin.score, lin.hands_won, lin.hands_lost, lin.hands_drawn) == (
        match.scores[0],
        won,
        lost,
        drawn,
    )
    assert won + lost + drawn == 16


@pytest.mark.asyncio
async def test_no_append_waits_for_the_logs_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log's periodic checkpoint syncs the database file; it runs on a connection and in
    a thread of its own, and the appends go on committing meanwhile (it once held every
    table's next action up to a second)."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'guobiao.db'}"
    await upgrade(url)
    store = await Store.open(url)
    release = threading.Event()
    started = threading.Event()
    real = sqlite_log.checkpoint

    def held_checkpoint(path: str) -> None:
        started.set()
        release.wait(10)
        real(path)

    monkeypatch.setattr(sqlite_log, "CHECKPOINT_EVERY", 2)
    monkeypatch.setattr(sqlite_log, "checkpoint", held_checkpoint)
    try:
        match_id = await new_match(store)
        for seq in range(1, 3):  # the second commit starts the checkpoint, which hangs
            await store.append_action(match_id, seq, 1, 0, {"type": "pass"})
        await asyncio.wait_for(asyncio.to_thread(started.wait, 5), 6)
        for seq in range(3, 8):  # committed while the checkpoint still runs
            await asyncio.wait_for(store.append_action(match_id, seq, 1, 0, {"type": "pass"}), 5)
        assert (await store.last_action(match_id)).seq == 7  # type: ignore[union-attr]
        assert not release.is_set()
    finally:
        release.set()
        await store.close()

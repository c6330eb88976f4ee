"""The action log's appends on SQLite, past SQLAlchemy's per-statement machinery.

Every action a table takes is committed before it is applied (``Store.append_action``), so a
lightly loaded server commits about once per action. Through SQLAlchemy's asyncio layer one
such commit cost the event loop about 0.65 ms of CPU (eight round trips to the driver's thread,
each through greenlets, events and the statement pipeline) where the driver itself needs under
0.1: with ten tables of bots, 0.65 of the 1.55 ms the server spent per action (measured by
stubbing the append out). Here the same rows go straight to the pooled connection's driver
(aiosqlite): ``BEGIN IMMEDIATE`` (what the store's write option asks for), one
``executemany``, ``COMMIT``; the pool's checkout and reset remain (about 0.4 ms in all).

The values are bound by the columns' own SQLAlchemy types (``TypeEngine.bind_processor``: the
JSON column's serializer, ``UTCDateTime``'s naive UTC, the dialect's datetime text), so the
rows stored are byte for byte what the ORM path stored; a constraint failure is raised as
SQLAlchemy's ``IntegrityError``, as the store expects. Other databases keep the Core path.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import FromClause
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

Binder = Callable[[dict[str, Any]], tuple[Any, ...]]


def binder(
    table: FromClause, name: str, columns: Sequence[str], dialect: Dialect
) -> tuple[str, Binder]:
    """The ``INSERT`` of ``columns`` into ``table`` (named ``name``) and the function turning
    a row (a dict by column name) into its parameters, bound as SQLAlchemy binds them on
    ``dialect``."""
    processors = [table.c[column].type.bind_processor(dialect) for column in columns]
    names = ", ".join(columns)
    marks = ", ".join("?" for _ in columns)
    sql = f"INSERT INTO {name} ({names}) VALUES ({marks})"

    def bind(row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(
            row[column] if process is None else process(row[column])
            for column, process in zip(columns, processors, strict=True)
        )

    return sql, bind


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

    The whole transaction runs in aiosqlite's thread as one call (its ``_execute``): one
    hand-off between the event loop and the thread instead of one per statement."""
    raw = await connection.get_raw_connection()
    driver = raw.driver_connection
    assert driver is not None
    params = [bind(row) for row in rows]
    keys = [row.get(fence) if fence is not None else None for row in rows]
    # aiosqlite runs a function in its thread with ``_execute`` (how its own methods run),
    # on its sqlite3 connection ``_conn``: both there since its first releases.
    try:
        fenced: dict[int, int | None] = await driver._execute(
            _insert, driver._conn, sql, params, keys
        )
    except sqlite3.IntegrityError as exc:
        raise IntegrityError(sql, None, exc) from exc
    return {id(rows[i]): token for i, token in fenced.items()}


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

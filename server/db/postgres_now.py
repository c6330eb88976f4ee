"""Short writes on PostgreSQL as one statement each, past SQLAlchemy's per-statement machinery.

A table's row is saved as the table is made, as each player sits and as its match starts:
six saves a table. Through SQLAlchemy's asyncio layer each save was a pool checkout with its
ping (three round trips with asyncpg), ``BEGIN``, the ORM's read of the row, its ``UPDATE``
and ``COMMIT``, each a hop through SQLAlchemy's greenlets: about 1.4 ms of the server's CPU
a save, where the same row as one statement on the driver's connection costs about 0.1
(docs/performance.md, "Tables that start as their players arrive"). Seating thousands of
players at once on PostgreSQL was mostly that.

``PostgresNow`` runs such a write as one statement in autocommit on a connection it holds
(asyncpg's, under a SQLAlchemy connection of the store's engine, as the action log's own,
``server.db.postgres_log``), one statement at a time on each (up to ``CONNECTIONS`` of them,
as many as writes come at once). A connection that fails is closed and
the statement is tried once more on a new one (each write here may be made twice: the row
ends the same); a write that fails again raises, as it did, and the table that asked pauses
and saves again later (``server.table.durable``). No write goes to the database, its retry
included, before the backend of a connection that failed has ended (server/db/unsettled.py):
a statement that got no answer may still commit once its backend goes on, and would then
overwrite a table's newer row with its older one, or make a second match beside the one its
retry made. The values are bound by the
columns' own SQLAlchemy types (``server.db.binding``), so the rows stored are those the ORM
stored.

``save_table``: an insert that updates the row if its id exists (``ON CONFLICT DO
UPDATE``), only if the stored fencing token is the writer's when it gives one (cluster
mode): else nothing is written and ``Fenced`` says whose token it is. The statement locks
the row as the ORM's read ``FOR UPDATE`` did, so a takeover's increment of the token waits
for it, and one that came first makes it write nothing. ``create_match`` the same way: the
match's row inserted only if the table's token is the writer's, in the statement that reads
it, and only if the table has not made that match already (its seed and salt: a try that
committed with its answer lost is found by the table's next, not made again). (Through
SQLAlchemy's ORM a match cost the seating of a table more than its six saves: the pool's
ping, ``BEGIN``, the token's read, the unit of work's insert, ``COMMIT``.)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import Dialect
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.db import binding
from server.db.errors import Fenced
from server.db.models import GameTable, Hand, Match, Player, PlayerSession
from server.db.rows import TableRow
from server.db.unsettled import StillRunning, Unsettled
from server.db.write_health import WriteHealth

# The columns a save writes (``TableRow.columns``), in the order of its parameters ($1 is
# the id).
TABLE_COLUMNS = (
    "rules",
    "turn_seconds",
    "private",
    "invite_code",
    "seats",
    "created_at",
    "state",
    "hands",
    "aids",
    "rated",
    "ends_at",
    "seed",
    "reveals",
    "watchable",
    "spectator_delay_seconds",
    "claim_window_ms",
    "tournament_id",
    "tournament_session",
    "tournament_table",
)
SAVE_TABLE = (
    f"INSERT INTO tables (id, {', '.join(TABLE_COLUMNS)}) "
    f"VALUES ({', '.join(f'${i}' for i in range(1, len(TABLE_COLUMNS) + 2))}) "
    "ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{column} = excluded.{column}" for column in TABLE_COLUMNS)
)
# The same, written only if the stored token is the writer's (the last parameter).
SAVE_FENCED_TABLE = f"{SAVE_TABLE} WHERE tables.fence = ${len(TABLE_COLUMNS) + 2}"


# A new account and its first login session, one statement (one transaction).
PLAYER_COLUMNS = (
    "username",
    "username_key",
    "username_skeleton",
    "password_hash",
    "guest",
    "created_at",
    "score",
    "hands_won",
    "hands_lost",
    "hands_drawn",
    "matches",
    "grade",
)
SESSION_COLUMNS = ("token_hash", "created_at", "expires_at")
_PLAYER_PARAMS = len(PLAYER_COLUMNS)
CREATE_ACCOUNT = f"""\
WITH player AS (
    INSERT INTO players ({", ".join(PLAYER_COLUMNS)})
    VALUES ({", ".join(f"${i}" for i in range(1, _PLAYER_PARAMS + 1))})
    RETURNING id
), login AS (
    INSERT INTO sessions (player_id, {", ".join(SESSION_COLUMNS)})
    SELECT id, {", ".join(f"${_PLAYER_PARAMS + i}" for i in range(1, len(SESSION_COLUMNS) + 1))}
    FROM player
)
SELECT id FROM player"""

# A new match of a table (not rated: a rated one reads its four accounts first, the ORM's
# way), unless the table has made it already: a match is named by its table, seed and salt (a
# table draws a salt of its own for each match and keeps both for its tries), so a try whose
# answer was lost and which committed, even late, is found by the next rather than made
# again. With the table's fencing token checked in the same statement when the writer gives
# one: the table's row held (``FOR SHARE``) till the commit, as the ORM's read did, so a
# takeover's increment waits for it. The stored token comes back beside the match's id (None
# when the token is another's: nothing written), so a refusal says whose it is without a read.
MATCH_COLUMNS = (
    "table_id",
    "rules",
    "seed",
    "salt",
    "seats",
    "started_at",
    "rule_options",
    "hands_planned",
    "rated",
)
_TABLE_PARAM = MATCH_COLUMNS.index("table_id") + 1
_SEED_PARAM = MATCH_COLUMNS.index("seed") + 1
_SALT_PARAM = MATCH_COLUMNS.index("salt") + 1
_FENCE_PARAM = len(MATCH_COLUMNS) + 1


def create_match_sql(dialect: Dialect, *, fenced: bool) -> str:
    """The statement making a match (``dialect``: PostgreSQL's; ``fenced``: the table's token
    checked, the last parameter), or finding the one its table made with its seed and salt. It
    returns the stored token (None unless ``fenced``) and the match's id (None when the token
    is another's). In a SELECT list a parameter has no column to take its type from: each is
    cast to its column's."""
    table = Match.__table__
    values = ", ".join(
        f"${i}::{table.c[column].type.compile(dialect=dialect)}"
        for i, column in enumerate(MATCH_COLUMNS, 1)
    )
    current = (
        f"SELECT fence FROM tables WHERE id = ${_TABLE_PARAM} FOR SHARE"
        if fenced
        else f"SELECT ${_FENCE_PARAM}::bigint AS fence"  # (None: no token to check)
    )
    return f"""\
WITH current AS (
    {current}
), allowed AS (
    SELECT FROM current WHERE fence IS NOT DISTINCT FROM ${_FENCE_PARAM}
), made AS (
    SELECT id FROM matches, allowed
    WHERE table_id = ${_TABLE_PARAM} AND seed = ${_SEED_PARAM} AND salt = ${_SALT_PARAM}
    ORDER BY id LIMIT 1
), created AS (
    INSERT INTO matches ({", ".join(MATCH_COLUMNS)})
    SELECT {values} FROM allowed WHERE NOT EXISTS (SELECT FROM made)
    RETURNING id
)
SELECT (SELECT fence FROM current), COALESCE((SELECT id FROM created), (SELECT id FROM made))"""


# A finished hand, unless its match has it already (then what is stored is read, to compare).
HAND_COLUMNS = ("match_id", "hand_no", "record", "deltas", "finished_at")
INSERT_HAND = (
    f"INSERT INTO hands ({', '.join(HAND_COLUMNS)}) VALUES ($1, $2, $3, $4, $5) "
    "ON CONFLICT (match_id, hand_no) DO NOTHING"
)
STORED_HAND = "SELECT record::text, deltas::text FROM hands WHERE match_id = $1 AND hand_no = $2"

# Connections held for the short writes at most, each one statement at a time: as many are
# opened as writes come at once (a database across a network answers each write later).
CONNECTIONS = 4
# The SQLSTATE classes of an error that is the connection's end, not an answer on it:
# connection exceptions (08...) and the server's shutdown or termination of it (57P...).
LOST = ("08", "57P")


class _Held:
    """A connection held for the short writes, and asyncpg's under it (read once: each read
    is a hop through SQLAlchemy's greenlets): None until first used, and after one failed."""

    connection: AsyncConnection | None = None
    driver: Any = None


class PostgresNow:
    """Short writes on PostgreSQL, one statement each on a connection held for them (the
    module's docstring)."""

    def __init__(
        self, engine: AsyncEngine, closed_error: Callable[[], Exception], writes: WriteHealth
    ) -> None:
        self.engine = engine
        self._closed_error = closed_error  # what a write after ``close`` raises
        self._writes = writes  # told how each write went (the store's, for ``/healthz``)
        self.held = [_Held() for _ in range(CONNECTIONS)]
        # The free ones, the last used first: a second is opened only for a second write
        # at once.
        self._free: asyncio.LifoQueue[_Held] = asyncio.LifoQueue()
        for held in reversed(self.held):
            self._free.put_nowait(held)
        self._bind_table = binding.binder(
            GameTable.__table__, ("id", *TABLE_COLUMNS), engine.dialect
        )
        self._bind_player = binding.binder(Player.__table__, PLAYER_COLUMNS, engine.dialect)
        self._bind_hand = binding.binder(Hand.__table__, HAND_COLUMNS, engine.dialect)
        self._bind_match = binding.binder(Match.__table__, MATCH_COLUMNS, engine.dialect)
        self._create_match = create_match_sql(engine.dialect, fenced=False)
        self._create_fenced_match = create_match_sql(engine.dialect, fenced=True)
        self._bind_session = binding.binder(
            PlayerSession.__table__, SESSION_COLUMNS, engine.dialect
        )
        self.closed = False
        # The backends of the held connections that failed, whose write may still commit:
        # ended before any other write goes (``_run_on``).
        self._unsettled = Unsettled("the short writes")

    async def save_table(self, row: TableRow, fence: int | None) -> None:
        """``Tables.save_table`` (the module's docstring)."""
        values = self._bind_table({"id": row.id, **row.columns()})
        if fence is None:
            await self._run("execute", SAVE_TABLE, *values, again=True)
            return
        status = await self._run("execute", SAVE_FENCED_TABLE, *values, fence, again=True)
        if status.endswith(" 0"):  # "INSERT 0 0": the row holds another writer's token
            stored = await self._run("fetchval", "SELECT fence FROM tables WHERE id = $1", row.id)
            raise Fenced(row.id, fence, stored)

    async def create_account(self, player: dict[str, Any], session: dict[str, Any]) -> int:
        """``Accounts.create_account``'s write: the row ``player`` (by the names of
        ``PLAYER_COLUMNS``) and its login ``session`` (``SESSION_COLUMNS``), in one
        statement; the new player's id. A name taken raises ``IntegrityError``. Not made
        twice: a first try whose answer was lost may have created the account."""
        values = (*self._bind_player(player), *self._bind_session(session))
        player_id: int = await self._run("fetchval", CREATE_ACCOUNT, *values)
        return player_id

    async def create_match(self, match: dict[str, Any], fence: int | None) -> int:
        """``Matches.create_match``'s write for a match that is not rated: the row ``match``
        (by the names of ``MATCH_COLUMNS``), in one statement, unless its table made it
        already (the same seed and salt); its id. ``fence``: the writer's token for the
        match's table (``Fenced`` unless it is the stored one's: nothing written). Not tried
        again here (the table tries again later, and finds the match if this try made it)."""
        values = self._bind_match(match)
        sql = self._create_match if fence is None else self._create_fenced_match
        stored, made = await self._run("fetchrow", sql, *values, fence)
        if made is None:  # (with no token to check, the match is made or found)
            assert fence is not None
            raise Fenced(match["table_id"], fence, stored)
        return int(made)

    async def insert_hand(self, hand: dict[str, Any]) -> tuple[str, str] | None:
        """``Matches.finish_hand``'s write: the row ``hand`` (by the names of
        ``HAND_COLUMNS``), None once stored; if its match has that hand already, nothing
        is written and the stored record and deltas are returned (as JSON text) to compare.
        An unknown match raises ``IntegrityError``. May be made twice (a hand stored by the
        first try is then read back as stored)."""
        status = await self._run("execute", INSERT_HAND, *self._bind_hand(hand), again=True)
        if not status.endswith(" 0"):
            return None
        stored = await self._run(
            "fetchrow", STORED_HAND, hand["match_id"], hand["hand_no"], again=True
        )
        return (stored[0], stored[1])

    async def _run(self, method: str, sql: str, *args: Any, again: bool = False) -> Any:
        """``method`` (asyncpg's ``execute``, ``fetchval``...) of ``sql`` on the held
        connection, opened first if there is none or the database closed it. An error the
        database answered with is raised (a constraint's as SQLAlchemy's ``IntegrityError``,
        as the store expects); a connection that failed otherwise is closed, and ``again``
        (a write that may be made twice: the row ends the same) the statement is tried once
        more on a new one: a connection PostgreSQL ended while it sat idle (a restart,
        ``pg_terminate_backend``) is found out only so when the end has not been read yet.
        Each try waits first for the backends of the connections that failed to end
        (``StillRunning`` if they do not in time: server/db/unsettled.py)."""
        held = await self._free.get()
        try:
            result = await self._run_on(held, method, sql, args, again)
        except Exception as exc:
            self._writes.failed(exc)  # (counted if the database failed it)
            raise
        finally:
            self._free.put_nowait(held)
        self._writes.worked()
        return result

    async def _run_on(
        self, held: _Held, method: str, sql: str, args: tuple[Any, ...], again: bool
    ) -> Any:
        """``_run`` on ``held``, which no other write uses meanwhile."""
        for tries_left in (1, 0) if again else (0,):
            if self.closed:
                raise self._closed_error()
            if held.connection is None:
                held.connection = await self.engine.connect()
            try:
                if held.driver is None:
                    held.driver = (await held.connection.get_raw_connection()).driver_connection
                driver = held.driver
                if driver.is_closed():
                    raise ConnectionError("the database closed the connection")
                await self._unsettled.settle(driver)
                return await getattr(driver, method)(sql, *args)
            except StillRunning:
                raise  # (the connection that asked is fine)
            except Exception as exc:
                state = str(getattr(exc, "sqlstate", "") or "")
                # The database's answer, but for the end of the connection itself (class 08,
                # and 57P: the server shut down or ended it, pg_terminate_backend's 57P01, as
                # asyncpg says when the end is read during the statement: 08003)
                if state and not state.startswith(LOST):  # an answer: the connection is fine
                    if state.startswith("23"):  # a constraint (a name taken)
                        raise IntegrityError(sql, None, exc) from exc
                    raise
                await self._drop(held)
                if not tries_left:
                    raise
            except BaseException:
                # A cancellation in the middle of the statement may leave the connection
                # busy with it.
                await self._drop(held)
                raise
        raise AssertionError("unreachable")  # (the last try returns or raises)

    async def close(self) -> None:
        """Close the held connections (before the engine is disposed), each once its write
        is done; no write after it."""
        self.closed = True
        taken = [await self._free.get() for _ in self.held]
        for held in taken:
            if held.connection is not None:
                connection, held.connection, held.driver = held.connection, None, None
                with contextlib.suppress(Exception):
                    await connection.close()
        for held in taken:  # (a write waiting for one raises: closed)
            self._free.put_nowait(held)

    async def _drop(self, held: _Held) -> None:
        """Set ``held``'s connection aside, which failed with its write's outcome unknown
        (no answer, or an error that came after the statement went): its next statement
        opens another. Its backend is remembered, to be ended before the next write goes,
        and its socket is closed at once (server/db/unsettled.py). (A connection the
        database ended is remembered too: its backend is found gone at once.)"""
        connection, driver = held.connection, held.driver
        held.connection = held.driver = None
        if driver is not None:
            self._unsettled.remember(driver)
        if connection is not None:
            with contextlib.suppress(Exception):
                await connection.invalidate()

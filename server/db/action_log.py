"""A match's action log in the database: ``append_action`` commits before it returns, and
appends from many tables share one commit (group commit), so a busy server makes one
commit for many actions; in cluster mode each append's fencing token is checked in the
transaction that writes it.

On SQLite the log is written through ``server.db.sqlite_log`` (the embedded default's
fast path), and an append that finds nothing else being written commits at once, in its
caller's own step (``_append_now``): with the flusher's task, the appender's future and
their wake-ups gone, a server at 20 tables of fast bots spent x0.80 the CPU per action
(docs/performance.md). On PostgreSQL through ``server.db.postgres_log``: one statement
per commit, the fencing tokens checked in it (one round trip, not four).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.db import binding, postgres_log, sqlite_log
from server.db.engine import cannot_write, replace_connections
from server.db.errors import Conflict, Fenced
from server.db.models import MatchAction
from server.db.rows import ActionRow, utcnow
from server.db.transactions import Transactions, store_closed
from server.db.unsettled import Unsettled


def _settle(done: asyncio.Future[None], error: BaseException | None) -> None:
    """Tell a waiting appender how its action went (unless it stopped waiting)."""
    if done.done():
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)


_FENCE = "_fence"  # an append's (table id, fencing token), when it has one (cluster mode)


_ACTION_COLUMNS = postgres_log.COLUMNS  # (its statement names them in this order)
_ACTION_ROW = (  # what a read gives back: an ``ActionRow``
    MatchAction.seq,
    MatchAction.hand_no,
    MatchAction.player,
    MatchAction.action,
    MatchAction.stand_in,
)


def _conflict(row: dict[str, Any]) -> Conflict:
    return Conflict(
        f"cannot append action {row['seq']} to match {row['match_id']}: the match is "
        "unknown, the seq is taken or the player is not 0..3"
    )


class ActionLog(Transactions):
    """The ``Store``'s action log: appends (grouped into commits) and reads."""

    def __init__(self, engine: AsyncEngine) -> None:
        super().__init__(engine)
        # Group commit of actions: appends wait here while a transaction is being written,
        # then go together in the next one (see ``append_action``).
        self._pending: list[tuple[dict[str, Any], asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None
        # The log's INSERT (SQLite's) and how a row is bound (both databases'), made at the
        # first append for the engine's dialect.
        self._sql_and_bind: tuple[str, binding.Binder] | None = None
        self._log: AsyncConnection | None = None  # the action log's own connection
        # Its driver connection once set up on SQLite (``sqlite_log.log_driver``): an append
        # that finds nothing else being written commits from its caller (``_append_now``).
        self._driver: Any = None
        # On PostgreSQL: asyncpg's connection under ``_log`` (that connection, and it), read
        # once, not before every append (each read is a hop through SQLAlchemy's greenlets).
        self._pg_driver: tuple[AsyncConnection, Any] | None = None
        self._log_closed = False  # closed by ``_close_log``: never opened again
        # Its connection refused an append as read-only in ``_append_now``, which cannot
        # await its replacement: the batch's way replaces it before using it again.
        self._log_read_only = False
        # PostgreSQL: the backends of the log's connections that failed (``_unsettle``),
        # whose append may still commit: ``last_action`` ends them first.
        self._unsettled = Unsettled("the action log")

    async def _close_log(self) -> None:
        """Write what was appended, then close the log's connection. A batch that would
        need a connection from now on fails instead (``store_closed``): a connection opened
        as the store closes would be left open (likely the ``ResourceWarning`` seen in CI)."""
        self._log_closed = True
        if self._flusher is not None and not self._flusher.done():
            await self._flusher  # what was appended is written before the engine goes
        await sqlite_log.checkpoints_done()
        if self._log is not None:
            with contextlib.suppress(Exception):
                await self._log.close()
            self._log = self._driver = None

    async def append_action(
        self,
        match_id: int,
        seq: int,
        hand_no: int,
        player: int,
        action: Mapping[str, Any],
        *,
        now: datetime | None = None,
        fence: tuple[str, int] | None = None,
        stand_in: bool = False,
    ) -> None:
        """Append one action to a match's log; committed when this returns.

        Appends from many tables are committed together (group commit): while one
        transaction is being written, the next appends wait and share the next one, so a
        busy server makes one commit for many actions and each caller still returns only
        once its action is durable. ``Conflict`` if the match has an action ``seq`` already
        or does not exist. ``fence``: (table id, the writer's fencing token) in cluster
        mode; the token is checked in the transaction that appends (``Fenced`` unless it is
        the table's), holding the table's row so a takeover waits for the commit.
        ``stand_in``: the server played the action for the person whose seat it was (a
        review leaves it out); false for her own and for a bot seat's.
        """
        row = {
            "match_id": match_id,
            "seq": seq,
            "hand_no": hand_no,
            "player": player,
            "action": dict(action),
            "created_at": now or utcnow(),
            "stand_in": stand_in,
        }
        if fence is not None:
            row[_FENCE] = fence
        if not self._pending and (self._flusher is None or self._flusher.done()):
            fenced = self._append_now(row)
            if fenced is not None:  # committed, or refused by its fencing token
                if fenced:
                    assert fence is not None  # (only a row with a token is refused)
                    raise Fenced(fence[0], fence[1], fenced[id(row)])
                return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((row, done))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_actions(), name="store-actions")
        await done

    async def _flush_actions(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                fenced = await self._insert_actions([row for row, _ in batch])
                if fenced:
                    refused = [(row, done) for row, done in batch if id(row) in fenced]
                    batch = [(row, done) for row, done in batch if id(row) not in fenced]
                    for row, done in refused:
                        table_id, token = row[_FENCE]
                        _settle(done, Fenced(table_id, token, fenced[id(row)]))
            except IntegrityError:
                for row, done in batch:  # find the culprit: each row on its own
                    try:
                        alone = await self._insert_actions([row])
                    except IntegrityError:
                        _settle(done, _conflict(row))
                    except Exception as exc:
                        _settle(done, exc)
                    else:
                        if alone:
                            table_id, token = row[_FENCE]
                            _settle(done, Fenced(table_id, token, alone[id(row)]))
                        else:
                            _settle(done, None)
            except Exception as exc:
                for _, done in batch:
                    _settle(done, exc)
            else:
                for _, done in batch:
                    _settle(done, None)

    def _append_now(self, row: dict[str, Any]) -> dict[int, int | None] | None:
        """Commit ``row`` alone, here, without a turn of the event loop, when the log is on
        SQLite, set up, and nothing else is being written (the gate free): the common case
        of a server that is not saturated, where a batch would hold one row anyway and the
        flusher's task, the appender's future and their wake-ups cost more than the commit.
        The rows refused by their fencing token, as ``_insert_actions``; None, having done
        nothing, when it cannot (then the append joins the next batch)."""
        driver, gate, log = self._driver, self._gate, self._log
        if driver is None or gate is None or self._sql_and_bind is None:
            return None
        if log is None or log.closed or log.invalidated or not gate.take_now():
            return None
        started = time.perf_counter()
        try:
            fenced = sqlite_log.insert_now(driver, *self._sql_and_bind, [row], fence=_FENCE)
        except IntegrityError:
            raise _conflict(row) from None  # rolled back; the connection is fine
        except BaseException as exc:
            # The next append takes the batch's way, which sets a failed connection aside
            # (one that refused as read-only before it tries it: it would fail again).
            self._driver = None
            self._log_read_only = cannot_write(exc)
            self.writes.failed(exc)
            raise
        finally:
            gate.release()
        if fenced is not None:
            self._committed("actions", started)
        return fenced

    async def _insert_actions(self, rows: list[dict[str, Any]]) -> dict[int, int | None]:
        """Insert ``rows`` in one transaction but those whose fencing token is not their
        table's: those are returned (``id(row)`` -> the table's token, None if gone)."""
        # A Core connection, not an ORM session: at a few actions per commit (every commit
        # of a lightly loaded server) the session's own bookkeeping cost the event loop
        # about 0.2 ms per commit, a tenth of serving the action. Same statement, same
        # BEGIN IMMEDIATE (the write option), one transaction.
        started = time.perf_counter()
        # One connection held for the log (only the flusher task appends, one commit at a
        # time): a pool checkout and reset per commit cost about as much as the commit.
        # One that failed is closed and not used again.
        # The turn (SQLite: server/db/transactions.py) before the connection: a store closed
        # meanwhile refuses the turn, so no connection is opened on its engine as it goes.
        try:
            async with self._write_turn(urgent=True):
                if self._log is not None and self._log_read_only:
                    await self._set_log_aside(self._log, read_only=True)
                if self._log is None or self._log.closed or self._log.invalidated:
                    if self._log_closed:
                        raise store_closed()
                    self._log, self._driver = await self.engine.connect(), None
                connection = self._log
                try:
                    fenced = await self._insert_on(connection, rows)
                except IntegrityError:
                    raise  # rolled back; the connection is fine
                except BaseException as exc:
                    self._unsettle(connection)
                    await self._set_log_aside(connection, read_only=cannot_write(exc))
                    raise
        except Exception as exc:
            self.writes.failed(exc)  # (counted if the database failed it)
            raise
        self._committed("actions", started)  # (an error went past this)
        return fenced

    def _unsettle(self, connection: AsyncConnection) -> None:
        """The log's ``connection`` failed, with no answer it may be (PostgreSQL): its
        backend is remembered, to be ended before the log is asked how its append ended
        (``last_action``), and its socket is closed now (server/db/unsettled.py)."""
        if self._pg_driver is None or self._pg_driver[0] is not connection:
            return
        self._unsettled.remember(self._pg_driver[1])

    async def _set_log_aside(self, connection: AsyncConnection, *, read_only: bool) -> None:
        """Close the log's ``connection``, which failed: the next batch opens another. One
        that refused as ``read_only`` (SQLite opened the file so while its folder was: it
        will not write again) has the pool replace the others it made before it, as
        SQLAlchemy does when its own statements meet that refusal (server/db/engine.py),
        so the next batch opens a connection afresh, not one of those."""
        self._log = self._driver = None
        self._log_read_only = False
        with contextlib.suppress(Exception):
            if read_only:
                await replace_connections(connection)
            else:
                await connection.invalidate()

    async def _insert_on(
        self, connection: AsyncConnection, rows: list[dict[str, Any]]
    ) -> dict[int, int | None]:
        if self._sql_and_bind is None:
            self._sql_and_bind = (
                sqlite_log.insert_sql(MatchAction.__tablename__, _ACTION_COLUMNS),
                binding.binder(MatchAction.__table__, _ACTION_COLUMNS, connection.dialect),
            )
        sql, bind = self._sql_and_bind
        if connection.dialect.name == "sqlite":  # the embedded default: see sqlite_log
            fenced = await sqlite_log.insert_rows(connection, sql, bind, rows, fence=_FENCE)
            if self._driver is None:  # set up (``_append_now``): once, not after every batch
                self._driver = await sqlite_log.log_driver(connection)
        else:
            if self._pg_driver is None or self._pg_driver[0] is not connection:
                raw = await connection.get_raw_connection()
                self._pg_driver = (connection, raw.driver_connection)
            fenced = await postgres_log.insert_rows(self._pg_driver[1], bind, rows, _FENCE)
        return fenced

    async def match_actions(self, match_id: int) -> list[ActionRow]:
        """A match's action log in ``seq`` order."""
        async with self._read() as session:
            rows = await session.execute(
                select(*_ACTION_ROW)
                .where(MatchAction.match_id == match_id)
                .order_by(MatchAction.seq)
            )
            return [ActionRow(*row) for row in rows]

    async def last_action(self, match_id: int) -> ActionRow | None:
        """The last action of a match's log (None if it has none): after a failed append,
        whether the action was committed after all. On PostgreSQL only once the log's
        connection that failed has ended (else ``StillRunning``): read before then, the log
        would say the action was not stored, the table would ask the player again, and the
        append that committed late would take the action's ``seq`` from her new move (a
        ``Conflict`` stopping the table), or be refused by it after the table had applied
        the other (server/db/unsettled.py)."""
        if self._unsettled.pids:
            async with self.engine.connect() as connection:
                raw = await connection.get_raw_connection()
                await self._unsettled.settle(raw.driver_connection)
        async with self._read() as session:
            row = (
                await session.execute(
                    select(*_ACTION_ROW)
                    .where(MatchAction.match_id == match_id)
                    .order_by(MatchAction.seq.desc())
                    .limit(1)
                )
            ).first()
            return ActionRow(*row) if row is not None else None

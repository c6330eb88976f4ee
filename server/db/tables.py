"""Lobby tables in the database: their rows (``TableRow``) and, in cluster mode, their
fencing tokens (``take_table``: a node that takes a table over makes older writers'
writes ``Fenced``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from server.db.errors import Fenced
from server.db.models import GameTable
from server.db.rows import TableRow
from server.db.transactions import Transactions


def _save_table(row: TableRow, fence: int | None, session: Session) -> None:
    """``Tables.save_table``'s transaction."""
    table = session.get(GameTable, row.id, with_for_update=fence is not None)
    if table is None:
        table = GameTable(id=row.id)
        session.add(table)
    elif fence is not None and table.fence != fence:
        raise Fenced(row.id, fence, table.fence)
    for column, value in row.columns().items():
        setattr(table, column, value)


class Tables(Transactions):
    """The ``Store``'s lobby tables."""

    async def save_table(self, row: TableRow, *, fence: int | None = None) -> None:
        """Insert the table, or update it if its id exists. ``fence``: the writer's fencing
        token (cluster mode): ``Fenced`` unless it is the stored table's. On PostgreSQL one
        statement (server/db/postgres_now.py)."""
        if self._pg_now is not None:
            await self._pg_now.save_table(row, fence)
            return
        await self._write_now(partial(_save_table, row, fence))

    async def load_open_tables(self) -> list[TableRow]:
        """The tables waiting or playing, oldest first."""
        async with self._read() as session:
            tables = await session.scalars(
                select(GameTable)
                .where(GameTable.state.in_(("waiting", "playing")))
                .order_by(GameTable.created_at, GameTable.id)
            )
            return [TableRow.of(t) for t in tables]

    async def take_table(self, table_id: str) -> int:
        """Take the table over (cluster mode): increment its fencing token and return it;
        from then on a write with an older token is ``Fenced``. On PostgreSQL this waits for
        a write in flight with the old token (it holds the row) to commit first, so what the
        new owner then reads of the log is all there will ever be. ``LookupError`` if there
        is no such table."""
        async with self._write() as session:
            fence = await session.scalar(
                update(GameTable)
                .where(GameTable.id == table_id)
                .values(fence=GameTable.fence + 1)
                .returning(GameTable.fence)
            )
            if fence is None:
                raise LookupError(f"no table {table_id!r}")
            return int(fence)

    async def table_fences(self, table_ids: Sequence[str]) -> dict[str, int]:
        """Each table's fencing token (cluster mode: whether another node took a table over
        while this one's lease had lapsed); a table that does not exist is left out."""
        async with self._read() as session:
            rows = await session.execute(
                select(GameTable.id, GameTable.fence).where(GameTable.id.in_(list(table_ids)))
            )
            return {row.id: int(row.fence) for row in rows}

    async def open_table_ids(self) -> list[str]:
        """The ids of the tables waiting or playing (cluster mode: those a node must own)."""
        async with self._read() as session:
            ids = await session.scalars(
                select(GameTable.id).where(GameTable.state.in_(("waiting", "playing")))
            )
            return list(ids)

    async def get_table(self, table_id: str) -> TableRow | None:
        """The stored table ``table_id`` (any state), None if there is none: what
        ``guobiao db check`` reads of a finished match's table (its time cap)."""
        async with self._read() as session:
            table = await session.get(GameTable, table_id)
            return TableRow.of(table) if table is not None else None

    async def max_table_number(self, prefix: str = "t") -> int:
        """The largest N of the stored table ids ``{prefix}N`` (0 if none): a restarted
        server numbers its new tables from there, so no id is reused."""
        async with self._read() as session:
            ids = await session.scalars(
                select(GameTable.id).where(GameTable.id.startswith(prefix, autoescape=True))
            )
            tails = [i[len(prefix) :] for i in ids]
            numbers = [int(t) for t in tails if t.isascii() and t.isdigit()]
            return max(numbers, default=0)

"""The action log's appends on PostgreSQL: one statement, one round trip.

Through SQLAlchemy's transaction an append was four round trips to the database: ``BEGIN``,
the fencing tokens of the rows' tables read ``FOR SHARE``, the ``INSERT``, ``COMMIT``. Each
is a system call on the server's side and a wake-up of the database's process on the other,
and every action a table takes is committed before it is applied (``Store.append_action``).
Here the same rows go as one statement, on the driver's connection (asyncpg's) in
autocommit: a common table expression reads the tables' tokens ``FOR SHARE``, the rows
whose token is their table's are inserted, and the statement returns the tokens it read.

The fencing holds as it did (server/cluster/node.py, "Ownership"): the tables' rows are
locked from the read to the statement's commit, so a takeover's increment of a token waits
for it; a statement that comes after the increment reads the new token (under READ
COMMITTED a row locked ``FOR SHARE`` is read as its newest committed version) and inserts
nothing of the old owner's. A row without a token (one process, no cluster) is inserted
as is. The values are bound by the columns' own SQLAlchemy types (``server.db.binding``:
the JSON column's serializer, ``UTCDateTime``'s check), so the rows stored are those the
Core path stored; a constraint failure is raised as SQLAlchemy's ``IntegrityError``, as
the store expects.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import IntegrityError

from server.db.binding import Binder

# The rows come as one array a column (``unnest``), in the order of ``COLUMNS``, then each
# row's table and token (NULL: none); $1 is the tables whose tokens are read.
COLUMNS = ("match_id", "seq", "hand_no", "player", "action", "created_at", "stand_in")
APPEND = """\
WITH fence AS (
    SELECT id, fence FROM tables WHERE id = ANY($1::varchar[]) FOR SHARE
), kept AS (
    INSERT INTO actions (match_id, seq, hand_no, player, action, created_at, stand_in)
    SELECT r.match_id, r.seq, r.hand_no, r.player, r.action, r.created_at, r.stand_in
    FROM unnest(
        $2::integer[], $3::integer[], $4::integer[], $5::integer[], $6::json[],
        $7::timestamptz[], $8::boolean[], $9::varchar[], $10::integer[]
    ) AS r(match_id, seq, hand_no, player, action, created_at, stand_in, table_id, token)
    WHERE r.table_id IS NULL
        OR r.token = (SELECT f.fence FROM fence f WHERE f.id = r.table_id)
)
SELECT id, fence FROM fence"""


async def insert_rows(
    driver: Any, bind: Binder, rows: list[dict[str, Any]], fence: str
) -> dict[int, int | None]:
    """Insert ``rows`` (dicts by the names of ``COLUMNS``, bound by ``bind``; ``fence``: the
    key of a row's (table id, fencing token), if it has one) in one statement on ``driver``
    (asyncpg's connection, under the log's own), in autocommit: those whose token is not
    their table's are left out and returned (``id(row)`` -> the table's token, None if it is
    gone).
    ``driver`` must not be in a transaction (the statement commits on its own)."""
    keys = [row.get(fence) for row in rows]
    values = list(zip(*(bind(row) for row in rows), strict=True))
    tables = sorted({key[0] for key in keys if key is not None})
    owners = [key[0] if key is not None else None for key in keys]
    tokens = [key[1] if key is not None else None for key in keys]
    try:
        found = await driver.fetch(APPEND, tables, *map(list, values), owners, tokens)
    except Exception as exc:
        if _integrity(exc):
            raise IntegrityError(APPEND, None, exc) from exc
        raise
    read = {row["id"]: row["fence"] for row in found}
    return {
        id(row): read.get(key[0])
        for row, key in zip(rows, keys, strict=True)
        if key is not None and read.get(key[0]) != key[1]
    }


def _integrity(exc: Exception) -> bool:
    """Whether asyncpg refused for a constraint (SQLSTATE class 23: a duplicate ``seq``,
    an unknown match)."""
    return str(getattr(exc, "sqlstate", "") or "").startswith("23")

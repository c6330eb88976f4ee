"""A row's parameters bound as SQLAlchemy binds them, for the action log's own appends.

The action log appends without SQLAlchemy's statement machinery, on the driver's connection
(SQLite: ``server.db.sqlite_log``; PostgreSQL: ``server.db.postgres_log``). Its values are
still bound by the columns' own SQLAlchemy types (``TypeEngine.bind_processor``: the JSON
column's serializer, ``UTCDateTime``'s naive UTC, the dialect's datetime text), so the rows
stored are byte for byte what the ORM path stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import FromClause
from sqlalchemy.engine import Dialect

Binder = Callable[[dict[str, Any]], tuple[Any, ...]]


def binder(table: FromClause, columns: Sequence[str], dialect: Dialect) -> Binder:
    """The function turning a row of ``table`` (a dict by column name) into the parameters
    of ``columns``, in their order, bound as SQLAlchemy binds them on ``dialect``."""
    processors = [table.c[column].type.bind_processor(dialect) for column in columns]

    def bind(row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(
            row[column] if process is None else process(row[column])
            for column, process in zip(columns, processors, strict=True)
        )

    return bind

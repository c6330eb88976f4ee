"""Whether the database takes the store's writes, for ``/healthz``.

A table paused by a failing database says so itself (``Table.writes_failing``), but not every
write is a table's move: a login, a match's end, a rating, a tournament's seating. A probe
that made the data folder read-only found ``/healthz`` saying ``"database": "ok"`` while
every one of those failed (the database answers reads). So the store keeps its own account:
every write that the database fails is told to ``WriteHealth`` (``failed``), every one that
commits too (``worked``), and ``/healthz`` says writes fail while the last one did. The
metrics count the failures (``failures``: ``guobiao_write_failures_total``), so an alert or
a graph sees them between two looks at ``/healthz``, and say whether writes fail now.

A write is counted failed when the database failed it (full, read-only, locked past the
busy timeout, unreachable), not when it was refused for what it asked: a row that breaks a
rule (``IntegrityError``: a name taken, an action's seq taken) or the store's own refusals
(``StoreError``: ``Conflict``, ``Fenced``...) mean the database works.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.exc import DBAPIError, IntegrityError

from server.db.engine import reason
from server.db.errors import StoreError
from server.db.rows import utcnow


def database_failure(exc: BaseException) -> bool:
    """Whether ``exc``, raised by a write, is the database failing it (module docstring):
    SQLAlchemy's errors of the driver, or the driver's own where a write goes past
    SQLAlchemy (sqlite3's, asyncpg's, a lost connection's ``OSError``), but a rule broken."""
    if isinstance(exc, IntegrityError | sqlite3.IntegrityError | StoreError):
        return False
    by_asyncpg = type(exc).__module__.startswith("asyncpg")  # (its own: not imported here)
    return by_asyncpg or isinstance(exc, DBAPIError | sqlite3.Error | OSError)


@dataclass(slots=True)
class WriteHealth:
    """The store's writes lately: since when they fail (``failing_since``, the first
    failure after the last write that worked; None while the last one worked), the last
    failure since the store opened, when and why (kept once writes work again), and how
    many failed since then (``failures``)."""

    failing_since: datetime | None = None
    last_failure: datetime | None = None
    last_reason: str | None = None
    failures: int = 0

    @property
    def failing(self) -> bool:
        """Whether the last write the database was asked to make failed."""
        return self.failing_since is not None

    def worked(self) -> None:
        """A write committed."""
        self.failing_since = None

    def failed(self, exc: BaseException, now: datetime | None = None) -> None:
        """A write raised ``exc`` (at ``now``): counted if the database failed it."""
        if not database_failure(exc):
            return
        now = now or utcnow()
        self.failures += 1
        if self.failing_since is None:
            self.failing_since = now
        self.last_failure, self.last_reason = now, reason(exc)

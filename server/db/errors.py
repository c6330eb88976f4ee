"""The persistence layer's exceptions.

::

    StoreError
    ├── BadDatabaseURL (also ValueError)   the URL does not parse or names no async driver
    ├── CannotRead                         a SQLite database to read only that is not there,
    │                                      or that SQLite cannot read without writing
    ├── UsernameTaken                      a player with that name (in any case) exists
    │   └── UsernameLookalike              ... or with a name that looks alike (``existing``)
    ├── Conflict                           a unique row exists already (action seq, hand) or
    │                                      a row refers to a missing one (unknown match)
    └── Fenced                             a write by a node whose lease on the table moved
                                           on (its fencing token is not the table's)
"""

from __future__ import annotations


class StoreError(Exception):
    """A persistence failure the caller can act on."""


class BadDatabaseURL(StoreError, ValueError):
    """A database URL that cannot be used."""


class CannotRead(StoreError):
    """A SQLite database opened to read only (``make_engine(read_only=True)``) that is not
    there, or that SQLite cannot read without creating a file beside it where it may not."""


class UsernameTaken(StoreError):
    """``create_player`` with a name that exists already (names are case-insensitive)."""


class UsernameLookalike(UsernameTaken):
    """``create_player`` with a name that looks like the existing player ``existing``'s
    (the same ``server.text.skeleton``)."""

    def __init__(self, username: str, existing: str) -> None:
        super().__init__(f"the username {username!r} looks like {existing!r}")
        self.existing = existing


class Conflict(StoreError):
    """An insert that breaks a uniqueness or foreign-key rule."""


class Fenced(StoreError):
    """A write to a table (its log, its row, a new match) with a fencing token that is no
    longer the table's: another node took the table over (cluster mode)."""

    def __init__(self, table_id: str, token: int, current: int | None) -> None:
        now = "it is gone" if current is None else f"its token is {current} now"
        super().__init__(f"table {table_id}: write with fencing token {token} refused ({now})")
        self.table_id = table_id
        self.token = token

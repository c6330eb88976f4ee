"""The persistence layer's exceptions.

::

    StoreError
    ├── BadDatabaseURL (also ValueError)   the URL does not parse or names no async driver
    ├── UsernameTaken                      a player with that name (in any case) exists
    └── Conflict                           a unique row exists already (action seq, hand) or
                                           a row refers to a missing one (unknown match)
"""

from __future__ import annotations


class StoreError(Exception):
    """A persistence failure the caller can act on."""


class BadDatabaseURL(StoreError, ValueError):
    """A database URL that cannot be used."""


class UsernameTaken(StoreError):
    """``create_player`` with a name that exists already (names are case-insensitive)."""


class Conflict(StoreError):
    """An insert that breaks a uniqueness or foreign-key rule."""

"""The table's refusals: ``LobbyError`` with the protocol's error code, and ``StoreDown``
when the database refused a write (nothing was taken, nothing changed)."""

from __future__ import annotations

from server.errors import ServerError


class LobbyError(ServerError):
    """A lobby or table request refused; ``code`` is the protocol's error code."""


class StoreDown(LobbyError):
    """The database refused a write at ``table``: the input was not taken and nothing
    changed (the error names the table: a client that sent an action without an id knows
    which table's move to offer again)."""

    def __init__(self, table: str, reason: str) -> None:
        super().__init__("internal_error", reason, table=table)

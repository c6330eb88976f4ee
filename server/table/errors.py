"""The table's refusals: ``LobbyError`` with the protocol's error code, and ``StoreDown``
when the database refused a write (nothing was taken, nothing changed)."""

from __future__ import annotations

from server.errors import ServerError


class LobbyError(ServerError):
    """A lobby or table request refused; ``code`` is the protocol's error code."""


class StoreDown(LobbyError):
    """The database refused a write: the input was not taken and nothing changed."""

    def __init__(self, reason: str) -> None:
        super().__init__("internal_error", reason)

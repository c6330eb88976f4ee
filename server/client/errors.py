"""What the client raises: ``ClientError`` and its kinds (a refusal, a failed connect, a lost
connection, a request not answered in time, a view that does not decode)."""

from __future__ import annotations


class ClientError(Exception):
    """Anything the client reports."""


class ServerError(ClientError):
    """The server refused a request: an ``error`` message answering it, with the table and
    the match it names, if it names one (``already_seated``, ``table_finished``)."""

    def __init__(
        self, code: str, reason: str, *, table: str | None = None, match: int | None = None
    ) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason
        self.table = table
        self.match = match


class ConnectFailed(ClientError):
    """The server could not be reached, or refused the websocket handshake."""


class ConnectionLost(ClientError):
    """The connection closed (``code`` and ``reason`` of the close frame, when there was one)."""

    def __init__(self, code: int | None, reason: str) -> None:
        detail = f" (code {code}{': ' + reason if reason else ''})" if code else ""
        super().__init__(f"the connection to the server closed{detail}")
        self.code = code
        self.reason = reason


class RequestTimeout(ClientError, TimeoutError):
    """No answer to a request in time."""


class ViewError(ClientError, ValueError):
    """A wire view or event that does not decode (``engine.wire``)."""

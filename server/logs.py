"""Logs on standard error: JSON lines for operators, plain text, or sentences for a person.

``[server] log_format``:

- ``json``: one JSON object per line (what log collectors read);
- ``text``: ``time level logger: message`` lines;
- ``auto`` (the default): a person's terminal (standard error is a terminal) gets ``human``,
  anything else (a service manager, a pipe, a container's log) gets ``json``;
- ``human``: what ``auto`` picks at a terminal: ``HH:MM:SS message`` lines, warnings and
  errors named, and Alembic's line per migration left out (``guobiao serve`` says in one
  sentence what the migrations did).
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import TextIO

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class HumanFormatter(logging.Formatter):
    """``10:09:37 message``, with ``warning:`` or ``error:`` before a message of that level."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(message)s", datefmt="%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if record.levelno >= logging.WARNING:
            stamp, _, message = text.partition(" ")
            return f"{stamp} {record.levelname.lower()}: {message}"
        return text


def resolve(fmt: str, stream: TextIO | None = None) -> str:
    """The format ``fmt`` means here: ``auto`` is ``human`` at a terminal, else ``json``."""
    if fmt != "auto":
        return fmt
    stream = sys.stderr if stream is None else stream
    return "human" if stream.isatty() else "json"


def setup(level: str = "info", fmt: str = "json") -> str:
    """Log at ``level`` in format ``fmt`` (the module's docstring) on standard error; the
    format used (``auto`` resolved)."""
    fmt = resolve(fmt)
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    elif fmt == "human":
        handler.setFormatter(HumanFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("websockets").setLevel(max(logging.WARNING, root.level))
    # A person is told what the migrations did in one sentence (``guobiao serve``).
    alembic_level = max(logging.WARNING, root.level) if fmt == "human" else logging.NOTSET
    logging.getLogger("alembic").setLevel(alembic_level)
    return fmt

"""A table's sources of time and randomness, and its database retry timings, in one
place: every room of ``server.table`` looks them up here at each use (``sources.time``,
``sources.new_match_seed()``...), never binding them at import, so a test replaces one
here (``monkeypatch.setattr(server.table.sources, "time", ...)``) for every table at once.

The rooms that decide (``clock``, ``publish``, ``spectators``, ``core``) take the time as
an argument instead; only the owner task and the few places that stamp a time read it.
"""

from __future__ import annotations

import secrets
import time
from datetime import UTC, datetime

from engine.match import Match

__all__ = [
    "STORE_RETRY_FIRST",
    "STORE_RETRY_MAX",
    "Match",
    "new_match_seed",
    "secrets",
    "time",
]

# A table whose database writes fail tries again after 0.05 s, then twice as long each
# time, up to this long.
STORE_RETRY_FIRST = 0.05
STORE_RETRY_MAX = 2.0


def _monotonic() -> float:
    return time.monotonic()  # looked up at each call: tests replace the module's clock


def _now() -> datetime:
    """The time now, UTC: what a time cap (``TableSettings.ends_at``) is compared with, and
    a finished match's end. (Looked up at each call: tests replace it.)"""
    return datetime.now(UTC)


def new_match_seed() -> int:
    """The seed of a new match: 63 random bits. (Tests replace this function to fix a
    match, so a run with faults can be compared with one without.)"""
    return secrets.randbits(63)

"""PostgreSQL connections that failed while a write may still commit on them.

A statement that got no answer in time (server/db/engine.py's ``answer_wait``) may still
commit: its backend may be stopped, or cut off from the server, with the statement read or
still in its socket, and run it once it goes on. Closing the socket on this side does not
stop it (a test saw a stopped backend, continued, commit an append the log had been told
was not stored). A write sent after it, on another connection, could then be undone by it:
an action's ``seq`` taken from the player's next move, a table's row overwritten by an older
one (``save_table`` writes the whole row), a match made twice.

So the backend of such a connection is remembered (``Unsettled.remember``) and ended
(``pg_terminate_backend``) before what comes after it goes to the database
(``Unsettled.settle``): once it has ended, nothing more of its commits. The action log
settles before it says how a failed append ended (server/db/action_log.py), the short
writes before each write (server/db/postgres_now.py). SQLite is not concerned: a write
there commits or fails in this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

# How long ``settle`` waits for the backends remembered to end.
UNSETTLED_WAIT = 2.0  # seconds

# The backends of ``$1`` still there, each asked to end (``pg_terminate_backend``: a backend
# stopped meanwhile ends when it runs again, before it reads another statement). Only this
# database's: the role may end its own backends, and no other database's is named by a pid
# of ours that ended.
END_BACKENDS = """\
SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity
WHERE pid = ANY($1::int[]) AND datname = current_database()"""


class StillRunning(TimeoutError):
    """A connection that failed, whose backend has not ended within ``UNSETTLED_WAIT``:
    whether its statement committed, or will, is not known until it has. A
    ``TimeoutError``, as the statement's own was: the write that waited for it fails as
    one that got no answer does (its table pauses and tries again later)."""


class Unsettled:
    """The backends of the failed connections of one writer (the action log's, the short
    writes'), whose statements may still commit, until they have ended."""

    def __init__(self, writer: str) -> None:
        self.writer = writer  # who failed, as ``StillRunning`` says it
        self.pids: set[int] = set()

    def remember(self, driver: Any) -> None:
        """asyncpg's connection ``driver`` failed, with its outcome unknown: its backend is
        remembered (its pid read before the socket goes), and its socket is closed now.
        (Closed through SQLAlchemy, it would be closed politely, waiting 2 s for an answer
        that a database that does not answer does not give.)"""
        with contextlib.suppress(Exception):
            self.pids.add(driver.get_server_pid())
        with contextlib.suppress(Exception):
            driver.terminate()

    async def settle(self, driver: Any) -> None:
        """End the backends remembered, through asyncpg's connection ``driver`` (another,
        that works), and wait until they have ended: ``UNSETTLED_WAIT`` seconds at most,
        else ``StillRunning``. Returns at once when none is remembered. (A backend is named
        by its process id: one ended and another begun under the same id within the wait
        would be ended too, a connection like any the database closes.)"""
        if not self.pids:
            return
        end = time.monotonic() + UNSETTLED_WAIT
        while True:
            asked = set(self.pids)
            alive = {row[0] for row in await driver.fetch(END_BACKENDS, sorted(asked))}
            self.pids -= asked - alive
            if not alive:
                return
            if time.monotonic() >= end:
                raise StillRunning(
                    f"{self.writer}'s connection that failed (PostgreSQL backend "
                    f"{min(alive)}) has not ended within {UNSETTLED_WAIT:g} s: whether its "
                    "write committed is not known until it has"
                )
            await asyncio.sleep(0.05)

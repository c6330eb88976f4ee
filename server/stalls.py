"""Noticing that the server did not run: its process stopped (SIGSTOP, a suspended machine or
container) or starved for a while. The tables' clocks ran on meanwhile, though nobody could
act: without this, the first thing the server did on waking was to play the seat of every
player whose turn ran out during the stop, before it read the moves they had sent.

``StallWatch`` ticks in the event loop every ``TICK_SECONDS``; a tick that comes more than
``STALL_SECONDS`` late means the loop did not run for that long, and ``lost(seconds)`` is
called with the time lost: the lobby moves every table's clocks on by it, as a database
pause does, so that the moves read once the server runs again come before any deadline.
(Timers run before the connections' tasks in the loop's first turn after a stop, but a
table acts on its wake-up only in a later turn, after this tick has moved its clocks.)
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

log = logging.getLogger("guobiao.stalls")

TICK_SECONDS = 0.25
STALL_SECONDS = 1.0  # a tick this much later than due: the server did not run


class StallWatch:
    """Calls ``lost(seconds)`` when the event loop did not run for more than
    ``STALL_SECONDS`` (the module's docstring). ``clock``: the monotonic clock."""

    def __init__(
        self, lost: Callable[[float], None], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.lost = lost
        self.clock = clock
        self.last = 0.0
        self.handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self.last = self.clock()
        self.handle = asyncio.get_running_loop().call_later(TICK_SECONDS, self._tick)

    def stop(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None

    def _tick(self) -> None:
        now = self.clock()
        lost = now - self.last - TICK_SECONDS
        if lost > STALL_SECONDS:
            log.warning(
                "the server did not run for %.1f s (its process stopped?): the tables' clocks "
                "move on by that much",
                lost,
            )
            self.lost(lost)
        self.last = now
        self.handle = asyncio.get_running_loop().call_later(TICK_SECONDS, self._tick)

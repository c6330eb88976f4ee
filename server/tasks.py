"""Stopping a background task for good.

The usual ``task.cancel()`` and then ``await task`` under ``suppress(CancelledError)`` has two
faults: a task that swallows the cancellation (a library call inside it that takes it as its
own) goes on running while the caller waits for ever, and the caller's own cancellation, come
while it waits, is swallowed as if it were the task's. ``stop_task`` has neither.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger("guobiao")

RECANCEL_SECONDS = 0.1  # how long a cancelled task has before it is cancelled again


async def stop_task(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and wait until it has ended, cancelling it again as long as it runs.

    The cluster's beat once lost a cancellation somewhere within a beat (which call took it is
    not known) and went on beating, and the node's close, awaiting it, waited a minute for the
    stop's own time limit. A cancellation of the caller meanwhile is the caller's: it is raised,
    not taken for the task's. An exception the task ended with is logged, as nobody else will
    read it."""
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=RECANCEL_SECONDS)
    if not task.cancelled() and (error := task.exception()) is not None:
        log.warning("task %s ended with an error as it stopped", task.get_name(), exc_info=error)

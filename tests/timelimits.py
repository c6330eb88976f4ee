"""Every test has a time limit, and one that hangs says where (loaded by ``tests/conftest.py``).

A test that never ends would hold CI until its own limit and say nothing of where: every
test has a time limit (pytest-timeout, ``timeout`` in pyproject.toml, or a test's
``timeout`` mark), past which it fails with the stacks of what it waits for. The plugin's
"signal" method shows the main thread's stack, which for an asyncio test is the event loop
waiting in ``select``; this hook fails it instead with every task of the loop and every
other thread, where each waits. The plugin's timer stops at the test's first failure, so a
test whose teardown hangs as well is ended by a second one: ``_AFTER_TIMEOUT`` seconds later
the process writes every thread's stack and exits, and xdist reports the worker's crash on
that test and goes on with a new worker. A third, faulthandler's, does the same a minute
after that without needing the GIL.
"""

from __future__ import annotations

import asyncio
import faulthandler
import io
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from typing import Any

import pytest

_AFTER_TIMEOUT = 60.0
_WATCHDOG = "the test's watchdog"
_TIMED_OUT = pytest.StashKey[str]()  # the time limit's failure, once it fired
_LAST_RESORTS = pytest.StashKey[threading.Timer]()  # the test's watchdog, while it runs
_STDERR = pytest.StashKey[int]()  # the process's stderr (during a test fd 2 is pytest's capture)


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_STDERR] = os.dup(2)  # (capture is suspended while pytest configures)


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> bool | None:
    _start_last_resorts(item, settings.timeout)
    if settings.method != "signal" or threading.current_thread() is not threading.main_thread():
        return None  # the plugin's own timer

    def on_timeout(_signum: int, _frame: object) -> None:
        where = _where_everything_waits()
        # (Raised in whatever runs now: a task of the test's loop may take it as its own end,
        # and the test go on to pass. ``pytest_runtest_makereport`` fails it regardless.)
        item.stash[_TIMED_OUT] = f"Timeout: over {settings.timeout:g} s\n{where}"
        pytest.fail(item.stash[_TIMED_OUT], pytrace=False)

    def cancel() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)

    item.cancel_timeout = cancel  # type: ignore[attr-defined]  # (the plugin's protocol)
    signal.signal(signal.SIGALRM, on_timeout)
    signal.setitimer(signal.ITIMER_REAL, settings.timeout)
    return True


def _start_last_resorts(item: pytest.Item, limit: float) -> None:
    """The watchdog, ``_AFTER_TIMEOUT`` past the test's ``limit``; faulthandler's timer a
    minute after it (should a thread hold the GIL and keep both the time limit and the
    watchdog from running). Not faulthandler's timer alone: pytest cancels that at a test's
    first failure (the time limit's, say). Both end with the test (``_stop_last_resorts``),
    not with the plugin's own timer."""
    if limit <= 0 or _LAST_RESORTS in item.stash:
        return
    watchdog = threading.Timer(limit + _AFTER_TIMEOUT, _end_process, (item,))
    watchdog.name = _WATCHDOG
    watchdog.daemon = True
    watchdog.start()
    item.stash[_LAST_RESORTS] = watchdog
    stderr = item.config.stash[_STDERR]
    faulthandler.dump_traceback_later(limit + 2 * _AFTER_TIMEOUT, exit=True, file=stderr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    try:
        yield
    finally:
        watchdog = item.stash.get(_LAST_RESORTS, None)
        if watchdog is not None:
            del item.stash[_LAST_RESORTS]
            watchdog.cancel()
            faulthandler.cancel_dump_traceback_later()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """The phase (setup, call or teardown) in which the time limit fired fails, though the
    exception was taken by another task than the test's."""
    outcome = yield
    report = outcome.get_result()
    timed_out = item.stash.get(_TIMED_OUT, None)
    if timed_out is not None:
        del item.stash[_TIMED_OUT]  # (once: the phases after it are reported as they went)
        if not report.failed:
            report.outcome = "failed"
            report.longrepr = timed_out


def _end_process(item: pytest.Item) -> None:
    stderr = item.config.stash[_STDERR]
    said = f"\n{item.nodeid}: still running {_AFTER_TIMEOUT:g} s past its time limit; ending it\n"
    os.write(stderr, said.encode())
    faulthandler.dump_traceback(file=stderr, all_threads=True)
    os._exit(1)


def _where_everything_waits() -> str:
    """The stacks of the running event loop's tasks and of every other thread."""
    out = io.StringIO()
    try:
        tasks = asyncio.all_tasks(asyncio.get_running_loop())
    except RuntimeError:  # (no loop running: a synchronous test)
        tasks = set()
    for task in tasks:
        out.write(f"--- task {task.get_name()}: {task.get_coro()!r}\n")
        task.print_stack(file=out)
    me = threading.get_ident()
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        if ident != me and names.get(ident) != _WATCHDOG:
            out.write(f"--- thread {names.get(ident, ident)}\n")
            out.write("".join(traceback.format_stack(frame)))
    return out.getvalue()

"""Shared pytest configuration for guobiao's tests.

There is no ``tests/__init__.py``: this root conftest marks the test tree, and pytest runs from
the repository root so ``engine`` and ``server`` import from the working tree.

The suite runs in parallel (``make test``: pytest-xdist, ``-n 4 --dist loadscope
--no-loadscope-reorder``; plain ``pytest``, ``-n 0`` or ``-p no:xdist`` runs it in one
process). Each worker is a process of its own, and every resource a test uses is its own
already: servers listen on port 0, Redis servers and cluster nodes on free ports, files go
under ``tmp_path``, and each session (each worker) makes its own PostgreSQL database.
``loadscope`` sends all the tests of a module to one worker, so a fixture the module's tests
share (``scope="module"``: the wheel built once, a simulation run once) is made once, as in a
serial run.
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
from hypothesis import HealthCheck, settings

# Timing is not what these tests check (the brief: no timing assertions in tests). On a loaded
# machine Hypothesis's own clocks (a 200 ms deadline per example, "data generation is slow")
# would fail a test whose every assertion held, so they are off; examples and assertions are
# unchanged.
settings.register_profile("guobiao", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("guobiao")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker (each collects the same list, in the same order) the tests marked
    ``slow`` come first. The scheduler hands out the modules in the order their first test
    comes (``--no-loadscope-reorder``), so the modules of the minutes-long tests (the wheel,
    the crash tests) start at once instead of last, where they would keep the run waiting.
    A serial run keeps the files' order."""
    if hasattr(config, "workerinput"):  # an xdist worker
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)


# A test that never ends would hold CI until its own limit and say nothing of where: every
# test has a time limit (pytest-timeout, ``timeout`` in pyproject.toml), past which it fails
# with the stacks of what it waits for. The plugin's "signal" method shows the main thread's
# stack, which for an asyncio test is the event loop waiting in ``select``; this hook fails it
# instead with every task of the loop and every other thread, where each waits. The plugin's
# timer stops at the test's first failure, so a test whose teardown hangs as well is ended by
# a second one: ``_AFTER_TIMEOUT`` seconds later the process writes every thread's stack and
# exits, and xdist reports the worker's crash on that test and goes on with a new worker. A
# third, faulthandler's, does the same a minute after that without needing the GIL.
_AFTER_TIMEOUT = 60.0


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> bool | None:
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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    limit = float(item.config.getini("timeout") or 0)
    if limit <= 0:
        yield
        return
    # Not faulthandler's own timer alone: pytest cancels that at a test's first failure (the
    # time limit's, say). It is the last resort, a minute later, should a thread hold the GIL
    # and keep both the time limit and this watchdog from running.
    watchdog = threading.Timer(limit + _AFTER_TIMEOUT, _end_process, (item,))
    watchdog.name = _WATCHDOG
    watchdog.daemon = True
    watchdog.start()
    stderr = item.config.stash[_STDERR]
    faulthandler.dump_traceback_later(limit + 2 * _AFTER_TIMEOUT, exit=True, file=stderr)
    try:
        yield
    finally:
        watchdog.cancel()
        faulthandler.cancel_dump_traceback_later()


_WATCHDOG = "the test's watchdog"
_TIMED_OUT = pytest.StashKey[str]()  # the time limit's failure, once it fired


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    timed_out = item.stash.get(_TIMED_OUT, None)
    if call.when == "call" and timed_out is not None and not report.failed:
        report.outcome = "failed"
        report.longrepr = timed_out


_STDERR = pytest.StashKey[int]()  # the process's stderr (during a test fd 2 is pytest's capture)


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_STDERR] = os.dup(2)  # (capture is suspended while pytest configures)


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

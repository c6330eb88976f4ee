"""The servers the tests start: their settings (tests/server/conftest.py and the tests that
build a ``Config`` of their own: short timers, no rate limit for bots that answer at once),
and the first line ``guobiao serve`` prints, for the tests that run it as a process; a decoy
``server`` package for a working directory its child processes must not import; one table
group of ``guobiao loadtest`` opening its connections otherwise (``group_opens``)."""

from __future__ import annotations

import asyncio
import contextvars
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from server.app import App
from server.cli.loadtest.bots import Run
from server.client import Client
from server.config import LimitsSection, TimersSection

TEST_TIMERS = TimersSection(
    turn_seconds=3,
    min_turn_seconds=1,
    disconnected_seconds=0.2,
    hand_pause_seconds=0,
    unattended_move_seconds=0,  # tables nobody watches play at full speed in tests
    restart_grace_seconds=0.5,
    claim_window_ms=0,  # windows are still held; tests that time them set their own
)
# The bots answer at once: let them (tests that check the rate limit ask for the defaults).
# Every test client comes from 127.0.0.1, and some make many tables: no limit on the tables
# waiting for players (the tests of those limits set their own).
TEST_LIMITS = LimitsSection(
    messages_per_second=10_000,
    message_burst=10_000,
    waiting_tables_per_account=0,
    waiting_tables_per_address=0,
)

# The ``start_server`` fixture (tests/server/conftest.py): ``await start_server(...)``.
StartServer = Callable[..., Awaitable[App]]

SERVING = re.compile(r"guobiao serving on ws://127\.0\.0\.1:(\d+)/ws \(play in a browser: ")


def served_port(line: str) -> int | None:
    """The port in ``guobiao serve``'s first line (``guobiao serving on
    ws://127.0.0.1:PORT/ws (play in a browser: http://127.0.0.1:PORT/, ...``); None for any
    other line (the server died, or printed something else)."""
    found = SERVING.match(line)
    return int(found[1]) if found else None


def decoy_checkout(folder: Path) -> Path:
    """A ``server`` package in ``folder`` that fails when imported, as a source checkout
    without its built parts (``server.config_files``) did."""
    (folder / "server").mkdir()
    (folder / "server" / "__init__.py").write_text(
        'raise ImportError("the server package of the working directory was imported")\n'
    )
    return folder


def group_opens(
    monkeypatch: pytest.MonkeyPatch, group: int, instead: Callable[[Run], Awaitable[Client | None]]
) -> None:
    """``guobiao loadtest``'s table group ``group`` opens each of its connections with
    ``instead(run)`` (a login refused, one that never finishes), the other groups as ever."""
    chosen: contextvars.ContextVar[bool] = contextvars.ContextVar("chosen", default=False)
    real_group, real_open = Run.table_group, Run.open

    async def table_group(run: Run, index: int, gate: asyncio.Semaphore) -> None:
        chosen.set(index == group)  # (the group's own task: its opens see it)
        await real_group(run, index, gate)

    async def open_(run: Run) -> Client | None:
        return await (instead(run) if chosen.get() else real_open(run))

    monkeypatch.setattr(Run, "table_group", table_group)
    monkeypatch.setattr(Run, "open", open_)

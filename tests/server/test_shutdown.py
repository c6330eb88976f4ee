"""Stopping the server stops every table at once: none makes another move once told.

The lobby used to stop its tables one after another, each waiting for its table's task to
reach its next input; meanwhile every table not yet told went on playing its stand-in
bots, so each stop waited a turn of the event loop in which every other table moved.
With 2,000 tables of stand-ins (8,000 connections closed at once, docs/performance.md's
load) ``guobiao serve`` did not stop within a minute of SIGTERM.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from faultkit import CONFIG, HUMAN, bot_match, wait_for

from server.config import Config, LimitsSection
from server.db.store import Store, upgrade
from server.lobby import Lobby

TABLES = 8


@pytest_asyncio.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'guobiao.db'}"
    await upgrade(url)
    opened = await Store.open(url)
    for n in range(TABLES):
        await opened.create_player(f"{HUMAN}{n}", None, True)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.mark.asyncio
async def test_no_table_moves_once_the_lobby_shuts_down(store: Store) -> None:
    """Eight tables of fast bots and a stand-in, unpaced: from the moment ``shutdown`` is
    called, no table applies another action, but for one whose append was already on its
    way to the database (at most one each)."""
    config = Config(timers=CONFIG.timers, limits=LimitsSection(max_tables=TABLES))
    lobby = Lobby(config, store)
    tables = [await bot_match(lobby, human=f"{HUMAN}{n}") for n in range(TABLES)]
    await wait_for(lambda: all(t.log_seq >= 20 for t in tables), 60, "20 actions a table")
    before = [t.log_seq for t in tables]
    await lobby.shutdown()  # (nothing runs between reading the logs and this call)
    after = [t.log_seq for t in tables]
    moved = [a - b for a, b in zip(after, before, strict=True)]
    assert all(m <= 1 for m in moved), f"actions applied after shutdown began, by table: {moved}"
    assert all(t.task is None or t.task.done() for t in tables)

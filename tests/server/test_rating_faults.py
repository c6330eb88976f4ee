"""A rated match is rated exactly once, whatever fails (issue 11, "Reliability").

The rating is written in the transaction that finishes the match, so there is no moment
between "the match ended" and "the ratings moved": a failure inside the rating update rolls
the finish back too, and the table tries again; a finish that committed but whose reply was
lost is retried and does nothing; a server killed (SIGKILL) at any point, the last moments of
the match included, resumes the match after a restart and rates it once. Each test then
checks the stored figures against ``recompute`` and the counts against one match.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fakes import QUICK, FakePeer
from faultkit import FailNth, FaultyStore, finished, match_of, wait_for, write_config
from sqlalchemy import func, select

import server.db.matches
import server.table
from server.config import Config, LimitsSection
from server.db.models import MatchPlayer, Player, RatingChange, Season
from server.db.store import Store, TableRow, upgrade
from server.lobby import Lobby
from server.table import JoinInput, LeaveInput

REPO = Path(__file__).resolve().parents[2]
NAMES = ["faults_ann", "faults_bob", "faults_cat", "faults_dan"]
SEED = 20261201
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
CONFIG = Config(timers=QUICK, limits=LimitsSection(max_tables=10))


@pytest.fixture(autouse=True)
def fixed_seed_and_quick_retries(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(server.table.sources, "new_match_seed", lambda: SEED)
    monkeypatch.setattr(server.table.sources, "STORE_RETRY_FIRST", 0.01)
    monkeypatch.setattr(server.table.sources, "STORE_RETRY_MAX", 0.05)
    yield


async def sqlite_store(tmp_path: Path) -> Store:
    url = f"sqlite+aiosqlite:///{tmp_path / 'ladder.db'}"
    await upgrade(url)
    store = await Store.open(url)
    for name in NAMES:
        await store.create_player(name, "x" * 60, False, now=T0)
    return store


async def rated_bot_match(lobby: Lobby) -> str:
    """A rated one-hand table: the four accounts join and leave at once, so the server plays
    every seat (the match is fixed by its seed)."""
    table = await lobby.create(None, None, False, rated=True, hands=1)
    peers = [FakePeer(name) for name in NAMES]
    for i, peer in enumerate(peers):
        await table.queue.put(JoinInput(peer, i, i, None))
    for i, peer in enumerate(peers):
        await table.queue.put(LeaveInput(peer, 10 + i))
    return table.id


async def rated_once(store: Store, match_id: int) -> None:
    """The match made exactly one rating change per player, the season counts it once, each
    account's counts hold one match, and recompute agrees with every stored figure."""
    async with store._read() as session:
        changes = await session.scalar(
            select(func.count()).where(RatingChange.match_id == match_id)
        )
        season = await session.scalar(select(Season))
        matches = list(await session.scalars(select(Player.matches).order_by(Player.id)))
    assert changes == 4
    assert season is not None and season.rated_matches == 1
    assert matches == [1, 1, 1, 1]
    board = await store.ladder.leaderboard("mcr", provisional="all")
    assert board is not None and [p["matches"] for p in board["players"]] == [1, 1, 1, 1]
    assert (await store.ladder.recompute(fix=False)).equal


@pytest.mark.asyncio
@pytest.mark.parametrize("when", ["before", "after"])
async def test_a_failed_finish_is_retried_and_rated_once(tmp_path: Path, when: str) -> None:
    """The finishing transaction fails (``before``: nothing written; ``after``: committed,
    but the table is told it failed) twice; the table tries again until it works."""
    store = await sqlite_store(tmp_path)
    faulty = FaultyStore(store, FailNth(1, times=2, when=when, methods=("finish_match",)))
    lobby = Lobby(CONFIG, faulty)  # type: ignore[arg-type]
    try:
        table_id = await rated_bot_match(lobby)
        match_id = await match_of(store, table_id)
        await finished(store, match_id)
        # (with ``after`` the match is stored finished at the first try: wait for the retry
        # that works, however late a loaded machine runs it)
        await wait_for(lambda: faulty.done.get("finish_match"), 30, "a finish that works")
        assert (faulty.faults, faulty.counts["finish_match"]) == (2, 3)
        await rated_once(store, match_id)
    finally:
        await lobby.shutdown()
        await store.close()


@pytest.mark.asyncio
async def test_a_crash_inside_the_rating_update_rolls_the_finish_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rating update fails after the match row, its players' counts and grades were
    changed in the same transaction: none of it is stored (the match is still in play, no
    grade moved); the retry finishes and rates it, once."""
    store = await sqlite_store(tmp_path)
    real = server.db.matches.rate_match
    calls: list[int] = []
    crashed, checked = asyncio.Event(), asyncio.Event()

    async def crashing(session: Any, match: Any, **kwargs: Any) -> list[dict[str, Any]]:
        calls.append(match.id)
        if len(calls) == 1:
            crashed.set()
            raise ConnectionError("injected: the process dies in the rating update")
        await checked.wait()  # the retry waits until the test has looked
        return await real(session, match, **kwargs)

    monkeypatch.setattr(server.db.matches, "rate_match", crashing)
    lobby = Lobby(CONFIG, store)
    try:
        table_id = await rated_bot_match(lobby)
        match_id = await match_of(store, table_id)
        await asyncio.wait_for(crashed.wait(), 60)
        row = await store.get_match(match_id)
        assert row is not None and row.ended_at is None and row.final_scores is None
        async with store._read() as session:
            assert await session.scalar(select(func.sum(Player.matches))) == 0
            assert await session.scalar(select(func.count()).select_from(RatingChange)) == 0
            assert await session.scalar(select(func.count()).select_from(MatchPlayer)) == 0
        checked.set()
        await finished(store, match_id)
        assert len(calls) == 2
        await rated_once(store, match_id)
    finally:
        await lobby.shutdown()
        await store.close()


# --------------------------------------------------------------- SIGKILL ---


def count(path: Path, query: str, *args: Any) -> int:
    with contextlib.closing(sqlite3.connect(path, timeout=30)) as db:
        return int(db.execute(query, args).fetchone()[0])


@pytest.mark.slow
@pytest.mark.asyncio
async def test_sigkill_near_the_end_of_a_rated_match(tmp_path: Path) -> None:
    """``guobiao serve`` plays a stored rated two-hand match of four absent accounts; it is
    killed at a dozen points (the last ones while the final hand is being stored and the
    match finished), restarted each time; the match is rated exactly once."""
    path = tmp_path / "data" / "guobiao.db"
    path.parent.mkdir()
    url = f"sqlite+aiosqlite:///{path}"
    await upgrade(url)
    store = await Store.open(url)
    try:
        for name in NAMES:
            await store.create_player(name, "x" * 60, False, now=T0)
        now = datetime.now(UTC)
        row = TableRow("t1", "mcr", 15, False, None, NAMES, now, "playing", hands=2, rated=True)
        await store.save_table(row)
        match_id = await store.create_match(
            "t1", "mcr", SEED, "00" * 32, NAMES, now, hands_planned=2, rated=True
        )
    finally:
        await store.close()
    config = write_config(tmp_path, url)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GUOBIAO_")}
    rng = random.Random(SEED)
    # Kill points by stored actions early on, then "hands stored" points at the very end.
    points: list[tuple[str, int]] = [("actions", n) for n in sorted(rng.sample(range(5, 150), 8))]
    points += [("hands", 1), ("hands", 2)]
    kills = starts = 0
    started = time.monotonic()
    logs = tmp_path / "serve.log"
    ended = "SELECT count(*) FROM matches WHERE id = ? AND ended_at IS NOT NULL"
    while not count(path, ended, match_id):
        with open(logs, "a", encoding="utf-8") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "server", "serve", "--config", str(config)],
                cwd=REPO,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        starts += 1
        try:
            while not count(path, ended, match_id):
                if process.poll() is not None:
                    pytest.fail(f"guobiao serve exited ({process.returncode}):\n{logs.read_text()}")
                if points:
                    what, n = points[0]
                    table = "actions" if what == "actions" else "hands"
                    if count(path, f"SELECT count(*) FROM {table}") >= n:
                        process.send_signal(signal.SIGKILL)
                        kills += 1
                        points.pop(0)
                        break
                await asyncio.sleep(0.001)
            assert starts < 40 and time.monotonic() - started < 300, logs.read_text()[-3000:]
        finally:
            if process.poll() is None:
                process.terminate()
            process.wait(30)
    print(f"\n[ladder faults] SIGKILL: {kills} kills, {starts} starts")
    assert kills >= 8
    store = await Store.open(url)
    try:
        await rated_once(store, match_id)
    finally:
        await store.close()

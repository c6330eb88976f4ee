"""A tournament survives the server being killed (SIGKILL) in the middle of its sessions:
``guobiao serve`` runs as a subprocess, is killed while the session's tables play, and
started again on the same database. Every table of the session resumes and finishes, the
session and the tournament go on, and each table's result counts exactly once: the
standings equal an independent computation from the stored matches, each of which replays
to its stored result (docs/tournaments.md, "Reliability")."""

from __future__ import annotations

import asyncio
import re
import signal
import sqlite3
from collections.abc import Awaitable, Callable
from fractions import Fraction
from pathlib import Path

import pytest
from faultkit import write_config
from test_server_recovery import ServerProcess, serve  # noqa: F401 (serve: its fixture)
from tournamentkit import PASSWORD, ask, table_points, until_finished

from server.client import Client
from server.config import Config
from server.db.store import Store, upgrade
from server.lobby import replay_log

DIRECTOR = "tf_director"
PLAYERS = [f"tf_p{i}" for i in range(8)]

pytestmark = pytest.mark.asyncio


def count(path: Path, sql: str) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute(sql).fetchone()[0])


async def director_of(url: str, first: bool) -> Client:
    client = await Client.connect(url, rate=None)
    if first:
        await client.register(DIRECTOR, PASSWORD)
    else:
        await client.login(DIRECTOR, PASSWORD)
    return client


async def test_sigkill_mid_session_then_restart_counts_every_table_once(
    tmp_path: Path,
    serve: Callable[..., Awaitable[ServerProcess]],  # noqa: F811 (the fixture imported above)
) -> None:
    path = tmp_path / "guobiao.db"
    url = f"sqlite+aiosqlite:///{path}"
    await upgrade(url)
    store = await Store.open(url)
    try:  # players nobody connects for: the server plays their seats
        for name in PLAYERS:
            await store.create_player(name, "x" * 60, False)
    finally:
        await store.close()
    config = write_config(tmp_path, url)
    # The tables' automatic moves paced (10 ms each) so that a match lasts seconds: at full
    # speed one could end before this test, polling the database, saw it begin (seen in CI
    # on a loaded machine once hands were stored in the event loop), and the kill would no
    # longer be mid-match.
    paced, found = re.subn(
        r"^unattended_move_seconds = 0\b",
        "unattended_move_seconds = 0.01",
        config.read_text(),
        count=1,
        flags=re.MULTILINE,
    )
    assert found == 1, "write_config no longer sets unattended_move_seconds"
    config.write_text(paced + f'\n[tournaments]\ndirectors = "{DIRECTOR}"\n')
    kills = 0
    served = await serve(config)
    director = await director_of(served.url, first=True)
    tid = (
        await ask(
            director,
            "tournament_create",
            name="Crash",
            sessions=2,
            hands=4,
            turn_seconds=5,
            check_in=False,
        )
    )["id"]
    await ask(director, "tournament_add_players", tournament=tid, players=PLAYERS)
    for number in (1, 2):
        await ask(director, "tournament_seat", tournament=tid)
        await ask(director, "tournament_start_session", tournament=tid)
        # Killed once the session's tables have stored some actions (mid-match).
        before = count(path, "SELECT count(*) FROM actions")
        for _ in range(20_000):
            if count(path, "SELECT count(*) FROM actions") >= before + 60:
                break
            await asyncio.sleep(0.001)
        await director.close()
        served.process.send_signal(signal.SIGKILL)
        served.process.wait(10)
        kills += 1
        finished = (
            "SELECT count(*) FROM matches JOIN tournament_tables USING (table_id) "
            f"WHERE session = {number} AND ended_at IS NOT NULL"
        )
        assert count(path, finished) == 0, "killed once a table had finished, not mid-match"
        served = await serve(config)
        director = await director_of(served.url, first=False)
        body = await until_finished(director, tid, number, seconds=120)
    await director.close()
    assert body["state"] == "finished" and kills == 2

    # Each session has its two tables, each one match, finished once; the standings are
    # the table points and scores of those matches, recomputed here.
    store = await Store.open(url)
    try:
        tables = await store.tournaments.tables(tid)
        assert [(t.session, t.number) for t in tables] == [(1, 1), (1, 2), (2, 1), (2, 2)]
        points: dict[str, Fraction] = {}
        scores: dict[str, int] = {}
        presets = Config().rule_presets()
        for t in tables:
            matches = await store.table_matches(t.table_id)
            assert len(matches) == 1 and matches[0].ended_at is not None
            stored = matches[0]
            replayed = replay_log(stored, await store.match_actions(stored.id), presets)
            assert list(replayed.scores) == list(stored.final_scores or ())
            assert t.hands_played == 4
            for name, tp, score in zip(
                stored.seats,
                table_points(list(stored.final_scores or ())),
                stored.final_scores or (),
                strict=True,
            ):
                points[name] = points.get(name, Fraction(0)) + tp
                scores[name] = scores.get(name, 0) + score
    finally:
        await store.close()
    got = {r["player"]: (Fraction(r["table_points"]), r["score"]) for r in body["standings"]}
    assert got == {p: (points[p], scores[p]) for p in points}
    print(f"\n[tournament faults] SIGKILL: {kills} kills mid-session; 4 tables, each counted once")

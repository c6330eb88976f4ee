"""A whole tournament of bots on one server: 64 players, 4 sessions of 16 tables at once.

    .venv/bin/python benchmarks/bench_tournament.py [--players 64] [--sessions 4] [--hands 16]

An in-process ``guobiao serve`` (the production timers, but no pause between hands and
no pacing of unattended tables) on a fresh SQLite file in a temporary folder. The players
are registered accounts nobody connects for: the server plays every seat with its default
bot, as it plays an absent player's. A director's network client creates the tournament,
registers the players, and seats and starts each session (``avoid`` after a ``random``
first); every table of a session plays at once. Printed per session: its tables, the wall
time from start to its last table's end, hands played; then the whole event's time, the
repeat pairings and wind imbalance of the seating, and the check that every table's match
finished with the result its stored action log replays to (``server.lobby.replay_log``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from server.app import App
from server.client import Client
from server.config import (
    Config,
    DatabaseSection,
    LimitsSection,
    ServerSection,
    TimersSection,
    TournamentsSection,
)
from server.lobby import replay_log
from server.tournaments.seating import report
from server.tournaments.views import seating_of

DIRECTOR = "bench_director"
PASSWORD = "correct horse battery"


async def run(players: int, sessions: int, hands: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="guobiao-bench-tournament-"))
    config = Config(
        server=ServerSection(host="127.0.0.1", port=0, data_dir=str(folder)),
        database=DatabaseSection(url=f"sqlite+aiosqlite:///{folder / 'guobiao.db'}"),
        timers=dataclasses.replace(
            TimersSection(),
            hand_pause_seconds=0,
            unattended_move_seconds=0,
            disconnected_seconds=0,
            restart_grace_seconds=0,  # an absent player's seat is played from the start
            claim_window_ms=0,
        ),
        limits=LimitsSection(messages_per_second=10_000, message_burst=10_000),
        tournaments=TournamentsSection(directors=DIRECTOR),
    )
    app = App(config)
    await app.start()
    names = [f"bench_p{i:03d}" for i in range(players)]
    for name in names:
        await app.store.create_player(name, "x" * 60, False)
    director = await Client.connect(f"ws://127.0.0.1:{app.port}/ws", rate=None)
    await director.register(DIRECTOR, PASSWORD)
    try:
        made = await director.request(
            "tournament_create",
            {"name": "Bench", "sessions": sessions, "hands": hands, "check_in": False},
        )
        tid = made.payload["id"]
        await director.request("tournament_add_players", {"tournament": tid, "players": names})
        print(f"{players} players, {sessions} sessions of {hands}-hand matches, every seat a bot")
        started_all = time.perf_counter()
        for number in range(1, sessions + 1):
            await director.request("tournament_seat", {"tournament": tid})
            started = time.perf_counter()
            await director.request("tournament_start_session", {"tournament": tid})
            while True:
                body = (await director.request("tournament_get", {"tournament": tid})).payload
                if body["sessions"][number - 1]["state"] == "finished":
                    break
                await asyncio.sleep(0.05)
            seconds = time.perf_counter() - started
            tables = body["sessions"][number - 1]["tables"]
            print(f"session {number}: {tables} tables at once, {seconds:.1f} s")
        total = time.perf_counter() - started_all
        rows = await app.store.tournaments.sessions(tid)
        history = [seating_of(r) for r in rows]
        summary = report(history)
        tables = await app.store.tournaments.tables(tid)
        presets = app.lobby.presets if app.lobby else {}
        same = 0
        for t in tables:
            stored = (await app.store.table_matches(t.table_id))[-1]
            match = replay_log(stored, await app.store.match_actions(stored.id), presets)
            same += list(match.scores) == list(stored.final_scores or ())
        played = sum(t.hands_played for t in tables)
        print(
            f"the event: {total:.1f} s, {len(tables)} tables, {played} hands "
            f"({played / total:.0f} hands/s); seating: {summary.repeat_pairings} repeat "
            f"pairing(s), wind imbalance {summary.wind_imbalance}"
        )
        print(
            f"replays: {same} of {len(tables)} tables finished with the result their log replays to"
        )
    finally:
        await director.close()
        await app.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=64)
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--hands", type=int, default=16)
    args = parser.parse_args()
    asyncio.run(run(args.players, args.sessions, args.hands))


if __name__ == "__main__":
    main()

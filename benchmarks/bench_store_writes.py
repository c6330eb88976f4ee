"""What seating players costs the database layer: guest logins and a table's saves, CPU each.

Seating thousands of players at once (a server's start, a tournament session, a load test)
is mostly writes: each guest's account and login session, each table's row as it is made,
as each player sits and as its match starts. This measures them on a fresh SQLite database
(the embedded default, migrated; ``--postgres URL`` for a PostgreSQL server's scratch
database instead), in this process, through the ``Store`` the server uses:

- ``guests``: ``--guests`` guest logins (``server.accounts.guest``), ``--concurrency`` at a
  time (as many connections logging in at once): the process's CPU (every thread: the
  driver's included) per login, and how many names the database refused because a guest
  had it (``refused``: each a try lost, and a read to say why);
- ``tables``: ``--tables`` tables seated as the lobby seats them: saved new and empty, saved
  again as each of four players sits, and once more as its match starts (six saves), the
  same concurrency: CPU per table;
- ``matches``: a match started at each of those tables (``Store.create_match``), with the
  table's fencing token as a cluster node gives it (checked in the same write), the same
  concurrency: CPU per match;
- ``hands``: ``--hands`` finished hands stored (``Store.finish_hand``), one match's sixteen
  records (played by the fast bots, seed fixed) over and over, each time in a match of its
  own, the same concurrency: CPU per hand (the match's creation not counted);
- ``appends``: ``--appends`` actions appended to the log (``Store.append_action``, a discard
  each), over as many matches as ``--concurrency``, the same concurrency: CPU per action.

``--other TREE`` runs the same in another checkout (a child process whose ``server`` is that
tree's), in turns with this one, ``--runs`` times each, and prints each run and the ratios
of the medians. Figures only; nothing is asserted.

    .venv/bin/python benchmarks/bench_store_writes.py [--guests 4000] [--tables 1000]
        [--hands 2000] [--appends 20000] [--concurrency 32] [--runs 3] [--other TREE]
        [--postgres URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchkit import ab_trees

_NOW = datetime.now(UTC)


async def _timed(
    count: int, concurrency: int, job: Callable[[int], Awaitable[object]]
) -> dict[str, Any]:
    """``job(0)`` .. ``job(count - 1)``, ``concurrency`` at a time: the process's CPU per job
    (ms, every thread's) and the wall time (s)."""
    left = iter(range(count))

    async def worker() -> None:
        for n in left:
            await job(n)

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - started
    return {"cpu_ms": 1000 * cpu / count, "wall_s": wall}


async def _guests(store: Any, count: int, concurrency: int) -> dict[str, Any]:
    from server import accounts  # noqa: PLC0415 (the tree the child runs in)

    tries = 0
    named = accounts.guest_name  # called for each try at a free name

    def counted(*args: Any, **kwargs: Any) -> str:
        nonlocal tries
        tries += 1
        return named(*args, **kwargs)

    accounts.guest_name = counted
    timed = await _timed(count, concurrency, lambda _: accounts.guest(store, 3))
    return {**timed, "refused": tries - count}


async def _tables(store: Any, count: int, concurrency: int) -> dict[str, Any]:
    from server.db.rows import TableRow  # noqa: PLC0415 (the tree the child runs in)

    async def seat(n: int) -> None:
        seats: list[str | None] = [None] * 4
        row = TableRow(f"bench{n:06d}", "mcr", 30, False, None, seats, _NOW)
        await store.save_table(row)
        for place in range(4):
            seats[place] = f"guest-{n:06d}{place}"
            row = TableRow(f"bench{n:06d}", "mcr", 30, False, None, seats, _NOW)
            await store.save_table(row)
        playing = TableRow(f"bench{n:06d}", "mcr", 30, False, None, seats, _NOW, "playing")
        await store.save_table(playing)

    return await _timed(count, concurrency, seat)


async def _matches(store: Any, count: int, concurrency: int) -> dict[str, Any]:
    """A match at each of ``_tables``' tables, its token given (cluster mode's write)."""
    seats = ["a", "b", "c", "d"]

    async def start(n: int) -> None:
        await store.create_match(f"bench{n:06d}", "mcr", n, "00", seats, _NOW, fence=0)

    return await _timed(count, concurrency, start)


async def _new_matches(store: Any, name: str, count: int) -> list[int]:
    """``count`` new matches (their ids), at tables ``NAME000000``, ``NAME000001``..."""
    seats = ["a", "b", "c", "d"]
    return [
        await store.create_match(f"{name}{n:06d}", "mcr", n, "00", seats, _NOW)
        for n in range(count)
    ]


async def _hands(store: Any, count: int, concurrency: int) -> dict[str, Any]:
    # (the tree the child runs in:)
    from engine.bots.fast import FastBot  # noqa: PLC0415
    from engine.simulation import play_match  # noqa: PLC0415

    records = play_match(7, [FastBot() for _ in range(4)]).records
    matches = await _new_matches(store, "hands", -(-count // len(records)))

    async def finish(n: int) -> None:
        record = records[n % len(records)]
        await store.finish_hand(
            matches[n // len(records)], record.hand_no, record.to_dict(), record.result.deltas
        )

    return await _timed(count, concurrency, finish)


async def _appends(store: Any, count: int, concurrency: int) -> dict[str, Any]:
    matches = await _new_matches(store, "log", concurrency)
    discard = {"type": "discard", "tile": "5m"}

    async def append(n: int) -> None:
        seq, match = divmod(n, concurrency)
        await store.append_action(matches[match], seq + 1, 1, seq % 4, discard)

    return await _timed(count, concurrency, append)


async def child(args: argparse.Namespace) -> dict[str, Any]:
    """One run on a fresh database (this process's ``server``: the tree it runs in)."""
    from server.db.migrate import upgrade  # noqa: PLC0415 (the tree the child runs in)
    from server.db.store import Store  # noqa: PLC0415 (the tree the child runs in)

    with tempfile.TemporaryDirectory(prefix="guobiao-writes-") as folder:
        if args.postgres:
            sys.path.insert(0, str(Path.cwd() / "tests"))
            import pgkit  # noqa: PLC0415 (the tree the child runs in)

            url = await pgkit.create_database("guobiao_bench_writes", args.postgres)
        else:
            url = f"sqlite+aiosqlite:///{folder}/guobiao.db"
        try:
            await upgrade(url)
            store = await Store.open(url)
            try:
                guests = await _guests(store, args.guests, args.concurrency)
                tables = await _tables(store, args.tables, args.concurrency)
                matches = await _matches(store, args.tables, args.concurrency)
                hands = await _hands(store, args.hands, args.concurrency)
                appends = await _appends(store, args.appends, args.concurrency)
            finally:
                await store.close()
        finally:
            if args.postgres:
                await pgkit.drop_database(url, args.postgres)
    return {
        "guests": guests,
        "tables": tables,
        "matches": matches,
        "hands": hands,
        "appends": appends,
    }


def run_in(tree: Path, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child"]
    command += ["--guests", str(args.guests), "--tables", str(args.tables)]
    command += ["--hands", str(args.hands), "--appends", str(args.appends)]
    command += ["--concurrency", str(args.concurrency)]
    if args.postgres:
        command += ["--postgres", args.postgres]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"the run in {tree} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--guests", type=int, default=4000)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--appends", type=int, default=20000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--other", type=Path, help="another checkout to compare (A/B)")
    parser.add_argument("--postgres", help="a PostgreSQL server's URL (default: SQLite)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(child(args))))
        return
    trees = ab_trees(args.other)
    database = "PostgreSQL" if args.postgres else "SQLite"
    print(
        f"{args.guests} guest logins, then {args.tables} tables seated (six saves each), "
        f"then {args.hands} hands stored, then {args.appends} actions appended, "
        f"{args.concurrency} at a time, {database}, {args.runs} run(s) a tree, in turns"
    )
    print(
        f"{'tree':6} {'run':>3} {'login CPU ms':>12} {'wall s':>7} {'refused':>8} "
        f"{'table CPU ms':>12} {'wall s':>7} {'match CPU ms':>12} {'wall s':>7} "
        f"{'hand CPU ms':>11} {'wall s':>7} "
        f"{'append CPU ms':>13} {'wall s':>7} {'load':>5}"
    )
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for run in range(1, args.runs + 1):
        for name, tree in trees.items():
            result = run_in(tree, args)
            results[name].append(result)
            g, t, m, h, a = (result[k] for k in ("guests", "tables", "matches", "hands", "appends"))
            print(
                f"{name:6} {run:>3} {g['cpu_ms']:>12.3f} {g['wall_s']:>7.1f} "
                f"{g['refused']:>8} {t['cpu_ms']:>12.3f} {t['wall_s']:>7.1f} "
                f"{m['cpu_ms']:>12.3f} {m['wall_s']:>7.1f} "
                f"{h['cpu_ms']:>11.3f} {h['wall_s']:>7.1f} "
                f"{a['cpu_ms']:>13.4f} {a['wall_s']:>7.1f} "
                f"{os.getloadavg()[0]:>5.2f}",
                flush=True,
            )
    for name in trees:
        logins = [r["guests"]["cpu_ms"] for r in results[name]]
        tables = [r["tables"]["cpu_ms"] for r in results[name]]
        matches = [r["matches"]["cpu_ms"] for r in results[name]]
        hands = [r["hands"]["cpu_ms"] for r in results[name]]
        appends = [r["appends"]["cpu_ms"] for r in results[name]]
        print(
            f"{name}: login {statistics.median(logins):.3f} ms CPU (median; "
            f"{min(logins):.3f}-{max(logins):.3f}), table {statistics.median(tables):.3f} ms "
            f"({min(tables):.3f}-{max(tables):.3f}), match {statistics.median(matches):.3f} ms "
            f"({min(matches):.3f}-{max(matches):.3f}), hand {statistics.median(hands):.3f} ms "
            f"({min(hands):.3f}-{max(hands):.3f}), append {statistics.median(appends):.4f} ms "
            f"({min(appends):.4f}-{max(appends):.4f})"
        )
    if "other" in trees:
        for what in ("guests", "tables", "matches", "hands", "appends"):
            this = statistics.median(r[what]["cpu_ms"] for r in results["this"])
            other = statistics.median(r[what]["cpu_ms"] for r in results["other"])
            print(f"{what}: this/other x{this / other:.2f} (CPU, medians)")


if __name__ == "__main__":
    main()

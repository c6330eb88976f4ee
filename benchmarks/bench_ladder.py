"""The ladder at scale: leaderboard pages, player pages and recompute over a big season.

Seeds ``--players`` accounts and ``--matches`` rated matches among them into one season of
the ``mcr`` ladder (``benchmarks/ladder_seed.py``: bulk rows, rated exactly as the server
rates them), on a fresh SQLite file and on a fresh PostgreSQL database (created and dropped
here, on the server of ``GUOBIAO_TEST_POSTGRES_URL``, default
``postgresql+asyncpg://postgres@127.0.0.1:5432/test``), or on ``--database URL`` alone (an
empty database). Then, on each:

1. leaderboard pages of 50 through ``Store.ladder.leaderboard`` and through the HTTP API of
   a server (``server.app.App``) running in this process on that database: the first page,
   a middle page (offset 50,000, or the middle of a smaller board), the last page,
   ``provisional=true``, ``provisional=all`` (first page and offset 50,000), a name search
   (``q=``: a common prefix, and a whole name) and player pages (a mid-table player and the
   busiest one: rank and history): median and p95 milliseconds over ``--runs`` runs;
2. ``recompute`` over the season, check only and fixing: seconds, matches per second, and
   whether everything was equal (it must be, on seeded data); then the same through the
   command, ``guobiao ladder recompute [--check]``, in a child process.

On PostgreSQL the load is followed by ``VACUUM ANALYZE``, what autovacuum does soon after
it (statistics, and the visibility map an index-only scan needs); SQLite is left as the
server leaves it (no ``ANALYZE``).

``--explain`` prints the query plans of the leaderboard's statements; ``--profile`` prints
the top of a cProfile of the check-only recompute. Prints figures only: no assertion.

    .venv/bin/python benchmarks/bench_ladder.py [--players 100000] [--matches 100000]
        [--database URL] [--runs 30] [--quick] [--explain] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # httpkit, pgkit: the tests' HTTP GET, databases

import httpkit  # noqa: E402
import ladder_seed  # noqa: E402
import pgkit  # noqa: E402
from sqlalchemy import event, make_url, select  # noqa: E402

from server.app import App  # noqa: E402
from server.config import Config, DatabaseSection, ServerSection  # noqa: E402
from server.db.models import Player, Rating  # noqa: E402
from server.db.store import Store, upgrade  # noqa: E402

MIDDLE = 50_000


@contextlib.asynccontextmanager
async def _database(kind: str, folder: Path) -> AsyncIterator[str]:
    """A fresh database: a SQLite file in ``folder``, or a PostgreSQL database of its own
    (``pgkit``; ``pgkit.Unavailable`` when there is no server)."""
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{folder / 'ladder.db'}"
        return
    async with pgkit.scratch_database("guobiao_bench") as url:
        yield url


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered) * 1000:8.2f} ms   p95 {p95 * 1000:8.2f} ms"


async def _timed(call: Callable[[], Awaitable[Any]], runs: int) -> tuple[list[float], Any]:
    result = await call()  # a warm-up (and the answer, to describe)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - start)
    return samples, result


async def _cases(store: Store) -> list[tuple[str, dict[str, Any] | str]]:
    """What to time: (label, leaderboard arguments) or (label, a player's name)."""
    board = await store.ladder.leaderboard("mcr", limit=1)
    everyone = await store.ladder.leaderboard("mcr", provisional="all", limit=1)
    assert board is not None and everyone is not None
    established, total = board["total"], everyone["total"]
    middle = min(MIDDLE, established // 2)
    async with store.engine.connect() as connection:
        threshold = store.policy.provisional_matches
        mid = await connection.scalar(
            select(Player.username)
            .join(Rating, Rating.player_id == Player.id)
            .where(Rating.matches >= threshold)
            .order_by(Rating.conservative.desc(), Rating.player_id.desc())
            .offset(middle)
            .limit(1)
        )
        busiest = await connection.scalar(
            select(Player.username)
            .join(Rating, Rating.player_id == Player.id)
            .order_by(Rating.matches.desc())
            .limit(1)
        )
    prefix = ladder_seed.SYLLABLES[0]
    return [
        ("first page", {}),
        (f"middle page (offset {middle:,})", {"offset": middle}),
        (f"last page (offset {max(0, established - 50):,})", {"offset": max(0, established - 50)}),
        ("provisional=true", {"provisional": "true"}),
        ("provisional=all", {"provisional": "all"}),
        (
            f"provisional=all offset {min(MIDDLE, total // 2):,}",
            {"provisional": "all", "offset": min(MIDDLE, total // 2)},
        ),
        (f"q={prefix} (a common prefix)", {"search": prefix}),
        (f"q={mid} (a whole name)", {"search": mid}),
        (f"player page {mid} (mid-table)", str(mid)),
        (f"player page {busiest} (busiest)", str(busiest)),
    ]


def _path(case: dict[str, Any] | str) -> str:
    if isinstance(case, str):
        return f"/api/ladders/mcr/players/{quote(case)}"
    query = {"offset": case.get("offset"), "provisional": case.get("provisional")}
    query["q"] = case.get("search")
    text = "&".join(f"{k}={quote(str(v))}" for k, v in query.items() if v is not None)
    return "/api/ladders/mcr" + (f"?{text}" if text else "")


def _describe(answer: dict[str, Any]) -> str:
    if "players" in answer:
        ranks = [p["rank"] for p in answer["players"]]
        shown = f"ranks {ranks[0]}..{ranks[-1]}" if ranks else "no rows"
        return f"{len(ranks)} rows of {answer['total']:,}, {shown}"
    rating = answer["rating"] or {}
    return f"rank {rating.get('rank')}, {len(answer['history'])} changes"


async def _pages(store: Store, url: str, folder: Path, runs: int) -> None:
    cases = await _cases(store)
    print(f"  pages ({runs} runs each, after one warm-up):")
    for label, case in cases:

        async def direct(case: dict[str, Any] | str = case) -> Any:
            if isinstance(case, str):
                return await store.ladder.player("mcr", case)
            return await store.ladder.leaderboard("mcr", **case)

        samples, answer = await _timed(direct, runs)
        print(f"    store {label:<44} {_ms(samples)}   {_describe(answer)}")
    config = Config(
        server=ServerSection(host="127.0.0.1", port=0, data_dir=str(folder)),
        database=DatabaseSection(url=url),
    )
    app = App(config)
    await app.start()
    try:
        for label, case in cases:
            path = _path(case)

            async def get(path: str = path) -> Any:
                status, body = await httpkit.http_get(app.port, path)
                if status != 200:
                    raise SystemExit(f"GET {path}: {status} {body[:200]}")
                return json.loads(body)

            samples, answer = await _timed(get, runs)
            print(f"    HTTP  {label:<44} {_ms(samples)}   {_describe(answer)}")
    finally:
        await app.stop()


async def _explain(store: Store) -> None:
    """The plans of the statements the leaderboard and the player page run."""
    cases = await _cases(store)
    dialect = store.engine.dialect.name
    for label, case in cases:
        seen: list[tuple[str, Any]] = []

        def capture(
            _conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any, seen: Any = seen
        ) -> None:
            seen.append((statement, parameters))

        event.listen(store.engine.sync_engine, "before_cursor_execute", capture)
        try:
            if isinstance(case, str):
                await store.ladder.player("mcr", case)
            else:
                await store.ladder.leaderboard("mcr", **case)
        finally:
            event.remove(store.engine.sync_engine, "before_cursor_execute", capture)
        print(f"  plans: {label}")
        unique = {s: p for s, p in seen if s.lstrip().upper().startswith("SELECT")}
        for statement, parameters in unique.items():
            prefix = "EXPLAIN QUERY PLAN " if dialect == "sqlite" else "EXPLAIN ANALYZE "
            async with store.engine.connect() as connection:
                rows = await connection.exec_driver_sql(prefix + statement, parameters)
                lines = [" ".join(str(x) for x in row[-1:]) for row in rows]
            print("    " + " ".join(statement.split())[:160])
            for line in lines:
                print(f"      {line}")


async def _recompute(store: Store, matches: int, profile: bool) -> None:
    for label, fix in (("check only", False), ("fixing", True)):
        start = time.perf_counter()
        profiler = cProfile.Profile() if profile and not fix else None
        if profiler is not None:
            profiler.enable()
        report = await store.ladder.recompute(fix=fix)
        if profiler is not None:
            profiler.disable()
        seconds = time.perf_counter() - start
        print(
            f"  recompute {label:<10} {seconds:7.2f} s   {report.matches / seconds:8.0f} matches/s"
            f"   {report.matches:,} matches, {report.players:,} players, "
            f"{'all equal' if report.equal else f'DIFFERENT: {report}'}"
            + ("   (under cProfile)" if profiler is not None else "")
        )
        if profiler is not None:
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(14)
            print("    " + "\n    ".join(out.getvalue().strip().splitlines()[-20:]))


async def _cli(url: str, matches: int) -> None:
    """``guobiao ladder recompute`` (``--check``, then fixing) in a child process: the
    whole command, start-up included."""
    for label, extra in (("--check", ["--check"]), ("fixing", [])):
        start = time.perf_counter()
        child = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "server", "ladder", "recompute", "--database-url", url),
            *extra,
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await child.communicate()
        seconds = time.perf_counter() - start
        last = (out.decode().strip().splitlines() or ["(no output)"])[-1]
        print(
            f"  guobiao ladder recompute {label:<8} {seconds:7.2f} s   "
            f"{matches / seconds:8.0f} matches/s   exit {child.returncode}: {last[:90]}"
        )


async def _one(url: str, folder: Path, planned: ladder_seed.Plan, args: argparse.Namespace) -> None:
    await upgrade(url)
    async with await Store.open(url) as store:
        print(f"  seeding into {store.engine.dialect.name}:")
        report = await ladder_seed.seed(store, planned, progress=print)
        print(
            f"  seeded in {report.seconds['total']:.1f} s "
            f"(of which rating {report.seconds['rating']:.1f} s)"
        )
        if store.engine.dialect.name == "postgresql":
            # What autovacuum does soon after a load: the planner's statistics, and the
            # visibility map that lets a scan read an index alone.
            async with store.engine.connect() as connection:
                auto = await connection.execution_options(isolation_level="AUTOCOMMIT")
                await auto.exec_driver_sql("VACUUM ANALYZE")
            print("  VACUUM ANALYZE done")
        if args.explain:
            await _explain(store)
        await _pages(store, url, folder, args.runs)
        await _recompute(store, report.matches, args.profile)
    await _cli(url, len(planned.matches))


async def bench(args: argparse.Namespace) -> None:
    start = time.perf_counter()
    planned = ladder_seed.plan(args.players, args.matches, seed=args.seed)
    activity = planned.activity(10)
    print(
        f"{args.players:,} players, {args.matches:,} rated matches (planned in "
        f"{time.perf_counter() - start:.1f} s); matches a player: min {activity['min']}, "
        f"median {activity['median']}, max {activity['max']}; provisional (under 10): "
        f"{activity['provisional']:,} ({activity['provisional'] / args.players:.0%}); "
        f"{os.cpu_count()} CPU(s)"
    )
    targets = [args.database] if args.database else ["sqlite", "postgres"]
    for target in targets:
        with tempfile.TemporaryDirectory() as tmp:
            print(f"{target if target in ('sqlite', 'postgres') else make_url(target).drivername}:")
            if target in ("sqlite", "postgres"):
                async with _database(target, Path(tmp)) as url:
                    await _one(url, Path(tmp), planned, args)
            else:
                await _one(target, Path(tmp), planned, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=100_000, help="accounts (100000)")
    parser.add_argument("--matches", type=int, default=100_000, help="rated matches (100000)")
    parser.add_argument("--database", metavar="URL", help="an empty database (default: both)")
    parser.add_argument("--runs", type=int, default=30, help="timed runs per page (30)")
    parser.add_argument("--seed", type=int, default=1, help="the plan's random seed (1)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 2000 and 2000, 5 runs")
    parser.add_argument("--explain", action="store_true", help="print the query plans")
    parser.add_argument("--profile", action="store_true", help="cProfile the recompute")
    args = parser.parse_args()
    if args.quick:
        args.players, args.matches, args.runs = 2000, 2000, 5
    try:
        asyncio.run(bench(args))
    except pgkit.Unavailable as exc:
        raise SystemExit(f"bench_ladder: {exc} (or give --database URL)") from None


if __name__ == "__main__":
    main()

"""One worker against two: the same load on ``guobiao serve`` and ``guobiao serve --workers 2``.

Both on PostgreSQL (a fresh database of the benchmark's own for every server run, dropped
after it, by ``tests/pgkit.py``, on the server of ``--postgres``: by default
``GUOBIAO_TEST_POSTGRES_URL``'s, else ``postgresql+asyncpg://postgres@127.0.0.1:5432/test``),
the second in cluster mode on a Redis (``--redis-url``, default ``redis://127.0.0.1:6379/0``;
every key under a prefix of the run's own). For each load in ``--tables`` the same client
(``guobiao loadtest``, in a process of its own, seed fixed) runs ``--duration`` seconds of fast
bots against each server in turn; prints actions/s and the action-to-update latency (p50,
p99) of each, the servers' CPU time per action (every worker's), the load tool's own CPU per
update it received and the machine's load average as the run ended, the actions the server
played for a player it took for gone (``stand-ins``: 0 when all is well, every player being
there; read from the run's database), and the largest load at
which each kept its p99 under 100 ms. At human pace (``--think``) the latency is the one
``benchmarks/human_pace.py`` reports (docs/performance.md, "What each figure measures"):
*served*, from the server reading the action that completed a table's wait (the
``input_at`` the servers stamp on its updates) to each connection's receipt of them (and
*settled*, the same from 20 s after start-up, the logins and the tables' starts behind), beside
the load tool's own lag (how late its event loops ran: a served figure no smaller than it
says the tool was late) and the older *inferred* figure (from the last action a table
waited for to its first update as the tool saw both, its sending delays included). A
connection's own latency would mostly measure the other players' think times. The client runs on
the same machine and takes CPU from the servers: on a 2-core box that caps what two workers
can show (say so when quoting the figures). It runs as ``--client-processes`` processes
(``guobiao loadtest --processes``, default 2): one process reading 4,000 connections
measures its own delays as much as the server's.

    .venv/bin/python benchmarks/bench_workers.py [--tables 10,30,60] [--duration 20] [--think 0.8-3]
        [--client-processes 2] [--connect-concurrency 64] [--postgres postgresql+asyncpg://postgres@127.0.0.1:5432/test]
        [--redis-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchkit import ROOT, cpu_seconds, free_port, loadtest, ms, tree_env
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

sys.path.insert(0, str(ROOT / "tests"))  # pgkit: the tests' scratch PostgreSQL databases

import pgkit

BAR_MS = 100.0


def _wait_ready(port: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"the server on port {port} did not get ready")


def _serve(port: int, env: dict[str, str], workers: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "server", "serve", "--port", str(port)]
    if workers > 1:
        command += ["--workers", str(workers)]
    return subprocess.Popen(command, cwd=ROOT, env=tree_env(ROOT, env), stdout=subprocess.DEVNULL)


def _load(port: int, tables: int, args: argparse.Namespace) -> dict[str, Any]:
    """The same client for both servers: seed 1, ``--connect-concurrency`` (64) at a time."""
    options = ["--seed", "1", "--processes", str(args.client_processes)]
    options += ["--connect-concurrency", str(args.connect_concurrency)]
    if args.think:
        options += ["--think", args.think, "--turn-seconds", "30"]
    return loadtest(f"ws://127.0.0.1:{port}/ws", tables, args.duration, *options)


def _server_cpu(pid: int) -> float:
    """CPU seconds so far of the server ``pid`` and of its workers (its children)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return sum(cpu_seconds(p) for p in [pid, *map(int, children)])


async def _stand_ins(url: str, before: datetime) -> int:
    """The stored actions the server played for a person (``actions.stand_in``) before
    ``before``: the players are all there, so any is a player the server took for gone."""
    engine = create_async_engine(url)
    query = text("SELECT count(*) FROM actions WHERE stand_in AND created_at < :before")
    try:
        async with engine.connect() as db:
            found = await db.execute(query, {"before": before.replace(tzinfo=None)})
            return int(found.scalar_one())
    finally:
        await engine.dispose()


def _run(
    args: argparse.Namespace, tables: int, workers: int, env: dict[str, str]
) -> dict[str, Any]:
    """One server run (``workers`` processes) on a fresh database of its own: what a run
    leaves unfinished would otherwise be adopted (and played by its server bots) by the
    next. Its loadtest report, with ``cpu_s``: the servers' CPU time while it ran."""
    try:
        url = asyncio.run(pgkit.create_database("guobiao_bench_workers", args.postgres))
    except pgkit.Unavailable as exc:
        raise SystemExit(f"bench_workers: {exc}") from None
    try:
        port = free_port()
        server = _serve(port, {**env, "GUOBIAO_DATABASE_URL": url}, workers)
        try:
            _wait_ready(port)
            time.sleep(1.0 if workers > 1 else 0.0)  # both workers up and leased
            before = _server_cpu(server.pid)
            began = datetime.now(UTC)
            report = _load(port, tables, args)
            cpu = _server_cpu(server.pid) - before
            # Until the load tool stopped playing (once it has, and closed its connections,
            # the server plays every seat after the grace for a disconnection: not counted).
            # (The tool's duration counts from its own start, after ``began``.)
            ended = began + timedelta(seconds=args.duration)
            return {**report, "cpu_s": cpu, "stand_ins": asyncio.run(_stand_ins(url, ended))}
        finally:
            server.terminate()
            server.wait(60)
    finally:
        asyncio.run(pgkit.drop_database(url, args.postgres))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", default="10,30,60", help="loads, tables of 4 bots")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds a load")
    parser.add_argument(
        "--postgres", default=pgkit.POSTGRES_URL, help="the PostgreSQL server (its URL)"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument(
        "--think", help="human pace: loadtest's --think LOW-HIGH (e.g. 0.8-3); default none"
    )
    parser.add_argument(
        "--client-processes", type=int, default=2, help="the client's processes (default 2)"
    )
    parser.add_argument(
        "--connect-concurrency",
        type=int,
        default=64,
        help="connections the client opens at once (default 64)",
    )
    parser.add_argument(
        "--only", choices=("1", "2"), help="only one process (1) or only two workers (2)"
    )
    args = parser.parse_args()
    loads = [int(n) for n in args.tables.split(",")]
    prefix = f"bench_workers_{secrets.token_hex(3)}"  # the run's own Redis keys
    env = {
        **os.environ,
        "GUOBIAO_SERVER_LOG_LEVEL": "warning",
        "GUOBIAO_LIMITS_MAX_CONNECTIONS": "100000",
        "GUOBIAO_LIMITS_MAX_TABLES": "100000",
        "GUOBIAO_ACCOUNTS_GUEST_PER_HOUR": "1000000",
        "GUOBIAO_ACCOUNTS_GUEST_BURST": "100000",
        "GUOBIAO_LIMITS_WAITING_TABLES_PER_ADDRESS": "0",
        "GUOBIAO_LIMITS_CONNECTIONS_PER_ADDRESS": "0",
        "GUOBIAO_SERVER_STAMP_UPDATES": "true",  # the served latency (docstring)
    }
    clustered = {
        **env,
        "GUOBIAO_CLUSTER_REDIS_URL": args.redis_url,
        "GUOBIAO_CLUSTER_PREFIX": prefix,
    }
    pace = f"think {args.think} s" if args.think else "no think time"
    print(
        f"{os.cpu_count()} CPUs; fast bots, {pace}, {args.duration:g} s a load, seed 1, "
        f"{args.client_processes} client process(es)"
    )
    latency = (
        "served p50/p99, settled p99 (from 20 s on), tool lag p99, inferred p99"
        if args.think
        else "p50/p99"
    )
    print(
        f"latency ({latency}) in ms; CPU: the servers' (every worker's) ms per action; tool: "
        "the load tool's CPU per update it received, us; load: the machine's 1-minute load "
        "average as the run ended"
    )
    print(
        f"{'tables':>6} {'conns':>6}  {'server':12} {'actions/s':>10} {'p50':>6} {'p99':>6} "
        + (f"{'settl.':>6} {'lag':>6} {'infer.':>6} " if args.think else "")
        + f"{'CPU':>6} {'tool':>5} {'load':>5} {'stand-ins':>9}  errors"
    )
    best: dict[str, int] = {}
    for tables in loads:
        runs = [("1 process", 1, env), ("2 workers", 2, clustered)]
        if args.only:
            runs = [runs[int(args.only) - 1]]
        for label, workers, environ in runs:
            report = _run(args, tables, workers, environ)
            load = os.getloadavg()[0]
            tool = report.get("tool_cpu", {}).get("us_per_update")  # (older trees: none)
            latency = report["served_latency_ms" if args.think else "latency_ms"]
            actions, kinds = report["actions"], report["errors"]
            p99 = latency["p99"]
            errors = sum(kinds.values())
            conns = report["connections"]["connected"]
            cpu = 1000 * report["cpu_s"] / actions["accepted"] if actions["accepted"] else None
            extra = ""
            if args.think:
                extra = (
                    f"{ms(report['settled_latency_ms']['p99']):>6} "
                    f"{ms(report['loop_lag_ms']['p99']):>6} "
                    f"{ms(report['server_latency_ms']['p99']):>6} "
                )
            print(
                f"{tables:>6} {conns:>6}  {label:12} {actions['per_second']:>10} "
                f"{ms(latency['p50']):>6} {ms(p99):>6} {extra}"
                f"{'-' if cpu is None else f'{cpu:.2f}':>6} "
                f"{'-' if tool is None else f'{tool:.0f}':>5} {load:>5.1f} "
                f"{report['stand_ins']:>9}  "
                f"{errors} {kinds or ''}",
                flush=True,
            )
            for note in report["notes"]:
                print(f"{'':>6} {'':>6}  {label:12} note: {note}", flush=True)
            if p99 is not None and p99 < BAR_MS and not errors and conns == 4 * tables:
                best[label] = max(best.get(label, 0), tables)
    for label in ("1 process", "2 workers"):
        print(f"{label}: p99 under {BAR_MS:g} ms up to {best.get(label, 0)} tables of those run")


if __name__ == "__main__":
    main()

"""A live match's latency during a flood of wrong-password logins from one address.

Starts ``guobiao serve`` in a child process (a fresh SQLite database in a temporary folder,
the default settings but no pause between hands), registers a victim account, then runs
tables of network bots (``guobiao loadtest``'s) in this process, three times:

1. quiet: the tables alone;
2. flooded: the same while another process sends wrong-password logins for the victim as
   fast as the server answers, over ``--connections`` connections from 127.0.0.1 (each
   connecting again when the server closes it for ignoring ``retry_after``);
3. flooded, only the hash pool: as 2 against a server whose login limits and backoff are
   out of reach (what many addresses would look like), so every login reaches scrypt and
   only ``hash_workers`` / ``hash_queue`` bound the work.

For each it prints the action-to-update latency (p50, p95, p99) with its ratio to the quiet
run, the logins answered by code, and the server's CPU use (Linux ``/proc``). Prints figures
only: no assertion, no exit status.

    .venv/bin/python benchmarks/bench_login_flood.py [--tables 2] [--seconds 5] [--connections 32]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

from benchkit import ROOT, cpu_seconds, free_port

sys.path.insert(0, str(ROOT))

from server.cli.loadtest import Report, loadtest
from server.client import Client, ClientError, ConnectionLost, ServerError

VICTIM = "victim"
SERVER_SETTINGS = """
[server]
log_level = "warning"
[timers]
hand_pause_seconds = 0
"""
UNLIMITED_LOGINS = """
[accounts]
login_burst = 100000
login_per_minute = 100000
account_login_burst = 100000
account_login_per_minute = 100000
login_backoff_after = 1000
"""


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` (None where /proc is missing: the row
    then says so instead of the benchmark failing)."""
    try:
        return cpu_seconds(pid)
    except OSError:
        return None


@contextlib.asynccontextmanager
async def _server(folder: Path, extra: str) -> AsyncIterator[tuple[str, int]]:
    """``guobiao serve`` with ``extra`` settings; yields its URL and process id."""
    config = folder / "bench.toml"
    config.write_text(SERVER_SETTINGS + extra, encoding="utf-8")
    port = free_port()
    data = folder / f"data-{port}"
    child = subprocess.Popen(
        [
            *(sys.executable, "-m", "server", "serve", "--config", str(config)),
            *("--port", str(port), "--data-dir", str(data)),
        ],
        cwd=ROOT,
    )
    url = f"ws://127.0.0.1:{port}/ws"
    try:
        for _ in range(200):
            with contextlib.suppress(ClientError, OSError):
                probe = await Client.connect(url, timeout=1)
                await probe.close()
                break
            await asyncio.sleep(0.05)
        else:
            raise SystemExit(f"the server did not start on port {port}")
        yield url, child.pid
    finally:
        child.terminate()
        child.wait(10)


async def _flood(url: str, seconds: float, connections: int) -> Counter[str]:
    """Wrong-password logins for the victim for ``seconds``: the answers by code."""
    counts: Counter[str] = Counter()
    deadline = time.monotonic() + seconds

    async def one() -> None:
        while time.monotonic() < deadline:
            counts["connections"] += 1
            async with await Client.connect(url, rate=None, timeout=30) as client:
                while time.monotonic() < deadline:
                    try:
                        await client.login(VICTIM, "wrong horse battery")
                        counts["ok"] += 1
                    except ServerError as exc:
                        counts[exc.code] += 1
                    except ConnectionLost:
                        break  # closed for flooding: connect again

    await asyncio.gather(*(one() for _ in range(connections)))
    return counts


def _row(name: str, report: Report, quiet: Report | None) -> str:
    lat = report.to_dict()["latency_ms"]
    base = quiet.to_dict()["latency_ms"] if quiet is not None else lat

    def ms(key: str) -> str:
        value, ref = lat[key], base[key]
        if value is None:
            return "   -"
        ratio = f" (x{value / ref:.2f})" if ref else ""
        return f"{value:7.2f}{ratio}"

    return (
        f"{name:<28} p50 {ms('p50'):<16} p95 {ms('p95'):<16} p99 {ms('p99'):<16} "
        f"{lat['samples']} updates, {len(report.errors)} error kinds"
    )


async def _phase(
    url: str, pid: int, args: argparse.Namespace, flood: bool
) -> tuple[Report, Counter[str], float | None]:
    """Tables for ``args.seconds`` (with a flood process if ``flood``); the report, the
    flood's answers and the server's CPU share meanwhile."""
    cpu, wall = _cpu_seconds(pid), time.monotonic()
    flooder = None
    if flood:
        flooder = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--flood",
            url,
            "--seconds",
            str(args.seconds + 1),
            "--connections",
            str(args.connections),
            stdout=asyncio.subprocess.PIPE,
        )
        await asyncio.sleep(0.5)  # the flood is on before the tables start
    report = await loadtest(url, tables=args.tables, duration=args.seconds)
    counts: Counter[str] = Counter()
    if flooder is not None:
        out, _ = await flooder.communicate()
        counts = Counter(json.loads(out.decode() or "{}"))
    after = _cpu_seconds(pid)
    share = (after - cpu) / (time.monotonic() - wall) if cpu is not None and after else None
    return report, counts, share


async def bench(args: argparse.Namespace) -> None:
    print(
        f"{args.tables} table(s) of 4 network bots for {args.seconds:g} s per run; flood: "
        f"{args.connections} connections of wrong-password logins from 127.0.0.1; "
        f"{os.cpu_count()} CPU(s)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        quiet: Report | None = None
        for name, extra, flood in [
            ("quiet", "", False),
            ("flooded", "", True),
            ("flooded, only the hash pool", UNLIMITED_LOGINS, True),
        ]:
            async with _server(Path(tmp), extra) as (url, pid):
                async with await Client.connect(url, rate=None) as owner:
                    await owner.register(VICTIM, "correct horse battery")
                report, counts, cpu = await _phase(url, pid, args, flood)
            quiet = quiet or report
            print(_row(name, report, quiet))
            detail = f"    server CPU {cpu:.0%}" if cpu is not None else "    server CPU ?"
            if flood:
                made = counts.pop("connections", 0)
                total = sum(counts.values())
                detail += f"; {total} logins answered ({total / (args.seconds + 1):.0f}/s) "
                detail += f"over {made} connections: "
                detail += ", ".join(f"{code} {n}" for code, n in counts.most_common())
            print(detail)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=2, help="tables of bots (default 2)")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds per run (default 5)")
    parser.add_argument("--connections", type=int, default=32, help="flood connections (32)")
    parser.add_argument("--flood", metavar="URL", help=argparse.SUPPRESS)  # the child's role
    args = parser.parse_args()
    if args.flood:
        counts = asyncio.run(_flood(args.flood, args.seconds, args.connections))
        print(json.dumps(dict(counts)))
        return
    asyncio.run(bench(args))


if __name__ == "__main__":
    main()

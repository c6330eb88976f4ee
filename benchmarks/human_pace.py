"""The server at human pace, in one command: the figures docs/performance.md gives, with the
machine's load beside each.

For each number of connections (``--connections``, each ``--runs`` times, in turns: 1,000,
2,000, 4,000, 1,000, ...), starts a fresh ``guobiao serve`` of this tree (the embedded SQLite,
guest limits raised for the load's guests, ``[server] stamp_updates`` on) and drives it with
``guobiao loadtest --think 0.8-3 --processes 2 --connect-concurrency 32`` (this tree's, in
child processes) for ``--duration`` seconds. Prints one row per run:

- ``served p95/p99``: from the server reading an action (the ``input_at`` its update
  carries) to each connection's receipt of that update, after start-up. It excludes what
  the game waits for (other players' answers, the claim window: the update is stamped with
  the action that completed the wait) and the load tool's own delay in *sending*, but not
  its delay in *reading*: that is ``tool lag``, beside it;
- ``settled p99``: the same from 20 s after start-up (the last player seated), when the
  logins and the tables' starts are behind;
- ``tool lag p99``: how late the load tool's event loops ran (a 50 ms sleep that woke
  late); a served figure no smaller than it says the tool, not the server, was late;
- ``inferred p99``: the tool's older figure, from the last action the table waited for to its
  first update, as the tool saw both (its sending delay included);
- ``client p99``: a connection's own action sent to its next update (other players'
  answers and think times included: not the server's figure);
- ``server p99``: the server's own histogram, ``guobiao_action_update_seconds`` (an action
  decoded to its update queued: the served span less the socket and the tool), as the
  upper edge of the bucket that holds its 99th percentile;
- ``errors``, the server's ``CPU ms/action`` (its CPU time over the actions it applied),
  ``tool`` (the load tool's own CPU per update it received, microseconds: what it takes from
  the cores it shares with the server),
  ``KiB/conn`` (the most resident memory it held while the connections were open, less what
  it held idle, over the connections; idle is read after a warm-up of two tables of engine
  bots playing for eight seconds, so that what a process allocates once, on first use, is
  not counted per connection), ``+close`` (the same with the seconds after the tool closed
  its connections: every seat of every table is then played by a stand-in bot, which is
  the bots' memory, not the connections'), and the machine's 1-minute load average before
  and after.

Figures only: no assertion. A run takes ``--duration`` plus start-up; the default grid
(1,000/2,000/4,000 connections, 2 runs each, 150 s: 4,000 connections take about half a
minute to seat, each table starting as its four are in) about twenty minutes.

    .venv/bin/python benchmarks/human_pace.py [--connections 1000,2000,4000] [--runs 2]
        [--duration 150] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchkit import announced_port, cpu_seconds, loadtest, ms, rss_kib, scrape, serve, total

SITE = """\
[server]
data_dir = "{data}"
log_level = "warning"
stamp_updates = true
[limits]
waiting_tables_per_address = 0
connections_per_address = 0
max_connections = 100000
max_tables = 100000
[accounts]
guest_burst = 100000
guest_per_hour = 1000000
[metrics]
game_port = true
"""
THINK = "0.8-3"
# Before the idle memory is read: two tables of engine bots, no think time, for a few hands
# (their matches then go on slowly, paced as tables nobody watches).
WARM_UP_TABLES, WARM_UP_SECONDS = 2, 8.0
WARM_UP = ("--bot", "normal", "--think-ms", "0")


def histogram_p99(
    series: list[tuple[str, dict[str, str], float]], name: str, **match: str
) -> float | None:
    """The upper edge (ms) of the bucket of histogram ``name`` (its samples whose labels
    include ``match``) that holds its 99th percentile; None without samples."""
    count = total(series, name + "_count", **match)
    if not count:
        return None
    edges: dict[float, float] = {}
    for n, labels, v in series:
        if n == name + "_bucket" and all(labels.get(k) == x for k, x in match.items()):
            edge = float(labels["le"])  # (float("+Inf") is infinity)
            edges[edge] = edges.get(edge, 0.0) + v
    for edge in sorted(edges):
        if edges[edge] >= 0.99 * count:
            return edge * 1000
    return None


class Peak(threading.Thread):
    """The server's resident memory, sampled every half second until stopped: (monotonic
    time, KiB) samples, and the most of those before a time (``most``)."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.done = pid, threading.Event()
        self.samples: list[tuple[float, int]] = []

    def run(self) -> None:
        while not self.done.wait(0.5):
            try:
                self.samples.append((time.monotonic(), rss_kib(self.pid)))
            except (OSError, RuntimeError):  # (the server is gone)
                return

    def most(self, before: float = math.inf) -> int:
        return max((kib for at, kib in self.samples if at < before), default=0)


def one_run(connections: int, args: argparse.Namespace) -> dict[str, Any]:
    """A fresh server under ``connections`` connections at human pace: its figures."""
    with tempfile.TemporaryDirectory(prefix="guobiao-pace-") as data:
        site = Path(data) / "site.toml"
        site.write_text(SITE.format(data=data), encoding="utf-8")
        server = serve(site)
        try:
            port = announced_port(server)
            # Warmed up first, as bench_memory.py does: what a process allocates once, on
            # first use (the modules imported on demand, the engine's and SQLAlchemy's
            # caches, a match's first hands), is not the connections' memory.
            loadtest(f"ws://127.0.0.1:{port}/ws", WARM_UP_TABLES, WARM_UP_SECONDS, *WARM_UP)
            time.sleep(2.0)  # settled: its idle memory
            idle = rss_kib(server.pid)
            load_before = os.getloadavg()[0]
            cpu_before = cpu_seconds(server.pid)
            actions_before = total(scrape(port), "guobiao_actions_total")
            peak = Peak(server.pid)
            peak.start()
            launched = time.monotonic()
            report = loadtest(
                f"ws://127.0.0.1:{port}/ws",
                connections // 4,
                args.duration,
                *("--think", THINK, "--processes", "2", "--connect-concurrency", "32"),
            )
            peak.done.set()
            series = scrape(port)
            cpu = cpu_seconds(server.pid) - cpu_before
            load_after = os.getloadavg()[0]
        finally:
            server.terminate()
            server.wait(30)
    actions = total(series, "guobiao_actions_total") - actions_before
    served, lag = report["served_latency_ms"], report["loop_lag_ms"]
    return {
        "connections": connections,
        "connected": report["connections"]["connected"],
        "served_p95_ms": served["p95"],
        "served_p99_ms": served["p99"],
        "served_samples": served["samples"],
        "settled_p95_ms": report["settled_latency_ms"]["p95"],
        "settled_p99_ms": report["settled_latency_ms"]["p99"],
        "tool_lag_p99_ms": lag["p99"],
        "inferred_p99_ms": report["server_latency_ms"]["p99"],
        "client_p99_ms": report["latency_ms"]["p99"],
        "server_hist_p99_ms": histogram_p99(series, "guobiao_action_update_seconds"),
        "loop_lag_p99_ms": histogram_p99(series, "guobiao_event_loop_lag_seconds"),
        "commit_p99_ms": histogram_p99(series, "guobiao_store_commit_seconds", what="actions"),
        "gc_pause_s": round(total(series, "guobiao_gc_pause_seconds_sum"), 2),
        "errors": sum(report["errors"].values()) + report["connections"]["dropped"],
        "error_kinds": report["errors"],
        "actions_per_s": report["actions"]["per_second"],
        "cpu_ms_per_action": round(cpu * 1000 / actions, 3) if actions else None,
        "tool_us_per_update": report.get("tool_cpu", {}).get("us_per_update"),  # (older: none)
        # While the connections are open (the tool closes them ``elapsed_s`` after it
        # started, later than ``launched``), and with what follows their close: every seat
        # is then played by a stand-in bot (benchmarks/bench_bot_memory.py).
        "kib_per_connection": round(
            (peak.most(launched + report["elapsed_s"]) - idle) / connections, 1
        ),
        "kib_per_connection_closing": round((peak.most() - idle) / connections, 1),
        "load_before": round(load_before, 2),
        "load_after": round(load_after, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", default="1000,2000,4000", help="comma-separated")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--duration", type=float, default=150.0)
    parser.add_argument("--json", type=Path, help="write every run's figures to this file")
    args = parser.parse_args()
    sizes = [int(x) for x in args.connections.split(",")]
    print(f"guobiao at human pace (think {THINK} s), {os.cpu_count()} CPUs, {args.runs} run(s)")
    header = (
        f"{'conns':>6} {'served p95':>10} {'p99':>8} {'settled p99':>11} {'tool lag':>8} "
        f"{'inferred':>8} "
        f"{'client':>8} {'server':>7} {'errors':>6} {'CPU ms/a':>8} {'tool':>5} {'KiB/c':>6} "
        f"{'+close':>6} "
        f"{'load':>10}"
    )
    print(header, flush=True)
    rows = []
    for _ in range(args.runs):
        for size in sizes:
            row = one_run(size, args)
            rows.append(row)

            print(
                f"{size:>6} {ms(row['served_p95_ms']):>10} {ms(row['served_p99_ms']):>8} "
                f"{ms(row['settled_p99_ms']):>11} "
                f"{ms(row['tool_lag_p99_ms']):>8} {ms(row['inferred_p99_ms']):>8} "
                f"{ms(row['client_p99_ms']):>8} {ms(row['server_hist_p99_ms']):>7} "
                f"{row['errors']:>6} {row['cpu_ms_per_action'] or '-':>8} "
                f"{row['tool_us_per_update'] or '-':>5} "
                f"{row['kib_per_connection']:>6} {row['kib_per_connection_closing']:>6} "
                f"{row['load_before']:>4.1f}->{row['load_after']:<4.1f}",
                flush=True,
            )
    print(
        "(ms; p99 of each; 'settled': served from 20 s after start-up, the tables' starts "
        "behind; 'server' is its histogram's bucket edge; tool: the load tool's CPU per "
        "update it received, us; KiB/c: the server's memory per "
        "connection while they are open, '+close' with their close, every seat then played "
        "by a stand-in bot; load: 1-minute average)"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()

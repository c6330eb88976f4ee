"""A/B of the server under ``guobiao loadtest``: this tree against another checkout, in turns.

Starts ``guobiao serve`` from this tree and from OTHER alternately (A B A B ...; each on a
fresh SQLite file, account limits raised for the loadtest's guests), drives each with the same
``guobiao loadtest`` (this tree's), and reads the server process's own CPU time from
``/proc`` before and after. Prints, per run and as medians: actions/s, p50/p99 latency and
the server's CPU milliseconds per action, then the ratio this / other. The server is run
with OTHER's code by starting it with OTHER as the working directory (``python -m server``
puts it first on the path). Figures only: no assertion.

    .venv/bin/python benchmarks/ab_loadtest.py OTHER_TREE [--runs 2] [--tables 20]
        [--duration 20]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchkit import ROOT, announced_port, cpu_seconds, loadtest

SITE = """\
[server]
data_dir = "{data}"
log_level = "warning"
[limits]
waiting_tables_per_address = 0
[accounts]
guest_burst = 100000
guest_per_hour = 1000000
"""


def one_run(tree: Path, args: argparse.Namespace) -> dict[str, float]:
    """One server from ``tree`` under this tree's loadtest: its figures."""
    with tempfile.TemporaryDirectory() as folder:
        site = Path(folder) / "site.toml"
        site.write_text(SITE.format(data=Path(folder) / "data"))
        server = subprocess.Popen(
            [sys.executable, "-m", "server", "serve", "--config", str(site), "--port", "0"],
            cwd=tree,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert server.stdout is not None
        try:
            port = announced_port(server)
            before = cpu_seconds(server.pid)
            figures = loadtest(f"ws://127.0.0.1:{port}/ws", args.tables, args.duration)
            used = cpu_seconds(server.pid) - before
        finally:
            server.terminate()
            server.wait(30)
            server.stdout.close()
    actions = figures["actions"]["accepted"]
    return {
        "actions_per_s": figures["actions"]["per_second"],
        "p50_ms": figures["latency_ms"]["p50"],
        "p99_ms": figures["latency_ms"]["p99"],
        "cpu_ms_per_action": 1000 * used / actions if actions else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("other", type=Path, help="the other checkout (a git worktree)")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--duration", type=float, default=20)
    args = parser.parse_args()
    trees = {"this": ROOT, "other": args.other.resolve()}
    results: dict[str, list[dict[str, float]]] = {"this": [], "other": []}
    for run in range(args.runs):
        for name in ("other", "this") if run % 2 else ("this", "other"):
            figures = one_run(trees[name], args)
            results[name].append(figures)
            shown = ", ".join(f"{key} {value:.3f}" for key, value in figures.items())
            print(f"run {run + 1} {name:5}: {shown}", flush=True)
    medians = {
        name: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        for name, runs in results.items()
    }
    for key in medians["this"]:
        this, other = medians["this"][key], medians["other"][key]
        print(f"{key:18}: this {this:.3f}, other {other:.3f}, this/other {this / other:.2f}")


if __name__ == "__main__":
    main()

"""A/B of the server under ``guobiao loadtest``: this tree against another checkout, in turns.

Starts ``guobiao serve`` from this tree and from OTHER alternately (A B A B ...; each on a
fresh SQLite file, account limits raised for the loadtest's guests), drives each with the same
``guobiao loadtest`` (this tree's), and reads the server process's own CPU time from
``/proc`` before and after. Prints, per run and as medians: actions/s, p50/p99 latency and
the server's CPU milliseconds per action, then the ratio this / other.

Two CPU figures: ``cpu_ms_per_action`` divides the whole run's CPU (the guests' logins and
the tables' set-up included) by the actions, so a side that plays fewer actions in the same
time pays more set-up per action; ``steady_cpu_ms_per_action`` reads the server's CPU time
and its ``guobiao_actions_total`` (``/metrics``) every half second and divides over the
steady part of the run only (from 3 s after the first action to the last sample before
the actions stop rising): the figure to compare code by. The server is run
with OTHER's code by starting it with OTHER as the working directory (``python -m server``
puts it first on the path; the folders the install maps into ``server``, its configuration,
migrations and web client, are linked into OTHER's ``server`` so that it reads its own).
Figures only: no assertion.

    .venv/bin/python benchmarks/ab_loadtest.py OTHER_TREE [--runs 2] [--tables 20]
        [--duration 20]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

from benchkit import ROOT, announced_port, cpu_seconds, loadtest, scrape, serve, total

SAMPLE_EVERY = 0.5  # seconds between samples of the server's CPU and actions
WARM_UP = 3.0  # seconds after the first action before the steady window opens

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


class Sampler(threading.Thread):
    """(seconds, CPU seconds, actions) of the server every ``SAMPLE_EVERY`` until stopped."""

    def __init__(self, pid: int, port: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.port = pid, port
        self.samples: list[tuple[float, float, float]] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(SAMPLE_EVERY):
            # CPU first, actions after: the metrics request's own CPU falls outside the window
            cpu = cpu_seconds(self.pid)
            self.samples.append(
                (time.monotonic(), cpu, total(scrape(self.port), "guobiao_actions_total"))
            )

    def steady_ms_per_action(self) -> float:
        """Server CPU ms per action over the steady window (the module's docstring)."""
        return steady_ms_per_action(self.samples)


def steady_ms_per_action(samples: list[tuple[float, float, float]]) -> float:
    """CPU ms per action over the steady window of ``samples`` ((seconds, CPU seconds,
    actions), in order): from ``WARM_UP`` after the first action to the last sample
    before the actions stop rising."""
    started = [t for t, _, actions in samples if actions > 0]
    if not started:
        return float("nan")
    window = [s for s in samples if s[0] >= started[0] + WARM_UP]
    while len(window) > 1 and window[-1][2] == window[-2][2]:
        window.pop()  # the actions stopped: the clients are leaving
    if len(window) < 2 or window[-1][2] == window[0][2]:
        return float("nan")
    (_, cpu0, actions0), (_, cpu1, actions1) = window[0], window[-1]
    return 1000 * (cpu1 - cpu0) / (actions1 - actions0)


def one_run(tree: Path, args: argparse.Namespace) -> dict[str, float]:
    """One server from ``tree`` under this tree's loadtest: its figures."""
    with tempfile.TemporaryDirectory() as folder:
        site = Path(folder) / "site.toml"
        site.write_text(SITE.format(data=Path(folder) / "data"))
        server = serve(site, tree)
        assert server.stdout is not None
        try:
            port = announced_port(server)
            before = cpu_seconds(server.pid)
            sampler = Sampler(server.pid, port)
            sampler.start()
            figures = loadtest(f"ws://127.0.0.1:{port}/ws", args.tables, args.duration)
            used = cpu_seconds(server.pid) - before
            sampler.done.set()
            sampler.join()
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
        "steady_cpu_ms_per_action": sampler.steady_ms_per_action(),
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

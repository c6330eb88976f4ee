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

``--together`` runs the two servers at the same time instead, each under a loadtest of its
own with ``--tables`` tables, and reads both every half second over the same seconds:
whatever else the machine does in those seconds (this project's machine is shared, and the
same tree's figure moves by a third from one minute to the next) falls on both sides alike,
so each run gives a ratio of its own, and the ratios' spread says what a difference of a
few percent is worth (their median is printed with a 95% interval). ``--same`` puts this
tree on both sides (an A/A run, no OTHER_TREE): how far apart two identical servers measure.
OTHER may be older than a setting the servers are given here (``SITE``): a key its
config/default.toml does not name is left out of its file (``site_for``), so the tree before a
change of months ago can still be the reference.

    .venv/bin/python benchmarks/ab_loadtest.py OTHER_TREE [--runs 2] [--tables 20]
        [--duration 20] [--together]
    .venv/bin/python benchmarks/ab_loadtest.py --same --together [--runs 30] ...
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchkit import ROOT, announced_port, cpu_seconds, loadtest, scrape, serve, total

SAMPLE_EVERY = 0.5  # seconds between samples of the server's CPU and actions
WARM_UP = 3.0  # seconds after the first action before the steady window opens

SITE = """\
[server]
data_dir = "{data}"
log_level = "warning"
[limits]
waiting_tables_per_address = 0
connections_per_address = 0
[accounts]
guest_burst = 100000
guest_per_hour = 1000000
[metrics]
game_port = true
"""


def site_for(tree: Path) -> str:
    """``SITE`` without the keys ``tree``'s server does not know (its config/default.toml
    does not name them): an older tree, as the reference of a measurement, refuses a key it
    does not have (a newer limit, whose default lets this load through anyway)."""
    known = (tree / "config" / "default.toml").read_text()
    return "".join(
        line
        for line in SITE.splitlines(keepends=True)
        if "=" not in line or re.search(rf"(?m)^#?\s*{line.split('=')[0].strip()}\s*=", known)
    )


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
    return together([tree], args)[0]


def together(trees: list[Path], args: argparse.Namespace) -> list[dict[str, float]]:
    """A server from each of ``trees``, all at once, each under a loadtest of its own:
    their figures, in order."""
    with tempfile.TemporaryDirectory() as folder:
        servers = []
        try:
            for i, tree in enumerate(trees):
                site = Path(folder) / f"site{i}.toml"
                site.write_text(site_for(tree).format(data=Path(folder) / f"data{i}"))
                servers.append(serve(site, tree))
            ports = [announced_port(server) for server in servers]
            before = [cpu_seconds(server.pid) for server in servers]
            samplers = [Sampler(s.pid, port) for s, port in zip(servers, ports, strict=True)]
            for sampler in samplers:
                sampler.start()
            with ThreadPoolExecutor(len(trees)) as pool:
                reports = list(
                    pool.map(
                        lambda port: loadtest(
                            f"ws://127.0.0.1:{port}/ws", args.tables, args.duration
                        ),
                        ports,
                    )
                )
            used = [cpu_seconds(s.pid) - b for s, b in zip(servers, before, strict=True)]
            for sampler in samplers:
                sampler.done.set()
                sampler.join()
        finally:
            for server in servers:
                server.terminate()
                server.wait(30)
                if server.stdout is not None:
                    server.stdout.close()
    return [
        _figures(report, cpu, sampler)
        for report, cpu, sampler in zip(reports, used, samplers, strict=True)
    ]


def _figures(report: dict[str, Any], used: float, sampler: Sampler) -> dict[str, float]:
    actions = report["actions"]["accepted"]
    return {
        "actions_per_s": report["actions"]["per_second"],
        "p50_ms": report["latency_ms"]["p50"],
        "p99_ms": report["latency_ms"]["p99"],
        "cpu_ms_per_action": 1000 * used / actions if actions else float("nan"),
        "steady_cpu_ms_per_action": sampler.steady_ms_per_action(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("other", type=Path, nargs="?", help="the other checkout (a git worktree)")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--duration", type=float, default=20)
    parser.add_argument(
        "--together", action="store_true", help="both servers at once (module docstring)"
    )
    parser.add_argument("--same", action="store_true", help="this tree on both sides (A/A)")
    args = parser.parse_args()
    if args.other is None and not args.same:
        parser.error("give the other checkout, or --same to put this tree on both sides")
    trees = {"this": ROOT, "other": ROOT if args.same else args.other.resolve()}
    results: dict[str, list[dict[str, float]]] = {"this": [], "other": []}
    for run in range(args.runs):
        order = ("other", "this") if run % 2 else ("this", "other")
        if args.together:
            pair = dict(zip(order, together([trees[name] for name in order], args), strict=True))
        else:
            pair = {name: one_run(trees[name], args) for name in order}
        for name in order:
            results[name].append(pair[name])
            shown = ", ".join(f"{key} {value:.3f}" for key, value in pair[name].items())
            print(f"run {run + 1} {name:5}: {shown}", flush=True)
        if args.together:
            key = "steady_cpu_ms_per_action"
            print(f"run {run + 1} {key} this/other {pair['this'][key] / pair['other'][key]:.3f}")
    medians = {
        name: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        for name, runs in results.items()
    }
    for key in medians["this"]:
        this, other = medians["this"][key], medians["other"][key]
        print(f"{key:18}: this {this:.3f}, other {other:.3f}, this/other {this / other:.2f}")
    if args.together:
        key = "steady_cpu_ms_per_action"
        ratios = sorted(
            a[key] / b[key] for a, b in zip(results["this"], results["other"], strict=True)
        )
        low, high = median_interval(ratios)
        print(
            f"{key} this/other by run: median {statistics.median(ratios):.3f} "
            f"(95% interval {low:.3f}-{high:.3f}), range {ratios[0]:.3f}-{ratios[-1]:.3f}, "
            f"{sum(r < 1 for r in ratios)} of {len(ratios)} runs under 1"
        )


def median_interval(values: list[float], draws: int = 10_000) -> tuple[float, float]:
    """A 95% interval of the median of ``values`` (a bootstrap: the median of as many values
    drawn again with replacement, ``draws`` times; seeded, so a rerun prints the same)."""
    rng = random.Random(0)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(draws))
    return medians[int(0.025 * draws)], medians[int(0.975 * draws) - 1]


if __name__ == "__main__":
    main()

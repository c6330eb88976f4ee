"""One pass of the ladder queue (server.ladder.matchmaking.form_tables) over a big queue.

    .venv/bin/python benchmarks/bench_matchmaking.py [--players 1000] [--seed 1]

The players' mu are drawn from a seeded normal distribution like a real ladder's (mean 25,
sd 4). Runs: everyone just joined (the default schedule's narrowest gap, 3), everyone
having waited 60 s (gap 9) and 470 s (gap 50,
the most), and a queue whose join times are spread over the last 60 s.
For each: tables formed (the most is players // 4), the time of the pass (best of 5), and
the rating spread per table (min / median / p90 / max). Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from server.ladder.matchmaking import Entry, GapSchedule, form_tables

DEFAULT = GapSchedule()  # config/default.toml's [matchmaking]: 3, +1 every 10 s, at most 50


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def run(label: str, entries: list[Entry], now: float, schedule: GapSchedule) -> None:
    best = float("inf")
    tables: list[tuple[str, str, str, str]] = []
    for _ in range(5):
        start = time.perf_counter()
        tables = form_tables(entries, now, schedule)
        best = min(best, time.perf_counter() - start)
    mu = {e.name: e.mu for e in entries}
    spreads = [max(mu[n] for n in t) - min(mu[n] for n in t) for t in tables]
    print(f"{label}")
    print(
        f"  tables formed: {len(tables)} of {len(entries) // 4} possible "
        f"({4 * len(tables)} of {len(entries)} players seated, {len(entries) - 4 * len(tables)} "
        f"left waiting); pass: {best * 1000:.1f} ms (best of 5)"
    )
    if spreads:
        print(
            f"  spread per table (mu): min {min(spreads):.3f}, median "
            f"{statistics.median(spreads):.3f}, p90 {percentile(spreads, 0.9):.3f}, "
            f"max {max(spreads):.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    mus = [rng.gauss(25.0, 4.0) for _ in range(args.players)]
    print(
        f"{args.players} players, mu ~ normal(25, 4) seed {args.seed}; schedule gap_start "
        f"{DEFAULT.gap_start:g} gap_step {DEFAULT.gap_step:g} every {DEFAULT.step_seconds:g} s, "
        f"gap_max {DEFAULT.gap_max:g}"
    )
    fresh = [Entry(f"p{i:04d}", mu, 0.0) for i, mu in enumerate(mus)]
    run("everyone just joined (waited 0 s: gap 3)", fresh, 0.0, DEFAULT)
    run("everyone waited 60 s (gap 9)", fresh, 60.0, DEFAULT)
    run("everyone waited 470 s (gap 50, the most)", fresh, 470.0, DEFAULT)
    everyone = next(
        (
            w
            for w in range(0, 480, 10)
            if 4 * len(form_tables(fresh, float(w), DEFAULT)) == len(fresh) - len(fresh) % 4
        ),
        None,
    )
    print(f"the shortest wait (in steps of 10 s) after which one pass seats everyone: {everyone} s")
    spread_in = [Entry(f"p{i:04d}", mu, rng.uniform(0.0, 60.0)) for i, mu in enumerate(mus)]
    run("joined over the last 60 s (gaps 3..9)", spread_in, 60.0, DEFAULT)


if __name__ == "__main__":
    main()

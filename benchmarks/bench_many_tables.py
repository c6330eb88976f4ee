"""The rules' cost per action with many tables in one process, as a server holds them.

A server applies each table's actions in turn, every table's hand live at once: a cache the
rules keep across hands (the engine's cache of a hand's waits, asked for every seat at every
discard) is shared by all of them, so one sized for a few hundred tables misses at a few
thousand. This plays ``--tables`` one-hand matches with the fast bot, then replays their
logs interleaved (each match's next action in turn, ``Match.apply``, as the server applies
them) and prints the CPU time per action, for each number of tables, each tree (``--other``:
another checkout, a git worktree) in a child process of its own, in turns, ``--runs`` times.
A cost per action that grows with the tables is a cache too small for them. Figures only.

    .venv/bin/python benchmarks/bench_many_tables.py [--tables 1,500,2000] [--runs 3]
        [--other TREE]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from benchkit import ab_trees, child_figures

# Run in a child process with the tree's own engine first on the path: prints
# {"actions": N, "cpu_s": S} for the interleaved replay of TABLES one-hand matches.
CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from engine.actions import Action
from engine.bots import make_bot
from engine.forms import waits_of_packed
from engine.match import Match
from engine.simulation import play_match

tables, seed = int(sys.argv[2]), int(sys.argv[3])
logs = []
for i in range(tables):
    bots = [make_bot("fast", (seed + i) * 4 + p) for p in range(4)]
    played = play_match(seed + i, bots, hands=1)
    logs.append((seed + i, [(p, a.to_dict()) for _, p, a in played.log]))
waits_of_packed.cache_clear()
matches = [Match(s, hands=1) for s, _ in logs]
for match in matches:
    match.start_hand()
steps = [[(p, Action.from_dict(a)) for p, a in log] for _, log in logs]
longest = max(len(s) for s in steps)
actions = 0
started = time.process_time()
for i in range(longest):
    for match, log in zip(matches, steps):
        if i < len(log):
            match.apply(*log[i])
            actions += 1
print(json.dumps({"actions": actions, "cpu_s": time.process_time() - started}))
"""


def one_run(tree: Path, tables: int, seed: int) -> float:
    """Microseconds of CPU per action replaying ``tables`` interleaved hands with ``tree``'s
    engine."""
    figures = child_figures(CHILD, tree, tables, seed)
    return 1e6 * figures["cpu_s"] / figures["actions"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", default="1,500,2000", help="comma-separated")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--other", type=Path, help="another checkout to compare (A/B)")
    args = parser.parse_args()
    trees = ab_trees(args.other)
    sizes = [int(n) for n in args.tables.split(",")]
    print(f"the rules' CPU per action, hands interleaved over N tables, {args.runs} run(s)")
    print(f"{'tree':6} {'tables':>6} {'run':>4} {'us/action':>10}", flush=True)
    results: dict[tuple[str, int], list[float]] = {}
    for run in range(1, args.runs + 1):
        for size in sizes:
            for name, tree in trees.items():
                us = one_run(tree, size, seed=1000 * run)
                results.setdefault((name, size), []).append(us)
                print(f"{name:6} {size:>6} {run:>4} {us:>10.1f}", flush=True)
    for size in sizes:
        line = "  ".join(
            f"{name} {statistics.median(results[name, size]):.1f} us "
            f"({min(results[name, size]):.1f}-{max(results[name, size]):.1f})"
            for name in trees
        )
        print(f"{size:>6} tables: {line}")


if __name__ == "__main__":
    main()

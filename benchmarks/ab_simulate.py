"""A/B of ``guobiao simulate``: this tree against another checkout, in turns, same machine.

Runs ``guobiao simulate`` from this tree's ``.venv`` and from OTHER's, alternately (A B A B
...), so that both see the same load on a shared machine. Each run plays the same matches
(``--matches``, ``--seed``, ``--rules``, ``--bot``) and writes its hands and action log to a
temporary folder. Prints each run's hands/s (wall clock and per CPU second, as the command
reports them), the median of each tree and the ratio this / other; then whether the two trees
played the same hands and actions (byte-identical ``--out`` and ``--log`` files), which is
what a change meant to keep play as it was must show. Figures only: no assertion, no exit
status but for a command that fails.

    .venv/bin/python benchmarks/ab_simulate.py OTHER_TREE [--runs 3] [--matches 30]
        [--seed 11] [--rules mcr] [--bot default]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEED = re.compile(r"speed\s+([\d.]+) hands/s \(([\d.]+) s wall clock; ([\d.]+) hands per CPU")


def simulate(tree: Path, args: argparse.Namespace, out: Path) -> tuple[float, float]:
    """One run in ``tree``: (hands/s wall clock, hands per CPU second)."""
    command = [
        str(tree / ".venv" / "bin" / "guobiao"),
        "simulate",
        "--matches",
        str(args.matches),
        "--seed",
        str(args.seed),
        "--rules",
        args.rules,
        "--bot",
        args.bot,
        "--out",
        str(out / "hands.jsonl"),
        "--log",
        str(out / "log.jsonl"),
        "--quiet",
    ]
    done = subprocess.run(command, cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    found = SPEED.search(done.stdout)
    if found is None:
        sys.exit(f"no speed line in the output of {' '.join(command)}:\n{done.stdout}")
    return float(found.group(1)), float(found.group(3))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the other checkout (with its own .venv)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each tree (default 3)")
    parser.add_argument("--matches", type=int, default=30)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--rules", default="mcr")
    parser.add_argument("--bot", default="default")
    args = parser.parse_args()
    trees = {"this": ROOT, "other": args.other.resolve()}
    for name, tree in trees.items():
        if not (tree / ".venv" / "bin" / "guobiao").exists():
            sys.exit(f"{name} tree {tree} has no .venv/bin/guobiao (make venv there)")
    print(
        f"guobiao simulate --matches {args.matches} --seed {args.seed} --rules {args.rules} "
        f"--bot {args.bot}; this = {trees['this']}, other = {trees['other']}"
    )
    speeds: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory(prefix="ab_simulate.") as tmp:
        outs = {name: Path(tmp) / name for name in trees}
        for out in outs.values():
            out.mkdir()
        for run in range(args.runs):
            for name, tree in trees.items():
                wall, cpu = simulate(tree, args, outs[name])
                speeds[name].append((wall, cpu))
                print(f"run {run + 1} {name:5}  {wall:7.1f} hands/s  {cpu:7.1f} per CPU second")
        same = {
            file: (outs["this"] / file).read_bytes() == (outs["other"] / file).read_bytes()
            for file in ("hands.jsonl", "log.jsonl")
        }
    medians = {
        name: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
        for name, runs in speeds.items()
    }
    for name, (wall, cpu) in medians.items():
        print(f"median {name:5} {wall:7.1f} hands/s  {cpu:7.1f} per CPU second")
    (wall_a, cpu_a), (wall_b, cpu_b) = medians["this"], medians["other"]
    print(f"ratio this/other: {wall_a / wall_b:.3f} (wall clock), {cpu_a / cpu_b:.3f} (CPU)")
    for file, equal in same.items():
        print(f"{file}: {'identical' if equal else 'DIFFERENT'} in the two trees")


if __name__ == "__main__":
    main()

"""A/B: this tree's calculator against another tree's, on the same hands, back to back.

Each round runs one worker subprocess per tree, alternating (A B A B ...), each with its
tree's own ``.venv/bin/python`` (or this interpreter when the tree has none) and the tree
first on ``sys.path``. A worker builds the hands from its tree's ``tests/handgen.py`` with
the same seed (the same hands as long as the generator is unchanged; the worker prints a
checksum of the totals, which also shows whether the two calculators agree), then times,
with the garbage collector off: MCR scoring of every hand form, and the ``custom`` rule set
with 0, 1, 2 and 4 wild tiles, the wild-scoring memory emptied before each row. The best of
the rounds counts for each row; the last column is B's time over A's (above 1: B slower).
Figures only: no assertion, no exit status.

    .venv/bin/python benchmarks/ab.py /work/baseline [--hands 1500] [--rounds 3]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
ROWS = ("mcr", "custom 0", "custom 1", "custom 2", "custom 4")


def _worker(root: Path, hands: int, seed: int) -> None:
    sys.path[:0] = [str(root / "tests"), str(root)]
    import handgen  # noqa: PLC0415 - the tree's own generator

    from engine import scoring  # noqa: PLC0415 - the tree's own calculator
    from engine.hand import Hand  # noqa: PLC0415
    from engine.rules import CUSTOM, MCR  # noqa: PLC0415
    from engine.tiles import WILD  # noqa: PLC0415

    base = [(h, c) for _, h, c in handgen.mixed(hands, seed)]

    def wild(k: int) -> list[tuple[object, object]]:
        rng = random.Random(f"ab-{k}-{seed}")
        out = []
        for hand, plain in base:
            tiles = [*hand.standing, hand.win_tile]
            for i in rng.sample(range(len(tiles)), min(k, len(tiles))):
                tiles[i] = WILD
            *standing, win = tiles
            ctx = plain
            if win == WILD:
                ctx = scoring.WinContext(
                    self_drawn=True, seat_wind=plain.seat_wind, round_wind=plain.round_wind
                )
            out.append((Hand(hand.melds, tuple(sorted(standing)), win), ctx))
        return out

    jobs = {"mcr": (base, MCR), "custom 0": (base, CUSTOM)}
    for k in (1, 2, 4):
        jobs[f"custom {k}"] = (wild(k), CUSTOM)
    result: dict[str, object] = {}
    checksum = 0
    for name, (pairs, rules) in jobs.items():
        scoring._score_wild_cached.cache_clear()
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        for hand, ctx in pairs:
            checksum += scoring.score(hand, ctx, rules).total  # type: ignore[arg-type]
        result[name] = (time.perf_counter() - start) / len(pairs)
        gc.enable()
    result["checksum"] = checksum
    print(json.dumps(result))


def _python(root: Path) -> str:
    venv = root / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _run(root: Path, hands: int, seed: int) -> dict[str, float]:
    out = subprocess.run(
        [
            _python(root),
            __file__,
            "--worker",
            str(root),
            *("--hands", str(hands)),
            "--seed",
            str(seed),
        ],
        check=True,
        capture_output=True,
        text=True,
        cwd=root,
    )
    data: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return data


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("other", nargs="?", type=Path, help="the other tree (B)")
    parser.add_argument("--hands", type=int, default=1500, help="hands per row")
    parser.add_argument("--rounds", type=int, default=3, help="A/B rounds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker(args.worker, args.hands, args.seed)
        return
    if args.other is None:
        parser.error("give the other tree's path")
    trees = {"A": HERE, "B": args.other.resolve()}
    best: dict[str, dict[str, float]] = {"A": {}, "B": {}}
    sums: dict[str, float] = {}
    for _ in range(args.rounds):
        for label, root in trees.items():
            data = _run(root, args.hands, args.seed)
            sums[label] = data.pop("checksum")
            for row, value in data.items():
                best[label][row] = min(best[label].get(row, value), value)
    print(f"A = {trees['A']}\nB = {trees['B']}")
    print(f"{args.hands} hands per row, best of {args.rounds} rounds, times in us per hand")
    header = f"{'row':>9} {'A':>9} {'B':>9} {'B / A':>7}"
    print(header)
    print("-" * len(header))
    for row in ROWS:
        a, b = best["A"][row] * 1e6, best["B"][row] * 1e6
        print(f"{row:>9} {a:>9.1f} {b:>9.1f} {b / a:>7.2f}")
    same = "the same" if sums["A"] == sums["B"] else "different"
    print(f"checksums of the totals: A {sums['A']:.0f}, B {sums['B']:.0f} ({same})")


if __name__ == "__main__":
    main()

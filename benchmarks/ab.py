"""A/B: this tree's calculator against another tree's, on the same hands, in one process.

Both trees' ``engine`` packages are imported into this process, one after the other (each
from its own directory; this interpreter runs both, so use one whose Python both support).
The hands come from this tree's ``tests/handgen.py``, as notation, parsed by each tree's
own parser. Rows: MCR scoring of every hand form, and the ``custom`` rule set with 0, 1, 2
and 4 wild tiles. Each row is timed in many short slices, A and B alternating (ABBA), the
wild-scoring memory emptied before each slice and the garbage collector off, so that a
busy machine slows both alike; the figures are the sums over the slices. The last column is
B's time over A's (above 1: B is slower). A checksum of the totals says whether the two
calculators agree. Figures only: no assertion, no exit status.

    .venv/bin/python benchmarks/ab.py /work/baseline [--hands 1000] [--repeats 6]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchkit import ROOT, paused_gc

ROWS = ("mcr", "custom 0", "custom 1", "custom 2", "custom 4")
SLICE = 50  # hands per timed slice


@dataclass
class Tree:
    """The pieces of one tree's engine the benchmark calls."""

    root: Path
    score: Callable[..., Any]
    clear: Callable[[], None]  # empty the wild-scoring memory
    parse_hand: Callable[[str], Any]
    win_context: Callable[..., Any]
    wind: Callable[[int], Any]
    mcr: Any
    custom: Any


def _load(root: Path) -> Tree:
    """Import ``root``'s engine, then take it out of ``sys.modules`` (its functions keep
    their own module globals), so that the next tree imports its own."""
    for name in [n for n in sys.modules if n == "engine" or n.startswith("engine.")]:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        for name in ("engine.scoring", "engine.notation", "engine.rules", "engine.tiles"):
            __import__(name)
        m = sys.modules
        tree = Tree(
            root=root,
            score=m["engine.scoring"].score,
            clear=m["engine.scoring"]._score_wild_cached.cache_clear,
            parse_hand=m["engine.notation"].parse_hand,
            win_context=m["engine.scoring"].WinContext,
            wind=m["engine.tiles"].Wind,
            mcr=m["engine.rules"].MCR,
            custom=m["engine.rules"].CUSTOM,
        )
    finally:
        sys.path.remove(str(root))
    for name in [n for n in sys.modules if n == "engine" or n.startswith("engine.")]:
        del sys.modules[name]
    return tree


def _hands(hands: int, seed: int) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Each row's hands, as (notation, WinContext fields), from this tree's generator."""
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
    import handgen  # noqa: PLC0415 - this tree's generator

    from engine.hand import Hand  # noqa: PLC0415
    from engine.notation import format_hand  # noqa: PLC0415
    from engine.tiles import WILD  # noqa: PLC0415

    base = handgen.mixed(hands, seed)
    rows: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for k in (0, 1, 2, 4):
        rng = random.Random(f"ab-{k}-{seed}")
        out = []
        for _, hand, ctx in base:
            tiles = [*hand.standing, hand.win_tile]
            for i in rng.sample(range(len(tiles)), min(k, len(tiles))):
                tiles[i] = WILD
            *standing, win = tiles
            fields = {f: getattr(ctx, f) for f in ctx.__slots__}
            if win == WILD:
                fields = {
                    "self_drawn": True,
                    "seat_wind": ctx.seat_wind,
                    "round_wind": ctx.round_wind,
                }
            fields = {f: v.value if hasattr(v, "value") else v for f, v in fields.items()}
            out.append((format_hand(Hand(hand.melds, tuple(sorted(standing)), win)), fields))
        rows["mcr" if k == 0 else f"custom {k}"] = out
    rows["custom 0"] = rows["mcr"]
    for name in [
        n for n in sys.modules if n == "engine" or n.startswith("engine.") or n == "handgen"
    ]:
        del sys.modules[name]
    del sys.path[:2]
    return rows


def _prepared(tree: Tree, row: str, hands: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    out = []
    for text, fields in hands:
        values = {f: tree.wind(v) if f.endswith("_wind") else v for f, v in fields.items()}
        out.append((tree.parse_hand(text), tree.win_context(**values)))
    rules = tree.mcr if row == "mcr" else tree.custom
    return [(hand, ctx, rules) for hand, ctx in out]


def _time_slice(score: Callable[..., Any], clear: Callable[[], None], jobs: list[Any]) -> float:
    clear()
    start = time.perf_counter()
    for hand, ctx, rules in jobs:
        score(hand, ctx, rules)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("other", type=Path, help="the other tree (B)")
    parser.add_argument("--hands", type=int, default=1000, help="hands per row")
    parser.add_argument("--repeats", type=int, default=6, help="times each slice is timed")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows = _hands(args.hands, args.seed)
    trees = {"A": _load(ROOT), "B": _load(args.other.resolve())}
    print(f"A = {trees['A'].root}\nB = {trees['B'].root}")
    print(f"{args.hands} hands per row in slices of {SLICE}, each timed {args.repeats} times, ABBA")
    header = f"{'row':>9} {'A us/hand':>10} {'B us/hand':>10} {'B / A':>7}"
    print(header)
    print("-" * len(header))
    checks = {"A": 0, "B": 0}
    for row in ROWS:
        jobs = {label: _prepared(tree, row, rows[row]) for label, tree in trees.items()}
        for label, tree in trees.items():
            checks[label] += sum(tree.score(*job).total for job in jobs[label])
        spent = {"A": 0.0, "B": 0.0}
        with paused_gc():
            for repeat in range(args.repeats):
                order = ("A", "B") if repeat % 2 == 0 else ("B", "A")
                for start in range(0, len(rows[row]), SLICE):
                    for label in order:
                        tree = trees[label]
                        spent[label] += _time_slice(
                            tree.score, tree.clear, jobs[label][start : start + SLICE]
                        )
        n = len(rows[row]) * args.repeats
        a, b = spent["A"] / n * 1e6, spent["B"] / n * 1e6
        print(f"{row:>9} {a:>10.1f} {b:>10.1f} {b / a:>7.2f}")
    same = "the same" if checks["A"] == checks["B"] else "different"
    print(f"checksums of the totals: A {checks['A']}, B {checks['B']} ({same})")


if __name__ == "__main__":
    main()

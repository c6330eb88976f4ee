"""Shanten speed: guobiao's ``engine.shanten`` against PyMahjongGB, when it is installed.

Times seeded random hands drawn from a shuffled 136-tile wall: 13-tile hands for ``shanten``,
``useful_tiles`` and ``waits``, 14-tile hands for ``is_winning``, and prints calls per second.
The reference has no call for every form's useful tiles at once nor for a bare winning test,
so ``useful_tiles`` is set against its five per-form calls (each returns its form's useful
tiles, and a caller needs all five) and ``is_winning`` has no counterpart; ``shanten`` is set
against ``MahjongShanten``. Hands are converted for each side before the clock starts, the
garbage collector is off while timing, and each figure is the best of ``--repeat`` passes:
the first pass fills guobiao's pattern caches, and its figure is printed apart ("cold":
truly cold for the first call only, as later ones find the caches partly filled).
``ours/ref`` is the speed ratio, above 1 when guobiao is faster. Prints figures only: no
assertion, no exit status.

    .venv/bin/python benchmarks/bench_shanten.py [--hands 20000] [--seed 0] [--repeat 3]
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

from benchkit import ROOT, paused_gc

sys.path.insert(0, str(ROOT))

from engine import shanten as guobiao
from engine.tiles import N_KINDS, counts_of

try:
    import MahjongGB
except ImportError:  # the reference is a test dependency: without it, print ours only
    MahjongGB = None

CODES = (
    [f"W{r}" for r in range(1, 10)]  # characters
    + [f"B{r}" for r in range(1, 10)]  # dots
    + [f"T{r}" for r in range(1, 10)]  # bamboo
    + ["F1", "F2", "F3", "F4", "J1", "J2", "J3"]  # E S W N, C F P
)
REFERENCE_FORMS = (
    "RegularShanten",
    "SevenPairsShanten",
    "ThirteenOrphansShanten",
    "HonorsAndKnittedTilesShanten",
    "KnittedStraightShanten",
)


def _hands(n: int, size: int, rng: random.Random) -> list[list[int]]:
    wall = [tile for tile in range(N_KINDS) for _ in range(4)]
    return [sorted(rng.sample(wall, size)) for _ in range(n)]


def _seconds(call: Callable[[Any], object], inputs: Sequence[Any]) -> float:
    with paused_gc():
        start = time.perf_counter()
        for item in inputs:
            call(item)
        return time.perf_counter() - start


def _reference_shanten(hand: tuple[str, ...]) -> None:
    MahjongGB.MahjongShanten((), hand)


def _reference_useful(hand: tuple[str, ...]) -> None:
    for name in REFERENCE_FORMS:
        getattr(MahjongGB, name)(hand)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=20000, help="hands per call (default 20000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the hand generator")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes, best kept")
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    hands13 = _hands(args.hands, 13, rng)
    hands14 = _hands(args.hands, 14, rng)
    ours13 = [counts_of(hand) for hand in hands13]
    ours14 = [counts_of(hand) for hand in hands14]
    codes13 = [tuple(CODES[tile] for tile in hand) for hand in hands13]

    has_reference = MahjongGB is not None
    cases: list[tuple[str, Callable[[Any], object], list[Any], Callable[[Any], object] | None]]
    cases = [
        ("shanten", guobiao.shanten, ours13, _reference_shanten if has_reference else None),
        (
            "useful_tiles",
            guobiao.useful_tiles,
            ours13,
            _reference_useful if has_reference else None,
        ),
        ("waits", guobiao.waits, ours13, None),
        ("is_winning", guobiao.is_winning, ours14, None),
    ]
    if has_reference:
        version = f"pymahjonggb {metadata.version('pymahjonggb')}"
    else:
        version = "PyMahjongGB not installed: reference not timed"

    print(
        f"shanten: {args.hands} random hands, seed {args.seed}, best of {args.repeat}; "
        f"Python {platform.python_version()}, {version}"
    )
    header = f"{'call':<14} {'ours cold/s':>12} {'ours/s':>10} {'ref/s':>10} {'ours/ref':>9}"
    print(header)
    print("-" * len(header))
    for name, ours, inputs, reference in cases:
        times = [_seconds(ours, inputs) for _ in range(max(args.repeat, 1) + 1)]
        cold, best = times[0], min(times[1:])
        row = f"{name:<14} {len(inputs) / cold:>12,.0f} {len(inputs) / best:>10,.0f}"
        if reference is not None:
            ref = min(_seconds(reference, codes13) for _ in range(max(args.repeat, 1)))
            row += f" {len(codes13) / ref:>10,.0f} {ref / best:>9.2f}"
        else:
            row += f" {'-':>10} {'-':>9}"
        print(row)


if __name__ == "__main__":
    main()

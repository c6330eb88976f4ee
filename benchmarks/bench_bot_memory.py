"""What a seated bot holds in memory: the bots of a table, four of a level, play a match and
the memory they hold is read after it (``tracemalloc``: the Python objects they keep
alive, their memos; the engine's own caches, shared by every bot in the process, apart).

A server seats a bot wherever a seat has no person: "Play now"'s three, a casual table's
bots, the stand-in of every absent player. Each keeps what it needs to decide quickly; this
prints how much, by level, so that the memory of a server full of such tables can be told.
Figures only; no assertion.

    .venv/bin/python benchmarks/bench_bot_memory.py [--hands 1,4,16] [--seed 5]
        [--levels easy,normal,strong]
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc

from engine.bots import make_bot
from engine.rules import MCR
from engine.simulation import play_match


def bots_after(level: str, hands: int, seed: int) -> float:
    """KiB each of the four bots of ``level`` holds once they have played a match of
    ``hands`` hands (the mean of the four): what is traced with them, less without them."""
    bots = [make_bot(level, seed=seed + p) for p in range(4)]
    play_match(seed, bots, MCR, hands=hands)
    gc.collect()
    with_bots = tracemalloc.get_traced_memory()[0]
    del bots
    gc.collect()
    return (with_bots - tracemalloc.get_traced_memory()[0]) / 4 / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", default="1,4,16", help="match lengths, comma-separated")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--levels", default="easy,normal,strong")
    args = parser.parse_args()
    tracemalloc.start()
    lengths = [int(h) for h in args.hands.split(",")]
    print(f"KiB a bot holds after a match of each length (seed {args.seed})")
    print(f"{'level':>7} " + " ".join(f"{h:>4} hands" for h in lengths))
    for level in args.levels.split(","):
        row = [bots_after(level, h, args.seed) for h in lengths]
        print(f"{level:>7} " + " ".join(f"{k:>10.1f}" for k in row), flush=True)
    gc.collect()
    shared = tracemalloc.get_traced_memory()[0] / 1024
    print(f"the engine's caches, shared by every bot: {shared:,.0f} KiB")


if __name__ == "__main__":
    main()

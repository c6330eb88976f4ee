"""Wild-tile scoring speed: the calculator on hands with 0, 1, 2 and 4 wild tiles.

Random winning hands of every form (``tests/handgen.py``) have k of their standing tiles
(winning tile included) replaced by wild tiles and are scored under the ``custom`` rule set;
the hands are built before the clock starts and the garbage collector is off while timing.
Prints hands per second for each k and the ratio of the time per hand to the 0-wild case
measured in the same process. The calculator remembers the hands it scored with wild tiles
(the table asks again and again); that memory is emptied before each row, so every hand is
scored from scratch. Then the slowest hands seen so far with 5 to 8 wild tiles, each timed
once from scratch, in milliseconds. Figures only: no assertion, no exit status.

    .venv/bin/python benchmarks/bench_wilds.py [--hands 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time

from benchkit import ROOT, paused_gc

sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

import handgen  # noqa: E402 - needs the tests directory on sys.path

from engine import scoring  # noqa: E402
from engine.hand import Hand  # noqa: E402
from engine.notation import parse_hand  # noqa: E402
from engine.rules import CUSTOM  # noqa: E402
from engine.scoring import WinContext, score  # noqa: E402
from engine.tiles import WILD  # noqa: E402


def _with_wilds(hand: Hand, ctx: WinContext, k: int, rng: random.Random) -> tuple[Hand, WinContext]:
    tiles = [*hand.standing, hand.win_tile]
    for i in rng.sample(range(len(tiles)), min(k, len(tiles))):
        tiles[i] = WILD
    *standing, win = tiles
    if win == WILD:
        ctx = WinContext(self_drawn=True, seat_wind=ctx.seat_wind, round_wind=ctx.round_wind)
    return Hand(hand.melds, tuple(sorted(standing)), win), ctx


# Hands with many wild tiles (flowers wild): the worst cases found, for the second table.
WORST = (
    "123456m********",
    "EESSWW********",
    "1234567m*******",
    "1m4m7m2p5p8p********",
    "[111m,1][222p,1]11s******",
    "[EEE,1][SSS,2]1m*******",
    "[123m,1][456p,1]5s7s******",
    "1133557799m****",
    "123m456p77s******",
)


def _time(pairs: list[tuple[Hand, WinContext]]) -> float:
    scoring._score_wild_cached.cache_clear()
    with paused_gc():
        start = time.perf_counter()
        for hand, ctx in pairs:
            score(hand, ctx, CUSTOM)
        return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=2000, help="hands per wild count")
    parser.add_argument("--seed", type=int, default=0, help="seed of the hand generator")
    args = parser.parse_args(argv)

    base = handgen.mixed(args.hands, args.seed)
    print(
        f"wild-tile scoring: {len(base)} hands per row, seed {args.seed}, custom rule set; "
        f"Python {platform.python_version()}"
    )
    header = f"{'wilds':>5} {'hands/s':>10} {'us/hand':>9} {'x 0-wild':>9}"
    print(header)
    print("-" * len(header))
    _time([(h, c) for _, h, c in handgen.mixed(200, args.seed + 1)])  # warm-up
    first = 0.0
    for k in (0, 1, 2, 4):
        rng = random.Random(f"bench-wilds-{k}-{args.seed}")
        pairs = [_with_wilds(hand, ctx, k, rng) for _, hand, ctx in base]
        seconds = _time(pairs)
        per_hand = seconds / len(pairs)
        if k == 0:
            first = per_hand
        print(
            f"{k:>5} {len(pairs) / seconds:>10,.0f} {per_hand * 1e6:>9.1f} "
            f"{per_hand / first if first else 0:>9.1f}"
        )
    print()
    print(f"{'hand (self-drawn)':<28} {'wilds':>5} {'ms':>8}")
    for text in WORST:
        hand = parse_hand(text)
        seconds = _time([(hand, WinContext(self_drawn=True))])
        print(f"{text:<28} {hand.wilds:>5} {seconds * 1e3:>8.1f}")


if __name__ == "__main__":
    main()

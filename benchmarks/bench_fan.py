"""Fan calculator speed: guobiao's ``engine.scoring.score`` against PyMahjongGB.

Scores the same seeded random winning hands (``tests/handgen.py``, every hand form in turn)
with both calculators in one process and prints hands per second for each and the speed
ratio ours/reference, overall and per hand form. Generating the hands and converting them to
the reference's arguments happen before the clock starts; only the calculator calls are
timed, with the garbage collector off as ``timeit`` does. One pass, no warm caches but a few
hundred warm-up calls on other hands; then a second pass over all the hands shows the steady
state of a long-running process, whose per-suit caches are warm. Prints figures only: no
assertion, no exit status.

    .venv/bin/python benchmarks/bench_fan.py [--hands 20000] [--seed 0]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from importlib import metadata
from typing import Any

from benchkit import ROOT, paused_gc

sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

import handgen  # noqa: E402 - needs the tests directory on sys.path
from MahjongGB import MahjongFanCalculator  # noqa: E402
from reference import reference_args  # noqa: E402

from engine.hand import Hand  # noqa: E402
from engine.scoring import WinContext, score  # noqa: E402

WARM_UP = 300


def _time_ours(pairs: list[tuple[Hand, WinContext]]) -> tuple[float, int]:
    """Seconds to score ``pairs`` with guobiao, and how many raised (timed all the same)."""
    errors = 0
    with paused_gc():
        start = time.perf_counter()
        for hand, ctx in pairs:
            try:
                score(hand, ctx)
            except Exception:
                errors += 1
        return time.perf_counter() - start, errors


def _time_reference(calls: list[dict[str, Any]]) -> float:
    """Seconds to score the prepared ``reference_args`` with PyMahjongGB."""
    with paused_gc():
        start = time.perf_counter()
        for kwargs in calls:
            MahjongFanCalculator(**kwargs)
        return time.perf_counter() - start


def _rate(n: int, seconds: float) -> str:
    return f"{n / seconds:,.0f}" if seconds > 0 else "-"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=20000, help="hands to score (default 20000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the hand generator")
    args = parser.parse_args(argv)

    hands = handgen.mixed(args.hands, args.seed)
    ours_input: dict[str, list[tuple[Hand, WinContext]]] = {}
    reference_input: dict[str, list[dict[str, Any]]] = {}
    for form, hand, ctx in hands:
        ours_input.setdefault(form, []).append((hand, ctx))
        reference_input.setdefault(form, []).append(reference_args(hand, ctx))

    warm_up = [(hand, ctx) for _, hand, ctx in handgen.mixed(WARM_UP, args.seed + 1)]
    _time_ours(warm_up)
    _time_reference([reference_args(hand, ctx) for hand, ctx in warm_up])

    print(
        f"fan calculator: {len(hands)} hands, seed {args.seed}; "
        f"Python {platform.python_version()}, pymahjonggb {metadata.version('pymahjonggb')}"
    )
    header = f"{'form':<24} {'hands':>6} {'ours h/s':>10} {'ref h/s':>10} {'ours/ref':>9}"
    print(header)
    print("-" * len(header))
    totals = [0.0, 0.0]
    failed = 0
    for form in handgen.FORMS:
        rows = ours_input.get(form, [])
        if not rows:
            continue
        ours, ours_errors = _time_ours(rows)
        ref = _time_reference(reference_input[form])
        totals[0] += ours
        totals[1] += ref
        failed += ours_errors
        note = f"  ({ours_errors} raised)" if ours_errors else ""
        print(
            f"{form:<24} {len(rows):>6} {_rate(len(rows), ours):>10} {_rate(len(rows), ref):>10} "
            f"{ref / ours if ours else 0:>9.3f}{note}"
        )
    print("-" * len(header))
    print(
        f"{'all':<24} {len(hands):>6} {_rate(len(hands), totals[0]):>10} "
        f"{_rate(len(hands), totals[1]):>10} {totals[1] / totals[0] if totals[0] else 0:>9.3f}"
    )
    # guobiao caches what it learns about each suit's tile pattern (engine/forms.py), as a
    # long-running server does; a second pass over the same hands shows that steady state.
    everything = [pair for form in handgen.FORMS for pair in ours_input.get(form, [])]
    everything_ref = [kw for form in handgen.FORMS for kw in reference_input.get(form, [])]
    ours, _ = _time_ours(everything)
    ref = _time_reference(everything_ref)
    print(
        f"{'all, 2nd pass (warm)':<24} {len(hands):>6} {_rate(len(hands), ours):>10} "
        f"{_rate(len(hands), ref):>10} {ref / ours if ours else 0:>9.3f}"
    )
    if failed:
        print(f"guobiao raised on {failed} hands (timed all the same)")


if __name__ == "__main__":
    main()

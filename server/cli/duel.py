"""``guobiao duel``: one bot against another in duplicate, with the margin's 95% interval.

    guobiao duel --challenger strong --reference normal --deals 200 --seed 1 --json duel.json

Each deal (a match seed: the walls of all its hands) is played once per seating, by default
the challenger at each player in turn against three of the reference (``engine.duel``);
deals are spread over a process pool and merged in deal order, so the figures are the same
whatever ``--processes``. The summary goes to stdout, progress lines to stderr, and
``--json FILE`` writes the figures with each deal's totals. The challenger's decision times
are measured here (``time.perf_counter`` around each ``choose``), never in the engine.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import queue
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import engine
from engine.bots import BOTS
from engine.duel import (
    ONE_AGAINST_THREE,
    DealResult,
    DuelSetup,
    DuelSummary,
    SideTally,
    deal_seeds,
    parse_seatings,
    play_deal,
    summarize,
)
from server.cli.args import match_options, positive_int
from server.presets import PresetError, load_presets

PROGRESS_EVERY = 2.0  # seconds between progress lines on stderr


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    names = ", ".join(sorted(BOTS))
    parser = subparsers.add_parser(
        "duel",
        help="one bot against another in duplicate: the margin per hand with its 95%% interval",
        description="Plays each deal (the walls of one match) with the challenger at each "
        "player in turn against three of the reference (or the seatings given), and reports "
        "the challenger's margin in points per hand with a 95% interval clustered by deal, "
        "each side's win, self-draw, deal-in and draw rates, average fan, the defence audit "
        "and the challenger's decision time (docs/bots.md).",
    )
    parser.add_argument(
        "--challenger", default="strong", metavar="BOT", help=f"{names} (default strong)"
    )
    parser.add_argument(
        "--reference", default="normal", metavar="BOT", help=f"{names} (default normal)"
    )
    parser.add_argument(
        "--deals", type=positive_int, default=25, help="deals (match seeds) to play (default 25)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals (default 0)")
    match_options(parser)
    parser.add_argument(
        "--seating",
        default=None,
        metavar="PATTERNS",
        help="seatings to play each deal in, e.g. CRRR,CCRR: C challenger, R reference, by "
        "player index (default: one against three, CRRR,RCRR,RRCR,RRRC)",
    )
    parser.add_argument(
        "--processes",
        type=positive_int,
        default=None,
        help="processes to play the deals in (default: one per CPU)",
    )
    parser.add_argument("--json", metavar="FILE", help="write the figures as JSON to FILE")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return parser


def run(args: argparse.Namespace) -> int:
    setup = _setup(args)
    if setup is None:
        return 2
    seeds = deal_seeds(args.seed, args.deals)
    processes = min(args.processes or os.cpu_count() or 1, args.deals)
    started = time.perf_counter()
    results: list[DealResult] = []
    hands = 0
    last_progress = started
    try:
        for result in _play(seeds, setup, processes):
            results.append(result)
            hands += result.hands
            now = time.perf_counter()
            if not args.quiet and now - last_progress >= PROGRESS_EVERY:
                last_progress = now
                print(
                    f"duel: {len(results)}/{args.deals} deals, {hands} hands, "
                    f"{hands / (now - started):.0f} hands/s",
                    file=sys.stderr,
                    flush=True,
                )
    except KeyboardInterrupt:
        print("guobiao duel: interrupted", file=sys.stderr)
        return 130
    results.sort(key=lambda r: r.deal)
    played = Played(
        setup,
        args.seed,
        args.rules,
        results,
        summarize(results),
        sorted(t for r in results for t in r.decision_times),
        time.perf_counter() - started,
        processes,
    )
    print(report(played))
    if args.json:
        try:
            with open(args.json, "w", encoding="utf-8") as out:
                json.dump(to_json(played), out)
                out.write("\n")
        except OSError as exc:
            print(f"guobiao duel: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
            return 1
    return 0


@dataclass(frozen=True, slots=True)
class Played:
    """A duel played: what was asked (the setup, the seed, the preset's name), each deal's
    result in deal order and their summary, the challenger's decision times (seconds,
    sorted), the wall-clock time and the processes it took."""

    setup: DuelSetup
    seed: int
    rules: str
    results: list[DealResult]
    summary: DuelSummary
    times: list[float]
    elapsed: float
    processes: int


def _setup(args: argparse.Namespace) -> DuelSetup | None:
    """The duel the arguments ask for, or ``None`` having said on stderr what is wrong."""

    def refuse(why: str) -> None:
        print(f"guobiao duel: {why}", file=sys.stderr)

    for bot in (args.challenger, args.reference):
        if bot not in BOTS:
            refuse(f"unknown bot {bot!r}; known: {', '.join(sorted(BOTS))}")
            return None
    try:
        seatings = parse_seatings(args.seating) if args.seating else ONE_AGAINST_THREE
    except ValueError as exc:
        refuse(str(exc))
        return None
    try:
        presets = load_presets(args.rules_file)
    except PresetError as exc:
        refuse(str(exc))
        return None
    if args.rules not in presets:
        refuse(f"unknown rule preset {args.rules!r}; known: {', '.join(presets)}")
        return None
    return DuelSetup(args.challenger, args.reference, seatings, presets[args.rules], args.hands)


def _play(seeds: Sequence[int], setup: DuelSetup, processes: int) -> Iterator[DealResult]:
    """Each deal's result, as the deals finish (any order): in this process, or spread
    over ``processes`` worker processes."""
    clock = time.perf_counter
    if processes <= 1:
        for deal, seed in enumerate(seeds):
            yield play_deal(deal, seed, setup, clock)
        return
    # spawn, not fork: a forked child of a process with threads may deadlock, and forking is
    # deprecated there. A worker imports only what unpickling its task needs: the engine
    # (``play_deal``, the setup) and ``time`` (the clock, pickled by name). Workers ignore
    # Ctrl-C: this process stops them (``terminate``) when it gets one.
    finished: queue.SimpleQueue[DealResult | BaseException] = queue.SimpleQueue()
    context = multiprocessing.get_context("spawn")
    pool = context.Pool(
        processes, initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN)
    )
    try:
        for deal, seed in enumerate(seeds):
            pool.apply_async(
                play_deal,
                (deal, seed, setup, clock),
                callback=finished.put,
                error_callback=finished.put,
            )
        pool.close()
        for _ in seeds:
            result = finished.get()
            if isinstance(result, BaseException):
                raise result
            yield result
        pool.join()
    finally:
        pool.terminate()


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of sorted values, the nearest rank at or above (NaN if
    none)."""
    if not ordered:
        return math.nan
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def _setting(played: Played) -> str:
    setup = played.setup
    seatings = (
        "one against three"
        if setup.seatings == ONE_AGAINST_THREE
        else "seatings " + ",".join(setup.seatings)
    )
    more = " or more (dealer repeat)" if setup.rules.dealer_repeat else ""
    return (
        f"{setup.challenger} (challenger) against {setup.reference} (reference), {seatings}; "
        f"seed {played.seed}, rules {played.rules}, matches of {setup.hands} hands{more}"
    )


def report(played: Played) -> str:
    """The text summary: the margin, each side's figures, the audit, time and speed."""
    setup, summary, times = played.setup, played.summary, played.times
    margin = summary.margin
    c, r = summary.challenger, summary.reference
    if margin.clusters < 2:
        interval = "no interval from one deal"
    else:
        verdict = "excludes 0" if margin.excludes_zero() else "includes 0"
        interval = (
            f"95% interval [{margin.low:+.2f}, {margin.high:+.2f}] ({verdict}; clustered "
            f"by deal, se {margin.se:.2f})"
        )
    lines = [
        _setting(played),
        f"{summary.deals} deals x {len(setup.seatings)} seatings, {summary.hands} hands",
        f"margin    {margin.mean:+.2f} points per hand for {setup.challenger}, {interval}",
        f"{'':<28}{'challenger':>12}{'reference':>12}",
    ]

    def row(label: str, a: str, b: str) -> None:
        lines.append(f"  {label:<26}{a:>12}{b:>12}")

    row("seat-hands", str(c.seat_hands), str(r.seat_hands))
    for label, field in (
        ("win rate", "wins"),
        ("self-draw rate", "self_drawn"),
        ("deal-in rate", "deal_ins"),
        ("draw rate", "draws"),
    ):
        row(label, _pct(c.rate(getattr(c, field))), _pct(r.rate(getattr(r, field))))
    row("average fan of a win", f"{c.average_fan:.1f}", f"{r.average_fan:.1f}")
    row("points per hand", f"{c.rate(c.points):+.2f}", f"{r.rate(r.points):+.2f}")
    lines.append("  defence audit (docs/bots.md)")
    row("discards", str(c.discards), str(r.discards))
    row("feeding a waiting opponent", str(c.feeding), str(r.feeding))
    row("  with a safe tile held", _share(c, c.feeding_safe), _share(r, r.feeding_safe))
    row("  ... one they let pass", _share(c, c.feeding_known), _share(r, r.feeding_known))
    lines.append(
        f"decision  {setup.challenger}: median {1000 * quantile(times, 0.5):.2f} ms, "
        f"p99 {1000 * quantile(times, 0.99):.2f} ms over {len(times)} decisions"
    )
    lines.append(
        f"speed     {summary.hands / played.elapsed:,.1f} hands/s ({played.elapsed:.2f} s "
        f"wall clock, {played.processes} process{'es' if played.processes > 1 else ''}; "
        f"engine {'compiled' if engine.compiled() else 'pure Python'})"
    )
    return "\n".join(lines)


def _pct(rate: float) -> str:
    return f"{100 * rate:.1f}%"


def _share(side: SideTally, count: int) -> str:
    """``count`` of the side's feeding discards, with its share of them."""
    if not side.feeding:
        return "0"
    return f"{count} ({100 * count / side.feeding:.0f}%)"


def to_json(played: Played) -> dict[str, Any]:
    """The figures as JSON: the setting, the margin, each side, timings and each deal's
    totals (the clusters of the interval)."""
    setup, summary, times = played.setup, played.summary, played.times
    margin = summary.margin

    def number(x: float) -> float | None:  # JSON has no infinity
        return x if math.isfinite(x) else None

    return {
        "challenger": setup.challenger,
        "reference": setup.reference,
        "seatings": list(setup.seatings),
        "seed": played.seed,
        "rules": played.rules,
        "match_hands": setup.hands,
        "deals": summary.deals,
        "hands": summary.hands,
        "margin": {
            "points_per_hand": margin.mean,
            "se": number(margin.se),
            "low": number(margin.low),
            "high": number(margin.high),
            "clusters": margin.clusters,
        },
        "sides": {
            "challenger": summary.challenger.to_dict(),
            "reference": summary.reference.to_dict(),
        },
        "decision_ms": {
            "median": number(1000 * quantile(times, 0.5)),
            "p99": number(1000 * quantile(times, 0.99)),
            "decisions": len(times),
        },
        "speed": {
            "hands_per_s": summary.hands / played.elapsed,
            "seconds": played.elapsed,
            "processes": played.processes,
            "engine": "compiled" if engine.compiled() else "python",
        },
        "per_deal": [
            {
                "deal": r.deal,
                "seed": r.seed,
                "points": r.challenger.points,
                "seat_hands": r.challenger.seat_hands,
                "hands": r.hands,
            }
            for r in played.results
        ],
    }

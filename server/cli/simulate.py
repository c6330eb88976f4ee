"""``guobiao simulate``: bots play whole matches; a summary, hand records, action logs.

    guobiao simulate --matches 10 --seed 1 --bot default --out hands.jsonl --log actions.jsonl

``--out`` writes one JSON line per hand (the hand record). ``--log`` writes
everything needed to replay the matches with ``guobiao replay``: a ``match``
line with the seed, then ``action`` lines in order and a ``result`` line at the
end of each hand.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

import engine
from engine.bots import BOTS, make_bot
from engine.match import HandRecord, Match
from engine.matchlog import log_lines
from engine.simulation import match_seeds, play_match
from server.cli.args import match_options, positive_int
from server.presets import PresetError, load_presets

PROGRESS_EVERY = 2.0  # seconds between progress lines on stderr
# One encoder for every line: ``json.dumps(..., ensure_ascii=False)`` builds a new one per
# call, a measurable part of a simulation writing --out and --log. Same output.
_encode = json.JSONEncoder(ensure_ascii=False).encode


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "simulate",
        help="bots play whole matches; print a summary, write hand records and logs",
        description="Four bots play whole matches (16 hands in MCR; with dealer repeat as many "
        "as the deal takes). Prints hands/s, win and draw rates, the average fan of a win and "
        "the most common fans.",
    )
    parser.add_argument(
        "--matches", type=positive_int, default=1, help="matches to play (default 1)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the simulation (default 0)")
    match_options(parser)
    parser.add_argument(
        "--bot", choices=sorted(BOTS), default="default", help="the bot all four seats use"
    )
    parser.add_argument("--out", metavar="FILE", help="write one JSON line per hand")
    parser.add_argument("--log", metavar="FILE", help="write the action log (for guobiao replay)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        presets = load_presets(args.rules_file)
    except PresetError as exc:
        print(f"guobiao simulate: {exc}", file=sys.stderr)
        return 2
    if args.rules not in presets:
        print(
            f"guobiao simulate: unknown rule preset {args.rules!r}; known: {', '.join(presets)}",
            file=sys.stderr,
        )
        return 2
    rules = presets[args.rules]
    if args.out and args.log and Path(args.out).resolve() == Path(args.log).resolve():
        print(
            f"guobiao simulate: --out and --log are the same file ({args.out}); give each its own",
            file=sys.stderr,
        )
        return 2
    seeds = match_seeds(args.seed, args.matches)
    records: list[HandRecord] = []
    started = time.perf_counter()
    cpu_started = time.process_time()
    last_progress = started
    with ExitStack() as stack:
        try:
            out = stack.enter_context(open(args.out, "w", encoding="utf-8")) if args.out else None
            log = stack.enter_context(open(args.log, "w", encoding="utf-8")) if args.log else None
        except OSError as exc:
            print(f"guobiao simulate: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
            return 1
        done = 0
        try:
            for index, seed in enumerate(seeds):
                bots = [make_bot(args.bot, seed=seed + p) for p in range(4)]
                match = play_match(seed, bots, rules, match_id=index, hands=args.hands)
                # Each match's lines written at once: an interruption leaves each file with
                # whole matches.
                if out is not None:
                    out.write("".join(_encode(r.to_dict()) + "\n" for r in match.records))
                if log is not None:
                    log.write(log_text(match, args.bot))
                records.extend(match.records)
                done = index + 1
                last_progress = _progress(args, done, records, started, last_progress)
        except KeyboardInterrupt:
            files = [f for f in (args.out, args.log) if f]
            kept = f"; {', '.join(files)} hold those" if files else ""
            print(
                f"\nguobiao simulate: interrupted after {done} of {args.matches} matches{kept}",
                file=sys.stderr,
            )
            return 130
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    print(summary(records, elapsed, cpu, args))
    return 0


def _progress(
    args: argparse.Namespace, done: int, records: list[HandRecord], started: float, last: float
) -> float:
    """Say how far the run is, every ``PROGRESS_EVERY`` seconds (unless ``--quiet``): when
    it was last said."""
    now = time.perf_counter()
    if args.quiet or now - last < PROGRESS_EVERY:
        return last
    print(
        f"simulate: {done}/{args.matches} matches, {len(records)} hands, "
        f"{len(records) / (now - started):.0f} hands/s",
        file=sys.stderr,
        flush=True,
    )
    return now


def log_text(match: Match, bot: str) -> str:
    """The match's lines of the match log (``engine.matchlog``): the match line with the
    rule options and the bots, then each hand's actions and its result line."""
    return "".join(_encode(line) + "\n" for line in log_lines(match, bots=[bot] * 4))


def summary(records: list[HandRecord], elapsed: float, cpu: float, args: argparse.Namespace) -> str:
    hands = len(records)
    wins = [r for r in records if r.result.result == "win"]
    self_drawn = sum(1 for r in wins if r.result.discarder is None)
    fans: Counter[str] = Counter()
    for r in wins:
        assert r.result.score is not None
        fans.update(fc.fan.en for fc in r.result.score.fans)
    avg_fan = sum(r.result.score.total for r in wins if r.result.score) / len(wins) if wins else 0
    lines = [
        f"{args.matches} match(es), {hands} hands, seed {args.seed}, bot {args.bot}, "
        f"rules {args.rules}",
        f"speed     {hands / elapsed:,.1f} hands/s ({elapsed:.2f} s wall clock; "
        f"{hands / cpu if cpu else 0:,.1f} hands per CPU second; "
        f"engine {'compiled' if engine.compiled() else 'pure Python'})",
        f"wins      {len(wins)} ({_pct(len(wins), hands)}), self-drawn {self_drawn} "
        f"({_pct(self_drawn, len(wins))} of wins)",
        f"draws     {hands - len(wins)} ({_pct(hands - len(wins), hands)})",
        f"avg fan   {avg_fan:.1f} per win (flowers included)",
    ]
    if fans:
        lines.append("top fans  (share of wins)")
        lines.extend(f"  {name:<32} {_pct(n, len(wins)):>6}" for name, n in fans.most_common(10))
    return "\n".join(lines)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"

"""``guobiao replay FILE``: re-run logged matches through the engine and check them.

Reads an action log written by ``guobiao simulate --log`` (or the server; the lines are
those of ``engine.matchlog``), replays every match from its seed (``Match.replay``), checks
each hand ends exactly as its ``result`` line says, and prints the hands. Exit status 1 when
a match does not replay.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator

from engine.errors import MahjongError
from engine.match import HandRecord
from engine.matchlog import LogError, LoggedMatch
from engine.matchlog import read_log as parse_log
from engine.notation import format_hand
from engine.rules import RuleSet
from server.presets import PresetError, load_presets

__all__ = ["LogError", "LoggedMatch", "add_parser", "read_log", "run"]


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "replay",
        help="re-run an action log through the engine and check every result",
        description="Replay the matches of an action log (guobiao simulate --log) from their "
        "seeds, check every recorded hand result, and print the hands.",
    )
    parser.add_argument("file", help="the action log (JSON lines)")
    parser.add_argument("--quiet", action="store_true", help="print only the verdict")
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        with open(args.file, encoding="utf-8") as source:
            matches = list(read_log(source))
    except OSError as exc:
        print(f"guobiao replay: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 1
    except (LogError, PresetError) as exc:
        print(f"guobiao replay: {args.file}: {exc}", file=sys.stderr)
        return 1
    if not matches:
        print(f"guobiao replay: {args.file}: no match in the log", file=sys.stderr)
        return 1
    failed = 0
    hands = 0
    for logged in matches:
        try:
            match = logged.replay()
        except MahjongError as exc:
            failed += 1
            print(f"match {logged.match} (line {logged.line}): does not replay: {exc}")
            continue
        hands += len(match.records)
        if not args.quiet:
            print(f"match {logged.match}, seed {logged.seed}: final scores {match.scores}")
            for record in match.records:
                print("  " + describe(record))
    verdict = "FAILED" if failed else "ok"
    print(
        f"replay {verdict}: {len(matches) - failed}/{len(matches)} matches, {hands} hands checked"
    )
    return 1 if failed else 0


def describe(record: HandRecord) -> str:
    r = record.result
    head = f"hand {record.hand_no:>2} ({record.round_wind} round, dealer {record.dealer}): "
    if r.result != "win" or r.score is None or r.hand is None:
        return head + "drawn (wall exhausted)"
    how = "self-drawn" if r.discarder is None else f"on player {r.discarder}'s discard"
    return f"{head}player {r.winner} wins {how}: {format_hand(r.hand)}, {r.score.total} fan"


def _preset(name: str) -> RuleSet:
    """The rules of an older log's match line, which names only its preset."""
    presets = load_presets()
    if name not in presets:
        raise LogError(f"unknown rule set {name!r}")
    return presets[name]


def read_log(lines: Iterable[str]) -> Iterator[LoggedMatch]:
    """Parse a log into matches (``engine.matchlog.read_log``, presets from the config);
    raise ``LogError`` naming the line of the first bad entry."""
    return parse_log(lines, _preset)

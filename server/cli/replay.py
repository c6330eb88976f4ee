"""``guobiao replay FILE``: re-run logged matches through the engine and check them.

Reads an action log written by ``guobiao simulate --log`` (or the server; the lines are
those of ``engine.matchlog``), replays every match from its seed (``Match.replay``), checks
each hand ends exactly as its ``result`` line says, and prints the hands. Exit status 1 when
a match does not replay or its log is incomplete: a hand without its ``result`` line, or the
log ending in a hand before it is over. A log that ends between hands short of its match
line's length replays, with a note that says so: the server's log of a match stopped early
(a time cap) ends there too.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator

from engine.errors import MahjongError
from engine.match import HandRecord, Match
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
    except UnicodeDecodeError as exc:
        print(
            f"guobiao replay: {args.file}: not UTF-8 text (byte {exc.start}), so not a match log",
            file=sys.stderr,
        )
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
        lacking = missing(logged, match)
        if lacking is not None:
            failed += 1
            print(f"match {logged.match} (line {logged.line}): incomplete: {lacking}")
            continue
        if not match.over:
            print(
                f"match {logged.match} (line {logged.line}): note: the log ends "
                + (f"after hand {len(match.records)}" if match.records else "before any hand")
                + f", short of the {logged.hands} deals of its match line (a match stopped "
                "early, or a log cut short)"
            )
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


def missing(logged: LoggedMatch, match: Match) -> str | None:
    """What the log of a replayed match lacks (None: nothing it must have): the result line
    of a hand it plays to the end, or the end of the hand it stops in."""
    checked = {hand for _, hand, _ in logged.results}
    for record in match.records:
        if record.hand_no not in checked:
            return f"hand {record.hand_no} has no result line"
    if not match.over and len(match.records) <= match.hand_index:
        return f"the log ends in hand {match.hand_index + 1}, before it is over"
    return None


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

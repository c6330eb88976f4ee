"""``guobiao replay FILE``: re-run logged matches through the engine and check them.

Reads an action log written by ``guobiao simulate --log`` (or the server), replays
every match from its seed, checks each hand ends exactly as its ``result`` line
says, and prints the hands. Exit status 1 when a match does not replay.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from engine.actions import Action
from engine.errors import MahjongError
from engine.match import HandRecord
from engine.notation import format_hand
from engine.rules import RulesError, RuleSet, rule_set_from_dict
from engine.simulation import LoggedAction, LoggedResult, replay
from server.presets import PresetError, load_presets


class LogError(ValueError):
    """A log line that is not of the documented form."""


@dataclass
class LoggedMatch:
    match: int
    seed: int
    rules: RuleSet
    line: int
    steps: list[LoggedAction | LoggedResult] = field(default_factory=list)


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
            match = replay(logged.seed, logged.steps, logged.rules, logged.match)
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


def _logged_rules(entry: dict[str, Any]) -> RuleSet:
    """The rules of a match line: its stored options, or (older logs) its preset's."""
    if "rule_options" in entry:
        try:
            return rule_set_from_dict(entry["rule_options"])
        except RulesError as exc:
            raise LogError(str(exc)) from None
    name = entry.get("rules", "mcr")
    presets = load_presets()
    if name not in presets:
        raise LogError(f"unknown rule set {name!r}")
    return presets[name]


def read_log(lines: Any) -> Iterator[LoggedMatch]:
    """Parse a log into matches; raise ``LogError`` naming the line of the first bad entry."""
    current: LoggedMatch | None = None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as exc:
            raise LogError(f"line {number}: not valid JSON: {exc}") from None
        if not isinstance(entry, dict):
            raise LogError(f"line {number}: expected a JSON object")
        kind = entry.get("type")
        try:
            if kind == "match":
                if current is not None:
                    yield current
                current = LoggedMatch(
                    int(entry["match"]), int(entry["seed"]), _logged_rules(entry), number
                )
            elif kind in ("action", "result"):
                if current is None:
                    raise LogError("an entry before any 'match' line")
                if entry.get("match") != current.match:
                    raise LogError(f"belongs to match {entry.get('match')!r}, not {current.match}")
                hand = int(entry["hand"])
                if kind == "action":
                    player = int(entry["player"])
                    action = Action.from_dict(entry["action"])
                    current.steps.append(LoggedAction(hand, player, action))
                else:
                    if not isinstance(entry.get("record"), dict):
                        raise LogError("a 'result' line needs a 'record' object")
                    current.steps.append(LoggedResult(hand, entry["record"]))
            else:
                raise LogError(f"unknown entry type {kind!r}; expected match, action or result")
        except LogError as exc:
            raise LogError(f"line {number}: {exc}") from None
        except (KeyError, TypeError, ValueError, MahjongError) as exc:
            raise LogError(f"line {number}: malformed {kind} entry: {exc!r}") from None
    if current is not None:
        yield current

"""The match log: the JSON lines that record a match and replay it.

``guobiao simulate --log`` writes them, the server publishes them for a finished match
(``GET /api/matches/{id}/log``) and ``guobiao replay`` reads them. One match is::

    {"type": "match", "match": 0, "seed": 1009007956683199922, "rules": "mcr",
     "rule_options": {...}, "hands": 16, ...}
    {"type": "action", "match": 0, "hand": 1, "player": 0, "action": {"type": "discard", ...}}
    ...
    {"type": "result", "match": 0, "hand": 1, "record": {...}}

a ``match`` line (the seed, the rules' options, the match's length in deals ``hands``, 16 when
an older log has none, and whatever its writer adds: bots, seats),
then each hand's ``action`` lines and its ``result`` line (``HandRecord.to_dict()``). The
server's logs mark an action it played for a person (away or out of time) with
``"stand_in": true``; who chose a move does not change the game, and a replay reads past it.
Replaying is ``engine.match.Match.replay``; here the lines are made and parsed. Pure: the
caller reads and writes the files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from engine.actions import Action
from engine.errors import MahjongError
from engine.match import MATCH_HANDS, ActionRow, Match, ResultRow, check_match_hands
from engine.rules import RulesError, RuleSet, rule_set_from_dict


class LogError(MahjongError, ValueError):
    """A log line that is not of the documented form (the message names the line)."""


def match_line(match: Match, **extra: Any) -> dict[str, Any]:
    """The ``match`` line: its seed, the rule options themselves (so that a replay uses
    the rules the match was played with even if the preset changes later) and its length,
    then ``extra``."""
    return {
        "type": "match",
        "match": match.match_id,
        "seed": match.seed,
        "rules": match.rules.name,
        "rule_options": match.rules.to_dict(),
        "hands": match.hands,
        **extra,
    }


def action_line(match_id: int, hand_no: int, player: int, action: Action) -> dict[str, Any]:
    return {
        "type": "action",
        "match": match_id,
        "hand": hand_no,
        "player": player,
        "action": action.to_dict(),
    }


def result_line(match_id: int, record: dict[str, Any]) -> dict[str, Any]:
    return {"type": "result", "match": match_id, "hand": record["hand_no"], "record": record}


def log_lines(match: Match, **extra: Any) -> Iterator[dict[str, Any]]:
    """A played match as log lines: the match line (with ``extra``), then each finished
    hand's actions and its result line."""
    yield match_line(match, **extra)
    actions = iter(match.log)
    pending = next(actions, None)
    for record in match.records:
        while pending is not None and pending[0] + 1 == record.hand_no:
            _, player, action = pending
            yield action_line(match.match_id, record.hand_no, player, action)
            pending = next(actions, None)
        yield result_line(match.match_id, record.to_dict())


@dataclass
class LoggedMatch:
    """One match read from a log: where its ``match`` line is, and its rows."""

    match: int
    seed: int
    rules: RuleSet
    line: int
    hands: int = MATCH_HANDS
    actions: list[ActionRow] = field(default_factory=list)
    results: list[ResultRow] = field(default_factory=list)

    def replay(self) -> Match:
        """The match replayed, every logged result checked (``Match.replay``)."""
        return Match.replay(
            self.seed, self.rules, self.actions, self.match, results=self.results, hands=self.hands
        )


def logged_rules(entry: dict[str, Any], preset: Callable[[str], RuleSet]) -> RuleSet:
    """The rules of a match line: its stored options, or (older logs) ``preset(name)``'s."""
    if "rule_options" in entry:
        try:
            return rule_set_from_dict(entry["rule_options"])
        except RulesError as exc:
            raise LogError(str(exc)) from None
    return preset(entry.get("rules", "mcr"))


def read_log(lines: Iterable[str], preset: Callable[[str], RuleSet]) -> Iterator[LoggedMatch]:
    """Parse a log into matches; raise ``LogError`` naming the line of the first bad entry.

    ``preset(name)`` gives the rules of a match line without ``rule_options`` (it raises
    ``LogError`` for an unknown name).
    """
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
                rules = logged_rules(entry, preset)
                try:
                    hands = check_match_hands(entry.get("hands", MATCH_HANDS))
                except ValueError as exc:
                    raise LogError(str(exc)) from None
                current = LoggedMatch(int(entry["match"]), int(entry["seed"]), rules, number, hands)
            elif kind in ("action", "result"):
                if current is None:
                    raise LogError("an entry before any 'match' line")
                if entry.get("match") != current.match:
                    raise LogError(f"belongs to match {entry.get('match')!r}, not {current.match}")
                hand = int(entry["hand"])
                if kind == "action":
                    player = int(entry["player"])
                    action = entry["action"]
                    Action.from_dict(action)  # refuse a malformed action here, by its line
                    current.actions.append((number, hand, player, action))
                else:
                    if not isinstance(entry.get("record"), dict):
                        raise LogError("a 'result' line needs a 'record' object")
                    current.results.append((number, hand, entry["record"]))
            else:
                raise LogError(f"unknown entry type {kind!r}; expected match, action or result")
        except LogError as exc:
            raise LogError(f"line {number}: {exc}") from None
        except (KeyError, TypeError, ValueError, MahjongError) as exc:
            raise LogError(f"line {number}: malformed {kind} entry: {exc!r}") from None
    if current is not None:
        yield current

"""Bots playing whole matches, and replaying a match from its seed and action log.

Pure: the caller decides what to do with the matches (``guobiao simulate``
prints and writes them, tests check them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from engine.actions import Action, Event
from engine.bots import Bot
from engine.errors import MahjongError
from engine.match import HandRecord, Match
from engine.rules import MCR, RuleSet
from engine.table import Phase
from engine.wall import SplitMix64


def match_seeds(seed: int, matches: int) -> list[int]:
    """The seed of each match of a simulation, derived from its seed."""
    rng = SplitMix64(seed ^ 0x5EED)
    return [rng.next() for _ in range(matches)]


def play_match(
    seed: int,
    bots: Sequence[Bot],
    rules: RuleSet = MCR,
    match_id: int = 0,
    on_hand: Callable[[Match, HandRecord], None] | None = None,
    *,
    on_action: Callable[[Match, int, Action, list[Event]], None] | None = None,
) -> Match:
    """Play a whole match, ``bots[p]`` choosing for player ``p`` from its own view only.

    ``on_action(match, player, action, events)`` runs after every action, ``on_hand``
    after every hand.
    """
    match = Match(seed, rules, match_id)
    while not match.over:
        match.start_hand()
        hand = match.hand
        assert hand is not None
        while hand.phase is not Phase.OVER:
            player = hand.awaiting()[0]
            action = bots[player].choose(hand.view(player))
            events = match.apply(player, action)
            if on_action is not None:
                on_action(match, player, action, events)
        if on_hand is not None:
            on_hand(match, match.records[-1])
    return match


class ReplayMismatch(MahjongError):
    """A replayed match does not go as its log says."""


@dataclass(frozen=True, slots=True)
class LoggedAction:
    hand_no: int  # 1..16 (more with dealer repeat)
    player: int
    action: Action


@dataclass(frozen=True, slots=True)
class LoggedResult:
    hand_no: int
    record: dict[str, object]  # ``HandRecord.to_dict()`` as logged


def replay(
    seed: int,
    steps: Iterable[LoggedAction | LoggedResult],
    rules: RuleSet = MCR,
    match_id: int = 0,
) -> Match:
    """Re-run a match from its seed and logged steps, checking every logged result.

    Raises ``ReplayMismatch`` when a replayed hand ends otherwise than logged, and the
    engine's ``IllegalAction`` when a logged action is not legal in the replay.
    """
    match = Match(seed, rules, match_id)
    for step in steps:
        while match.hand_index + 1 < step.hand_no:
            if match.hand is not None and match.hand.phase is not Phase.OVER:
                raise ReplayMismatch(
                    f"hand {match.hand_index + 1} is not over, but the log goes on to "
                    f"hand {step.hand_no}"
                )
            match.start_hand()
        if isinstance(step, LoggedAction):
            match.apply(step.player, step.action)
            continue
        if len(match.records) < step.hand_no:
            raise ReplayMismatch(f"hand {step.hand_no} is not over in the replay")
        got = match.records[step.hand_no - 1].to_dict()
        if got != step.record:
            diffs = {k: (step.record.get(k), v) for k, v in got.items() if step.record.get(k) != v}
            raise ReplayMismatch(
                f"hand {step.hand_no} replays differently (logged, replayed): {diffs}"
            )
    return match

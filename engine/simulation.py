"""Bots playing whole matches (replaying one from its log: ``engine.match.Match.replay``).

Pure: the caller decides what to do with the matches (``guobiao simulate``
prints and writes them, tests check them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.actions import Action, Event
from engine.bots import Bot
from engine.match import MATCH_HANDS, HandRecord, Match
from engine.rules import MCR, RuleSet
from engine.view import Phase
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
    hands: int = MATCH_HANDS,
) -> Match:
    """Play a whole match of ``hands`` deals, ``bots[p]`` choosing for player ``p`` from its
    own view only.

    ``on_action(match, player, action, events)`` runs after every action, ``on_hand``
    after every hand.
    """
    match = Match(seed, rules, match_id, hands=hands)
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

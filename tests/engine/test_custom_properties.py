"""Properties of whole matches under every option of the ``custom`` rule set.

Every wild-tile option (none, flowers, 翻混, 上滚混, 下滚混), with and without the 8-fan
option and dealer repeat, over seeded matches played through ``engine.simulation.play_match``:

- by ``WildBot`` (below: a random claimer that always wins and discards toward a ready hand
  counting its wild tiles), checked after every action: tile conservation (wall, hands,
  melds, discards, flowers, the indicator and the flowers turned up before it: 144), zero-sum
  scores and the payments of the rules, legal actions that never discard, claim with or kong
  a wild tile, refused actions (random ones, and discarding a held wild tile) that change
  nothing, and views that leak nothing;
- by the engine's bots (``default`` and ``fast``), which must only take legal actions;
- replays from the seed and the log reproduce the records and the events exactly.

The number of matches per option is ``GUOBIAO_CUSTOM_MATCHES`` (default 1), the first seed
``GUOBIAO_TABLE_SEED`` (default 0).
"""

from __future__ import annotations

import os
import random
from collections import Counter

import pytest
import tablekit

from engine.actions import PASS, WIN, Action, ActionKind, Event
from engine.bots import make_bot
from engine.errors import IllegalAction
from engine.match import HandRecord, Match
from engine.rules import RuleSet, Wilds, custom_rules
from engine.simulation import play_match
from engine.table import HandState, Phase, View
from engine.tiles import FIRST_FLOWER, N_FLOWERS, N_KINDS, counts_of
from engine.wilds import shanten_with_wilds

pytestmark = pytest.mark.slow  # minutes in all (every action of many matches): started first

MATCHES = int(os.environ.get("GUOBIAO_CUSTOM_MATCHES", "1"))
FIRST_SEED = int(os.environ.get("GUOBIAO_TABLE_SEED", "0"))
SEEDS = range(FIRST_SEED, FIRST_SEED + MATCHES)

OPTIONS = [
    custom_rules(
        f"{w.value}-{int(eight)}-{int(repeat)}", wilds=w, eight_fan=eight, dealer_repeat=repeat
    )
    for w in Wilds
    for eight in (False, True)
    for repeat in (False, True)
]
CASES = [
    pytest.param(rules, seed, id=f"{rules.name}-s{seed}") for rules in OPTIONS for seed in SEEDS
]

ERROR_CODES = {
    "hand_over",
    "no_such_player",
    "not_your_turn",
    "already_answered",
    "tile_not_in_hand",
    "illegal_action",
    "wild_tile",
}
CLAIMS = (ActionKind.CHOW, ActionKind.PUNG, ActionKind.KONG)
KONGS = (ActionKind.CONCEALED_KONG, ActionKind.ADD_KONG)


class WildBot:
    """Always wins, claims now and then, else discards toward a ready hand, wilds counted.

    Reads only its own view; seeded.
    """

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def choose(self, view: View) -> Action:
        legal = view.legal
        if WIN in legal:
            return WIN
        others = [a for a in legal if a.kind is not ActionKind.DISCARD and a != PASS]
        if others and self.rng.random() < 0.3:
            return self.rng.choice(others)
        if PASS in legal:
            return PASS
        discards = [a for a in legal if a.kind is ActionKind.DISCARD]
        if not discards:
            return legal[0]
        assert view.viewer is not None
        seat = view.seat(view.viewer)
        assert seat.concealed is not None
        counts = counts_of(seat.concealed[seat.wilds :])
        melds = len(seat.melds) + seat.hidden_kongs
        best: tuple[int, float, Action] | None = None
        for action in discards:
            assert action.tile is not None
            wild = action.tile in view.wild_tiles
            if not wild:
                counts[action.tile] -= 1
            value = shanten_with_wilds(counts, seat.wilds - wild, melds)
            if not wild:
                counts[action.tile] += 1
            key = (value, self.rng.random(), action)
            if best is None or key[:2] < best[:2]:
                best = key
        assert best is not None
        return best[2]


def check_no_wild_in_legal(hand: HandState) -> None:
    """No legal action discards (unless nothing else is left), claims with or kongs a wild."""
    wilds = hand.wilds
    for p in hand.player_at:
        legal = hand.legal_actions(p)
        discards = [a for a in legal if a.kind is ActionKind.DISCARD]
        wild_discards = [a for a in discards if a.tile in wilds]
        if wild_discards:
            assert len(wild_discards) == len(discards), (p, legal)  # forced: only wilds left
        for action in legal:
            if action.kind in KONGS:
                assert action.tile not in wilds
            if action.kind is ActionKind.CHOW:
                assert action.tile is not None and hand.pending is not None
                run = {action.tile, action.tile + 1, action.tile + 2} - {hand.pending.tile}
                assert not run & wilds, (p, action)
            if action.kind in CLAIMS:
                assert hand.pending is not None and hand.pending.tile not in wilds


def random_action(rng: random.Random) -> tuple[int, Action]:
    player = rng.choice([-1, 0, 1, 2, 3, 4])
    kind = rng.choice(list(ActionKind))
    tile = rng.choice([None, -1, N_KINDS + N_FLOWERS, FIRST_FLOWER, *range(N_KINDS)])
    return player, Action(kind, tile)


def refuse(match: Match, player: int, action: Action, tried: Counter[str]) -> None:
    hand = match.hand
    assert hand is not None
    if player in hand.position and action in hand.legal_actions(player):
        return
    before = tablekit.snapshot(hand)
    state = (list(match.log), list(match.scores), list(match.records))
    with pytest.raises(IllegalAction) as info:
        match.apply(player, action)
    assert info.value.code in ERROR_CODES
    tried[info.value.code] += 1
    assert tablekit.snapshot(hand) == before
    assert (match.log, match.scores, match.records) == state


def check_replay(match: Match, events: list[list[Event]]) -> None:
    again = tablekit.replay(match)  # through the match log, every result checked
    assert again.over
    assert again.records == match.records
    assert [r.to_dict() for r in again.records] == [r.to_dict() for r in match.records]
    assert again.scores == match.scores and again.log == match.log
    assert again.hand_events == events


@pytest.mark.parametrize(("rules", "seed"), CASES)
def test_properties_after_every_action(rules: RuleSet, seed: int) -> None:
    rng = random.Random(seed)
    tried = Counter[str]()
    events: list[list[Event]] = []
    wins: list[HandRecord] = []

    def after(match: Match, player: int, action: Action, new: list[Event]) -> None:
        hand = match.hand
        assert hand is not None
        tablekit.check_conservation(hand)
        assert sum(match.scores) == 0
        check_no_wild_in_legal(hand)
        tablekit.check_views(hand, new)
        if hand.phase is Phase.OVER:
            tablekit.check_payments(hand)
            refuse(match, rng.choice(hand.player_at), PASS, tried)
            return
        if rng.random() < 0.15:
            refuse(match, *random_action(rng), tried)
        mover = hand.awaiting()[0]
        on_turn = hand.phase in (Phase.TURN, Phase.CLAIMED)
        for wild in hand.wilds:  # a held wild tile is refused, unless nothing else is left
            throw = Action(ActionKind.DISCARD, wild)
            if on_turn and hand._holds(mover, wild) and throw not in hand.legal_actions(mover):
                refuse(match, mover, throw, tried)
                assert tried["wild_tile"]

    def on_hand(match: Match, record: HandRecord) -> None:
        assert match.hand is not None
        events.append(match.hand.events)
        if record.result.result == "win":
            wins.append(record)

    bots = [WildBot(seed * 4 + p) for p in range(4)]
    match = play_match(seed, bots, rules, on_hand=on_hand, on_action=after)
    assert match.over and match.hands_total == len(match.records)
    if not rules.dealer_repeat:
        assert len(match.records) == 16
    assert tried["hand_over"] >= len(match.records)
    if rules.has_wilds:
        assert any(r.result.hand is not None and r.result.hand.wilds for r in wins)
    for record in match.records:
        assert sum(record.result.deltas) == 0
        if rules.wilds.uses_indicator:
            assert record.indicator is not None and record.to_dict()["indicator"]
    check_replay(match, events)


@pytest.mark.parametrize("bot", ["fast", "default"])
@pytest.mark.parametrize(("rules", "seed"), CASES)
def test_the_engine_bots_play_only_legal_actions(rules: RuleSet, seed: int, bot: str) -> None:
    events: list[list[Event]] = []

    def after(match: Match, player: int, action: Action, new: list[Event]) -> None:
        hand = match.hand
        assert hand is not None
        tablekit.check_conservation(hand)
        assert sum(match.scores) == 0

    def on_hand(match: Match, record: HandRecord) -> None:
        assert match.hand is not None
        events.append(match.hand.events)

    bots = [make_bot(bot, seed=p) for p in range(4)]
    match = play_match(seed, bots, rules, on_hand=on_hand, on_action=after)
    assert match.over
    check_replay(match, events)

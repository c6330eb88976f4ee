"""Following the seats from the events (``engine.follow``, protocol version 2): after every
change of many seeded matches, under every kind of rules, for every viewer (each player and
a spectator), the seats followed from the last view and the events it was sent are exactly
the seats of the view the table would send in full.

The players choose at random among their legal actions (a win whenever they may, often a
claim or a kong), so that the hands are full of what changes seats: chows, pungs, kongs of
three kinds, added kongs robbed or not, flowers, head bumps, drawn hands; the tests count
that each happened. Both with the claim windows held open (a person at the table) and not.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.actions import Action, ActionKind
from engine.errors import InvalidWire
from engine.follow import follow
from engine.match import Match
from engine.rules import MCR, RuleSet, Wilds, custom_rules
from engine.table import Phase
from engine.tiles import N_KINDS, NAMES

RULES = {
    "mcr": MCR,
    "custom": custom_rules(),
    "custom-before": custom_rules("custom-before", wilds=Wilds.BEFORE),
    "custom-flowers": custom_rules("custom-flowers", wilds=Wilds.FLOWERS),
    "custom-nowild": custom_rules("custom-nowild", wilds=Wilds.NONE),
    "custom-8fan": custom_rules("custom-8fan", eight_fan=True),
}
VIEWERS = (0, 1, 2, 3, None)


def choose(rng: random.Random, legal: list[Action]) -> Action:
    """A win if there is one; else mostly a claim, a kong or a discard at random."""
    kinds = {a.kind for a in legal}
    if ActionKind.WIN in kinds:
        return next(a for a in legal if a.kind is ActionKind.WIN)
    bold = [a for a in legal if a.kind not in (ActionKind.PASS, ActionKind.DISCARD)]
    if bold and rng.random() < 0.7:
        return rng.choice(bold)
    return rng.choice(legal)


def check_match(seed: int, rules: RuleSet, hold: bool, hands: int, seen: Counter[str]) -> int:
    """Play; after every change check every viewer's followed seats. Changes checked."""
    rng = random.Random(seed)
    match = Match(seed, rules, hands=hands, hold_claims=hold)
    checked = 0
    before: dict[int | None, dict[str, Any] | None] = dict.fromkeys(VIEWERS)
    while not match.over:
        events = match.start_hand()
        hand = match.hand
        assert hand is not None
        while True:
            for e in events:
                seen[e.kind if e.kind != "claim" else f"claim {e.data['type']}"] += 1
            for viewer in VIEWERS:
                full = hand.view(viewer).to_dict()
                sent = [{"kind": e.kind, **e.data} for e in events if e.visible_to(viewer)]
                brief = {k: v for k, v in full.items() if k != "seats"}
                brief["players"] = [s["player"] for s in full["seats"]]
                assert hand.brief(viewer) == brief
                followed = follow(before[viewer], sent, brief)
                assert followed == full["seats"], (seed, rules.name, viewer, sent)
                before[viewer] = full
            checked += 1
            if hand.phase is Phase.OVER:
                break
            robbing = hand.phase is Phase.ROB
            waiting = hand.awaiting()
            if not waiting:
                events = match.close_claims()
            else:
                player = waiting[0]
                events = match.apply(player, choose(rng, list(hand.legal_actions(player))))
            if robbing and any(e.kind == "win" for e in events):
                seen["robbed kong"] += 1
    return checked


@pytest.mark.parametrize("hold", [False, True], ids=["no-window", "window"])
@pytest.mark.parametrize("rules", list(RULES), ids=list(RULES))
def test_followed_seats_are_the_full_views_seats(rules: str, hold: bool) -> None:
    seen: Counter[str] = Counter()
    checked = sum(check_match(seed, RULES[rules], hold, 4, seen) for seed in range(4))
    assert checked > 500
    for kind in ("deal", "draw", "discard", "claim chow", "claim pung", "win", "hand_end"):
        assert seen[kind], (kind, seen)
    if RULES[rules].wilds is not Wilds.FLOWERS:
        assert seen["flower"], seen


def test_every_kind_of_kong_and_a_robbed_one_are_followed() -> None:
    """Over enough hands: claimed, concealed and added kongs, a robbed kong, a head bump
    and a drawn hand all happened (and were followed: ``check_match`` asserts)."""
    wanted = ("claim kong", "concealed_kong", "add_kong", "robbed kong", "head_bump", "exhausted")
    seen: Counter[str] = Counter()
    seed = 0
    while seed < 400 and not all(seen[k] for k in wanted):
        check_match(seed, MCR if seed % 2 else RULES["custom"], seed % 3 == 0, 4, seen)
        seed += 1
    assert all(seen[k] for k in wanted), seen


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), rules=st.sampled_from(list(RULES)), hold=st.booleans())
def test_followed_seats_property(seed: int, rules: str, hold: bool) -> None:
    check_match(seed, RULES[rules], hold, 2, Counter())


def test_nothing_to_follow_is_refused_with_the_reason() -> None:
    with pytest.raises(InvalidWire, match="no seats to follow"):
        follow(None, [{"kind": "discard", "player": 0, "tile": "5m"}], {"you": 0})
    with pytest.raises(InvalidWire, match="no seats to follow"):
        follow(None, [], {"you": 0})
    match = Match(3, MCR)
    match.start_hand()
    assert match.hand is not None
    view = match.hand.view(0).to_dict()
    missing = next(t for t in range(N_KINDS) if not match.hand.concealed[0][t])
    with pytest.raises(InvalidWire, match=f"player 0 has no {NAMES[missing]} to give up"):
        follow(view, [{"kind": "discard", "player": 0, "tile": NAMES[missing]}], view)
    with pytest.raises(InvalidWire, match="unknown kind"):
        follow(view, [{"kind": "teleport", "player": 0}], view)

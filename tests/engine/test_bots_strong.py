"""Tests of ``engine.bots.strong`` and ``engine.bots.judge``: the strong bot plays legal,
deterministic moves from its view only, under MCR and the custom rule sets; it folds a far
hand against an opponent who shows a flush and is likely ready; and the judge values every
legal action, the bot's choice first. How well it plays is measured in duplicate (the duel
tool), not asserted here."""

from __future__ import annotations

import copy
import pickle
from dataclasses import replace

import pytest
import tablekit
from tablekit import deal, discard, tile

from engine.actions import WIN, Action, ActionKind
from engine.bots import BOTS, DefaultBot, StrongBot, make_bot
from engine.bots.danger import read_danger
from engine.bots.judge import SCALE, judge
from engine.bots.plan_play import PlanPlay
from engine.bots.reading import Seat, Unseen, unseen_copies
from engine.bots.strong import win_value
from engine.hand import Meld, MeldKind
from engine.rules import MCR, RuleSet, Wilds, custom_rules
from engine.table import Phase, View
from engine.tiles import N_KINDS, Wind

Q2 = "26m26p26sCFPESW"
Q3 = "37m37p37sCFPESW"
Q4 = "48m48p48sCFPESW"
RULES = {
    "mcr": MCR,
    "indicator": custom_rules(wilds=Wilds.INDICATOR),
    "flowers": custom_rules(wilds=Wilds.FLOWERS),
    "no wilds": custom_rules(wilds=Wilds.NONE),
}


def play(rules: RuleSet, names: tuple[str, ...], seed: int) -> list[tuple[View, Action]]:
    def check(view: View, action: Action) -> None:
        if WIN in view.legal:
            assert action == WIN
        if action.kind is ActionKind.DISCARD and action.tile in view.wild_tiles:
            discards = [a for a in view.legal if a.kind is ActionKind.DISCARD]
            assert all(a.tile in view.wild_tiles for a in discards)  # never gives up a wild

    return tablekit.play_bots(names, seed, rules, check)[1]


def test_the_registry_names_the_strong_bot() -> None:
    assert BOTS["strong"] is StrongBot
    assert isinstance(make_bot("strong", seed=3), StrongBot)


@pytest.mark.parametrize("option", sorted(RULES))
def test_the_strong_bot_plays_legal_moves_and_answers_each_view_the_same(option: str) -> None:
    seen = play(RULES[option], ("strong", "normal", "strong", "normal"), seed=4)
    mine = [(v, a) for v, a in seen if v.viewer in (0, 2)]
    assert {v.phase for v, _ in mine} >= {Phase.TURN, Phase.CLAIM}
    fresh = StrongBot()
    for view, action in reversed(mine):  # another order: other memos, the same answers
        assert fresh.choose(view) == action


def test_the_strong_bot_wins_hands() -> None:
    match, _ = tablekit.play_bots(("strong",) * 4, seed=9)
    assert sum(r.result.winner is not None for r in match.records) >= len(match.records) // 2


def test_the_strong_bot_reads_nothing_but_the_view() -> None:
    # Two deals that differ only where the dealer cannot see give one view and one answer.
    hand = "123m456p789s22s57mN"
    one = deal({0: hand, 1: Q2 + "N", 2: Q3 + "N", 3: Q4 + "N"}).view(0)
    other = deal({0: hand, 1: Q4 + "N", 2: Q2 + "N", 3: Q3 + "N"}).view(0)
    assert one == other
    assert StrongBot().choose(one) == StrongBot().choose(other)
    # A view cut loose from its table plays the same.
    state = deal({0: "7p159m159p159sESWN", 1: "77p159m159sESWNC", 2: Q3 + "N", 3: Q4 + "N"})
    state.apply(0, discard("7p"))
    for p in state.awaiting():
        view = state.view(p)
        answer = StrongBot().choose(view)
        assert StrongBot().choose(copy.deepcopy(view)) == answer
        assert StrongBot().choose(pickle.loads(pickle.dumps(view))) == answer


def flushing_opponent(view: View) -> View:
    """``view`` with South showing three pin pungs after eighteen discards: likely ready on
    a pin flush."""
    south = view.seats[1]
    melds = tuple(Meld(MeldKind.PUNG, tile(t), 1) for t in ("1p", "4p", "7p"))
    discards = ("E", "S", "W", "N", "C", "F", "P", "1m", "9m", "1s", "9s", "2m", "8m", "2s")
    river = tuple((tile(t), False) for t in (*discards, "8s", "3m", "7m", "3s"))
    shown = replace(south, melds=melds, river=river, concealed_count=4)
    return replace(view, seats=(view.seats[0], shown, *view.seats[2:]))


def test_the_strong_bot_folds_a_far_hand_against_a_likely_flush() -> None:
    far = deal({0: "159m258p369sESWNC", 1: Q2 + "N", 2: Q3 + "N", 3: Q4 + "N"}).view(0)
    calm = StrongBot().choose(far)
    view = flushing_opponent(far)
    me = view.seats[0]
    assert me.concealed is not None
    counts = [0] * N_KINDS
    for t in me.concealed:
        counts[t] += 1
    danger = read_danger(view, unseen_copies(view, counts))
    assert danger.pressure > 0.5
    folded = StrongBot().choose(view)
    assert folded.tile is not None and folded.tile // 9 != 1  # no pin to the pin flush
    normal = DefaultBot().choose(view)
    assert normal.tile is not None
    assert danger.of(folded.tile) <= danger.of(normal.tile)
    assert calm.tile is not None


def test_the_judge_values_every_legal_action_with_the_bot_choice_first() -> None:
    seen = play(MCR, ("strong",) * 4, seed=6)
    assert SCALE
    decisions = [v for v, _ in seen if len(v.legal) > 1][::7]
    assert decisions
    for view in decisions:
        judged = judge(view)
        assert sorted(map(str, (j.action for j in judged))) == sorted(map(str, view.legal))
        assert judged[0].action == StrongBot().choose(view)
        values = [j.value for j in judged]
        assert values == sorted(values, reverse=True)


def counts_of(text: str) -> list[int]:
    counts = [0] * N_KINDS
    for t in tablekit.tiles(text):
        counts[t] += 1
    return counts


def test_a_ready_hand_is_worth_the_fan_its_waits_score() -> None:
    plans = PlanPlay()
    seat = Seat((), Wind.EAST, Wind.EAST, MCR)
    unseen = Unseen([4] * N_KINDS)
    # A Pure Straight (16 fan) waiting on 5p, and a plain hand whose wait scores under 8.
    straight = plans.win_fan(counts_of("123456789m234p5p"), seat, unseen)
    plain = plans.win_fan(counts_of("123m567p234s789s5p"), seat, unseen)
    assert straight >= 16
    assert plain == 0.0
    # A win is worth more the more fan it scores, self-drawn ones weighed in.
    assert win_value(8) > 8 + 24
    assert win_value(straight) > win_value(8)

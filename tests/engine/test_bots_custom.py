"""Tests of ``engine.bots`` under the ``custom`` rule set: wild tiles, and no fan minimum.

Whole seeded matches under each wild-tile option check that every action is one of
``view.legal``, that a wild tile is discarded only when the table allows nothing else, that
a bot always declares a win it may declare, that the default bot wins hands holding wild
tiles, and that a fresh bot answers every view as the bot that played (purity).
"""

from __future__ import annotations

import pytest
import tablekit

from engine.actions import WIN, Action, ActionKind
from engine.bots import DefaultBot
from engine.match import Match
from engine.rules import RuleSet, Wilds, custom_rules
from engine.table import View
from engine.tiles import WILD

OPTIONS = {
    "indicator": custom_rules(wilds=Wilds.INDICATOR),
    "before": custom_rules(wilds=Wilds.BEFORE),
    "after": custom_rules(wilds=Wilds.AFTER),
    "flowers": custom_rules(wilds=Wilds.FLOWERS),
    "no wilds": custom_rules(wilds=Wilds.NONE),
    "eight fan": custom_rules(wilds=Wilds.INDICATOR, eight_fan=True),
}


def play(
    rules: RuleSet, names: tuple[str, ...], seed: int
) -> tuple[Match, list[tuple[View, Action]]]:
    """A whole match between bots ``names`` (by player), checking every action as it goes."""

    def check(view: View, action: Action) -> None:
        if WIN in view.legal:
            assert action == WIN  # any complete hand (with the minimum) is taken
        if action.kind is ActionKind.DISCARD and action.tile in view.wild_tiles:
            discards = [a for a in view.legal if a.kind is ActionKind.DISCARD]
            assert all(a.tile in view.wild_tiles for a in discards)

    return tablekit.play_bots(names, seed, rules, check)


def wild_wins(match: Match) -> int:
    """Hands won with a wild tile in the winning hand."""
    return sum(
        1
        for record in match.records
        if record.result.hand is not None
        and WILD in (*record.result.hand.standing, record.result.hand.win_tile)
    )


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_bots_play_legal_actions_and_never_give_up_a_wild(option: str) -> None:
    rules = OPTIONS[option]
    _, seen = play(rules, ("default", "fast", "default", "fast"), seed=3)
    kinds = {action.kind for _, action in seen}
    assert ActionKind.DISCARD in kinds and ActionKind.PASS in kinds
    if rules.has_wilds:
        assert any(view.wild_tiles for view, _ in seen)
        held = [view for view, _ in seen if view.seat(view.viewer or 0).wilds]
        assert held  # bots held wild tiles and played on


@pytest.mark.parametrize("option", ["indicator", "flowers", "after"])
def test_the_default_bot_wins_hands_with_wilds(option: str) -> None:
    match, seen = play(OPTIONS[option], ("default",) * 4, seed=7)
    won = [r for r in match.records if r.result.winner is not None]
    assert len(won) >= len(match.records) * 3 // 4  # no minimum: most hands are won
    assert wild_wins(match) > 0
    assert {a.kind for _, a in seen} & {ActionKind.CHOW, ActionKind.PUNG}  # it claims


def test_without_a_minimum_the_default_bot_wins_without_wilds_too() -> None:
    match, _ = play(OPTIONS["no wilds"], ("default",) * 4, seed=8)
    won = [r for r in match.records if r.result.winner is not None]
    assert len(won) >= len(match.records) * 3 // 4


@pytest.mark.parametrize("option", ["indicator", "flowers"])
def test_a_fresh_bot_answers_every_view_as_the_bot_that_played(option: str) -> None:
    _, seen = play(OPTIONS[option], ("default",) * 4, seed=5)
    fresh = DefaultBot()
    for view, action in reversed(seen):  # another order: other memos, the same answers
        assert fresh.choose(view) == action
        assert fresh.choose(view) == action

"""Tests of ``engine.bots``: legal, deterministic, view-only bots that win when they can.

Whole seeded matches check that every action is one of ``view.legal`` in every phase met
(the rare robbing phase is stacked, with ``tablekit.deal``), and that a fresh bot given any
view of a game answers as the bot that played it (the memos change speed, not play).
Stacked hands check the default bot's choices: it wins when it can, keeps complete sets,
declares a concealed kong that costs nothing, and aims at the fan minimum of the rules it is
given (a ready hand that reaches it, and only such a one). How well it plays (win rate, fan) and how
fast are figures to measure, not to assert: see the module docstring of ``engine.bots``.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import pickle
from pathlib import Path

import pytest
import tablekit
from tablekit import act, deal, discard, tile

from engine.actions import PASS, PUNG, WIN, Action, ActionKind
from engine.bots import BOTS, LEVELS, STRONGEST, DefaultBot, FastBot, make_bot
from engine.bots.reading import HandScope
from engine.hand import Hand
from engine.match import Match
from engine.notation import format_tiles
from engine.rules import MCR, RuleSet, Wilds, custom_rules
from engine.scoring import score
from engine.shanten import waits
from engine.table import HandState, Phase, View
from engine.tiles import counts_of

ENGINE = Path(__file__).resolve().parents[2] / "engine"

# Quiet hands (as in test_table.py): no pair, no two tiles of a suit within three ranks, so
# they never claim; 12 tiles, a 13th added where used.
Q2 = "26m26p26sCFPESW"
Q3 = "37m37p37sCFPESW"
Q4 = "48m48p48sCFPESW"

# Player 1 pungs the dealer's 7p (player 2, ready on 7p with a Pure Straight, may win on it),
# then draws the fourth 7p four draws later and adds it to the pung: player 2 may rob it.
ROB_HANDS = {
    0: "7p159m159p159sESWN",
    1: "77p159m159sESWNC",
    2: "123456789m22s68p",
    3: Q4 + "N",
}


def dealt(hand14: str) -> HandState:
    """A hand where the dealer (player 0) holds ``hand14``; its last tile is the one drawn."""
    return deal({0: hand14, 1: Q2 + "N", 2: Q3 + "N", 3: Q4 + "N"})


def play(names: tuple[str, ...], seed: int) -> list[tuple[View, Action]]:
    """A whole match between bots ``names`` (by player), checking every action is legal."""
    return tablekit.play_bots(names, seed)[1]


# ---------------------------------------------------------------- registry ---


def test_registry_makes_each_bot() -> None:
    assert set(BOTS) == {"easy", "normal", "strong", "default", "fast"}
    assert LEVELS == ("easy", "normal", "strong")
    assert STRONGEST == "strong"
    assert isinstance(make_bot("default"), DefaultBot)
    assert isinstance(make_bot("normal"), DefaultBot)
    assert isinstance(make_bot("fast", seed=7), FastBot)


def test_an_unknown_bot_name_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"'clever'.*default, easy, fast, normal, strong"):
        make_bot("clever")


# ------------------------------------------------------------ legal play ---


@pytest.mark.parametrize(
    ("names", "phases"),
    [
        (("default",) * 4, {Phase.TURN, Phase.CLAIM, Phase.CLAIMED}),
        (("fast",) * 4, {Phase.TURN, Phase.CLAIM}),  # nobody claims: no CLAIMED phase
        (("default", "fast", "default", "fast"), {Phase.TURN, Phase.CLAIM, Phase.CLAIMED}),
    ],
)
def test_bots_only_play_legal_actions(names: tuple[str, ...], phases: set[Phase]) -> None:
    seen = play(names, seed=11) + play(names, seed=12)
    assert {view.phase for view, _ in seen} >= phases
    kinds = {action.kind for _, action in seen}
    assert ActionKind.DISCARD in kinds and ActionKind.PASS in kinds
    if "default" in names:
        assert kinds & {ActionKind.CHOW, ActionKind.PUNG}  # the default bot does claim


@pytest.mark.parametrize("name", sorted(BOTS))
def test_bots_rob_a_kong_they_can_win_on(name: str) -> None:
    state = deal(ROB_HANDS, draws="F P F 7p", tail="P")
    state.apply(0, discard("7p"))
    for p in state.awaiting():
        state.apply(p, PUNG if p == 1 else PASS)
    state.apply(1, discard("C"))
    for p in (2, 3, 0):  # each gives back its draw, which nobody can claim
        assert state.current == p and state.drawn is not None
        state.apply(p, Action(ActionKind.DISCARD, state.drawn))
    state.apply(1, act("add_kong", "7p"))
    assert state.phase is Phase.ROB
    view = state.view(2)
    assert view.legal == (WIN, PASS)
    assert make_bot(name).choose(view) == WIN


# ------------------------------------------------------------------ purity ---


def test_a_fresh_bot_answers_every_view_as_the_bot_that_played() -> None:
    seen = play(("default",) * 4, seed=5)
    fresh = DefaultBot()
    for view, action in reversed(seen):  # another order: other memos, the same answers
        assert fresh.choose(view) == action
        assert fresh.choose(view) == action  # the same view twice


def test_the_bot_reads_nothing_but_the_view() -> None:
    # No module of the package can reach the hidden state: no wall, no hand state, no match.
    modules = sorted((ENGINE / "bots").glob("*.py"))
    assert len(modules) > 1  # the package, not a lone module
    imported = {
        (node.module, alias.name)
        for path in modules
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert not {module for module, _ in imported} & {"engine.wall", "engine.match", "engine.table"}
    # Two deals that differ only where the dealer cannot see give one view and one answer.
    hand = "123m456p789s22s57mN"
    one = dealt(hand).view(0)
    other = deal({0: hand, 1: Q4 + "N", 2: Q2 + "N", 3: Q3 + "N"}).view(0)  # others moved
    assert one == other
    assert DefaultBot().choose(one) == DefaultBot().choose(other)
    # A view cut loose from its table (a deep copy, a pickle round trip) plays the same.
    state = tablekit.deal(ROB_HANDS)
    state.apply(0, discard("7p"))
    for p in state.awaiting():
        view = state.view(p)
        loose = pickle.loads(pickle.dumps(view))
        for bot in (DefaultBot(), FastBot()):
            answer = bot.choose(view)
            assert bot.choose(copy.deepcopy(view)) == answer
            assert bot.choose(loose) == answer


# ---------------------------------------------------------- default bot ---


def test_the_default_bot_wins_when_it_can() -> None:
    # Self-drawn: the dealer is dealt a Pure Straight.
    view = dealt("123456789m234p55s").view(0)
    assert WIN in view.legal
    assert DefaultBot().choose(view) == WIN
    # On a discard: player 2 is ready on 7p (it also could chow it).
    state = deal(ROB_HANDS)
    state.apply(0, discard("7p"))
    view = state.view(2)
    assert WIN in view.legal
    assert DefaultBot().choose(view) == WIN


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        ("123m456p789s22s57mN", "N"),  # N drawn: ready on 6m with a Mixed Straight
        ("N123m456p789s22s57m", "N"),  # 7m drawn: the lone honor still goes first
        ("123m456m11p47p58sW9s", "W"),  # far from ready: a lone wind of no value
    ],
)
def test_the_default_bot_discards_a_lone_honor_before_breaking_a_set(
    hand: str, expected: str
) -> None:
    view = dealt(hand).view(0)
    assert DefaultBot().choose(view) == discard(expected)


def test_the_default_bot_declares_a_concealed_kong_that_costs_nothing() -> None:
    view = dealt("1111m456p789s22s57m").view(0)
    assert act("concealed_kong", "1m") in view.legal
    assert DefaultBot().choose(view) == act("concealed_kong", "1m")


def test_the_default_bot_claims_a_pung_for_its_plan_and_passes_otherwise() -> None:
    # Player 1 holds 77p in a hand of lone tiles: a pung of 7p is a set for nothing close.
    state = deal(ROB_HANDS)
    state.apply(0, discard("7p"))
    assert PUNG in state.legal_actions(1)
    assert DefaultBot().choose(state.view(1)) == PASS
    # A Pure Straight in characters with a pair of red dragons: the pung of C readies it.
    hands = {
        0: "C26m26p26sFPESWN9s",
        1: "CC1123456789mE",
        2: "37m37p37sFPESWN9m",
        3: "48m48p48sFPESWN9p",
    }
    state = deal(hands)
    state.apply(0, discard("C"))
    view = state.view(1)
    assert PUNG in view.legal
    assert DefaultBot().choose(view) == PUNG


# A near-ready hand whose ready discard (2s) leaves 56m123p789p333s99s waiting on 4m and 7m
# for 4 fan; and one where discarding 5m leaves waits on 5p and 8p, 8p one on 5m alone.
CHEAP_WAITS = "56m123p789p333s99s2s"
DEAR_WAIT = "4556m5678p33445s5s"


def wait_fans(hand: str, discarded: str) -> dict[str, int]:
    """The fan (MCR, on a discard) of each wait once the dealer discards ``discarded``."""
    standing = tablekit.tiles(hand)
    standing.remove(tile(discarded))
    return {
        format_tiles([wait]): score(Hand((), tuple(standing), wait)).total
        for wait in waits(counts_of(standing), 0)
    }


def test_the_waits_the_minimum_tests_stand_on() -> None:
    assert wait_fans(CHEAP_WAITS, "2s") == {"4m": 4, "7m": 4}
    assert wait_fans(DEAR_WAIT, "5m") == {"5p": 7, "8p": 13}
    assert wait_fans(DEAR_WAIT, "8p") == {"5m": 28}


@pytest.mark.parametrize(
    ("rules", "hand", "expected"),
    [
        # MCR (8 fan): 4-fan waits are no win; the bot keeps its plans and gives up 9s.
        (MCR, CHEAP_WAITS, "9s"),
        (RuleSet(name="two-fan", min_fan=2), CHEAP_WAITS, "2s"),  # 4 fan wins: get ready
        (custom_rules(wilds=Wilds.NONE), CHEAP_WAITS, "2s"),  # no minimum: speed, ready
        (custom_rules(wilds=Wilds.NONE, eight_fan=True), CHEAP_WAITS, "9s"),  # '8 fan to win'
        # Two waits of 7 and 13 fan beat one of 28 under MCR; at 16 only the 28 wins.
        (MCR, DEAR_WAIT, "5m"),
        (RuleSet(name="sixteen-fan", min_fan=16), DEAR_WAIT, "8p"),
    ],
    ids=["mcr", "min-2", "custom-nowild", "custom-nowild-8fan", "mcr-dear", "min-16"],
)
def test_the_default_bot_aims_at_the_minimum_of_its_rules(
    rules: RuleSet, hand: str, expected: str
) -> None:
    view = deal({0: hand, 1: Q2 + "N", 2: Q3 + "N", 3: Q4 + "N"}, rules=rules).view(0)
    assert view.rules == rules and WIN not in view.legal
    assert DefaultBot().choose(view) == discard(expected)


# -------------------------------------------------------------- fast bot ---


def test_the_fast_bot_wins_passes_and_gives_back_its_draw() -> None:
    bot = FastBot()
    view = dealt("123456789m234p55s").view(0)
    assert bot.choose(view) == WIN
    view = dealt("123m456p789s22s57mN").view(0)
    assert view.drawn == tile("N")
    assert bot.choose(view) == discard("N")
    state = deal(ROB_HANDS)
    state.apply(0, discard("7p"))
    assert bot.choose(state.view(1)) == PASS  # no pung
    assert bot.choose(state.view(2)) == WIN


# ------------------------------------------------------------ memos per hand ---


class Memo:
    def __init__(self) -> None:
        self.forgotten = 0

    def forget(self) -> None:
        self.forgotten += 1


def test_a_hand_scope_empties_the_memos_when_the_views_move_to_another_hand() -> None:
    memos = (Memo(), Memo())
    scope = HandScope(*memos)
    match = Match(3, MCR, match_id=0, hands=2)
    walls = []
    for _ in range(2):
        match.start_hand()
        hand = match.hand
        assert hand is not None
        before = memos[0].forgotten
        bots = [make_bot("normal", seed=p) for p in range(4)]
        while hand.phase is not Phase.OVER:
            player = hand.awaiting()[0]
            view = hand.view(player)
            scope.see(view)
            walls.append(view.wall_remaining)
            match.apply(player, bots[player].choose(view))
        assert memos[0].forgotten == before + 1  # once, at the hand's first view
    assert memos[0].forgotten == memos[1].forgotten == 2
    # Other dice are another hand too, whatever the wall.
    scope.see(dataclasses.replace(view, dice=((1, 1), (1, 1))))
    assert memos[0].forgotten == 3


@pytest.mark.parametrize("name", ["normal", "strong", "easy"])
def test_a_bot_keeps_no_memo_of_an_earlier_hand(name: str) -> None:
    # A bot seated for a whole match kept its memos of every hand up to their bound
    # (hundreds of KiB a bot); the hands of one hand never come back in the next.
    bots = [make_bot(name, seed=p) for p in range(4)]
    plans = bots[0]._normal._plans if name == "easy" else bots[0]._plans  # type: ignore[attr-defined]
    match = Match(3, MCR, match_id=0, hands=2)
    match.start_hand()
    hand = match.hand
    assert hand is not None
    while hand.phase is not Phase.OVER:
        player = hand.awaiting()[0]
        match.apply(player, bots[player].choose(hand.view(player)))
    first = set(plans._plans)
    assert first
    match.start_hand()
    hand = match.hand
    assert hand is not None
    while hand.awaiting() != [0] or hand.phase is not Phase.TURN:
        player = hand.awaiting()[0]
        match.apply(player, bots[player].choose(hand.view(player)))
    bots[0].choose(hand.view(0))
    assert not first & set(plans._plans)  # (without forgetting, all of first is still there)

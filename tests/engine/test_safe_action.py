"""``engine.bots.safe.safe_action``: the one move played for a player who does not answer
(the server's table, the Python client and ``FastBot``)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import tablekit
from tablekit import act, deal, discard, tile

from engine import simulation
from engine.actions import PASS, PUNG, WIN, Action, ActionKind
from engine.bots import BOTS, SEATLESS, FastBot, make_bot, safe_action
from engine.errors import MahjongError
from engine.rules import MCR, RuleSet, custom_rules
from engine.table import HandState
from engine.view import Phase, View

Q2 = "26m26p26sCFPESW"
Q3 = "37m37p37sCFPESW"
Q4 = "48m48p48sCFPESW"
# The dealer's 7p may be punged by player 1 and won by player 2 (as in test_bots.py).
CLAIM_HANDS = {
    0: "7p159m159p159sESWN",
    1: "77p159m159sESWNC",
    2: "123456789m22s68p",
    3: Q4 + "N",
}


def dealt(hand14: str) -> HandState:
    """A hand where the dealer (player 0) holds ``hand14``; its last tile is the one drawn."""
    return deal({0: hand14, 1: Q2 + "N", 2: Q3 + "N", 3: Q4 + "N"})


def test_a_turn_discards_the_drawn_tile() -> None:
    view = dealt("123m456p789s22s57mN").view(0)
    assert view.drawn == tile("N")
    assert safe_action(view) == discard("N")


def test_a_turn_never_wins_or_kongs_on_its_own() -> None:
    view = dealt("123456789m234p55s").view(0)
    assert WIN in view.legal  # offered, not taken
    assert view.drawn == tile("5s")
    assert safe_action(view) == discard("5s")
    kongs = dealt("1111m456p789s22s57m").view(0)
    assert any(a.kind is ActionKind.CONCEALED_KONG for a in kongs.legal)
    assert safe_action(kongs).kind is ActionKind.DISCARD


def test_a_claim_or_a_rob_passes_even_when_it_could_win() -> None:
    state = deal(CLAIM_HANDS)
    state.apply(0, discard("7p"))
    assert PUNG in state.view(1).legal
    assert safe_action(state.view(1)) == PASS
    assert WIN in state.view(2).legal
    assert safe_action(state.view(2)) == PASS


def test_after_a_claim_the_first_legal_discard() -> None:
    state = deal(CLAIM_HANDS)
    state.apply(0, discard("7p"))
    state.apply(2, PASS)
    state.apply(1, PUNG)
    view = state.view(1)
    assert view.phase is Phase.CLAIMED and view.drawn is None
    assert safe_action(view) == next(a for a in view.legal if a.kind is ActionKind.DISCARD)


def test_a_drawn_tile_that_may_not_be_discarded_gives_the_first_legal_discard() -> None:
    # A wild tile just drawn is not among the discards: the first discard, never the kong.
    base = dealt("123m456p789s22s57mN").view(0)
    view = replace(
        base,
        drawn=tile("5m"),
        legal=(act("concealed_kong", "1m"), discard("2m"), discard("3m")),
    )
    assert safe_action(view) == discard("2m")


def test_the_floor_is_the_first_legal_action() -> None:
    base = dealt("123m456p789s22s57mN").view(0)
    only = (act("concealed_kong", "1m"), WIN)
    assert safe_action(replace(base, legal=only)) == only[0]


def test_nothing_to_choose_from_is_refused() -> None:
    view = dealt("123m456p789s22s57mN").view(1)  # not player 1's turn
    assert view.legal == ()
    with pytest.raises(MahjongError, match=r"view\.legal is empty"):
        safe_action(view)


def test_the_fast_bot_is_a_win_or_the_safe_move() -> None:
    bot = FastBot()
    for view, _ in tablekit.play_bots(("fast",) * 4, seed=3)[1]:
        expected = WIN if WIN in view.legal else safe_action(view)
        assert bot.choose(view) == expected


@pytest.mark.parametrize("rules", [MCR, custom_rules()], ids=["mcr", "custom"])
def test_the_seatless_bots_choose_alike_without_the_seats(rules: RuleSet) -> None:
    """``SEATLESS``: a client leaves these bots' views without seats (``guobiao
    loadtest``'s connections follow none), so each must choose from ``legal`` and ``drawn``
    alone: on every view of whole matches (claims, robs, wins, kongs), the same choice
    without the seats as with them."""
    assert set(BOTS) >= SEATLESS
    for name in SEATLESS:
        for seed in (3, 4):
            _, seen = tablekit.play_bots(("normal", "fast", "easy", name), seed, rules)
            for view, _ in seen:
                assert view.seats
                assert make_bot(name).choose(replace(view, seats=())) == make_bot(name).choose(view)


class _Safe:
    """A player who never answers: the table plays ``safe_action`` for it every time."""

    def choose(self, view: View) -> Action:
        action = safe_action(view)
        assert action in view.legal, (view.phase, action, view.legal)
        assert action.kind in (ActionKind.PASS, ActionKind.DISCARD), action
        return action


@pytest.mark.parametrize("rules", [MCR, custom_rules()], ids=["mcr", "custom"])
def test_four_absent_players_finish_a_match_on_safe_moves_alone(rules: RuleSet) -> None:
    match = simulation.play_match(11, [_Safe() for _ in range(4)], rules, hands=4)
    assert match.over

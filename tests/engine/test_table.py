"""Scripted hands on stacked walls for each rule of the table procedure (``engine.table``).

Every test deals four chosen hands with ``tablekit.deal`` (see its docstring: the deal,
the draws from the head and the replacement tiles from the tail are all stacked), then drives
the hand with ``apply`` and checks ``legal_actions``, ``view``, the events and the result
against ``docs/rules.md`` ("Table procedure" and "Scoring").

Players 0..3 sit East, South, West, North; the dealer is 0 unless a test says otherwise.
The "quiet" hands below hold no pair and no two tiles of one suit closer than four ranks, so
they can never claim a discard: a test only meets the claims it stacked.
"""

from __future__ import annotations

from itertools import permutations

import pytest
import tablekit
from tablekit import act, concealed, deal, discard, snapshot, tile, tiles

from engine.actions import KONG, PASS, PUNG, WIN, Action, ActionKind, Event
from engine.errors import IllegalAction
from engine.fans import Fan
from engine.forms import is_winning
from engine.hand import Meld, MeldKind
from engine.match import Match
from engine.scoring import WinContext, score
from engine.table import HandState, Phase
from engine.tiles import FIRST_FLOWER, Wind, counts_of

# Quiet hands: Q1 has 13 tiles; Q2..Q4 have 12 and take one more (a 13th, or two for a dealer).
Q1 = "159m159p159sESWN"
Q2 = "26m26p26sCFPESW"
Q3 = "37m37p37sCFPESW"
Q4 = "48m48p48sCFPESW"


def chow(low: str) -> Action:
    return act("chow", low)


def fans(state: HandState) -> set[Fan]:
    assert state.result is not None and state.result.score is not None
    return {fc.fan for fc in state.result.score.fans}


def fan_count(state: HandState, fan: Fan) -> int:
    assert state.result is not None and state.result.score is not None
    return sum(fc.count for fc in state.result.score.fans if fc.fan is fan)


def discards(state: HandState, player: int) -> list[Action]:
    return [Action(ActionKind.DISCARD, t) for t in sorted(set(concealed(state, player)))]


def discard_drawn(state: HandState, player: int) -> list[Event]:
    """``player`` is to move and discards the tile just drawn."""
    assert state.current == player and state.phase is Phase.TURN
    assert state.drawn is not None
    return state.apply(player, Action(ActionKind.DISCARD, state.drawn))


def payments_hold(state: HandState) -> None:
    tablekit.check_payments(state)
    tablekit.check_conservation(state)


# ---------------------------------------------------------------- the deal ---


def test_the_deal_gives_the_stacked_hands() -> None:
    hands = {0: Q1 + "C", 1: Q2 + "N", 2: Q3 + "N", 3: Q4 + "N"}
    state = deal(hands)
    for p, text in hands.items():
        assert concealed(state, p) == sorted(tiles(text))
    assert state.phase is Phase.TURN and state.current == 0
    assert state.drawn == tile("C")  # the dealer's 14th tile
    assert state.wall.remaining == 144 - 53
    assert state.legal_actions(0) == discards(state, 0)
    assert state.awaiting() == [0]
    for p in (1, 2, 3):
        assert state.legal_actions(p) == []
    assert [state.seat_wind(p) for p in range(4)] == list(Wind)
    tablekit.check_conservation(state)


def test_the_deal_with_another_dealer() -> None:
    # Player 2 deals: the deal starts with it, it is East and moves first.
    hands = {2: Q1 + "C", 3: Q2 + "N", 0: Q3 + "N", 1: Q4 + "N"}
    state = deal(hands, dealer=2)
    for p, text in hands.items():
        assert concealed(state, p) == sorted(tiles(text))
    assert state.current == 2 and state.dealer == 2
    assert [state.seat_wind(p) for p in (2, 3, 0, 1)] == list(Wind)
    start = state.events[0]
    assert start.kind == "hand_start"
    assert start.data["seat_winds"] == ["W", "N", "E", "S"]  # by player


def test_the_dealer_may_win_on_its_dealt_tiles() -> None:
    # A complete 14-tile deal: the dealer's win is self-drawn (MCR has no Heavenly Hand).
    state = deal({0: "123456789m234p55s", 1: Q2 + "N", 2: Q3 + "N", 3: Q4 + "N"})
    assert state.legal_actions(0)[0] == WIN
    state.apply(0, WIN)
    result = state.result
    assert result is not None and result.context is not None and result.score is not None
    assert result.context.self_drawn and result.win_tile == tile("5s")
    fan = result.score.total
    assert result.deltas == (3 * (8 + fan), -(8 + fan), -(8 + fan), -(8 + fan))


# ----------------------------------------------------------------- flowers ---


def test_flowers_at_the_deal_dealer_first_and_repeatedly() -> None:
    # The dealer is dealt f1 and f2 (its 14th tile); player 1 is dealt f3. The tail holds f4,
    # which replaces one of the dealer's flowers and is replaced in turn.
    hands = {
        0: "159m159p159sES f1 W f2",
        1: "26m26p26sCFPESW f3",
        2: Q3 + "N",
        3: Q4 + "N",
    }
    state = deal(hands, tail="f4 2m 3m 4m")
    assert sorted(state.flowers[0]) == tiles("f1 f2 f4")
    assert state.flowers[1] == tiles("f3")
    assert concealed(state, 0) == sorted(tiles("159m159p159sESW 2m 3m"))
    assert concealed(state, 1) == sorted(tiles("26m26p26sCFPESW 4m"))
    flower_events = [e for e in state.events if e.kind == "flower"]
    assert [e.data["player"] for e in flower_events] == [0, 0, 0, 1]  # the dealer first
    replacement = [e for e in state.events if e.kind == "draw" and e.to is not None]
    assert [e.data["tile"] for e in replacement] == ["f4", "2m", "3m", "4m"]
    assert all(e.data["source"] == "flower" for e in replacement)
    assert state.wall.remaining == 144 - 53 - 4
    assert state.phase is Phase.TURN and state.current == 0
    tablekit.check_conservation(state)


def test_a_flower_drawn_mid_hand_is_replaced_from_the_tail() -> None:
    hands = {0: Q1 + "C", 1: Q2 + "N", 2: Q3 + "N", 3: Q4 + "N"}
    state = deal(hands, draws="f5", tail="f6 6m")
    events = discard_drawn(state, 0)
    assert [(e.kind, e.to, e.data.get("tile")) for e in events] == [
        ("discard", None, "C"),
        ("draw", 1, "f5"),
        ("draw", None, None),
        ("flower", None, None),
        ("draw", 1, "f6"),  # the replacement is a flower too: replaced again
        ("draw", None, None),
        ("flower", None, None),
        ("draw", 1, "6m"),
        ("draw", None, None),
    ]
    assert [e.data["flower"] for e in events if e.kind == "flower"] == ["f5", "f6"]
    assert state.flowers[1] == tiles("f5 f6")
    assert state.drawn == tile("6m") and state.current == 1 and state.phase is Phase.TURN
    assert not state.kong_draw
    assert tile("6m") in concealed(state, 1)
    tablekit.check_conservation(state)


def test_flowers_reach_scoring_and_payment() -> None:
    # Player 1 is dealt f1, replaced by 4p: ready on 5p with a pure straight.
    hands = {
        0: "5p48m48p48sCFPESWN",
        1: "123456789m22s f1 6p",
        2: Q2 + "N",
        3: Q3 + "N",
    }
    state = deal(hands, tail="4p")
    assert concealed(state, 1) == sorted(tiles("123456789m22s46p"))
    state.apply(0, discard("5p"))
    assert state.legal_actions(1) == [WIN, chow("4p"), PASS]
    state.apply(1, WIN)
    result = state.result
    assert result is not None and result.context is not None and result.score is not None
    assert result.context.flowers == 1
    assert fan_count(state, Fan.FLOWER_TILES) == 1
    fan = result.score.total
    assert fan == score(result.hand, result.context).total  # type: ignore[arg-type]
    assert result.deltas == (-(8 + fan), 3 * 8 + fan, -8, -8)
    payments_hold(state)


# ------------------------------------------------------------------- kongs ---


# The dealer holds four 3s and is ready on C once it declares them; the others are quiet.
KONG_HANDS = {0: "3333s123456789mC", 1: Q1, 2: Q2 + "N", 3: Q4 + "N"}
# The dealer discards 7p; player 1, ready on C, holds three 7p.
EXPOSED_KONG_HANDS = {0: "7p48m48p48sCFPESWN", 1: "777p123456789mC", 2: Q1, 3: Q2 + "N"}


def test_concealed_kong_then_out_with_replacement_tile() -> None:
    hands = KONG_HANDS
    state = deal(hands, tail="C")
    kong = act("concealed_kong", "3s")
    assert kong in state.legal_actions(0)
    assert WIN not in state.legal_actions(0)
    events = state.apply(0, kong)
    assert [(e.kind, e.to, e.hide) for e in events[:2]] == [
        ("concealed_kong", 0, None),
        ("concealed_kong", None, 0),
    ]
    assert events[0].data["tile"] == "3s" and "tile" not in events[1].data
    assert state.melds[0] == [Meld(MeldKind.KONG, tile("3s"), 0)]
    assert state.drawn == tile("C") and state.kong_draw
    assert state.wall.remaining == 144 - 53 - 1
    assert events[2].data == {"player": 0, "tile": "C", "source": "kong"}
    assert WIN in state.legal_actions(0)
    state.apply(0, WIN)
    result = state.result
    assert result is not None and result.context is not None and result.score is not None
    assert result.context.self_drawn and result.context.kong
    assert Fan.OUT_WITH_REPLACEMENT_TILE in fans(state)
    fan = result.score.total
    assert result.deltas == (3 * (8 + fan), -(8 + fan), -(8 + fan), -(8 + fan))
    payments_hold(state)


def test_a_flower_after_a_kong_then_a_win_is_self_drawn() -> None:
    # 补花下杠: the kong replacement is a flower; winning on its replacement is self-drawn.
    hands = KONG_HANDS
    state = deal(hands, tail="f1 C")
    state.apply(0, act("concealed_kong", "3s"))
    assert state.flowers[0] == tiles("f1")
    assert state.drawn == tile("C") and not state.kong_draw
    state.apply(0, WIN)
    result = state.result
    assert result is not None and result.context is not None
    assert result.context.self_drawn and not result.context.kong
    assert result.context.flowers == 1
    assert Fan.OUT_WITH_REPLACEMENT_TILE not in fans(state)
    assert Fan.FLOWER_TILES in fans(state)
    payments_hold(state)


def test_exposed_kong_on_a_discard_then_out_with_replacement_tile() -> None:
    state = deal(EXPOSED_KONG_HANDS, tail="C")
    state.apply(0, discard("7p"))
    assert state.phase is Phase.CLAIM
    assert state.legal_actions(1) == [KONG, PUNG, PASS]
    events = state.apply(1, KONG)
    claim = events[0]
    assert claim.kind == "claim" and claim.data["type"] == "kong" and claim.data["from"] == 0
    assert state.melds[1] == [Meld(MeldKind.KONG, tile("7p"), 1)]  # offered by the previous
    assert state.river[0] == [(tile("7p"), True)]
    assert state.current == 1 and state.phase is Phase.TURN
    assert state.drawn == tile("C") and state.kong_draw
    state.apply(1, WIN)
    result = state.result
    assert result is not None and result.context is not None
    assert result.context.self_drawn and result.context.kong
    assert Fan.OUT_WITH_REPLACEMENT_TILE in fans(state)
    payments_hold(state)


# Player 1 pungs the dealer's 7p (player 2, ready on 7p, passes), and four draws later draws
# the fourth 7p: an added kong. Player 2 (and player 3 in one test) can rob it.
ROB_HANDS = {
    0: "7p159m159p159sESWN",
    1: "77p159m159sESWNC",
    2: "123456789m22s68p",
    3: Q4 + "N",
}


def added_kong_hand(hands: dict[int, str] = ROB_HANDS) -> HandState:
    state = deal(hands, draws="F P F 7p", tail="P")
    state.apply(0, discard("7p"))
    assert state.legal_actions(1) == [PUNG, PASS]
    assert state.legal_actions(2) == [WIN, PASS]
    for p in state.awaiting():
        if p != 1:
            state.apply(p, PASS)  # ready on 7p, but waits for the kong
    state.apply(1, PUNG)
    assert state.melds[1] == [Meld(MeldKind.PUNG, tile("7p"), 1)]
    state.apply(1, discard("C"))
    for p in (2, 3, 0):
        discard_drawn(state, p)
    assert state.current == 1 and state.drawn == tile("7p")
    return state


def test_added_kong_replacement_from_the_tail() -> None:
    state = added_kong_hand()
    add = act("add_kong", "7p")
    assert add in state.legal_actions(1)
    events = state.apply(1, add)
    assert events[0].kind == "add_kong" and events[0].to is None
    assert state.phase is Phase.ROB
    # The kong stands at once, as the event says: while robbers answer, the tile is on the
    # meld, not in the hand, for its owner and for everyone else.
    assert state.melds[1] == [Meld(MeldKind.KONG, tile("7p"), 1)]
    assert tile("7p") not in concealed(state, 1)
    for viewer in (1, 2, None):
        (seat,) = [s for s in state.view(viewer).to_dict()["seats"] if s["player"] == 1]
        assert seat["melds"] == ["[7777p,1]"], viewer
        assert "7p" not in seat.get("concealed", ""), viewer
    tablekit.check_conservation(state)
    assert state.legal_actions(2) == [WIN, PASS]
    assert state.awaiting() == [2]
    assert state.legal_actions(1) == []
    events = state.apply(2, PASS)  # declines to rob: the kong stands
    assert state.melds[1] == [Meld(MeldKind.KONG, tile("7p"), 1)]
    assert state.concealed[1][tile("7p")] == 0
    assert state.current == 1 and state.phase is Phase.TURN
    assert state.drawn == tile("P") and state.kong_draw
    assert [e.data.get("source") for e in events if e.kind == "draw"] == ["kong", "kong"]
    tablekit.check_conservation(state)


def test_robbing_the_kong() -> None:
    state = added_kong_hand()
    state.apply(1, act("add_kong", "7p"))
    state.apply(2, WIN)
    result = state.result
    assert result is not None and result.context is not None and result.score is not None
    assert (result.winner, result.discarder, result.win_tile) == (2, 1, tile("7p"))
    assert result.context.kong and not result.context.self_drawn
    assert Fan.ROBBING_THE_KONG in fans(state)
    assert Fan.LAST_TILE not in fans(state)  # excluded by Robbing The Kong
    fan = result.score.total
    assert result.deltas == (-8, -(8 + fan), 3 * 8 + fan, -8)  # the kong-er pays as discarder
    assert state.melds[1] == [Meld(MeldKind.PUNG, tile("7p"), 1)]  # the kong never stood
    # The robbed tile left the declarer's hand: the hand end shows it once, as the winner's.
    assert tile("7p") not in concealed(state, 1)
    (end,) = [e for e in state.events if e.kind == "hand_end"]
    assert "7p" not in end.data["hands"][1]["concealed"]
    assert end.data["hands"][1]["melds"] == ["[777p,1]"]
    (win,) = [e for e in state.events if e.kind == "win"]
    assert win.data["tile"] == "7p"
    payments_hold(state)


def test_robbing_the_kong_head_bump() -> None:
    hands = dict(ROB_HANDS)
    hands[3] = "123456789s33m68p"  # ready on 7p too
    state = added_kong_hand(hands)
    state.apply(1, act("add_kong", "7p"))
    assert state.awaiting() == [2, 3]
    state.apply(3, WIN)
    assert state.result is None
    events = state.apply(2, WIN)
    assert state.result is not None and state.result.winner == 2
    assert [e.data for e in events if e.kind == "head_bump"] == [{"winner": 2, "others": [3]}]
    payments_hold(state)


def test_a_concealed_kong_cannot_be_robbed() -> None:
    # Player 2 is ready on 3s, the dealer declares a concealed kong of 3s.
    hands = {
        0: "3333s123456789mC",
        1: "48m48p48sCFPESWN",
        2: "123456789p55m24s",
        3: "26m26p26sCFPESWN",
    }
    state = deal(hands, tail="F")
    assert is_winning(counts_of([*concealed(state, 2), tile("3s")]))
    state.apply(0, act("concealed_kong", "3s"))
    assert state.phase is Phase.TURN and state.current == 0
    assert state.legal_actions(2) == []
    assert state.drawn == tile("F")


# ------------------------------------------------------------------ claims ---

BUMP_TWO = {
    0: "5p48m48p48sCFPESWN",
    1: "26m26p26sCFPESWN",
    2: "123456789s33m46p",
    3: "123456789m77s46p",
}


@pytest.mark.parametrize("order", [(2, 3), (3, 2)])
def test_head_bump_two_winners(order: tuple[int, int]) -> None:
    state = deal(BUMP_TWO)
    state.apply(0, discard("5p"))
    assert state.legal_actions(2) == [WIN, PASS]
    assert state.legal_actions(3) == [WIN, PASS]
    assert state.legal_actions(1) == []
    events = state.apply(order[0], WIN)
    assert events == [] and state.result is None  # waits for the other answer
    events = state.apply(order[1], WIN)
    result = state.result
    assert result is not None and result.score is not None
    assert (result.winner, result.discarder) == (2, 0)  # the first after the discarder
    assert [e.data for e in events if e.kind == "head_bump"] == [{"winner": 2, "others": [3]}]
    fan = result.score.total
    assert result.deltas == (-(8 + fan), -8, 3 * 8 + fan, -8)
    payments_hold(state)


@pytest.mark.parametrize("order", list(permutations((3, 0, 1))))
def test_head_bump_three_winners(order: tuple[int, int, int]) -> None:
    # Player 2 deals and discards; after it come 3, 0, 1: all three are ready on 5p.
    hands = {
        2: "5p48m48p48sCFPESWN",
        3: "123456789m22s46p",
        0: "123456789s33m46p",
        1: "123456789m77s46p",
    }
    state = deal(hands, dealer=2)
    state.apply(2, discard("5p"))
    assert state.legal_actions(3) == [WIN, chow("4p"), PASS]
    assert state.awaiting() == [3, 0, 1]
    for p in order[:-1]:
        state.apply(p, WIN)
        assert state.result is None and state.phase is Phase.CLAIM
    state.apply(order[-1], WIN)
    result = state.result
    assert result is not None and (result.winner, result.discarder) == (3, 2)
    bump = [e.data for e in state.events if e.kind == "head_bump"]
    assert bump == [{"winner": 3, "others": [0, 1]}]
    payments_hold(state)


# Dealer discards 5p: player 1 can chow (4p 6p), player 2 can pung (5p 5p), player 3 can win.
PRIORITY = {
    0: "5p48m48p48sCFPESWN",
    1: "46p159m159sESWNC",
    2: "55p26m26sCFPESWN",
    3: "123456789m77s46p",
}


@pytest.mark.parametrize("order", list(permutations((1, 2, 3))))
def test_win_beats_pung_and_chow(order: tuple[int, ...]) -> None:
    state = deal(PRIORITY)
    state.apply(0, discard("5p"))
    assert state.legal_actions(1) == [chow("4p"), PASS]
    assert state.legal_actions(2) == [PUNG, PASS]
    assert state.legal_actions(3) == [WIN, PASS]
    answers = {1: chow("4p"), 2: PUNG, 3: WIN}
    for p in order[:-1]:
        assert state.apply(p, answers[p]) == []
        assert state.phase is Phase.CLAIM and state.result is None
        assert p not in state.awaiting()
    state.apply(order[-1], answers[order[-1]])
    assert state.result is not None and state.result.winner == 3
    assert state.melds[1] == [] and state.melds[2] == []


@pytest.mark.parametrize("order", list(permutations((1, 2, 3))))
def test_pung_beats_chow(order: tuple[int, ...]) -> None:
    state = deal(PRIORITY)
    state.apply(0, discard("5p"))
    answers = {1: chow("4p"), 2: PUNG, 3: PASS}
    for p in order:
        state.apply(p, answers[p])
    assert state.result is None
    assert state.melds[2] == [Meld(MeldKind.PUNG, tile("5p"), 2)]  # from the opposite player
    assert state.melds[1] == []
    assert state.current == 2 and state.phase is Phase.CLAIMED
    assert state.river[0] == [(tile("5p"), True)]
    tablekit.check_conservation(state)


def test_chow_when_the_others_pass() -> None:
    state = deal(PRIORITY)
    state.apply(0, discard("5p"))
    state.apply(3, PASS)
    state.apply(2, PASS)
    events = state.apply(1, chow("4p"))
    assert events[0].data["meld"] == "[456p,2]"  # the claimed tile is the chow's second
    assert state.melds[1] == [Meld(MeldKind.CHOW, tile("4p"), 2)]
    assert state.current == 1 and state.phase is Phase.CLAIMED
    assert state.legal_actions(1) == discards(state, 1)


def test_everyone_passes_then_the_next_player_draws() -> None:
    state = deal(PRIORITY, draws="N")
    state.apply(0, discard("5p"))
    for p in (3, 1, 2):
        state.apply(p, PASS)
    assert state.current == 1 and state.phase is Phase.TURN and state.drawn == tile("N")
    assert state.river[0] == [(tile("5p"), False)]


@pytest.mark.parametrize("order", list(permutations((1, 2, 3))))
def test_a_declined_win_never_lets_a_lower_claim_beat_another_win(
    order: tuple[int, ...],
) -> None:
    # Player 1 can chow, players 2 and 3 can win; player 2 declines its win.
    hands = {
        0: "5p48m48p48sCFPESWN",
        1: "46p159m159sESWNC",
        2: "123456789s33m46p",
        3: "123456789m77s46p",
    }
    state = deal(hands)
    state.apply(0, discard("5p"))
    answers = {1: chow("4p"), 2: PASS, 3: WIN}
    for p in order:
        state.apply(p, answers[p])
    assert state.result is not None and state.result.winner == 3
    assert state.melds[1] == []


def test_chow_only_from_the_previous_player() -> None:
    hands = {
        0: "3m159p159sESWNCFP",
        1: "1245m9m159sESWNC",
        2: "247m159p159sESWF",
        3: "247m159p159sESWP",
    }
    state = deal(hands, draws="3m")
    state.apply(0, discard("3m"))
    assert state.legal_actions(1) == [chow("1m"), chow("2m"), chow("3m"), PASS]
    assert state.legal_actions(2) == []  # 2m 4m, but player 0 is not its previous player
    assert state.legal_actions(3) == []
    assert state.awaiting() == [1]
    state.apply(1, PASS)
    discard_drawn(state, 1)  # the other 3m: now player 2 is the next player
    assert state.legal_actions(2) == [chow("2m"), PASS]
    assert state.legal_actions(3) == []


def test_no_kong_right_after_a_claim_and_kongs_only_after_a_draw() -> None:
    # Player 1 holds three 7p and four 8s: it may kong or pung the dealer's 7p.
    hands = {
        0: "7p159m159p159sESWN",
        1: "777p8888s159mESW",
        2: "159m159p159sESWN",
        3: "159m159p159sESWN",
    }
    state = deal(hands, draws="C F P 2s")
    state.apply(0, discard("7p"))
    # Answering a discard: no concealed kong of the four 8s.
    assert state.legal_actions(1) == [KONG, PUNG, PASS]
    state.apply(1, PUNG)
    assert state.phase is Phase.CLAIMED
    # After the pung: only discards, though it holds four 8s and the fourth 7p.
    assert state.legal_actions(1) == discards(state, 1)
    state.apply(1, discard("E"))
    for p in (2, 3, 0):
        discard_drawn(state, p)
    assert state.current == 1 and state.drawn == tile("2s")
    legal = state.legal_actions(1)
    assert act("concealed_kong", "8s") in legal
    assert act("add_kong", "7p") in legal


# --------------------------------------------------------------- Last Tile ---

# The dealer's 7p is punged by player 1; later the last 7p comes, and player 2 is ready on it.
LAST_TILE_HANDS = {
    0: "7p159m159p159sESWN",
    1: "77p159m159sESWNC",
    2: "123456789m22s68p",
    3: Q4 + "N",
}


def punged_7p(draws: str) -> HandState:
    state = deal(LAST_TILE_HANDS, draws=draws)
    state.apply(0, discard("7p"))
    state.apply(2, PASS)
    state.apply(1, PUNG)
    state.apply(1, discard("C"))
    return state


def test_last_tile_on_a_discard() -> None:
    # Three 7p visible: the pung (the claimed one is counted once, in the meld).
    state = punged_7p(draws="F 7p")
    discard_drawn(state, 2)
    discard_drawn(state, 3)  # the fourth 7p
    assert state.legal_actions(2) == [WIN, PASS]
    state.apply(2, WIN)
    result = state.result
    assert result is not None and result.context is not None
    assert result.context.last_of_kind and not result.context.self_drawn
    assert Fan.LAST_TILE in fans(state)
    payments_hold(state)


def test_last_tile_self_drawn() -> None:
    state = punged_7p(draws="7p")
    state.apply(2, WIN)
    result = state.result
    assert result is not None and result.context is not None
    assert result.context.last_of_kind and result.context.self_drawn
    assert Fan.LAST_TILE in fans(state)


def test_not_last_tile_with_two_visible() -> None:
    # Only the dealer's discard and one more 7p are visible when player 2 wins.
    hands = dict(LAST_TILE_HANDS)
    hands[1] = "7p159m159sESWNCF"
    state = deal(hands, draws="7p")
    state.apply(0, discard("7p"))
    state.apply(2, PASS)
    assert state.current == 1
    discard_drawn(state, 1)  # a second 7p in a river; the other two are in the wall or a hand
    state.apply(2, WIN)
    result = state.result
    assert result is not None and result.context is not None
    assert not result.context.last_of_kind
    assert Fan.LAST_TILE not in fans(state)


def test_a_face_down_kong_is_not_visible() -> None:
    # A concealed kong's tiles never count as seen for Last Tile (和绝张), an exposed one does.
    hands = KONG_HANDS
    state = deal(hands, tail="F")
    state.apply(0, act("concealed_kong", "3s"))
    assert state._visible(tile("3s")) == 0
    state = deal(EXPOSED_KONG_HANDS)
    state.apply(0, discard("7p"))
    state.apply(1, KONG)
    assert state._visible(tile("7p")) == 4


# ---------------------------------------------------- the end of the wall ---

# All eight flowers are dealt to player 2 and replaced from the tail, so no flower is left in
# the wall and nothing else comes from the tail: 83 draws, the last one is player 3's.
WALL_END_TAIL = "6s C F P E S W N"


def wall_end_hand(hands: dict[int, str], last: str) -> HandState:
    state = deal(hands, tail=WALL_END_TAIL, last=last)
    assert state.wall.remaining == 83
    assert len(state.flowers[2]) == 8
    tablekit.drive(state, lambda s: s.wall.remaining == 0)
    assert state.current == 3 and state.drawn == tile(last)
    return state


def test_last_tile_draw() -> None:
    hands = {
        0: "159m159p159sESWNF",
        1: Q3 + "N",
        2: "f1f2f3f4f5f6f7f8 26m26p2s",
        3: "123456789m22s68p",
    }
    state = wall_end_hand(hands, last="7p")
    state.apply(3, WIN)
    result = state.result
    assert result is not None and result.context is not None
    assert result.context.wall_last and result.context.self_drawn
    assert Fan.LAST_TILE_DRAW in fans(state)
    payments_hold(state)


LAST_DISCARD_HANDS = {
    0: "123456789m22s68pN",  # ready on 7p (and could chow it) after discarding N
    1: "77p37m3p37sCFPESW",  # a pair of 7p
    2: "f1f2f3f4f5f6f7f8 26m26p2s",
    3: "9999s159m159pESW",  # four 9s: never a kong on the last tile
}


def last_discard_hand() -> HandState:
    state = wall_end_hand(LAST_DISCARD_HANDS, last="7p")
    assert act("concealed_kong", "9s") not in state.legal_actions(3)  # no replacement left
    assert state.legal_actions(3) == discards(state, 3)
    state.apply(3, discard("7p"))
    return state


def test_the_last_discard_can_only_be_won() -> None:
    state = last_discard_hand()
    assert state.phase is Phase.CLAIM
    assert state.legal_actions(0) == [WIN, PASS]  # no chow
    assert state.legal_actions(1) == []  # no pung
    state.apply(0, WIN)
    result = state.result
    assert result is not None and result.context is not None
    assert result.context.wall_last and not result.context.self_drawn
    assert (result.winner, result.discarder) == (0, 3)
    assert Fan.LAST_TILE_CLAIM in fans(state)
    payments_hold(state)


def test_an_exhausted_wall_is_a_drawn_hand() -> None:
    state = last_discard_hand()
    events = state.apply(0, PASS)
    assert [e.kind for e in events] == ["exhausted", "hand_end"]
    result = state.result
    assert result is not None
    assert (result.result, result.winner, result.deltas) == ("draw", None, (0, 0, 0, 0))
    assert state.phase is Phase.OVER
    assert all(state.legal_actions(p) == [] for p in range(4))
    tablekit.check_conservation(state)


def test_an_exhausted_wall_without_claims() -> None:
    state = wall_end_hand(LAST_DISCARD_HANDS, last="F")
    events = state.apply(3, discard("F"))
    assert [e.kind for e in events] == ["discard", "exhausted", "hand_end"]
    assert state.result is not None and state.result.result == "draw"
    assert state.result.deltas == (0, 0, 0, 0)


def test_a_flower_as_the_last_tile_ends_the_hand_drawn() -> None:
    # Seven flowers are dealt to player 2; the eighth is the last tile of the wall. After the
    # 83 other draws the dealer draws it: set aside, nothing left to replace it with.
    hands = dict(LAST_DISCARD_HANDS)
    hands[2] = "f1f2f3f4f5f6f7 26m26p26s"
    state = deal(hands, tail="C F P E S W N", last="f8")
    assert state.wall.remaining == 84
    tablekit.drive(state, lambda s: False)
    assert state.phase is Phase.OVER and state.wall.remaining == 0
    assert state.flowers[0] == tiles("f8")
    result = state.result
    assert result is not None and result.result == "draw" and result.deltas == (0, 0, 0, 0)
    assert [e.kind for e in state.events[-5:]] == [
        "draw",
        "draw",
        "flower",
        "exhausted",
        "hand_end",
    ]
    tablekit.check_conservation(state)


# -------------------------------------------------------- the 8-fan minimum ---


def test_a_hand_under_8_fan_is_not_offered_win() -> None:
    # Player 1: 123m 456p 678s 234s + 9m, and a flower. On the 9m it is complete for 5 fan
    # (+1 flower) on a discard, 7 (+1) self-drawn: 8 in all, but flowers do not count.
    hands = {
        0: "9m48m48p48sCFPESWN",
        1: "123m456p678s234s f1",
        2: Q2 + "N",
        3: Q3 + "N",
    }
    state = deal(hands, draws="9m", tail="9m")
    assert state.flowers[1] == tiles("f1")
    state.apply(0, discard("9m"))
    assert state.phase is Phase.TURN and state.current == 1  # no claim was possible
    assert state.drawn == tile("9m")
    assert is_winning(state.concealed[1])
    assert WIN not in state.legal_actions(1)
    hand = state._hand_of(1, tile("9m"), extra=False)
    ctx = WinContext(self_drawn=True, flowers=1)
    assert score(hand, ctx).total == 8 and not score(hand, ctx).meets_minimum


def test_the_same_hand_wins_self_drawn_but_not_on_a_discard() -> None:
    # 234m 345p 567s 234s + 9m: 7 fan on a discard, 9 self-drawn.
    hands = {
        0: "9m48m48p48sCFPESWN",
        1: Q2 + "N",
        2: "234m345p567s234s9m",
        3: Q3 + "N",
    }
    state = deal(hands, draws="N 9m")
    state.apply(0, discard("9m"))
    assert state.phase is Phase.TURN and state.current == 1
    discard_drawn(state, 1)
    assert state.current == 2 and state.drawn == tile("9m")
    assert WIN in state.legal_actions(2)
    state.apply(2, WIN)
    result = state.result
    assert result is not None and result.score is not None
    assert result.score.total == 9
    assert result.deltas == (-17, -17, 51, -17)
    payments_hold(state)


# ---------------------------------------------------------------- payments ---


def test_self_drawn_payment_with_flowers() -> None:
    # Player 2 is dealt two flowers (replaced by 3m and 4p) and self-draws 5p.
    hands = {
        0: "48m48p48sCFPESWN1s",
        1: Q2 + "N",
        2: "123456789s3m f2 f3 6p",
        3: "159m159p15sEWNCF",
    }
    state = deal(hands, draws="S 5p", tail="3m 4p")
    assert concealed(state, 2) == sorted(tiles("123456789s33m46p"))
    discard_drawn(state, 0)
    discard_drawn(state, 1)
    state.apply(2, WIN)
    result = state.result
    assert result is not None and result.context is not None and result.score is not None
    assert result.context.self_drawn and result.context.flowers == 2
    assert fan_count(state, Fan.FLOWER_TILES) == 2
    fan = result.score.total
    assert fan == 26
    assert result.deltas == (-(8 + fan), -(8 + fan), 3 * (8 + fan), -(8 + fan))
    payments_hold(state)


# ---------------------------------------------------------- illegal actions ---


def refused(state: HandState, player: int, action: Action, code: str) -> None:
    """``action`` raises ``IllegalAction(code)`` and changes nothing at all."""
    before = snapshot(state)
    with pytest.raises(IllegalAction) as info:
        state.apply(player, action)
    assert info.value.code == code, str(info.value)
    assert snapshot(state) == before


def test_illegal_actions_change_nothing() -> None:
    state = HandState(tablekit.stacked_wall(PRIORITY, draws="N"), (0, 1, 2, 3), 0, Wind.EAST)
    refused(state, 0, discard("5p"), "not_your_turn")  # not dealt yet
    state.start()
    with pytest.raises(IllegalAction) as info:
        state.start()
    assert info.value.code == "already_started"

    # The dealer's turn.
    refused(state, 2, discard("5p"), "not_your_turn")
    refused(state, 0, discard("1m"), "tile_not_in_hand")
    refused(state, 0, PUNG, "illegal_action")
    refused(state, 0, WIN, "illegal_action")
    refused(state, 0, chow("3p"), "illegal_action")
    refused(state, 0, act("concealed_kong", "5p"), "illegal_action")
    refused(state, 0, act("add_kong", "4m"), "illegal_action")
    refused(state, 0, Action(ActionKind.DISCARD), "illegal_action")
    refused(state, 0, Action(ActionKind.DISCARD, FIRST_FLOWER), "tile_not_in_hand")
    refused(state, 4, discard("5p"), "no_such_player")
    refused(state, -1, discard("5p"), "no_such_player")

    # Answers to a discard.
    state.apply(0, discard("5p"))
    refused(state, 0, discard("4m"), "not_your_turn")  # the discarder waits
    refused(state, 1, discard("4p"), "illegal_action")  # a held tile, but not its turn
    refused(state, 1, chow("3p"), "illegal_action")
    refused(state, 1, PUNG, "illegal_action")
    refused(state, 2, WIN, "illegal_action")
    state.apply(3, PASS)
    refused(state, 3, WIN, "already_answered")
    state.apply(2, PUNG)
    state.apply(1, PASS)

    # After the pung: discard only.
    assert state.phase is Phase.CLAIMED and state.current == 2
    refused(state, 2, act("add_kong", "5p"), "illegal_action")
    refused(state, 2, WIN, "illegal_action")
    refused(state, 1, discard("4p"), "not_your_turn")
    state.apply(2, discard("C"))
    assert state.phase is Phase.TURN and state.current == 3


def test_no_action_after_the_hand_is_over() -> None:
    state = deal(PRIORITY)
    state.apply(0, discard("5p"))
    for p, action in ((1, PASS), (2, PASS), (3, WIN)):
        state.apply(p, action)
    assert state.phase is Phase.OVER
    for p in range(4):
        refused(state, p, PASS, "hand_over")
        refused(state, p, discard("5p"), "hand_over")
    refused(state, 9, PASS, "hand_over")


def test_refused_during_robbing() -> None:
    state = added_kong_hand()
    state.apply(1, act("add_kong", "7p"))
    refused(state, 1, discard("C"), "not_your_turn")  # the kong-er waits for the answers
    refused(state, 3, WIN, "not_your_turn")
    refused(state, 2, PUNG, "illegal_action")


# ------------------------------------------------------------------- views ---


def test_views_show_only_ones_own_tiles() -> None:
    hands = KONG_HANDS
    state = deal(hands, tail="F")
    events = state.apply(0, act("concealed_kong", "3s"))
    for viewer in range(4):
        view = state.view(viewer)
        for seat in view.seats:
            if seat.player == viewer:
                assert seat.concealed == tuple(concealed(state, viewer))
            else:
                assert seat.concealed is None
        data = view.to_dict()
        assert [s.get("concealed") is not None for s in data["seats"]] == [
            p == viewer for p in range(4)
        ]
        assert data["you"] == viewer and data["legal"] == [
            a.to_dict() for a in state.legal_actions(viewer)
        ]
    # The face-down kong: its owner sees it, the others only that there is one.
    assert state.view(0).seat(0).melds == (Meld(MeldKind.KONG, tile("3s"), 0),)
    for other in (1, 2, 3, None):
        seat = state.view(other).seat(0)
        assert seat.melds == () and seat.hidden_kongs == 1
        assert state.view(other).to_dict()["seats"][0]["melds"] == ["[????]"]
        assert "3s" not in str(state.view(other).to_dict()["seats"][0])
        for event in events:
            if event.visible_to(other) and event.kind in ("concealed_kong", "draw"):
                assert "tile" not in event.data
    # The drawn tile is in the mover's view only.
    assert state.view(0).drawn == tile("F")
    assert all(state.view(v).drawn is None for v in (1, 2, 3, None))
    tablekit.check_views(state, events)


def test_a_spectator_sees_no_concealed_tile() -> None:
    state = deal(PRIORITY)
    data = state.view(None).to_dict()
    assert all("concealed" not in seat for seat in data["seats"])
    assert "you" not in data and "legal" not in data and "drawn" not in data
    assert state.view(None).legal == ()
    state.apply(0, discard("5p"))
    assert state.view(None).to_dict()["claim"] == {"tile": "5p", "from": 0, "kind": "discard"}


def test_views_after_the_hand_show_everything() -> None:
    hands = KONG_HANDS
    state = deal(hands, tail="C")
    state.apply(0, act("concealed_kong", "3s"))
    state.apply(0, WIN)
    for viewer in (0, 1, 2, 3, None):
        view = state.view(viewer)
        assert all(seat.concealed is not None for seat in view.seats)
        assert view.seat(0).melds == (Meld(MeldKind.KONG, tile("3s"), 0),)
    end = state.events[-1]
    assert end.kind == "hand_end" and end.to is None and end.hide is None
    assert end.data["hands"][0]["melds"] == ["[3333s]"]


def test_the_wall_never_shows_in_a_view() -> None:
    # Two walls that deal the same hands and differ only in the tiles still to be drawn.
    hands = {0: Q1 + "C", 1: Q2 + "N", 2: Q3 + "N", 3: Q4 + "N"}
    a = deal(hands, last="2m 3m 4m")
    b = deal(hands, last="4m 3m 2m")
    assert a.wall.peek_order() != b.wall.peek_order()
    for viewer in (0, 1, 2, 3, None):
        assert a.view(viewer) == b.view(viewer)
        text = str(a.view(viewer).to_dict())
        assert "seed" not in text and "tiles" not in text
    assert set(a.view(0).to_dict()) == {
        "phase",
        "round_wind",
        "dealer",
        "dice",
        "wall_remaining",
        "current",
        "seats",
        "drawn",
        "you",
        "legal",
    }


def test_event_audience() -> None:
    private = Event("draw", {"player": 1, "tile": "5m"}, to=1)
    public = Event("draw", {"player": 1}, hide=1)
    everyone = Event("discard", {"player": 1, "tile": "5m"})
    assert [private.visible_to(s) for s in (0, 1, 2, 3, None)] == [
        False,
        True,
        False,
        False,
        False,
    ]
    assert [public.visible_to(s) for s in (0, 1, 2, 3, None)] == [True, False, True, True, True]
    assert all(everyone.visible_to(s) for s in (0, 1, 2, 3, None))


def test_draw_and_deal_events_to_others_carry_no_tile() -> None:
    state = deal(PRIORITY, draws="N")
    for p in (0, 1, 2, 3):
        mine = [e for e in state.events if e.kind == "deal" and e.visible_to(p)]
        assert [e.data["player"] for e in mine] == [0, 1, 2, 3]
        for event in mine:
            assert ("tiles" in event.data) == (event.data["player"] == p)
    state.apply(0, discard("5p"))
    events = [*state.apply(1, PASS), *state.apply(2, PASS), *state.apply(3, PASS)]
    draws = [e for e in events if e.kind == "draw"]
    assert len(draws) == 2
    for viewer in (0, 1, 2, 3, None):
        (seen,) = [e for e in draws if e.visible_to(viewer)]
        assert ("tile" in seen.data) == (viewer == 1)
    tablekit.check_views(state, state.events)


def test_the_events_of_a_turn_are_shared_by_every_hand_and_read_as_if_new() -> None:
    # A hand keeps all of its events; the draws' and discards' are the same objects in
    # every hand of the process (frozen, their data never changed), not new ones each turn.
    first, second = deal(PRIORITY, draws="N"), deal(PRIORITY, draws="N")
    for state in (first, second):
        state.apply(0, discard("5p"))
        for p in (1, 2, 3):
            state.apply(p, PASS)
    turn = [i for i, e in enumerate(first.events) if e.kind in ("draw", "discard")]
    assert len(turn) == 3  # the discard, the next draw as its player and as the others see it
    for i in turn:
        assert second.events[i] is first.events[i]
    assert [(e.kind, e.data, e.to, e.hide) for e in (first.events[i] for i in turn)] == [
        ("discard", {"player": 0, "tile": "5p"}, None, None),
        ("draw", {"player": 1, "tile": "N", "source": "wall"}, 1, None),
        ("draw", {"player": 1, "source": "wall"}, None, 1),
    ]


# ---------------------------------------------- rulings T6..T8 (docs/rulings.md) ---


def test_ruling_t6_a_kong_replacement_that_is_the_last_tile() -> None:
    # Player 2 is dealt the eight flowers (replaced by the tail's eight tiles) and three 9s.
    # The last two tiles of the wall are 9s (drawn by player 2 from the head as the 82nd
    # draw) and 5p, the last tile, which its concealed kong takes from the tail.
    hands = {
        0: Q2 + "N9p",
        1: Q3 + "N",
        2: "f1f2f3f4f5f6f7f8 999s12m",
        3: Q4 + "N",
    }
    state = deal(hands, tail="3456789m 5p", last="9s 5p")
    assert state.wall.remaining == 83 and len(state.flowers[2]) == 8
    tablekit.drive(state, lambda s: s.wall.remaining == 1)
    assert state.current == 2 and state.drawn == tile("9s")
    state.apply(2, act("concealed_kong", "9s"))
    assert state.wall.remaining == 0 and state.drawn == tile("5p") and state.kong_draw
    assert WIN in state.legal_actions(2)
    state.apply(2, WIN)
    result = state.result
    assert result is not None and result.context is not None
    assert result.context.self_drawn and result.context.kong and result.context.wall_last
    # Both: 杠上开花 (the tile drawn after the kong) and 妙手回春 (the last tile of the wall).
    assert {Fan.OUT_WITH_REPLACEMENT_TILE, Fan.LAST_TILE_DRAW} <= fans(state)
    assert Fan.SELF_DRAWN not in fans(state)
    payments_hold(state)


def test_ruling_t7_a_flower_replacement_that_is_the_last_tile() -> None:
    # Player 3 is dealt seven flowers (the tail's seven tiles replace them) and waits on 7p.
    # The last two tiles of the wall are f8, which player 3 draws from the head as the 83rd
    # draw, and 7p, the last tile, its replacement from the tail.
    hands = {
        0: Q1 + "C",
        1: Q2 + "N",
        2: Q3 + "N",
        3: "f1f2f3f4f5f6f7 123456m",
    }
    state = deal(hands, tail="789m22s68p", last="f8 7p")
    assert state.wall.remaining == 84
    assert concealed(state, 3) == sorted(tiles("123456789m22s68p"))
    tablekit.drive(state, lambda s: s.wall.remaining == 0)
    assert state.current == 3 and state.drawn == tile("7p") and not state.kong_draw
    assert state.flowers[3][-1] == tile("f8")
    draws = [e.data["source"] for e in state.events[-5:] if e.kind == "draw" and e.to == 3]
    assert draws == ["wall", "flower"]
    state.apply(3, WIN)
    result = state.result
    assert result is not None and result.context is not None
    assert result.context.self_drawn and result.context.wall_last and not result.context.kong
    assert Fan.LAST_TILE_DRAW in fans(state)  # 妙手回春, not 杠上开花
    assert Fan.OUT_WITH_REPLACEMENT_TILE not in fans(state)
    assert fan_count(state, Fan.FLOWER_TILES) == 8
    payments_hold(state)


def test_ruling_t8_the_dealer_wins_with_the_last_tile_it_took() -> None:
    # No flower: the 14th tile is the winning tile. 123456789m234p5s + 5s waits on 5s alone.
    state = deal({0: "123456789m234p5s 5s", 1: Q2 + "N", 2: Q3 + "N", 3: Q4 + "N"})
    state.apply(0, WIN)
    assert state.result is not None and state.result.win_tile == tile("5s")
    assert Fan.SINGLE_WAIT in fans(state) and Fan.CLOSED_WAIT not in fans(state)
    payments_hold(state)
    # A flower dealt to the dealer: its replacement, the last tile it took, is the winning
    # tile (here 3p, which 123456789m24p55s waits on alone), not the 14th tile (5s).
    state = deal({0: "123456789m24p5s f1 5s", 1: Q2 + "N", 2: Q3 + "N", 3: Q4 + "N"}, tail="3p")
    assert state.drawn == tile("3p")
    state.apply(0, WIN)
    result = state.result
    assert result is not None and result.context is not None
    assert result.win_tile == tile("3p") and result.context.self_drawn
    assert result.context.flowers == 1
    assert Fan.CLOSED_WAIT in fans(state) and Fan.SINGLE_WAIT not in fans(state)
    payments_hold(state)


# ----------------------------------------------------- the held claim window ---
# ``hold_claims``: every discard and added kong opens a window, resolved by ``close_claims``,
# so that nobody without an option learns whether anyone had one (docs/protocol.md).

DEALER_5P = "5p48m48p48sCFPESWN"
PUNG_5P = {0: DEALER_5P, 1: Q3 + "N", 2: "55p26m26sCFPESWN", 3: Q4 + "N"}
NOBODY_5P = {**PUNG_5P, 2: Q2 + "N"}  # the same table, player 2's tiles changed: no claim


def held(hands: dict[int, str], **stack: str) -> HandState:
    state = deal(hands, **stack)
    state.hold_claims = True
    return state


def test_holding_opens_a_window_even_when_nobody_may_claim() -> None:
    state = held(NOBODY_5P, draws="9p")
    events = state.apply(0, discard("5p"))
    assert [e.kind for e in events] == ["discard"]  # nothing after the discard yet
    assert state.phase is Phase.CLAIM and state.awaiting() == []
    assert all(state.legal_actions(p) == [] for p in range(4))
    for viewer in (0, 1, 2, 3, None):
        data = state.view(viewer).to_dict()
        assert data["phase"] == "claim"
        assert data["claim"] == {"tile": "5p", "from": 0, "kind": "discard"}
    assert state.claims_answered()
    events = state.close_claims()
    assert [e.kind for e in events] == ["draw", "draw"]
    assert state.current == 1 and state.phase is Phase.TURN and state.drawn == tile("9p")
    tablekit.check_conservation(state)


def test_holding_waits_for_the_close_after_the_last_answer() -> None:
    state = held(PUNG_5P, draws="9p")
    state.apply(0, discard("5p"))
    assert state.awaiting() == [2] and not state.claims_answered()
    before = snapshot(state)
    with pytest.raises(IllegalAction) as refused:
        state.close_claims()  # player 2 has not answered
    assert refused.value.code == "claims_unanswered"
    assert snapshot(state) == before
    assert state.apply(2, PUNG) == []  # resolved only by the close
    assert state.phase is Phase.CLAIM and state.claims_answered() and not state.melds[2]
    events = state.close_claims()
    assert [e.kind for e in events] == ["claim"]
    assert state.melds[2] == [Meld(MeldKind.PUNG, tile("5p"), 2)]
    assert state.current == 2 and state.phase is Phase.CLAIMED
    before = snapshot(state)
    with pytest.raises(IllegalAction) as refused:
        state.close_claims()
    assert refused.value.code == "no_claim_window"
    assert snapshot(state) == before


@pytest.mark.parametrize("hold", [False, True])
def test_a_non_claimant_and_a_spectator_cannot_tell_whether_anyone_may_claim(
    hold: bool,
) -> None:
    """The same table but for player 2's concealed tiles: with holding, players 0, 1, 3 and a
    spectator get the same events and views through the whole window; without it they
    do not (what the window is for)."""
    seen = []
    for hands in (PUNG_5P, NOBODY_5P):
        state = deal(hands, draws="9p 9m")
        state.hold_claims = hold
        out: list[list[Event]] = [state.apply(0, discard("5p"))]
        trace = [state.view(v).to_dict() for v in (0, 1, 3, None)]
        if PASS in state.legal_actions(2):
            out.append(state.apply(2, PASS))
        if hold:
            out.append(state.close_claims())
        out = [events for events in out if events]  # what a table would publish
        trace += [state.view(v).to_dict() for v in (0, 1, 3, None)]
        trace += [
            [[e.data for e in evs if e.visible_to(v)] for evs in out] for v in (0, 1, 3, None)
        ]
        seen.append(trace)
    assert (seen[0] == seen[1]) is hold


def test_holding_an_added_kong_nobody_may_rob() -> None:
    hands = dict(ROB_HANDS)
    hands[2] = Q2 + "N"  # not ready on 7p: nobody may rob
    state = deal(hands, draws="F P F 7p", tail="P")
    state.apply(0, discard("7p"))
    state.apply(1, PUNG)
    state.apply(1, discard("C"))
    for p in (2, 3, 0):
        discard_drawn(state, p)
    assert state.current == 1 and state.drawn == tile("7p")
    state.hold_claims = True
    events = state.apply(1, act("add_kong", "7p"))
    assert [e.kind for e in events] == ["add_kong"]
    assert state.phase is Phase.ROB and state.awaiting() == []
    assert state.view(None).to_dict()["claim"] == {"tile": "7p", "from": 1, "kind": "add_kong"}
    events = state.close_claims()
    assert [e.data.get("source") for e in events if e.kind == "draw"] == ["kong", "kong"]
    assert state.melds[1] == [Meld(MeldKind.KONG, tile("7p"), 1)]
    assert state.current == 1 and state.phase is Phase.TURN and state.kong_draw


def test_holding_a_robbed_kong_with_head_bump() -> None:
    hands = dict(ROB_HANDS)
    hands[3] = "123456789s33m68p"  # ready on 7p too
    state = added_kong_hand(hands)
    state.hold_claims = True
    state.apply(1, act("add_kong", "7p"))
    assert state.apply(3, WIN) == [] and state.apply(2, WIN) == []
    assert state.result is None
    events = state.close_claims()
    assert state.result is not None and state.result.winner == 2
    assert [e.data for e in events if e.kind == "head_bump"] == [{"winner": 2, "others": [3]}]
    payments_hold(state)


def test_holding_the_last_discard_then_the_drawn_hand() -> None:
    state = wall_end_hand(LAST_DISCARD_HANDS, last="F")
    state.hold_claims = True
    assert [e.kind for e in state.apply(3, discard("F"))] == ["discard"]
    assert state.phase is Phase.CLAIM and state.result is None
    assert [e.kind for e in state.close_claims()] == ["exhausted", "hand_end"]
    assert state.result is not None and state.result.result == "draw"


def _without(snap: dict[str, object]) -> dict[str, object]:
    """A snapshot without what holding itself changes: the option, and the state version
    (bumped by each close) with the views cached under it."""
    return {
        k: v for k, v in snap.items() if k not in ("hold_claims", "version", "_public", "_seats")
    }


@pytest.mark.parametrize("seed", [3, 11, 2026])
def test_a_log_played_with_holding_replays_the_same_without_it(seed: int) -> None:
    bots = [tablekit.RandomBot(seed * 4 + p) for p in range(4)]
    match = Match(seed, hold_claims=True)
    ends: list[dict[str, object]] = []
    closes = 0
    while not match.over:
        match.start_hand()
        hand = match.hand
        assert hand is not None and hand.hold_claims
        while hand.phase is not Phase.OVER:
            if hand.claims_answered():
                match.close_claims()
                closes += 1
                continue
            player = hand.awaiting()[0]
            match.apply(player, bots[player].choose(hand, player))
        ends.append(_without(snapshot(hand)))
    assert closes > len(match.log) // 3  # a close after every discard, at least
    again = Match(seed)
    replayed: list[dict[str, object]] = []
    for index, player, action in match.log:
        if again.hand_index < index:
            if again.hand is not None:
                replayed.append(_without(snapshot(again.hand)))
            again.start_hand()
        again.apply(player, action)
    assert again.hand is not None and not again.hand.hold_claims
    replayed.append(_without(snapshot(again.hand)))
    assert replayed == ends
    assert [r.to_dict() for r in again.records] == [r.to_dict() for r in match.records]
    assert again.scores == match.scores

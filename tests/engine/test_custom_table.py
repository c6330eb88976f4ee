"""Tests of ``engine.table`` under the ``custom`` rule set (document 000), on stacked walls.

The indicator turned up after the deal (a flower turned up is set aside, dead), the wild kind
of each option (翻混, 上滚混, 下滚混, cycles included), wild tiles that are never discarded,
claimed with or konged, flowers that stay in the hand when they are wild, wins with wild tiles,
天和 / 地和 / 人和 and 季花 read off the table, base points and the 8-fan option, and the
dealer's doubled payments.
"""

from __future__ import annotations

import pytest
import tablekit
from tablekit import act, discard, tile, tiles

from engine.actions import PASS, WIN, Action, ActionKind
from engine.errors import IllegalAction
from engine.rules import RuleSet, Wilds, custom_rules
from engine.table import HandState, Phase
from engine.tiles import WILD
from engine.wall import N_TILES

# Junk hands that win nothing, and one hand a wild tile (5m here) makes one tile short.
DEALER = "1199m2288p3377sEN"  # 14 tiles, no set; discards 3s or N below
READY = "123m456p789sSS1s5m"  # player 1: with 5m wild, 1s + 5m wait on 1s 2s 3s (and S)
JUNK2 = "WWCCFFPP2s4s6s8s9p"
JUNK3 = "3m4m6m7m8m1p3p4p6p5s6s9mE"


def rules(wilds: Wilds = Wilds.INDICATOR, **options: bool) -> RuleSet:
    return custom_rules(wilds=wilds, **options)


def hands(**changes: str) -> dict[int, str]:
    out = {0: DEALER, 1: READY, 2: JUNK2, 3: JUNK3}
    out.update({int(k[1]): v for k, v in changes.items()})
    return out


def custom_deal(
    wilds: Wilds = Wilds.INDICATOR,
    indicator: str = "5m",
    dealt: dict[int, str] | None = None,
    **kwargs: object,
) -> HandState:
    options = {k: kwargs.pop(k) for k in ("eight_fan", "dealer_repeat") if k in kwargs}
    return tablekit.deal(
        dealt or hands(),
        rules=rules(wilds, **options),  # type: ignore[arg-type]
        indicator=indicator if wilds.uses_indicator else (),
        **kwargs,  # type: ignore[arg-type]
    )


# ----------------------------------------------------------- the indicator ---


def test_the_indicator_is_turned_up_after_the_deal_and_shown_to_everyone() -> None:
    state = custom_deal(indicator="5m")
    assert state.indicator == tile("5m")
    assert state.wilds == {tile("5m")}
    assert state.dead_flowers == []
    # 53 tiles dealt and one turned up.
    assert state.wall.remaining == N_TILES - 53 - 1
    kinds = [e.kind for e in state.events]
    assert kinds.index("indicator") > max(i for i, k in enumerate(kinds) if k == "deal")
    (event,) = [e for e in state.events if e.kind == "indicator"]
    assert event.to is None and event.hide is None
    assert event.data == {"tile": "5m", "flowers": [], "wild": ["5m"]}
    start = state.events[0]
    assert start.kind == "hand_start" and start.data["rules"]["wilds"] == "indicator"
    for viewer in (0, 1, 2, 3, None):
        view = state.view(viewer)
        assert view.indicator == tile("5m")
        assert view.wild_tiles == {tile("5m")}
        assert view.rules.min_fan == 0
        data = view.to_dict()
        assert data["indicator"] == "5m" and data["wild_tiles"] == ["5m"]
        assert data["rules"]["base_points"] == 0
    tablekit.check_conservation(state)
    tablekit.check_views(state, state.events)


def test_a_flower_turned_up_is_set_aside_dead_and_the_next_tile_turned_up() -> None:
    state = custom_deal(indicator="f3 f5 7p")
    assert state.dead_flowers == tiles("f3 f5")
    assert state.indicator == tile("7p")
    assert state.wilds == {tile("7p")}
    assert all(not state.flowers[p] for p in range(4))  # nobody's
    assert state.wall.remaining == N_TILES - 53 - 3
    (event,) = [e for e in state.events if e.kind == "indicator"]
    assert event.data == {"tile": "7p", "flowers": ["f3", "f5"], "wild": ["7p"]}
    assert state.view(None).to_dict()["dead_flowers"] == ["f3", "f5"]
    assert not [e for e in state.events if e.kind == "flower"]
    tablekit.check_conservation(state)


def test_no_indicator_without_an_indicator_option() -> None:
    for wilds in (Wilds.NONE, Wilds.FLOWERS):
        state = custom_deal(wilds)
        assert state.indicator is None
        assert not [e for e in state.events if e.kind == "indicator"]
        assert state.wall.remaining == N_TILES - 53
        assert state.view(0).to_dict()["indicator"] is None


@pytest.mark.parametrize(
    ("wilds", "indicator", "wild"),
    [
        (Wilds.INDICATOR, "9m", "9m"),  # 翻混
        (Wilds.INDICATOR, "F", "F"),
        (Wilds.BEFORE, "5p", "4p"),  # 上滚混
        (Wilds.BEFORE, "1m", "9m"),  # 9 precedes 1
        (Wilds.BEFORE, "E", "N"),
        (Wilds.BEFORE, "C", "P"),
        (Wilds.AFTER, "5p", "6p"),  # 下滚混
        (Wilds.AFTER, "9s", "1s"),  # 1 follows 9
        (Wilds.AFTER, "N", "E"),
        (Wilds.AFTER, "P", "C"),
    ],
)
def test_the_wild_kind_of_each_option(wilds: Wilds, indicator: str, wild: str) -> None:
    state = custom_deal(wilds, indicator=indicator)
    assert state.indicator == tile(indicator)
    assert state.wilds == {tile(wild)}
    assert state.wild_kind == tile(wild)


# ---------------------------------------------------- wild tiles at the table ---


def refused(state: HandState, player: int, kind: str, text: str | None = None) -> str:
    """The code ``state`` refuses the action with; the state must not change."""
    before = tablekit.snapshot(state)
    with pytest.raises(IllegalAction) as info:
        state.apply(player, act(kind, text))
    assert tablekit.snapshot(state) == before
    return info.value.code


def test_a_wild_tile_is_never_discarded() -> None:
    # The dealer holds two 5m, wild with the indicator 4m under 下滚混.
    state = custom_deal(Wilds.AFTER, indicator="4m", dealt=hands(p0="1155m2288p377sENW"))
    assert state.wilds == {tile("5m")}
    legal = state.legal_actions(0)
    assert discard("5m") not in legal and discard("1m") in legal
    assert refused(state, 0, "discard", "5m") == "wild_tile"
    # The dealer's own concealed tiles show the wild tiles first.
    seat = state.view(0).seat(0)
    assert seat.concealed is not None and seat.concealed[:2] == tuple(tiles("55m"))
    assert seat.wilds == 2
    assert seat.to_dict()["concealed"].startswith("55m1")
    tablekit.check_views(state, state.events)


def test_no_kong_of_wild_tiles() -> None:
    state = custom_deal(
        Wilds.AFTER, indicator="4m", dealt=hands(p0="5555m2288p377sENW", p1="123m456p789sSS1s9m")
    )
    legal = state.legal_actions(0)
    assert not [a for a in legal if a.kind is ActionKind.CONCEALED_KONG]
    assert refused(state, 0, "concealed_kong", "5m") == "wild_tile"


def test_no_chow_with_a_wild_tile() -> None:
    # Player 1 holds 5m (wild) and 6m, 2m and 3m, and a pair of 4m; the dealer discards 4m.
    dealt = hands(p0="1199m4m288p3377sEN", p1="2m3m445m6m456p79sSS")
    state = custom_deal(indicator="5m", dealt=dealt)
    state.apply(0, discard("4m"))
    assert state.phase is Phase.CLAIM
    legal = state.legal_actions(1)
    assert act("chow", "2m") in legal  # 2m 3m 4m takes no wild tile
    assert act("chow", "3m") not in legal  # 3m 4m 5m would take the wild 5m
    assert act("chow", "4m") not in legal  # 4m 5m 6m too
    assert act("pung") in legal
    assert refused(state, 1, "chow", "4m") == "wild_tile"
    assert refused(state, 1, "chow", "3m") == "wild_tile"
    state.apply(1, act("chow", "2m"))
    assert state.melds[1][0].tiles == tuple(tiles("234m"))


def test_the_wild_kind_is_never_discarded_so_never_claimed() -> None:
    # No legal action of anyone, in a whole scripted hand, takes a wild tile.
    state = custom_deal(indicator="5m", draws="5m 5m")
    tablekit.drive(state, lambda s: s.phase is Phase.OVER or s.wall.remaining < 80)
    for p in range(4):
        for river_tile, _ in state.river[p]:
            assert river_tile != tile("5m")


# --------------------------------------------------------- flowers are wild ---


def test_wild_flowers_stay_in_the_hand_unreplaced() -> None:
    dealt = hands(p0="1199m2288p3377sf1f2", p1="123m456p789sSS1sf4")
    state = custom_deal(Wilds.FLOWERS, dealt=dealt, draws="f5")
    assert state.held[0] == tiles("f1 f2") and state.held[1] == tiles("f4")
    assert all(not state.flowers[p] for p in range(4))
    assert not [e for e in state.events if e.kind == "flower"]
    assert state.drawn == tile("f2")  # the dealer's 14th tile, kept
    assert state.wall.remaining == N_TILES - 53  # no replacement from the tail
    seat = state.view(0).seat(0)
    assert seat.concealed_count == 14 and seat.wilds == 2
    assert seat.concealed is not None and seat.concealed[:2] == tuple(tiles("f1 f2"))
    assert seat.to_dict()["concealed"].startswith("f1f2")
    assert state.view(1).seat(0).concealed_count == 14
    assert not [a for a in state.legal_actions(0) if a.tile is not None and a.tile >= 34]
    assert refused(state, 0, "discard", "f1") == "wild_tile"
    tablekit.check_conservation(state)
    tablekit.check_views(state, state.events)
    # Player 1 draws a flower: it stays, it is the drawn tile, nothing is replaced.
    state.apply(0, discard("9m"))
    settle(state)
    assert state.current == 1 and state.drawn == tile("f5")
    assert state.held[1] == tiles("f4 f5")
    tablekit.check_conservation(state)


def test_a_win_with_wild_flowers_scores_no_flower() -> None:
    dealt = hands(p1="123m456p789sSS1sf4")
    state = custom_deal(Wilds.FLOWERS, dealt=dealt)
    state.apply(0, discard("3s"))
    assert WIN in state.legal_actions(1)
    state.apply(1, WIN)
    result = state.result
    assert result is not None and result.winner == 1 and result.context is not None
    assert result.context.flowers == 0 and result.context.seat_flowers == 0
    assert result.hand is not None and WILD in result.hand.standing
    assert result.win_tile == tile("3s")
    assert all(fc.fan.en not in ("Flower Tiles", "Seat Flower") for fc in result.score.fans)  # type: ignore[union-attr]
    tablekit.check_payments(state)


# ------------------------------------------------------------------- wins ---


def test_win_with_a_wild_tile_on_a_discard() -> None:
    # The dealer discards N first; player 1 draws 9p and lets it go; ...; the dealer's 3s wins.
    state = custom_deal(draws="9p W 4s 3s")
    state.apply(0, discard("N"))
    assert state.current == 1 and state.drawn == tile("9p")
    state.apply(1, discard("9p"))
    for p, t in ((2, "W"), (3, "4s")):
        settle(state)
        assert state.current == p
        state.apply(p, discard(t))
    settle(state)
    assert state.current == 0 and state.drawn == tile("3s")
    state.apply(0, discard("3s"))
    assert WIN in state.legal_actions(1)
    state.apply(1, WIN)
    result = state.result
    assert result is not None and result.winner == 1 and result.discarder == 0
    assert result.hand is not None and result.hand.wilds == 1
    assert result.hand.win_tile == tile("3s")
    ctx = result.context
    assert ctx is not None and not (ctx.heavenly or ctx.earthly or ctx.human)
    tablekit.check_payments(state)
    tablekit.check_conservation(state)


def test_self_drawn_win_with_a_wild_tile_is_human_before_the_first_discard() -> None:
    state = custom_deal(draws="2s")
    state.apply(0, discard("N"))
    assert state.drawn == tile("2s") and WIN in state.legal_actions(1)
    state.apply(1, WIN)
    result = state.result
    assert result is not None and result.context is not None
    assert result.context.self_drawn and result.context.human  # 人和
    assert not result.context.earthly and not result.context.heavenly
    assert result.score is not None
    assert any(fc.fan.en == "Human Hand" for fc in result.score.fans)
    tablekit.check_payments(state)


def test_drawing_the_wild_tile_completes_the_hand() -> None:
    state = custom_deal(draws="5m")
    state.apply(0, discard("N"))
    assert state.drawn == tile("5m") and WIN in state.legal_actions(1)
    state.apply(1, WIN)
    result = state.result
    assert result is not None and result.hand is not None
    assert result.hand.win_tile == WILD and result.hand.wilds == 2


def test_earthly_on_the_dealers_first_discard() -> None:
    state = custom_deal()
    state.apply(0, discard("3s"))
    state.apply(1, WIN)
    ctx = state.result.context  # type: ignore[union-attr]
    assert ctx is not None and ctx.earthly and not ctx.human  # 地和, not both


def test_heavenly_on_the_dealers_initial_tiles() -> None:
    state = custom_deal(dealt=hands(p0="123m456p789sEE12s5m", p1="1199m2288p3377sN"))
    assert WIN in state.legal_actions(0)
    state.apply(0, WIN)
    ctx = state.result.context  # type: ignore[union-attr]
    assert ctx is not None and ctx.heavenly and ctx.self_drawn


def test_not_human_after_a_claim() -> None:
    # Player 2 pungs the dealer's N; player 1, before its first discard, then draws its
    # winning 2s: no 人和, since a claim was made.
    dealt = hands(p0="1199m2288p3377sNN", p2="WWCCFFPPNN4s6s8s")
    state = custom_deal(dealt=dealt, draws="9p 1p 2s")
    state.apply(0, discard("N"))
    state.apply(2, act("pung"))
    state.apply(2, discard("8s"))
    settle(state)
    assert state.current == 3
    state.apply(3, discard("9p"))
    settle(state)
    state.apply(0, discard("1p"))
    settle(state)
    assert state.current == 1 and state.drawn == tile("2s") and not state.river[1]
    state.apply(1, WIN)
    ctx = state.result.context  # type: ignore[union-attr]
    assert ctx is not None and not ctx.human and not ctx.earthly and not ctx.heavenly


# ----------------------------------------------------- flowers and 季花 ---


def test_seat_flowers_are_counted_for_the_winner() -> None:
    # No wild tiles: flowers are replaced and score. Player 1 sits South: 夏 (f2) and 兰 (f6)
    # are its own, 春 (f1) is not. Replaced by S, 1s and 2s, it waits on 3s.
    dealt = hands(p1="123m456p789sSf1f2f6")
    state = custom_deal(Wilds.NONE, dealt=dealt, tail="S 1s 2s")
    assert sorted(state.flowers[1]) == tiles("f1 f2 f6")
    assert tablekit.concealed(state, 1) == sorted(tiles("123m456p789sSS12s"))
    state.apply(0, discard("3s"))
    assert WIN in state.legal_actions(1)
    state.apply(1, WIN)
    result = state.result
    assert result is not None and result.context is not None and result.score is not None
    assert result.context.flowers == 3 and result.context.seat_flowers == 2
    fans = {fc.fan.en: fc.count for fc in result.score.fans}
    assert fans.get("Seat Flower") == 2


# ------------------------------------------------------------- payments ---


def win_on_first_discard(wilds: Wilds, **options: bool) -> HandState:
    dealt = hands(p1="123m456p789sSS12s") if wilds is Wilds.NONE else hands()
    state = custom_deal(wilds, dealt=dealt, **options)  # type: ignore[arg-type]
    state.apply(0, discard("3s"))
    state.apply(1, WIN)
    return state


@pytest.mark.parametrize(
    ("wilds", "eight_fan", "base"),
    [
        (Wilds.INDICATOR, False, 0),
        (Wilds.FLOWERS, False, 0),
        (Wilds.NONE, False, 2),
        (Wilds.NONE, True, 8),
        (Wilds.INDICATOR, True, 8),
    ],
)
def test_base_points_and_the_dealers_double(wilds: Wilds, eight_fan: bool, base: int) -> None:
    for dealer_repeat in (False, True):
        if wilds is Wilds.FLOWERS:
            dealt = hands(p1="123m456p789sSS1sf4")
            state = custom_deal(
                wilds, dealt=dealt, eight_fan=eight_fan, dealer_repeat=dealer_repeat
            )
            state.apply(0, discard("3s"))
            state.apply(1, WIN)
        else:
            state = win_on_first_discard(wilds, eight_fan=eight_fan, dealer_repeat=dealer_repeat)
        result = state.result
        assert result is not None and result.score is not None
        assert state.rules.base_points == base
        fan = result.score.total
        twice = 2 if dealer_repeat else 1  # the dealer (0) discarded: its payment doubles
        assert result.deltas == (
            (base + fan) * -twice,
            (base + fan) * twice + 2 * base,
            -base,
            -base,
        )
        tablekit.check_payments(state)


def test_the_dealer_wins_double_from_everyone() -> None:
    state = custom_deal(dealt=hands(p0="123m456p789sEE12s5m", p1="1199m2288p3377sN"))
    state.apply(0, WIN)
    result = state.result
    assert result is not None and result.score is not None
    pay = 2 * (0 + result.score.total)
    assert result.deltas == (3 * pay, -pay, -pay, -pay)


def test_the_eight_fan_minimum_refuses_a_short_hand() -> None:
    # 234m 678m 567p SS + 12s (3 fan) on the dealer's second discard: no 地和, no 人和.
    dealt = hands(p1="234m678m567pSS2s9p")
    for eight_fan, wins in ((False, True), (True, False)):
        state = custom_deal(Wilds.NONE, dealt=dealt, eight_fan=eight_fan, draws="1s E 7p 3s")
        for player, text in ((0, "N"), (1, "9p"), (2, "E"), (3, "7p")):
            assert state.current == player
            state.apply(player, discard(text))
            settle(state)
        state.apply(0, discard("3s"))
        assert (WIN in state.legal_actions(1)) is wins
        if not wins:
            assert refused(state, 1, "win") in ("illegal_action", "not_your_turn")
        else:
            state.apply(1, WIN)
            assert state.result is not None and state.result.score is not None
            assert state.result.score.total < 8


def settle(state: HandState) -> None:
    """Everyone answering a claim passes."""
    while state.phase is Phase.CLAIM:
        state.apply(state.awaiting()[0], PASS)


def test_not_heavenly_after_a_concealed_kong() -> None:
    # The dealer kongs 1m first; its replacement 2s completes the hand: a win, not 天和.
    dealt = hands(p0="1111m456p789sEE1s5m", p1="2299m2288p3377sN")
    state = custom_deal(dealt=dealt, tail="2s")
    assert WIN not in state.legal_actions(0)
    state.apply(0, act("concealed_kong", "1m"))
    assert state.drawn == tile("2s") and WIN in state.legal_actions(0)
    state.apply(0, WIN)
    ctx = state.result.context  # type: ignore[union-attr]
    assert ctx is not None and ctx.kong and not ctx.heavenly


def test_a_flower_discard_comes_over_the_wire_and_only_a_table_decides() -> None:
    # "f1".."f8" decode for a discard (a wild flower may be forced out of an all-wild hand);
    # the table refuses it like any other tile it does not allow, changing nothing.
    action = Action.from_dict({"type": "discard", "tile": "f1"})
    assert action.tile == tile("f1") and Action.from_dict(action.to_dict()) == action
    for bad in ({"type": "chow", "tile": "f1"}, {"type": "discard", "tile": "f9"}):
        with pytest.raises(IllegalAction) as info:
            Action.from_dict(bad)
        assert info.value.code == "bad_action"
    mcr = tablekit.deal(hands())
    assert refused(mcr, 0, "discard", "f1") == "tile_not_in_hand"
    dealt = hands(p0="1199m2288p3377sf1f2")
    wild = custom_deal(Wilds.FLOWERS, dealt=dealt)
    assert refused(wild, 0, "discard", "f1") == "wild_tile"

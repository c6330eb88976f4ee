"""The starred fans of document 000 (``custom`` rule set): each with a hand that has it and a
near miss that does not, and MCR left exactly as it was."""

from __future__ import annotations

import re

import handgen
import pytest

from engine.errors import InvalidHand
from engine.fans import MCR_FANS, STARRED_FANS, Fan
from engine.notation import parse_hand
from engine.rules import CUSTOM, MCR, Wilds, custom_rules
from engine.scoring import Score, WinContext, check_situation, score
from engine.tiles import Wind

NO_WILDS = custom_rules(wilds=Wilds.NONE)


PLAIN_WIN = WinContext()


def fans_of(text: str, ctx: WinContext = PLAIN_WIN, rules: object = CUSTOM) -> dict[Fan, int]:
    result = score(parse_hand(text), ctx, rules)  # type: ignore[arg-type]
    return {fc.fan: fc.count for fc in result.fans}


def total(text: str, ctx: WinContext = PLAIN_WIN, rules: object = CUSTOM) -> int:
    return score(parse_hand(text), ctx, rules).total  # type: ignore[arg-type]


def test_the_fan_table() -> None:
    assert len(MCR_FANS) == 82 and len(STARRED_FANS) == 12
    assert list(Fan)[:82] == list(MCR_FANS)  # MCR ids and order unchanged
    assert {f.zh: f.points for f in STARRED_FANS} == {
        "天和": 168, "地和": 158, "人和": 108, "四方大发财": 168, "混杠": 88, "混四节": 6,
        "混三节": 4, "混四步": 4, "混三步": 2, "二五八将": 1, "幺九头": 1, "季花": 1,
    }  # fmt: skip
    assert Fan.by_name("混三步") is Fan.MIXED_SUIT_SHIFTED_CHOWS
    assert Fan.by_name("Mixed Shifted Chows") is Fan.MIXED_SHIFTED_CHOWS


PLAIN = "123m456p789s345s6p6p"  # 平和 门清 ... and a pair of 6p: no starred fan


@pytest.mark.parametrize(
    ("flag", "fan", "points"),
    [
        ("heavenly", Fan.HEAVENLY_HAND, 168),
        ("earthly", Fan.EARTHLY_HAND, 158),
        ("human", Fan.HUMAN_HAND, 108),
    ],
)
def test_heavenly_earthly_human(flag: str, fan: Fan, points: int) -> None:
    seat = Wind.EAST if flag == "heavenly" else Wind.SOUTH  # the dealer is East
    ctx = WinContext(self_drawn=flag == "heavenly", seat_wind=seat, **{flag: True})
    plain = WinContext(self_drawn=flag == "heavenly", seat_wind=seat)
    fans = fans_of(PLAIN, ctx)
    assert fans[fan] == 1
    # what the fan makes certain is not counted (ruling W12): 天和 was dealt concealed
    # (不求人), 地和 / 人和 claimed nothing (门前清)
    certain = {
        "heavenly": {Fan.FULLY_CONCEALED_HAND},
        "earthly": {Fan.CONCEALED_HAND},
        "human": {Fan.CONCEALED_HAND},
    }[flag]
    before = fans_of(PLAIN, plain)
    assert certain <= set(before) and not certain & set(fans)
    removed = sum(f.points * before[f] for f in certain)
    assert total(PLAIN, ctx) == total(PLAIN, plain) + points - removed
    assert fan not in fans_of(PLAIN, plain)  # near miss: the flag is not set
    assert fan not in fans_of(PLAIN, ctx, MCR)  # MCR never scores it
    assert total(PLAIN, ctx, MCR) == total(PLAIN, plain, MCR)


def test_only_one_of_heavenly_earthly_human() -> None:
    with pytest.raises(InvalidHand, match="at most one"):
        WinContext(heavenly=True, human=True)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"heavenly": True}, "heavenly is the dealer's win on its dealt tiles"),
        ({"heavenly": True, "self_drawn": True, "seat_wind": Wind.SOUTH}, "seat_wind S"),
        ({"heavenly": True, "self_drawn": True, "kong": True}, "kong=True"),
        ({"earthly": True, "seat_wind": Wind.EAST}, "earthly is a non-dealer's win"),
        ({"earthly": True, "seat_wind": Wind.SOUTH, "self_drawn": True}, "self_drawn=True"),
        ({"earthly": True, "seat_wind": Wind.NORTH, "kong": True}, "kong=True"),
        ({"human": True, "self_drawn": True}, "human is a non-dealer's win"),
    ],
)
def test_heavenly_earthly_human_only_where_they_can_happen(
    fields: dict[str, object], message: str
) -> None:
    """Rulings T3, W12: 天和 is the dealer's (East's) self-draw without a kong, 地和 a
    non-dealer's win on the dealer's discard, 人和 a non-dealer's win."""
    with pytest.raises(InvalidHand, match=re.escape(message)):
        WinContext(**fields)  # type: ignore[arg-type]


EXPOSED = "[123m,1]456p789s345s6p6p"  # PLAIN with its chow claimed
KONG = "[5555p]123m789s345s6p6p"  # a concealed kong


@pytest.mark.parametrize("rules", [CUSTOM, MCR], ids=["custom", "mcr"])
@pytest.mark.parametrize(
    ("hand", "fields", "message"),
    [
        (EXPOSED, {"heavenly": True, "self_drawn": True}, "heavenly is the dealer's win"),
        (KONG, {"heavenly": True, "self_drawn": True}, "got [5555p]"),
        (EXPOSED, {"earthly": True, "seat_wind": Wind.SOUTH}, "got [123m,1]"),
        (KONG, {"earthly": True, "seat_wind": Wind.WEST}, "earthly is a win on the dealer's"),
        (EXPOSED, {"human": True, "seat_wind": Wind.SOUTH}, "no exposed meld, got [123m,1]"),
        ("[555p,2]123m789s345s6p6p", {"human": True, "seat_wind": Wind.SOUTH, "self_drawn": True,
          "kong": True}, "no exposed meld, got [555p,2]"),
        (KONG, {"human": True, "seat_wind": Wind.SOUTH}, "self_drawn=False, kong=False"),
        (KONG, {"human": True, "seat_wind": Wind.SOUTH, "self_drawn": True}, "kong=False"),
        ("[5555p]**3m789s345s6p6p", {"heavenly": True, "self_drawn": True}, "got [5555p]"),
    ],
)  # fmt: skip
def test_no_heavenly_earthly_or_human_with_a_meld_that_cannot_be(
    hand: str, fields: dict[str, object], message: str, rules: object
) -> None:
    """Rulings T3, W12, for what ``WinContext`` cannot see: 天和 (the dealer's dealt tiles)
    and 地和 (before the winner's first turn) with no meld at all, a concealed kong included;
    人和 (before any claim) with no exposed meld, and with a concealed kong only self-drawn on
    its replacement. Refused where the hand is scored, under any rules: ``fan`` scored them."""
    ctx = WinContext(**fields)  # type: ignore[arg-type]
    parsed = parse_hand(hand)
    if parsed.wilds and rules is MCR:
        rules = CUSTOM
    with pytest.raises(InvalidHand, match=re.escape(message)):
        score(parsed, ctx, rules)  # type: ignore[arg-type]
    with pytest.raises(InvalidHand, match=re.escape(message)):
        check_situation(parsed, ctx)


def test_human_on_a_concealed_kongs_replacement_is_scored() -> None:
    """A non-dealer's concealed kong on its first turn, won on the replacement before any
    discard or claim (the table calls it 人和: ``test_custom_table``), and the same hands
    without a meld: scored."""
    ctx = WinContext(human=True, seat_wind=Wind.SOUTH, self_drawn=True, kong=True)
    assert fans_of(KONG, ctx)[Fan.HUMAN_HAND] == 1
    assert fans_of(KONG, ctx)[Fan.OUT_WITH_REPLACEMENT_TILE] == 1
    for fields in (
        {"heavenly": True, "self_drawn": True},
        {"earthly": True, "seat_wind": Wind.SOUTH},
        {"human": True, "seat_wind": Wind.SOUTH},
    ):
        assert fans_of(PLAIN, WinContext(**fields))  # type: ignore[arg-type]


def test_big_four_winds_and_green_dragon() -> None:
    fans = fans_of("EEESSSWWWNNNFF")
    assert fans[Fan.BIG_FOUR_WINDS_AND_GREEN_DRAGON] == 1
    # it takes the place of 大四喜 and does not count 字一色 (nor 碰碰和, the wind fans)
    for gone in (Fan.BIG_FOUR_WINDS, Fan.ALL_HONORS, Fan.ALL_PUNGS, Fan.BIG_THREE_WINDS,
                 Fan.SEAT_WIND, Fan.PREVALENT_WIND):  # fmt: skip
        assert gone not in fans
    # 168 + 四暗刻 64 + 单钓将 1
    assert total("EEESSSWWWNNNFF") == 233
    near = fans_of("EEESSSWWWNNNCC")  # a red-dragon pair: MCR's 大四喜 + 字一色
    assert Fan.BIG_FOUR_WINDS_AND_GREEN_DRAGON not in near
    assert near[Fan.BIG_FOUR_WINDS] == 1 and near[Fan.ALL_HONORS] == 1
    assert Fan.BIG_FOUR_WINDS_AND_GREEN_DRAGON not in fans_of("EEESSSWWWNNNFF", rules=MCR)


def test_mixed_suit_shifted_chows() -> None:
    fans = fans_of("123m234m345p777s9p9p")
    assert fans[Fan.MIXED_SUIT_SHIFTED_CHOWS] == 1
    assert Fan.MIXED_SUIT_SHIFTED_CHOWS not in fans_of("123m234m456p777s9p9p")  # 1 2 4
    assert Fan.MIXED_SUIT_SHIFTED_CHOWS not in fans_of("123m234m345p777s9p9p", rules=MCR)
    three_suits = fans_of("123m234p345s777s9p9p")  # three suits: MCR's 三色三步高
    assert three_suits[Fan.MIXED_SHIFTED_CHOWS] == 1
    assert Fan.MIXED_SUIT_SHIFTED_CHOWS not in three_suits
    one_suit = fans_of("123m234m345m777s9p9p")  # one suit: 一色三步高
    assert one_suit[Fan.PURE_SHIFTED_CHOWS] == 1
    assert Fan.MIXED_SUIT_SHIFTED_CHOWS not in one_suit


def test_four_mixed_suit_shifted_chows_excludes_the_three() -> None:
    fans = fans_of("123m234m345p456p9s9s")
    assert fans[Fan.FOUR_MIXED_SUIT_SHIFTED_CHOWS] == 1
    assert Fan.MIXED_SUIT_SHIFTED_CHOWS not in fans
    near = fans_of("123m234m345p567p9s9s")  # 1 2 3 5: only three of them
    assert Fan.FOUR_MIXED_SUIT_SHIFTED_CHOWS not in near
    assert near[Fan.MIXED_SUIT_SHIFTED_CHOWS] == 1
    # one suit for three of them: 一色三步高 (16) beats 混四步 (4)
    pure = fans_of("123m234m345m456p9s9s")
    assert pure[Fan.PURE_SHIFTED_CHOWS] == 1 and Fan.FOUR_MIXED_SUIT_SHIFTED_CHOWS not in pure


def test_the_highest_three_chow_fan_wins_over_mixed_suit_shifted() -> None:
    # 123m 234p 345s is 三色三步高 (6); 123m 234p 345p is 混三步 (2): the 6 counts, and the
    # fourth chow 345p combines once (喜相逢 with 345s)
    fans = fans_of("123m234p345s345p9s9s")
    assert fans[Fan.MIXED_SHIFTED_CHOWS] == 1
    assert Fan.MIXED_SUIT_SHIFTED_CHOWS not in fans
    assert fans[Fan.MIXED_DOUBLE_CHOW] == 1
    # only 1-fan pairs otherwise: 混三步 (2) + the fourth chow once (喜相逢 123m/123p) beats
    # the lone 喜相逢 of MCR
    fans = fans_of("123m234m345p123p9s9s")
    assert fans[Fan.MIXED_SUIT_SHIFTED_CHOWS] == 1 and fans[Fan.MIXED_DOUBLE_CHOW] == 1
    assert fans_of("123m234m345p123p9s9s", rules=MCR)[Fan.MIXED_DOUBLE_CHOW] == 1


def test_mixed_suit_shifted_pungs() -> None:
    fans = fans_of("111m222m333p456s9s9s")
    assert fans[Fan.MIXED_SUIT_SHIFTED_PUNGS] == 1
    near = fans_of("111m222p333s456s9s9s")  # three suits: 三色三节高
    assert near[Fan.MIXED_SHIFTED_PUNGS] == 1 and Fan.MIXED_SUIT_SHIFTED_PUNGS not in near
    assert Fan.MIXED_SUIT_SHIFTED_PUNGS not in fans_of("111m222m444p456s9s9s")


def test_four_mixed_suit_shifted_pungs() -> None:
    fans = fans_of("111m222m333p444p5s5s")
    assert fans[Fan.FOUR_MIXED_SUIT_SHIFTED_PUNGS] == 1
    assert Fan.MIXED_SUIT_SHIFTED_PUNGS not in fans
    near = fans_of("111m222m333p555p5s5s")
    assert Fan.FOUR_MIXED_SUIT_SHIFTED_PUNGS not in near
    assert near[Fan.MIXED_SUIT_SHIFTED_PUNGS] == 1
    pure = fans_of("111m222m333m444p5s5s")  # 一色三节高 (24) beats 混四节 (6)
    assert pure[Fan.PURE_SHIFTED_PUNGS] == 1 and Fan.FOUR_MIXED_SUIT_SHIFTED_PUNGS not in pure


@pytest.mark.parametrize(("pair", "fan"), [("2", Fan.PAIR_OF_2_5_OR_8), ("5", Fan.PAIR_OF_2_5_OR_8),
                                           ("8", Fan.PAIR_OF_2_5_OR_8), ("1", Fan.PAIR_OF_1_OR_9),
                                           ("9", Fan.PAIR_OF_1_OR_9)])  # fmt: skip
def test_pair_fans(pair: str, fan: Fan) -> None:
    hand = f"123m456p789s345s{pair}p{pair}p"
    assert fans_of(hand)[fan] == 1
    assert fan not in fans_of(hand, rules=MCR)
    assert total(hand) == total(hand, rules=MCR) + 1


@pytest.mark.parametrize("pair", ["3p3p", "6p6p", "7p7p", "EE", "CC"])
def test_pair_fans_near_miss(pair: str) -> None:
    fans = fans_of(f"123m456p789s345s{pair}")
    assert Fan.PAIR_OF_2_5_OR_8 not in fans and Fan.PAIR_OF_1_OR_9 not in fans


def test_pair_fans_in_knitted_straight_not_in_seven_pairs() -> None:
    assert fans_of("147m258p369s123m5s5s")[Fan.PAIR_OF_2_5_OR_8] == 1
    fans = fans_of("1122m3344p5566s7s7s")
    assert Fan.SEVEN_PAIRS in fans
    assert Fan.PAIR_OF_2_5_OR_8 not in fans and Fan.PAIR_OF_1_OR_9 not in fans


def test_pair_of_fives_of_terminal_chows_is_part_of_them() -> None:
    fans = fans_of("123m789m123s789s5m5m")
    assert Fan.THREE_SUITED_TERMINAL_CHOWS not in fans  # (pure terminal chows needs one suit)
    fans = fans_of("123m123m789m789m5m5m")
    assert fans[Fan.PURE_TERMINAL_CHOWS] == 1 and Fan.PAIR_OF_2_5_OR_8 not in fans
    fans = fans_of("123m789m123s789s5p5p")
    assert fans[Fan.THREE_SUITED_TERMINAL_CHOWS] == 1 and Fan.PAIR_OF_2_5_OR_8 not in fans


def test_seat_flower() -> None:
    ctx = WinContext(flowers=3, seat_flowers=2)
    result = score(parse_hand(PLAIN), ctx, CUSTOM)
    got = {fc.fan: fc.count for fc in result.fans}
    assert got[Fan.SEAT_FLOWER] == 2 and got[Fan.FLOWER_TILES] == 3
    assert result.total == score(parse_hand(PLAIN), WinContext(), CUSTOM).total + 5
    mcr = score(parse_hand(PLAIN), ctx, MCR)
    assert Fan.SEAT_FLOWER not in {fc.fan for fc in mcr.fans}
    near = {fc.fan for fc in score(parse_hand(PLAIN), WinContext(flowers=3), CUSTOM).fans}
    assert Fan.SEAT_FLOWER not in near


def test_seat_flowers_do_not_count_toward_the_minimum() -> None:
    eight = custom_rules(eight_fan=True, wilds=Wilds.NONE)
    hand = "123m567p678s345s6p6p"  # 门前清 2 + 平和 2 + 连六 1 + 坎张 1
    bare = score(parse_hand(hand), WinContext(), eight)
    assert bare.total == 6
    with_flowers = score(parse_hand(hand), WinContext(flowers=2, seat_flowers=2), eight)
    assert with_flowers.total == bare.total + 4
    assert not with_flowers.meets_minimum


def test_seat_flowers_are_checked() -> None:
    with pytest.raises(InvalidHand, match="seat_flowers"):
        WinContext(flowers=1, seat_flowers=2)
    with pytest.raises(InvalidHand, match="seat_flowers"):
        WinContext(flowers=5, seat_flowers=3)


def test_four_wilds() -> None:
    ctx = WinContext(self_drawn=True)
    four = fans_of("****56m456p789s11s", ctx)
    assert four[Fan.FOUR_WILDS] == 1
    three = fans_of("***456m456p789s11s", ctx)
    assert Fan.FOUR_WILDS not in three
    no_extra = custom_rules(wilds=Wilds.INDICATOR)
    assert no_extra.extra_fans


def _differences(mcr: Score, custom: Score) -> tuple[set[Fan], set[Fan]]:
    a = {(fc.fan, fc.count) for fc in mcr.fans}
    b = {(fc.fan, fc.count) for fc in custom.fans}
    return {f for f, _ in a - b}, {f for f, _ in b - a}


@pytest.mark.parametrize("form", sorted(handgen.FORMS))
def test_mcr_is_unaffected(form: str) -> None:
    """Under CUSTOM a hand scores as under MCR plus starred fans: when no starred fan counts the
    result is identical; otherwise the total is never lower (a starred family may replace MCR
    1-fan pairs of the same reading, 四方大发财 replaces 大四喜 and 字一色)."""
    starred_seen = 0
    for hand, ctx in handgen.generate(form, 150, seed=5):
        mcr = score(hand, ctx, MCR)
        custom = score(hand, ctx, NO_WILDS)
        starred = {fc.fan for fc in custom.fans if fc.fan.starred}
        if not starred:
            assert (custom.fans, custom.total) == (mcr.fans, mcr.total), hand
            continue
        starred_seen += 1
        assert custom.total >= mcr.total, hand
        lost, _ = _differences(mcr, custom)
        assert all(not fan.starred for fan in lost)
        # the starred fans the pair gives are added on top of MCR's reading
        if starred <= {Fan.PAIR_OF_2_5_OR_8, Fan.PAIR_OF_1_OR_9} and not lost:
            assert custom.total == mcr.total + len(starred)
    if form in ("regular", "patterns", "plain"):
        assert starred_seen > 0


def test_seat_wind_context_still_counts_under_custom() -> None:
    ctx = WinContext(seat_wind=Wind.SOUTH, round_wind=Wind.SOUTH)
    fans = fans_of("SSS123m456p789s5s5s", ctx, NO_WILDS)
    assert fans[Fan.SEAT_WIND] == 1 and fans[Fan.PREVALENT_WIND] == 1


# -------------------------------------- the five points of custom scoring ---
# The five points of the custom scoring (docs/rulings.md, W section): W9, W11, W12.

_DRAWN = WinContext(self_drawn=True)


@pytest.mark.parametrize(
    ("text", "ctx", "expected", "counted", "not_counted"),
    [
        # 1. a fan another fan makes certain is not counted
        # 混四节 (444m 555p 666m 777m) holds four pungs: no 碰碰和. 混四节 6 断幺 2 缺一门 1
        ("[444m,3][555p,3]66777m77p6m", PLAIN_WIN, 9,
         {Fan.FOUR_MIXED_SUIT_SHIFTED_PUNGS}, {Fan.ALL_PUNGS}),
        # 全带五 (345m 456p 555s 567s 55m) has a pair of fives: no 二五八将
        ("345m456p567s555s5m5m", PLAIN_WIN, 26, {Fan.ALL_FIVE}, {Fan.PAIR_OF_2_5_OR_8}),
        # 地和: no 门前清. 三暗刻 16 碰碰和 6 幺九刻 1 无字 1 地和 158 混三节 4 幺九头 1
        ("55566m777999p99s6m", WinContext(earthly=True, seat_wind=Wind.SOUTH), 187,
         {Fan.EARTHLY_HAND}, {Fan.CONCEALED_HAND}),
        # a self-drawn 人和 counts 自摸, not 不求人: 花龙 8 平和 2 自摸 1 人和 108
        ("123m456p789s345s6p6p", WinContext(self_drawn=True, human=True, seat_wind=Wind.WEST),
         119,
         {Fan.HUMAN_HAND, Fan.SELF_DRAWN}, {Fan.FULLY_CONCEALED_HAND}),
        # 2. 天和 waited on nothing, and is neither 不求人 nor 自摸
        # 清龙 16 平和 2 缺一门 1 天和 168 幺九头 1 (no 边张 on 3s)
        ("99m12456677889s3s", WinContext(self_drawn=True, heavenly=True), 188,
         {Fan.HEAVENLY_HAND}, {Fan.EDGE_WAIT, Fan.FULLY_CONCEALED_HAND, Fan.SELF_DRAWN}),
        # no 单钓将 on E either: 花龙 8 幺九刻 1 天和 168
        ("123m456p789s111sEE", WinContext(self_drawn=True, heavenly=True), 177,
         {Fan.HEAVENLY_HAND}, {Fan.SINGLE_WAIT, Fan.FULLY_CONCEALED_HAND}),
        # 3. a special form with a pair (将) scores its pair fan
        # 十三幺 with 11m: 88 + 幺九头 1
        ("99m19p19sESWNCFP1m", PLAIN_WIN, 89, {Fan.PAIR_OF_1_OR_9}, set()),
        # with a pair of E: an honor pair, no pair fan
        ("EE19m19p19sSWNCFP", PLAIN_WIN, 88, set(), {Fan.PAIR_OF_1_OR_9}),
        # Nine Gates on 6m reads 11 123 456 678 999: 九莲宝灯 88 连六 1 幺九头 1
        ("1112345678999m6m", PLAIN_WIN, 90, {Fan.NINE_GATES, Fan.PAIR_OF_1_OR_9}, set()),
        # on 5m it reads 111 234 55 678 999: 88 双暗刻 2 幺九刻 1 二五八将 1
        ("1112345678999m5m", PLAIN_WIN, 92, {Fan.NINE_GATES, Fan.PAIR_OF_2_5_OR_8}, set()),
    ],
)  # fmt: skip
def test_open_points_fixed(
    text: str, ctx: WinContext, expected: int, counted: set[Fan], not_counted: set[Fan]
) -> None:
    result = score(parse_hand(text), ctx, NO_WILDS)
    fans = {fc.fan for fc in result.fans}
    assert counted <= fans and not fans & not_counted, result.fans
    assert result.total == expected, result.fans
    assert score(parse_hand(text), ctx, CUSTOM).total == expected  # wild tiles allowed, none held
    assert not {fan for fan in score(parse_hand(text), ctx, MCR).fans if fan.fan.starred}


def test_seven_pairs_have_no_pair_fan_even_under_heavenly() -> None:
    ctx = WinContext(self_drawn=True, heavenly=True)
    fans = fans_of("1199m1199p5588s7s7s", ctx)
    assert Fan.SEVEN_PAIRS in fans and Fan.HEAVENLY_HAND in fans
    assert Fan.PAIR_OF_1_OR_9 not in fans and Fan.PAIR_OF_2_5_OR_8 not in fans
    # 七对 24 天和 168 (no 自摸; the 无字 of the tiles)
    assert total("1199m1199p5588s7s7s", ctx) == 24 + 168 + 1

"""Rule sets: the custom options, base points and minimum, presets from data."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.rules import (
    CUSTOM,
    MCR,
    RulesError,
    RuleSet,
    Wilds,
    custom_rules,
    rule_set_from_dict,
    rule_set_from_mapping,
)


def test_mcr_is_eight_fan_eight_points_no_wilds_no_repeat() -> None:
    assert (MCR.min_fan, MCR.base_points, MCR.wilds) == (8, 8, Wilds.NONE)
    assert not (MCR.extra_fans or MCR.dealer_repeat or MCR.dealer_doubles)


def test_custom_defaults_follow_document_000() -> None:
    # 默认有财神，没有底分 ... 庄家默认连庄，赢输时自己的番分数翻倍计算
    assert CUSTOM.wilds is Wilds.INDICATOR
    assert (CUSTOM.base_points, CUSTOM.min_fan) == (0, 0)
    assert CUSTOM.extra_fans and CUSTOM.dealer_repeat and CUSTOM.dealer_doubles
    assert CUSTOM.repeat_cap == 8


@pytest.mark.parametrize(
    ("wilds", "eight_fan", "base", "minimum"),
    [
        (Wilds.INDICATOR, False, 0, 0),  # 有财神，没有底分
        (Wilds.FLOWERS, False, 0, 0),
        (Wilds.NONE, False, 2, 0),  # 无财神，则有2分底分
        (Wilds.INDICATOR, True, 8, 8),  # 8分起和分，则有8分底分
        (Wilds.NONE, True, 8, 8),
    ],
)
def test_base_points_and_minimum(wilds: Wilds, eight_fan: bool, base: int, minimum: int) -> None:
    rules = custom_rules(wilds=wilds, eight_fan=eight_fan)
    assert (rules.base_points, rules.min_fan) == (base, minimum)


def test_without_dealer_repeat_nothing_doubles_and_there_is_no_cap() -> None:
    rules = custom_rules(dealer_repeat=False)
    assert not rules.dealer_repeat and not rules.dealer_doubles and rules.repeat_cap == 0


def test_a_preset_table_builds_the_rule_set() -> None:
    rules = rule_set_from_mapping(
        "club", {"variant": "custom", "wilds": "after", "eight_fan": True, "repeat_cap": 3}
    )
    assert rules == custom_rules("club", wilds=Wilds.AFTER, eight_fan=True, repeat_cap=3)
    assert rule_set_from_mapping("plain", {"variant": "mcr"}) == RuleSet(name="plain")


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("x", {}, "variant must be one of mcr, custom, got None"),
        ("x", {"variant": "riichi"}, "variant must be one of mcr, custom, got 'riichi'"),
        ("x", {"variant": "mcr", "wilds": "none"}, "unknown option 'wilds' for variant 'mcr'"),
        ("x", {"variant": "custom", "wild": "none"}, "unknown option 'wild'"),
        ("x", {"variant": "custom", "wilds": "jokers"}, "wilds must be one of none, flowers"),
        ("x", {"variant": "custom", "eight_fan": "yes"}, "eight_fan must be true or false"),
        ("x", {"variant": "custom", "dealer_repeat": 1}, "dealer_repeat must be true or false"),
        ("x", {"variant": "custom", "repeat_cap": 0}, "repeat_cap must be a whole number 1..64"),
        ("x", {"variant": "custom", "repeat_cap": 65}, "repeat_cap must be a whole number"),
        ("x", {"variant": "custom", "repeat_cap": True}, "repeat_cap must be a whole number"),
        ("x", {"variant": "custom", "repeat_cap": 2.5}, "repeat_cap must be a whole number"),
        ("bad name", {"variant": "mcr"}, "a preset name is 1..32 letters"),
        ("", {"variant": "mcr"}, "a preset name is 1..32 letters"),
        ("y" * 33, {"variant": "mcr"}, "a preset name is 1..32 letters"),
    ],
)
def test_bad_presets_say_what_and_where(name: str, data: dict[str, object], message: str) -> None:
    with pytest.raises(RulesError, match=r"^rules\.toml: ") as info:
        rule_set_from_mapping(name, data, "rules.toml")
    assert message in str(info.value)


_rule_sets = st.builds(
    custom_rules,
    st.sampled_from(["custom", "a", "club-8"]),
    wilds=st.sampled_from(list(Wilds)),
    eight_fan=st.booleans(),
    dealer_repeat=st.booleans(),
    repeat_cap=st.integers(1, 64),
)


@given(st.one_of(st.just(MCR), _rule_sets))
def test_stored_rules_round_trip(rules: RuleSet) -> None:
    assert rule_set_from_dict(rules.to_dict()) == rules


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"wilds": "jokers"}, "unknown wilds 'jokers'"),
        ({"min_fan": -1}, "min_fan must be 0..88"),
        ({"base_points": "8"}, "base_points must be int"),
        ({"extra_fans": 1}, "extra_fans must be bool"),
        ({"repeat_cap": True}, "repeat_cap must be int"),
        ({"surprise": 1}, "unknown ['surprise']"),
    ],
)
def test_corrupt_stored_rules_are_refused(change: dict[str, object], message: str) -> None:
    data = {**CUSTOM.to_dict(), **change}
    with pytest.raises(RulesError) as info:
        rule_set_from_dict(data)
    assert message in str(info.value)


def test_stored_rules_missing_an_option_are_refused() -> None:
    data = CUSTOM.to_dict()
    del data["wilds"]
    with pytest.raises(RulesError, match=r"missing \['wilds'\]"):
        rule_set_from_dict(data)

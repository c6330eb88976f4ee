"""Rule sets: what varies between the rule variants the server hosts.

A ``RuleSet`` is passed to the calculator, the table engine and the match; the
code never tests a variant by name, only these options. ``MCR`` is Chinese
Official Mahjong as ``docs/rules.md`` fixes it; ``CUSTOM`` is the
``custom`` rule set of document 000 with the document's defaults.

Presets are data: ``config/rules.toml`` names option sets, and
``rule_set_from_mapping`` checks one (the server reads the file; the engine
does no I/O).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from engine.copyable import copyable


class RulesError(ValueError):
    """A rule preset with a missing, unknown or out-of-range option."""


class Wilds(StrEnum):
    """Which tiles are wild (财神, 混)."""

    NONE = "none"  # no wild tiles
    FLOWERS = "flowers"  # the eight flowers are wild (and score nothing)
    INDICATOR = "indicator"  # 翻混: the kind of the tile turned up after the deal
    BEFORE = "before"  # 上滚混: the kind before the indicator (1 precedes 2, 9 precedes 1)
    AFTER = "after"  # 下滚混: the kind after the indicator (9 is followed by 1)

    @property
    def uses_indicator(self) -> bool:
        return self in (Wilds.INDICATOR, Wilds.BEFORE, Wilds.AFTER)


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The parameters of a rule variant."""

    name: str
    min_fan: int = 8  # 起和番: fan needed to win, flowers not counted
    base_points: int = 8  # 底分 every non-winner pays on top of the fan
    wilds: Wilds = Wilds.NONE
    extra_fans: bool = False  # the fans marked * in document 000 (天和, 混三步, 季花, ...)
    dealer_repeat: bool = False  # 连庄: the dealer keeps the deal while winning ...
    dealer_doubles: bool = False  # ... and the dealer's wins and losses count double
    repeat_cap: int = 0  # with dealer_repeat: most repeats of one dealer in a row (1..64)

    @property
    def has_wilds(self) -> bool:
        return self.wilds is not Wilds.NONE

    def to_dict(self) -> dict[str, Any]:
        """The options as JSON (views, match logs)."""
        return {
            "name": self.name,
            "min_fan": self.min_fan,
            "base_points": self.base_points,
            "wilds": self.wilds.value,
            "extra_fans": self.extra_fans,
            "dealer_repeat": self.dealer_repeat,
            "dealer_doubles": self.dealer_doubles,
            "repeat_cap": self.repeat_cap,
        }


MCR = RuleSet(name="mcr")


def custom_rules(
    name: str = "custom",
    *,
    wilds: Wilds = Wilds.INDICATOR,
    eight_fan: bool = False,
    dealer_repeat: bool = True,
    repeat_cap: int = 8,
) -> RuleSet:
    """The ``custom`` rule set of document 000 with the given options.

    Base points: 8 with '8 fan to win' (and then the 8-fan minimum), otherwise
    0 with wild tiles and 2 without; no minimum but a complete hand otherwise.
    """
    if eight_fan:
        base, minimum = 8, 8
    else:
        base, minimum = (0 if wilds is not Wilds.NONE else 2), 0
    return RuleSet(
        name=name,
        min_fan=minimum,
        base_points=base,
        wilds=wilds,
        extra_fans=True,
        dealer_repeat=dealer_repeat,
        dealer_doubles=dealer_repeat,
        repeat_cap=repeat_cap if dealer_repeat else 0,
    )


CUSTOM = custom_rules()

# The built-in presets; ``config/rules.toml`` can add and redefine others.
RULE_SETS: dict[str, RuleSet] = {MCR.name: MCR, CUSTOM.name: CUSTOM}

_VARIANTS = ("mcr", "custom")
_KEYS = {
    "mcr": {"variant"},
    "custom": {"variant", "wilds", "eight_fan", "dealer_repeat", "repeat_cap"},
}
MAX_REPEAT_CAP = 64
PRESET_NAME_LIMIT = 32


def rule_set_from_mapping(name: str, data: Mapping[str, Any], where: str = "") -> RuleSet:
    """Build a preset from its TOML table, refusing anything unknown or out of range.

    Errors name the preset, the key and what was expected:
    ``config/rules.toml: [custom-8] wilds must be one of none, flowers, ...``.
    """
    label = f"{where + ': ' if where else ''}[{name}]"
    if not name or len(name) > PRESET_NAME_LIMIT or not all(c.isalnum() or c in "-_" for c in name):
        raise RulesError(
            f"{label} a preset name is 1..{PRESET_NAME_LIMIT} letters, digits, '-' or '_'"
        )
    if not isinstance(data, Mapping):
        raise RulesError(f"{label} must be a table of options")
    variant = data.get("variant")
    if variant not in _VARIANTS:
        raise RulesError(f"{label} variant must be one of {', '.join(_VARIANTS)}, got {variant!r}")
    unknown = sorted(set(data) - _KEYS[variant])
    if unknown:
        raise RulesError(
            f"{label} unknown option {unknown[0]!r} for variant {variant!r}; "
            f"known: {', '.join(sorted(_KEYS[variant]))}"
        )
    if variant == "mcr":
        return RuleSet(name=name)

    def flag(key: str, default: bool) -> bool:
        value = data.get(key, default)
        if not isinstance(value, bool):
            raise RulesError(f"{label} {key} must be true or false, got {value!r}")
        return value

    wilds_value = data.get("wilds", Wilds.INDICATOR.value)
    try:
        wilds = Wilds(wilds_value)
    except ValueError:
        choices = ", ".join(w.value for w in Wilds)
        raise RulesError(f"{label} wilds must be one of {choices}, got {wilds_value!r}") from None
    cap = data.get("repeat_cap", 8)
    if isinstance(cap, bool) or not isinstance(cap, int) or not 1 <= cap <= MAX_REPEAT_CAP:
        raise RulesError(
            f"{label} repeat_cap must be a whole number 1..{MAX_REPEAT_CAP}, got {cap!r}"
        )
    return custom_rules(
        name,
        wilds=wilds,
        eight_fan=flag("eight_fan", False),
        dealer_repeat=flag("dealer_repeat", True),
        repeat_cap=cap,
    )


_OPTION_TYPES: dict[str, type] = {
    "name": str,
    "min_fan": int,
    "base_points": int,
    "wilds": str,
    "extra_fans": bool,
    "dealer_repeat": bool,
    "dealer_doubles": bool,
    "repeat_cap": int,
}


def rule_set_from_dict(data: Mapping[str, Any]) -> RuleSet:
    """The inverse of ``RuleSet.to_dict``: a stored rule set (match logs, the database).

    Stored options win over a preset of the same name, so that a match is
    replayed under the rules it was played with even if the preset changed.
    """
    if not isinstance(data, Mapping):
        raise RulesError(f"stored rules must be an object, got {type(data).__name__}")
    missing = sorted(set(_OPTION_TYPES) - set(data))
    unknown = sorted(set(data) - set(_OPTION_TYPES))
    if missing or unknown:
        raise RulesError(
            f"stored rules: missing {missing or 'nothing'}, unknown {unknown or 'nothing'}"
        )
    for key, kind in _OPTION_TYPES.items():
        value = data[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise RulesError(f"stored rules: {key} must be {kind.__name__}, got {value!r}")
    try:
        wilds = Wilds(data["wilds"])
    except ValueError:
        raise RulesError(f"stored rules: unknown wilds {data['wilds']!r}") from None
    for key, top in (("min_fan", 88), ("base_points", 100), ("repeat_cap", MAX_REPEAT_CAP)):
        if not 0 <= data[key] <= top:
            raise RulesError(f"stored rules: {key} must be 0..{top}, got {data[key]!r}")
    return RuleSet(
        name=data["name"],
        min_fan=data["min_fan"],
        base_points=data["base_points"],
        wilds=wilds,
        extra_fans=data["extra_fans"],
        dealer_repeat=data["dealer_repeat"],
        dealer_doubles=data["dealer_doubles"],
        repeat_cap=data["repeat_cap"],
    )


copyable(RuleSet)

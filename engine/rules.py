"""Rule sets: what varies between the rule variants the server hosts.

A ``RuleSet`` is passed to the calculator, the table engine and the match; the
code never tests a variant by name. ``MCR`` is Chinese Official Mahjong as
``shared/rules/README.md`` fixes it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The parameters of a rule variant."""

    name: str
    min_fan: int = 8  # 起和番: fan needed to win, flowers not counted
    base_points: int = 8  # 底分 every non-winner pays on top of the fan


MCR = RuleSet(name="mcr")

RULE_SETS = {MCR.name: MCR}

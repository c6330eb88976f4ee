"""How the strong bot values each choice of a decision: what a review of a player's match
(``engine.review``) compares the action taken with.

``judge(view)`` gives every legal action of ``view`` with a value on one scale (``SCALE``;
higher is better for the seat), best first: the first is the action the strong bot plays.

Placeholder until the strong bot lands (issue 24): the value is 1 for the action the
``strong`` bot chooses and 0 for every other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from engine.actions import Action
from engine.bots import make_bot
from engine.view import View

# What a value means, for people: a review shows it beside each decision.
SCALE: Final = "bot's preference (placeholder)"


@dataclass(frozen=True, slots=True)
class Judged:
    """One legal action and its value on ``SCALE``."""

    action: Action
    value: float


def judge(view: View) -> list[Judged]:
    """Every legal action of ``view`` with its value, best first (the strong bot's choice)."""
    chosen = make_bot("strong").choose(view)
    rest = [Judged(a, 0.0) for a in view.legal if a != chosen]
    return [Judged(chosen, 1.0), *rest]

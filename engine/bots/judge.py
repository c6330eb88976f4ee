"""How the strong bot values each choice of a decision: what a review of a player's match
(``engine.review``) compares the action taken with.

``judge(view)`` gives every legal action of ``view`` with a value on one scale (``SCALE``;
higher is better for the seat), best first: the first is the action the strong bot plays
(``StrongBot.weigh``). The value is the bot's estimate of the points the action is worth
for the hand: its chance to win after it times what a win brings, less its chance to feed
an opponent's win times what dealing in costs (``engine.bots.strong``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from engine.actions import Action
from engine.bots.strong import StrongBot
from engine.view import View

# What a value means, for people: a review shows it beside each decision.
SCALE: Final = "expected points this hand (strong bot's estimate)"


@dataclass(frozen=True, slots=True)
class Judged:
    """One legal action and its value on ``SCALE``."""

    action: Action
    value: float


def judge(view: View) -> list[Judged]:
    """Every legal action of ``view`` with its value, best first (the strong bot's choice)."""
    return [Judged(action, value) for action, value in StrongBot().weigh(view)]

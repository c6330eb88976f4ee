"""``FastBot``: the cheapest legal player, for load tests and quick simulations.

It wins whenever the table offers a win and otherwise plays the safe move the table plays
for a player who does not answer (``engine.bots.safe``): it passes on every claim and on
robbing a kong, and discards the tile it drew (after a claim, the first legal discard). It
never reads the hand, so it plays the same under every rule set; under an 8-fan minimum it
almost never wins.
"""

from __future__ import annotations

from engine.actions import Action, ActionKind
from engine.bots.safe import safe_action
from engine.errors import MahjongError
from engine.view import View


class FastBot:
    """Cheap and simple, for load tests: wins when it can, else ``safe_action`` (passes on
    every claim, discards the tile it drew; after a claim, the first legal discard)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def choose(self, view: View) -> Action:
        legal = view.legal
        if not legal:
            raise MahjongError("the bot has nothing to choose from: view.legal is empty")
        for action in legal:
            if action.kind is ActionKind.WIN:
                return action
        return safe_action(view)

"""``FastBot``: the cheapest legal player, for load tests and quick simulations.

It wins whenever the table offers a win, passes on every claim and on robbing a kong, and
discards the tile it drew (after a claim, the first legal discard). It never reads the hand,
so it plays the same under every rule set; under an 8-fan minimum it almost never wins.
"""

from __future__ import annotations

from engine.actions import PASS, Action, ActionKind
from engine.errors import MahjongError
from engine.view import Phase, View


class FastBot:
    """Cheap and simple, for load tests: wins when it can, passes on every claim, discards
    the tile it drew (after a claim, the first legal discard)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def choose(self, view: View) -> Action:
        legal = view.legal
        if not legal:
            raise MahjongError("the bot has nothing to choose from: view.legal is empty")
        first_discard: Action | None = None
        for action in legal:
            kind = action.kind
            if kind is ActionKind.WIN:
                return action
            if kind is ActionKind.DISCARD:
                if action.tile == view.drawn:
                    return action
                if first_discard is None:
                    first_discard = action
        if view.phase in (Phase.CLAIM, Phase.ROB):
            return PASS
        return first_discard if first_discard is not None else legal[0]

"""``DefaultBot``: the bot that plays to win under the rules of its view.

It reads the rules off each view (``View.rules``) and plays by one of two strategies:

- with a fan minimum (起和番, ``rules.min_fan``: 8 in MCR) and no wild tiles, by plans
  (``engine.bots.plan_play``): it steers for a hand that reaches the minimum;
- with wild tiles (财神), or with no minimum (``min_fan`` 0: any complete hand wins), for
  speed (``engine.bots.speed_play``): the quickest complete hand.

Under both it declares every win the table offers (the table offers one only when the hand
reaches the minimum), passes when its only other choice is to rob a kong it cannot win on,
and takes a lone legal action as it is.
"""

from __future__ import annotations

from engine.actions import PASS, Action, ActionKind
from engine.bots.plan_play import PlanPlay
from engine.bots.reading import HandScope
from engine.bots.speed_play import SpeedPlay
from engine.errors import MahjongError
from engine.view import Phase, View


class DefaultBot:
    """Plays for a hand that wins under the view's rules: by plans, tile efficiency and
    scored waits where there is a fan minimum, for speed where wild tiles or no minimum
    make any complete hand likely to win (module docs)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed  # unused: the bot needs no randomness
        self._plans = PlanPlay()
        self._speed = SpeedPlay()
        self._scope = HandScope(self._plans, self._speed)

    def choose(self, view: View) -> Action:
        self._scope.see(view)
        legal = view.legal
        if not legal:
            raise MahjongError("the bot has nothing to choose from: view.legal is empty")
        for action in legal:
            if action.kind is ActionKind.WIN:
                return action
        if len(legal) == 1:
            return legal[0]
        if view.phase is Phase.ROB:
            return PASS
        rules = view.rules
        if rules.has_wilds or rules.min_fan <= 0:  # wild tiles, or any complete hand wins
            return self._speed.choose(view)
        return self._plans.choose(view)

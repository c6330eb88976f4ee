"""``safe_action``: the one move played for a player who does not answer.

The server's table plays it for a present player whose clock ran out (and when the bot
standing in for an absent one fails), the Python client sends it when its bot fails or an
action is refused, and ``FastBot`` plays it whenever it cannot win. One function, so all
three agree on what "safe" means:

- pass when passing is legal (a claim or a robbing answer): never claim, never win for
  someone who did not ask to;
- else discard the tile just drawn, as a player who looked away would;
- else the first legal discard (after a claim nothing was drawn; a wild tile just drawn may
  not be discarded), so that a turn never declares a kong or a win on its own;
- else the first legal action (a turn always has a discard; this is only a floor).

It reads nothing but the view (``view.legal``, ``view.drawn``): pure, the same view always
gets the same move.
"""

from __future__ import annotations

from engine.actions import PASS, Action, ActionKind
from engine.errors import MahjongError
from engine.view import View


def safe_action(view: View) -> Action:
    """The move played for ``view.viewer`` when it does not choose one (see the module).

    Raises ``MahjongError`` when the viewer may do nothing (``view.legal`` empty)."""
    legal = view.legal
    if not legal:
        raise MahjongError("nothing to choose from: view.legal is empty")
    if PASS in legal:
        return PASS
    drawn = view.drawn
    first_discard: Action | None = None
    for action in legal:
        if action.kind is ActionKind.DISCARD:
            if action.tile == drawn:
                return action
            if first_discard is None:
                first_discard = action
    return first_discard if first_discard is not None else legal[0]

"""Bots (机器人): players that choose an action from what one seat may see.

A bot gets a ``View`` (``HandState.view(player)``) and nothing else, and returns one of
``view.legal``. Bots are pure: no I/O, no clock, no randomness but a seeded one (``easy``'s
slips), and the same view always gets the same action. ``DefaultBot`` keeps memos, but only
of functions of their keys (a hand, a seat), so they change its speed and never its play; a
fresh bot given any view of a game answers as the bot that played it. A bot reads the rules
it plays by off each view (``View.rules``): the fan minimum (起和番) and the wild tiles (财神)
are never assumed.

The registry (``BOTS``, ``make_bot``) names the bots; ``LEVELS`` are the ones offered to
players, weakest first:

- ``easy``, ``normal``, ``strong``: the levels (docs/bots.md says how each plays).
  ``normal`` is ``DefaultBot`` (``engine.bots.default``): with a fan minimum and no wild
  tiles, plays by plans for a hand that reaches the minimum; with wild tiles or no minimum,
  for the quickest complete hand. ``strong`` is ``StrongBot`` (``engine.bots.strong``):
  plays for the same hands and weighs each discard's danger, pushing or folding. ``easy``
  is ``EasyBot`` (``engine.bots.easy``): ``normal`` with a beginner's greedy pungs and
  seeded slips, and no defence.
- ``default``: the name ``normal`` had before there were levels; still accepted (old logs,
  old clients) and plays as ``normal``.
- ``fast`` (``engine.bots.fast``): for load tests only, never offered to players. Wins when
  it can, never claims, discards the tile it drew.

The package, room by room:

- ``default``: ``DefaultBot``, which picks its strategy from the rules;
- ``plan_play``: the plan strategy: discards, claims and kongs weighed by plans and by
  scored waits;
- ``plans``: the catalogue of plans (目标番种), the kinds of hand worth 8 fan it steers for;
- ``plan_shanten``: how far a hand is from each plan (shanten per plan), and the scan that
  finds the close ones;
- ``speed_play``: the speed strategy (wild tiles, no minimum);
- ``strong``: ``StrongBot``, which values every action in expected points;
- ``danger``: reading danger from a view (the order of discards, tiles let pass, each
  opponent's pace and suit);
- ``judge``: the strong bot's values, for a review of a player's decisions;
- ``easy``: ``EasyBot``;
- ``reading``: what both strategies read off a view: the seat, unseen tiles, which tile
  to keep;
- ``parts``: the count tables of ``engine.shanten`` read one suit at a time, and tile masks;
- ``fast``: ``FastBot``;
- ``safe``: ``safe_action``, the move played for a player who does not answer (the server's
  table, the Python client and ``FastBot`` play it).

Speed matters (``guobiao simulate`` plays thousands of hands): each module's docstring says
what it caches and why.
"""

from __future__ import annotations

from typing import Final, Protocol

from engine.actions import Action
from engine.bots.default import DefaultBot
from engine.bots.easy import EasyBot
from engine.bots.fast import FastBot
from engine.bots.safe import safe_action
from engine.bots.strong import StrongBot
from engine.view import View

__all__ = [
    "BOTS",
    "LEVELS",
    "SEATLESS",
    "STRONGEST",
    "Bot",
    "DefaultBot",
    "FastBot",
    "make_bot",
    "safe_action",
]


class Bot(Protocol):
    """A player: ``choose`` returns one of ``view.legal``."""

    def __init__(self, seed: int = 0) -> None: ...

    def choose(self, view: View) -> Action: ...


BOTS: Final[dict[str, type[Bot]]] = {
    "easy": EasyBot,
    "normal": DefaultBot,
    "strong": StrongBot,
    "default": DefaultBot,  # the old name of ``normal``
    "fast": FastBot,
}

# The bots that read nothing of a view but ``legal`` and ``drawn`` (``FastBot``: a win, else
# ``safe_action``): a client may leave its views' seats unfollowed for them (``guobiao
# loadtest``'s connections, ``server.client``'s ``follow_seats``).
SEATLESS: Final = frozenset({"fast"})

# The bots offered to players, weakest first; the last is the strongest.
LEVELS: Final = ("easy", "normal", "strong")
STRONGEST: Final = LEVELS[-1]


def make_bot(name: str, seed: int = 0) -> Bot:
    """A bot by its registry name (``BOTS``); unknown names raise ``ValueError``. A bot
    reads the rules it plays by off each view (``View.rules``)."""
    try:
        cls = BOTS[name]
    except KeyError:
        known = ", ".join(sorted(BOTS))
        raise ValueError(f"unknown bot {name!r}: expected one of {known}") from None
    return cls(seed)

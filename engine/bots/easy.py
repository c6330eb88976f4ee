"""``EasyBot``: a believable beginner.

It plays as ``normal`` (``DefaultBot``) most of the time, so it wins hands, and plays as a
beginner does the rest:

- it loves a pung: it claims every pung it is offered while its hand has no set yet
  showing, whether or not the pung serves a hand that reaches the fan minimum;
- it slips: on about one turn in ``SLIP_EVERY`` it gives up the tile that looks least
  useful at a glance (a lone honor, a terminal, a tile without neighbours: ``keep_score``)
  instead of the one that keeps the best plan or wait;
- it never reads danger: it discards whatever suits its hand.

Its slips are seeded: drawn from the bot's ``seed`` and the view (the wall left, the tiles
held), so the same bot given the same view always plays the same, and there is no clock.
"""

from __future__ import annotations

from typing import Final

from engine.actions import PUNG, Action, ActionKind
from engine.bots.default import DefaultBot
from engine.bots.reading import Seat, discard, keep_score, own_seat
from engine.tiles import N_KINDS
from engine.view import Phase, View

SLIP_EVERY: Final = 4  # about one turn in this many is a slip
_MASK: Final = (1 << 64) - 1


def _mix(value: int) -> int:
    """A 64-bit hash of ``value`` (SplitMix64's finaliser): a seeded coin for each view."""
    z = (value + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


class EasyBot:
    """``normal`` with a beginner's habits (module docs)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self._normal = DefaultBot(seed)

    def choose(self, view: View) -> Action:
        legal = view.legal
        chosen = self._normal.choose(view)
        if chosen.kind is ActionKind.WIN or len(legal) == 1:
            return chosen
        me, concealed = own_seat(view)
        if view.phase is Phase.CLAIM:
            if PUNG in legal and not me.melds:
                return PUNG
            return chosen
        if chosen.kind is not ActionKind.DISCARD or not self._slips(view, concealed):
            return chosen
        counts = [0] * N_KINDS
        for t in concealed:
            if t < N_KINDS:
                counts[t] += 1
        seat = Seat(me.melds, me.wind, view.round_wind, view.rules)
        tiles = {a.tile for a in legal if a.kind is ActionKind.DISCARD and a.tile is not None}
        glance = [(keep_score(counts, t, seat), t) for t in tiles if t < N_KINDS and counts[t]]
        if not glance:
            return chosen
        return discard(min(glance)[1])

    def _slips(self, view: View, concealed: tuple[int, ...]) -> bool:
        """The seeded coin of this turn: the bot's seed, the wall left and the tiles held."""
        value = self.seed * 1_000_003 + view.wall_remaining
        for t in concealed:
            value = value * 37 + t
        return _mix(value & _MASK) % SLIP_EVERY == 0

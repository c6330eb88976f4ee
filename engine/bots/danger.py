"""Reading danger (危险度) from a view: how likely each discard is to feed an opponent's win.

What one seat may see is enough to read a lot (``read_danger``):

- the order of the discards (``discard_order``), rebuilt from the rivers and the claims: turns
  go round from the dealer, and a claimed tile passes the turn to the seat whose meld took it;
- which tiles are safe against an opponent (``Threat.passed``): MCR has no furiten, so a tile
  an opponent discarded is not safe against it; but a tile anyone discarded after the
  opponent's last own discard, and that it let pass, is: its hand has not changed since, and
  under MCR there is no reason not to win on a tile that reaches the minimum;
- how likely an opponent is to be ready (``READY``): by its exposed sets and how long it has
  been discarding, measured on ``normal``'s self-play (3,000 hands);
- where its waits may lie: the middle of a suit more often than its ends, an honor rarely
  (its copies are counted: with none unseen nobody can wait on it, with one only a single
  wait can), and hardly ever once it shows a set; a tile it discarded itself seldom (a
  hand rarely comes back to a tile it let go); a tile whose shapes are all blocked (every
  copy of the neighbours a wait would need is seen) is safer; against three or four sets
  every suited tile is more dangerous (a short hand waits on few shapes, all suited); and
  an opponent whose sets are of one suit and honors is steering for a flush (混一色/清一色:
  the 8-fan minimum needs fans), so its suit is dangerous and the other suits are not.

The factors were checked against what the table knew in strong's self-play (640 hands, a
million tile-opponent pairs): predicted and actual deal-in chances agree within about a
third by readiness, rank, the opponent's sets and its own discards (before, an own discard
and an honor against an open hand were read 3-4 times too dangerous).

Pure: a function of the view and the seat's own tiles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from engine.hand import MeldKind
from engine.tiles import EAST, N_KINDS, Tile
from engine.view import View

# Chance that an opponent is ready, by its sets (exposed and concealed kongs, rows) and by
# its discards (columns: 0-2, 3-5, ... 18+), measured on ``normal``'s self-play.
READY: Final = (
    (0.00, 0.01, 0.06, 0.12, 0.19, 0.24, 0.33),
    (0.00, 0.04, 0.10, 0.19, 0.28, 0.35, 0.42),
    (0.05, 0.10, 0.22, 0.38, 0.48, 0.56, 0.61),
    (0.30, 0.45, 0.59, 0.64, 0.69, 0.79, 0.80),
    (0.90, 0.90, 0.90, 0.90, 0.90, 0.90, 0.90),
)
# Chance that a kind of tile is among a ready hand's waits, by its rank (1..9), measured the
# same way; an honor's is read from its unseen copies (``_HONOR``).
_RANK: Final = (0.025, 0.041, 0.063, 0.065, 0.065, 0.065, 0.070, 0.042, 0.025)
_HONOR: Final = (0.0, 0.012, 0.03, 0.04, 0.04)  # by unseen copies 0..4
FLUSH_SUIT: Final = 2.2  # a flush hunter's suit is this much more dangerous ...
OTHER_SUIT: Final = 0.15  # ... and the other suits this much less
OWN_DISCARD: Final = 0.15  # a tile the opponent discarded itself (it may have changed waits)
OPEN_HONOR: Final = 0.2  # an honor against an opponent with sets shown (its waits are suited)
MANY_SETS: Final = 0.3  # a suited tile against 3 or 4 sets: this much more per set past 2


@dataclass(frozen=True, slots=True)
class Threat:
    """One opponent as the seat reads it: ``ready`` (chance it is ready now), ``risk`` (per
    kind, the chance the kind is among its waits if it is ready), ``passed`` (kinds safe
    against it until its next discard)."""

    player: int
    ready: float
    risk: tuple[float, ...]
    passed: frozenset[Tile]

    def deal_in(self, tile: Tile) -> float:
        """The chance that discarding ``tile`` now feeds this opponent's win."""
        if tile >= N_KINDS or tile in self.passed:
            return 0.0
        return self.ready * self.risk[tile]


@dataclass(frozen=True, slots=True)
class Danger:
    """Every opponent's threat; ``of(tile)``: the chance a discard of ``tile`` deals in."""

    threats: tuple[Threat, ...]

    @property
    def pressure(self) -> float:
        """The chance that at least one opponent is ready."""
        calm = 1.0
        for threat in self.threats:
            calm *= 1.0 - threat.ready
        return 1.0 - calm

    def of(self, tile: Tile) -> float:
        safe = 1.0
        for threat in self.threats:
            safe *= 1.0 - threat.deal_in(tile)
        return 1.0 - safe


def discard_order(view: View) -> list[tuple[int, Tile]]:
    """Every discard of the hand so far in the order it was made, as (position, tile):
    positions 0..3 are East, South, West, North of this hand.

    Turns go round from East; a claimed discard passes the turn to the seat whose next
    claimed meld took it (a chow from the seat before, a pung or kong from the seat its
    ``offer`` names), and kongs keep the turn where it is.
    """
    seats = view.seats
    rivers = [s.river for s in seats]
    claimed = [[m for m in s.melds if m.offer] for s in seats]
    used = [0, 0, 0, 0]
    at = [0, 0, 0, 0]
    order: list[tuple[int, Tile]] = []
    pos = 0
    while at[pos] < len(rivers[pos]):
        tile, taken = rivers[pos][at[pos]]
        at[pos] += 1
        order.append((pos, tile))
        after = (pos + 1) % 4
        if taken:
            for step in (1, 2, 3):
                claimer = (pos + step) % 4
                if used[claimer] >= len(claimed[claimer]):
                    continue
                meld = claimed[claimer][used[claimer]]
                if meld.kind is MeldKind.CHOW:
                    fits = step == 1 and meld.tile <= tile <= meld.tile + 2
                else:
                    fits = meld.tile == tile and (claimer - meld.offer) % 4 == pos
                if fits:
                    used[claimer] += 1
                    after = claimer
                    break
        pos = after
    return order


def _risk(
    unseen: Sequence[int], suit: int | None, own: frozenset[Tile], sets: int
) -> tuple[float, ...]:
    """The chance of each kind being among a ready opponent's waits (module docs)."""
    risk = [0.0] * N_KINDS
    for t in range(N_KINDS):
        if t >= EAST:
            r = _HONOR[max(0, min(4, unseen[t]))]
            if sets:
                r *= OPEN_HONOR
        else:
            rank = t % 9
            r = _RANK[rank]
            # The shapes that can wait on t: a pair or single wait on t itself, and the
            # sequences around it; each needs unseen copies of the tiles it holds.
            lo = t - rank
            shapes = 0.5 * min(unseen[t], 2) / 2
            total = 0.5
            for a, b in ((t - 2, t - 1), (t - 1, t + 1), (t + 1, t + 2)):
                if a < lo or b >= lo + 9:
                    continue
                total += 1.0
                if unseen[a] and unseen[b]:
                    shapes += 1.0
            r *= (0.1 + 0.9 * shapes / total) * (1.0 + MANY_SETS * max(0, sets - 2))
            if suit is not None:
                r *= FLUSH_SUIT if t // 9 == suit else OTHER_SUIT
        if t in own:
            r *= OWN_DISCARD
        risk[t] = r
    return tuple(risk)


def _flush_suit(melds: Sequence[tuple[MeldKind, Tile]]) -> int | None:
    """The suit an opponent's sets steer for when they are two or more, all of one suit or
    honors (at least one suited): a flush (module docs); else ``None``."""
    if len(melds) < 2:
        return None
    suits = {t // 9 for _, t in melds if t < EAST}
    return suits.pop() if len(suits) == 1 else None


def let_pass(view: View) -> dict[int, frozenset[Tile]]:
    """For each opponent of the viewer (by player), the kinds it has let pass since its own
    last discard: every discard made after it, which it did not win on (``Threat.passed``)."""
    order = discard_order(view)
    out = {}
    for pos, seat in enumerate(view.seats):
        if seat.player == view.viewer:
            continue
        last = -1
        for i, (who, _) in enumerate(order):
            if who == pos:
                last = i
        out[seat.player] = frozenset(t for _, t in order[last + 1 :])
    return out


def read_danger(view: View, unseen: Sequence[int]) -> Danger:
    """The danger every opponent of the viewer poses (module docs); ``unseen``: the unseen
    copies of each kind for the viewer (``reading.unseen_copies``)."""
    viewer = view.viewer
    passed_by = let_pass(view)
    threats = []
    for seat in view.seats:
        if seat.player == viewer:
            continue
        passed = passed_by[seat.player]
        sets = len(seat.melds) + seat.hidden_kongs
        column = min(len(seat.river) // 3, 6)
        ready = READY[min(sets, 4)][column]
        suit = _flush_suit([(m.kind, m.tile) for m in seat.melds if m.offer])
        own = frozenset(t for t, _ in seat.river)
        threats.append(Threat(seat.player, ready, _risk(unseen, suit, own, sets), passed))
    return Danger(tuple(threats))

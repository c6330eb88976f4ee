"""What a bot reads off its view, whatever it plays for: its seat, the tiles it has not
seen, and which tile it least wants to keep.

A bot knows only its ``View``: its own concealed tiles, every river and every meld it may
see (a concealed kong of another seat may be face down), the indicator under wild-tile
rules. A tile's unseen copies are 4 less those it sees; they are the copies it may still
draw or win on, and a plan whose missing tile has none left is dead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from engine.actions import DISCARDS, Action, ActionKind
from engine.bots.parts import at_least
from engine.errors import MahjongError
from engine.hand import Meld, MeldKind
from engine.rules import RuleSet
from engine.tiles import EAST, N_KINDS, RED, WILD, Tile, Wind, is_terminal_or_honor
from engine.view import SeatView, View

KONGS: Final = (ActionKind.CONCEALED_KONG, ActionKind.ADD_KONG)  # the kongs of one's turn
_SLOTS: Final = WILD + 1  # every tile value: the kinds, the flowers, the wild tile


@dataclass(frozen=True, slots=True)
class Seat:
    """What the bot knows of its own seat for scoring: melds, winds, and the rules it plays
    by (the fan minimum, the fans that count: never assumed to be MCR's)."""

    melds: tuple[Meld, ...]
    seat_wind: Wind
    round_wind: Wind
    rules: RuleSet

    def with_melds(self, melds: tuple[Meld, ...]) -> Seat:
        return Seat(melds, self.seat_wind, self.round_wind, self.rules)


class Forgetful(Protocol):
    """Memos a bot can empty (``PlanPlay``, ``SpeedPlay``)."""

    def forget(self) -> None: ...


class HandScope:
    """Empties a bot's memos when its views move on to another hand (``see``): none of a
    hand's 13-tile hands comes back in the next, and a bot seated for a whole match (a
    table's stand-in, "Play now"'s three) otherwise kept up to its memos' bound, hundreds of
    KiB (docs/performance.md, "Memory").

    A hand's wall only shrinks, so a longer wall, or other dice, is another hand. (Missing
    one, when a hand ended so early that the next one's wall is no longer, costs memory
    until the next, never a decision: the memos are of pure functions.)"""

    def __init__(self, *memos: Forgetful) -> None:
        self._memos = memos
        self._wall = -1
        self._dice: tuple[tuple[int, int], tuple[int, int]] | None = None

    def see(self, view: View) -> None:
        """Note the view the bot is asked about; a view of another hand empties the memos."""
        wall, dice = view.wall_remaining, view.dice
        if wall > self._wall or dice != self._dice:
            for memo in self._memos:
                memo.forget()
        self._wall, self._dice = wall, dice


def discard(tile: Tile) -> Action:
    """The discard of ``tile``, as the very object the table lists (``engine.actions.DISCARDS``;
    a wild flower's is made): the table then finds it among the legal actions by identity."""
    return DISCARDS[tile] if tile < N_KINDS else Action(ActionKind.DISCARD, tile)


def viewer_of(view: View) -> int:
    """The player whose view this is (a spectator's view cannot be played)."""
    if view.viewer is None:
        raise MahjongError("a spectator's view cannot be played")
    return view.viewer


def own_seat(view: View) -> tuple[SeatView, tuple[Tile, ...]]:
    """The viewer's seat and its concealed tiles (an error if the view does not show them)."""
    viewer = view.viewer
    if viewer is None:
        raise MahjongError("a spectator's view cannot be played")
    seat = view.seat(viewer)
    if seat.concealed is None:
        raise MahjongError("a bot's view must show its own concealed tiles")
    return seat, seat.concealed


def position(view: View, player: int) -> int:
    """The seat index (E S W N of this hand) of ``player``."""
    for i, seat in enumerate(view.seats):
        if seat.player == player:
            return i
    raise MahjongError(f"no player {player!r} at this table")


class Unseen(list[int]):
    """Unseen copies of each tile (4 less those the seat can see), and ``unavailable``: the
    tiles of which 1, 2, 3 copies cannot be had, held or unseen (byte masks)."""

    unavailable: tuple[int, int, int] = (0, 0, 0)


def _seen_elsewhere(view: View) -> list[int]:
    """The copies of each kind the seat sees outside its concealed tiles: every river (a
    claimed discard is counted in the meld that took it; flowers in a river are skipped),
    every meld it may see, its own included, and the indicator."""
    elsewhere = [0] * _SLOTS  # flowers and the wild tile counted apart, then cut off
    for seat in view.seats:
        for tile, claimed in seat.river:
            if not claimed:
                elsewhere[tile] += 1
        for meld in seat.melds:
            t = meld.tile
            if meld.kind is MeldKind.CHOW:
                elsewhere[t] += 1
                elsewhere[t + 1] += 1
                elsewhere[t + 2] += 1
            else:
                elsewhere[t] += 4 if meld.kind is MeldKind.KONG else 3
    indicator = view.indicator
    if indicator is not None:
        elsewhere[indicator] += 1
    del elsewhere[N_KINDS:]
    return elsewhere


def unseen_copies(view: View, counts: Sequence[int]) -> list[int]:
    """The unseen copies of each kind for a seat holding ``counts`` (its standing tiles that
    are not wild): 4 less those and the copies it sees elsewhere. Never below 0 in a view a
    table gives out: a tile is in one place only (the indicator is out of the wall)."""
    return [4 - a - b for a, b in zip(counts, _seen_elsewhere(view), strict=True)]


def unseen_and_dead(view: View, counts: Sequence[int]) -> Unseen:
    """``unseen_copies``, with the masks of the tiles of which 1, 2 or 3 copies can no longer
    be had (``Unseen.unavailable``: what makes a plan dead)."""
    elsewhere = _seen_elsewhere(view)
    found = Unseen([4 - a - b for a, b in zip(counts, elsewhere, strict=True)])
    seen = bytes(elsewhere)
    # 1 copy cannot be had when the 4 are seen elsewhere, 2 when 3 are, 3 when 2 are.
    found.unavailable = (at_least(seen, 4), at_least(seen, 3), at_least(seen, 2))
    return found


def claimed_set(
    counts: Sequence[int], action: Action, tile: Tile, offer: int
) -> tuple[list[int], Meld] | None:
    """The standing tiles and the new meld after claiming ``tile`` with ``action`` (a chow,
    pung or kong; ``offer``: the position of the seat it came from, 1..3, as a meld records
    it); None for any other action."""
    kind = action.kind
    after = list(counts)
    if kind is ActionKind.CHOW:
        start = action.tile
        assert start is not None
        for t in (start, start + 1, start + 2):
            if t != tile:
                after[t] -= 1
        return after, Meld(MeldKind.CHOW, start, tile - start + 1)
    if kind is ActionKind.PUNG:
        after[tile] -= 2
        return after, Meld(MeldKind.PUNG, tile, offer)
    if kind is ActionKind.KONG:
        after[tile] -= 3
        return after, Meld(MeldKind.KONG, tile, offer)
    return None


def keep_score(counts: Sequence[int], tile: int, seat: Seat) -> float:
    """How much the hand wants to keep ``tile`` (lower: discard first): lone honors of no
    value first, then lone honors, terminals, lone tiles; middle tiles with neighbours last."""
    n = counts[tile]
    if tile >= EAST:
        valued = tile >= RED or tile in (EAST + seat.seat_wind, EAST + seat.round_wind)
        return 2.0 * (n - 1) + (0.5 if valued else 0.0)
    rank = tile % 9
    lo = tile - rank
    near = sum(counts[max(lo, tile - 2) : min(lo + 9, tile + 3)]) - n  # the tiles beside it
    edge = 0.0 if is_terminal_or_honor(tile) else (1.0 if rank in (1, 7) else 1.5)
    return 1.0 + edge + 2.0 * (n - 1) + near + tile / 1000.0

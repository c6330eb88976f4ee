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
from typing import Final

from engine.actions import DISCARDS, Action, ActionKind
from engine.bots.parts import at_least
from engine.errors import MahjongError
from engine.hand import Meld, MeldKind
from engine.rules import RuleSet
from engine.table import SeatView, View
from engine.tiles import EAST, N_KINDS, RED, Tile, Wind, is_terminal_or_honor

KONGS: Final = (ActionKind.CONCEALED_KONG, ActionKind.ADD_KONG)  # the kongs of one's turn


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


# What one seat shows (its river's unclaimed tiles, its melds) as an int with a byte per
# kind: the table keeps a seat's ``SeatView`` while the seat does not change, and every
# viewer of a state shares the public ones, so each is read once and looked up after, by
# identity (the view is kept beside it, so its id is not reused while it is here).
_SEAT_MEMO_SIZE: Final = 4096
_seat_memo: dict[int, tuple[SeatView, int]] = {}
_CHOW_LANES: Final = 0x010101


def _seat_lanes(seat: SeatView) -> int:
    found = _seat_memo.get(id(seat))
    if found is not None and found[0] is seat:
        return found[1]
    lanes = 0
    for tile, claimed in seat.river:
        if not claimed and tile < N_KINDS:  # a wild flower discarded is no kind
            lanes += 1 << (8 * tile)
    for meld in seat.melds:
        kind = meld.kind
        if kind is MeldKind.CHOW:
            lanes += _CHOW_LANES << (8 * meld.tile)
        else:
            lanes += (4 if kind is MeldKind.KONG else 3) << (8 * meld.tile)
    if len(_seat_memo) >= _SEAT_MEMO_SIZE:
        _seat_memo.clear()
    _seat_memo[id(seat)] = (seat, lanes)
    return lanes


def _seen_lanes(view: View) -> int:
    """The copies of each kind the seat sees outside its concealed tiles, a byte per kind:
    every river (a claimed discard is counted in the meld that took it; flowers in a river
    are skipped), every meld it may see, its own included, and the indicator."""
    east, south, west, north = view.seats
    lanes = _seat_lanes(east) + _seat_lanes(south) + _seat_lanes(west) + _seat_lanes(north)
    indicator = view.indicator
    if indicator is not None:
        lanes += 1 << (8 * indicator)
    return lanes


_FOURS: Final = int.from_bytes(bytes([4] * N_KINDS), "little")


def _unseen_bytes(seen: int, counts: Sequence[int]) -> bytes:
    """4 less the copies seen elsewhere (``seen``, lanes) and held (``counts``), a byte per
    kind: at most 4 copies of a kind in all, so no lane borrows from the next."""
    held = int.from_bytes(bytes(counts), "little")
    return (_FOURS - seen - held).to_bytes(N_KINDS, "little")


def unseen_copies(view: View, counts: Sequence[int]) -> list[int]:
    """The unseen copies of each kind for a seat holding ``counts`` (its standing tiles that
    are not wild): 4 less those and the copies it sees elsewhere. Never below 0 in a view a
    table gives out: a tile is in one place only (the indicator is out of the wall)."""
    return list(_unseen_bytes(_seen_lanes(view), counts))


def unseen_and_dead(view: View, counts: Sequence[int]) -> Unseen:
    """``unseen_copies``, with the masks of the tiles of which 1, 2 or 3 copies can no longer
    be had (``Unseen.unavailable``: what makes a plan dead)."""
    lanes = _seen_lanes(view)
    found = Unseen(_unseen_bytes(lanes, counts))
    seen = lanes.to_bytes(N_KINDS, "little")
    # 1 copy cannot be had when the 4 are seen elsewhere, 2 when 3 are, 3 when 2 are.
    found.unavailable = (at_least(seen, 4), at_least(seen, 3), at_least(seen, 2))
    return found


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

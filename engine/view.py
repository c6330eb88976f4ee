"""What one seat (or a spectator) may see of a hand: ``View``, its ``SeatView`` and
``ClaimView``, the hand's ``Phase``, and the view's JSON form.

``engine.table`` builds views (``HandState.view``); bots (``engine.bots``), the analysis
(``engine.analysis``) and the server read them. A view encodes itself (``to_dict``: each
``SeatView``'s JSON form is built once and shared among the viewers, as ``Action`` and
``RuleSet`` encode themselves); ``engine.wire`` decodes it and names these encoders beside
its decoders (``wire.encode_view`` / ``wire.decode_view``), so the wire module still lists
every shape. The types live here, below both the table and the wire module, so that neither
imports the other to name them: the table encodes its events through ``engine.wire``, and
the wire module builds views when it decodes them.

The view on the wire (``docs/protocol.md``)::

    phase, round_wind, dealer, dice, wall_remaining, current,
    seats: [{player, wind, concealed_count, melds ("[????]": a face-down kong),
             flowers, river ("7p*": claimed), concealed (own tiles; everyone's at the end)}],
    drawn (own turn), claim {tile, from, kind}, you + legal (a player, not a spectator),
    rules + indicator + dead_flowers + wild_tiles (rules other than plain MCR)

Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from functools import cache, cached_property
from typing import Any

from engine.actions import Action, legal_json
from engine.hand import Meld
from engine.notation import format_tiles
from engine.rules import MCR, RuleSet
from engine.tiles import NAMES, WILD, Tile, Wind, name

HIDDEN_KONG = "[????]"  # a face-down kong the viewer may not see
CLAIMED_MARK = "*"  # after a river tile: claimed by another player
# A river entry (tile, claimed) as written, for every tile: a seat's river is written again
# whenever the seat changes, one lookup per discard.
_RIVER_ENTRIES: dict[tuple[Tile, bool], str] = {
    (t, claimed): name(t) + (CLAIMED_MARK if claimed else "")
    for t in (*range(len(NAMES)), WILD)
    for claimed in (False, True)
}


@cache  # asked for every view serialized: a handful of rule sets, each answered once
def is_plain_mcr(rules: RuleSet) -> bool:
    """Whether ``rules`` play exactly as MCR (whatever the preset's name).

    Views, events and records of such tables keep the MCR form, key for key.
    """
    return rules is MCR or replace(rules, name=MCR.name) == MCR


class Phase(Enum):
    """Where a hand stands; ``engine.table`` holds the transitions (and the legal actions of
    each phase)."""

    TURN = "turn"  # the player to move has drawn
    CLAIMED = "claimed"  # the player to move claimed a chow or pung: discard only
    CLAIM = "claim"  # answers to a discard are being collected
    ROB = "rob"  # answers to an added kong (robbing) are being collected
    OVER = "over"  # the hand is over


@dataclass(frozen=True)  # not slotted: ``to_dict`` is cached on the instance
class SeatView:
    """One player's place at the table as a viewer may see it.

    The table shares one public ``SeatView`` per seat among all viewers of a state, so
    its JSON form is built once too.
    """

    player: int
    wind: Wind
    concealed_count: int
    melds: tuple[Meld, ...]  # exposed melds, and concealed kongs the viewer may see
    hidden_kongs: int  # face-down kongs the viewer may not see
    flowers: tuple[Tile, ...]
    river: tuple[tuple[Tile, bool], ...]  # discards in order; True when claimed
    concealed: tuple[Tile, ...] | None  # the viewer's own tiles, everyone's once the hand is over
    wilds: int = 0  # how many of ``concealed`` are wild tiles (shown first, at the left)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (shared: do not modify it)."""
        return self._dict

    @cached_property
    def _dict(self) -> dict[str, Any]:
        return encode_seat(self)


@dataclass(frozen=True, slots=True)
class ClaimView:
    tile: Tile
    source: int  # the discarder, or the player adding to a kong
    kind: str  # "discard" or "add_kong"


@dataclass(frozen=True, slots=True)
class View:
    """What one player (or a spectator, ``viewer=None``) may know of the hand now."""

    viewer: int | None
    phase: Phase
    round_wind: Wind
    dealer: int
    dice: tuple[tuple[int, int], tuple[int, int]]
    wall_remaining: int
    current: int
    seats: tuple[SeatView, ...]  # in position order East, South, West, North
    drawn: Tile | None  # the tile the viewer just drew, on its own turn
    claim: ClaimView | None  # the discard or added kong being answered
    legal: tuple[Action, ...]  # what the viewer may do now
    rules: RuleSet = MCR  # the table's rule options (``rules.min_fan``, ``rules.wilds``, ...)
    indicator: Tile | None = None  # the tile turned up after the deal (wild-tile options)
    dead_flowers: tuple[Tile, ...] = ()  # flowers turned up before the indicator, set aside
    wild_tiles: frozenset[Tile] = frozenset()  # the wild kind, or the flowers

    def seat(self, player: int) -> SeatView:
        return next(s for s in self.seats if s.player == player)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form the server sends (``encode_view``)."""
        return encode_view(self, is_plain_mcr(self.rules))


# ------------------------------------------------------------ the JSON form ---


def format_concealed(tiles: tuple[Tile, ...], wilds: int) -> str:
    """Concealed tiles as text, the ``wilds`` wild tiles first: ``"55m123p..."``."""
    if not wilds:
        return format_tiles(tiles)
    return format_tiles(tiles[:wilds]) + format_tiles(tiles[wilds:])


def _river_entry(tile: Tile, claimed: bool) -> str:
    return name(tile) + (CLAIMED_MARK if claimed else "")


def encode_seat(seat: SeatView) -> dict[str, Any]:
    """One seat of a view (``SeatView.to_dict`` caches it: shared among the viewers)."""
    out: dict[str, Any] = {
        "player": seat.player,
        "wind": seat.wind.letter,
        "concealed_count": seat.concealed_count,
        "melds": [str(m) for m in seat.melds] + [HIDDEN_KONG] * seat.hidden_kongs,
        "flowers": [name(t) for t in seat.flowers],
        "river": [_RIVER_ENTRIES.get(entry) or _river_entry(*entry) for entry in seat.river],
    }
    if seat.concealed is not None:
        out["concealed"] = format_concealed(seat.concealed, seat.wilds)
    return out


def encode_view(view: View, plain: bool) -> dict[str, Any]:
    """A view as the server sends it in ``update.payload.view`` (``plain``: the rules play
    exactly as MCR, ``is_plain_mcr``: no rule keys). (Protocol version 2's
    updates that are not full carry it without ``seats``, with ``players``:
    ``HandState.brief``.)"""
    out: dict[str, Any] = {
        "phase": view.phase.value,
        "round_wind": view.round_wind.letter,
        "dealer": view.dealer,
        "dice": [list(view.dice[0]), list(view.dice[1])],
        "wall_remaining": view.wall_remaining,
        "current": view.current,
        "seats": [s.to_dict() for s in view.seats],
    }
    if view.drawn is not None:
        out["drawn"] = name(view.drawn)
    if view.claim is not None:
        out["claim"] = {
            "tile": name(view.claim.tile),
            "from": view.claim.source,
            "kind": view.claim.kind,
        }
    if view.viewer is not None:
        out["you"] = view.viewer
        out["legal"] = legal_json(view.legal)
    if not plain:
        out["rules"] = view.rules.to_dict()
        out["indicator"] = name(view.indicator) if view.indicator is not None else None
        out["dead_flowers"] = [name(t) for t in view.dead_flowers]
        out["wild_tiles"] = [name(t) for t in sorted(view.wild_tiles)]
    return out

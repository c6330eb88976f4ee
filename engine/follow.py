"""Following the seats from the events: a client's side of protocol version 2.

In protocol version 2 an ``update`` that is not ``full`` carries its ``view`` without
``seats``: the seats (each player's concealed count, melds, flowers, river, the viewer's own
tiles) are what the client had, changed by the update's events. ``follow`` is that change,
on the wire's own forms (``engine.wire``), so that a client in any language can do the same
(the web client's ``web/js/follow.js`` is its twin): given the view before (with its
seats), this update's visible events and its seatless view, the seats after. The server
never relies on it: it sends the seats whenever a client could not follow (a full update:
``sync``, ``resume``, joining, watching, a table moved to another node).

Each event, as the viewer sees it (docs/protocol.md, "Protocol version 2"):

- ``hand_start``: new seats, empty, in position order (the view's ``players``), with their
  ``seat_winds``; the viewer's own seat has (no) concealed tiles;
- ``deal``: the player's tiles (its own: the tiles; the others': a count);
- ``flower``: set aside (one concealed tile fewer);
- ``add_kong``: the pung becomes a kong, the added tile leaves the hand (at once, while
  others may still rob it); a ``win`` that robs it makes it a pung again;
- ``draw``: one concealed tile more (its own: the tile);
- ``discard``: into the river, out of the hand;
- ``claim``: the meld is added; its tiles but the claimed one leave the hand; the claimed
  discard is marked ``*`` in the discarder's river;
- ``concealed_kong``: four tiles leave the hand; the meld shows to its owner (``tile``)
  and is ``"[????]"`` to the others (listed after the melds they can see);
- ``hand_end``: every hand shown: concealed tiles and melds as the event has them;
- the others (``match``, ``indicator``, ``head_bump``, ``win`` but a robbing one,
  ``exhausted``) change no seat.

Concealed tiles are written sorted, the wild tiles first (``view.wild_tiles``).
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.errors import InvalidWire
from engine.hand import Meld, MeldKind
from engine.notation import format_tiles
from engine.tiles import NAMES, Tile
from engine.wire import CLAIMED_MARK, HIDDEN_KONG, decode_meld

_TILE = {n: i for i, n in enumerate(NAMES)}  # tile names, flowers included


@dataclass
class _Seat:
    """A seat while events change it."""

    player: int
    wind: str
    count: int
    melds: list[str]  # the melds the viewer may see, in the order declared
    hidden: int  # face-down kongs the viewer may not see
    flowers: list[str]
    river: list[str]
    concealed: list[Tile] | None

    @classmethod
    def read(cls, seat: Mapping[str, Any]) -> _Seat:
        melds = list(seat["melds"])
        concealed = seat.get("concealed")
        return cls(
            seat["player"],
            seat["wind"],
            seat["concealed_count"],
            [m for m in melds if m != HIDDEN_KONG],
            melds.count(HIDDEN_KONG),
            list(seat["flowers"]),
            list(seat["river"]),
            None if concealed is None else _parse(concealed),
        )

    def write(self, wild: frozenset[Tile]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "player": self.player,
            "wind": self.wind,
            "concealed_count": self.count,
            "melds": self.melds + [HIDDEN_KONG] * self.hidden,
            "flowers": self.flowers,
            "river": self.river,
        }
        if self.concealed is not None:
            wilds = [t for t in self.concealed if t in wild]
            out["concealed"] = format_tiles(wilds) + format_tiles(
                [t for t in self.concealed if t not in wild]
            )
        return out

    def take(self, tiles: Sequence[Tile]) -> None:
        """``tiles`` leave the hand (the viewer's own tiles, when it sees them)."""
        self.count -= len(tiles)
        if self.concealed is not None:
            for tile in tiles:
                try:
                    self.concealed.remove(tile)
                except ValueError:
                    raise InvalidWire(
                        f"player {self.player} has no {NAMES[tile]} to give up"
                    ) from None


def follow(
    before: Mapping[str, Any] | None, events: Sequence[Mapping[str, Any]], view: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The seats of ``view`` (an update's view without them): those of ``before`` (the last
    view, with its seats; None: none yet) changed by ``events`` (the update's events, as
    the viewer got them). ``InvalidWire`` when they cannot be followed: no seats before and
    no hand starting, or an event that does not fit them (the client then asks for a full
    update, ``sync``). A seat no event changed is ``before``'s own dict, not a copy (an
    update changes one or two seats: the others are neither read nor written again)."""
    you = view.get("you")
    kept: list[dict[str, Any]] = []  # ``before``'s seats, in position order
    changed: dict[int, _Seat] = {}  # the seats events changed, by player
    known = False  # whether there are seats to follow
    if before is not None and before.get("seats") is not None:
        kept, known = list(before["seats"]), True
    adding: tuple[int, Tile] | None = None  # an added kong being answered: (player, tile)
    claim = before.get("claim") if before is not None else None
    if claim is not None and claim.get("kind") == "add_kong":
        adding = (claim["from"], _TILE[claim["tile"]])

    def seat_of(player: Any) -> _Seat:
        seat = changed.get(player)
        if seat is None:
            found = [s for s in kept if s["player"] == player]
            if not found:
                raise InvalidWire(f"no player {player!r} at the table")
            seat = changed[player] = _Seat.read(found[0])
        return seat

    for event in events:
        kind = event["kind"]
        if kind == "hand_start":
            winds = event["seat_winds"]
            kept = [{"player": p} for p in view["players"]]
            changed = {
                p: _Seat(p, winds[p], 0, [], 0, [], [], [] if p == you else None)
                for p in view["players"]
            }
            known, adding = True, None
            continue
        if kind == "win" and adding is not None and event.get("discarder") == adding[0]:
            if not known:
                raise InvalidWire("a robbing 'win' event, and no seats to follow (sync first)")
            _set_kong(seat_of(adding[0]), adding[1], False)  # robbed: a pung again
            adding = None
            continue
        if kind in _UNCHANGED:
            continue
        if not known:
            raise InvalidWire(f"a {kind!r} event, and no seats to follow (sync first)")
        if kind == "add_kong":
            adding = (event["player"], _TILE[event["tile"]])
            _set_kong(seat_of(event["player"]), adding[1], True)
            continue
        if kind == "hand_end":
            players = sorted(s["player"] for s in kept)
            for player, hand in zip(players, event["hands"], strict=True):
                s = seat_of(player)
                s.concealed = _parse(hand["concealed"])
                s.count = len(s.concealed)
                s.melds = list(hand["melds"])
                s.hidden = 0
            adding = None
            continue
        if kind not in _SEAT_EVENTS:
            raise InvalidWire(f"an event of unknown kind {kind!r}")
        seat = seat_of(event.get("player"))
        if kind == "deal":
            if "tiles" in event:
                tiles = [_TILE[t] for t in event["tiles"]]
                seat.count = len(tiles)
                if seat.concealed is not None:
                    seat.concealed = tiles
            else:
                seat.count = event["count"]
        elif kind == "flower":
            seat.flowers.append(event["flower"])
            seat.take([_TILE[event["flower"]]])
        elif kind == "draw":
            adding = None  # (the kong stood: its replacement)
            seat.count += 1
            if seat.concealed is not None and "tile" in event:
                seat.concealed.append(_TILE[event["tile"]])
        elif kind == "discard":
            seat.river.append(event["tile"])
            seat.take([_TILE[event["tile"]]])
        elif kind == "claim":
            meld = decode_meld(event["meld"], "claim.meld")
            given = seat_of(event["from"]).river
            if not given:
                raise InvalidWire(f"player {event['from']} has no discard to be claimed")
            given[-1] += CLAIMED_MARK
            tiles = list(meld.tiles)
            tiles.remove(_TILE[event["tile"]])
            seat.melds.append(event["meld"])
            seat.take(tiles)
        elif kind == "concealed_kong":
            if "tile" in event:
                tile = _TILE[event["tile"]]
                seat.melds.append(str(Meld(MeldKind.KONG, tile, 0)))
                seat.take([tile] * 4)
            else:
                seat.hidden += 1
                seat.count -= 4
    if not known:
        raise InvalidWire("no seats to follow (sync first)")
    wild = frozenset(_TILE[t] for t in view.get("wild_tiles") or ())
    return [changed[s["player"]].write(wild) if s["player"] in changed else s for s in kept]


_UNCHANGED = frozenset({"match", "indicator", "head_bump", "win", "exhausted"})
_SEAT_EVENTS = frozenset({"deal", "flower", "draw", "discard", "claim", "concealed_kong"})


def _set_kong(seat: _Seat, tile: Tile, standing: bool) -> None:
    """``standing``: the exposed pung of ``tile`` becomes a kong, the added tile leaving the
    hand; else that kong, robbed, is a pung again (the tile gone to the robber)."""
    was, becomes = (MeldKind.PUNG, MeldKind.KONG) if standing else (MeldKind.KONG, MeldKind.PUNG)
    for i, text in enumerate(seat.melds):
        meld = decode_meld(text, "melds")
        if meld.kind is was and meld.tile == tile and not meld.concealed:
            seat.melds[i] = str(Meld(becomes, tile, meld.offer))
            if standing:
                seat.take([tile])
            return
    raise InvalidWire(f"player {seat.player} has no {was.name.lower()} of {NAMES[tile]}")


def _parse(text: str) -> list[Tile]:
    """Concealed tiles as written (held flowers first, then a run): their kinds."""
    out: list[Tile] = []
    digits = ""
    i = 0
    while i < len(text):
        c = text[i]
        if "0" <= c <= "9":
            digits += c
        elif c in "mps" and digits:
            out.extend(_TILE[d + c] for d in digits)
            digits = ""
        elif c == "f" and not digits and text[i : i + 2] in _TILE:
            out.append(_TILE[text[i : i + 2]])
            i += 1
        elif c in _TILE and not digits:
            out.append(_TILE[c])
        else:
            raise InvalidWire(f"concealed tiles {text!r}: not the notation at {i}")
        i += 1
    if digits:
        raise InvalidWire(f"concealed tiles {text!r}: digits without a suit")
    return out

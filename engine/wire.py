"""The table's output on the wire: each view and event shape, encoded and decoded side by side.

The server sends what the encoders here return (``json.dumps`` of it, key for key and in
this order); the Python client (``server.client``) reads it back through the decoders, and
``docs/protocol.md`` documents it (``tests/engine/test_wire.py`` and
``tests/server/test_protocol_docs.py`` check the docs' examples against this module). For
every shape ``decode(encode(x)) == x`` and, for what the server sends, ``encode(decode(d))
== d``. A decoder refuses malformed input with ``InvalidWire`` naming the field and quoting
what it held.

The view (``encode_view`` / ``decode_view``) is the engine's typed ``engine.view.View``
(with its ``SeatView`` and ``ClaimView``); its encoders live beside the types in
``engine.view`` (a view encodes itself, ``View.to_dict``) and are named here too::

    phase, round_wind, dealer, dice, wall_remaining, current,
    seats: [{player, wind, concealed_count, melds ("[????]": a face-down kong),
             flowers, river ("7p*": claimed), concealed (own tiles; everyone's at the end)}],
    drawn (own turn), claim {tile, from, kind}, you + legal (a player, not a spectator),
    rules + indicator + dead_flowers + wild_tiles (rules other than plain MCR)

Events (``encode_event`` / ``decode_event``; on the wire ``{"kind": ..., **fields}``), one
frozen dataclass each, fields in wire order (``?``: present only sometimes)::

    match           MatchStart     hand_no, scores, repeat?  (rules other than plain MCR)
    hand_start      HandStart      dealer, round_wind, seat_winds, dice, rules?
    deal            Deal           player, tiles (to that player) | count (to the others)
    indicator       Indicator      tile, flowers (set aside dead), wild
    flower          Flower         player, flower
    draw            Draw           player, tile? (to that player), source (wall|kong|flower)
    discard         Discard        player, tile
    claim           Claim          player, type (chow|pung|kong), tile, from, meld
    concealed_kong  ConcealedKong  player, tile? (to that player)
    add_kong        AddKong        player, tile
    head_bump       HeadBump       winner, others
    win             Win            winner, discarder, tile, hand, total, meets_minimum,
                                   fans [{name, name_zh, points, count}], deltas
    exhausted       Exhausted      (no field)
    hand_end        HandEnd        hands [{concealed, melds}] (by player)

Tiles are written as in the notation (``"5m"``, ``"E"``, flowers ``"f1"``..``"f8"``, a wild
tile won on ``"*"``), melds as ``str(Meld)`` (``"[123m,1]"``, ``"[5555p]"``).
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from engine.actions import Action, ActionKind, Event
from engine.errors import InvalidWire, MahjongError
from engine.hand import Meld, MeldKind
from engine.notation import parse_tiles
from engine.rules import RulesError, RuleSet, rule_set_from_dict
from engine.tiles import FLOWERS_BY_NAME, N_KINDS, NAMES, WILD, Tile, Wind, name
from engine.view import (
    CLAIMED_MARK,
    HIDDEN_KONG,
    ClaimView,
    Phase,
    SeatView,
    View,
    encode_seat,
    encode_view,
    format_concealed,
)

__all__ = [  # with the view's encoders (``engine.view``), named here beside its decoders
    "CLAIMED_MARK",
    "CLAIM_TYPES",
    "DRAW_SOURCES",
    "EVENT_KINDS",
    "EVENT_TYPES",
    "HIDDEN_KONG",
    "AddKong",
    "Claim",
    "ConcealedKong",
    "Deal",
    "Discard",
    "Draw",
    "Exhausted",
    "Flower",
    "HandEnd",
    "HandStart",
    "HeadBump",
    "Indicator",
    "MatchStart",
    "RevealedHand",
    "Win",
    "WireEvent",
    "WonFan",
    "decode_any_tile",
    "decode_event",
    "decode_flower",
    "decode_meld",
    "decode_seat",
    "decode_tile",
    "decode_view",
    "encode_event",
    "encode_seat",
    "encode_view",
    "event",
    "format_concealed",
]

# ------------------------------------------------------------- decoding ---


def _field(d: object, key: str, where: str) -> Any:
    if type(d) is not dict and not isinstance(d, Mapping):  # (a dict: no ABC's check)
        raise InvalidWire(f"{where}: expected an object, got {d!r}")
    if key not in d:
        raise InvalidWire(f"{where}: missing field {key!r} (has {sorted(d)})")
    return d[key]


def _int(d: object, key: str, where: str) -> int:
    value = _field(d, key, where)
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidWire(f"{where}.{key}: expected an integer, got {value!r}")
    return value


def _opt_int(d: Mapping[str, Any], key: str, where: str) -> int | None:
    return None if d.get(key) is None else _int(d, key, where)


def _bool(d: object, key: str, where: str) -> bool:
    value = _field(d, key, where)
    if not isinstance(value, bool):
        raise InvalidWire(f"{where}.{key}: expected true or false, got {value!r}")
    return value


def _str(d: object, key: str, where: str) -> str:
    value = _field(d, key, where)
    if not isinstance(value, str):
        raise InvalidWire(f"{where}.{key}: expected text, got {value!r}")
    return value


def _list(d: object, key: str, where: str) -> list[Any]:
    value = _field(d, key, where)
    if not isinstance(value, list):
        raise InvalidWire(f"{where}.{key}: expected a list, got {value!r}")
    return value


def _ints(d: object, key: str, where: str, length: int | None = None) -> tuple[int, ...]:
    values = _list(d, key, where)
    if (length is not None and len(values) != length) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in values
    ):
        size = f"{length} " if length is not None else ""
        raise InvalidWire(f"{where}.{key}: expected a list of {size}integers, got {values!r}")
    return tuple(values)


def _one_of(value: str, allowed: Sequence[str], what: str) -> str:
    if value not in allowed:
        raise InvalidWire(f"{what}: expected one of {', '.join(allowed)}, got {value!r}")
    return value


def decode_tile(text: object, what: str) -> Tile:
    """A suited or honor tile, ``"5m"``, ``"E"``."""
    tile = _TILE_NAMED.get(text) if isinstance(text, str) else None
    if tile is not None:
        return tile  # as the server writes it; any other spelling is read below
    if not isinstance(text, str):
        raise InvalidWire(f"{what}: expected a tile like '5m', got {text!r}")
    try:
        tiles = parse_tiles(text)
    except ValueError as exc:
        raise InvalidWire(f"{what}: {exc}") from None
    if len(tiles) != 1 or not 0 <= tiles[0] < N_KINDS:
        raise InvalidWire(f"{what}: {text!r} is not one tile")
    return tiles[0]


def _melds_written() -> dict[str, Meld]:
    """Every meld as ``str(meld)`` writes it (``"[123m,2]"``, ``"[EEEE]"``), to itself."""
    melds = {}
    for kind in MeldKind:
        for tile in range(N_KINDS):
            if kind is MeldKind.CHOW and not (tile < 27 and tile % 9 <= 6):
                continue
            for offer in (0, 1, 2, 3) if kind is MeldKind.KONG else (1, 2, 3):
                meld = Meld(kind, tile, offer)
                melds[str(meld)] = meld
    return melds


# The wire's tiles and melds as the server writes them: read by a lookup, the rest (other
# spellings the notation accepts, and every error) by the careful readers.
_TILE_NAMED: Final = {NAMES[t]: t for t in range(N_KINDS)}
_MELD_WRITTEN: Final = _melds_written()
# A river's entry: the tile, and whether it was claimed (``*``).
_RIVER_WRITTEN: Final = {
    **{text: (t, False) for text, t in _TILE_NAMED.items()},
    **{text + CLAIMED_MARK: (t, True) for text, t in _TILE_NAMED.items()},
}
_WIND_LETTERED: Final = {wind.letter: wind for wind in Wind}


def decode_flower(text: object, what: str) -> Tile:
    if isinstance(text, str) and text in FLOWERS_BY_NAME:
        return FLOWERS_BY_NAME[text]
    raise InvalidWire(f"{what}: expected a flower 'f1'..'f8', got {text!r}")


def decode_any_tile(text: object, what: str) -> Tile:
    """A tile or a flower (``"f1"``..``"f8"``: flowers may be dealt, drawn or wild)."""
    if isinstance(text, str) and text.startswith("f"):
        return decode_flower(text, what)
    return decode_tile(text, what)


def _tiles(d: object, key: str, where: str) -> tuple[Tile, ...]:
    return tuple(
        decode_any_tile(t, f"{where}.{key}[{i}]") for i, t in enumerate(_list(d, key, where))
    )


def _flowers(d: object, key: str, where: str) -> tuple[Tile, ...]:
    return tuple(
        decode_flower(t, f"{where}.{key}[{i}]") for i, t in enumerate(_list(d, key, where))
    )


def _wind(d: object, key: str, where: str) -> Wind:
    return _wind_of(_field(d, key, where), f"{where}.{key}")


def _wind_of(text: object, what: str) -> Wind:
    wind = _WIND_LETTERED.get(text) if isinstance(text, str) else None
    if wind is not None:
        return wind
    raise InvalidWire(f"{what}: expected a wind E, S, W or N, got {text!r}")


def _dice(d: object, where: str) -> tuple[tuple[int, int], tuple[int, int]]:
    dice = _field(d, "dice", where)
    if not (
        isinstance(dice, list)
        and len(dice) == 2
        and all(
            isinstance(pair, list)
            and len(pair) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in pair)
            for pair in dice
        )
    ):
        raise InvalidWire(
            f"{where}.dice: expected two pairs of dice like [[3, 4], [2, 6]], got {dice!r}"
        )
    return (dice[0][0], dice[0][1]), (dice[1][0], dice[1][1])


def _rules(d: object, where: str) -> RuleSet:
    value = _field(d, "rules", where)
    if not isinstance(value, Mapping):
        raise InvalidWire(f"{where}.rules: expected an object, got {value!r}")
    try:
        return rule_set_from_dict(value)
    except RulesError as exc:
        raise InvalidWire(f"{where}.rules: {exc}") from None


def decode_meld(text: object, what: str = "meld") -> Meld:
    """``"[123m,1]"`` (chow, claimed tile 1st), ``"[EEE,2]"``, ``"[5555p]"`` (concealed kong)."""
    meld = _MELD_WRITTEN.get(text) if isinstance(text, str) else None
    if meld is not None:
        return meld  # as the server writes it; any other spelling is read below
    if not isinstance(text, str) or not (text.startswith("[") and text.endswith("]")):
        raise InvalidWire(f"{what}: a meld is written like '[123m,1]', got {text!r}")
    body = text[1:-1]
    offer = 0
    if "," in body:
        body, _, offer_text = body.partition(",")
        if offer_text not in ("1", "2", "3"):
            raise InvalidWire(f"{what} {text!r}: the offer must be 1, 2 or 3")
        offer = int(offer_text)
    try:
        tiles = sorted(parse_tiles(body))
    except ValueError as exc:
        raise InvalidWire(f"{what} {text!r}: {exc}") from None
    if len(tiles) == 4 and len(set(tiles)) == 1:
        kind = MeldKind.KONG
    elif len(tiles) == 3 and len(set(tiles)) == 1:
        kind = MeldKind.PUNG
    elif (
        len(tiles) == 3
        and tiles[2] < 27
        and tiles[0] // 9 == tiles[2] // 9
        and tiles == [tiles[0], tiles[0] + 1, tiles[0] + 2]
    ):
        kind = MeldKind.CHOW
    else:
        raise InvalidWire(f"{what} {text!r} is not a chow, pung or kong")
    if offer == 0 and kind is not MeldKind.KONG:
        raise InvalidWire(f"{what} {text!r}: only a concealed kong has no offer")
    try:
        return Meld(kind, tiles[0], offer)
    except ValueError as exc:
        raise InvalidWire(f"{what} {text!r}: {exc}") from None


def _melds(d: object, key: str, where: str) -> tuple[Meld, ...]:
    return tuple(decode_meld(m, f"{where}.{key}[{i}]") for i, m in enumerate(_list(d, key, where)))


def _split_concealed(text: str, what: str) -> tuple[list[Tile], list[Tile]]:
    """Concealed tiles as written: flowers held as wild tiles (``f1``..) first, then tiles."""
    flowers = []
    rest = text
    while rest.startswith("f"):
        flowers.append(decode_flower(rest[:2], what))
        rest = rest[2:]
    try:
        return flowers, parse_tiles(rest)
    except ValueError as exc:
        raise InvalidWire(f"{what} {text!r}: {exc}") from None


# ------------------------------------------------------------------ view ---


def decode_seat(
    d: object, wild_tiles: frozenset[Tile] = frozenset(), where: str = "seat"
) -> SeatView:
    """A seat from its wire form: ``"[????]"`` melds are ``hidden_kongs``, river tiles with
    ``*`` were claimed, the concealed tiles are held wild tiles first (``wild_tiles``)."""
    melds_text = _list(d, "melds", where)
    hidden = sum(1 for m in melds_text if m == HIDDEN_KONG)
    entries = _list(d, "river", where)
    river = [_RIVER_WRITTEN[e] for e in entries if isinstance(e, str) and e in _RIVER_WRITTEN]
    if len(river) < len(entries):  # a spelling of the notation's, or an error: its place said
        river = []
        for i, entry in enumerate(entries):
            claimed = isinstance(entry, str) and entry.endswith(CLAIMED_MARK)
            text = entry[:-1] if claimed else entry
            river.append((decode_tile(text, f"{where}.river[{i}]"), claimed))
    concealed: tuple[Tile, ...] | None = None
    wilds = 0
    assert isinstance(d, Mapping)
    if d.get("concealed") is not None:
        text = _str(d, "concealed", where)
        flowers, rest = _split_concealed(text, f"{where}.concealed")
        tiles = sorted(flowers + rest)
        wild = [t for t in tiles if t in wild_tiles]
        concealed, wilds = (*wild, *(t for t in tiles if t not in wild_tiles)), len(wild)
    return SeatView(
        player=_int(d, "player", where),
        wind=_wind(d, "wind", where),
        concealed_count=_int(d, "concealed_count", where),
        melds=tuple(
            decode_meld(m, f"{where}.melds[{i}]")
            for i, m in enumerate(melds_text)
            if m != HIDDEN_KONG
        ),
        hidden_kongs=hidden,
        flowers=_flowers(d, "flowers", where),
        river=tuple(river),
        concealed=concealed,
        wilds=wilds,
    )


def decode_view(d: object) -> View:
    """The engine's ``View`` from its wire form: the inverse of ``encode_view``.

    A view without ``you`` is a spectator's (``viewer`` None, nothing legal); one without
    ``rules`` is under plain MCR (``MCR`` itself: a preset that plays as MCR under another
    name is not told apart on the wire).
    """
    where = "view"
    if not isinstance(d, Mapping):
        raise InvalidWire(f"a view must be an object, got {d!r}")
    phase_text = _field(d, "phase", where)
    try:
        phase = Phase(phase_text)
    except ValueError:
        allowed = ", ".join(p.value for p in Phase)
        raise InvalidWire(f"view.phase: expected one of {allowed}, got {phase_text!r}") from None
    claim = None
    if d.get("claim") is not None:
        c = d["claim"]
        claim = ClaimView(
            decode_tile(_field(c, "tile", "view.claim"), "view.claim.tile"),
            _int(c, "from", "view.claim"),
            _one_of(_str(c, "kind", "view.claim"), ("discard", "add_kong"), "view.claim.kind"),
        )
    legal = []
    viewer = _opt_int(d, "you", where)
    if viewer is not None:
        for i, a in enumerate(_list(d, "legal", where)):
            try:
                legal.append(Action.from_dict(a))
            except MahjongError as exc:
                raise InvalidWire(f"view.legal[{i}] {a!r}: {exc}") from None
    extra: dict[str, Any] = {}
    wild_tiles: frozenset[Tile] = frozenset()
    if "rules" in d:  # any rule set but plain MCR
        extra["rules"] = _rules(d, where)
        indicator = d.get("indicator")
        wild_tiles = frozenset(_tiles(d, "wild_tiles", where))
        extra["indicator"] = (
            decode_tile(indicator, "view.indicator") if indicator is not None else None
        )
        extra["dead_flowers"] = _flowers(d, "dead_flowers", where)
        extra["wild_tiles"] = wild_tiles
    seats = _list(d, "seats", where)
    drawn = d.get("drawn")
    return View(
        viewer=viewer,
        phase=phase,
        round_wind=_wind(d, "round_wind", where),
        dealer=_int(d, "dealer", where),
        dice=_dice(d, where),
        wall_remaining=_int(d, "wall_remaining", where),
        current=_int(d, "current", where),
        seats=tuple(decode_seat(s, wild_tiles, f"view.seats[{i}]") for i, s in enumerate(seats)),
        drawn=decode_any_tile(drawn, "view.drawn") if drawn is not None else None,
        claim=claim,
        legal=tuple(legal),
        **extra,
    )


# ---------------------------------------------------------------- events ---


@dataclass(frozen=True, slots=True)
class MatchStart:
    """A hand is about to be dealt: its number and the match's scores before it."""

    KIND: ClassVar[str] = "match"
    hand_no: int
    scores: tuple[int, ...]
    repeat: int | None = None  # the dealer's repeats (rules other than plain MCR)

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"hand_no": self.hand_no, "scores": list(self.scores)}
        if self.repeat is not None:
            out["repeat"] = self.repeat
        return out

    @classmethod
    def decode(cls, d: Mapping[str, Any], where: str) -> MatchStart:
        return cls(
            _int(d, "hand_no", where), _ints(d, "scores", where, 4), _opt_int(d, "repeat", where)
        )


@dataclass(frozen=True, slots=True)
class HandStart:
    KIND: ClassVar[str] = "hand_start"
    dealer: int
    round_wind: Wind
    seat_winds: tuple[Wind, ...]  # by player
    dice: tuple[tuple[int, int], tuple[int, int]]
    rules: RuleSet | None = None  # rules other than plain MCR

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "dealer": self.dealer,
            "round_wind": self.round_wind.letter,
            "seat_winds": [w.letter for w in self.seat_winds],
            "dice": [list(self.dice[0]), list(self.dice[1])],
        }
        if self.rules is not None:
            out["rules"] = self.rules.to_dict()
        return out

    @classmethod
    def decode(cls, d: Mapping[str, Any], where: str) -> HandStart:
        winds = _list(d, "seat_winds", where)
        return cls(
            _int(d, "dealer", where),
            _wind(d, "round_wind", where),
            tuple(_wind_of(w, f"{where}.seat_winds[{i}]") for i, w in enumerate(winds)),
            _dice(d, where),
            _rules(d, where) if "rules" in d else None,
        )


@dataclass(frozen=True, slots=True)
class Deal:
    """A player's dealt tiles: ``tiles`` to that player (flowers included), ``count`` to the
    others."""

    KIND: ClassVar[str] = "deal"
    player: int
    tiles: tuple[Tile, ...] | None = None
    count: int | None = None

    def data(self) -> dict[str, Any]:
        if self.tiles is not None:
            return {"player": self.player, "tiles": [name(t) for t in self.tiles]}
        return {"player": self.player, "count": self.count}

    @classmethod
    def decode(cls, d: Mapping[str, Any], where: str) -> Deal:
        if "tiles" in d:
            return cls(_int(d, "player", where), tiles=_tiles(d, "tiles", where))
        return cls(_int(d, "player", where), count=_int(d, "count", where))


@dataclass(frozen=True, slots=True)
class Indicator:
    """The tile turned up after the deal (wild-tile options), the flowers turned up before
    it (set aside, dead) and the wild tiles it names."""

    KIND: ClassVar[str] = "indicator"
    tile: Tile
    flowers: tuple[Tile, ...]
    wild: tuple[Tile, ...]

    def data(self) -> dict[str, Any]:
        return {
            "tile": name(self.tile),
            "flowers": [name(t) for t in self.flowers],
            "wild": [name(t) for t in self.wild],
        }

    @classmethod
    def decode(cls, d: Mapping[str, Any], where: str) -> Indicator:
        return cls(
            decode_tile(_field(d, "tile", where), f"{where}.tile"),
            _flowers(d, "flowers", where),
            _tiles(d, "wild", where),
        )


@dataclass(frozen=True, slots=True)
class Flower:
    """A flower set aside (a replacement ``draw`` from the tail follows)."""

    KIND: ClassVar[str] = "flower"
    player: int
    flower: Tile

    def data(self) -> dict[str, Any]:
        return {"player": self.player, "flower": name(self.flower)}

    @classmethod
    def decode(cls, d: Mapping[str, Any], where: str) -> Flower:
        return cls(
            _int(d, "player", where), decode_flower(_field(d, "flower", where), f"{where}.flower")
        )


DRAW_SOURCES = ("wall", "kong", "flower")


@dataclass(frozen=True, slots=True)
class Draw:
    """A draw: ``tile`` to its player only, the ``source`` to all."""

    KIND: ClassVar[str] = "draw"
    player: int
    source: str  # wall, kong (a kong's replacement), flower (a flower's replacement)
    tile: Tile | None = None

    def data(self) -> dict[str, Any]:
        return self.fields(self.player, self.source, self.tile)

    @staticmethod
    def fields(player: int, source: str, tile: Tile | None = None) -> dict[str, Any]:
        """``data`` without building the instance: the table's hot path (every turn)."""
        if tile is None:
            return {"player": player, "source": source}
        return {"player": player, "tile": name(tile), "source": source}

    @classmethod
    def decode(cls, d: Mapping[str, Any], where: str) -> Draw:
        tile = d.get("tile")
        return cls(
            _int(d, "player", where),
            _one_of(_str(d, "source", where), DRAW_SOURCES, f"{where}.source"),
            decode_any_tile(tile, f"{where}.tile") if "tile" in d else None,
        )


@dataclass(frozen=True, slots=True)
class Discard:
    KIND: ClassVar[str] = "discard"
    player: int
    tile: Tile  # a flower when a wild flower is all a player has left

    def data(self) -> dict[str, Any]:
        return self.fields(self.player, self.tile)

    @staticmethod
    def fields(player: int, tile: Tile) -> dict[str, Any]:
        """``data`` without building the instance: the table's hot path (every turn)."""
        return {"player": player, "tile": name(tile)}

    @classmethod
    def decode(cls, d: Mapping[str, Any], where: str) -> Discard:
        return cls(
            _int(d, "player", where), decode_any_tile(_field(d, "tile", where), f"{where}.tile")
        )


CLAIM_TYPES = (ActionKind.CHOW.value, ActionKind.PUNG.value, ActionKind.KONG.value)


@dataclass(frozen=True, slots=True)
class Claim:
    """A chow, pung or kong claimed on ``source``'s discard ``tile``, forming ``meld``."""

    KIND: ClassVar[str] = "claim"
    player: int
    type: ActionKind
    tile: Tile
    source: int  # ``from`` on the wire: the discarder
    meld: Meld

    def data(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "type": self.type.value,
            "tile": name(self.tile),
            "from": self.source,
            "meld": str(self.meld),
        }

    @classmethod
    def decode(cls, d: Mapping[str, Any], where: str) -> Claim:
        return cls(
            _int(d, "player", where),
            ActionKind(_one_of(_str(d, "type", where), CLAIM_TYPES, f"{where}.type")),
            decode_tile(_field(d, "tile", where), f"{where}.tile"),
            _int(d, "from", where),
            decode_meld(_field(d, "meld", where), f"{where}.meld"),
        )


@dataclass(frozen=True, slots=True)
class ConcealedKong:
    """A concealed kong: its ``tile`` to its player only."""

    KIND: ClassVar[str] = "concealed_kong"
    player: int
    tile: Tile | None = None

    def data(self) -> dict[str, Any]:
        if self.tile is None:
            return {"player": self.player}
        return {"player": self.player, "tile": name(self.tile)}

    @classmethod
    def decode(cls, d: Mapping[str, Any], where: str) -> ConcealedKong:
        tile = decode_tile(d["tile"], f"{where}.tile") if "tile" in d else None
        return cls(_int(d, "player", where), tile)


@dataclass(frozen=True, slots=True)
class AddKong:
    """A fourth tile added to an exposed pung (others may then rob it)."""

    KIND: ClassVar[str] = "add_kong"
    player: int
    tile: Tile

    def data(self) -> dict[str, Any]:
        return {"player": self.player, "tile": name(self.tile)}

    @classmethod
    def decode(cls, d: Mapping[str, Any], where: str) -> AddKong:
        return cls(_int(d, "player", where), decode_tile(_field(d, "tile", where), f"{where}.tile"))


@dataclass(frozen=True, slots=True)
class HeadBump:
    """Several players won on one tile: ``winner`` (first in turn order) takes it (截和)."""

    KIND: ClassVar[str] = "head_bump"
    winner: int
    others: tuple[int, ...]

    def data(self) -> dict[str, Any]:
        return {"winner": self.winner, "others": list(self.others)}

    @classmethod
    def decode(cls, d: Mapping[str, Any], where: str) -> HeadBump:
        return cls(_int(d, "winner", where), _ints(d, "others", where))


@dataclass(frozen=True, slots=True)
class WonFan:
    """One fan of a win: ``points`` for one, ``count`` times."""

    name: str
    name_zh: str
    points: int
    count: int

    def data(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "name_zh": self.name_zh,
            "points": self.points,
            "count": self.count,
        }

    @classmethod
    def decode(cls, d: object, where: str) -> WonFan:
        return cls(
            _str(d, "name", where),
            _str(d, "name_zh", where),
            _int(d, "points", where),
            _int(d, "count", where),
        )


@dataclass(frozen=True, slots=True)
class Win:
    """A win: the fields of ``Score.to_dict`` (``total``, ``meets_minimum``, ``fans``)
    between the hand and the payments."""

    KIND: ClassVar[str] = "win"
    winner: int
    discarder: int | None  # None when self-drawn; the kong's owner when it was robbed
    tile: Tile  # ``WILD`` when the winning tile was itself a wild tile
    hand: str  # the winning hand in the notation, winning tile last
    total: int
    meets_minimum: bool
    fans: tuple[WonFan, ...]
    deltas: tuple[int, ...]  # by player

    def data(self) -> dict[str, Any]:
        return {
            "winner": self.winner,
            "discarder": self.discarder,
            "tile": name(self.tile),
            "hand": self.hand,
            "total": self.total,
            "meets_minimum": self.meets_minimum,
            "fans": [f.data() for f in self.fans],
            "deltas": list(self.deltas),
        }

    @classmethod
    def decode(cls, d: Mapping[str, Any], where: str) -> Win:
        _field(d, "discarder", where)
        tile = _field(d, "tile", where)
        return cls(
            _int(d, "winner", where),
            _opt_int(d, "discarder", where),
            WILD if tile == name(WILD) else decode_tile(tile, f"{where}.tile"),
            _str(d, "hand", where),
            _int(d, "total", where),
            _bool(d, "meets_minimum", where),
            tuple(
                WonFan.decode(f, f"{where}.fans[{i}]")
                for i, f in enumerate(_list(d, "fans", where))
            ),
            _ints(d, "deltas", where, 4),
        )


@dataclass(frozen=True, slots=True)
class Exhausted:
    """The wall ran out: a drawn hand, nobody pays."""

    KIND: ClassVar[str] = "exhausted"

    def data(self) -> dict[str, Any]:
        return {}

    @classmethod
    def decode(cls, d: Mapping[str, Any], where: str) -> Exhausted:
        return cls()


@dataclass(frozen=True, slots=True)
class RevealedHand:
    """One player's tiles at the end of a hand (concealed kongs shown)."""

    concealed: str  # in the notation, held wild tiles first (as ``SeatView.concealed``)
    melds: tuple[Meld, ...]

    def data(self) -> dict[str, Any]:
        return {"concealed": self.concealed, "melds": [str(m) for m in self.melds]}

    @classmethod
    def decode(cls, d: object, where: str) -> RevealedHand:
        concealed = _str(d, "concealed", where)
        _split_concealed(concealed, f"{where}.concealed")  # checked, kept as written
        return cls(concealed, _melds(d, "melds", where))


@dataclass(frozen=True, slots=True)
class HandEnd:
    """The last event of a hand: every player's tiles, by player."""

    KIND: ClassVar[str] = "hand_end"
    hands: tuple[RevealedHand, ...]

    def data(self) -> dict[str, Any]:
        return {"hands": [h.data() for h in self.hands]}

    @classmethod
    def decode(cls, d: Mapping[str, Any], where: str) -> HandEnd:
        hands = _list(d, "hands", where)
        return cls(
            tuple(RevealedHand.decode(h, f"{where}.hands[{i}]") for i, h in enumerate(hands))
        )


WireEvent = (
    MatchStart
    | HandStart
    | Deal
    | Indicator
    | Flower
    | Draw
    | Discard
    | Claim
    | ConcealedKong
    | AddKong
    | HeadBump
    | Win
    | Exhausted
    | HandEnd
)

EVENT_TYPES: dict[str, type[WireEvent]] = {
    t.KIND: t
    for t in (
        MatchStart,
        HandStart,
        Deal,
        Indicator,
        Flower,
        Draw,
        Discard,
        Claim,
        ConcealedKong,
        AddKong,
        HeadBump,
        Win,
        Exhausted,
        HandEnd,
    )
}
EVENT_KINDS = tuple(EVENT_TYPES)


def event(typed: WireEvent, *, to: int | None = None, hide: int | None = None) -> Event:
    """The engine's ``Event`` of ``typed`` (its audience: ``to``, ``hide``, as ``Event``)."""
    return Event(typed.KIND, typed.data(), to, hide)


def encode_event(typed: WireEvent) -> dict[str, Any]:
    """An event as the server sends it in ``update.payload.events``."""
    return {"kind": typed.KIND, **typed.data()}


def decode_event(d: object) -> WireEvent:
    """An event from its wire form: the inverse of ``encode_event``."""
    kind = _field(d, "kind", "event")
    assert isinstance(d, Mapping)
    if kind not in EVENT_TYPES:
        raise InvalidWire(f"event.kind: expected one of {', '.join(EVENT_KINDS)}, got {kind!r}")
    typed = EVENT_TYPES[kind].decode(d, f"event {kind}")
    extra = set(d) - {"kind"} - set(typed.data())
    if extra:
        raise InvalidWire(f"event {kind}: unknown field(s) {sorted(extra)}")
    return typed

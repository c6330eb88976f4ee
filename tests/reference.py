"""The reference fan calculator, PyMahjongGB, behind the same shape as ours.

PyMahjongGB (pip ``pymahjonggb``, imported as ``MahjongGB``) binds the C++ calculator of
ChineseOfficialMahjongHelper. It is a test-only dependency: the differential tests and the
benchmark compare guobiao's ``engine.scoring.score`` with it.

Both sides are reduced to a ``Result``: the total (flowers included) and the sorted list of
``(English name, points per fan, count)``. ``reference_score`` and ``our_score`` raise
``engine.errors.NotWinning`` for a hand that is not a win, so the two can be compared on
failures too.

Conventions of the reference, found by reading its binding and by experiment (the tests in
``tests/engine/test_reference.py`` keep them checked):

- Tile codes: ``W1..W9`` characters (our ``1m..9m``), ``B1..B9`` dots (``1p..9p``),
  ``T1..T9`` bamboo (``1s..9s``), ``F1..F4`` winds E S W N, ``J1..J3`` dragons C F P.
- A pack is ``("CHI" | "PENG" | "GANG", tile, offer)``. For a chow the tile is the **middle**
  tile (``[123m]`` is ``("CHI", "W2", k)``); the offer of a chow says which of its tiles was
  claimed, that of a pung or kong who gave it; offer 0 means concealed. The reference only
  tests ``offer != 0`` (exposed or not), so the exact offer never changes its result.
- It does **not** validate packs: a chow given its lowest tile as "middle" silently becomes
  another chow (or a chow 0-1-2 off the edge of the suit), and a fifth copy of a tile across
  packs is not refused (two kongs of one tile score Tile Hog x254). Only well-formed
  ``engine.hand.Hand`` objects are passed to it here, which cannot hold either.
- It corrects the situation flags against the tiles: Last Tile (``is4thTile``) is dropped
  when the standing tiles hold another copy of the winning tile and forced when the packs
  hold three; the kong flag is dropped when self-drawn without a kong pack, and on a discard
  (Robbing the Kong) when the winning tile is in a pack or twice in the standing tiles.
  Robbing the Kong then also removes Last Tile. ``handgen`` only produces consistent flags.
- Flowers come back as a ``Flower Tiles`` entry worth 1 with ``count = flowers`` and are
  included in the total.
- Errors are ``TypeError`` with a code as message: ``ERROR_NOT_WIN``,
  ``ERROR_WRONG_TILES_COUNT``, ``ERROR_TILE_COUNT_GREATER_THAN_4`` (and misspelled
  ``ERROE_WRONG_TILE_CODE`` etc. for bad input).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from MahjongGB import MahjongFanCalculator

from engine.errors import InvalidHand, NotWinning
from engine.hand import Hand, Meld, MeldKind
from engine.notation import format_hand
from engine.scoring import Score, WinContext, score
from engine.tiles import EAST, RED, Tile, Wind

FanRow = tuple[str, int, int]  # (English name, points per fan, count)


@dataclass(frozen=True, slots=True)
class Result:
    """A calculator's answer in a comparable form."""

    total: int
    fans: tuple[FanRow, ...]  # sorted

    def as_json(self) -> dict[str, Any]:
        return {"total": self.total, "fans": [list(row) for row in self.fans]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Result:
        return cls(data["total"], tuple(sorted((n, p, c) for n, p, c in data["fans"])))

    def __str__(self) -> str:
        rows = ", ".join(f"{n} {p}" + (f"x{c}" if c != 1 else "") for n, p, c in self.fans)
        return f"{self.total}: {rows}"


def tile_code(tile: Tile) -> str:
    """Our tile int -> the reference's tile code (``5m`` -> ``W5``, ``E`` -> ``F1``)."""
    if tile < EAST:
        return "WBT"[tile // 9] + str(tile % 9 + 1)
    if tile < RED:
        return f"F{tile - EAST + 1}"
    return f"J{tile - RED + 1}"


def pack(meld: Meld) -> tuple[str, str, int]:
    if meld.kind is MeldKind.CHOW:
        return ("CHI", tile_code(meld.tile + 1), meld.offer)  # the middle tile
    if meld.kind is MeldKind.PUNG:
        return ("PENG", tile_code(meld.tile), meld.offer)
    return ("GANG", tile_code(meld.tile), meld.offer)  # offer 0 = concealed kong


def reference_args(hand: Hand, ctx: WinContext) -> dict[str, Any]:
    """The keyword arguments of ``MahjongFanCalculator`` for ``hand`` won in ``ctx``."""
    return {
        "pack": tuple(pack(m) for m in hand.melds),
        "hand": tuple(tile_code(t) for t in hand.standing),
        "winTile": tile_code(hand.win_tile),
        "flowerCount": ctx.flowers,
        "isSelfDrawn": ctx.self_drawn,
        "is4thTile": ctx.last_of_kind,
        "isAboutKong": ctx.kong,
        "isWallLast": ctx.wall_last,
        "seatWind": int(ctx.seat_wind),
        "prevalentWind": int(ctx.round_wind),
        "verbose": True,
    }


def call_reference(args: dict[str, Any]) -> Result:
    """Run the reference on prepared ``reference_args`` (the benchmark times this)."""
    try:
        rows = MahjongFanCalculator(**args)
    except TypeError as exc:
        code = str(exc)
        if code == "ERROR_NOT_WIN":
            raise NotWinning(f"the reference says {code}") from None
        if code.startswith(("ERROR_", "ERROE_")):
            raise InvalidHand(f"the reference says {code}") from None
        raise  # a real TypeError: the arguments were built wrong
    fans = tuple(sorted((en, points, count) for points, count, _zh, en in rows))
    return Result(sum(p * c for _, p, c in fans), fans)


DISCARD_WIN = WinContext()  # won on a discard, East seat and round, no flowers


def reference_score(hand: Hand, ctx: WinContext = DISCARD_WIN) -> Result:
    """PyMahjongGB's score of ``hand`` won in ``ctx``; raises ``NotWinning`` like ours."""
    return call_reference(reference_args(hand, ctx))


def our_score(hand: Hand, ctx: WinContext = DISCARD_WIN) -> Result:
    """guobiao's score in the same shape as ``reference_score``."""
    return as_result(score(hand, ctx))


def as_result(result: Score) -> Result:
    """Our ``Score`` in the comparable shape (``meets_minimum`` left out)."""
    fans = tuple(sorted((fc.fan.en, fc.fan.points, fc.count) for fc in result.fans))
    return Result(result.total, fans)


def describe(hand: Hand, ctx: WinContext) -> str:
    """One line for a failure message: the hand in notation and its situation."""
    flags = [
        name
        for name, on in (
            ("self_drawn", ctx.self_drawn),
            ("last_of_kind", ctx.last_of_kind),
            ("kong", ctx.kong),
            ("wall_last", ctx.wall_last),
        )
        if on
    ]
    return (
        f"{format_hand(hand)}  {' '.join(flags) or 'discard'}  "
        f"seat={ctx.seat_wind.letter} round={ctx.round_wind.letter} flowers={ctx.flowers}"
    )


def context_json(ctx: WinContext) -> dict[str, Any]:
    """``ctx`` as in the ``guobiao fan --jsonl`` request form (winds as letters)."""
    return {
        "self_drawn": ctx.self_drawn,
        "last_of_kind": ctx.last_of_kind,
        "kong": ctx.kong,
        "wall_last": ctx.wall_last,
        "round_wind": ctx.round_wind.letter,
        "seat_wind": ctx.seat_wind.letter,
        "flowers": ctx.flowers,
    }


def context_from_json(data: dict[str, Any]) -> WinContext:
    return WinContext(
        self_drawn=bool(data.get("self_drawn", False)),
        last_of_kind=bool(data.get("last_of_kind", False)),
        kong=bool(data.get("kong", False)),
        wall_last=bool(data.get("wall_last", False)),
        seat_wind=Wind.parse(str(data.get("seat_wind", "E"))),
        round_wind=Wind.parse(str(data.get("round_wind", "E"))),
        flowers=int(data.get("flowers", 0)),
    )

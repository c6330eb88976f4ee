"""The calculator's input beside the tiles (``WinContext``) and its result (``Score``)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.copyable import copyable
from engine.errors import InvalidHand
from engine.fans import Fan
from engine.hand import Hand
from engine.tiles import (
    Wind,
)

# ------------------------------------------------------------------ input ---


@dataclass(frozen=True, slots=True)
class WinContext:
    """How and where the hand was won: everything but the tiles."""

    self_drawn: bool = False  # 自摸
    last_of_kind: bool = False  # 和绝张: the other three copies were visible
    kong: bool = False  # 杠上开花 when self-drawn, 抢杠和 when on a discard
    wall_last: bool = False  # 妙手回春 when self-drawn, 海底捞月 when on a discard
    seat_wind: Wind = Wind.EAST
    round_wind: Wind = Wind.EAST
    flowers: int = 0
    # Scored only by a rule set with ``extra_fans`` (document 000, the fans marked *):
    heavenly: bool = False  # 天和: the dealer won on the initial 14 tiles
    earthly: bool = False  # 地和: won on the dealer's first discard
    human: bool = False  # 人和: a non-dealer won before its first discard, no claim made yet
    seat_flowers: int = 0  # 季花: how many of the ``flowers`` are the winner's seat's (0..2)

    def __post_init__(self) -> None:
        if not 0 <= self.flowers <= 8:
            raise InvalidHand(f"flowers must be 0..8, got {self.flowers!r}")
        if not 0 <= self.seat_flowers <= min(2, self.flowers):
            raise InvalidHand(
                f"seat_flowers must be 0..2 and at most flowers ({self.flowers}), "
                f"got {self.seat_flowers!r}"
            )
        if self.kong and self.wall_last and not self.self_drawn:
            # Robbing a kong (kong on a discard) is never on the wall's last tile: a kong is
            # declared only with a tile left to replace it (ruling T6).
            raise InvalidHand(
                "kong and wall_last cannot both be set on a discard: robbing (抢杠和) is never "
                "on the wall's last tile, as kongs are declared only while a tile is left to "
                "replace them"
            )
        if self.heavenly + self.earthly + self.human > 1:
            raise InvalidHand("at most one of heavenly, earthly and human can be set")
        # Rulings T3, W12: 天和 is the dealer's (East's) self-draw on its dealt tiles, no kong
        # declared; 地和 a non-dealer's win on the dealer's first discard; 人和 a non-dealer's.
        dealer = self.seat_wind is Wind.EAST
        if self.heavenly and not (self.self_drawn and dealer and not self.kong):
            raise InvalidHand(
                "heavenly is the dealer's win on its dealt tiles: it needs self_drawn and "
                f"seat_wind E, and no kong (got self_drawn={self.self_drawn}, seat_wind "
                f"{self.seat_wind.letter}, kong={self.kong})"
            )
        if self.earthly and (self.self_drawn or dealer or self.kong):
            raise InvalidHand(
                "earthly is a non-dealer's win on the dealer's first discard: it needs a "
                f"seat_wind other than E, and neither self_drawn nor kong (got self_drawn="
                f"{self.self_drawn}, seat_wind {self.seat_wind.letter}, kong={self.kong})"
            )
        if self.human and dealer:
            raise InvalidHand("human is a non-dealer's win: it needs a seat_wind other than E")


def check_situation(hand: Hand, ctx: WinContext) -> None:
    """``InvalidHand`` if ``hand`` cannot have been won as ``ctx`` says (rulings T3, W12),
    which ``WinContext`` alone cannot tell: 天和 is won on the dealer's dealt tiles and 地和 on
    the dealer's first discard, both before the winner made any meld, a concealed kong
    included (a kong's replacement is no dealt tile, and a non-dealer has had no turn); 人和
    before anyone claimed, so with no exposed meld, and a concealed kong declared on one's
    first turn is followed by a discard unless the replacement drawn for it wins: only a
    self-drawn win on the replacement (``kong``) is 人和 with one."""
    if not hand.melds or not (ctx.heavenly or ctx.earthly or ctx.human):
        return
    meld = hand.melds[0]
    if ctx.heavenly or ctx.earthly:
        situation = (
            "heavenly is the dealer's win on its dealt tiles"
            if ctx.heavenly
            else "earthly is a win on the dealer's first discard"
        )
        raise InvalidHand(
            f"{situation}, before any meld of the winner's: the hand holds none, concealed or "
            f"exposed, got {meld}"
        )
    exposed = [m for m in hand.melds if not m.concealed]
    if exposed:
        raise InvalidHand(
            "human is a win before anyone claimed: the hand holds no exposed meld, got "
            f"{exposed[0]}"
        )
    if not (ctx.self_drawn and ctx.kong):
        raise InvalidHand(
            f"human with the concealed {meld} can only be won on its replacement tile: it "
            f"needs self_drawn and kong (got self_drawn={ctx.self_drawn}, kong={ctx.kong})"
        )


@dataclass(frozen=True, slots=True)
class FanCount:
    fan: Fan
    count: int = 1

    @property
    def points(self) -> int:
        """Points of this entry (the fan's value times its count)."""
        return self.fan.points * self.count

    def to_dict(self) -> dict[str, object]:
        """The JSON form of an entry of ``Score.to_dict`` (``points`` is per fan)."""
        return {
            "name": self.fan.en,
            "name_zh": self.fan.zh,
            "points": self.fan.points,
            "count": self.count,
        }


@dataclass(frozen=True, slots=True, init=False)
class Score:
    fans: tuple[FanCount, ...]  # in rule-book order
    total: int  # flowers included
    meets_minimum: bool  # the rule set's minimum, flowers not counted

    def __init__(self, fans: tuple[FanCount, ...], total: int, meets_minimum: bool) -> None:
        # Written out (``init=False``): compiled, it is native code, where the ``__init__``
        # that ``dataclasses`` writes runs as Python (a score is made for every hand).
        object.__setattr__(self, "fans", fans)
        object.__setattr__(self, "total", total)
        object.__setattr__(self, "meets_minimum", meets_minimum)

    def to_dict(self) -> dict[str, object]:
        """The JSON form of ``guobiao fan --jsonl`` (``points`` is per fan, times ``count``)."""
        return {
            "total": self.total,
            "meets_minimum": self.meets_minimum,
            "fans": [fc.to_dict() for fc in self.fans],
        }


copyable(WinContext, FanCount, Score)

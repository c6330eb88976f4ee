"""Melds and hands: what a player holds (副露 and 立牌).

A ``Hand`` is a winning hand as the fan calculator takes it: the exposed or
concealed-kong melds, the standing tiles, and the winning tile apart. Tiles are
small ints (see ``engine.tiles``). Under a rule set with wild tiles the
standing tiles and the winning tile may be ``WILD`` (``*``): a tile that stands
for any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from engine.copyable import copyable
from engine.errors import InvalidHand
from engine.tiles import N_KINDS, WILD, Counts, Tile, counts_of, is_suited, name

MAX_WILDS: Final = 8  # the eight flowers, when flowers are wild
_HAND_TILES: Final = frozenset((*range(N_KINDS), WILD))  # what a hand's standing tiles may be


class MeldKind(IntEnum):
    CHOW = 0  # 吃 / 顺子
    PUNG = 1  # 碰 / 刻子
    KONG = 2  # 杠


@dataclass(frozen=True, slots=True)
class Meld:
    """A declared set: a chow, a pung or a kong.

    ``tile`` is the lowest tile of a chow, the tile of a pung or kong.
    ``offer`` says where the claimed tile came from, as in the notation: for a
    pung or kong 1 = previous player (上家), 2 = opposite (对家), 3 = next
    (下家); for a chow, which of its three tiles was claimed (1..3, always from
    the previous player). ``offer == 0`` marks a concealed kong (暗杠), the only
    meld that is not exposed.
    """

    kind: MeldKind
    tile: Tile
    offer: int = 1

    def __post_init__(self) -> None:
        if not 0 <= self.tile < N_KINDS:
            raise InvalidHand(f"meld tile {self.tile!r} is not a tile kind 0..33")
        if self.kind is MeldKind.CHOW and not (is_suited(self.tile) and self.tile % 9 <= 6):
            raise InvalidHand(f"a chow cannot start at {name(self.tile)}")
        if not 0 <= self.offer <= 3:
            raise InvalidHand(f"meld offer {self.offer!r} is not 0..3")
        if self.offer == 0 and self.kind is not MeldKind.KONG:
            raise InvalidHand("only a kong can be concealed (offer 0)")

    @property
    def concealed(self) -> bool:
        """A concealed kong (暗杠): four tiles drawn by the player, shown face down."""
        return self.offer == 0

    @property
    def tiles(self) -> tuple[Tile, ...]:
        if self.kind is MeldKind.CHOW:
            return (self.tile, self.tile + 1, self.tile + 2)
        return (self.tile,) * (4 if self.kind is MeldKind.KONG else 3)

    def __str__(self) -> str:
        body = "".join(name(t)[0] for t in self.tiles)
        if is_suited(self.tile):
            body += name(self.tile)[1]
        return f"[{body}]" if self.concealed else f"[{body},{self.offer}]"


_CHOW: Final = MeldKind.CHOW
_KONG: Final = MeldKind.KONG


@dataclass(frozen=True, slots=True, init=False)
class Hand:
    """A complete hand: melds, standing tiles (sorted, without the winning tile), winning tile."""

    melds: tuple[Meld, ...]
    standing: tuple[Tile, ...]
    win_tile: Tile

    def __init__(self, melds: tuple[Meld, ...], standing: tuple[Tile, ...], win_tile: Tile) -> None:
        # Written out (``init=False``): compiled, it is native code, where the ``__init__``
        # that ``dataclasses`` writes runs as Python (and the parser makes a hand a line).
        object.__setattr__(self, "melds", melds)
        object.__setattr__(self, "standing", standing)
        object.__setattr__(self, "win_tile", win_tile)
        try:
            plain = len(melds) <= 4 and len(standing) == 13 - 3 * len(melds)
            plain = plain and self._plainly_valid()
        except TypeError:  # something other than tiles: ``_check`` says what
            plain = False
        if not plain:
            self._check()

    def _plainly_valid(self) -> bool:
        """The checks of ``_check`` in one pass over the tiles, saying no error (True) or that
        there may be one (False: ``_check`` then says which, in its order)."""
        counts = [0] * N_KINDS
        wilds = 0
        for tile in (*self.standing, self.win_tile):
            if tile == WILD:
                wilds += 1
                continue
            if not 0 <= tile < N_KINDS:
                return False
            n = counts[tile] + 1
            if n > 4:
                return False
            counts[tile] = n
        if wilds > MAX_WILDS:
            return False
        for meld in self.melds:
            tile = meld.tile
            if meld.kind is _CHOW:
                a, b, c = counts[tile] + 1, counts[tile + 1] + 1, counts[tile + 2] + 1
                if a > 4 or b > 4 or c > 4:
                    return False
                counts[tile], counts[tile + 1], counts[tile + 2] = a, b, c
            else:
                n = counts[tile] + (4 if meld.kind is _KONG else 3)
                if n > 4:
                    return False
                counts[tile] = n
        return True

    def _check(self) -> None:
        """Raise ``InvalidHand`` saying what is wrong with the hand, the first thing found."""
        melds, standing, win = self.melds, self.standing, self.win_tile
        if len(melds) > 4:
            raise InvalidHand(f"a hand has at most 4 melds, got {len(melds)}")
        expected = 13 - 3 * len(melds)
        if len(standing) != expected:
            raise InvalidHand(
                f"with {len(melds)} meld(s) a hand has {expected} standing tiles "
                f"plus the winning tile, got {len(standing)} plus the winning tile"
            )
        if win not in _HAND_TILES or not _HAND_TILES.issuperset(standing):
            tile = next(t for t in (*standing, win) if t not in _HAND_TILES)
            raise InvalidHand(f"{tile!r} is not a tile kind 0..33 (flowers are not part of a hand)")
        if self.wilds > MAX_WILDS:
            raise InvalidHand(f"a hand holds at most {MAX_WILDS} wild tiles, got {self.wilds}")
        counts = self.all_counts()
        if max(counts) > 4:
            tile = next(t for t, n in enumerate(counts) if n > 4)
            raise InvalidHand(
                f"{name(tile)} appears {counts[tile]} times; there are only 4 of each tile"
            )

    def concealed_counts(self) -> Counts:
        """Counts of the standing tiles including the winning tile, wild tiles left out."""
        counts = counts_of(self.standing)
        if self.win_tile != WILD:
            counts[self.win_tile] += 1
        return counts

    @property
    def wilds(self) -> int:
        """How many wild tiles the hand holds, the winning tile included."""
        return self.standing.count(WILD) + (self.win_tile == WILD)

    def all_counts(self) -> Counts:
        """Counts of every tile in the hand, melds included (a kong counts 4)."""
        counts = [0] * N_KINDS
        for tile in self.standing:
            if tile != WILD:
                counts[tile] += 1
        if self.win_tile != WILD:
            counts[self.win_tile] += 1
        for meld in self.melds:
            tile = meld.tile
            if meld.kind is MeldKind.CHOW:
                counts[tile] += 1
                counts[tile + 1] += 1
                counts[tile + 2] += 1
            else:
                counts[tile] += 4 if meld.kind is MeldKind.KONG else 3
        return counts

    @property
    def is_concealed(self) -> bool:
        """No exposed meld (门清): concealed kongs do not break it."""
        return all(meld.concealed for meld in self.melds)


copyable(Meld, Hand)

"""Tiles as small ints (牌).

The 34 kinds of playing tile are the ints 0..33, in the order of the usual
notation: characters 万 ``1m..9m`` (0..8), dots 饼 ``1p..9p`` (9..17), bamboo 条
``1s..9s`` (18..26), winds 风 ``E S W N`` (27..30) and dragons 箭 ``C F P``
(31..33: red 中, green 发, white 白). The eight flowers 花 (春夏秋冬 梅兰竹菊) are
34..41. A hand is usually held as a 34-slot count array (``Counts``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import IntEnum
from itertools import compress, repeat
from typing import Final

Tile = int
Counts = list[int]

N_KINDS: Final = 34
N_FLOWERS: Final = 8

MAN: Final = 0  # characters 万, 1m = 0
PIN: Final = 9  # dots 饼, 1p = 9
SOU: Final = 18  # bamboo 条, 1s = 18
EAST: Final = 27
SOUTH: Final = 28
WEST: Final = 29
NORTH: Final = 30
RED: Final = 31  # 中
GREEN: Final = 32  # 发
WHITE: Final = 33  # 白
FIRST_FLOWER: Final = 34
# A wild tile (财神) in a hand given to the calculator: it stands for any tile.
# At the table the wild tiles are real tiles (the indicated kind, or flowers);
# the table hands them to the calculator as WILD. Written ``*`` in the notation.
WILD: Final = 42

SUIT_LETTERS: Final = "mps"
HONOR_LETTERS: Final = "ESWNCFP"
FLOWER_NAMES: Final = (
    "Spring",
    "Summer",
    "Autumn",
    "Winter",
    "Plum",
    "Orchid",
    "Chrysanthemum",
    "Bamboo",
)
FLOWER_NAMES_ZH: Final = "春夏秋冬梅兰竹菊"


class Wind(IntEnum):
    """Seat and prevalent winds (门风, 圈风)."""

    EAST = 0
    SOUTH = 1
    WEST = 2
    NORTH = 3

    @property
    def tile(self) -> Tile:
        return EAST + self.value

    @property
    def letter(self) -> str:
        return HONOR_LETTERS[self.value]

    @classmethod
    def parse(cls, text: str) -> Wind:
        """``"E"``/``"east"``/``"0"`` -> ``Wind.EAST`` (and so on)."""
        key = text.strip().upper()
        for wind in cls:
            if key in (wind.letter, wind.name, str(wind.value)):
                return wind
        raise ValueError(f"unknown wind {text!r}: expected one of E, S, W, N")


def suit(tile: Tile) -> int:
    """0 characters, 1 dots, 2 bamboo, 3 honors."""
    return tile // 9 if tile < EAST else 3


def rank(tile: Tile) -> int:
    """1..9 for a suited tile, 1..7 for an honor (E S W N C F P)."""
    return tile % 9 + 1 if tile < EAST else tile - EAST + 1


def is_suited(tile: Tile) -> bool:
    return tile < EAST


def is_honor(tile: Tile) -> bool:
    return EAST <= tile < FIRST_FLOWER


def is_wind(tile: Tile) -> bool:
    return EAST <= tile <= NORTH


def is_dragon(tile: Tile) -> bool:
    return RED <= tile <= WHITE


def is_terminal(tile: Tile) -> bool:
    """A suited 1 or 9 (幺九 without the honors)."""
    return tile < EAST and tile % 9 in (0, 8)


def is_terminal_or_honor(tile: Tile) -> bool:
    return tile >= EAST or tile % 9 in (0, 8)


def is_flower(tile: Tile) -> bool:
    return FIRST_FLOWER <= tile < FIRST_FLOWER + N_FLOWERS


def make(suit_index: int, rank_value: int) -> Tile:
    """The tile of ``rank_value`` (1..9) in suit 0..2, or honor 1..7 when ``suit_index`` is 3."""
    return EAST + rank_value - 1 if suit_index == 3 else suit_index * 9 + rank_value - 1


def _name(tile: Tile) -> str:
    if tile < EAST:
        return f"{tile % 9 + 1}{SUIT_LETTERS[tile // 9]}"
    if tile < FIRST_FLOWER:
        return HONOR_LETTERS[tile - EAST]
    return f"f{tile - FIRST_FLOWER + 1}"


NAMES: Final = tuple(_name(t) for t in range(FIRST_FLOWER + N_FLOWERS))
FLOWERS_BY_NAME: Final = {NAMES[t]: t for t in range(FIRST_FLOWER, FIRST_FLOWER + N_FLOWERS)}


def name(tile: Tile) -> str:
    """``"5m"``, ``"E"``, ``"F"``, flowers as ``"f1"``..``"f8"``; ``"<tile 99>"`` for a
    number that is no tile (error messages quote what they were given)."""
    if 0 <= tile < len(NAMES):
        return NAMES[tile]
    if tile == WILD:
        return "*"
    return f"<tile {tile!r}>"


ALL_KINDS: Final = tuple(range(N_KINDS))
TERMINALS_AND_HONORS: Final = (0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33)


def counts_of(tiles: Iterable[Tile]) -> Counts:
    """A 34-slot count array of ``tiles`` (flowers and wild tiles are not counted)."""
    counts = [0] * N_KINDS
    for tile in tiles:
        if tile < N_KINDS:
            counts[tile] += 1
    return counts


def tiles_of(counts: Sequence[int]) -> list[Tile]:
    """The sorted tiles of a count array."""
    out: list[Tile] = []
    for tile in compress(range(len(counts)), counts):
        out.extend(repeat(tile, counts[tile]))
    return out


def seat_flowers(flowers: Iterable[Tile], wind: Wind) -> int:
    """How many of ``flowers`` are the seat's own (季花: Spring..Winter and Plum..Bamboo
    go East, South, West, North)."""
    return sum(1 for f in flowers if (f - FIRST_FLOWER) % 4 == wind.value)

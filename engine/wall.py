"""The wall (牌墙): 144 tiles from a recorded seed, the dice, the break, head and tail.

The same seed always gives the same wall and dice, on every Python version:
the shuffle uses its own small generator (SplitMix64) rather than ``random``,
whose algorithms may change between releases.

Layout. Four walls of 18 stacks of two tiles stand in front of the four
positions; the 72 stacks are numbered counter-clockwise (the direction of
play) starting with the East position's wall, 18 per wall. The dealer throws
two dice twice (开牌时两次掷骰). The first throw picks the wall: counting the
dealer as 1 and going counter-clockwise, the wall in front of position
``(first - 1) % 4`` from the dealer. The break is made in that wall after
``first + second`` stacks counted from its right-hand end (the end where the
next wall, counter-clockwise, begins), moving clockwise; if the count runs past
the wall it goes on into the previous one. Tiles are then drawn from the
head: the stacks clockwise from the break, top tile first; replacement tiles
for flowers and kongs come from the tail: the other side of the break, top
tile first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.copyable import copyable
from engine.errors import MahjongError
from engine.tiles import FIRST_FLOWER, N_FLOWERS, N_KINDS, Tile

N_TILES = 144
STACKS = 72
STACKS_PER_WALL = 18
_MASK = (1 << 64) - 1


class SplitMix64:
    """A tiny, fully specified 64-bit generator (Steele, Lea, Flood 2014)."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A uniform int in ``0..n-1`` (rejection sampling, no modulo bias)."""
        limit = (1 << 64) - (1 << 64) % n
        while True:
            value = self.next()
            if value < limit:
                return value % n


def full_set() -> list[Tile]:
    """The 144 tiles: four of each of the 34 kinds, then the eight flowers."""
    return [t for t in range(N_KINDS) for _ in range(4)] + list(
        range(FIRST_FLOWER, FIRST_FLOWER + N_FLOWERS)
    )


@dataclass(frozen=True, slots=True)
class Dice:
    first: tuple[int, int]
    second: tuple[int, int]

    @property
    def wall_offset(self) -> int:
        """Which wall is broken, counted counter-clockwise from the dealer (0 = the dealer's)."""
        return (sum(self.first) - 1) % 4

    @property
    def break_count(self) -> int:
        """Stacks counted from the right-hand end of that wall (4..24: two throws of two dice)."""
        return sum(self.first) + sum(self.second)


def roll(rng: SplitMix64) -> tuple[int, int]:
    return (rng.below(6) + 1, rng.below(6) + 1)


@dataclass(slots=True)
class Wall:
    """The live wall: tiles in head order, and which of them were drawn."""

    tiles: list[Tile]  # head first: stack by stack from the break, top tile before bottom
    dice: Dice
    break_stack: int  # the first stack drawn from the head (0..71, see the module doc)
    taken: bytearray = field(default_factory=lambda: bytearray(N_TILES))
    head: int = 0  # the next head index to try
    tail: int = 0  # tiles drawn from the tail so far
    remaining: int = N_TILES

    @classmethod
    def from_seed(cls, seed: int, dealer: int) -> Wall:
        """Shuffle the 144 tiles and throw the dice; ``dealer`` is the dealer's position 0..3."""
        rng = SplitMix64(seed)
        tiles = full_set()
        for i in range(len(tiles) - 1, 0, -1):  # Fisher-Yates
            j = rng.below(i + 1)
            tiles[i], tiles[j] = tiles[j], tiles[i]
        dice = Dice(roll(rng), roll(rng))
        return cls.build(tiles, dice, dealer)

    @classmethod
    def build(cls, stacked: list[Tile], dice: Dice, dealer: int) -> Wall:
        """Lay out ``stacked`` (144 tiles: stack 0 top, stack 0 bottom, stack 1 top, ...).

        Tests use this to stack a wall by hand.
        """
        if len(stacked) != N_TILES or sorted(stacked) != sorted(full_set()):
            raise MahjongError("a wall must hold the 144 tiles exactly once each")
        wall_index = (dealer + dice.wall_offset) % 4
        # The right-hand end of a wall is its last stack in counter-clockwise order.
        right_end = wall_index * STACKS_PER_WALL + STACKS_PER_WALL - 1
        first = (right_end - dice.break_count) % STACKS  # the first stack drawn from the head
        # Head: from the break, clockwise (decreasing stack numbers).
        order: list[Tile] = []
        for k in range(STACKS):
            stack = (first - k) % STACKS
            order.extend((stacked[2 * stack], stacked[2 * stack + 1]))
        return cls(tiles=order, dice=dice, break_stack=first)

    @classmethod
    def arranged(
        cls,
        head: list[Tile],
        tail: list[Tile] | None = None,
        dice: Dice = Dice((1, 1), (1, 1)),
    ) -> Wall:
        """A wall whose head yields ``head`` first and whose tail yields ``tail`` first.

        The other tiles fill the middle in tile order. For scripted tests: the deal takes
        4-4-4-1 tiles a player from the head starting with the dealer, then the dealer's 14th.
        """
        tail = tail or []
        rest = full_set()
        for tile in (*head, *tail):
            if tile not in rest:
                raise MahjongError(f"an arranged wall has more than 4 of {tile!r}")
            rest.remove(tile)
        tail_slots = [2 * (STACKS - 1 - k // 2) + k % 2 for k in range(len(tail))]
        order: list[Tile | None] = [None] * N_TILES
        for slot, tile in zip(tail_slots, tail, strict=True):
            order[slot] = tile
        free = [i for i in range(N_TILES) if order[i] is None]
        if len(head) > len(free):
            raise MahjongError("an arranged wall has more tiles than the wall holds")
        for slot, tile in zip(free, [*head, *rest], strict=True):
            order[slot] = tile
        return cls(tiles=[t for t in order if t is not None], dice=dice, break_stack=0)

    def draw(self) -> Tile:
        """Take the next tile from the head."""
        if not self.remaining:
            raise MahjongError("the wall is empty")
        while self.taken[self.head]:
            self.head += 1
        return self._take(self.head)

    def draw_tail(self) -> Tile:
        """Take a replacement tile from the tail: the last stack, top tile first."""
        if not self.remaining:
            raise MahjongError("the wall is empty")
        while True:
            stack = STACKS - 1 - self.tail // 2
            index = 2 * stack + self.tail % 2
            self.tail += 1
            if not self.taken[index]:
                return self._take(index)

    def _take(self, index: int) -> Tile:
        self.taken[index] = 1
        self.remaining -= 1
        return self.tiles[index]

    def peek_order(self) -> list[Tile]:
        """The tiles still to be drawn, head first (for tests, never for players)."""
        return [t for i, t in enumerate(self.tiles) if not self.taken[i]]


copyable(Dice)

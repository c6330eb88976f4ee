"""Wild tiles (财神, 混) of the ``custom`` rule set (document 000).

Which kind is wild: with an indicator tile turned up after the deal, its own
kind (翻混), the kind before it (上滚混) or the kind after it (下滚混). Within a
suit 1 follows 9; the winds cycle E→S→W→N→E and the dragons C→F→P→C. With
flowers wild, every flower is.
"""

from __future__ import annotations

from engine.rules import Wilds
from engine.tiles import EAST, FIRST_FLOWER, N_FLOWERS, NORTH, RED, WHITE, Tile


def next_kind(tile: Tile) -> Tile:
    """The kind after ``tile`` in its cycle (9 → 1, N → E, P → C)."""
    if tile < EAST:
        return tile - 8 if tile % 9 == 8 else tile + 1
    if tile <= NORTH:
        return EAST if tile == NORTH else tile + 1
    return RED if tile == WHITE else tile + 1


def previous_kind(tile: Tile) -> Tile:
    """The kind before ``tile`` in its cycle (1 → 9, E → N, C → P)."""
    if tile < EAST:
        return tile + 8 if tile % 9 == 0 else tile - 1
    if tile <= NORTH:
        return NORTH if tile == EAST else tile - 1
    return WHITE if tile == RED else tile - 1


def wild_tiles(wilds: Wilds, indicator: Tile | None) -> frozenset[Tile]:
    """The tiles (kinds, or flowers) that are wild at a table.

    ``indicator`` is the tile turned up after the deal (``None`` when the rule
    set turns none up).
    """
    if wilds is Wilds.NONE:
        return frozenset()
    if wilds is Wilds.FLOWERS:
        return frozenset(range(FIRST_FLOWER, FIRST_FLOWER + N_FLOWERS))
    if indicator is None:
        raise ValueError(f"wild tiles {wilds.value!r} need an indicator tile")
    if wilds is Wilds.INDICATOR:
        return frozenset((indicator,))
    if wilds is Wilds.BEFORE:
        return frozenset((previous_kind(indicator),))
    return frozenset((next_kind(indicator),))

"""Step 3, a regular reading (four sets and a pair): its fan table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from engine.forms import (
    CHOW,
    PUNG,
    Set,
    kind_mask,
)
from engine.scoring.exclusions import _adjust_winds, _exclude
from engine.scoring.families import (
    _chow_families,
    _families,
    _kongs_and_concealed_pungs,
    _pung_families,
)
from engine.scoring.ids import (
    ALL_CHOWS,
    ALL_EVEN_PUNGS,
    ALL_FIVE,
    ALL_PUNGS,
    BIG_FOUR_WINDS,
    BIG_FOUR_WINDS_AND_GREEN_DRAGON,
    BIG_THREE_WINDS,
    CHICKEN_HAND,
    CLOSED_WAIT,
    COMPILED,
    DRAGON_PUNG,
    EDGE_WAIT,
    FOUR_KONGS,
    LITTLE_FOUR_WINDS,
    LITTLE_THREE_DRAGONS,
    MELDED_HAND,
    OUTSIDE_HAND,
    PAIR_OF_1_OR_9,
    PAIR_OF_2_5_OR_8,
    PUNG_OF_TERMINALS_OR_HONORS,
    SINGLE_WAIT,
    TILE_HOG,
    TWO_DRAGONS_PUNGS,
    FanTable,
    _blank,
)
from engine.scoring.prepare import (
    _TERMINAL_OR_HONOR,
    _WIND_MASK,
    REF_KEY,
    _concealment_fans,
    _Hand,
    _is_unique_wait,
    _win_flags,
)
from engine.tiles import (
    EAST,
    GREEN,
    N_KINDS,
    NORTH,
    RED,
    Tile,
)

# How a set (or the pair) counts toward 全带幺 / 全带五 / 全双刻: 1 it holds a
# terminal or honor, 2 a five, 3 it is an even pung (or pair), 0 none of these. The classes
# are counted 4 bits each in one int: a set adds ``1 << 4 * class`` (``_CLASS_UNIT``).
_OUTSIDE: Final = 1
_FIVE: Final = 2
_EVEN: Final = 3
_CHOW_CLASS: Final = tuple(  # by the chow's lowest tile: 123/789 outside, 345/456/567 five
    1 << 4 * (_OUTSIDE if t % 9 in (0, 6) else _FIVE if t % 9 in (2, 3, 4) else 0)
    for t in range(EAST)
)
_PUNG_CLASS: Final = tuple(
    1
    << 4
    * (
        _OUTSIDE
        if t >= EAST or t % 9 in (0, 8)
        else _FIVE
        if t % 9 == 4
        else _EVEN
        if t % 9 in (1, 3, 5, 7)
        else 0
    )
    for t in range(N_KINDS)
)
_TERMINAL_OR_HONOR_BITS: Final = kind_mask(_TERMINAL_OR_HONOR)


def _score_regular(
    h: _Hand, concealed: tuple[Set, ...], pair: Tile, skip: int = 0, win_in_chow: bool | None = None
) -> FanTable:
    """One regular reading's fan table.

    ``skip``: a bit mask over ``concealed`` of the chows that take part in no
    chow family (built with a wild tile that leaves them ambiguous, ruling W3).
    ``win_in_chow``: whether a claimed winning tile can complete a concealed chow
    (None: wherever a chow holds its kind; with wild copies of that kind, where
    the placement leaves a real one, ruling W1).
    """
    table = list(h.traits)
    win = h.win
    chows: list[Tile] = []
    pungs: list[Tile] = []
    concealed_pungs = melded_kongs = concealed_kongs = 0
    classes = _PUNG_CLASS[pair]  # (4 bits a class)
    for kind, tile, hidden in h.fixed + concealed:
        if kind == CHOW:
            chows.append(tile)
            classes += _CHOW_CLASS[tile]
            continue
        pungs.append(tile)
        classes += _PUNG_CLASS[tile]
        if kind == PUNG:
            concealed_pungs += hidden
        elif hidden:
            concealed_kongs += 1
        else:
            melded_kongs += 1

    _win_flags(h, table)
    # A pung completed by a discard is exposed, unless the winning tile can be
    # read as part of a concealed chow instead (ruling 5).
    if not h.self_drawn and win in pungs:
        if win_in_chow is None:
            win_in_chow = any(
                kind == CHOW and tile <= win <= tile + 2 for kind, tile, _ in concealed
            )
        if not win_in_chow:
            concealed_pungs -= sum(1 for kind, tile, _ in concealed if kind == PUNG and tile == win)

    if pungs:
        _kongs_and_concealed_pungs(concealed_pungs, melded_kongs, concealed_kongs, table)
        if len(pungs) == 4:
            table[ALL_PUNGS] = 1  # 碰碰和
        for tile in pungs:
            if tile >= RED:
                table[DRAGON_PUNG] += 1  # 箭刻
            elif _TERMINAL_OR_HONOR_BITS >> tile & 1:
                table[PUNG_OF_TERMINALS_OR_HONORS] += 1  # 幺九刻 (winds adjusted below)
        if len(pungs) > 1:
            _reference_order(pungs)
    if len(chows) > 1:
        _reference_order(chows)

    n_chows = len(chows)
    family = chows
    if skip:
        family = [t for kind, t, _ in h.fixed if kind == CHOW]
        family += [
            t for i, (kind, t, _) in enumerate(concealed) if kind == CHOW and not skip >> i & 1
        ]
        _reference_order(family)
    if h.custom:
        fans = _families(tuple(family), tuple(pungs), pair if len(family) == 4 else -1, True)
        for fan, count in fans:
            table[fan] += count
    else:  # found afresh each time: no cache look-up costs less, compiled (their entries are 0)
        _chow_families(family, pair, table)
        _pung_families(pungs, table)

    _concealment_fans(table, h.exposed, h.self_drawn)

    # The pair: 平和, 小三元, 小四喜.
    if n_chows == 4:
        if pair < EAST:
            table[ALL_CHOWS] = 1
    elif table[TWO_DRAGONS_PUNGS]:
        if pair >= RED:
            table[LITTLE_THREE_DRAGONS] = 1
    elif table[BIG_THREE_WINDS] and EAST <= pair <= NORTH:
        table[LITTLE_FOUR_WINDS] = 1

    # Every set and the pair: 全带幺, 全带五, 全双刻.
    if classes >> 4 * _OUTSIDE & 0xF == 5:
        table[OUTSIDE_HAND] = 1
    elif classes >> 4 * _FIVE & 0xF == 5:
        table[ALL_FIVE] = 1
    elif classes >> 4 * _EVEN & 0xF == 5:
        table[ALL_EVEN_PUNGS] = 1

    # 四归一: four of a tile not declared as a kong.
    table[TILE_HOG] = h.fours - melded_kongs - concealed_kongs

    _wait_fans(h, concealed, pair, table)
    if h.custom:
        _custom_pair_fans(pair, table)
        if table[BIG_FOUR_WINDS] and pair == GREEN:
            table[BIG_FOUR_WINDS_AND_GREEN_DRAGON] = 1  # 四方大发财 (ruling W10)
    _exclude(table)
    if h.present & _WIND_MASK:
        _adjust_winds(h.prevalent, h.seat, [t for t in pungs if EAST <= t <= NORTH], table)
    if _blank(table):
        table[CHICKEN_HAND] = 1  # 无番和
    return table


def _reference_order(tiles: list[Tile]) -> None:
    """Sort ``tiles`` (a reading's chows or pungs, at most four) in the reference
    calculators' order (``REF_KEY``): compiled, by insertion, native code; interpreted, by
    ``list.sort`` with the key (a Python call a tile, compiled)."""
    if COMPILED:
        _insertion_order(tiles)
    else:
        tiles.sort(key=REF_KEY.__getitem__)


def _insertion_order(tiles: list[Tile]) -> None:
    for i in range(1, len(tiles)):
        tile = tiles[i]
        key = REF_KEY[tile]
        j = i - 1
        while j >= 0 and REF_KEY[tiles[j]] > key:
            tiles[j + 1] = tiles[j]
            j -= 1
        tiles[j + 1] = tile


def _custom_pair_fans(pair: Tile, table: FanTable) -> None:
    """二五八将 / 幺九头: the suited pair (将) of a regular or knitted-straight reading, of
    thirteen orphans and of nine gates' reading (ruling W11), before the exclusions (the
    pair of fives of 一色双龙会 / 三色双龙会 / 全带五 and the terminal pair of 清幺九 are
    part of those fans)."""
    if pair >= EAST:
        return
    r = pair % 9
    if r in (1, 4, 7):
        table[PAIR_OF_2_5_OR_8] = 1
    elif r in (0, 8):
        table[PAIR_OF_1_OR_9] = 1


def _wait_fans(h: _Hand, concealed: Sequence[Set], pair: Tile, table: FanTable) -> None:
    """边张 / 坎张 / 单钓将 when the hand waited on the winning tile alone (ruling 2).

    Where the winning tile sits in this reading picks the fan: at either end of
    a concealed chow 边张, in its middle 坎张, in the pair 单钓将.
    """
    if table[MELDED_HAND] or table[FOUR_KONGS]:
        return  # their rows exclude 单钓将 (the only wait they can have): no wait search
    win = h.win
    fan = -1
    for kind, tile, _ in concealed:
        if kind == CHOW:
            if win in (tile, tile + 2):
                fan = EDGE_WAIT
                break
            if win == tile + 1:
                fan = CLOSED_WAIT
    if fan < 0 and pair == win:
        fan = SINGLE_WAIT
    if fan >= 0 and _is_unique_wait(h):
        table[fan] = 1

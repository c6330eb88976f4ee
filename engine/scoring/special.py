"""Step 4, the special forms: seven (shifted) pairs, honors and knitted tiles, thirteen
orphans, nine gates, knitted straight with a set and a pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from engine.forms import (
    CHOW,
    KONG,
    knitted_straight_rest,
    regular_readings,
)
from engine.scoring.exclusions import _adjust_winds, _exclude
from engine.scoring.ids import (
    ALL_CHOWS,
    ALL_SIMPLES,
    ALL_TYPES,
    CONCEALED_HAND,
    CONCEALED_KONG,
    DRAGON_PUNG,
    FULLY_CONCEALED_HAND,
    GREATER_HONORS_AND_KNITTED_TILES,
    KNITTED_STRAIGHT,
    LESSER_HONORS_AND_KNITTED_TILES,
    MELDED_KONG,
    N_FANS,
    NINE_GATES,
    NO_HONORS,
    PUNG_OF_TERMINALS_OR_HONORS,
    PURE_STRAIGHT,
    SEVEN_PAIRS,
    SEVEN_SHIFTED_PAIRS,
    SHORT_STRAIGHT,
    SINGLE_WAIT,
    THIRTEEN_ORPHANS,
    TILE_HOG,
    TWO_CONCEALED_PUNGS,
    FanTable,
)
from engine.scoring.prepare import (
    _DRAGONS,
    _TERMINAL_OR_HONOR,
    _WINDS,
    _Hand,
    _is_unique_wait,
    _win_flags,
)
from engine.scoring.regular import _custom_pair_fans, _wait_fans
from engine.tiles import (
    EAST,
    N_KINDS,
    Tile,
)

# --------------------------------------------------------- special forms ---


def _seven_shifted_pairs(counts: Sequence[int], win: Tile) -> bool:
    if win >= EAST:
        return False
    base = win - win % 9
    return _SEVEN_TWOS in bytes(counts[base : base + 9])  # seven pairs in a row of the suit


_SEVEN_TWOS: Final = bytes([2] * 7)


def _score_seven_pairs(h: _Hand) -> FanTable:
    table = [0] * N_FANS
    if _seven_shifted_pairs(h.standing, h.win):
        # 连七对：不计清一色、七对、不求人、门前清、无字、单钓将
        table[SEVEN_SHIFTED_PAIRS] = 1
        base = h.win - h.win % 9
        if not h.standing[base] and not h.standing[base + 8]:
            table[ALL_SIMPLES] = 1  # 2..8 连七对 counts 断幺
        _win_flags(h, table)
        _exclude(table)
        return table
    table = list(h.traits)
    table[SEVEN_PAIRS] = 1  # 七对：不计不求人、门前清、单钓将
    table[TILE_HOG] = h.standing.count(4)
    _win_flags(h, table)
    _exclude(table)
    return table


def _score_honors_and_knitted(h: _Hand) -> FanTable:
    table = [0] * N_FANS
    honors = sum(1 for t in range(EAST, N_KINDS) if h.standing[t])
    if honors == 7:
        table[GREATER_HONORS_AND_KNITTED_TILES] = 1  # 七星不靠：不计全不靠、五门齐、不求人、门前清
    else:
        table[LESSER_HONORS_AND_KNITTED_TILES] = 1  # 全不靠：不计五门齐、不求人、门前清
        if honors == 5:
            table[KNITTED_STRAIGHT] = 1  # nine knitted tiles: also 组合龙
    _win_flags(h, table)
    _exclude(table)
    return table


def _score_thirteen_orphans(h: _Hand) -> FanTable:
    table = [0] * N_FANS
    table[THIRTEEN_ORPHANS] = 1  # 十三幺：不计五门齐、不求人、门前清、单钓将
    _win_flags(h, table)
    if h.custom:  # its doubled orphan is a pair (将): 幺九头 when it is a suited terminal
        _custom_pair_fans(h.standing.index(2), table)
    _exclude(table)
    return table


def _score_nine_gates(h: _Hand) -> FanTable | None:
    """九莲宝灯: 1112345678999 of one suit standing, any tile of the suit to win."""
    win = h.win
    if win >= EAST or h.melds:
        return None
    base = win - win % 9
    held = h.standing[base : base + 9]
    if sum(held) != 14:
        return None
    gates = [3, 1, 1, 1, 1, 1, 1, 1, 3]
    gates[win % 9] += 1
    if held != gates:
        return None
    table = [0] * N_FANS
    # 九莲宝灯：不计清一色、不求人、门前清、无字、幺九刻×1; what the winning
    # tile adds beside the gates still counts (清龙+四归一, 双暗刻+幺九刻, 连六).
    table[NINE_GATES] = 1
    r = win % 9 + 1
    if r in (1, 9):
        table[PURE_STRAIGHT] = 1
        table[TILE_HOG] = 1
    elif r in (2, 8):
        table[TWO_CONCEALED_PUNGS] = table[SHORT_STRAIGHT] = table[PUNG_OF_TERMINALS_OR_HONORS] = 1
    elif r == 5:
        table[TWO_CONCEALED_PUNGS] = table[PUNG_OF_TERMINALS_OR_HONORS] = 1
    else:
        table[SHORT_STRAIGHT] = 1
    _win_flags(h, table)
    if h.custom:
        # The pair fan of its regular reading (ruling W11): the pair is the added 2, 5 or 8
        # (111 22 345 678 999), else a pair of 1s or 9s (11 123 456 678 999, ...).
        _custom_pair_fans(base + (win % 9 if r in (2, 5, 8) else 0), table)
    _exclude(table)
    return table


def _score_knitted_straight(h: _Hand) -> FanTable | None:
    """组合龙 with one more set (declared or concealed) and a pair."""
    found = knitted_straight_rest(h.standing)
    if found is None:
        return None
    _, rest = found
    readings = regular_readings(rest)
    if len(readings) != 1:
        return None
    concealed, pair = readings[0]
    sets = [*h.fixed, *concealed]
    if len(sets) != 1:
        return None
    kind, tile, hidden = sets[0]
    table = [0] * N_FANS
    table[KNITTED_STRAIGHT] = 1
    if kind == CHOW:
        if pair < EAST:
            table[ALL_CHOWS] = 1  # 平和
        if h.merged[pair] == 4:
            table[TILE_HOG] = 1
    elif tile >= EAST:
        if tile in _WINDS:
            table[PUNG_OF_TERMINALS_OR_HONORS] = 1
            _adjust_winds(h.prevalent, h.seat, [tile], table)
            if pair in _DRAGONS:
                table[ALL_TYPES] = 1
        else:
            table[DRAGON_PUNG] = 1
            if pair in _WINDS:
                table[ALL_TYPES] = 1
    else:
        if tile in _TERMINAL_OR_HONOR:
            table[PUNG_OF_TERMINALS_OR_HONORS] = 1
        if pair < EAST:
            table[NO_HONORS] = 1
        if kind != KONG and h.merged[tile] == 4:
            table[TILE_HOG] = 1
    _win_flags(h, table)
    if hidden:
        if kind == KONG:
            table[CONCEALED_KONG] = 1
        if h.self_drawn:
            table[FULLY_CONCEALED_HAND] = 1
        else:
            table[CONCEALED_HAND] = 1
    elif kind == KONG:
        table[MELDED_KONG] = 1
    # Waits: the knitted body is a special set, only the fourth set and the
    # pair can make an edge, closed or single wait (ruling 3).
    if not h.fixed:
        _wait_fans(h, concealed, pair, table)
    elif h.win == pair and _is_unique_wait(h):
        table[SINGLE_WAIT] = 1
    if h.custom:
        _custom_pair_fans(pair, table)
    _exclude(table)
    return table

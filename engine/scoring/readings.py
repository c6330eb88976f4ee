"""The highest-value reading of a concrete hand (就高不就低): every form and reading scored,
the highest total kept; with wild copies, each reading places them to score low.
"""

from __future__ import annotations

from typing import Final

from engine.forms import (
    _LOW_BITS,  # the lowest bit of each count of a group pattern
    KNITTED,
    THIRTEEN,
    Set,
    kind_mask,
)
from engine.scoring.ids import (
    PURE_TRIPLE_CHOW,
    SEVEN_PAIRS,
    TRIPLE_PUNG,
    FanTable,
    _total,
)
from engine.scoring.prepare import _Hand, _kinds, _ordered_readings, _patterns
from engine.scoring.regular import _score_regular
from engine.scoring.special import (
    _score_honors_and_knitted,
    _score_knitted_straight,
    _score_nine_gates,
    _score_seven_pairs,
    _score_thirteen_orphans,
)
from engine.scoring.substitutions import (
    ambiguous_chow_masks,
)
from engine.tiles import (
    EAST,
    N_KINDS,
    Tile,
)


def _score_placed(
    h: _Hand, concealed: tuple[Set, ...], pair: Tile, wild: tuple[tuple[Tile, int], ...]
) -> FanTable:
    """A reading of a concrete hand some of whose copies are wild: the wild copies sit
    where they lower the score (rulings W1, W3): which chows they leave ambiguous and,
    on a discard, whether the winning tile can complete a chow rather than a pung."""
    best: FanTable | None = None
    best_total = 0
    merged = h.merged
    full = tuple([t for t in range(N_KINDS) if merged[t] == 4]) if h.fours else ()
    # A claimed winning tile whose kind some wild copies stand for: the placement decides
    # whether it can complete a chow (otherwise ``_score_regular`` sees that alone).
    claimed = -1
    if not h.self_drawn and any(kind == h.win for kind, _ in wild):
        claimed = h.win
    for skip, in_chow in ambiguous_chow_masks(concealed, pair, wild, full, claimed):
        table = _score_regular(h, concealed, pair, skip, in_chow if claimed >= 0 else None)
        total = _total(table)
        if best is None or total < best_total:
            best, best_total = table, total
    assert best is not None  # there is always at least one placement
    return best


_THIRTEEN_MASK: Final = kind_mask(THIRTEEN)
_SUITED_MASK: Final = kind_mask(range(EAST))
_KNITTED: Final = tuple(kind_mask(seq) for seq in KNITTED)


def _knitted_suits(kinds: int) -> bool:
    """Whether the suited kinds all lie in one knitted sequence (``is_honors_and_knitted``)."""
    suited = kinds & _SUITED_MASK
    return any(not suited & ~mask for mask in _KNITTED)


def _knitted_straight_held(kinds: int) -> bool:
    """Whether the kinds include a whole knitted sequence (``knitted_straight_rest``)."""
    return any(kinds & mask == mask for mask in _KNITTED)


def _best_table(
    h: _Hand, wild: tuple[tuple[Tile, int], ...] = (), limit: int | None = None
) -> FanTable | None:
    """The highest-value reading of a concrete hand; ``wild``: ``(kind, copies)`` of its
    tiles that are wild copies (then each reading places them to score low, ruling W3).

    With ``limit``, None as soon as one reading (or form) totals more than ``limit``: the
    hand's highest reading then does too (the branch and bound of ``_score_wild``).
    """
    best: FanTable | None = None
    best_total = 0
    seven_pairs = False
    # The special forms told apart by the tile kinds held and the counts' parities (the
    # ``forms.is_...`` tests of a concealed hand's fourteen tiles, without their list scans).
    if not h.melds:
        special: FanTable | None = None
        a, b, c, d = _patterns(h)
        kinds = _kinds(h)
        if not (a | b | c | d) & _LOW_BITS:  # every count even: seven pairs
            special = _score_seven_pairs(h)
            seven_pairs = bool(special[SEVEN_PAIRS])
        elif kinds.bit_count() == 14 and _knitted_suits(kinds):  # each tile once: 全不靠
            special = _score_honors_and_knitted(h)
        elif kinds == _THIRTEEN_MASK:
            special = _score_thirteen_orphans(h)
        else:
            knitted = _knitted_straight_held(kinds)
            special = (_score_knitted_straight(h) if knitted else None) or _score_nine_gates(h)
        if special is not None:
            best, best_total = special, _total(special)
            if limit is not None and best_total > limit:
                return None
            if not seven_pairs:
                return best
    elif h.melds == 1 and _knitted_straight_held(_kinds(h)):
        special = _score_knitted_straight(h)
        if special is not None:
            if limit is not None and _total(special) > limit:
                return None
            return special
    readings = _ordered_readings(h)
    if len(readings) == 1 and best is None and limit is None:  # no total to compare
        concealed, pair = readings[0]
        if wild:
            return _score_placed(h, concealed, pair, wild)
        return _score_regular(h, concealed, pair)
    for concealed, pair in readings:
        if wild:
            table = _score_placed(h, concealed, pair, wild)
        else:
            table = _score_regular(h, concealed, pair)
        total = _total(table)
        if limit is not None and total > limit:
            return None
        # Ruling 1: between readings of equal value, prefer a regular reading
        # to seven pairs, and one with 一色三同顺 or 三同刻.
        if total > best_total or (
            total == best_total and (seven_pairs or table[PURE_TRIPLE_CHOW] or table[TRIPLE_PUNG])
        ):
            best, best_total = table, total
    return best

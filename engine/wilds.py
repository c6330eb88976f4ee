"""Wild tiles (财神, 混) of the ``custom`` rule set (document 000).

Which kind is wild: with an indicator tile turned up after the deal, its own
kind (翻混), the kind before it (上滚混) or the kind after it (下滚混). Within a
suit 1 follows 9; the winds cycle E→S→W→N→E and the dragons C→F→P→C. With
flowers wild, every flower is.

Hands with wild tiles. A wild tile stands for any tile in a winning hand, in every form
(regular, Seven Pairs, Thirteen Orphans, Honors and Knitted Tiles, Knitted Straight), but
never for a fifth copy of a kind, counting the hand's melds. The functions below take a
hand as ``counts``, the 34-slot counts of its standing tiles that are not wild, and
``wilds``, how many wild tiles stand beside them (the wild kind's own copies, or flowers,
are wilds, never counts). ``meld_counts``, when given, counts the tiles of the declared
melds (a kong four) for the fifth-copy rule.

- ``is_winning_with_wilds``: exact. The shanten tables of ``engine.shanten`` first give a
  lower bound (below); only a hand that passes it is checked tile by tile: Seven Pairs,
  Thirteen Orphans and Honors and Knitted Tiles by counting, the regular form (and the
  tiles beside a knitted straight) by the fewest wilds each suit and the honors need to
  become sets, or sets and the pair, with room for every copy a wild stands for.
- ``shanten_with_wilds``: the least shanten of the hand with its wilds replaced by tiles,
  as ``engine.shanten`` counts it (blocks, not copies left). For each form but Seven Pairs
  that is the form's shanten of the tiles that are not wild less one per wild, but never
  below the floor (0 for a 13-tile hand, -1 for a 14-tile one): a tile lowers a form's
  shanten by one at most, and while above the floor some tile does (complete a partial set,
  pair a lone tile, or, with only sets left, the wilds alone make the rest). For Seven
  Pairs a wild pairs a lone tile, two wilds make a pair. A -1 that only a fifth copy would
  give is checked and counted 0 (ready), as ``engine.shanten`` counts such hands.
- ``waits_with_wilds``: the kinds a tile of which completes a hand one tile short. A drawn
  wild completes the hand exactly when this list is not empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from operator import add
from typing import Final

from engine import forms
from engine import shanten as _shanten
from engine.errors import InvalidHand
from engine.forms import HONORS, KNITTED, THIRTEEN
from engine.rules import Wilds
from engine.tiles import EAST, FIRST_FLOWER, N_FLOWERS, N_KINDS, NORTH, RED, WHITE, Tile


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


# --- hands with wild tiles --------------------------------------------------------------------

_NO: Final = 99  # wilds needed when no number of them will do
_ORPHANS: Final = frozenset(THIRTEEN)
_HONORS: Final = frozenset(HONORS)
_KNITTED_SETS: Final = tuple(frozenset(seq) for seq in KNITTED)
_GROUPS: Final = ((0, 9, True), (9, 18, True), (18, 27, True), (EAST, N_KINDS, False))


def _checked(
    counts: Sequence[int],
    wilds: int,
    melds: int,
    meld_counts: Sequence[int] | None,
    *sizes: int,
) -> list[int]:
    """``engine.shanten``'s checks of a hand, wild tiles counted, and of its melds' tiles."""
    if wilds < 0:
        raise InvalidHand(f"a hand holds 0 or more wild tiles, got {wilds!r}")
    hand = _shanten._checked(counts, melds, *sizes, wilds=wilds)
    if meld_counts is not None and (
        len(meld_counts) != N_KINDS or max(map(add, hand, meld_counts)) > 4
    ):
        raise InvalidHand(f"melds and standing tiles hold more than 4 copies: {meld_counts!r}")
    return hand


def _bound(counts: Sequence[int], wilds: int, melds: int) -> int:
    """The least shanten of the hand over every way to read its wilds, copies not counted
    and with no floor: a lower bound, exact down to the floor (module docs)."""
    best = _NO
    if melds == 0:
        packed = bytes(counts)
        lone = packed.count(1) + packed.count(3)
        paired = min(wilds, lone)
        pairs = (sum(packed) - lone) // 2
        best = 6 - pairs - paired - (wilds - paired) // 2
    values = _shanten.form_shanten(counts, melds, best + wilds)
    return min(best, min(values) - wilds)


@lru_cache(maxsize=1 << 16)
def _need(pattern: bytes, room: bytes, chows: bool, pair: bool) -> int:
    """The fewest wilds that make a group's tiles ``pattern`` sets (and one pair, with
    ``pair``), a wild standing only where ``room`` has a copy left; ``_NO`` if none do.

    The set holding the lowest tile takes its copies from the tiles first: which copy is
    a tile and which a wild does not change the hand they make.
    """
    i = next((i for i, n in enumerate(pattern) if n), -1)
    if i < 0:
        return _NO if pair else 0
    best = _NO
    # (tile offsets of the set, whether it is the pair)
    shapes: list[tuple[tuple[int, ...], bool]] = [((i, i, i), False)]
    if pair:
        shapes.append(((i, i), True))
    if chows:
        shapes += [((s, s + 1, s + 2), False) for s in range(max(i - 2, 0), min(i, 6) + 1)]
    for offsets, is_pair in shapes:
        rest = bytearray(pattern)
        left = bytearray(room)
        wild = 0
        for at in offsets:
            if rest[at]:
                rest[at] -= 1
            elif left[at]:
                left[at] -= 1
                wild += 1
            else:
                break
        else:
            if wild < best:
                more = _need(bytes(rest), bytes(left), chows, pair and not is_pair)
                best = min(best, wild + more)
    return best


def _regular_need(counts: Sequence[int], room: Sequence[int]) -> int:
    """The fewest wilds that make ``counts`` sets and a pair (the wilds beyond them make
    whole sets of their own, and the tile count says how many sets there are)."""
    plain: list[int] = []
    paired: list[int] = []
    for lo, hi, chows in _GROUPS:
        pattern = bytes(counts[lo:hi])
        if any(pattern):
            space = bytes(room[lo:hi])
            plain.append(_need(pattern, space, chows, False))
            paired.append(_need(pattern, space, chows, True))
        else:
            plain.append(0)
            paired.append(_NO)
    total = sum(plain)
    # The pair in one group, or made of two wilds. Sums over a group that cannot do are
    # _NO or more, which no hand has wilds for.
    return min(total + 2, *(total - a + b for a, b in zip(plain, paired, strict=True)))


def _room(counts: Sequence[int], meld_counts: Sequence[int] | None) -> list[int]:
    if meld_counts is None:
        return [4 - n for n in counts]
    return [4 - n - m for n, m in zip(counts, meld_counts, strict=True)]


def _wins(counts: list[int], wilds: int, melds: int, meld_counts: Sequence[int] | None) -> bool:
    """Whether a 14-tile hand (``wilds`` wilds beside ``counts``) is complete, exactly."""
    if wilds == 0:
        return forms.is_winning(counts, melds)
    if _bound(counts, wilds, melds) > -1:
        return False
    if melds == 0:
        packed = bytes(counts)
        if packed.count(1) + packed.count(3) <= wilds:
            return True  # Seven Pairs: a wild pairs each lone tile, two wilds make a pair
        held = {t for t, n in enumerate(counts) if n}
        most = max(packed)
        if held <= _ORPHANS and most <= 2 and packed.count(2) <= 1:
            return True  # Thirteen Orphans
        if most <= 1 and any(held <= _HONORS | seq for seq in _KNITTED_SETS):
            return True  # Honors and Knitted Tiles
    room = _room(counts, meld_counts)
    if _regular_need(counts, room) <= wilds:
        return True
    if melds > 1:
        return False
    for seq in KNITTED:  # the knitted straight, a set and a pair
        rest = counts.copy()
        space = room.copy()
        short = 0
        for t in seq:
            if rest[t]:
                rest[t] -= 1
            elif space[t]:
                space[t] -= 1
                short += 1
            else:
                short = _NO
        if short <= wilds and _regular_need(rest, space) <= wilds - short:
            return True
    return False


def is_winning_with_wilds(
    counts: Sequence[int],
    wilds: int,
    melds: int = 0,
    meld_counts: Sequence[int] | None = None,
) -> bool:
    """Whether ``counts`` and ``wilds`` wild tiles (``14 - 3 * melds`` tiles in all) make a
    complete hand in some form, each wild standing for a tile that is not a fifth copy."""
    hand = _checked(counts, wilds, melds, meld_counts, 14)
    return _wins(hand, wilds, melds, meld_counts)


def shanten_with_wilds(
    counts: Sequence[int],
    wilds: int,
    melds: int = 0,
    meld_counts: Sequence[int] | None = None,
) -> int:
    """Shanten of ``counts`` and ``wilds`` wild tiles (13 or 14 - 3 * melds in all): the
    least over every reading of the wilds (module docs); -1 exactly when complete."""
    hand = _checked(counts, wilds, melds, meld_counts, 13, 14)
    floor = 13 - sum(hand) - wilds - 3 * melds  # 0 for 13 tiles, -1 for 14
    value = max(_bound(hand, wilds, melds), floor)
    if value < 0 and wilds and not _wins(hand, wilds, melds, meld_counts):
        return 0  # complete only with a fifth copy: ready, like ``engine.shanten``
    return value


def waits_with_wilds(
    counts: Sequence[int],
    wilds: int,
    melds: int = 0,
    meld_counts: Sequence[int] | None = None,
) -> list[int]:
    """The kinds a tile of which completes ``counts`` and ``wilds`` wild tiles
    (``13 - 3 * melds`` in all); sorted, never a fifth copy. With a wild kind, that kind may
    be listed: a drawn wild completes the hand exactly when the list is not empty."""
    hand = _checked(counts, wilds, melds, meld_counts, 13)
    if _bound(hand, wilds, melds) > 0:
        return []
    room = _room(hand, meld_counts)
    out = []
    for t in range(N_KINDS):
        if room[t] > 0:
            hand[t] += 1
            if _wins(hand, wilds, melds, meld_counts):
                out.append(t)
            hand[t] -= 1
    return out


def useful_tiles_with_wilds(
    counts: Sequence[int],
    wilds: int,
    melds: int = 0,
    meld_counts: Sequence[int] | None = None,
) -> list[int]:
    """The kinds whose draw lowers ``shanten_with_wilds`` of a ``13 - 3 * melds`` tile hand
    (wilds included); sorted, never a fifth copy. For a ready hand these are its waits.

    Above ready, every form but Seven Pairs is its shanten less the wilds: a tile lowers
    the hand's shanten when it lowers such a form that is at the hand's shanten, so these
    are ``engine.shanten``'s useful tiles of those forms."""
    hand = _checked(counts, wilds, melds, meld_counts, 13)
    current = shanten_with_wilds(hand, wilds, melds, meld_counts)
    if current == 0:
        return waits_with_wilds(hand, wilds, melds, meld_counts)
    useful = _shanten.form_useful(hand, melds, current + wilds)
    if melds == 0:
        packed = bytes(hand)
        lone = packed.count(1) + packed.count(3)
        pairs = (sum(packed) - lone) // 2
        for t, n in enumerate(hand):  # Seven Pairs: a drawn tile pairs a lone one, or not
            more, fewer = (1, -1) if n & 1 else (0, 1)
            paired = min(wilds, lone + fewer)
            if 6 - pairs - more - paired - (wilds - paired) // 2 < current:
                useful.add(t)
    room = _room(hand, meld_counts)
    return sorted(t for t in useful if room[t] > 0)

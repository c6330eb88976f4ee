"""Wild tiles (财神) in a winning hand: which tiles they can stand for.

The calculator scores a hand with wild tiles as the lowest of its concrete
hands (``wild``, rulings W1-W7 of ``docs/rulings.md``). This module answers the
combinatorial questions for it, knowing nothing of fans:

- ``substitutions``: every multiset of tile kinds the wild tiles can stand for
  such that the hand is complete in some form (regular, seven pairs, thirteen
  orphans, honors and knitted, knitted straight; nine gates and the other
  special fans are regular or seven-pairs shapes). A wild tile never makes a
  fifth copy of a kind, melds included (ruling W2).
- ``is_complete``: whether some substitution exists (the waits of a hand that
  holds wild tiles, for the wait fans, ruling W5).
- ``ambiguous_chow_masks``: in one reading of a concrete hand, where the wild
  copies can sit, as the sets of concealed chows they leave ambiguous
  (ruling W3) and whether a claimed winning tile can complete a chow (W1).

Nothing is brute-forced over 34^k. Regular hands are read one group (suit or
honors) at a time: ``_fills`` walks a group's ranks once, choosing at each rank
how many chows start there, whether a pung or the pair sits there, and making up
the missing copies with wild tiles; it is cached on the suffix of the group's
counts, so the walks of all hands share their work. Each group answers "which
tiles do j wild tiles add here so that these tiles read as sets (and the
pair)"; a hand combines its four groups over the ways to split the wild tiles
between them. The special forms are solved directly from their fixed shapes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import combinations, combinations_with_replacement, product

from engine.forms import CHOW, GROUPS, HONORS, KNITTED, THIRTEEN, Set
from engine.tiles import N_KINDS, Tile

Substitution = tuple[Tile, ...]  # the kinds the wild tiles stand for, sorted


# ------------------------------------------------------------ regular form ---


@lru_cache(maxsize=1 << 18)
def _fills(
    ranks: tuple[tuple[int, int], ...],
    chows: bool,
    pending: tuple[int, int],
    wilds: int,
    pair: bool,
) -> tuple[tuple[int, ...], ...]:
    """The ways ``wilds`` wild tiles complete the ``ranks`` of one group.

    ``ranks`` is the suffix of the group from the current rank: for each rank
    the concrete concealed copies and how many copies the hand may hold in all
    (4 minus the copies in melds). ``pending = (open1, open2)``: ``open1``
    chows started one rank before need this rank and the next, ``open2``
    chows started two ranks before need this one. ``pair``: the one pair must
    be found here. Returns the wild copies added at each rank of the suffix,
    one tuple per way.
    """
    open1, open2 = pending
    if not ranks:
        if open1 or open2 or wilds or pair:
            return ()
        return ((),)
    n, cap = ranks[0]
    rest = ranks[1:]
    can_chow = chows and len(ranks) >= 3
    found: dict[tuple[int, ...], None] = {}
    base = open1 + open2
    for new_chows in range(5 if can_chow else 1):
        for pung in (0, 1):
            for here in (0, 1) if pair else (0,):
                used = base + new_chows + 3 * pung + 2 * here
                if used > cap:
                    continue
                added = used - n
                if added < 0 or added > wilds:
                    continue
                for tail in _fills(
                    rest, chows, (new_chows, open1), wilds - added, pair and not here
                ):
                    found[(added, *tail)] = None
    return tuple(found)


def _group_options(
    counts: Sequence[int], caps: Sequence[int], group: tuple[int, int, bool], wilds: int, pair: bool
) -> tuple[tuple[int, ...], ...]:
    lo, hi, honors = group
    ranks = tuple(zip(counts[lo:hi], caps[lo:hi], strict=True))
    return _fills(ranks, not honors, (0, 0), wilds, pair)


def _regular_parts(
    counts: Sequence[int], caps: Sequence[int], wilds: int
) -> Iterator[tuple[tuple[Substitution, ...], ...]]:
    """The regular substitutions as products: for each split of the wild tiles between the
    groups that completes every group, the kinds each group's share can stand for (one
    tuple of kinds per way, in sorted order, all of the same length within a group)."""
    sizes = [sum(counts[lo:hi]) for lo, hi, _ in GROUPS]
    for split in _splits(wilds, len(GROUPS)):
        remainders = [(size + j) % 3 for size, j in zip(sizes, split, strict=True)]
        if remainders.count(2) != 1 or remainders.count(1):
            continue  # each group must read as sets, one of them with the pair
        options = []
        for group, j, remainder in zip(GROUPS, split, remainders, strict=True):
            fills = _group_options(counts, caps, group, j, remainder == 2)
            if not fills:
                break
            options.append(tuple(sorted(_kinds(group[0], added) for added in fills)))
        else:
            yield tuple(options)


def regular_parts(
    counts: tuple[int, ...], caps: tuple[int, ...], wilds: int
) -> tuple[tuple[tuple[Substitution, ...], ...], ...]:
    """``_regular_parts``: the regular substitutions are the concatenations (group by group,
    so already sorted) of one entry of each group, over the splits; each split's
    concatenations are distinct, and the splits give disjoint sets (a substitution
    determines how many of its kinds fall in each group)."""
    return tuple(_regular_parts(counts, caps, wilds))


def _regular(counts: Sequence[int], caps: Sequence[int], wilds: int) -> Iterator[Substitution]:
    """Substitutions that make ``counts`` regular (sets and one pair)."""
    for options in _regular_parts(counts, caps, wilds):
        for parts in product(*options):
            yield tuple(sorted(t for part in parts for t in part))


@lru_cache(maxsize=1 << 12)
def _splits_cached(total: int, parts: int) -> tuple[tuple[int, ...], ...]:
    if parts == 1:
        return ((total,),)
    return tuple(
        (first, *more)
        for first in range(total + 1)
        for more in _splits_cached(total - first, parts - 1)
    )


def _splits(total: int, parts: int) -> tuple[tuple[int, ...], ...]:
    """Every way to write ``total`` as an ordered sum of ``parts`` naturals."""
    return _splits_cached(total, parts)


@lru_cache(maxsize=1 << 14)
def _kinds(lo: int, added: tuple[int, ...]) -> tuple[Tile, ...]:
    return tuple(lo + i for i, n in enumerate(added) for _ in range(n))


# ----------------------------------------------------------- special forms ---


def _seven_pairs(counts: Sequence[int], caps: Sequence[int], wilds: int) -> Iterator[Substitution]:
    odd = [t for t in range(N_KINDS) if counts[t] % 2]
    spare = wilds - len(odd)
    if spare < 0 or spare % 2 or any(counts[t] + 1 > caps[t] for t in odd):
        return
    room = [t for t in range(N_KINDS) if counts[t] + (t in odd) + 2 <= caps[t]]
    for pairs in combinations_with_replacement(room, spare // 2):
        held = list(counts)
        for t in odd:
            held[t] += 1
        ok = True
        for t in pairs:
            held[t] += 2
            ok = ok and held[t] <= caps[t]
        if ok:
            yield tuple(sorted((*odd, *pairs, *pairs)))


def _thirteen_orphans(
    counts: Sequence[int], caps: Sequence[int], wilds: int
) -> Iterator[Substitution]:
    if any(counts[t] for t in HONORS_AND_SUITED_NOT_ORPHANS):
        return
    doubles = [t for t in THIRTEEN if counts[t] >= 2]
    if len(doubles) > 1 or any(counts[t] > 2 for t in THIRTEEN):
        return
    missing = tuple(t for t in THIRTEEN if not counts[t])
    if doubles:
        if len(missing) == wilds:
            yield missing
        return
    if len(missing) + 1 != wilds:
        return
    for extra in THIRTEEN:
        if counts[extra] + (extra in missing) + 1 <= caps[extra]:
            yield tuple(sorted((*missing, extra)))


HONORS_AND_SUITED_NOT_ORPHANS: tuple[Tile, ...] = tuple(
    t for t in range(N_KINDS) if t not in THIRTEEN
)


def _honors_and_knitted(counts: Sequence[int], wilds: int) -> Iterator[Substitution]:
    if any(n > 1 for n in counts):
        return
    held = {t for t in range(N_KINDS) if counts[t]}
    for seq in KNITTED:
        pool = set(seq) | set(HONORS)
        if not held <= pool:
            continue
        yield from combinations(sorted(pool - held), wilds)


def _knitted_straight(
    counts: Sequence[int], caps: Sequence[int], wilds: int
) -> Iterator[Substitution]:
    for seq in KNITTED:
        missing = tuple(t for t in seq if not counts[t])
        if len(missing) > wilds or any(caps[t] < 1 for t in missing):
            continue
        rest = list(counts)
        rest_caps = list(caps)
        for t in seq:
            rest_caps[t] -= 1
            if counts[t]:
                rest[t] -= 1
        for fill in _regular(rest, rest_caps, wilds - len(missing)):
            yield tuple(sorted((*missing, *fill)))


# ------------------------------------------------------------------ public ---


def caps_of(meld_counts: Sequence[int]) -> tuple[int, ...]:
    """How many copies of each kind the concealed tiles may hold beside the melds."""
    return tuple(4 - n for n in meld_counts)


def _all(
    counts: Sequence[int], caps: Sequence[int], wilds: int, melds: int
) -> Iterator[Substitution]:
    yield from _regular(counts, caps, wilds)
    if melds == 0:
        yield from _seven_pairs(counts, caps, wilds)
        yield from _thirteen_orphans(counts, caps, wilds)
        yield from _honors_and_knitted(counts, wilds)
    if melds <= 1:
        yield from _knitted_straight(counts, caps, wilds)


@lru_cache(maxsize=1 << 12)
def substitutions(
    counts: tuple[int, ...], caps: tuple[int, ...], wilds: int, melds: int
) -> tuple[Substitution, ...]:
    """Every substitution of ``wilds`` wild tiles that completes the concealed ``counts``.

    ``counts``: the concrete concealed tiles (winning tile included, wild tiles
    left out); ``caps``: ``caps_of`` the melds' tile counts; ``melds``: how many
    melds the hand declared. Sorted and without duplicates; empty when no
    substitution completes the hand.
    """
    return tuple(sorted(set(_all(counts, caps, wilds, melds))))


def special_substitutions(
    counts: tuple[int, ...], caps: tuple[int, ...], wilds: int, melds: int
) -> tuple[Substitution, ...]:
    """The substitutions of the special forms but seven pairs (thirteen orphans, honors and
    knitted, knitted straight), sorted, without duplicates."""
    found: set[Substitution] = set()
    if melds == 0:
        found.update(_thirteen_orphans(counts, caps, wilds))
        found.update(_honors_and_knitted(counts, wilds))
    if melds <= 1:
        found.update(_knitted_straight(counts, caps, wilds))
    return tuple(sorted(found))


def seven_pairs_substitutions(
    counts: Sequence[int], caps: Sequence[int], wilds: int
) -> Iterator[Substitution]:
    """The substitutions that make seven pairs of ``counts`` (a hand without melds)."""
    return _seven_pairs(counts, caps, wilds)


def is_complete(counts: Sequence[int], caps: Sequence[int], wilds: int, melds: int) -> bool:
    """Whether some substitution of the wild tiles completes ``counts``."""
    return next(_all(counts, caps, wilds, melds), None) is not None


def waits_only_on(
    counts: Sequence[int], caps: Sequence[int], wilds: int, melds: int, tile: Tile
) -> bool:
    """Whether the hand before the winning tile (``counts`` and ``wilds`` wild tiles, one
    tile short) is completed by ``tile`` and by no other kind (ruling W5)."""
    grown = list(counts)
    formal = list(caps)
    for kind in range(N_KINDS):
        # Waits are formal (ruling 2): a real tile counts even as a fifth copy.
        grown[kind] += 1
        formal[kind] = max(caps[kind], grown[kind])
        complete = is_complete(grown, formal, wilds, melds)
        grown[kind] -= 1
        formal[kind] = caps[kind]
        if complete != (kind == tile):
            return False
    return True


def _ambiguous(chow: Tile, positions: Sequence[int], full: tuple[Tile, ...]) -> bool:
    """Whether a chow (lowest tile ``chow``) with wild copies at ``positions`` (0..2) can
    really be read as another chow (ruling W3): one of the same suit holding its real tiles,
    its wild copies standing for the other kinds, none of them a fifth copy (``full``: the
    kinds the concrete hand holds four times, melds included). 4m 5m + wild: 345m or 456m;
    not 1m wild 3m (123m only), nor 1m + two wilds (123m only), nor 2s 3s + wild as 4s
    when the hand holds all four 1s."""
    n = len(positions)
    if not n:
        return False
    if not full:  # no kind is ruled out: the shape alone decides
        r = chow % 9
        if n == 1:
            position = positions[0]
            return (position == 0 and r <= 5) or (position == 2 and r >= 1)
        if n == 2:  # only 1 + two wilds (123) and 9 + two wilds (789) fit one chow
            lone = r + 3 - positions[0] - positions[1]  # the rank of the one real tile
            return lone not in (0, 8)
        return True
    wild = {chow + i for i in positions}
    real = [chow + i for i in range(3) if i not in positions]
    base = chow - chow % 9
    for other in range(max(base, chow - 2), min(base + 6, chow + 2) + 1):
        kinds = range(other, other + 3)
        if other == chow or any(t not in kinds for t in real):
            continue
        if not any(t in full and t not in wild and t not in real for t in kinds):
            return True
    return False


@lru_cache(maxsize=1 << 14)
def ambiguous_chow_masks(
    concealed: tuple[Set, ...],
    pair: Tile,
    wild: tuple[tuple[Tile, int], ...],
    full: tuple[Tile, ...] = (),
    win: Tile = -1,
) -> tuple[tuple[int, bool], ...]:
    """Where the wild copies can sit in one reading: each placement as the mask of the
    chows it leaves ambiguous and whether the winning tile can sit in a concealed chow.

    ``concealed``: the reading's concealed sets; ``wild``: ``(kind, copies)`` of the wild
    tiles; ``full``: the kinds held four times (``_ambiguous``); ``win``: the winning tile
    when it is claimed (-1 otherwise). Each kind's wild copies go into the sets holding
    that kind (at most one copy into each chow); a mask has bit ``i`` set when
    ``concealed[i]`` is a chow left ambiguous. The claimed winning tile is a real copy: it
    can complete a concealed chow only where the placement leaves a real copy of its kind
    in one (ruling W1: the placement decides which group the discard completes). Returns
    each distinct ``(mask, in chow)`` once.
    """
    per_kind: list[list[list[tuple[int, int]]]] = []
    for kind, copies in wild:
        chows = [
            (i, kind - tile)
            for i, (k, tile, _) in enumerate(concealed)
            if k == CHOW and tile <= kind <= tile + 2
        ]
        room = sum(3 for k, tile, _ in concealed if k != CHOW and tile == kind)
        room += 2 if pair == kind else 0
        ways = [
            list(chosen)
            for used in range(min(copies, len(chows)) + 1)
            if copies - used <= room
            for chosen in combinations(chows, used)
        ]
        per_kind.append(ways)
    win_chows = {
        i for i, (k, tile, _) in enumerate(concealed) if k == CHOW and tile <= win <= tile + 2
    }
    masks: dict[tuple[int, bool], None] = {}
    for choice in product(*per_kind):
        positions: dict[int, list[int]] = {}
        for way in choice:
            for i, position in way:
                positions.setdefault(i, []).append(position)
        mask = 0
        for i, where in positions.items():
            if _ambiguous(concealed[i][1], where, full):
                mask |= 1 << i
        in_chow = any(win - concealed[i][1] not in positions.get(i, ()) for i in win_chows)
        masks[mask, in_chow] = None
    return tuple(masks)

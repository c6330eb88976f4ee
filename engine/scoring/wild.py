"""Step 5, wild tiles (财神): a hand holding them scores as its lowest concrete hand
(rulings W1-W7), found by a branch and bound over the substitutions of
``engine.scoring.substitutions``; each concrete hand is scored by ``readings._best_table``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache
from heapq import heappop, heappush, merge
from itertools import chain, product
from itertools import count as numbering
from typing import NamedTuple

from engine.errors import InvalidHand, NotWinning
from engine.forms import (
    GROUPS,
    Set,
    is_seven_pairs,
    kind_mask,
    kinds_present,
)
from engine.hand import Hand, MeldKind
from engine.scoring.context import WinContext
from engine.scoring.exclusions import _adjust_winds, _exclude
from engine.scoring.families import _kongs_and_concealed_pungs
from engine.scoring.ids import (
    ALL_HONORS,
    ALL_TERMINALS,
    ALL_TERMINALS_AND_HONORS,
    DRAGON_PUNG,
    KNITTED_STRAIGHT,
    LESSER_HONORS_AND_KNITTED_TILES,
    PAIR_OF_1_OR_9,
    PAIR_OF_2_5_OR_8,
    POINTS,
    PUNG_OF_TERMINALS_OR_HONORS,
    SEVEN_PAIRS,
    THIRTEEN_ORPHANS,
    TILE_HOG,
    FanTable,
    _total,
)
from engine.scoring.prepare import (
    _SET_KIND,
    _concealment_fans,
    _Hand,
    _notation,
    _situation_fan,
    _tile_traits,
    _win_flags,
)
from engine.scoring.readings import _best_table
from engine.scoring.substitutions import (
    Substitution,
    caps_of,
    regular_parts,
    seven_pairs_substitutions,
    special_substitutions,
    waits_only_on,
)
from engine.tiles import (
    EAST,
    N_KINDS,
    RED,
    WILD,
    Tile,
)


def _score_wild(hand: Hand, ctx: WinContext, custom: bool) -> FanTable:
    """A hand holding wild tiles: the lowest-scoring concrete hand (rulings W1-W7).

    ``engine.scoring.substitutions`` lists the substitutions of the wild tiles that
    complete the hand; each concrete hand is scored as usual (its highest-value
    reading), the wild copies placed where they score lowest; the lowest
    total counts, the first of equal totals in the substitutions' sorted order.

    The search is a branch and bound with the same result as scoring every
    substitution (``tests/engine/test_wild_scoring.py`` keeps that reference):
    a substitution's score is at least ``_wild_bound`` (fans of the tiles
    present, of how the hand was won and of concealment, proved sound there)
    and at least any one of its readings, so substitutions are taken in order
    of (bound, substitution) and the search stops at the first whose bound
    cannot beat the best (total, substitution) found, and a substitution is
    dropped at the first reading that shows it cannot. Results are memoized:
    the table asks about the same hand again and again.
    """
    return list(_score_wild_cached(hand, ctx, custom))


@lru_cache(maxsize=1 << 11)
def _score_wild_cached(hand: Hand, ctx: WinContext, custom: bool) -> tuple[int, ...]:
    win = hand.win_tile
    wild_win = win == WILD
    if wild_win and not ctx.self_drawn:
        raise InvalidHand(
            f"{_notation(hand)}: a wild tile cannot be discarded, so a wild winning tile "
            "must be self-drawn"
        )
    concrete = hand.concealed_counts()
    merged = hand.all_counts()
    caps = caps_of([a - b for a, b in zip(merged, concrete, strict=True)])
    n_melds = len(hand.melds)
    search = _WildSearch(hand, ctx, concrete, merged, caps, custom=custom)
    if not search.complete():
        raise NotWinning(f"{_notation(hand)} is not a winning hand in any form, wilds included")
    # Situation flags from the real tiles (rulings 4, W6): a wild copy is no copy.
    has_kong = any(m.kind is MeldKind.KONG for m in hand.melds)
    if wild_win:
        last_tile = unique = False
        kong = ctx.kong and has_kong
    else:
        in_melds = sum(meld.tiles.count(win) for meld in hand.melds)
        last_tile = (ctx.last_of_kind and concrete[win] == 1) or in_melds == 3
        kong = ctx.kong and (has_kong if ctx.self_drawn else in_melds == 0 and concrete[win] == 1)
        # Where a wild tile completes the hand as some kind Y other than the winning tile,
        # the hand also won on Y (that wild copy standing for the winning tile instead: the
        # same tiles, within the same copies): no single wait, without trying all 34 kinds.
        unique = search.stands_only_for(win)
        if unique:
            before = concrete.copy()
            before[win] -= 1
            unique = waits_only_on(before, caps, hand.wilds, n_melds, win)
    fixed = tuple([(_SET_KIND[m.kind], m.tile, m.offer == 0) for m in hand.melds])
    exposed = sum(1 for m in hand.melds if m.offer)
    best: FanTable | None = None
    best_total = 0
    best_key: tuple[Substitution, Tile] = ((), -1)  # the substitution, the winning tile's kind
    search.set_flags(ctx, last_tile, kong)
    found: list[tuple[int, Substitution]] = []  # the best (total, substitution) so far
    for _, sub in search.candidates(found):
        standing = concrete.copy()
        for t in sub:
            standing[t] += 1
        # A wild winning tile stands for one of the kinds of the substitution, each a
        # different concrete hand (ruling W1: its kind is part of the substitution). Won by
        # self-draw with no wait fan nor Last Tile (W5), which kind it is matters only to
        # the forms whose shape depends on the winning tile, nine gates and seven shifted
        # pairs: otherwise one kind will do.
        wins: Sequence[Tile] = (win,)
        if wild_win:
            kinds = sorted(set(sub))
            if n_melds or not _shape_needs_the_winning_tile(standing):
                kinds = kinds[:1]
            wins = kinds
        for win_as in wins:
            key = (sub, win_as)
            # The highest total this concrete hand may have and still be the lowest.
            limit = None
            if best is not None:
                limit = best_total if key < best_key else best_total - 1
                if POINTS[SEVEN_PAIRS] > limit and n_melds == 0 and is_seven_pairs(standing):
                    break  # seven pairs score 24 at least (``_wild_bound``)
            table = _score_concrete(
                search, sub, win_as, standing, hand=hand, ctx=ctx, fixed=fixed, exposed=exposed,
                last_tile=last_tile, kong=kong, unique=unique, limit=limit,
            )  # fmt: skip
            if table is None:
                continue  # a reading scores above ``limit``: this hand cannot be the lowest
            total = _total(table)
            if best is None or total < best_total or (total == best_total and key < best_key):
                best, best_total, best_key = table, total, key
                found[:] = [(total, sub)]
    if best is None:
        raise NotWinning(f"{_notation(hand)} is not a winning hand in any form, wilds included")
    return tuple(best)


class _Flags(NamedTuple):
    """How the hand was won, for ``_win_flags`` in the bound. A named tuple, not a
    dataclass: it is part of the key of ``_wild_bound``'s cache, and a tuple hashes in C
    (a frozen dataclass's ``__hash__`` is Python code, run on every bound looked up)."""

    last_tile: bool
    self_drawn: bool
    wall_last: bool
    kong: bool
    situation: int


def _shape_needs_the_winning_tile(counts: Sequence[int]) -> bool:
    """Whether ``counts`` (fourteen standing tiles) may be nine gates or seven shifted pairs,
    the forms whose shape depends on which tile won: one suit, and 1112345678999 + 1 or
    pairs only."""
    for lo, hi, honors in GROUPS:
        suit = counts[lo:hi]
        if not honors and sum(suit) == 14:
            gates = suit[0] >= 3 and suit[8] >= 3 and min(suit[1:8]) >= 1
            return gates or all(n in (0, 2) for n in suit)
    return False


def _score_concrete(
    search: _WildSearch,
    sub: Substitution,
    win: Tile,
    standing: list[int],
    *,
    hand: Hand,
    ctx: WinContext,
    fixed: tuple[Set, ...],
    exposed: int,
    last_tile: bool,
    kong: bool,
    unique: bool,
    limit: int | None,
) -> FanTable | None:
    """The concrete hand the substitution ``sub`` makes, won on ``win``, scored as
    ``_best_table`` with the wild copies placed low (None: a reading beats ``limit``)."""
    merged = search.merged
    all_tiles = list(merged)
    present = search.base_present
    fours = search.base_fours
    previous = -1
    for t in sub:
        all_tiles[t] += 1
        present |= _KIND_BIT[t]
        if t != previous:
            previous = t
            fours += merged[t] + sub.count(t) == 4
    h = _Hand(
        hand, ctx, win, fixed, exposed, fours, standing, all_tiles,
        ctx.self_drawn, last_tile, kong, ctx.wall_last, _wild_traits(present), present,
        EAST + ctx.round_wind, EAST + ctx.seat_wind, unique, search.custom,
        search.flags[0].situation,
    )  # fmt: skip
    wild = tuple((kind, sub.count(kind)) for kind in sorted(set(sub)))
    return _best_table(h, wild, limit)


def _wild_order(
    hand: Hand,
    ctx: WinContext,
    subs: Sequence[Substitution],
    *,
    concrete: Sequence[int],
    merged: Sequence[int],
    last_tile: bool,
    kong: bool,
) -> list[tuple[int, Substitution, int, int]]:
    """``(bound, substitution, present, fours)`` of each substitution, sorted: ``bound`` as
    ``_WildSearch.sub_bound`` (the tests check it against every concrete hand); ``present``
    (``forms.kinds_present``) and ``fours`` (kinds held four times) of the whole concrete hand."""
    caps = caps_of([a - b for a, b in zip(merged, concrete, strict=True)])
    search = _WildSearch(hand, ctx, concrete, merged, caps)
    search.set_flags(ctx, last_tile, kong)
    order = []
    for sub in subs:
        present, fours, *_ = search.key(sub, True)
        order.append(
            (search.sub_bound(sub), sub, search.base_present | present, search.base_fours + fours)
        )
    order.sort()
    return order


# present, fours, honor pungs, hidden, reading fans (``_group_reading_fans``)
_Key = tuple[int, int, tuple[Tile, ...], int, tuple[int, int]]


class _WildSearch:
    """The substitutions of a hand's wild tiles in increasing order of (bound, substitution),
    never listing those that cannot beat the best found so far.

    ``bound`` (``sub_bound``) is ``_wild_bound`` plus 2 for each Tile Hog: what the kinds
    present, the kinds held four times and the honor pungs every regular reading holds
    imply. These depend on the substitution only through the parts of it in each group
    (suits, honors), so the regular substitutions are never listed one by one to be
    bounded: ``substitutions.regular_parts`` gives them as products of per-group parts, the
    parts of a group are bucketed by what they imply (``key``), and one bound is computed
    per product of buckets; equal to ``sub_bound`` of each substitution of the product (the
    same function of the same kinds present, fours and honor pungs, summed group by group).
    Products are expanded one level of bound at a time, merged into sorted order, and only
    while the level can still beat the best (``found``): a product whose bound exceeds the
    best total is never expanded, since each of its substitutions scores at least its bound.

    The bound also counts the reading fans of the groups (``_group_reading_fans``: part of
    ``key``, so summed group by group like the rest; ``sub_bound`` sums them over the whole
    substitution's groups, the same numbers). The special forms are listed at 12 at least
    (``_SPECIAL_FLOOR``).

    Seven pairs are listed last, lazily, at level 24 (their substitutions can be many; each
    scores at least its seven-pairs reading, 24 and more, as ``_wild_bound`` says): each then
    gets ``max(24, sub_bound)``. A substitution found both as a regular and a special form is
    listed under each bound, both sound; scoring it twice changes nothing.
    """

    def __init__(
        self,
        hand: Hand,
        ctx: WinContext,
        concrete: Sequence[int],
        merged: Sequence[int],
        caps: tuple[int, ...],
        *,
        custom: bool = True,
    ) -> None:
        self.custom = custom
        self.exposed = sum(1 for m in hand.melds if m.offer)
        self.kongs = sum(1 for m in hand.melds if m.kind is MeldKind.KONG)
        self.win = hand.win_tile
        self.self_drawn = ctx.self_drawn
        self.flags: tuple[_Flags, int] = (_Flags(False, False, False, False, -1), 0)
        self.concrete = tuple(concrete)
        self.merged = tuple(merged)
        self.caps = caps
        self.wilds = hand.wilds
        self.melds = len(hand.melds)
        self.base_present = kinds_present(merged)
        self.base_fours = merged.count(4)
        self.base_honor_pungs = tuple(t for t in range(EAST, N_KINDS) if concrete[t] == 3)
        # Sets every regular reading holds: the melds' kongs and honor pungs, and a pung of
        # each honor kind standing three times (honors read one way), concealed unless it is
        # the winning tile claimed (ruling 5).
        concealed_kongs = sum(1 for m in hand.melds if m.kind is MeldKind.KONG and not m.offer)
        self.melded_honors = tuple(
            sorted(m.tile for m in hand.melds if m.kind is not MeldKind.CHOW and m.tile >= EAST)
        )
        self.melded_terminals = sum(
            1 for m in hand.melds if m.kind is not MeldKind.CHOW and m.tile in _SUITED_TERMINALS
        )
        prevalent, seat = EAST + ctx.round_wind, EAST + ctx.seat_wind
        self.sets = (self.kongs - concealed_kongs, concealed_kongs, prevalent, seat)
        self.parts = regular_parts(self.concrete, caps, self.wilds)
        self.specials = special_substitutions(self.concrete, caps, self.wilds, self.melds)

    def set_flags(self, ctx: WinContext, last_tile: bool, kong: bool) -> None:
        """The situation flags of ``_wild_bound`` (computed from the real tiles)."""
        exposed = self.exposed
        won = _Flags(
            last_tile, ctx.self_drawn, ctx.wall_last, kong, _situation_fan(ctx, self.custom)
        )
        self.flags = (won, exposed if exposed in (0, 4) else 1)

    def _seven_pairs(self) -> Iterator[Substitution]:
        if self.melds:
            return iter(())
        return seven_pairs_substitutions(self.concrete, self.caps, self.wilds)

    def complete(self) -> bool:
        """Whether some substitution completes the hand."""
        return bool(self.parts or self.specials) or next(self._seven_pairs(), None) is not None

    def stands_only_for(self, tile: Tile) -> bool:
        """Whether every substitution stands for ``tile`` alone (stops at the first that
        does not)."""
        return all(
            t == tile for parts in self.parts for group in parts for part in group for t in part
        ) and not any(t != tile for sub in chain(self.specials, self._seven_pairs()) for t in sub)

    def key(self, part: Substitution, honors: bool, group: int = -1) -> _Key:
        """What the kinds ``part`` (of one group, or a whole substitution) imply: the kinds present,
        the kinds they bring to four copies, the honor pungs of the hand (``honors``: the
        part holds every honor the substitution adds), how many of those are concealed, and
        the reading fans of ``group`` (``GROUPS`` index; -1: ``part`` is the whole
        substitution) as ``_group_reading_fans`` gives them."""
        reading = self._group_fans(part, group) if group >= 0 else self._reading_fans(part)
        present = fours = hidden = 0
        pungs: list[Tile] = []
        previous = -1
        for t in part:
            present |= _KIND_BIT[t]
            if t != previous:
                previous = t
                n = part.count(t)
                if self.merged[t] + n == 4:
                    fours += 1
                if t >= EAST and self.concrete[t] + n == 3:
                    pungs.append(t)
                    hidden += self.self_drawn or t != self.win
        if honors:
            for t in self.base_honor_pungs:
                if t not in part:
                    pungs.append(t)
                    hidden += self.self_drawn or t != self.win
        return present, fours, tuple(pungs), hidden, reading

    def _group_fans(self, part: Substitution, group: int) -> tuple[int, int]:
        """``_group_reading_fans`` of one group's concrete tiles with ``part`` added;
        ``(-1, -1)`` when they read as no sets (and pair)."""
        lo, hi, honors = GROUPS[group]
        counts = list(self.concrete[lo:hi])
        for t in part:
            counts[t - lo] += 1
        return _group_reading_fans(tuple(counts), sum(counts) % 3 == 2, honors, self.custom)

    def _reading_fans(self, sub: Substitution) -> tuple[int, int]:
        """The reading fans of a whole substitution: the sums over the groups, each group's
        best decomposition (a regular reading is any choice of one per group, the groups
        being independent); ``(0, 0)`` when the concrete hand has no regular reading."""
        combined = pair_only = pairs = 0
        for group, (lo, hi, _) in enumerate(GROUPS):
            part = tuple(t for t in sub if lo <= t < hi)
            pairs += (sum(self.concrete[lo:hi]) + len(part)) % 3 == 2
            c, p = self._group_fans(part, group)
            if c < 0:
                return 0, 0
            combined += c
            pair_only += p
        if pairs != 1:
            return 0, 0
        return combined, pair_only

    def _bound(
        self,
        present: int,
        fours: int,
        pungs: tuple[Tile, ...],
        hidden: int,
        reading: tuple[int, int],
    ) -> int:
        honor_pungs = tuple(sorted((*self.melded_honors, *pungs)))
        combined, pair_only = reading
        reading = (combined + self.melded_terminals, pair_only)
        bound = _wild_bound(
            self.base_present | present, self.flags, honor_pungs, hidden, self.sets, reading=reading
        )
        return bound + POINTS[TILE_HOG] * (self.base_fours + fours - self.kongs)

    def sub_bound(self, sub: Substitution) -> int:
        """A lower bound of the score of the concrete hand ``sub`` makes (``_wild_bound``)."""
        return self._bound(*self.key(sub, True))

    def candidates(
        self, found: list[tuple[int, Substitution]]
    ) -> Iterator[tuple[int, Substitution]]:
        """``(bound, substitution)`` in increasing order, stopping where the bound cannot beat
        the best ``(total, substitution)`` so far: ``found`` holds it once there is one (the
        caller updates it between two substitutions)."""
        heap: list[tuple[int, int, tuple[tuple[Substitution, ...], ...] | None]] = []
        seq = numbering()
        for options in self.parts:
            buckets = []
            last = len(options) - 1
            for g, parts in enumerate(options):
                by_key: dict[_Key, list[Substitution]] = {}
                for part in parts:
                    by_key.setdefault(self.key(part, g == last, g), []).append(part)
                buckets.append([(key, tuple(group)) for key, group in by_key.items()])
            for combo in product(*buckets):
                present = fours = hidden = combined = pair_only = 0
                pungs: tuple[Tile, ...] = ()
                for (p, f, hp, hd, (c, po)), _ in combo:
                    present |= p
                    fours += f
                    pungs += hp
                    hidden += hd
                    combined += c
                    pair_only += po
                bound = self._bound(present, fours, pungs, hidden, (combined, pair_only))
                heappush(heap, (bound, next(seq), tuple(group for _, group in combo)))
        for sub in self.specials:
            bound = max(_SPECIAL_FLOOR, self.sub_bound(sub))
            heappush(heap, (bound, next(seq), ((sub,),)))
        if self.melds == 0:
            heappush(heap, (POINTS[SEVEN_PAIRS], next(seq), None))
        while heap:
            level = heap[0][0]
            if found and level > found[0][0]:
                return
            streams = []
            while heap and heap[0][0] == level:
                entry = heappop(heap)[2]
                if entry is None:
                    for sub in self._seven_pairs():
                        heappush(heap, (max(level, self.sub_bound(sub)), next(seq), ((sub,),)))
                    continue
                # Within a group every part has the same length, so the product of sorted
                # parts, concatenated, is sorted.
                streams.append(map(_concat, product(*entry)))
            previous: Substitution | None = None
            for sub in merge(*streams):
                if sub == previous:
                    continue
                previous = sub
                if found and (level > found[0][0] or (level == found[0][0] and sub > found[0][1])):
                    break  # sorted: no later substitution of this level can do better
                yield level, sub


def _concat(parts: tuple[Substitution, ...]) -> Substitution:
    return tuple(chain.from_iterable(parts))


_KIND_BIT: tuple[int, ...] = tuple(kind_mask((t,)) for t in range(N_KINDS))


@lru_cache(maxsize=1 << 14)
def _wild_traits(present: int) -> tuple[int, ...]:
    """``_tile_traits`` shared by the substitutions (readers copy it)."""
    return tuple(_tile_traits(present))


# What a substitution of ``special_substitutions`` scores at least. Its concrete hand has
# no regular or seven-pairs reading (its knitted or orphan tiles fit in no set and are not
# pairs), so it scores its special form's table (``_best_table`` returns it at once),
# which holds the form's fan, never excluded: 全不靠 12 (七星不靠 24), 组合龙 12, 十三幺 88.
_SPECIAL_FLOOR = min(
    POINTS[LESSER_HONORS_AND_KNITTED_TILES], POINTS[KNITTED_STRAIGHT], POINTS[THIRTEEN_ORPHANS]
)
_SUITED_TERMINALS = frozenset((0, 8, 9, 17, 18, 26))
_PAIR_FAN_RANKS = frozenset((0, 1, 4, 7, 8))  # 1 or 9 (幺九头), 2, 5 or 8 (二五八将)
# ``_wild_bound`` adds the reading fans as points: each counts 1.
assert POINTS[PUNG_OF_TERMINALS_OR_HONORS] == POINTS[PAIR_OF_1_OR_9] == 1
assert POINTS[PAIR_OF_2_5_OR_8] == 1


@lru_cache(maxsize=1 << 14)
def _group_reading_fans(
    counts: tuple[int, ...], pair: bool, honors: bool, custom: bool
) -> tuple[int, int]:
    """The most reading fans one decomposition of a group's concealed ``counts`` (a suit's
    nine ranks, or the honors) into sets (and the pair, ``pair``) can hold, as
    ``(terminal pungs + pair fan, pair fan)``: 幺九刻 of its suited terminal pungs, and 1
    when ``custom`` and its pair is a suited 1, 2, 5, 8 or 9 (ruling W11). ``(-1, -1)``
    when no decomposition exists. Honor pungs are ``_WildSearch.key``'s (0 here)."""
    i = next((r for r, n in enumerate(counts) if n), -1)
    if i < 0:
        return (-1, -1) if pair else (0, 0)
    ways: list[tuple[int, int]] = []  # (combined, pair fan) of the ways to take rank i
    rest = list(counts)
    if counts[i] >= 3:
        rest[i] -= 3
        c, p = _group_reading_fans(tuple(rest), pair, honors, custom)
        rest[i] += 3
        if c >= 0:
            ways.append((c + (not honors and i in (0, 8)), p))
    if not honors and i <= 6 and counts[i + 1] and counts[i + 2]:
        for r in (i, i + 1, i + 2):
            rest[r] -= 1
        ways.append(_group_reading_fans(tuple(rest), pair, honors, custom))
        for r in (i, i + 1, i + 2):
            rest[r] += 1
    if pair and counts[i] >= 2:
        rest[i] -= 2
        c, p = _group_reading_fans(tuple(rest), False, honors, custom)
        if c >= 0:
            fan = int(custom and not honors and i in _PAIR_FAN_RANKS)
            ways.append((c + fan, p + fan))
    # Each maximum is taken on its own: either is the value of one decomposition.
    return max((c for c, _ in ways), default=-1), max((p for _, p in ways), default=-1)


@lru_cache(maxsize=1 << 14)
def _wild_bound(
    present: int,
    flags: tuple[_Flags, int],
    honor_pungs: tuple[Tile, ...],
    hidden: int,
    sets: tuple[int, int, Tile, Tile],
    *,
    reading: tuple[int, int] = (0, 0),
) -> int:
    """A lower bound of the score of any concrete hand with these kinds ``present``.

    The total, after the exclusions, of the tile traits (``_tile_traits``), the fans of how
    the hand was won and the concealment fans: ``flags`` is ``(how it was won, exposed)``
    with ``exposed`` 0 (no exposed meld), 1 (some) or 4 (four); how it was won includes the
    ``situation`` fan (天和 地和 人和, excluding what they make certain as in every
    reading). The same functions as every reading's (``_win_flags``, ``_concealment_fans``,
    ``_exclude``, ``_adjust_winds``) compute them.
    ``honor_pungs``, ``hidden`` and ``sets`` (melded kongs, concealed kongs, prevalent and
    seat wind tiles) add the sets every regular reading holds: the melds' kongs (their kong
    fans), the honor pungs (箭刻, 幺九刻, or 圈风刻 / 门风刻 instead), ``hidden`` of them
    concealed (双暗刻 and up, with the concealed kongs). ``_wild_order`` adds 2 for each Tile
    Hog (four of a kind not declared as a kong). ``reading`` is ``(combined, pair fan)`` of
    ONE regular reading each (``_group_reading_fans`` summed over the groups, the melds'
    suited terminal pungs in ``combined``): ``combined`` its 幺九刻 of suited terminal pungs
    plus its 二五八将 / 幺九头, ``pair fan`` the pair fan alone; ``combined`` is added, or
    ``pair fan`` where 清幺九 / 混幺九 / 字一色 (tile traits, here too) remove every 幺九刻.

    Why it is sound: the concrete hand scores its highest reading, so it is enough that
    one of its forms scores this much.

    - A regular reading's table holds these same fans plus others (all counts >= 0;
      the only deductions, 幺九刻 for wind pungs and 三风刻, take back what the reading
      itself added). An exclusion that removes one of these fans from the reading but not
      from the bound is set off by the fan that excludes it, worth more than all it
      removes: 全带五 16 / 全双刻 24 (断幺 2, 无字 1), 一色双龙会 64 (清一色 24, 平和 2,
      无字 1), 三色双龙会 16 (平和 2, 无字 1), 平和 2 (无字 1), 四暗刻 64 (门前清 2 or
      不求人 4), 四方大发财 168 (字一色 64), 一色四同顺 48 (四归一, at most 3 x 2), 大四喜
      88 / 小四喜 64 / 三风刻 12 (the wind pungs' fans, at most 2 each), 大三元 88 / 小三元
      64 / 双箭刻 6 (箭刻 2 each); more concealed pungs only raise the concealed-pung fan.
      Each of these excluders is itself removed only by one of the others, which then
      pays for both. The other exclusions are between tile traits or flags, applied here too.
    - ``reading``: the concrete hand scores at least EACH of its regular readings, so these
      fans need hold in one reading only, the one they were counted on (the groups are
      independent: a regular reading is any choice of one decomposition per group, so the
      per-group maxima add up in one reading). That reading's table holds the fans above
      and, on top: its suited terminal pungs each add 1 to 幺九刻, which the honor pungs'
      wind adjustment and 三风刻 (-3: exactly its three wind pungs) do not touch; only
      清幺九, 混幺九, 字一色 (tile traits: then ``pair fan`` alone is added), 大四喜 88 and
      小四喜 64 (at most one terminal pung beside the winds, paid for) remove them. Its pair
      fan is set after the exclusions (``_custom_pair_fans``): no exclusion removes it;
      一色双龙会 64 / 三色双龙会 16 stand in for 二五八将 (they pay for it with 平和 and
      the rest), and 四方大发财 has an honor pair. Both fans count 1.
    - Seven pairs (no melds, no honor held three times) keep the tile traits, Tile Hog and
      the flags and add 24 (more than the 4 of 不求人 or 2 of 门前清 they drop). Honors
      and knitted (12 or 24: tile traits at most 6, 五门齐), knitted straight (12: traits
      at most 6, Tile Hog at most one, its one set scored), thirteen orphans, nine gates and
      seven shifted pairs (88: traits at most 64) keep the flags and score more than the
      traits and concealment they drop.
    """
    won, exposed = flags
    table = _tile_traits(present)
    _win_flags(won, table)
    _concealment_fans(table, exposed, won.self_drawn)
    melded_kongs, concealed_kongs, prevalent, seat = sets
    if honor_pungs or melded_kongs or concealed_kongs:
        _kongs_and_concealed_pungs(hidden, melded_kongs, concealed_kongs, table)
        for tile in honor_pungs:
            table[DRAGON_PUNG if tile >= RED else PUNG_OF_TERMINALS_OR_HONORS] += 1
    _exclude(table)
    _adjust_winds(prevalent, seat, honor_pungs, table)
    combined, pair_only = reading
    if table[ALL_TERMINALS]:
        combined = 0  # 清幺九 removes every 幺九刻 and 幺九头 (its pair is a terminal)
    elif table[ALL_TERMINALS_AND_HONORS] or table[ALL_HONORS]:
        combined = pair_only  # these remove every 幺九刻
    return _total(table) + combined

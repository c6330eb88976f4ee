"""How far a hand is from each plan: shanten per plan, and the scan that finds the best.

A plan (``engine.bots.plans``) has its own shanten (向听数), counted on the tiles it can use:
a flush on its suit (and the honors), All Pungs without chows, Seven Pairs on pairs, a
fixed-set plan on the tiles its sets still lack plus the regular shanten of the other tiles
with the sets counted as declared (as ``engine.shanten`` reads the knitted straight). A plan
whose missing tile has no copy left is dead. Its value is its shanten plus its penalty.

- ``HandTables``: a seat's concealed tiles and melds with the part tables every plan reads;
- ``PlanEval``: one plan on one hand, and how it changes when a tile is discarded or drawn
  (a discard changes one group: a lookup or two per plan);
- ``plans_on``: the plans within a window of the best on a hand. The fixed-set plans are
  scanned at once: a big int holds a byte per plan, the tiles it lacks, summed from one
  cached int per group pattern; only the few with the fewest missing tiles are evaluated
  in full.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from engine import shanten as _shanten
from engine.bots.parts import (
    EMPTY_ID,
    GROUP_END,
    GROUP_OF,
    GROUP_START,
    SHANTEN_OF,
    at_least,
    group_ids,
    grow,
    join,
    join4,
    pairs,
    patterns_of,
    shrink,
    table_id,
    tile_mask,
)
from engine.bots.plans import (
    CHOW_SET,
    FLUSH,
    FLUSH_PLANS,
    HONORS_AND_KNITTED,
    PAIRS,
    PAIRS_PLAN,
    PLAIN,
    PLAIN_PLAN,
    PLANS_WITH_SET,
    PUNG_SET,
    PUNGS,
    PUNGS_PLAN,
    SET_PLANS,
    SPECIAL,
    SPECIAL_PLANS,
    THIRTEEN_ORPHANS,
    Plan,
)
from engine.bots.reading import Unseen
from engine.forms import KNITTED
from engine.hand import Meld, MeldKind
from engine.tiles import EAST, N_KINDS, TERMINALS_AND_HONORS

SLACK: Final = 1.0  # plans this far behind the best on the 14-tile hand are still weighed
MAX_PLANS: Final = 4  # ... at most this many of them
FINISHED_PLANS: Final = 4  # fixed-set plans fully evaluated on a hand, fewest missing first

_ORPHANS_MASK: Final = tile_mask(TERMINALS_AND_HONORS)
_HONORS_MASK: Final = tile_mask(range(EAST, N_KINDS))
_KNITTED_MASKS: Final = tuple(tile_mask(seq) for seq in KNITTED)


class HandTables:
    """A seat's concealed tiles and melds, with what every plan reads from them."""

    __slots__ = (
        "chow_melds",
        "counts",
        "ids",
        "m",
        "meld_groups",
        "meld_keys",
        "melds",
        "patterns",
        "pung_ids",
        "unavailable",
        "unseen",
    )

    def __init__(self, counts: list[int], melds: tuple[Meld, ...], unseen: Unseen) -> None:
        self.counts = counts
        self.melds = melds
        self.m = len(melds)
        self.unseen = unseen
        self.patterns = patterns = patterns_of(counts)
        self.ids = group_ids(patterns)
        self.pung_ids: list[int] | None = None
        meld_groups = 0
        chow_melds = False
        keys = []
        for meld in melds:
            meld_groups |= 1 << GROUP_OF[meld.tile]
            if meld.kind is MeldKind.CHOW:
                chow_melds = True
                keys.append((CHOW_SET, meld.tile))
            else:
                keys.append((PUNG_SET, meld.tile))
        self.meld_groups = meld_groups
        self.chow_melds = chow_melds
        self.meld_keys = keys
        self.unavailable = unseen.unavailable

    def pungs(self) -> list[int]:
        if self.pung_ids is None:
            patterns = self.patterns
            self.pung_ids = [
                table_id(patterns[0], False),
                table_id(patterns[1], False),
                table_id(patterns[2], False),
                self.ids[3],
            ]
        return self.pung_ids


class PlanEval:
    """One plan on one hand: its shanten, and what is needed to redo it after a discard.

    For the plans read on groups (all but Seven Pairs and the special forms): ``patterns``
    are the count patterns of the concealed tiles left once the plan's sets took what they
    could, ``ids`` their table ids (the empty table for a group the plan does not use),
    ``missing`` the tiles the sets still lack, ``need`` the (tile, copies) its undeclared
    sets need, and ``melds`` the sets counted as declared.
    """

    __slots__ = (
        "chows",
        "groups",
        "ids",
        "masks",
        "melds",
        "missing",
        "need",
        "others",
        "patterns",
        "plan",
        "shanten",
        "value",
    )

    def __init__(
        self,
        plan: Plan,
        shanten: int,
        *,
        missing: int = 0,
        patterns: list[bytes] | None = None,
        ids: list[int] | None = None,
        melds: int = 0,
        need: Sequence[tuple[int, int]] = (),
        masks: tuple[int, int, int] = (0, 0, 0),
    ) -> None:
        self.plan = plan
        self.masks = masks
        self.shanten = shanten
        self.value = shanten + plan.penalty
        self.missing = missing
        self.patterns = patterns
        self.ids = ids
        self.melds = melds
        self.need = need
        self.groups = plan.groups
        self.chows = plan.chows
        self.others: list[int] = [-1, -1, -1, -1]

    def other_ids(self, g: int) -> int:
        """The table id of the plan's groups other than ``g``, taken together."""
        found = self.others[g]
        if found < 0:
            ids = self.ids
            assert ids is not None
            if g == 0:
                found = join(ids[1], join(ids[2], ids[3]))
            elif g == 1:
                found = join(ids[0], join(ids[2], ids[3]))
            elif g == 2:
                found = join(ids[3], join(ids[0], ids[1]))
            else:
                found = join(ids[2], join(ids[0], ids[1]))
            self.others[g] = found
        return found

    def after_discard(self, counts: list[int], tile: int) -> int:
        """The shanten once ``tile`` is discarded from the 14-tile hand ``counts`` it was
        made on."""
        kind = self.plan.kind
        if kind == PAIRS:
            return self.shanten + 1 - (counts[tile] & 1)
        if kind == SPECIAL:
            after = counts.copy()
            after[tile] -= 1
            return _special_shanten(self.plan.special, after)
        g = GROUP_OF[tile]
        if not self.groups >> g & 1:
            return self.shanten  # a tile the plan does not use
        patterns = self.patterns
        assert patterns is not None
        table = shrink(patterns[g], g < 3 and self.chows)[tile - GROUP_START[g]]
        if table < 0:
            return self.shanten + 1  # a tile of the plan's sets
        return self.missing + SHANTEN_OF[join(table, self.other_ids(g))][self.melds]

    def after_discards(self, counts: list[int]) -> list[int]:
        """``after_discard`` for every tile (34 slots; meaningful for the tiles held only: a
        slot of a tile not held holds a value of no use)."""
        kind = self.plan.kind
        shanten = self.shanten
        if kind == PAIRS:
            return [shanten + 1 - (n & 1) for n in counts]
        if kind == SPECIAL:
            return [self.after_discard(counts, t) if n else 99 for t, n in enumerate(counts)]
        out = [shanten] * N_KINDS  # the tiles the plan does not use
        patterns = self.patterns
        assert patterns is not None
        key = (self.melds, self.missing, shanten)
        groups = self.groups
        chows = self.chows
        for g in range(4):
            if groups >> g & 1:
                out[GROUP_START[g] : GROUP_END[g]] = _discard_row(
                    patterns[g], g < 3 and chows, self.other_ids(g), key
                )
        return out

    def discard(self, counts: list[int], tile: int) -> PlanEval:
        """The plan on the 13-tile hand left by discarding ``tile`` from ``counts``."""
        kind = self.plan.kind
        if kind in (PAIRS, SPECIAL):
            return PlanEval(self.plan, self.after_discard(counts, tile), melds=self.melds)
        g = GROUP_OF[tile]
        patterns = self.patterns
        assert patterns is not None
        offset = tile - GROUP_START[g]
        if not self.groups >> g & 1:
            shanten, missing = self.shanten, self.missing
        elif not patterns[g][offset]:
            shanten, missing = self.shanten + 1, self.missing + 1
        else:
            shrunk = bytearray(patterns[g])
            shrunk[offset] -= 1
            patterns = patterns.copy()
            patterns[g] = bytes(shrunk)
            ids = self.ids
            assert ids is not None
            ids = ids.copy()
            ids[g] = table_id(patterns[g], g < 3 and self.chows)
            shanten = self.missing + SHANTEN_OF[join(ids[g], self.other_ids(g))][self.melds]
            return self._like(shanten, self.missing, patterns, ids)
        ev = self._like(shanten, missing, patterns, self.ids)
        ev.others = self.others
        return ev

    def _like(
        self, shanten: int, missing: int, patterns: list[bytes], ids: list[int] | None
    ) -> PlanEval:
        return PlanEval(
            self.plan,
            shanten,
            missing=missing,
            patterns=patterns,
            ids=ids,
            melds=self.melds,
            need=self.need,
            masks=self.masks,
        )

    def add(self, counts: list[int], tile: int) -> PlanEval:
        """The plan on the 14-tile hand made by drawing ``tile`` to the 13-tile ``counts``."""
        kind = self.plan.kind
        if kind == PAIRS:
            return PlanEval(self.plan, self.shanten - (counts[tile] & 1))
        if kind == SPECIAL:
            after = counts.copy()
            after[tile] += 1
            return PlanEval(self.plan, _special_shanten(self.plan.special, after))
        g = GROUP_OF[tile]
        if not self.groups >> g & 1:
            ev = self._like(self.shanten, self.missing, self.patterns or [], self.ids)
            ev.others = self.others
            return ev
        for t, n in self.need:
            if t == tile and counts[t] < n:  # a tile the sets lack
                ev = self._like(self.shanten - 1, self.missing - 1, self.patterns or [], self.ids)
                ev.others = self.others
                return ev
        patterns = self.patterns
        ids = self.ids
        assert patterns is not None and ids is not None
        grown = bytearray(patterns[g])
        grown[tile - GROUP_START[g]] += 1
        patterns = patterns.copy()
        patterns[g] = bytes(grown)
        ids = ids.copy()
        ids[g] = table_id(patterns[g], g < 3 and self.chows)
        shanten = self.missing + SHANTEN_OF[join(ids[g], self.other_ids(g))][self.melds]
        return self._like(shanten, self.missing, patterns, ids)

    def dead(self, unavailable: tuple[int, int, int]) -> bool:
        """Whether a tile the plan's sets lack has too few copies left (``unavailable``:
        masks of the tiles of which 1, 2, 3 copies cannot be had)."""
        n1, n2, n3 = self.masks
        u1, u2, u3 = unavailable
        return bool((n1 & u1) | (n2 & u2) | (n3 & u3))

    def gains(self, counts: list[int], tile: int) -> bool:
        """Whether drawing ``tile`` lowers the shanten of this plan on a 13-tile hand."""
        kind = self.plan.kind
        if kind == PAIRS:
            return bool(counts[tile] & 1)
        if kind == SPECIAL:
            return False
        g = GROUP_OF[tile]
        if not self.groups >> g & 1:
            return False
        for t, n in self.need:
            if t == tile and counts[t] < n:
                return True
        patterns = self.patterns
        assert patterns is not None
        key = (self.melds, self.missing, self.shanten)
        lowering = _lowering(patterns[g], g < 3 and self.chows, self.other_ids(g), key)
        return bool(lowering >> (tile - GROUP_START[g]) & 1)

    def useful(self, counts: list[int], unseen: Sequence[int]) -> int:
        """Unseen copies of the tiles that lower the shanten (13-tile hand ``counts``)."""
        kind = self.plan.kind
        if kind == PAIRS:
            return sum(more for n, more in zip(counts, unseen, strict=True) if n & 1)
        if kind == SPECIAL:
            return sum(unseen[t] for t in _shanten.useful_tiles(counts, self.melds))
        patterns = self.patterns
        assert patterns is not None
        current = self.shanten
        seen = 0
        total = 0
        for t, n in self.need:
            if counts[t] < n and not seen >> t & 1:
                seen |= 1 << t
                total += unseen[t]
        key = (self.melds, self.missing, current)
        groups = self.groups
        chows = self.chows
        for g in range(4):
            if not groups >> g & 1:
                continue
            lo = GROUP_START[g]
            lowering = _lowering(patterns[g], g < 3 and chows, self.other_ids(g), key)
            while lowering:
                low = lowering & -lowering
                lowering ^= low
                t = lo + low.bit_length() - 1
                if not seen >> t & 1:
                    seen |= 1 << t
                    total += unseen[t]
        return total


# Per group of a plan: what a discard or a draw there does to its shanten. ``PlanEval``
# asks these for every tile of a group, on patterns that recur from hand to hand: memoised
# (bounded, as ``_rest``).
_ROW_CACHE_SIZE: Final = 1 << 17
_row_cache: dict[tuple[bytes, bool, int, tuple[int, int, int]], tuple[int, ...]] = {}
_lowering_cache: dict[tuple[bytes, bool, int, tuple[int, int, int]], int] = {}


def _discard_row(
    pattern: bytes, chows: bool, others: int, key: tuple[int, int, int]
) -> tuple[int, ...]:
    """A plan's shanten once one tile at each offset of a group is discarded: the group's
    pattern (the tiles its sets left), the table id of its other groups, and ``key``: its
    declared sets, missing tiles and shanten. A tile the pattern lacks (one of the plan's
    sets, or a tile not held: the caller's to tell apart) costs one."""
    full = (pattern, chows, others, key)
    found = _row_cache.get(full)
    if found is None:
        if len(_row_cache) >= _ROW_CACHE_SIZE:
            _row_cache.clear()
        melds, missing, shanten = key
        found = _row_cache[full] = tuple(
            shanten + 1 if table < 0 else missing + SHANTEN_OF[join(table, others)][melds]
            for table in shrink(pattern, chows)
        )
    return found


def _lowering(pattern: bytes, chows: bool, others: int, key: tuple[int, int, int]) -> int:
    """The offsets of a group (bit per offset) whose draw lowers a plan's shanten: the
    draws ``grow`` lists whose table, with the other groups' (``others``), reads less, given
    ``key``: the plan's declared sets, missing tiles and shanten."""
    full = (pattern, chows, others, key)
    found = _lowering_cache.get(full)
    if found is None:
        if len(_lowering_cache) >= _ROW_CACHE_SIZE:
            _lowering_cache.clear()
        melds, missing, shanten = key
        found = 0
        for offset, table in grow(pattern, chows):
            if missing + SHANTEN_OF[join(table, others)][melds] < shanten:
                found |= 1 << offset
        _lowering_cache[full] = found
    return found


def _special_shanten(form: int, counts: list[int]) -> int:
    if form == HONORS_AND_KNITTED:
        return _shanten.honors_and_knitted_shanten(counts)
    return _shanten.thirteen_orphans_shanten(counts)


def _evaluate(plan: Plan, hand: HandTables) -> PlanEval | None:
    """A whole-hand plan (not a fixed-set one) on the hand; ``None`` when it cannot be made."""
    kind = plan.kind
    m = hand.m
    patterns = hand.patterns
    if kind == PLAIN:
        shanten = SHANTEN_OF[join4(hand.ids)][m]
        return PlanEval(plan, shanten, patterns=patterns, ids=hand.ids, melds=m)
    if kind == FLUSH:
        if hand.meld_groups & ~plan.groups:
            return None
        ids = [i if plan.groups >> g & 1 else EMPTY_ID for g, i in enumerate(hand.ids)]
        return PlanEval(plan, SHANTEN_OF[join4(ids)][m], patterns=patterns, ids=ids, melds=m)
    if kind == PUNGS:
        if hand.chow_melds:
            return None
        ids = hand.pungs()
        return PlanEval(plan, SHANTEN_OF[join4(ids)][m], patterns=patterns, ids=ids, melds=m)
    if kind == PAIRS:
        return None if m else PlanEval(plan, 6 - pairs(hand.counts))
    return None if m else PlanEval(plan, _special_shanten(plan.special, hand.counts))


def _evaluate_sets(plan: Plan, hand: HandTables, bound: float) -> PlanEval | None:
    """A fixed-set plan on a hand with melds, some of which may be the plan's sets."""
    unmatched = list(plan.sets)
    extra = 0
    for key in hand.meld_keys:
        if key in unmatched:
            unmatched.remove(key)
        else:
            extra += 1
    if extra + 3 > 4:
        return None
    needed: dict[int, int] = {} if plan.sets else dict(plan.need)
    for kind, tile in unmatched:
        for t in (tile, tile + 1, tile + 2) if kind == CHOW_SET else (tile,) * 3:
            needed[t] = needed.get(t, 0) + 1
    counts = hand.counts
    unseen = hand.unseen
    missing = 0
    for t, n in needed.items():
        short = n - counts[t]
        if short > 0:
            if short > unseen[t]:
                return None  # not enough copies left to draw
            missing += short
    if missing + plan.penalty > bound:
        return None
    return _finish_sets(plan, hand, tuple(needed.items()), missing, 3 + extra)


def _finish_sets(
    plan: Plan, hand: HandTables, need: Sequence[tuple[int, int]], missing: int, melds: int
) -> PlanEval:
    counts = hand.counts
    rest = counts.copy()
    touched = 0
    for t, n in need:
        rest[t] -= min(n, counts[t])
        touched |= 1 << GROUP_OF[t]
    patterns = hand.patterns.copy()
    ids = hand.ids.copy()
    for g in range(3):  # fixed sets with honors are pungs: read the same with or without chows
        if touched >> g & 1:
            patterns[g] = pattern = bytes(rest[GROUP_START[g] : GROUP_END[g]])
            ids[g] = table_id(pattern, True)
    if touched & 0b1000:
        patterns[3] = pattern = bytes(rest[EAST:N_KINDS])
        ids[3] = table_id(pattern, False)
    masks = [0, 0, 0]
    for t, n in need:
        for k in range(n):
            masks[k] |= 1 << (8 * t)
    shanten = missing + SHANTEN_OF[join4(ids)][melds]
    return PlanEval(
        plan,
        shanten,
        missing=missing,
        patterns=patterns,
        ids=ids,
        melds=melds,
        need=need,
        masks=(masks[0], masks[1], masks[2]),
    )


# The fixed-set plans are scanned all at once: each has an 8-bit lane in a big int (its
# index in ``SET_PLANS``), and for each group's count pattern a cached int holds in every
# lane the tiles of that group the plan lacks. A hand's four ints added to the penalties give
# every plan's missing tiles plus penalty, read as bytes.


@dataclass(frozen=True, slots=True)
class _Lanes:
    """The lane tables of the fixed-set plans.

    ``needed[g]``: in each lane, the tiles the plan needs in group ``g``; ``held[g][o][c]``:
    how many of those ``c`` copies at offset ``o`` of group ``g`` give it (at most what it
    needs there); ``parts[i]``: plan ``i``'s needs by group as (group, need id);
    ``needs[need id]``: the (offset, copies) that need takes from its group.
    """

    needed: tuple[int, ...]
    held: tuple[tuple[tuple[int, ...], ...], ...]
    parts: tuple[tuple[tuple[int, int], ...], ...]
    needs: tuple[tuple[tuple[int, int], ...], ...]
    penalties: int


def _build_lanes(plans: Sequence[Plan]) -> _Lanes:
    needed = [0, 0, 0, 0]
    held = [[[0] * 5 for _ in range(9)] for _ in range(4)]
    parts: list[tuple[tuple[int, int], ...]] = []
    needs: list[tuple[tuple[int, int], ...]] = []
    for i, plan in enumerate(plans):
        by_group: dict[int, list[tuple[int, int]]] = {}
        for tile, n in plan.need:
            g = GROUP_OF[tile]
            by_group.setdefault(g, []).append((tile - GROUP_START[g], n))
            needed[g] += n << (8 * i)
            for c in range(1, 5):
                held[g][tile - GROUP_START[g]][c] += min(n, c) << (8 * i)
        plan_parts = []
        for g, need in sorted(by_group.items()):
            plan_parts.append((g, len(needs)))
            needs.append(tuple(need))
        parts.append(tuple(plan_parts))
    assert all(plan.penalty in (0.0, 1.0) for plan in plans)  # whole tiles in the lanes
    return _Lanes(
        needed=tuple(needed),
        held=tuple(tuple(tuple(row) for row in group) for group in held),
        parts=tuple(parts),
        needs=tuple(needs),
        penalties=sum(int(plan.penalty) << (8 * i) for i, plan in enumerate(plans)),
    )


_LANES: Final = _build_lanes(SET_PLANS)
_LANE_BYTES: Final = len(SET_PLANS)
_lane_cache: dict[tuple[int, bytes], int] = {}


def _lanes(g: int, pattern: bytes) -> int:
    """In each plan's lane, the tiles of group ``g`` (count pattern ``pattern``) it lacks."""
    key = (g, pattern)
    found = _lane_cache.get(key)
    if found is None:
        held = _LANES.held[g]
        found = _LANES.needed[g]
        for offset, n in enumerate(pattern):
            if n:
                found -= held[offset][n]
        _lane_cache[key] = found
    return found


_CACHE_SIZE: Final = 1 << 18
_rest_cache: dict[tuple[bytes, int], tuple[bytes, int]] = {}


def _rest(pattern: bytes, need: int) -> tuple[bytes, int]:
    """A group's pattern less what need ``need`` takes from it, and its table id."""
    key = (pattern, need)
    found = _rest_cache.get(key)
    if found is None:
        if len(_rest_cache) >= _CACHE_SIZE:
            _rest_cache.clear()  # pattern x need pairs: bounded here, unlike the tables
        rest = bytearray(pattern)
        for offset, n in _LANES.needs[need]:
            rest[offset] -= min(n, rest[offset])
        left = bytes(rest)
        found = _rest_cache[key] = (left, table_id(left, len(pattern) == 9))
    return found


def _finish_plan(
    index: int, hand: HandTables, missing: int, melds: int, bound: float
) -> PlanEval | None:
    """Fixed-set plan ``index`` on a hand none of whose melds is one of its sets (``None``
    when its value is over ``bound``)."""
    patterns = hand.patterns.copy()
    ids = hand.ids.copy()
    for g, need in _LANES.parts[index]:
        patterns[g], ids[g] = _rest(patterns[g], need)
    plan = SET_PLANS[index]
    shanten = missing + SHANTEN_OF[join4(ids)][melds]
    if shanten + plan.penalty > bound:
        return None
    return PlanEval(
        plan,
        shanten,
        missing=missing,
        patterns=patterns,
        ids=ids,
        melds=melds,
        need=plan.need,
        masks=plan.masks,
    )


def plans_on(hand: HandTables, window: float = SLACK, cap: int = MAX_PLANS) -> list[PlanEval]:
    """The plans at most ``window`` worse than the best on a hand, best first (at most
    ``cap`` of them)."""
    # The whole-hand plans' values first; their ``PlanEval`` only for those that are kept.
    m = hand.m
    ids = hand.ids
    row = SHANTEN_OF
    basics: list[tuple[float, Plan]] = [(row[join4(ids)][m] + PLAIN_PLAN.penalty, PLAIN_PLAN)]
    for plan in FLUSH_PLANS:
        if not hand.meld_groups & ~plan.groups:
            g = plan.suit
            table = join(ids[g], ids[3]) if plan.groups & 0b1000 else ids[g]
            basics.append((row[table][m] + plan.penalty, plan))
    if not hand.chow_melds:
        basics.append((row[join4(hand.pungs())][m] + PUNGS_PLAN.penalty, PUNGS_PLAN))
    if not m:
        basics.append((6 - pairs(hand.counts) + PAIRS_PLAN.penalty, PAIRS_PLAN))
    best = min(value for value, _ in basics)
    evals: list[PlanEval] = []
    if m <= 1:
        # A fixed-set plan's shanten is its missing tiles plus that of the other tiles,
        # which is at least 0 unless they are complete: scan the lanes for plans within the
        # limit on missing tiles alone, then finish them best first.
        patterns = hand.patterns
        lanes = (
            _lanes(0, patterns[0])
            + _lanes(1, patterns[1])
            + _lanes(2, patterns[2])
            + _lanes(3, patterns[3])
            + _LANES.penalties
        )
        values = lanes.to_bytes(_LANE_BYTES, "little")
        u1, u2, u3 = hand.unavailable
        candidates: list[tuple[int, int]] = []
        for value in range(int(best + window) + 1):  # fewest missing first
            i = values.find(value)
            while i >= 0 and len(candidates) < FINISHED_PLANS:
                n1, n2, n3 = SET_PLANS[i].masks
                if not ((n1 & u1) or (n2 & u2) or (n3 & u3)):  # else a tile has no copy left
                    candidates.append((value, i))
                i = values.find(value, i + 1)
        keyed = set(PLANS_WITH_SET.get(hand.meld_keys[0], ())) if m else set()
        for bound, i in candidates:
            if bound > best + window:
                break
            plan = SET_PLANS[i]
            if plan in keyed:
                found = _evaluate_sets(plan, hand, best + window)
                if found is None:
                    continue
                ev = found
            else:
                found = _finish_plan(i, hand, bound - int(plan.penalty), 3 + m, best + window)
                if found is None:
                    continue
                ev = found
            evals.append(ev)
            best = min(best, ev.value)
    else:
        # With two melds or more, a plan must hold all of them but one.
        hits: dict[Plan, int] = {}
        for key in hand.meld_keys:
            for plan in PLANS_WITH_SET.get(key, ()):
                hits[plan] = hits.get(plan, 0) + 1
        for plan in SET_PLANS:
            if hits.get(plan, 0) >= m - 1:
                found = _evaluate_sets(plan, hand, best + window)
                if found is not None:
                    evals.append(found)
                    best = min(best, found.value)
    if not m:
        # The special forms, on bit masks (the formulas of ``engine.shanten``).
        counts = bytes(hand.counts)
        held = at_least(counts, 1)
        for plan in SPECIAL_PLANS:
            if plan.special == THIRTEEN_ORPHANS:
                paired = int(bool(_ORPHANS_MASK & at_least(counts, 2)))
                shanten = 13 - (held & _ORPHANS_MASK).bit_count() - paired
            else:
                knitted = max((held & mask).bit_count() for mask in _KNITTED_MASKS)
                shanten = 13 - (held & _HONORS_MASK).bit_count() - knitted
            if shanten <= best + window:
                evals.append(PlanEval(plan, shanten))
                best = min(best, shanten)
    for basic_value, plan in basics:
        if basic_value <= best + window:
            found = _evaluate(plan, hand)
            assert found is not None
            evals.append(found)
    evals = [ev for ev in evals if ev.value <= best + window]
    evals.sort(key=by_value)
    return evals[:cap]


def by_value(ev: PlanEval) -> float:
    return ev.value

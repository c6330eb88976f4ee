"""Bots (机器人): players that choose an action from what one seat may see.

A bot gets a ``View`` (``HandState.view(player)``) and nothing else, and returns one of
``view.legal``. Bots are pure: no I/O, no clock, no randomness, and the same view always gets
the same action. ``DefaultBot`` keeps memos, but only of functions of their keys (a hand, a
seat), so they change its speed and never its play; a fresh bot given any view of a game
answers as the bot that played it.

- ``FastBot``: for load tests. Wins when it can, never claims, discards the tile it drew.
- ``DefaultBot``: plays for a hand that can reach the 8-fan minimum (起和番); under rules
  with wild tiles (财神) or no minimum (``View.rules``), for the quickest complete hand.

How ``DefaultBot`` plays. An efficiency-only bot gets ready (听牌) with hands worth 2-6 fan
and can never win in MCR, so it steers by *plans* (目标番种): each plan is a kind of hand
that scores 8 fan or nearly so, with its own shanten (向听数) counted on the tiles the plan
can use, and a penalty (in tiles) for the fan it may still lack:

- the plain hand (any reading; penalty 3: it rarely reaches 8 fan alone);
- Full Flush (清一色) and Half Flush (混一色, penalty 1) in each suit: the tiles of other
  suits are junk to it; All Pungs (碰碰和, 1): read without chows; Seven Pairs (七对, 0.5);
- fixed sets: Pure and Mixed Straight (清龙, 花龙), Mixed Triple Chow (三色三同顺), Mixed
  Shifted Chows (三色三步高, 1), Pure Shifted Chows (一色三步高), Pure Triple Chow
  (一色三同顺), Triple Pung (三同刻), Mixed and Pure Shifted Pungs (三色三节高, 一色三节高),
  Two Dragon Pungs (双箭刻, 1), Big Three Winds (三风刻), Knitted Straight (组合龙). Their
  shanten is the tiles the sets still lack plus the regular shanten of the other tiles with
  the sets counted as declared (as ``engine.shanten`` reads the knitted straight). A plan
  whose missing tile has no copy left is dead;
- Honors and Knitted Tiles (全不靠) and Thirteen Orphans (十三幺).

A plan's value is its shanten plus its penalty. On its turn the bot weighs the plans within
``SLACK`` of the best on its 14 tiles and discards the tile that leaves the best value. A
discard that leaves the hand ready has its waits scored with ``engine.scoring.score`` (the
winning hand built from the seat's melds, standing tiles and the wait): a wait that reaches
8 fan on a discard counts its unseen copies, one that reaches it only self-drawn a third of
them, and a ready hand with such waits beats every plan. Unseen copies are 4 less those the
seat sees: its hand, the rivers, the melds. Ties go to the discard that leaves the most
unseen useful tiles for the best plan, then keeps more plans close, then to lone honors,
terminals and lone tiles. Claims (chow, pung, kong) and kongs are taken when the hand is
better after them by the same measure, and only for a set that serves a plan the tile helps.

Under the ``custom`` rule set with wild tiles, or with no fan minimum (``rules.min_fan`` 0:
any complete hand wins), plans give way to speed: the bot counts its wild tiles toward the
hand with ``engine.wilds.shanten_with_wilds`` and discards the tile that leaves the lowest
shanten, then the most unseen useful tiles (``useful_tiles_with_wilds``), then the tile it
least wants to keep; it claims when the hand is better after the claim and its discard,
declares a kong that costs nothing. It only ever picks from ``view.legal``, where the table
never offers to discard a wild tile (unless nothing else is left) nor to claim with one.
With wilds and the '8 fan to win' option it plays the same way and wins when the table
says the hand reaches the minimum (in simulation nearly all its complete hands do).

Speed (``guobiao simulate`` plays thousands of hands). Shanten is read off the suit tables of
``engine.shanten``: a table per count pattern of a suit, combined pairwise through caches, so
a discard, which changes one suit, costs a lookup or two per plan. The fixed-set plans are
scanned at once: a big int holds a byte per plan, the tiles it lacks, summed from one cached
int per suit pattern; only the few with the fewest missing tiles are evaluated in full. The
plans of the 13-tile hand between turns are memoised (with a wider window, so that those of
the hand plus the drawn tile follow from them exactly); when the drawn tile helps none of the
close plans, the bot gives it back without weighing every discard. Claims are filtered the
same way before anything is evaluated. Playing for speed (wild tiles, no minimum), it keeps a
memo of each 13-tile hand's shanten and useful tiles, gives back a drawn tile that lowers
nothing, and counts useful tiles only for the few discards tied best.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import Final, Protocol

from engine import shanten as _shanten
from engine.actions import KONG, Action, ActionKind
from engine.errors import MahjongError
from engine.fans import Fan
from engine.forms import KNITTED
from engine.hand import Hand, Meld, MeldKind
from engine.rules import MCR
from engine.scoring import WinContext, score
from engine.table import Phase, SeatView, View
from engine.tiles import (
    EAST,
    N_KINDS,
    RED,
    TERMINALS_AND_HONORS,
    WHITE,
    Wind,
    is_terminal_or_honor,
)
from engine.wilds import shanten_with_wilds, useful_tiles_with_wilds

# The part tables of ``engine.shanten``: a count pattern's table id, the id of two parts
# taken together, and the regular shanten of a table id for 0..4 declared sets, to count
# shanten on part of a hand (a flush suit, the tiles beside a plan's sets).
_pattern_id = _shanten.pattern_table
_sum = _shanten.combine_tables
_SHANTEN_OF: Final = _shanten.TABLE_SHANTEN

INF: Final = 99.0


class Bot(Protocol):
    """A player: ``choose`` returns one of ``view.legal``."""

    def choose(self, view: View) -> Action: ...


# ---------------------------------------------------------------- FastBot ---


class FastBot:
    """Cheap and simple, for load tests: wins when it can, passes on every claim, discards
    the tile it drew (after a claim, the first legal discard)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def choose(self, view: View) -> Action:
        legal = view.legal
        if not legal:
            raise MahjongError("the bot has nothing to choose from: view.legal is empty")
        first_discard: Action | None = None
        for action in legal:
            kind = action.kind
            if kind is ActionKind.WIN:
                return action
            if kind is ActionKind.DISCARD:
                if action.tile == view.drawn:
                    return action
                if first_discard is None:
                    first_discard = action
        if view.phase in (Phase.CLAIM, Phase.ROB):
            return Action(ActionKind.PASS)
        return first_discard if first_discard is not None else legal[0]


# ------------------------------------------------------- tables and parts ---

# Four groups: the three suits (chows allowed) and the honors.
_GROUP_OF: Final = tuple(t // 9 if t < EAST else 3 for t in range(N_KINDS))
_GROUP_START: Final = (0, 9, 18, EAST)
_GROUP_END: Final = (9, 18, 27, N_KINDS)
_ALL_GROUPS: Final = 0b1111
_EMPTY_ID: Final = _pattern_id(b"", True)

_ids: dict[tuple[bytes, bool], int] = {}


def _table(pattern: bytes, chows: bool) -> int:
    """The table id of one group's count pattern, read with or without chows."""
    key = (pattern, chows)
    found = _ids.get(key)
    if found is None:
        found = _ids[key] = _pattern_id(pattern, chows)
    return found


# ``engine.shanten`` interns a hundred or so tables: the sums of two are memoised here in a
# flat list, ids below ``_SUM_SPAN`` (a dictionary beyond, should there ever be more).
_SUM_SPAN: Final = 256
_sum_list: list[int] = [-1] * (_SUM_SPAN * _SUM_SPAN)
_sum_dict: dict[tuple[int, int], int] = {}


def _add(a: int, b: int) -> int:
    """The table id of two parts taken together."""
    if a < _SUM_SPAN and b < _SUM_SPAN:
        index = a * _SUM_SPAN + b
        found = _sum_list[index]
        if found < 0:
            found = _sum_list[index] = _sum(a, b)
        return found
    key = (a, b)
    found = _sum_dict.get(key, -1)
    if found < 0:
        found = _sum_dict[key] = _sum(a, b)
    return found


def _sum4(ids: Sequence[int]) -> int:
    return _add(_add(ids[0], ids[1]), _add(ids[2], ids[3]))


_grow_cache: dict[tuple[bytes, bool], tuple[tuple[int, int], ...]] = {}


def _grow(pattern: bytes, chows: bool) -> tuple[tuple[int, int], ...]:
    """(offset, table id after drawing it) for the draws that may join a block of the group:
    not a fifth copy, not a tile with no neighbour (a new single joins nothing)."""
    key = (pattern, chows)
    found = _grow_cache.get(key)
    if found is None:
        out = []
        for offset, n in enumerate(pattern):
            if n == 4:
                continue
            if n == 0 and not (chows and any(pattern[max(offset - 2, 0) : offset + 3])):
                continue
            grown = bytearray(pattern)
            grown[offset] += 1
            out.append((offset, _table(bytes(grown), chows)))
        found = _grow_cache[key] = tuple(out)
    return found


_shrink_cache: dict[tuple[bytes, bool], tuple[int, ...]] = {}


def _shrink(pattern: bytes, chows: bool) -> tuple[int, ...]:
    """For each offset, the table id once one tile there is taken away (-1: none there)."""
    key = (pattern, chows)
    found = _shrink_cache.get(key)
    if found is None:
        out = []
        for offset, n in enumerate(pattern):
            if not n:
                out.append(-1)
                continue
            shrunk = bytearray(pattern)
            shrunk[offset] -= 1
            out.append(_table(bytes(shrunk), chows))
        found = _shrink_cache[key] = tuple(out)
    return found


def _patterns(counts: Sequence[int]) -> list[bytes]:
    return [bytes(counts[0:9]), bytes(counts[9:18]), bytes(counts[18:27]), bytes(counts[27:34])]


def _tile_mask(tiles: Iterable[int]) -> int:
    """A set of tiles as an int with a byte per tile (see ``_at_least``)."""
    return sum(1 << (8 * t) for t in set(tiles))


# ------------------------------------------------------------------ plans ---

PLAIN, FLUSH, PUNGS, PAIRS, SETS, SPECIAL = range(6)
CHOW_SET, PUNG_SET = 0, 1
_HONORS_AND_KNITTED, _THIRTEEN_ORPHANS = range(2)


@dataclass(frozen=True, slots=True, eq=False)  # compared and hashed by identity
class Plan:
    """A kind of hand to steer for, with the fan it may lack as a penalty (in tiles)."""

    name: str
    kind: int
    penalty: float
    groups: int = _ALL_GROUPS  # the groups whose tiles the plan uses (bit per group)
    chows: bool = True  # whether suit tiles may form chows
    sets: tuple[tuple[int, int], ...] = ()  # SETS: (CHOW_SET or PUNG_SET, tile)
    need: tuple[tuple[int, int], ...] = ()  # SETS: (tile, copies) the sets need
    masks: tuple[int, int, int] = (0, 0, 0)  # SETS: tiles needed at least 1, 2, 3 times
    special: int = -1  # SPECIAL: which form
    suit: int = -1  # FLUSH: the suit


def _sets_plan(name: str, penalty: float, sets: Sequence[tuple[int, int]]) -> Plan:
    need: dict[int, int] = {}
    for kind, tile in sets:
        for t in (tile, tile + 1, tile + 2) if kind == CHOW_SET else (tile, tile, tile):
            need[t] = need.get(t, 0) + 1
    masks = [0, 0, 0]
    for t, n in need.items():
        for k in range(min(n, 3)):
            masks[k] |= 1 << (8 * t)
    return Plan(
        name,
        SETS,
        penalty,
        sets=tuple(sets),
        need=tuple(sorted(need.items())),
        masks=(masks[0], masks[1], masks[2]),
    )


def _build_plans() -> tuple[tuple[Plan, ...], tuple[Plan, ...], tuple[Plan, ...]]:
    """The plans: cheap whole-hand ones, fixed-set ones, special forms."""
    basic = [Plan("plain", PLAIN, 3.0)]
    for s in range(3):
        basic.append(Plan(f"full flush {'mps'[s]}", FLUSH, 0.0, groups=1 << s, suit=s))
        basic.append(Plan(f"half flush {'mps'[s]}", FLUSH, 1.0, groups=(1 << s) | 0b1000, suit=s))
    basic.append(Plan("all pungs", PUNGS, 1.0, chows=False))
    basic.append(Plan("seven pairs", PAIRS, 0.5))

    sets: list[Plan] = []
    chow, pung = CHOW_SET, PUNG_SET
    for s in range(3):
        b = 9 * s
        sets.append(_sets_plan("pure straight", 0.0, [(chow, b), (chow, b + 3), (chow, b + 6)]))
    for a, b, c in permutations(range(3)):
        sets.append(
            _sets_plan("mixed straight", 0.0, [(chow, 9 * a), (chow, 9 * b + 3), (chow, 9 * c + 6)])
        )
    for r in range(7):
        sets.append(
            _sets_plan("mixed triple chow", 0.0, [(chow, r), (chow, 9 + r), (chow, 18 + r)])
        )
    for a, b, c in permutations(range(3)):
        for r in range(5):
            sets.append(
                _sets_plan(
                    "mixed shifted chows",
                    1.0,
                    [(chow, 9 * a + r), (chow, 9 * b + r + 1), (chow, 9 * c + r + 2)],
                )
            )
    for s in range(3):
        b = 9 * s
        for step, starts in ((1, 5), (2, 3)):  # shifted by one, then by two
            for r in range(starts):
                sets.append(
                    _sets_plan(
                        "pure shifted chows",
                        0.0,
                        [(chow, b + r), (chow, b + r + step), (chow, b + r + 2 * step)],
                    )
                )
        for r in range(7):
            sets.append(_sets_plan("pure triple chow", 0.0, [(chow, b + r)] * 3))
        for r in range(7):
            sets.append(
                _sets_plan(
                    "pure shifted pungs",
                    0.0,
                    [(pung, b + r), (pung, b + r + 1), (pung, b + r + 2)],
                )
            )
    for r in range(9):
        sets.append(_sets_plan("triple pung", 0.0, [(pung, r), (pung, 9 + r), (pung, 18 + r)]))
    for a, b, c in permutations(range(3)):
        for r in range(7):
            sets.append(
                _sets_plan(
                    "mixed shifted pungs",
                    0.0,
                    [(pung, 9 * a + r), (pung, 9 * b + r + 1), (pung, 9 * c + r + 2)],
                )
            )
    for skip in range(RED, WHITE + 1):
        dragons = [(pung, t) for t in range(RED, WHITE + 1) if t != skip]
        sets.append(_sets_plan("two dragon pungs", 1.0, dragons))
    for skip in range(EAST, RED):
        winds = [(pung, t) for t in range(EAST, RED) if t != skip]
        sets.append(_sets_plan("big three winds", 0.0, winds))

    for seq in KNITTED:
        # The nine knitted tiles stand for three sets that cannot be declared.
        mask = _tile_mask(seq)
        sets.append(
            Plan(
                "knitted straight",
                SETS,
                0.0,
                need=tuple((t, 1) for t in seq),
                masks=(mask, 0, 0),
            )
        )
    special = (
        Plan("honors and knitted tiles", SPECIAL, 0.0, special=_HONORS_AND_KNITTED),
        Plan("thirteen orphans", SPECIAL, 0.0, special=_THIRTEEN_ORPHANS),
    )
    return tuple(basic), tuple(sets), special


BASIC_PLANS, SET_PLANS, SPECIAL_PLANS = _build_plans()
PLAIN_PLAN: Final = BASIC_PLANS[0]
_FLUSH_PLANS: Final = tuple(plan for plan in BASIC_PLANS if plan.kind == FLUSH)
_PUNGS_PLAN: Final = next(plan for plan in BASIC_PLANS if plan.kind == PUNGS)
_PAIRS_PLAN: Final = next(plan for plan in BASIC_PLANS if plan.kind == PAIRS)

SLACK: Final = 1.0  # plans this far behind the best on the 14-tile hand are still weighed
MAX_PLANS: Final = 4  # ... at most this many of them
F13_CAP: Final = 8  # plans kept per 13-tile hand
FINISHED_PLANS: Final = 4  # fixed-set plans fully evaluated on a hand, fewest missing first
USEFUL_PLANS: Final = 1  # useful tiles are counted for this many of the best plans
TIED_DISCARDS: Final = 2  # ... and for this many of the discards tied best (keep order)
SELF_DRAWN_WEIGHT: Final = 0.33  # a wait that reaches 8 fan only self-drawn


# ------------------------------------------------------------ hand state ---

# Sets of tiles as ints with a byte per tile (bit 8t for tile t): ``bytes.translate`` turns
# a count array into one in a single C call.
_AT_LEAST: Final = tuple(bytes(int(n >= k) for n in range(256)) for k in range(5))


def _at_least(counts: bytes, k: int) -> int:
    """The tiles of which ``counts`` holds ``k`` or more."""
    return int.from_bytes(counts.translate(_AT_LEAST[k]), "little")


_ORPHANS_MASK: Final = _tile_mask(TERMINALS_AND_HONORS)
_HONORS_MASK: Final = _tile_mask(range(EAST, N_KINDS))
_KNITTED_MASKS: Final = tuple(_tile_mask(seq) for seq in KNITTED)


class _Unseen(list[int]):
    """Unseen copies of each tile (4 less those the seat can see), and ``unavailable``: the
    tiles of which 1, 2, 3 copies cannot be had, held or unseen (byte masks)."""

    unavailable: tuple[int, int, int] = (0, 0, 0)


_ALL_UNSEEN: Final = _Unseen((4,) * N_KINDS)  # as if nothing were seen: no plan is dead


class _Hand:
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

    def __init__(self, counts: list[int], melds: tuple[Meld, ...], unseen: _Unseen) -> None:
        self.counts = counts
        self.melds = melds
        self.m = len(melds)
        self.unseen = unseen
        self.patterns = patterns = _patterns(counts)
        self.ids = [
            _table(patterns[0], True),
            _table(patterns[1], True),
            _table(patterns[2], True),
            _table(patterns[3], False),
        ]
        self.pung_ids: list[int] | None = None
        meld_groups = 0
        chow_melds = False
        keys = []
        for meld in melds:
            meld_groups |= 1 << _GROUP_OF[meld.tile]
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
                _table(patterns[0], False),
                _table(patterns[1], False),
                _table(patterns[2], False),
                self.ids[3],
            ]
        return self.pung_ids


class _Eval:
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
                found = _add(ids[1], _add(ids[2], ids[3]))
            elif g == 1:
                found = _add(ids[0], _add(ids[2], ids[3]))
            elif g == 2:
                found = _add(ids[3], _add(ids[0], ids[1]))
            else:
                found = _add(ids[2], _add(ids[0], ids[1]))
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
        g = _GROUP_OF[tile]
        if not self.groups >> g & 1:
            return self.shanten  # a tile the plan does not use
        patterns = self.patterns
        assert patterns is not None
        table = _shrink(patterns[g], g < 3 and self.chows)[tile - _GROUP_START[g]]
        if table < 0:
            return self.shanten + 1  # a tile of the plan's sets
        return self.missing + _SHANTEN_OF[_add(table, self.other_ids(g))][self.melds]

    def after_discards(self, counts: list[int]) -> list[int]:
        """``after_discard`` for every tile (34 slots; meaningful for the tiles held)."""
        kind = self.plan.kind
        shanten = self.shanten
        if kind == PAIRS:
            return [shanten + 1 - (n & 1) for n in counts]
        if kind == SPECIAL:
            return [self.after_discard(counts, t) if n else 99 for t, n in enumerate(counts)]
        out = [shanten] * N_KINDS  # the tiles the plan does not use
        patterns = self.patterns
        assert patterns is not None
        missing = self.missing
        melds = self.melds
        for g in range(4):
            if not self.groups >> g & 1:
                continue
            lo = _GROUP_START[g]
            others = self.other_ids(g)
            for offset, table in enumerate(_shrink(patterns[g], g < 3 and self.chows)):
                if counts[lo + offset]:
                    out[lo + offset] = (
                        shanten + 1  # a tile of the plan's sets
                        if table < 0
                        else missing + _SHANTEN_OF[_add(table, others)][melds]
                    )
        return out

    def discard(self, counts: list[int], tile: int) -> _Eval:
        """The plan on the 13-tile hand left by discarding ``tile`` from ``counts``."""
        kind = self.plan.kind
        if kind in (PAIRS, SPECIAL):
            return _Eval(self.plan, self.after_discard(counts, tile), melds=self.melds)
        g = _GROUP_OF[tile]
        patterns = self.patterns
        assert patterns is not None
        offset = tile - _GROUP_START[g]
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
            ids[g] = _table(patterns[g], g < 3 and self.chows)
            shanten = self.missing + _SHANTEN_OF[_add(ids[g], self.other_ids(g))][self.melds]
            return self._like(shanten, self.missing, patterns, ids)
        ev = self._like(shanten, missing, patterns, self.ids)
        ev.others = self.others
        return ev

    def _like(
        self, shanten: int, missing: int, patterns: list[bytes], ids: list[int] | None
    ) -> _Eval:
        return _Eval(
            self.plan,
            shanten,
            missing=missing,
            patterns=patterns,
            ids=ids,
            melds=self.melds,
            need=self.need,
            masks=self.masks,
        )

    def add(self, counts: list[int], tile: int) -> _Eval:
        """The plan on the 14-tile hand made by drawing ``tile`` to the 13-tile ``counts``."""
        kind = self.plan.kind
        if kind == PAIRS:
            return _Eval(self.plan, self.shanten - (counts[tile] & 1))
        if kind == SPECIAL:
            after = counts.copy()
            after[tile] += 1
            return _Eval(self.plan, _special_shanten(self.plan.special, after))
        g = _GROUP_OF[tile]
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
        grown[tile - _GROUP_START[g]] += 1
        patterns = patterns.copy()
        patterns[g] = bytes(grown)
        ids = ids.copy()
        ids[g] = _table(patterns[g], g < 3 and self.chows)
        shanten = self.missing + _SHANTEN_OF[_add(ids[g], self.other_ids(g))][self.melds]
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
        g = _GROUP_OF[tile]
        if not self.groups >> g & 1:
            return False
        for t, n in self.need:
            if t == tile and counts[t] < n:
                return True
        patterns = self.patterns
        assert patterns is not None
        offset = tile - _GROUP_START[g]
        for at, table in _grow(patterns[g], g < 3 and self.chows):
            if at == offset:
                row = _SHANTEN_OF[_add(table, self.other_ids(g))]
                return self.missing + row[self.melds] < self.shanten
        return False

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
        missing = self.missing
        melds = self.melds
        for g in range(4):
            if not self.groups >> g & 1:
                continue
            lo = _GROUP_START[g]
            others = self.other_ids(g)
            for offset, table in _grow(patterns[g], g < 3 and self.chows):
                t = lo + offset
                if seen >> t & 1 or not unseen[t]:
                    continue
                if missing + _SHANTEN_OF[_add(table, others)][melds] < current:
                    seen |= 1 << t
                    total += unseen[t]
        return total


def _special_shanten(form: int, counts: list[int]) -> int:
    if form == _HONORS_AND_KNITTED:
        return _shanten.honors_and_knitted_shanten(counts)
    return _shanten.thirteen_orphans_shanten(counts)


def _evaluate(plan: Plan, hand: _Hand) -> _Eval | None:
    """A whole-hand plan (not a fixed-set one) on the hand; ``None`` when it cannot be made."""
    kind = plan.kind
    m = hand.m
    patterns = hand.patterns
    if kind == PLAIN:
        shanten = _SHANTEN_OF[_sum4(hand.ids)][m]
        return _Eval(plan, shanten, patterns=patterns, ids=hand.ids, melds=m)
    if kind == FLUSH:
        if hand.meld_groups & ~plan.groups:
            return None
        ids = [i if plan.groups >> g & 1 else _EMPTY_ID for g, i in enumerate(hand.ids)]
        return _Eval(plan, _SHANTEN_OF[_sum4(ids)][m], patterns=patterns, ids=ids, melds=m)
    if kind == PUNGS:
        if hand.chow_melds:
            return None
        ids = hand.pungs()
        return _Eval(plan, _SHANTEN_OF[_sum4(ids)][m], patterns=patterns, ids=ids, melds=m)
    if kind == PAIRS:
        return None if m else _Eval(plan, 6 - sum(n >> 1 for n in hand.counts))
    return None if m else _Eval(plan, _special_shanten(plan.special, hand.counts))


def _evaluate_sets(plan: Plan, hand: _Hand, bound: float) -> _Eval | None:
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
    plan: Plan, hand: _Hand, need: Sequence[tuple[int, int]], missing: int, melds: int
) -> _Eval:
    counts = hand.counts
    rest = counts.copy()
    touched = 0
    for t, n in need:
        rest[t] -= min(n, counts[t])
        touched |= 1 << _GROUP_OF[t]
    patterns = hand.patterns.copy()
    ids = hand.ids.copy()
    for g in range(3):  # fixed sets with honors are pungs: read the same with or without chows
        if touched >> g & 1:
            patterns[g] = pattern = bytes(rest[_GROUP_START[g] : _GROUP_END[g]])
            ids[g] = _table(pattern, True)
    if touched & 0b1000:
        patterns[3] = pattern = bytes(rest[EAST:N_KINDS])
        ids[3] = _table(pattern, False)
    masks = [0, 0, 0]
    for t, n in need:
        for k in range(n):
            masks[k] |= 1 << (8 * t)
    shanten = missing + _SHANTEN_OF[_sum4(ids)][melds]
    return _Eval(
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
            g = _GROUP_OF[tile]
            by_group.setdefault(g, []).append((tile - _GROUP_START[g], n))
            needed[g] += n << (8 * i)
            for c in range(1, 5):
                held[g][tile - _GROUP_START[g]][c] += min(n, c) << (8 * i)
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
        found = _rest_cache[key] = (left, _table(left, len(pattern) == 9))
    return found


def _finish_plan(index: int, hand: _Hand, missing: int, melds: int, bound: float) -> _Eval | None:
    """Fixed-set plan ``index`` on a hand none of whose melds is one of its sets (``None``
    when its value is over ``bound``)."""
    patterns = hand.patterns.copy()
    ids = hand.ids.copy()
    for g, need in _LANES.parts[index]:
        patterns[g], ids[g] = _rest(patterns[g], need)
    plan = SET_PLANS[index]
    shanten = missing + _SHANTEN_OF[_sum4(ids)][melds]
    if shanten + plan.penalty > bound:
        return None
    return _Eval(
        plan,
        shanten,
        missing=missing,
        patterns=patterns,
        ids=ids,
        melds=melds,
        need=plan.need,
        masks=plan.masks,
    )


_PLANS_WITH_SET: dict[tuple[int, int], list[Plan]] = {}
for _plan in SET_PLANS:
    for _key in set(_plan.sets):
        _PLANS_WITH_SET.setdefault(_key, []).append(_plan)


def _plans_on(hand: _Hand, window: float = SLACK, cap: int = MAX_PLANS) -> list[_Eval]:
    """The plans at most ``window`` worse than the best on a hand, best first (at most
    ``cap`` of them)."""
    # The whole-hand plans' values first; their ``_Eval`` only for those that are kept.
    m = hand.m
    ids = hand.ids
    row = _SHANTEN_OF
    basics: list[tuple[float, Plan]] = [(row[_sum4(ids)][m] + PLAIN_PLAN.penalty, PLAIN_PLAN)]
    for plan in _FLUSH_PLANS:
        if not hand.meld_groups & ~plan.groups:
            g = plan.suit
            table = _add(ids[g], ids[3]) if plan.groups & 0b1000 else ids[g]
            basics.append((row[table][m] + plan.penalty, plan))
    if not hand.chow_melds:
        basics.append((row[_sum4(hand.pungs())][m] + _PUNGS_PLAN.penalty, _PUNGS_PLAN))
    if not m:
        pairs = 6 - sum(n >> 1 for n in hand.counts)
        basics.append((pairs + _PAIRS_PLAN.penalty, _PAIRS_PLAN))
    best = min(value for value, _ in basics)
    evals: list[_Eval] = []
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
        keyed = set(_PLANS_WITH_SET.get(hand.meld_keys[0], ())) if m else set()
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
            for plan in _PLANS_WITH_SET.get(key, ()):
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
        held = _at_least(counts, 1)
        for plan in SPECIAL_PLANS:
            if plan.special == _THIRTEEN_ORPHANS:
                paired = int(bool(_ORPHANS_MASK & _at_least(counts, 2)))
                shanten = 13 - (held & _ORPHANS_MASK).bit_count() - paired
            else:
                knitted = max((held & mask).bit_count() for mask in _KNITTED_MASKS)
                shanten = 13 - (held & _HONORS_MASK).bit_count() - knitted
            if shanten <= best + window:
                evals.append(_Eval(plan, shanten))
                best = min(best, shanten)
    for basic_value, plan in basics:
        if basic_value <= best + window:
            found = _evaluate(plan, hand)
            assert found is not None
            evals.append(found)
    evals = [ev for ev in evals if ev.value <= best + window]
    evals.sort(key=_by_value)
    return evals[:cap]


def _by_value(ev: _Eval) -> float:
    return ev.value


# ----------------------------------------------------------------- waits ---


@dataclass(frozen=True, slots=True)
class _Seat:
    """What the bot knows of its own seat for scoring: winds and melds."""

    melds: tuple[Meld, ...]
    seat_wind: Wind
    round_wind: Wind

    def with_melds(self, melds: tuple[Meld, ...]) -> _Seat:
        return _Seat(melds, self.seat_wind, self.round_wind)


_WaitFans = tuple[tuple[int, int, int], ...]  # (wait, fan on a discard, fan self-drawn)


def _wait_fans(counts: list[int], seat: _Seat) -> _WaitFans:
    """Each wait of a ready 13-tile hand with its fan (flowers apart) on a discard and
    self-drawn."""
    m = len(seat.melds)
    out = []
    standing = tuple(t for t in range(N_KINDS) for _ in range(counts[t]))
    held = counts.copy()
    for meld in seat.melds:
        for t in meld.tiles:
            held[t] += 1
    for wait in _shanten.waits(counts, m):
        if held[wait] >= 4:
            continue  # the fifth copy of a tile in a meld
        scored = score(
            Hand(seat.melds, standing, wait),
            WinContext(seat_wind=seat.seat_wind, round_wind=seat.round_wind),
        )
        # Self-drawn, roughly: Self-Drawn (1), or Fully Concealed Hand (4) for Concealed
        # Hand (2). Near enough for a weight; the table decides what a real win scores.
        concealed = any(fc.fan is Fan.CONCEALED_HAND for fc in scored.fans)
        out.append((wait, scored.total, scored.total + (2 if concealed else 1)))
    return tuple(out)


# ------------------------------------------------ loose play (wild tiles) ---

_LooseKey = tuple[bytes, int, int, bytes]


@dataclass(frozen=True, slots=True)
class _Loose:
    """A hand for loose play: standing tiles that are not wild, wild tiles, melds, and the
    tiles of the melds (for the fifth-copy rule)."""

    counts: list[int]
    wilds: int
    melds: int
    meld_counts: list[int]

    def without(self, tile: int) -> _Loose:
        """The hand less one ``tile`` (a wild tile when it holds none of that kind)."""
        if tile < N_KINDS and self.counts[tile]:
            counts = self.counts.copy()
            counts[tile] -= 1
            return _Loose(counts, self.wilds, self.melds, self.meld_counts)
        return _Loose(self.counts, self.wilds - 1, self.melds, self.meld_counts)

    def meld(self, tile: int, taken: int, added: int, new: bool = True) -> _Loose:
        """The hand once ``taken`` of its ``tile`` go into a meld, ``added`` to the melds."""
        counts = self.counts.copy()
        counts[tile] -= taken
        meld_counts = self.meld_counts.copy()
        meld_counts[tile] += added
        return _Loose(counts, self.wilds, self.melds + int(new), meld_counts)

    def chow(self, start: int, claimed: int) -> _Loose:
        counts = self.counts.copy()
        meld_counts = self.meld_counts.copy()
        for t in (start, start + 1, start + 2):
            if t != claimed:
                counts[t] -= 1
            meld_counts[t] += 1
        return _Loose(counts, self.wilds, self.melds + 1, meld_counts)


def _loose_unseen(view: View, counts: Sequence[int], meld_counts: Sequence[int]) -> list[int]:
    """4 less the copies of each kind the seat sees: its hand and melds, the rivers, the
    other melds it may see, the indicator (flowers and wild tiles in a river are skipped)."""
    seen = [a + b for a, b in zip(counts, meld_counts, strict=True)]
    viewer = _viewer(view)
    for seat in view.seats:
        for tile, claimed in seat.river:
            if not claimed and tile < N_KINDS:
                seen[tile] += 1
        if seat.player != viewer:
            for meld in seat.melds:
                for t in meld.tiles:
                    seen[t] += 1
    indicator = view.indicator
    if indicator is not None and indicator < N_KINDS:
        seen[indicator] += 1
    return [max(4 - n, 0) for n in seen]


# ------------------------------------------------------------- DefaultBot ---

_KONGS: Final = (ActionKind.CONCEALED_KONG, ActionKind.ADD_KONG)

# How a 13-tile hand (after the discard) is judged, lower is better: 0 when ready with waits
# that reach 8 fan, else the best plan value (at least 1); then minus the weight of winning
# tiles, or of the useful tiles of the best plans; minus how many plans are that close; how
# much the hand wanted to keep the discard.
_Key = tuple[float, float, float, float]


class DefaultBot:
    """Plays for an 8-fan hand by plans, tile efficiency and scored waits (module docs)."""

    MEMO_SIZE: Final = 256  # recent hands: a memo serves one hand across a few decisions

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed  # unused: the bot needs no randomness
        # Memos of pure functions of their keys: they change the bot's speed, not its play.
        self._waits: dict[tuple[bytes, _Seat], _WaitFans] = {}
        self._plans: dict[tuple[bytes, tuple[Meld, ...]], list[_Eval]] = {}
        self._loose: dict[_LooseKey, tuple[int, tuple[int, ...]]] = {}

    # ------------------------------------------------------------ choose ---

    def choose(self, view: View) -> Action:
        legal = view.legal
        if not legal:
            raise MahjongError("the bot has nothing to choose from: view.legal is empty")
        for action in legal:
            if action.kind is ActionKind.WIN:
                return action
        if len(legal) == 1:
            return legal[0]
        if view.phase is Phase.ROB:
            return Action(ActionKind.PASS)
        rules = view.rules
        if rules.has_wilds or rules.min_fan <= 0:
            return self._play_loose(view)
        me = _own_seat(view)
        if me.concealed is None:
            raise MahjongError("a bot's view must show its own concealed tiles")
        counts = [0] * N_KINDS
        for t in me.concealed:
            counts[t] += 1
        unseen = _unseen(view, counts)
        seat = _Seat(me.melds, me.wind, view.round_wind)
        if view.phase is Phase.CLAIM:
            return self._answer_claim(view, counts, seat, unseen)
        return self._play_turn(legal, counts, seat, unseen, view.drawn)

    # ------------------------------------------------------------- plans ---

    def _plans13(
        self, counts: list[int], melds: tuple[Meld, ...], unseen: _Unseen
    ) -> tuple[list[_Eval], float]:
        """The plans of a 13-tile hand within ``SLACK + 1`` of the best, those that are not
        dead for this view, and the best value.

        The wider window makes the plans of the hand plus any one tile derivable from these
        (a draw lowers a plan by one at most). The scan is memoised by hand, done as if every
        tile were unseen; dead plans are dropped after.
        """
        key = (bytes(counts), melds)
        found = self._plans.get(key)
        if found is None:
            if len(self._plans) >= self.MEMO_SIZE:
                self._plans.clear()
            hand = _Hand(counts, melds, _ALL_UNSEEN)
            found = self._plans[key] = _plans_on(hand, SLACK + 1, F13_CAP)
        live = [ev for ev in found if not (ev.missing and ev.dead(unseen.unavailable))]
        return live, (live[0].value if live else INF)

    # -------------------------------------------------------------- turn ---

    def _play_turn(
        self,
        legal: Sequence[Action],
        counts: list[int],
        seat: _Seat,
        unseen: _Unseen,
        drawn: int | None,
    ) -> Action:
        kongs = [a for a in legal if a.kind in _KONGS]
        evals: list[_Eval] | None = None
        if drawn is not None:
            before = counts.copy()
            before[drawn] -= 1
            plans, best = self._plans13(before, seat.melds, unseen)
            if plans:
                # The plans of the hand with the tile drawn follow from those without it.
                # When the tile helps none of those close to the best, giving it back keeps
                # the hand as it was, which no other discard improves on (by plan value).
                close = [ev for ev in plans if ev.value <= best + SLACK]
                if not kongs and not any(ev.gains(before, drawn) for ev in close):
                    return Action(ActionKind.DISCARD, drawn)
                evals = [ev.add(before, drawn) for ev in plans]
                best = min(ev.value for ev in evals)
                evals = sorted((ev for ev in evals if ev.value <= best + SLACK), key=_by_value)
                evals = evals[:MAX_PLANS]
        discards = [t for t in range(N_KINDS) if counts[t]]  # each is legal
        key, tile = self._best_discard(counts, seat, unseen, discards, evals)
        for action in kongs:
            t = action.tile
            assert t is not None
            after = counts.copy()
            if action.kind is ActionKind.CONCEALED_KONG:
                after[t] -= 4
                melds = (*seat.melds, Meld(MeldKind.KONG, t, 0))
            else:
                after[t] -= 1
                melds = tuple(
                    Meld(MeldKind.KONG, t, m.offer)
                    if m.kind is MeldKind.PUNG and m.tile == t
                    else m
                    for m in seat.melds
                )
            # A kong that leaves the hand as good as the best discard: a free tile, more fan.
            if self._assess(after, seat.with_melds(melds), unseen)[0] <= key[0]:
                return action
        return Action(ActionKind.DISCARD, tile)

    def _best_discard(
        self,
        counts: list[int],
        seat: _Seat,
        unseen: _Unseen,
        discards: Sequence[int],
        evals: list[_Eval] | None = None,
    ) -> tuple[_Key, int]:
        """The best discard of a 14-tile hand (standing tiles) and its key; ``evals``, when
        given, are its plans."""
        m = len(seat.melds)
        if evals is None:
            hand = _Hand(counts, seat.melds, unseen)
            evals = _plans_on(hand)
            patterns, ids = hand.patterns, hand.ids
        else:
            patterns = _patterns(counts)
            ids = [
                _table(patterns[0], True),
                _table(patterns[1], True),
                _table(patterns[2], True),
                _table(patterns[3], False),
            ]
        # Which discards leave the hand ready in the regular form or as Seven Pairs (the
        # other forms are plans of their own, below).
        plain = _Eval(PLAIN_PLAN, _SHANTEN_OF[_sum4(ids)][m], patterns=patterns, ids=ids, melds=m)
        ready_after = plain.after_discards(counts) if plain.shanten <= 0 else [1] * N_KINDS
        if not m:
            pairs = 6 - sum(n >> 1 for n in counts)
            if pairs <= 0:
                for t in discards:
                    ready_after[t] = min(ready_after[t], pairs + 1 - (counts[t] & 1))
        vectors = [(ev.plan.penalty, ev.after_discards(counts)) for ev in evals]
        values: list[float] = []
        best_key: _Key | None = None
        best_tile = -1
        for tile in discards:
            value = INF
            ready = ready_after[tile] == 0
            for penalty, after_discard in vectors:
                shanten = after_discard[tile]
                if shanten == 0:
                    ready = True
                value = min(value, shanten + penalty)
            values.append(value)
            if ready:
                # A ready hand whose waits reach 8 fan beats every plan.
                after = counts.copy()
                after[tile] -= 1
                weight = self._win_weight(after, seat, unseen)
                if weight > 0:
                    key: _Key = (0.0, -weight, 0.0, _keep(counts, tile, seat))
                    if best_key is None or key < best_key:
                        best_key, best_tile = key, tile
        if best_key is not None:
            return best_key, best_tile
        low = min(values)
        tied = sorted(
            (_keep(counts, tile, seat), tile)
            for tile, value in zip(discards, values, strict=True)
            if value <= low
        )
        for keep, tile in tied[:TIED_DISCARDS]:
            close = [
                ev
                for ev, (penalty, after_discard) in zip(evals, vectors, strict=True)
                if after_discard[tile] + penalty <= low
            ]
            useful = 0
            if len(tied) > 1:
                after = counts.copy()
                after[tile] -= 1
                useful = max(
                    (ev.discard(counts, tile).useful(after, unseen) for ev in close[:USEFUL_PLANS]),
                    default=0,
                )
            key = (max(low, 1.0), float(-useful), float(-len(close)), keep)
            if best_key is None or key < best_key:
                best_key, best_tile = key, tile
        assert best_key is not None
        return best_key, best_tile

    def _assess(self, counts: list[int], seat: _Seat, unseen: _Unseen) -> _Key:
        """The key of a 13-tile hand, comparable with ``_best_discard``'s."""
        if _shanten.shanten(counts, len(seat.melds)) == 0:
            weight = self._win_weight(counts, seat, unseen)
            if weight > 0:
                return (0.0, -weight, 0.0, 0.0)
        evals, low = self._plans13(counts, seat.melds, unseen)
        if not evals:
            return (INF, 0.0, 0.0, 0.0)
        close = [ev for ev in evals if ev.value <= low]
        useful = max(ev.useful(counts, unseen) for ev in close[:USEFUL_PLANS])
        return (max(low, 1.0), float(-useful), float(-len(close)), 0.0)

    def _win_weight(self, counts: list[int], seat: _Seat, unseen: _Unseen) -> float:
        """Unseen copies of the waits that reach 8 fan (self-drawn only: a third each)."""
        key = (bytes(counts), seat)
        fans = self._waits.get(key)
        if fans is None:
            if len(self._waits) >= self.MEMO_SIZE:
                self._waits.clear()
            fans = self._waits[key] = _wait_fans(counts, seat)
        weight = 0.0
        for wait, on_discard, self_drawn in fans:
            if on_discard >= MCR.min_fan:
                weight += unseen[wait]
            elif self_drawn >= MCR.min_fan:
                weight += SELF_DRAWN_WEIGHT * unseen[wait]
        return weight

    # ---------------------------------------- no fan minimum, wild tiles ---
    #
    # Under rules with wild tiles, or with no fan minimum, any complete hand may win (or
    # the minimum is left to luck): the bot plays for speed alone, by
    # ``engine.wilds.shanten_with_wilds``, its wild tiles counting toward the hand. It
    # discards the tile that leaves the lowest shanten, then the most unseen useful tiles,
    # then the tile it least wants to keep; it claims or declares a kong when the hand is
    # no worse after it (a claim: strictly better). Only ``view.legal`` actions: a wild tile
    # is discarded only when the table allows it (nothing else left), never claimed with.

    def _play_loose(self, view: View) -> Action:
        me = _own_seat(view)
        if me.concealed is None:
            raise MahjongError("a bot's view must show its own concealed tiles")
        wild = view.wild_tiles
        counts = [0] * N_KINDS
        wilds = 0
        for t in me.concealed:
            if t in wild or t >= N_KINDS:
                wilds += 1
            else:
                counts[t] += 1
        meld_counts = [0] * N_KINDS
        for meld in me.melds:
            for t in meld.tiles:
                meld_counts[t] += 1
        hand = _Loose(counts, wilds, len(me.melds), meld_counts)
        unseen = _loose_unseen(view, counts, meld_counts)
        seat = _Seat(me.melds, me.wind, view.round_wind)
        if view.phase is Phase.CLAIM:
            return self._loose_claim(view, hand, unseen)
        return self._loose_turn(view, hand, seat, unseen)

    def _loose_eval(self, hand: _Loose) -> tuple[int, tuple[int, ...]]:
        """Shanten of a 13-tile hand and its useful tiles, memoised."""
        key: _LooseKey = (bytes(hand.counts), hand.wilds, hand.melds, bytes(hand.meld_counts))
        found = self._loose.get(key)
        if found is None:
            if len(self._loose) >= self.MEMO_SIZE:
                self._loose.clear()
            args = (hand.counts, hand.wilds, hand.melds, hand.meld_counts)
            found = self._loose[key] = (
                shanten_with_wilds(*args),
                tuple(useful_tiles_with_wilds(*args)),
            )
        return found

    def _loose_shanten(self, hand: _Loose) -> int:
        return shanten_with_wilds(hand.counts, hand.wilds, hand.melds, hand.meld_counts)

    def _loose_discard(
        self, hand: _Loose, tiles: Sequence[int], seat: _Seat, unseen: Sequence[int]
    ) -> tuple[tuple[float, float, float], int]:
        """The best of ``tiles`` to discard from a 14-tile hand, and its key (lower is
        better: shanten, minus the unseen useful tiles, how much the hand wants it)."""
        shanten: list[tuple[int, float, int]] = []
        for t in tiles:
            after = hand.without(t)
            keep = _keep(hand.counts, t, seat) if t < N_KINDS and hand.counts[t] else 9.0
            shanten.append((self._loose_shanten(after), keep, t))
        shanten.sort()
        low = shanten[0][0]
        best: tuple[tuple[float, float, float], int] | None = None
        for value, keep, t in shanten[: TIED_DISCARDS + 2]:
            if value > low:
                break
            _, useful = self._loose_eval(hand.without(t))
            key = (float(value), -float(sum(unseen[u] for u in useful)), keep)
            if best is None or key < best[0]:
                best = (key, t)
        assert best is not None
        return best

    def _loose_turn(self, view: View, hand: _Loose, seat: _Seat, unseen: Sequence[int]) -> Action:
        legal = view.legal
        discards = sorted(
            {a.tile for a in legal if a.kind is ActionKind.DISCARD and a.tile is not None}
        )
        kongs = [a for a in legal if a.kind in _KONGS]
        drawn = view.drawn
        if (
            not kongs
            and drawn is not None
            and drawn in discards
            and drawn < N_KINDS
            and hand.counts[drawn]
        ):
            # A drawn tile that lowers nothing goes back: the hand stays as it was.
            before = hand.without(drawn)
            if self._loose_shanten(hand) >= self._loose_eval(before)[0]:
                return Action(ActionKind.DISCARD, drawn)
        if not discards:
            return kongs[0] if kongs else legal[0]
        key, tile = self._loose_discard(hand, discards, seat, unseen)
        for action in kongs:
            t = action.tile
            assert t is not None
            if action.kind is ActionKind.CONCEALED_KONG:
                after = hand.meld(t, 4, 4)
            else:
                after = hand.meld(t, 1, 1, new=False)  # the pung's fourth tile
            if self._loose_eval(after)[0] <= key[0]:
                return action
        return Action(ActionKind.DISCARD, tile)

    def _loose_claim(self, view: View, hand: _Loose, unseen: Sequence[int]) -> Action:
        claim = view.claim
        assert claim is not None
        tile = claim.tile
        current = self._loose_eval(hand)[0]
        seat = _Seat(_own_seat(view).melds, _own_seat(view).wind, view.round_wind)
        best: tuple[tuple[float, float, float], Action] | None = None
        for action in view.legal:
            kind = action.kind
            if kind is ActionKind.CHOW:
                start = action.tile
                assert start is not None
                after = hand.chow(start, tile)
            elif kind is ActionKind.PUNG:
                after = hand.meld(tile, 2, 3)
            elif kind is ActionKind.KONG:
                after = hand.meld(tile, 3, 4)
                if self._loose_eval(after)[0] <= current:
                    return action  # no worse, and a replacement tile comes next
                continue
            else:
                continue
            tiles = [t for t in range(N_KINDS) if after.counts[t]]
            if not tiles:
                continue
            key, _ = self._loose_discard(after, tiles, seat, unseen)
            if key[0] < current and (best is None or key < best[0]):
                best = (key, action)
        return best[1] if best is not None else Action(ActionKind.PASS)

    # ------------------------------------------------------------ claims ---

    def _answer_claim(self, view: View, counts: list[int], seat: _Seat, unseen: _Unseen) -> Action:
        claim = view.claim
        assert claim is not None
        tile = claim.tile
        # Cheap first: a claim takes a tile, which lowers a plan by one at most, so it can
        # only beat passing if the tile helps a plan at most half a tile worse than the best.
        # A kong lowers nothing, but in a hand already open it is a free tile and a fan.
        plans, low = self._plans13(counts, seat.melds, unseen)
        close = [ev for ev in plans if ev.value <= low + 0.5]
        helped = [ev for ev in close if ev.gains(counts, tile)]
        is_open = any(not m.concealed for m in seat.melds)
        if not helped and not (is_open and KONG in view.legal):
            return Action(ActionKind.PASS)
        baseline: _Key | None = None
        best: tuple[_Key, Action] | None = None
        offer = 4 - (_position(view, claim.source) - _position(view, _viewer(view))) % 4
        for action in view.legal:
            kind = action.kind
            after = counts.copy()
            if kind is ActionKind.CHOW:
                start = action.tile
                assert start is not None
                for t in (start, start + 1, start + 2):
                    if t != tile:
                        after[t] -= 1
                meld = Meld(MeldKind.CHOW, start, tile - start + 1)
            elif kind is ActionKind.PUNG:
                after[tile] -= 2
                meld = Meld(MeldKind.PUNG, tile, offer)
            elif kind is ActionKind.KONG:
                after[tile] -= 3
                meld = Meld(MeldKind.KONG, tile, offer)
            else:
                continue
            served = close if kind is ActionKind.KONG else helped
            if not any(_fits(ev, meld, seat.melds) for ev in served):
                continue  # the set would serve no plan the tile helps (a kong: no close one)
            if baseline is None:
                baseline = self._assess(counts, seat, unseen)
            claimed = seat.with_melds((*seat.melds, meld))
            if kind is ActionKind.KONG:
                key = self._assess(after, claimed, unseen)  # a replacement tile comes next
                if key[0] > baseline[0] or (key[0] == baseline[0] and not is_open):
                    continue
            else:
                discards = [t for t in range(N_KINDS) if after[t]]
                key, _ = self._best_discard(after, claimed, unseen, discards)
                if key[0] >= baseline[0]:
                    continue
            if best is None or key < best[0]:
                best = (key, action)
        return best[1] if best is not None else Action(ActionKind.PASS)


# ---------------------------------------------------------------- helpers ---


def _fits(ev: _Eval, meld: Meld, melds: tuple[Meld, ...]) -> bool:
    """Whether declaring ``meld`` keeps plan ``ev`` possible."""
    plan = ev.plan
    kind = plan.kind
    if kind == PLAIN:
        return True
    if kind == FLUSH:
        return bool(plan.groups >> _GROUP_OF[meld.tile] & 1)
    if kind == PUNGS:
        return meld.kind is not MeldKind.CHOW
    if kind == SETS:
        key = (CHOW_SET if meld.kind is MeldKind.CHOW else PUNG_SET, meld.tile)
        # One of the plan's sets, or its one free set (a knitted straight's too).
        return key in plan.sets or not melds
    return False  # Seven Pairs and the special forms take no claim


def _viewer(view: View) -> int:
    if view.viewer is None:
        raise MahjongError("a spectator's view cannot be played")
    return view.viewer


def _own_seat(view: View) -> SeatView:
    return view.seat(_viewer(view))


def _position(view: View, player: int) -> int:
    for i, seat in enumerate(view.seats):
        if seat.player == player:
            return i
    raise MahjongError(f"no player {player!r} at this table")


def _unseen(view: View, counts: Sequence[int]) -> _Unseen:
    """4 minus the copies of each tile the seat can see: its own hand, every river (a
    claimed discard is counted in the meld that took it), every meld it may see."""
    elsewhere = [0] * N_KINDS
    for seat in view.seats:
        for tile, claimed in seat.river:
            if not claimed:
                elsewhere[tile] += 1
        for meld in seat.melds:
            if meld.kind is MeldKind.CHOW:
                t = meld.tile
                elsewhere[t] += 1
                elsewhere[t + 1] += 1
                elsewhere[t + 2] += 1
            else:
                elsewhere[meld.tile] += 4 if meld.kind is MeldKind.KONG else 3
    unseen = _Unseen([4 - a - b for a, b in zip(counts, elsewhere, strict=True)])
    seen = bytes(elsewhere)
    # 1 copy cannot be had when the 4 are seen elsewhere, 2 when 3 are, 3 when 2 are.
    u1, u2, u3 = _at_least(seen, 4), _at_least(seen, 3), _at_least(seen, 2)
    unseen.unavailable = (u1, u2, u3)
    return unseen


def _keep(counts: Sequence[int], tile: int, seat: _Seat) -> float:
    """How much the hand wants to keep ``tile`` (lower: discard first): lone honors of no
    value first, then lone honors, terminals, lone tiles; middle tiles with neighbours last."""
    n = counts[tile]
    if tile >= EAST:
        valued = tile >= RED or tile in (EAST + seat.seat_wind, EAST + seat.round_wind)
        return 2.0 * (n - 1) + (0.5 if valued else 0.0)
    rank = tile % 9
    lo = tile - rank
    near = sum(counts[t] for t in range(max(lo, tile - 2), min(lo + 9, tile + 3)) if t != tile)
    edge = 0.0 if is_terminal_or_honor(tile) else (1.0 if rank in (1, 7) else 1.5)
    return 1.0 + edge + 2.0 * (n - 1) + near + tile / 1000.0


# --------------------------------------------------------------- registry ---

BOTS: Final[dict[str, type[FastBot] | type[DefaultBot]]] = {
    "default": DefaultBot,
    "fast": FastBot,
}


def make_bot(name: str, seed: int = 0) -> Bot:
    """A bot by its registry name (``BOTS``); unknown names raise ``ValueError``. A bot
    reads the rules it plays by off each view (``View.rules``)."""
    try:
        cls = BOTS[name]
    except KeyError:
        known = ", ".join(sorted(BOTS))
        raise ValueError(f"unknown bot {name!r}: expected one of {known}") from None
    return cls(seed)

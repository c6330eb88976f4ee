"""The plans (目标番种): the kinds of hand the plan strategy steers for.

An efficiency-only bot gets ready (听牌) with hands worth 2-6 fan and can never win under an
8-fan minimum (起和番), so the plan strategy (``engine.bots.plan_play``) steers by plans: each
is a kind of hand that scores 8 fan or nearly so, with a penalty (in tiles) for the fan it
may still lack:

- the plain hand (any reading; penalty 3: it rarely reaches 8 fan alone);
- Full Flush (清一色) and Half Flush (混一色, penalty 1) in each suit: the tiles of other
  suits are junk to it; All Pungs (碰碰和, 1): read without chows; Seven Pairs (七对, 0.5);
- fixed sets: Pure and Mixed Straight (清龙, 花龙), Mixed Triple Chow (三色三同顺), Mixed
  Shifted Chows (三色三步高, 1), Pure Shifted Chows (一色三步高, shifted by one or by two),
  Pure Triple Chow (一色三同顺), Triple Pung (三同刻), Mixed and Pure Shifted Pungs
  (三色三节高, 一色三节高), Two Dragon Pungs (双箭刻, 1), Big Three Winds (三风刻), Knitted
  Straight (组合龙: the nine knitted tiles stand for three sets that cannot be declared);
- Honors and Knitted Tiles (全不靠) and Thirteen Orphans (十三幺).

How far a hand is from each plan is ``engine.bots.plan_shanten``'s business; this module is
the catalogue, and ``fits``: whether a declared set keeps a plan possible.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import Final

from engine.bots.parts import ALL_GROUPS, GROUP_OF, tile_mask
from engine.copyable import copyable
from engine.forms import KNITTED
from engine.hand import Meld, MeldKind
from engine.tiles import EAST, RED, WHITE

# Plan kinds: read on the whole hand (PLAIN, FLUSH, PUNGS, PAIRS), on fixed sets, special forms.
PLAIN, FLUSH, PUNGS, PAIRS, SETS, SPECIAL = range(6)
CHOW_SET, PUNG_SET = 0, 1
HONORS_AND_KNITTED, THIRTEEN_ORPHANS = range(2)


@dataclass(frozen=True, slots=True, eq=False)  # compared and hashed by identity
class Plan:
    """A kind of hand to steer for, with the fan it may lack as a penalty (in tiles)."""

    name: str
    kind: int
    penalty: float
    groups: int = ALL_GROUPS  # the groups whose tiles the plan uses (bit per group)
    chows: bool = True  # whether suit tiles may form chows
    sets: tuple[tuple[int, int], ...] = ()  # SETS: (CHOW_SET or PUNG_SET, tile)
    need: tuple[tuple[int, int], ...] = ()  # SETS: (tile, copies) the sets need
    masks: tuple[int, int, int] = (0, 0, 0)  # SETS: tiles needed at least 1, 2, 3 times
    special: int = -1  # SPECIAL: which form
    suit: int = -1  # FLUSH: the suit


def _sets_plan(name: str, penalty: float, sets: Sequence[tuple[int, int]]) -> Plan:
    """A fixed-set plan: the (tile, copies) its sets need, and the masks of those tiles."""
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


def _mixed_shifted(name: str, penalty: float, kind: int, starts: int) -> list[Plan]:
    """Three sets of ``kind``, one in each suit (every order), each a rank above the last."""
    return [
        _sets_plan(name, penalty, [(kind, 9 * a + r), (kind, 9 * b + r + 1), (kind, 9 * c + r + 2)])
        for a, b, c in permutations(range(3))
        for r in range(starts)
    ]


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
    sets += _mixed_shifted("mixed shifted chows", 1.0, chow, 5)
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
    sets += _mixed_shifted("mixed shifted pungs", 0.0, pung, 7)
    for skip in range(RED, WHITE + 1):
        dragons = [(pung, t) for t in range(RED, WHITE + 1) if t != skip]
        sets.append(_sets_plan("two dragon pungs", 1.0, dragons))
    for skip in range(EAST, RED):
        winds = [(pung, t) for t in range(EAST, RED) if t != skip]
        sets.append(_sets_plan("big three winds", 0.0, winds))

    for seq in KNITTED:
        # The nine knitted tiles stand for three sets that cannot be declared.
        mask = tile_mask(seq)
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
        Plan("honors and knitted tiles", SPECIAL, 0.0, special=HONORS_AND_KNITTED),
        Plan("thirteen orphans", SPECIAL, 0.0, special=THIRTEEN_ORPHANS),
    )
    return tuple(basic), tuple(sets), special


BASIC_PLANS, SET_PLANS, SPECIAL_PLANS = _build_plans()
PLAIN_PLAN: Final = BASIC_PLANS[0]
FLUSH_PLANS: Final = tuple(plan for plan in BASIC_PLANS if plan.kind == FLUSH)
PUNGS_PLAN: Final = next(plan for plan in BASIC_PLANS if plan.kind == PUNGS)
PAIRS_PLAN: Final = next(plan for plan in BASIC_PLANS if plan.kind == PAIRS)


def _plans_with_set() -> dict[tuple[int, int], list[Plan]]:
    found: dict[tuple[int, int], list[Plan]] = {}
    for plan in SET_PLANS:
        for key in set(plan.sets):
            found.setdefault(key, []).append(plan)
    return found


PLANS_WITH_SET: Final = _plans_with_set()  # (CHOW_SET or PUNG_SET, tile): the plans with it


def fits(plan: Plan, meld: Meld, melds: tuple[Meld, ...]) -> bool:
    """Whether declaring ``meld`` beside ``melds`` keeps ``plan`` possible."""
    kind = plan.kind
    if kind == PLAIN:
        return True
    if kind == FLUSH:
        return bool(plan.groups >> GROUP_OF[meld.tile] & 1)
    if kind == PUNGS:
        return meld.kind is not MeldKind.CHOW
    if kind == SETS:
        key = (CHOW_SET if meld.kind is MeldKind.CHOW else PUNG_SET, meld.tile)
        # One of the plan's sets, or its one free set (a knitted straight's too).
        return key in plan.sets or not melds
    return False  # Seven Pairs and the special forms take no claim


copyable(Plan)

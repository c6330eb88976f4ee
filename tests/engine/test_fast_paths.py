"""The shortcuts the simulation's hot paths take give the answers of the long way round.

Each cache, table or filter added for speed (``guobiao simulate``, issue 13) is checked here
against what it stands for, on seeded random cases: the table's win filters against
``forms.is_winning``, the bots' memos against the functions they remember.
"""

from __future__ import annotations

import random

import handgen
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.bots.parts import GROUP_START, SHANTEN_OF, grow, join, shrink
from engine.bots.plan_shanten import HandTables, PlanEval, plans_on
from engine.bots.plans import PAIRS, SPECIAL
from engine.bots.reading import Unseen
from engine.forms import is_winning, waits_of_packed
from engine.hand import Meld, MeldKind
from engine.table import sorted_tiles
from engine.tiles import N_KINDS, counts_of, tiles_of

Counts = list[int]


def _winning_hands(n: int, seed: int) -> list[tuple[Counts, int]]:
    """Complete hands of every form (``handgen``): standing tiles and declared melds."""
    return [
        (list(hand.concealed_counts()), len(hand.melds)) for _, hand, _ in handgen.mixed(n, seed)
    ]


def _near(counts: Counts, rng: random.Random) -> Counts:
    """``counts`` with one tile swapped for another (at most four of a kind)."""
    out = counts.copy()
    out[rng.choice([t for t in range(N_KINDS) if out[t]])] -= 1
    out[rng.choice([t for t in range(N_KINDS) if out[t] < 4])] += 1
    return out


def _self_drawn_filter(counts: Counts, melds: int, drawn: int) -> bool:
    """The table's test of a self-drawn win (``HandState._check_win``): the drawn tile among
    the formal waits of the hand before it, then ``is_winning``."""
    before = counts.copy()
    before[drawn] -= 1
    return drawn in waits_of_packed(bytes(before), melds) and is_winning(counts, melds)


def test_a_complete_hand_waits_on_each_of_its_tiles() -> None:
    # Whatever tile was drawn last, the hand before it waited on it: the filter lets every
    # complete hand through, of every form.
    for counts, melds in _winning_hands(3000, seed=13):
        assert is_winning(counts, melds)
        for drawn in range(N_KINDS):
            if counts[drawn]:
                assert _self_drawn_filter(counts, melds, drawn), (counts, melds, drawn)


def test_the_self_drawn_filter_is_is_winning_near_complete_hands() -> None:
    rng = random.Random(2026)
    for counts, melds in _winning_hands(3000, seed=14):
        near = _near(counts, rng)
        for drawn in range(N_KINDS):
            if near[drawn]:
                assert _self_drawn_filter(near, melds, drawn) == is_winning(near, melds)


@st.composite
def _hands(draw: st.DrawFn) -> tuple[Counts, int]:
    """Any 14-tile hand (melds apart), at most four of a kind."""
    melds = draw(st.integers(0, 4))
    size = 14 - 3 * melds
    tiles = draw(
        st.lists(st.integers(0, N_KINDS - 1), min_size=size, max_size=size).filter(
            lambda ts: max(ts.count(x) for x in ts) <= 4
        )
    )
    return counts_of(tiles), melds


@settings(max_examples=300)
@given(_hands(), st.data())
def test_the_self_drawn_filter_is_is_winning(hand: tuple[Counts, int], data: st.DataObject) -> None:
    counts, melds = hand
    drawn = data.draw(st.sampled_from([t for t in range(N_KINDS) if counts[t]]))
    assert _self_drawn_filter(counts, melds, drawn) == is_winning(counts, melds)


# ------------------------------------------------------------------------ bots ---


def _after_discards_long(ev: PlanEval, counts: Counts) -> list[int]:
    """``PlanEval.after_discards`` the long way: each held tile of each group the plan
    uses, shrunk and read again."""
    out = [ev.shanten] * N_KINDS
    assert ev.patterns is not None
    for g in range(4):
        if not ev.groups >> g & 1:
            continue
        lo = GROUP_START[g]
        others = ev.other_ids(g)
        for offset, table in enumerate(shrink(ev.patterns[g], g < 3 and ev.chows)):
            if counts[lo + offset]:
                read = SHANTEN_OF[join(table, others)][ev.melds] if table >= 0 else -1
                out[lo + offset] = ev.shanten + 1 if table < 0 else ev.missing + read
    return out


def _lowering_long(ev: PlanEval, counts: Counts) -> set[int]:
    """The tiles whose draw lowers the plan, the long way (what ``gains`` and ``useful``
    read): the tiles its sets lack, and the draws of each group that read less."""
    assert ev.patterns is not None
    found = {t for t, n in ev.need if counts[t] < n}
    for g in range(4):
        if not ev.groups >> g & 1:
            continue
        others = ev.other_ids(g)
        for offset, table in grow(ev.patterns[g], g < 3 and ev.chows):
            if ev.missing + SHANTEN_OF[join(table, others)][ev.melds] < ev.shanten:
                found.add(GROUP_START[g] + offset)
    return found


def _bot_hands(n: int, seed: int) -> list[tuple[Counts, tuple[Meld, ...]]]:
    """Seeded random concealed tiles beside 0 to 2 melds, 13 or 14 tiles in all."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        melds: list[Meld] = []
        pool = [t for t in range(N_KINDS) for _ in range(4)]
        for _ in range(rng.choice((0, 0, 1, 2))):
            tile = rng.randrange(N_KINDS)
            if tile < 27 and tile % 9 < 7 and rng.random() < 0.5:
                melds.append(Meld(MeldKind.CHOW, tile, 1))
                taken = [tile, tile + 1, tile + 2]
            else:
                melds.append(Meld(MeldKind.PUNG, tile, 1))
                taken = [tile] * 3
            if all(pool.count(t) >= taken.count(t) for t in taken):
                for t in taken:
                    pool.remove(t)
            else:
                melds.pop()
        size = rng.choice((13, 14)) - 3 * len(melds)
        out.append((counts_of(rng.sample(pool, size)), tuple(melds)))
    return out


def test_the_plans_memos_give_the_long_way_s_answers() -> None:
    for counts, melds in _bot_hands(600, seed=5):
        hand = HandTables(counts, melds, Unseen((4,) * N_KINDS))
        for ev in plans_on(hand, 2.0, 8):
            if ev.plan.kind in (PAIRS, SPECIAL):
                continue
            held = [t for t in range(N_KINDS) if counts[t]]
            fast = ev.after_discards(counts)
            slow = _after_discards_long(ev, counts)
            assert [fast[t] for t in held] == [slow[t] for t in held], (counts, melds, ev.plan)
            lowering = _lowering_long(ev, counts)
            gains = {t for t in range(N_KINDS) if ev.gains(counts, t)}
            assert gains == lowering, (counts, melds, ev.plan)
            unseen = [(t * 5 + 3) % 5 for t in range(N_KINDS)]  # some tiles with no copy left
            assert ev.useful(counts, unseen) == sum(unseen[t] for t in lowering)


# ----------------------------------------------------------------------- views ---


@given(st.lists(st.integers(0, 4), min_size=N_KINDS, max_size=N_KINDS))
def test_sorted_tiles_is_tiles_of(counts: Counts) -> None:
    assert sorted_tiles(counts) == tuple(tiles_of(counts))
    assert sorted_tiles(counts) == tuple(tiles_of(counts))  # the second time from the memo

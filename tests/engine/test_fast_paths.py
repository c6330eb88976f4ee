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

from engine.forms import is_winning, waits_of_packed
from engine.tiles import N_KINDS, counts_of

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

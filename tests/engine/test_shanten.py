"""Tests of ``engine.shanten``: shanten, useful tiles, waits and complete hands of every form.

Scripted hands for each form; properties checked with Hypothesis against a brute-force
oracle written here; and differential tests against PyMahjongGB (skipped when it is not
installed) on seeded random hands, half of them drawn from the wall and half built near a
complete hand of some form, so that ready hands and the special forms are common. The number
of hands per case is ``GUOBIAO_SHANTEN_HANDS`` (default ``DEFAULT_HANDS``), the seed
``GUOBIAO_SHANTEN_SEED`` (default 0)::

    GUOBIAO_SHANTEN_HANDS=20000 .venv/bin/python -m pytest tests/engine/test_shanten.py -q

The one known departure from the reference: its useful tiles of a ready hand list a tile the
hand holds four of when a fifth copy would complete it; ours never do (there is no fifth
copy). The differential tests drop those tiles from the reference's lists, and
``test_reference_lists_a_fifth_copy`` keeps the difference checked.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator, Sequence
from itertools import permutations
from typing import Any

import handgen
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import InvalidHand
from engine.notation import format_tiles, parse_tiles
from engine.shanten import (
    honors_and_knitted_shanten,
    is_winning,
    knitted_straight_shanten,
    regular_shanten,
    seven_pairs_shanten,
    shanten,
    thirteen_orphans_shanten,
    useful_tiles,
    waits,
)
from engine.tiles import EAST, N_KINDS, TERMINALS_AND_HONORS, counts_of, tiles_of

DEFAULT_HANDS = 1000
HANDS = int(os.environ.get("GUOBIAO_SHANTEN_HANDS", str(DEFAULT_HANDS)))
SEED = int(os.environ.get("GUOBIAO_SHANTEN_SEED", "0"))

Counts = list[int]

KNITTED = [
    [suit * 9 + first + step for suit, first in enumerate(firsts) for step in (0, 3, 6)]
    for firsts in permutations(range(3))
]
HONORS = list(range(EAST, N_KINDS))
SETS = [(t, t, t) for t in range(N_KINDS)] + [(t, t + 1, t + 2) for t in range(EAST) if t % 9 <= 6]


def c(text: str) -> Counts:
    return counts_of(parse_tiles(text))


def t(text: str) -> list[int]:
    return sorted(set(parse_tiles(text)))


def plus(counts: Sequence[int], tile: int, n: int = 1) -> Counts:
    out = list(counts)
    out[tile] += n
    return out


def _complete_tiles(rng: random.Random, melds: int) -> list[int]:
    """A complete hand of a random form allowed with ``melds`` (at most four of a kind)."""
    forms = ["regular"] * 3 + ["knitted"] * (melds <= 1)
    if melds == 0:
        forms += ["pairs", "orphans", "honors_knitted"]
    while True:
        form = rng.choice(forms)
        if form == "regular":
            tiles = [x for s in rng.choices(SETS, k=4 - melds) for x in s] + [
                rng.randrange(N_KINDS)
            ] * 2
        elif form == "pairs":
            tiles = [x for x in rng.choices(range(N_KINDS), k=7) for _ in range(2)]
        elif form == "orphans":
            tiles = [*TERMINALS_AND_HONORS, rng.choice(TERMINALS_AND_HONORS)]
        elif form == "honors_knitted":
            tiles = rng.sample([*rng.choice(KNITTED), *HONORS], 14)
        else:
            rest = [x for s in rng.choices(SETS, k=1 - melds) for x in s]
            tiles = [*rng.choice(KNITTED), *rest] + [rng.randrange(N_KINDS)] * 2
        if max(tiles.count(x) for x in tiles) <= 4:
            return tiles


# --- an independent oracle for complete hands -------------------------------------------------


def _all_sets(counts: Counts) -> bool:
    """Whether ``counts`` splits into chows and pungs only (brute force)."""
    first = next((i for i, n in enumerate(counts) if n), None)
    if first is None:
        return True
    if counts[first] >= 3:
        counts[first] -= 3
        ok = _all_sets(counts)
        counts[first] += 3
        if ok:
            return True
    if first < EAST and first % 9 <= 6 and counts[first + 1] and counts[first + 2]:
        for i in range(3):
            counts[first + i] -= 1
        ok = _all_sets(counts)
        for i in range(3):
            counts[first + i] += 1
        return ok
    return False


def _sets_and_pair(counts: Counts) -> bool:
    return any(n >= 2 and _all_sets(plus(counts, tile, -2)) for tile, n in enumerate(counts))


def oracle_winning(counts: Counts, melds: int) -> bool:
    """Complete in some form, written from the rules rather than from the module."""
    tiles = tiles_of(counts)
    if _sets_and_pair(list(counts)):
        return True
    if melds == 0:
        if all(n % 2 == 0 for n in counts):  # seven pairs, four of a kind as two
            return True
        if set(tiles) == set(TERMINALS_AND_HONORS):  # thirteen orphans
            return True
        if max(counts) == 1 and any(set(tiles) <= {*seq, *HONORS} for seq in KNITTED):
            return True  # honors and knitted tiles
    if melds <= 1:
        for seq in KNITTED:
            if all(counts[tile] for tile in seq):
                rest = list(counts)
                for tile in seq:
                    rest[tile] -= 1
                if _sets_and_pair(rest):
                    return True
    return False


# --- scripted hands ---------------------------------------------------------------------------

# (hand, melds, waits): ready hands of every form.
READY = [
    ("1112345678999m", 0, "123456789m"),  # nine gates: all nine
    ("123m456p789sEEE5s", 0, "5s"),
    ("2345678p111234s", 0, "258p"),
    ("2223444m", 2, "12345m"),
    ("5556m", 3, "467m"),
    ("E", 4, "E"),
    ("1122m3344p5566sE", 0, "E"),  # seven pairs
    ("1111m2233p4455sE", 0, "E"),  # seven pairs with four of a kind as two pairs
    ("19m19p19sESWNCFP", 0, "19m19p19sESWNCFP"),  # thirteen orphans, 13-sided
    ("19m19p19sESWNCFF", 0, "P"),
    ("147m258p36sESWNC", 0, "9sFP"),  # honors and knitted tiles
    ("14m25p36sESWNCFP", 0, "7m8p9s"),  # greater honors and knitted tiles
    ("147m258p36s123pEE", 0, "9s"),  # knitted straight
    ("147m258p369sE", 1, "E"),  # knitted straight with a declared set
    ("147m258p36sEE", 1, "9s"),
    ("1111m234m567m888m", 0, "34679m"),  # 1m would be a fifth copy
    ("1111m234p567p789s", 0, ""),  # ready in shape, but only on a fifth 1m
    ("1111m", 3, ""),
]


@pytest.mark.parametrize(("hand", "melds", "expected"), READY)
def test_ready_hands(hand: str, melds: int, expected: str) -> None:
    counts = c(hand)
    assert shanten(counts, melds) == 0
    assert waits(counts, melds) == (t(expected) if expected else [])
    assert useful_tiles(counts, melds) == waits(counts, melds)
    completing = [w for w in range(N_KINDS) if counts[w] < 4]
    assert waits(counts, melds) == [w for w in completing if oracle_winning(plus(counts, w), melds)]


COMPLETE = [
    ("123m456p789sEEE55s", 0),
    ("11123456789999m", 0),
    ("55567m", 3),
    ("1122m3344p5566sEE", 0),
    ("1111m2233p4455sEE", 0),
    ("19m19p19sESWNCFPP", 0),
    ("147m258p369sESWNC", 0),
    ("147m258p369s123pEE", 0),
    ("147m258p369sEE", 1),
    ("EE", 4),
]


@pytest.mark.parametrize(("hand", "melds"), COMPLETE)
def test_complete_hands(hand: str, melds: int) -> None:
    counts = c(hand)
    assert is_winning(counts, melds)
    assert shanten(counts, melds) == -1


def test_each_form_alone() -> None:
    assert regular_shanten(c("123m456p789sEEE55s")) == -1
    assert regular_shanten(c("456p789sEEE55s"), 1) == -1
    assert regular_shanten(c("55s"), 4) == -1
    assert regular_shanten(c("5s"), 4) == 0
    assert regular_shanten(c("1357m2468p135sEF")) == 4  # four partial chows, no more
    assert regular_shanten(c("147m258p369sESWN")) == 8
    assert seven_pairs_shanten(c("1357m2468p135sEF")) == 6
    assert seven_pairs_shanten(c("1111m2233p4455sEE")) == -1
    assert seven_pairs_shanten(c("1111m2233p4455sEF")) == 0
    assert thirteen_orphans_shanten(c("19m19p19sESWNCFPP")) == -1
    assert thirteen_orphans_shanten(c("19m19p19sESWNCFP")) == 0
    assert thirteen_orphans_shanten(c("1199m19p19sESWNCF")) == 0
    assert thirteen_orphans_shanten(c("2345678m2345678p")) == 13
    assert honors_and_knitted_shanten(c("147m258p369sESWNC")) == -1
    assert honors_and_knitted_shanten(c("147m258p369sESWN")) == 0
    assert honors_and_knitted_shanten(c("1147m258p369sESW")) == 1
    assert knitted_straight_shanten(c("147m258p369s123pEE")) == -1
    assert knitted_straight_shanten(c("147m258p369sEE"), 1) == -1
    assert knitted_straight_shanten(c("147m258p36sEE"), 1) == 0
    # The knitted straight is what makes this hand ready:
    assert regular_shanten(c("147m258p36s123pEE")) > shanten(c("147m258p36s123pEE")) == 0


def test_special_forms_need_a_concealed_hand() -> None:
    # Five pairs and a meld are not one tile from seven pairs: only the regular form counts.
    assert shanten(c("1122m3344p55s"), 1) == regular_shanten(c("1122m3344p55s"), 1) == 2
    # Two melds leave no room for a knitted straight (nine tiles, a set and a pair), which
    # would otherwise be nearer than the regular form here.
    assert shanten(c("147m258pE"), 2) == regular_shanten(c("147m258pE"), 2) == 4
    assert knitted_straight_shanten(c("147m258p369sE"), 1) == 0


def test_fifth_copy_is_never_useful() -> None:
    counts = c("1111m234p567p789s")
    assert regular_shanten(counts) == 0  # ready in shape, as the reference counts it
    assert useful_tiles(counts) == waits(counts) == []
    assert not any(is_winning(plus(counts, w)) for w in range(N_KINDS) if counts[w] < 4)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: shanten([0] * N_KINDS), "holds 13 or 14 tiles, got 0"),
        (lambda: shanten(c("123m456p789sEEE5s"), 1), "holds 10 or 11 tiles, got 13"),
        (lambda: shanten([0] * 33), "34 kinds, got 33"),
        (lambda: shanten(c("123m456p789sEEE5s"), 5), "0 to 4 declared melds"),
        (lambda: shanten(plus(c("123m456p789sE"), 0, 4)), "counts must be 0 to 4"),
        (lambda: knitted_straight_shanten(c("147m258pE"), 2), "at most one declared meld"),
        (lambda: useful_tiles(c("123m456p789sEEE55s")), "holds 13 tiles, got 14"),
        (lambda: waits(c("123m456p789sEEE55s")), "holds 13 tiles, got 14"),
        (lambda: is_winning(c("123m456p789sEEE5s")), "holds 14 tiles, got 13"),
        (lambda: seven_pairs_shanten(c("1122m")), "holds 13 or 14 tiles, got 4"),
    ],
)
def test_refuses_impossible_hands(call: Callable[[], object], message: str) -> None:
    with pytest.raises(InvalidHand, match=message):
        call()


def test_generated_winning_hands_of_every_form() -> None:
    """The fan tests' winning hands (``tests/handgen.py``): complete, and waiting on the tile
    they won on."""
    for form, hand, _ in handgen.mixed(1500, SEED):
        melds = len(hand.melds)
        assert is_winning(hand.concealed_counts(), melds), (form, hand)
        assert hand.win_tile in waits(counts_of(hand.standing), melds), (form, hand)


# --- properties -------------------------------------------------------------------------------


@st.composite
def random_hands(draw: st.DrawFn, extra: int = 0) -> tuple[Counts, int]:
    """Any hand of ``13 + extra - 3 * melds`` tiles, at most four of a kind."""
    melds = draw(st.integers(0, 4))
    size = 13 + extra - 3 * melds
    tiles = draw(
        st.lists(st.integers(0, N_KINDS - 1), min_size=size, max_size=size).filter(
            lambda ts: max(ts.count(x) for x in ts) <= 4
        )
    )
    return counts_of(tiles), melds


@st.composite
def complete_hands(draw: st.DrawFn) -> tuple[Counts, int]:
    """A complete regular hand: ``4 - melds`` concealed sets and a pair."""
    melds = draw(st.integers(0, 4))
    sets = draw(st.lists(st.sampled_from(SETS), min_size=4 - melds, max_size=4 - melds))
    pair = draw(st.integers(0, N_KINDS - 1))
    counts = counts_of([*(x for s in sets for x in s), pair, pair])
    return draw(st.just((counts, melds)).filter(lambda h: max(h[0]) <= 4))


any_complete_hands = st.builds(
    lambda rng, melds: (counts_of(_complete_tiles(rng, melds)), melds),
    st.randoms(use_true_random=False),
    st.integers(0, 4),
)


@given(st.one_of(complete_hands(), any_complete_hands, random_hands(extra=1)))
def test_is_winning_is_shanten_minus_one(hand: tuple[Counts, int]) -> None:
    counts, melds = hand
    assert is_winning(counts, melds) == oracle_winning(counts, melds)
    assert is_winning(counts, melds) == (shanten(counts, melds) == -1)


@given(st.one_of(complete_hands(), any_complete_hands), st.data())
def test_a_complete_hand_less_a_tile_waits_on_it(hand: tuple[Counts, int], data: Any) -> None:
    counts, melds = hand
    drop = data.draw(st.sampled_from(tiles_of(counts)))
    ready = plus(counts, drop, -1)
    assert shanten(ready, melds) == 0
    assert drop in waits(ready, melds)
    for tile in range(N_KINDS):
        if ready[tile] < 4:
            assert is_winning(plus(ready, tile), melds) == (tile in waits(ready, melds))


@settings(max_examples=50)
@given(random_hands())
def test_useful_tiles_are_the_draws_that_lower_shanten(hand: tuple[Counts, int]) -> None:
    counts, melds = hand
    before = shanten(counts, melds)
    useful = useful_tiles(counts, melds)
    for tile in range(N_KINDS):
        if counts[tile] < 4:
            after = shanten(plus(counts, tile), melds)
            assert after >= before - 1
            assert (tile in useful) == (after < before)
    assert all(counts[tile] < 4 for tile in useful)


@settings(max_examples=50)
@given(random_hands(extra=1))
def test_a_drawn_hand_counts_its_best_discard(hand: tuple[Counts, int]) -> None:
    counts, melds = hand
    if is_winning(counts, melds):
        assert shanten(counts, melds) == -1
    else:
        best = min(shanten(plus(counts, x, -1), melds) for x in set(tiles_of(counts)))
        assert shanten(counts, melds) == best


# --- differential tests against PyMahjongGB ---------------------------------------------------

CODES = (
    [f"W{r}" for r in range(1, 10)]  # characters
    + [f"B{r}" for r in range(1, 10)]  # dots
    + [f"T{r}" for r in range(1, 10)]  # bamboo
    + ["F1", "F2", "F3", "F4", "J1", "J2", "J3"]  # E S W N, C F P
)

FORMS: list[tuple[str, Callable[..., int], bool]] = [
    # (reference function, ours, takes melds)
    ("RegularShanten", regular_shanten, True),
    ("SevenPairsShanten", seven_pairs_shanten, False),
    ("ThirteenOrphansShanten", thirteen_orphans_shanten, False),
    ("HonorsAndKnittedTilesShanten", honors_and_knitted_shanten, False),
    ("KnittedStraightShanten", knitted_straight_shanten, True),
]


@pytest.fixture(scope="module")
def mahjonggb() -> Any:
    return pytest.importorskip("MahjongGB")


def random_hands_for(rng: random.Random, melds: int, n: int) -> Iterator[Counts]:
    """``n`` hands of ``13 - 3 * melds`` tiles: drawn from the wall, or a complete hand less
    a tile with up to two tiles swapped for others."""
    wall = [x for x in range(N_KINDS) for _ in range(4)]
    for _ in range(n):
        if rng.random() < 0.5:
            yield counts_of(rng.sample(wall, 13 - 3 * melds))
            continue
        counts = counts_of(_complete_tiles(rng, melds))
        counts[rng.choice(tiles_of(counts))] -= 1
        for _ in range(rng.choice((0, 0, 1, 2))):
            counts[rng.choice(tiles_of(counts))] -= 1
            counts[rng.choice([x for x in range(N_KINDS) if counts[x] < 4])] += 1
        yield counts


def reference(mahjonggb: Any, name: str, counts: Counts) -> tuple[int, list[int]] | None:
    """A reference per-form function's (shanten, useful tiles); None when it refuses the hand.

    The tiles the hand holds four of are dropped from the useful tiles (see the docstring).
    """
    try:
        value, useful = getattr(mahjonggb, name)(tuple(CODES[x] for x in tiles_of(counts)))
    except TypeError:
        return None
    return value, sorted(CODES.index(code) for code in useful if counts[CODES.index(code)] < 4)


def _described(counts: Counts, melds: int) -> str:
    return f"{format_tiles(tiles_of(counts))} with {melds} meld(s)"


@pytest.mark.parametrize("melds", [0, 1, 2, 3, 4])
def test_matches_reference(mahjonggb: Any, melds: int) -> None:
    """Every form's shanten, the overall shanten and useful tiles agree with the reference."""
    rng = random.Random(f"shanten-{SEED}-{melds}")
    n = HANDS * 3 if melds == 0 else HANDS
    for counts in random_hands_for(rng, melds, n):
        where = _described(counts, melds)
        found = {}
        for name, ours, takes_melds in FORMS:
            ref = reference(mahjonggb, name, counts)
            if ref is None:
                continue
            value = ours(counts, melds) if takes_melds else ours(counts)
            assert value == ref[0], f"{name}: {where}: ours {value}, reference {ref[0]}"
            found[name] = ref
        best = min(value for value, _ in found.values())
        codes = tuple(CODES[x] for x in tiles_of(counts))
        assert shanten(counts, melds) == best == mahjonggb.MahjongShanten((), codes), where
        expected = sorted({x for value, useful in found.values() if value == best for x in useful})
        assert useful_tiles(counts, melds) == expected, where


@pytest.mark.parametrize("melds", [0, 1, 2, 3, 4])
def test_form_useful_tiles_match_reference(mahjonggb: Any, melds: int) -> None:
    """Each form's useful tiles, found by drawing every tile, agree with the reference."""
    rng = random.Random(f"useful-{SEED}-{melds}")
    for counts in random_hands_for(rng, melds, HANDS // 5):
        for name, ours, takes_melds in FORMS:
            ref = reference(mahjonggb, name, counts)
            if ref is None:
                continue

            def form(hand: Counts, ours: Callable[..., int] = ours, m: bool = takes_melds) -> int:
                return ours(hand, melds) if m else ours(hand)

            before = form(counts)
            useful = [x for x in range(N_KINDS) if counts[x] < 4 and form(plus(counts, x)) < before]
            assert useful == ref[1], f"{name}: {_described(counts, melds)}"


def test_reference_lists_a_fifth_copy(mahjonggb: Any) -> None:
    """The departure: the reference counts 1m, a fifth copy, among the waits of this hand."""
    counts = c("1111m234m567m888m")
    ref_useful = mahjonggb.RegularShanten(tuple(CODES[x] for x in tiles_of(counts)))[1]
    assert "W1" in ref_useful
    assert 0 not in waits(counts)
    assert [CODES.index(code) for code in ref_useful if code != "W1"] == waits(counts)

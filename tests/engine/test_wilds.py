"""Tests of ``engine.wilds``: the wild kind, and winning, shanten and waits with wild tiles.

Scripted hands for every form; the fifth-copy rule (a wild never stands for a fifth copy of
a kind, melds counted); and properties on seeded hands (complete hands of every form from
``handgen``, with some tiles turned wild and some swapped) against a deliberately simple
brute-force reference written here: every way to replace up to two wilds by tiles, judged
by ``engine.shanten`` on the concrete counts.

The properties, and why they hold (``W(C, k)``: ``shanten_with_wilds`` of the tiles ``C``
with ``k`` wilds; ``B(C, k)``: the least ``engine.shanten.shanten`` over the ways to replace
the wilds by tiles, no kind past four copies):

- ``is_winning_with_wilds`` is exactly "some replacement is complete" (by definition).
- ``W <= B``: ``W`` is the same least without the four-copy cap (module docs of
  ``engine.wilds``), a least over more hands, except that ``W`` counts 0 instead of -1
  when only a fifth copy completes, and then ``B`` is 0 or more anyway.
- ``W == B`` when no kind can pass four copies, that is ``max(C + melds) + k <= 4``: then
  the two leasts are over the same hands.
- A wild is worth one tile at most and at least nothing: for a tile ``t`` of ``C``,
  ``W(C, k) - 1 <= W(C - t, k + 1) <= W(C, k)``. The upper bound: the new wild can stand
  for ``t``. The lower bound: a replacement for ``C - t`` with ``k + 1`` wilds is a
  replacement for ``C`` with ``k`` wilds with one tile exchanged, and an exchange changes
  a form's shanten by one at most (a tile taken away never lowers it, a tile added lowers
  it by one at most).
- ``W == -1`` exactly when the hand is complete; a 13-tile hand is never below 0.
- The waits are exactly the kinds a tile of which completes the hand (brute force), and a
  hand has a wait exactly when one more wild completes it (the wild stands for the wait).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from itertools import combinations_with_replacement

import handgen
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import shanten as plain
from engine.errors import InvalidHand
from engine.notation import parse_tiles
from engine.rules import Wilds
from engine.scoring.substitutions import caps_of, substitutions
from engine.tiles import EAST, FIRST_FLOWER, N_KINDS, NORTH, RED, WHITE, WILD
from engine.wilds import (
    is_winning_with_wilds,
    next_kind,
    previous_kind,
    shanten_with_wilds,
    useful_tiles_with_wilds,
    waits_with_wilds,
    wild_tiles,
)


def hand(text: str) -> tuple[list[int], int]:
    """Counts and wilds of a hand in the notation, ``*`` for a wild tile."""
    counts = [0] * N_KINDS
    wilds = 0
    for t in parse_tiles(text):
        if t == WILD:
            wilds += 1
        else:
            counts[t] += 1
    return counts, wilds


def tile(text: str) -> int:
    (t,) = parse_tiles(text)
    return t


def meld_counts(*melds: str) -> list[int]:
    counts = [0] * N_KINDS
    for meld in melds:
        for t in parse_tiles(meld):
            counts[t] += 1
    return counts


# ------------------------------------------------------------ the wild kind ---


@pytest.mark.parametrize(
    ("before", "after"),
    [
        *[("1m", "2m"), ("9m", "1m"), ("9p", "1p"), ("9s", "1s"), ("5s", "6s")],
        *[("E", "S"), ("S", "W"), ("W", "N"), ("N", "E"), ("C", "F"), ("F", "P"), ("P", "C")],
    ],
)
def test_next_and_previous_kind_cycle(before: str, after: str) -> None:
    assert next_kind(tile(before)) == tile(after)
    assert previous_kind(tile(after)) == tile(before)


def test_the_cycles_close_on_every_kind() -> None:
    for t in range(N_KINDS):
        assert previous_kind(next_kind(t)) == t == next_kind(previous_kind(t))
        group = t // 9 if t < EAST else (3 if t <= NORTH else 4)
        n = t
        for _ in range(9 if t < EAST else (4 if t <= NORTH else 3)):
            n = next_kind(n)
            assert (n // 9 if n < EAST else (3 if n <= NORTH else 4)) == group
        assert n == t  # a whole cycle: 9 ranks, 4 winds, 3 dragons


def test_wild_tiles_for_each_option() -> None:
    assert wild_tiles(Wilds.NONE, None) == frozenset()
    assert wild_tiles(Wilds.FLOWERS, None) == frozenset(range(FIRST_FLOWER, FIRST_FLOWER + 8))
    assert wild_tiles(Wilds.INDICATOR, tile("9m")) == {tile("9m")}
    assert wild_tiles(Wilds.BEFORE, tile("1m")) == {tile("9m")}
    assert wild_tiles(Wilds.AFTER, tile("9m")) == {tile("1m")}
    assert wild_tiles(Wilds.AFTER, tile("N")) == {tile("E")}
    assert wild_tiles(Wilds.BEFORE, tile("E")) == {tile("N")}
    assert wild_tiles(Wilds.AFTER, WHITE) == {RED}
    assert wild_tiles(Wilds.BEFORE, RED) == {WHITE}
    with pytest.raises(ValueError, match="indicator"):
        wild_tiles(Wilds.AFTER, None)


# ------------------------------------------------------------ scripted hands ---


@pytest.mark.parametrize(
    ("text", "melds", "winning"),
    [
        ("19m19p19sESWNCF**", 0, True),  # Thirteen Orphans: P and the pair
        ("19m19p19sESWNCFF*", 0, True),  # ... the wild is P
        ("19m19p19sESWNCFF*", 0, True),
        ("19m19p19sESWNCCF*", 0, True),
        ("19m19p18sESWNCF**", 0, False),  # 8s is no orphan
        ("1133m5577p99sEW**", 0, True),  # Seven Pairs: the wilds pair E and W
        ("1133m5577p99sEWN*", 0, False),
        ("2222m5577p99sE***", 0, True),  # four of a kind are two pairs; two wilds a pair
        ("159m159p********", 0, True),  # eight wild flowers: Seven Pairs only
        ("159m159pE*******", 0, True),  # seven lone tiles, seven wilds
        ("159m159pES******", 0, False),
        ("147m258p36sESWNC*", 0, True),  # Honors and Knitted Tiles
        ("147m258p36sESWCC*", 0, False),  # a pair is no knitted tile
        ("147m258pESWNCFP*", 0, True),  # Greater Honors and Knitted Tiles
        ("147m258p36s55mEEE*", 0, True),  # Knitted Straight: the wild is 9s
        ("147m258p3s55mEEE**", 0, True),  # two of its tiles are wild
        ("147m25p369s55m*", 1, True),  # Knitted Straight beside a meld: the wild is 8p
        ("123m456p789sEE***", 0, True),  # three wilds make a set
        ("123m456p789sE****", 0, True),  # ... and one the pair
        ("123m456p789sEE**", 0, False),  # 13 tiles
        ("13m46p79sEE****", 0, True),  # each wild closes a chow, the fourth a pung with E
        ("EE*", 4, True),
        ("E**", 4, True),
        ("**", 4, True),
        ("EF*", 4, False),
    ],
)
def test_scripted_hands(text: str, melds: int, winning: bool) -> None:
    counts, wilds = hand(text)
    if sum(counts) + wilds + 3 * melds != 14:
        with pytest.raises(InvalidHand, match="holds"):
            is_winning_with_wilds(counts, wilds, melds)
        return
    assert is_winning_with_wilds(counts, wilds, melds) is winning
    assert (shanten_with_wilds(counts, wilds, melds) == -1) is winning
    if wilds <= 2:
        assert brute_win(counts, wilds, melds) is winning


def test_a_wild_pairs_any_tile_but_a_fifth_copy() -> None:
    counts, wilds = hand("123m456p789sEEE*")
    assert shanten_with_wilds(counts, wilds) == 0
    # any tile pairs with the wild, but E: EEEE* needs a fifth E
    assert waits_with_wilds(counts, wilds) == [t for t in range(N_KINDS) if t != EAST]
    counts, wilds = hand("123m456p789sEEE5s")
    assert waits_with_wilds(counts, wilds) == [tile("5s")]


def test_shanten_counts_each_wild_as_a_tile() -> None:
    for wilds in range(3):
        counts, k = hand("19m19p19sESWNCF" + "*" * wilds)  # 12 orphans and the wilds
        assert k == wilds
        counts[tile("5m")] += max(1 - wilds, 0)  # 13 tiles, 14 with two wilds
        assert shanten_with_wilds(counts, wilds) == 1 - wilds
    counts, wilds = hand("111m999pEEE****")  # only sets: three wilds a set, one alone
    assert shanten_with_wilds(counts, wilds) == 0
    counts, wilds = hand("1m5m9m1p5p9p1s******")  # Seven Pairs: six wilds pair six tiles
    assert shanten_with_wilds(counts, wilds) == 0
    assert set(waits_with_wilds(counts, wilds)) >= set(parse_tiles("159m159p1s"))


# ------------------------------------------------------------- fifth copies ---


def test_a_wild_never_stands_for_a_fifth_copy_in_the_hand() -> None:
    counts, wilds = hand("1111m*")
    assert not is_winning_with_wilds(counts, wilds, melds=3)  # 11 + 11*: 1m five times
    assert shanten_with_wilds(counts, wilds, melds=3) == 0  # ready, as engine.shanten says
    counts, wilds = hand("1111m")
    assert waits_with_wilds(counts, 0, melds=3) == []
    assert plain.shanten(counts, 3) == 0


def test_a_wild_never_stands_for_a_fifth_copy_counting_the_melds() -> None:
    counts, wilds = hand("1m789s*")  # the pair 1m + wild, with the pung of 1m declared
    melds = meld_counts("111m", "123p", "456p")
    assert is_winning_with_wilds(counts, wilds, 3)  # melds unknown: 1m is free
    assert not is_winning_with_wilds(counts, wilds, 3, melds)
    counts, wilds = hand("1m789s")
    assert tile("1m") in waits_with_wilds(counts, 0, 3)
    assert tile("1m") not in waits_with_wilds(counts, 0, 3, melds)
    counts, wilds = hand("5m77s**")  # the pung of 5m declared: 5m** is a chow, not a pung
    assert is_winning_with_wilds(counts, wilds, 3, meld_counts("555m", "123p", "456p"))
    counts, wilds = hand("9m77s**")  # 9m ** : only 789m, since 999m would be a fifth 9m
    assert is_winning_with_wilds(counts, wilds, 3, meld_counts("999m", "123p", "456p"))
    counts, wilds = hand("9mEE**")
    assert is_winning_with_wilds(counts, wilds, 3, meld_counts("789m", "789m", "789m"))


def test_bad_hands_are_refused() -> None:
    counts, wilds = hand("123m456p789sEE*")
    with pytest.raises(InvalidHand, match="holds"):
        is_winning_with_wilds(counts, wilds)
    with pytest.raises(InvalidHand, match="wild"):
        shanten_with_wilds(counts, -1)
    with pytest.raises(InvalidHand, match="4 copies"):
        waits_with_wilds(*hand("1m789s"), 3, meld_counts("1111m", "123p", "456p"))
    with pytest.raises(InvalidHand, match="kinds"):
        shanten_with_wilds(counts[:-1], 1)


# ------------------------------------------------- brute-force reference ---


def replacements(counts: Sequence[int], wilds: int, room: Sequence[int]) -> Iterator[list[int]]:
    """Every way to replace the wilds by tiles, no kind past its room."""
    for kinds in combinations_with_replacement(range(N_KINDS), wilds):
        out = list(counts)
        for t in kinds:
            out[t] += 1
        if all(n <= r for n, r in zip(out, room, strict=True)):
            yield out


def room_of(melds: Sequence[int] | None) -> list[int]:
    return [4 - m for m in melds] if melds is not None else [4] * N_KINDS


def brute_win(
    counts: Sequence[int], wilds: int, melds: int, meld_tiles: Sequence[int] | None = None
) -> bool:
    room = room_of(meld_tiles)
    return any(plain.is_winning(c, melds) for c in replacements(counts, wilds, room))


def brute_shanten(counts: Sequence[int], wilds: int, melds: int, meld_tiles: Sequence[int]) -> int:
    room = room_of(meld_tiles)
    return min(plain.shanten(c, melds) for c in replacements(counts, wilds, room))


def near_hands(
    n: int, seed: int, most_wilds: int
) -> Iterator[tuple[list[int], int, int, list[int]]]:
    """14-tile hands near complete ones of every form: (counts, wilds, melds, meld tiles)."""
    rng = random.Random(seed)
    for _, won, _ in handgen.mixed(n, seed=seed):
        melded = [0] * N_KINDS
        for meld in won.melds:
            for t in meld.tiles:
                melded[t] += 1
        tiles = [*won.standing, won.win_tile]
        for _ in range(rng.choice((0, 0, 1, 2))):  # swap tiles for others
            tiles.pop(rng.randrange(len(tiles)))
            while True:
                t = rng.randrange(N_KINDS)
                if tiles.count(t) + melded[t] < 4:
                    tiles.append(t)
                    break
        rng.shuffle(tiles)
        wilds = rng.randint(0, min(most_wilds, len(tiles) - 1))
        counts = [0] * N_KINDS
        for t in tiles[wilds:]:
            counts[t] += 1
        yield counts, wilds, len(won.melds), melded


def test_winning_agrees_with_brute_force() -> None:
    for counts, wilds, melds, melded in near_hands(400, seed=1, most_wilds=2):
        assert is_winning_with_wilds(counts, wilds, melds, melded) is brute_win(
            counts, wilds, melds, melded
        ), (counts, wilds, melds)


def test_shanten_against_brute_force() -> None:
    for counts, wilds, melds, melded in near_hands(300, seed=2, most_wilds=2):
        got = shanten_with_wilds(counts, wilds, melds, melded)
        brute = brute_shanten(counts, wilds, melds, melded)
        assert got <= brute, (counts, wilds, melds)
        if max(a + b for a, b in zip(counts, melded, strict=True)) + wilds <= 4:
            assert got == brute, (counts, wilds, melds)
        assert (got == -1) is is_winning_with_wilds(counts, wilds, melds, melded)


def test_shanten_of_thirteen_tiles_against_brute_force() -> None:
    rng = random.Random(3)
    for counts, wilds, melds, melded in near_hands(300, seed=3, most_wilds=2):
        held = [t for t in range(N_KINDS) if counts[t]]
        counts[rng.choice(held)] -= 1
        got = shanten_with_wilds(counts, wilds, melds, melded)
        brute = brute_shanten(counts, wilds, melds, melded)
        assert 0 <= got <= brute, (counts, wilds, melds)
        if max(a + b for a, b in zip(counts, melded, strict=True)) + wilds <= 4:
            assert got == brute, (counts, wilds, melds)


def test_waits_agree_with_brute_force() -> None:
    rng = random.Random(4)
    for counts, wilds, melds, melded in near_hands(60, seed=4, most_wilds=2):
        held = [t for t in range(N_KINDS) if counts[t]]
        counts[rng.choice(held)] -= 1
        got = waits_with_wilds(counts, wilds, melds, melded)
        brute = []
        for t in range(N_KINDS):
            if counts[t] + melded[t] < 4:
                counts[t] += 1
                if brute_win(counts, wilds, melds, melded):
                    brute.append(t)
                counts[t] -= 1
        assert got == brute, (counts, wilds, melds)
        assert bool(got) is is_winning_with_wilds(counts, wilds + 1, melds, melded)
        assert not got or shanten_with_wilds(counts, wilds, melds, melded) == 0


def test_useful_tiles_lower_the_shanten() -> None:
    rng = random.Random(5)
    for counts, wilds, melds, melded in near_hands(600, seed=5, most_wilds=6):
        held = [t for t in range(N_KINDS) if counts[t]]
        counts[rng.choice(held)] -= 1
        current = shanten_with_wilds(counts, wilds, melds, melded)
        useful = useful_tiles_with_wilds(counts, wilds, melds, melded)
        if current == 0:
            assert useful == waits_with_wilds(counts, wilds, melds, melded)
            continue
        lowering = []
        for t in range(N_KINDS):
            if counts[t] + melded[t] < 4:
                counts[t] += 1
                if shanten_with_wilds(counts, wilds, melds, melded) < current:
                    lowering.append(t)
                counts[t] -= 1
        assert useful == lowering, (counts, wilds, melds)


def test_a_wild_is_worth_one_tile_at_most() -> None:
    for counts, wilds, melds, melded in near_hands(800, seed=6, most_wilds=6):
        value = shanten_with_wilds(counts, wilds, melds, melded)
        for t in range(N_KINDS):
            if counts[t]:
                counts[t] -= 1
                more = shanten_with_wilds(counts, wilds + 1, melds, melded)
                counts[t] += 1
                assert value - 1 <= more <= value, (counts, wilds, melds, t)


def test_without_wilds_it_is_engine_shanten() -> None:
    for counts, _, melds, melded in near_hands(1000, seed=7, most_wilds=0):
        assert shanten_with_wilds(counts, 0, melds, melded) == plain.shanten(counts, melds)
        assert is_winning_with_wilds(counts, 0, melds) is plain.is_winning(counts, melds)
        counts[next(t for t in range(N_KINDS) if counts[t])] -= 1
        assert shanten_with_wilds(counts, 0, melds) == plain.shanten(counts, melds)
        assert waits_with_wilds(counts, 0, melds) == plain.waits(counts, melds)
        assert useful_tiles_with_wilds(counts, 0, melds) == plain.useful_tiles(counts, melds)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, N_KINDS - 1), min_size=6, max_size=14),
    st.integers(0, 3),
    st.data(),
)
def test_random_hands_hold_the_properties(
    tiles: list[int], melds: int, data: st.DataObject
) -> None:
    counts = [0] * N_KINDS
    for t in tiles:
        if counts[t] < 4:
            counts[t] += 1
    n = sum(counts)
    size = data.draw(st.sampled_from((13, 14)))
    wilds = size - 3 * melds - n
    if not 0 <= wilds <= 8:
        return
    value = shanten_with_wilds(counts, wilds, melds)
    assert value >= 13 - size
    if size == 14:
        assert (value == -1) is is_winning_with_wilds(counts, wilds, melds)
    else:
        waits = waits_with_wilds(counts, wilds, melds)
        assert bool(waits) is is_winning_with_wilds(counts, wilds + 1, melds)
        assert not waits or value == 0


def test_the_table_shape_test_agrees_with_the_scorers_substitutions() -> None:
    """``is_winning_with_wilds`` (what the table asks) and ``scoring.substitutions.substitutions``
    (what the calculator scores) must agree on every hand: with no minimum the table lets a
    player win on the shape test alone and scores only when the win is declared."""
    rng = random.Random("guobiao/wilds-agree")
    seen = {True: 0, False: 0}
    for _, hand, _ in handgen.mixed(1500, seed=5):
        concealed = [*hand.standing, hand.win_tile]
        k = rng.choice((1, 1, 2, 2, 3, 4))
        for i in rng.sample(range(len(concealed)), min(k, len(concealed))):
            concealed[i] = -1  # becomes a wild tile
        spots = [i for i, t in enumerate(concealed) if t >= 0]
        if spots and rng.random() < 0.4:  # a near miss: one concrete tile changed
            concealed[rng.choice(spots)] = rng.randrange(34)
        counts = [0] * 34
        for t in concealed:
            if t >= 0:
                counts[t] += 1
        meld_counts = [0] * 34
        for meld in hand.melds:
            for t in meld.tiles:
                meld_counts[t] += 1
        if any(c + m > 4 for c, m in zip(counts, meld_counts, strict=True)):
            continue
        wilds = concealed.count(-1)
        melds = len(hand.melds)
        shape = is_winning_with_wilds(counts, wilds, melds, meld_counts)
        scored = bool(substitutions(tuple(counts), caps_of(meld_counts), wilds, melds))
        assert shape == scored, (counts, wilds, hand.melds)
        seen[shape] += 1
    assert min(seen.values()) > 100, seen

"""Tests of ``engine.wall``: the seeded shuffle, the dice, the break, the head and the tail.

The break is checked against the rule of the module doc, computed here independently:
the first throw picks the wall counted from the dealer (the dealer is 1, then
counter-clockwise), the break comes after ``first + second`` stacks counted clockwise from
that wall's right-hand end; the head is drawn clockwise from the break, the tail (replacement
tiles) from the other side of the break, top tile first.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engine.errors import MahjongError
from engine.tiles import FIRST_FLOWER, N_FLOWERS, N_KINDS
from engine.wall import N_TILES, STACKS, Dice, SplitMix64, Wall, full_set

# Positions are numbered 0..3 = East, South, West, North, counter-clockwise; the wall in front
# of position w holds stacks 18w .. 18w+17 in counter-clockwise order, so its right-hand end
# (seen from its owner) is stack 18w+17, and clockwise means decreasing stack numbers.


def expected_head_stack(dealer: int, dice: Dice) -> int:
    first, second = sum(dice.first), sum(dice.second)
    wall = (dealer + first - 1) % 4  # the dealer counts as 1, then counter-clockwise
    right_end = 18 * wall + 17
    counted = [(right_end - k) % STACKS for k in range(first + second)]  # clockwise
    return (counted[-1] - 1) % STACKS  # the next stack clockwise after the break


def shuffled(seed: int) -> list[int]:
    tiles = full_set()
    random.Random(seed).shuffle(tiles)
    return tiles


def test_splitmix64_reference_vector() -> None:
    # The published first outputs of SplitMix64 seeded with 0: the shuffle does not depend on
    # Python's ``random``, so a seed gives the same wall on every version.
    rng = SplitMix64(0)
    assert [rng.next() for _ in range(3)] == [
        0xE220A8397B1DCDAF,
        0x6E789E6AA1B965F4,
        0x06C45D188009454F,
    ]


def test_below_stays_in_range_and_covers_it() -> None:
    rng = SplitMix64(7)
    values = [rng.below(6) for _ in range(600)]
    assert set(values) == set(range(6))


def test_from_seed_is_deterministic() -> None:
    for seed in (0, 1, 2024, 2**64 - 1):
        for dealer in range(4):
            a, b = Wall.from_seed(seed, dealer), Wall.from_seed(seed, dealer)
            assert a.tiles == b.tiles
            assert a.dice == b.dice
            assert a.break_stack == b.break_stack
            assert [a.draw() for _ in range(20)] == [b.draw() for _ in range(20)]


def test_from_seed_is_pinned() -> None:
    # Regression: a recorded seed must keep dealing the same hand forever.
    wall = Wall.from_seed(2024, 0)
    assert wall.dice == Dice((6, 4), (1, 6))
    assert wall.break_stack == 18
    assert wall.tiles[:8] == [11, 4, 30, 31, 1, 3, 8, 2]


def test_from_seed_holds_the_144_tiles_and_real_dice() -> None:
    throws: Counter[int] = Counter()
    walls = [Wall.from_seed(seed, seed % 4) for seed in range(200)]
    for seed, wall in enumerate(walls):
        assert sorted(wall.tiles) == sorted(full_set())
        for die in (*wall.dice.first, *wall.dice.second):
            assert 1 <= die <= 6
            throws[die] += 1
        assert wall.break_stack == expected_head_stack(seed % 4, wall.dice)
    assert set(throws) == set(range(1, 7))
    assert len({tuple(w.tiles) for w in walls}) == len(walls)


def test_full_set() -> None:
    tiles = full_set()
    assert len(tiles) == N_TILES
    counts = Counter(tiles)
    assert all(counts[t] == 4 for t in range(N_KINDS))
    assert all(counts[FIRST_FLOWER + k] == 1 for k in range(N_FLOWERS))


def test_dice_rule() -> None:
    dice = Dice((1, 2), (3, 4))
    assert dice.wall_offset == 2  # 3: the dealer is 1, the next 2, the opposite player 3
    assert dice.break_count == 10
    assert Dice((2, 3), (1, 1)).wall_offset == 0  # 5: the dealer's own wall
    assert Dice((6, 6), (6, 6)).wall_offset == 3  # 12: the player before the dealer
    assert Dice((6, 6), (6, 6)).break_count == 24
    assert Dice((1, 1), (1, 1)).break_count == 4


@pytest.mark.parametrize(
    ("dealer", "dice", "head_stack"),
    [
        # West's wall (stacks 36..53), 10 stacks from stack 53: 53..44, head at 43.
        (0, Dice((1, 2), (3, 4)), 43),
        # 5: the dealer's (South's) own wall, 18..35; 5 + 2 = 7 stacks 35..29, head at 28.
        (1, Dice((2, 3), (1, 1)), 28),
        # 12 from South: East's wall (0..17); 24 stacks run on into North's wall: head at 65.
        (1, Dice((6, 6), (6, 6)), 65),
        # 2 from North: East's wall; 2 + 2 stacks 17..14, head at 13.
        (3, Dice((1, 1), (1, 1)), 13),
    ],
)
def test_break_examples(dealer: int, dice: Dice, head_stack: int) -> None:
    stacked = shuffled(dealer)
    wall = Wall.build(stacked, dice, dealer)
    assert wall.break_stack == head_stack == expected_head_stack(dealer, dice)
    h = head_stack
    assert [wall.draw() for _ in range(4)] == [
        stacked[2 * h],  # top of the head stack
        stacked[2 * h + 1],  # its bottom
        stacked[2 * ((h - 1) % STACKS)],  # then clockwise
        stacked[2 * ((h - 1) % STACKS) + 1],
    ]
    t = (h + 1) % STACKS  # the tail: the other side of the break
    assert [wall.draw_tail() for _ in range(4)] == [
        stacked[2 * t],
        stacked[2 * t + 1],
        stacked[2 * ((t + 1) % STACKS)],
        stacked[2 * ((t + 1) % STACKS) + 1],
    ]


@pytest.mark.parametrize("dealer", range(4))
def test_break_for_every_throw(dealer: int) -> None:
    stacked = shuffled(100 + dealer)
    for a in range(1, 7):
        for b in range(1, 7):
            dice = Dice((a, b), (b, 7 - a))
            wall = Wall.build(stacked, dice, dealer)
            h = expected_head_stack(dealer, dice)
            assert wall.break_stack == h
            head_order = [
                stacked[2 * ((h - k) % STACKS) + bottom] for k in range(STACKS) for bottom in (0, 1)
            ]
            assert wall.peek_order() == head_order
            assert wall.draw() == stacked[2 * h]
            assert wall.draw_tail() == stacked[2 * ((h + 1) % STACKS)]


def test_head_and_tail_meet_and_empty() -> None:
    wall = Wall.from_seed(5, 2)
    rng = random.Random(5)
    drawn = []
    while wall.remaining:
        drawn.append(wall.draw() if rng.random() < 0.7 else wall.draw_tail())
        assert wall.remaining == N_TILES - len(drawn) == len(wall.peek_order())
    assert sorted(drawn) == sorted(full_set())
    with pytest.raises(MahjongError):
        wall.draw()
    with pytest.raises(MahjongError):
        wall.draw_tail()


def test_build_refuses_a_wrong_tile_set() -> None:
    tiles = full_set()
    tiles[0] = tiles[4]  # a fifth 2m, no 1m
    with pytest.raises(MahjongError):
        Wall.build(tiles, Dice((1, 1), (1, 1)), 0)
    with pytest.raises(MahjongError):
        Wall.build(full_set()[:-1], Dice((1, 1), (1, 1)), 0)


def test_arranged_head_and_tail() -> None:
    head = [27, 27, 5, FIRST_FLOWER, 33]
    tail = [FIRST_FLOWER + 1, 8, 8]
    wall = Wall.arranged(head, tail)
    assert sorted(wall.tiles) == sorted(full_set())
    assert [wall.draw() for _ in head] == head
    assert [wall.draw_tail() for _ in tail] == tail
    assert wall.remaining == N_TILES - len(head) - len(tail)


def test_arranged_refuses_a_fifth_copy() -> None:
    with pytest.raises(MahjongError):
        Wall.arranged([0, 0, 0], [0, 0])
    with pytest.raises(MahjongError):
        Wall.arranged([FIRST_FLOWER], [FIRST_FLOWER])

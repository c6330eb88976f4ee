"""The calculator's caches and tables agree with what they stand for.

- ``engine.forms``: the per-pattern caches (``Memo``) give what a fresh computation gives,
  before and after they fill up and start afresh; ``formal_wait_mask`` is, tile by tile,
  "adding this tile makes a complete hand" (``is_winning``), on seeded hands one tile short
  of a win and on random tiles.
- ``engine.scoring``: the loops the compiled engine runs where the interpreted one calls into
  C (``ids.COMPILED``) give what those calls give.
- ``engine.notation``: the fast path for plainly written hands (``_parse_written_plainly``,
  its table of meld bodies) reads every hand as the careful parser does, and leaves to it
  everything else.
"""

from __future__ import annotations

import random

import handgen
import pytest

from engine import forms
from engine.hand import Hand, Meld, MeldKind
from engine.notation import (
    _MELD_BODIES,
    _parse_hand,
    _parse_written_plainly,
    format_hand,
    parse_hand,
)
from engine.scoring import REF_KEY, ids
from engine.scoring.regular import _insertion_order
from engine.tiles import EAST, N_KINDS, WILD, counts_of, name

# --- engine.forms ----------------------------------------------------------------------------


def _short_hands(n: int, seed: int) -> list[tuple[list[int], int]]:
    """(concealed counts, melds) one tile short of a win: a generated winning hand with one of
    its concealed tiles taken away, and as many of random tiles."""
    rng = random.Random(f"short-{seed}")
    out = []
    for _, hand, _ in handgen.mixed(n, seed):
        counts = hand.concealed_counts()
        counts[rng.choice([t for t in range(N_KINDS) if counts[t]])] -= 1
        out.append((counts, len(hand.melds)))
        melds = rng.choice((0, 0, 1, 2, 4))
        out.append((_random_counts(rng, 13 - 3 * melds), melds))
    return out


def _random_counts(rng: random.Random, size: int) -> list[int]:
    kinds = rng.sample(range(N_KINDS), rng.randint(4, 14))  # 4 x 4 >= 13 tiles
    counts = [0] * N_KINDS
    while sum(counts) < size:
        t = rng.choice(kinds)
        if counts[t] < 4:
            counts[t] += 1
    return counts


def _waits_by_trying(counts: list[int], melds: int) -> int:
    mask = 0
    for t in range(N_KINDS):
        grown = counts.copy()
        grown[t] += 1
        if forms.is_winning(grown, melds):
            mask |= 1 << t
    return mask


def test_wait_mask_is_every_tile_that_completes_the_hand() -> None:
    for counts, melds in _short_hands(1000, seed=5):
        expected = _waits_by_trying(counts, melds)
        assert forms.formal_wait_mask(counts, melds) == expected, counts
        assert forms.formal_waits(counts, melds) == {t for t in range(N_KINDS) if expected >> t & 1}


def test_wait_mask_takes_the_callers_patterns() -> None:
    for counts, melds in _short_hands(300, seed=6):
        patterns = forms.group_patterns(counts)
        assert patterns == tuple(forms.pattern_of(counts, lo, hi) for lo, hi, _ in forms.GROUPS)
        assert forms.formal_wait_mask(counts, melds, patterns) == forms.formal_wait_mask(
            counts, melds
        )


def _uncached_kind(pattern: int, honors: bool) -> int:
    """``forms._kind`` by plain recursion, no cache."""
    if not pattern:
        return 1
    i, n = forms._lowest(pattern)
    unit = 1 << (i << 2)
    kind = 0
    if n >= 3:
        kind |= _uncached_kind(pattern - 3 * unit, honors)
    if forms._has_chow(pattern, i, honors):
        kind |= _uncached_kind(pattern - forms._CHOW_BITS * unit, honors)
    if n >= 2 and _uncached_kind(pattern - 2 * unit, honors) & 1:
        kind |= 2
    return kind


def _group_cases(n: int, seed: int) -> list[tuple[int, int]]:
    """(group index, pattern) of the groups of winning and short hands."""
    cases = []
    for counts, _ in _short_hands(n, seed):
        for g, pattern in enumerate(forms.group_patterns(counts)):
            cases.append((g, pattern))
    for _, hand, _ in handgen.mixed(n, seed):
        for g, pattern in enumerate(forms.group_patterns(hand.concealed_counts())):
            cases.append((g, pattern))
    return cases


def _check_groups(cases: list[tuple[int, int]]) -> None:
    for g, pattern in cases:
        lo, hi, honors = forms.GROUPS[g]
        assert forms._READINGS[g][pattern] == forms.suit_readings(pattern, lo, honors)
        assert forms._kind(pattern, honors) == _uncached_kind(pattern, honors)
        assert forms._SHAPES[honors][pattern] == forms._shape(pattern, hi - lo, honors)


def test_pattern_caches_agree_with_fresh_computations() -> None:
    for memo in (*forms._READINGS, *forms._KINDS, *forms._SHAPES):
        memo.cache_clear()
    cases = _group_cases(600, seed=7)
    _check_groups(cases)  # filling the caches
    _check_groups(cases)  # from the caches


def _unpruned_shape(pattern: int, size: int, honors: bool) -> tuple[int, int, int]:
    """``forms._shape`` trying every index (it skips the tiles that would stand alone)."""
    bits = _uncached_kind(pattern, honors)
    to_sets = to_pair = 0
    for i in range(size):
        if (pattern >> (i << 2)) & 0xF >= 5:
            continue
        grown = _uncached_kind(pattern + (1 << (i << 2)), honors)
        if grown & 2:
            to_pair |= 1 << i
        elif grown & 1:
            to_sets |= 1 << i
    return (1 if bits & 2 else 0 if bits & 1 else -1), to_sets, to_pair


def test_shape_skips_only_tiles_that_cannot_count() -> None:
    rng = random.Random("shapes")
    for size, honors in ((9, False), (7, True)):
        for _ in range(3000):
            counts = [0] * size
            for _ in range(rng.randint(0, 13)):
                t = rng.randrange(size)
                counts[t] = min(counts[t] + 1, 4)
            pattern = forms.pattern_of(counts, 0, size)
            assert forms._shape(pattern, size, honors) == _unpruned_shape(pattern, size, honors)


def test_a_full_memo_starts_afresh_and_still_answers() -> None:
    computed: list[int] = []

    def square(x: int) -> int:
        computed.append(x)
        return x * x

    memo = forms.Memo(square, limit=3)
    assert [memo[x] for x in (1, 2, 3, 1)] == [1, 4, 9, 1]
    assert computed == [1, 2, 3]
    assert memo[4] == 16 and len(memo) == 1  # full: emptied, then the new entry
    assert memo[1] == 1 and computed == [1, 2, 3, 4, 1]


# --- engine.scoring: the loops of the compiled engine --------------------------------------------
# Where a native loop beats a call into C only once compiled (``ids.COMPILED``), the engine
# has both; here the loops, which the interpreted engine does not run, against the others.


def test_compiled_loops_agree_with_the_interpreted_ways() -> None:
    rng = random.Random("loops")
    for _ in range(3000):
        table = [0] * ids.N_FANS
        for fan in rng.sample(range(ids.N_FANS), rng.choice((0, 1, 2, 5, 12))):
            table[fan] = rng.choice((1, 1, 2, 3, -1))
        assert ids._counted_by_loop(table) == [i for i in range(ids.N_FANS) if table[i]]
        assert ids._total_by_loop(table) == sum(ids.POINTS[i] * n for i, n in enumerate(table))
        tiles = [rng.randrange(N_KINDS) for _ in range(rng.randrange(5))]
        expected = sorted(tiles, key=REF_KEY.__getitem__)
        _insertion_order(tiles)
        assert tiles == expected


# --- engine.notation -------------------------------------------------------------------------


def test_meld_table_reads_as_the_careful_parser() -> None:
    for body, meld in _MELD_BODIES.items():
        # three sets and a pair beside the meld, in the suits it leaves
        suit = min(meld.tile // 9, 3)
        sets = ("123p456p789s", "123m456m789s", "123m456m789p", "123m456p789s")[suit]
        text = f"[{body}]{sets}" + ("SS" if meld.tile == EAST else "EE")
        assert _parse_hand(text).melds == (meld,), body
    # every meld there is, in its canonical form, is in the table
    for kind in MeldKind:
        for tile in range(N_KINDS):
            for offer in range(4):
                try:
                    meld = Meld(kind, tile, offer)
                except ValueError:
                    continue
                assert _MELD_BODIES[str(meld)[1:-1]] == meld


def _writings(hand: Hand, rng: random.Random) -> list[str]:
    """The canonical notation and some other ways of writing the hand."""
    canonical = format_hand(hand)
    out = [canonical, canonical.replace(",", ""), " " + canonical, canonical.replace("E", "1z")]
    tiles = [*hand.standing]
    rng.shuffle(tiles)
    melds = "".join(str(m) for m in hand.melds)
    out.append(melds + "".join(name(t) for t in tiles) + name(hand.win_tile))
    return out


def test_plain_path_reads_every_hand_as_the_careful_parser() -> None:
    rng = random.Random("notation")
    plain = 0
    for _, hand, _ in handgen.mixed(2000, seed=8):
        wild = list(hand.standing)
        for i in rng.sample(range(len(wild)), min(len(wild), rng.choice((0, 0, 1, 3)))):
            wild[i] = WILD
        for h in (hand, Hand(hand.melds, tuple(sorted(wild)), hand.win_tile)):
            for text in _writings(h, rng):
                fast = _parse_written_plainly(text)
                assert _parse_hand(text) == h, text
                assert fast is None or fast == h, text
                assert parse_hand(text) == h
                plain += fast is not None
    assert plain > 8000  # most writings take the fast path


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[",
        "[123m]",
        "[123m][EEE,2][CCC][FFF][PPP]11s",  # five melds
        "[124m]456p789s123sEE",
        "123m[EEE]456p789s5s5s",
        "[123m]]456p789s123sEE",
        "[123m][EEE,4]456p789s5s5s",
        "123m456p789s11111s",  # five of a tile
        "123m456p789s1112s4s0m",
        "*********9m456p",  # nine wild tiles
        "123m456p789s123s8z8z",
        "123m456p789s123sEE9",
        "123m456p789s123EE",
    ],
)
def test_plain_path_leaves_what_it_cannot_read_to_the_careful_parser(text: str) -> None:
    assert _parse_written_plainly(text) is None
    with pytest.raises(ValueError) as plain:
        parse_hand(text)
    with pytest.raises(ValueError) as careful:
        _parse_hand(text)
    assert str(plain.value) == str(careful.value)


def test_hand_checks_are_unchanged() -> None:
    """``Hand`` refuses what it refused, with the same words (its checks were reordered for
    speed)."""
    cases = [
        ((), (0,) * 12 + (WILD,), 99, "99 is not a tile kind 0..33"),
        ((), (35,) + (0,) * 12, 1, "35 is not a tile kind 0..33"),
        ((), (WILD,) * 9 + (1, 2, 3, 4), WILD, "at most 8 wild tiles, got 10"),
        ((), (0,) * 5 + (1,) * 8, 2, "1m appears 5 times"),
        ((Meld(MeldKind.KONG, 0),), (0,) + (1,) * 9, 2, "1m appears 5 times"),
    ]
    for melds, standing, win, words in cases:
        with pytest.raises(ValueError, match=words):
            Hand(melds, standing, win)
    hand = parse_hand("[123m][EEE,2][5555p]789s5s5s")
    assert hand.all_counts() == counts_of([0, 1, 2, 27, 27, 27, 13, 13, 13, 13, 24, 25, 26, 22, 22])

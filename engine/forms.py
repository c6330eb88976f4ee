"""Winning hand forms (和牌型): readings, completeness and waits.

The forms of MCR: regular (4 sets + a pair, 基本和型), Seven Pairs (七对),
Thirteen Orphans (十三幺), Honors and Knitted Tiles (全不靠 / 七星不靠) and
Knitted Straight with a set and a pair (组合龙). ``counts`` are 34-slot arrays
of the concealed tiles; ``melds`` is the number of declared sets beside them.

Regular hands are read one suit at a time: the readings, completeness and
waits of a suit's 9 (or 7 honor) counts are cached by pattern (``Memo``), so a
whole hand is four dictionary lookups.

Waits here are *formal* (by shape): a tile counts even when the hand holds
all four copies of it (ruling 2 of docs/rulings.md). ``engine.shanten``
gives the playable waits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Final, TypeVar

from engine.tiles import EAST, N_KINDS, Tile

_V = TypeVar("_V")

# A set is ``(kind, tile, concealed)``; ``tile`` is the lowest tile of a chow.
CHOW: Final = 0
PUNG: Final = 1
KONG: Final = 2
PAIR: Final = 3
Set = tuple[int, int, bool]
Reading = tuple[tuple[Set, ...], int]  # concealed sets, pair tile (-1: none)

# The four groups of a hand: three suits and the honors.
GROUPS: Final = ((0, 9, False), (9, 18, False), (18, 27, False), (27, 34, True))

# The six knitted sequences 147/258/369 over the three suits (组合龙).
KNITTED: Final[tuple[tuple[Tile, ...], ...]] = tuple(
    tuple(suit * 9 + r for suit, start in enumerate(starts) for r in (start, start + 3, start + 6))
    for starts in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))
)
THIRTEEN: Final[tuple[Tile, ...]] = (0, 8, 9, 17, 18, 26, *range(EAST, N_KINDS))
HONORS: Final[tuple[Tile, ...]] = tuple(range(EAST, N_KINDS))


# A group's counts as one int, 4 bits a tile (counts are at most 4, 5 when a tile is tried
# beside four): a suit's nine tiles fit in 36 bits, a machine word when compiled (8 bits a
# tile made every pattern a big int). The recursions below subtract sets with one integer
# operation. The packing is done in C: ``bytes(...).hex()`` writes two hex digits a tile, the
# count the second; every other digit, read backwards, is the pattern in hex.
def pattern_of(counts: Sequence[int], lo: int, hi: int) -> int:
    return int(bytes(counts[lo:hi]).hex()[::-2], 16)


def group_patterns(counts: Sequence[int]) -> tuple[int, int, int, int]:
    """``pattern_of`` each of the ``GROUPS`` of a 34-slot count array, packed in one go."""
    digits = bytes(counts).hex()
    return (
        int(digits[17::-2], 16),
        int(digits[35:17:-2], 16),
        int(digits[53:35:-2], 16),
        int(digits[:53:-2], 16),
    )


class Memo(dict[int, _V]):
    """A cache of ``compute(pattern)`` by pattern: a dict whose lookups are plain dict
    lookups (an ``lru_cache`` call builds and hashes a tuple of its arguments), which
    computes what it lacks and starts afresh when it holds ``limit`` entries."""

    __slots__ = ("_compute", "_limit")

    def __init__(self, compute: Callable[[int], _V], limit: int) -> None:
        super().__init__()
        self._compute = compute
        self._limit = limit

    def __missing__(self, pattern: int) -> _V:
        value = self._compute(pattern)
        if len(self) >= self._limit:
            self.clear()
        self[pattern] = value
        return value

    def cache_clear(self) -> None:
        self.clear()


_CHOW_BITS: Final = 0x111


def _lowest(pattern: int) -> tuple[int, int]:
    """Index and count of the lowest tile present in a non-empty pattern."""
    i = ((pattern & -pattern).bit_length() - 1) >> 2
    return i, (pattern >> (i << 2)) & 0xF


def _has_chow(pattern: int, i: int, honors: bool) -> bool:
    return (
        not honors
        and i <= 6
        and bool((pattern >> ((i + 1) << 2)) & 0xF)
        and bool((pattern >> ((i + 2) << 2)) & 0xF)
    )


def suit_readings(pattern: int, base: int, honors: bool) -> tuple[Reading, ...]:
    """Every way to read one group's tiles as sets and at most one pair, each once."""
    out: list[Reading] = []
    _walk(pattern, -1, base, honors, sets=[], out=out)
    return tuple(dict.fromkeys(out))  # a pair and a chow at one tile are found in both orders


def _walk(
    rest: int, pair: int, base: int, honors: bool, *, sets: list[Set], out: list[Reading]
) -> None:
    """``suit_readings`` of the tiles ``rest`` beside ``sets`` and ``pair`` found so far (a
    function, not a closure: a closure and its frame make a cycle, freed by the collector)."""
    if not rest:
        out.append((tuple(sorted(sets)), pair))
        return
    i, n = _lowest(rest)
    unit = 1 << (i << 2)
    tile = base + i
    if n >= 3:
        sets.append((PUNG, tile, True))
        _walk(rest - 3 * unit, pair, base, honors, sets=sets, out=out)
        sets.pop()
    if _has_chow(rest, i, honors):
        sets.append((CHOW, tile, True))
        _walk(rest - _CHOW_BITS * unit, pair, base, honors, sets=sets, out=out)
        sets.pop()
    if pair < 0 and n >= 2:
        _walk(rest - 2 * unit, tile, base, honors, sets=sets, out=out)


def _group_readings(pattern: int, base: int, honors: bool) -> tuple[Reading, ...]:
    """``suit_readings``, from the readings the three suits share (their tiles from 0)."""
    relative = _RELATIVE[honors][pattern]
    if not base:
        return relative
    return tuple(
        (
            tuple([(kind, tile + base, hidden) for kind, tile, hidden in sets]),
            pair + base if pair >= 0 else pair,
        )
        for sets, pair in relative
    )


def _group_memo(lo: int, honors: bool) -> Memo[tuple[Reading, ...]]:
    def read(pattern: int) -> tuple[Reading, ...]:
        return _group_readings(pattern, lo, honors)

    return Memo(read, 1 << 16)


# The readings of each pattern with its tiles from 0, for suits and for honors; then those
# of each group's patterns, one cache a group (``GROUPS`` order). The caches call plain
# functions of the pattern (a ``partial`` with keywords copies a dict at every call).
_RELATIVE: Final = (
    Memo(lambda pattern: suit_readings(pattern, 0, False), 1 << 16),
    Memo(lambda pattern: suit_readings(pattern, 0, True), 1 << 16),
)
_READINGS: Final = tuple(_group_memo(lo, honors) for lo, _, honors in GROUPS)


def _kind(pattern: int, honors: bool) -> int:
    """How one group's pattern reads: bit 1 as sets only, bit 2 as sets and one pair."""
    return _KINDS[honors][pattern]


def _sets_only(pattern: int, honors: bool) -> bool:
    """Whether a group's pattern reads as sets alone. From the lowest tile up, the copies of
    it that a pung does not take (its count mod 3) must each start a chow: three chows from
    one tile read as three pungs as well, so taking the pungs first loses no reading."""
    while pattern:
        shift = ((pattern & -pattern).bit_length() - 1) & ~3  # of the lowest tile (``_lowest``)
        n = pattern >> shift & 0xF
        extra = n % 3
        if extra:
            if (
                honors
                or shift > 24
                or pattern >> shift + 4 & 0xF < extra
                or pattern >> shift + 8 & 0xF < extra
            ):
                return False
            pattern -= extra * (_CHOW_BITS << shift)
        pattern -= (n - extra) << shift
    return True


def _find_kind(pattern: int, honors: bool) -> int:
    # Sets take a multiple of 3 tiles, a pair 2: the tile count mod 3 (the sum of the 4-bit
    # counts, kept by ``% 15`` as by ``% 3``, since 16 is 1 mod 15) says which can be.
    tiles = pattern % 15 % 3
    if tiles == 0:
        return 1 if _sets_only(pattern, honors) else 0
    if tiles == 2:
        # The ranks of a suit's tiles summed, mod 3: a pung (3i) and a chow (3i + 3) add 0,
        # the pair 2r, so the pair's rank r is that sum times 2, mod 3: a rank in three.
        rest = pattern
        if not honors:
            ranks = (pattern & _RANKS_1_MOD_3) % 15 + 2 * ((pattern & _RANKS_2_MOD_3) % 15)
            rest &= _RANKS_MOD_3[2 * ranks % 3]
        while rest:
            shift = ((rest & -rest).bit_length() - 1) & ~3
            if rest >> shift & 0xF >= 2 and _sets_only(pattern - (2 << shift), honors):
                return 2
            rest &= ~(0xF << shift)
    return 0


# The 4-bit counts of the ranks i + 1 with i mod 3 = 0, 1 and 2 (1 4 7, 2 5 8, 3 6 9).
_RANKS_MOD_3: Final = tuple(sum(0xF << (i << 2) for i in range(k, 9, 3)) for k in range(3))
_RANKS_1_MOD_3: Final = _RANKS_MOD_3[1]
_RANKS_2_MOD_3: Final = _RANKS_MOD_3[2]


_KINDS: Final = (
    Memo(lambda pattern: _find_kind(pattern, False), 1 << 18),
    Memo(lambda pattern: _find_kind(pattern, True), 1 << 18),
)  # suits, honors


def _shape(pattern: int, size: int, honors: bool) -> tuple[int, int, int]:
    """``(kind, waits_without_pair, waits_with_pair)`` of one group's pattern.

    ``kind`` is -1 when the tiles cannot be read as sets, 0 when they read as
    sets only, 1 as sets and one pair (a group's tile count decides which).
    The waits are bit masks of the indexes whose addition makes the pattern
    kind 0 or kind 1.
    """
    kinds = _KINDS[honors]
    bits = kinds[pattern]
    kind = 1 if bits & 2 else 0 if bits & 1 else -1
    to_sets = to_pair = 0
    if pattern % 15 % 3 == 0:  # one tile more is 1 mod 3: neither sets nor sets and a pair
        return kind, 0, 0
    for i in range(size):
        held = (pattern >> (i << 2)) & 0xF
        if held >= 5:
            continue
        if not held and (honors or not pattern >> (max(i - 2, 0) << 2) & _NEAR[i]):
            continue  # a tile with no other within two ranks is in no set: nothing to look up
        grown = kinds[pattern + (1 << (i << 2))]
        if grown & 2:
            to_pair |= 1 << i
        elif grown & 1:
            to_sets |= 1 << i
    return kind, to_sets, to_pair


# The nibbles of the ranks within two of rank i (from rank max(i - 2, 0) up).
_NEAR: Final = tuple((1 << ((min(i + 2, 8) - max(i - 2, 0) + 1) << 2)) - 1 for i in range(9))

_SHAPES: Final = (
    Memo(lambda pattern: _shape(pattern, 9, False), 1 << 16),
    Memo(lambda pattern: _shape(pattern, 7, True), 1 << 16),
)  # suits, honors


def _shapes(patterns: tuple[int, int, int, int]) -> list[tuple[int, int, int]]:
    suits, honors = _SHAPES
    a, b, c, d = patterns
    return [suits[a], suits[b], suits[c], honors[d]]


def regular_readings(counts: Sequence[int]) -> list[Reading]:
    """Every reading of ``counts`` as sets and exactly one pair (unordered)."""
    return readings_of_patterns(group_patterns(counts))


def readings_of_patterns(patterns: tuple[int, int, int, int]) -> list[Reading]:
    """``regular_readings`` of the counts whose ``group_patterns`` are ``patterns``."""
    m, p, s, z = _READINGS
    a = m[patterns[0]]
    b = p[patterns[1]]
    c = s[patterns[2]]
    d = z[patterns[3]]
    if not (a and b and c and d):
        return []
    if len(a) == len(b) == len(c) == len(d) == 1:  # the common case: one reading
        pairs = [r[1] for r in (a[0], b[0], c[0], d[0]) if r[1] >= 0]
        if len(pairs) != 1:
            return []
        return [(a[0][0] + b[0][0] + c[0][0] + d[0][0], pairs[0])]
    result: list[Reading] = [((), -1)]
    for options in (a, b, c, d):
        result = [
            (sets + more, pair if pair >= 0 else p)
            for sets, p in result
            for more, pair in options
            if not (pair >= 0 and p >= 0)
        ]
    return [reading for reading in result if reading[1] >= 0]


def is_regular(counts: Sequence[int]) -> bool:
    """4 - melds sets and a pair (the tile count is the caller's business)."""
    pairs = 0
    for kind, _, _ in _shapes(group_patterns(counts)):
        if kind < 0:
            return False
        pairs += kind
    return pairs == 1


def regular_waits(counts: Sequence[int]) -> set[Tile]:
    """Formal waits of a hand one tile short of the regular form."""
    return _tiles_of_mask(_regular_wait_mask(group_patterns(counts)))


def _regular_wait_mask(patterns: tuple[int, int, int, int]) -> int:
    """``regular_waits`` as a mask, bit ``t`` for tile ``t``, of the counts of ``patterns``."""
    suits, honors = _SHAPES
    a, b, c, d = patterns
    m, p, s, z = suits[a], suits[b], suits[c], honors[d]
    broken = (m[0] < 0) + (p[0] < 0) + (s[0] < 0) + (z[0] < 0)
    if broken > 1:
        return 0
    pairs = (m[0] == 1) + (p[0] == 1) + (s[0] == 1) + (z[0] == 1)
    return (
        _group_waits(m, broken, pairs)
        | _group_waits(p, broken, pairs) << 9
        | _group_waits(s, broken, pairs) << 18
        | _group_waits(z, broken, pairs) << 27
    )


def _group_waits(shape: tuple[int, int, int], broken: int, pairs: int) -> int:
    """The waits one group's ``_shape`` adds to a hand of ``broken`` groups that cannot be
    read and ``pairs`` that read with a pair."""
    kind, to_sets, to_pair = shape
    if broken and kind >= 0:
        return 0  # another group cannot be read: this one cannot be the one to fix
    others = pairs - (kind == 1)  # pairs in the other groups
    if others > 1:
        return 0
    return to_pair if others == 0 else to_sets


def _tiles_of_mask(mask: int) -> set[Tile]:
    tiles: set[Tile] = set()
    while mask:
        low = mask & -mask
        tiles.add(low.bit_length() - 1)
        mask ^= low
    return tiles


def is_seven_pairs(counts: list[int]) -> bool:
    """Seven pairs; four of a kind counts as two pairs (ruling 6)."""
    return not counts.count(1) and not counts.count(3) and sum(counts) == 14


def is_thirteen_orphans(counts: list[int]) -> bool:
    return (
        counts.count(0) == N_KINDS - 13
        and all(counts[t] for t in THIRTEEN)
        and sum(counts[t] for t in THIRTEEN) == 14
    )


def is_honors_and_knitted(counts: list[int]) -> bool:
    """14 different tiles: knitted 147/258/369 in the three suits and honors (全不靠)."""
    if counts.count(1) != 14 or counts.count(0) != N_KINDS - 14:
        return False
    suited = {t for t in range(EAST) if counts[t]}
    return any(suited.issubset(seq) for seq in KNITTED)


def kind_mask(tiles: Iterable[Tile]) -> int:
    """The ``kinds_present`` mask of ``tiles``: bit ``t`` for tile ``t``."""
    return sum(1 << t for t in set(tiles))


# Each knitted sequence as a ``kind_mask``.
_KNITTED_MASKS: Final = tuple(kind_mask(seq) for seq in KNITTED)
_BINARY_DIGIT: Final = bytes([48] + [49] * 255)  # a count as the digit "0" or "1"


def kinds_present(counts: Sequence[int]) -> int:
    """The tile kinds present as an int, bit ``t`` where the hand holds tile ``t`` (34 bits:
    a machine word compiled); written as binary digits in C and read back, backwards, in base
    2. Tested against masks of the same shape (``kind_mask``)."""
    return int(bytes(counts).translate(_BINARY_DIGIT)[::-1], 2)


def knitted_straight_rest(counts: Sequence[int]) -> tuple[tuple[Tile, ...], list[int]] | None:
    """The knitted straight in ``counts`` and the tiles beside it, if those read regular."""
    present = kinds_present(counts)
    for seq, mask in zip(KNITTED, _KNITTED_MASKS, strict=True):
        if present & mask == mask:
            rest = list(counts)
            for t in seq:
                rest[t] -= 1
            return (seq, rest) if is_regular(rest) else None
    return None


def is_winning(counts: list[int], melds: int = 0) -> bool:
    """Whether ``counts`` (14 - 3 * melds tiles) is a complete hand in any form."""
    if is_regular(counts):
        return True
    if melds == 0 and (
        is_seven_pairs(counts) or is_honors_and_knitted(counts) or is_thirteen_orphans(counts)
    ):
        return True
    return melds <= 1 and _kinds(counts) >= 9 and knitted_straight_rest(counts) is not None


def _kinds(counts: list[int]) -> int:
    return N_KINDS - counts.count(0)


def formal_waits(counts: list[int], melds: int = 0) -> set[Tile]:
    """Every tile that makes ``counts`` (13 - 3 * melds tiles) a complete hand, by shape."""
    return _tiles_of_mask(formal_wait_mask(counts, melds))


def formal_wait_mask(
    counts: Sequence[int], melds: int = 0, patterns: tuple[int, int, int, int] | None = None
) -> int:
    """``formal_waits`` as a mask, bit ``t`` for tile ``t``; ``patterns``: the
    ``group_patterns`` of ``counts``, when the caller has them."""
    if patterns is None:
        patterns = group_patterns(counts)
    waits = _regular_wait_mask(patterns)
    if melds <= 1:
        waits |= special_wait_mask(counts, melds, patterns, kinds_present(counts))
    return waits


def special_wait_mask(
    counts: Sequence[int], melds: int, patterns: tuple[int, int, int, int], kinds: int
) -> int:
    """The formal waits of ``counts`` in the special forms (``melds`` 0 or 1) as a mask: knitted
    straight, seven pairs, thirteen orphans, honors and knitted; ``patterns`` and ``kinds``:
    its ``group_patterns`` and ``kinds_present``."""
    waits = 0
    n_kinds = kinds.bit_count()
    if n_kinds >= 8:
        waits |= _knitted_straight_wait_mask(counts, kinds)
    if melds == 0:
        a, b, c, d = patterns
        odd = (a & _LOW_BITS, b & _LOW_BITS, c & _LOW_BITS, d & _LOW_BITS)  # 1 or 3 held
        if sum([group.bit_count() for group in odd]) == 1:  # seven pairs: the one odd count
            for g in range(4):
                if odd[g]:
                    waits |= 1 << (9 * g + ((odd[g].bit_length() - 1) >> 2))
        if n_kinds >= 12:
            for tile in _thirteen_orphans_waits(counts) | _honors_and_knitted_waits(counts):
                waits |= 1 << tile
    return waits


_LOW_BITS: Final = 0x111111111  # the lowest bit of each count of a pattern


@lru_cache(maxsize=1 << 12)
def waits_of_packed(packed: bytes, melds: int) -> frozenset[Tile]:
    """``formal_waits`` of ``bytes(counts)``, cached: a hand is asked again at every discard."""
    return frozenset(formal_waits(list(packed), melds))


def _thirteen_orphans_waits(counts: Sequence[int]) -> set[Tile]:
    if sum(counts[t] for t in THIRTEEN) != 13:
        return set()
    missing = [t for t in THIRTEEN if not counts[t]]
    if not missing:
        return set(THIRTEEN)
    return set(missing) if len(missing) == 1 else set()


def _honors_and_knitted_waits(counts: Sequence[int]) -> set[Tile]:
    if any(n > 1 for n in counts):
        return set()
    suited = {t for t in range(EAST) if counts[t]}
    waits: set[Tile] = set()
    for seq in KNITTED:
        if suited.issubset(seq):
            waits.update(t for t in (*seq, *HONORS) if not counts[t])
    return waits


def _knitted_straight_wait_mask(counts: Sequence[int], present: int) -> int:
    """The knitted-straight waits of ``counts``, whose ``kinds_present`` is ``present``."""
    waits = 0
    for seq, mask in zip(KNITTED, _KNITTED_MASKS, strict=True):
        if (present & mask).bit_count() < len(seq) - 1:
            continue  # more than one of its tiles missing
        missing = [t for t in seq if not counts[t]]
        rest = list(counts)
        for t in seq:
            if counts[t]:
                rest[t] -= 1
        if missing:
            if is_regular(rest):
                waits |= 1 << missing[0]
        else:
            waits |= _regular_wait_mask(group_patterns(rest))
    return waits

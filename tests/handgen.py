"""Seeded random WINNING hands of every form, with situations that fit them.

For the differential tests against the reference calculator and for the fan benchmark::

    import handgen
    for hand, ctx in handgen.generate("seven_pairs", 1000, seed=7): ...
    for form, hand, ctx in handgen.mixed(20000, seed=0): ...

``FORMS`` maps a form name to a function ``(random.Random) -> Hand``. The same form, count and
seed always give the same hands (each form draws from its own ``random.Random`` seeded with a
string, which does not depend on ``PYTHONHASHSEED``). Every hand is a complete winning hand
that the reference accepts (``tests/engine/test_reference.py`` checks this) and never holds
more than four of a tile (``Hand`` refuses it anyway).

The forms:

- ``regular``: four sets and a pair from all 34 kinds, any mix of concealed sets, exposed
  chows, pungs and kongs (with offers) and concealed kongs.
- biased regular hands, to make the rarer fans likely: ``flush`` (one suit, honors or not),
  ``honors`` (honor pungs, winds and dragons fans), ``terminals`` (1, 9 and honors, terminal
  chows), ``patterns`` (identical, shifted and straight chows; shifted and same-rank pungs),
  ``palettes`` (green, reversible, upper/middle/lower, four-tile ranges, even, five,
  simples), ``kongs`` (pungs, mostly turned into kongs), ``plain`` (three exposed sets of
  simples in the three suits and an honor pair: few fans, Chicken Hand now and then).
- ``seven_pairs`` (a quarter of them use one 4-of-a-kind as two pairs),
  ``seven_shifted_pairs``, ``thirteen_orphans``, ``lesser_honors_knitted``,
  ``greater_honors_knitted``, ``knitted_straight`` (the nine knitted tiles, a set and a pair,
  the set exposed or a concealed kong in some), ``nine_gates`` (most win on the gate tile).

``random_context`` draws the situation flags consistently with the hand: the kong flag when
self-drawn only with a kong meld (Out with Replacement Tile), on a discard (Robbing the Kong)
only when no other copy of the winning tile is in the hand, and then Last Tile too (the robbed
pung shows the other three); Last Tile only when the winning tile is the only copy among the
concealed tiles, and always when the exposed melds show the other three; Robbing the Kong
never together with the last tile of the wall (no kong can be declared then).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence

from engine.hand import Hand, Meld, MeldKind
from engine.scoring import WinContext
from engine.tiles import EAST, N_KINDS, RED, TERMINALS_AND_HONORS, Tile, Wind

Form = Callable[[random.Random], Hand]
SetSpec = tuple[MeldKind, Tile]  # CHOW (lowest tile) or PUNG

SUITS = (0, 1, 2)
HONORS = tuple(range(EAST, N_KINDS))
WINDS = tuple(range(EAST, RED))
DRAGONS = tuple(range(RED, N_KINDS))


def _suited(suit: int, ranks: Sequence[int]) -> list[Tile]:
    return [suit * 9 + r - 1 for r in ranks]


def _set_tiles(spec: SetSpec) -> list[Tile]:
    kind, tile = spec
    return [tile, tile + 1, tile + 2] if kind is MeldKind.CHOW else [tile] * 3


class _Retry(Exception):
    """The random choices ran into the four-copies limit: start the hand again."""


class _Pool:
    """Tile counts of the hand being built, at most four of each."""

    def __init__(self) -> None:
        self.counts = [0] * N_KINDS

    def fits(self, tiles: Sequence[Tile]) -> bool:
        need: dict[Tile, int] = {}
        for t in tiles:
            need[t] = need.get(t, 0) + 1
        return all(self.counts[t] + n <= 4 for t, n in need.items())

    def take(self, tiles: Sequence[Tile]) -> None:
        if not self.fits(tiles):
            raise _Retry
        for t in tiles:
            self.counts[t] += 1


def _retrying(build: Form) -> Form:
    def form(rng: random.Random) -> Hand:
        for _ in range(1000):
            try:
                return build(rng)
            except _Retry:
                continue
        raise RuntimeError(f"{build.__name__}: no hand after 1000 tries")

    form.__name__ = build.__name__
    form.__doc__ = build.__doc__
    return form


# --- regular hands: four sets and a pair -------------------------------------------------


class _Palette:
    """Which sets and pairs a biased regular hand draws from."""

    def __init__(
        self, tiles: Sequence[Tile], chow_weight: float = 0.6, pairs: Sequence[Tile] = ()
    ) -> None:
        allowed = set(tiles)
        self.pungs = sorted(allowed)
        self.chows = sorted(
            t for t in allowed if t < EAST and t % 9 <= 6 and {t + 1, t + 2} <= allowed
        )
        self.chow_weight = chow_weight if self.chows else 0.0
        self.pairs = sorted(pairs) if pairs else self.pungs

    def draw_set(self, rng: random.Random, pool: _Pool) -> SetSpec:
        for _ in range(30):
            if rng.random() < self.chow_weight:
                spec: SetSpec = (MeldKind.CHOW, rng.choice(self.chows))
            else:
                spec = (MeldKind.PUNG, rng.choice(self.pungs))
            if pool.fits(_set_tiles(spec)):
                return spec
        raise _Retry

    def draw_pair(self, rng: random.Random, pool: _Pool) -> Tile:
        choices = [t for t in self.pairs if pool.counts[t] <= 2]
        if not choices:
            raise _Retry
        return rng.choice(choices)


ALL_TILES = _Palette(range(N_KINDS))
MELD_COUNT_WEIGHTS = (30, 25, 20, 15, 10)  # 0..4 melds


def _assemble(
    rng: random.Random, sets: list[SetSpec], pair: Tile, kong_chance: float = 0.15
) -> Hand:
    """Turn four sets and a pair into a hand: choose melds, kongs, offers and the winning tile.

    A pung becomes a kong with ``kong_chance`` when the fourth copy is free; a kong that is not
    among the exposed melds is a concealed kong (a meld with offer 0).
    """
    pool = _Pool()
    for spec in sets:
        pool.take(_set_tiles(spec))
    pool.take([pair, pair])
    n_melds = rng.choices(range(5), MELD_COUNT_WEIGHTS)[0]
    exposed = set(rng.sample(range(4), n_melds))
    melds: list[Meld] = []
    concealed: list[Tile] = [pair, pair]
    for i, (kind, tile) in enumerate(sets):
        if kind is MeldKind.PUNG and pool.counts[tile] == 3 and rng.random() < kong_chance:
            pool.take([tile])
            melds.append(Meld(MeldKind.KONG, tile, rng.randint(1, 3) if i in exposed else 0))
        elif i in exposed:
            melds.append(Meld(kind, tile, rng.randint(1, 3)))
        else:
            concealed += _set_tiles((kind, tile))
    rng.shuffle(melds)
    win = rng.choice(concealed)
    concealed.remove(win)
    return Hand(tuple(melds), tuple(sorted(concealed)), win)


def _fill(
    rng: random.Random,
    palette: _Palette,
    sets: Sequence[SetSpec] = (),
    pair: Tile | None = None,
    kong_chance: float = 0.15,
) -> Hand:
    """Complete ``sets`` (and ``pair``) from ``palette`` to four sets and a pair."""
    pool = _Pool()
    chosen = list(sets)
    for spec in chosen:
        pool.take(_set_tiles(spec))
    if pair is not None:
        pool.take([pair, pair])
    while len(chosen) < 4:
        spec = palette.draw_set(rng, pool)
        pool.take(_set_tiles(spec))
        chosen.append(spec)
    if pair is None:
        pair = palette.draw_pair(rng, pool)
    rng.shuffle(chosen)
    return _assemble(rng, chosen, pair, kong_chance)


@_retrying
def regular(rng: random.Random) -> Hand:
    """Four sets and a pair from all tiles."""
    return _fill(rng, ALL_TILES)


@_retrying
def flush(rng: random.Random) -> Hand:
    """One suit (Full Flush), or one suit and honors (Half Flush)."""
    tiles = _suited(rng.choice(SUITS), range(1, 10))
    if rng.random() < 0.5:
        tiles += rng.sample(HONORS, rng.randint(1, 7))
    return _fill(rng, _Palette(tiles, chow_weight=rng.choice((0.2, 0.6, 0.9))))


@_retrying
def honors(rng: random.Random) -> Hand:
    """Two to four honor pungs (winds and dragons fans), the rest from anywhere."""
    group = rng.choice((WINDS, DRAGONS, HONORS))
    k = rng.randint(2, min(4, len(group)))
    sets: list[SetSpec] = [(MeldKind.PUNG, t) for t in rng.sample(group, k)]
    pair = rng.choice(HONORS) if rng.random() < 0.6 else None
    rest = _Palette(HONORS) if rng.random() < 0.3 else ALL_TILES
    return _fill(rng, rest, sets, pair)


@_retrying
def terminals(rng: random.Random) -> Hand:
    """1, 9 and honors: pungs of them, 123 and 789 chows (outside and terminal hands)."""
    pung_tiles = [t for t in TERMINALS_AND_HONORS if t < EAST or rng.random() < 0.5]
    palette = _Palette(pung_tiles, chow_weight=0.0)
    chow_weight = rng.choice((0.0, 0.3, 0.6))
    pool = _Pool()
    sets: list[SetSpec] = []
    while len(sets) < 4:
        if rng.random() < chow_weight:
            spec: SetSpec = (MeldKind.CHOW, rng.choice(SUITS) * 9 + rng.choice((0, 6)))
        else:
            spec = palette.draw_set(rng, pool)
        pool.take(_set_tiles(spec))
        sets.append(spec)
    return _fill(rng, palette, sets)


def _pattern_sets(rng: random.Random) -> tuple[list[SetSpec], Tile | None]:
    """A few sets forming a chow or pung pattern fan, and sometimes the pair it needs."""
    s = rng.choice(SUITS)
    others = [x for x in SUITS if x != s]
    rng.shuffle(others)
    three = [s, *others]
    chow, pung = MeldKind.CHOW, MeldKind.PUNG
    pattern = rng.randrange(13)
    if pattern == 0:  # Pure Double / Triple Chow, Quadruple Chow
        start = s * 9 + rng.randint(0, 6)
        return [(chow, start)] * rng.randint(2, 4), None
    if pattern == 1:  # Mixed Double / Triple Chow
        r = rng.randint(0, 6)
        return [(chow, x * 9 + r) for x in three[: rng.randint(2, 3)]], None
    if pattern == 2:  # Pure Shifted Chows (step 1 or 2), Four Pure Shifted Chows
        step = rng.choice((1, 2))
        n = rng.randint(3, 4)
        r = rng.randint(0, 6 - step * (n - 1))
        return [(chow, s * 9 + r + step * i) for i in range(n)], None
    if pattern == 3:  # Mixed Shifted Chows
        r = rng.randint(0, 4)
        return [(chow, x * 9 + r + i) for i, x in enumerate(three)], None
    if pattern == 4:  # Pure Straight
        return [(chow, s * 9 + r) for r in (0, 3, 6)], None
    if pattern == 5:  # Mixed Straight
        return [(chow, x * 9 + r) for x, r in zip(three, (0, 3, 6), strict=True)], None
    if pattern == 6:  # Two Terminal Chows, Pure Terminal Chows
        if rng.random() < 0.5:
            return [(chow, s * 9), (chow, s * 9), (chow, s * 9 + 6), (chow, s * 9 + 6)], s * 9 + 4
        return [(chow, s * 9), (chow, s * 9 + 6)], None
    if pattern == 7:  # Three-Suited Terminal Chows
        a, b, c = three
        return [(chow, a * 9), (chow, a * 9 + 6), (chow, b * 9), (chow, b * 9 + 6)], c * 9 + 4
    if pattern == 8:  # Short Straight
        r = rng.randint(0, 3)
        return [(chow, s * 9 + r), (chow, s * 9 + r + 3)], None
    if pattern == 9:  # Pure Shifted Pungs, Four Pure Shifted Pungs
        n = rng.randint(3, 4)
        r = rng.randint(0, 9 - n)
        return [(pung, s * 9 + r + i) for i in range(n)], None
    if pattern == 10:  # Mixed Shifted Pungs
        r = rng.randint(0, 6)
        return [(pung, x * 9 + r + i) for i, x in enumerate(three)], None
    if pattern == 11:  # Double Pung, Triple Pung
        r = rng.randint(0, 8)
        return [(pung, x * 9 + r) for x in three[: rng.randint(2, 3)]], None
    # Shifted chows crossing into the same suit's pungs: chows and pungs sharing tiles
    r = rng.randint(0, 6)
    return [(chow, s * 9 + r), (pung, s * 9 + r + rng.randint(0, 2))], None


@_retrying
def patterns(rng: random.Random) -> Hand:
    """A chow or pung pattern (identical, shifted, straight, terminal, same-rank) plus filler."""
    sets, pair = _pattern_sets(rng)
    if rng.random() < 0.5:  # often the rest in the same suit, for the flushes on top
        suit = sets[0][1] // 9
        tiles = _suited(suit, range(1, 10))
        if rng.random() < 0.3:
            tiles += HONORS
        filler = _Palette(tiles)
    else:
        filler = ALL_TILES
    return _fill(rng, filler, sets, pair)


def _palette_tiles(rng: random.Random) -> list[Tile]:
    s = rng.choice(SUITS)
    green = [*_suited(2, (2, 3, 4, 6, 8)), 32]
    reversible = [*_suited(1, (1, 2, 3, 4, 5, 8, 9)), *_suited(2, (2, 4, 5, 6, 8, 9)), 33]
    ranks = rng.choice(
        (
            (7, 8, 9),  # Upper Tiles
            (4, 5, 6),  # Middle Tiles
            (1, 2, 3),  # Lower Tiles
            (6, 7, 8, 9),  # Upper Four
            (1, 2, 3, 4),  # Lower Four
            (2, 4, 6, 8),  # All Even Pungs
            (2, 3, 4, 5, 6, 7, 8),  # All Simples
        )
    )
    suits = rng.choice(([s], list(SUITS)))
    choice = rng.randrange(4)
    if choice == 0:
        return green
    if choice == 1:
        return reversible
    return [t for x in suits for t in _suited(x, ranks)]


@_retrying
def palettes(rng: random.Random) -> Hand:
    """Sets from a restricted tile set: green, reversible, upper/middle/lower, even, simples."""
    if rng.random() < 0.15:  # All Five: every set and the pair hold a five
        fives = [x * 9 + 4 for x in SUITS]
        pool = _Pool()
        sets: list[SetSpec] = []
        while len(sets) < 4:
            five = rng.choice(fives)
            spec: SetSpec = (
                (MeldKind.CHOW, five - rng.randint(0, 2))
                if rng.random() < 0.7
                else (MeldKind.PUNG, five)
            )
            pool.take(_set_tiles(spec))
            sets.append(spec)
        return _fill(rng, ALL_TILES, sets, rng.choice(fives))
    return _fill(rng, _Palette(_palette_tiles(rng), chow_weight=rng.choice((0.0, 0.5, 0.8))))


@_retrying
def plain(rng: random.Random) -> Hand:
    """Exposed sets across the three suits and an honor pair: Chicken Hand now and then."""
    pool = _Pool()
    sets: list[SetSpec] = []
    for suit in [*rng.sample(SUITS, 3), rng.choice(SUITS)]:
        spec = _Palette(_suited(suit, range(2, 9)), chow_weight=0.5).draw_set(rng, pool)
        pool.take(_set_tiles(spec))
        sets.append(spec)
    melds = [Meld(kind, tile, rng.randint(1, 3)) for kind, tile in sets[:3]]
    concealed = [*_set_tiles(sets[3]), *[rng.choice(HONORS)] * 2]
    win = rng.choice(concealed)
    concealed.remove(win)
    return Hand(tuple(melds), tuple(sorted(concealed)), win)


@_retrying
def kongs(rng: random.Random) -> Hand:
    """Pung-heavy hands whose pungs mostly become kongs (Three and Four Kongs, the kong fans)."""
    return _fill(rng, _Palette(range(N_KINDS), chow_weight=0.2), kong_chance=0.7)


# --- special forms -------------------------------------------------------------------------


def _concealed(rng: random.Random, tiles: list[Tile]) -> Hand:
    """A hand without melds from its 14 tiles, the winning tile picked among them."""
    win = rng.choice(tiles)
    tiles.remove(win)
    return Hand((), tuple(sorted(tiles)), win)


@_retrying
def seven_pairs(rng: random.Random) -> Hand:
    """Seven pairs; a quarter of them hold a 4-of-a-kind counted as two pairs."""
    kinds: Sequence[Tile] = rng.choice(
        (
            range(N_KINDS),
            _suited(rng.choice(SUITS), range(1, 10)),
            [*_suited(rng.choice(SUITS), range(1, 10)), *HONORS],
            TERMINALS_AND_HONORS,
            [t for t in range(EAST) if t % 9 in (1, 2, 3, 4, 5, 6, 7)],
        )
    )
    n = 6 if rng.random() < 0.25 else 7
    pairs = rng.sample(list(kinds), n)
    if n == 6:
        pairs.append(rng.choice(pairs))
    return _concealed(rng, [t for t in pairs for _ in range(2)])


@_retrying
def seven_shifted_pairs(rng: random.Random) -> Hand:
    """Seven consecutive pairs in one suit."""
    start = rng.choice(SUITS) * 9 + rng.randint(0, 2)
    return _concealed(rng, [t for t in range(start, start + 7) for _ in range(2)])


@_retrying
def thirteen_orphans(rng: random.Random) -> Hand:
    """One of each terminal and honor and a second of one of them."""
    return _concealed(rng, [*TERMINALS_AND_HONORS, rng.choice(TERMINALS_AND_HONORS)])


def _knitted(rng: random.Random) -> list[Tile]:
    """The nine tiles of a knitted straight: 147, 258 and 369 in the three suits."""
    order = rng.sample(SUITS, 3)
    return [order[k] * 9 + r for k in range(3) for r in (k, k + 3, k + 6)]


@_retrying
def lesser_honors_knitted(rng: random.Random) -> Hand:
    """Fourteen single tiles: knitted suit tiles and five or six different honors."""
    n_honors = rng.randint(5, 6)
    return _concealed(rng, rng.sample(_knitted(rng), 14 - n_honors) + rng.sample(HONORS, n_honors))


@_retrying
def greater_honors_knitted(rng: random.Random) -> Hand:
    """All seven honors and seven knitted suit tiles."""
    return _concealed(rng, rng.sample(_knitted(rng), 7) + list(HONORS))


@_retrying
def knitted_straight(rng: random.Random) -> Hand:
    """The nine knitted tiles, a set and a pair; the set exposed or a concealed kong in some."""
    knitted = _knitted(rng)
    pool = _Pool()
    pool.take(knitted)
    spec = ALL_TILES.draw_set(rng, pool)
    pool.take(_set_tiles(spec))
    pair = ALL_TILES.draw_pair(rng, pool)
    pool.take([pair, pair])
    concealed = [*knitted, pair, pair]
    melds: tuple[Meld, ...] = ()
    kind, tile = spec
    roll = rng.random()
    if kind is MeldKind.PUNG and pool.counts[tile] == 3 and roll < 0.15:
        melds = (Meld(MeldKind.KONG, tile, rng.randint(0, 3)),)
    elif roll < 0.5:
        melds = (Meld(kind, tile, rng.randint(1, 3)),)
    else:
        concealed += _set_tiles(spec)
    win = rng.choice(concealed)
    concealed.remove(win)
    return Hand(melds, tuple(sorted(concealed)), win)


@_retrying
def nine_gates(rng: random.Random) -> Hand:
    """1112345678999 of a suit and one more of it; most win on that extra tile."""
    s = rng.choice(SUITS)
    gates = _suited(s, (1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9))
    extra = s * 9 + rng.randint(0, 8)
    if rng.random() < 0.7:
        return Hand((), tuple(gates), extra)
    return _concealed(rng, [*gates, extra])


FORMS: dict[str, Form] = {
    "regular": regular,
    "flush": flush,
    "honors": honors,
    "terminals": terminals,
    "patterns": patterns,
    "palettes": palettes,
    "kongs": kongs,
    "plain": plain,
    "seven_pairs": seven_pairs,
    "seven_shifted_pairs": seven_shifted_pairs,
    "thirteen_orphans": thirteen_orphans,
    "lesser_honors_knitted": lesser_honors_knitted,
    "greater_honors_knitted": greater_honors_knitted,
    "knitted_straight": knitted_straight,
    "nine_gates": nine_gates,
}


# --- situations ----------------------------------------------------------------------------


def random_context(rng: random.Random, hand: Hand) -> WinContext:
    """Situation flags, winds and flowers drawn at random, consistent with ``hand``."""
    win = hand.win_tile
    concealed_copies = hand.concealed_counts()[win]
    exposed_copies = sum(m.tiles.count(win) for m in hand.melds)
    self_drawn = rng.random() < 0.5
    kong = False
    if self_drawn:
        # Out with Replacement Tile needs a kong of one's own.
        kong = any(m.kind is MeldKind.KONG for m in hand.melds) and rng.random() < 0.25
    else:
        # Robbing the Kong: the other three copies are in the robbed pung.
        kong = concealed_copies == 1 and exposed_copies == 0 and rng.random() < 0.08
    # A discard robbed from a kong cannot be the last tile of the wall (no kong then); a kong
    # replacement drawn as the last tile can.
    wall_last = not (kong and not self_drawn) and rng.random() < 0.1
    if concealed_copies != 1:
        last_of_kind = False  # another copy is hidden in the hand
    elif exposed_copies == 3 or (kong and not self_drawn):
        last_of_kind = True  # the other three are on the table
    else:
        last_of_kind = rng.random() < 0.15
    flowers = rng.choices(range(9), (50, 15, 10, 7, 6, 5, 3, 2, 2))[0]
    return WinContext(
        self_drawn=self_drawn,
        last_of_kind=last_of_kind,
        kong=kong,
        wall_last=wall_last,
        seat_wind=Wind(rng.randrange(4)),
        round_wind=Wind(rng.randrange(4)),
        flowers=flowers,
    )


# --- streams -------------------------------------------------------------------------------


def iter_form(form: str, seed: int = 0) -> Iterator[tuple[Hand, WinContext]]:
    """An endless seeded stream of ``(hand, context)`` of one form."""
    build = FORMS[form]
    rng = random.Random(f"guobiao-handgen/{form}/{seed}")
    while True:
        hand = build(rng)
        yield hand, random_context(rng, hand)


def generate(form: str, n: int, seed: int = 0) -> list[tuple[Hand, WinContext]]:
    """The first ``n`` hands of ``iter_form(form, seed)``."""
    stream = iter_form(form, seed)
    return [next(stream) for _ in range(n)]


def mixed(n: int, seed: int = 0) -> list[tuple[str, Hand, WinContext]]:
    """``n`` hands, as many of each form as can be (the forms in turn), with their form name."""
    streams = {form: iter_form(form, seed) for form in FORMS}
    names = list(FORMS)
    return [(names[i % len(names)], *next(streams[names[i % len(names)]])) for i in range(n)]

"""Seating a tournament session: pure, no I/O, deterministic from a recorded seed.

``seat_session(players, history, method, seed)`` seats the players checked in for the next
session, given the earlier sessions' seatings (``history``), and returns a ``Seating``:
tables of four seats in wind order (East, South, West, North), the byes, the ``repeats``
(pairs of players who meet again, with the sessions they met in before), whether they are
proven the ``fewest``, a lower bound on them (``unavoidable``) and a ``message`` saying why
there are repeats, in words that are true. The methods:

- ``"random"``: a seeded shuffle (repeats are reported, not avoided).
- ``"balanced"``: tables spread by strength: with ``standings`` (best first) a snake draft,
  so each table has one player of each quarter of the standings; without, random. Later
  sessions keep the quarters apart and have the fewest repeats that allows, as ``avoid``.
- ``"avoid"``: the fewest repeats, and each player's winds balanced over the event (each
  sits one of the winds they have sat least, where that costs no repeat; ``report`` gives
  the worst imbalance).
- ``"swiss"``: neighbours in the standings together, the next player who has not met the
  table yet taken when one is close by (within ``SWISS_WINDOW`` places).
- ``"top4"``: the top four together, then the next four, ... (repeats are reported).

The repeats ``"avoid"`` and ``"balanced"`` minimise are weighed by ``_repeat_cost``: first
the earlier meetings of the pairs at a table (a pair that met twice counts 2), then the
number of those pairs (the repeat pairings). Then come each player's winds and the look
ahead, never at the cost of a repeat:

- Up to ``EXACT_SEATS`` seats (six tables), ``partition``'s exact search finds the fewest
  and proves it (``fewest``); it gives up only past a limit on its work (a few seconds:
  docs/tournaments.md has the hardest cases measured), and then proves nothing.
- Above, a local search over seat swaps with a fixed budget (``budget`` moves, restarts
  included), so it always ends: it stops at the first seating with no repeat and every
  player on one of their least-used winds (or once repeat-free and the winds no longer
  improving), else it returns the best seating seen; ``partition``'s lower bound says how
  many repeat pairings no seating avoids (``unavoidable``), and proves the seating the
  fewest if it meets it.

Either way the session is planned with ``lookahead`` more sessions of the same players (the
pairs' meetings over history and plan counted as m(m-1)/2) and the first returned, so a
repeat-free session does not leave none for the next (16 players: three repeat-free
sessions can leave no repeat-free fourth); up to ``EXACT_SEATS``, the plan keeps the first
session among those with the fewest repeats. The local search's cost::

    weight * sum(repeat cost, over pairs at a table) + sum(wind penalty)

where a player's wind penalty is how many more times they have sat that wind than their
least-used one, and ``weight`` outweighs all wind penalties together (a repeat is never
traded for winds). Every method then seats each table's four on the winds that balance them
best (the best of the 24 orders).

A player count that is not a multiple of four: ``fill="byes"`` sits the leftover players
out, those with the fewest byes so far (ties drawn with the seed: the fewest repeats are
those of the others' seatings); ``fill="substitutes"`` completes tables with substitute
seats ``"sub:1"``, ``"sub:2"``, ... (one to a table, two only when there are more
substitutes than tables; they have no pairs and no winds).

``swap(seating, a, b)`` is the director's swap of two players (or of a player and one on a
bye) before the session starts: a new ``Seating`` with ``repeats`` and ``message``
recomputed, or a ``SeatingError`` for an unknown id. ``pair_counts`` and ``report``
summarise a history.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from server.tournaments.partition import FORBIDDEN, Partition

WINDS = ("E", "S", "W", "N")
SUBSTITUTE_PREFIX = "sub:"
REPEAT_WEIGHT = 1000
SWISS_WINDOW = 8
DEFAULT_BUDGET = 15_000
DEFAULT_LOOKAHEAD = 1
EXACT_SEATS = 24  # up to this many seats (six tables), the fewest repeats are proven

Method = Literal["random", "balanced", "avoid", "swiss", "top4"]
Fill = Literal["byes", "substitutes"]
Table = tuple[str, str, str, str]
METHODS: tuple[str, ...] = ("random", "balanced", "avoid", "swiss", "top4")


class SeatingError(ValueError):
    """A seating request refused: the message quotes the input and says what was expected."""


def is_substitute(seat: str) -> bool:
    """Whether a seat holds a substitute marker (``"sub:1"``), not a player."""
    return seat.startswith(SUBSTITUTE_PREFIX)


@dataclass(frozen=True, slots=True)
class Repeat:
    """Two players at one table who met before, in ``sessions`` (1-based session numbers)."""

    players: tuple[str, str]
    sessions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Seating:
    """One session's seating. ``tables``: four seats each, East, South, West, North (player
    ids or substitute markers); ``byes``: players sitting out; ``repeats``: pairs meeting
    again; ``message``: empty, or why the seating has repeats; ``fewest``: no seating of
    these players has fewer repeats (earlier meetings, then pairings), proven by the search
    (or by having none); ``unavoidable``: for ``avoid`` and ``balanced``, a lower bound on
    the repeat pairings of any seating of them (else 0). ``met`` (the pairs of the earlier
    sessions, with their session numbers) lets ``swap`` recompute the repeats."""

    session: int
    method: str
    seed: int
    tables: tuple[Table, ...]
    byes: tuple[str, ...] = ()
    repeats: tuple[Repeat, ...] = ()
    message: str = ""
    fewest: bool = False
    unavoidable: int = 0
    met: Mapping[frozenset[str], tuple[int, ...]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def players(self) -> list[str]:
        """The players seated (substitutes left out), table by table in wind order."""
        return [p for table in self.tables for p in table if not is_substitute(p)]


@dataclass(frozen=True, slots=True)
class Report:
    """A history summed up: ``repeat_pairings`` counts each meeting of a pair after its
    first (a pair met three times counts 2); ``wind_imbalance``: the worst, over players,
    of (most sat wind - least sat wind); ``byes``: the fewest and most byes of a player."""

    sessions: int
    repeat_pairings: int
    wind_imbalance: int
    byes_min: int
    byes_max: int


def _pairs(table: Iterable[str]) -> Iterable[frozenset[str]]:
    real = [p for p in table if not is_substitute(p)]
    return (frozenset(pair) for pair in itertools.combinations(real, 2))


def pair_counts(history: Sequence[Seating]) -> dict[frozenset[str], int]:
    """How many times each pair of players has sat at one table over ``history``."""
    counts: Counter[frozenset[str]] = Counter()
    for seating in history:
        for table in seating.tables:
            counts.update(_pairs(table))
    return dict(counts)


def met_sessions(history: Sequence[Seating]) -> dict[frozenset[str], tuple[int, ...]]:
    """For each pair that has met: the session numbers (1-based, history order) they met in."""
    met: dict[frozenset[str], list[int]] = {}
    for number, seating in enumerate(history, start=1):
        for table in seating.tables:
            for pair in _pairs(table):
                met.setdefault(pair, []).append(number)
    return {pair: tuple(sessions) for pair, sessions in met.items()}


def wind_counts(history: Sequence[Seating]) -> dict[str, tuple[int, int, int, int]]:
    """Each player's count of sessions at East, South, West, North over ``history``."""
    counts: dict[str, list[int]] = {}
    for seating in history:
        for table in seating.tables:
            for wind, player in enumerate(table):
                if not is_substitute(player):
                    counts.setdefault(player, [0, 0, 0, 0])[wind] += 1
    return {p: (c[0], c[1], c[2], c[3]) for p, c in counts.items()}


def wind_imbalance(history: Sequence[Seating]) -> int:
    """The worst (most sat wind - least sat wind) over the players of ``history``."""
    return max((max(c) - min(c) for c in wind_counts(history).values()), default=0)


def bye_counts(history: Sequence[Seating]) -> Counter[str]:
    """How many byes each player has had over ``history``."""
    return Counter(p for seating in history for p in seating.byes)


def report(history: Sequence[Seating]) -> Report:
    """The repeat pairings, worst wind imbalance and byes spread of ``history``."""
    counts = pair_counts(history)
    everyone = {p for s in history for p in (*s.players(), *s.byes)}
    byes = bye_counts(history)
    per_player = [byes[p] for p in everyone] or [0]
    return Report(
        sessions=len(history),
        repeat_pairings=sum(n - 1 for n in counts.values()),
        wind_imbalance=wind_imbalance(history),
        byes_min=min(per_player),
        byes_max=max(per_player),
    )


def _repeats(
    tables: Sequence[Table], met: Mapping[frozenset[str], tuple[int, ...]]
) -> tuple[Repeat, ...]:
    found = []
    for table in tables:
        for pair in _pairs(table):
            if pair in met:
                a, b = sorted(pair)
                found.append(Repeat((a, b), met[pair]))
    return tuple(sorted(found, key=lambda r: r.players))


def _message(
    repeats: Sequence[Repeat],
    method: str,
    *,
    fewest: bool,
    unavoidable: int,
    once: bool,
    swapped: bool = False,
) -> str:
    """Why the seating has repeats, in words that are true: the fewest possible only when
    proven, else how many a lower bound says no seating avoids. ``once``: no two of the
    players seated met more than once (then the fewest meetings are the fewest pairings)."""
    if not repeats:
        return ""
    count = len(repeats)
    pairs = ", ".join(f"{a}-{b}" for a, b in (r.players for r in repeats))
    said = f"{count} repeat pairing(s)"
    if method not in ("avoid", "balanced"):
        return f"{said} ({method} seating does not avoid all): {pairs}"
    if fewest:
        among = " for a balanced seating" if method == "balanced" else ""
        if once:
            return f"{said}, the fewest possible{among} (proven by the search): {pairs}"
        # Some met more than once: the search minimises the meetings, then the pairings.
        meetings = sum(len(r.sessions) for r in repeats)
        return (
            f"{said}, {meetings} earlier meeting(s) between them: no seating{among} has "
            f"fewer (proven by the search): {pairs}"
        )
    found = "after the director's swap" if swapped else "the fewest found"
    if unavoidable:
        return f"{said}, {found}; at least {unavoidable} unavoidable: {pairs}"
    return f"{said}, {found} (a seating with fewer may exist): {pairs}"


def _validate(
    players: Sequence[str],
    method: str,
    fill: str,
    standings: Sequence[str] | None,
    budget: int,
) -> None:
    if method not in METHODS:
        raise SeatingError(f"unknown seating method {method!r}: expected one of {METHODS}")
    if fill not in ("byes", "substitutes"):
        raise SeatingError(f"unknown fill {fill!r}: expected 'byes' or 'substitutes'")
    if budget < 0:
        raise SeatingError(f"budget must be at least 0, got {budget!r}")
    for p in players:
        if not isinstance(p, str) or not p:
            raise SeatingError(f"a player id must be a non-empty string, got {p!r}")
        if is_substitute(p):
            raise SeatingError(f"player id {p!r} uses the substitute prefix {SUBSTITUTE_PREFIX!r}")
    duplicates = sorted(p for p, n in Counter(players).items() if n > 1)
    if duplicates:
        raise SeatingError(f"players checked in twice: {duplicates!r}")
    if len(players) < 4 and fill == "byes":
        raise SeatingError(f"a table needs four players, {len(players)} checked in")
    if not players:
        raise SeatingError("no players checked in")
    if method in ("swiss", "top4") and standings is None:
        raise SeatingError(f"method {method!r} needs standings")
    if standings is not None:
        missing = sorted(set(players) - set(standings))
        if missing:
            raise SeatingError(f"players missing from the standings: {missing!r}")


def _choose_byes(
    players: Sequence[str], history: Sequence[Seating], count: int, rng: random.Random
) -> list[str]:
    byes = bye_counts(history)
    draw = {p: rng.random() for p in sorted(players)}
    return sorted(players, key=lambda p: (byes[p], draw[p], p))[:count]


class _Search:
    """Seats as a flat list (slot = 4 * table + wind); cost = repeats and wind penalties."""

    def __init__(
        self,
        seats: list[str],
        met: Mapping[frozenset[str], tuple[int, ...]],
        winds: Mapping[str, tuple[int, int, int, int]],
    ) -> None:
        self.seats = seats
        self.met = {pair: len(sessions) for pair, sessions in met.items()}
        self.scale = _scale(seats)
        self.penalty: dict[str, tuple[int, ...]] = {}
        self.weight = REPEAT_WEIGHT
        for p in seats:
            if is_substitute(p):
                self.penalty[p] = (0, 0, 0, 0)
            else:
                c = winds.get(p, (0, 0, 0, 0))
                self.penalty[p] = tuple(n - min(c) for n in c)
        # A repeat outweighs every wind penalty together: cost < weight means no repeat.
        self.weight = max(REPEAT_WEIGHT, 1 + sum(max(pen) for pen in self.penalty.values()))

    def pair_cost(self, a: str, b: str) -> int:
        if is_substitute(a) or is_substitute(b):
            # Two substitutes at a table outweigh any repeats.
            both = is_substitute(a) and is_substitute(b)
            return self.weight * self.scale * 1000 if both else 0
        return self.weight * _pair_cost(self.met.get(frozenset((a, b)), 0), self.scale)

    def player_cost(self, slot: int, player: str) -> int:
        """The cost ``player`` brings to ``slot``: its wind and its pairs there (the slot's
        own occupant left out)."""
        base = slot - slot % 4
        cost = self.penalty[player][slot % 4]
        for other in range(base, base + 4):
            if other != slot:
                cost += self.pair_cost(player, self.seats[other])
        return cost

    def total(self) -> int:
        cost = 0
        for t in range(0, len(self.seats), 4):
            table = self.seats[t : t + 4]
            cost += sum(self.penalty[p][w] for w, p in enumerate(table))
            cost += sum(self.pair_cost(a, b) for a, b in itertools.combinations(table, 2))
        return cost

    def delta(self, i: int, j: int) -> int:
        a, b = self.seats[i], self.seats[j]
        if i // 4 == j // 4:
            pa, pb = self.penalty[a], self.penalty[b]
            return pa[j % 4] + pb[i % 4] - pa[i % 4] - pb[j % 4]
        before = self.player_cost(i, a) + self.player_cost(j, b)
        self.seats[i], self.seats[j] = b, a
        after = self.player_cost(i, b) + self.player_cost(j, a)
        self.seats[i], self.seats[j] = a, b
        return after - before

    def bad_slots(self) -> list[int]:
        return [i for i, p in enumerate(self.seats) if self.player_cost(i, p) > 0]


def _local_search(
    seats: list[str],
    met: Mapping[frozenset[str], tuple[int, ...]],
    winds: Mapping[str, tuple[int, int, int, int]],
    rng: random.Random,
    *,
    budget: int,
    group: Mapping[str, int] | None,
    floor: int = 0,
) -> list[str]:
    """Swap seats to lower the cost, within a budget of moves, restarting from a shuffle
    (within ``group``) when stuck. With a ``group`` (the quarters of ``balanced``), seats
    change tables only within their group. ``floor``: a repeat cost no seating goes below
    (0, or the proven fewest): reaching it counts as repeat-free does. The seating returned
    never has a higher repeat cost than the one given (a repeat outweighs all winds)."""
    search = _Search(list(seats), met, winds)
    cost = search.total()
    best, best_cost = list(search.seats), cost
    n = len(seats)
    stuck = 0
    since_best = 0
    at_floor = search.weight * floor
    for _ in range(budget):
        if best_cost == at_floor or (best_cost < at_floor + search.weight and since_best > 20 * n):
            break  # perfect, or as few repeats as can be and the winds no longer improving
        since_best += 1
        bad = search.bad_slots() if stuck % 50 == 0 or cost < search.weight * 4 else None
        i = rng.choice(bad) if bad else rng.randrange(n)
        if group is not None and rng.random() < 0.8:
            mine = group[search.seats[i]]
            j = rng.randrange(n)
            if group[search.seats[j]] != mine:
                j = i - i % 4 + rng.randrange(4)
        else:
            j = rng.randrange(n)
        if i == j:
            continue
        if (
            group is not None
            and i // 4 != j // 4
            and group[search.seats[i]] != group[search.seats[j]]
        ):
            continue
        d = search.delta(i, j)
        if d <= 0:
            search.seats[i], search.seats[j] = search.seats[j], search.seats[i]
            cost += d
            stuck = 0 if d < 0 else stuck + 1
            if cost < best_cost:
                best, best_cost = list(search.seats), cost
                since_best = 0
        else:
            stuck += 1
        if stuck > 40 * n:
            # A plateau: restart from a reshuffle within each group (quarter), keeping best.
            _reshuffle(search.seats, group, rng)
            cost = search.total()
            stuck = 0
    return best


def _settle_winds(
    seats: Sequence[str], winds: Mapping[str, tuple[int, int, int, int]]
) -> list[str]:
    """Each table's four on the winds that balance them best: of the 24 orders, the one with
    the least wind penalty (ties: the first in ``itertools.permutations`` order)."""
    search = _Search(list(seats), {}, winds)
    result: list[str] = []
    for t in range(0, len(seats), 4):
        table = seats[t : t + 4]
        best = min(
            itertools.permutations(table),
            key=lambda order: sum(search.penalty[p][w] for w, p in enumerate(order)),
        )
        result.extend(best)
    return result


def _reshuffle(seats: list[str], group: Mapping[str, int] | None, rng: random.Random) -> None:
    if group is None:
        rng.shuffle(seats)
        return
    by_group: dict[int, list[int]] = {}
    for i, p in enumerate(seats):
        by_group.setdefault(group[p], []).append(i)
    for slots in by_group.values():
        members = [seats[i] for i in slots]
        rng.shuffle(members)
        for i, p in zip(slots, members, strict=True):
            seats[i] = p


def _scale(seats: Sequence[str]) -> int:
    """What an earlier meeting weighs against a repeat pairing: more than every pair of the
    seating could count (six a table), so fewer meetings always come first."""
    return 6 * (len(seats) // 4) + 1


def _pair_cost(meetings: int, scale: int) -> int:
    """A pair's repeat cost: its earlier meetings (weighed by ``scale``), plus one for
    pairing again at all."""
    return scale * meetings + 1 if meetings else 0


def _repeat_cost(seats: Sequence[str], met: Mapping[frozenset[str], tuple[int, ...]]) -> int:
    """The repeat cost of these tables: ``scale`` times the earlier meetings of the pairs at
    them, plus the number of those pairs (see ``_pair_cost``)."""
    scale = _scale(seats)
    return sum(
        _pair_cost(len(met.get(pair, ())), scale)
        for t in range(0, len(seats), 4)
        for pair in _pairs(seats[t : t + 4])
    )


def _deal_substitutes(order: Sequence[str], subs: Sequence[str]) -> list[str]:
    """Tables filled in ``order``, the substitutes spread one to a table (the last seats of
    the last tables; two to a table only when there are more substitutes than tables)."""
    tables = (len(order) + len(subs)) // 4
    per_table = [0] * tables
    for k in range(len(subs)):
        per_table[tables - 1 - k % tables] += 1
    seats: list[str] = []
    players, spare = iter(order), iter(subs)
    for count in per_table:
        seats.extend(next(players) for _ in range(4 - count))
        seats.extend(next(spare) for _ in range(count))
    return seats


def _snake(order: Sequence[str], tables: int) -> list[str]:
    """A snake draft: table t gets ranks t, 2T-1-t, 2T+t, ... (one per quarter)."""
    seats = [""] * (4 * tables)
    for rank, p in enumerate(order):
        row, col = divmod(rank, tables)
        t = col if row % 2 == 0 else tables - 1 - col
        seats[4 * t + row] = p
    return seats


def _swiss(order: Sequence[str], met: Mapping[frozenset[str], tuple[int, ...]]) -> list[str]:
    """Greedy Swiss: the best unseated player opens a table; each next seat goes to the
    first unseated player within ``SWISS_WINDOW`` places who has met no one there, else the
    one of them with the fewest meetings."""
    left = list(order)
    seats: list[str] = []
    while left:
        table = [left.pop(0)]
        while len(table) < 4 and left:
            window = left[:SWISS_WINDOW]

            def clashes(p: str, table: list[str] = table) -> int:
                return sum(len(met.get(frozenset((p, q)), ())) for q in table)

            pick = min(window, key=lambda p: (clashes(p), window.index(p)))
            left.remove(pick)
            table.append(pick)
        seats.extend(table)
    return seats


def seat_session(
    players: Sequence[str],
    history: Sequence[Seating],
    method: Method,
    seed: int,
    *,
    standings: Sequence[str] | None = None,
    fill: Fill = "byes",
    budget: int = DEFAULT_BUDGET,
    lookahead: int = DEFAULT_LOOKAHEAD,
) -> Seating:
    """Seat the next session (see the module docstring). ``standings``: player ids, best
    first (needed for ``swiss`` and ``top4``, used by ``balanced``). Raises ``SeatingError``
    for a bad request (unknown method or fill, duplicate or empty ids, a substitute-like
    id, too few players, players missing from the standings)."""
    _validate(players, method, fill, standings, budget)
    rng = random.Random(seed)
    met = met_sessions(history)
    winds = wind_counts(history)
    leftover = len(players) % 4
    byes: list[str] = []
    seated = list(players)
    if leftover and fill == "byes":
        byes = _choose_byes(players, history, leftover, rng)
        seated = [p for p in players if p not in set(byes)]
    subs = [f"{SUBSTITUTE_PREFIX}{k}" for k in range(1, (4 - leftover) % 4 + 1)]
    if fill == "byes":
        subs = []
    rank = {p: r for r, p in enumerate(standings)} if standings is not None else {}
    ordered = sorted(seated, key=lambda p: (rank[p], p)) if standings is not None else []
    tables = (len(seated) + len(subs)) // 4
    group: dict[str, int] | None = None
    tables_fixed = True
    if method == "top4":
        seats = _deal_substitutes(ordered, subs)
    elif method == "swiss":
        seats = _deal_substitutes(_swiss(ordered, met), subs)
    elif method == "balanced" and standings is not None:
        seats = _snake(ordered + subs, tables)
        group = {p: i // tables for i, p in enumerate(ordered + subs)}
        tables_fixed = False
    else:
        shuffled = sorted(seated)
        rng.shuffle(shuffled)
        seats = _deal_substitutes(shuffled, subs)
        tables_fixed = method == "random" or (method == "balanced" and not history)
    if method == "balanced" and history:
        tables_fixed = False
    searched = method in ("avoid", "balanced") and not tables_fixed
    if searched and len(seats) <= EXACT_SEATS:
        result, fewest = _exact(
            seats, met, history, winds, rng, group=group, budget=budget, lookahead=lookahead
        )
    else:
        if searched and lookahead > 0:
            planned = _plan_search(
                seats, met, winds, rng, budget=budget, sessions=1 + lookahead, group=group
            )
            # Then the winds are settled (repeats are never added; it stops once they stop
            # improving).
            result = _local_search(planned, met, winds, rng, budget=budget // 2, group=group)
            if _repeat_cost(result, met):
                # No repeat-free plan: this session's fewest repeats matter more than the
                # next's.
                alone = _local_search(seats, met, winds, rng, budget=budget, group=group)
                if _repeat_cost(alone, met) < _repeat_cost(result, met):
                    result = alone
        elif searched:
            result = _local_search(seats, met, winds, rng, budget=budget, group=group)
        else:
            result = seats
        cost = _repeat_cost(result, met)
        # Proven by having none, or by meeting the lower bound.
        fewest = not cost or (searched and cost <= _partition(result, met, history, group).bound())
    # Each table on its best winds (the tables as the search left them).
    result = _settle_winds(result, winds)
    table_list = tuple(
        (result[t], result[t + 1], result[t + 2], result[t + 3]) for t in range(0, len(result), 4)
    )
    repeats = _repeats(table_list, met)
    once = _met_once(result, met)
    # (The methods that do not avoid repeats are not told how many they could have avoided.)
    unavoidable = 0
    if method in ("avoid", "balanced"):
        unavoidable = _unavoidable(
            result, met, history, repeats, fewest=fewest and once and group is None
        )
    return Seating(
        session=len(history) + 1,
        method=method,
        seed=seed,
        tables=table_list,
        byes=tuple(sorted(byes)),
        repeats=repeats,
        message=_message(repeats, method, fewest=fewest, unavoidable=unavoidable, once=once),
        met=met,
        fewest=fewest,
        unavoidable=unavoidable,
    )


def _partition(
    seats: Sequence[str],
    met: Mapping[frozenset[str], tuple[int, ...]],
    history: Sequence[Seating],
    group: Mapping[str, int] | None,
) -> Partition:
    """The seats as ``partition`` sees them (seat i is ``seats[i]``): each pair's repeat cost
    (``_pair_cost``; two substitutes, or two of one ``group``, may not share a table while
    there are tables enough), the substitutes marked, and each earlier session's tables."""
    n = len(seats)
    tables = n // 4
    scale = _scale(seats)
    subs = sum(map(is_substitute, seats))
    cost = [[0] * n for _ in range(n)]
    for i, a in enumerate(seats):
        for j in range(i + 1, n):
            b = seats[j]
            if group is not None and group[a] == group[b]:
                c = FORBIDDEN  # (substitutes have their quarter too: the last)
            elif is_substitute(a) and is_substitute(b):
                c = FORBIDDEN if subs <= tables else 0
            elif is_substitute(a) or is_substitute(b):
                c = 0
            else:
                c = _pair_cost(len(met.get(frozenset((a, b)), ())), scale)
            cost[i][j] = cost[j][i] = c
    index = {p: i for i, p in enumerate(seats) if not is_substitute(p)}
    families = [
        [sum(1 << index[p] for p in table if p in index) for table in earlier.tables]
        for earlier in history
    ]
    marked = sum(1 << i for i, p in enumerate(seats) if is_substitute(p))
    return Partition(cost, families, scale=scale, marked=marked, cap=max(1, -(-subs // tables)))


def _exact(
    seats: list[str],
    met: Mapping[frozenset[str], tuple[int, ...]],
    history: Sequence[Seating],
    winds: Mapping[str, tuple[int, int, int, int]],
    rng: random.Random,
    *,
    group: Mapping[str, int] | None,
    budget: int,
    lookahead: int,
) -> tuple[list[str], bool]:
    """Up to ``EXACT_SEATS`` seats: the fewest repeats, found by ``partition``'s exact
    search, then the lookahead and the winds searched among the seatings that have them
    (never adding a repeat); and whether the search finished (the fewest are then proven)."""
    found = _partition(seats, met, history, group).fewest(_repeat_cost(seats, met) + 1)
    fewest = list(seats)  # (if the search ran out of work before finding anything cheaper)
    if found.tables is not None:
        fewest = [seats[i] for table in found.tables for i in table]
    cost = _repeat_cost(fewest, met)
    if lookahead > 0:
        # From the seats as dealt (the search's first find is no better a start for the
        # plan), the search's seating if the plan finds none as good.
        fewest = _plan_search(
            seats,
            met,
            winds,
            rng,
            budget=budget,
            sessions=1 + lookahead,
            cap=cost,
            fallback=fewest,
            group=group,
        )
    floor = cost if found.complete else 0
    result = _local_search(fewest, met, winds, rng, budget=budget, group=group, floor=floor)
    return result, found.complete


def _unavoidable(
    seats: Sequence[str],
    met: Mapping[frozenset[str], tuple[int, ...]],
    history: Sequence[Seating],
    repeats: Sequence[Repeat],
    *,
    fewest: bool,
) -> int:
    """A lower bound on the repeat pairings of any seating of these seats: ``partition``'s,
    or the seating's own count when ``fewest`` says it is the fewest pairings (proven the
    fewest meetings, no two players having met more than once, no quarters imposed)."""
    if not repeats:
        return 0
    bound = _partition(seats, met, history, None).pairings_bound()
    return max(bound, len(repeats)) if fewest else bound


def _met_once(seats: Iterable[str], met: Mapping[frozenset[str], tuple[int, ...]]) -> bool:
    """Whether no two of these players have met more than once."""
    present = set(seats)
    return not any(len(s) > 1 for pair, s in met.items() if pair <= present)


def swap(seating: Seating, a: str, b: str) -> Seating:
    """The director's swap of ``a`` and ``b`` (two seated players, or a seated player and one
    on a bye) before the session starts: a new ``Seating`` with ``repeats`` and ``message``
    recomputed; the given one is unchanged. A ``SeatingError`` names an id not in it."""
    where: dict[str, tuple[int, int] | None] = {}
    for t, table in enumerate(seating.tables):
        for w, p in enumerate(table):
            where[p] = (t, w)
    for p in seating.byes:
        where[p] = None
    for p in (a, b):
        if p not in where:
            raise SeatingError(f"{p!r} is neither seated nor on a bye in session {seating.session}")
    if a == b:
        return seating
    rows = [list(table) for table in seating.tables]
    byes = list(seating.byes)
    for x, y in ((a, b), (b, a)):
        spot = where[x]
        if spot is None:
            byes[byes.index(x)] = y
        else:
            rows[spot[0]][spot[1]] = y
    tables = tuple((r[0], r[1], r[2], r[3]) for r in rows)
    repeats = _repeats(tables, seating.met)
    # Still the fewest if the same players sit and their repeats weigh as much as before
    # (meetings, then pairings); a player back from a bye makes another problem.
    seated = [p for table in tables for p in table]
    same = set(seated) == {p for table in seating.tables for p in table}
    fewest = not repeats or (
        seating.fewest and same and _weight(repeats) <= _weight(seating.repeats)
    )
    unavoidable = seating.unavoidable if same else 0
    return replace(
        seating,
        tables=tables,
        byes=tuple(sorted(byes)),
        repeats=repeats,
        message=_message(
            repeats,
            seating.method,
            fewest=fewest,
            unavoidable=unavoidable,
            once=_met_once(seated, seating.met),
            swapped=True,
        ),
        fewest=fewest,
        unavoidable=unavoidable,
    )


def _weight(repeats: Sequence[Repeat]) -> tuple[int, int]:
    """Repeats as the search weighs them: the earlier meetings, then the pairings."""
    return sum(len(r.sessions) for r in repeats), len(repeats)


class _Plan:
    """The search of ``avoid`` and ``balanced`` looking ahead: ``sessions`` seatings of the
    same players planned together (slot = n * session + 4 * table + wind), so the one
    returned (the first) does not paint the later sessions into a corner (16 players: three
    sessions without a repeat can leave no repeat-free fourth). Cost: ``weight`` * sum over
    pairs of m(m-1)/2, m their meetings in the history and the plan, plus the first
    session's wind penalties. The players are numbered (``code``) and the meetings kept in
    a matrix: the search swaps seats many thousand times."""

    def __init__(
        self,
        seats: list[str],
        met: Mapping[frozenset[str], tuple[int, ...]],
        winds: Mapping[str, tuple[int, int, int, int]],
        sessions: int,
        rng: random.Random,
        *,
        group: Mapping[str, int] | None = None,
    ) -> None:
        self.n = len(seats)
        self.first = _Search(list(seats), met, winds)
        self.weight = self.first.weight
        self.group = group
        self.seats: list[str] = list(seats)
        for _ in range(sessions - 1):
            more = list(seats)
            _reshuffle(more, group, rng)
            self.seats.extend(more)
        # With a ``group``, a seat changes tables only with one of its group: the slots of
        # each session that hold each group (swaps within a group keep them).
        self.slots: dict[tuple[int, int], list[int]] = {}
        if group is not None:
            for k, p in enumerate(self.seats):
                self.slots.setdefault((k // self.n, group[p]), []).append(k)
        self.number = {p: k for k, p in enumerate(seats)}
        self.sub = [is_substitute(p) for p in seats]
        self.penalty = [self.first.penalty[p] for p in seats]
        self.history = [[0] * self.n for _ in seats]
        for pair, sessions_met in met.items():
            a, b = sorted(pair)
            if a in self.number and b in self.number:
                x, y = self.number[a], self.number[b]
                self.history[x][y] = self.history[y][x] = len(sessions_met)
        self.code = [self.number[p] for p in self.seats]
        self._count()

    def _count(self) -> None:
        self.meetings = [list(row) for row in self.history]
        for t in range(0, len(self.code), 4):
            self._meet(t, 1)

    def _meet(self, t: int, step: int) -> None:
        """Count (``step`` 1) or uncount (-1) the meetings of table ``t``'s pairs."""
        four = [x for x in self.code[t : t + 4] if not self.sub[x]]
        meetings = self.meetings
        for k, x in enumerate(four):
            for y in four[k + 1 :]:
                meetings[x][y] += step
                meetings[y][x] += step

    def total(self) -> int:
        # Less the history's own repeats, which no seating now can undo: 0 is repeat-free.
        cost = 0
        for x in range(self.n):
            for y in range(x + 1, self.n):
                m, h = self.meetings[x][y], self.history[x][y]
                cost += m * (m - 1) // 2 - h * (h - 1) // 2
        subs = 0
        for t in range(0, len(self.code), 4):
            subs += max(0, sum(self.sub[x] for x in self.code[t : t + 4]) - 1)
        wind = sum(self.penalty[x][w % 4] for w, x in enumerate(self.code[: self.n]))
        return cost * self.weight + subs * self.weight * 100 + wind

    def _pair_cost(self, tables: Iterable[int]) -> int:
        cost = 0
        meetings, sub = self.meetings, self.sub
        for t in tables:
            four = self.code[t : t + 4]
            real = [x for x in four if not sub[x]]
            for k, x in enumerate(real):
                row = meetings[x]
                for y in real[k + 1 :]:
                    cost += row[y] - 1  # this pair's share of m(m-1)/2 is m-1 per meeting
            cost += 100 * max(0, len(four) - len(real) - 1)
        return cost * self.weight

    def swap(self, i: int, j: int) -> int:
        """Swap seats i and j (of one session) and return the change of cost."""
        a, b = self.code[i], self.code[j]
        wind = 0
        if i < self.n:
            pa, pb = self.penalty[a], self.penalty[b]
            wind = pa[j % 4] + pb[i % 4] - pa[i % 4] - pb[j % 4]
        ti, tj = i - i % 4, j - j % 4
        if ti == tj:
            self.code[i], self.code[j] = b, a
            self.seats[i], self.seats[j] = self.seats[j], self.seats[i]
            return wind
        before = self._pair_cost((ti, tj))
        self._meet(ti, -1)
        self._meet(tj, -1)
        self.code[i], self.code[j] = b, a
        self.seats[i], self.seats[j] = self.seats[j], self.seats[i]
        self._meet(ti, 1)
        self._meet(tj, 1)
        return wind + self._pair_cost((ti, tj)) - before

    def bad_slots(self) -> list[int]:
        bad: list[int] = []
        meetings, sub = self.meetings, self.sub
        for t in range(0, len(self.code), 4):
            real = [x for x in self.code[t : t + 4] if not sub[x]]
            if any(meetings[x][y] > 1 for k, x in enumerate(real) for y in real[k + 1 :]):
                bad.extend(range(t, t + 4))
            elif t < self.n:
                bad.extend(t + w for w, x in enumerate(self.code[t : t + 4]) if self.penalty[x][w])
        return bad

    def first_delta(self, i: int, j: int) -> int:
        """How swapping seats i and j of the first session would change its repeat cost
        (``_repeat_cost``, over the history alone)."""
        a, b = self.code[i], self.code[j]
        ti, tj = i - i % 4, j - j % 4
        if ti == tj:
            return 0
        scale = self.first.scale

        def cost(x: int, table: int, leaving: int) -> int:
            if self.sub[x]:
                return 0
            row = self.history[x]
            return sum(
                _pair_cost(row[y], scale)
                for k, y in enumerate(self.code[table : table + 4], start=table)
                if k != leaving and not self.sub[y]
            )

        return cost(b, ti, i) + cost(a, tj, j) - cost(a, ti, i) - cost(b, tj, j)

    def partner(self, i: int, rng: random.Random) -> int:
        """A slot to swap with ``i``: any of its session, or with a ``group`` one holding
        its group."""
        if self.group is None:
            return i - i % self.n + rng.randrange(self.n)
        return rng.choice(self.slots[i // self.n, self.group[self.seats[i]]])

    def reshuffle(self, rng: random.Random) -> None:
        for start in range(0, len(self.seats), self.n):
            block = self.seats[start : start + self.n]
            _reshuffle(block, self.group, rng)
            self.seats[start : start + self.n] = block
        self.code = [self.number[p] for p in self.seats]
        self._count()


def _plan_search(
    seats: list[str],
    met: Mapping[frozenset[str], tuple[int, ...]],
    winds: Mapping[str, tuple[int, int, int, int]],
    rng: random.Random,
    *,
    budget: int,
    sessions: int,
    cap: int | None = None,
    fallback: Sequence[str] = (),
    group: Mapping[str, int] | None = None,
) -> list[str]:
    """Swap seats within each planned session to lower the plan's cost, within ``budget``
    moves, restarting from a reshuffle on a long plateau; the first session of the best
    plan seen is returned. With a ``cap``, only the plans whose first session's repeat cost
    (``_repeat_cost``) is at most the cap count as seen (the search passes through others),
    and ``fallback`` (a seating within it) is returned if none is: given the proven fewest,
    the plan chooses among the seatings that have them. With a ``group`` (the quarters of
    ``balanced``), seats change tables only within their group."""
    plan = _Plan(seats, met, winds, sessions, rng, group=group)
    first_cost = _repeat_cost(seats, met) if cap is not None else 0
    n, total_slots = len(seats), len(plan.seats)
    cost = plan.total()
    best, best_cost = plan.seats[:n], cost
    if cap is not None and first_cost > cap:
        best, best_cost = list(fallback), 1 << 62  # (any plan within the cap is better)
    stuck = since_best = 0
    bad: list[int] = []
    for move in range(budget):
        if best_cost == 0 or (best_cost < plan.weight and since_best > 20 * total_slots):
            break  # perfect, or repeat-free and the winds no longer improving
        since_best += 1
        if move % 20 == 0:
            bad = plan.bad_slots()
        i = rng.choice(bad) if bad and rng.random() < 0.9 else rng.randrange(total_slots)
        j = plan.partner(i, rng)
        if i == j:
            continue
        first = plan.first_delta(i, j) if cap is not None and i < n else 0
        d = plan.swap(i, j)
        if d > 0:
            plan.swap(i, j)
            stuck += 1
        else:
            first_cost += first
            cost += d
            stuck = 0 if d < 0 else stuck + 1
            if cost < best_cost and (cap is None or first_cost <= cap):
                best, best_cost, since_best = plan.seats[:n], cost, 0
        if stuck > 40 * total_slots:
            plan.reshuffle(rng)
            cost, stuck = plan.total(), 0
            if cap is not None:
                first_cost = _repeat_cost(plan.seats[:n], met)
    return best

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

The repeats ``"avoid"`` and ``"balanced"`` minimise are weighed by ``repeat_cost``
(``server.tournaments.seating_search``, which holds the searches described here): first
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

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from server.tournaments.partition import FORBIDDEN, Partition
from server.tournaments.seating_search import (
    SUBSTITUTE_PREFIX,
    is_substitute,
    local_search,
    meeting_cost,
    plan_search,
    repeat_cost,
    repeat_scale,
    settle_winds,
    table_pairs,
)

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_LOOKAHEAD",
    "EXACT_SEATS",
    "METHODS",
    "SUBSTITUTE_PREFIX",
    "SWISS_WINDOW",
    "WINDS",
    "Fill",
    "Method",
    "Repeat",
    "Report",
    "Seating",
    "SeatingError",
    "Table",
    "bye_counts",
    "is_substitute",
    "met_sessions",
    "pair_counts",
    "report",
    "seat_session",
    "swap",
    "wind_counts",
    "wind_imbalance",
]

WINDS = ("E", "S", "W", "N")
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


def pair_counts(history: Sequence[Seating]) -> dict[frozenset[str], int]:
    """How many times each pair of players has sat at one table over ``history``."""
    counts: Counter[frozenset[str]] = Counter()
    for seating in history:
        for table in seating.tables:
            counts.update(table_pairs(table))
    return dict(counts)


def met_sessions(history: Sequence[Seating]) -> dict[frozenset[str], tuple[int, ...]]:
    """For each pair that has met: the session numbers (1-based, history order) they met in."""
    met: dict[frozenset[str], list[int]] = {}
    for number, seating in enumerate(history, start=1):
        for table in seating.tables:
            for pair in table_pairs(table):
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
        for pair in table_pairs(table):
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
            planned = plan_search(
                seats, met, winds, rng, budget=budget, sessions=1 + lookahead, group=group
            )
            # Then the winds are settled (repeats are never added; it stops once they stop
            # improving).
            result = local_search(planned, met, winds, rng, budget=budget // 2, group=group)
            if repeat_cost(result, met):
                # No repeat-free plan: this session's fewest repeats matter more than the
                # next's.
                alone = local_search(seats, met, winds, rng, budget=budget, group=group)
                if repeat_cost(alone, met) < repeat_cost(result, met):
                    result = alone
        elif searched:
            result = local_search(seats, met, winds, rng, budget=budget, group=group)
        else:
            result = seats
        cost = repeat_cost(result, met)
        # Proven by having none, or by meeting the lower bound.
        fewest = not cost or (searched and cost <= _partition(result, met, history, group).bound())
    # Each table on its best winds (the tables as the search left them).
    result = settle_winds(result, winds)
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
    (``meeting_cost``; two substitutes, or two of one ``group``, may not share a table while
    there are tables enough), the substitutes marked, and each earlier session's tables."""
    n = len(seats)
    tables = n // 4
    scale = repeat_scale(seats)
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
                c = meeting_cost(len(met.get(frozenset((a, b)), ())), scale)
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
    found = _partition(seats, met, history, group).fewest(repeat_cost(seats, met) + 1)
    fewest = list(seats)  # (if the search ran out of work before finding anything cheaper)
    if found.tables is not None:
        fewest = [seats[i] for table in found.tables for i in table]
    cost = repeat_cost(fewest, met)
    if lookahead > 0:
        # From the seats as dealt (the search's first find is no better a start for the
        # plan), the search's seating if the plan finds none as good.
        fewest = plan_search(
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
    result = local_search(fewest, met, winds, rng, budget=budget, group=group, floor=floor)
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

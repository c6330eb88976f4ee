"""The search behind ``seat_session``'s ``avoid`` and ``balanced`` (see
``server.tournaments.seating``): the repeat cost of a seating, a local search over seat
swaps within a budget of moves, the same search over a plan of several sessions (the
lookahead), and each table's best winds. Pure, no I/O; the randomness is a seeded
``random.Random`` given by the caller.

Seats are a flat list (slot = 4 * table + wind), player ids or substitute markers
(``"sub:1"``), which have no pairs and no winds.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Mapping, Sequence

SUBSTITUTE_PREFIX = "sub:"
REPEAT_WEIGHT = 1000


def is_substitute(seat: str) -> bool:
    """Whether a seat holds a substitute marker (``"sub:1"``), not a player."""
    return seat.startswith(SUBSTITUTE_PREFIX)


def table_pairs(table: Iterable[str]) -> Iterable[frozenset[str]]:
    real = [p for p in table if not is_substitute(p)]
    return (frozenset(pair) for pair in itertools.combinations(real, 2))


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
        self.scale = repeat_scale(seats)
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
        return self.weight * meeting_cost(self.met.get(frozenset((a, b)), 0), self.scale)

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


def local_search(
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
            reshuffle(search.seats, group, rng)
            cost = search.total()
            stuck = 0
    return best


def settle_winds(seats: Sequence[str], winds: Mapping[str, tuple[int, int, int, int]]) -> list[str]:
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


def reshuffle(seats: list[str], group: Mapping[str, int] | None, rng: random.Random) -> None:
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


def repeat_scale(seats: Sequence[str]) -> int:
    """What an earlier meeting weighs against a repeat pairing: more than every pair of the
    seating could count (six a table), so fewer meetings always come first."""
    return 6 * (len(seats) // 4) + 1


def meeting_cost(meetings: int, scale: int) -> int:
    """A pair's repeat cost: its earlier meetings (weighed by ``scale``), plus one for
    pairing again at all."""
    return scale * meetings + 1 if meetings else 0


def repeat_cost(seats: Sequence[str], met: Mapping[frozenset[str], tuple[int, ...]]) -> int:
    """The repeat cost of these tables: ``scale`` times the earlier meetings of the pairs at
    them, plus the number of those pairs (see ``meeting_cost``)."""
    scale = repeat_scale(seats)
    return sum(
        meeting_cost(len(met.get(pair, ())), scale)
        for t in range(0, len(seats), 4)
        for pair in table_pairs(seats[t : t + 4])
    )


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
            reshuffle(more, group, rng)
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
        (``repeat_cost``, over the history alone)."""
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
                meeting_cost(row[y], scale)
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
            reshuffle(block, self.group, rng)
            self.seats[start : start + self.n] = block
        self.code = [self.number[p] for p in self.seats]
        self._count()


def plan_search(
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
    (``repeat_cost``) is at most the cap count as seen (the search passes through others),
    and ``fallback`` (a seating within it) is returned if none is: given the proven fewest,
    the plan chooses among the seatings that have them. With a ``group`` (the quarters of
    ``balanced``), seats change tables only within their group."""
    plan = _Plan(seats, met, winds, sessions, rng, group=group)
    first_cost = repeat_cost(seats, met) if cap is not None else 0
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
                first_cost = repeat_cost(plan.seats[:n], met)
    return best

"""The fewest repeats a seating can have: an exact search over the ways to split the seats
into tables of four, and a lower bound for any size. Pure, no I/O; used by ``seating``.

The seats are numbered 0..n-1 (n a multiple of four) and every pair has a cost, a whole
number: ``seating`` gives ``scale * m + (1 if m else 0)`` for a pair that met ``m`` times
before (so the search minimises the earlier meetings between tablemates, then the number of
repeat pairings: ``scale`` outweighs every pairing count), and ``FORBIDDEN`` for a pair that
may never share a table (two players of one quarter in ``balanced``, two substitutes). The
``marked`` seats are the substitutes: no cost with anyone (0, or ``FORBIDDEN``), at most
``cap`` a table; those with the same costs with every seat are alike. A split costs the sum
of its tables' six pairs.

``Partition.fewest(below)`` is a depth-first branch and bound over the splits. Tables are
not numbered and alike marked seats are interchangeable, so a split is met once: a seat left
(the one whose cheapest table costs most) opens the next table, with of each kind of marked
seats the first left, if any. Its tables are tried cheapest first, and a branch is cut as
soon as what it has spent plus a lower bound on the seats left cannot go below the best
found. Two branches that leave the same seats face the same subproblem: a memo keeps, per
set of seats left, the best lower bound proven for it (a finished branch proves that its
seats cost at least the best found less what was spent before them). A limit on its work
keeps the search bounded whatever the history; ``Found.complete`` says whether it finished,
and then its cost is the minimum.

The lower bound on a set of seats left is the largest of these, each true of every split:

- *a seat's cheapest table*: the split costs at least that table;
- *tables*: each unmarked seat pays its table's cost shared among the table's unmarked
  seats: a quarter of a full table, a third of one with a substitute (three seats per
  substitute left), and that is at least its cheapest such table;
- *pairs*: each unmarked seat sits with three unmarked others, or two at a substitute's
  table, and pays at least its cheapest three (or two) pairs among them; each pair is paid
  by its two seats: half the sum;
- *earlier sessions*: the players of an earlier table (a family) have all met; g of them at
  k tables put at least ``spread(g, k)`` of their pairs together. A pair that met in two
  sessions is counted by both, so the meetings are at least the sum over the sessions of
  what each forces, and the repeat pairings at least the most one session forces;
- *tables, shifted*: with a number ``pi`` per seat (Lagrange multipliers), a split costs
  the sum of ``pi`` plus its tables' shifted costs (a table's cost less its seats' ``pi``),
  whatever ``pi``: so the sum of ``pi`` plus the tables bound of the shifted costs is a
  bound too. When the plain bounds do not end the search soon, ``pi`` is found by a
  subgradient ascent: it charges the seats that every cheap table wants, and the bound
  nears the linear relaxation's.

From a node to a child, a seat's cheapest tables can only get dearer: the child's tables
bounds are at least those of the parent's cheapest tables without the four seated, which
rules most tables out in a few steps; for the others, the seats whose cheapest tables or
pairs lost a seat move on in their lists, cheapest first.

One concept, one module (longer than most): the search and the bounds it cuts with share the
``Partition``'s precomputed tables (each seat's tables and pairs, cheapest first, the
families of earlier sessions) and are only right together: a bound is worth what it is true
of every split the search would otherwise visit. Read apart, neither says why it is correct.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

FORBIDDEN = 1 << 40  # a pair that may never share a table; more than any seating costs
# The exact search's work before it gives up, in tables looked at (about a microsecond
# each): a few seconds. docs/tournaments.md gives the hardest cases met, far below it.
STEP_LIMIT = 6_000_000
TABLE_STEPS = 2_000  # tables tried per seat for the root's cheapest-table bound
POTENTIAL_ROUNDS = 80  # subgradient rounds for the search's Lagrange multipliers
PLAIN_STEPS = 100_000  # the search's work without them, before it finds them

Split = tuple[tuple[int, int, int, int], ...]
# A search node's per-seat lists (``Partition.fewest``): at4, at3, p3, p2, mates, and the
# places in the shifted lists, shift4 and shift3.
_Lists = tuple[list[int], list[int], list[int], list[int], list[int], list[int], list[int]]


def spread(size: int, tables: int) -> int:
    """The fewest pairs of a group of ``size`` seats that share a table when the group sits
    at ``tables`` tables: spread as evenly as it goes, ``size // tables`` or one more each."""
    q, r = divmod(size, tables)
    return r * (q + 1) * q // 2 + (tables - r) * q * (q - 1) // 2


def _alike(cost: Sequence[Sequence[int]], a: int, b: int) -> bool:
    """Whether seats ``a`` and ``b`` have the same cost with every other seat (swapping them
    changes no split's cost)."""
    return all(cost[a][j] == cost[b][j] for j in range(len(cost)) if j not in (a, b))


def _cheapest_first(row: Sequence[int], i: int) -> list[int]:
    """The seats other than ``i``, cheapest pair with it first (ties: seat number)."""
    return sorted((j for j in range(len(row)) if j != i), key=lambda j: (row[j], j))


@dataclass(frozen=True, slots=True)
class Found:
    """What ``Partition.fewest`` found: ``tables`` (the caller's seat numbers, four by four)
    costing ``cost``, or None when no split costs less than the ``below`` asked (``cost`` is
    then that ``below``); ``complete``: the search finished, so no split costs less than
    ``cost``; ``steps``: the work done (tables looked at)."""

    tables: Split | None
    cost: int
    complete: bool
    steps: int


class _OutOfSteps(Exception):
    pass


class Partition:
    """The seats, their pair costs (a symmetric matrix, zero on the diagonal), the earlier
    sessions' tables as bit masks of seats (``families``, for the bound), the meetings'
    ``scale``, and the ``marked`` seats (substitutes) of which a table holds at most ``cap``."""

    def __init__(
        self,
        cost: Sequence[Sequence[int]],
        families: Sequence[Sequence[int]] = (),
        *,
        scale: int,
        marked: int = 0,
        cap: int = 4,
    ) -> None:
        n = len(cost)
        if n % 4:
            raise ValueError(f"{n} seats do not make tables of four")
        # The marked seats cost nothing where they may sit; those with the same cost with
        # every other seat are alike (a kind): which of them sits where is not searched.
        kinds: list[list[int]] = []
        for i in range(n):
            if marked >> i & 1:
                if any(cost[i][j] not in (0, FORBIDDEN) for j in range(n)):
                    costs = sorted({cost[i][j] for j in range(n)})
                    raise ValueError(f"marked seat {i} has a cost: {costs}")
                kind = next((k for k in kinds if all(_alike(cost, i, m) for m in k)), None)
                if kind is None:
                    kinds.append([i])
                else:
                    kind.append(i)
        self.kinds = [sum(1 << i for i in kind) for kind in kinds]
        self.n = n
        self.cost = [list(row) for row in cost]
        self.scale = scale
        self.marked = marked
        self.cap = cap
        self.families = [[m for m in fam if m.bit_count() > 1] for fam in families if any(fam)]
        self.families = [fam for fam in self.families if fam]
        self.largest = max((m.bit_count() for fam in self.families for m in fam), default=0)
        # Each seat's others, cheapest pair first (ties: seat number).
        self.order = [_cheapest_first(row, i) for i, row in enumerate(self.cost)]
        self._tables: _Tables | None = None

    # ------------------------------------------------------------------ bounds ---

    def _cheapest_three(
        self, cost: list[list[int]], order: list[list[int]], i: int, rest: int
    ) -> tuple[int, int]:
        """Seat ``i``'s three cheapest others among ``rest`` (at most ``cap`` marked, with
        ``i``): their cost and mask. A seat with fewer than three pays ``FORBIDDEN``."""
        row, marked = cost[i], self.marked
        need, room, paid, mask = 3, self.cap - (marked >> i & 1), 0, 0
        for j in order[i]:
            if rest >> j & 1:
                if marked >> j & 1:
                    if room <= 0:
                        continue
                    room -= 1
                paid += row[j]
                mask |= 1 << j
                need -= 1
                if need == 0:
                    return paid, mask
        return FORBIDDEN, mask

    def _by_session(self, rest: int, scale: int | None = None) -> int:
        tables = rest.bit_count() // 4
        if tables == 0 or tables >= self.largest:
            return 0  # every family fits one to a table
        total = worst = 0
        for fam in self.families:
            forced = 0
            for m in fam:
                g = (m & rest).bit_count()
                if g > tables:
                    forced += spread(g, tables)
            total += forced
            worst = max(worst, forced)
        return (self.scale if scale is None else scale) * total + worst

    def _cheapest_table(
        self, cost: list[list[int]], order: list[list[int]], i: int, steps: int
    ) -> int:
        """A lower bound on the cost of seat ``i``'s cheapest table: the cheapest itself,
        found by a small branch and bound over its others (cheapest pairs first), or, if that
        takes more than ``steps`` tables, what its three cheapest pairs alone cost."""
        row, marked, cap = cost[i], self.marked, self.cap
        others = order[i]
        alone = self._cheapest_three(cost, order, i, (1 << self.n) - 1)[0]
        best, tried, m = FORBIDDEN, 0, len(others)
        for x in range(m - 2):
            a = others[x]
            ca = row[a]
            if 3 * ca >= best:
                break
            ra = cost[a]
            for y in range(x + 1, m - 1):
                b = others[y]
                cb = row[b]
                if ca + 2 * cb >= best:
                    break
                ab = ca + cb + ra[b]
                if ab + cb >= best:
                    continue
                rb = cost[b]
                for z in range(y + 1, m):
                    c = others[z]
                    t = ab + row[c]
                    if t >= best:
                        break
                    tried += 1
                    if tried > steps:
                        return alone
                    t += ra[c] + rb[c]
                    four = 1 << i | 1 << a | 1 << b | 1 << c
                    if t < best and (four & marked).bit_count() <= cap:
                        best = t
        return max(best if best < FORBIDDEN else alone, alone)

    def _root_bound(self, cost: list[list[int]], order: list[list[int]], scale: int) -> int:
        every = (1 << self.n) - 1
        pairs = sum(self._cheapest_three(cost, order, i, every)[0] for i in range(self.n))
        tables = sum(self._cheapest_table(cost, order, i, TABLE_STEPS) for i in range(self.n))
        return max((pairs + 1) // 2, (tables + 3) // 4, self._by_session(every, scale))

    def bound(self) -> int:
        """A lower bound on the cost of any split of all the seats (the larger of the
        tables', the pairs' and the earlier sessions' bounds)."""
        return self._root_bound(self.cost, self.order, self.scale)

    def pairings_bound(self) -> int:
        """A lower bound on the repeat pairings (pairs with a cost) of any split: the same
        bounds, each pair with a cost counting 1 (an earlier session's families then force
        at least the most any one of them forces)."""
        ones = [[min(c, 1) if c < FORBIDDEN else c for c in row] for row in self.cost]
        order = [_cheapest_first(row, i) for i, row in enumerate(ones)]
        return self._root_bound(ones, order, 0)

    def _every_table(self) -> _Tables:
        """Per seat, every table it may sit at, cheapest first: all of them (for the seat to
        open), and for the bounds those with no marked seat and those with one; each list
        of costs ends with ``FORBIDDEN`` (its mask 0), so a scan always stops."""
        if self._tables is not None:
            return self._tables
        cost, marked, cap = self.cost, self.marked, self.cap
        every: list[list[tuple[int, int]]] = [[] for _ in range(self.n)]
        flat: list[tuple[int, int, tuple[int, int, int, int], tuple[int, ...], int]] = []
        for a, b, c, d in itertools.combinations(range(self.n), 4):
            mask = 1 << a | 1 << b | 1 << c | 1 << d
            if (mask & marked).bit_count() > cap:
                continue
            ra, rb, rc = cost[a], cost[b], cost[c]
            t = ra[b] + ra[c] + ra[d] + rb[c] + rb[d] + rc[d]
            if t < FORBIDDEN:
                for s in (a, b, c, d):
                    every[s].append((t, mask))
                unmarked = tuple(x for x in (a, b, c, d) if not marked >> x & 1)
                flat.append((t, mask, (a, b, c, d), unmarked, len(unmarked)))
        lists: list[list[list[int]]] = [[] for _ in range(6)]
        for tables in every:
            tables.sort()
            plain = [(t, m) for t, m in tables if not m & marked]
            with_marked = [(t, m) for t, m in tables if m & marked]
            for k, chosen in enumerate((tables, plain, with_marked)):
                lists[2 * k].append([t for t, _ in chosen] + [FORBIDDEN])
                lists[2 * k + 1].append([m for _, m in chosen] + [0])
        self._tables = _Tables(
            all_costs=lists[0],
            all_masks=lists[1],
            plain_costs=lists[2],
            plain_masks=lists[3],
            marked_costs=lists[4],
            marked_masks=lists[5],
            flat=flat,
        )
        return self._tables

    def _real_partners(self, i: int, rest: int) -> tuple[int, int, int]:
        """Seat ``i``'s cheapest three and two unmarked others among ``rest``: what they cost
        (``FORBIDDEN`` if too few) and the mask of the three."""
        row, marked = self.cost[i], self.marked
        paid, two, found, mask = 0, FORBIDDEN, 0, 0
        for j in self.order[i]:
            if rest >> j & 1 and not marked >> j & 1:
                paid += row[j]
                mask |= 1 << j
                found += 1
                if found == 2:
                    two = paid
                elif found == 3:
                    return paid, two, mask
        return FORBIDDEN, two, mask

    def _potentials(self, target: int) -> list[int]:
        """Lagrange multipliers ``pi``, one per seat, that raise the tables bound (a
        subgradient ascent towards ``target``, a cost the search has in hand). A table's
        shifted cost is its cost less its seats' ``pi``: a split costs its tables' shifted
        costs plus the sum of ``pi``, whatever ``pi``, so the tables bound of the shifted
        costs plus that sum is a lower bound too; the multipliers make it charge the seats
        that every cheap table wants, and the substitutes' tables that every seat wants (the
        bound nears the linear relaxation's)."""
        marked = self.marked
        seats = range(self.n)
        real = [i for i in seats if not marked >> i & 1]
        tables = self._every_table().flat
        pi = [0.0] * self.n
        best, best_pi, stall, pace = -float("inf"), [0] * self.n, 0, 2.0
        for _ in range(POTENTIAL_ROUNDS):
            share = [float("inf")] * self.n
            chosen: list[tuple[int, ...]] = [()] * self.n
            for t, _, (a, b, c, d), unmarked, k in tables:
                v = (t - pi[a] - pi[b] - pi[c] - pi[d]) / k
                for x in unmarked:
                    if v < share[x]:
                        share[x], chosen[x] = v, (a, b, c, d, k)
            value = sum(pi) + sum(share[i] for i in real)
            if value > best:
                best, best_pi, stall = value, [round(x) for x in pi], 0
            else:
                stall += 1
                if stall >= 5:
                    pace, stall = pace / 2, 0
            # Each seat should be covered once: by the tables its tablemates chose, each a
            # share (a quarter, or a third at a substitute's table).
            cover = [0.0] * self.n
            for i in real:
                if chosen[i]:  # (none: a seat with no table at all)
                    *four, k = chosen[i]
                    for x in four:
                        cover[x] += 1 / k
            step = [1 - c for c in cover]
            norm = sum(g * g for g in step)
            if norm < 1e-9 or target <= value:
                break  # the bound is what it can be, or reaches what the search has
            move = pace * (target - value) / norm
            pi = [x + move * g for x, g in zip(pi, step, strict=True)]
        return best_pi

    def _shifted(self, pi: list[int]) -> tuple[list[list[int]], ...]:
        """Per seat, its tables without and with a marked seat, by shifted cost (the cost
        less the seats' ``pi``) cheapest first: costs and masks, each list ending with a
        sentinel (``FORBIDDEN``, mask 0)."""
        marked = self.marked
        per_seat: list[list[tuple[int, int]]] = [[] for _ in range(2 * self.n)]
        for t, mask, (a, b, c, d), unmarked, _ in self._every_table().flat:
            shifted = t - pi[a] - pi[b] - pi[c] - pi[d]
            side = self.n if mask & marked else 0
            for x in unmarked:
                per_seat[side + x].append((shifted, mask))
        costs: list[list[int]] = []
        masks: list[list[int]] = []
        for entries in per_seat:
            entries.sort()
            costs.append([c for c, _ in entries] + [FORBIDDEN])
            masks.append([m for _, m in entries] + [0])
        n = self.n
        return costs[:n], masks[:n], costs[n:], masks[n:]

    # ------------------------------------------------------------------ search ---

    def fewest(self, below: int, step_limit: int = STEP_LIMIT) -> Found:
        """The cheapest split of the seats into tables of four costing less than ``below``
        (pass the cost of a seating in hand: the search then looks only for a better one),
        within ``step_limit`` steps of work."""
        n = self.n
        tables = self._every_table()
        all_costs, all_masks = tables.all_costs, tables.all_masks
        plain_costs, plain_masks = tables.plain_costs, tables.plain_masks
        sub_costs, sub_masks = tables.marked_costs, tables.marked_masks
        marked, kinds = self.marked, self.kinds
        # The per-seat bounds count one marked seat a table at most; with more (more marked
        # seats than tables: eight seats at most), the sessions' bound only.
        per_seat = not marked or self.cap == 1
        seats = range(n)
        full = (1 << n) - 1
        real = [i for i in seats if not marked >> i & 1]
        memo: dict[int, int] = {}
        chosen: list[int] = []
        best = below
        best_tables: list[int] | None = None
        steps = 0
        by_session, partners = self._by_session, self._real_partners
        members: dict[int, tuple[int, ...]] = {}

        def seats_of(mask: int) -> tuple[int, ...]:
            found = members.get(mask)
            if found is None:
                found = members[mask] = tuple(i for i in seats if mask >> i & 1)
            return found

        def by_tables(left: int, at4: list[int], at3: list[int]) -> int:
            """The tables' bound on ``left`` (the module docstring's; with r marked seats
            left, the 3r unmarked seats that will sit with them pay a third of a table of
            three instead of a quarter of a full one: the 3r largest such savings are taken
            off), or the cheapest table of its dearest seat, whichever is more."""
            subs = (left & marked).bit_count()
            total = dearest = 0
            if not subs:
                for i in real:
                    if left >> i & 1:
                        four = plain_costs[i][at4[i]]
                        total += four
                        if four > dearest:  # noqa: PLR1730 (a hot loop: no call)
                            dearest = four
                total = (total + 3) // 4
                return total if total > dearest else dearest
            saves: list[int] = []
            for i in real:
                if left >> i & 1:
                    four = plain_costs[i][at4[i]]
                    three = sub_costs[i][at3[i]]
                    total += 3 * four
                    save = 3 * four - 4 * three
                    saves.append(save if save > 0 else 0)
                    if three < four:  # noqa: PLR1730 (a hot loop: no call)
                        four = three
                    if four > dearest:  # noqa: PLR1730
                        dearest = four
            saves.sort()
            total = (total - sum(saves[-3 * subs :]) + 11) // 12
            return total if total > dearest else dearest

        def by_pairs(left: int, p3: list[int], p2: list[int]) -> int:
            """The pairs' bound on ``left`` (with r marked seats left, the 3r unmarked seats
            that will sit with them pay two pairs instead of three)."""
            subs = (left & marked).bit_count()
            total = 0
            saves: list[int] = []
            for i in real:
                if left >> i & 1:
                    total += p3[i]
                    if subs:
                        saves.append(p3[i] - p2[i])
            if subs:
                saves.sort()
                total -= sum(saves[-3 * subs :])
            return (total + 1) // 2

        # A node: the seats left and, per unmarked seat left, the place in its lists of its
        # cheapest table with no marked seat (``at4``) and with one (``at3``), and its
        # cheapest three and two others (``p3``, ``p2``; the three: ``mates``).
        def visit(rest: int, spent: int, lists: _Lists) -> None:
            nonlocal best, best_tables, steps
            if steps > limit:
                raise _OutOfSteps
            at4, at3, p3, p2, mates, shift4, shift3 = lists
            if rest == 0:
                best, best_tables = spent, list(chosen)
                return
            left_real = [i for i in real if rest >> i & 1]
            gone = full & ~rest
            subs = (rest & marked).bit_count()
            # With multipliers: each seat's cheapest shifted tables among the seats left, its
            # share of the split's cost in twelfths (12 pi, and 3/12 of a full table), and
            # what it saves at a substitute's table (4/12 of a table of three instead); the
            # 3r seats at those tables save the most at best.
            shares = [0] * n
            shift_saves: list[tuple[int, int]] = []
            shift_total = 0
            if pi is not None:
                shift4, shift3 = list(shift4), list(shift3)
                for i in left_real:
                    place, i_masks = shift4[i], s4_masks[i]
                    while i_masks[place] & gone:
                        place += 1
                    shift4[i] = place
                    four = s4_costs[i][place]
                    shares[i] = 12 * pi[i] + 3 * four
                    if subs:
                        place, i_masks = shift3[i], s3_masks[i]
                        while i_masks[place] & gone:
                            place += 1
                        shift3[i] = place
                        shift_saves.append((3 * four - 4 * s3_costs[i][place], i))
                for m in seats_of(rest & marked):
                    shares[m] = 12 * pi[m]
                shift_saves.sort(reverse=True)
                shift_total = sum(shares) - sum(save for save, _ in shift_saves[: 3 * subs])
                if shift_total > 12 * (best - 1 - spent):
                    memo[rest] = max(memo.get(rest, 0), -(-shift_total // 12))
                    return
            # Who is hit when a seat goes: the seats whose cheapest tables or others hold it.
            hit: list[list[int]] = [[] for _ in seats]
            for i in left_real:
                for j in seats_of(plain_masks[i][at4[i]] | sub_masks[i][at3[i]] | mates[i]):
                    if j != i:
                        hit[j].append(i)
            # Each seat's cheapest table, dearest first: its dearest seat opens the next table
            # (of the marked seats, alike, only the first left may join it), and a table that
            # leaves a seat whose cheapest costs more than the room left is not tried.
            ranked = sorted(
                ((min(plain_costs[i][at4[i]], sub_costs[i][at3[i]]), -i) for i in left_real),
                reverse=True,
            )
            p = -ranked[0][1] if ranked else (rest & -rest).bit_length() - 1
            # The seats left keep their cheapest tables or dearer: the tables bound of a
            # child is at least the one of its seats' cheapest tables here (``by_tables``,
            # in twelfths: a full table's seat pays 3/12 of it, one of a table of three 4/12).
            full_share = [0] * n
            saves: list[tuple[int, int]] = []
            for i in left_real:
                full_share[i] = 3 * plain_costs[i][at4[i]]
                saves.append((max(0, full_share[i] - 4 * sub_costs[i][at3[i]]), i))
            saves.sort(reverse=True)
            everyone = sum(full_share)
            ranked = ranked[1:]
            fourth = ranked[3][0] if len(ranked) > 3 else 0  # the table seats three at most
            # Of each kind of marked seats (alike), the first left, one, two or three of them:
            # a table takes those or none.
            firsts: list[tuple[int, list[int]]] = []
            for kind in kinds:
                spare, first = rest & kind, [0]
                while spare:
                    first.append(first[-1] | spare & -spare)
                    spare &= spare - 1
                firsts.append((kind, first))
            p_costs, p_masks = all_costs[p], all_masks[p]
            for k in range(len(p_costs)):
                t = p_costs[k]
                room = best - 1 - spent - t
                if room < fourth:
                    break  # (room < 0 included)
                table = p_masks[k]
                steps += 1
                if table & gone:
                    continue
                if table & marked and any(
                    table & kind != first[(table & kind).bit_count()] for kind, first in firsts
                ):
                    continue
                if next((c for c, i in ranked if not table >> -i & 1), 0) > room:
                    continue
                quad = seats_of(table)
                kept = everyone
                for j in quad:
                    kept -= full_share[j]
                taken = 3 * ((rest & ~table) & marked).bit_count()
                for save, i in saves:
                    if taken == 0:
                        break
                    if not table >> i & 1:
                        kept -= save
                        taken -= 1
                if kept > 12 * room:
                    continue
                if pi is not None:
                    kept = shift_total + sum(save for save, _ in shift_saves[: 3 * subs])
                    for j in quad:
                        kept -= shares[j]
                    taken = 3 * ((rest & ~table) & marked).bit_count()
                    for save, i in shift_saves:
                        if taken == 0:
                            break
                        if not table >> i & 1:
                            kept -= save
                            taken -= 1
                    if kept > 12 * room:
                        continue
                left = rest & ~table
                known = memo.get(left, 0)
                if known > room:
                    continue
                # The child's lists: the seats hit move on to their next table still free,
                # or stop at one costing more than the room left (its cost is then a lower
                # bound all the same, more than the room: ``by_tables`` prunes the child).
                out = gone | table
                subs_left = left & marked
                c4, c3, cp3, cp2, cmates = list(at4), list(at3), list(p3), list(p2), list(mates)
                quad = seats_of(table)
                for j in quad:
                    for i in hit[j]:
                        if not left >> i & 1:
                            continue
                        place = c4[i]
                        i_masks = plain_masks[i]
                        if i_masks[place] & table:
                            i_costs = plain_costs[i]
                            while i_masks[place] & out and i_costs[place] <= room:
                                place += 1
                            c4[i] = place
                        place = c3[i]
                        i_masks = sub_masks[i]
                        if i_masks[place] & table:
                            i_costs = sub_costs[i]
                            if not subs_left:
                                place = len(i_masks) - 1
                            while i_masks[place] & out and i_costs[place] <= room:
                                place += 1
                            c3[i] = place
                # The bounds, cheapest first.
                lower = known
                if per_seat:
                    lower = max(lower, by_tables(left, c4, c3))
                if lower <= room:
                    lower = max(lower, by_session(left))
                if lower <= room and per_seat:
                    for j in quad:
                        for i in hit[j]:
                            if left >> i & 1 and cmates[i] & table:
                                cp3[i], cp2[i], cmates[i] = partners(i, left)
                    lower = max(lower, by_pairs(left, cp3, cp2))
                memo[left] = lower
                if lower > room:
                    continue
                chosen.append(table)
                visit(left, spent + t, (c4, c3, cp3, cp2, cmates, shift4, shift3))
                chosen.pop()
            # Every way on from here costs at least the best found less what was spent.
            if best - spent > memo.get(rest, 0):
                memo[rest] = best - spent

        start = [partners(i, full) for i in seats]
        lists = (
            [0] * n,
            [0] * n,
            [s[0] for s in start],
            [s[1] for s in start],
            [s[2] for s in start],
            [0] * n,
            [0] * n,
        )
        # A first split, each seat left in turn at its cheapest table still free: the
        # multipliers aim at its cost, and the search starts from it if it is below.
        rest, spent, dive = full, 0, []
        while rest:
            i = (rest & -rest).bit_length() - 1
            gone = full & ~rest
            k = next(k for k, m in enumerate(all_masks[i]) if not m & gone)
            if all_costs[i][k] >= FORBIDDEN:
                break
            rest &= ~all_masks[i][k]
            spent += all_costs[i][k]
            dive.append(all_masks[i][k])
        if not rest and spent < best:
            best, best_tables = spent, dive
        # First without multipliers; if that does not end soon, again with them (they cost
        # a few tenths of a second to find), the memo and the best found kept.
        pi: list[int] | None = None
        s4_costs = s4_masks = s3_costs = s3_masks = [[0]]
        limit = min(step_limit, PLAIN_STEPS)
        try:
            visit(full, 0, lists)
            complete = True
        except _OutOfSteps:
            complete = False
        if not complete and per_seat and steps <= step_limit:
            chosen.clear()
            pi = self._potentials(best)
            s4_costs, s4_masks, s3_costs, s3_masks = self._shifted(pi)
            limit = step_limit
            try:
                visit(full, 0, lists)
                complete = True
            except _OutOfSteps:
                complete = False
        if best_tables is None:
            return Found(None, below, complete, steps)
        split = tuple(
            (a, b, c, d)
            for a, b, c, d in ([i for i in seats if table >> i & 1] for table in best_tables)
        )
        return Found(split, best, complete, steps)


@dataclass(frozen=True, slots=True)
class _Tables:
    """``Partition._every_table``'s lists, per seat."""

    all_costs: list[list[int]]
    all_masks: list[list[int]]
    plain_costs: list[list[int]]
    plain_masks: list[list[int]]
    marked_costs: list[list[int]]
    marked_masks: list[list[int]]
    # Every table: its cost, its mask, its four, its unmarked seats and how many.
    flat: list[tuple[int, int, tuple[int, int, int, int], tuple[int, ...], int]]

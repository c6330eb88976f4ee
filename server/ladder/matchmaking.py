"""Forming tables of four from the ladder queue: pure, no I/O, no clock (time is an input).

A queued player accepts tablemates whose rating mu lies within a *gap* of their own that
widens the longer they wait (``GapSchedule``, config ``[matchmaking]``). A table of four is
*allowed* when its spread fits the narrowest gap among them::

    max(mu) - min(mu) <= min(gap(waited) of each of the four)

``form_tables`` makes tables in one pass, oldest waiting first: for each player still
unseated (by join time, then name) it picks an allowed table around them among the players
still unseated: the one that strands the fewest players in its stretch of the mu order
(those before and after it, modulo 4: seating everyone when the queue is dense), then the
tightest spread. The search is complete for that player:
for a threshold ``t`` (one of the gaps present), the players whose gap is at least ``t`` are
taken in mu order, and the four-player windows around the player in that order are the
tightest sets of them; a set allowed at its own narrowest gap ``t`` is never tighter than
the best such window. So, with no table barred and no ``last_four`` given, nobody is left
over who could have formed an allowed table with three other leftovers. Walking out in mu
order stops at the player's own gap, so a pass over n players costs O(n log n) for the sort
plus a few steps per player while the gaps are alike (they come in steps of
``step_seconds``).

The same four twice in a row: a table whose four players are one of their ``last_four``
(the table the queue last made them) is formed only when nobody else waiting could take one
of their places in an allowed table; otherwise they wait for someone else. ``barred``
tables (the server's farm limit refused them) are never formed.

Seat order: the four are seated by join time, longest waiting first (seat 0; the match
then draws who is East as the rules say), ties by name. Everything is deterministic:
ties are broken by join time, then name.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

Table = tuple[str, str, str, str]


@dataclass(frozen=True, slots=True)
class GapSchedule:
    """How far apart in mu a waiting player accepts tablemates, by seconds waited::

    gap(waited) = min(gap_max, gap_start + gap_step * floor(waited / step_seconds))
    """

    gap_start: float = 3.0
    gap_step: float = 1.0
    step_seconds: float = 10.0
    gap_max: float = 50.0

    def __post_init__(self) -> None:
        if self.step_seconds <= 0:
            raise ValueError(f"step_seconds must be positive, got {self.step_seconds!r}")

    def gap(self, waited: float) -> float:
        steps = math.floor(max(0.0, waited) / self.step_seconds)
        return min(self.gap_max, self.gap_start + self.gap_step * steps)


@dataclass(frozen=True, slots=True)
class Entry:
    """A queued player: ``name`` (the username), ``mu`` to match on (a new player: the
    season's initial mu), ``joined`` (seconds, the caller's clock), and ``last_four``: the
    four names of the last table the queue made for them, or None."""

    name: str
    mu: float
    joined: float
    last_four: frozenset[str] | None = None


def spread(mus: Iterable[float]) -> float:
    values = list(mus)
    return max(values) - min(values)


def allowed(entries: Sequence[Entry], now: float, schedule: GapSchedule) -> bool:
    """Whether ``entries`` (four) may sit together at ``now``."""
    narrowest = min(schedule.gap(now - e.joined) for e in entries)
    return spread(e.mu for e in entries) <= narrowest


def form_tables(
    entries: Sequence[Entry],
    now: float,
    schedule: GapSchedule,
    barred: Collection[frozenset[str]] = (),
) -> list[Table]:
    """The tables one pass of the queue makes at ``now``, each four names in seat order;
    every name at most once (names must be distinct). See the module's docstring."""
    return _Pass(entries, now, schedule, barred).run()


class _Pass:
    def __init__(
        self,
        entries: Sequence[Entry],
        now: float,
        schedule: GapSchedule,
        barred: Collection[frozenset[str]],
    ) -> None:
        self.entries = sorted(entries, key=lambda e: (e.mu, e.joined, e.name))
        self.gaps = [schedule.gap(now - e.joined) for e in self.entries]
        count = len(self.entries)
        # The unseated players as a doubly linked list in mu order (-1: none).
        self.prev = list(range(-1, count - 1))
        self.next = [*range(1, count), -1]
        self.seated = [False] * count
        self.left = count
        self.barred = {frozenset(b) for b in barred}
        # Runs: stretches of the mu order with no step wider than the narrower gap of the two
        # players at it (no table of those two can span it); who is unseated, as a Fenwick
        # tree, to count them within a run (``_stranded``).
        self.run_start = [0] * count
        self.run_end = [count - 1] * count
        for i in range(1, count):
            step = self.entries[i].mu - self.entries[i - 1].mu
            wide = step > min(self.gaps[i], self.gaps[i - 1])
            self.run_start[i] = i if wide else self.run_start[i - 1]
        for i in range(count - 2, -1, -1):
            same = self.run_start[i + 1] == self.run_start[i]
            self.run_end[i] = self.run_end[i + 1] if same else i
        self.tree = [0] + [1] * count
        for i in range(1, count + 1):
            up = i + (i & -i)
            if up <= count:
                self.tree[up] += self.tree[i]

    def run(self) -> list[Table]:
        tables: list[Table] = []
        order = sorted(range(len(self.entries)), key=self._age)
        for anchor in order:
            if self.left < 4:
                break
            if self.seated[anchor]:
                continue
            table = self._best(anchor)
            if table is None:
                continue
            for i in table:
                self._seat(i)
            one, two, three, four = (self.entries[i].name for i in sorted(table, key=self._age))
            tables.append((one, two, three, four))
        return tables

    def _age(self, i: int) -> tuple[float, str]:
        return (self.entries[i].joined, self.entries[i].name)

    def _unseated_before(self, i: int) -> int:
        """How many unseated players come before index ``i`` in mu order."""
        total = 0
        while i > 0:
            total += self.tree[i]
            i -= i & -i
        return total

    def _stranded(self, window: tuple[int, ...]) -> int:
        """The players a table of ``window`` leaves in its run that no table of four
        consecutive players could seat: those before it and those after it, modulo 4.
        Choosing the window that strands fewest lets a dense queue seat everyone at once
        (tightest-first alone leaves a few stragglers between tables)."""
        first, last = window[0], window[-1]
        before = self._unseated_before(first) - self._unseated_before(self.run_start[first])
        after = self._unseated_before(self.run_end[last] + 1) - self._unseated_before(last + 1)
        return before % 4 + after % 4

    def _seat(self, i: int) -> None:
        self.seated[i] = True
        self.left -= 1
        at = i + 1
        while at < len(self.tree):
            self.tree[at] -= 1
            at += at & -at
        before, after = self.prev[i], self.next[i]
        if before >= 0:
            self.next[before] = after
        if after >= 0:
            self.prev[after] = before

    def _side(self, anchor: int, links: list[int]) -> list[int]:
        """The unseated players on one side of ``anchor`` in mu order, nearest first, within
        its gap, up to the third one whose gap is at least the anchor's (no threshold
        window needs more)."""
        mu, gap = self.entries[anchor].mu, self.gaps[anchor]
        found: list[int] = []
        wide = 0
        i = links[anchor]
        while i >= 0 and abs(self.entries[i].mu - mu) <= gap and wide < 3:
            found.append(i)
            if self.gaps[i] >= gap:
                wide += 1
            i = links[i]
        return found

    def _best(self, anchor: int) -> tuple[int, ...] | None:
        """The allowed table around ``anchor`` that strands the fewest players in its run,
        then with the tightest spread, then the oldest players; one that is not the same four
        again if there is one; None: none."""
        below = self._side(anchor, self.prev)
        above = self._side(anchor, self.next)
        gap = self.gaps[anchor]
        thresholds = sorted({self.gaps[i] for i in below + above if self.gaps[i] < gap} | {gap})
        fresh: list[tuple[int, float, list[tuple[float, str]], tuple[int, ...]]] = []
        again: list[tuple[int, float, list[tuple[float, str]], tuple[int, ...]]] = []
        seen: set[tuple[int, ...]] = set()
        for t in thresholds:
            low = [i for i in below if self.gaps[i] >= t][:3]
            high = [i for i in above if self.gaps[i] >= t][:3]
            line = [*reversed(low), anchor, *high]
            at = len(low)
            for start in range(max(0, at - 3), min(at, len(line) - 4) + 1):
                window = tuple(line[start : start + 4])
                width = self.entries[window[-1]].mu - self.entries[window[0]].mu
                if width > t or window in seen:
                    continue
                seen.add(window)
                names = frozenset(self.entries[i].name for i in window)
                if names in self.barred:
                    continue
                key = (self._stranded(window), width, sorted(self._age(i) for i in window), window)
                if any(self.entries[i].last_four == names for i in window):
                    again.append(key)
                else:
                    fresh.append(key)
        if fresh:
            return min(fresh)[-1]
        for *_, window in sorted(again):
            if not self._replaceable(window):
                return window
        return None

    def _replaceable(self, window: tuple[int, ...]) -> bool:
        """Whether an unseated player outside ``window`` could take one of its places in an
        allowed table (then the same four wait for that to happen)."""
        members = set(window)
        i = self._first()
        while i >= 0:
            if i not in members:
                for out in window:
                    four = [j for j in window if j != out] + [i]
                    mus = [self.entries[j].mu for j in four]
                    if max(mus) - min(mus) <= min(self.gaps[j] for j in four):
                        return True
            i = self.next[i]
        return False

    def _first(self) -> int:
        return next((i for i in range(len(self.entries)) if not self.seated[i]), -1)

"""The feed of a table's delayed spectators (``TableSettings.spectator_delay_seconds``), with
the time passed in.

Whatever such spectators would get is kept, time-stamped (``Shown``), and sent once it is
``delay`` seconds old; a new spectator starts from the table as it was ``delay`` seconds
ago (its summary and full update then) and gets what followed as it comes due. Seated
players are never delayed. ``SpectatorFeed`` keeps the entries and, for each delayed
spectator, the number of the next entry it is to get; it decides what to send, and the
table's task sends it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

P = TypeVar("P")  # a spectator's connection (a dict key)


@dataclass(frozen=True, slots=True)
class Shown:
    """One message for the spectators of a table that shows them its play late, numbered
    ``n``, kept from monotonic time ``at``: ``text`` (None: the table as it was when it
    started, nothing new to send), with how a spectator who came then would have found the
    table: its ``summary`` and its ``full`` spectator ``update`` (None before the first
    deal). Never a seat's view: the spectator's projection only."""

    n: int
    at: float
    text: str | None
    summary: dict[str, Any]
    full: str | None


@dataclass(slots=True)
class SpectatorFeed(Generic[P]):
    """The kept entries (``shown``) and each delayed spectator's next one (``watch_next``)."""

    shown: deque[Shown] = field(default_factory=deque)
    watch_next: dict[P, int] = field(default_factory=dict)

    def keep(  # noqa: PLR0917 (an entry and when it is kept)
        self,
        now: float,
        delay: float,
        text: str | None,
        summary: dict[str, Any],
        full: Callable[[], str | None],
        dealt: bool = False,
    ) -> None:
        """Keep ``text`` at ``now``, with the table as a spectator is to find it then: its
        ``summary``, and its full spectator update, ``full()`` if ``dealt`` (the hand
        changed: once per change, whoever watches) or if nothing is kept yet, else the last
        one's."""
        last = self.shown[-1] if self.shown else None
        update = full() if dealt or last is None else last.full
        number = last.n + 1 if last is not None else 0
        self.shown.append(Shown(number, now, text, summary, update))
        self.forget(now, delay)

    def start(self, spectator: P, now: float, delay: float) -> tuple[dict[str, Any], str | None]:
        """``spectator`` starts watching at ``now``: the table's summary and full update
        (None if nothing was dealt, or nothing is old enough yet) as it was ``delay`` seconds
        ago, or, before the delay has passed since the table started, as it started (its
        first entry, sent once due). Something must be kept (``keep``) first."""
        seen = [entry for entry in self.shown if entry.at + delay <= now]
        entry = seen[-1] if seen else self.shown[0]
        self.watch_next[spectator] = entry.n + 1 if seen else entry.n
        return entry.summary, entry.full if seen else None

    def release(
        self, now: float, delay: float, watching: Callable[[P], bool]
    ) -> list[tuple[P, str]]:
        """What each delayed spectator still ``watching`` is to be sent at ``now``: what has
        become ``delay`` seconds old, in order (an entry with no text, how the table
        started: its full update). One who no longer watches is forgotten."""
        sends: list[tuple[P, str]] = []
        if not self.shown:
            return sends
        first = self.shown[0].n
        for spectator, number in list(self.watch_next.items()):
            if not watching(spectator):
                del self.watch_next[spectator]  # gone, or seated since
                continue
            i = max(0, number - first)
            while i < len(self.shown) and self.shown[i].at + delay <= now:
                entry = self.shown[i]
                text = entry.text if entry.text is not None else entry.full
                if text is not None:
                    sends.append((spectator, text))
                i += 1
            self.watch_next[spectator] = first + i
        self.forget(now, delay)
        return sends

    def forget(self, now: float, delay: float) -> None:
        """Forget what every delayed spectator has been sent and no new one needs: all but
        the latest entry ``delay`` old at ``now`` (where a spectator coming now starts)."""
        needed = min(self.watch_next.values(), default=None)
        shown = self.shown
        while (
            len(shown) > 1
            and shown[1].at + delay <= now
            and (needed is None or shown[0].n < needed)
        ):
            shown.popleft()

    def due(self, delay: float) -> float | None:
        """When what was kept last is due (monotonic): the moment ``release`` sends it to a
        delayed spectator (None: nothing is kept)."""
        return self.shown[-1].at + delay if self.shown else None

    def next_release(self, delay: float) -> float | None:
        """When the next entry some delayed spectator waits for is due (monotonic): the
        moment ``release`` sends it. (Every comparison here is ``at + delay <= now``, the
        one sum: ``at <= now - delay`` need not agree with it in floating point, and a task
        woken for an entry that ``release`` then finds not yet due would spin.)"""
        if not self.watch_next or not self.shown:
            return None
        i = max(0, min(self.watch_next.values()) - self.shown[0].n)
        if i >= len(self.shown):
            return None
        return self.shown[i].at + delay

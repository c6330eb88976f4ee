"""A table's durability: its writes to the action log and the database-failure pause.

Every action goes: append it to the log, then apply it; memory never holds an action the
log lacks. ``Durable`` does the writes (``TableStore``) and keeps what waits for the
database: an append whose outcome is unknown (``unsure_seq``: the connection was lost
during the commit), finished hands' records to store (``unstored``), events applied but
not yet sent (``untold``, and whether they end a hand), a table row to save (``unsaved``).

While writes fail the table pauses (``StorePause``): no automatic play, no clock running
out. It tries again after ``first`` seconds, then twice as long each time, up to ``most``;
the first write that works ends the pause, and the table moves its clocks on by the time
it was paused. The pause counts from when the failed write began (a write may wait seconds
for SQLite's lock before it fails). A write of another kind may work while the kind that
failed still fails (a full disk takes a table row's update, not a new action): if that
kind fails again before it has worked once, the pause goes on from where it ended, so the
time between counts as paused too and no one's turn runs out while her move cannot be
stored. Before anything else is written after an unsure append, ``reconcile`` asks the log
how it ended (``settle``).

The time is the given clock's (``now``), looked up at each failure and success, so a test
passes a clock it moves by hand; the store is passed to each write (a table's store may
be replaced, cluster mode's fenced one).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.actions import Event
from engine.match import HandRecord
from server.db.store import ActionRow, Conflict, TableRow
from server.table.ports import TableStore

log = logging.getLogger("guobiao.table")


# The kinds of write a table makes (``StorePause``): its actions, its finished hands, its
# row, its match created, its match finished.
ACTION, HAND, ROW, CREATE, FINISH = "action", "hand", "row", "create", "finish"
# The kinds the table cannot go on without (the hand, or the match, waits for them): after
# one failed, the pause goes on until it works (``StorePause``). A row or a match to create
# may wait while the table goes on (a row is saved at its next change; a match is created
# only once four sit): a write of another kind that works ends a pause they began.
BLOCKING = frozenset({ACTION, HAND, FINISH})


@dataclass(slots=True)
class StorePause:
    """The database-failure pause: since when the table is paused (monotonic; None: it
    is not), when to try again, and the failures in a row; ``owed``, the last ``BLOCKING``
    kind of write that failed and has not worked since, and ``owed_since``, when a write of
    another kind ended the pause meanwhile (a failure of any kind before ``owed`` works
    resumes the pause from then)."""

    down_since: float | None = None
    retry_at: float = 0.0
    failures: int = 0
    owed: str | None = None
    owed_since: float | None = None

    @property
    def down(self) -> bool:
        return self.down_since is not None

    @property
    def failing(self) -> bool:
        """Whether the table is paused, or a kind of write that failed has not worked since
        (its moves may not be stored)."""
        return self.down_since is not None or self.owed is not None

    def failed(
        self, now: float, first: float, most: float, *, kind: str, began: float | None = None
    ) -> float:
        """A write of ``kind``, begun at ``began`` (``now`` if not said), failed at ``now``:
        pause (if not yet: since ``began``, or since the pause that ended while a write
        still failed), and wait before the next try, ``first`` seconds after the first
        failure in a row, twice as long after each next one, at most ``most``. Returns the
        wait."""
        self.failures += 1
        wait = min(first * float(2 ** (self.failures - 1)), most)
        self.retry_at = now + wait
        if self.down_since is None:
            since = now if began is None else min(began, now)
            if self.owed_since is not None:
                since = min(self.owed_since, since)
            self.down_since = since
        self.owed_since = None
        if kind in BLOCKING:
            self.owed = kind
        return wait

    def worked(self, now: float, *, kind: str) -> float | None:
        """A write of ``kind`` worked at ``now``: the pause, if any, ends; returns since
        when it lasted (None: there was none). Until a write of the ``owed`` kind works too,
        the failures in a row are kept, and a new failure resumes the pause from ``now``."""
        since = self.down_since
        self.down_since = None
        if self.owed is None or kind == self.owed:
            self.failures, self.owed, self.owed_since = 0, None, None
        elif since is not None:
            self.owed_since = now
        return since

    def due(self, now: float) -> bool:
        """Whether the next try is due."""
        return now >= self.retry_at


def settle(match_id: int, seq: int, last: ActionRow | None) -> ActionRow | None:
    """How the append of action ``seq`` of match ``match_id``, whose outcome was unknown,
    ended, from the log's ``last`` action: committed after all (that row: apply it), or
    not (None). ``Conflict`` if the log ends elsewhere (another server writes the match?)."""
    stored = last.seq if last is not None else 0
    if stored == seq:
        return last
    if stored == seq - 1:
        return None
    raise Conflict(
        f"match {match_id}: the log ends at action {stored}, the table expected "
        f"{seq - 1} or {seq}: another server writes this match?"
    )


@dataclass(slots=True)
class Durable:
    """The writes of table ``table`` and what waits for them (the module's docstring)."""

    table: str
    now: Callable[[], float]  # the monotonic clock
    first: Callable[[], float]  # the first wait after a failure (looked up at each)
    most: Callable[[], float]  # the longest wait
    # Told when a pause ends: since when, and how long, the table was paused.
    resumed: Callable[[float, float], None]
    pause: StorePause = field(default_factory=StorePause)
    unsure_seq: int | None = None
    unstored: list[HandRecord] = field(default_factory=list)
    untold: list[Event] = field(default_factory=list)
    untold_hand_over: bool = False
    unsaved: bool = False

    def behind(self) -> bool:
        """Whether something applied or attempted still waits for the database."""
        return self.unsure_seq is not None or bool(self.unstored) or bool(self.untold)

    def held(self, events: list[Event], record: HandRecord | None) -> None:
        """Events applied, to be sent once stored; ``record``: the hand they finished, to be
        stored before they are sent."""
        self.untold.extend(events)
        if record is not None:
            self.unstored.append(record)
            self.untold_hand_over = True

    def failed(self, what: str, exc: BaseException, *, kind: str, began: float) -> None:
        """A write of ``kind`` (``what``), begun at ``began``, failed: pause the table (no
        automatic play, no clock running out) and try again later, each time after a
        longer wait."""
        wait = self.pause.failed(self.now(), self.first(), self.most(), kind=kind, began=began)
        if self.pause.failures == 1:
            log.error(
                "table %s: the database failed %s (%r); the table pauses until a write works",
                self.table,
                what,
                exc,
            )
        else:
            log.warning(
                "table %s: the database failed again %s (%r); next try in %.2f s",
                self.table,
                what,
                exc,
                wait,
            )

    def worked(self, kind: str) -> None:
        """A write of ``kind`` worked: the pause, if any, ends, and ``resumed`` is told since
        when and how long the table was paused (its clocks move on by that much)."""
        now = self.now()
        since = self.pause.worked(now, kind=kind)
        if since is None:
            return
        paused = now - since
        self.resumed(since, paused)
        if self.pause.owed is None:
            log.info(
                "table %s: the database works again; resuming after %.2f s", self.table, paused
            )
        else:
            log.info(
                "table %s: the database takes writes again (not yet proven for the %s "
                "write that failed); resuming after %.2f s",
                self.table,
                self.pause.owed,
                paused,
            )

    async def append(  # noqa: PLR0917 (an action row's fields)
        self,
        store: TableStore,
        match_id: int,
        seq: int,
        hand_no: int,
        player: int,
        action: Mapping[str, Any],
        *,
        stand_in: bool = False,
    ) -> bool:
        """Append action ``seq`` (``stand_in``: the server played it for the person whose
        seat it is); False if the write failed (its outcome is then unknown: ``unsure_seq``,
        settled by ``reconcile`` before anything else is written)."""
        began = self.now()
        try:
            await store.append_action(match_id, seq, hand_no, player, action, stand_in=stand_in)
        except Exception as exc:
            self.unsure_seq = seq
            self.failed(f"storing action {seq} of match {match_id}", exc, kind=ACTION, began=began)
            return False
        self.worked(ACTION)
        return True

    async def reconcile(self, store: TableStore, match_id: int) -> ActionRow | None:
        """Settle the append that failed (``settle``): the action to apply now if it was
        stored after all, so memory and the log agree again; else None. (The log answers
        once nothing more of that append can commit: a statement that got no answer may
        yet, server/db/action_log.py; until then it raises, and the table stays paused.)"""
        seq = self.unsure_seq
        assert seq is not None
        found = settle(match_id, seq, await store.last_action(match_id))
        self.unsure_seq = None
        if found is not None:
            log.warning("table %s: action %s was stored after all: applying it", self.table, seq)
        return found

    async def store_hands(self, store: TableStore, match_id: int | None) -> bool:
        """Store the finished hands' records, in order; False (paused) if a write failed."""
        while self.unstored:
            record = self.unstored[0]
            assert match_id is not None
            began = self.now()
            try:
                await store.finish_hand(
                    match_id, record.hand_no, record.to_dict(), list(record.result.deltas)
                )
            except Exception as exc:
                what = f"storing hand {record.hand_no} of match {match_id}"
                self.failed(what, exc, kind=HAND, began=began)
                return False
            self.worked(HAND)
            self.unstored.pop(0)
        return True

    async def save(self, store: TableStore, row: TableRow) -> bool:
        """Save the table's row; if the write fails, the table pauses and saves later."""
        began = self.now()
        try:
            await store.save_table(row)
        except Exception as exc:
            self.unsaved = True
            self.failed(f"saving table {self.table}", exc, kind=ROW, began=began)
            return False
        self.unsaved = False
        self.worked(ROW)
        return True

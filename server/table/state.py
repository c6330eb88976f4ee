"""A table's state: ``TableState``, the fields every room of the owner task shares (its
settings, seats, match, clocks, peers, what waits for the database), and what is read
from them alone: its summary and row, who sits where, the core's view (``TableCore``).

The owner task is built in layers, each a class over the one below, each one job:
``TableState``, ``showing.Showing`` (what viewers are sent), ``playing.Playing`` (the
match: actions, hands, the database), ``seating.Seating`` (joins, leaves, watching,
replacements) and ``task.Table`` (the task: its loop, its inputs, its drive).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from engine.actions import Event
from engine.bots import Bot
from engine.match import Match
from engine.rules import RuleSet
from server.config import BotsSection, TimersSection
from server.db.store import TableRow
from server.fairness import hand_reveals
from server.limits import Buckets
from server.table import sources
from server.table.clock import TableClock
from server.table.core import TableCore
from server.table.durable import Durable
from server.table.inputs import _Input
from server.table.ports import Lease, Peer, TableHost, TableObserver, TableStore, TableSummary
from server.table.seats import HUMAN, Seat
from server.table.settings import TableSettings, listed
from server.table.spectators import SpectatorFeed

log = logging.getLogger("guobiao.table")

# ``analyze`` requests each connection may make: ANALYSES_PER_SECOND sustained, bursts of
# ANALYSIS_BURST (an analysis costs up to a few hundred milliseconds of a worker thread).
ANALYSES_PER_SECOND = 2.0
ANALYSIS_BURST = 4

T = TypeVar("T")


class _Setting(Generic[T]):
    """A ``Table`` attribute that is one field of its ``settings`` (``table.rated`` is
    ``table.settings.rated``), kept so code that reads a table's settings one by one reads
    them as before; setting it replaces ``settings`` with that field changed."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, table: TableState, owner: type | None = None) -> T:
        value: T = getattr(table.settings, self.name)
        return value

    def __set__(self, table: TableState, value: T) -> None:
        changed: dict[str, Any] = {self.name: value}
        table.settings = dataclasses.replace(table.settings, **changed)


@dataclass(eq=False)  # tables are compared and hashed by identity
class TableState:
    """The state of one table. Built with all it needs: its ``id``, its ``settings``
    (``TableSettings``), the rules of its preset (``preset``), the server's ``timers``, a
    ``store`` and a ``host``; the server's ``bot_levels`` (``[bots]``) too. ``start`` runs
    the task; inputs go on ``queue``."""

    id: str
    settings: TableSettings
    preset: RuleSet  # the preset's rules: a new match is played with them
    timers: TimersSection
    store: TableStore
    host: TableHost
    seats: list[Seat | None] = field(default_factory=lambda: [None, None, None, None])
    state: str = "waiting"  # waiting, playing, finished
    match: Match | None = None
    match_id: int | None = None
    salt: bytes = b""
    seq: int = 0  # numbers the table's visible state changes
    log_seq: int = 0  # numbers the stored actions of the match
    peers: dict[Peer, int | None] = field(default_factory=dict)  # connection -> player or None
    history: list[Event] = field(default_factory=list)  # events of the current hand
    clock: TableClock = field(default_factory=TableClock)  # deadline, pause, claim window
    # With a spectator delay: what spectators get, kept until it is that old (``Shown``),
    # and for each delayed spectator the number of the next ``Shown`` it is to get.
    spectators: SpectatorFeed[Peer] = field(default_factory=SpectatorFeed[Peer])
    # ``analyze`` requests, a bucket per connection (a table has a few: bounded anyway).
    analyses: Buckets = field(
        default_factory=lambda: Buckets(
            ANALYSES_PER_SECOND, ANALYSIS_BURST, sources._monotonic, max_keys=32
        )
    )
    # The analyses running in worker threads, one at most per connection (by ``id``).
    analysing: dict[int, asyncio.Task[None]] = field(default_factory=dict)
    bots: dict[int, Bot] = field(default_factory=dict)
    # The server's ``[bots]`` levels: which plays an absent person's seat (``stand_in_level``).
    bot_levels: BotsSection = field(default_factory=BotsSection)
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    queue: asyncio.Queue[_Input] = field(default_factory=asyncio.Queue)
    task: asyncio.Task[None] | None = None
    # The timer that wakes the task when something is due (``Table._next_input``).
    wake_timer: asyncio.TimerHandle | None = None
    told_host: TableSummary | None = None  # the summary last pushed to the host
    told_host_of: tuple[Any, ...] = ()  # what it was made of (``_changed``)
    ended: str | None = None  # its ``match_end``, encoded, once the match is finished
    # With a spectator delay, once the match is finished: when its spectators are shown the
    # end (monotonic). Until then the table stays, and is listed as it was while played.
    end_shown_at: float | None = None
    # The writes and what waits for them, the database-failure pause (``durable``).
    durable: Durable = field(init=False)
    # The players whose move the database refused, each with the update she answered:
    # asked that update again once the table resumes (``Playing._ask_again``).
    refused: dict[int, int] = field(default_factory=dict)
    # The match being made: its seed, salt and seats (kept for every try while they sit).
    new_match: tuple[int, bytes, tuple[str | None, ...]] | None = None
    observer: TableObserver | None = None  # the server's metrics: actions, latency
    # ``[server] stamp_updates``: the updates a player's action causes carry ``input_at``,
    # when the server read it (``serving``: that time, while the action is handled).
    stamp_updates: bool = False
    serving: float | None = None
    # A table waiting for players closes after this many seconds with no person at it (0:
    # never), counted from ``empty_since`` (monotonic; None: someone is there, or it started).
    close_when_empty: float = 0.0
    empty_since: float | None = None
    # Cluster mode: whether this node still runs the table (``_owned``); whether the task
    # waits for its node to know.
    lease: Lease | None = None
    lease_waiting: bool = False
    # Whether the table is told to stop (``stop``, or the lobby's shutdown telling every
    # table first): it makes no move from then on (``_drive``).
    stopping: bool = False
    left: list[_Input] = field(default_factory=list)  # taken, never handled (``unhandled``)

    # Each setting read (or, in a test, replaced) as an attribute of the table.
    rules = _Setting[str]()  # the preset's name
    turn_seconds = _Setting[int]()
    private = _Setting[bool]()
    invite_code = _Setting[str | None]()
    claim_window_ms = _Setting[int]()
    hands = _Setting[int]()
    aids = _Setting[bool]()
    rated = _Setting[bool]()
    ends_at = _Setting[datetime | None]()
    seed = _Setting[int | None]()
    reveals = _Setting[bool]()
    watchable = _Setting[bool]()
    spectator_delay_seconds = _Setting[int]()
    tournament = _Setting[tuple[int, int, int] | None]()

    def __post_init__(self) -> None:
        self.durable = Durable(
            self.id,
            now=sources._monotonic,  # (it reads the clock tests replace)
            first=lambda: sources.STORE_RETRY_FIRST,
            most=lambda: sources.STORE_RETRY_MAX,
            resumed=self._move_clocks,
        )

    @property
    def store_down_since(self) -> float | None:
        """Since when the table is paused by a failing database (None: it is not)."""
        return self.durable.pause.down_since

    @property
    def writes_failing(self) -> bool:
        """Whether the table is paused by a failing database, or a write it cannot go on
        without (a move's) has failed and not worked since (``Durable``): between its
        retries a full disk still takes the table's row, but not its moves."""
        return self.durable.pause.failing

    @property
    def unsaved(self) -> bool:
        """Whether the table's row waits for the database."""
        return self.durable.unsaved

    @property
    def deadline(self) -> float | None:
        """When the server plays for those still deciding (``TableClock.deadline``)."""
        return self.clock.deadline

    @property
    def playing(self) -> bool:
        return self.state == "playing"

    @property
    def rule_set(self) -> RuleSet:
        """The rules of the match in play, else those of the table's preset."""
        if self.match is not None:
            return self.match.rules
        return self.preset

    def end_held(self) -> bool:
        """Whether the match ended but its spectators, who see the table late, are not
        shown the end yet (``end_shown_at``)."""
        due = self.end_shown_at
        return due is not None and sources.time.monotonic() < due

    def summary(self) -> dict[str, Any]:
        """The table as a ``table`` message and a ``tables`` listing show it."""
        return self.settings.summary(
            self.id,
            rule_options=self.rule_set.to_dict(),
            seats=[s.label if s else None for s in self.seats],
            state=self.state,
            hand_no=self.match.hand_index + 1 if self.match else 0,
        )

    def row(self) -> TableRow:
        """The table as the database stores it."""
        return self.settings.row(
            self.id,
            seats=[s.label if s else None for s in self.seats],
            state=self.state,
            created_at=self.created_at,
        )

    def _changed(self) -> None:
        """Push the summary to the host if anything in it changed since the last push.
        Called at once after every change of seats, state, hand or rules (the host's
        listing and seating must never lag: a join elsewhere asks it), and after each
        input and drive as a safety net."""
        self._note_empty()
        # What the summary is made of, cheap to compare: most calls change none of it.
        match = self.match
        held = self.end_held()
        made_of = (
            self.state,
            self.settings,
            self.rule_set,
            match.hand_index if match is not None else None,
            tuple((s.kind, s.name) if s is not None else None for s in self.seats),
            held,
        )
        if made_of == self.told_host_of:
            return
        self.told_host_of = made_of
        listing = self.summary()
        summary = TableSummary(
            table=self.id,
            private=self.settings.private,
            state=self.state,
            players=tuple(s.name for s in self.seats if s is not None and s.kind == HUMAN),
            listing=listing,
            listed=self._listed(listing, held),
        )
        if summary != self.told_host:
            self.told_host = summary
            self.host.table_changed(summary)

    def _listed(self, listing: dict[str, Any], held: bool) -> dict[str, Any] | None:
        """The table's entry in the lobby's listing as anyone may be shown it (``listing``,
        its summary now, as ``settings.listed`` shows it); None if it is not listed: it is
        private, or finished. A finished match whose end its spectators are not shown yet
        (``held``) keeps the entry last listed, that of the table while played: a listing
        that dropped it at once would tell anyone who reads it, its spectators too, that the
        match ended, the delay before they see it."""
        if self.settings.private:
            return None
        if self.state != "finished":
            return listed(listing)
        told = self.told_host
        return told.listed if held and told is not None else None

    def _note_empty(self) -> None:
        """Keep ``empty_since``: since when the table has waited for players with no person
        at it (a seat a person left or lost while it waits is freed; one restored after a
        restart counts once its player is back)."""
        present = any(s is not None and s.kind == HUMAN and s.connected for s in self.seats)
        if self.state != "waiting" or not self.close_when_empty or present:
            self.empty_since = None
        elif self.empty_since is None:
            self.empty_since = sources.time.monotonic()

    def resume(self, match: Match, match_id: int, salt: bytes) -> None:
        """Take up ``match``, rebuilt from its stored log (``server.lobby``), where it was."""
        match.hold_claims = True  # replayed without: the log is the same (``Playing``)
        self.log_seq = len(match.log)
        self.match = match
        self.match_id = match_id
        self.salt = salt
        self.state = "playing"
        # Every update before the crash had a seq of at most two per stored action (the
        # action, and the close of the claim window it opened) plus one per dealt hand:
        # start above that, so a client's seq never goes backwards.
        self.seq = 2 * self.log_seq + match.hand_index + 2
        if match.hand is not None:
            assert match.hand_start is not None  # (a dealt hand was started)
            self.history = [match.hand_start, *match.hand.events]

    def attended_by(self, peer: Peer) -> bool:
        """Whether ``peer`` is at the table now (seated, or watching)."""
        return peer in self.peers

    def seat_of(self, username: str | None) -> int | None:
        for i, seat in enumerate(self.seats):
            if seat is not None and seat.kind == HUMAN and seat.name == username:
                return i
        return None

    def revealed_hands(self) -> list[dict[str, Any]]:
        """Each played hand's seed and salt (``hand_reveals``) once the match is finished;
        nothing before: a seed is secret while its match is played (and, at a duplicate
        session's table, until the session is over: the tournament publishes them)."""
        if self.state != "finished" or self.match is None:
            return []
        return hand_reveals(self.match.seed, self.salt.hex(), len(self.match.records))

    def moved_on(self, lost: float) -> None:
        """The server did not run for the last ``lost`` seconds (``server.stalls``): the
        table's clocks move on by that much, as after a pause."""
        self._move_clocks(sources._monotonic() - lost, lost)

    def _move_clocks(self, since: float, paused: float) -> None:
        """The table was paused ``paused`` seconds from ``since``: its clocks move on by
        that much (no one's time ran out meanwhile)."""
        self.clock.move(since, paused, self.seats)

    def _core(self) -> TableCore:
        """The core's view of the table: its match, seats, clocks and settings (the same
        objects: what the core moves, the table keeps)."""
        assert self.match is not None
        return TableCore(
            self.id,
            self.match,
            self.seats,
            self.clock,
            self.settings,
            self.timers,
            self.seq,
            self.log_seq,
            self.durable.behind(),
        )

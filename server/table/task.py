"""The table's owner task: ``Table``, the one task that drives a live table's match.

Connections put inputs on ``Table.queue`` (``server.table.inputs``); the task handles them
one at a time, plays for bots and absent players, starts hands and finishes the match, and
carries out what that means: database writes (``TableStore``), messages to connections
(``Peer``), news for its host (``TableHost``). What a table is and does: ``server.table``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

import server.table as sources
from engine import analysis
from engine.actions import Action, Event
from engine.bots import BOTS, Bot
from engine.errors import IllegalAction
from engine.match import Match
from engine.rules import RuleSet
from engine.table import Phase, View
from server.accounts import RateLimited
from server.config import TimersSection
from server.db.models import iso
from server.db.store import TableRow
from server.errors import shown
from server.fairness import hand_reveals
from server.limits import Buckets
from server.protocol import encode, error
from server.table import publish
from server.table.clock import TableClock, wakeup
from server.table.core import (
    Append,
    AutoPlay,
    CloseWindow,
    DealHand,
    FinishMatch,
    StopAtCap,
    TableCore,
    auto_action,
    play_refusal,
    safe_action,
    seat_bot,
)
from server.table.durable import Durable
from server.table.errors import LobbyError, StoreDown
from server.table.inputs import (
    AddBotsInput,
    AnalyzeInput,
    BackInput,
    GoneInput,
    JoinInput,
    LeaveInput,
    PlayInput,
    ReplaceInput,
    StopInput,
    SyncInput,
    WatchInput,
    _Input,
)
from server.table.ports import Lease, Peer, TableHost, TableObserver, TableStore, TableSummary
from server.table.seats import BOT, HUMAN, Seat
from server.table.settings import TableSettings
from server.table.spectators import SpectatorFeed

log = logging.getLogger("guobiao.table")

# The table whose task is running (each table's task says so): in cluster mode what it sends
# a connection of another node carries its fencing token (``server.cluster.node``).
speaking: ContextVar[Table | None] = ContextVar("speaking", default=None)

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

    def __get__(self, table: Table, owner: type | None = None) -> T:
        value: T = getattr(table.settings, self.name)
        return value

    def __set__(self, table: Table, value: T) -> None:
        changed: dict[str, Any] = {self.name: value}
        table.settings = dataclasses.replace(table.settings, **changed)


@dataclass(eq=False)  # tables are compared and hashed by identity
class Table:
    """One table and its owner task. Built with all it needs: its ``id``, its ``settings``
    (``TableSettings``), the rules of its preset (``preset``), the server's ``timers``, a
    ``store`` and a ``host``. ``start`` runs the task; inputs go on ``queue``."""

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
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    queue: asyncio.Queue[_Input] = field(default_factory=asyncio.Queue)
    task: asyncio.Task[None] | None = None
    told_host: TableSummary | None = None  # the summary last pushed to the host
    # The writes and what waits for them, the database-failure pause (``durable``).
    durable: Durable = field(init=False)
    new_match: tuple[int, bytes, bool] | None = None  # seed, salt, tried before
    observer: TableObserver | None = None  # the server's metrics: actions, latency
    # A table waiting for players closes after this many seconds with no person at it (0:
    # never), counted from ``empty_since`` (monotonic; None: someone is there, or it started).
    close_when_empty: float = 0.0
    empty_since: float | None = None
    # Cluster mode: whether this node still runs the table (``_owned``); whether the task
    # waits for its node to know; whether ``stop`` was called.
    lease: Lease | None = None
    lease_waiting: bool = False
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
    def unsaved(self) -> bool:
        """Whether the table's row waits for the database."""
        return self.durable.unsaved

    # ----------------------------------------------------------- summary ---

    @property
    def rule_set(self) -> RuleSet:
        """The rules of the match in play, else those of the table's preset."""
        if self.match is not None:
            return self.match.rules
        return self.preset

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
        summary = TableSummary(
            table=self.id,
            private=self.settings.private,
            state=self.state,
            players=tuple(s.name for s in self.seats if s is not None and s.kind == HUMAN),
            listing=self.summary(),
        )
        if summary != self.told_host:
            self.told_host = summary
            self.host.table_changed(summary)

    def _note_empty(self) -> None:
        """Keep ``empty_since``: since when the table has waited for players with no person
        at it (a seat a person left or lost while it waits is freed; one restored after a
        restart counts once its player is back)."""
        present = any(s is not None and s.kind == HUMAN and s.connected for s in self.seats)
        if self.state != "waiting" or not self.close_when_empty or present:
            self.empty_since = None
        elif self.empty_since is None:
            self.empty_since = sources.time.monotonic()

    async def _close_empty(self) -> None:
        """Close the table: it waited ``close_when_empty`` seconds with no person at it. It
        is stored as finished (no match), its spectators get its summary saying so, and the
        host forgets it."""
        log.info("table %s closed: nobody sat at it for %g s", self.id, self.close_when_empty)
        self.state = "finished"
        self._changed()
        await self._save()
        text = encode("table", self.summary())
        for peer in self.peers:  # spectators: nobody sits at it
            peer.send(text)
        self.peers.clear()
        if self.observer is not None:
            self.observer.empty_table_closed()

    def resume(self, match: Match, match_id: int, salt: bytes) -> None:
        """Take up ``match``, rebuilt from its stored log (``server.lobby``), where it was."""
        match.hold_claims = self.holds_claims  # replayed without: the log is the same
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

    @property
    def holds_claims(self) -> bool:
        """Whether the table's claim windows are held (``claim_window_ms``): when a person
        sits at it. Server bots learn nothing from the pause, so all-bot tables play on."""
        return any(s is not None and s.kind == HUMAN for s in self.seats)

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

    def start(self) -> None:
        """Run the table's task (and tell the host what the table is)."""
        self.durable.table = self.id  # (its host may have given it another since)
        self._changed()
        if self.settings.spectator_delay_seconds and not self.spectators.shown:
            self._keep_for_spectators(None, dealt=True)  # the table as it starts
        self.task = asyncio.create_task(self._run(), name=f"table-{self.id}")

    async def stop(self) -> None:
        self.stopping = True
        if self.task is not None and not self.task.done():
            await self.queue.put(StopInput(None, None))
            if self.lease_waiting:  # (it waits for its node, not for inputs)
                self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        for task in list(self.analysing.values()):  # nobody waits for them any more
            task.cancel()

    def unhandled(self) -> list[_Input]:
        """The inputs a stopped table never handled (cluster mode: its node hands them to
        the table's next owner, or tells their senders), taken off its queue."""
        left, self.left = self.left, []
        while not self.queue.empty():
            item = self.queue.get_nowait()
            if not isinstance(item, StopInput):
                left.append(item)
        return left

    # -------------------------------------------------------------- loop ---

    async def _run(self) -> None:
        speaking.set(self)
        failures = 0
        while True:
            try:
                # (Also before the first input: a restored match may play to its end alone.)
                if failures == 0:
                    if not await self._owned():
                        return
                    if await self._drove_to_the_end():
                        return
                item = await self._next_input()
                if isinstance(item, StopInput):
                    return
                if not await self._owned(item):
                    return
                if item is not None:
                    await self._handle(item)
                done = await self._drove_to_the_end()
                failures = 0
                if done:
                    return
            except Exception:
                # A table must not die of one bad input or a passing database error:
                # log it, wait a little (longer each time), and go on from the stored state.
                failures += 1
                log.exception("table %s: error #%s while driving it", self.id, failures)
                await asyncio.sleep(min(0.1 * 2**failures, 10.0))

    async def _owned(self, item: _Input | None = None) -> bool:
        """Whether this node may go on running the table (always, but in cluster mode).

        A node that may have lost the table's lease (not renewed for a lease: its process
        was paused, it cannot reach Redis) does nothing and sends nothing until it knows: the
        table pauses, its clocks stopped, and goes on once the lease is renewed. False once
        it is known lost (another node runs the table: this copy is being dropped) or the
        table is stopping; ``item``, the input taken meanwhile, is then left for the node
        (``unhandled``)."""
        lease = self.lease
        if lease is None or lease.held():
            return True
        owned = False
        since = sources.time.monotonic()
        self.lease_waiting = True
        try:
            owned = not self.stopping and await lease.regained()
        finally:
            self.lease_waiting = False
            if not owned and item is not None:
                self.left.append(item)
        if owned:
            paused = sources.time.monotonic() - since
            self._move_clocks(since, paused)
            log.info("table %s: its lease is renewed; resuming after %.2f s", self.id, paused)
        return owned

    async def _drove_to_the_end(self) -> bool:
        """Drive the table, tell the host what changed; True once the table is finished,
        saved and left by everyone (the host is told to forget it)."""
        await self._drive()
        self._changed()
        empty = self.empty_since
        if empty is not None and sources.time.monotonic() >= empty + self.close_when_empty:
            await self._close_empty()
        if self.spectators.watch_next:
            self._release()
        if self.state == "finished" and not self.peers and not self.unsaved:
            self.host.table_done(self)
            return True
        return False

    async def _next_input(self) -> _Input | None:
        """The next input, or None when it is time to drive the table again."""
        if not self.queue.empty():
            return self.queue.get_nowait()
        timeout = self._wakeup()
        if timeout is not None and timeout <= 0:
            return None
        try:
            # (``asyncio.timeout``, not ``wait_for``: that makes a task of every wait.)
            async with asyncio.timeout(timeout):
                return await self.queue.get()
        except TimeoutError:
            return None

    def _wakeup(self) -> float | None:
        """Seconds until something is due without any input (``clock.wakeup``); while the
        database fails, only the next try (the clocks are paused)."""
        empty = self.empty_since
        return wakeup(
            sources.time.monotonic(),
            self.clock,
            playing=self.state == "playing" and self.match is not None,
            seats=self.seats,
            disconnected_seconds=self.timers.disconnected_seconds,
            release=self._next_release(),  # delayed spectators are sent their due even so
            empty_due=None if empty is None else empty + self.close_when_empty,
            retry_at=self.durable.pause.retry_at if self.durable.pause.down else None,
        )

    @property
    def deadline(self) -> float | None:
        """When the server plays for those still deciding (``TableClock.deadline``)."""
        return self.clock.deadline

    async def _handle(self, item: _Input) -> None:
        peer = item.peer
        try:
            if isinstance(item, JoinInput):
                await self._join(item)
            elif isinstance(item, LeaveInput):
                await self._leave(item)
            elif isinstance(item, AddBotsInput):
                await self._add_bots(item)
            elif isinstance(item, WatchInput):
                self._watch(item)
            elif isinstance(item, SyncInput):
                self._attach_seated(peer)
                if peer is None or peer not in self.peers:
                    raise LobbyError("not_seated", f"you neither sit at nor watch table {self.id}")
                if self.settings.spectator_delay_seconds and self.peers[peer] is None:
                    self._delayed_view(peer, item.reply_to, answer="table")
                elif self.match is None or self.match.hand is None:
                    peer.send(encode("table", self.summary(), item.reply_to))  # nothing dealt
                else:
                    self._send_update(peer, self.peers[peer], [], full=True, reply_to=item.reply_to)
            elif isinstance(item, PlayInput):
                self._attach_seated(peer)
                await self._play(item)
            elif isinstance(item, AnalyzeInput):
                self._analyze(item)
            elif isinstance(item, GoneInput):
                self._gone(item)
            elif isinstance(item, BackInput):
                self._back(item)
            elif isinstance(item, ReplaceInput):
                await self._replace(item)
        except LobbyError as exc:
            if peer is not None:
                peer.send(error(exc.code, exc.reason, item.reply_to))
            if isinstance(item, ReplaceInput):
                log.warning("table %s: seat %s not replaced: %s", self.id, item.seat, exc.reason)
                if item.done is not None and not item.done.done():
                    item.done.set_exception(exc)

    # ------------------------------------------------------ lobby inputs ---

    async def _join(self, item: JoinInput) -> None:
        peer = item.peer
        assert peer is not None and peer.username is not None
        username = peer.username
        mine = self.seat_of(username)
        # A player already seated (a private tournament's table) needs no invite to sit down.
        if self.settings.private and mine is None and item.invite_code != self.settings.invite_code:
            raise LobbyError(
                "wrong_invite", f"table {self.id} is private: a valid invite code is needed"
            )
        if mine is None:
            if self.state != "waiting":
                raise LobbyError("table_started", f"table {self.id} has started without you")
            elsewhere = self.host.seated_at(username)
            if elsewhere is not None and elsewhere != self.id:
                raise LobbyError("already_seated", f"you already sit at table {elsewhere}")
            free = [i for i, s in enumerate(self.seats) if s is None]
            if not free:
                raise LobbyError("table_full", f"table {self.id} is full")
            seat = free[0] if item.seat is None else item.seat
            if self.seats[seat] is not None:
                raise LobbyError("seat_taken", f"seat {seat} of table {self.id} is taken")
            if self.settings.rated:
                await self._check_rated_join(peer, free)
            self.seats[seat] = Seat(HUMAN, username, address=peer.address)
            self._changed()
            mine = seat
        else:
            info = self.seats[mine]
            assert info is not None
            info.connected, info.away_since, info.address = True, None, peer.address
        self.peers[peer] = mine
        peer.send(encode("joined", {"table": self.id, "seat": mine}, item.reply_to))
        await self._lobby_changed()
        if self.state == "playing":
            self._send_update(peer, mine, [], full=True)

    async def _check_rated_join(self, peer: Peer, free: list[int]) -> None:
        """A rated table seats registered accounts only; the last seat also not when its
        four have played as many rated matches together today as the limit allows."""
        if peer.guest:
            raise LobbyError(
                "not_registered",
                f"table {self.id} is rated: only registered accounts play rated matches "
                "(register, or play at a casual table)",
            )
        if len(free) == 1:
            names = [s.name for s in self.seats if s is not None]
            assert peer.username is not None
            refusal = await self.host.rated_refusal([*names, peer.username])
            if refusal is not None:
                raise LobbyError("same_four_limit", refusal)

    async def _leave(self, item: LeaveInput) -> None:
        peer = item.peer
        assert peer is not None
        mine = self.seat_of(peer.username)
        watching = self.peers.pop(peer, -1) is None
        self.spectators.watch_next.pop(peer, None)
        if mine is None:
            if not watching:  # neither seated nor watching: there is nothing to leave
                raise LobbyError("not_seated", f"you neither sit at nor watch table {self.id}")
            peer.send(encode("left", {"table": self.id}, item.reply_to))  # stops watching
            return
        if self.state == "waiting":
            self.seats[mine] = None
        else:
            seat = self.seats[mine]
            assert seat is not None
            seat.connected, seat.away_since = False, sources.time.monotonic()
        self._changed()
        peer.send(encode("left", {"table": self.id}, item.reply_to))
        await self._lobby_changed()

    async def _add_bots(self, item: AddBotsInput) -> None:
        peer = item.peer
        assert peer is not None
        if self.seat_of(peer.username) is None:
            raise LobbyError("not_seated", f"only a player seated at table {self.id} may add bots")
        if item.bot not in BOTS:
            raise LobbyError(
                "bad_message", f"unknown bot {shown(item.bot)}; known: {', '.join(sorted(BOTS))}"
            )
        if self.settings.rated:
            raise LobbyError(
                "rated_table", f"table {self.id} is rated: bots never play rated matches"
            )
        if self.state != "waiting":
            raise LobbyError("table_started", f"table {self.id} has started")
        for i, seat in enumerate(self.seats):
            if seat is None:
                self.seats[i] = Seat(BOT, item.bot)
        self._changed()
        peer.send(encode("table", self.summary(), item.reply_to))
        await self._lobby_changed()

    def _watch(self, item: WatchInput) -> None:
        peer = item.peer
        assert peer is not None
        if self.settings.private and item.invite_code != self.settings.invite_code:
            raise LobbyError(
                "wrong_invite", f"table {self.id} is private: a valid invite code is needed"
            )
        mine = self.seat_of(peer.username)  # a seated player watching keeps its own view
        if mine is None and not self.settings.watchable:
            raise LobbyError(
                "not_watchable",
                f"table {self.id} cannot be watched (a duplicate session's, while it is played)",
            )
        self.peers[peer] = mine
        if mine is None and self.settings.spectator_delay_seconds:
            self._delayed_view(peer, item.reply_to, answer="watching")
            return
        # The summary: a private table is not listed, and the spectator needs its seats' names.
        peer.send(encode("watching", self.summary(), item.reply_to))
        if self.state == "playing":
            self._send_update(peer, mine, [], full=True)

    def _gone(self, item: GoneInput) -> None:
        peer = item.peer
        if peer is None or peer not in self.peers:
            return
        player = self.peers.pop(peer)
        if player is not None and player not in self.peers.values():
            seat = self.seats[player]
            if seat is not None and self.state == "waiting":
                self.seats[player] = None  # nobody waits for a player who is gone
                self._changed()
                self._broadcast_text(encode("table", self.summary()))
            elif seat is not None:
                seat.connected, seat.away_since = False, sources.time.monotonic()

    def _back(self, item: BackInput) -> None:
        peer = item.peer
        assert peer is not None
        mine = self.seat_of(peer.username)
        if mine is None:
            return
        self._sit(peer, mine)
        peer.send(encode("table", self.summary()))
        if self.state == "playing":
            self._send_update(peer, mine, [], full=True)

    def _sit(self, peer: Peer, mine: int) -> None:
        """``peer``, a connection of the player of seat ``mine``, plays the seat from now."""
        seat = self.seats[mine]
        assert seat is not None
        seat.connected, seat.away_since, seat.address = True, None, peer.address
        self.peers[peer] = mine

    def _attach_seated(self, peer: Peer | None) -> None:
        """A connection of a seated player that the table does not know yet (cluster mode:
        a message of hers reached the table's new owner before her re-attach did) plays
        her seat from its first message, as a ``resume`` would have made it: a ``sync`` is
        answered with her view, not ``not_seated``."""
        if peer is None or peer in self.peers:
            return
        mine = self.seat_of(peer.username)
        if mine is not None:
            self._sit(peer, mine)

    async def _replace(self, item: ReplaceInput) -> None:
        """``ReplaceInput``: another occupant for a seat (see there)."""
        index, label = item.seat, item.label
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= 3:
            raise LobbyError("bad_message", f"a seat is 0..3, got {shown(index)}")
        if self.state == "finished":
            raise LobbyError("hand_over", f"table {self.id}'s match is over: its seats stay")
        if label.startswith("bot:"):
            if label[4:] not in BOTS:
                raise LobbyError(
                    "bad_message", f"unknown bot {shown(label)}; known: {', '.join(sorted(BOTS))}"
                )
            if self.settings.rated:
                raise LobbyError(
                    "rated_table", f"table {self.id} is rated: bots never play rated matches"
                )
            seat = Seat(BOT, label[4:])
        else:
            if not label or label != label.strip():
                raise LobbyError(
                    "bad_message", f"a seat's player is a username, got {shown(label)}"
                )
            elsewhere = self.host.seated_at(label)
            if elsewhere is not None and elsewhere != self.id:
                raise LobbyError("already_seated", f"{label} already sits at table {elsewhere}")
            there = self.seat_of(label)
            if there is not None and there != index:
                raise LobbyError("seat_taken", f"{label} already sits at seat {there}")
            # Away until they attach (join_table, resume): played for after the grace.
            seat = Seat.from_label(label, self.timers.restart_grace_seconds)
        before = self.seats[index]
        if before is not None and before.label == label:  # already so: nothing changes
            if item.peer is not None:
                item.peer.send(encode("table", self.summary(), item.reply_to))
            if item.done is not None and not item.done.done():
                item.done.set_result(None)
            return
        self.seats[index] = seat
        self.bots.pop(index, None)  # a bot kept for the seat may not be the new one's
        moved = [peer for peer, player in self.peers.items() if player == index]
        for peer in moved:  # the one replaced no longer sees the seat's tiles
            if self.settings.watchable:
                self.peers[peer] = None
            else:
                del self.peers[peer]
        self._changed()
        await self._save()
        summary = encode("table", self.summary())
        for peer in moved:
            if not self.settings.watchable:
                peer.send(summary)  # the last it hears of the table: it sits there no more
            elif self.settings.spectator_delay_seconds:
                self._delayed_view(peer, None, answer=None)
            else:
                self._send_update(peer, None, [], full=True)
        self._broadcast_text(summary)
        log.info(
            "table %s: seat %s, %s, now played by %s",
            self.id,
            index,
            before.label if before is not None else "empty",
            seat.label,
        )
        if item.peer is not None:
            item.peer.send(encode("table", self.summary(), item.reply_to))
        if item.done is not None and not item.done.done():
            item.done.set_result(None)

    async def _lobby_changed(self) -> None:
        self._broadcast_text(encode("table", self.summary()))
        await self._save()
        if self.state == "waiting" and all(s is not None for s in self.seats):
            await self._start_match()

    # -------------------------------------------------------------- play ---

    async def _play(self, item: PlayInput) -> None:
        peer = item.peer
        assert peer is not None
        player = self.seat_of(peer.username)
        dealt = self.match is not None and self.match.hand is not None
        refusal = play_refusal(self.id, player, self.peers.get(peer), dealt and self.playing)
        if refusal is not None:
            raise refusal
        assert player is not None
        if not await self._catch_up(now=True):
            raise StoreDown(
                f"table {self.id} cannot store actions now (database unavailable): "
                "your action was not taken and nothing changed; try again"
            )
        if self._core().stale(item.seq):
            peer.send(
                error(
                    "stale",
                    f"that answers update {item.seq}; the table is at {self.seq}",
                    item.reply_to,
                )
            )
            self._send_update(peer, player, [], full=True)
            return
        try:
            await self._apply(player, item.action)
        except IllegalAction as exc:
            peer.send(error(exc.code, str(exc), item.reply_to))
        observer = self.observer
        if observer is not None and item.received is not None and self.seq != item.seq:
            # Its update went out (not held by a claim window, nor by the database).
            observer.update_sent(sources.time.monotonic() - item.received)

    def _analyze(self, item: AnalyzeInput) -> None:
        """Start the analysis of the peer's own view (off the event loop: with wild tiles it
        takes up to a few hundred milliseconds); ``_answer_analysis`` sends it. One runs at a
        time per connection, within the connection's bucket (``ANALYSES_PER_SECOND``)."""
        peer = item.peer
        assert peer is not None
        player = self.seat_of(peer.username)
        if player is None or self.peers.get(peer) != player:
            raise LobbyError(
                "not_seated", f"only a player seated at table {self.id} may analyze its hand"
            )
        if not self.settings.aids:
            raise LobbyError("aids_off", f"table {self.id} allows no playing aids")
        match = self.match
        hand = match.hand if match is not None else None
        if hand is None or hand.phase is Phase.OVER or self.state != "playing":
            raise LobbyError("hand_over", "no hand is being played at this table")
        if self.durable.behind():  # the hand is ahead of what the seats were told
            raise StoreDown(f"table {self.id} is waiting for its database; try again")
        key = id(peer)  # a closed peer's id may be reused: no harm
        running = key in self.analysing
        wait = 1.0 if running else self.analyses.take(key)
        if wait:
            refusal = RateLimited(
                "your last analyze request is still being answered"
                if running
                else "too many analyze requests",
                wait,
            )
            payload = {
                "code": refusal.code,
                "reason": refusal.reason,
                "retry_after": refusal.retry_after,
            }
            peer.send(encode("error", payload, item.reply_to))
            return
        task = asyncio.create_task(
            self._answer_analysis(peer, player, (self.seq, hand.view(player)), item.reply_to)
        )
        self.analysing[key] = task
        task.add_done_callback(lambda _: self.analysing.pop(key, None))

    async def _answer_analysis(
        self, peer: Peer, player: int, state: tuple[int, View], reply_to: str | int | None
    ) -> None:
        """Analyse the view of update ``seq`` (``state``; a view is immutable: safe in a
        worker thread) and send it, unless the peer no longer sits there (it logged out)."""
        seq, view = state
        try:
            found = await asyncio.to_thread(analysis.analyze, view)
        except Exception:
            log.exception("table %s: analysing player %s's hand failed", self.id, player)
            peer.send(error("internal_error", "the analysis failed (logged); try again", reply_to))
            return
        if self.peers.get(peer) == player:
            peer.send(
                encode("analysis", {"table": self.id, "seq": seq, **found.to_dict()}, reply_to)
            )

    async def _apply(self, player: int, action: Action) -> None:
        """Check, store, apply, tell: the order that makes database failures and crashes
        harmless.

        The core proposes the append (``TableCore.propose``: a listed action, nothing
        waiting for the database) and applies it only once it is stored
        (``TableCore.stored``), so memory never holds an action the log lacks. A failed
        append raises ``StoreDown`` having changed nothing, and pauses the table
        (``Durable.failed``). A hand's end is sent only once its record is stored too.
        """
        assert self.match_id is not None
        append = self._core().propose(player, action)
        # Committed or not? A connection lost during the commit leaves it unknown: the
        # log is asked (``Durable.reconcile``) before anything else is written.
        stored = await self.durable.append(
            self.store,
            self.match_id,
            append.seq,
            append.hand_no,
            append.player,
            append.action.to_dict(),
        )
        if not stored:
            raise StoreDown(
                f"table {self.id} could not store that action (database unavailable): "
                "it was not taken and nothing changed; try again"
            )
        self._stored(append)
        await self._tell()

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

    @property
    def playing(self) -> bool:
        return self.state == "playing"

    def _stored(self, append: Append) -> None:
        """Apply the stored ``append``; what it shows waits in ``durable`` for ``_tell``."""
        applied = self._core().stored(append)
        self.log_seq = append.seq
        if self.observer is not None:
            self.observer.action_applied()
        self.durable.held(applied.events, applied.record)

    async def _tell(self) -> bool:
        """Store the finished hands' records, then send what was held back; False (the
        table paused) if the database failed."""
        durable = self.durable
        if not await durable.store_hands(self.store, self.match_id):
            return False
        events, durable.untold = durable.untold, []
        if events:
            self._publish(events)
        if durable.untold_hand_over:
            durable.untold_hand_over = False
            self._hand_over()
        return True

    # ------------------------------------------------------ the database ---

    def _move_clocks(self, since: float, paused: float) -> None:
        """The table was paused ``paused`` seconds from ``since``: its clocks move on by
        that much (no one's time ran out meanwhile)."""
        self.clock.move(since, paused, self.seats)

    async def _catch_up(self, now: bool = False) -> bool:
        """While paused: when the next try is due (at once if ``now``), settle the append
        that failed, save the table's row (a write, so the pause ends only once writes
        work again), then store and send what was held back. True when the table is no
        longer paused."""
        durable = self.durable
        if not durable.pause.down:
            return True
        if not now and not durable.pause.due(sources.time.monotonic()):
            return False
        try:
            if durable.unsure_seq is not None:
                assert self.match_id is not None
                found = await durable.reconcile(self.store, self.match_id)
                if found is not None:  # it committed after all: apply it now
                    action = Action.from_dict(found.action)
                    self._stored(Append(found.seq, found.hand_no, found.player, action))
            await self.store.save_table(self.row())
        except Exception as exc:
            durable.failed(f"trying table {self.id} again", exc)
            return False
        durable.unsaved = False
        durable.worked()
        return await self._tell()

    async def _save(self) -> None:
        """Save the table's row; if the database fails, the table pauses and saves later."""
        await self.durable.save(self.store, self.row())

    # ------------------------------------------------------------ driving ---

    async def _drive(self) -> None:
        """Play for whoever the server plays for, start hands, finish the match; while the
        database fails, only try it again when due."""
        if not await self._catch_up():
            return
        full = all(s is not None for s in self.seats)
        if self.state == "waiting" and full:
            # Again, if the database failed the first time; or a table made full (the
            # matchmaking queue's), which nobody joined.
            await self._start_match()
        if self.state != "playing" or self.match is None:
            return
        match = self.match
        while True:
            if self.durable.pause.down:
                return  # paused: _wakeup knows when to try again
            if self.lease is not None and not self.lease.held():
                return  # its node may have lost it: _run waits until it knows (_owned)
            step = self._core().step(sources.time.monotonic(), sources._now())
            if isinstance(step, FinishMatch):
                await self._finish_match()
                return
            if isinstance(step, StopAtCap):
                match.stop()  # the match finishes at the next step, with the scores so far
                log.info(
                    "table %s: time cap %s passed: match %s stops after %s hands",
                    self.id,
                    iso(self.settings.ends_at),
                    self.match_id,
                    len(match.records),
                )
                continue
            if isinstance(step, DealHand):
                self._start_hand()
                continue
            if isinstance(step, CloseWindow):
                await self._close_claims()
                continue
            if not isinstance(step, AutoPlay):
                return  # idle: _wakeup knows when something is due
            hand = match.hand
            for player in step.players:
                if match.hand is not hand or hand is None or player not in hand.awaiting():
                    break
                try:
                    await self._apply(player, self._auto_action(player))
                except StoreDown:
                    return  # paused; played again once the database works
            if self._core().paced(sources.time.monotonic(), step.answering):
                return
            await asyncio.sleep(0)  # let connections breathe between automatic moves
            if not self.queue.empty():
                return  # inputs first (a player coming back, a stop); _run drives again

    async def _close_claims(self) -> None:
        """End the claim window: the table goes on as the answers decide. The close is no
        one's action and is not stored (the stored answers replay to the same state); what
        it shows is sent once any hand it finished is stored (``_tell``)."""
        match = self.match
        assert match is not None
        self.clock.close_window()
        records_before = len(match.records)
        events = match.close_claims()
        finished = match.records[-1] if len(match.records) > records_before else None
        self.durable.held(events, finished)
        await self._tell()

    def _auto_action(self, player: int) -> Action:
        """What the server plays for ``player`` (``core.auto_action``); a bot failure
        never stops the table."""
        match = self.match
        assert match is not None and match.hand is not None
        try:
            seat = self.seats[player]
            bot = self.bots.get(player)
            if bot is None:
                bot = self.bots[player] = seat_bot(seat, player)
            return auto_action(match.hand.view(player), seat, bot)
        except Exception:
            log.exception("table %s: the automatic player failed; playing safe", self.id)
            return safe_action(match.hand.legal_actions(player))

    def hand_commitment(self, hand_no: int) -> str:
        """The commitment to hand ``hand_no``'s wall (``commit``), as every viewer gets it."""
        assert self.match is not None
        return publish.hand_commitment(self.match, self.salt, hand_no)

    def _start_hand(self) -> None:
        match = self.match
        assert match is not None
        hand_no = match.hand_index + 2
        self._broadcast_text(
            encode(
                "commit",
                {"table": self.id, "hand_no": hand_no, "commitment": self.hand_commitment(hand_no)},
            )
        )
        self.history = []
        self.clock.new_hand()
        events = match.start_hand()
        self._changed()  # the hand's number
        self._publish(events)

    def _hand_over(self) -> None:
        match = self.match
        assert match is not None
        if self.settings.reveals:  # (else the tournament publishes them: ``hand_reveals``)
            self._broadcast_text(encode("reveal", self._reveal(match.hand_index + 1)))
        self.clock.hand_over(sources.time.monotonic(), self.timers.hand_pause_seconds)

    def _reveal(self, hand_no: int) -> dict[str, Any]:
        """The ``reveal`` of finished hand ``hand_no`` (``publish.reveal``)."""
        assert self.match is not None
        return publish.reveal(self.id, self.match, self.salt, hand_no)

    async def _start_match(self) -> None:
        """Create the match in the database, then start it. If the database fails, the
        table stays waiting and ``_drive`` tries again with the same seed; a retry first
        looks for the match in case the failed attempt did commit."""
        if self.new_match is None:
            seed = (
                self.settings.seed if self.settings.seed is not None else sources.new_match_seed()
            )
            self.new_match = (seed, sources.secrets.token_bytes(32), False)  # a salt of its own
        seed, salt, tried = self.new_match
        rules = self.preset
        store = self.store
        seats = [s.label if s else None for s in self.seats]
        try:
            found = [
                m.id
                for m in (await store.unfinished_matches() if tried else [])
                if m.table_id == self.id and m.seed == seed and list(m.seats) == seats
            ]
            match_id = found[0] if found else None
            if match_id is None:
                match_id = await store.create_match(
                    self.id,
                    self.settings.rules,
                    seed,
                    salt.hex(),
                    seats,
                    datetime.now(UTC),
                    rule_options=rules.to_dict(),
                    hands_planned=self.settings.hands,
                    **({"rated": True} if self.settings.rated else {}),
                )
        except Exception as exc:
            self.new_match = (seed, salt, True)
            self.durable.failed(f"creating the match of table {self.id}", exc)
            return
        self.durable.worked()
        self.new_match = None
        self.salt = salt
        self.match_id = match_id
        self.match = sources.Match(
            seed, rules, self.match_id, hands=self.settings.hands, hold_claims=self.holds_claims
        )
        self.state = "playing"
        self.seq = 0
        self.log_seq = 0
        self._changed()
        await self._save()  # if it fails, restore still finds the match by its table
        self._broadcast_text(encode("table", self.summary()))
        log.info("match %s started at table %s", self.match_id, self.id)

    async def _finish_match(self) -> None:
        """Store the match as finished (its last hand over: ``match.over``, its length
        reached or the match stopped at the time cap), then tell everyone (``match_end``)."""
        match = self.match
        assert match is not None and self.match_id is not None
        addresses = [s.address if s is not None else None for s in self.seats]
        try:  # a retry is harmless: a finished match is not finished (nor rated) twice
            await self.store.finish_match(
                self.match_id, list(match.scores), sources._now(), addresses
            )
            ratings = await self.store.rating_changes(self.match_id) if self.settings.rated else []
        except Exception as exc:
            self.durable.failed(f"finishing match {self.match_id}", exc)
            return
        self.durable.worked()
        self.state = "finished"
        self.clock.match_over()
        self._changed()
        await self._save()
        self._broadcast_text(
            encode(
                "match_end",
                {
                    "table": self.id,
                    "match": self.match_id,
                    "scores": list(match.scores),
                    "ratings": ratings,
                },
            )
        )
        log.info("match %s finished at table %s: %s", self.match_id, self.id, match.scores)

    # --------------------------------------------------------- publishing ---

    def _publish(self, events: list[Event]) -> None:
        self.seq += 1
        self.history.extend(events)
        delayed = self.settings.spectator_delay_seconds > 0
        # Built once per change, not once per connection: each event's wire form, and the
        # spectators' update (the same text for every spectator).
        wired = publish.wired(events)
        watched: dict[bool, str] = {}  # the spectators' update, by whether it is brief
        for peer, player in list(self.peers.items()):
            if player is not None:
                self._send_update(peer, player, events, wired=wired)
            elif not delayed:
                brief = peer.version >= publish.BRIEF_VERSION
                text = watched.get(brief)
                if text is None:
                    payload = self._update_payload(None, events, wire=wired, brief=brief)
                    assert payload is not None  # (an update is of a hand dealt)
                    text = watched[brief] = encode("update", payload)
                peer.send(text)
        if delayed:
            payload = self._update_payload(None, events, wire=wired)
            assert payload is not None  # (an update is of a hand dealt)
            self._keep_for_spectators(encode("update", payload), dealt=True)

    def _update_payload(
        self,
        player: int | None,
        events: list[Event],
        full: bool = False,
        wire: publish.Wired | None = None,
        brief: bool = False,
    ) -> dict[str, Any] | None:
        """The ``update`` of ``events`` as ``player`` may see it (``publish.update_payload``)."""
        return publish.update_payload(
            self.id,
            self.match,
            self.salt,
            self.seq,
            self.history,
            player,
            events,
            full=full,
            wire=wire,
            brief=brief,
            reveals=self.settings.reveals,
        )

    def _send_update(
        self,
        peer: Peer,
        player: int | None,
        events: list[Event],
        *,
        full: bool = False,
        reply_to: str | int | None = None,
        wired: publish.Wired | None = None,
    ) -> None:
        brief = peer.version >= publish.BRIEF_VERSION
        payload = self._update_payload(player, events, full, wired, brief)
        match = self.match
        if payload is None or match is None or match.hand is None:
            return
        # Only to a seat that must decide: that others have a deadline would tell them that
        # someone may claim.
        asked = player is not None and bool(match.hand.legal_actions(player))
        if asked:
            payload["deadline_ms"] = publish.deadline_ms(
                self.clock.deadline,
                self.clock.deadline_seq,
                self.seq,
                sources.time.monotonic(),
                self.settings.turn_seconds,
            )
        peer.send(encode("update", payload, reply_to))
        if asked:
            peer.prompted(self.id, self.seq)

    def _broadcast_text(self, text: str) -> None:
        """Send ``text`` to everyone at the table: spectators late, if they see it late."""
        delayed = self.settings.spectator_delay_seconds > 0
        for peer, player in list(self.peers.items()):
            if not (delayed and player is None):
                peer.send(text)
        if delayed:
            self._keep_for_spectators(text)

    # ------------------------------------------------ delayed spectators ---

    def _keep_for_spectators(self, text: str | None, *, dealt: bool = False) -> None:
        """Keep ``text`` for the delayed spectators (``SpectatorFeed.keep``), with the table
        as they are to find it then: its full spectator update computed again if ``dealt``
        (the hand changed), else the last one."""

        def full() -> str | None:
            payload = self._update_payload(None, [], full=True)
            return encode("update", payload) if payload is not None else None

        delay = self.settings.spectator_delay_seconds
        self.spectators.keep(sources.time.monotonic(), delay, text, self.summary(), full, dealt)

    def _delayed_view(self, peer: Peer, reply_to: str | int | None, answer: str | None) -> None:
        """Show ``peer``, a spectator, the table as it was ``spectator_delay_seconds`` ago:
        ``answer`` (``watching``, or ``table`` for a ``sync``) with its summary then, then
        its full update then (if anything was dealt), and from there on what followed,
        as it comes due (``_release``). A table that started less than the delay ago
        shows how it started, once that is old enough."""
        if not self.spectators.shown:
            self._keep_for_spectators(None, dealt=True)
        now, delay = sources.time.monotonic(), self.settings.spectator_delay_seconds
        summary, full = self.spectators.start(peer, now, delay)
        if full is not None and answer == "table":  # a sync: its full update is the answer
            peer.send(encode("update", json.loads(full)["payload"], reply_to))
        else:
            if answer is not None:
                peer.send(encode(answer, summary, reply_to))
            if full is not None:
                peer.send(full)

    def _release(self) -> None:
        """Send each delayed spectator what has become ``spectator_delay_seconds`` old."""
        now, delay = sources.time.monotonic(), self.settings.spectator_delay_seconds
        for peer, text in self.spectators.release(now, delay, self._watching):
            peer.send(text)

    def _watching(self, peer: Peer) -> bool:
        """Whether ``peer`` still watches the table (not gone, not seated since)."""
        return self.peers.get(peer, -1) is None

    def _next_release(self) -> float | None:
        """When the next entry some delayed spectator waits for is due (monotonic)."""
        return self.spectators.next_release(self.settings.spectator_delay_seconds)

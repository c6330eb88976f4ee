"""One live table: the owner task that alone drives its match, and the inputs it takes.

A ``Table`` owns its ``engine.match.Match``. Connections never touch it: they put
inputs (joins, actions, syncs, disconnections) on the table's queue, and the
table's task handles them one at a time, so the engine is only ever driven
from one place. The task also plays for bots, for disconnected players and for
players whose time ran out, starts hands, and finishes the match.

A table stands alone: it is given its settings, the timer settings, the rules of its
preset, a ``TableStore`` (the few database methods it uses) and a ``TableHost`` (whoever
created it: the lobby today, a tournament or another node later). It never reaches into
its host; it tells it what changed (``TableHost.table_changed`` with a ``TableSummary``)
and asks it one question (``TableHost.seated_at``: does this player sit elsewhere?).

Every input goes: check it against the engine's legal actions, append it to the
database, apply it, send it. Memory never holds an action the log lacks, so a crash
loses nothing anyone saw, and a failed append refuses the action (``internal_error``,
nothing changed). While the database keeps failing, a table pauses its clocks instead
of playing on into a log it cannot write, and resumes when a write works again (see
``Table._store_failed``). On restart ``server.lobby.Lobby.restore`` rebuilds each
unfinished match by replaying its stored actions through the engine and hands it to a
new table (``Table.resume``).

At a table where a person sits, every discard and added kong opens a claim window
(``engine.table.HandState.hold_claims``): the update stops at the discard for everyone,
answers to it are sent nowhere, and the table goes on (``close_claims``) once every answer
is in and at least ``claim_window_ms`` have passed, whether or not anyone could claim. So no
update, ``seq`` or ``deadline_ms`` tells a seat without an option, or a spectator, whether
another seat had one (docs/protocol.md, "The claim window").

In cluster mode (``server.cluster.node``) a table has a ``Lease``: whether its node still
runs it. Before each input and each automatic move the table asks it; while its node may
have lost the table (its lease not renewed for a lease: the process was paused, Redis cannot
be reached), the table does nothing and sends nothing, its clocks stopped, until the node
knows: it then goes on, or ends (another node runs the table). What the table's task sends a
connection of another node carries the table's fencing token (``speaking``), so that node
drops the words of an owner older than one it has heard.

A seated player may ``analyze`` its hand when the table's ``aids`` allow it: the table
hands that player's own view (nothing else) to ``engine.analysis`` in a worker thread and
sends the answer with the ``seq`` it was taken at (docs/protocol.md, "Playing aids").

A tournament's table (``Lobby.create``'s keyword arguments, docs/protocol.md "Tournament
tables") may have: a time cap ``ends_at`` (checked only between hands, just before a new
one would be dealt: the match then stops with the scores so far, ``engine.match.Match.stop``,
and finishes as any match does); a fixed match ``seed`` (duplicate: the same walls at every
table of a session, each table with its own salt); no ``reveal`` messages (``reveals``
false: ``hand_reveals`` gives the seeds once the session is over); no spectators
(``watchable`` false); spectators who see it ``spectator_delay_seconds`` late: whatever
they would get is kept, time-stamped, in ``Table.shown`` and sent once it is that old
(``Table._release``), and a new spectator starts from the table as it was then. Seated
players are never delayed. ``ReplaceInput`` puts another player (or a bot) in a seat
mid-match (a substitute); the match and its log do not change.

A table made to wait for players (``close_when_empty`` seconds, ``[timers]
empty_table_seconds``) closes itself once it has waited that long with no person at it: its
creator never sat down, or left (``leave_table``, or a lost connection: a waiting table frees
a disconnected player's seat at once; sitting down again is coming back), and nobody else sat
down. It ends as a finished table that played no match (``hand_no`` 0), its spectators told.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import json
import logging
import secrets
import time
from collections import deque
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from engine import analysis
from engine.actions import Action, ActionKind, Event
from engine.bots import BOTS, Bot, make_bot
from engine.errors import IllegalAction
from engine.match import MATCH_HANDS, HandRecord, Match, hand_seed
from engine.rules import RuleSet
from engine.table import Phase, View
from engine.wire import MatchStart
from server import protocol
from server.accounts import RateLimited
from server.config import TimersSection
from server.db.models import iso
from server.db.store import ActionRow, Conflict, MatchRow, TableRow
from server.errors import ServerError, shown
from server.limits import Buckets
from server.protocol import encode, error

if TYPE_CHECKING:
    from server.metrics import Metrics

log = logging.getLogger("guobiao.table")

HUMAN, BOT = "human", "bot"

# The table whose task is running (each table's task says so): in cluster mode what it sends
# a connection of another node carries its fencing token (``server.cluster.node``).
speaking: ContextVar[Table | None] = ContextVar("speaking", default=None)


class Peer(Protocol):
    """A connection as a table sees it."""

    username: str | None
    guest: bool  # a guest account (it may not sit at a rated table)
    address: str  # the client's IP address (recorded with a rated match's players)
    version: int  # the protocol version it speaks: 2 follows the seats from the events

    def send(self, text: str) -> None:
        """Queue ``text`` for the client (never blocks; a slow client is dropped)."""

    def prompted(self, table: str, seq: int) -> None:
        """The update just sent (``seq`` of ``table``) asks the client to act."""


class TableStore(Protocol):
    """The database as a table uses it: exactly these methods of ``server.db.store.Store``
    (a test gives a table an in-memory one, ``tests/server/fakes.py``)."""

    async def save_table(self, row: TableRow) -> None: ...

    async def create_match(  # noqa: PLR0917 (the store's signature)
        self,
        table_id: str,
        rules: str,
        seed: int,
        salt: str,
        seats: Sequence[str | None],
        started_at: datetime,
        *,
        rule_options: Mapping[str, Any] | None = None,
        hands_planned: int = MATCH_HANDS,
        rated: bool = False,
    ) -> int: ...

    async def unfinished_matches(self) -> list[MatchRow]: ...

    async def append_action(
        self, match_id: int, seq: int, hand_no: int, player: int, action: Mapping[str, Any]
    ) -> None: ...

    async def last_action(self, match_id: int) -> ActionRow | None: ...

    async def finish_hand(
        self,
        match_id: int,
        hand_no: int,
        record: Mapping[str, Any],
        deltas: Sequence[int],
        *,
        now: datetime | None = None,
    ) -> bool: ...

    async def finish_match(
        self,
        match_id: int,
        final_scores: Sequence[int],
        ended_at: datetime,
        addresses: Sequence[str | None] | None = None,
    ) -> bool: ...

    async def rating_changes(self, match_id: int) -> list[dict[str, Any]]: ...


class Lease(Protocol):
    """Cluster mode: the table's lease, which says whether this node still runs the table
    (``server.cluster.node.FencedStore``)."""

    token: int  # the fencing token the node runs the table with

    def held(self) -> bool:
        """Whether the node surely holds the table's lease now (cheap: asked often)."""
        ...

    async def regained(self) -> bool:
        """Wait until the node surely holds it again (True), or knows it lost it (False:
        another node runs the table, this one is being dropped)."""
        ...


@dataclass(frozen=True, slots=True)
class TableSummary:
    """What a table tells its host whenever any of it changes: enough to list the table
    and to know who sits where, so no one else ever reads the table's own state."""

    table: str
    private: bool
    state: str  # waiting, playing, finished
    players: tuple[str, ...]  # the usernames of the people seated
    listing: dict[str, Any]  # the table's entry in a ``tables`` reply (``Table.summary``)


class TableHost(Protocol):
    """Whoever created a table and keeps track of it (the lobby; later a tournament or
    another node). A table calls it from its own task only."""

    def seated_at(self, username: str) -> str | None:
        """The id of the unfinished table where ``username`` sits, if any."""

    def table_changed(self, summary: TableSummary) -> None:
        """The table's seats, state, hand or rules changed: here is what it is now."""

    def table_done(self, table: Table) -> None:
        """The table finished and nobody is left at it: forget it."""

    async def rated_refusal(self, usernames: Sequence[str]) -> str | None:
        """Why these four may not start a rated match now (the farm limit), or None."""


class LobbyError(ServerError):
    """A lobby or table request refused; ``code`` is the protocol's error code."""


class StoreDown(LobbyError):
    """The database refused a write: the input was not taken and nothing changed."""

    def __init__(self, reason: str) -> None:
        super().__init__("internal_error", reason)


# A table whose database writes fail tries again after 0.05 s, then twice as long each
# time, up to this long.
STORE_RETRY_FIRST = 0.05
STORE_RETRY_MAX = 2.0


# From this protocol version on, an update that is not full has no seats in its view: the
# client follows them from the events (``engine.follow``).
BRIEF_VERSION = 2

# ``analyze`` requests each connection may make: ANALYSES_PER_SECOND sustained, bursts of
# ANALYSIS_BURST (an analysis costs up to a few hundred milliseconds of a worker thread).
ANALYSES_PER_SECOND = 2.0
ANALYSIS_BURST = 4


def _monotonic() -> float:
    return time.monotonic()  # looked up at each call: tests replace the module's clock


def _now() -> datetime:
    """The time now, UTC: what a time cap (``Table.ends_at``) is compared with, and a
    finished match's end. (Looked up at each call: tests replace it.)"""
    return datetime.now(UTC)


def _wired(events: list[Event]) -> list[tuple[Event, dict[str, Any]]]:
    """Each event with its wire form in an ``update`` (shared by every update of one change:
    not to be modified)."""
    return [(e, {"kind": e.kind, **e.data}) for e in events]


def new_match_seed() -> int:
    """The seed of a new match: 63 random bits. (Tests replace this function to fix a
    match, so a run with faults can be compared with one without.)"""
    return secrets.randbits(63)


@dataclass
class Seat:
    kind: str  # HUMAN or BOT
    name: str  # the username, or the bot's name
    connected: bool = True
    away_since: float | None = None  # monotonic time the human left or lost the connection
    address: str | None = None  # where the human last connected from (rated matches keep it)

    @property
    def label(self) -> str:
        return self.name if self.kind == HUMAN else f"bot:{self.name}"

    @classmethod
    def from_label(cls, label: str, grace: float = 0.0) -> Seat:
        """A seat restored from the database: its player counts as away only after
        ``grace`` seconds, time to reconnect after a restart."""
        if label.startswith("bot:"):
            return cls(BOT, label[4:])
        return cls(HUMAN, label, connected=False, away_since=time.monotonic() + grace)


# ------------------------------------------------------------------ inputs ---


@dataclass(frozen=True, slots=True)
class _Input:
    peer: Peer | None
    reply_to: str | int | None


@dataclass(frozen=True, slots=True)
class JoinInput(_Input):
    seat: int | None
    invite_code: str | None


@dataclass(frozen=True, slots=True)
class LeaveInput(_Input):
    pass


@dataclass(frozen=True, slots=True)
class AddBotsInput(_Input):
    bot: str


@dataclass(frozen=True, slots=True)
class WatchInput(_Input):
    invite_code: str | None


@dataclass(frozen=True, slots=True)
class PlayInput(_Input):
    seq: int
    action: Action
    received: float | None = None  # monotonic time the message was decoded (the metrics')


@dataclass(frozen=True, slots=True)
class SyncInput(_Input):
    pass


@dataclass(frozen=True, slots=True)
class AnalyzeInput(_Input):
    """The playing aids for the peer's own hand (``engine.analysis``)."""


@dataclass(frozen=True, slots=True)
class GoneInput(_Input):
    """The peer's connection closed."""


@dataclass(frozen=True, slots=True)
class BackInput(_Input):
    """A seated player authenticated again (``resume``) on a new connection."""


@dataclass(frozen=True, slots=True)
class ReplaceInput(_Input):
    """Put ``label`` (a username, or ``"bot:NAME"``) in ``seat`` 0..3 in place of whoever
    sits there, mid-match too (a tournament's substitute). The match and its log do not
    change; the table's row is saved and its summary pushed. A connection of the player
    replaced stops getting that seat's view (it becomes a spectator, or, at a table that
    may not be watched, is detached); a new human gets the seat with ``join_table`` (or
    ``resume``). ``done``, when given, gets None once the seat is replaced, or the
    ``LobbyError`` that refused it (a bad seat or label, a finished table, a bot at a rated
    table, a player seated at another table)."""

    seat: int
    label: str
    done: asyncio.Future[None] | None = None


@dataclass(frozen=True, slots=True)
class StopInput(_Input):
    pass


def input_for(peer: Peer, m: protocol.Message) -> tuple[str, _Input] | None:
    """The table a client's message is for and the input it is there, or None if it is no
    table's: the same whether the table is on the client's node or another."""
    if isinstance(m, protocol.JoinTable):
        return m.table, JoinInput(peer, m.id, m.seat, m.invite_code)
    if isinstance(m, protocol.AddBots):
        return m.table, AddBotsInput(peer, m.id, m.bot)
    if isinstance(m, protocol.LeaveTable):
        return m.table, LeaveInput(peer, m.id)
    if isinstance(m, protocol.Watch):
        return m.table, WatchInput(peer, m.id, m.invite_code)
    if isinstance(m, protocol.Play):
        return m.table, PlayInput(peer, m.id, m.seq, m.action, time.monotonic())
    if isinstance(m, protocol.Sync):
        return m.table, SyncInput(peer, m.id)
    if isinstance(m, protocol.Analyze):
        return m.table, AnalyzeInput(peer, m.id)
    return None


# ------------------------------------------------------------------- table ---


def commitment(seed: int, salt: bytes) -> str:
    """``sha256(salt || seed as 8 bytes big-endian)`` in hex (docs/protocol.md, Fairness)."""
    return hashlib.sha256(salt + seed.to_bytes(8, "big")).hexdigest()


def hand_salt(match_salt: bytes, hand_no: int) -> bytes:
    return hashlib.sha256(match_salt + hand_no.to_bytes(2, "big")).digest()


def hand_reveal(match_seed: int, match_salt: bytes, hand_no: int) -> dict[str, Any]:
    """What hand ``hand_no``'s ``reveal`` tells of it: ``hand_no``, its wall ``seed`` (and
    ``seed_hex``, its 8 bytes as hashed: a JSON number above 2**53 loses digits in
    JavaScript, so a browser checks the commitment with this), its ``salt`` and the
    ``commitment`` sent before it was dealt."""
    seed = hand_seed(match_seed, hand_no)
    salt = hand_salt(match_salt, hand_no)
    return {
        "hand_no": hand_no,
        "seed": seed,
        "seed_hex": seed.to_bytes(8, "big").hex(),
        "salt": salt.hex(),
        "commitment": commitment(seed, salt),
    }


def hand_reveals(seed: int, salt_hex: str, hands: int) -> list[dict[str, Any]]:
    """``hand_reveal`` of hands 1..``hands`` of the match of ``seed`` and salt ``salt_hex``
    (a ``MatchRow``'s): the seeds a table with ``reveals`` false never sent, for the
    tournament to publish once its session is over (a duplicate session's walls)."""
    salt = bytes.fromhex(salt_hex)
    return [hand_reveal(seed, salt, hand_no) for hand_no in range(1, hands + 1)]


@dataclass(frozen=True, slots=True)
class Shown:
    """One message for the spectators of a table that shows them its play late
    (``Table.spectator_delay_seconds``), numbered ``n``, kept from monotonic time ``at``:
    ``text`` (None: the table as it was when it started, nothing new to send), with how a
    spectator who came then would have found the table: its ``summary`` and its ``full``
    spectator ``update`` (None before the first deal). Never a seat's view: the spectator's
    projection only."""

    n: int
    at: float
    text: str | None
    summary: dict[str, Any]
    full: str | None


@dataclass(eq=False)  # tables are compared and hashed by identity
class Table:
    """One table and its owner task. Built with all it needs: its settings (``id``, the
    preset's name ``rules`` and its ``preset`` rule set, ``turn_seconds``,
    ``claim_window_ms``, ``private`` and its ``invite_code``, ``hands``: its match's length
    in deals, ``engine.match.Match``'s; a tournament's ``ends_at``, ``seed``, ``reveals``,
    ``watchable``, ``spectator_delay_seconds`` and ``tournament``: the module's docstring),
    the server's ``timers``, a ``store`` and a ``host``. ``start`` runs the task; inputs go
    on ``queue``."""

    id: str
    rules: str  # the preset's name
    preset: RuleSet  # the preset's rules: a new match is played with them
    turn_seconds: int
    private: bool
    invite_code: str | None
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
    deadline: float | None = None  # when the server plays for those still deciding
    deadline_seq: int = -1  # the update the deadline belongs to
    pause_until: float = 0.0
    claim_window_ms: int = 0  # the least a claim window lasts, with a person seated
    hands: int = MATCH_HANDS  # the match's length in deals (create_table's ``hands``)
    aids: bool = True  # whether seated players may ``analyze`` their hands
    rated: bool = False  # its matches change the ladder ratings of its (registered) players
    ends_at: datetime | None = None  # the time cap (UTC): no hand is dealt from then on
    seed: int | None = None  # its match's seed, fixed (duplicate walls); None: a random one
    reveals: bool = True  # whether each hand's seed and salt are sent (``reveal``) as it ends
    watchable: bool = True  # whether anyone not seated may ``watch`` it
    spectator_delay_seconds: int = 0  # how late its spectators get everything
    tournament: tuple[int, int, int] | None = None  # (tournament id, session, table 1..)
    # With a spectator delay: what spectators get, kept until it is that old (``Shown``),
    # and for each delayed spectator the number of the next ``Shown`` it is to get.
    shown: deque[Shown] = field(default_factory=deque)
    watch_next: dict[Peer, int] = field(default_factory=dict)
    # ``analyze`` requests, a bucket per connection (a table has a few: bounded anyway).
    analyses: Buckets = field(
        default_factory=lambda: Buckets(
            ANALYSES_PER_SECOND, ANALYSIS_BURST, _monotonic, max_keys=32
        )
    )
    # The analyses running in worker threads, one at most per connection (by ``id``).
    analysing: dict[int, asyncio.Task[None]] = field(default_factory=dict)
    window_until: float | None = None  # when the open claim window may close
    bots: dict[int, Bot] = field(default_factory=dict)
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    queue: asyncio.Queue[_Input] = field(default_factory=asyncio.Queue)
    task: asyncio.Task[None] | None = None
    told_host: TableSummary | None = None  # the summary last pushed to the host
    # A failing database (``_store_failed``): since when the table is paused (monotonic),
    # when to try again, failures in a row; an append whose outcome is unknown; what was
    # applied but waits for the database: hand records to store, events to send (and
    # whether they end a hand), a table row to save, a match being created (seed, salt).
    store_down_since: float | None = None
    store_retry_at: float = 0.0
    store_failures: int = 0
    unsure_seq: int | None = None
    unstored: list[HandRecord] = field(default_factory=list)
    untold: list[Event] = field(default_factory=list)
    untold_hand_over: bool = False
    unsaved: bool = False
    new_match: tuple[int, bytes, bool] | None = None  # seed, salt, tried before
    metrics: Metrics | None = None  # the server's (server/metrics.py): actions, latency
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

    # ----------------------------------------------------------- summary ---

    @property
    def rule_set(self) -> RuleSet:
        """The rules of the match in play, else those of the table's preset."""
        if self.match is not None:
            return self.match.rules
        return self.preset

    def summary(self) -> dict[str, Any]:
        """The table as a ``table`` message and a ``tables`` listing show it."""
        return {
            "table": self.id,
            "rules": self.rules,
            "rule_options": self.rule_set.to_dict(),
            "turn_seconds": self.turn_seconds,
            "seats": [s.label if s else None for s in self.seats],
            "state": self.state,
            "hand_no": self.match.hand_index + 1 if self.match else 0,
            "private": self.private,
            "claim_window_ms": self.claim_window_ms,
            "hands": self.hands,
            "aids": self.aids,
            "rated": self.rated,
            "reveals": self.reveals,
            "watchable": self.watchable,
            "spectator_delay_seconds": self.spectator_delay_seconds,
            "ends_at": iso(self.ends_at),
            "tournament": (
                None
                if self.tournament is None
                else dict(zip(("id", "session", "table"), self.tournament, strict=True))
            ),
        }

    def row(self) -> TableRow:
        """The table as the database stores it."""
        return TableRow(
            id=self.id,
            rules=self.rules,
            turn_seconds=self.turn_seconds,
            private=self.private,
            invite_code=self.invite_code,
            seats=[s.label if s else None for s in self.seats],
            created_at=self.created_at,
            state=self.state,
            hands=self.hands,
            aids=self.aids,
            rated=self.rated,
            ends_at=self.ends_at,
            seed=self.seed,
            reveals=self.reveals,
            watchable=self.watchable,
            spectator_delay_seconds=self.spectator_delay_seconds,
            tournament=self.tournament,
            claim_window_ms=self.claim_window_ms,
        )

    def _changed(self) -> None:
        """Push the summary to the host if anything in it changed since the last push.
        Called at once after every change of seats, state, hand or rules (the host's
        listing and seating must never lag: a join elsewhere asks it), and after each
        input and drive as a safety net."""
        self._note_empty()
        summary = TableSummary(
            table=self.id,
            private=self.private,
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
            self.empty_since = time.monotonic()

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
        if self.metrics is not None:
            self.metrics.empty_tables_closed.inc()

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
        self._changed()
        if self.spectator_delay_seconds and not self.shown:
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
        since = time.monotonic()
        self.lease_waiting = True
        try:
            owned = not self.stopping and await lease.regained()
        finally:
            self.lease_waiting = False
            if not owned and item is not None:
                self.left.append(item)
        if owned:
            paused = time.monotonic() - since
            self._move_clocks(since, paused)
            log.info("table %s: its lease is renewed; resuming after %.2f s", self.id, paused)
        return owned

    async def _drove_to_the_end(self) -> bool:
        """Drive the table, tell the host what changed; True once the table is finished,
        saved and left by everyone (the host is told to forget it)."""
        await self._drive()
        self._changed()
        empty = self.empty_since
        if empty is not None and time.monotonic() >= empty + self.close_when_empty:
            await self._close_empty()
        if self.watch_next:
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
        """Seconds until something is due without any input: a deadline, the end of the pause
        between hands, an absent player's seat being taken over; while the database
        fails, only the next try (the clocks are paused)."""
        now = time.monotonic()
        release = self._next_release()  # delayed spectators are sent their due even so
        if self.store_down_since is not None:
            retry = self.store_retry_at if release is None else min(release, self.store_retry_at)
            return max(0.0, retry - now)
        times = [t for t in (self.deadline, release) if t is not None]
        if self.empty_since is not None:
            times.append(self.empty_since + self.close_when_empty)
        if self.state == "playing" and self.match is not None:
            if self.pause_until > now:
                times.append(self.pause_until)
            if self.window_until is not None and self.window_until > now:
                times.append(self.window_until)
            grace = self.timers.disconnected_seconds
            for seat in self.seats:
                if seat and seat.kind == HUMAN and seat.away_since is not None:
                    due = seat.away_since + grace
                    if due > now:  # once due, _drive plays for the seat: no more waking
                        times.append(due)
        if not times:
            return None
        return max(0.0, min(times) - now)

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
                if self.spectator_delay_seconds and self.peers[peer] is None:
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
        if self.private and mine is None and item.invite_code != self.invite_code:
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
            if self.rated:
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
        self.watch_next.pop(peer, None)
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
            seat.connected, seat.away_since = False, time.monotonic()
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
        if self.rated:
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
        if self.private and item.invite_code != self.invite_code:
            raise LobbyError(
                "wrong_invite", f"table {self.id} is private: a valid invite code is needed"
            )
        mine = self.seat_of(peer.username)  # a seated player watching keeps its own view
        if mine is None and not self.watchable:
            raise LobbyError(
                "not_watchable",
                f"table {self.id} cannot be watched (a duplicate session's, while it is played)",
            )
        self.peers[peer] = mine
        if mine is None and self.spectator_delay_seconds:
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
                seat.connected, seat.away_since = False, time.monotonic()

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
            if self.rated:
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
            if self.watchable:
                self.peers[peer] = None
            else:
                del self.peers[peer]
        self._changed()
        await self._save()
        summary = encode("table", self.summary())
        for peer in moved:
            if not self.watchable:
                peer.send(summary)  # the last it hears of the table: it sits there no more
            elif self.spectator_delay_seconds:
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
        if player is None or self.peers.get(peer) != player:
            raise LobbyError("not_seated", f"you do not sit at table {self.id}")
        if self.match is None or self.match.hand is None or self.state != "playing":
            raise LobbyError("hand_over", "no hand is being played at this table")
        if not await self._catch_up(now=True):
            raise StoreDown(
                f"table {self.id} cannot store actions now (database unavailable): "
                "your action was not taken and nothing changed; try again"
            )
        if item.seq != self.seq:
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
        metrics = self.metrics
        if metrics is not None and item.received is not None and self.seq != item.seq:
            # Its update went out (not held by a claim window, nor by the database).
            metrics.update_seconds.observe(time.monotonic() - item.received)

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
        if not self.aids:
            raise LobbyError("aids_off", f"table {self.id} allows no playing aids")
        match = self.match
        hand = match.hand if match is not None else None
        if hand is None or hand.phase is Phase.OVER or self.state != "playing":
            raise LobbyError("hand_over", "no hand is being played at this table")
        if self._behind():  # the hand is ahead of what the seats were told
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

        The action must be one the engine lists for ``player`` (the server checks
        membership, the engine knows the rules: ``HandState.apply`` accepts exactly the
        listed actions). It is applied only once its append has committed, so memory never
        holds an action the log lacks. A failed append raises ``StoreDown`` having changed
        nothing, and pauses the table (``_store_failed``). A hand's end is sent only once
        its record is stored too.
        """
        match = self.match
        assert match is not None and self.match_id is not None
        hand = match.hand
        if hand is None or action not in hand.legal_actions(player):
            raise self._refusal(player, action)
        if self._behind():
            raise StoreDown(f"table {self.id} is waiting for its database; try again")
        seq = self.log_seq + 1
        try:
            await self.store.append_action(
                self.match_id, seq, match.hand_index + 1, player, action.to_dict()
            )
        except Exception as exc:
            # Committed or not? A connection lost during the commit leaves it unknown:
            # ``_reconcile`` asks the log before anything else is written.
            self.unsure_seq = seq
            self._store_failed(f"storing action {seq} of match {self.match_id}", exc)
            raise StoreDown(
                f"table {self.id} could not store that action (database unavailable): "
                "it was not taken and nothing changed; try again"
            ) from exc
        self._store_worked()
        self._take(seq, player, action)
        await self._tell()

    def _refusal(self, player: int, action: Action) -> IllegalAction:
        """The engine's reason for refusing ``action``, asked of a copy of the hand: the
        live state is never touched by an action the log does not have."""
        match = self.match
        assert match is not None
        if match.hand is None:
            return IllegalAction("no_hand", "no hand has been dealt yet")
        try:
            copy.deepcopy(match.hand).apply(player, action)
        except IllegalAction as exc:
            return exc
        log.error("table %s: the engine accepts %s but does not list it as legal", self.id, action)
        return IllegalAction("illegal_action", f"{action} is not among the legal actions")

    def _take(self, seq: int, player: int, action: Action) -> None:
        """Apply the stored action ``seq``; what it shows waits in ``untold`` for ``_tell``."""
        match = self.match
        assert match is not None
        records_before = len(match.records)
        self.untold.extend(match.apply(player, action))  # listed as legal: accepted
        self.log_seq = seq
        if self.metrics is not None:
            self.metrics.actions += 1
        if len(match.records) > records_before:
            self.unstored.append(match.records[-1])
            self.untold_hand_over = True

    async def _tell(self) -> bool:
        """Store the finished hands' records, then send what was held back; False (the
        table paused) if the database failed."""
        match_id = self.match_id
        while self.unstored:
            record = self.unstored[0]
            assert match_id is not None
            try:
                await self.store.finish_hand(
                    match_id, record.hand_no, record.to_dict(), list(record.result.deltas)
                )
            except Exception as exc:
                self._store_failed(f"storing hand {record.hand_no} of match {match_id}", exc)
                return False
            self._store_worked()
            self.unstored.pop(0)
        events, self.untold = self.untold, []
        if events:
            self._publish(events)
        if self.untold_hand_over:
            self.untold_hand_over = False
            self._hand_over()
        return True

    # ------------------------------------------------------ the database ---

    def _behind(self) -> bool:
        """Whether something applied or attempted still waits for the database."""
        return self.unsure_seq is not None or bool(self.unstored) or bool(self.untold)

    def _store_failed(self, what: str, exc: BaseException) -> None:
        """A write failed: pause the table (no automatic play, no clock running out) and
        try again later, each time after a longer wait."""
        now = time.monotonic()
        self.store_failures += 1
        wait = min(STORE_RETRY_FIRST * 2 ** (self.store_failures - 1), STORE_RETRY_MAX)
        self.store_retry_at = now + wait
        if self.store_down_since is None:
            self.store_down_since = now
        if self.store_failures == 1:
            log.error(
                "table %s: the database failed %s (%r); the table pauses until a write works",
                self.id,
                what,
                exc,
            )
        else:
            log.warning(
                "table %s: the database failed again %s (%r); next try in %.2f s",
                self.id,
                what,
                exc,
                wait,
            )

    def _store_worked(self) -> None:
        """A write worked: the pause, if any, ends, and every clock is moved on by the time
        the table was paused."""
        self.store_failures = 0
        since = self.store_down_since
        if since is None:
            return
        paused = time.monotonic() - since
        self.store_down_since = None
        self._move_clocks(since, paused)
        log.info("table %s: the database works again; resuming after %.2f s", self.id, paused)

    def _move_clocks(self, since: float, paused: float) -> None:
        """The table was paused ``paused`` seconds from ``since``: its clocks move on by
        that much (no one's time ran out meanwhile)."""
        if self.deadline is not None:
            self.deadline += paused
        if self.pause_until > since:
            self.pause_until += paused
        for seat in self.seats:
            if seat is not None and seat.away_since is not None:
                seat.away_since += paused

    async def _catch_up(self, now: bool = False) -> bool:
        """While paused: when the next try is due (at once if ``now``), settle the append
        that failed, save the table's row (a write, so the pause ends only once writes
        work again), then store and send what was held back. True when the table is no
        longer paused."""
        if self.store_down_since is None:
            return True
        if not now and time.monotonic() < self.store_retry_at:
            return False
        try:
            if self.unsure_seq is not None:
                await self._reconcile()
            await self.store.save_table(self.row())
        except Exception as exc:
            self._store_failed(f"trying table {self.id} again", exc)
            return False
        self.unsaved = False
        self._store_worked()
        return await self._tell()

    async def _reconcile(self) -> None:
        """Settle the append that failed: if it committed after all (the connection was
        lost during the commit), apply it now, so memory and the log agree again."""
        seq = self.unsure_seq
        assert seq is not None and self.match_id is not None
        last = await self.store.last_action(self.match_id)
        stored = last.seq if last is not None else 0
        if stored == seq:
            assert last is not None
            log.warning("table %s: action %s was stored after all: applying it", self.id, seq)
            self.unsure_seq = None
            self._take(seq, last.player, Action.from_dict(last.action))
        elif stored == seq - 1:
            self.unsure_seq = None
        else:
            raise Conflict(
                f"match {self.match_id}: the log ends at action {stored}, the table expected "
                f"{seq - 1} or {seq}: another server writes this match?"
            )

    async def _save(self) -> None:
        """Save the table's row; if the database fails, the table pauses and saves later."""
        try:
            await self.store.save_table(self.row())
        except Exception as exc:
            self.unsaved = True
            self._store_failed(f"saving table {self.id}", exc)
            return
        self.unsaved = False
        self._store_worked()

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
            if self.store_down_since is not None:
                return  # paused: _wakeup knows when to try again
            if self.lease is not None and not self.lease.held():
                return  # its node may have lost it: _run waits until it knows (_owned)
            now = time.monotonic()
            hand = match.hand
            if hand is not None and hand.phase is Phase.OVER and match.over:
                await self._finish_match()
                return
            if now < self.pause_until:
                return  # between hands, or pacing an unattended table; _wakeup knows when
            if hand is None or hand.phase is Phase.OVER:
                if hand is not None and self._capped():
                    # The time cap passed: no new hand; the match finishes now (the first
                    # branch above), with the scores so far.
                    match.stop()
                    log.info(
                        "table %s: time cap %s passed: match %s stops after %s hands",
                        self.id,
                        iso(self.ends_at),
                        self.match_id,
                        len(match.records),
                    )
                    continue
                self._start_hand()
                continue
            answering = match.hold_claims and hand.phase in (Phase.CLAIM, Phase.ROB)
            if answering:
                if self.window_until is None:  # the window opened with the last move
                    self.window_until = now + self.claim_window_ms / 1000
                if hand.claims_answered():
                    if now < self.window_until:
                        self.deadline = None  # nobody is deciding: only the window is due
                        return  # _wakeup knows when
                    await self._close_claims()
                    continue
            if self.deadline is None or self.deadline_seq != self.seq:
                self.deadline = now + self.turn_seconds  # a new decision: a new clock
                self.deadline_seq = self.seq
            waiting = hand.awaiting()
            auto = [p for p in waiting if self._plays_itself(p, now)]
            if not auto and now >= self.deadline:
                auto = waiting  # time is up: the server plays for everyone still deciding
            if not auto:
                return
            for player in auto:
                if self.match.hand is not hand or player not in hand.awaiting():
                    break
                try:
                    await self._apply(player, self._auto_action(player))
                except StoreDown:
                    return  # paused; played again once the database works
            # Nobody seated is here to watch: play on, but slowly, so that abandoned
            # tables do not take the CPU from live ones. (Not for answers to a claim window:
            # a spectator would see it last longer when somebody could claim.)
            pace = self.timers.unattended_move_seconds
            nobody = not any(s and s.kind == HUMAN and s.connected for s in self.seats)
            if pace and nobody and not answering:
                self.pause_until = max(self.pause_until, time.monotonic() + pace)
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
        self.window_until = None
        records_before = len(match.records)
        self.untold.extend(match.close_claims())
        if len(match.records) > records_before:
            self.unstored.append(match.records[-1])
            self.untold_hand_over = True
        await self._tell()

    def _capped(self) -> bool:
        """Whether the table's time cap (``ends_at``) has passed: asked only between two
        hands, just before the next would be dealt, so the hand in play always ends."""
        return self.ends_at is not None and _now() >= self.ends_at

    def _plays_itself(self, player: int, now: float) -> bool:
        seat = self.seats[player]
        if seat is None or seat.kind == BOT:
            return True
        away = seat.away_since
        return away is not None and now - away >= self.timers.disconnected_seconds

    def _auto_action(self, player: int) -> Action:
        """What the server plays for ``player``; a bot failure never stops the table."""
        try:
            return self._chosen_action(player)
        except Exception:
            log.exception("table %s: the automatic player failed; playing safe", self.id)
            assert self.match is not None and self.match.hand is not None
            legal = self.match.hand.legal_actions(player)
            safe = [a for a in legal if a.kind in (ActionKind.PASS, ActionKind.DISCARD)]
            return (safe or legal)[0]

    def _chosen_action(self, player: int) -> Action:
        """A bot's choice for bots and absent players; for a present player out of time,
        the simplest safe move: discard the drawn tile, or pass.

        Every choice depends only on the stored match (its seed and log give the view):
        bots are pure (``engine.bots``: no randomness, memos only of pure functions), so
        the bot kept here carries no state between decisions that could change them, and a
        table restored after a crash plays on exactly as it would have. A bot that ever
        needs randomness must seed it per decision from the match seed and the log position
        (``log_seq``), never carry it across decisions."""
        match = self.match
        assert match is not None and match.hand is not None
        seat = self.seats[player]
        view = match.hand.view(player)
        if seat is not None and seat.kind == HUMAN and seat.connected:
            legal = view.legal
            if any(a.kind is ActionKind.PASS for a in legal):
                return Action(ActionKind.PASS)
            if view.drawn is not None and Action(ActionKind.DISCARD, view.drawn) in legal:
                return Action(ActionKind.DISCARD, view.drawn)
        bot = self.bots.get(player)
        if bot is None:
            name = seat.name if seat is not None and seat.kind == BOT else "default"
            bot = self.bots[player] = make_bot(name, seed=player)
        return bot.choose(view)

    def hand_commitment(self, hand_no: int) -> str:
        """The commitment to hand ``hand_no``'s wall (``commit``), as every viewer gets it."""
        match = self.match
        assert match is not None
        return commitment(match.hand_seed(hand_no), hand_salt(self.salt, hand_no))

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
        self.deadline = None
        self.window_until = None
        events = match.start_hand()
        self._changed()  # the hand's number
        self._publish(events)

    def _hand_over(self) -> None:
        match = self.match
        assert match is not None
        if self.reveals:  # (else the tournament publishes them: ``hand_reveals``)
            self._broadcast_text(encode("reveal", self._reveal(match.hand_index + 1)))
        self.deadline = None
        self.pause_until = time.monotonic() + self.timers.hand_pause_seconds

    def _reveal(self, hand_no: int) -> dict[str, Any]:
        """The ``reveal`` of finished hand ``hand_no``: its seed and salt, the commitment sent
        before it, and the position of its dealer (what ``guobiao verify`` rebuilds from)."""
        match = self.match
        assert match is not None
        record = match.records[hand_no - 1]
        return {
            "table": self.id,
            **hand_reveal(match.seed, self.salt, hand_no),
            "dealer_position": record.dealer_position,
        }

    async def _start_match(self) -> None:
        """Create the match in the database, then start it. If the database fails, the
        table stays waiting and ``_drive`` tries again with the same seed; a retry first
        looks for the match in case the failed attempt did commit."""
        if self.new_match is None:
            seed = self.seed if self.seed is not None else new_match_seed()
            self.new_match = (seed, secrets.token_bytes(32), False)  # a salt of its own
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
                    self.rules,
                    seed,
                    salt.hex(),
                    seats,
                    datetime.now(UTC),
                    rule_options=rules.to_dict(),
                    hands_planned=self.hands,
                    **({"rated": True} if self.rated else {}),
                )
        except Exception as exc:
            self.new_match = (seed, salt, True)
            self._store_failed(f"creating the match of table {self.id}", exc)
            return
        self._store_worked()
        self.new_match = None
        self.salt = salt
        self.match_id = match_id
        self.match = Match(
            seed, rules, self.match_id, hands=self.hands, hold_claims=self.holds_claims
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
            await self.store.finish_match(self.match_id, list(match.scores), _now(), addresses)
            ratings = await self.store.rating_changes(self.match_id) if self.rated else []
        except Exception as exc:
            self._store_failed(f"finishing match {self.match_id}", exc)
            return
        self._store_worked()
        self.state = "finished"
        self.deadline = None
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
        delayed = self.spectator_delay_seconds > 0
        # Built once per change, not once per connection: each event's wire form, and the
        # spectators' update (the same text for every spectator).
        wired = _wired(events)
        watched: dict[bool, str] = {}  # the spectators' update, by whether it is brief
        for peer, player in list(self.peers.items()):
            if player is not None:
                self._send_update(peer, player, events, wired=wired)
            elif not delayed:
                brief = peer.version >= BRIEF_VERSION
                text = watched.get(brief)
                if text is None:
                    payload = self._update_payload(None, events, wired=wired, brief=brief)
                    assert payload is not None  # (an update is of a hand dealt)
                    text = watched[brief] = encode("update", payload)
                peer.send(text)
        if delayed:
            payload = self._update_payload(None, events, wired=wired)
            assert payload is not None  # (an update is of a hand dealt)
            self._keep_for_spectators(encode("update", payload), dealt=True)

    def _update_payload(
        self,
        player: int | None,
        events: list[Event],
        full: bool = False,
        wired: list[tuple[Event, dict[str, Any]]] | None = None,
        brief: bool = False,
    ) -> dict[str, Any] | None:
        """The ``update`` of ``events`` (``full``: of the whole hand; ``wired``: the events
        with their wire forms, ``_wired``, when the caller has them) as ``player`` (None: a
        spectator) may see it, but its deadline; None before the first deal. ``brief``
        (protocol version 2, not ``full``): its view without the seats."""
        match = self.match
        if match is None or match.hand is None:
            return None  # nothing dealt yet: the first update is the deal itself
        if full:
            wired = _wired(self.history)
        elif wired is None:
            wired = _wired(events)
        visible = [form for e, form in wired if e.visible_to(player)]
        payload: dict[str, Any] = {
            "table": self.id,
            "seq": self.seq,
            "hand_no": match.hand_index + 1,
            "events": visible,
            "view": (
                match.hand.brief(player)
                if brief and not full
                else match.hand.view(player).to_dict()
            ),
            "scores": list(match.scores),
            "hands_total": match.hands_total,  # None until a match with dealer repeat ends
        }
        if match.extended:
            payload["repeat"] = match.repeat
            payload["dealer_position"] = match.dealer_position
        if full or (wired and wired[0][0].kind == MatchStart.KIND):
            # The hand's commitment with every update that gives a viewer the hand (its
            # deal, or the whole of it): one who was not there for ``commit`` (a player whose
            # tournament table dealt before he sat down, a spectator who came mid-hand, a
            # reconnection) can check its ``reveal`` all the same.
            payload["commitment"] = self.hand_commitment(match.hand_index + 1)
        if full:
            payload["full"] = True
            if match.last_hand_end and match.hand.phase is not Phase.OVER:
                # How the hand before ended, for a client that missed it (a reconnection
                # between hands); once this hand is over its own result is in ``events``.
                last_hand: dict[str, Any] = {
                    "hand_no": match.hand_index,
                    "events": [
                        form for e, form in _wired(match.last_hand_end) if e.visible_to(player)
                    ],
                }
                if self.reveals:  # its ``reveal`` too, which went by with it
                    last_hand["reveal"] = self._reveal(match.hand_index)
                payload["last_hand"] = last_hand
        return payload

    def _send_update(
        self,
        peer: Peer,
        player: int | None,
        events: list[Event],
        *,
        full: bool = False,
        reply_to: str | int | None = None,
        wired: list[tuple[Event, dict[str, Any]]] | None = None,
    ) -> None:
        brief = peer.version >= BRIEF_VERSION
        payload = self._update_payload(player, events, full, wired, brief)
        match = self.match
        if payload is None or match is None or match.hand is None:
            return
        # Only to a seat that must decide: that others have a deadline would tell them that
        # someone may claim.
        asked = player is not None and bool(match.hand.legal_actions(player))
        if asked:
            if self.deadline is not None and self.deadline_seq == self.seq:
                payload["deadline_ms"] = max(0, int((self.deadline - time.monotonic()) * 1000))
            else:
                payload["deadline_ms"] = self.turn_seconds * 1000
        peer.send(encode("update", payload, reply_to))
        if asked:
            peer.prompted(self.id, self.seq)

    def _broadcast_text(self, text: str) -> None:
        """Send ``text`` to everyone at the table: spectators late, if they see it late."""
        delayed = self.spectator_delay_seconds > 0
        for peer, player in list(self.peers.items()):
            if not (delayed and player is None):
                peer.send(text)
        if delayed:
            self._keep_for_spectators(text)

    # ------------------------------------------------ delayed spectators ---

    def _keep_for_spectators(self, text: str | None, *, dealt: bool = False) -> None:
        """Keep ``text`` for the delayed spectators (``Shown``), with the table as they are
        to find it then: its full spectator update computed again if ``dealt`` (the hand
        changed: once per change, whoever watches), else the last one."""
        last = self.shown[-1] if self.shown else None
        if dealt or last is None:
            payload = self._update_payload(None, [], full=True)
            full = encode("update", payload) if payload is not None else None
        else:
            full = last.full
        number = last.n + 1 if last is not None else 0
        now = time.monotonic()
        self.shown.append(Shown(number, now, text, self.summary(), full))
        self._forget_shown(now - self.spectator_delay_seconds)

    def _delayed_view(self, peer: Peer, reply_to: str | int | None, answer: str | None) -> None:
        """Show ``peer``, a spectator, the table as it was ``spectator_delay_seconds`` ago:
        ``answer`` (``watching``, or ``table`` for a ``sync``) with its summary then, then
        its full update then (if anything was dealt), and from there on what followed,
        as it comes due (``_release``). A table that started less than the delay ago
        shows how it started, once that is old enough."""
        if not self.shown:
            self._keep_for_spectators(None, dealt=True)
        due = time.monotonic() - self.spectator_delay_seconds
        seen = [entry for entry in self.shown if entry.at <= due]
        # Before the delay has passed since the table started: its first entry (how it
        # started), shown once due; else the latest due.
        entry = seen[-1] if seen else self.shown[0]
        full = entry.full if seen else None
        if full is not None and answer == "table":  # a sync: its full update is the answer
            peer.send(encode("update", json.loads(full)["payload"], reply_to))
        else:
            if answer is not None:
                peer.send(encode(answer, entry.summary, reply_to))
            if full is not None:
                peer.send(full)
        self.watch_next[peer] = entry.n + 1 if seen else entry.n

    def _release(self) -> None:
        """Send each delayed spectator what has become ``spectator_delay_seconds`` old, in
        order (an entry with no text, how the table started: its full update)."""
        if not self.shown:
            return
        due = time.monotonic() - self.spectator_delay_seconds
        first = self.shown[0].n
        for peer, number in list(self.watch_next.items()):
            if self.peers.get(peer, -1) is not None:
                del self.watch_next[peer]  # gone, or seated since
                continue
            i = max(0, number - first)
            while i < len(self.shown) and self.shown[i].at <= due:
                entry = self.shown[i]
                text = entry.text if entry.text is not None else entry.full
                if text is not None:
                    peer.send(text)
                i += 1
            self.watch_next[peer] = first + i
        self._forget_shown(due)

    def _forget_shown(self, due: float) -> None:
        """Forget what every delayed spectator has been sent and no new one needs: all but
        the latest entry as old as the delay (where a spectator coming now starts)."""
        needed = min(self.watch_next.values(), default=None)
        shown = self.shown
        while len(shown) > 1 and shown[1].at <= due and (needed is None or shown[0].n < needed):
            shown.popleft()

    def _next_release(self) -> float | None:
        """When the next entry some delayed spectator waits for is due (monotonic)."""
        if not self.watch_next or not self.shown:
            return None
        i = max(0, min(self.watch_next.values()) - self.shown[0].n)
        if i >= len(self.shown):
            return None
        return self.shown[i].at + self.spectator_delay_seconds

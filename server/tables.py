"""Live tables: the lobby, and one owner task per table that alone drives its match.

A ``Table`` owns its ``engine.match.Match``. Connections never touch it: they put
inputs (joins, actions, syncs, disconnections) on the table's queue, and the
table's task handles them one at a time, so the engine is only ever driven
from one place. The task also plays for bots, for disconnected players and for
players whose time ran out, starts hands, and finishes the match.

Every accepted action is appended to the database before anything about it is
sent, so a crash loses nothing anyone saw; on restart ``Lobby.restore`` rebuilds
each unfinished match by replaying its stored actions through the engine.

At a table where a person sits, every discard and added kong opens a claim window
(``engine.table.HandState.hold_claims``): the update stops at the discard for everyone,
answers to it are sent nowhere, and the table goes on (``close_claims``) once every answer
is in and at least ``claim_window_ms`` have passed, whether or not anyone could claim. So no
update, ``seq`` or ``deadline_ms`` tells a seat without an option, or a spectator, whether
another seat had one (docs/protocol.md, "The claim window").
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from engine.actions import Action, ActionKind, Event
from engine.bots import BOTS, Bot, make_bot
from engine.errors import IllegalAction
from engine.match import Match
from engine.rules import RulesError, RuleSet, rule_set_from_dict
from engine.table import Phase
from server.config import Config
from server.db.store import TableRow
from server.errors import ServerError
from server.protocol import MAX_CLAIM_WINDOW_MS, encode, error

log = logging.getLogger("guobiao.tables")

HUMAN, BOT = "human", "bot"


class Peer(Protocol):
    """A connection as a table sees it."""

    username: str | None

    def send(self, text: str) -> None:
        """Queue ``text`` for the client (never blocks; a slow client is dropped)."""

    def prompted(self, table: str, seq: int) -> None:
        """The update just sent (``seq`` of ``table``) asks the client to act."""


class LobbyError(ServerError):
    """A lobby or table request refused; ``code`` is the protocol's error code."""


@dataclass
class Seat:
    kind: str  # HUMAN or BOT
    name: str  # the username, or the bot's name
    connected: bool = True
    away_since: float | None = None  # monotonic time the human left or lost the connection

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


@dataclass(frozen=True, slots=True)
class SyncInput(_Input):
    pass


@dataclass(frozen=True, slots=True)
class GoneInput(_Input):
    """The peer's connection closed."""


@dataclass(frozen=True, slots=True)
class BackInput(_Input):
    """A seated player authenticated again (``resume``) on a new connection."""


@dataclass(frozen=True, slots=True)
class StopInput(_Input):
    pass


# ------------------------------------------------------------------- table ---


def commitment(seed: int, salt: bytes) -> str:
    """``sha256(salt || seed as 8 bytes big-endian)`` in hex (docs/protocol.md, Fairness)."""
    return hashlib.sha256(salt + seed.to_bytes(8, "big")).hexdigest()


def hand_salt(match_salt: bytes, hand_no: int) -> bytes:
    return hashlib.sha256(match_salt + hand_no.to_bytes(2, "big")).digest()


@dataclass(eq=False)  # tables are compared and hashed by identity
class Table:
    id: str
    rules: str
    turn_seconds: int
    private: bool
    invite_code: str | None
    lobby: Lobby
    seats: list[Seat | None] = field(default_factory=lambda: [None, None, None, None])
    state: str = "waiting"  # waiting, playing, finished
    match: Match | None = None
    match_id: int | None = None
    salt: bytes = b""
    seq: int = 0  # numbers the table's visible state changes
    log_seq: int = 0  # numbers the stored actions of the match
    peers: dict[Peer, int | None] = field(default_factory=dict)  # connection -> player or None
    history: list[tuple[int, Event]] = field(default_factory=list)  # events of the current hand
    deadline: float | None = None  # when the server plays for those still deciding
    deadline_seq: int = -1  # the update the deadline belongs to
    pause_until: float = 0.0
    claim_window_ms: int = 0  # the least a claim window lasts, with a person seated
    window_until: float | None = None  # when the open claim window may close
    bots: dict[int, Bot] = field(default_factory=dict)
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    queue: asyncio.Queue[_Input] = field(default_factory=asyncio.Queue)
    task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------- lobby ---

    @property
    def rule_set(self) -> RuleSet:
        """The rules of the match in play, else those of the table's preset."""
        if self.match is not None:
            return self.match.rules
        return self.lobby.presets[self.rules]

    def summary(self) -> dict[str, Any]:
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
        }

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

    def start(self) -> None:
        self.task = asyncio.create_task(self._run(), name=f"table-{self.id}")

    async def stop(self) -> None:
        if self.task is not None and not self.task.done():
            await self.queue.put(StopInput(None, None))
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    # -------------------------------------------------------------- loop ---

    async def _run(self) -> None:
        failures = 0
        while True:
            try:
                if failures == 0:
                    await self._drive()
                item = await self._next_input()
                if isinstance(item, StopInput):
                    return
                if item is not None:
                    await self._handle(item)
                await self._drive()
                failures = 0
                if self.state == "finished" and not self.peers:
                    self.lobby.forget(self)
                    return
            except Exception:
                # A table must not die of one bad input or a passing database error:
                # log it, wait a little (longer each time), and go on from the stored state.
                failures += 1
                log.exception("table %s: error #%s while driving it", self.id, failures)
                await asyncio.sleep(min(0.1 * 2**failures, 10.0))

    async def _next_input(self) -> _Input | None:
        """The next input, or None when it is time to drive the table again."""
        if not self.queue.empty():
            return self.queue.get_nowait()
        timeout = self._wakeup()
        if timeout is not None and timeout <= 0:
            return None
        try:
            return await asyncio.wait_for(self.queue.get(), timeout)
        except TimeoutError:
            return None

    def _wakeup(self) -> float | None:
        """Seconds until something is due without any input: a deadline, the end of the pause
        between hands, an absent player's seat being taken over."""
        now = time.monotonic()
        times = [t for t in (self.deadline,) if t is not None]
        if self.state == "playing" and self.match is not None:
            if self.pause_until > now:
                times.append(self.pause_until)
            if self.window_until is not None and self.window_until > now:
                times.append(self.window_until)
            grace = self.lobby.config.timers.disconnected_seconds
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
                if peer is None or peer not in self.peers:
                    raise LobbyError("not_seated", f"you neither sit at nor watch table {self.id}")
                if self.match is None or self.match.hand is None:
                    peer.send(encode("table", self.summary(), item.reply_to))  # nothing dealt
                else:
                    self._send_update(peer, self.peers[peer], [], full=True, reply_to=item.reply_to)
            elif isinstance(item, PlayInput):
                await self._play(item)
            elif isinstance(item, GoneInput):
                self._gone(item)
            elif isinstance(item, BackInput):
                self._back(item)
        except LobbyError as exc:
            if peer is not None:
                peer.send(error(exc.code, exc.reason, item.reply_to))

    # ------------------------------------------------------ lobby inputs ---

    async def _join(self, item: JoinInput) -> None:
        peer = item.peer
        assert peer is not None and peer.username is not None
        username = peer.username
        if self.private and item.invite_code != self.invite_code:
            raise LobbyError(
                "wrong_invite", f"table {self.id} is private: a valid invite code is needed"
            )
        mine = self.seat_of(username)
        if mine is None:
            if self.state != "waiting":
                raise LobbyError("table_started", f"table {self.id} has started without you")
            elsewhere = self.lobby.table_of(username)
            if elsewhere is not None and elsewhere is not self:
                raise LobbyError("already_seated", f"you already sit at table {elsewhere.id}")
            free = [i for i, s in enumerate(self.seats) if s is None]
            if not free:
                raise LobbyError("table_full", f"table {self.id} is full")
            seat = free[0] if item.seat is None else item.seat
            if self.seats[seat] is not None:
                raise LobbyError("seat_taken", f"seat {seat} of table {self.id} is taken")
            self.seats[seat] = Seat(HUMAN, username)
            mine = seat
        else:
            info = self.seats[mine]
            assert info is not None
            info.connected, info.away_since = True, None
        self.peers[peer] = mine
        peer.send(encode("joined", {"table": self.id, "seat": mine}, item.reply_to))
        await self._lobby_changed()
        if self.state == "playing":
            self._send_update(peer, mine, [], full=True)

    async def _leave(self, item: LeaveInput) -> None:
        peer = item.peer
        assert peer is not None
        mine = self.seat_of(peer.username)
        self.peers.pop(peer, None)
        if mine is None:
            peer.send(encode("left", {"table": self.id}, item.reply_to))
            return
        if self.state == "waiting":
            self.seats[mine] = None
        else:
            seat = self.seats[mine]
            assert seat is not None
            seat.connected, seat.away_since = False, time.monotonic()
        peer.send(encode("left", {"table": self.id}, item.reply_to))
        await self._lobby_changed()

    async def _add_bots(self, item: AddBotsInput) -> None:
        peer = item.peer
        assert peer is not None
        if self.seat_of(peer.username) is None:
            raise LobbyError("not_seated", f"only a player seated at table {self.id} may add bots")
        if item.bot not in BOTS:
            raise LobbyError(
                "bad_message", f"unknown bot {item.bot!r}; known: {', '.join(sorted(BOTS))}"
            )
        if self.state != "waiting":
            raise LobbyError("table_started", f"table {self.id} has started")
        for i, seat in enumerate(self.seats):
            if seat is None:
                self.seats[i] = Seat(BOT, item.bot)
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
        self.peers[peer] = mine
        peer.send(encode("watching", {"table": self.id}, item.reply_to))
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
                self._broadcast_text(encode("table", self.summary()))
            elif seat is not None:
                seat.connected, seat.away_since = False, time.monotonic()

    def _back(self, item: BackInput) -> None:
        peer = item.peer
        assert peer is not None
        mine = self.seat_of(peer.username)
        if mine is None:
            return
        seat = self.seats[mine]
        assert seat is not None
        seat.connected, seat.away_since = True, None
        self.peers[peer] = mine
        peer.send(encode("table", self.summary()))
        if self.state == "playing":
            self._send_update(peer, mine, [], full=True)

    async def _lobby_changed(self) -> None:
        self._broadcast_text(encode("table", self.summary()))
        await self.lobby.save(self)
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

    async def _apply(self, player: int, action: Action) -> None:
        """Apply, store, then tell: the order that makes crashes harmless."""
        match = self.match
        assert match is not None and self.match_id is not None
        hand_no = match.hand_index + 1
        records_before = len(match.records)
        events = match.apply(player, action)  # raises IllegalAction, changing nothing
        self.log_seq += 1
        await self.lobby.store.append_action(
            self.match_id, self.log_seq, hand_no, player, action.to_dict()
        )
        if len(match.records) > records_before:
            record = match.records[-1]
            await self.lobby.store.finish_hand(
                self.match_id, record.hand_no, record.to_dict(), list(record.result.deltas)
            )
        if events:
            self._publish(events)
        if len(match.records) > records_before:
            self._hand_over()

    # ------------------------------------------------------------ driving ---

    async def _drive(self) -> None:
        """Play for whoever the server plays for, start hands, finish the match."""
        if self.state != "playing" or self.match is None:
            return
        match = self.match
        while True:
            now = time.monotonic()
            hand = match.hand
            if hand is not None and hand.phase is Phase.OVER and match.over:
                await self._finish_match()
                return
            if now < self.pause_until:
                return  # between hands, or pacing an unattended table; _wakeup knows when
            if hand is None or hand.phase is Phase.OVER:
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
                await self._apply(player, self._auto_action(player))
            # Nobody seated is here to watch: play on, but slowly, so that abandoned
            # tables do not take the CPU from live ones. (Not for answers to a claim window:
            # a spectator would see it last longer when somebody could claim.)
            pace = self.lobby.config.timers.unattended_move_seconds
            nobody = not any(s and s.kind == HUMAN and s.connected for s in self.seats)
            if pace and nobody and not answering:
                self.pause_until = max(self.pause_until, time.monotonic() + pace)
                return
            await asyncio.sleep(0)  # let connections breathe between automatic moves
            if not self.queue.empty():
                return  # inputs first (a player coming back, a stop); _run drives again

    async def _close_claims(self) -> None:
        """End the claim window: the table goes on as the answers decide. The close is no
        one's action and is not stored (the stored answers replay to the same state)."""
        match = self.match
        assert match is not None and self.match_id is not None
        self.window_until = None
        records_before = len(match.records)
        events = match.close_claims()
        if len(match.records) > records_before:
            record = match.records[-1]
            await self.lobby.store.finish_hand(
                self.match_id, record.hand_no, record.to_dict(), list(record.result.deltas)
            )
        self._publish(events)
        if len(match.records) > records_before:
            self._hand_over()

    def _plays_itself(self, player: int, now: float) -> bool:
        seat = self.seats[player]
        if seat is None or seat.kind == BOT:
            return True
        away = seat.away_since
        return away is not None and now - away >= self.lobby.config.timers.disconnected_seconds

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
        the simplest safe move: discard the drawn tile, or pass."""
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

    def _start_hand(self) -> None:
        match = self.match
        assert match is not None
        hand_no = match.hand_index + 2
        seed = match.hand_seed(hand_no)
        salt = hand_salt(self.salt, hand_no)
        self._broadcast_text(
            encode(
                "commit",
                {"table": self.id, "hand_no": hand_no, "commitment": commitment(seed, salt)},
            )
        )
        self.history = []
        self.deadline = None
        self.window_until = None
        events = match.start_hand()
        self._publish(events)

    def _hand_over(self) -> None:
        match = self.match
        assert match is not None
        hand_no = match.hand_index + 1
        seed = match.hand_seed(hand_no)
        salt = hand_salt(self.salt, hand_no)
        self._broadcast_text(
            encode(
                "reveal",
                {
                    "table": self.id,
                    "hand_no": hand_no,
                    "seed": seed,
                    "salt": salt.hex(),
                    "dealer_position": match.dealer_position,
                    "commitment": commitment(seed, salt),
                },
            )
        )
        self.deadline = None
        self.pause_until = time.monotonic() + self.lobby.config.timers.hand_pause_seconds

    async def _start_match(self) -> None:
        seed = secrets.randbits(63)
        self.salt = secrets.token_bytes(32)
        rules = self.lobby.presets[self.rules]
        self.match_id = await self.lobby.store.create_match(
            self.id,
            self.rules,
            seed,
            self.salt.hex(),
            [s.label if s else None for s in self.seats],
            datetime.now(UTC),
            rule_options=rules.to_dict(),
        )
        self.match = Match(seed, rules, self.match_id, hold_claims=self.holds_claims)
        self.state = "playing"
        self.seq = 0
        self.log_seq = 0
        await self.lobby.save(self)
        self._broadcast_text(encode("table", self.summary()))
        log.info("match %s started at table %s", self.match_id, self.id)

    async def _finish_match(self) -> None:
        match = self.match
        assert match is not None and self.match_id is not None
        await self.lobby.store.finish_match(self.match_id, list(match.scores), datetime.now(UTC))
        self.state = "finished"
        self.deadline = None
        await self.lobby.save(self)
        self._broadcast_text(
            encode(
                "match_end",
                {"table": self.id, "match": self.match_id, "scores": list(match.scores)},
            )
        )
        log.info("match %s finished at table %s: %s", self.match_id, self.id, match.scores)

    # --------------------------------------------------------- publishing ---

    def _publish(self, events: list[Event]) -> None:
        self.seq += 1
        self.history.extend((self.seq, e) for e in events)
        for peer, player in list(self.peers.items()):
            self._send_update(peer, player, events)

    def _send_update(
        self,
        peer: Peer,
        player: int | None,
        events: list[Event],
        full: bool = False,
        reply_to: str | int | None = None,
    ) -> None:
        match = self.match
        if match is None or match.hand is None:
            return  # nothing dealt yet: the first update is the deal itself
        if full:
            events = [e for _, e in self.history]
        visible = [{"kind": e.kind, **e.data} for e in events if e.visible_to(player)]
        payload: dict[str, Any] = {
            "table": self.id,
            "seq": self.seq,
            "hand_no": match.hand_index + 1,
            "events": visible,
            "view": match.hand.view(player).to_dict() if match.hand is not None else None,
            "scores": list(match.scores),
            "hands_total": match.hands_total,  # None until a match with dealer repeat ends
        }
        if match.extended:
            payload["repeat"] = match.repeat
            payload["dealer_position"] = match.dealer_position
        if full:
            payload["full"] = True
        # Only to a seat that must decide: that others have a deadline would tell them that
        # someone may claim.
        if player is not None and match.hand.legal_actions(player):
            if self.deadline is not None and self.deadline_seq == self.seq:
                payload["deadline_ms"] = max(0, int((self.deadline - time.monotonic()) * 1000))
            else:
                payload["deadline_ms"] = self.turn_seconds * 1000
        peer.send(encode("update", payload, reply_to))
        if player is not None and match.hand.legal_actions(player):
            peer.prompted(self.id, self.seq)

    def _broadcast_text(self, text: str) -> None:
        for peer in list(self.peers):
            peer.send(text)


# ------------------------------------------------------------------- lobby ---


class Lobby:
    """All live tables of the server."""

    def __init__(self, config: Config, store: Any) -> None:
        self.config = config
        self.store = store
        self.tables: dict[str, Table] = {}
        self.presets: dict[str, RuleSet] = config.rule_presets()

    def _new_id(self) -> str:
        while True:
            table_id = "t" + secrets.token_hex(3)
            if table_id not in self.tables:
                return table_id

    def listing(self) -> list[dict[str, Any]]:
        return [
            t.summary() for t in self.tables.values() if not t.private and t.state != "finished"
        ]

    def get(self, table_id: str) -> Table:
        table = self.tables.get(table_id)
        if table is None:
            raise LobbyError("no_such_table", f"there is no table {table_id!r}")
        return table

    def table_of(self, username: str | None) -> Table | None:
        for table in self.tables.values():
            if table.state != "finished" and table.seat_of(username) is not None:
                return table
        return None

    async def create(
        self,
        rules: str | None,
        turn_seconds: int | None,
        private: bool,
        *,
        claim_window_ms: int | None = None,
    ) -> Table:
        timers = self.config.timers
        rules = rules or self.config.rules.preset
        if rules not in self.presets:
            raise LobbyError(
                "bad_message", f"unknown rule preset {rules!r}; known: {', '.join(self.presets)}"
            )
        seconds = timers.turn_seconds if turn_seconds is None else turn_seconds
        if not timers.min_turn_seconds <= seconds <= timers.max_turn_seconds:
            raise LobbyError(
                "bad_message",
                f"turn_seconds must be {timers.min_turn_seconds}..{timers.max_turn_seconds}, "
                f"got {seconds}",
            )
        window = timers.claim_window_ms if claim_window_ms is None else claim_window_ms
        if not 0 <= window <= MAX_CLAIM_WINDOW_MS:
            raise LobbyError(
                "bad_message", f"claim_window_ms must be 0..{MAX_CLAIM_WINDOW_MS}, got {window}"
            )
        if len(self.tables) >= self.config.limits.max_tables:
            raise LobbyError("table_full", "the server has as many tables as it may hold")
        table = Table(
            id=self._new_id(),
            rules=rules,
            turn_seconds=seconds,
            private=private,
            invite_code=secrets.token_urlsafe(6) if private else None,
            lobby=self,
            claim_window_ms=window,
        )
        self.tables[table.id] = table
        await self.save(table)
        table.start()
        return table

    def forget(self, table: Table) -> None:
        self.tables.pop(table.id, None)

    async def save(self, table: Table) -> None:
        await self.store.save_table(
            TableRow(
                id=table.id,
                rules=table.rules,
                turn_seconds=table.turn_seconds,
                private=table.private,
                invite_code=table.invite_code,
                seats=[s.label if s else None for s in table.seats],
                created_at=table.created_at,
                state=table.state,
            )
        )

    async def restore(self) -> int:
        """Rebuild the open tables and replay unfinished matches from the database."""
        restored = 0
        matches = {m.table_id: m for m in await self.store.unfinished_matches()}
        for row in await self.store.load_open_tables():
            table = Table(
                id=row.id,
                rules=row.rules,
                turn_seconds=row.turn_seconds,
                private=row.private,
                invite_code=row.invite_code,
                lobby=self,
                created_at=row.created_at,
                claim_window_ms=self.config.timers.claim_window_ms,  # a table's own is not stored
            )
            grace = self.config.timers.restart_grace_seconds
            table.seats = [Seat.from_label(label, grace) if label else None for label in row.seats]
            stored = matches.get(row.id)
            if row.rules not in self.presets and stored is None:
                log.error(
                    "table %s not restored: its rule preset %r is no longer defined "
                    "(its stored rows are kept)",
                    row.id,
                    row.rules,
                )
                continue
            if stored is not None:
                try:
                    await self._replay(table, stored)
                except LobbyError as exc:
                    log.error("table %s not restored: %s (its stored rows are kept)", row.id, exc)
                    continue
            elif row.state == "playing":
                table.state = "waiting"  # the match never got stored: let it start again
            self.tables[table.id] = table
            table.start()
            restored += 1
        return restored

    def _stored_rules(self, stored: Any) -> RuleSet:
        """The rules a stored match was played with: its own options, else its preset."""
        if stored.rule_options is not None:
            try:
                return rule_set_from_dict(stored.rule_options)
            except RulesError as exc:
                raise LobbyError("corrupt_match", f"match {stored.id}: {exc}") from None
        if stored.rules not in self.presets:
            raise LobbyError(
                "corrupt_match", f"match {stored.id}: unknown rule preset {stored.rules!r}"
            )
        return self.presets[stored.rules]

    async def _replay(self, table: Table, stored: Any) -> None:
        match = Match(stored.seed, self._stored_rules(stored), stored.id)
        for seq, hand_no, player, action in await self.store.match_actions(stored.id):
            while match.hand_index + 1 < hand_no:
                match.start_hand()
            match.apply(player, Action.from_dict(action))
            table.log_seq = seq
        for record in match.records:  # a crash may have come between an action and its hand
            await self.store.finish_hand(
                stored.id, record.hand_no, record.to_dict(), list(record.result.deltas)
            )
        match.hold_claims = table.holds_claims  # replayed without: the log is the same
        table.match = match
        table.match_id = stored.id
        table.salt = bytes.fromhex(stored.salt)
        table.state = "playing"
        # Every update before the crash had a seq of at most two per stored action (the
        # action, and the close of the claim window it opened) plus one per dealt hand:
        # start above that, so a client's seq never goes backwards.
        table.seq = 2 * table.log_seq + match.hand_index + 2
        if match.hand is not None:
            table.history = [(table.seq, e) for e in match.hand.events]
        log.info(
            "match %s at table %s restored after %s actions", stored.id, table.id, table.log_seq
        )

    async def shutdown(self) -> None:
        """Stop every table task; what they stored stays (``App.stop`` tells the clients)."""
        for table in list(self.tables.values()):
            await table.stop()

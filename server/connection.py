"""One client's websocket connection: decoding, answering, relaying to its tables.

A ``Connection`` decodes each frame into a typed message (``server.protocol``),
answers account and lobby requests, and hands table inputs to the table's
owner task (``server.table``), or, in cluster mode, to the node that owns the table
(``server.nodes``); it never touches a match itself. What is sent to a
connection during one turn of the event loop is written at the end of that turn, in one
write to its socket while the socket takes it; while it does not (a slow client), messages
wait in a bounded queue per connection that its own writer task empties, so one slow client
cannot hold up a table: when its queue is full it is disconnected.

It sees the server it is on through ``Server`` (``server.app.App`` is one), so that this
module does not import the app.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import struct
import time
from typing import Any, Protocol

from sqlalchemy.exc import SQLAlchemyError
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from server import VERSION, accounts, protocol
from server.config import Config
from server.db.engine import trouble
from server.errors import ServerError
from server.handoff import MAX_MOVES, Handoff, release
from server.ladder.queue import Matchmaker
from server.lobby import Lobby, finished_refusal
from server.messages.outbound import (
    Error,
    LoggedOut,
    Pong,
    Session,
    TableCreated,
    Tables,
    Welcome,
)
from server.metrics import Metrics
from server.nodes import Creator, Nodes
from server.protocol import ProtocolError, encode, error, refusal
from server.table import BackInput, GoneInput, input_for
from server.tournaments.host import Tournaments

log = logging.getLogger("guobiao.server")

WRITE_BATCH = 64  # messages joined into one socket write at most
RATE_STRIKES = 20  # rate-limited messages before the connection is closed as abusive
LISTING_BURST_SECONDS = 8.0  # a connection's listings at once: this many seconds' worth
# Why a connection is closed as it opens (1013) when its address holds as many as it may.
TOO_MANY_FROM_ADDRESS = "too many connections from this address"
REFUSAL_PAUSE = 1.0  # seconds an account request refused by a limit waits for its answer
# What a visitor (a connection with no session) may ask: the lobby's listing and watching a
# table as a spectator (the spectator view, as for anyone watching). Sitting, creating, bots,
# actions, the queue and tournaments need a session.
VISITOR_MESSAGES: tuple[type[protocol.Message], ...] = (
    protocol.ListTables,
    protocol.SubscribeLobby,
    protocol.Watch,
    protocol.Sync,
    protocol.LeaveTable,
)


# The heads of a server's text frames (RFC 6455, 5.2: FIN, the text opcode, no mask, the
# length in 7 bits, or 126 and 16 bits, or 127 and 64 bits), the short ones made once.
_SHORT_HEADS = tuple(bytes((0x81, n)) for n in range(126))
_HEAD_16 = struct.Struct("!BBH")
_HEAD_64 = struct.Struct("!BBQ")


def frame_head(length: int) -> bytes:
    """The head of an unfragmented, unmasked text frame of ``length`` bytes without any
    extension: what websockets' protocol writes before a server's text."""
    if length < 126:
        return _SHORT_HEADS[length]
    if length < 65536:
        return _HEAD_16.pack(0x81, 126, length)
    return _HEAD_64.pack(0x81, 127, length)


def address_of(ws: ServerConnection) -> str:
    """The client's IP address as the server sees it (behind a proxy, the proxy's)."""
    remote = ws.remote_address
    return str(remote[0]) if isinstance(remote, tuple) and remote else "unknown"


class Server(Protocol):
    """What a connection uses of the server it is on (``server.app.App``)."""

    config: Config
    store: Any
    guard: accounts.Guard
    metrics: Metrics
    nodes: Nodes
    lobby: Lobby | None
    matchmaker: Matchmaker | None
    slow_drops: int
    handoff: Handoff | None

    @property
    def tournaments_host(self) -> Tournaments: ...

    def new_cid(self) -> str: ...

    @property
    def end_of_turn(self) -> EndOfTurn: ...


class EndOfTurn:
    """The connections sent something during this turn of the event loop, written at its
    end from one callback. (A callback of its own for each cost a handle per connection:
    four an action at a table, a tenth of what the server spends outside the rules.)"""

    def __init__(self) -> None:
        self.due: list[Connection] = []
        self.scheduled = False

    def add(self, conn: Connection) -> None:
        self.due.append(conn)
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_running_loop().call_soon(self.write)

    def write(self) -> None:
        self.scheduled = False
        due, self.due = self.due, []
        for conn in due:
            try:
                conn._flush()
            except Exception:  # one connection's failure is not the others'
                log.exception("writing to connection %s failed", conn.cid)


class Connection:
    """One client: its account, its rate limit, its outgoing queue."""

    def __init__(self, ws: ServerConnection, app: Server) -> None:
        self.ws = ws
        self.app = app
        self.username: str | None = None
        self.guest = False
        self.token: str | None = None
        # The client's IP address: the account limits, the tables waiting for players and
        # the connections count per address (behind a proxy, the proxy's).
        self.address = address_of(ws)
        self.greeted = False
        self.version = 1  # the protocol version spoken (``hello``)
        limits = app.config.limits
        # Sent during this turn of the event loop, written at its end (``_flush``).
        self.pending: list[bytes] = []
        self.flushing = False  # due at the end of this turn (``app.end_of_turn``)
        # Waiting for the socket (a slow client): emptied by the writer task, in order. Both
        # made the first time the socket is full (``_queue``): most connections never need
        # them, and a task waiting on a queue is about 3 KiB a connection.
        self.outbox: asyncio.Queue[bytes | None] | None = None
        self.writer: asyncio.Task[None] | None = None
        self.send_queue = limits.send_queue
        self.send_queue_bytes = limits.send_queue_bytes
        self.queued_bytes = 0  # in the outbox, and in the writer's batch until it is written
        self.writing = False  # the writer task is sending (its batch is out of the outbox)
        self.tokens = float(limits.message_burst)
        self.listing_budget = LISTING_BURST_SECONDS * limits.listing_bytes_per_second
        self.listing_refilled = time.monotonic()
        self.refilled = time.monotonic()
        self.strikes = 0
        self.refusals = 0  # account requests refused by a limit in a row
        self.prompts: dict[str, int] = {}  # table -> seq of its latest update asking us to act
        # The tables this connection is at (on this node or another), each with the watch
        # frame that made it a spectator there (None: a player, or not yet known).
        self.tables: dict[str, str | None] = {}
        self.cid = app.new_cid()  # unique in the cluster: how other nodes address it
        self.relayed: set[str] = set()  # the other nodes this connection spoke to
        self.queue_frame: str | None = None  # its queue_join, while queued by another node
        self.frame: str | bytes = ""  # the frame being dispatched
        self.dropped = False
        self.moves = 0  # times it was handed from one worker to another (``server.handoff``)

    # --------------------------------------------------------- outgoing ---

    def send(self, text: str) -> None:
        """Send ``text`` (one text frame) at the end of this turn of the event loop."""
        if self.dropped:
            return
        self.pending.append(self._bytes(text))
        if not self.flushing:
            self.flushing = True
            self.app.end_of_turn.add(self)

    def _flush(self) -> None:
        """Write what was sent during this turn of the loop: straight to the socket, all in
        one write, when nothing waits before it and the socket takes it (the client reads
        what it is sent); else into the outbox, for the writer task to send as the socket
        drains. An outbox full is a client too slow: it is disconnected."""
        self.flushing = False
        frames, self.pending = self.pending, []
        if self.dropped or not frames:
            return
        ws = self.ws
        if (
            (self.outbox is None or self.outbox.empty())
            and not self.writing
            and not ws.paused
            and ws.protocol.state is State.OPEN
        ):
            # What ``ws.send`` does, without its coroutine and wait: the socket is not
            # paused, so there is nothing to wait for. (A batch the protocol could not take
            # would raise before anything is written.)
            protocol = ws.protocol
            if protocol.extensions or protocol.debug:
                for data in frames:
                    protocol.send_text(data)
                ws.transport.write(b"".join(protocol.data_to_send()))
                return
            # No extension (the server negotiates no compression): each frame is its head
            # and the text, as the protocol would make it (``frame_head``), without its
            # frame object and buffer per frame. Anything the protocol queued itself goes
            # first.
            parts = protocol.data_to_send()
            for data in frames:
                parts.append(frame_head(len(data)))
                parts.append(data)
            ws.transport.write(b"".join(parts))
            return
        outbox = self._queue()
        for data in frames:
            if self.queued_bytes + len(data) > self.send_queue_bytes:
                self._drop_slow()
                return
            try:
                outbox.put_nowait(data)
            except asyncio.QueueFull:
                self._drop_slow()
                return
            self.queued_bytes += len(data)

    def _drop_slow(self) -> None:
        """Disconnect a client too slow to read what it is sent (its outbox is full: by
        count, ``send_queue``, or by bytes, ``send_queue_bytes``); nothing more is queued."""
        self.dropped = True
        log.warning("dropping slow client %s", self.username or self.ws.remote_address)
        self.app.slow_drops += 1
        asyncio.get_running_loop().create_task(self.ws.close(1013, "too slow"))

    def _queue(self) -> asyncio.Queue[bytes | None]:
        """The outbox, and its writer task, made the first time they are needed."""
        if self.outbox is None:
            self.outbox = asyncio.Queue(maxsize=self.send_queue)
            self.writer = asyncio.create_task(self._write(self.outbox), name="writer")
        return self.outbox

    async def _write(self, outbox: asyncio.Queue[bytes | None]) -> None:
        while True:
            data = await outbox.get()
            if data is None:
                return
            batch = [data]
            closing = False
            # What queued meanwhile goes out with it: one write to the socket for all of
            # them (each is still a frame of its own), not one system call per message.
            while not outbox.empty() and len(batch) < WRITE_BATCH:
                more = outbox.get_nowait()
                if more is None:
                    closing = True
                    break
                batch.append(more)
            self.writing = True
            try:
                if len(batch) == 1:
                    await self.ws.send(batch[0], text=True)
                else:
                    await self._send_batch(batch)
            except ConnectionClosed:
                return
            finally:
                self.writing = False
                self.queued_bytes -= sum(map(len, batch))
            if closing:
                return

    def _bytes(self, text: str) -> bytes:
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate got past the protocol's checks (a bug): the library would
            # drop the connection. Send it escaped instead, the same JSON text.
            log.error("unencodable frame to %s: %.200r", self.username, text)
            return text.encode("utf-8", "backslashreplace")

    async def _send_batch(self, batch: list[bytes]) -> None:
        """Several text frames in one write: the frames are made by the connection's
        protocol (websockets' Sans-I/O layer, inside its send context, which checks the
        state and handles a failure as ``send`` does) and written to the transport joined."""
        ws = self.ws
        async with ws.send_context():
            for data in batch:
                ws.protocol.send_text(data)
            chunks = ws.protocol.data_to_send()
            ws.transport.write(b"".join(chunks))
            if b"" in chunks and ws.transport.can_write_eof():  # the protocol half-closes
                ws.transport.write_eof()

    async def close_writer(self) -> None:
        """Send what is pending, then stop the writer (within 2 s)."""
        if self.flushing:
            self._flush()  # (then nothing is left for the end of the turn)
        writer = self.writer
        if self.outbox is None or writer is None:
            return  # everything went straight to the socket
        with contextlib.suppress(asyncio.QueueFull):
            self.outbox.put_nowait(None)
        if not self.dropped:
            with contextlib.suppress(asyncio.TimeoutError, ConnectionClosed):
                await asyncio.wait_for(asyncio.shield(writer), 2)
        writer.cancel()

    @property
    def lobby(self) -> Lobby:
        lobby = self.app.lobby
        assert lobby is not None  # connections are served only once the app has started
        return lobby

    @property
    def matchmaker(self) -> Matchmaker:
        matchmaker = self.app.matchmaker
        assert matchmaker is not None  # started with the lobby
        return matchmaker

    # ---------------------------------------------------------- incoming ---

    def attach(self, table_id: str) -> None:
        """A table took this connection in (the queue or a tournament seated it)."""
        self.tables.setdefault(table_id, None)
        self.queue_frame = None

    def prompted(self, table: str, seq: int) -> None:
        """The update ``seq`` of ``table`` just queued for us lists actions for us to take."""
        self.prompts[table] = seq

    def answers_prompt(self, message: protocol.Message | ProtocolError) -> bool:
        """True for the first action answering the latest update that asked us to act: it is
        never rate-limited (a client that answers at once while bots play fast is fair).
        It may still be refused (``stale`` when the table moved on)."""
        if not isinstance(message, protocol.Play):
            return False
        if self.prompts.get(message.table) != message.seq:
            return False
        del self.prompts[message.table]  # one answer per prompt goes free
        return True

    def allow(self) -> bool:
        """A token bucket: ``messages_per_second`` sustained, ``message_burst`` at once."""
        limits = self.app.config.limits
        now = time.monotonic()
        self.tokens = min(
            float(limits.message_burst),
            self.tokens + (now - self.refilled) * limits.messages_per_second,
        )
        self.refilled = now
        if self.tokens >= 1:
            self.tokens -= 1
            self.strikes = max(0, self.strikes - 1)  # good behaviour wipes old strikes out
            return True
        return False

    async def serve(self, handed: dict[str, Any] | None = None) -> None:
        """Read and handle the client's messages until it goes. ``handed``: the connection
        was handed over by the worker it came to (``server.handoff``): its state, and the
        message it is to handle first (already counted against its rate there)."""
        try:
            if handed is not None:
                first = self._restore(handed)
                if "back" in handed and self.username is not None:
                    await self._back(_request_id(handed["back"]))
                elif first is not None and not await self._receive(first, counted=True):
                    return
            async for frame in self.ws:
                if not await self._receive(frame):
                    return
        except ConnectionClosed:
            pass
        finally:
            self.lobby.feed.unsubscribe(self)
            await self._detach(tell=False)  # (nobody left to tell)
            self.app.nodes.bye(self)
            await self.close_writer()

    async def _receive(self, frame: str | bytes, counted: bool = False) -> bool:
        """Handle one frame of the client's; False: the connection is closed for abuse."""
        # Decoded first (cheap: frames are small): an answer to our prompt goes free.
        message: protocol.Message | ProtocolError
        try:
            message = protocol.decode(frame)
            reply_to = message.id
        except ProtocolError as exc:
            message, reply_to = exc, protocol.request_id(frame)
        if not counted and not self.answers_prompt(message) and not self.allow():
            self.strikes += 1
            self.app.metrics.rate_limited["messages"].inc()
            self.send(
                error(
                    "rate_limited",
                    "too many messages; slow down (this one was dropped)",
                    reply_to,
                )
            )
            if self.strikes >= RATE_STRIKES:
                await self._close_for_abuse()
                return False
            return True
        try:
            if isinstance(message, ProtocolError):
                raise message
            self.frame = frame
            await self.dispatch(message)
        except accounts.RateLimited as exc:
            self.app.metrics.rate_limited["accounts"].inc()
            # A refusal is cheap, so a client asking again at once could send
            # thousands a second: held a moment, it gets one a second on this
            # connection, for the cost of a sleeping task.
            await asyncio.sleep(REFUSAL_PAUSE)
            self.send(encode(Error(exc.code, exc.reason, exc.retry_after), reply_to))
            # Asking again and again without waiting is a flood: it costs the
            # connection like any other.
            self.refusals += 1
            if self.refusals >= RATE_STRIKES:
                await self._close_for_abuse()
                return False
        except ServerError as exc:  # protocol, accounts and lobby refusals
            self.send(refusal(exc, reply_to))
        except (SQLAlchemyError, TimeoutError) as exc:
            # The database failed it (full, read-only, locked, unreachable) or did not answer
            # in time (server/db/engine.py: asyncpg's own ``TimeoutError``, which SQLAlchemy
            # does not wrap): said so in a line, to the log and to the client; the
            # connection stays.
            log.error(
                "the database failed a %s message from %s: %s",
                type(message).__name__,
                self.username or "a visitor",
                trouble(self.app.config.database_url, exc),
            )
            self.send(
                error(
                    "internal_error",
                    "the server's database could not do that just now (nothing was changed); "
                    "try again",
                    reply_to,
                )
            )
        except Exception:
            # A bug must not cost the client its connection.
            log.exception("error while handling a message from %s", self.username)
            self.send(
                error(
                    "internal_error",
                    "the server could not handle that message; try again",
                    reply_to,
                )
            )
        return True

    async def _close_for_abuse(self) -> None:
        """Close the connection for flooding (1008), once it has been sent every answer it
        is owed: those of the messages handled this turn of the loop, the last
        ``rate_limited`` among them, would otherwise be lost behind the close."""
        await self.close_writer()
        await self.ws.close(1008, "rate limit exceeded")

    async def dispatch(self, m: protocol.Message) -> None:
        app = self.app
        if isinstance(m, protocol.Hello):
            if self.greeted:  # its version holds for the connection's life
                raise ProtocolError(
                    "bad_message",
                    f"hello was said already: this connection speaks protocol version "
                    f"{self.version} (another version needs a new connection)",
                )
            common = sorted(set(m.versions) & set(protocol.VERSIONS))
            if not common:
                self.send(
                    error(
                        "unsupported_version",
                        f"this server speaks protocol version(s) {list(protocol.VERSIONS)}",
                        m.id,
                    )
                )
                await self.close_writer()
                await self.ws.close(1002, "unsupported protocol version")
                return
            self.greeted = True
            self.version = common[-1]
            timers = self.app.config.timers
            welcome = Welcome(
                self.version,
                f"guobiao {VERSION}",
                20,
                timers.turn_seconds,
                timers.min_turn_seconds,
                timers.max_turn_seconds,
            )
            self.send(encode(welcome, m.id))
            return
        if not self.greeted:
            raise ProtocolError(
                "hello_first",
                'send \'hello\' first, e.g. {"type": "hello", "payload": {"versions": [1]}}',
            )
        if isinstance(m, protocol.Ping):
            self.send(encode(Pong(), m.id))
            return
        days = app.config.accounts
        if isinstance(m, (protocol.Register, protocol.Login, protocol.Guest, protocol.Resume)):
            # Whoever this connection was, it is someone new once this succeeds: it leaves
            # that one's tables and queue then, not before (a refused attempt changes nothing).
            if isinstance(m, protocol.Register):
                player, token, expires = await accounts.register(
                    app.store,
                    m.username,
                    m.password,
                    days.session_days,
                    guard=app.guard,
                    address=self.address,
                )
            elif isinstance(m, protocol.Login):
                player, token, expires = await accounts.login(
                    app.store,
                    m.username,
                    m.password,
                    days.session_days,
                    guard=app.guard,
                    address=self.address,
                )
            elif isinstance(m, protocol.Guest):
                player, token, expires = await accounts.guest(
                    app.store, days.guest_session_days, guard=app.guard, address=self.address
                )
            else:
                player, token, expires = await accounts.resume(app.store, m.token)
            await self._detach()
            self.username, self.token, self.guest = player.username, token, player.guest
            self.refusals = 0
            expiry = expires.isoformat().replace("+00:00", "Z")
            self.send(encode(Session(player.username, token, player.guest, expiry), m.id))
            if self.lobby.table_of(self.username) is not None:
                await self._back(m.id)
            elif untold := self.lobby.untold_end(self.username):
                for frame in untold:  # her match ended while she was away: its end
                    self.send(frame)
            elif isinstance(m, (protocol.Login, protocol.Resume)) and not (
                await self._hand_to_seat(m.id)  # seated at a sibling worker's table: to it
            ):
                await app.nodes.find_seat(self)  # seated at another node's table?
            return
        if isinstance(m, protocol.Logout):
            await self._detach()  # the lobby's feed stays: visitors may follow it too
            if self.token is not None:
                await accounts.logout(app.store, self.token)
            self.username = self.token = None
            self.guest = False
            self.send(encode(LoggedOut(), m.id))
            return
        if self.username is None and not isinstance(m, VISITOR_MESSAGES):
            raise ProtocolError(
                "not_authenticated", "log in first (register, login, guest or resume)"
            )
        if isinstance(m, protocol.ListTables):
            if self._listing_allowed(m.id):
                self._send_listing(m.id)
        elif isinstance(m, protocol.SubscribeLobby):
            feed = self.lobby.feed
            if not m.on:
                feed.unsubscribe(self)  # (even when the listing that answers it is refused)
            if self._listing_allowed(m.id):  # (refused: not subscribed, if it asked to be)
                if m.on:
                    feed.subscribe(self, m.id)
                    self._charge_listing(len(feed.subscribers.get(self, "")))
                else:
                    self._send_listing(m.id)
        elif isinstance(m, (protocol.TournamentRequest, protocol.QueueJoin, protocol.QueueLeave)):
            await self._service(m)
        elif isinstance(m, protocol.CreateTable):
            assert self.username is not None  # not a visitor's message
            self._leave_queue()  # a table of one's own: the queue is done
            table = await self.lobby.create(
                m.rules,
                m.turn_seconds,
                m.private,
                claim_window_ms=m.claim_window_ms,
                hands=m.hands,
                aids=m.aids,
                rated=m.rated,
                creator=Creator(self.username, self.address),
            )
            self.send(encode(TableCreated(table.id, table.invite_code), m.id))
        else:
            found = input_for(self, m)
            if found is None:
                return
            if isinstance(m, protocol.JoinTable):
                self._leave_queue()
            sitting_or_watching = isinstance(m, protocol.JoinTable | protocol.Watch)
            if sitting_or_watching and await self._hand_to_table(found[0]):
                return
            await self._to_table(*found, isinstance(m, protocol.Watch))

    def _listing_allowed(self, reply_to: str | int | None) -> bool:
        """Whether this connection may be sent a listing of the tables now: a token bucket
        of bytes, ``listing_bytes_per_second`` sustained, eight seconds' worth at once, each
        listing charged what the last one made cost (known before this one is made). If
        not, the request is answered ``rate_limited`` with the seconds to wait; the other
        messages are not held back."""
        rate = self.app.config.limits.listing_bytes_per_second
        now = time.monotonic()
        self.listing_budget = min(
            LISTING_BURST_SECONDS * rate,
            self.listing_budget + (now - self.listing_refilled) * rate,
        )
        self.listing_refilled = now
        # (A listing longer than the burst is charged as the burst: it is still sent, about
        # once in its own length's seconds.)
        short = min(self.lobby.listing_bytes, LISTING_BURST_SECONDS * rate) - self.listing_budget
        if short <= 0:
            return True
        self.app.metrics.rate_limited["messages"].inc()
        wait = max(1, math.ceil(short / rate))
        reason = f"too many listings of the tables; try again in {wait} s"
        self.send(encode(Error("rate_limited", reason, wait), reply_to))
        return False

    def _send_listing(self, reply_to: str | int | None) -> None:
        """The listing of the tables now, charged to the connection's listing budget."""
        text = encode(Tables(self.lobby.listing()), reply_to)
        self.send(text)
        self._charge_listing(len(text))

    def _charge_listing(self, size: int) -> None:
        """A listing of ``size`` bytes sent on request: out of the budget, and what the next
        request anyone makes is charged before its listing is made."""
        self.lobby.listing_bytes = size
        self.listing_budget -= size

    async def _service(self, m: protocol.Message) -> None:
        """A queue or tournament request: here, or relayed to the node that runs them (the
        cluster's coordinator)."""
        nodes = self.app.nodes
        if isinstance(m, protocol.QueueJoin):
            self.queue_frame = _text(self.frame)  # sent again if the coordinator changes
        elif isinstance(m, protocol.QueueLeave):
            self.queue_frame = None
        if not nodes.runs_services:
            nodes.relay_service(self, self.frame)
        elif isinstance(m, protocol.TournamentRequest):
            await self.app.tournaments_host.handle(self, m)
        elif isinstance(m, protocol.QueueJoin):
            await self.matchmaker.join(self, m.ladder, m.casual, m.id, bot=m.bot)
        elif isinstance(m, protocol.QueueLeave):
            self.matchmaker.leave(self, m.id)

    def _leave_queue(self, *, tell: bool = True) -> None:
        """Out of the queue, here or at the node that runs it; ``tell``: saying so (``left``)."""
        self.matchmaker.gone(self, tell=tell)
        if self.queue_frame is not None:
            self.queue_frame = None
            self.app.nodes.service_gone(self)

    async def _detach(self, *, tell: bool = True) -> None:
        """Leave every table as this connection's player: it may see none of its seat's
        private view once it is logged out or logged in as someone else; and the queue,
        saying so (``left``, as when it sits down elsewhere) unless ``tell`` is false."""
        self._leave_queue(tell=tell)
        nodes = self.app.nodes
        for table_id in self.tables:
            table = self.lobby.tables.get(table_id)
            if table is not None:
                await table.queue.put(GoneInput(self, None))
            else:
                nodes.relay_gone(self, table_id)
        self.tables.clear()

    # ---------------------------------------------------- handing over ---

    async def _back(self, reply_to: str | int | None) -> None:
        """Her seat at a table of this node's is hers again (she logged in or resumed)."""
        assert self.username is not None
        table = self.lobby.table_of(self.username)
        if table is None:
            await self.app.nodes.find_seat(self)  # (it moved meanwhile: wherever it is)
            return
        self.tables[table.id] = None
        await table.queue.put(BackInput(self, reply_to))

    async def _hand_to_table(self, table_id: str) -> bool:
        """Hand this connection, asking to join or watch ``table_id``, to the sibling worker
        that runs it (its ``join_table`` or ``watch`` handled there); True if it went."""
        if not self._may_move() or table_id in self.lobby.tables:
            return False
        return await self._hand_to(await self.app.nodes.owner_of(table_id), {})

    async def _hand_to_seat(self, reply_to: str | int | None) -> bool:
        """Hand this connection, back after a reconnection, to the sibling worker that runs
        the table she sits at (she is seated back there, ``reply_to`` answered); True if it
        went."""
        if not self._may_move() or self.username is None:
            return False
        return await self._hand_to(
            await self.app.nodes.seat_owner(self.username), {"back": reply_to}
        )

    def _may_move(self) -> bool:
        """Whether this connection may be handed to a sibling worker (``serve --workers``):
        only one at no table yet, as a player or a spectator (everything it would be sent
        there would be relayed), not queued, not moved too often already."""
        return (
            self.app.handoff is not None
            and not self.tables
            and self.queue_frame is None
            and not self.dropped
            and self.moves < MAX_MOVES
        )

    async def _hand_to(self, owner: str | None, then: dict[str, Any]) -> bool:
        """Hand this connection to ``owner`` if it is a sibling worker (``server.handoff``),
        to do ``then`` there first (``{}``: handle the frame being handled; ``back``: seat
        her back); True if it went (this worker then forgets it)."""
        handoff = self.app.handoff
        if handoff is None or not self._may_move():  # (it may have changed during the lookup)
            return False
        to = handoff.sibling(owner)
        if to is None:
            return False
        if self.flushing:
            self._flush()  # what it was sent so far goes out from here
        if self.outbox is not None and (not self.outbox.empty() or self.writing):
            return False
        if not handoff.hand_over(self.ws, to, {**self._state(), **then}):
            return False
        self.dropped = True  # nothing more from here: the sibling serves it now
        release(self.ws)
        return True

    def _state(self) -> dict[str, Any]:
        """What the sibling that takes this connection needs of it: who the client is, its
        limits' counts, and the frame being handled."""
        return {
            "username": self.username,
            "token": self.token,
            "guest": self.guest,
            "version": self.version,
            "lobby": self in self.lobby.feed.subscribers,
            "moves": self.moves + 1,
            "tokens": self.tokens,
            "strikes": self.strikes,
            "refusals": self.refusals,
            "listing_budget": self.listing_budget,
            "frame": _text(self.frame),
        }

    def _restore(self, state: dict[str, Any]) -> str | None:
        """Take over a connection a sibling handed over (its ``_state``); the frame to
        handle first."""
        self.username = _str_or_none(state.get("username"))
        self.token = _str_or_none(state.get("token"))
        self.guest = bool(state.get("guest"))
        self.greeted = True
        version = state.get("version")
        self.version = version if version in protocol.VERSIONS else 1
        self.moves = _count(state.get("moves"), MAX_MOVES)
        limits = self.app.config.limits
        self.tokens = min(float(limits.message_burst), _number(state.get("tokens")))
        self.strikes = _count(state.get("strikes"), RATE_STRIKES)
        self.refusals = _count(state.get("refusals"), RATE_STRIKES)
        self.listing_budget = min(self.listing_budget, _number(state.get("listing_budget")))
        if state.get("lobby"):
            # Followed from here: the listing goes to it at the feed's next send (it may
            # differ from the last one the sibling sent).
            feed = self.lobby.feed
            feed.subscribers[self] = ""
            feed.changed()
        return _str_or_none(state.get("frame"))

    async def _to_table(self, table_id: str, item: Any, watch: bool = False) -> None:
        """Hand ``item`` to the table: its task, if it is on this node; else the frame goes
        to the node that owns it (cluster mode; ``no_such_table`` if none does). ``watch``:
        the frame makes us a spectator (kept, to watch again should the table move)."""
        table = self.lobby.tables.get(table_id)
        if watch or table_id not in self.tables:
            self.tables[table_id] = _text(self.frame) if watch else None
        if table is not None:
            await table.queue.put(item)
            return
        try:
            await self.app.nodes.relay(self, table_id, self.frame)
        except ServerError as exc:
            self.tables.pop(table_id, None)
            if exc.code == "no_such_table" and (
                finished := await finished_refusal(self.app.store, table_id, self.username)
            ):
                raise finished from None
            raise


def _request_id(value: Any) -> str | int | None:
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _count(value: Any, most: int) -> int:
    return min(most, value) if isinstance(value, int) and value >= 0 else 0


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else 0.0


def _text(frame: str | bytes) -> str:
    return frame.decode("utf-8", "replace") if isinstance(frame, bytes) else frame

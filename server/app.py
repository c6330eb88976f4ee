"""The game server: websocket connections, the HTTP API on the same port, start and stop.

A ``Connection`` decodes each frame into a typed message (``server.protocol``),
answers account and lobby requests, and hands table inputs to the table's
owner task (``server.table``); it never touches a match itself. What is sent to a
connection during one turn of the event loop is written at the end of that turn, in one
write to its socket while the socket takes it; while it does not (a slow client), messages
wait in a bounded queue per connection that its own writer task empties, so one slow client
cannot hold up a table: when its queue is full it is disconnected.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import http
import json
import logging
import socket
import time
from typing import Any

from websockets.asyncio.server import Server as WsServer
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.protocol import State

import engine
from server import accounts, protocol, replay
from server.config import Config
from server.db.store import Store, upgrade
from server.errors import ServerError, shown
from server.ladder import api as ladder_api
from server.ladder.queue import Matchmaker
from server.lobby import Lobby
from server.metrics import Metrics
from server.nodes import Creator, Nodes, OneNode
from server.origins import origin_allowed, parse_allowed
from server.protocol import ProtocolError, encode, error
from server.query import BadRequest, parse_query, whole_number
from server.static import WebFiles
from server.table import BackInput, GoneInput, input_for
from server.tournaments import api as tournament_api
from server.tournaments.host import Tournaments

log = logging.getLogger("guobiao.server")

VERSION = "0.1.0"
WRITE_BATCH = 64  # messages joined into one socket write at most
RATE_STRIKES = 20  # rate-limited messages before the connection is closed as abusive
REFUSAL_PAUSE = 1.0  # seconds an account request refused by a limit waits for its answer


class Connection:
    """One client: its account, its rate limit, its outgoing queue."""

    def __init__(self, ws: ServerConnection, app: App) -> None:
        self.ws = ws
        self.app = app
        self.username: str | None = None
        self.guest = False
        self.token: str | None = None
        # The client's IP address: the account limits and the tables waiting for players
        # count per address (behind a proxy, the proxy's).
        remote = ws.remote_address
        self.address = str(remote[0]) if isinstance(remote, tuple) and remote else "unknown"
        self.greeted = False
        self.version = 1  # the protocol version spoken (``hello``)
        limits = app.config.limits
        # Sent during this turn of the event loop, written at its end (``_flush``).
        self.pending: list[bytes] = []
        self.flushing: asyncio.Handle | None = None
        # Waiting for the socket (a slow client): emptied by the writer task, in order.
        self.outbox: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=limits.send_queue)
        self.writing = False  # the writer task is sending (its batch is out of the outbox)
        self.tokens = float(limits.message_burst)
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
        self.writer = asyncio.create_task(self._write(), name="writer")

    # --------------------------------------------------------- outgoing ---

    def send(self, text: str) -> None:
        """Send ``text`` (one text frame) at the end of this turn of the event loop."""
        if self.dropped:
            return
        self.pending.append(self._bytes(text))
        if self.flushing is None:
            self.flushing = asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        """Write what was sent during this turn of the loop: straight to the socket, all in
        one write, when nothing waits before it and the socket takes it (the client reads
        what it is sent); else into the outbox, for the writer task to send as the socket
        drains. An outbox full is a client too slow: it is disconnected."""
        self.flushing = None
        frames, self.pending = self.pending, []
        if self.dropped or not frames:
            return
        ws = self.ws
        if (
            self.outbox.empty()
            and not self.writing
            and not ws.paused
            and ws.protocol.state is State.OPEN
        ):
            # What ``ws.send`` does, without its coroutine and wait: the socket is not
            # paused, so there is nothing to wait for. (A batch the protocol could not take
            # would raise before anything is written.)
            for data in frames:
                ws.protocol.send_text(data)
            ws.transport.write(b"".join(ws.protocol.data_to_send()))
            return
        for data in frames:
            try:
                self.outbox.put_nowait(data)
            except asyncio.QueueFull:
                self.dropped = True
                log.warning("dropping slow client %s", self.username or self.ws.remote_address)
                self.app.slow_drops += 1
                asyncio.get_running_loop().create_task(self.ws.close(1013, "too slow"))
                return

    async def _write(self) -> None:
        while True:
            data = await self.outbox.get()
            if data is None:
                return
            batch = [data]
            closing = False
            # What queued meanwhile goes out with it: one write to the socket for all of
            # them (each is still a frame of its own), not one system call per message.
            while not self.outbox.empty() and len(batch) < WRITE_BATCH:
                more = self.outbox.get_nowait()
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
        if self.flushing is not None:
            self.flushing.cancel()
            self._flush()
        with contextlib.suppress(asyncio.QueueFull):
            self.outbox.put_nowait(None)
        if not self.dropped:
            with contextlib.suppress(asyncio.TimeoutError, ConnectionClosed):
                await asyncio.wait_for(asyncio.shield(self.writer), 2)
        self.writer.cancel()

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

    async def serve(self) -> None:
        try:
            async for frame in self.ws:
                # Decoded first (cheap: frames are small): an answer to our prompt goes free.
                message: protocol.Message | ProtocolError
                try:
                    message = protocol.decode(frame)
                    reply_to = message.id
                except ProtocolError as exc:
                    message, reply_to = exc, protocol.request_id(frame)
                if not self.answers_prompt(message) and not self.allow():
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
                        await self.ws.close(1008, "rate limit exceeded")
                        return
                    continue
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
                    payload = {
                        "code": exc.code,
                        "reason": exc.reason,
                        "retry_after": exc.retry_after,
                    }
                    self.send(encode("error", payload, reply_to))
                    # Asking again and again without waiting is a flood: it costs the
                    # connection like any other.
                    self.refusals += 1
                    if self.refusals >= RATE_STRIKES:
                        await self.ws.close(1008, "rate limit exceeded")
                        return
                except ServerError as exc:  # protocol, accounts and lobby refusals
                    self.send(error(exc.code, exc.reason, reply_to))
                except Exception:
                    # A bug or a failing database must not cost the client its connection.
                    log.exception("error while handling a message from %s", self.username)
                    self.send(
                        error(
                            "internal_error",
                            "the server could not handle that message; try again",
                            reply_to,
                        )
                    )
        except ConnectionClosed:
            pass
        finally:
            self.lobby.feed.unsubscribe(self)
            await self._detach()
            self.app.nodes.bye(self)
            await self.close_writer()

    async def dispatch(self, m: protocol.Message) -> None:
        app = self.app
        if isinstance(m, protocol.Hello):
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
            payload = {
                "version": self.version,
                "server": f"guobiao {VERSION}",
                "heartbeat_seconds": 20,
            }
            self.send(encode("welcome", payload, m.id))
            return
        if not self.greeted:
            raise ProtocolError(
                "hello_first",
                'send \'hello\' first, e.g. {"type": "hello", "payload": {"versions": [1]}}',
            )
        if isinstance(m, protocol.Ping):
            self.send(encode("pong", {}, m.id))
            return
        days = app.config.accounts
        if isinstance(m, (protocol.Register, protocol.Login, protocol.Guest, protocol.Resume)):
            await self._detach()  # whoever this connection was, it is someone new now
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
            self.username, self.token, self.guest = player.username, token, player.guest
            self.refusals = 0
            self.send(
                encode(
                    "session",
                    {
                        "username": player.username,
                        "token": token,
                        "guest": player.guest,
                        "expires": expires.isoformat().replace("+00:00", "Z"),
                    },
                    m.id,
                )
            )
            table = self.lobby.table_of(self.username)
            if table is not None:
                self.tables[table.id] = None
                await table.queue.put(BackInput(self, m.id))
            elif isinstance(m, (protocol.Login, protocol.Resume)):
                await app.nodes.find_seat(self)  # seated at another node's table?
            return
        if isinstance(m, protocol.Logout):
            await self._detach()
            self.lobby.feed.unsubscribe(self)  # the lobby is for those logged in
            if self.token is not None:
                await accounts.logout(app.store, self.token)
            self.username = self.token = None
            self.guest = False
            self.send(encode("logged_out", {}, m.id))
            return
        if self.username is None:
            raise ProtocolError(
                "not_authenticated", "log in first (register, login, guest or resume)"
            )
        if isinstance(m, protocol.ListTables):
            self.send(encode("tables", {"tables": self.lobby.listing()}, m.id))
        elif isinstance(m, protocol.SubscribeLobby):
            if m.on:
                self.lobby.feed.subscribe(self, m.id)
            else:
                self.lobby.feed.unsubscribe(self)
                self.send(encode("tables", {"tables": self.lobby.listing()}, m.id))
        elif isinstance(m, (protocol.TournamentRequest, protocol.QueueJoin, protocol.QueueLeave)):
            await self._service(m)
        elif isinstance(m, protocol.CreateTable):
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
            self.send(
                encode("table_created", {"table": table.id, "invite_code": table.invite_code}, m.id)
            )
        else:
            found = input_for(self, m)
            if found is None:
                return
            if isinstance(m, protocol.JoinTable):
                self._leave_queue()
            await self._to_table(*found, isinstance(m, protocol.Watch))

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
            await self.matchmaker.join(self, m.ladder, m.casual, m.id)
        elif isinstance(m, protocol.QueueLeave):
            self.matchmaker.leave(self, m.id)

    def _leave_queue(self) -> None:
        self.matchmaker.gone(self, tell=True)
        if self.queue_frame is not None:
            self.queue_frame = None
            self.app.nodes.service_gone(self)

    async def _detach(self) -> None:
        """Leave every table as this connection's player: it may see none of its seat's
        private view once it is logged out or logged in as someone else; and the queue."""
        self.matchmaker.gone(self)
        nodes = self.app.nodes
        if self.queue_frame is not None:
            nodes.service_gone(self)
        self.queue_frame = None
        for table_id in self.tables:
            table = self.lobby.tables.get(table_id)
            if table is not None:
                await table.queue.put(GoneInput(self, None))
            else:
                nodes.relay_gone(self, table_id)
        self.tables.clear()

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
        except ServerError:
            self.tables.pop(table_id, None)
            raise


def _text(frame: str | bytes) -> str:
    return frame.decode("utf-8", "replace") if isinstance(frame, bytes) else frame


class App:
    """The running server: configuration, database, lobby, connections."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.store: Any = None
        self.lobby: Lobby | None = None
        self.matchmaker: Matchmaker | None = None
        self.tournaments: Tournaments | None = None
        self.connections: set[Connection] = set()
        self.ws_server: WsServer | None = None
        self.slow_drops = 0
        self.guard = accounts.Guard(config.accounts)
        self.purger: asyncio.Task[None] | None = None
        self.web = WebFiles(tests=config.server.test_pages)
        if config.server.test_pages and self.web.get("/test/") is None:
            log.warning("[server] test_pages is on, but this install has no in-page tests")
        self.origins = parse_allowed(config.server.allowed_origins)  # besides own, loopback
        self.metrics = Metrics(self)  # GET /metrics; a registry of this server's own
        self.metrics_server: WsServer | None = None  # [metrics] listen, when set
        # The other nodes: none (a server alone), or in cluster mode this process as a node.
        self.nodes: Nodes = OneNode()
        self.by_cid: dict[str, Connection] = {}  # connections by their cluster-wide id

    def new_cid(self) -> str:
        """A connection id no other connection of the cluster has."""
        return self.nodes.new_cid()

    @property
    def tournaments_host(self) -> Tournaments:
        assert self.tournaments is not None  # connections are served only once started
        return self.tournaments

    @property
    def port(self) -> int:
        assert self.ws_server is not None
        sockets = list(self.ws_server.sockets)
        return int(sockets[0].getsockname()[1])

    @property
    def node(self) -> str:
        """This server's name (the metrics' ``node`` label): ``[server] node``, else
        ``hostname:port``."""
        return self.config.server.node or f"{socket.gethostname()}:{self.port}"

    async def start(self) -> None:
        self.config.check_cluster_database()
        self.metrics.start()
        url = self.config.database_url
        await upgrade(url)
        self.store = await Store.open(url)
        self.store.policy = self.config.season_policy()
        self.store.on_commit = self.metrics.commit_seconds
        self.lobby = Lobby(self.config, self.store, self.metrics)
        self.tournaments = Tournaments(self.config, self.store.tournaments, self.lobby, self._peers)
        self.matchmaker = Matchmaker(self.config, self.store, self.lobby)
        if self.config.clustered:
            # The tables are adopted (restored) by the nodes as their leases lapse; the
            # queue and the tournaments run on the coordinator (server/cluster/node.py).
            from server.cluster.node import Node  # noqa: PLC0415 (needs redis: cluster only)

            node = Node(
                self.config.cluster,
                self.node,
                store=self.store,
                lobby=self.lobby,
                connections=self.connections,
                by_cid=self.by_cid,
                matchmaker=self.matchmaker,
                tournaments=self.tournaments,
            )
            self.nodes = self.lobby.nodes = node
            self.lobby.on_table_finished = node.table_finished
        else:
            # Before the restore: a table it finds finished (a crash came first) tells it too.
            self.lobby.on_table_finished = self.tournaments.table_finished
            restored = await self.lobby.restore()
            if restored:
                log.info("restored %s table(s) from the database", restored)
            self.matchmaker.start()
            await self.tournaments.start()  # the sessions' tables a crash left unmade
        await self._purge()
        self.purger = asyncio.create_task(self._purge_every(), name="purge")
        self.ws_server = await serve(
            self._handle,
            self.config.server.host,
            self.config.server.port,
            process_request=self._http,
            process_response=_json_errors,
            max_size=self.config.limits.max_message_bytes,
            compression=None,
            max_queue=16,
            ping_interval=20,
            ping_timeout=20,
            server_header=f"guobiao/{VERSION}",
            # Cluster mode: the workers of one machine listen on one port (the kernel
            # spreads the connections among them).
            reuse_port=self.config.clustered,
        )
        listen = self.config.metrics.address
        if listen is not None:
            try:
                self.metrics_server = await serve(
                    _no_websocket,
                    *listen,
                    process_request=self._metrics_http,
                    server_header=f"guobiao/{VERSION}",
                    compression=None,
                )
            except OSError as exc:  # (``guobiao serve`` says where it could not listen)
                raise OSError(exc.errno, exc.strerror, self.config.metrics.listen) from exc
        await self.nodes.start(self.port)

    @property
    def metrics_port(self) -> int | None:
        """The port of ``[metrics] listen`` (None: not set)."""
        if self.metrics_server is None:
            return None
        return int(next(iter(self.metrics_server.sockets)).getsockname()[1])

    async def stop(self) -> None:
        """Stop accepting, tell clients, let tables finish writing, close the database."""
        if self.ws_server is not None:
            self.ws_server.server.close()  # stop listening; connections stay open for now
        await self.nodes.hand_over()  # (cluster mode: every table to another node, none ends)
        if self.matchmaker is not None:
            await self.matchmaker.stop()
        if self.tournaments is not None:
            self.tournaments.close()
        if self.lobby is not None:
            await self.lobby.shutdown()
        for conn in list(self.connections):
            conn.send(error("server_shutdown", "the server is stopping; reconnect soon"))
            await conn.close_writer()
        if self.ws_server is not None:
            self.ws_server.close()  # closes every connection with 1001 (going away)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws_server.wait_closed(), 5)
        if self.purger is not None:
            self.purger.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.purger
        self.guard.close()
        await self.nodes.close()
        if self.store is not None:
            await self.store.close()
        if self.metrics_server is not None:
            self.metrics_server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.metrics_server.wait_closed(), 5)
        await self.metrics.stop()

    def _peers(self) -> list[Any]:
        """Every connection the tournaments may tell something: ours, and in cluster mode
        those of other nodes that spoke to this one."""
        return [*self.connections, *self.nodes.remote_peers()]

    async def _ready(self, connection: ServerConnection) -> Response:
        """``/readyz``: whether a proxy should send this server new connections."""
        if not await self.store.ping():
            why: str | None = "the database does not answer"
        else:
            why = self.nodes.unready()  # (cluster mode: draining, or Redis does not answer)
        if why is None:
            return _json(connection, http.HTTPStatus.OK, {"ready": True, "node": self.node})
        body = {"ready": False, "node": self.node, "why": why}
        return _json(connection, http.HTTPStatus.SERVICE_UNAVAILABLE, body)

    async def _purge(self) -> None:
        """Expired guests and sessions out of the database, stale limits out of memory."""
        deleted, kept, sessions = await accounts.purge(
            self.store, self.config.accounts.guest_session_days
        )
        self.guard.prune()
        if deleted or kept or sessions:
            log.info(
                "purged %s expired guest(s) (%s kept for their matches) and %s session(s)",
                deleted,
                kept,
                sessions,
            )

    async def _purge_every(self) -> None:
        while True:
            await asyncio.sleep(self.config.accounts.purge_minutes * 60)
            try:
                await self._purge()
            except Exception:  # a failing database must not stop the purges for good
                log.exception("purging expired guests and sessions failed")

    async def _handle(self, ws: ServerConnection) -> None:
        if len(self.connections) >= self.config.limits.max_connections:
            await ws.close(1013, "server full")
            return
        conn = Connection(ws, self)
        self.connections.add(conn)
        self.by_cid[conn.cid] = conn
        try:
            await conn.serve()
        finally:
            self.connections.discard(conn)
            self.by_cid.pop(conn.cid, None)

    # ------------------------------------------------------------- HTTP ---

    async def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        """Answer a plain HTTP request (``None``: go on with the websocket handshake). The web
        client's files aside, every answer but a log is JSON, errors included; a failure is
        logged and answered 500. ``HEAD`` gets the headers ``GET`` would."""
        if request.method not in ("GET", "HEAD"):
            refusal = _json(
                connection,
                http.HTTPStatus.METHOD_NOT_ALLOWED,
                {"error": f"{request.method} is not served here: only GET and HEAD"},
            )
            refusal.headers["Allow"] = "GET, HEAD"
            return refusal
        try:
            response = await self._route(connection, request)
            if response is not None and request.method == "HEAD":
                response = dataclasses.replace(response, body=b"")  # Content-Length stays
            return response
        except Exception:
            log.exception("HTTP request %r failed", request.path)
            return _json(
                connection,
                http.HTTPStatus.INTERNAL_SERVER_ERROR,
                {"error": "the server failed to answer (logged); try again"},
            )

    def _origin_refusal(self, connection: ServerConnection, request: Request) -> Response | None:
        """403 for a websocket a page of another origin opens (server/origins.py); None: go
        on with the handshake."""
        origins, hosts = request.headers.get_all("Origin"), request.headers.get_all("Host")
        origin = origins[0] if len(origins) == 1 else None
        host = hosts[0] if len(hosts) == 1 else None
        if len(origins) <= 1 and origin_allowed(origin, host, self.origins):
            return None
        shown = ", ".join(origins)
        shown = shown if len(shown) <= 100 else shown[:100] + "..."
        reason = (
            f"a page of {shown!r} may not open a websocket here: only the server's own pages, "
            "loopback's and those of [server] allowed_origins"
        )
        return _json(connection, http.HTTPStatus.FORBIDDEN, {"error": reason})

    async def _metrics(self, connection: ServerConnection, request: Request) -> Response:
        """``GET /metrics``: the exposition in the format the request accepts."""
        exposition, content_type = await self.metrics.scrape(
            request.headers.get("Accept"), self.store.tournaments
        )
        response = connection.respond(http.HTTPStatus.OK, exposition.decode("utf-8"))
        del response.headers["Content-Type"]
        response.headers["Content-Type"] = content_type
        return response

    async def _metrics_http(self, connection: ServerConnection, request: Request) -> Response:
        """What ``[metrics] listen`` answers: ``GET /metrics`` (and ``HEAD``), nothing else."""
        path = request.path.split("?", 1)[0]
        if path != "/metrics" or request.method not in ("GET", "HEAD"):
            return _json(
                connection,
                http.HTTPStatus.NOT_FOUND,
                {"error": f"only GET /metrics is served here, not {request.method} {path[:100]!r}"},
            )
        try:
            response = await self._metrics(connection, request)
        except Exception:
            log.exception("a scrape of the metrics failed")
            return _json(
                connection,
                http.HTTPStatus.INTERNAL_SERVER_ERROR,
                {"error": "the server failed to answer (logged); try again"},
            )
        return dataclasses.replace(response, body=b"") if request.method == "HEAD" else response

    async def _route(self, connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0].rstrip("/") or "/"
        if path == "/ws":
            return self._origin_refusal(connection, request)
        if path == "/metrics" and self.config.metrics.game_port:
            return await self._metrics(connection, request)
        asset = self.web.get(path)
        if asset is not None:
            return self.web.respond(connection, asset, request)
        if path == "/readyz":
            return await self._ready(connection)
        if path == "/healthz":
            ok = await self.store.ping()
            body: dict[str, Any] = {
                "node": self.node,
                "status": "ok" if ok else "degraded",
                "database": "ok" if ok else "unreachable",
                "tables": len(self.lobby.tables) if self.lobby else 0,
                "connections": len(self.connections),
                "engine": "compiled" if engine.compiled() else "python",
                # Tables restore could not rebuild (their log does not replay), and why.
                "set_aside": [t.to_dict() for t in self.lobby.set_aside.values()]
                if self.lobby
                else [],
            }
            cluster = self.nodes.status()
            if cluster is not None:
                body["cluster"] = cluster
            return _json(
                connection, http.HTTPStatus.OK if ok else http.HTTPStatus.SERVICE_UNAVAILABLE, body
            )
        if path == "/api/queue" and self.matchmaker is not None:
            snapshot = await self.nodes.queue_snapshot()  # (the coordinator's, published)
            if snapshot is not None:
                return _json(connection, http.HTTPStatus.OK, snapshot)
            return _json(connection, http.HTTPStatus.OK, self.matchmaker.snapshot())
        parts = path.strip("/").split("/")
        if parts[0] == "api":
            try:  # one reading of every API request's query (each endpoint takes its own)
                parse_query(request.path.partition("?")[2])
            except BadRequest as exc:
                return _json(connection, http.HTTPStatus.BAD_REQUEST, {"error": str(exc)})
        if self.tournaments is not None:
            found = await tournament_api.route(self.tournaments, parts)
            if found is not None:
                return _answer(connection, found)
        answer = await ladder_api.route(self.store.ladder, parts, request.path.partition("?")[2])
        if answer is not None:
            return _json(connection, *answer)
        if len(parts) == 3 and parts[:2] == ["api", "players"]:
            summary = await self.store.player_summary(parts[2])
            if summary is None:
                return _json(
                    connection, http.HTTPStatus.NOT_FOUND, {"error": f"no player {shown(parts[2])}"}
                )
            summary["ratings"] = await self.store.ladder.player_ratings(parts[2])
            return _json(connection, http.HTTPStatus.OK, summary)
        if len(parts) in (3, 4) and parts[:2] == ["api", "matches"]:
            try:
                match_id = whole_number(parts[2], "a match id")
            except BadRequest as exc:
                return _json(connection, http.HTTPStatus.BAD_REQUEST, {"error": str(exc)})
            held = await self.tournaments.held_match(match_id) if self.tournaments else None
            if held is not None:
                return _json(connection, http.HTTPStatus.FORBIDDEN, {"error": held})
            if len(parts) == 3:
                detail = await self.store.match_detail(match_id)
                if detail is None:
                    return _json(
                        connection, http.HTTPStatus.NOT_FOUND, {"error": f"no match {match_id}"}
                    )
                detail["rating_changes"] = await self.store.rating_changes(match_id)
                return _json(connection, http.HTTPStatus.OK, detail)
            if parts[3] == "replay":
                assert self.lobby is not None
                query = request.path.partition("?")[2]
                try:
                    body = await replay.hand_replay(self.store, self.lobby.presets, match_id, query)
                except replay.Refused as exc:
                    return _json(connection, exc.status, {"error": exc.reason})
                return replay.compressed(_json(connection, http.HTTPStatus.OK, body), request)
            if parts[3] == "log":
                lines = await self.store.match_log(match_id)
                if lines is None:
                    return _json(
                        connection,
                        http.HTTPStatus.NOT_FOUND,
                        {"error": f"no finished match {match_id} (logs are published at its end)"},
                    )
                text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
                response = connection.respond(http.HTTPStatus.OK, text)
                del response.headers["Content-Type"]  # respond() set text/plain: one header
                response.headers["Content-Type"] = "application/x-ndjson; charset=utf-8"
                response.headers["Content-Disposition"] = (
                    f'attachment; filename="match-{match_id}.jsonl"'
                )
                return response
        return _json(connection, http.HTTPStatus.NOT_FOUND, {"error": f"nothing at {shown(path)}"})


async def _no_websocket(ws: ServerConnection) -> None:
    """The metrics' address opens no websocket (every request is answered before)."""
    await ws.close(1008, "no websocket here")


def _json_errors(
    connection: ServerConnection, request: Request, response: Response
) -> Response | None:
    """A refused websocket handshake (a plain GET of ``/ws``...) is answered by the websockets
    library in plain text: send the same status and words as JSON, like every HTTP error."""
    if response.status_code < 400 or "application/json" in response.headers.get("Content-Type", ""):
        return None
    reason = response.body.decode("utf-8", "replace").strip()
    answer = _json(connection, http.HTTPStatus(response.status_code), {"error": reason})
    answer.headers["Server"] = response.headers.get("Server", f"guobiao/{VERSION}")
    return answer


def _answer(connection: ServerConnection, answer: tournament_api.Answer) -> Response:
    if answer.text is None:
        return _json(connection, answer.status, answer.body)
    response = connection.respond(answer.status, answer.text)
    del response.headers["Content-Type"]
    response.headers["Content-Type"] = answer.content_type
    response.headers["Content-Disposition"] = f'attachment; filename="{answer.filename}"'
    return response


def _json(connection: ServerConnection, status: http.HTTPStatus, body: Any) -> Response:
    response = connection.respond(status, json.dumps(body, ensure_ascii=False, default=str))
    del response.headers["Content-Type"]
    response.headers["Content-Type"] = "application/json; charset=utf-8"
    return response

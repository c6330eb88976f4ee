"""The game server: the websocket listener, the HTTP API on the same port, start and stop.

Each websocket is served by a ``Connection`` (``server.connection``). The app holds the
database, the lobby, the ladder queue, the tournaments and the other nodes
(``server.nodes``: none for a server alone, in cluster mode this process as a node of the
cluster), made when it starts.
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
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from websockets.asyncio.server import Server as WsServer
from websockets.asyncio.server import ServerConnection, serve
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol

import engine
from server import VERSION, accounts, match_access, replay
from server.config import Config
from server.connection import TOO_MANY_FROM_ADDRESS, Connection, EndOfTurn, address_of
from server.db.engine import POSTGRES_ANSWER_WAIT
from server.db.models import iso
from server.db.store import Store, upgrade
from server.errors import shown
from server.handoff import AdoptedConnection, Handoff
from server.ladder import api as ladder_api
from server.ladder.queue import Matchmaker
from server.lobby import Lobby
from server.metrics import Metrics
from server.nodes import Nodes, OneNode
from server.origins import origin_allowed, parse_allowed
from server.protocol import error
from server.query import BadRequest, parse_query, whole_number
from server.review import Busy, Reviews
from server.stalls import StallWatch
from server.static import WebFiles
from server.tasks import stop_task
from server.tournaments import api as tournament_api
from server.tournaments.host import Tournaments

log = logging.getLogger("guobiao.server")

SLOW_STOP_STEP = 2.0  # seconds: a step of the stop that takes longer is logged
# Every websocket connection's keepalive and queue, those it accepts and those another worker
# handed it alike.
WS_OPTIONS: dict[str, Any] = {"max_queue": 16, "ping_interval": 20, "ping_timeout": 20}


class App:
    """The running server: configuration, database, lobby, connections."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.store: Any = None
        self.lobby: Lobby | None = None
        self.matchmaker: Matchmaker | None = None
        self.tournaments: Tournaments | None = None
        self.connections: set[Connection] = set()
        # How many of them each client address holds (``[limits] connections_per_address``).
        self.connections_by_address: Counter[str] = Counter()
        self.end_of_turn = EndOfTurn()  # what they were sent this turn, written at its end
        self.ws_server: WsServer | None = None
        self.slow_drops = 0
        self.guard = accounts.Guard(config.accounts)
        self.purger: asyncio.Task[None] | None = None
        # A stop of the process moves the tables' clocks on (``server.stalls``).
        self.stalls: StallWatch | None = None
        self.web = WebFiles(tests=config.server.test_pages)
        if config.server.test_pages and self.web.get("/test/") is None:
            log.warning("[server] test_pages is on, but this install has no in-page tests")
        self.origins = parse_allowed(config.server.allowed_origins)  # besides own, loopback
        self.metrics = Metrics(self)  # GET /metrics; a registry of this server's own
        self.metrics_server: WsServer | None = None  # [metrics] listen, when set
        # The other nodes: none (a server alone), or in cluster mode this process as a node.
        self.nodes: Nodes = OneNode()
        self.by_cid: dict[str, Connection] = {}  # connections by their cluster-wide id
        self.reviews = Reviews(config.review)  # GET /api/matches/{id}/review
        # Set once ``start`` is done: until then /readyz says "starting" (it listens before:
        # the metrics' port and the cluster's start come after), and ``guobiao serve`` takes
        # its signals, in the same step of the loop, before anyone can be told it is ready.
        self.started = False
        self.stopping: str | None = None  # the step of ``stop`` under way
        # ``serve --workers``: where this worker takes connections its siblings hand it, and
        # hands them those that join a table a sibling runs (server/handoff.py).
        self.handoff: Handoff | None = None

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
        """This server's name (the metrics' ``node`` label, a cluster node's identity):
        ``[server] node``, else ``hostname:port`` (the port configured, or listened on when
        that is 0: a cluster node, named before it listens, needs one or the other,
        ``Config.check_cluster_node``)."""
        if self.config.server.node:
            return self.config.server.node
        return f"{socket.gethostname()}:{self.config.server.port or self.port}"

    def tables_paused(self) -> int:
        """The tables paused because the database does not take their writes though it
        answers reads (a full disk, a read-only file): players' moves are refused there."""
        tables = self.lobby.tables.values() if self.lobby else ()
        return sum(1 for t in tables if t.writes_failing)

    @property
    def writes_failing(self) -> bool:
        """Whether the server's writes fail now (``/healthz``'s "writes failing", the
        metrics' ``guobiao_writes_failing``): the store's last write failed (any write, a
        login's, a match's end: server/db/write_health.py), or a table is paused by its
        own (between its tries a full disk may still take a smaller write)."""
        if self.store is not None and self.store.writes.failing:
            return True
        return self.tables_paused() > 0

    @property
    def write_failures(self) -> int:
        """The writes the database failed since the store opened (``WriteHealth``)."""
        return self.store.writes.failures if self.store is not None else 0

    async def start(self) -> None:
        self.config.check_cluster_database()
        self.config.check_cluster_node()
        self.config.check_handoff_dir()
        self.metrics.start()
        url = self.config.database_url
        await upgrade(url)
        # Bounded waits for PostgreSQL's answers: a database that stops answering costs a
        # pause, not a hang (docs/deployment.md, "A database that stops answering").
        self.store = await Store.open(url, answer_wait=POSTGRES_ANSWER_WAIT)
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
        self.stalls = StallWatch(self.lobby.stalled)
        self.stalls.start()  # (in cluster mode too: the tables it adopts are in the lobby)
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
            server_header=f"guobiao/{VERSION}",
            # ``serve --workers``: the workers listen on one port (the kernel spreads the
            # connections among them); any other server keeps its port to itself.
            reuse_port=self.config.server.share_port,
            **WS_OPTIONS,
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
        if self.config.server.handoff_dir and self.config.clustered:
            self.handoff = Handoff(self.config.server.handoff_dir, self.node, self._adopt)
            self.handoff.start()
        self.started = True

    @property
    def metrics_port(self) -> int | None:
        """The port of ``[metrics] listen`` (None: not set)."""
        if self.metrics_server is None:
            return None
        return int(next(iter(self.metrics_server.sockets)).getsockname()[1])

    async def stop(self) -> None:
        """Stop accepting, tell clients, let tables finish writing, close the database.

        Step by step (``stopping``: the step under way, which ``guobiao serve`` names if the
        stop takes too long); a step that takes over ``SLOW_STOP_STEP`` seconds is logged
        with its time, so that a slow stop says where it was slow."""
        for step, run in (
            ("stopping listening", self._stop_listening),
            ("handing the tables to other nodes", self.nodes.hand_over),  # (cluster mode)
            ("stopping the ladder's queue", self._stop_matchmaker),
            ("closing the tournaments", self._close_tournaments),
            ("stopping the tables", self._stop_tables),
            ("telling the clients", self._tell_clients),
            ("closing the connections", self._close_connections),
            ("stopping the purge", self._stop_purger),
            ("leaving the cluster", self.nodes.close),
            ("closing the database", self._close_store),
            ("closing the metrics", self._close_metrics),
        ):
            self.stopping = step
            began = time.monotonic()
            await run()
            took = time.monotonic() - began
            if took > SLOW_STOP_STEP:
                log.warning("stopping: %s took %.1f s", step, took)
        self.stopping = "stopped"

    async def _stop_listening(self) -> None:
        if self.handoff is not None:
            self.handoff.close()
        if self.ws_server is not None:
            self.ws_server.server.close()  # stop listening; connections stay open for now

    async def _stop_matchmaker(self) -> None:
        if self.matchmaker is not None:
            await self.matchmaker.stop()

    async def _close_tournaments(self) -> None:
        if self.tournaments is not None:
            await self.tournaments.close()

    async def _stop_tables(self) -> None:
        if self.lobby is not None:
            await self.lobby.shutdown()

    async def _tell_clients(self) -> None:
        for conn in list(self.connections):
            conn.send(error("server_shutdown", "the server is stopping; reconnect soon"))
            await conn.close_writer()

    async def _close_connections(self) -> None:
        if self.ws_server is not None:
            self.ws_server.close()  # closes every connection with 1001 (going away)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws_server.wait_closed(), 5)

    async def _stop_purger(self) -> None:
        if self.purger is not None:
            await stop_task(self.purger)
        if self.stalls is not None:
            self.stalls.stop()
        self.guard.close()

    async def _close_store(self) -> None:
        if self.store is not None:
            await self.store.close()

    async def _close_metrics(self) -> None:
        if self.metrics_server is not None:
            self.metrics_server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.metrics_server.wait_closed(), 5)
        await self.reviews.close()
        await self.metrics.stop()

    def _peers(self) -> list[Any]:
        """Every connection the tournaments may tell something: ours, and in cluster mode
        those of other nodes that spoke to this one."""
        return [*self.connections, *self.nodes.remote_peers()]

    async def _ready(self, connection: ServerConnection) -> Response:
        """``/readyz``: whether a proxy should send this server new connections."""
        if not self.started:
            why: str | None = "starting"
        elif not await self.store.ping():
            why = "the database does not answer"
        else:
            why = self.nodes.unready()  # (cluster mode: draining, or Redis does not answer)
        if why is None:
            return _json(connection, http.HTTPStatus.OK, {"ready": True, "node": self.node})
        body = {"ready": False, "node": self.node, "why": why}
        return _json(connection, http.HTTPStatus.SERVICE_UNAVAILABLE, body)

    async def _health(self, connection: ServerConnection) -> Response:
        """``/healthz``: whether the process is alive (200 while the database answers), and
        what it sees (docs/protocol.md)."""
        ok = await self.store.ping()
        tables = self.lobby.tables if self.lobby else {}
        writes = self.store.writes
        failing = self.writes_failing
        last = None
        if writes.last_failure is not None:
            last = {"at": iso(writes.last_failure), "reason": writes.last_reason}
        body: dict[str, Any] = {
            "node": self.node,
            "status": "ok" if ok and not failing else "degraded",
            "database": "unreachable" if not ok else "writes failing" if failing else "ok",
            "tables": len(tables),
            "tables_paused": self.tables_paused(),
            "writes_failing_since": iso(writes.failing_since),
            "last_write_failure": last,
            "connections": len(self.connections),
            "engine": "compiled" if engine.compiled() else "python",
            # Tables restore could not rebuild (their log does not replay), and why.
            "set_aside": [t.to_dict() for t in self.lobby.set_aside.values()] if self.lobby else [],
        }
        status = self.nodes.status()  # (a node of a cluster: the cluster's part)
        if status is not None:
            body["cluster"] = status
        return _json(
            connection, http.HTTPStatus.OK if ok else http.HTTPStatus.SERVICE_UNAVAILABLE, body
        )

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

    def _adopt(self, sock: socket.socket, state: dict[str, Any]) -> None:
        """Serve a connection a sibling worker handed over (``server.handoff``), its state
        with it; closed at once if this server is stopping."""
        if self.ws_server is None or self.stopping is not None:
            sock.close()
            return
        task = asyncio.get_running_loop().create_task(self._serve_adopted(sock, state))
        self.ws_server.handler_tasks.add(task)  # (the websocket server's stop waits for it)

    async def _serve_adopted(self, sock: socket.socket, state: dict[str, Any]) -> None:
        server = self.ws_server
        assert server is not None
        try:
            protocol = ServerProtocol(
                state=State.OPEN, max_size=self.config.limits.max_message_bytes
            )
            ws = AdoptedConnection(protocol, server, **WS_OPTIONS)
            try:
                await asyncio.get_running_loop().connect_accepted_socket(lambda: ws, sock)
            except OSError:
                sock.close()  # (the client went meanwhile)
                return
            server.all_connections.add(ws)
            ws.start_keepalive()
            try:
                async with ws:  # (closed as any connection is when it is done)
                    await self._handle(ws, state)
            except Exception:
                log.exception("serving a handed connection failed")
            finally:
                server.all_connections.discard(ws)
        finally:
            server.handler_tasks.discard(asyncio.current_task())

    async def _handle(self, ws: ServerConnection, handed: dict[str, Any] | None = None) -> None:
        """Serve one websocket connection; ``handed``: one a sibling worker handed over,
        with its state and the message it is to handle first."""
        limits = self.config.limits
        if len(self.connections) >= limits.max_connections:
            await ws.close(1013, "server full")
            return
        address = address_of(ws)
        if limits.connections_per_address and (
            self.connections_by_address[address] >= limits.connections_per_address
        ):
            await ws.close(1013, TOO_MANY_FROM_ADDRESS)
            return
        # The handshake is over and its headers are read no more, but websockets keeps the
        # request and the response for the connection's life: about 3.9 KiB a connection of
        # header names and values (benchmarks/bench_memory.py).
        for message in (ws.request, ws.response):
            if message is not None:
                message.headers.clear()
        conn = Connection(ws, self)
        self.connections.add(conn)
        self.by_cid[conn.cid] = conn
        self.connections_by_address[address] += 1
        try:
            await conn.serve(handed)
        finally:
            self.connections.discard(conn)
            self.by_cid.pop(conn.cid, None)
            left = self.connections_by_address[address] - 1
            if left:
                self.connections_by_address[address] = left
            else:
                del self.connections_by_address[address]

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
        # One reading of the query of every JSON answer, /healthz, /readyz and /api/queue
        # included (docs/protocol.md, "HTTP on the same port"); each endpoint takes its own.
        try:
            parse_query(request.path.partition("?")[2])
        except BadRequest as exc:
            return _json(connection, http.HTTPStatus.BAD_REQUEST, {"error": str(exc)})
        if path == "/readyz":
            return await self._ready(connection)
        if path == "/healthz":
            return await self._health(connection)
        if path == "/api/queue" and self.matchmaker is not None:
            snapshot = await self.nodes.queue_snapshot()  # (the coordinator's, published)
            if snapshot is not None:
                return _json(connection, http.HTTPStatus.OK, snapshot)
            return _json(connection, http.HTTPStatus.OK, self.matchmaker.snapshot())
        parts = path.strip("/").split("/")
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
            # Who may read the match, and how much of it (server/match_access.py), once for
            # every path of it: a private table's needs its invite code, a table whose
            # spectators see it late shows its record as late.
            privacy = await self.store.match_privacy(match_id)
            shown_until = None
            if privacy is not None:
                given = parse_query(request.path.partition("?")[2]).get(match_access.INVITE)
                refused = match_access.invite_refusal(privacy, match_id, given)
                if refused is not None:
                    body = {"error": refused, "private": True}
                    return _json(connection, http.HTTPStatus.FORBIDDEN, body)
                shown_until = match_access.shown_until(privacy, datetime.now(UTC))
            held = await self.tournaments.held_match(match_id) if self.tournaments else None
            if held is not None:
                return _json(connection, http.HTTPStatus.FORBIDDEN, {"error": held})
            if len(parts) == 3:
                detail = await self.store.match_detail(match_id, shown_until=shown_until)
                if detail is None:
                    return _json(
                        connection, http.HTTPStatus.NOT_FOUND, {"error": f"no match {match_id}"}
                    )
                detail["rating_changes"] = (
                    await self.store.rating_changes(match_id) if detail["finished"] else []
                )
                return _json(connection, http.HTTPStatus.OK, detail)
            if shown_until is not None and parts[3] in ("replay", "review", "log"):
                assert privacy is not None  # (a delay is its table's)
                reason = match_access.delayed_refusal(privacy, match_id)
                return _json(connection, http.HTTPStatus.NOT_FOUND, {"error": reason})
            if parts[3] == "replay":
                assert self.lobby is not None
                query = request.path.partition("?")[2]
                try:
                    body = await replay.hand_replay(self.store, self.lobby.presets, match_id, query)
                except replay.Refused as exc:
                    return _json(connection, exc.status, {"error": exc.reason})
                return replay.compressed(_json(connection, http.HTTPStatus.OK, body), request)
            if parts[3] == "review":
                return await self._review(connection, request, match_id)
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

    async def _review(
        self, connection: ServerConnection, request: Request, match_id: int
    ) -> Response:
        """``GET /api/matches/{id}/review?player=NAME`` (server/review.py), once the match's
        record may be shown (``_route`` checked)."""
        assert self.lobby is not None
        query = request.path.partition("?")[2]
        address = str(connection.remote_address[0]) if connection.remote_address else ""
        try:
            body = await self.reviews.answer(
                self.store, self.lobby.presets, match_id, query, address
            )
        except Busy as exc:
            refusal = _json(
                connection, exc.status, {"error": exc.reason, "retry_after": exc.retry_after}
            )
            refusal.headers["Retry-After"] = str(exc.retry_after)
            return refusal
        except replay.Refused as exc:
            return _json(connection, exc.status, {"error": exc.reason})
        return replay.compressed(_json(connection, http.HTTPStatus.OK, body), request)


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

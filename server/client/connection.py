"""One websocket connection to a guobiao server (``Connection``): the hello, pacing, requests
matched to their answers, and a reader task that routes what the server sends to the
per-table state, the ``on_message`` callback and ``messages()``.

Frames go out and come in through the message registry (``server.messages.registry``):
a request of a type the server does not accept is refused here, before it is sent, and a
server message is read into its typed class on demand (``Incoming.message``)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import Any, Self
from urllib.parse import urlsplit, urlunsplit

import orjson
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI
from websockets.protocol import State

from engine.errors import InvalidWire
from engine.follow import follow
from server.client.errors import (
    ClientError,
    ConnectFailed,
    ConnectionLost,
    RequestTimeout,
    ServerError,
)
from server.client.state import Incoming, Predicate, Session, TableState, TournamentSeat
from server.messages import registry
from server.tasks import stop_task

log = logging.getLogger("guobiao.client")

PROTOCOL_VERSIONS = (1, 2)  # 2: the seats of an update that is not full are followed
CLIENT_NAME = "guobiao-client/0.1"
# Pacing: the server's default [limits] messages_per_second, and half its message_burst. The
# slack matters: when the server stalls, frames sent at a steady pace reach it bunched up
# while its bucket sat full (credit lost), and a client using the whole burst gets refused.
DEFAULT_RATE = 20.0
DEFAULT_BURST = 20
REQUEST_TIMEOUT = 10.0
PING_INTERVAL = 20.0  # seconds between keepalive pings (websockets' default)
RESYNC_SECONDS = 5.0  # a ``sync`` for an update not followed, asked again if not answered

# Server messages that concern one table (their payload names it).
TABLE_MESSAGES = frozenset({"update", "table", "commit", "reveal", "match_end"})


class Connection:
    """One websocket connection to a guobiao server: sending, requests and their answers,
    and the reader that keeps the tables' state. ``Client`` adds the protocol's requests."""

    def __init__(
        self,
        ws: ClientConnection,
        *,
        record: bool = False,
        on_message: Callable[[Incoming], None] | None = None,
        queue_messages: bool = True,
        rate: float | None = DEFAULT_RATE,
        burst: int = DEFAULT_BURST,
        timeout: float = REQUEST_TIMEOUT,
        follow_seats: bool = True,
    ) -> None:
        self.ws = ws
        self.timeout = timeout
        # Whether a brief update's seats are followed (``_whole_view``); off, its view is
        # kept as sent, without seats: for a bot that reads none (``engine.bots.SEATLESS``).
        self.follow_seats = follow_seats
        self.record = record
        self.frames: list[dict[str, Any]] = []  # every received frame when ``record``
        self.on_message = on_message
        self.welcome: dict[str, Any] = {}
        self.version = 1  # the protocol version the server speaks to us (``welcome``)
        self.session: Session | None = None
        self.tables: dict[str, TableState] = {}
        # (tournament, session) -> our seat, from the ``tournament_session`` pushes
        self.tournament_seats: dict[tuple[int, int], TournamentSeat] = {}
        self._seats_taken: set[tuple[int, int]] = set()  # returned by wait_tournament_session
        self.rate = rate if rate and rate > 0 else None
        self._tokens = float(burst)
        self._burst = float(burst)
        self._refilled = time.monotonic()
        self._ids = itertools.count(1)
        self._pending: dict[str | int, asyncio.Future[Incoming]] = {}
        self._waiters: list[tuple[Predicate, asyncio.Future[Incoming]]] = []
        self._actions: dict[str | int, str] = {}  # id of an action we sent -> its table
        self._queue: asyncio.Queue[Incoming | None] | None = (
            asyncio.Queue() if queue_messages else None
        )
        self.closing = False  # close() was called: the end of the connection is ours
        self.closed = asyncio.Event()
        self.close_code: int | None = None
        self.close_reason = ""
        self.sent = 0  # frames sent
        self.received = 0  # frames received
        self.actions_sent = 0
        self._background: set[asyncio.Task[Any]] = set()
        self._reader = asyncio.get_running_loop().create_task(self._read(), name="client-reader")

    # ------------------------------------------------------------ connect ---

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        client_name: str = CLIENT_NAME,
        open_timeout: float = 10.0,
        proxy: str | None = None,
        versions: Iterable[int] = PROTOCOL_VERSIONS,
        ping_interval: float | None = PING_INTERVAL,
        **options: Any,
    ) -> Self:
        """Open a connection, say ``hello`` and check the ``welcome``.

        ``url`` is ``ws://HOST:PORT/ws``; without a path, ``/ws`` is added. ``options`` go to
        ``Client`` (``record``, ``on_message``, ``queue_messages``, ``rate``, ``burst``,
        ``timeout``, ``follow_seats``: False keeps each brief update's view as sent, without
        the seats, for a bot that reads none, ``guobiao loadtest``'s fast bots). No proxy
        unless ``proxy`` names one. ``versions``: the protocol versions offered (the server
        speaks the highest it knows). ``ping_interval``: seconds between this client's
        keepalive pings (None: it sends none, as a browser does; the server pings every
        connection itself and drops one that stops answering). Raises ``ConnectFailed`` when
        the server cannot be reached or refuses the connection, ``ServerError`` when it
        refuses the hello (``unsupported_version``).
        """
        url = normalize_url(url)
        try:
            ws = await ws_connect(
                url,
                open_timeout=open_timeout,
                compression=None,
                max_size=2**22,
                ping_interval=ping_interval,
                user_agent_header=client_name,
                proxy=proxy,
            )
        except InvalidURI as exc:
            raise ConnectFailed(f"{url} is not a websocket URL (ws://HOST:PORT/ws): {exc}") from exc
        except InvalidStatus as exc:
            status = exc.response.status_code
            raise ConnectFailed(
                f"{url}: the server answered HTTP {status} instead of opening a websocket"
                + (" (server full?)" if status == 503 else "")
            ) from None
        except (OSError, TimeoutError, InvalidHandshake) as exc:
            errno = getattr(exc, "errno", None)
            reason = (
                os.strerror(errno).lower()
                if errno
                else str(exc) or ("timed out" if isinstance(exc, TimeoutError) else repr(exc))
            )
            raise ConnectFailed(f"cannot connect to {url}: {reason}") from None
        client = cls(ws, **options)
        try:
            reply = await client.request(
                "hello", {"versions": list(versions), "client": client_name}
            )
        except BaseException:
            await client.close()
            raise
        if reply.type != "welcome":
            await client.close()
            raise ConnectFailed(f"{url}: expected 'welcome' in answer to hello, got {reply.type!r}")
        client.welcome = reply.payload
        client.version = int(reply.payload.get("version", 1))
        return client

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connection and stop the reader; pending requests fail."""
        self.closing = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(), 5)
        with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._reader), 5)
        await stop_task(self._reader)

    @property
    def is_open(self) -> bool:
        return not self.closed.is_set()

    @property
    def username(self) -> str | None:
        return self.session.username if self.session else None

    # ------------------------------------------------------------ sending ---

    async def _pace(self) -> None:
        """Wait for a token of the bucket (``rate`` a second, ``burst`` at once)."""
        if self.rate is None:
            return
        while True:
            now = time.monotonic()
            self._tokens = min(self._burst, self._tokens + (now - self._refilled) * self.rate)
            self._refilled = now
            if self._tokens >= 1:
                self._tokens -= 1
                return
            await asyncio.sleep((1 - self._tokens) / self.rate)

    async def send(self, kind: str, payload: Mapping[str, Any] | None = None) -> str | int:
        """Send a message without waiting for anything; return its ``id``."""
        mid = next(self._ids)
        await self._send(kind, payload, mid)
        return mid

    async def _send(
        self,
        kind: str,
        payload: Mapping[str, Any] | None,
        mid: str | int,
        before: Callable[[], None] | None = None,
    ) -> None:
        if self.closed.is_set():
            raise ConnectionLost(self.close_code, self.close_reason)
        await self._pace()
        if before is not None:
            before()  # right before the frame goes out (after any pacing)
        text = request_frame(kind, payload, mid)
        try:
            await self.ws.send(text)
        except ConnectionClosed as exc:
            # Closed now, even if the reader has yet to see it: whoever gets this error
            # and asks ``is_open`` must hear the same.
            self.closed.set()
            raise self._lost(exc) from None
        self.sent += 1

    async def request(
        self,
        kind: str,
        payload: Mapping[str, Any] | None = None,
        *,
        until: Predicate | None = None,
        timeout: float | None = None,
    ) -> Incoming:
        """Send a request and wait for the message answering it.

        The answer is the message whose ``reply_to`` is the request's id, or, for requests
        the server answers without ``reply_to`` (``add_bots``), the first message
        after it for which ``until`` is true. An ``error`` answering the id raises
        ``ServerError``.
        """
        loop = asyncio.get_running_loop()
        mid = next(self._ids)
        future: asyncio.Future[Incoming] = loop.create_future()
        self._pending[mid] = future
        waiter = (until, future) if until is not None else None
        if waiter is not None:
            self._waiters.append(waiter)
        try:
            await self._send(kind, payload, mid)
            limit = self.timeout if timeout is None else timeout
            try:
                return await asyncio.wait_for(asyncio.shield(future), limit)
            except TimeoutError:
                raise RequestTimeout(f"no answer to {kind!r} within {limit:g} s") from None
        finally:
            self._pending.pop(mid, None)
            if waiter is not None:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            _settle(future)

    async def wait_for(self, predicate: Predicate, timeout: float | None = None) -> Incoming:
        """The next message (that answers no request) for which ``predicate`` is true."""
        future: asyncio.Future[Incoming] = asyncio.get_running_loop().create_future()
        waiter = (predicate, future)
        self._waiters.append(waiter)
        try:
            limit = self.timeout if timeout is None else timeout
            try:
                return await asyncio.wait_for(asyncio.shield(future), limit)
            except TimeoutError:
                raise RequestTimeout(f"no such message within {limit:g} s") from None
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(waiter)
            _settle(future)

    # ----------------------------------------------------------- messages ---

    async def messages(self) -> AsyncIterator[Incoming]:
        """Every routed message, in order, until the connection closes."""
        if self._queue is None:
            raise ClientError("this client was made with queue_messages=False")
        while True:
            item = await self._queue.get()
            if item is None:
                self._queue.put_nowait(None)  # for any other consumer
                return
            yield item

    async def next_message(self, timeout: float | None = None) -> Incoming | None:
        """The next routed message, or None when the connection closed."""
        if self._queue is None:
            raise ClientError("this client was made with queue_messages=False")
        limit = self.timeout if timeout is None else timeout
        try:
            item = await asyncio.wait_for(self._queue.get(), limit)
        except TimeoutError:
            raise RequestTimeout(f"no message within {limit:g} s") from None
        if item is None:
            self._queue.put_nowait(None)
        return item

    # ------------------------------------------------------------- reader ---

    def _table(self, table: str) -> TableState:
        state = self.tables.get(table)
        if state is None:
            state = self.tables[table] = TableState(table)
        return state

    def _lost(self, exc: ConnectionClosed | None) -> ConnectionLost:
        if exc is not None and exc.rcvd is not None:
            self.close_code, self.close_reason = exc.rcvd.code, exc.rcvd.reason
        return ConnectionLost(self.close_code, self.close_reason)

    async def _read(self) -> None:
        error: ConnectionClosed | None = None
        try:
            async for frame in self.ws:
                now = time.perf_counter()
                self.received += 1
                try:
                    data = _loads(frame)
                except (ValueError, TypeError):
                    log.warning("ignoring a frame that is not JSON: %.80r", frame)
                    continue
                if not isinstance(data, dict) or not isinstance(data.get("type"), str):
                    log.warning("ignoring a frame that is not a message: %.80r", frame)
                    continue
                if self.record:
                    self.frames.append(data)
                self._dispatch(data, now)
        except ConnectionClosed as exc:
            error = exc
        except Exception:
            log.exception("client reader failed")
        finally:
            if error is None and self.ws.close_code is not None:
                self.close_code, self.close_reason = self.ws.close_code, self.ws.close_reason or ""
            lost = self._lost(error)
            self.closed.set()
            for future in list(self._pending.values()):
                if not future.done():
                    future.set_exception(lost)
            for _, future in list(self._waiters):
                if not future.done():
                    future.set_exception(lost)
            self._pending.clear()
            self._waiters.clear()
            if self._queue is not None:
                self._queue.put_nowait(None)

    def _dispatch(self, data: dict[str, Any], now: float) -> None:
        kind: str = data["type"]
        payload = data.get("payload")
        if not isinstance(payload, dict):
            payload = {}
        reply_to = data.get("reply_to")
        table = payload.get("table") if isinstance(payload.get("table"), str) else None
        if reply_to is not None and reply_to in self._actions:
            table = self._actions.pop(reply_to)
        latency = self._apply(kind, payload, table, now, reply_to)
        message = Incoming(kind, payload, reply_to, table, now, latency)
        future = self._pending.get(reply_to) if reply_to is not None else None
        if future is not None:
            if not future.done():
                if kind == "error":
                    future.set_exception(refused(payload))
                else:
                    future.set_result(message)
            if kind != "update":
                return  # an update answering ``sync`` is table state: routed as any other
        for predicate, waiting in list(self._waiters):
            if not waiting.done():
                try:
                    matched = predicate(message)
                except Exception:
                    log.exception("a message predicate failed")
                    matched = False
                if matched:
                    waiting.set_result(message)
        if self.on_message is not None:
            try:
                self.on_message(message)
            except Exception:
                log.exception("the on_message callback failed")
        if self._queue is not None:
            self._queue.put_nowait(message)

    def _apply(
        self,
        kind: str,
        payload: dict[str, Any],
        table: str | None,
        now: float,
        reply_to: str | int | None,
    ) -> float | None:
        """Keep the per-table state; return the action-to-update latency of an update."""
        if kind == "tournament_session":
            self._seated(payload)
            return None
        if table is None or (kind not in TABLE_MESSAGES and kind != "error"):
            return None
        state = self._table(table)
        if kind == "update":
            latency = None
            if state.action_sent_at is not None:
                latency = now - state.action_sent_at
                state.action_sent_at = None
            state.updates += 1
            seq, last = payload.get("seq"), state.seq
            if isinstance(seq, int):
                state.seq = seq
            hand_no = payload.get("hand_no")
            events = payload.get("events") or []
            if payload.get("full") or (isinstance(hand_no, int) and hand_no != state.hand_no):
                state.events = []
            if isinstance(hand_no, int):
                state.hand_no = hand_no
                # The hand's commitment comes with its deal and every full update, the hand
                # before's reveal with a full update after it (``last_hand``): the first
                # one kept counts.
                if isinstance(payload.get("commitment"), str):
                    state.commits.setdefault(hand_no, payload["commitment"])
                reveal = (payload.get("last_hand") or {}).get("reveal")
                if isinstance(reveal, dict) and isinstance(reveal.get("hand_no"), int):
                    state.reveals.setdefault(reveal["hand_no"], reveal)
            state.hands_total = payload.get("hands_total")
            if isinstance(payload.get("repeat"), int):
                state.repeat = payload["repeat"]
            if isinstance(payload.get("dealer_position"), int):
                state.dealer_position = payload["dealer_position"]
            state.events.extend(e for e in events if isinstance(e, dict))
            if "view" in payload:
                state.view = self._whole_view(state, payload, last)
            if isinstance(payload.get("scores"), list):
                state.scores = list(payload["scores"])
            state.deadline_ms = payload.get("deadline_ms")
            return latency
        if kind == "table":
            state.summary = payload
        elif kind == "commit" and isinstance(payload.get("hand_no"), int):
            state.commits[payload["hand_no"]] = str(payload.get("commitment"))
        elif kind == "reveal" and isinstance(payload.get("hand_no"), int):
            state.reveals[payload["hand_no"]] = payload
        elif kind == "match_end":
            state.match_end = payload
            if isinstance(payload.get("scores"), list):
                state.scores = list(payload["scores"])
        elif kind == "error" and reply_to is not None:
            state.last_error = payload
            state.action_sent_at = None
        return None

    def _whole_view(
        self, state: TableState, payload: dict[str, Any], last: int | None
    ) -> dict[str, Any] | None:
        """The update's view with its seats: as sent, or followed from the last view
        (protocol version 2); None, and a ``sync`` asked for, when it cannot be followed.
        Not followed (``follow_seats`` off): the view as sent."""
        view = payload["view"]
        if not isinstance(view, dict) or "seats" in view:
            state.resync_sent_at = None
            return view
        if not self.follow_seats:
            return view
        seq = payload.get("seq")
        events = [e for e in payload.get("events") or [] if isinstance(e, dict)]
        before = state.view if isinstance(seq, int) and last == seq - 1 else None
        try:
            whole = {**view, "seats": follow(before, events, view)}
        except (InvalidWire, KeyError, TypeError, ValueError) as exc:
            # Once (again after RESYNC_SECONDS if no answer came): the updates until the
            # full one cannot be followed either.
            now = time.monotonic()
            if state.resync_sent_at is None or now - state.resync_sent_at > RESYNC_SECONDS:
                log.info("table %s: update %s not followed (%s): syncing", state.table, seq, exc)
                state.resync_sent_at = now
                self._resync(state.table)
            return None
        del whole["players"]
        return whole

    def _resync(self, table: str) -> None:
        """Ask for a full update of ``table`` (its answer is routed as any update)."""
        if self.ws.state is not State.OPEN:
            return
        text = request_frame("sync", {"table": table}, f"resync-{next(self._ids)}")
        task = asyncio.get_running_loop().create_task(self.ws.send(text))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _seated(self, payload: dict[str, Any]) -> None:
        """A ``tournament_session`` push: record the seat; we sit at its table."""
        try:
            seat = TournamentSeat.from_payload(payload)
        except ClientError as exc:
            log.warning("%s", exc)
            return
        self.tournament_seats[(seat.tournament, seat.session)] = seat
        self._table(seat.table_id).seat = seat.seat


def refused(payload: Mapping[str, Any]) -> ServerError:
    """The ``ServerError`` of an ``error`` message's payload (a table or match it names
    kept only if of the protocol's type)."""
    table, match = payload.get("table"), payload.get("match")
    return ServerError(
        str(payload.get("code")),
        str(payload.get("reason", "")),
        table=table if isinstance(table, str) else None,
        match=match if isinstance(match, int) and not isinstance(match, bool) else None,
    )


def _loads(frame: str | bytes) -> Any:
    """A frame's JSON: read by orjson (a tenth of a load-test client's time was the standard
    library's decoder), by ``json`` where orjson refuses what ``json`` reads (a lone
    surrogate in a string)."""
    try:
        return orjson.loads(frame)
    except orjson.JSONDecodeError:
        return json.loads(frame)


def request_frame(kind: str, payload: Mapping[str, Any] | None, mid: str | int) -> str:
    """A request as its JSON text; ``ClientError`` for a type the server does not accept
    (``server.messages.registry``: a typo fails here, not as the server's ``unknown_type``).
    Fields are not checked: the server ignores those it does not know."""
    if kind not in registry.INBOUND:
        known = ", ".join(sorted(registry.INBOUND))
        raise ClientError(f"{kind!r} is not a message the server accepts; known: {known}")
    return json.dumps({"type": kind, "id": mid, "payload": dict(payload or {})})


def normalize_url(url: str) -> str:
    """``ws://host:port`` -> ``ws://host:port/ws``; ``http(s)`` becomes ``ws(s)``."""
    parts = urlsplit(url.strip())
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    path = parts.path if parts.path not in ("", "/") else "/ws"
    return urlunsplit((scheme, parts.netloc, path, parts.query, ""))


def _settle(future: asyncio.Future[Incoming]) -> None:
    """A request's or a wait's future as its caller leaves: cancelled if nothing came, and an
    error it holds marked read. The reader fails every pending future as the connection
    closes, while its caller may be failing on its own (its send meeting the closed
    connection, a time limit); asyncio would report each such error "never retrieved"."""
    if not future.done():
        future.cancel()
    elif not future.cancelled():
        future.exception()

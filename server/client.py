"""An asyncio client for the guobiao wire protocol (``docs/protocol.md``).

    client = await Client.connect("ws://127.0.0.1:8765/ws")
    await client.guest()
    table = (await client.create_table(turn_seconds=15)).table
    await client.join_table(table)
    await client.add_bots(table, "fast")
    async for message in client.messages():
        if message.type == "update" and client.tables[table].legal:
            await client.act(table, {"type": "pass"})

- Requests carry an ``id``; each request method awaits the reply with the matching
  ``reply_to`` and returns it, or raises ``ServerError(code, reason)`` when the server answers
  with an ``error`` for that id. ``act`` does not wait: the server sends nothing back for an
  accepted action but the next ``update``; a refusal comes as an ``error`` message in
  ``messages()`` (with ``reply_to`` and ``table`` set) and in ``TableState.last_error``.
- A background reader task routes everything else (``update``, ``table``, ``commit``,
  ``reveal``, ``match_end``, errors that answer no pending request) to the per-table state
  (``client.tables``), to the ``on_message`` callback and to the ``messages()`` iterator.
- ``view_from_dict`` turns the wire view back into the engine's typed ``engine.table.View``,
  so that the engine bots can play over the network (``play`` does exactly that), and
  ``event_from_dict`` an event into its ``engine.wire`` type (``TableState.typed_events``):
  both decode through ``engine.wire``, the module the server encodes with.
- Tournaments (docs/tournaments.md): ``tournament_request`` sends any ``tournament_*``
  request and returns the ``tournament`` payload of its answer (its ``kind`` is
  positional-only: a penalty's payload has a ``kind`` of its own); the named methods
  (``tournament_create``, ``tournament_seat``, ...) are thin wrappers. When a session starts,
  the server pushes ``tournament_session`` to each seated player and attaches the connection
  to its table: the client records the seat (``tournament_seats``) and the table's seat, and
  ``wait_tournament_session`` awaits it (or, connected after the start, joins the table the
  tournament names as ``you.seat``); ``play_tournament`` waits and then plays that table.
- ``record=True`` keeps every received frame (``client.frames``), for tests that check what
  the server let a client see.
- Protocol version 2 (the default; ``versions=(1,)`` asks for version 1): an update that is
  not full has no seats in its view; the reader follows them from the last view and the
  events (``engine.follow``), so ``TableState.view`` is always whole. An update it cannot
  follow (one missed, a hand it did not see start) leaves ``view`` None and asks for a
  full one (``sync``).

Outgoing messages are paced by a token bucket (by default 20 a second, bursts of 20: within
the server's default limit of 20 a second, bursts of 40), so that a client does not trip the
server's ``rate_limited`` error.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI
from websockets.protocol import State

from engine import wire
from engine.actions import Action, ActionKind
from engine.bots import Bot
from engine.errors import InvalidWire
from engine.follow import follow
from engine.hand import Meld
from engine.table import View

log = logging.getLogger("guobiao.client")

PROTOCOL_VERSIONS = (1, 2)  # 2: the seats of an update that is not full are followed
CLIENT_NAME = "guobiao-client/0.1"
# Pacing: the server's default [limits] messages_per_second, and half its message_burst. The
# slack matters: when the server stalls, frames sent at a steady pace reach it bunched up
# while its bucket sat full (credit lost), and a client using the whole burst gets refused.
DEFAULT_RATE = 20.0
DEFAULT_BURST = 20
REQUEST_TIMEOUT = 10.0
RESYNC_SECONDS = 5.0  # a ``sync`` for an update not followed, asked again if not answered
MAX_TRACKED_ACTIONS = 256  # ids of recent actions, to tell which table an error is about
HIDDEN_KONG = wire.HIDDEN_KONG  # a face-down kong in a view

# Refusals that mean our answer to this seq is in already (a resent duplicate).
PLAYED = frozenset({"stale", "already_answered"})

# Server messages that concern one table (their payload names it).
TABLE_MESSAGES = frozenset({"update", "table", "commit", "reveal", "match_end"})

TOURNAMENT_PREFIX = "tournament_"
WINDS = ("E", "S", "W", "N")  # a tournament table's seats 0..3, as its seating lists them


# ------------------------------------------------------------------ errors ---


class ClientError(Exception):
    """Anything the client reports."""


class ServerError(ClientError):
    """The server refused a request: an ``error`` message answering it."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason


class ConnectFailed(ClientError):
    """The server could not be reached, or refused the websocket handshake."""


class ConnectionLost(ClientError):
    """The connection closed (``code`` and ``reason`` of the close frame, when there was one)."""

    def __init__(self, code: int | None, reason: str) -> None:
        detail = f" (code {code}{': ' + reason if reason else ''})" if code else ""
        super().__init__(f"the connection to the server closed{detail}")
        self.code = code
        self.reason = reason


class RequestTimeout(ClientError, TimeoutError):
    """No answer to a request in time."""


class ViewError(ClientError, ValueError):
    """A wire view or event that does not decode (``engine.wire``)."""


# ---------------------------------------------------------------- messages ---


@dataclass(frozen=True, slots=True)
class Incoming:
    """One message from the server, as routed to ``messages()`` and ``on_message``.

    ``table`` is the table it concerns (from the payload, or the table of the action an
    error answers). ``latency`` is set on an ``update``: the seconds since this connection
    sent its last action for that table, when that action had had no update yet.
    """

    type: str
    payload: dict[str, Any]
    reply_to: str | int | None = None
    table: str | None = None
    received_at: float = 0.0  # time.perf_counter()
    latency: float | None = None

    @property
    def code(self) -> str | None:
        """An error's code."""
        return self.payload.get("code") if self.type == "error" else None


@dataclass(frozen=True, slots=True)
class Session:
    username: str
    token: str
    guest: bool
    expires: str


@dataclass(frozen=True, slots=True)
class CreatedTable:
    table: str
    invite_code: str | None


@dataclass(frozen=True, slots=True)
class TournamentSeat:
    """Where a ``tournament_session`` push seated this connection's player: the
    tournament's id, the session and table numbers, the wind and the table's id."""

    tournament: int
    session: int
    table: int
    wind: str
    table_id: str

    @property
    def seat(self) -> int:
        """The seat index at the table (0..3 = E S W N, the seating's order)."""
        return WINDS.index(self.wind)

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> TournamentSeat:
        """The seat of a ``tournament_session`` payload; ``ClientError`` naming what is
        missing or malformed."""
        try:
            seat = cls(
                int(payload["tournament"]),
                int(payload["session"]),
                int(payload["table"]),
                str(payload["wind"]),
                str(payload["table_id"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ClientError(
                f"a tournament_session push without a valid {exc}: {payload!r}"
            ) from None
        if seat.wind not in WINDS:
            raise ClientError(f"a tournament_session push with wind {seat.wind!r}: {payload!r}")
        return seat


@dataclass
class TableState:
    """What this connection knows of one table, kept up to date by the reader."""

    table: str
    seat: int | None = None  # our seat (from ``joined``), None when watching
    summary: dict[str, Any] | None = None  # the last ``table`` message
    seq: int | None = None  # the last update's ``seq``: ``act`` answers it
    hand_no: int = 0
    hands_total: int | None = None  # the table's hands; with dealer repeat None till the end
    repeat: int = 0  # the current dealer's repeats (rules other than plain MCR)
    dealer_position: int | None = None  # 0..3 = E S W N (rules other than plain MCR)
    view: dict[str, Any] | None = None  # the last wire view
    scores: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    deadline_ms: int | None = None
    events: list[dict[str, Any]] = field(default_factory=list)  # of the current hand
    commits: dict[int, str] = field(default_factory=dict)  # hand_no -> commitment
    reveals: dict[int, dict[str, Any]] = field(default_factory=dict)  # hand_no -> reveal
    match_end: dict[str, Any] | None = None
    last_error: dict[str, Any] | None = None  # the last refusal of one of our actions
    updates: int = 0
    action_sent_at: float | None = None  # our last action without an update since
    resync_sent_at: float | None = None  # a ``sync`` asked for, not answered yet (monotonic)

    @property
    def legal(self) -> list[dict[str, Any]]:
        """The wire actions we may take now (empty when we need not decide)."""
        if self.view is None:
            return []
        legal: list[dict[str, Any]] = self.view.get("legal") or []
        return legal

    def typed_view(self) -> View | None:
        return view_from_dict(self.view) if self.view is not None else None

    def typed_events(self) -> list[wire.WireEvent]:
        """The events of the current hand as ``engine.wire`` event types."""
        return [event_from_dict(e) for e in self.events]


_Predicate = Callable[[Incoming], bool]


# ------------------------------------------------------------------ client ---


class Client:
    """One websocket connection to a guobiao server. Create it with ``await Client.connect``."""

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
    ) -> None:
        self.ws = ws
        self.timeout = timeout
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
        self._waiters: list[tuple[_Predicate, asyncio.Future[Incoming]]] = []
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
        **options: Any,
    ) -> Client:
        """Open a connection, say ``hello`` and check the ``welcome``.

        ``url`` is ``ws://HOST:PORT/ws``; without a path, ``/ws`` is added. ``options`` go to
        ``Client`` (``record``, ``on_message``, ``queue_messages``, ``rate``, ``burst``,
        ``timeout``). No proxy unless ``proxy`` names one. ``versions``: the protocol
        versions offered (the server speaks the highest it knows). Raises ``ConnectFailed`` when the
        server cannot be reached or refuses the connection, ``ServerError`` when it refuses
        the hello (``unsupported_version``).
        """
        url = normalize_url(url)
        try:
            ws = await ws_connect(
                url,
                open_timeout=open_timeout,
                compression=None,
                max_size=2**22,
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

    async def __aenter__(self) -> Client:
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
        if not self._reader.done():
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader

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
        text = json.dumps({"type": kind, "id": mid, "payload": dict(payload or {})})
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
        until: _Predicate | None = None,
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
            if not future.done():
                future.cancel()

    async def wait_for(self, predicate: _Predicate, timeout: float | None = None) -> Incoming:
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
            if not future.done():
                future.cancel()

    # ----------------------------------------------------------- accounts ---

    async def register(self, username: str, password: str) -> Session:
        reply = await self.request("register", {"username": username, "password": password})
        return self._session(reply)

    async def login(self, username: str, password: str) -> Session:
        reply = await self.request("login", {"username": username, "password": password})
        return self._session(reply)

    async def guest(self) -> Session:
        return self._session(await self.request("guest"))

    async def resume(self, token: str) -> Session:
        """Authenticate with a session token; a seated player then gets its table's update."""
        return self._session(await self.request("resume", {"token": token}))

    async def logout(self) -> None:
        await self.request("logout")
        self.session = None

    def _session(self, reply: Incoming) -> Session:
        p = reply.payload
        self.session = Session(
            str(p.get("username")), str(p.get("token")), bool(p.get("guest")), str(p.get("expires"))
        )
        return self.session

    # -------------------------------------------------------------- lobby ---

    async def list_tables(self) -> list[dict[str, Any]]:
        reply = await self.request("list_tables")
        tables: list[dict[str, Any]] = reply.payload.get("tables", [])
        return tables

    async def create_table(
        self,
        rules: str | None = None,
        turn_seconds: int | None = None,
        private: bool = False,
        *,
        claim_window_ms: int | None = None,
        hands: int | None = None,
        aids: bool | None = None,
        rated: bool = False,
    ) -> CreatedTable:
        payload: dict[str, Any] = {"private": private}
        if rated:
            payload["rated"] = True
        if hands is not None:
            payload["hands"] = hands
        if rules is not None:
            payload["rules"] = rules
        if turn_seconds is not None:
            payload["turn_seconds"] = turn_seconds
        if claim_window_ms is not None:
            payload["claim_window_ms"] = claim_window_ms
        if aids is not None:
            payload["aids"] = aids
        reply = await self.request("create_table", payload)
        return CreatedTable(str(reply.payload["table"]), reply.payload.get("invite_code"))

    async def queue_join(self, ladder: str | None = None, casual: bool = False) -> dict[str, Any]:
        """Join the ladder's matchmaking queue (rated, or ``casual``); returns the first
        ``queue`` status (``"state": "waiting"``). Later statuses, and ``"matched"`` with
        the table the server seated us at, arrive as messages (``wait_for``)."""
        payload: dict[str, Any] = {"casual": casual}
        if ladder is not None:
            payload["ladder"] = ladder
        reply = await self.request("queue_join", payload)
        return reply.payload

    async def queue_leave(self) -> dict[str, Any]:
        """Leave the queue (harmless when not queued); the ``"left"`` status."""
        reply = await self.request("queue_leave", {})
        return reply.payload

    async def join_table(
        self, table: str, seat: int | None = None, invite_code: str | None = None
    ) -> int:
        """Sit at ``table`` (the first free seat when ``seat`` is None); return the seat."""
        payload: dict[str, Any] = {"table": table}
        if seat is not None:
            payload["seat"] = seat
        if invite_code is not None:
            payload["invite_code"] = invite_code
        state = self._table(table)
        reply = await self.request("join_table", payload)
        state.seat = int(reply.payload["seat"])
        return state.seat

    async def add_bots(self, table: str, bot: str = "default") -> dict[str, Any]:
        """Fill the empty seats with server bots; return the table's summary after it.

        The server answers with the ``table`` broadcast, which has no ``reply_to``: the
        first ``table`` message for this table with no empty seat is taken as the answer
        (an earlier broadcast, e.g. of our own join, may still be on its way).
        """
        reply = await self.request(
            "add_bots",
            {"table": table, "bot": bot},
            until=lambda m: (
                m.type == "table" and m.table == table and None not in m.payload.get("seats", [])
            ),
        )
        return reply.payload

    async def leave_table(self, table: str) -> None:
        await self.request("leave_table", {"table": table})
        state = self.tables.get(table)
        if state is not None:
            state.seat = None

    async def watch(self, table: str, invite_code: str | None = None) -> None:
        payload: dict[str, Any] = {"table": table}
        if invite_code is not None:
            payload["invite_code"] = invite_code
        self._table(table)
        await self.request("watch", payload)

    async def analyze(self, table: str) -> dict[str, Any]:
        """The playing aids for our own hand at ``table`` (the ``analysis`` payload:
        docs/protocol.md, "Playing aids"); ``ServerError`` when refused."""
        reply = await self.request("analyze", {"table": table})
        return reply.payload

    async def sync(self, table: str, timeout: float | None = None) -> TableState:
        """Ask for a full update of ``table``; return the table's state once it came.

        The answer (``reply_to``) is a full update (``"full": true``), or the table's
        ``table`` summary when no hand has been dealt there yet.
        """
        self._table(table)
        await self.request("sync", {"table": table}, timeout=timeout)
        return self.tables[table]

    async def ping(self) -> float:
        """Round-trip time of an application ``ping``, in seconds."""
        started = time.perf_counter()
        await self.request("ping")
        return time.perf_counter() - started

    # -------------------------------------------------------- tournaments ---

    async def tournament_request(self, kind: str, /, **payload: Any) -> dict[str, Any]:
        """Send the tournament request ``kind`` (``"tournament_seat"``; the ``tournament_``
        prefix may be left out) with ``payload``'s fields (a None field is left out) and
        return the payload of the ``tournament`` message answering it: the tournament as
        ``GET /api/tournaments/{id}`` gives it, plus ``you``. An ``error`` answer raises
        ``ServerError`` with its code (``not_director``, ``tournament_state``, ...)."""
        if not kind.startswith(TOURNAMENT_PREFIX):
            kind = TOURNAMENT_PREFIX + kind
        fields = {name: value for name, value in payload.items() if value is not None}
        reply = await self.request(kind, fields)
        if reply.type != "tournament":
            raise ClientError(f"expected 'tournament' in answer to {kind!r}, got {reply.type!r}")
        return reply.payload

    async def tournament_create(self, **settings: Any) -> dict[str, Any]:
        """Create a tournament (directors): ``name=``, ``sessions=``, ``seating=``, ... (the
        settings of docs/tournaments.md); returns the new tournament, ``id`` included."""
        return await self.tournament_request("tournament_create", **settings)

    async def tournament_configure(self, tournament: int, **settings: Any) -> dict[str, Any]:
        """Change settings before the first session starts (directors)."""
        return await self.tournament_request(
            "tournament_configure", tournament=tournament, **settings
        )

    async def tournament_get(self, tournament: int) -> dict[str, Any]:
        return await self.tournament_request("tournament_get", tournament=tournament)

    async def tournament_register(self, tournament: int) -> dict[str, Any]:
        """Register this account as a player (registration open; not a guest)."""
        return await self.tournament_request("tournament_register", tournament=tournament)

    async def tournament_withdraw(self, tournament: int) -> dict[str, Any]:
        return await self.tournament_request("tournament_withdraw", tournament=tournament)

    async def tournament_check_in(self, tournament: int) -> dict[str, Any]:
        """Check in for the next session (with ``check_in``, only those who did are seated)."""
        return await self.tournament_request("tournament_check_in", tournament=tournament)

    async def tournament_add_players(
        self, tournament: int, players: Iterable[str]
    ) -> dict[str, Any]:
        """Register the accounts ``players`` (directors)."""
        return await self.tournament_request(
            "tournament_add_players", tournament=tournament, players=list(players)
        )

    async def tournament_remove_player(self, tournament: int, player: str) -> dict[str, Any]:
        return await self.tournament_request(
            "tournament_remove_player", tournament=tournament, player=player
        )

    async def tournament_registration(self, tournament: int, open: bool) -> dict[str, Any]:
        """Open or close self-registration (directors)."""
        return await self.tournament_request(
            "tournament_registration", tournament=tournament, open=open
        )

    async def tournament_seat(self, tournament: int, method: str | None = None) -> dict[str, Any]:
        """Seat the next session (directors), by ``method`` or the settings' method for it;
        seating again recomputes it."""
        return await self.tournament_request(
            "tournament_seat", tournament=tournament, method=method
        )

    async def tournament_swap(self, tournament: int, a: str, b: str) -> dict[str, Any]:
        """Swap two players of the seated session (or a player and one on a bye)."""
        return await self.tournament_request("tournament_swap", tournament=tournament, a=a, b=b)

    async def tournament_start_session(self, tournament: int) -> dict[str, Any]:
        """Start the seated session: its tables are created and the seated players get
        ``tournament_session`` (``wait_tournament_session``)."""
        return await self.tournament_request("tournament_start_session", tournament=tournament)

    async def tournament_substitute(
        self, tournament: int, player: str, substitute: str
    ) -> dict[str, Any]:
        """Replace ``player``'s seat of the session in play by ``substitute`` (an account
        name, or ``"bot"``)."""
        return await self.tournament_request(
            "tournament_substitute", tournament=tournament, player=player, substitute=substitute
        )

    async def tournament_penalty(  # noqa: PLR0917
        self,
        tournament: int,
        player: str,
        kind: str,
        amount: int | str,
        reason: str,
        session: int | None = None,
    ) -> dict[str, Any]:
        """Enter a correction of the log (directors): ``kind`` ``"penalty"``, ``"score"``
        or ``"points"``, a signed ``amount`` (points may be a fraction as text, ``"-1/2"``),
        for ``session`` or overall; the answer's ``entry`` is the new entry's id."""
        return await self.tournament_request(
            "tournament_penalty",
            tournament=tournament,
            player=player,
            kind=kind,
            amount=amount,
            reason=reason,
            session=session,
        )

    async def tournament_undo(self, tournament: int, entry: int, reason: str) -> dict[str, Any]:
        """Withdraw the log entry ``entry`` (an undo of an undo puts its target back)."""
        return await self.tournament_request(
            "tournament_undo", tournament=tournament, entry=entry, reason=reason
        )

    async def tournament_close(self, tournament: int) -> dict[str, Any]:
        return await self.tournament_request("tournament_close", tournament=tournament)

    async def wait_tournament_session(
        self, tournament: int, session: int | None = None, timeout: float | None = None
    ) -> TournamentSeat:
        """Our seat in ``session`` of ``tournament`` (None: the next session not yet
        returned), once the connection is at its table: its updates go to
        ``tables[seat.table_id]`` (``play``).

        The seat comes from the server's ``tournament_session`` push: at once when it came
        already. Else the tournament is asked (``tournament_get``): when its ``you.seat`` is
        at a table of a started session (we connected after it started, or reconnected),
        we join that table. Else the push is awaited (``RequestTimeout`` after ``timeout``).
        A table that no longer takes us (its match is over) raises ``ServerError``.
        """

        def fits(t: object, n: object) -> bool:
            return (
                t == tournament
                and isinstance(n, int)
                and (
                    n == session
                    if session is not None
                    else (tournament, n) not in self._seats_taken
                )
            )

        def pushed(message: Incoming) -> bool:
            p = message.payload
            return message.type == "tournament_session" and fits(
                p.get("tournament"), p.get("session")
            )

        seat = min(
            (s for k, s in self.tournament_seats.items() if fits(*k)), key=_number, default=None
        )
        if seat is None:
            seat = await self._seat_of(tournament, fits)
        if seat is None:
            seat = TournamentSeat.from_payload((await self.wait_for(pushed, timeout)).payload)
        self._seats_taken.add((seat.tournament, seat.session))
        return self.tournament_seats[(seat.tournament, seat.session)]

    async def _seat_of(
        self, tournament: int, fits: Callable[[object, object], bool]
    ) -> TournamentSeat | None:
        """Our seat at a table of a started session, as the tournament says (``you.seat``),
        once we have joined that table; None when we have no such seat."""
        data = await self.tournament_get(tournament)
        you = data.get("you") or {}
        mine = you.get("seat") if isinstance(you, dict) else None
        if not isinstance(mine, dict) or not mine.get("table_id"):
            return None
        if not fits(tournament, mine.get("session")):
            return None
        seat = TournamentSeat.from_payload({"tournament": tournament, **mine})
        key = (seat.tournament, seat.session)
        if key in self.tournament_seats:  # its push came meanwhile: we are at the table
            return self.tournament_seats[key]
        await self.join_table(seat.table_id)
        self.tournament_seats[key] = seat
        return seat

    # --------------------------------------------------------------- play ---

    async def act(
        self, table: str, action: Action | Mapping[str, Any], seq: int | None = None
    ) -> str | int:
        """Send a game action answering the latest update of ``table`` (or ``seq``).

        Does not wait: an accepted action shows in the next ``update``; a refused one comes
        back as an ``error`` message (``reply_to`` the returned id, ``table`` set) and in the
        table's ``last_error``.
        """
        state = self._table(table)
        if seq is None:
            seq = state.seq
        if seq is None:
            raise ClientError(f"no update of table {table} yet: there is nothing to answer")
        wire = action.to_dict() if isinstance(action, Action) else dict(action)
        mid = next(self._ids)
        self._actions[mid] = table
        while len(self._actions) > MAX_TRACKED_ACTIONS:  # accepted actions get no reply
            del self._actions[next(iter(self._actions))]

        def stamp() -> None:
            state.action_sent_at = time.perf_counter()

        await self._send("action", {"table": table, "seq": seq, "action": wire}, mid, stamp)
        self.actions_sent += 1
        return mid

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
                    data = json.loads(frame)
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
                    future.set_exception(
                        ServerError(str(payload.get("code")), str(payload.get("reason", "")))
                    )
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
        (protocol version 2); None, and a ``sync`` asked for, when it cannot be followed."""
        view = payload["view"]
        if not isinstance(view, dict) or "seats" in view:
            state.resync_sent_at = None
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
        message = {"type": "sync", "id": f"resync-{next(self._ids)}", "payload": {"table": table}}
        task = asyncio.get_running_loop().create_task(self.ws.send(json.dumps(message)))
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


def _number(seat: TournamentSeat) -> int:
    return seat.session


def normalize_url(url: str) -> str:
    """``ws://host:port`` -> ``ws://host:port/ws``; ``http(s)`` becomes ``ws(s)``."""
    parts = urlsplit(url.strip())
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    path = parts.path if parts.path not in ("", "/") else "/ws"
    return urlunsplit((scheme, parts.netloc, path, parts.query, ""))


# -------------------------------------------------------------------- views ---


def parse_meld(text: str) -> Meld:
    """``"[123m,1]"`` (chow, claimed tile 1st), ``"[EEE,2]"``, ``"[5555p]"`` (concealed kong)."""
    try:
        return wire.decode_meld(text)
    except InvalidWire as exc:
        raise ViewError(str(exc)) from None


def view_from_dict(d: Mapping[str, Any]) -> View:
    """The engine's ``View`` from its wire form (``engine.wire.decode_view``, the inverse of
    ``View.to_dict``).

    ``"[????]"`` melds become ``hidden_kongs``; river tiles with ``*`` were claimed; a view
    without ``you`` is a spectator's (``viewer`` None, nothing legal). Raises ``ViewError``
    saying what is malformed.
    """
    try:
        return wire.decode_view(d)
    except InvalidWire as exc:
        raise ViewError(str(exc)) from None


def event_from_dict(d: Mapping[str, Any]) -> wire.WireEvent:
    """An event (``{"kind": "discard", ...}``) as its ``engine.wire`` type; raises
    ``ViewError`` saying what is malformed."""
    try:
        return wire.decode_event(d)
    except InvalidWire as exc:
        raise ViewError(str(exc)) from None


# --------------------------------------------------------------- playing ---


def fallback_action(view: View) -> Action:
    """The simplest safe move: pass, else discard the drawn tile, else the first legal."""
    if Action(ActionKind.PASS) in view.legal:
        return Action(ActionKind.PASS)
    if view.drawn is not None and Action(ActionKind.DISCARD, view.drawn) in view.legal:
        return Action(ActionKind.DISCARD, view.drawn)
    return view.legal[0]


async def play(
    client: Client,
    table: str,
    bot: Bot,
    *,
    stopping: Callable[[], bool] | None = None,
    think: float | Callable[[Action], float] = 0.0,
    on_message: Callable[[Incoming], None] | None = None,
) -> dict[str, Any] | None:
    """Play ``table`` with ``bot`` until the match ends; return the ``match_end`` payload.

    Reads ``client.messages()``: on each update that asks this seat to decide, the bot
    chooses on the typed view (``view_from_dict``) and the action goes out for the update's
    ``seq`` (once per ``seq``), after ``think`` seconds (or ``think(action)``: a pause drawn
    per decision, as ``guobiao loadtest --think`` does). When the server refuses an action
    other than as ``stale``, the simplest safe move (``fallback_action``) is sent once
    instead; after a ``rate_limited`` error an action still without update is sent again,
    once. Returns None when the connection closes first, or the table is finished without a
    ``match_end`` for this connection; stops acting once ``stopping()`` is true.
    """
    state = client._table(table)
    try:
        return await _play(client, table, bot, state, stopping, think, on_message)
    except ConnectionLost:
        return None  # the server went away (a restart, a shutdown): the caller may resume


async def _play(  # noqa: PLR0917
    client: Client,
    table: str,
    bot: Bot,
    state: TableState,
    stopping: Callable[[], bool] | None,
    think: float | Callable[[Action], float],
    on_message: Callable[[Incoming], None] | None,
) -> dict[str, Any] | None:
    acted: int | None = None  # the seq we answered
    last: Action | None = None  # and how
    rescued: int | None = None  # the seq we sent a fallback for
    resent: int | None = None  # the seq we resent after a rate_limited error
    async for message in client.messages():
        if on_message is not None:
            on_message(message)
        if message.code == "rate_limited":
            # The server dropped a message of ours (the reply_to says which, when it had
            # an id); if our action has had no update yet, it may be that one: send it
            # again (a duplicate is refused harmlessly as stale or already answered).
            if (
                last is not None
                and acted == state.seq
                and resent != acted
                and state.action_sent_at is not None
                and not (stopping is not None and stopping())
            ):
                resent = acted
                await asyncio.sleep(1 / (client.rate or DEFAULT_RATE))
                if state.seq == acted:
                    await client.act(table, last)
            continue
        if message.table != table:
            continue
        if message.type == "match_end":
            return message.payload
        if message.type == "table" and message.payload.get("state") == "finished":
            return state.match_end  # over without a match_end for us (we were away)
        if message.type == "table" and message.reply_to is None:
            # Given our seat again (the table moved to another node, or restarted): what we
            # sent last may never have arrived, so the next prompt is answered even if it is
            # the one we answered (a duplicate is refused harmlessly as stale).
            acted = None
        if stopping is not None and stopping():
            continue
        if message.type == "error" and message.reply_to is not None:
            if message.code in PLAYED or state.seq != acted or rescued == acted:
                continue
            view = state.typed_view()
            if view is None or not view.legal:
                continue
            rescued = acted
            log.info("table %s: action refused (%s); playing safe", table, message.code)
            await client.act(table, fallback_action(view))
            continue
        if message.type != "update" or not state.legal or state.seq == acted:
            continue
        if not _newest(message, state):
            continue  # a newer update of this table is on its way: answer that one
        view = state.typed_view()
        assert view is not None
        try:
            action = bot.choose(view)
        except Exception:
            log.exception("table %s: the bot failed; playing safe", table)
            action = fallback_action(view)
        pause = think(action) if callable(think) else think
        if pause > 0:
            await asyncio.sleep(pause)
            if state.seq != message.payload.get("seq") or (stopping is not None and stopping()):
                continue
        acted, last = state.seq, action
        await client.act(table, action)
    return None


def _newest(message: Incoming, state: TableState) -> bool:
    return message.payload.get("seq") == state.seq


async def play_tournament(
    client: Client,
    tournament: int,
    bot: Bot,
    *,
    session: int | None = None,
    timeout: float | None = None,
    **options: Any,
) -> dict[str, Any] | None:
    """Wait for our seat in ``session`` of ``tournament`` (None: the next session;
    ``Client.wait_tournament_session``, ``timeout`` seconds at most), then play that table
    with ``bot`` until its match ends (``play``, with ``options``: ``stopping``, ``think``,
    ``on_message``); return the ``match_end`` payload, or None as ``play`` does."""
    seat = await client.wait_tournament_session(tournament, session, timeout)
    return await play(client, seat.table_id, bot, **options)

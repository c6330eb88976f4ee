"""The protocol's requests as methods (``Client``): accounts, the lobby, the ladder queue,
tables, tournaments, and ``act``; each awaits its answer and returns it decoded."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from engine.actions import Action
from server.client.connection import Connection
from server.client.errors import ClientError
from server.client.state import CreatedTable, Incoming, Session, TableState, TournamentSeat
from server.messages import outbound

MAX_TRACKED_ACTIONS = 256  # ids of recent actions, to tell which table an error is about
TOURNAMENT_PREFIX = "tournament_"


class Client(Connection):
    """One websocket connection to a guobiao server. Create it with ``await Client.connect``."""

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
        created = outbound.TableCreated.from_payload(reply.payload)
        return CreatedTable(str(created.table), created.invite_code)

    async def queue_join(
        self, ladder: str | None = None, casual: bool = False, bot: str | None = None
    ) -> dict[str, Any]:
        """Join the ladder's matchmaking queue (rated, or ``casual``: ``bot`` the level of
        the bots that may fill its table, None the server's); returns the first ``queue``
        status (``"state": "waiting"``). Later statuses, and ``"matched"`` with the table
        the server seated us at, arrive as messages (``wait_for``)."""
        payload: dict[str, Any] = {"casual": casual}
        if ladder is not None:
            payload["ladder"] = ladder
        if bot is not None:
            payload["bot"] = bot
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
        state.seat = int(outbound.Joined.from_payload(reply.payload).seat)
        return state.seat

    async def add_bots(self, table: str, bot: str = "normal") -> dict[str, Any]:
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


def _number(seat: TournamentSeat) -> int:
    return seat.session

"""A tournament's sessions at their tables: seating the next session (and swapping seats),
starting it (every table at once, through the lobby, the players connected seated and
told), and substitutes taking seats (at the table in play too).

``SessionTables`` holds no state of its own: each method is given the tournament as read for
the request (``State``), under the host's lock for that tournament (``Tournaments``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from server.errors import shown
from server.lobby import Lobby
from server.messages.outbound import TournamentSession
from server.protocol import encode
from server.table import JoinInput, LobbyError, ReplaceInput, Table
from server.tournaments import seating
from server.tournaments.settings import TournamentError, session_seed, wall_seed
from server.tournaments.store import SessionRow, TournamentStore
from server.tournaments.views import BOT, State, not_finished, seating_dict, seating_of

log = logging.getLogger("guobiao.tournaments")

REPLACE_SECONDS = 10.0  # the most a substitute waits for the table in play to seat it


class Peer(Protocol):
    """A connection as the tournaments see it."""

    username: str | None
    guest: bool

    def send(self, text: str) -> None: ...

    def attach(self, table_id: str) -> None: ...


class SessionTables:
    """Seating, starting and substitutes for the tournaments of one server (see above)."""

    def __init__(
        self,
        store: TournamentStore,
        lobby: Lobby,
        peers: Callable[[], Iterable[Peer]],
        reload: Callable[[int], Awaitable[State]],
    ) -> None:
        self.store = store
        self.lobby = lobby
        self.peers = peers
        self.reload = reload  # the tournament read again (after its session started)

    def standing_order(self, state: State) -> list[str]:
        rows = state.standings()
        ranked = [r.player for r in rows]
        return ranked + sorted(p for p in state.entrants if p not in set(ranked))

    async def seat(self, state: State, method: str | None, now: datetime) -> str:
        not_finished(state)
        tid, settings = state.row.id, state.settings
        if state.sessions and state.sessions[-1].state == "playing":
            raise TournamentError(
                "tournament_state",
                f"session {state.sessions[-1].number} is being played: seat the next after it",
            )
        number = state.next_session
        if number > settings.sessions:
            raise TournamentError(
                "tournament_state", f"all {settings.sessions} sessions have been seated"
            )
        if method is None:  # ("" names no method: refused below, as any unknown name)
            method = settings.seating[number - 1]
        if method not in seating.METHODS:
            raise TournamentError(
                "bad_message",
                f"method: unknown seating method {shown(method)}; "
                f"known: {', '.join(seating.METHODS)}",
            )
        players = [p for p, status in state.entrants.items() if status == "registered"]
        if settings.check_in:
            players = [p for p in players if p in state.checkins]
        seated = len(players) if settings.fill == "substitutes" else len(players) // 4 * 4
        if seated < 4 or (len(players) < 4 and settings.fill == "byes"):
            raise TournamentError(
                "too_few_players",
                f"{len(players)} player(s) to seat"
                + (" (checked in)" if settings.check_in else "")
                + ": a session needs at least four",
            )
        seed = session_seed(state.row.seed, number)
        try:
            # In a worker thread: the search for the fewest repeats may take a second or two
            # (docs/tournaments.md), and the tables playing meanwhile must not wait for it.
            # The tournament stays locked: nothing else changes it meanwhile.
            result = await asyncio.to_thread(
                seating.seat_session,
                players,
                state.history(number),
                method,  # type: ignore[arg-type]
                seed,
                standings=self.standing_order(state) if method != "random" else None,
                fill=settings.fill,  # type: ignore[arg-type]
            )
        except seating.SeatingError as exc:
            raise TournamentError("bad_message", f"seating session {number}: {exc}") from None
        await self.store.save_seating(tid, number, method, seed, seating_dict(result), now)
        log.info(
            "tournament %s: session %s seated (%s, %s table(s)%s)",
            tid,
            number,
            method,
            len(result.tables),
            f"; {result.message}" if result.message else "",
        )
        return "seating"

    async def swap(self, state: State, a: str, b: str, now: datetime) -> str:
        s = state.sessions[-1] if state.sessions else None
        if s is None or s.state != "seated":
            raise TournamentError(
                "no_seating", "seats are swapped in a seated session that has not started"
            )
        current = replace(seating_of(s), met=seating.met_sessions(state.history(s.number)))
        try:
            swapped = seating.swap(current, a, b)
        except (seating.SeatingError, ValueError) as exc:
            raise TournamentError("bad_message", f"swap: {exc}") from None
        await self.store.save_seating(
            state.row.id, s.number, s.method, s.seed, seating_dict(swapped), now
        )
        return "seating"

    async def start(self, state: State, now: datetime) -> str:
        not_finished(state)
        s = state.sessions[-1] if state.sessions else None
        if s is None or s.state == "finished":
            raise TournamentError(
                "no_seating", f"seat session {state.next_session} first (tournament_seat)"
            )
        if s.state == "playing":
            raise TournamentError("tournament_state", f"session {s.number} has started already")
        cap = state.settings.time_cap_minutes
        ends_at = now + timedelta(minutes=cap) if cap else None
        # Withdrawn players keep their seat in the seating, played by a bot (recorded).
        seated = [p for table in s.seating["tables"] for p in table]
        subs = state.substitutes(s.number)
        for p in seated:
            if state.entrants.get(p) == "withdrawn" and p not in subs:
                await self.store.substitute(state.row.id, s.number, p, BOT, "server", now)
        await self.store.start_session(state.row.id, s.number, now, ends_at)
        state = await self.reload(state.row.id)
        started = state.session(s.number)
        assert started is not None
        await self.open_tables(state, started)
        log.info("tournament %s: session %s started", state.row.id, s.number)
        return "session_started"

    async def open_tables(self, state: State, s: SessionRow) -> None:
        """Make every table of the started session ``s`` that does not exist yet (each
        once, whatever crashed before), and seat the players connected."""
        tid, settings = state.row.id, state.settings
        made = {t.number for t in state.tables if t.session == s.number}
        restored = {
            getattr(t, "tournament", None): t
            for t in self.lobby.tables.values()
            if getattr(t, "tournament", None)
        }
        for i, labels in enumerate(state.seat_labels(s), 1):
            if i in made:
                continue
            table = restored.get((tid, s.number, i))
            if table is None:
                table = await self.lobby.create(
                    state.row.rules,
                    settings.turn_seconds,
                    not settings.public,
                    hands=settings.hands,
                    aids=settings.aids,
                    seated=labels,
                    **self.table_options(state, s, i),
                )
            await self.store.add_table(tid, s.number, i, table.id)
            await self.seat_players(tid, s.number, i, table, labels)

    def table_options(self, state: State, s: SessionRow, number: int) -> dict[str, Any]:
        duplicate = state.settings.duplicate
        return {
            "ends_at": s.ends_at,
            "seed": wall_seed(state.row.seed, s.number) if duplicate else None,
            "reveals": not duplicate,
            "watchable": not duplicate,
            "spectator_delay_seconds": state.settings.spectator_delay_seconds,
            "tournament": (state.row.id, s.number, number),
        }

    async def seat_players(
        self, tid: int, number: int, table_no: int, table: Table, labels: Sequence[str]
    ) -> None:
        """Tell each connected player of ``labels`` where they sit, and attach them."""
        seats = {name.lower(): k for k, name in enumerate(labels) if not name.startswith("bot:")}
        for peer in list(self.peers()):
            k = seats.get((peer.username or "").lower())
            if k is None:
                continue
            peer.attach(table.id)
            where = TournamentSession(tid, number, table_no, seating.WINDS[k], table.id)
            peer.send(encode(where))
            await table.queue.put(JoinInput(peer, None, k, None))  # type: ignore[arg-type]

    async def substitute(self, state: State, player: str, substitute: str, by: str) -> str:
        s = state.sessions[-1] if state.sessions else None
        if s is None or s.state == "finished":
            raise TournamentError(
                "no_seating", "a substitute takes a seat of a seated or playing session"
            )
        seats = [p for table in s.seating["tables"] for p in table]
        if player not in seats:
            raise TournamentError(
                "bad_message", f"player: {shown(player)} has no seat in session {s.number}"
            )
        if substitute.lower() in ("bot", BOT):
            label = BOT
        else:
            account = await self.store.account(substitute)
            if account is None or account[1]:
                raise TournamentError(
                    "bad_message", f"substitute: {shown(substitute)} is not a registered account"
                )
            label = account[0]
            taken = {x for table in state.seat_labels(s) for x in table}
            if label in taken or (label in state.entrants and label in seats):
                raise TournamentError(
                    "bad_message", f"substitute: {label} already has a seat in session {s.number}"
                )
        now = datetime.now(UTC)
        entry = await self.store.substitute(state.row.id, s.number, player, label, by, now)
        if s.state == "playing":
            # Stored first (a restart puts every stored substitute in its seat: ``start``),
            # then taken back if the table refuses it.
            try:
                await self.replace_at_table(state, s, player, label)
            except (LobbyError, TournamentError) as exc:
                await self.store.unsubstitute(entry)
                raise TournamentError(exc.code, f"substitute: {exc.reason}") from None
        return "seating"

    async def replace_at_table(self, state: State, s: SessionRow, player: str, label: str) -> None:
        """The substitute takes the seat at the table in play (its match goes on)."""
        for i, table in enumerate(s.seating["tables"], 1):
            if player not in table:
                continue
            made = state.table(s.number, i)
            live = self.lobby.tables.get(made.table_id) if made is not None else None
            nodes = self.lobby.nodes
            if live is None and made is not None and nodes.clustered and not made.finished:
                # Cluster mode: the table is owned by another node (it moved there).
                await nodes.replace_seat(made.table_id, table.index(player), label, REPLACE_SECONDS)
                return
            if live is None or live.state == "finished":
                raise TournamentError(
                    "tournament_state",
                    f"table {i} of session {s.number} has finished: its seats are as played",
                )
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            await live.queue.put(ReplaceInput(None, None, table.index(player), label, done))
            await asyncio.wait_for(done, REPLACE_SECONDS)

    async def seat_substitutes(self, state: State, s: SessionRow) -> None:
        """Every stored substitute of the playing session ``s`` in its seat at the live
        table (after a restart: one stored just before a crash may not be yet)."""
        for i, labels in enumerate(state.seat_labels(s), 1):
            made = state.table(s.number, i)
            live = self.lobby.tables.get(made.table_id) if made is not None else None
            if live is None or live.state == "finished":
                continue
            for k, label in enumerate(labels):
                seat = live.seats[k]
                if seat is None or seat.label != label:
                    await live.queue.put(ReplaceInput(None, None, k, label))

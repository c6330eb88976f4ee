"""Running tournaments on the server (docs/tournaments.md): requests, sessions, pushes.

``Tournaments`` (``App.tournaments``) answers the ``tournament_*`` messages of players and
directors, creates every table of a session at once through the lobby (``Lobby.create``,
with the players already seated: an absent player's seat is played automatically, the
clock never stops), and tells the players and directors connected when a tournament
changes. Every state lives in the database (``server.tournaments.store``); standings are
recomputed from the finished matches and the corrections log on every read, never stored.

Crash safety: a session is marked started before its tables are made; ``start`` (at every
server start, after the lobby restored its tables) makes any table of a started session
that is missing, finding those restored by their ``tournament`` tag, so a crash while a
session starts neither loses a table nor makes one twice. A session is finished once every
one of its tables' matches is (checked when a table ends and at start).

The host's rooms: ``settings`` (the settings, their checks, the seeds), ``views`` (a
tournament as read for one request and the pure views of it), ``sessions`` (seating,
starting a session's tables, substitutes); the host itself reads the store, answers the
requests under one lock per tournament, and pushes ``tournament_changed``.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from engine.match import hand_seed
from server.config import Config
from server.db.models import iso
from server.errors import shown
from server.fairness import commitment, hand_salt
from server.lobby import Lobby
from server.messages.outbound import Tournament, TournamentChanged
from server.protocol import TournamentRequest, encode
from server.table import Table
from server.tournaments import scoring, seating, views
from server.tournaments.sessions import Peer, SessionTables
from server.tournaments.settings import (
    Settings,
    TournamentError,
    checked_settings,
    default_methods,
    wall_seed,
)
from server.tournaments.store import TournamentStore
from server.tournaments.views import State

log = logging.getLogger("guobiao.tournaments")

PUSH_SECONDS = 1.0  # a tournament's ``tournament_changed`` goes out at most this often
CLOSE_SECONDS = 5.0  # how long ``close`` waits for the pushes being sent


# ------------------------------------------------------------------- host ---


class Tournaments:
    """The server's tournaments; see the module docstring."""

    def __init__(
        self,
        config: Config,
        store: TournamentStore,
        lobby: Lobby,
        peers: Callable[[], Iterable[Peer]],
    ) -> None:
        self.config = config
        self.store = store
        self.lobby = lobby
        self.peers = peers
        self.sessions = SessionTables(store, lobby, peers, self._state)
        self.locks: dict[int, asyncio.Lock] = {}
        self.pushes: dict[int, tuple[asyncio.TimerHandle | None, str, float]] = {}
        self._delivering: set[asyncio.Task[None]] = set()  # pushes being sent (``close``)
        self._closed = False

    def _lock(self, tournament_id: int) -> asyncio.Lock:
        return self.locks.setdefault(tournament_id, asyncio.Lock())

    # -------------------------------------------------------- start, end ---

    async def start(self) -> None:
        """After the lobby restored its tables: make what a crash left unmade of every
        started session, and finish the sessions whose tables all finished meanwhile. A
        ``[tournaments] directors`` name that is no registered account is logged."""
        await self._check_directors()
        for row in await self.store.unfinished():
            async with self._lock(row.id):
                state = await self._state(row.id)
                for s in state.sessions:
                    if s.state == "playing":
                        await self.sessions.open_tables(state, s)
                        state = await self._state(row.id)  # with the tables just made
                        await self.sessions.seat_substitutes(state, s)
                await self._settle(state)

    async def _check_directors(self) -> None:
        """A warning for each ``[tournaments] directors`` name that is not a registered
        account (as ``guobiao tournament grant`` refuses one): a misspelt name gives no one
        the role, and whoever registers it later gets it. Not a refusal: the account may be
        made after the start."""
        for name in self.config.tournaments.director_list:
            account = await self.store.account(name)
            if account is None:
                log.warning(
                    "[tournaments] directors: no account is named %r (yet): until one is, "
                    "no one has its role, and whoever registers that name gets it",
                    name,
                )
            elif account[1]:
                log.warning(
                    "[tournaments] directors: %r is a guest account, and guests cannot "
                    "create tournaments",
                    name,
                )

    async def table_finished(self, table: Table) -> None:
        """A table's match was stored as finished (``Lobby.on_table_finished``)."""
        tag = getattr(table, "tournament", None)
        if not tag:
            return
        tournament_id = tag[0]
        async with self._lock(tournament_id):
            settled = await self._settle(await self._state(tournament_id))
        if not settled:  # (else its session_finished or closed says more, and stays the latest)
            self._push(tournament_id, "table_finished")

    async def _settle(self, state: State) -> bool:
        """Finish every playing session of ``state`` whose tables all have finished matches,
        and the tournament after its last session; whether anything was finished."""
        tournament_id = state.row.id
        settled = False
        now = datetime.now(UTC)
        for s in state.sessions:
            if s.state != "playing":
                continue
            tables = [t for t in state.tables if t.session == s.number]
            done = len(tables) == len(s.seating["tables"]) and all(t.finished for t in tables)
            if done and await self.store.finish_session(tournament_id, s.number, now):
                settled = True
                log.info("tournament %s: session %s finished", tournament_id, s.number)
                self._push(tournament_id, "session_finished")
                if s.number >= state.settings.sessions:
                    await self.store.update(tournament_id, state="finished", finished_at=now)
                    self._push(tournament_id, "closed")
        return settled

    # ------------------------------------------------------------ pushes ---

    def _push(self, tournament_id: int, what: str) -> None:
        """``tournament_changed`` to the players and directors connected, at most once a
        second per tournament (the latest ``what``); none once closed (the server is
        stopping, and tells its clients so)."""
        if self._closed:
            return
        handle, _, sent_at = self.pushes.get(tournament_id, (None, "", -1e9))
        loop = asyncio.get_running_loop()
        if handle is None:
            delay = max(0.0, sent_at + PUSH_SECONDS - loop.time())
            handle = loop.call_later(delay, self._send_push, tournament_id)
        self.pushes[tournament_id] = (handle, what, sent_at)

    def _send_push(self, tournament_id: int) -> None:
        _, what, _ = self.pushes[tournament_id]
        self.pushes[tournament_id] = (None, what, asyncio.get_running_loop().time())
        task = asyncio.get_running_loop().create_task(self._deliver(tournament_id, what))
        self._delivering.add(task)
        task.add_done_callback(self._delivering.discard)

    async def _deliver(self, tournament_id: int, what: str) -> None:
        try:
            state = await self._state(tournament_id)
        except Exception:  # a failing database: the next change tells them
            log.exception("tournament %s: could not tell its players of a change", tournament_id)
            return
        names = {n.lower() for n in state.entrants} | {state.row.created_by.lower()}
        names |= {d.lower() for d in state.directors}
        text = encode(TournamentChanged(tournament_id, what))
        for peer in self.peers():
            if peer.username is not None and peer.username.lower() in names:
                peer.send(text)

    async def close(self) -> None:
        """No more pushes: those still waiting for their second are dropped, and those being
        sent are waited for (each reads the store, which the server closes next)."""
        self._closed = True
        for handle, _, _ in self.pushes.values():
            if handle is not None:
                handle.cancel()
        self.pushes.clear()
        if self._delivering:  # (each a read or two; a database that hangs costs at most this)
            _, late = await asyncio.wait(self._delivering, timeout=CLOSE_SECONDS)
            for task in late:
                task.cancel()

    # ------------------------------------------------------------- reads ---

    async def _state(self, tournament_id: int) -> State:
        row = await self.store.get(tournament_id)
        if row is None:
            raise TournamentError("no_such_tournament", f"there is no tournament {tournament_id}")
        entrants = await self.store.entrants(tournament_id)
        sessions = await self.store.sessions(tournament_id)
        log_rows = await self.store.log(tournament_id)
        state = State(
            row=row,
            settings=Settings.from_dict(row.settings),
            entrants={e.name: e.status for e in entrants},
            registered_at={e.name: e.registered_at for e in entrants},
            sessions=sessions,
            tables=await self.store.tables(tournament_id),
            substitutions=await self.store.substitutions(tournament_id),
            log=[views.log_entry(r) for r in log_rows],
            log_rows=log_rows,
            directors=await self.store.directors(tournament_id),
            checkins=set(),
            deals=[],
        )
        state.checkins = await self.store.checkins(tournament_id, state.next_session)
        if state.settings.duplicate:
            state.deals = await self._deals(state)
        return state

    async def _shown(self, tournament_id: int) -> State:
        """The tournament as its views may show it now (``views.as_seen``: outcomes as late
        as a delayed table's spectators see them)."""
        return views.as_seen(await self._state(tournament_id), _now())

    async def listing(self) -> list[dict[str, Any]]:
        """The public tournaments, newest first (``GET /api/tournaments``)."""
        counts = await self.store.counts()
        out = []
        now = _now()
        for stored in await self.store.all():
            settings = Settings.from_dict(stored.settings)
            if not settings.public:
                continue
            row = views.row_as_seen(stored, settings, now)
            players, session = counts.get(row.id, (0, 0))
            out.append(
                {
                    "id": row.id,
                    "name": row.name,
                    "rules": row.rules,
                    "state": row.state,
                    "sessions": settings.sessions,
                    "session": session,
                    "players": players,
                    "public": True,
                    "registration_open": views.registration_open(row, settings),
                    "duplicate": settings.duplicate,
                    "created_at": iso(row.created_at),
                }
            )
        return out

    async def detail(self, tournament_id: int) -> dict[str, Any]:
        """``GET /api/tournaments/{id}``."""
        return views.detail(await self._shown(tournament_id))

    async def _deals(self, state: State) -> list[scoring.DealResult]:
        """Duplicate: every hand of the finished sessions, by seat and deal."""
        finished = {s.number: s for s in state.sessions if s.state == "finished"}
        by_match = {
            t.match_id: t for t in state.tables if t.session in finished and t.match_id is not None
        }
        seats = {number: state.scored_seats(s) for number, s in finished.items()}
        deals = []
        for match_id, hand_no, deltas in await self.store.hand_deltas(list(by_match)):
            t = by_match[match_id]
            for index, seat in enumerate(seats[t.session][t.number - 1]):
                deals.append(
                    scoring.DealResult(t.session, hand_no, index, t.number, seat, deltas[index])
                )
        return deals

    async def session_detail(self, tournament_id: int, number: int) -> dict[str, Any] | None:
        """``GET /api/tournaments/{id}/sessions/{n}`` (None: no such session yet)."""
        state = await self._shown(tournament_id)
        late = state.settings.spectator_delay_seconds > 0  # (its hand: the spectators' is older)
        s = state.session(number)
        if s is None:
            return None
        labels = state.seat_labels(s)
        made = {t.number: t for t in state.tables if t.session == number}
        tables = []
        for i, planned in enumerate(s.seating["tables"], 1):
            t = made.get(i)
            live = self.lobby.summaries.get(t.table_id) if t is not None else None
            if t is None:
                table_state = "seated"
            elif t.finished:
                table_state = "finished"
            elif live is not None and live.state != "finished":
                table_state = live.state
            else:  # (a delayed table's end, not shown yet: ``views.as_seen``)
                table_state = "playing"
            scores = t.scores if t is not None else None  # None while held
            tables.append(
                {
                    "table": i,
                    "table_id": t.table_id if t is not None else None,
                    "match": t.match_id if t is not None else None,
                    "state": table_state,
                    "hand_no": live.listing.get("hand_no", 0)
                    if live is not None and not late
                    else None,
                    "watchable": table_state in ("waiting", "playing")
                    and not state.settings.duplicate,
                    "seats": [
                        {
                            "wind": seating.WINDS[k],
                            "player": None if seating.is_substitute(p) else p,
                            "substitute": labels[i - 1][k] if labels[i - 1][k] != p else None,
                        }
                        for k, p in enumerate(planned)
                    ],
                    "scores": list(scores) if scores is not None else None,
                    "table_points": [str(x) for x in scoring.table_points(scores)]
                    if scores is not None
                    else None,
                }
            )
        walls = None
        if state.settings.duplicate and s.state == "finished":
            played = max((t.hands_played for t in made.values()), default=0)
            seed = wall_seed(state.row.seed, number)
            walls = [
                {"hand_no": n, "seed_hex": hand_seed(seed, n).to_bytes(8, "big").hex()}
                for n in range(1, played + 1)
            ]
            for number_of, entry in enumerate(tables, 1):
                t = made.get(number_of)
                if t is not None and t.salt is not None:
                    salt = bytes.fromhex(t.salt)
                    entry["commitments"] = [
                        {
                            "hand_no": n,
                            "salt": hand_salt(salt, n).hex(),
                            "commitment": commitment(hand_seed(seed, n), hand_salt(salt, n)),
                        }
                        for n in range(1, t.hands_played + 1)
                    ]
        return {
            "tournament": tournament_id,
            "number": number,
            "state": s.state,
            "method": s.method,
            "seed": str(s.seed),
            "message": s.seating.get("message", ""),
            "repeats": s.seating.get("repeats", []),
            "fewest": s.seating.get("fewest", not s.seating.get("repeats")),
            "unavoidable": s.seating.get("unavoidable", 0),
            "byes": s.seating.get("byes", []),
            "seated_at": iso(s.seated_at),
            "started_at": iso(s.started_at),
            "ends_at": iso(s.ends_at),
            "finished_at": iso(s.finished_at),
            "tables": tables,
            "walls": walls,
        }

    async def export(self, tournament_id: int, form: str) -> str:
        """The standings (and duplicate results) as ``json`` or ``csv`` (scoring's)."""
        state = await self._shown(tournament_id)
        rows = state.standings()
        if form == "csv":
            return scoring.export_csv(rows)
        duplicate = scoring.duplicate_results(state.deals) if state.settings.duplicate else None
        return scoring.export_json(rows, duplicate)

    async def held_match(self, match_id: int) -> str | None:
        """Why a match's record may not be shown yet (``server.tournaments.store.held``: a
        duplicate session in play), else None: its hands are the walls other tables of the
        session are still playing."""
        found = await self.store.held_session(match_id)
        if found is None:
            return None
        tournament_id, number = found
        return (
            f"match {match_id} was played in duplicate session {number} of tournament "
            f"{tournament_id}: its record is shown once every table of the session has finished"
        )

    # ---------------------------------------------------------- requests ---

    async def handle(self, peer: Peer, m: TournamentRequest) -> None:
        """Answer one ``tournament_*`` request with the tournament as it is after it."""
        username = peer.username
        assert username is not None  # the app answers only logged-in connections
        if peer.guest:
            raise TournamentError(
                "not_registered", "tournaments are for registered accounts: register first"
            )
        extra: dict[str, Any] = {}
        if m.kind == "tournament_create":
            tournament_id = await self._create(username, m)
        else:
            assert m.tournament is not None
            tournament_id = m.tournament
            async with self._lock(tournament_id):
                state = await self._state(tournament_id)
                if await self._settle(state):  # (a safety net: tables tell when they end)
                    state = await self._state(tournament_id)
                what = await self._act(peer, state, m, extra)
            if what:
                self._push(tournament_id, what)
        state = await self._shown(tournament_id)
        payload = views.detail(state)
        payload["you"] = views.you(state, username)
        payload.update(extra)
        peer.send(encode(Tournament(payload), m.id))

    async def _create(self, username: str, m: TournamentRequest) -> int:
        allowed, _ = await self.store.roles(username)
        if not allowed and username.lower() not in self.config.tournaments.director_names:
            raise TournamentError(
                "not_director",
                "creating a tournament needs the director role, which the server's operator "
                "grants (guobiao tournament grant NAME, or [tournaments] directors)",
            )
        base = Settings(turn_seconds=self.config.timers.turn_seconds)
        settings, name, rules = checked_settings(m, base, self.config, self.lobby.presets)
        if "seating" not in dict(m.fields):
            settings = replace(settings, seating=default_methods(settings.sessions))
        assert name is not None  # the protocol requires it
        tournament_id = await self.store.create(
            name,  # cleaned by the protocol: 1..80 characters, nothing invisible
            rules or self.config.rules.preset,
            settings.to_dict(),
            secrets.randbits(63),
            username,
            datetime.now(UTC),
            registration_open=True,
        )
        log.info("tournament %s %r created by %s", tournament_id, name, username)
        return tournament_id

    def _director(self, state: State, username: str) -> None:
        if not state.is_director(username):
            raise TournamentError(
                "not_director", f"only the directors of tournament {state.row.id} may do that"
            )

    async def _act(
        self, peer: Peer, state: State, m: TournamentRequest, extra: dict[str, Any]
    ) -> str | None:
        """Carry out ``m`` on ``state``'s tournament; what changed (for the push)."""
        username = peer.username or ""
        tid = state.row.id
        now = datetime.now(UTC)
        kind = m.kind
        if kind == "tournament_get":
            return None
        if kind == "tournament_register":
            views.not_finished(state)
            if not views.registration_open(state.row, state.settings):
                raise TournamentError(
                    "registration_closed",
                    f"tournament {tid} takes no registrations"
                    + (
                        " (its director registers the players)"
                        if state.settings.registration != "open"
                        else " (closed)"
                    ),
                )
            if not await self.store.register(tid, username, now):
                raise TournamentError(
                    "already_registered", f"{username} is registered for tournament {tid}"
                )
            return "players"
        if kind in ("tournament_withdraw", "tournament_check_in"):
            if state.entrants.get(username) != "registered":
                raise TournamentError(
                    "not_a_player", f"{username} is not a registered player of tournament {tid}"
                )
            if kind == "tournament_withdraw":
                await self.store.withdraw(tid, username, now)
                return "players"
            return await self._check_in(state, username, now)
        self._director(state, username)
        if kind == "tournament_configure":
            if state.sessions and any(s.state != "seated" for s in state.sessions):
                raise TournamentError(
                    "tournament_state", "the settings are fixed once the first session started"
                )
            settings, name, rules = checked_settings(
                m, state.settings, self.config, self.lobby.presets
            )
            values: dict[str, Any] = {"settings": settings.to_dict()}
            if name is not None:
                values["name"] = name  # cleaned by the protocol: 1..80 characters
            if rules is not None:
                values["rules"] = rules
            await self.store.update(tid, **values)
            return "settings"
        if kind == "tournament_add_players":
            views.not_finished(state)
            names = []
            for name in m.get("players"):
                account = await self.store.account(name)
                if account is None or account[1]:
                    raise TournamentError(
                        "bad_message",
                        f"players: {shown(name)} is not a registered account (nobody was added)",
                    )
                names.append(account[0])
            for name in names:
                await self.store.register(tid, name, now)
            return "players"
        if kind == "tournament_remove_player":
            player = m.get("player")
            if not await self.store.withdraw(tid, player, now):
                raise TournamentError(
                    "not_a_player",
                    f"{shown(player)} is not a registered player of tournament {tid}",
                )
            return "players"
        if kind == "tournament_registration":
            views.not_finished(state)
            await self.store.update(tid, registration_open=m.get("open"))
            return "settings"
        if kind == "tournament_seat":
            return await self.sessions.seat(state, m.get("method"), now)
        if kind == "tournament_swap":
            return await self.sessions.swap(state, m.get("a"), m.get("b"), now)
        if kind == "tournament_start_session":
            return await self.sessions.start(state, now)
        if kind == "tournament_substitute":
            return await self.sessions.substitute(
                state, m.get("player"), m.get("substitute"), username
            )
        if kind == "tournament_penalty":
            extra["entry"] = await self._penalty(state, m, username, now)
            return "log"
        if kind == "tournament_undo":
            entry = m.get("entry")
            if not any(r.seq == entry for r in state.log_rows):
                raise TournamentError(
                    "bad_message", f"entry: tournament {tid}'s log has no entry {entry}"
                )
            extra["entry"] = await self.store.append(
                tid,
                "undo",
                player=None,
                session_no=None,
                amount=None,
                of=entry,
                reason=m.get("reason") or "",
                by=username,
                now=now,
            )
            return "log"
        if kind == "tournament_close":
            if any(s.state == "playing" for s in state.sessions):
                raise TournamentError(
                    "tournament_state", "a session is being played: close after it ends"
                )
            views.not_finished(state)
            await self.store.update(tid, state="finished", finished_at=now)
            return "closed"
        raise TournamentError("bad_message", f"unknown tournament request {shown(kind)}")

    async def _check_in(self, state: State, username: str, now: datetime) -> str:
        views.not_finished(state)
        number = state.next_session
        if number > state.settings.sessions:  # (the tournament ends with its last session)
            last = state.sessions[-1]
            raise TournamentError(
                "tournament_state",
                f"session {last.number}, the tournament's last, is being played: check-in is "
                "for the next session, and there is none after it"
                if last.state == "playing"
                else "every session has been played",
            )
        if not await self.store.check_in(state.row.id, number, username, now):
            raise TournamentError(
                "already_registered", f"{username} has checked in for session {number}"
            )
        return "players"

    async def _penalty(self, state: State, m: TournamentRequest, by: str, now: datetime) -> int:
        player, kind, amount = m.get("player"), m.get("kind"), Fraction(m.get("amount"))
        number = m.get("session")
        if player not in state.entrants:
            raise TournamentError(
                "not_a_player",
                f"player: {shown(player)} is not a player of tournament {state.row.id}",
            )
        if kind not in ("penalty", "score", "points"):
            raise TournamentError(
                "bad_message", f"kind must be penalty, score or points, got {shown(kind)}"
            )
        if kind != "points" and amount.denominator != 1:
            raise TournamentError("bad_message", f"amount: a {kind} is a whole number")
        if kind == "penalty" and amount >= 0:
            raise TournamentError(
                "bad_message", "amount: a penalty takes points away (a negative number)"
            )
        if kind == "score" and number is None:
            raise TournamentError("bad_message", "session: a score correction names its session")
        if number is not None:
            s = state.session(number)
            if s is None or s.state == "seated":
                raise TournamentError(
                    "bad_message", f"session: session {number} has not been played yet"
                )
            # Her seat, even if a substitute plays it: the entry is still hers and counts.
            seats = {p for table in s.seating["tables"] for p in table}
            if player not in seats:
                raise TournamentError(
                    "bad_message", f"session: {player} did not play session {number}"
                )
        return await self.store.append(
            state.row.id,
            kind,
            player=player,
            session_no=number,
            amount=str(amount),
            of=None,
            reason=m.get("reason"),
            by=by,
            now=now,
        )


def _now() -> datetime:
    """The time now, UTC, as the views read it (``views.as_seen``). (Looked up at each call:
    tests replace it.)"""
    return datetime.now(UTC)

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
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from typing import Any, Protocol

from engine.match import hand_seed
from server.config import Config
from server.db.models import iso
from server.errors import ServerError, shown
from server.lobby import Lobby
from server.protocol import TournamentRequest, encode
from server.table import JoinInput, LobbyError, ReplaceInput, Table, commitment, hand_salt
from server.tournaments import scoring, seating
from server.tournaments.store import (
    SessionRow,
    SubstitutionRow,
    TableMatch,
    TournamentRow,
    TournamentStore,
)

log = logging.getLogger("guobiao.tournaments")

PUSH_SECONDS = 1.0  # a tournament's ``tournament_changed`` goes out at most this often
BOT = "bot:default"  # the substitute a seat gets when nobody is named
REPLACE_SECONDS = 10.0  # the most a substitute waits for the table in play to seat it


class TournamentError(ServerError):
    """A tournament request refused."""


class Peer(Protocol):
    """A connection as the tournaments see it."""

    username: str | None
    guest: bool

    def send(self, text: str) -> None: ...

    def attach(self, table_id: str) -> None: ...


# ---------------------------------------------------------------- settings ---


@dataclass(frozen=True, slots=True)
class Settings:
    """What a director chose (docs/tournaments.md, "Settings"); stored as a dict."""

    sessions: int = 4
    hands: int = 16
    time_cap_minutes: int = 0
    turn_seconds: int = 20
    aids: bool = True
    spectator_delay_seconds: int = 0
    public: bool = True
    registration: str = "open"  # open: players sign up; director: the director adds them
    fill: str = "byes"  # byes or substitutes, when the count is not a multiple of four
    duplicate: bool = False
    check_in: bool = True
    tie_breaks: tuple[str, ...] = scoring.TIE_BREAKS  # every key, in the order of the docs
    seating: tuple[str, ...] = ("random", "avoid", "avoid", "avoid")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["tie_breaks"] = list(self.tie_breaks)
        data["seating"] = list(self.seating)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Settings:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for key in ("tie_breaks", "seating"):
            if key in values:
                values[key] = tuple(values[key])
        return cls(**values)


def _settings(
    request: TournamentRequest, base: Settings, config: Config, presets: Iterable[str]
) -> tuple[Settings, str | None, str | None]:
    """(the settings with the request's changes, its name, its rules) checked for meaning
    (the protocol checked types and ranges); ``TournamentError`` naming the field."""
    given = {k: v for k, v in request.fields if k not in ("name", "rules")}
    rules = request.get("rules")
    if rules is not None and rules not in set(presets):
        raise TournamentError(
            "bad_message", f"rules: unknown preset {shown(rules)}; known: {', '.join(presets)}"
        )
    timers = config.timers
    seconds = given.get("turn_seconds")
    if seconds is not None and not timers.min_turn_seconds <= seconds <= timers.max_turn_seconds:
        raise TournamentError(
            "bad_message",
            f"turn_seconds must be {timers.min_turn_seconds}..{timers.max_turn_seconds}, "
            f"got {seconds}",
        )
    for key, allowed in (("registration", ("open", "director")), ("fill", ("byes", "substitutes"))):
        if key in given and given[key] not in allowed:
            raise TournamentError(
                "bad_message", f"{key} must be {' or '.join(allowed)}, got {shown(given[key])}"
            )
    for key in given.get("tie_breaks", ()):
        if key not in scoring.TIE_BREAKS:
            raise TournamentError(
                "bad_message",
                f"tie_breaks: unknown key {shown(key)}; known: {', '.join(scoring.TIE_BREAKS)}",
            )
    for method in given.get("seating", ()):
        if method not in seating.METHODS:
            raise TournamentError(
                "bad_message",
                f"seating: unknown method {shown(method)}; known: {', '.join(seating.METHODS)}",
            )
    settings = replace(base, **given)
    methods = settings.seating
    if "seating" in given and len(methods) == 1:
        # One method: for every session (the first "random" if it is "avoid": no history).
        methods = methods * settings.sessions
    # As many methods as sessions: the last one repeated, or the list cut.
    methods = (methods + (methods[-1],) * settings.sessions)[: settings.sessions]
    return replace(settings, seating=methods), request.get("name"), rules


def _derive(seed: int, number: int, purpose: bytes) -> int:
    """A 63-bit seed for session ``number`` derived one-way from the tournament's seed."""
    digest = hashlib.sha256(purpose + seed.to_bytes(8, "big") + number.to_bytes(2, "big"))
    return int.from_bytes(digest.digest()[:8], "big") >> 1


def session_seed(seed: int, number: int) -> int:
    """The seed session ``number``'s seating is computed from."""
    return _derive(seed, number, b"seating")


def wall_seed(seed: int, number: int) -> int:
    """Duplicate: the match seed every table of session ``number`` plays (the same walls)."""
    return _derive(seed, number, b"walls")


# ------------------------------------------------------------------- views ---


@dataclass
class _State:
    """Everything stored of one tournament, read for one request."""

    row: TournamentRow
    settings: Settings
    entrants: dict[str, str]  # name -> registered / withdrawn
    registered_at: dict[str, datetime]
    sessions: list[SessionRow]
    tables: list[TableMatch]
    substitutions: list[SubstitutionRow]
    log: list[scoring.LogEntry]
    log_rows: list[Any]
    directors: list[str]
    checkins: set[str]  # for the next session
    deals: list[scoring.DealResult]  # duplicate: the hands of the finished sessions

    @property
    def next_session(self) -> int:
        """The session to come: the seated one, or the one after the last."""
        if self.sessions and self.sessions[-1].state == "seated":
            return self.sessions[-1].number
        return (self.sessions[-1].number if self.sessions else 0) + 1

    def session(self, number: int) -> SessionRow | None:
        return next((s for s in self.sessions if s.number == number), None)

    def is_director(self, username: str | None) -> bool:
        if username is None:
            return False
        key = username.lower()
        return key == self.row.created_by.lower() or key in {d.lower() for d in self.directors}

    def history(self, before: int) -> list[seating.Seating]:
        return [_seating(s) for s in self.sessions if s.number < before]

    def substitutes(self, number: int) -> dict[str, str]:
        """Session ``number``'s substitutes: the seat (a player or ``sub:N``) -> who took it
        (the latest, when a seat was given twice)."""
        return {x.player: x.substitute for x in self.substitutions if x.session == number}

    def table(self, number: int, table: int) -> TableMatch | None:
        """Table ``table`` of session ``number`` once made (its lobby table and match)."""
        return next((t for t in self.tables if t.session == number and t.number == table), None)

    def seat_labels(self, s: SessionRow) -> list[list[str]]:
        """Each table's four seats as they are (to be) occupied: players, named substitutes,
        bots for ``sub:N`` seats and for players who withdrew before the session started."""
        subs = self.substitutes(s.number)
        return [
            [subs.get(p, BOT if seating.is_substitute(p) else p) for p in table]
            for table in s.seating["tables"]
        ]

    def scored_seats(self, s: SessionRow) -> list[list[scoring.Seat]]:
        """Each table's four seats as the scoring counts them: the player, or a
        ``Substitute`` for a seat a substitute played (never counted for anyone)."""
        subs = self.substitutes(s.number)
        return [
            [
                scoring.Substitute(subs.get(p, BOT)) if p in subs or seating.is_substitute(p) else p
                for p in table
            ]
            for table in s.seating["tables"]
        ]

    def standings(self) -> list[scoring.Standing]:
        """The standings from the results so far and the corrections that apply to them: an
        entry for a session whose result is not in yet (its table still playing, a duplicate
        session held) waits, in the log, until it is."""
        results = self.results()
        seated = {
            (r.session, p) for r in results for t in r.tables for p in t.seats if isinstance(p, str)
        }
        players = {p for _, p in seated}
        force = scoring.in_force(self.log)
        applies: list[scoring.LogEntry] = [
            e
            for e in self.log
            if isinstance(e, scoring.Correction)
            and e.id in force
            and e.player in players
            and (e.session is None or (e.session, e.player) in seated)
        ]
        return scoring.standings(results, applies, self.settings.tie_breaks)

    def results(self) -> list[scoring.SessionResult]:
        """Each session's finished tables whose results may be shown (a duplicate session's
        are held until it is over: ``server.tournaments.store.held``)."""
        out = []
        for s in self.sessions:
            if s.state == "seated":
                continue
            seats = self.scored_seats(s)
            done = []
            for t in self.tables:
                if t.session != s.number or t.scores is None:
                    continue
                done.append(
                    scoring.TableResult(t.number, tuple(seats[t.number - 1]), t.scores)  # type: ignore[arg-type]
                )
            if done:
                out.append(scoring.SessionResult(s.number, tuple(done)))
        return out


def _seating(s: SessionRow) -> seating.Seating:
    data = s.seating
    return seating.Seating(
        session=s.number,
        method=s.method,
        seed=s.seed,
        tables=tuple(tuple(t) for t in data["tables"]),
        byes=tuple(data.get("byes", ())),
        repeats=tuple(
            seating.Repeat(tuple(r["players"]), tuple(r["sessions"]))
            for r in data.get("repeats", ())
        ),
        message=data.get("message", ""),
        # Seatings stored before these were recorded claim nothing.
        fewest=data.get("fewest", not data.get("repeats")),
        unavoidable=data.get("unavoidable", 0),
    )


def _seating_dict(s: seating.Seating) -> dict[str, Any]:
    return {
        "tables": [list(t) for t in s.tables],
        "byes": list(s.byes),
        "repeats": [{"players": list(r.players), "sessions": list(r.sessions)} for r in s.repeats],
        "message": s.message,
        "fewest": s.fewest,
        "unavoidable": s.unavoidable,
    }


def _number(value: Fraction) -> dict[str, Any]:
    return {"exact": str(value), "decimal": round(float(value), 3)}


def _log_entry(row: Any) -> scoring.LogEntry:
    at = iso(row.at) or ""
    if row.kind == "undo":
        return scoring.Undo(str(row.seq), str(row.of), row.reason, at)
    return scoring.Correction(
        str(row.seq), row.kind, row.player, row.session, Fraction(row.amount), row.reason, at
    )


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
        self.locks: dict[int, asyncio.Lock] = {}
        self.pushes: dict[int, tuple[asyncio.TimerHandle | None, str, float]] = {}

    def _lock(self, tournament_id: int) -> asyncio.Lock:
        return self.locks.setdefault(tournament_id, asyncio.Lock())

    # -------------------------------------------------------- start, end ---

    async def start(self) -> None:
        """After the lobby restored its tables: make what a crash left unmade of every
        started session, and finish the sessions whose tables all finished meanwhile."""
        for row in await self.store.unfinished():
            async with self._lock(row.id):
                state = await self._state(row.id)
                for s in state.sessions:
                    if s.state == "playing":
                        await self._open_tables(state, s)
                        state = await self._state(row.id)  # with the tables just made
                        await self._seat_substitutes(state, s)
                await self._settle(state)

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

    async def _settle(self, state: _State) -> bool:
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
        second per tournament (the latest ``what``)."""
        handle, _, sent_at = self.pushes.get(tournament_id, (None, "", -1e9))
        loop = asyncio.get_running_loop()
        if handle is None:
            delay = max(0.0, sent_at + PUSH_SECONDS - loop.time())
            handle = loop.call_later(delay, self._send_push, tournament_id)
        self.pushes[tournament_id] = (handle, what, sent_at)

    def _send_push(self, tournament_id: int) -> None:
        _, what, _ = self.pushes[tournament_id]
        self.pushes[tournament_id] = (None, what, asyncio.get_running_loop().time())
        asyncio.get_running_loop().create_task(self._deliver(tournament_id, what))

    async def _deliver(self, tournament_id: int, what: str) -> None:
        try:
            state = await self._state(tournament_id)
        except Exception:  # a failing database: the next change tells them
            log.exception("tournament %s: could not tell its players of a change", tournament_id)
            return
        names = {n.lower() for n in state.entrants} | {state.row.created_by.lower()}
        names |= {d.lower() for d in state.directors}
        text = encode("tournament_changed", {"tournament": tournament_id, "what": what})
        for peer in self.peers():
            if peer.username is not None and peer.username.lower() in names:
                peer.send(text)

    def close(self) -> None:
        for handle, _, _ in self.pushes.values():
            if handle is not None:
                handle.cancel()
        self.pushes.clear()

    # ------------------------------------------------------------- reads ---

    async def _state(self, tournament_id: int) -> _State:
        row = await self.store.get(tournament_id)
        if row is None:
            raise TournamentError("no_such_tournament", f"there is no tournament {tournament_id}")
        entrants = await self.store.entrants(tournament_id)
        sessions = await self.store.sessions(tournament_id)
        log_rows = await self.store.log(tournament_id)
        state = _State(
            row=row,
            settings=Settings.from_dict(row.settings),
            entrants={e.name: e.status for e in entrants},
            registered_at={e.name: e.registered_at for e in entrants},
            sessions=sessions,
            tables=await self.store.tables(tournament_id),
            substitutions=await self.store.substitutions(tournament_id),
            log=[_log_entry(r) for r in log_rows],
            log_rows=log_rows,
            directors=await self.store.directors(tournament_id),
            checkins=set(),
            deals=[],
        )
        state.checkins = await self.store.checkins(tournament_id, state.next_session)
        if state.settings.duplicate:
            state.deals = await self._deals(state)
        return state

    async def listing(self) -> list[dict[str, Any]]:
        """The public tournaments, newest first (``GET /api/tournaments``)."""
        counts = await self.store.counts()
        out = []
        for row in await self.store.all():
            settings = Settings.from_dict(row.settings)
            if not settings.public:
                continue
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
                    "registration_open": row.registration_open and row.state != "finished",
                    "duplicate": settings.duplicate,
                    "created_at": iso(row.created_at),
                }
            )
        return out

    async def detail(self, tournament_id: int) -> dict[str, Any]:
        """``GET /api/tournaments/{id}``."""
        return self._detail(await self._state(tournament_id))

    def _detail(self, state: _State) -> dict[str, Any]:
        row, settings = state.row, state.settings
        rows = state.standings()
        force = scoring.in_force(state.log)
        return {
            "id": row.id,
            "name": row.name,
            "rules": row.rules,
            "state": row.state,
            "settings": settings.to_dict(),
            "registration_open": row.registration_open and row.state != "finished",
            "created_by": row.created_by,
            "created_at": iso(row.created_at),
            "finished_at": iso(row.finished_at),
            "directors": sorted({row.created_by, *state.directors}, key=str.lower),
            "players": [
                {
                    "name": name,
                    "status": status,
                    "checked_in": name in state.checkins,
                    "registered_at": iso(state.registered_at[name]),
                }
                for name, status in state.entrants.items()
            ],
            "next_session": state.next_session
            if state.next_session <= settings.sessions and row.state != "finished"
            else None,
            "session": state.sessions[-1].number if state.sessions else 0,
            "sessions": [
                {
                    "number": s.number,
                    "state": s.state,
                    "method": s.method,
                    "tables": len(s.seating["tables"]),
                    "started_at": iso(s.started_at),
                    "ends_at": iso(s.ends_at),
                    "finished_at": iso(s.finished_at),
                }
                for s in state.sessions
            ],
            "standings": [_standing(r) for r in rows],
            "duplicate": _duplicate(state.deals) if settings.duplicate else None,
            "log": [
                {
                    "id": r.seq,
                    "kind": r.kind,
                    "player": r.player,
                    "session": r.session,
                    "amount": r.amount,
                    "of": r.of,
                    "reason": r.reason,
                    "by": r.by,
                    "at": iso(r.at),
                    "in_force": str(r.seq) in force,
                }
                for r in state.log_rows
            ],
        }

    async def _deals(self, state: _State) -> list[scoring.DealResult]:
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
        state = await self._state(tournament_id)
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
            else:
                table_state = live.state if live is not None else "playing"
            scores = t.scores if t is not None else None  # None while held
            tables.append(
                {
                    "table": i,
                    "table_id": t.table_id if t is not None else None,
                    "match": t.match_id if t is not None else None,
                    "state": table_state,
                    "hand_no": live.listing.get("hand_no", 0) if live is not None else None,
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
        state = await self._state(tournament_id)
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

    def _you(self, state: _State, username: str | None) -> dict[str, Any]:
        status = state.entrants.get(username or "")
        seat = None
        latest = state.sessions[-1] if state.sessions else None
        if latest is not None and latest.state != "finished":  # seated or being played
            for i, table in enumerate(state.seat_labels(latest), 1):
                if username in table:
                    made = state.table(latest.number, i)
                    seat = {
                        "session": latest.number,
                        "table": i,
                        "wind": seating.WINDS[table.index(username or "")],
                        "table_id": made.table_id if made is not None else None,
                    }
        return {
            "player": status is not None,
            "status": status,
            "checked_in": username in state.checkins,
            "director": state.is_director(username),
            "seat": seat,
        }

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
        state = await self._state(tournament_id)
        payload = self._detail(state)
        payload["you"] = self._you(state, username)
        payload.update(extra)
        peer.send(encode("tournament", payload, m.id))

    async def _create(self, username: str, m: TournamentRequest) -> int:
        allowed, _ = await self.store.roles(username)
        if not allowed and username.lower() not in self.config.tournaments.director_names:
            raise TournamentError(
                "not_director",
                "creating a tournament needs the director role, which the server's operator "
                "grants (guobiao tournament grant NAME, or [tournaments] directors)",
            )
        base = Settings(turn_seconds=self.config.timers.turn_seconds)
        settings, name, rules = _settings(m, base, self.config, self.lobby.presets)
        if "seating" not in dict(m.fields):
            settings = replace(settings, seating=_default_methods(settings.sessions))
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

    def _director(self, state: _State, username: str) -> None:
        if not state.is_director(username):
            raise TournamentError(
                "not_director", f"only the directors of tournament {state.row.id} may do that"
            )

    def _not_finished(self, state: _State) -> None:
        if state.row.state == "finished":
            raise TournamentError("tournament_state", f"tournament {state.row.id} is over")

    async def _act(
        self, peer: Peer, state: _State, m: TournamentRequest, extra: dict[str, Any]
    ) -> str | None:
        """Carry out ``m`` on ``state``'s tournament; what changed (for the push)."""
        username = peer.username or ""
        tid = state.row.id
        now = datetime.now(UTC)
        kind = m.kind
        if kind == "tournament_get":
            return None
        if kind == "tournament_register":
            self._not_finished(state)
            if state.settings.registration != "open" or not state.row.registration_open:
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
            settings, name, rules = _settings(m, state.settings, self.config, self.lobby.presets)
            values: dict[str, Any] = {"settings": settings.to_dict()}
            if name is not None:
                values["name"] = name  # cleaned by the protocol: 1..80 characters
            if rules is not None:
                values["rules"] = rules
            await self.store.update(tid, **values)
            return "settings"
        if kind == "tournament_add_players":
            self._not_finished(state)
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
            self._not_finished(state)
            await self.store.update(tid, registration_open=m.get("open"))
            return "settings"
        if kind == "tournament_seat":
            return await self._seat(state, m.get("method"), now)
        if kind == "tournament_swap":
            return await self._swap(state, m.get("a"), m.get("b"), now)
        if kind == "tournament_start_session":
            return await self._start_session(state, now)
        if kind == "tournament_substitute":
            return await self._substitute(state, m.get("player"), m.get("substitute"), username)
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
            self._not_finished(state)
            await self.store.update(tid, state="finished", finished_at=now)
            return "closed"
        raise TournamentError("bad_message", f"unknown tournament request {shown(kind)}")

    async def _check_in(self, state: _State, username: str, now: datetime) -> str:
        self._not_finished(state)
        number = state.next_session
        if number > state.settings.sessions:
            raise TournamentError("tournament_state", "every session has been played")
        if not await self.store.check_in(state.row.id, number, username, now):
            raise TournamentError(
                "already_registered", f"{username} has checked in for session {number}"
            )
        return "players"

    def _standing_order(self, state: _State) -> list[str]:
        rows = state.standings()
        ranked = [r.player for r in rows]
        return ranked + sorted(p for p in state.entrants if p not in set(ranked))

    async def _seat(self, state: _State, method: str | None, now: datetime) -> str:
        self._not_finished(state)
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
        method = method or settings.seating[number - 1]
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
                standings=self._standing_order(state) if method != "random" else None,
                fill=settings.fill,  # type: ignore[arg-type]
            )
        except seating.SeatingError as exc:
            raise TournamentError("bad_message", f"seating session {number}: {exc}") from None
        await self.store.save_seating(tid, number, method, seed, _seating_dict(result), now)
        log.info(
            "tournament %s: session %s seated (%s, %s table(s)%s)",
            tid,
            number,
            method,
            len(result.tables),
            f"; {result.message}" if result.message else "",
        )
        return "seating"

    async def _swap(self, state: _State, a: str, b: str, now: datetime) -> str:
        s = state.sessions[-1] if state.sessions else None
        if s is None or s.state != "seated":
            raise TournamentError(
                "no_seating", "seats are swapped in a seated session that has not started"
            )
        current = replace(_seating(s), met=seating.met_sessions(state.history(s.number)))
        try:
            swapped = seating.swap(current, a, b)
        except (seating.SeatingError, ValueError) as exc:
            raise TournamentError("bad_message", f"swap: {exc}") from None
        await self.store.save_seating(
            state.row.id, s.number, s.method, s.seed, _seating_dict(swapped), now
        )
        return "seating"

    async def _start_session(self, state: _State, now: datetime) -> str:
        self._not_finished(state)
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
        state = await self._state(state.row.id)
        started = state.session(s.number)
        assert started is not None
        await self._open_tables(state, started)
        log.info("tournament %s: session %s started", state.row.id, s.number)
        return "session_started"

    async def _open_tables(self, state: _State, s: SessionRow) -> None:
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
                    **self._table_options(state, s, i),
                )
            await self.store.add_table(tid, s.number, i, table.id)
            await self._seat_players(tid, s.number, i, table, labels)

    def _table_options(self, state: _State, s: SessionRow, number: int) -> dict[str, Any]:
        duplicate = state.settings.duplicate
        return {
            "ends_at": s.ends_at,
            "seed": wall_seed(state.row.seed, s.number) if duplicate else None,
            "reveals": not duplicate,
            "watchable": not duplicate,
            "spectator_delay_seconds": state.settings.spectator_delay_seconds,
            "tournament": (state.row.id, s.number, number),
        }

    async def _seat_players(
        self, tid: int, number: int, table_no: int, table: Table, labels: Sequence[str]
    ) -> None:
        """Tell each connected player of ``labels`` where they sit, and attach them."""
        seats = {name.lower(): k for k, name in enumerate(labels) if not name.startswith("bot:")}
        for peer in list(self.peers()):
            k = seats.get((peer.username or "").lower())
            if k is None:
                continue
            peer.attach(table.id)
            payload = {
                "tournament": tid,
                "session": number,
                "table": table_no,
                "wind": seating.WINDS[k],
                "table_id": table.id,
            }
            peer.send(encode("tournament_session", payload))
            await table.queue.put(JoinInput(peer, None, k, None))  # type: ignore[arg-type]

    async def _substitute(self, state: _State, player: str, substitute: str, by: str) -> str:
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
                await self._replace_at_table(state, s, player, label)
            except (LobbyError, TournamentError) as exc:
                await self.store.unsubstitute(entry)
                raise TournamentError(exc.code, f"substitute: {exc.reason}") from None
        return "seating"

    async def _replace_at_table(
        self, state: _State, s: SessionRow, player: str, label: str
    ) -> None:
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

    async def _seat_substitutes(self, state: _State, s: SessionRow) -> None:
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

    async def _penalty(self, state: _State, m: TournamentRequest, by: str, now: datetime) -> int:
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
            subs = state.substitutes(number)
            seats = {p for table in s.seating["tables"] for p in table}
            if player not in seats or player in subs:
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


def _standing(row: scoring.Standing) -> dict[str, Any]:
    points = _number(row.table_points)
    return {
        "place": row.place,
        "player": row.player,
        "table_points": points["exact"],
        "table_points_decimal": points["decimal"],
        "score": row.score,
        "firsts": row.firsts,
        "best_session": row.best_session,
        "sessions": [
            {
                "session": ln.session,
                "table": ln.table,
                "seat": ln.seat,
                "score": ln.score,
                "table_points": str(ln.table_points),
            }
            for ln in row.sessions
        ],
    }


def _duplicate(deals: Sequence[scoring.DealResult]) -> list[dict[str, Any]]:
    return [
        {
            "player": d.player,
            "deals": d.deals,
            "difference": str(d.difference),
            "difference_decimal": round(float(d.difference), 3),
            "imps": d.imps,
        }
        for d in scoring.duplicate_results(deals)
    ]


def _default_methods(sessions: int) -> tuple[str, ...]:
    """Random for the first session, then repeat opponents avoided with winds balanced."""
    return ("random",) + ("avoid",) * (sessions - 1)

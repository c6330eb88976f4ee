"""One tournament as read for one request (``State``), and the pure views of it the host
sends and serves: its detail (``tournament``, ``GET /api/tournaments/{id}``), what it is to
one player (``you``), and the stored seating and log rows as scoring's types."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Any

from engine.bots import STRONGEST
from server.db.models import iso
from server.tournaments import scoring, seating
from server.tournaments.settings import Settings, TournamentError
from server.tournaments.store import SessionRow, SubstitutionRow, TableMatch, TournamentRow

# The substitute a seat gets when nobody is named (a withdrawn player's, ``bot``): the
# strongest level, so a player leaving never hands the others easy points.
BOT = f"bot:{STRONGEST}"


@dataclass
class State:
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
        return [seating_of(s) for s in self.sessions if s.number < before]

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
        ``Substitute`` for a seat a substitute played (never counted for anyone), naming
        the player seated there (whose entries for the session still count)."""
        subs = self.substitutes(s.number)
        return [
            [
                scoring.Substitute(subs.get(p, BOT), None if seating.is_substitute(p) else p)
                if p in subs or seating.is_substitute(p)
                else p
                for p in table
            ]
            for table in s.seating["tables"]
        ]

    def standings(self) -> list[scoring.Standing]:
        """The standings from the results so far and the corrections that apply to them: an
        entry for a session whose result is not in yet (its table still playing, a duplicate
        session held) waits, in the log, until it is; then it counts, even if a substitute
        played the player's seat (the seat was hers: ``scoring``). Empty before the first
        result is in; from then on every registered player is listed, played or not (on a
        bye, absent, their seat played by a substitute: 0 for that session), and a
        withdrawn one who played a table or was given a correction in force."""
        results = self.results()
        if not results:
            return []
        held = scoring.seats_held(results)  # of the tables whose results are in
        known = {p for _, p in held} | set(self.entrants)
        force = scoring.in_force(self.log)
        applies: list[scoring.Correction] = [
            e
            for e in self.log
            if isinstance(e, scoring.Correction)
            and e.id in force
            and e.player in known
            and (e.session is None or (e.session, e.player) in held)
        ]
        players = {p for p, status in self.entrants.items() if status == "registered"}
        players |= {e.player for e in applies}
        return scoring.standings(results, applies, self.settings.tie_breaks, players)

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
                byes = tuple(s.seating.get("byes", ()))
                out.append(scoring.SessionResult(s.number, tuple(done), byes))
        return out


def as_seen(state: State, now: datetime) -> State:
    """``state`` as anyone may be shown it at ``now``. At a tournament whose tables'
    spectators see play ``spectator_delay_seconds`` late, an outcome is shown as late as they
    see it: a table's result once its match ended at least the delay ago, a session (its
    duplicate results with it) or the tournament finished once it finished that long ago
    (docs/tournaments.md). Every view of the tournament reads it so; the host's decisions
    (settling, seating the next session) read ``state`` itself."""
    if state.settings.spectator_delay_seconds <= 0:
        return state

    def recent(at: datetime | None) -> bool:
        return _recent(at, state.settings, now)

    tables = [
        replace(t, scores=None, finished=False, ended_at=None) if recent(t.ended_at) else t
        for t in state.tables
    ]
    sessions = [
        replace(s, state="playing", finished_at=None)
        if s.state == "finished" and recent(s.finished_at)
        else s
        for s in state.sessions
    ]
    shown = {s.number for s in sessions if s.state == "finished"}
    return replace(
        state,
        row=row_as_seen(state.row, state.settings, now),
        tables=tables,
        sessions=sessions,
        deals=[d for d in state.deals if d.session in shown],
    )


def row_as_seen(row: TournamentRow, settings: Settings, now: datetime) -> TournamentRow:
    """The tournament's row as it may be shown at ``now`` (``as_seen``): running until it
    finished at least its tables' spectator delay ago."""
    if row.state == "finished" and _recent(row.finished_at, settings, now):
        return replace(row, state="running", finished_at=None)
    return row


def _recent(at: datetime | None, settings: Settings, now: datetime) -> bool:
    """Whether an outcome of ``at`` is newer than what the spectators have seen at ``now``."""
    late = timedelta(seconds=settings.spectator_delay_seconds)
    return at is not None and at > now - late


def seating_of(s: SessionRow) -> seating.Seating:
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


def seating_dict(s: seating.Seating) -> dict[str, Any]:
    return {
        "tables": [list(t) for t in s.tables],
        "byes": list(s.byes),
        "repeats": [{"players": list(r.players), "sessions": list(r.sessions)} for r in s.repeats],
        "message": s.message,
        "fewest": s.fewest,
        "unavoidable": s.unavoidable,
    }


def number_of(value: Fraction) -> dict[str, Any]:
    return {"exact": str(value), "decimal": round(float(value), 3)}


def log_entry(row: Any) -> scoring.LogEntry:
    at = iso(row.at) or ""
    if row.kind == "undo":
        return scoring.Undo(str(row.seq), str(row.of), row.reason, at)
    return scoring.Correction(
        str(row.seq), row.kind, row.player, row.session, Fraction(row.amount), row.reason, at
    )


def not_finished(state: State) -> None:
    """``TournamentError`` (``tournament_state``) once the tournament is over."""
    if state.row.state == "finished":
        raise TournamentError("tournament_state", f"tournament {state.row.id} is over")


def registration_open(row: TournamentRow, settings: Settings) -> bool:
    """Whether players may register themselves now (``registration_open`` wherever it is
    shown, and what ``tournament_register`` checks): its ``registration`` is ``open`` (with
    ``director`` only the directors add players), its director has not closed it (the
    stored ``registration_open``) and it is not over."""
    return settings.registration == "open" and row.registration_open and row.state != "finished"


def detail(state: State) -> dict[str, Any]:
    """The tournament as ``GET /api/tournaments/{id}`` and the ``tournament`` message show it."""
    row, settings = state.row, state.settings
    rows = state.standings()
    force = scoring.in_force(state.log)
    return {
        "id": row.id,
        "name": row.name,
        "rules": row.rules,
        "state": row.state,
        "settings": settings.to_dict(),
        "registration_open": registration_open(row, settings),
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
        "standings": [standing(r) for r in rows],
        "duplicate": duplicate(state.deals) if settings.duplicate else None,
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


def you(state: State, username: str | None) -> dict[str, Any]:
    """What the tournament is to ``username`` (``you``): entrant, checked in, director, seat."""
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


def standing(row: scoring.Standing) -> dict[str, Any]:
    points = number_of(row.table_points)
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


def duplicate(deals: Sequence[scoring.DealResult]) -> list[dict[str, Any]]:
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

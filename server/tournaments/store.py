"""Tournaments in the database (``Store.tournaments``; the tables are in server/db/models.py).

Each method is one unit of work. Results are never copied here: a session table's result is
its lobby table's match (``tournament_tables.table_id`` → ``matches``), finished in the
match's own transaction, so standings recomputed from the matches and the corrections log
can neither count a table twice nor miss one, whatever crashes in between.

``held`` (``server.tournaments.held``) is the one rule of whether anything of a match's
outcome may be shown yet: not while the duplicate session it was played in goes on; a held
match's players' counts and grades wait for the session's end (``finish_session`` recounts
them in the transaction that ends it). The rows it gives back are in
``server.tournaments.rows``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.models import (
    GameTable,
    Hand,
    Match,
    MatchPlayer,
    Player,
    Tournament,
    TournamentCheckin,
    TournamentLogEntry,
    TournamentPlayer,
    TournamentRole,
    TournamentSession,
    TournamentSubstitution,
    TournamentTable,
)
from server.tournaments.held import held, recount
from server.tournaments.rows import (
    Entrant,
    LogRow,
    SessionRow,
    SubstitutionRow,
    TableMatch,
    TournamentRow,
    tournament_row,
)

__all__ = [
    "DIRECTOR",
    "Entrant",
    "LogRow",
    "SessionRow",
    "Sessions",
    "SubstitutionRow",
    "TableMatch",
    "TournamentRow",
    "TournamentStore",
    "held",
    "recount",
]

DIRECTOR = "director"

Sessions = Callable[[], AbstractAsyncContextManager[AsyncSession]]


class TournamentStore:
    """The tournaments' reads and writes; ``Store.tournaments``."""

    def __init__(self, read: Sessions, write: Sessions) -> None:
        self._read = read
        self._write = write

    # ------------------------------------------------------------ roles ---

    async def grant(
        self, username: str, tournament_id: int | None = None, *, revoke: bool = False
    ) -> bool:
        """Grant (or revoke) the director role: of ``tournament_id``, or with None the
        right to create tournaments (and direct them). True if anything changed."""
        key = username.lower()
        async with self._write() as session:
            where = (
                TournamentRole.username_key == key,
                TournamentRole.role == DIRECTOR,
                TournamentRole.tournament_id.is_(None)
                if tournament_id is None
                else TournamentRole.tournament_id == tournament_id,
            )
            found = (await session.execute(select(TournamentRole.id).where(*where))).first()
            if revoke:
                if found is None:
                    return False
                await session.execute(delete(TournamentRole).where(*where))
                return True
            if found is not None:
                return False
            session.add(
                TournamentRole(
                    username_key=key,
                    tournament_id=tournament_id,
                    role=DIRECTOR,
                    granted_at=datetime.now(UTC),
                )
            )
            return True

    async def roles(self, username: str) -> tuple[bool, set[int]]:
        """(may create tournaments, the tournaments ``username`` was made director of)."""
        async with self._read() as session:
            rows = await session.execute(
                select(TournamentRole.tournament_id).where(
                    TournamentRole.username_key == username.lower(),
                    TournamentRole.role == DIRECTOR,
                )
            )
            ids = [r[0] for r in rows]
        return None in ids, {i for i in ids if i is not None}

    async def directors(self, tournament_id: int) -> list[str]:
        """The accounts granted the director role of this tournament (its creator aside),
        as their names are spelled."""
        async with self._read() as session:
            rows = await session.execute(
                select(Player.username)
                .join(TournamentRole, TournamentRole.username_key == Player.username_key)
                .where(TournamentRole.tournament_id == tournament_id)
                .order_by(Player.username_key)
            )
            return [r[0] for r in rows]

    async def account(self, username: str) -> tuple[str, bool] | None:
        """(the name as spelled, whether a guest) of an account, or None."""
        async with self._read() as session:
            row = (
                await session.execute(
                    select(Player.username, Player.guest).where(
                        Player.username_key == username.lower()
                    )
                )
            ).first()
        return (row[0], row[1]) if row is not None else None

    # ------------------------------------------------------- tournaments ---

    async def create(  # noqa: PLR0917 (a tournament's columns)
        self,
        name: str,
        rules: str,
        settings: dict[str, Any],
        seed: int,
        by: str,
        now: datetime,
        registration_open: bool,
    ) -> int:
        async with self._write() as session:
            t = Tournament(
                name=name,
                rules=rules,
                state="registering",
                settings=settings,
                registration_open=registration_open,
                seed=seed,
                created_by=by,
                created_at=now,
            )
            session.add(t)
            await session.flush()
            return t.id

    async def get(self, tournament_id: int) -> TournamentRow | None:
        async with self._read() as session:
            t = await session.get(Tournament, tournament_id)
            return tournament_row(t) if t is not None else None

    async def all(self) -> list[TournamentRow]:
        async with self._read() as session:
            rows = await session.execute(select(Tournament).order_by(Tournament.id.desc()))
            return [tournament_row(t) for t in rows.scalars()]

    async def unfinished(self) -> list[TournamentRow]:
        async with self._read() as session:
            rows = await session.execute(
                select(Tournament).where(Tournament.state != "finished").order_by(Tournament.id)
            )
            return [tournament_row(t) for t in rows.scalars()]

    async def counts(self) -> dict[int, tuple[int, int]]:
        """Per tournament: (registered players, the latest session's number)."""
        async with self._read() as session:
            players = dict(
                (
                    await session.execute(
                        select(TournamentPlayer.tournament_id, func.count())
                        .where(TournamentPlayer.status == "registered")
                        .group_by(TournamentPlayer.tournament_id)
                    )
                ).all()
            )
            sessions = dict(
                (
                    await session.execute(
                        select(
                            TournamentSession.tournament_id, func.max(TournamentSession.number)
                        ).group_by(TournamentSession.tournament_id)
                    )
                ).all()
            )
        ids = set(players) | set(sessions)
        return {i: (players.get(i, 0), sessions.get(i, 0)) for i in ids}

    async def update(self, tournament_id: int, **values: Any) -> None:
        """Set columns of a tournament (name, rules, settings, state, registration_open,
        finished_at)."""
        async with self._write() as session:
            await session.execute(
                update(Tournament).where(Tournament.id == tournament_id).values(**values)
            )

    # ----------------------------------------------------------- players ---

    async def entrants(self, tournament_id: int) -> list[Entrant]:
        async with self._read() as session:
            rows = await session.execute(
                select(TournamentPlayer)
                .where(TournamentPlayer.tournament_id == tournament_id)
                .order_by(TournamentPlayer.registered_at, TournamentPlayer.username)
            )
            return [
                Entrant(p.username, p.status, p.registered_at, p.withdrawn_at)
                for p in rows.scalars()
            ]

    async def register(self, tournament_id: int, username: str, now: datetime) -> bool:
        """Register (or register again after a withdrawal); False if already registered."""
        async with self._write() as session:
            row = await session.get(TournamentPlayer, (tournament_id, username))
            if row is None:
                session.add(
                    TournamentPlayer(
                        tournament_id=tournament_id,
                        username=username,
                        status="registered",
                        registered_at=now,
                    )
                )
                return True
            if row.status == "registered":
                return False
            row.status, row.withdrawn_at = "registered", None
            return True

    async def withdraw(self, tournament_id: int, username: str, now: datetime) -> bool:
        """False if ``username`` is not registered (or already withdrawn)."""
        async with self._write() as session:
            row = await session.get(TournamentPlayer, (tournament_id, username))
            if row is None or row.status != "registered":
                return False
            row.status, row.withdrawn_at = "withdrawn", now
            return True

    async def checkins(self, tournament_id: int, number: int) -> set[str]:
        async with self._read() as session:
            rows = await session.execute(
                select(TournamentCheckin.username).where(
                    TournamentCheckin.tournament_id == tournament_id,
                    TournamentCheckin.session == number,
                )
            )
            return {r[0] for r in rows}

    async def check_in(self, tournament_id: int, number: int, username: str, now: datetime) -> bool:
        """False if already checked in for that session."""
        async with self._write() as session:
            if await session.get(TournamentCheckin, (tournament_id, number, username)):
                return False
            session.add(
                TournamentCheckin(
                    tournament_id=tournament_id, session=number, username=username, at=now
                )
            )
            return True

    # ---------------------------------------------------------- sessions ---

    async def sessions(self, tournament_id: int) -> list[SessionRow]:
        async with self._read() as session:
            rows = await session.execute(
                select(TournamentSession)
                .where(TournamentSession.tournament_id == tournament_id)
                .order_by(TournamentSession.number)
            )
            return [
                SessionRow(
                    s.number,
                    s.state,
                    s.method,
                    s.seed,
                    dict(s.seating),
                    s.seated_at,
                    s.started_at,
                    s.ends_at,
                    s.finished_at,
                )
                for s in rows.scalars()
            ]

    async def save_seating(  # noqa: PLR0917 (a session's columns)
        self,
        tournament_id: int,
        number: int,
        method: str,
        seed: int,
        seating: dict[str, Any],
        now: datetime,
    ) -> bool:
        """Store session ``number``'s seating (again, while it has not started). False if
        the session already started."""
        async with self._write() as session:
            row = await session.get(TournamentSession, (tournament_id, number))
            if row is None:
                session.add(
                    TournamentSession(
                        tournament_id=tournament_id,
                        number=number,
                        state="seated",
                        method=method,
                        seed=seed,
                        seating=seating,
                        seated_at=now,
                    )
                )
                return True
            if row.state != "seated":
                return False
            row.method, row.seed, row.seating, row.seated_at = method, seed, seating, now
            return True

    async def start_session(
        self, tournament_id: int, number: int, now: datetime, ends_at: datetime | None
    ) -> bool:
        """Mark the seated session started (and the tournament running); False if it was
        not seated (already started)."""
        async with self._write() as session:
            done = await session.execute(
                update(TournamentSession)
                .where(
                    TournamentSession.tournament_id == tournament_id,
                    TournamentSession.number == number,
                    TournamentSession.state == "seated",
                )
                .values(state="playing", started_at=now, ends_at=ends_at)
            )
            await session.execute(
                update(Tournament)
                .where(Tournament.id == tournament_id, Tournament.state == "registering")
                .values(state="running")
            )
            return bool(getattr(done, "rowcount", 0))

    async def finish_session(self, tournament_id: int, number: int, now: datetime) -> bool:
        """Mark the playing session finished; False if it was not playing. Its matches that
        were ``held`` (a duplicate session's) may be shown from then on, and their players'
        counts and grades take them in (``recount``), in the same transaction."""
        async with self._write() as session:
            waiting = await session.scalars(
                select(MatchPlayer.player_id)
                .join(Match, Match.id == MatchPlayer.match_id)
                .join(GameTable, GameTable.id == Match.table_id)
                .where(
                    GameTable.tournament_id == tournament_id,
                    GameTable.tournament_session == number,
                    MatchPlayer.player_id.is_not(None),
                    held(),
                )
            )
            players = [p for p in waiting if p is not None]
            done = await session.execute(
                update(TournamentSession)
                .where(
                    TournamentSession.tournament_id == tournament_id,
                    TournamentSession.number == number,
                    TournamentSession.state == "playing",
                )
                .values(state="finished", finished_at=now)
                .execution_options(synchronize_session=False)
            )
            if not getattr(done, "rowcount", 0):
                return False
            await recount(session, players)
            return True

    async def add_table(self, tournament_id: int, number: int, table: int, table_id: str) -> None:
        async with self._write() as session:
            session.add(
                TournamentTable(
                    tournament_id=tournament_id, session=number, number=table, table_id=table_id
                )
            )

    async def tables(self, tournament_id: int) -> list[TableMatch]:
        """Every session table with its match (the latest at that lobby table)."""
        async with self._read() as session:
            rows = (
                await session.execute(
                    select(TournamentTable)
                    .where(TournamentTable.tournament_id == tournament_id)
                    .order_by(TournamentTable.session, TournamentTable.number)
                )
            ).scalars()
            tables = list(rows)
            ids = [t.table_id for t in tables]
            matches: dict[str, Match] = {}
            hidden: dict[int, bool] = {}
            if ids:
                for m, is_held in await session.execute(
                    select(Match, held()).where(Match.table_id.in_(ids)).order_by(Match.id)
                ):
                    matches[m.table_id] = m
                    hidden[m.id] = bool(is_held)
            played: dict[int, int] = {}
            match_ids = [m.id for m in matches.values()]
            if match_ids:
                played = dict(
                    (
                        await session.execute(
                            select(Hand.match_id, func.count())
                            .where(Hand.match_id.in_(match_ids))
                            .group_by(Hand.match_id)
                        )
                    ).all()
                )
        out = []
        for t in tables:
            found = matches.get(t.table_id)
            if found is None:
                out.append(
                    TableMatch(t.session, t.number, t.table_id, None, (), None, None, None, 0)
                )
                continue
            ended = found.ended_at is not None and found.final_scores is not None
            out.append(
                TableMatch(
                    session=t.session,
                    number=t.number,
                    table_id=t.table_id,
                    match_id=found.id,
                    seats=tuple(found.seats),
                    scores=tuple(found.final_scores or ())
                    if ended and not hidden[found.id]
                    else None,
                    seed=found.seed,
                    salt=found.salt,
                    hands_played=played.get(found.id, 0),
                    finished=ended,
                    ended_at=found.ended_at if ended else None,
                )
            )
        return out

    async def hand_deltas(self, match_ids: Sequence[int]) -> list[tuple[int, int, list[int]]]:
        """(match, hand number, deltas by player index) of every finished hand that may be
        shown (``held``)."""
        if not match_ids:
            return []
        async with self._read() as session:
            rows = await session.execute(
                select(Hand.match_id, Hand.hand_no, Hand.deltas)
                .join(Match, Match.id == Hand.match_id)
                .where(Hand.match_id.in_(list(match_ids)), ~held())
                .order_by(Hand.match_id, Hand.hand_no)
            )
            return [(m, n, list(d)) for m, n, d in rows.all()]

    async def held_session(self, match_id: int) -> tuple[int, int] | None:
        """(tournament, session) of a match whose outcome is ``held``; None if it may be
        shown (or there is no such match)."""
        async with self._read() as session:
            row = (
                await session.execute(
                    select(GameTable.tournament_id, GameTable.tournament_session)
                    .join(Match, Match.table_id == GameTable.id)
                    .where(Match.id == match_id, held())
                )
            ).first()
        if row is None or row[0] is None or row[1] is None:  # (held: both are set)
            return None
        return row[0], row[1]

    # ------------------------------------------------ substitutes and log ---

    async def substitutions(self, tournament_id: int) -> list[SubstitutionRow]:
        async with self._read() as session:
            rows = await session.execute(
                select(TournamentSubstitution)
                .where(TournamentSubstitution.tournament_id == tournament_id)
                .order_by(TournamentSubstitution.id)
            )
            return [
                SubstitutionRow(s.session, s.player, s.substitute, s.by, s.at)
                for s in rows.scalars()
            ]

    async def substitute(  # noqa: PLR0917 (a substitution's columns)
        self, tournament_id: int, number: int, player: str, substitute: str, by: str, now: datetime
    ) -> int:
        """Record a substitute; its row's id (for ``unsubstitute``)."""
        async with self._write() as session:
            row = TournamentSubstitution(
                tournament_id=tournament_id,
                session=number,
                player=player,
                substitute=substitute,
                by=by,
                at=now,
            )
            session.add(row)
            await session.flush()
            return row.id

    async def unsubstitute(self, substitution_id: int) -> None:
        """Take back a substitute the table in play refused."""
        async with self._write() as session:
            await session.execute(
                delete(TournamentSubstitution).where(TournamentSubstitution.id == substitution_id)
            )

    async def log(self, tournament_id: int) -> list[LogRow]:
        async with self._read() as session:
            rows = await session.execute(
                select(TournamentLogEntry)
                .where(TournamentLogEntry.tournament_id == tournament_id)
                .order_by(TournamentLogEntry.seq)
            )
            return [
                LogRow(e.seq, e.kind, e.player, e.session, e.amount, e.of, e.reason, e.by, e.at)
                for e in rows.scalars()
            ]

    async def append(
        self,
        tournament_id: int,
        kind: str,
        *,
        player: str | None,
        session_no: int | None,
        amount: str | None,
        of: int | None,
        reason: str,
        by: str,
        now: datetime,
    ) -> int:
        """Append a log entry; its number (1, 2, ... per tournament)."""
        async with self._write() as session:
            last = (
                await session.execute(
                    select(func.max(TournamentLogEntry.seq)).where(
                        TournamentLogEntry.tournament_id == tournament_id
                    )
                )
            ).scalar()
            seq = (last or 0) + 1
            session.add(
                TournamentLogEntry(
                    tournament_id=tournament_id,
                    seq=seq,
                    kind=kind,
                    player=player,
                    session=session_no,
                    amount=amount,
                    of=of,
                    reason=reason,
                    by=by,
                    at=now,
                )
            )
            return seq

"""The server's repository: every read and write of the database goes through ``Store``.

Each method is one unit of work with its own short-lived ``AsyncSession`` (never shared
between tasks): it begins, does its work, commits (or rolls back) and returns plain frozen
snapshots (``PlayerRow``, ``TableRow``, ``MatchRow``), never ORM objects, so nothing
outside this module can lazy-load or mutate a row by accident.

Times are inputs: every method that stamps a row takes the time from its caller (or an
optional ``now``), as timezone-aware datetimes.

A match is its seed plus its action log. ``append_action`` commits before it returns, so
after a crash ``unfinished_matches`` and ``match_actions`` give back everything needed to
rebuild each match in play by replaying its actions through the engine.

The database must be migrated first (``upgrade(url)``, or ``guobiao db upgrade``):
``Store.open`` does not create tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple, Self

from sqlalchemy import delete, insert, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from engine.match import MATCH_HANDS, check_match_hands
from server.db import sqlite_log
from server.db.engine import WRITE_OPTION, make_engine
from server.db.errors import (
    BadDatabaseURL,
    Conflict,
    Fenced,
    StoreError,
    UsernameLookalike,
    UsernameTaken,
)
from server.db.migrate import current, downgrade, head, upgrade
from server.db.models import (
    TABLE_STATES,
    GameTable,
    Hand,
    Match,
    MatchAction,
    MatchPlayer,
    Player,
    PlayerSession,
    iso,
)
from server.grades import grade, match_counts
from server.ladder.store import (
    LadderStore,
    SeasonPolicy,
    foursome_key,
    match_changes,
    rate_match,
)
from server.text import skeleton
from server.tournaments.store import TournamentStore, held

__all__ = [
    "ActionRow",
    "BadDatabaseURL",
    "Conflict",
    "FinishedMatch",
    "MatchRow",
    "NoSuchMatch",
    "NotRateable",
    "PlayerRow",
    "SessionRow",
    "Store",
    "StoreError",
    "TableRow",
    "UsernameLookalike",
    "UsernameTaken",
    "current",
    "downgrade",
    "head",
    "is_bot",
    "upgrade",
]

log = logging.getLogger(__name__)

RECENT_MATCHES = 20  # matches listed by player_summary
SEED_RANGE = range(-(2**63), 2**63)  # a BIGINT column


class NotRateable(StoreError, ValueError):
    """A rated match whose seats are not four registered accounts."""


async def _registered_ids(session: AsyncSession, seats: Sequence[str | None]) -> list[int]:
    """The account ids of a rated match's seats, by seat; ``NotRateable`` unless all four
    are registered accounts (not guests, not bots, not empty)."""
    keys = [s.lower() if s is not None and not is_bot(s) else None for s in seats]
    found = {
        p.username_key: p
        for p in await session.scalars(
            select(Player).where(Player.username_key.in_([k for k in keys if k]))
        )
    }
    ids = []
    for seat, key in zip(seats, keys, strict=True):
        player = found.get(key) if key else None
        if player is None or player.guest:
            raise NotRateable(f"a rated match needs four registered accounts, not {seat!r}")
        ids.append(player.id)
    if len(set(ids)) != len(ids):
        raise NotRateable(f"a rated match needs four different accounts, got {list(seats)!r}")
    return ids


class NoSuchMatch(StoreError, LookupError):
    """A match id the database does not know."""


def is_bot(seat: str | None) -> bool:
    """True for a bot seat (``"bot:default"``, ``"bot:fast"``)."""
    return seat is not None and seat.startswith("bot:")


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class PlayerRow:
    """A player as stored: the account and the cached counts and grade."""

    id: int
    username: str
    password_hash: str | None
    guest: bool
    created_at: datetime
    score: int
    hands_won: int
    hands_lost: int
    hands_drawn: int
    matches: int
    grade: float

    @classmethod
    def of(cls, player: Player) -> PlayerRow:
        return cls(
            id=player.id,
            username=player.username,
            password_hash=player.password_hash,
            guest=player.guest,
            created_at=player.created_at,
            score=player.score,
            hands_won=player.hands_won,
            hands_lost=player.hands_lost,
            hands_drawn=player.hands_drawn,
            matches=player.matches,
            grade=player.grade,
        )


@dataclass(frozen=True, slots=True)
class SessionRow:
    """A valid login session and its player."""

    player: PlayerRow
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class TableRow:
    """A lobby table. ``seats``: 4 entries, each a username, ``"bot:NAME"`` or None (kept
    as a tuple whatever sequence is given)."""

    id: str
    rules: str
    turn_seconds: int
    private: bool
    invite_code: str | None
    seats: Sequence[str | None]
    created_at: datetime
    state: str = "waiting"  # "waiting", "playing" or "finished"
    hands: int = MATCH_HANDS  # its match's length in deals (0003)
    aids: bool = True  # whether seated players may ``analyze`` their hands
    rated: bool = False  # whether its matches change ratings (0005)
    # A tournament's settings (0006; ``server.table.Table`` says what each does).
    ends_at: datetime | None = None  # the time cap: no hand starts after it
    seed: int | None = None  # its match's seed, fixed (None: a random one)
    reveals: bool = True  # whether each hand's seed is revealed as it ends
    watchable: bool = True  # whether it may be watched
    spectator_delay_seconds: int = 0  # how late spectators see it
    claim_window_ms: int | None = None  # its own claim window (0008; None: its preset's)
    tournament: tuple[int, int, int] | None = None  # (tournament id, session, table 1..)

    def __post_init__(self) -> None:
        object.__setattr__(self, "seats", tuple(self.seats))
        if len(self.seats) != 4:
            raise ValueError(f"a table has 4 seats, got {self.seats!r}")
        if self.state not in TABLE_STATES:
            raise ValueError(f"table state must be one of {TABLE_STATES}, got {self.state!r}")
        check_match_hands(self.hands)
        if self.tournament is not None:
            object.__setattr__(self, "tournament", tuple(self.tournament))
            if len(self.tournament) != 3:
                raise ValueError(
                    f"a table's tournament is (id, session, table), got {self.tournament!r}"
                )

    @classmethod
    def of(cls, table: GameTable) -> TableRow:
        """The row of a ``tables`` model."""
        number, session, place = (
            table.tournament_id,
            table.tournament_session,
            table.tournament_table,
        )
        tournament = None
        if number is not None and session is not None and place is not None:
            tournament = (number, session, place)
        return cls(
            id=table.id,
            rules=table.rules,
            turn_seconds=table.turn_seconds,
            private=table.private,
            invite_code=table.invite_code,
            seats=tuple(table.seats),
            created_at=table.created_at,
            state=table.state,
            hands=table.hands,
            aids=table.aids,
            rated=table.rated,
            ends_at=table.ends_at,
            seed=table.seed,
            reveals=table.reveals,
            watchable=table.watchable,
            spectator_delay_seconds=table.spectator_delay_seconds,
            claim_window_ms=table.claim_window_ms,
            tournament=tournament,
        )


@dataclass(frozen=True, slots=True)
class MatchRow:
    """A match. ``seed`` and ``salt`` are secret while it is in play."""

    id: int
    table_id: str
    rules: str
    seed: int
    salt: str
    seats: tuple[str | None, ...]
    started_at: datetime
    ended_at: datetime | None
    final_scores: tuple[int, ...] | None
    rule_options: dict[str, Any] | None = None  # RuleSet.to_dict() at the start (0002)
    hands_planned: int = MATCH_HANDS  # its length in deals, ``Match.hands`` (0003)
    rated: bool = False  # whether it changes ratings (0005)

    @classmethod
    def of(cls, match: Match) -> MatchRow:
        return cls(
            id=match.id,
            table_id=match.table_id,
            rules=match.rules,
            seed=match.seed,
            salt=match.salt,
            seats=tuple(match.seats),
            started_at=match.started_at,
            ended_at=match.ended_at,
            final_scores=tuple(match.final_scores) if match.final_scores is not None else None,
            rule_options=match.rule_options,
            hands_planned=match.hands_planned,
            rated=match.rated,
        )


@dataclass(frozen=True, slots=True)
class FinishedMatch:
    """What ``Store.finish_match`` did: ``ended_now``, whether this call ended the match
    (False: it was finished already, and nothing changed), and ``rating_changes``, a rated
    match's rating changes by player index (``LadderStore.match_changes``' dicts; empty for
    an unrated match). True as ``ended_now`` is, as the bool it returned before."""

    ended_now: bool
    rating_changes: tuple[dict[str, Any], ...] = ()

    def __bool__(self) -> bool:
        return self.ended_now


class ActionRow(NamedTuple):
    """One logged action: ``(seq, hand_no, player, action)``."""

    seq: int
    hand_no: int
    player: int
    action: dict[str, Any]


def _settle(done: asyncio.Future[None], error: BaseException | None) -> None:
    """Tell a waiting appender how its action went (unless it stopped waiting)."""
    if done.done():
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)


_INSERT_ACTION = insert(MatchAction)  # one statement for every append
_FENCE = "_fence"  # an append's (table id, fencing token), when it has one (cluster mode)


async def _check_fence(session: AsyncSession, table_id: str, fence: int) -> None:
    """``Fenced`` unless ``fence`` is the table's token; holds the row till the commit."""
    current = await session.scalar(
        select(GameTable.fence).where(GameTable.id == table_id).with_for_update(read=True)
    )
    if current != fence:
        raise Fenced(table_id, fence, current)


async def _fenced_rows(connection: Any, rows: list[dict[str, Any]]) -> dict[int, int | None]:
    """The rows (by ``id(row)``) whose fencing token is not their table's, the table's rows
    held (``FOR SHARE``) until the commit: a takeover's increment waits for it."""
    wanted = {row[_FENCE][0] for row in rows if _FENCE in row}
    if not wanted:
        return {}
    result = await connection.execute(
        select(GameTable.id, GameTable.fence)
        .where(GameTable.id.in_(sorted(wanted)))
        .with_for_update(read=True)
    )
    tokens = {row.id: row.fence for row in result}
    return {
        id(row): tokens.get(row[_FENCE][0])
        for row in rows
        if _FENCE in row and tokens.get(row[_FENCE][0]) != row[_FENCE][1]
    }


_ACTION_COLUMNS = ("match_id", "seq", "hand_no", "player", "action", "created_at")


def _new_player(username: str, password_hash: str | None, guest: bool, now: datetime) -> Player:
    """A new account's row: its name's lookup key and skeleton, no matches yet."""
    return Player(
        username=username,
        username_key=username.lower(),
        username_skeleton=skeleton(username),
        password_hash=password_hash,
        guest=guest,
        created_at=now,
        score=0,
        hands_won=0,
        hands_lost=0,
        hands_drawn=0,
        matches=0,
        grade=0.0,
    )


class Store:
    """Async access to the database; see the module docstring."""

    def __init__(self, engine: AsyncEngine, policy: SeasonPolicy | None = None) -> None:
        self.engine = engine
        self._sessions = async_sessionmaker(engine, expire_on_commit=False)
        # How the ladders run ([ladder] in the configuration); the server sets its own.
        self.policy = policy or SeasonPolicy()
        self.ladder = LadderStore(self._read, self._write, lambda: self.policy)
        self.tournaments = TournamentStore(self._read, self._write)
        # Group commit of actions: appends wait here while a transaction is being written,
        # then go together in the next one (see ``append_action``).
        self._pending: list[tuple[dict[str, Any], asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None
        # Told how long each committed write of the game's log took: ("actions": a group
        # commit, "hand": finish_hand, "match": finish_match) and seconds; the server's
        # metrics set it (server/metrics.py).
        self.on_commit: Callable[[str, float], None] | None = None
        self._sqlite_log: tuple[str, sqlite_log.Binder] | None = None
        self._log: AsyncConnection | None = None  # the action log's own connection

    @classmethod
    async def open(cls, url: str) -> Self:
        """A store on ``url`` (``BadDatabaseURL`` if unusable). Connects lazily: use
        ``ping`` to check the database is there. Does not migrate."""
        return cls(make_engine(url))

    async def close(self) -> None:
        if self._flusher is not None and not self._flusher.done():
            await self._flusher  # what was appended is written before the engine goes
        if self._log is not None:
            with contextlib.suppress(Exception):
                await self._log.close()
            self._log = None
        await self.engine.dispose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def ping(self) -> bool:
        """True if the database answers."""
        try:
            async with self.engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
        except Exception:  # any failure to connect or query means "no"
            return False
        return True

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[AsyncSession]:
        async with self._sessions() as session, session.begin():
            yield session

    @asynccontextmanager
    async def _write(self, timed: str | None = None) -> AsyncIterator[AsyncSession]:
        """A write transaction; ``timed``: tell ``on_commit`` how long it took to commit
        (from BEGIN, the wait for SQLite's write lock included), if it did."""
        started = time.perf_counter()
        # The option makes SQLite take its write lock at BEGIN (see server/db/engine.py).
        async with self._sessions() as session, session.begin():
            await session.connection(execution_options={WRITE_OPTION: True})
            yield session
        if timed is not None and self.on_commit is not None:
            self.on_commit(timed, time.perf_counter() - started)

    # Accounts.

    async def create_player(
        self,
        username: str,
        password_hash: str | None,
        guest: bool,
        *,
        now: datetime | None = None,
    ) -> int:
        """Add a player; its id. ``UsernameTaken`` if the name exists in any case,
        ``UsernameLookalike`` if an existing one looks like it."""
        try:
            async with self._write() as session:
                player = _new_player(username, password_hash, guest, now or utcnow())
                session.add(player)
                await session.flush()
                return player.id
        except IntegrityError:
            raise await self._taken(username) from None

    async def create_account(
        self,
        username: str,
        password_hash: str | None,
        guest: bool,
        session: tuple[str, datetime],
        *,
        now: datetime | None = None,
    ) -> PlayerRow:
        """``create_player`` and its first login ``session`` (token hash, expiry) in one
        transaction: the new player. (A guest's login is this one write: three before,
        each through the driver's thread several times, made a thousand guests logging in
        at once wait tens of seconds.) ``UsernameTaken`` if the name exists in any case,
        ``UsernameLookalike`` if an existing one looks like it."""
        created = now or utcnow()
        try:
            async with self._write() as db:
                player = _new_player(username, password_hash, guest, created)
                db.add(player)
                await db.flush()
                token_hash, expires_at = session
                db.add(
                    PlayerSession(
                        player_id=player.id,
                        token_hash=token_hash,
                        created_at=created,
                        expires_at=expires_at,
                    )
                )
                row = PlayerRow.of(player)
        except IntegrityError:
            raise await self._taken(username) from None
        return row

    async def _taken(self, username: str) -> UsernameTaken:
        """Why ``username`` could not be added: its name is taken, or one like it (read
        after the refused insert: the unique indexes decided, this only says which)."""
        async with self._read() as session:
            existing = await session.scalar(
                select(Player.username)
                .where(Player.username_key != username.lower())
                .where(Player.username_skeleton == skeleton(username))
            )
        if existing is not None:
            return UsernameLookalike(username, existing)
        return UsernameTaken(f"the username {username!r} is taken")

    async def get_player(self, username: str) -> PlayerRow | None:
        """The player called ``username`` (in any case), or None."""
        async with self._read() as session:
            player = await session.scalar(
                select(Player).where(Player.username_key == username.lower())
            )
            return PlayerRow.of(player) if player is not None else None

    async def create_session(
        self,
        player_id: int,
        token_hash: str,
        expires_at: datetime,
        *,
        now: datetime | None = None,
    ) -> None:
        """Store a login session (the SHA-256 hex of its token, never the token)."""
        try:
            async with self._write() as session:
                session.add(
                    PlayerSession(
                        player_id=player_id,
                        token_hash=token_hash,
                        created_at=now or utcnow(),
                        expires_at=expires_at,
                    )
                )
        except IntegrityError:
            raise Conflict(
                f"cannot store the session: unknown player {player_id} or a reused token"
            ) from None

    async def find_session(self, token_hash: str, now: datetime) -> SessionRow | None:
        """The session of ``token_hash`` with its player; None if unknown, expired at
        ``now`` or revoked."""
        async with self._read() as session:
            found = (
                await session.execute(
                    select(PlayerSession, Player)
                    .join(Player, Player.id == PlayerSession.player_id)
                    .where(
                        PlayerSession.token_hash == token_hash,
                        PlayerSession.revoked_at.is_(None),
                        PlayerSession.expires_at > now,
                    )
                )
            ).first()
            if found is None:
                return None
            login, player = found
            return SessionRow(PlayerRow.of(player), login.created_at, login.expires_at)

    async def session_player(self, token_hash: str, now: datetime) -> PlayerRow | None:
        """The player of a valid session; None if unknown, expired or revoked."""
        found = await self.find_session(token_hash, now)
        return found.player if found is not None else None

    async def revoke_session(self, token_hash: str, *, now: datetime | None = None) -> bool:
        """Revoke a session; False if there was no such session not yet revoked."""
        async with self._write() as session:
            result = await session.execute(
                update(PlayerSession)
                .where(PlayerSession.token_hash == token_hash, PlayerSession.revoked_at.is_(None))
                .values(revoked_at=now or utcnow())
            )
            return bool(getattr(result, "rowcount", 0))

    async def delete_expired_sessions(self, now: datetime) -> int:
        """Housekeeping: delete the sessions expired at ``now``; how many."""
        async with self._write() as session:
            result = await session.execute(
                delete(PlayerSession).where(PlayerSession.expires_at <= now)
            )
            return int(getattr(result, "rowcount", 0))

    # Tables.

    async def save_table(self, row: TableRow, *, fence: int | None = None) -> None:
        """Insert the table, or update it if its id exists. ``fence``: the writer's fencing
        token (cluster mode): ``Fenced`` unless it is the stored table's."""
        async with self._write() as session:
            table = await session.get(GameTable, row.id, with_for_update=fence is not None)
            if table is None:
                table = GameTable(id=row.id)
                session.add(table)
            elif fence is not None and table.fence != fence:
                raise Fenced(row.id, fence, table.fence)
            table.rules = row.rules
            table.turn_seconds = row.turn_seconds
            table.private = row.private
            table.invite_code = row.invite_code
            table.seats = list(row.seats)
            table.created_at = row.created_at
            table.state = row.state
            table.hands = row.hands
            table.aids = row.aids
            table.rated = row.rated
            table.ends_at = row.ends_at
            table.seed = row.seed
            table.reveals = row.reveals
            table.watchable = row.watchable
            table.spectator_delay_seconds = row.spectator_delay_seconds
            table.claim_window_ms = row.claim_window_ms
            tournament = row.tournament or (None, None, None)
            table.tournament_id, table.tournament_session, table.tournament_table = tournament

    async def load_open_tables(self) -> list[TableRow]:
        """The tables waiting or playing, oldest first."""
        async with self._read() as session:
            tables = await session.scalars(
                select(GameTable)
                .where(GameTable.state.in_(("waiting", "playing")))
                .order_by(GameTable.created_at, GameTable.id)
            )
            return [TableRow.of(t) for t in tables]

    async def take_table(self, table_id: str) -> int:
        """Take the table over (cluster mode): increment its fencing token and return it;
        from then on a write with an older token is ``Fenced``. On PostgreSQL this waits for
        a write in flight with the old token (it holds the row) to commit first, so what the
        new owner then reads of the log is all there will ever be. ``LookupError`` if there
        is no such table."""
        async with self._write() as session:
            fence = await session.scalar(
                update(GameTable)
                .where(GameTable.id == table_id)
                .values(fence=GameTable.fence + 1)
                .returning(GameTable.fence)
            )
            if fence is None:
                raise LookupError(f"no table {table_id!r}")
            return int(fence)

    async def table_fences(self, table_ids: Sequence[str]) -> dict[str, int]:
        """Each table's fencing token (cluster mode: whether another node took a table over
        while this one's lease had lapsed); a table that does not exist is left out."""
        async with self._read() as session:
            rows = await session.execute(
                select(GameTable.id, GameTable.fence).where(GameTable.id.in_(list(table_ids)))
            )
            return {row.id: int(row.fence) for row in rows}

    async def open_table_ids(self) -> list[str]:
        """The ids of the tables waiting or playing (cluster mode: those a node must own)."""
        async with self._read() as session:
            ids = await session.scalars(
                select(GameTable.id).where(GameTable.state.in_(("waiting", "playing")))
            )
            return list(ids)

    async def get_table(self, table_id: str) -> TableRow | None:
        """The stored table ``table_id`` (any state), None if there is none: what
        ``guobiao db check`` reads of a finished match's table (its time cap)."""
        async with self._read() as session:
            table = await session.get(GameTable, table_id)
            return TableRow.of(table) if table is not None else None

    async def max_table_number(self, prefix: str = "t") -> int:
        """The largest N of the stored table ids ``{prefix}N`` (0 if none): a restarted
        server numbers its new tables from there, so no id is reused."""
        async with self._read() as session:
            ids = await session.scalars(
                select(GameTable.id).where(GameTable.id.startswith(prefix, autoescape=True))
            )
            numbers = [int(i[len(prefix) :]) for i in ids if i[len(prefix) :].isdigit()]
            return max(numbers, default=0)

    # Matches.

    async def create_match(  # noqa: PLR0917 (the signature the server codes against)
        self,
        table_id: str,
        rules: str,
        seed: int,
        salt: str,
        seats: Sequence[str | None],
        started_at: datetime,
        rule_options: Mapping[str, Any] | None = None,
        hands_planned: int = MATCH_HANDS,
        rated: bool = False,
        fence: int | None = None,
    ) -> int:
        """Record a new match; its id (use it as the engine's ``match_id``, so the hand
        records and the log agree). ``seed`` must fit a signed 64-bit integer.
        ``rule_options`` are the rules as played (``RuleSet.to_dict()``), ``hands_planned``
        the match's length in deals (``Match.hands``). A ``rated`` match needs four
        registered accounts (``NotRateable`` otherwise); it records them as its foursome.
        ``fence``: the writer's fencing token for the table (``Fenced`` unless current)."""
        if seed not in SEED_RANGE:
            raise ValueError(f"a match seed must fit in a signed 64-bit integer, got {seed}")
        bytes.fromhex(salt)  # ValueError unless hex
        if len(seats) != 4:
            raise ValueError(f"a match has 4 seats, got {seats!r}")
        check_match_hands(hands_planned)
        async with self._write() as session:
            if fence is not None:
                await _check_fence(session, table_id, fence)
            foursome = None
            if rated:
                foursome = foursome_key(await _registered_ids(session, seats))
            match = Match(
                table_id=table_id,
                rules=rules,
                seed=seed,
                salt=salt,
                seats=list(seats),
                started_at=started_at,
                rule_options=dict(rule_options) if rule_options is not None else None,
                hands_planned=hands_planned,
                rated=rated,
                foursome=foursome,
            )
            session.add(match)
            await session.flush()
            return match.id

    async def append_action(
        self,
        match_id: int,
        seq: int,
        hand_no: int,
        player: int,
        action: Mapping[str, Any],
        *,
        now: datetime | None = None,
        fence: tuple[str, int] | None = None,
    ) -> None:
        """Append one action to a match's log; committed when this returns.

        Appends from many tables are committed together (group commit): while one
        transaction is being written, the next appends wait and share the next one, so a
        busy server makes one commit for many actions and each caller still returns only
        once its action is durable. ``Conflict`` if the match has an action ``seq`` already
        or does not exist. ``fence``: (table id, the writer's fencing token) in cluster
        mode; the token is checked in the transaction that appends (``Fenced`` unless it is
        the table's), holding the table's row so a takeover waits for the commit.
        """
        row = {
            "match_id": match_id,
            "seq": seq,
            "hand_no": hand_no,
            "player": player,
            "action": dict(action),
            "created_at": now or utcnow(),
        }
        if fence is not None:
            row[_FENCE] = fence
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((row, done))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_actions(), name="store-actions")
        await done

    async def _flush_actions(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                fenced = await self._insert_actions([row for row, _ in batch])
                if fenced:
                    refused = [(row, done) for row, done in batch if id(row) in fenced]
                    batch = [(row, done) for row, done in batch if id(row) not in fenced]
                    for row, done in refused:
                        table_id, token = row[_FENCE]
                        _settle(done, Fenced(table_id, token, fenced[id(row)]))
            except IntegrityError:
                for row, done in batch:  # find the culprit: each row on its own
                    try:
                        alone = await self._insert_actions([row])
                    except IntegrityError:
                        _settle(
                            done,
                            Conflict(
                                f"cannot append action {row['seq']} to match "
                                f"{row['match_id']}: the match is unknown, the seq is taken "
                                "or the player is not 0..3"
                            ),
                        )
                    except Exception as exc:
                        _settle(done, exc)
                    else:
                        if alone:
                            table_id, token = row[_FENCE]
                            _settle(done, Fenced(table_id, token, alone[id(row)]))
                        else:
                            _settle(done, None)
            except Exception as exc:
                for _, done in batch:
                    _settle(done, exc)
            else:
                for _, done in batch:
                    _settle(done, None)

    async def _insert_actions(self, rows: list[dict[str, Any]]) -> dict[int, int | None]:
        """Insert ``rows`` in one transaction but those whose fencing token is not their
        table's: those are returned (``id(row)`` -> the table's token, None if gone)."""
        # A Core connection, not an ORM session: at a few actions per commit (every commit
        # of a lightly loaded server) the session's own bookkeeping cost the event loop
        # about 0.2 ms per commit, a tenth of serving the action. Same statement, same
        # BEGIN IMMEDIATE (the write option), one transaction.
        started = time.perf_counter()
        # One connection held for the log (only the flusher task appends, one commit at a
        # time): a pool checkout and reset per commit cost about as much as the commit.
        # One that failed is closed and not used again.
        if self._log is None or self._log.closed or self._log.invalidated:
            self._log = await self.engine.connect()
        connection = self._log
        try:
            fenced = await self._insert_on(connection, rows)
        except IntegrityError:
            raise  # rolled back; the connection is fine
        except BaseException:
            self._log = None
            with contextlib.suppress(Exception):
                await connection.invalidate()
            raise
        if self.on_commit is not None:  # committed (an error went past this)
            self.on_commit("actions", time.perf_counter() - started)
        return fenced

    async def _insert_on(
        self, connection: AsyncConnection, rows: list[dict[str, Any]]
    ) -> dict[int, int | None]:
        if connection.dialect.name == "sqlite":  # the embedded default: see sqlite_log
            if self._sqlite_log is None:
                self._sqlite_log = sqlite_log.binder(
                    MatchAction.__table__,
                    MatchAction.__tablename__,
                    _ACTION_COLUMNS,
                    connection.dialect,
                )
            fenced = await sqlite_log.insert_rows(connection, *self._sqlite_log, rows, fence=_FENCE)
        else:
            await connection.execution_options(**{WRITE_OPTION: True})
            async with connection.begin():
                fenced = await _fenced_rows(connection, rows)
                kept = [
                    {k: v for k, v in r.items() if k != _FENCE} for r in rows if id(r) not in fenced
                ]
                if kept:
                    await connection.execute(_INSERT_ACTION, kept)
        return fenced

    async def finish_hand(
        self,
        match_id: int,
        hand_no: int,
        record: Mapping[str, Any],
        deltas: Sequence[int],
        *,
        now: datetime | None = None,
    ) -> bool:
        """Store a finished hand (``record``: ``HandRecord.to_dict()``); True if stored now.

        Storing a hand again with the same record and deltas does nothing and returns False
        (crash recovery may replay a hand whose record was already stored). ``Conflict`` if
        the hand is stored with another record, or the match does not exist.
        """
        record = json.loads(json.dumps(record))  # as the JSON column gives it back
        deltas = [int(d) for d in deltas]
        try:
            async with self._write(timed="hand") as session:
                stored = await session.scalar(
                    select(Hand).where(Hand.match_id == match_id, Hand.hand_no == hand_no)
                )
                if stored is not None:
                    if stored.record == record and stored.deltas == deltas:
                        return False
                    raise Conflict(
                        f"hand {hand_no} of match {match_id} is stored already, with another record"
                    )
                session.add(
                    Hand(
                        match_id=match_id,
                        hand_no=hand_no,
                        record=record,
                        deltas=deltas,
                        finished_at=now or utcnow(),
                    )
                )
                return True
        except IntegrityError:
            raise Conflict(
                f"cannot store hand {hand_no} of match {match_id}: the match is unknown"
            ) from None

    async def finish_match(
        self,
        match_id: int,
        final_scores: Sequence[int],
        ended_at: datetime,
        addresses: Sequence[str | None] | None = None,
    ) -> FinishedMatch:
        """End a match, in one transaction with its consequences:

        - ``match_players``: per player index, the final score and the hands won, lost and
          drawn (counted from the stored hand records, see ``server.grades``);
        - each human player's cached counts: ``score`` += final score, hands, ``matches``
          += 1, and the grade recomputed. Bots (``"bot:..."`` seats) have no player row.
          Not for a match whose outcome is held (``server.tournaments.store.held``: a
          duplicate session in play): its session's end counts it;
        - a rated match: the four ratings (``server.ladder.store.rate_match``).

        ``addresses``: where each player index was connected from (kept for operators).

        Returns what it did (``FinishedMatch``): whether it ended the match now (not if it
        was finished already: then it changes nothing, so a retry is harmless), and the
        rating changes of a rated match (those it made, or those made when it was
        finished). ``NoSuchMatch`` if the match does not exist.
        """
        if len(final_scores) != 4:
            raise ValueError(f"a match has 4 final scores, got {final_scores!r}")
        async with self._write(timed="match") as session:
            match = await session.get(Match, match_id, with_for_update=True)
            if match is None:
                raise NoSuchMatch(f"no match {match_id}")
            if match.ended_at is not None:
                made = await match_changes(session, match_id) if match.rated else []
                return FinishedMatch(False, tuple(made))
            records = await session.scalars(
                select(Hand.record).where(Hand.match_id == match_id).order_by(Hand.hand_no)
            )
            counts = match_counts(list(records))
            hidden = await session.scalar(select(held()).where(Match.id == match_id))
            keys = {s.lower() for s in match.seats if s is not None and not is_bot(s)}
            players = {
                p.username_key: p
                for p in await session.scalars(
                    select(Player)
                    .where(Player.username_key.in_(sorted(keys)))
                    .order_by(Player.id)
                    .with_for_update()
                )
            }
            for index, (seat, score, c) in enumerate(
                zip(match.seats, final_scores, counts, strict=True)
            ):
                player = None if seat is None or is_bot(seat) else players.get(seat.lower())
                session.add(
                    MatchPlayer(
                        match_id=match_id,
                        player=index,
                        player_id=player.id if player is not None else None,
                        score=score,
                        won=c.won,
                        lost=c.lost,
                        drawn=c.drawn,
                        address=addresses[index] if addresses else None,
                    )
                )
                if player is not None and not hidden:
                    _add_match(player, score, c.won, c.lost, c.drawn)
            match.ended_at = ended_at
            match.final_scores = [int(s) for s in final_scores]
            changes: list[dict[str, Any]] = []
            if match.rated:
                seated = [players.get(s.lower()) if s else None for s in match.seats]
                accounts = [p for p in seated if p is not None and not p.guest]
                if len(accounts) == len(seated):
                    changes = await rate_match(
                        session,
                        match,
                        players=accounts,
                        scores=match.final_scores,
                        now=ended_at,
                        policy=self.policy,
                    )
                else:  # (create_match checked them: an account deleted since)
                    log.warning("match %s: not rated, not every seat is an account", match_id)
            return FinishedMatch(True, tuple(changes))

    async def rating_changes(self, match_id: int) -> list[dict[str, Any]]:
        """The rating changes a finished rated match made, by player index (the match
        page; ``finish_match`` returns them to the table that finishes it)."""
        return await self.ladder.match_changes(match_id)

    async def get_match(self, match_id: int) -> MatchRow | None:
        async with self._read() as session:
            match = await session.get(Match, match_id)
            return MatchRow.of(match) if match is not None else None

    async def table_matches(self, table_id: str) -> list[MatchRow]:
        """The matches played at a table, oldest first."""
        async with self._read() as session:
            matches = await session.scalars(
                select(Match).where(Match.table_id == table_id).order_by(Match.id)
            )
            return [MatchRow.of(m) for m in matches]

    async def unfinished_matches(self) -> list[MatchRow]:
        """The matches not yet finished (to resume after a restart), oldest first."""
        async with self._read() as session:
            matches = await session.scalars(
                select(Match).where(Match.ended_at.is_(None)).order_by(Match.id)
            )
            return [MatchRow.of(m) for m in matches]

    async def match_actions(self, match_id: int) -> list[ActionRow]:
        """A match's action log in ``seq`` order."""
        async with self._read() as session:
            rows = await session.execute(
                select(MatchAction.seq, MatchAction.hand_no, MatchAction.player, MatchAction.action)
                .where(MatchAction.match_id == match_id)
                .order_by(MatchAction.seq)
            )
            return [ActionRow(*row) for row in rows]

    async def last_action(self, match_id: int) -> ActionRow | None:
        """The last action of a match's log (None if it has none): after a failed append,
        whether the action was committed after all."""
        async with self._read() as session:
            row = (
                await session.execute(
                    select(
                        MatchAction.seq, MatchAction.hand_no, MatchAction.player, MatchAction.action
                    )
                    .where(MatchAction.match_id == match_id)
                    .order_by(MatchAction.seq.desc())
                    .limit(1)
                )
            ).first()
            return ActionRow(*row) if row is not None else None

    async def finished_matches(self) -> list[MatchRow]:
        """The finished matches, oldest first (``guobiao db check --all``)."""
        async with self._read() as session:
            matches = await session.scalars(
                select(Match).where(Match.ended_at.is_not(None)).order_by(Match.id)
            )
            return [MatchRow.of(m) for m in matches]

    async def match_hands(self, match_id: int) -> list[dict[str, Any]]:
        """The stored hand records of a match, in hand order."""
        async with self._read() as session:
            records = await session.scalars(
                select(Hand.record).where(Hand.match_id == match_id).order_by(Hand.hand_no)
            )
            return list(records)

    # Reports (the HTTP API).

    async def player_summary(
        self, username: str, recent: int = RECENT_MATCHES
    ) -> dict[str, Any] | None:
        """Grade, counts and the most recent finished matches of a player; None if unknown.
        A match whose outcome is held (``server.tournaments.store.held``) is not listed, nor
        counted (``finish_match``) until its session is over."""
        async with self._read() as session:
            player = await session.scalar(
                select(Player).where(Player.username_key == username.lower())
            )
            if player is None:
                return None
            rows = await session.execute(
                select(MatchPlayer, Match)
                .join(Match, Match.id == MatchPlayer.match_id)
                .where(MatchPlayer.player_id == player.id, ~held())
                .order_by(Match.ended_at.desc(), Match.id.desc())
                .limit(recent)
            )
            matches = [
                {
                    "match": match.id,
                    "table": match.table_id,
                    "rules": match.rules,
                    "ended_at": iso(match.ended_at),
                    "player": mp.player,
                    "score": mp.score,
                    "won": mp.won,
                    "lost": mp.lost,
                    "drawn": mp.drawn,
                    "final_scores": match.final_scores,
                    "seats": match.seats,
                }
                for mp, match in rows
            ]
            return {
                "username": player.username,
                "guest": player.guest,
                "created_at": iso(player.created_at),
                "grade": player.grade,
                "score": player.score,
                "hands_won": player.hands_won,
                "hands_lost": player.hands_lost,
                "hands_drawn": player.hands_drawn,
                "matches": player.matches,
                "recent": matches,
            }

    async def match_detail(self, match_id: int) -> dict[str, Any] | None:
        """A match and its finished hands (fans, deltas...); None if unknown. The seed and
        salt are included only once the match is finished."""
        async with self._read() as session:
            match = await session.get(Match, match_id)
            if match is None:
                return None
            hands = await session.scalars(
                select(Hand).where(Hand.match_id == match_id).order_by(Hand.hand_no)
            )
            detail: dict[str, Any] = {
                "match": match.id,
                "table": match.table_id,
                "rules": match.rules,
                "rule_options": match.rule_options,
                "hands_planned": match.hands_planned,
                "rated": match.rated,
                "seats": match.seats,
                "started_at": iso(match.started_at),
                "ended_at": iso(match.ended_at),
                "finished": match.ended_at is not None,
                "final_scores": match.final_scores,
                "hands": [{**h.record, "finished_at": iso(h.finished_at)} for h in hands],
            }
            if match.ended_at is not None:
                detail["seed"] = match.seed
                detail["salt"] = match.salt
            return detail

    async def match_log(self, match_id: int) -> list[dict[str, Any]] | None:
        """A finished match as the JSON lines of ``guobiao simulate --log`` (replayable with
        ``guobiao replay``): a ``match`` line with the seed, then each hand's ``action``
        lines and its ``result`` line. None for an unknown match or one still in play (its
        seed is secret)."""
        async with self._read() as session:
            match = await session.get(Match, match_id)
            if match is None or match.ended_at is None:
                return None
            actions = await session.execute(
                select(MatchAction.hand_no, MatchAction.player, MatchAction.action)
                .where(MatchAction.match_id == match_id)
                .order_by(MatchAction.seq)
            )
            hands = await session.execute(
                select(Hand.hand_no, Hand.record)
                .where(Hand.match_id == match_id)
                .order_by(Hand.hand_no)
            )
            header = {
                "type": "match",
                "match": match.id,
                "seed": match.seed,
                "rules": match.rules,
                "table": match.table_id,
                "seats": match.seats,
            }
            if match.rule_options is not None:
                header["rule_options"] = match.rule_options
            header["hands"] = match.hands_planned
            return [header, *_log_lines(match.id, actions.all(), hands.all())]

    # Housekeeping of guests (server.accounts.purge_guests).

    async def purge_guests(
        self, created_before: datetime, now: datetime, *, after_id: int = 0, limit: int = 500
    ) -> GuestPurge:
        """Remove up to ``limit`` guests (by id, after ``after_id``) created before
        ``created_before`` with no session valid at ``now``: a guest named in a match
        (finished, in play, or seated at an open table) keeps its row, so records keep
        their names, and loses its sessions; any other is deleted. Call again with
        ``after_id=result.next_after`` until that is None."""
        async with self._write() as session:
            valid = (
                select(PlayerSession.id)
                .where(
                    PlayerSession.player_id == Player.id,
                    PlayerSession.revoked_at.is_(None),
                    PlayerSession.expires_at > now,
                )
                .exists()
            )
            candidates = await session.execute(
                select(Player.id, Player.username_key)
                .where(
                    Player.guest.is_(True),
                    Player.created_at < created_before,
                    Player.id > after_id,
                    ~valid,
                )
                .order_by(Player.id)
                .limit(limit)
            )
            expired: dict[int, str] = dict(candidates.all())
            if not expired:
                return GuestPurge(0, 0, None)
            ids = sorted(expired)
            played = set(
                await session.scalars(
                    select(MatchPlayer.player_id).where(MatchPlayer.player_id.in_(ids)).distinct()
                )
            )
            # Matches in play and open tables are few (bounded by the tables): their seats
            # are read here rather than searched inside JSON, which the databases differ on.
            seated: set[str] = set()
            for seats in await session.scalars(select(Match.seats).where(Match.ended_at.is_(None))):
                seated.update(s.lower() for s in seats if isinstance(s, str))
            for seats in await session.scalars(
                select(GameTable.seats).where(GameTable.state.in_(("waiting", "playing")))
            ):
                seated.update(s.lower() for s in seats if isinstance(s, str))
            kept = sorted(i for i in ids if i in played or expired[i] in seated)
            gone = sorted(set(ids) - set(kept))
            await session.execute(delete(PlayerSession).where(PlayerSession.player_id.in_(ids)))
            if gone:
                await session.execute(delete(Player).where(Player.id.in_(gone)))
            return GuestPurge(len(gone), len(kept), ids[-1] if len(ids) == limit else None)


def _add_match(player: Player, score: int, won: int, lost: int, drawn: int) -> None:
    player.score += score
    player.hands_won += won
    player.hands_lost += lost
    player.hands_drawn += drawn
    player.matches += 1
    player.grade = grade(player.score, player.hands_won, player.hands_lost, player.hands_drawn)


def _log_lines(
    match_id: int,
    actions: Iterable[tuple[int, int, dict[str, Any]]],
    hands: Iterable[tuple[int, dict[str, Any]]],
) -> list[dict[str, Any]]:
    """Each hand's actions, then its result line (the order ``guobiao replay`` reads)."""
    by_hand: dict[int, list[dict[str, Any]]] = {}
    for hand_no, player, action in actions:
        by_hand.setdefault(hand_no, []).append(
            {
                "type": "action",
                "match": match_id,
                "hand": hand_no,
                "player": player,
                "action": action,
            }
        )
    results = dict(hands)
    lines: list[dict[str, Any]] = []
    for hand_no in sorted(by_hand.keys() | results.keys()):
        lines.extend(by_hand.get(hand_no, []))
        if hand_no in results:
            lines.append(
                {"type": "result", "match": match_id, "hand": hand_no, "record": results[hand_no]}
            )
    return lines


class GuestPurge(NamedTuple):
    """What one ``Store.purge_guests`` call did; ``next_after``: where the next batch
    starts (None: no more)."""

    deleted: int
    kept: int
    next_after: int | None

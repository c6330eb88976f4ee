"""The database schema: SQLAlchemy 2.0 typed models, portable between SQLite and PostgreSQL.

Tables (the migrations ``migrations/versions/`` create the same):

- ``players``: accounts (guests included) with cached counts and grade (级别).
- ``sessions``: login sessions; only the SHA-256 of a token is stored.
- ``tables``: lobby tables (a tournament's with its settings), so open tables survive a restart.
- ``matches``: one match (16 hands, or as many deals as its table chose): its secret seed
  and salt, who sat where, the final scores.
- ``hands``: each finished hand's record (``HandRecord.to_dict()``) and deltas.
- ``actions``: the append-only action log, numbered per match (``seq``); a match is its seed
  plus this log, so any state can be rebuilt by replaying it through the engine.
- ``match_players``: per finished match and player index, the score and counts it added,
  and the address the player connected from (for an operator looking for rating farms).
- ``seasons``: the ladders' seasons (a ladder is a rated rule preset), with the rating model
  each was played under; ``ratings``: a player's rating in a season; ``rating_changes``: per
  rated match and player, the rating before and after, the rank and the score
  (``server/ladder/``, docs/ladder.md).
- ``tournaments`` and their ``tournament_roles`` (directors), ``tournament_players``,
  ``tournament_checkins``, ``tournament_sessions`` (seatings), ``tournament_tables`` (the
  lobby table of each session table), ``tournament_substitutions`` and the append-only
  ``tournament_log`` of corrections (``server/tournaments/``, docs/tournaments.md).

Portability: no dialect-specific type. JSON columns are ``sqlalchemy.JSON``; datetimes are
timezone-aware UTC in Python (``UTCDateTime``), ``timestamptz`` on PostgreSQL and naive UTC
text on SQLite. Every constraint and index is named through ``NAMING_CONVENTION`` so that
Alembic migrations are deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    UniqueConstraint,
    false,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

TABLE_STATES = ("waiting", "playing", "finished")
# Indexes only PostgreSQL has (declared with ``ddl_if``); Alembic's comparison of a schema
# with the models skips them on other databases (``schema_filter``).
POSTGRESQL_ONLY_INDEXES = frozenset({"ix_players_username_prefix"})


def schema_filter(dialect: str) -> Callable[..., bool]:
    """An Alembic ``include_object`` for a database of ``dialect``: everything of the
    models, but the PostgreSQL-only indexes elsewhere."""

    def include(item: object, name: str | None, kind: str, reflected: bool, other: object) -> bool:
        return not (kind == "index" and name in POSTGRESQL_ONLY_INDEXES and dialect != "postgresql")

    return include


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware datetime, always UTC.

    Binding a naive datetime is an error (it would be ambiguous). PostgreSQL stores
    ``timestamptz``; SQLite has no time zones, so the value is stored as naive UTC and
    comes back with ``tzinfo=UTC``: both databases hand back the same aware value.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"expected a timezone-aware datetime, got {value!r}")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def iso(moment: datetime | None) -> str | None:
    """``2026-12-29T10:00:00Z``: how the API writes times."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: UTCDateTime(),
        dict[str, Any]: JSON,
        list[Any]: JSON,
    }


metadata = Base.metadata


class Player(Base):
    """An account. ``username`` keeps the spelling chosen; ``username_key`` (lowercase) is
    unique, so names differing only in case cannot both exist, and is how a name is looked
    up (a login, a page). ``username_skeleton`` (``server.text.skeleton``: case, ``I``/``l``/
    ``1``, ``O``/``0``, ``m``/``rn`` alike) is unique too, so names that look alike cannot
    both be registered; it is null only for an account that already looked like an older
    one when revision 0009 came (both kept, each logging in by its own name)."""

    __tablename__ = "players"
    # The leaderboard's name search (``LIKE 'prefix%'``): PostgreSQL uses an index for it
    # only with the pattern operator class (unless the database's collation is "C"); SQLite
    # searches a range of the unique index instead (server/ladder/store.py, ``_named``).
    __table_args__ = (
        Index(
            "ix_players_username_prefix",
            "username_key",
            postgresql_ops={"username_key": "varchar_pattern_ops"},
        ).ddl_if(dialect="postgresql"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    username: Mapped[str] = mapped_column(String(32))
    username_key: Mapped[str] = mapped_column(String(32), unique=True)
    username_skeleton: Mapped[str | None] = mapped_column(String(64), index=True, unique=True)
    password_hash: Mapped[str | None] = mapped_column(String(255))
    guest: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime]
    # Cached totals over the player's finished matches (see server/grades.py).
    score: Mapped[int] = mapped_column(Integer, default=0)
    hands_won: Mapped[int] = mapped_column(Integer, default=0)
    hands_lost: Mapped[int] = mapped_column(Integer, default=0)
    hands_drawn: Mapped[int] = mapped_column(Integer, default=0)
    matches: Mapped[int] = mapped_column(Integer, default=0)
    grade: Mapped[float] = mapped_column(Float, default=0.0)


class PlayerSession(Base):
    """A login session. The token itself is never stored, only its SHA-256 (hex)."""

    __tablename__ = "sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]


class GameTable(Base):
    """A lobby table. ``seats``: 4 entries, a username, ``"bot:default"``/``"bot:fast"`` or
    null."""

    __tablename__ = "tables"
    __table_args__ = (CheckConstraint(f"state IN {TABLE_STATES!r}", name="state"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    rules: Mapped[str] = mapped_column(String(32))
    turn_seconds: Mapped[int] = mapped_column(Integer)
    private: Mapped[bool] = mapped_column(Boolean)
    invite_code: Mapped[str | None] = mapped_column(String(64))
    seats: Mapped[list[Any]]
    created_at: Mapped[datetime]
    state: Mapped[str] = mapped_column(String(16), index=True)
    # Its match's length in deals, 1..16 (revision 0003; tables stored before it: 16).
    hands: Mapped[int] = mapped_column(Integer, server_default="16")
    # Whether seated players may ``analyze`` their hands (revision 0004).
    aids: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    # A rated table's matches change its players' ladder ratings (revision 0005).
    rated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # A tournament's settings (revision 0007; tables stored before it have none of them):
    # the session's time cap (no hand starts after it), the match's seed fixed (duplicate:
    # the same walls at every table of a session), whether each hand's seed is revealed as
    # it ends, whether it may be watched, the spectators' delay, and which tournament,
    # session and table number 1.. it is (no foreign key: ``tournament_tables`` is the
    # tournament's own record of its tables).
    ends_at: Mapped[datetime | None]
    seed: Mapped[int | None] = mapped_column(BigInteger)
    reveals: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    watchable: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    spectator_delay_seconds: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    tournament_id: Mapped[int | None] = mapped_column(Integer, index=True)
    tournament_session: Mapped[int | None] = mapped_column(Integer)
    tournament_table: Mapped[int | None] = mapped_column(Integer)
    # The fencing token of the node that owns it in cluster mode (revision 0008): each
    # takeover increments it, and a write with an older token is refused (``Fenced``).
    fence: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Its own claim window in ms (revision 0008; None: its preset's): a table that moves to
    # another node, or restarts, keeps the pace it was created with.
    claim_window_ms: Mapped[int | None] = mapped_column(Integer)


class Match(Base):
    """A match. ``seed`` (the engine's match seed) and ``salt`` are secret until revealed:
    never send them for a match in play. ``seats``: who played player 0..3 (as in tables)."""

    __tablename__ = "matches"
    __table_args__ = (Index("ix_matches_foursome", "foursome", "started_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    table_id: Mapped[str] = mapped_column(String(32), index=True)
    rules: Mapped[str] = mapped_column(String(32))  # the preset's name
    rule_options: Mapped[dict[str, Any] | None]  # engine RuleSet.to_dict() (revision 0002)
    # Its length in deals, ``engine.match.Match``'s ``hands`` (revision 0003; before it: 16).
    hands_planned: Mapped[int] = mapped_column(Integer, server_default="16")
    seed: Mapped[int] = mapped_column(BigInteger)
    salt: Mapped[str] = mapped_column(String(128))
    seats: Mapped[list[Any]]
    started_at: Mapped[datetime]
    ended_at: Mapped[datetime | None] = mapped_column(index=True)
    final_scores: Mapped[list[Any] | None]
    # Rated play (revision 0005): ``rated`` is fixed at the start; ``foursome`` is the four
    # accounts' ids, sorted, comma-separated (the farm limit counts matches among the same
    # four); ``season_id`` and ``rating_seq`` (the order ratings were applied in, within
    # the season) are set when the finished match is rated.
    rated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    foursome: Mapped[str | None] = mapped_column(String(96))
    season_id: Mapped[int | None] = mapped_column(ForeignKey("seasons.id"))
    rating_seq: Mapped[int | None] = mapped_column(Integer)


class Hand(Base):
    """A finished hand: ``record`` is ``engine.match.HandRecord.to_dict()``."""

    __tablename__ = "hands"
    __table_args__ = (UniqueConstraint("match_id", "hand_no"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"))
    hand_no: Mapped[int] = mapped_column(Integer)
    record: Mapped[dict[str, Any]]
    deltas: Mapped[list[Any]]
    finished_at: Mapped[datetime]


class MatchAction(Base):
    """One action of the append-only log; ``seq`` orders a match's actions."""

    __tablename__ = "actions"
    __table_args__ = (
        UniqueConstraint("match_id", "seq"),
        CheckConstraint("player BETWEEN 0 AND 3", name="player"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    hand_no: Mapped[int] = mapped_column(Integer)
    player: Mapped[int] = mapped_column(Integer)
    action: Mapped[dict[str, Any]]
    created_at: Mapped[datetime]
    # The server played it for the person whose seat it was (away or out of time), not she
    # (revision 0010): a review leaves it out. A bot seat's moves are its own (false).
    stand_in: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class MatchPlayer(Base):
    """A finished match as one player index saw it; ``player_id`` is null for bots."""

    __tablename__ = "match_players"
    __table_args__ = (CheckConstraint("player BETWEEN 0 AND 3", name="player"),)

    match_id: Mapped[int] = mapped_column(
        ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True
    )
    player: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_id: Mapped[int | None] = mapped_column(
        ForeignKey("players.id", ondelete="SET NULL"), index=True
    )
    score: Mapped[int] = mapped_column(Integer)
    won: Mapped[int] = mapped_column(Integer)
    lost: Mapped[int] = mapped_column(Integer)
    drawn: Mapped[int] = mapped_column(Integer)
    # The IP address the player was connected from when the match started (revision 0005).
    address: Mapped[str | None] = mapped_column(String(64))


class Season(Base):
    """A season of a ladder (``ladder``: a rule preset's name), numbered from 1. The current
    season is the one with no ``ends_at`` or the latest whose range holds the moment.
    ``params``: the rating model (``server.ladder.rating.RatingParams``) it is played under."""

    __tablename__ = "seasons"
    __table_args__ = (UniqueConstraint("ladder", "number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    ladder: Mapped[str] = mapped_column(String(32))
    number: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(64))
    starts_at: Mapped[datetime]
    ends_at: Mapped[datetime | None]
    params: Mapped[dict[str, Any]]
    rated_matches: Mapped[int] = mapped_column(Integer, default=0)  # the last rating_seq


class Rating(Base):
    """A player's rating in a season: ``conservative`` is ``mu - 3 * sigma``, what the
    leaderboard orders by. The board index (season, figure, id) also holds ``matches``, so
    a page, a rank (a count of the rows above) and the counts of established and
    provisional players are read from the index alone (benchmarks/bench_ladder.py)."""

    __tablename__ = "ratings"
    __table_args__ = (
        Index("ix_ratings_season_board", "season_id", "conservative", "player_id", "matches"),
    )

    season_id: Mapped[int] = mapped_column(ForeignKey("seasons.id"), primary_key=True)
    player_id: Mapped[int] = mapped_column(
        ForeignKey("players.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    conservative: Mapped[float] = mapped_column(Float)
    matches: Mapped[int] = mapped_column(Integer)
    last_played_at: Mapped[datetime]


class RatingChange(Base):
    """One player's rating change from one rated match (player index 0..3): before and
    after, the rank (1..4, ties shared) and the final score it came from."""

    __tablename__ = "rating_changes"
    __table_args__ = (
        CheckConstraint("player BETWEEN 0 AND 3", name="player"),
        Index("ix_rating_changes_history", "player_id", "season_id", "match_id"),
    )

    match_id: Mapped[int] = mapped_column(
        ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True
    )
    player: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"))
    season_id: Mapped[int] = mapped_column(ForeignKey("seasons.id"))
    rank: Mapped[int] = mapped_column(Integer)
    score: Mapped[int] = mapped_column(Integer)
    mu_before: Mapped[float] = mapped_column(Float)
    sigma_before: Mapped[float] = mapped_column(Float)
    mu_after: Mapped[float] = mapped_column(Float)
    sigma_after: Mapped[float] = mapped_column(Float)


# ------------------------------------------------------------- tournaments ---
# (server/tournaments/, docs/tournaments.md; revision 0006)

TOURNAMENT_STATES = ("registering", "running", "finished")
SESSION_STATES = ("seated", "playing", "finished")


class Tournament(Base):
    """An event of several sessions. ``settings``: what its director chose (the
    ``server.tournaments.host.Settings`` fields); ``seed``: the recorded seed every
    session's seating (and, in duplicate mode, its walls) is derived from."""

    __tablename__ = "tournaments"
    __table_args__ = (CheckConstraint(f"state IN {TOURNAMENT_STATES!r}", name="state"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(80))
    rules: Mapped[str] = mapped_column(String(32))
    state: Mapped[str] = mapped_column(String(16), index=True)
    settings: Mapped[dict[str, Any]]
    registration_open: Mapped[bool] = mapped_column(Boolean)
    seed: Mapped[int] = mapped_column(BigInteger)
    created_by: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]


class TournamentRole(Base):
    """A role granted by the operator: ``director`` of one tournament, or, with no
    ``tournament_id``, of any tournament the account creates (the right to create)."""

    __tablename__ = "tournament_roles"
    __table_args__ = (UniqueConstraint("username_key", "tournament_id", "role"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    username_key: Mapped[str] = mapped_column(String(32), index=True)
    tournament_id: Mapped[int | None] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE")
    )
    role: Mapped[str] = mapped_column(String(16))
    granted_at: Mapped[datetime]


class TournamentPlayer(Base):
    """A registered player; a withdrawal keeps the row (and the results already played)."""

    __tablename__ = "tournament_players"

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    username: Mapped[str] = mapped_column(String(32), primary_key=True)
    status: Mapped[str] = mapped_column(String(16))  # registered, withdrawn
    registered_at: Mapped[datetime]
    withdrawn_at: Mapped[datetime | None]


class TournamentCheckin(Base):
    """A player's check-in for one session."""

    __tablename__ = "tournament_checkins"

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    session: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(32), primary_key=True)
    at: Mapped[datetime]


class TournamentSession(Base):
    """A session (a round) once seated: the seating as computed (``seating``: tables of
    four seats E S W N, byes, repeats, message) from ``seed`` by ``method``, then when it
    started, its time cap and when its last table finished."""

    __tablename__ = "tournament_sessions"
    __table_args__ = (CheckConstraint(f"state IN {SESSION_STATES!r}", name="state"),)

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    state: Mapped[str] = mapped_column(String(16))
    method: Mapped[str] = mapped_column(String(16))
    seed: Mapped[int] = mapped_column(BigInteger)
    seating: Mapped[dict[str, Any]]
    seated_at: Mapped[datetime]
    started_at: Mapped[datetime | None]
    ends_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]


class TournamentTable(Base):
    """A table of a started session: the lobby table that plays it (``table_id``; its
    match gives the result) and who sat at each seat, substitutes included (``seats``:
    labels as at a lobby table)."""

    __tablename__ = "tournament_tables"
    __table_args__ = (UniqueConstraint("table_id"),)

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    session: Mapped[int] = mapped_column(Integer, primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[str] = mapped_column(String(32))


class TournamentSubstitution(Base):
    """A substitute in a seat: ``player`` (a registered player, or a ``sub:N`` seat of the
    seating) is replaced by ``substitute`` (an account, or ``bot:NAME``) in ``session``.
    A substituted seat never counts for the player, nor for the substitute."""

    __tablename__ = "tournament_substitutions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), index=True
    )
    session: Mapped[int] = mapped_column(Integer)
    player: Mapped[str] = mapped_column(String(32))
    substitute: Mapped[str] = mapped_column(String(48))
    by: Mapped[str] = mapped_column(String(32))
    at: Mapped[datetime]


class TournamentLogEntry(Base):
    """The director's append-only log of corrections (``server.tournaments.scoring``):
    ``kind`` score, points, penalty or undo (``of``: the entry it withdraws); ``amount`` is
    exact text (``"-5"``, ``"1/2"``). Rows are never updated nor deleted."""

    __tablename__ = "tournament_log"
    __table_args__ = (UniqueConstraint("tournament_id", "seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))
    player: Mapped[str | None] = mapped_column(String(32))
    session: Mapped[int | None] = mapped_column(Integer)
    amount: Mapped[str | None] = mapped_column(String(32))
    of: Mapped[int | None] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(String(200))
    by: Mapped[str] = mapped_column(String(32))
    at: Mapped[datetime]

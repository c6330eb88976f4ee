"""What the server sends: one frozen class per message type, each with its payload.

lila-ws's ``ClientOut``: a sender builds the message as a typed value (``Joined(table,
seat)``) and ``server.protocol.encode`` writes it, so the set of messages and their fields
is this module, not forty dicts written where they are sent. Two shapes:

- a message whose payload is a few fields declares them as dataclass fields; ``payload()``
  writes them in their order, leaving out the optional ones (``OPTIONAL``) that are None;
- a message whose payload is a structure built elsewhere (a table's summary, an update's
  view and events, a tournament's detail, an analysis) carries it as ``body`` and names its
  top-level fields in ``FIELDS``; ``payload()`` is the body as it is (no copy: ``update`` is
  the server's hot path).

``Type.from_payload(payload)`` reads one back (the Python client's decoder).
``fields_of(cls)`` is what ``server.messages.registry`` and the docs test read. The wire
names are the attributes' names; the order of the fields is the order on the wire.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Self


class ServerMessage:
    """A message the server sends: its wire ``TYPE`` and its payload."""

    __slots__ = ()

    TYPE: ClassVar[str]
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()  # left out of the payload when None

    def payload(self) -> Mapping[str, Any]:
        """The payload object, fields in their order, optional ones left out when None."""
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None and f.name in self.OPTIONAL:
                continue
            out[f.name] = value
        return out

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> Self:
        """The message a payload carries (the Python client's decoder): each field by its
        name, an optional one absent as None. ``KeyError`` names a required field that is
        missing; the values are the server's and are not checked here."""
        values = {
            f.name: payload.get(f.name) if f.name in cls.OPTIONAL else payload[f.name]
            for f in fields(cls)  # type: ignore[arg-type]
        }
        return cls(**values)


class Body(ServerMessage):
    """A message whose payload is built elsewhere and carried whole; ``FIELDS`` names the
    top-level fields it may hold (the docs test holds the docs to them)."""

    __slots__ = ()

    FIELDS: ClassVar[tuple[str, ...]]
    body: Mapping[str, Any]

    def payload(self) -> Mapping[str, Any]:
        return self.body

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> Self:
        return cls(payload)  # type: ignore[call-arg]


def fields_of(cls: type[ServerMessage]) -> tuple[str, ...]:
    """The payload fields a message type may carry, by wire name."""
    if issubclass(cls, Body):
        return cls.FIELDS
    return tuple(f.name for f in fields(cls))  # type: ignore[arg-type]


# A table as ``table``, ``watching`` and the lobby's ``tables`` listing show it
# (``server.table.Table.summary``).
SUMMARY_FIELDS = (
    "table",
    "rules",
    "rule_options",
    "turn_seconds",
    "seats",
    "state",
    "hand_no",
    "private",
    "claim_window_ms",
    "hands",
    "aids",
    "rated",
    "reveals",
    "watchable",
    "spectator_delay_seconds",
    "ends_at",
    "tournament",
)


# ------------------------------------------------------------ connecting ---


@dataclass(frozen=True, slots=True)
class Welcome(ServerMessage):
    """The answer to ``hello``: the protocol version the server will speak, and the decision
    time a new table gets unless it asks for another (``turn_seconds``) and the range it may
    ask for (``[timers]``), for a client's form to offer."""

    TYPE: ClassVar[str] = "welcome"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset(
        {"turn_seconds", "min_turn_seconds", "max_turn_seconds"}
    )
    version: int
    server: str
    heartbeat_seconds: int
    turn_seconds: int | None = None
    min_turn_seconds: int | None = None
    max_turn_seconds: int | None = None


@dataclass(frozen=True, slots=True)
class Pong(ServerMessage):
    """The answer to ``ping``."""

    TYPE: ClassVar[str] = "pong"


@dataclass(frozen=True, slots=True)
class Error(ServerMessage):
    """A refusal: a stable ``code`` (``server.errors.CODES``) and a reason for people;
    ``retry_after`` (seconds) when asking again later will do (``rate_limited``); ``table``
    the table it is about (``already_seated``: the one where the player sits); ``match`` the
    match it is about (``table_finished``: the table's last)."""

    TYPE: ClassVar[str] = "error"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"retry_after", "table", "match"})
    code: str
    reason: str
    retry_after: float | None = None
    table: str | None = None
    match: int | None = None


# -------------------------------------------------------------- accounts ---


@dataclass(frozen=True, slots=True)
class Session(ServerMessage):
    """Who this connection now is (``register``, ``login``, ``guest``, ``resume``)."""

    TYPE: ClassVar[str] = "session"
    username: str
    token: str
    guest: bool
    expires: str  # ISO 8601, UTC, to the second


@dataclass(frozen=True, slots=True)
class LoggedOut(ServerMessage):
    TYPE: ClassVar[str] = "logged_out"


# ----------------------------------------------------------------- lobby ---


@dataclass(frozen=True, slots=True)
class Tables(ServerMessage):
    """The lobby's listing: the summaries of the tables one may join or watch."""

    TYPE: ClassVar[str] = "tables"
    tables: Sequence[Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class TableCreated(ServerMessage):
    TYPE: ClassVar[str] = "table_created"
    table: str
    invite_code: str | None  # None for a public table (sent as null)


@dataclass(frozen=True, slots=True)
class Joined(ServerMessage):
    TYPE: ClassVar[str] = "joined"
    table: str
    seat: int


@dataclass(frozen=True, slots=True)
class Left(ServerMessage):
    TYPE: ClassVar[str] = "left"
    table: str


@dataclass(frozen=True, slots=True)
class Queue(ServerMessage):
    """A ladder queue's news: ``waiting`` (with ``size``, ``waited_seconds``, ``gap``),
    ``matched`` (with ``table`` and ``seat``) or ``left``."""

    TYPE: ClassVar[str] = "queue"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset(
        {"table", "seat", "size", "waited_seconds", "gap"}
    )
    state: str
    ladder: str
    casual: bool
    table: str | None = None
    seat: int | None = None
    size: int | None = None
    waited_seconds: int | None = None
    gap: float | None = None


# ------------------------------------------------------------------ play ---


@dataclass(frozen=True, slots=True)
class TableInfo(Body):
    """A table's summary (``table``): its settings, seats and state."""

    TYPE: ClassVar[str] = "table"
    FIELDS: ClassVar[tuple[str, ...]] = SUMMARY_FIELDS
    body: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Watching(Body):
    """The answer to ``watch``: the table's summary."""

    TYPE: ClassVar[str] = "watching"
    FIELDS: ClassVar[tuple[str, ...]] = SUMMARY_FIELDS
    body: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Update(Body):
    """A table's news for one viewer: its events and view (``server.table``)."""

    TYPE: ClassVar[str] = "update"
    FIELDS: ClassVar[tuple[str, ...]] = (
        "table",
        "seq",
        "full",
        "hand_no",
        "hands_total",
        "dealer_position",
        "repeat",
        "scores",
        "view",
        "events",
        "commitment",
        "last_hand",
        "deadline_ms",
    )
    body: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Analysis(Body):
    """The playing aids for one's own hand: ``table``, ``seq`` and ``engine.analysis``'s
    listing (``shanten``, ``min_fan``, ``waits`` or ``discards``)."""

    TYPE: ClassVar[str] = "analysis"
    FIELDS: ClassVar[tuple[str, ...]] = ("table", "seq", "shanten", "min_fan", "waits", "discards")
    body: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Commit(ServerMessage):
    """The commitment to the next hand's wall, before it is dealt."""

    TYPE: ClassVar[str] = "commit"
    table: str
    hand_no: int
    commitment: str


@dataclass(frozen=True, slots=True)
class Reveal(Body):
    """A finished hand's seed and salt, to check its commitment (``guobiao verify``)."""

    TYPE: ClassVar[str] = "reveal"
    FIELDS: ClassVar[tuple[str, ...]] = (
        "table",
        "hand_no",
        "seed",
        "seed_hex",
        "salt",
        "commitment",
        "dealer_position",
    )
    body: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class MatchEnd(ServerMessage):
    TYPE: ClassVar[str] = "match_end"
    table: str
    match: int | None
    scores: Sequence[int]
    ratings: Any  # the rating changes of a rated match (docs/protocol.md, Match end)


# ----------------------------------------------------------- tournaments ---


@dataclass(frozen=True, slots=True)
class Tournament(Body):
    """A tournament as its requests answer it (``server.tournaments.host``)."""

    TYPE: ClassVar[str] = "tournament"
    FIELDS: ClassVar[tuple[str, ...]] = (
        "id",
        "name",
        "state",
        "rules",
        "created_by",
        "created_at",
        "finished_at",
        "directors",
        "registration_open",
        "duplicate",
        "sessions",
        "session",
        "next_session",
        "settings",
        "players",
        "standings",
        "log",
        "you",
        "entry",
    )
    body: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class TournamentChanged(ServerMessage):
    """Pushed to a tournament's players and directors: ``what`` changed; ask again."""

    TYPE: ClassVar[str] = "tournament_changed"
    tournament: int
    what: str


@dataclass(frozen=True, slots=True)
class TournamentSession(ServerMessage):
    """Pushed to a seated player when a session starts: where they sit."""

    TYPE: ClassVar[str] = "tournament_session"
    tournament: int
    session: int
    table: int
    wind: str
    table_id: str


MESSAGES: tuple[type[ServerMessage], ...] = (
    Welcome,
    Pong,
    Error,
    Session,
    LoggedOut,
    Tables,
    TableCreated,
    Joined,
    Left,
    Queue,
    TableInfo,
    Watching,
    Update,
    Analysis,
    Commit,
    Reveal,
    MatchEnd,
    Tournament,
    TournamentChanged,
    TournamentSession,
)

"""What the client knows: each message it received (``Incoming``), its session, the tables
it created, its tournament seats, and the state of each table it follows (``TableState``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine import wire
from engine.table import View
from server.client.errors import ClientError
from server.client.views import event_from_dict, view_from_dict
from server.messages import outbound, registry

WINDS = ("E", "S", "W", "N")  # a tournament table's seats 0..3, as its seating lists them


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

    def message(self) -> outbound.ServerMessage | None:
        """The message as its typed class (``server.messages.outbound``): ``Joined``,
        ``Queue``, ``Update`` (its payload as ``body``)...; None for a type this client does
        not know (a newer server's). ``ClientError`` when a required field is missing."""
        try:
            return registry.read(self.type, self.payload)
        except KeyError as exc:
            raise ClientError(f"a {self.type!r} message without {exc}: {self.payload!r}") from None


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
            pushed = outbound.TournamentSession.from_payload(payload)
            seat = cls(
                int(pushed.tournament),
                int(pushed.session),
                int(pushed.table),
                str(pushed.wind),
                str(pushed.table_id),
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
    view: dict[str, Any] | None = None  # the last wire view (seatless if not ``follow_seats``)
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
        """``view`` as the engine's ``View``; one kept without its seats (a client that
        does not follow them, ``follow_seats``) has none."""
        if self.view is None:
            return None
        if "seats" not in self.view:
            return view_from_dict({**self.view, "seats": []})
        return view_from_dict(self.view)

    def typed_events(self) -> list[wire.WireEvent]:
        """The events of the current hand as ``engine.wire`` event types."""
        return [event_from_dict(e) for e in self.events]


Predicate = Callable[[Incoming], bool]

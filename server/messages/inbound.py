"""What clients send: one frozen class per message type, and the decoder of its payload.

lila-ws's ``ClientIn``: each message a client may send is a frozen dataclass here, and
``DECODERS`` maps its wire ``type`` to the function that reads its payload into it, checking
every field's type and range (errors name the field). The frame around it (JSON, nesting,
Unicode, the envelope's ``type`` and ``id``) is read by ``server.protocol.decode``, the edge;
``server.messages.registry`` lists these types beside those the server sends. The wire
names of a message's fields are its attributes' names (``Play`` is the ``action`` type; the
sixteen ``tournament_*`` requests share ``TournamentRequest``, their fields listed in
``TOURNAMENT_FIELDS``). See ``docs/protocol.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from engine.actions import Action
from engine.errors import IllegalAction
from engine.match import MATCH_HANDS
from server.errors import ServerError, shown
from server.presets import MAX_CLAIM_WINDOW_MS
from server.text import BadText, clean

ACTION_TEXT = 16  # the longest field name or string an action object may hold ("concealed_kong")


class ProtocolError(ServerError):
    """A client message the server cannot accept; ``code`` goes on the wire."""


@dataclass(frozen=True, slots=True)
class Message:
    id: str | int | None


@dataclass(frozen=True, slots=True)
class Hello(Message):
    versions: tuple[int, ...]
    client: str


@dataclass(frozen=True, slots=True)
class Register(Message):
    username: str
    password: str


@dataclass(frozen=True, slots=True)
class Login(Message):
    username: str
    password: str


@dataclass(frozen=True, slots=True)
class Guest(Message):
    pass


@dataclass(frozen=True, slots=True)
class Resume(Message):
    token: str


@dataclass(frozen=True, slots=True)
class Logout(Message):
    pass


@dataclass(frozen=True, slots=True)
class ListTables(Message):
    pass


@dataclass(frozen=True, slots=True)
class SubscribeLobby(Message):
    """Start (``on``) or stop the live ``tables`` feed."""

    on: bool


@dataclass(frozen=True, slots=True)
class CreateTable(Message):
    rules: str | None
    turn_seconds: int | None
    private: bool
    claim_window_ms: int | None = None
    hands: int | None = None  # the match's length in deals (None: a whole match)
    aids: bool = True  # whether seated players may ``analyze`` their hands
    rated: bool = False  # a table of its preset's ladder (registered accounts only)


@dataclass(frozen=True, slots=True)
class JoinTable(Message):
    table: str
    seat: int | None
    invite_code: str | None


@dataclass(frozen=True, slots=True)
class AddBots(Message):
    table: str
    bot: str


@dataclass(frozen=True, slots=True)
class LeaveTable(Message):
    table: str


@dataclass(frozen=True, slots=True)
class Watch(Message):
    table: str
    invite_code: str | None


@dataclass(frozen=True, slots=True)
class Play(Message):
    """An ``action`` message: a game action for the sender's seat."""

    table: str
    seq: int
    action: Action


@dataclass(frozen=True, slots=True)
class Sync(Message):
    table: str


@dataclass(frozen=True, slots=True)
class Analyze(Message):
    """The playing aids for the sender's own hand (``analysis``)."""

    table: str


@dataclass(frozen=True, slots=True)
class NextHand(Message):
    """The sender has read the result of hand ``hand_no`` (protocol version 3): the next
    hand need not wait for it."""

    table: str
    hand_no: int


@dataclass(frozen=True, slots=True)
class QueueJoin(Message):
    """Wait in a ladder's queue for a table: rated, or ``casual`` (guests too, bots after a
    while). ``ladder`` None: the server's rule preset. ``bot``: the level of the bots that
    fill a casual table (None: the server's ``[bots] queue_fill``)."""

    ladder: str | None
    casual: bool
    bot: str | None = None


@dataclass(frozen=True, slots=True)
class QueueLeave(Message):
    pass


@dataclass(frozen=True, slots=True)
class Ping(Message):
    pass


@dataclass(frozen=True, slots=True)
class TournamentRequest(Message):
    """A tournament request (``TOURNAMENT_FIELDS`` lists the kinds and what each carries):
    ``tournament`` is its id (None only for ``tournament_create``), ``fields`` the other
    payload fields it has, each checked for its type and range here; what they mean (a
    known preset, a registered player...) is checked by ``server.tournaments.host``."""

    kind: str
    tournament: int | None
    fields: tuple[tuple[str, Any], ...]

    def get(self, key: str, default: Any = None) -> Any:
        return dict(self.fields).get(key, default)


class Payload:
    """Typed access to a payload object, with errors that name the field."""

    def __init__(self, data: dict[str, Any], kind: str) -> None:
        self.data = data
        self.kind = kind

    def _bad(self, key: str, expected: str) -> ProtocolError:
        return ProtocolError(
            "bad_message",
            f"{self.kind}: '{key}' must be {expected}, got {shown(self.data.get(key))}",
        )

    def text(self, key: str, *, optional: bool = False, limit: int = 200) -> Any:
        value = self.data.get(key)
        if value is None and optional:
            return None
        if not isinstance(value, str) or len(value) > limit:
            raise self._bad(key, f"a string of at most {limit} characters")
        return value

    def number(
        self, key: str, *, optional: bool = False, low: int = 0, high: int = 2**31 - 1
    ) -> Any:
        value = self.data.get(key)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self._bad(key, f"a whole number {low}..{high}")
        return value

    def flag(self, key: str, default: bool = False) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self._bad(key, "true or false")
        return value


def _hello(m: Payload, mid: Any) -> Message:
    versions = m.data.get("versions")
    if (
        not isinstance(versions, list)
        or not versions
        or len(versions) > 16
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in versions)
    ):
        raise m._bad("versions", "a non-empty list of version numbers, e.g. [1]")
    return Hello(mid, tuple(versions), m.text("client", optional=True) or "")


def _bot_level(m: Payload) -> str:
    """``add_bots``'s ``bot``: ``normal`` only when omitted. An empty name is kept, for the
    table to refuse as it refuses any name it does not know (``bad_message``, naming the
    levels)."""
    bot = m.text("bot", optional=True, limit=32)
    return "normal" if bot is None else bot


def _play(m: Payload, mid: Any) -> Message:
    table = m.text("table", limit=32)
    seq = m.number("seq")
    raw = m.data.get("action")
    # The engine's messages quote what they refuse in full: hand it nothing long to quote.
    if not isinstance(raw, dict) or any(
        len(key) > ACTION_TEXT or (isinstance(value, str) and len(value) > ACTION_TEXT)
        for key, value in raw.items()
    ):
        raise m._bad("action", 'an action object such as {"type": "discard", "tile": "5m"}')
    try:
        action = Action.from_dict(raw)
    except IllegalAction as exc:
        raise ProtocolError("bad_message", f"action: {exc}") from None
    return Play(mid, table, seq, action)


# A tournament request's payload fields beside ``tournament``: field -> its kind.
# "title": a name shown to others (1..80 characters once cleaned by ``server.text.clean``),
# "text": free text shown to others (0..80, the same check), "name": an account name (<= 32),
# "names": a list of 1..256 names, "int": a whole number (ranges in _RANGES), "flag":
# true/false, "methods": a seating method or a list of them (one per session), "keys": a list
# of tie-break keys, "amount": a whole number or an exact fraction as text ("1/2", "-3/2").
# A trailing "?" marks it optional.
MAX_TEXT = 80  # a tournament's name, a correction's reason (after NFC and trimming)
SETTINGS_FIELDS = {
    "name": "title?",
    "rules": "name?",
    "sessions": "int?",
    "hands": "int?",
    "time_cap_minutes": "int?",
    "turn_seconds": "int?",
    "aids": "flag?",
    "spectator_delay_seconds": "int?",
    "public": "flag?",
    "registration": "name?",
    "fill": "name?",
    "duplicate": "flag?",
    "check_in": "flag?",
    "tie_breaks": "keys?",
    "seating": "methods?",
}
TOURNAMENT_FIELDS: dict[str, dict[str, str]] = {
    "tournament_get": {},
    "tournament_register": {},
    "tournament_withdraw": {},
    "tournament_check_in": {},
    "tournament_start_session": {},
    "tournament_close": {},
    "tournament_create": SETTINGS_FIELDS,
    "tournament_configure": SETTINGS_FIELDS,
    "tournament_add_players": {"players": "names"},
    "tournament_remove_player": {"player": "name"},
    "tournament_registration": {"open": "flag"},
    "tournament_seat": {"method": "name?"},
    "tournament_swap": {"a": "name", "b": "name"},
    "tournament_substitute": {"player": "name", "substitute": "name"},
    "tournament_penalty": {
        "player": "name",
        "kind": "name",
        "amount": "amount",
        "reason": "text",
        "session": "int?",
    },
    "tournament_undo": {"entry": "int", "reason": "text?"},
}
_RANGES = {
    "sessions": (1, 32),
    "hands": (1, MATCH_HANDS),
    "time_cap_minutes": (0, 600),
    "turn_seconds": (1, 3600),
    "spectator_delay_seconds": (0, 3600),
    "session": (1, 32),
    "entry": (1, 2**31 - 1),
}
_FRACTION = re.compile(r"-?\d{1,9}(/[1-9]\d{0,8})?")


def _field(m: Payload, key: str, kind: str) -> Any:
    optional = kind.endswith("?")
    kind = kind.rstrip("?")
    value = m.data.get(key)
    if value is None and optional:
        return None
    if kind in ("title", "text"):
        if not isinstance(value, str):
            raise m._bad(key, f"a string of at most {MAX_TEXT} characters")
        try:
            if len(value) > 4 * MAX_TEXT:  # room for spaces to trim and letters to compose
                raise BadText(f"{key} has {len(value)} characters; at most {MAX_TEXT}")
            return clean(value, key, limit=MAX_TEXT, required=kind == "title")
        except BadText as exc:
            raise ProtocolError("bad_message", f"{m.kind}: {exc}") from None
    if kind == "name":
        return m.text(key, limit=32)
    if kind == "int":
        low, high = _RANGES[key]
        return m.number(key, low=low, high=high)
    if kind == "flag":
        if not isinstance(value, bool):
            raise m._bad(key, "true or false")
        return value
    if kind == "amount":
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**9:
            return str(value)
        if isinstance(value, str) and _FRACTION.fullmatch(value):
            return value
        raise m._bad(key, 'a whole number or an exact fraction as text ("1/2")')
    if kind == "methods" and isinstance(value, str) and len(value) <= 16:
        return (value,)
    limit, size = {"names": (256, 32), "keys": (8, 16), "methods": (32, 16)}[kind]
    if (
        not isinstance(value, list)
        or not 1 <= len(value) <= limit
        or not all(isinstance(v, str) and 0 < len(v) <= size for v in value)
    ):
        raise m._bad(key, f"a list of 1..{limit} strings of at most {size} characters")
    return tuple(value)


def _tournament(kind: str) -> Any:
    def decode(m: Payload, mid: Any) -> Message:
        tournament = None
        if kind != "tournament_create":
            tournament = m.number("tournament", low=1, high=2**31 - 1)
        fields = []
        for key, field_kind in TOURNAMENT_FIELDS[kind].items():
            value = _field(m, key, field_kind)
            if value is not None:
                fields.append((key, value))
        if kind == "tournament_create" and "name" not in dict(fields):
            raise m._bad("name", f"a name of 1 to {MAX_TEXT} characters")
        return TournamentRequest(mid, kind, tournament, tuple(fields))

    return decode


DECODERS: dict[str, Any] = {
    "hello": _hello,
    "register": lambda m, i: Register(
        i, m.text("username", limit=64), m.text("password", limit=256)
    ),
    "login": lambda m, i: Login(i, m.text("username", limit=64), m.text("password", limit=256)),
    "guest": lambda m, i: Guest(i),
    "resume": lambda m, i: Resume(i, m.text("token", limit=128)),
    "logout": lambda m, i: Logout(i),
    "list_tables": lambda m, i: ListTables(i),
    "subscribe_lobby": lambda m, i: SubscribeLobby(i, m.flag("on", default=True)),
    "create_table": lambda m, i: CreateTable(
        i,
        m.text("rules", optional=True, limit=32),
        m.number("turn_seconds", optional=True, low=1, high=3600),
        m.flag("private"),
        m.number("claim_window_ms", optional=True, low=0, high=MAX_CLAIM_WINDOW_MS),
        m.number("hands", optional=True, low=1, high=MATCH_HANDS),
        m.flag("aids", default=True),
        m.flag("rated"),
    ),
    "join_table": lambda m, i: JoinTable(
        i,
        m.text("table", limit=32),
        m.number("seat", optional=True, high=3),
        m.text("invite_code", optional=True, limit=64),
    ),
    "add_bots": lambda m, i: AddBots(i, m.text("table", limit=32), _bot_level(m)),
    "leave_table": lambda m, i: LeaveTable(i, m.text("table", limit=32)),
    "watch": lambda m, i: Watch(
        i, m.text("table", limit=32), m.text("invite_code", optional=True, limit=64)
    ),
    "action": _play,
    "sync": lambda m, i: Sync(i, m.text("table", limit=32)),
    "analyze": lambda m, i: Analyze(i, m.text("table", limit=32)),
    "next_hand": lambda m, i: NextHand(i, m.text("table", limit=32), m.number("hand_no", low=1)),
    "queue_join": lambda m, i: QueueJoin(
        i,
        m.text("ladder", optional=True, limit=32),
        m.flag("casual"),
        m.text("bot", optional=True, limit=32),
    ),
    "queue_leave": lambda m, i: QueueLeave(i),
    "ping": lambda m, i: Ping(i),
    **{kind: _tournament(kind) for kind in TOURNAMENT_FIELDS},
}

# Each type's class (what ``DECODERS[type]`` returns).
CLASSES: dict[str, type[Message]] = {
    "hello": Hello,
    "register": Register,
    "login": Login,
    "guest": Guest,
    "resume": Resume,
    "logout": Logout,
    "list_tables": ListTables,
    "subscribe_lobby": SubscribeLobby,
    "create_table": CreateTable,
    "join_table": JoinTable,
    "add_bots": AddBots,
    "leave_table": LeaveTable,
    "watch": Watch,
    "action": Play,
    "sync": Sync,
    "analyze": Analyze,
    "next_hand": NextHand,
    "queue_join": QueueJoin,
    "queue_leave": QueueLeave,
    "ping": Ping,
    **dict.fromkeys(TOURNAMENT_FIELDS, TournamentRequest),
}
assert set(CLASSES) == set(DECODERS)

MESSAGE_TYPES = frozenset(DECODERS)

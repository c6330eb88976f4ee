"""The wire protocol: decode client frames into typed messages, encode server messages.

Parse at the edge: ``decode`` turns a text frame into one of a closed set of
frozen message classes, or raises ``ProtocolError`` with a stable ``code``; the
rest of the server never sees raw JSON. See ``docs/protocol.md``. The messages
themselves, both ways, are ``server.messages`` (one class per type, and the registry);
this module is the frame around them: the JSON, the envelope, the limits.

Two things the JSON decoder accepts are refused here, before anything looks at
the message: nesting deeper than ``MAX_DEPTH`` (which would otherwise reach
Python's recursion limit), and strings that are not valid Unicode (a lone
surrogate written ``"\\ud800"``), in keys as in values, which could not be sent
back (``id`` is echoed as ``reply_to``) nor stored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import orjson

from server.errors import QUOTED, ServerError, shown
from server.messages import inbound
from server.messages.outbound import Error, ServerMessage

VERSIONS = (1, 2, 3)  # 2: updates not full carry no seats; 3: next_hand (docs/protocol.md)
MAX_ID_LENGTH = 64
MAX_DEPTH = 32  # objects and arrays inside one another; real messages use 4


# The message classes and their decoders live in ``server.messages.inbound``; they are
# named here too, where the server's handlers have always found them.
ProtocolError = inbound.ProtocolError
Message = inbound.Message
Hello = inbound.Hello
Register = inbound.Register
Login = inbound.Login
Guest = inbound.Guest
Resume = inbound.Resume
Logout = inbound.Logout
ListTables = inbound.ListTables
SubscribeLobby = inbound.SubscribeLobby
CreateTable = inbound.CreateTable
JoinTable = inbound.JoinTable
AddBots = inbound.AddBots
LeaveTable = inbound.LeaveTable
Watch = inbound.Watch
Play = inbound.Play
Sync = inbound.Sync
Analyze = inbound.Analyze
NextHand = inbound.NextHand
QueueJoin = inbound.QueueJoin
QueueLeave = inbound.QueueLeave
Ping = inbound.Ping
TournamentRequest = inbound.TournamentRequest
TOURNAMENT_FIELDS = inbound.TOURNAMENT_FIELDS
SETTINGS_FIELDS = inbound.SETTINGS_FIELDS
MESSAGE_TYPES = inbound.MESSAGE_TYPES


_BRACKET = re.compile(r"[\[\]{}]")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONG_DIGITS = re.compile(r"\d{19}")  # 10**18 and beyond: maybe over 64 bits


def _depth_over(text: str, limit: int) -> bool:
    """True if ``text`` nests objects and arrays deeper than ``limit`` (strings skipped)."""
    if text.count("[") + text.count("{") <= limit:
        return False  # the common case: too few brackets to be that deep, no scan
    depth = 0
    for found in _BRACKET.finditer(_STRING.sub("", text)):
        depth += 1 if found.group() in "[{" else -1
        if depth > limit:
            return True
    return False


def _parse(text: str) -> Any:
    """``json.loads`` with the nesting bounded; ``ProtocolError`` for what it refuses.

    Every player's action comes through here: orjson reads it about four times as fast.
    What orjson refuses (not JSON; or JSON it does not take: a lone surrogate's escape,
    NaN, a number beyond a double) and a text with 19 digits in a row (an integer orjson
    might read as a float) are read by ``json.loads`` as before, so what is accepted,
    what it reads as, and every error's words are what they were."""
    if _depth_over(text, MAX_DEPTH):
        raise ProtocolError(
            "bad_message", f"the message nests objects or arrays deeper than {MAX_DEPTH}"
        )
    if _LONG_DIGITS.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ProtocolError("bad_json", f"not valid JSON: {exc}") from None


def _is_unicode(text: str) -> bool:
    """False for a string holding a lone surrogate, which UTF-8 cannot encode."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _bad_string(value: Any, where: str) -> str | None:
    """The place (``payload.username``) of the first string in ``value`` that is not valid
    Unicode, keys included; None when all are (``value`` is depth-bounded by ``_parse``)."""
    if isinstance(value, str):
        return None if _is_unicode(value) else where
    if isinstance(value, dict):
        for key, item in value.items():
            if not _is_unicode(key):
                return f"a key of {where}" if where else "a key"
            name = key if len(key) <= QUOTED else f"{key[:QUOTED]}…"
            found = _bad_string(item, f"{where}.{name}" if where else name)
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _bad_string(item, f"{where}[{i}]")
            if found is not None:
                return found
    return None


def _check_strings(text: str, data: Any) -> None:
    # Only an escape can make a lone surrogate in text that arrived as UTF-8; a str handed
    # in directly may hold one too (then it is not ASCII).
    if not text.isascii() or _SURROGATE_ESCAPE.search(text):
        where = _bad_string(data, "")
        if where is not None:
            raise ProtocolError(
                "bad_message",
                f"{where}: a string with a lone surrogate (such as \\ud800) is not valid "
                "Unicode; send UTF-8 text",
            )


def decode(text: str | bytes) -> Message:
    """Decode one client frame; raise ``ProtocolError`` saying what is wrong."""
    if isinstance(text, bytes):
        raise ProtocolError("bad_message", "frames must be text (JSON), not binary")
    data = _parse(text)
    _check_strings(text, data)
    if not isinstance(data, dict):
        raise ProtocolError("bad_message", "a message must be a JSON object")
    kind = data.get("type")
    if not isinstance(kind, str):
        raise ProtocolError("bad_message", "a message needs a string 'type'")
    mid = data.get("id")
    if mid is not None and (
        isinstance(mid, bool)
        or not isinstance(mid, (str, int))
        or (isinstance(mid, str) and len(mid) > MAX_ID_LENGTH)
    ):
        raise ProtocolError("bad_message", f"'id' must be a string or number, got {shown(mid)}")
    decoder = inbound.DECODERS.get(kind)
    if decoder is None:
        known = ", ".join(sorted(inbound.DECODERS))
        raise ProtocolError("unknown_type", f"unknown message type {shown(kind)}; known: {known}")
    payload = data.get("payload", {})
    if not isinstance(payload, dict):
        raise ProtocolError("bad_message", f"{kind}: 'payload' must be an object")
    message: Message = decoder(inbound.Payload(payload, kind), mid)
    return message


def request_id(text: str | bytes) -> str | int | None:
    """The ``id`` of a frame, if one can be read (to answer even a malformed message);
    None unless it is a valid ``id`` that can be sent back."""
    if not isinstance(text, str):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return None
    try:
        data = _parse(text)
    except ProtocolError:
        return None
    mid = data.get("id") if isinstance(data, dict) else None
    if isinstance(mid, int) and not isinstance(mid, bool):
        return mid
    if isinstance(mid, str) and len(mid) <= MAX_ID_LENGTH and _is_unicode(mid):
        return mid
    return None


def encode(message: ServerMessage, reply_to: str | int | None = None, /) -> str:
    """The JSON text of a server message: compact, non-ASCII as is, keys in their order.

    ``encode(Joined(table, seat), reply_to)``: a message of ``server.messages.outbound``,
    so every message the server sends is one of its classes.

    Every update to every connection goes through here, so it is one of the server's hot
    paths: orjson writes the same text as ``json.dumps(ensure_ascii=False,
    separators=(",", ":"))`` about ten times faster. What orjson refuses (a string with a
    lone surrogate, an int beyond 64 bits, a key that is not a string) goes to ``json.dumps``
    as before, so the output is what it always was. Floats are written the same but for a
    magnitude between 1e-9 and 1e-4 (``0.00004`` where Python writes ``4e-05``: the same
    number; the protocol carries none so small) and NaN and the infinities, which are not
    JSON (null)."""
    if not isinstance(message, ServerMessage):
        raise TypeError(f"encode({message!r}): a message of server.messages.outbound")
    if reply_to is not None and not isinstance(reply_to, (str, int)):
        raise TypeError("encode(message, reply_to): a typed message carries its payload")
    return write(message.TYPE, message.payload(), reply_to)


def write(kind: str, payload: Mapping[str, Any], reply_to: str | int | None = None) -> str:
    """The envelope ``{"type", "payload", "reply_to"}`` as JSON text (see ``encode``)."""
    frame: dict[str, Any] = {"type": kind, "payload": payload}
    if reply_to is not None:
        frame["reply_to"] = reply_to
    try:
        return orjson.dumps(frame).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


def error(code: str, reason: str, reply_to: str | int | None = None) -> str:
    return encode(Error(code, reason), reply_to)


def refusal(exc: ServerError, reply_to: str | int | None = None) -> str:
    """The ``error`` that refuses a request with ``exc``, the table and match it names
    included."""
    return encode(Error(exc.code, exc.reason, table=exc.table, match=exc.match), reply_to)

"""Decoding client frames: every message type, and every way a frame can be wrong."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.actions import Action, ActionKind
from server import protocol
from server.errors import QUOTED, shown
from server.messages import outbound
from server.protocol import ProtocolError, decode


def frame(kind: str, payload: object = None, **extra: object) -> str:
    data: dict[str, object] = {"type": kind, **extra}
    if payload is not None:
        data["payload"] = payload
    return json.dumps(data)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (frame("hello", {"versions": [1]}, id=1), protocol.Hello(1, (1,), "")),
        (
            frame("register", {"username": "lin", "password": "p" * 8}, id="a"),
            protocol.Register("a", "lin", "p" * 8),
        ),
        (
            frame("login", {"username": "lin", "password": "secret12"}),
            protocol.Login(None, "lin", "secret12"),
        ),
        (frame("guest"), protocol.Guest(None)),
        (frame("resume", {"token": "abc"}), protocol.Resume(None, "abc")),
        (frame("logout"), protocol.Logout(None)),
        (frame("list_tables", {}), protocol.ListTables(None)),
        (
            frame("create_table", {"rules": "mcr", "turn_seconds": 10, "private": True}),
            protocol.CreateTable(None, "mcr", 10, True),
        ),
        (frame("create_table", {}), protocol.CreateTable(None, None, None, False)),
        (frame("join_table", {"table": "t1", "seat": 2}), protocol.JoinTable(None, "t1", 2, None)),
        (frame("add_bots", {"table": "t1"}), protocol.AddBots(None, "t1", "normal")),
        (
            frame("add_bots", {"table": "t1", "bot": "strong"}),
            protocol.AddBots(None, "t1", "strong"),
        ),
        # An empty name is a name, refused by the table as any unknown one; only an omitted
        # field gets the default.
        (frame("add_bots", {"table": "t1", "bot": ""}), protocol.AddBots(None, "t1", "")),
        (frame("create_table", {"rules": ""}), protocol.CreateTable(None, "", None, False)),
        (frame("queue_join", {"ladder": ""}), protocol.QueueJoin(None, "", False)),
        (frame("queue_join", {"casual": True}), protocol.QueueJoin(None, None, True)),
        (
            frame("queue_join", {"casual": True, "bot": "easy"}),
            protocol.QueueJoin(None, None, True, "easy"),
        ),
        (frame("leave_table", {"table": "t1"}), protocol.LeaveTable(None, "t1")),
        (frame("watch", {"table": "t1", "invite_code": "x"}), protocol.Watch(None, "t1", "x")),
        (
            frame("action", {"table": "t1", "seq": 4, "action": {"type": "discard", "tile": "5m"}}),
            protocol.Play(None, "t1", 4, Action(ActionKind.DISCARD, 4)),
        ),
        (
            frame("action", {"table": "t1", "seq": 0, "action": {"type": "pass"}}),
            protocol.Play(None, "t1", 0, Action(ActionKind.PASS)),
        ),
        (frame("sync", {"table": "t1"}), protocol.Sync(None, "t1")),
        (frame("ping"), protocol.Ping(None)),
    ],
)
def test_every_message_type_decodes(text: str, expected: protocol.Message) -> None:
    assert decode(text) == expected


def test_every_type_is_documented() -> None:
    with open("docs/protocol.md", encoding="utf-8") as doc:
        text = doc.read()
    for kind in protocol.MESSAGE_TYPES:
        assert f'"type": "{kind}"' in text, kind


@pytest.mark.parametrize(
    ("text", "code", "words"),
    [
        ("{not json", "bad_json", "not valid JSON"),
        ("[1, 2]", "bad_message", "JSON object"),
        ('{"payload": {}}', "bad_message", "'type'"),
        (frame("teleport"), "unknown_type", "'teleport'"),
        (frame("hello", {"versions": []}), "bad_message", "'versions'"),
        (frame("hello", {"versions": "1"}), "bad_message", "'versions'"),
        (frame("register", {"username": 5, "password": "x"}), "bad_message", "'username'"),
        (frame("join_table", {"table": "t1", "seat": 7}), "bad_message", "'seat'"),
        (frame("join_table", {"table": "t1", "seat": True}), "bad_message", "'seat'"),
        (frame("create_table", {"private": "yes"}), "bad_message", "'private'"),
        (
            frame("action", {"table": "t1", "seq": -1, "action": {"type": "pass"}}),
            "bad_message",
            "'seq'",
        ),
        (
            frame("action", {"table": "t1", "seq": 1, "action": {"type": "fly"}}),
            "bad_message",
            "unknown action type",
        ),
        (
            frame("action", {"table": "t1", "seq": 1, "action": {"type": "discard"}}),
            "bad_message",
            "needs a tile",
        ),
        (
            frame("action", {"table": "t1", "seq": 1, "action": {"type": "discard", "tile": "0m"}}),
            "bad_message",
            "bad tile",
        ),
        (frame("ping", [1]), "bad_message", "'payload' must be an object"),
        (frame("ping", None, id={"x": 1}), "bad_message", "'id'"),
        (frame("ping", None, id="x" * 65), "bad_message", "'id'"),
    ],
)
def test_bad_frames_get_a_code_and_a_reason(text: str, code: str, words: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        decode(text)
    assert caught.value.code == code
    assert words in caught.value.reason


def test_binary_frames_are_refused() -> None:
    with pytest.raises(ProtocolError) as caught:
        decode(b'{"type": "ping"}')
    assert caught.value.code == "bad_message"


def test_request_id_is_recovered_from_bad_messages() -> None:
    assert protocol.request_id(frame("teleport", None, id=9)) == 9
    assert protocol.request_id("{broken") is None
    assert protocol.request_id(frame("ping", None, id="x" * 65)) is None


def test_encode_and_error_shape() -> None:
    assert json.loads(protocol.encode(outbound.Pong(), 3)) == {
        "type": "pong",
        "payload": {},
        "reply_to": 3,
    }
    assert json.loads(protocol.error("stale", "old", None)) == {
        "type": "error",
        "payload": {"code": "stale", "reason": "old"},
    }


@pytest.mark.parametrize(
    "payload",
    [
        {"name": "东风 Ünïcode ✓", "tiles": "1m2m3m", "seats": [{"seat": 0, "ready": True}]},
        {"z": 1, "a": [None, False, 0.1, 1.5, -3, 2**63 - 1, 1e16, 1e-12, 25.0], "m": {"b": {}}},
        {"quote": 'say "hi"\\ \n\t\u0001 \u2028 /'},
        {"surrogate": "a\ud800b"},  # orjson refuses it: the stdlib writes it as before
        {"big": 2**70},  # beyond 64 bits: likewise
        {"keys": {1: "int key"}},  # likewise
    ],
)
def test_encode_writes_what_json_dumps_writes(payload: dict[str, object]) -> None:
    """The fast encoder changes no byte: compact, non-ASCII kept, keys in order (floats
    between 1e-9 and 1e-4 are the one documented exception, not sent by the server)."""
    message = {"type": "update", "payload": payload, "reply_to": "r1"}
    expected = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    assert protocol.encode(outbound.Update(payload), "r1") == expected


_JSON_TEXTS = [
    "1e400",  # beyond a double: inf, as json.loads reads it
    "-1e-400",
    "123456789012345678901234567890",  # beyond 64 bits: an int, not orjson's float
    "-9223372036854775809",
    "18446744073709551616",
    '"12345678901234567890"',  # (19 digits in a string: read alike, by the stdlib)
    "NaN",
    "[Infinity, -Infinity]",
    '"\\ud800"',  # a lone surrogate's escape (refused later, naming its field)
    '{"a": 1, "a": 2}',
    "\ufeff{}",  # a byte order mark: an error, in json.loads' words
    "{'a': 1}",
    '{"a": 1,}',
    "",
]


def same(a: object, b: object) -> bool:
    return repr(a) == repr(b)  # (NaN is not equal to itself; its repr is)


@pytest.mark.parametrize("text", _JSON_TEXTS)
def test_reading_a_frame_takes_and_refuses_what_json_loads_does(text: str) -> None:
    """The fast reader (orjson) changes nothing: what it refuses or may read otherwise
    (big integers, numbers beyond a double, NaN, lone surrogates) is read by the standard
    library as before, and an error is worded as before."""
    try:
        expected: object = json.loads(text)
    except ValueError as exc:
        with pytest.raises(ProtocolError) as refused:
            protocol._parse(text)
        assert refused.value.code == "bad_json"
        assert refused.value.reason == f"not valid JSON: {exc}"
    else:
        assert same(protocol._parse(text), expected)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
        max_leaves=12,
    ),
    st.booleans(),
)
def test_any_json_value_reads_as_json_loads_reads_it(value: object, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    if protocol._depth_over(text, protocol.MAX_DEPTH):
        return
    assert same(protocol._parse(text), json.loads(text))


# ------------------------------------------- nesting and invalid Unicode ---


def nested(depth: int, leaf: str = "0") -> str:
    """``depth`` arrays and objects inside one another, alternating."""
    text = leaf
    for level in range(depth):
        text = f"[{text}]" if level % 2 else f'{{"k": {text}}}'
    return text


@pytest.mark.parametrize("depth", [protocol.MAX_DEPTH + 1, 100, 2000])
@pytest.mark.parametrize("where", ["payload", "id", "top"])
def test_deep_nesting_is_a_bad_message_not_a_crash(depth: int, where: str) -> None:
    inner = nested(depth - 1)  # the payload object is one level already
    text = {
        "payload": f'{{"type": "ping", "id": 1, "payload": {inner}}}',
        "id": f'{{"type": "ping", "id": {inner}}}',
        "top": "[" * depth + "]" * depth,
    }[where]
    with pytest.raises(ProtocolError) as caught:
        decode(text)
    assert caught.value.code == "bad_message"
    assert str(protocol.MAX_DEPTH) in caught.value.reason
    assert protocol.request_id(text) is None  # and answering it does not crash either


def test_nesting_up_to_the_bound_is_only_judged_by_its_fields() -> None:
    # Within the bound the frame is decoded as usual (an unknown payload key is ignored)...
    inner = nested(protocol.MAX_DEPTH - 2)
    text = f'{{"type": "ping", "id": 1, "payload": {{"x": {inner}}}}}'
    assert decode(text) == protocol.Ping(1)
    # ... and brackets inside strings are not nesting.
    deep_looking = json.dumps({"type": "ping", "id": "[[[[", "payload": {"x": "[{" * 500}})
    assert decode(deep_looking) == protocol.Ping("[[[[")


LONE = "\\ud800"  # as it arrives: a JSON escape of a lone (high) surrogate


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (f'{{"type": "ping", "id": "a{LONE}"}}', "id"),
        (f'{{"type": "ping", "id": 1, "payload": {{"x": "{LONE}"}}}}', "payload.x"),
        (f'{{"type": "ping", "id": 1, "payload": {{"{LONE}": 1}}}}', "a key of payload"),
        (f'{{"type": "ping", "{LONE}": 1}}', "a key"),
        (f'{{"type": "p{LONE}ing"}}', "type"),
        (
            f'{{"type": "login", "payload": {{"username": "lin{LONE}", "password": "12345678"}}}}',
            "payload.username",
        ),
        (
            '{"type": "register", "payload": {"username": "lin", "password": "\\udfff123456"}}',
            "payload.password",
        ),
        (f'{{"type": "resume", "payload": {{"token": "{LONE}"}}}}', "payload.token"),
        (
            f'{{"type": "hello", "payload": {{"versions": [1], "client": "{LONE}"}}}}',
            "payload.client",
        ),
        (f'{{"type": "join_table", "payload": {{"table": "t{LONE}"}}}}', "payload.table"),
        (
            f'{{"type": "action", "payload": {{"table": "t1", "seq": 1, '
            f'"action": {{"type": "discard", "tile": "5m{LONE}"}}}}}}',
            "payload.action.tile",
        ),
        (f'{{"type": "ping", "payload": {{"x": [1, ["{LONE}"]]}}}}', "payload.x[1][0]"),
    ],
)
def test_strings_that_are_not_unicode_are_refused_naming_the_field(text: str, field: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        decode(text)
    assert caught.value.code == "bad_message"
    assert caught.value.reason.startswith(f"{field}:"), caught.value.reason
    caught.value.reason.encode("utf-8")  # the reason itself can be sent
    echoed = protocol.request_id(text)
    assert echoed is None or isinstance(echoed, int) or echoed.encode("utf-8")


def test_a_raw_lone_surrogate_in_a_str_is_refused_too() -> None:
    with pytest.raises(ProtocolError) as caught:
        decode('{"type": "ping", "id": "a\ud800"}')
    assert caught.value.code == "bad_message" and "id" in caught.value.reason
    assert protocol.request_id('{"type": "ping", "id": "a\ud800"}') is None


def test_valid_unicode_and_escaped_backslashes_pass() -> None:
    assert decode('{"type": "ping", "id": "\\\\ud800"}') == protocol.Ping("\\ud800")
    assert decode('{"type": "ping", "id": "\\ud83c\\udc04"}') == protocol.Ping("🀄")
    cjk = json.dumps({"type": "ping", "id": "中"}, ensure_ascii=False)
    assert decode(cjk) == protocol.Ping("中")


def test_an_echoed_id_is_always_encodable() -> None:
    for text in (f'{{"type": "teleport", "id": "{LONE}"}}', f'{{"type": "ping", "id": "x{LONE}"}}'):
        assert protocol.request_id(text) is None
    assert protocol.request_id(f'{{"type": "teleport", "id": "ok", "payload": "{LONE}"}}') == "ok"


def test_an_error_quotes_a_long_input_by_its_start_and_its_length() -> None:
    assert shown("lin") == "'lin'"
    assert shown("n" * QUOTED) == repr("n" * QUOTED)
    assert shown("n" * 3000) == f"'{'n' * QUOTED}…' (3000 characters)"
    assert shown("\u202e" * 50).startswith("'\\u202e")  # format characters as escapes
    assert shown(list(range(1000))).endswith("… (1000 items)")
    assert len(shown(list(range(1000)))) < QUOTED + 20
    assert shown(7) == "7"
    with pytest.raises(ProtocolError) as caught:
        decode(frame("join_table", {"table": "t" * 3000}))
    assert caught.value.reason == (
        f"join_table: 'table' must be a string of at most 32 characters, got {shown('t' * 3000)}"
    )

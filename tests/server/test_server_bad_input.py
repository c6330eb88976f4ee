"""Bad input against the real server: in-process on 127.0.0.1 (the ``app`` and
``start_server`` fixtures of conftest, a SQLite file under ``tmp_path``), over real websockets.

Every refusal must come as an ``error`` with the right code (and the ``reply_to`` of its
request when it had an ``id``); the connection stays open (a following ``ping`` gets its
``pong``) unless the protocol says it closes; the table plays on; and nothing stored changes
for a refused action (the ``match_actions`` log is counted before and after). The clients here
are raw websockets (``Wire``), so that they can send anything at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from engine.actions import Action
from engine.bots import Bot, make_bot
from server.app import App
from server.cli.replay import read_log
from server.client import fallback_action, view_from_dict
from server.config import LimitsSection
from server.connection import RATE_STRIKES
from server.errors import QUOTED

Frame = dict[str, Any]
TIMEOUT = 10.0


class Wire:
    """A raw client: sends any frame, keeps every frame received (parsed) in order."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[Frame] = []
        self.ids = itertools.count(1)
        self._changed = asyncio.Event()
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, url: str, *, hello: bool = True, version: int = 1) -> Wire:
        wire = cls(await connect(url, compression=None, max_size=2**22, open_timeout=TIMEOUT))
        if hello:
            welcome = await wire.request(
                "hello", {"versions": [version], "client": "bad-input-test"}
            )
            assert welcome["type"] == "welcome" and welcome["payload"]["version"] == version
        return wire

    async def _read(self) -> None:
        try:
            async for text in self.ws:
                frame = json.loads(text)  # the server only ever sends JSON objects
                assert isinstance(frame, dict) and isinstance(frame.get("type"), str), frame
                self.frames.append(frame)
                self._wake()
        except ConnectionClosed:
            pass
        finally:
            self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    @property
    def close_code(self) -> int | None:
        return self.ws.close_code

    async def more(self, count: int, timeout: float = TIMEOUT) -> bool:
        """Wait until more than ``count`` frames came; False when the connection closed."""
        async with asyncio.timeout(timeout):
            while len(self.frames) <= count:
                if self.reader.done():
                    return False
                await self._changed.wait()
        return True

    async def wait(
        self, predicate: Callable[[Frame], bool], after: int = 0, timeout: float = TIMEOUT
    ) -> Frame:
        """The first frame from index ``after`` on for which ``predicate`` is true."""
        seen = after
        async with asyncio.timeout(timeout):
            while True:
                for frame in self.frames[seen:]:
                    if predicate(frame):
                        return frame
                seen = len(self.frames)
                if self.reader.done():
                    raise AssertionError(f"closed ({self.close_code}) before the awaited frame")
                await self._changed.wait()

    async def send(self, frame: Frame | list[Any] | str | bytes) -> int:
        """Send ``frame`` (JSON-encoded unless text or bytes); return the frame count before
        it, from which to look for its answer."""
        mark = len(self.frames)
        await self.ws.send(frame if isinstance(frame, (str, bytes)) else json.dumps(frame))
        return mark

    async def request(self, kind: str, payload: Any = None, timeout: float = TIMEOUT) -> Frame:
        """Send a request with a fresh id; return the frame that answers it (``reply_to``)."""
        mid = f"q{next(self.ids)}"
        message = {"type": kind, "id": mid}
        if payload is not None:
            message["payload"] = payload
        mark = await self.send(message)
        return await self.wait(lambda f: f.get("reply_to") == mid, mark, timeout)

    async def refused(self, kind: str, payload: Any, code: str) -> str:
        """Send a request that must be refused with ``code``; return the reason."""
        reply = await self.request(kind, payload)
        assert reply["type"] == "error", (kind, payload, reply)
        assert reply["payload"]["code"] == code, (kind, payload, reply)
        reason: str = reply["payload"]["reason"]
        assert reason
        return reason

    async def answered(self, kind: str, payload: Any, reply_type: str) -> Frame:
        reply = await self.request(kind, payload)
        assert reply["type"] == reply_type, (kind, payload, reply)
        return reply

    async def alive(self) -> None:
        """A ``ping`` still gets its ``pong``: the connection is open and served."""
        reply = await self.request("ping", {})
        assert reply["type"] == "pong", reply

    async def closed(self, timeout: float = TIMEOUT) -> int | None:
        """Wait for the server to close the connection; its close code."""
        await asyncio.wait_for(asyncio.shield(self.reader), timeout)
        return self.close_code

    async def close(self) -> None:
        await self.ws.close()
        await asyncio.wait_for(asyncio.shield(self.reader), TIMEOUT)

    def errors(self, after: int = 0) -> list[Frame]:
        return [f["payload"] for f in self.frames[after:] if f["type"] == "error"]


def url_of(app: App) -> str:
    return f"ws://127.0.0.1:{app.port}/ws"


def is_update(table: str, predicate: Callable[[Frame], bool] = lambda p: True) -> Any:
    def check(frame: Frame) -> bool:
        payload = frame["payload"]
        return frame["type"] == "update" and payload["table"] == table and predicate(payload)

    return check


def legal_of(payload: Frame) -> list[Frame]:
    legal: list[Frame] = (payload.get("view") or {}).get("legal") or []
    return legal


def has_legal(payload: Frame) -> bool:
    return bool(legal_of(payload))


async def guest(wire: Wire) -> str:
    reply = await wire.answered("guest", {}, "session")
    username: str = reply["payload"]["username"]
    return username


async def add_bots(wire: Wire, table: str, bot: str = "fast") -> Frame:
    """``add_bots`` is answered by the ``table`` broadcast (no ``reply_to``): return it."""
    mark = await wire.send(
        {"type": "add_bots", "id": "bots", "payload": {"table": table, "bot": bot}}
    )
    reply = await wire.wait(
        lambda f: (
            f.get("reply_to") == "bots" or (f["type"] == "table" and f["payload"]["table"] == table)
        ),
        mark,
    )
    assert reply["type"] == "table" and all(reply["payload"]["seats"]), reply
    return reply


async def play_out(
    wire: Wire,
    table: str,
    bot: Bot,
    *,
    pace: float = 0.0,
    until: Callable[[Frame], bool] | None = None,
) -> Frame | None:
    """Play ``table`` with ``bot`` on the wire views; return the ``match_end`` payload (or the
    update for which ``until`` is true). Each update asking us to decide is answered once;
    a refusal of one of these actions must be a harmless one (``stale``: the current update
    follows)."""
    cursor, acted = 0, None
    latest: Frame | None = None
    ours: set[str] = set()
    payload: Frame
    while True:
        frames, cursor = wire.frames[cursor:], len(wire.frames)
        for frame in frames:
            payload = frame["payload"]
            if frame["type"] == "error" and frame.get("reply_to") in ours:
                assert payload["code"] == "stale", f"the bot's action was refused: {payload}"
            if payload.get("table") != table:
                continue
            if frame["type"] == "match_end":
                return payload
            if frame["type"] == "update":
                latest = payload
                if until is not None and until(payload):
                    return payload
        if latest is not None and latest["seq"] != acted and legal_of(latest):
            acted = latest["seq"]
            action = bot.choose(view_from_dict(latest["view"]))
            if pace:
                await asyncio.sleep(pace)
            mid = f"bot{acted}"
            ours.add(mid)
            message = {"table": table, "seq": acted, "action": action.to_dict()}
            await wire.send({"type": "action", "id": mid, "payload": message})
        if not await wire.more(cursor, timeout=30):
            return None


# ------------------------------------------------------- malformed frames ---


@pytest.mark.asyncio
async def test_malformed_frames_get_errors_and_the_connection_stays_open(app: App) -> None:
    wire = await Wire.open(url_of(app))
    cases: list[tuple[str | bytes, str, str | int | None]] = [
        ('{"type": "ping", "id": 1', "bad_json", None),  # cut short
        ("not json at all", "bad_json", None),
        ("", "bad_json", None),
        ('[{"type": "ping", "id": 2}]', "bad_message", None),  # an array
        ('"ping"', "bad_message", None),
        ("42", "bad_message", None),
        ("null", "bad_message", None),
        ('{"id": "m3", "payload": {}}', "bad_message", "m3"),  # no type
        ('{"type": null, "id": "m4"}', "bad_message", "m4"),
        ('{"type": 7, "id": "m5"}', "bad_message", "m5"),
        ('{"type": ["ping"], "id": "m6"}', "bad_message", "m6"),
        ('{"type": "teleport", "id": "m7", "payload": {}}', "unknown_type", "m7"),
        ('{"type": "PING", "id": 8}', "unknown_type", 8),
        ('{"type": "ping", "id": "m9", "payload": [1]}', "bad_message", "m9"),
        ('{"type": "ping", "id": "m10", "payload": "x"}', "bad_message", "m10"),
        ('{"type": "ping", "id": {"a": 1}}', "bad_message", None),  # an id of the wrong type
        ('{"type": "ping", "id": true}', "bad_message", None),
        ('{"type": "ping", "id": 1.5}', "bad_message", None),
        (json.dumps({"type": "ping", "id": "x" * 65}), "bad_message", None),  # an id too long
        (b'{"type": "ping", "id": "m11"}', "bad_message", "m11"),  # a binary frame
        (b"\x00\xff\xfe binary", "bad_message", None),
    ]
    for frame, code, reply_to in cases:
        mark = await wire.send(frame)
        answer = await wire.wait(lambda f: True, mark)
        assert answer["type"] == "error", (frame, answer)
        assert answer["payload"]["code"] == code, (frame, answer)
        assert answer["payload"]["reason"], (frame, answer)
        assert answer.get("reply_to") == reply_to, (frame, answer)
        await wire.alive()
    # An id of 64 characters is still echoed.
    mark = await wire.send({"type": "ping", "id": "y" * 64})
    assert (await wire.wait(lambda f: True, mark)) == {
        "type": "pong",
        "payload": {},
        "reply_to": "y" * 64,
    }
    await wire.close()


WRONG_FIELDS: list[tuple[str, dict[str, Any], str]] = [
    # (type, payload, the field the reason must name)
    ("hello", {"versions": "1"}, "versions"),
    ("hello", {"versions": []}, "versions"),
    ("hello", {"versions": [True]}, "versions"),
    ("hello", {"versions": [1.0]}, "versions"),
    ("hello", {"versions": [1], "client": 5}, "client"),
    ("register", {"username": 5, "password": "long enough pw"}, "username"),
    ("register", {"username": "lin", "password": None}, "password"),
    ("register", {"username": "lin"}, "password"),
    ("login", {"username": ["lin"], "password": "long enough pw"}, "username"),
    ("login", {"username": "lin", "password": 12345678}, "password"),
    ("resume", {"token": 5}, "token"),
    ("resume", {}, "token"),
    ("resume", {"token": "t" * 129}, "token"),
    ("create_table", {"rules": 5}, "rules"),
    ("create_table", {"turn_seconds": "15"}, "turn_seconds"),
    ("create_table", {"turn_seconds": True}, "turn_seconds"),
    ("create_table", {"turn_seconds": 0}, "turn_seconds"),
    ("create_table", {"turn_seconds": 2.5}, "turn_seconds"),
    ("create_table", {"private": "yes"}, "private"),
    ("create_table", {"private": 1}, "private"),
    ("join_table", {}, "table"),
    ("join_table", {"table": 5}, "table"),
    ("join_table", {"table": "t1", "seat": 4}, "seat"),
    ("join_table", {"table": "t1", "seat": -1}, "seat"),
    ("join_table", {"table": "t1", "seat": "0"}, "seat"),
    ("join_table", {"table": "t1", "seat": False}, "seat"),
    ("join_table", {"table": "t1", "invite_code": 123}, "invite_code"),
    ("add_bots", {"bot": "fast"}, "table"),
    ("add_bots", {"table": "t1", "bot": 3}, "bot"),
    ("leave_table", {"table": None}, "table"),
    ("watch", {"table": {"id": "t1"}}, "table"),
    ("watch", {"table": "t1", "invite_code": ["x"]}, "invite_code"),
    ("sync", {"table": 1}, "table"),
    ("action", {"seq": 1, "action": {"type": "pass"}}, "table"),
    ("action", {"table": "t1", "action": {"type": "pass"}}, "seq"),
    ("action", {"table": "t1", "seq": "1", "action": {"type": "pass"}}, "seq"),
    ("action", {"table": "t1", "seq": -1, "action": {"type": "pass"}}, "seq"),
    ("action", {"table": "t1", "seq": True, "action": {"type": "pass"}}, "seq"),
    ("action", {"table": "t1", "seq": 1}, "action"),
    ("action", {"table": "t1", "seq": 1, "action": "pass"}, "action"),
    ("action", {"table": "t1", "seq": 1, "action": {"type": "fly"}}, "action"),
    ("action", {"table": "t1", "seq": 1, "action": {"type": "discard"}}, "action"),
    ("action", {"table": "t1", "seq": 1, "action": {"type": "discard", "tile": 5}}, "action"),
    ("action", {"table": "t1", "seq": 1, "action": {"type": "discard", "tile": "0m"}}, "action"),
    ("action", {"table": "t1", "seq": 1, "action": {"type": "discard", "tile": "55m"}}, "action"),
    ("action", {"table": "t1", "seq": 1, "action": {"type": "discard", "tile": "f9"}}, "action"),
    ("action", {"table": "t1", "seq": 1, "action": {"type": "chow", "tile": "f1"}}, "action"),
    ("action", {"table": "t1", "seq": 1, "action": {"type": "chow", "tile": "Q"}}, "action"),
    (
        "action",
        {"table": "t1", "seq": 1, "action": {"type": "pass", "seat": 2}},  # no acting for others
        "action",
    ),
]


@pytest.mark.asyncio
async def test_each_field_of_the_wrong_type_is_named(app: App) -> None:
    wire = await Wire.open(url_of(app))
    await guest(wire)
    for kind, payload, field in WRONG_FIELDS:
        reason = await wire.refused(kind, payload, "bad_message")
        assert field in reason, (kind, payload, reason)
        await wire.alive()
    # Values of the right type that the server's settings refuse.
    for payload in ({"turn_seconds": 3601}, {"turn_seconds": 1000}, {"rules": "riichi"}):
        await wire.refused("create_table", payload, "bad_message")
    table = (await wire.answered("create_table", {}, "table_created"))["payload"]["table"]
    await wire.answered("join_table", {"table": table}, "joined")
    reason = await wire.refused("add_bots", {"table": table, "bot": "genius"}, "bad_message")
    assert "genius" in reason
    await wire.alive()
    assert app.lobby is not None and app.lobby.get(table).state == "waiting"
    # A number past what the database holds (a 32-bit signed integer) is refused with the
    # range it must be in, whatever the field.
    for kind, payload, field in (
        ("action", {"table": table, "seq": 2**31, "action": {"type": "pass"}}, "seq"),
        ("next_hand", {"table": table, "hand_no": 2**31}, "hand_no"),
    ):
        reason = await wire.refused(kind, payload, "bad_message")
        assert field in reason and f"..{2**31 - 1}" in reason, reason
    await wire.close()


# ------------------------------------------------------ connecting, accounts ---


@pytest.mark.asyncio
async def test_messages_before_hello_get_hello_first(app: App) -> None:
    wire = await Wire.open(url_of(app), hello=False)
    for kind, payload in (
        ("ping", {}),
        ("guest", {}),
        ("login", {"username": "nobody", "password": "whatever123"}),
        ("list_tables", {}),
        ("join_table", {"table": "t1"}),
    ):
        await wire.refused(kind, payload, "hello_first")
    reply = await wire.answered("hello", {"versions": [1]}, "welcome")
    assert reply["payload"]["version"] == 1
    await wire.alive()
    await wire.close()


@pytest.mark.parametrize("versions", [[4], [0, 7], [99, 1000]])
@pytest.mark.asyncio
async def test_unsupported_versions_get_an_error_then_the_close(
    app: App, versions: list[int]
) -> None:
    wire = await Wire.open(url_of(app), hello=False)
    await wire.refused("hello", {"versions": versions}, "unsupported_version")
    assert await wire.closed() is not None
    with pytest.raises(ConnectionClosed):
        await wire.send({"type": "ping", "id": 1})


@pytest.mark.asyncio
async def test_the_highest_common_version_is_chosen(app: App) -> None:
    wire = await Wire.open(url_of(app), hello=False)
    reply = await wire.answered("hello", {"versions": [4, 1, 3, 2]}, "welcome")
    assert reply["payload"]["version"] == 3
    await wire.alive()
    await wire.close()
    wire = await Wire.open(url_of(app), hello=False)
    reply = await wire.answered("hello", {"versions": [4, 1, 2]}, "welcome")
    assert reply["payload"]["version"] == 2
    await wire.alive()
    await wire.close()


@pytest.mark.asyncio
async def test_a_second_hello_is_refused_and_the_version_kept(app: App) -> None:
    """The version ``hello`` chose holds for the connection's life: a second ``hello`` (even
    one that would choose another) is refused with ``bad_message`` naming the version kept,
    and the connection goes on in it."""
    wire = await Wire.open(url_of(app), hello=False)
    reply = await wire.answered("hello", {"versions": [3]}, "welcome")
    assert reply["payload"]["version"] == 3
    for versions in ([1], [3], [4]):
        reason = await wire.refused("hello", {"versions": versions}, "bad_message")
        assert "protocol version 3" in reason, reason
    await wire.alive()
    assert wire.close_code is None
    await wire.close()


TABLE_MESSAGES: list[tuple[str, dict[str, Any]]] = [
    ("create_table", {}),
    ("join_table", {"table": "t1"}),
    ("add_bots", {"table": "t1"}),
    ("action", {"table": "t1", "seq": 1, "action": {"type": "pass"}}),
]
# What a visitor may ask without a session: the listing, and watching (a spectator's view).
VISITOR_MESSAGES: list[tuple[str, dict[str, Any], str]] = [
    ("watch", {"table": "t1"}, "no_such_table"),
    ("sync", {"table": "t1"}, "no_such_table"),
    ("leave_table", {"table": "t1"}, "no_such_table"),
]


@pytest.mark.asyncio
async def test_table_messages_need_an_authenticated_connection(app: App) -> None:
    wire = await Wire.open(url_of(app))
    for kind, payload in TABLE_MESSAGES:
        await wire.refused(kind, payload, "not_authenticated")
        await wire.alive()
    # Logged in, then out: unauthenticated again.
    await guest(wire)
    await wire.answered("create_table", {}, "table_created")
    await wire.answered("logout", {}, "logged_out")
    for kind, payload in TABLE_MESSAGES:
        await wire.refused(kind, payload, "not_authenticated")
    await wire.alive()
    await wire.close()


@pytest.mark.asyncio
async def test_a_visitor_lists_and_watches_without_a_session(app: App) -> None:
    wire = await Wire.open(url_of(app))
    await wire.answered("list_tables", {}, "tables")
    await wire.answered("subscribe_lobby", {}, "tables")
    for kind, payload, code in VISITOR_MESSAGES:
        await wire.refused(kind, payload, code)  # asked, not refused for want of a session
    await wire.alive()
    await wire.close()


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("kind", "payload"),
    [
        ("login", {"username": "nobody_here", "password": "correct horse"}),
        ("resume", {"token": "not-a-token"}),
    ],
    ids=["login", "resume"],
)
async def test_a_refused_login_or_resume_leaves_the_connection_at_its_table(
    app: App, kind: str, payload: Frame
) -> None:
    """Authenticating again leaves the tables of whoever the connection was once it succeeds
    (docs/protocol.md, "Accounts"): a refused attempt mid-hand used to leave them all the
    same, the connection still that player but sent nothing more, its turns the stand-in's."""
    wire = await Wire.open(url_of(app))
    try:
        await guest(wire)
        created = await wire.answered("create_table", {"turn_seconds": 60}, "table_created")
        table = created["payload"]["table"]
        await wire.answered("join_table", {"table": table, "seat": 0}, "joined")
        await add_bots(wire, table)
        turn = await wire.wait(is_update(table, has_legal))
        await wire.refused(kind, payload, "auth_failed")
        # Still the seat's player, not away: once an away player's seat would have been
        # played for them, its own action is taken, and its update comes.
        await asyncio.sleep(app.config.timers.disconnected_seconds + 1.0)
        seq = turn["payload"]["seq"]
        action = legal_of(turn["payload"])[0]
        mark = await wire.send(
            {"type": "action", "payload": {"table": table, "seq": seq, "action": action}}
        )
        after = await wire.wait(lambda f: is_update(table)(f) or f["type"] == "error", mark)
        assert after["type"] == "update" and after["payload"]["seq"] > seq, after
    finally:
        await wire.close()


@pytest.mark.asyncio
async def test_account_refusals(app: App) -> None:
    wire = await Wire.open(url_of(app))
    session = await wire.answered(
        "register", {"username": "Lin_1", "password": "correct horse"}, "session"
    )
    token = session["payload"]["token"]
    other = await Wire.open(url_of(app))
    refusals: list[tuple[str, dict[str, Any], str]] = [
        ("register", {"username": "Lin_1", "password": "another password"}, "username_taken"),
        ("register", {"username": "lin_1", "password": "another password"}, "username_taken"),
        ("register", {"username": "ab", "password": "long enough"}, "bad_username"),
        ("register", {"username": "x" * 21, "password": "long enough"}, "bad_username"),
        ("register", {"username": "has space", "password": "long enough"}, "bad_username"),
        ("register", {"username": "ünïcode", "password": "long enough"}, "bad_username"),
        ("register", {"username": "", "password": "long enough"}, "bad_username"),
        ("register", {"username": "guest-1234", "password": "long enough"}, "bad_username"),
        ("register", {"username": "newname", "password": "short"}, "weak_password"),
        ("register", {"username": "newname", "password": ""}, "weak_password"),
        ("login", {"username": "Lin_1", "password": "wrong horse"}, "auth_failed"),
        ("login", {"username": "Lin_1", "password": ""}, "auth_failed"),
        ("login", {"username": "nobody_here", "password": "correct horse"}, "auth_failed"),
        ("login", {"username": "x", "password": "correct horse"}, "auth_failed"),
        ("resume", {"token": "not-a-token"}, "auth_failed"),
        ("resume", {"token": ""}, "auth_failed"),
        ("resume", {"token": token[:-1] + ("A" if token[-1] != "A" else "B")}, "auth_failed"),
    ]
    for kind, payload, code in refusals:
        await other.refused(kind, payload, code)
        await other.alive()
    # None of it logged the other connection in.
    await other.refused("create_table", {}, "not_authenticated")
    # The real token works; once revoked (logout) it does not.
    await other.answered("resume", {"token": token}, "session")
    await wire.answered("logout", {}, "logged_out")
    fresh = await Wire.open(url_of(app))
    await fresh.refused("resume", {"token": token}, "auth_failed")
    await fresh.answered("login", {"username": "lin_1", "password": "correct horse"}, "session")
    await fresh.alive()
    for w in (wire, other, fresh):
        await w.close()


@pytest.mark.asyncio
async def test_an_oversized_frame_closes_the_connection_with_1009(app: App) -> None:
    limit = app.config.limits.max_message_bytes
    wire = await Wire.open(url_of(app))

    # At the limit: served (unknown payload keys are ignored).
    def ping(pad: str) -> str:
        return json.dumps({"type": "ping", "id": "big", "payload": {"pad": pad}})

    frame = ping("x" * (limit - len(ping(""))))
    assert len(frame.encode()) == limit
    mark = await wire.send(frame)
    assert (await wire.wait(lambda f: True, mark))["type"] == "pong"
    # One byte over: closed with 1009 (message too big), the server goes on.
    await wire.send(ping("x" * (limit - len(ping("")) + 1)))
    assert await wire.closed() == 1009
    assert not wire.errors()
    again = await Wire.open(url_of(app))
    await again.alive()
    # Before hello too.
    early = await Wire.open(url_of(app), hello=False)
    await early.send("x" * (limit + 1))
    assert await early.closed() == 1009
    await again.close()


# ------------------------------------------------------------------ lobby ---


@pytest.mark.asyncio
async def test_lobby_refusals(app: App) -> None:
    url = url_of(app)
    alice, bob, carol = [await Wire.open(url) for _ in range(3)]
    for wire in (alice, bob, carol):
        await guest(wire)

    # Non-existent tables.
    for kind, payload in (
        ("join_table", {"table": "t-none"}),
        ("watch", {"table": "t-none"}),
        ("add_bots", {"table": "t-none"}),
        ("leave_table", {"table": "t-none"}),
        ("sync", {"table": "t-none"}),
        ("action", {"table": "t-none", "seq": 1, "action": {"type": "pass"}}),
    ):
        await alice.refused(kind, payload, "no_such_table")
        await alice.alive()

    # A refusal by the table itself (test_table_task.py has them all) leaves the
    # connection open too.
    table = (await alice.answered("create_table", {}, "table_created"))["payload"]["table"]
    assert (await alice.answered("join_table", {"table": table, "seat": 2}, "joined"))[
        "payload"
    ] == {"table": table, "seat": 2}
    await bob.refused("join_table", {"table": table, "seat": 2}, "seat_taken")
    await bob.alive()

    # A private table: its code comes in ``table_created``; it is not listed.
    created = (await carol.answered("create_table", {"private": True}, "table_created"))["payload"]
    private, code = created["table"], created["invite_code"]
    assert isinstance(code, str) and code
    listed = (await bob.answered("list_tables", {}, "tables"))["payload"]["tables"]
    assert private not in [t["table"] for t in listed]
    await bob.refused("join_table", {"table": private, "invite_code": code + "x"}, "wrong_invite")
    await bob.alive()
    await bob.answered("join_table", {"table": private, "invite_code": code}, "joined")
    for wire in (alice, bob, carol):
        await wire.close()


# ------------------------------------------------------------------- play ---


async def stored_actions(app: App, match_id: int) -> int:
    assert app.store is not None
    return len(await app.store.match_actions(match_id))


@pytest.mark.asyncio
async def test_refused_actions_change_nothing_and_the_match_still_finishes(app: App) -> None:
    url = url_of(app)
    players = [await Wire.open(url) for _ in range(4)]
    spectator, outsider = await Wire.open(url), await Wire.open(url)
    for wire in (*players, spectator, outsider):
        await guest(wire)
    # A long turn: the refusals below must not race the server playing for a slow seat.
    created = await players[0].answered("create_table", {"turn_seconds": 20}, "table_created")
    table = created["payload"]["table"]
    elsewhere = (await outsider.answered("create_table", {}, "table_created"))["payload"]["table"]
    await outsider.answered("join_table", {"table": elsewhere}, "joined")
    await spectator.answered("watch", {"table": table}, "watching")
    for seat, wire in enumerate(players):
        await wire.answered("join_table", {"table": table, "seat": seat}, "joined")

    # Hand 1: player 0 deals and is to discard; nobody else may do anything.
    first = await players[0].wait(is_update(table, has_legal))
    payload = first["payload"]
    seq, view = payload["seq"], payload["view"]
    assert payload["hand_no"] == 1 and view["you"] == 0 and view["current"] == 0
    assert view["phase"] == "turn"
    assert app.lobby is not None
    match_id = app.lobby.get(table).match_id
    assert match_id is not None
    drawn = view["drawn"]
    assert await stored_actions(app, match_id) == 0

    def action(a: dict[str, Any], at: int = seq, where: str = table) -> dict[str, Any]:
        return {"table": where, "seq": at, "action": a}

    await players[1].wait(is_update(table, lambda p: p["seq"] == seq))
    # (Every refusal of the table itself is in test_table_task.py; here, what the wire adds.)
    refusals: list[tuple[Wire, dict[str, Any], str]] = [
        # Pretending to be player 0: there is no seat field.
        (players[1], {**action({"type": "discard", "tile": drawn}), "seat": 0}, "not_your_turn"),
        (players[1], {**action({"type": "pass"}), "player": 0}, "not_your_turn"),
        # A refusal of the table's: the connection stays open.
        (players[0], action({"type": "discard", "tile": drawn}, at=seq - 1), "stale"),
        (spectator, action({"type": "discard", "tile": drawn}), "not_seated"),
        (players[0], action({"type": "discard", "tile": drawn}, where="t-none"), "no_such_table"),
    ]
    for wire, request, code in refusals:
        mark = len(wire.frames)
        await wire.refused("action", request, code)
        if code == "stale":
            current = await wire.wait(is_update(table), mark)
            assert current["payload"]["seq"] == seq and current["payload"].get("full")
            assert current["payload"]["view"] == view
        await wire.alive()
        assert await stored_actions(app, match_id) == 0, (request, code)
    assert app.lobby.get(table).seq == seq
    mark = await players[0].send({"type": "sync", "id": "s", "payload": {"table": table}})
    current = await players[0].wait(is_update(table), mark)  # answered by a full update
    assert current["payload"].get("full")
    assert current["payload"]["seq"] == seq and current["payload"]["view"] == view

    # An accepted action, then the very same frame again: stale, and harmless.
    frame = {"type": "action", "id": "dup", "payload": action({"type": "discard", "tile": drawn})}
    mark = await players[0].send(frame)
    await players[0].wait(is_update(table, lambda p: p["seq"] > seq), mark)
    assert await stored_actions(app, match_id) == 1
    mark = await players[0].send(frame)
    dup = await players[0].wait(lambda f: f.get("reply_to") == "dup", mark)
    assert dup["type"] == "error" and dup["payload"]["code"] == "stale", dup
    assert await stored_actions(app, match_id) == 1
    assert not [e for e in players[0].errors(mark) if e["code"] != "stale"]

    # The table plays on: the four finish the match, the spectator sees its end.
    ends = await asyncio.wait_for(
        asyncio.gather(
            *(play_out(w, table, make_bot("fast", seed=i)) for i, w in enumerate(players))
        ),
        timeout=45,
    )
    assert all(end is not None and end["match"] == match_id for end in ends)
    end = ends[0]
    assert end is not None and all(e == end for e in ends)
    watched = await spectator.wait(lambda f: f["type"] == "match_end")
    assert watched["payload"] == end

    # What is stored is exactly what was accepted: it replays to the same match.
    assert app.store is not None
    stored = await app.store.match_actions(match_id)
    assert stored[0] == (1, 1, 0, {"type": "discard", "tile": drawn}, False)
    log = await app.store.match_log(match_id)
    assert log is not None
    (logged,) = read_log([json.dumps(line) for line in log])
    replayed = logged.replay()
    assert replayed.scores == end["scores"] and len(replayed.records) == 16
    assert len(replayed.log) == len(stored)

    # After the match: nothing to act on, and the connections are still served.
    await players[0].refused("action", action({"type": "pass"}, at=0), "hand_over")
    for wire in (*players, spectator, outsider):
        await wire.alive()
        await wire.close()


# ------------------------------------------------------------------ flood ---


@pytest.mark.parametrize("limited", [True, False])
@pytest.mark.asyncio
async def test_listings_on_request_are_limited_by_their_bytes_and_nothing_else_is(
    start_server: Any, limited: bool
) -> None:
    """``list_tables`` needs no login and its answer grows with the tables: a connection is
    sent listings on request up to ``listing_bytes_per_second`` (eight seconds' worth at
    once); a visitor asking again and again is then answered ``rate_limited`` with the
    seconds to wait, ``subscribe_lobby`` too (turned off all the same), while her other
    messages are answered as ever. (With the limit out of reach, every listing asked for is
    sent.)"""
    app: App = await start_server(
        limits={
            # Eight seconds' worth: 2,000 bytes, about one listing of three tables.
            "listing_bytes_per_second": 250 if limited else 1 << 30,
            "waiting_tables_per_address": 0,
        }
    )
    url = url_of(app)
    owner, visitor = await Wire.open(url), await Wire.open(url)
    try:
        await guest(owner)
        for _ in range(3):  # three public tables waiting: listed
            await owner.answered("create_table", {"turn_seconds": 30}, "table_created")
        first = await visitor.answered("subscribe_lobby", {"on": True}, "tables")
        assert len(first["payload"]["tables"]) == 3
        # At least as long as the text the server sent (its spacing may add to it).
        size = len(json.dumps(first, separators=(",", ":"), ensure_ascii=False).encode())
        assert 1000 < size < 2000, size  # (within the burst, with less than a listing left)
        mark = len(visitor.frames)
        for n in range(10):
            await visitor.send({"type": "list_tables", "id": f"l{n}", "payload": {}})
        await visitor.send({"type": "subscribe_lobby", "id": "s", "payload": {"on": False}})
        await visitor.alive()  # a ping is answered at once, listings refused or not
        answers = [f for f in visitor.frames[mark:] if f.get("reply_to") != "s"]
        subscribed = await visitor.wait(lambda f: f.get("reply_to") == "s", mark)
        listings = [f for f in answers if f["type"] == "tables"]
        refused = [f for f in answers if f["type"] == "error"]
        if limited:
            assert not listings and len(refused) == 10
            assert {f["payload"]["code"] for f in refused} == {"rate_limited"}
            assert all(f["payload"]["retry_after"] >= 1 for f in refused)
            assert subscribed["type"] == "error", subscribed
            assert subscribed["payload"]["code"] == "rate_limited"
            assert visitor.close_code is None  # refused, not disconnected
        else:
            assert len(listings) == 10 and not refused
            assert subscribed["type"] == "tables"
        # Turned off either way: the listing that answers it may be refused, not the change.
        assert app.lobby is not None and not app.lobby.feed.subscribers
    finally:
        await owner.close()
        await visitor.close()


def closed_at_the_last_strike(answers: list[Frame]) -> bool:
    """Whether ``answers`` (a flood's pongs and errors, in order) follow the rate limit's
    strikes to the close: each ``rate_limited`` a strike, each message within the limit
    wiping one out (docs/protocol.md), the connection closed at the ``RATE_STRIKES``-th
    and not before, its ``rate_limited`` the last answer."""
    strikes = 0
    for n, frame in enumerate(answers, 1):
        if frame["type"] == "error":
            strikes += 1
            if strikes == RATE_STRIKES:
                return n == len(answers)
        else:
            strikes = max(0, strikes - 1)
    return False


@pytest.mark.parametrize("flooder_role", ["watching", "seated"])
@pytest.mark.asyncio
async def test_a_flood_is_rate_limited_then_closed_and_the_table_plays_on(
    start_server: Any, flooder_role: str
) -> None:
    # The production rate limit (20 a second, bursts of 40).
    app: App = await start_server(limits=dataclasses.asdict(LimitsSection()))
    limits = app.config.limits
    url = url_of(app)
    victim, flooder, watcher = [await Wire.open(url) for _ in range(3)]
    try:
        for wire in (victim, flooder, watcher):
            await guest(wire)
        created = await victim.answered("create_table", {"turn_seconds": 3}, "table_created")
        table = created["payload"]["table"]
        await victim.answered("join_table", {"table": table, "seat": 0}, "joined")
        if flooder_role == "seated":
            await flooder.answered("join_table", {"table": table, "seat": 1}, "joined")
        else:
            await flooder.answered("watch", {"table": table}, "watching")
        await watcher.answered("watch", {"table": table}, "watching")
        await add_bots(victim, table)
        await flooder.wait(is_update(table))

        # Far more than the limit, as fast as it goes.
        mark = len(flooder.frames)
        with pytest.raises(ConnectionClosed):
            for n in range(1, 10 * limits.message_burst):
                await flooder.ws.send(json.dumps({"type": "ping", "id": n, "payload": {}}))
                await asyncio.sleep(0)
            await flooder.ws.send(json.dumps({"type": "ping", "id": 0}))  # still open: fail
            pytest.fail("the flooder was never disconnected")
        assert await flooder.closed() == 1008
        pongs = [f for f in flooder.frames[mark:] if f["type"] == "pong"]
        limited = [e for e in flooder.errors(mark) if e["code"] == "rate_limited"]
        assert len(pongs) >= limits.message_burst - 5  # hello, guest, join: the same bucket
        assert len(pongs) <= limits.message_burst + limits.messages_per_second * 2
        assert len(limited) >= RATE_STRIKES
        assert closed_at_the_last_strike(
            [f for f in flooder.frames[mark:] if f["type"] in ("pong", "error")]
        )
        assert not [e for e in flooder.errors(mark) if e["code"] != "rate_limited"]

        # The others at the table are untouched: served at once, by the connection and by
        # the table (a seated flooder's seat is played by the server once it is away)...
        await asyncio.sleep(3 * app.config.timers.disconnected_seconds)
        await victim.alive()
        await watcher.alive()
        seq_at_close = app.lobby.get(table).seq if app.lobby else 0
        for wire in (victim, watcher):
            mark = await wire.send({"type": "sync", "id": "s", "payload": {"table": table}})
            synced = await wire.wait(is_update(table), mark, timeout=2)
            assert synced["payload"].get("full"), synced
        # ... and the table plays on into the next hand, the victim well within the limit.
        reached = await asyncio.wait_for(
            play_out(victim, table, make_bot("fast"), pace=0.08, until=lambda p: p["hand_no"] >= 2),
            30,
        )
        assert reached is not None and reached["hand_no"] >= 2
        assert reached["seq"] > seq_at_close
        await watcher.wait(is_update(table, lambda p: p["hand_no"] >= 2))
        assert {e["code"] for e in victim.errors()} <= {"stale"}
        assert not watcher.errors()
        await victim.alive()
        await watcher.alive()
    finally:
        for wire in (victim, flooder, watcher):
            if not wire.reader.done():
                await wire.close()


@pytest.mark.asyncio
async def test_a_flood_closed_for_abuse_is_sent_every_answer_it_was_owed_first(
    start_server: Any,
) -> None:
    """Messages sent faster than the server reads them arrive together, and the answers of
    those it handles in one turn of its loop go out at the end of that turn: the close for
    abuse (1008) comes after them, not in their place. So a flood sees every answer it was
    owed: a pong for each ping within the limit and a ``rate_limited`` for each one over
    it, ``RATE_STRIKES`` of them, the last one too, then the close."""
    app: App = await start_server(limits=dataclasses.asdict(LimitsSection()))
    flooder = await Wire.open(url_of(app))
    try:
        await guest(flooder)
        mark = len(flooder.frames)
        # Just more than it takes to be closed: ten more would queue up in front of the
        # client's answer to the close, which the server then reads only after its close
        # timeout (10 s), as the connection is let go.
        most = app.config.limits.message_burst + RATE_STRIKES + 2
        with contextlib.suppress(ConnectionClosed):  # (closed while it still sends)
            for n in range(1, most):
                await flooder.ws.send(json.dumps({"type": "ping", "id": n, "payload": {}}))
        assert await flooder.closed() == 1008
        answers = flooder.frames[mark:]
        assert {f["payload"]["code"] for f in answers if f["type"] == "error"} == {"rate_limited"}
        assert closed_at_the_last_strike(answers)  # its last answer was sent too
        answered = sorted(f["reply_to"] for f in answers)
        assert answered == list(range(1, len(answered) + 1)), answered  # none skipped
        assert len(answered) - RATE_STRIKES >= app.config.limits.message_burst - 2  # the pongs
    finally:
        if not flooder.reader.done():
            await flooder.close()


# --------------------------------------------------------------- stopping ---


@pytest.mark.asyncio
async def test_stopping_the_server_tells_and_closes_every_connection(start_server: Any) -> None:
    app: App = await start_server()
    wire = await Wire.open(url_of(app))
    try:
        await guest(wire)
        loop = asyncio.get_running_loop()
        started = loop.time()
        await app.stop()
        took = loop.time() - started
        shutdown = await wire.wait(lambda f: f["type"] == "error", timeout=1)
        assert shutdown["payload"]["code"] == "server_shutdown"
        assert await wire.closed(timeout=1) in (1001, 1012), "the connection is still open"
        assert took < 3, f"stop took {took:.1f} s"
    finally:
        if not wire.reader.done():
            await wire.close()


# ------------------------------------------- deep nesting, invalid Unicode ---


def deep(depth: int) -> str:
    """A ping whose payload nests ``depth`` arrays (well within the frame size limit)."""
    return '{"type": "ping", "id": "deep", "payload": {"x": ' + "[" * depth + "]" * depth + "}}"


@pytest.mark.asyncio
async def test_deeply_nested_frames_get_bad_message_and_the_connection_stays_open(
    app: App,
) -> None:
    limit = app.config.limits.max_message_bytes
    early = await Wire.open(url_of(app), hello=False)
    wire = await Wire.open(url_of(app))
    await guest(wire)
    frames = [
        deep(40),
        deep((limit - len(deep(0))) // 2),  # as deep as the size limit allows
        "[" * (limit // 2) + "]" * (limit // 2),  # not even an object
        '{"type": "action", "id": 5, "payload": {"table": "t1", "seq": 1, "action": '
        + '{"type": "pass", "x": ' * 50
        + "1"
        + "}" * 50
        + "}}",
        '{"type": "ping", "id": ' + "[" * 1000 + "]" * 1000 + "}",
    ]
    for client in (early, wire):
        for frame in frames:
            assert len(frame.encode()) <= limit
            mark = await client.send(frame)
            answer = await client.wait(lambda f: True, mark)
            assert answer["type"] == "error", answer
            assert answer["payload"]["code"] == "bad_message", answer
            assert "deeper than" in answer["payload"]["reason"], answer
            assert "reply_to" not in answer  # the id could not be read safely
            if client is wire:
                await client.alive()
    await early.answered("hello", {"versions": [1]}, "welcome")
    await early.alive()
    for client in (early, wire):
        await client.close()


LONE = "\\ud800"  # a lone surrogate, as a JSON escape: valid JSON, not valid Unicode


def with_lone_surrogate(kind: str, payload: dict[str, Any], field: str) -> str:
    """The frame ``kind``/``payload`` with ``field`` of the payload made to end in a lone
    surrogate (``field`` ``"id"``: the id)."""
    message: dict[str, Any] = {"type": kind, "id": "LONE" if field == "id" else "r1"}
    message["payload"] = {**payload} if field == "id" else {**payload, field: "MARK"}
    text = json.dumps(message)
    return text.replace('"LONE"', f'"x{LONE}"').replace('"MARK"', f'"t{LONE}"')


# Every client string the server echoes, stores or looks up.
STRING_FIELDS: list[tuple[str, dict[str, Any], str]] = [
    ("ping", {}, "id"),
    ("hello", {"versions": [1]}, "client"),
    ("register", {"username": "lin", "password": "correct horse"}, "username"),
    ("register", {"username": "lin", "password": "correct horse"}, "password"),
    ("login", {"username": "lin", "password": "correct horse"}, "username"),
    ("login", {"username": "lin", "password": "correct horse"}, "password"),
    ("resume", {"token": "abc"}, "token"),
    ("create_table", {}, "rules"),
    ("join_table", {"table": "t1"}, "table"),
    ("join_table", {"table": "t1"}, "invite_code"),
    ("add_bots", {"table": "t1"}, "table"),
    ("add_bots", {"table": "t1"}, "bot"),
    ("leave_table", {"table": "t1"}, "table"),
    ("watch", {"table": "t1"}, "table"),
    ("watch", {"table": "t1"}, "invite_code"),
    ("sync", {"table": "t1"}, "table"),
    ("action", {"table": "t1", "seq": 1, "action": {"type": "pass"}}, "table"),
    ("list_tables", {}, "unknown_key"),
]


@pytest.mark.asyncio
async def test_strings_that_are_not_unicode_are_refused_and_the_connection_stays_open(
    app: App,
) -> None:
    wire = await Wire.open(url_of(app))
    await guest(wire)
    for kind, payload, field in STRING_FIELDS:
        frame = with_lone_surrogate(kind, payload, field)
        mark = await wire.send(frame)
        answer = await wire.wait(lambda f: True, mark)
        assert answer["type"] == "error", (frame, answer)
        assert answer["payload"]["code"] == "bad_message", (frame, answer)
        assert field in answer["payload"]["reason"], (frame, answer)
        assert answer.get("reply_to") == (None if field == "id" else "r1"), (frame, answer)
        await wire.alive()
    # In a nested action, and in a key: named too.
    action = '{"type": "action", "id": 7, "payload": {"table": "t1", "seq": 1, "action": '
    for frame, where in (
        (action + f'{{"type": "discard", "tile": "5m{LONE}"}}}}}}', "payload.action.tile"),
        (action + f'{{"type": "pass", "{LONE}": 1}}}}}}', "a key of payload.action"),
    ):
        reason = await wire.wait(lambda f: f.get("reply_to") == 7, await wire.send(frame))
        assert reason["payload"]["code"] == "bad_message"
        assert reason["payload"]["reason"].startswith(where), reason
        await wire.alive()
    # Valid non-ASCII text (a surrogate pair, CJK) is served and echoed as it came.
    for mid in ("\\ud83c\\udc04", "中文"):
        mark = await wire.send(f'{{"type": "ping", "id": "{mid}"}}')
        answer = await wire.wait(lambda f: True, mark)
        assert answer == {"type": "pong", "payload": {}, "reply_to": json.loads(f'"{mid}"')}
    await wire.close()


# ------------------------------------------------------------------- HTTP ---


async def raw_http(port: int, request: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
    """Send ``request`` as it is; the status, the headers (in order, repeats kept), the body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), TIMEOUT)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = [(k.strip().lower(), v.strip()) for k, _, v in (h.partition(":") for h in lines)]
    return int(status_line.split(" ", 2)[1]), headers, body


def get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()


def content_types(headers: list[tuple[str, str]]) -> list[str]:
    return [v for k, v in headers if k == "content-type"]


def assert_json_error(status: int, headers: list[tuple[str, str]], body: bytes) -> str:
    """A clean HTTP error: one JSON Content-Type, a JSON object with an ``error`` string."""
    assert content_types(headers) == ["application/json; charset=utf-8"], headers
    answer = json.loads(body)
    assert set(answer) == {"error"} and isinstance(answer["error"], str), answer
    assert answer["error"]
    return str(answer["error"])


@pytest.mark.parametrize(
    ("path", "status"),
    [
        # An id outside 1..2147483647 (the database's Integer range) is malformed: 400, as
        # the docs say, never "no such match".
        ("/api/matches/2147483648", 400),
        ("/api/matches/9223372036854775807", 400),
        ("/api/matches/9223372036854775808/log", 400),
        ("/api/matches/" + "9" * 400, 400),
        ("/api/matches/" + "9" * 5000 + "/log", 400),  # more digits than int() would take
        ("/api/matches/0", 400),
        ("/api/matches/00000000000000000000001", 404),  # match 1 has not been played
        ("/api/matches/2147483647/log", 404),
        ("/api/matches/-1", 400),
        ("/api/matches/1e3", 400),
        ("/api/matches/%31", 400),
        ("/api/matches/0x10/log", 400),
        ("/api/matches/1/moves", 404),
        ("/api/matches", 404),
        ("/api/players/nobody", 404),
        ("/api/players/" + "x" * 3000, 404),
        ("/api/players/%00%ff", 404),
        ("/api/nothing/here", 404),
        # A query string: UTF-8 text without control characters, each name once.
        ("/api/ladders/mcr?q=%00", 400),
        ("/api/ladders/mcr?q=%FF%FE", 400),
        ("/api/ladders/mcr?offset=1&offset=2", 400),
        ("/api/players/nobody?x=%01", 400),
        ("/api/tournaments?" + "&".join(f"k{i}=1" for i in range(17)), 400),
        ("/api/queue?x=%ff", 400),  # answered before the others, checked as they are
        ("/api/queue?a=1&a=2", 400),
        ("/api/queue?x=%0a", 400),
        ("/healthz?x=%00", 400),  # the rule holds on every path of this port's JSON answers
        ("/readyz?a=1&a=2", 400),
        ("/nothing", 404),
        ("/ws", 426),  # the websocket endpoint, asked without the upgrade
        ("/api/tournaments/" + "x" * 3000, 400),
        ("/api/tournaments/1/" + "x" * 3000, 404),
        ("/api/ladders/" + "x" * 3000, 404),
        ("/api/ladders/mcr/players/" + "x" * 3000, 404),
        ("/api/seasons/" + "x" * 3000, 400),
        ("/api/ladders/mcr?limit=" + "9" * 3000, 400),
        ("/api/matches/1/replay?hand=" + "9" * 3000, 400),
        ("/" + "x" * 3000, 404),
    ],
)
@pytest.mark.asyncio
async def test_every_bad_http_request_gets_a_clean_json_4xx(
    app: App, path: str, status: int
) -> None:
    got, headers, body = await raw_http(app.port, get(path))
    assert got == status, (path, got, body)
    reason = assert_json_error(got, headers, body)
    # A long input is quoted by its start (and its length), never in full.
    assert "x" * (QUOTED + 1) not in reason and "9" * (QUOTED + 1) not in reason, reason
    await (await Wire.open(url_of(app))).close()  # the server still serves


@pytest.mark.asyncio
async def test_an_http_handler_failure_is_a_logged_json_500(
    app: App, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(match_id: int, **_: object) -> None:
        raise RuntimeError(f"the database is gone (match {match_id})")

    assert app.store is not None
    monkeypatch.setattr(app.store, "match_detail", broken)
    status, headers, body = await raw_http(app.port, get("/api/matches/7"))
    assert status == 500
    assert "try again" in assert_json_error(status, headers, body)
    assert "the database is gone (match 7)" in caplog.text  # logged, not sent
    assert b"database" not in body


# ------------------------------------------------ answering prompts at once ---


class AutoPass:
    """A fair client that answers every prompt at once: pass, else let the drawn tile go."""

    def choose(self, view: Any) -> Action:
        return fallback_action(view)


@pytest.mark.asyncio
async def test_answering_every_prompt_at_once_is_never_rate_limited(start_server: Any) -> None:
    # A limit far stricter than the production one (20 a second, bursts of 40): answers to
    # the server's own prompts must not count at all, however fast the bots make them come.
    app: App = await start_server(limits={"messages_per_second": 1, "message_burst": 8})
    wire = await Wire.open(url_of(app))
    try:
        await guest(wire)
        created = await wire.answered("create_table", {"turn_seconds": 20}, "table_created")
        table = created["payload"]["table"]
        await wire.answered("join_table", {"table": table, "seat": 0}, "joined")
        await add_bots(wire, table)
        end = await asyncio.wait_for(play_out(wire, table, AutoPass()), 120)
        assert end is not None, f"closed ({wire.close_code}) before the match ended"
        answers = sum(1 for f in wire.frames if f["type"] == "update" and legal_of(f["payload"]))
        print(f"{answers} prompts answered at once, no refusal")
        assert answers > 100  # far beyond the bucket
        assert not wire.errors(), wire.errors()
        assert wire.close_code is None
        # The answers are free, not the rest: the bucket still limits other messages.
        mark = len(wire.frames)
        for n in range(20):
            await wire.send({"type": "ping", "id": n, "payload": {}})
        await wire.wait(lambda f: f.get("reply_to") == 19, mark)
        assert {e["code"] for e in wire.errors(mark)} == {"rate_limited"}
        # The finished match's log: one Content-Type, JSON lines.
        status, headers, body = await raw_http(app.port, get(f"/api/matches/{end['match']}/log"))
        assert status == 200
        assert content_types(headers) == ["application/x-ndjson; charset=utf-8"], headers
        lines = [json.loads(line) for line in body.decode().splitlines()]
        assert lines and all(isinstance(line, dict) for line in lines)
    finally:
        if not wire.reader.done():
            await wire.close()


@pytest.mark.asyncio
async def test_a_frame_that_cannot_be_encoded_is_sent_escaped_and_the_writer_lives(
    app: App,
) -> None:
    # Decoding refuses lone surrogates, so only a server bug could queue one: even then the
    # connection's writer must not die (the connection would hang without a close frame).
    wire = await Wire.open(url_of(app))
    (connection,) = app.connections
    mark = len(wire.frames)
    connection.send('{"type": "pong", "payload": {"note": "a\ud800"}, "reply_to": "x"}')
    frame = await wire.wait(lambda f: True, mark)
    assert frame == {"type": "pong", "payload": {"note": "a\ud800"}, "reply_to": "x"}
    await wire.alive()
    await wire.close()

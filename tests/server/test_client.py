"""The protocol client (``server.client``): wire views back to typed views, and the
request/response correlation against a small fake server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import gc
import json
import socket
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import pytest_asyncio
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import Close

from engine import wire
from engine.actions import Action, ActionKind
from engine.bots import SEATLESS, make_bot
from engine.hand import Meld, MeldKind
from engine.match import Match
from engine.rules import MCR, RuleSet
from engine.table import Phase, View
from server.client import (
    Client,
    ClientError,
    ConnectFailed,
    ConnectionLost,
    Incoming,
    RequestTimeout,
    ServerError,
    TableState,
    ViewError,
    event_from_dict,
    fallback_action,
    normalize_url,
    parse_meld,
    play,
    view_from_dict,
)
from server.client import connection as client_connection
from server.client.connection import request_frame
from server.messages import outbound
from server.presets import load_presets

# ------------------------------------------------------------ views ---


def _views_of_match(seed: int, bots: list[str], rules: RuleSet = MCR) -> list[View]:
    """Every view (each player's and the spectator's) after every step of a match."""
    match = Match(seed, rules)
    players = [make_bot(name, seed=seed + p) for p, name in enumerate(bots)]
    views: list[View] = []
    while not match.over:
        match.start_hand()
        hand = match.hand
        assert hand is not None
        while True:
            views.extend(hand.view(p) for p in (0, 1, 2, 3, None))
            if hand.phase is Phase.OVER:
                break
            player = hand.awaiting()[0]
            match.apply(player, players[player].choose(hand.view(player)))
    return views


def test_view_from_dict_round_trips_every_view_of_bot_matches() -> None:
    seen: Counter[str] = Counter()
    for seed, bots in ((1, ["default"] * 4), (2, ["default", "fast", "default", "fast"])):
        for view in _views_of_match(seed, bots):
            wire = json.loads(json.dumps(view.to_dict()))
            back = view_from_dict(wire)
            assert back == view, wire
            assert back.to_dict() == view.to_dict()
            seen[view.phase.value] += 1
            seen["legal"] += bool(view.legal)
            seen["claim"] += view.claim is not None
            seen["drawn"] += view.drawn is not None
            seen["spectator"] += view.viewer is None
            for seat in view.seats:
                seen["flower"] += bool(seat.flowers)
                seen["claimed"] += any(claimed for _, claimed in seat.river)
                seen["hidden_kong"] += seat.hidden_kongs
                for meld in seat.melds:
                    seen["concealed_kong" if meld.concealed else meld.kind.name.lower()] += 1
    # The matches exercised the parts of the wire view that need parsing.
    for part in ("turn", "claim", "claimed", "over", "legal", "drawn", "flower", "chow", "pung"):
        assert seen[part], (part, seen)
    assert seen["spectator"]


@pytest.mark.parametrize("preset", ["custom", "custom-flowers", "custom-after"])
def test_view_from_dict_round_trips_custom_views_with_wild_tiles(preset: str) -> None:
    rules = load_presets()[preset]
    seen: Counter[str] = Counter()
    for view in _views_of_match(3, ["default"] * 4, rules):
        wire = json.loads(json.dumps(view.to_dict()))
        back = view_from_dict(wire)
        assert back == view, wire
        assert back.to_dict() == view.to_dict()
        seen["indicator"] += view.indicator is not None
        seen["own wilds"] += any(s.wilds for s in view.seats if s.player == view.viewer)
    assert seen["own wilds"]
    assert bool(seen["indicator"]) == rules.wilds.uses_indicator


def test_parse_meld_reads_every_form() -> None:
    assert parse_meld("[123m,1]") == Meld(MeldKind.CHOW, 0, 1)
    assert parse_meld("[789s,3]") == Meld(MeldKind.CHOW, 24, 3)
    assert parse_meld("[EEE,2]") == Meld(MeldKind.PUNG, 27, 2)
    assert parse_meld("[5555p]") == Meld(MeldKind.KONG, 13, 0)
    assert parse_meld("[CCCC,3]") == Meld(MeldKind.KONG, 31, 3)
    for meld in (Meld(MeldKind.CHOW, 9, 2), Meld(MeldKind.KONG, 33, 0), Meld(MeldKind.PUNG, 5, 3)):
        assert parse_meld(str(meld)) == meld
    for bad in ("[????]", "123m", "[12m,1]", "[EEE]", "[123m,4]", "[89m1s,1]", "[EEEE,0]"):
        with pytest.raises(ViewError):
            parse_meld(bad)


def test_view_from_dict_rejects_garbled_views() -> None:
    view = Match(5)
    view.start_hand()
    assert view.hand is not None
    good = view.hand.view(0).to_dict()
    for key, value in (
        ("phase", "lunch"),
        ("round_wind", "X"),
        ("drawn", "10m"),
        ("legal", [{"type": "fly"}]),
        ("seats", [{"player": 0}]),
        ("dice", [[1]]),
    ):
        with pytest.raises(ViewError):
            view_from_dict({**good, key: value})
    with pytest.raises(ViewError):
        view_from_dict({k: v for k, v in good.items() if k != "current"})
    with pytest.raises(ViewError):
        view_from_dict([])  # type: ignore[arg-type]


def test_events_decode_to_the_wire_types() -> None:
    match = Match(5)
    events = match.start_hand()
    state = TableState("t1", events=[{"kind": e.kind, **e.data} for e in events if e.visible_to(0)])
    typed = state.typed_events()
    assert [type(e) for e in typed[:3]] == [wire.MatchStart, wire.HandStart, wire.Deal]
    deals = {e.player: e for e in typed if isinstance(e, wire.Deal)}
    assert sorted(deals) == [0, 1, 2, 3]
    own = deals[0].tiles
    assert own is not None and len(own) in (13, 14)  # the seat's own tiles, a count for others
    assert all(deals[p].tiles is None and deals[p].count in (13, 14) for p in (1, 2, 3))
    assert event_from_dict({"kind": "discard", "player": 1, "tile": "7p"}) == wire.Discard(1, 15)
    with pytest.raises(ViewError, match=r"event discard\.tile"):
        event_from_dict({"kind": "discard", "player": 1, "tile": "7x"})


def test_fallback_action_prefers_pass_then_the_drawn_tile() -> None:
    match = Match(3)
    match.start_hand()
    assert match.hand is not None
    dealer = match.hand.dealer
    view = match.hand.view(dealer)
    assert view.drawn is not None
    assert fallback_action(view) == Action(ActionKind.DISCARD, view.drawn)


def test_normalize_url() -> None:
    assert normalize_url("ws://127.0.0.1:8765") == "ws://127.0.0.1:8765/ws"
    assert normalize_url("ws://127.0.0.1:8765/") == "ws://127.0.0.1:8765/ws"
    assert normalize_url("http://h:1/ws") == "ws://h:1/ws"
    assert normalize_url("wss://h/other") == "wss://h/other"


# ------------------------------------------------------- fake server ---

Handler = Callable[[ServerConnection, dict[str, Any]], Awaitable[None]]


def _msg(kind: str, payload: dict[str, Any], reply_to: Any = None) -> str:
    out: dict[str, Any] = {"type": kind, "payload": payload}
    if reply_to is not None:
        out["reply_to"] = reply_to
    return json.dumps(out)


def _update(table: str, seq: int, legal: list[dict[str, Any]]) -> dict[str, Any]:
    match = Match(9)
    match.start_hand()
    assert match.hand is not None
    view = match.hand.view(match.hand.dealer).to_dict()
    view["legal"] = legal
    return {"table": table, "seq": seq, "hand_no": 1, "events": [], "view": view, "scores": [0] * 4}


class FakeServer:
    """Answers hello with welcome, then hands each message to ``handlers[type]``."""

    def __init__(self, handlers: dict[str, Handler], versions: tuple[int, ...] = (1,)) -> None:
        self.handlers = handlers
        self.versions = versions
        self.received: list[dict[str, Any]] = []
        self.links: list[ServerConnection] = []  # its connections, to send on
        self.port = 0

    async def handle(self, ws: ServerConnection) -> None:
        self.links.append(ws)
        try:
            async for frame in ws:
                data = json.loads(frame)
                self.received.append(data)
                kind, mid = data["type"], data.get("id")
                if kind == "hello":
                    if not set(data["payload"]["versions"]) & set(self.versions):
                        await ws.send(_msg("error", {"code": "unsupported_version"}, mid))
                        await ws.close(1002)
                        return
                    version = max(set(data["payload"]["versions"]) & set(self.versions))
                    await ws.send(
                        _msg("welcome", {"version": version, "heartbeat_seconds": 20}, mid)
                    )
                elif kind in self.handlers:
                    await self.handlers[kind](ws, data)
        except ConnectionClosed:
            pass


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[Callable[..., Awaitable[FakeServer]]]:
    servers = []

    async def start(handlers: dict[str, Handler], **kw: Any) -> FakeServer:
        fake = FakeServer(handlers, **kw)
        server = await serve(fake.handle, "127.0.0.1", 0)
        servers.append(server)
        fake.port = next(iter(server.sockets)).getsockname()[1]
        return fake

    yield start
    for server in servers:
        server.close()
        await server.wait_closed()


@pytest.mark.asyncio
async def test_replies_are_matched_by_id_even_out_of_order(fake: Any) -> None:
    held: list[dict[str, Any]] = []

    async def hold(ws: ServerConnection, data: dict[str, Any]) -> None:
        held.append(data)
        if len(held) == 2:  # answer the second request first
            second, first = held[1], held[0]
            await ws.send(_msg("tables", {"tables": [{"table": "t1"}]}, second["id"]))
            await ws.send(_msg("session", {"username": "guest-1", "token": "k"}, first["id"]))

    server = await fake({"guest": hold, "list_tables": hold})
    client = await Client.connect(f"ws://127.0.0.1:{server.port}", record=True)
    try:
        assert client.welcome["version"] == 1
        session, tables = await asyncio.gather(client.guest(), client.list_tables())
        assert session.username == "guest-1" and client.username == "guest-1"
        assert tables == [{"table": "t1"}]
        assert [f["type"] for f in client.frames] == ["welcome", "tables", "session"]
        ids = [m.get("id") for m in server.received]
        assert len(set(ids)) == len(ids)  # every request has its own id
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_error_replies_raise_server_error_and_others_are_routed(fake: Any) -> None:
    async def refuse(ws: ServerConnection, data: dict[str, Any]) -> None:
        await ws.send(_msg("error", {"code": "unknown", "reason": "nope"}))  # unsolicited
        await ws.send(
            _msg("error", {"code": "no_such_table", "reason": "no table 'tx'"}, data["id"])
        )

    server = await fake({"join_table": refuse})
    client = await Client.connect(f"ws://127.0.0.1:{server.port}/ws")
    try:
        with pytest.raises(ServerError) as caught:
            await client.join_table("tx")
        assert caught.value.code == "no_such_table" and "tx" in caught.value.reason
        message = await client.next_message(timeout=2)
        assert message is not None and message.type == "error" and message.code == "unknown"
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_table_messages_update_state_and_act_uses_the_latest_seq(fake: Any) -> None:
    async def join(ws: ServerConnection, data: dict[str, Any]) -> None:
        await ws.send(_msg("joined", {"table": "t1", "seat": 2}, data["id"]))
        await ws.send(_msg("table", {"table": "t1", "seats": ["a", None, "me", None]}))
        await ws.send(_msg("commit", {"table": "t1", "hand_no": 1, "commitment": "ab"}))
        await ws.send(_msg("update", _update("t1", 5, [{"type": "discard", "tile": "1m"}])))

    async def action(ws: ServerConnection, data: dict[str, Any]) -> None:
        seq = data["payload"]["seq"]
        if seq == 5:  # refuse as stale, then the current update
            await ws.send(_msg("error", {"code": "stale", "reason": "old"}, data["id"]))
            await ws.send(_msg("update", {**_update("t1", 7, [{"type": "pass"}]), "full": True}))
        else:
            await ws.send(_msg("update", _update("t1", seq + 1, [])))
            await ws.send(_msg("match_end", {"table": "t1", "match": 3, "scores": [1, -1, 0, 0]}))

    async def add_bots(ws: ServerConnection, data: dict[str, Any]) -> None:
        await ws.send(_msg("table", {"table": "t2", "seats": []}))  # another table: not it
        await ws.send(_msg("table", {"table": "t1", "seats": ["a", None, "me", None]}))  # old
        await ws.send(_msg("table", {"table": "t1", "seats": ["a", "bot:x", "me", "bot:x"]}))

    async def sync(ws: ServerConnection, data: dict[str, Any]) -> None:
        await ws.send(_msg("update", _update("t1", 8, [])))  # in flight: not the answer
        await ws.send(_msg("update", {**_update("t1", 9, []), "full": True}, data["id"]))

    server = await fake({"join_table": join, "action": action, "add_bots": add_bots, "sync": sync})
    client = await Client.connect(f"ws://127.0.0.1:{server.port}")
    try:
        assert await client.join_table("t1") == 2
        summary = await client.add_bots("t1", "fast")
        assert summary["seats"][1] == "bot:x"
        kinds = []
        for _ in range(6):
            message = await client.next_message(timeout=2)
            assert message is not None
            kinds.append((message.type, message.table))
        assert kinds == [
            ("table", "t1"),
            ("commit", "t1"),
            ("update", "t1"),
            ("table", "t2"),  # the answer to add_bots is the next full "table" of t1
            ("table", "t1"),
            ("table", "t1"),
        ]
        state = client.tables["t1"]
        assert (state.seq, state.seat, state.commits) == (5, 2, {1: "ab"})
        assert state.typed_view() is not None and state.legal

        mid = await client.act("t1", Action(ActionKind.DISCARD, 0))
        error = await client.next_message(timeout=2)
        assert error is not None and (error.type, error.code) == ("error", "stale")
        assert (error.reply_to, error.table) == (mid, "t1")
        assert state.last_error is not None and state.last_error["code"] == "stale"
        update = await client.next_message(timeout=2)
        assert update is not None and update.type == "update"
        assert update.latency is None  # the refused action does not count
        assert state.seq == 7

        await client.act("t1", {"type": "pass"})
        update = await client.next_message(timeout=2)
        assert update is not None and update.latency is not None and update.latency >= 0
        assert server.received[-1]["payload"] == {
            "table": "t1",
            "seq": 7,
            "action": {"type": "pass"},
        }
        end = await client.next_message(timeout=2)
        assert end is not None and end.type == "match_end"
        assert state.match_end == {"table": "t1", "match": 3, "scores": [1, -1, 0, 0]}

        synced = await client.sync("t1")
        assert synced.seq == 9
        # The answering update is table state: routed like any other (a play loop sees it).
        routed = [await client.next_message(timeout=2) for _ in range(2)]
        assert [(m.type, m.payload["seq"]) for m in routed if m is not None] == [
            ("update", 8),
            ("update", 9),
        ]
        assert routed[1] is not None and routed[1].reply_to is not None
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_play_answers_each_update_once_and_returns_the_match_end(fake: Any) -> None:
    async def join(ws: ServerConnection, data: dict[str, Any]) -> None:
        await ws.send(_msg("joined", {"table": "t1", "seat": 0}, data["id"]))
        update = _update("t1", 1, [])
        view = update["view"]
        view["legal"] = [{"type": "discard", "tile": view["drawn"]}]
        await ws.send(_msg("update", update))
        await ws.send(_msg("update", {**update, "full": True}))  # the same seq again

    async def action(ws: ServerConnection, data: dict[str, Any]) -> None:
        await ws.send(_msg("update", _update("t1", 2, [])))
        await ws.send(_msg("match_end", {"table": "t1", "match": 1, "scores": [0, 0, 0, 0]}))

    server = await fake({"join_table": join, "action": action})
    client = await Client.connect(f"ws://127.0.0.1:{server.port}")
    try:
        await client.join_table("t1")
        end = await asyncio.wait_for(play(client, "t1", make_bot("fast")), 5)
        assert end == {"table": "t1", "match": 1, "scores": [0, 0, 0, 0]}
        assert [m["type"] for m in server.received].count("action") == 1
    finally:
        await client.close()


class _Asked:
    """A bot that keeps every view it is asked about, and plays the first legal move."""

    def __init__(self) -> None:
        self.views: list[View] = []

    def choose(self, view: View) -> Action:
        self.views.append(view)
        return view.legal[0]


@pytest.mark.asyncio
async def test_play_answers_again_an_update_asked_again_after_its_action_was_not_stored(
    fake: Any,
) -> None:
    """The database could not store the action (``internal_error``): no fallback is sent
    (it could not be stored either), and the same update, asked again once the table
    resumes, is answered again. An update sent again otherwise is not (the test above)."""
    update = _update("t1", 1, [])
    view = update["view"]
    other = next(t for t in ("1m", "9m", "1p", "9p", "E", "N") if t != view["drawn"])
    # The bot's choice (the first legal move) is not the fallback (the drawn tile).
    view["legal"] = [
        {"type": "discard", "tile": other},
        {"type": "discard", "tile": view["drawn"]},
    ]

    async def join(ws: ServerConnection, data: dict[str, Any]) -> None:
        await ws.send(_msg("joined", {"table": "t1", "seat": 0}, data["id"]))
        await ws.send(_msg("update", update))

    tries = 0

    async def action(ws: ServerConnection, data: dict[str, Any]) -> None:
        nonlocal tries
        tries += 1
        if tries == 1:
            refusal = {"code": "internal_error", "reason": "not stored; try again"}
            await ws.send(_msg("error", {**refusal, "table": "t1"}, data["id"]))
            await asyncio.sleep(0.2)  # no fallback comes meanwhile
            await ws.send(_msg("update", {**update, "full": True}))  # resumed: asked again
        else:
            await ws.send(_msg("match_end", {"table": "t1", "match": 1, "scores": [0] * 4}))

    server = await fake({"join_table": join, "action": action})
    client = await Client.connect(f"ws://127.0.0.1:{server.port}")
    try:
        await client.join_table("t1")
        assert await asyncio.wait_for(play(client, "t1", _Asked()), 5) is not None
        sent = [m["payload"] for m in server.received if m["type"] == "action"]
        assert [p["seq"] for p in sent] == [1, 1]
        assert sent[0]["action"] == sent[1]["action"] == view["legal"][0]
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_play_makes_the_only_legal_move_without_asking_the_bot(fake: Any) -> None:
    """A pass that is the only legal move goes out without the bot (or the view's seats,
    which would not decode here); a choice of two is the bot's, on the whole view."""
    prompts = iter(
        [
            [{"type": "pass"}],
            [{"type": "discard", "tile": "1m"}, {"type": "discard", "tile": "2m"}],
        ]
    )

    async def prompt(ws: ServerConnection, seq: int) -> None:
        update = _update("t1", seq, next(prompts))
        if seq == 1:
            update["view"]["seats"] = "garbled"
        await ws.send(_msg("update", update))

    async def join(ws: ServerConnection, data: dict[str, Any]) -> None:
        await ws.send(_msg("joined", {"table": "t1", "seat": 0}, data["id"]))
        await prompt(ws, 1)

    async def action(ws: ServerConnection, data: dict[str, Any]) -> None:
        seq = data["payload"]["seq"]
        if seq == 1:
            await prompt(ws, 2)
        else:
            await ws.send(_msg("match_end", {"table": "t1", "match": 1, "scores": [0] * 4}))

    server = await fake({"join_table": join, "action": action})
    client = await Client.connect(f"ws://127.0.0.1:{server.port}")
    bot = _Asked()
    try:
        await client.join_table("t1")
        assert await asyncio.wait_for(play(client, "t1", bot), 5) is not None
        sent = [m["payload"] for m in server.received if m["type"] == "action"]
        assert [(p["seq"], p["action"]) for p in sent] == [
            (1, {"type": "pass"}),
            (2, {"type": "discard", "tile": "1m"}),
        ]
        assert len(bot.views) == 1 and len(bot.views[0].seats) == 4
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_a_client_pings_as_asked_or_not_at_all(fake: Any) -> None:
    """``ping_interval``: the keepalive pings a client sends (None: none, as a browser;
    ``guobiao loadtest``'s connections)."""
    server = await fake({})
    url = f"ws://127.0.0.1:{server.port}"
    quiet = await Client.connect(url, ping_interval=None)
    pinging = await Client.connect(url, ping_interval=0.05)
    try:
        await asyncio.sleep(0.3)
        assert quiet.ws.ping_interval is None and quiet.ws.latency == 0  # none answered
        assert pinging.ws.latency > 0
    finally:
        await quiet.close()
        await pinging.close()


@pytest.mark.asyncio
async def test_a_closed_connection_fails_pending_requests_and_ends_messages(fake: Any) -> None:
    async def hang_up(ws: ServerConnection, data: dict[str, Any]) -> None:
        await ws.close(1011, "boom")

    server = await fake({"guest": hang_up})
    client = await Client.connect(f"ws://127.0.0.1:{server.port}")
    try:
        with pytest.raises(ConnectionLost) as caught:
            await client.guest()
        assert caught.value.code == 1011
        assert [m async for m in client.messages()] == []
        assert not client.is_open
        with pytest.raises(ConnectionLost):
            await client.list_tables()
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_a_connection_lost_while_acting_is_not_open_when_play_returns(fake: Any) -> None:
    """The server asks for an action and hangs up: the answer can meet the closed connection
    before the client's reader has seen the close (the one step of the event loop between
    the two; here the send is made to fail so, every time). ``play`` then returns None, and
    the client must already say it is not open: a caller tells a lost connection from a
    table that finished without it so (the cluster's rolling-restart test once took one for
    the other)."""
    hang_up = asyncio.Event()

    async def join(ws: ServerConnection, data: dict[str, Any]) -> None:
        await ws.send(_msg("joined", {"table": "t1", "seat": 0}, data["id"]))
        update = _update("t1", 1, [])
        update["view"]["legal"] = [{"type": "discard", "tile": update["view"]["drawn"]}]
        await ws.send(_msg("update", update))
        await hang_up.wait()
        await ws.close(1001, "going away")

    server = await fake({"join_table": join})
    client = await Client.connect(f"ws://127.0.0.1:{server.port}")
    sent = client.ws.send

    async def send_on_a_closed_connection(message: str) -> None:
        if json.loads(message)["type"] != "action":
            return await sent(message)
        hang_up.set()
        raise ConnectionClosed(Close(1001, "going away"), None)

    client.ws.send = send_on_a_closed_connection  # type: ignore[method-assign]
    try:
        await client.join_table("t1")
        assert await asyncio.wait_for(play(client, "t1", make_bot("fast")), 5) is None
        assert not client.is_open and client.close_code == 1001
        with pytest.raises(ConnectionLost):
            await client.list_tables()
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_a_request_whose_send_meets_the_close_leaves_no_error_unread(fake: Any) -> None:
    """The request waits to be sent (paced) while the server hangs up: the reader fails its
    answer's future, the send then fails too, and the request raises that. The future's own
    error must have been read: else asyncio reports "Future exception was never retrieved"
    for every such request (a load test closing thousands of connections printed pages)."""
    server = await fake({})
    client = await Client.connect(f"ws://127.0.0.1:{server.port}", rate=2, burst=1)
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:

        async def request() -> str:
            try:
                await client.list_tables()  # hello took the token: sent in 0.5 s
            except ConnectionLost as exc:
                return type(exc).__name__  # (the error's frames not kept: gc may collect)
            return "answered"

        waiting = asyncio.create_task(request())
        await asyncio.sleep(0.05)
        await server.links[0].close(1001, "going away")
        assert await asyncio.wait_for(waiting, 5) == "ConnectionLost"
        gc.collect()
        await asyncio.sleep(0)
        assert [context["message"] for context in reported] == []
    finally:
        loop.set_exception_handler(None)
        await client.close()


@pytest.mark.asyncio
async def test_unanswered_requests_time_out(fake: Any) -> None:
    async def ignore(ws: ServerConnection, data: dict[str, Any]) -> None:
        return None

    server = await fake({"list_tables": ignore})
    client = await Client.connect(f"ws://127.0.0.1:{server.port}", timeout=0.2)
    try:
        with pytest.raises(RequestTimeout):
            await client.list_tables()
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_connect_reports_refused_versions_and_unreachable_servers(fake: Any) -> None:
    server = await fake({}, versions=(99,))
    with pytest.raises(ServerError) as caught:
        await Client.connect(f"ws://127.0.0.1:{server.port}")
    assert caught.value.code == "unsupported_version"

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ConnectFailed, match="cannot connect"):
        await Client.connect(f"ws://127.0.0.1:{port}", open_timeout=2)


@pytest.mark.asyncio
async def test_outgoing_messages_are_paced(fake: Any) -> None:
    async def pong(ws: ServerConnection, data: dict[str, Any]) -> None:
        await ws.send(_msg("pong", {}, data["id"]))

    server = await fake({"ping": pong})
    client = await Client.connect(f"ws://127.0.0.1:{server.port}", rate=50, burst=2)
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        for _ in range(6):  # hello used a token: 1 left, then 50 a second
            await client.ping()
        assert loop.time() - started >= 0.08
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_the_deal_position_of_custom_updates_is_kept(fake: Any) -> None:
    async def join(ws: ServerConnection, data: dict[str, Any]) -> None:
        await ws.send(_msg("joined", {"table": "t1", "seat": 0}, data["id"]))
        custom = {"hands_total": None, "repeat": 2, "dealer_position": 3}
        await ws.send(_msg("update", {**_update("t1", 4, []), **custom}))

    async def sync(ws: ServerConnection, data: dict[str, Any]) -> None:
        await ws.send(_msg("update", {**_update("t1", 5, []), "hands_total": 16}, data["id"]))

    server = await fake({"join_table": join, "sync": sync})
    client = await Client.connect(f"ws://127.0.0.1:{server.port}")
    try:
        await client.join_table("t1")
        first = await client.next_message(timeout=2)
        state = client.tables["t1"]
        assert first is not None and first.payload["seq"] == 4
        assert (state.hands_total, state.repeat, state.dealer_position) == (None, 2, 3)
        assert (await client.sync("t1")) is state
        assert (state.seq, state.hands_total, state.repeat) == (5, 16, 2)
    finally:
        await client.close()


def _hand_updates(seed: int, viewer: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """One hand of fast bots, as ``viewer`` is sent it under protocol version 2: for each
    change, (the update, not full: a view without seats; the whole view it stands for)."""
    match = Match(seed, hold_claims=True)
    events = match.start_hand()
    hand = match.hand
    assert hand is not None
    bots = [make_bot("fast", seed=p) for p in range(4)]
    out = []
    while True:
        sent = [{"kind": e.kind, **e.data} for e in events if e.visible_to(viewer)]
        payload = {"table": "t1", "seq": len(out) + 1, "hand_no": 1, "events": sent}
        payload |= {"view": hand.brief(viewer), "scores": [0] * 4}
        out.append((payload, hand.view(viewer).to_dict()))
        if hand.phase is Phase.OVER:
            return out
        waiting = hand.awaiting()
        if not waiting:
            events = match.close_claims()
        else:
            player = waiting[0]
            events = match.apply(player, bots[player].choose(hand.view(player)))


@pytest.mark.asyncio
async def test_version_2_seats_are_followed_and_a_gap_asks_for_one_full_update(
    fake: Any,
) -> None:
    """Protocol version 2: the client makes every update's view whole from the last one and
    the events. One update lost on the way (a gap in ``seq``): the next ones cannot be
    followed (``view`` None, nothing to act on), and one ``sync`` is asked for, not one per
    update; its answer, a full update, is taken as it is and following goes on from it."""
    updates = _hand_updates(5, viewer=0)
    assert len(updates) > 40
    lost, answered = 20, 25  # update 21 never comes; the sync is answered after update 25

    async def sync(ws: ServerConnection, data: dict[str, Any]) -> None:
        return None  # answered below, when the test says

    server = await fake({"sync": sync}, versions=(1, 2))
    client = await Client.connect(f"ws://127.0.0.1:{server.port}")
    try:
        assert client.version == 2
        link = server.links[0]
        for i, (payload, whole) in enumerate(updates):
            if i == lost:
                continue
            if i == answered:
                asked = [m for m in server.received if m["type"] == "sync"]
                assert len(asked) == 1, asked  # once, however many were not followed
                full = {**updates[i - 1][0], "view": updates[i - 1][1], "full": True}
                await link.send(_msg("update", full, asked[0]["id"]))
            await link.send(_msg("update", payload))
            await client.wait_for(lambda m, i=i: m.type == "update" and m.payload["seq"] == i + 1)
            state = client.tables["t1"]
            if lost <= i < answered:
                assert state.view is None, i
            else:
                assert state.view == whole, i
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_without_following_a_brief_view_is_kept_as_sent_for_a_seatless_bot(
    fake: Any,
) -> None:
    """``follow_seats=False`` (``guobiao loadtest``'s connections for the fast bot): each
    update's view is kept as sent, without seats, and nothing is asked for when one is
    missing; its typed view has no seats, and a bot of ``SEATLESS`` chooses on it as on
    the whole view."""
    updates = _hand_updates(5, viewer=0)
    server = await fake({}, versions=(1, 2))
    client = await Client.connect(f"ws://127.0.0.1:{server.port}", follow_seats=False)
    try:
        assert client.version == 2
        prompts = 0
        for i, (payload, whole) in enumerate(updates):
            if i == 20:
                continue  # lost on the way: nothing to follow, nothing to ask for
            await server.links[0].send(_msg("update", payload))
            await client.wait_for(lambda m, i=i: m.type == "update" and m.payload["seq"] == i + 1)
            state = client.tables["t1"]
            assert state.view == payload["view"] and "seats" not in state.view, i
            typed = state.typed_view()
            assert typed is not None and typed.seats == ()
            expected = view_from_dict(whole)
            assert (typed.legal, typed.drawn) == (expected.legal, expected.drawn)
            if typed.legal:
                prompts += 1
                for name in SEATLESS:
                    chosen = make_bot(name).choose(typed)
                    assert chosen == make_bot(name).choose(expected)
        assert prompts > 10
        assert not [m for m in server.received if m["type"] == "sync"]
    finally:
        await client.close()


# ------------------------------------------------------------ the registry ---


def test_a_request_of_a_type_the_server_does_not_accept_is_not_sent() -> None:
    assert json.loads(request_frame("sync", {"table": "t1"}, 7)) == {
        "type": "sync",
        "id": 7,
        "payload": {"table": "t1"},
    }
    with pytest.raises(ClientError, match="'synk' is not a message the server accepts"):
        request_frame("synk", {"table": "t1"}, 8)


def test_an_incoming_message_reads_as_its_typed_class() -> None:
    joined = Incoming("joined", {"table": "t1", "seat": 2}, reply_to=3)
    assert joined.message() == outbound.Joined("t1", 2)
    left = Incoming("queue", {"state": "left", "ladder": "mcr", "casual": True})
    assert left.message() == outbound.Queue("left", "mcr", True)
    update = Incoming("update", {"table": "t1", "seq": 4})
    assert update.message() == outbound.Update({"table": "t1", "seq": 4})
    assert Incoming("newer_than_this_client", {}).message() is None
    with pytest.raises(ClientError, match="without 'seat'"):
        Incoming("joined", {"table": "t1"}).message()


def test_frames_are_read_as_the_standard_librarys_json_reads_them() -> None:
    """The client reads frames with orjson, and with ``json`` what orjson refuses (a lone
    surrogate, which ``json`` reads): the same values either way."""
    frames = [
        '{"type": "update", "payload": {"seq": 3, "scores": [-8, 8], "x": 2.5, "n": null}}',
        '{"type": "chat", "payload": {"text": "\\ud800 \\u4e2d"}}',
        '{"type": "table", "payload": {"name": "\u9ebb\u5c06", "big": 12345678901234567890}}',
    ]
    for frame in frames:
        assert client_connection._loads(frame) == json.loads(frame)

"""The ladder queue through a real server (server.ladder.queue): four registered players
queue and play a rated match; the gap widens before far-apart players meet; leaving and
disconnecting; guests only in the casual queue, where bots fill the table after the wait;
the farm limit keeps the same four apart; a player seated elsewhere is refused or removed;
``GET /api/queue``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpkit
import pytest
from serverkit import StartServer
from sqlalchemy import select, update
from test_server_bad_input import AutoPass, Wire, add_bots, is_update, play_out, url_of

from server.app import App
from server.db.models import Player, Rating
from server.ladder.queue import Waiting, fill_level

Frame = dict[str, Any]
Start = Callable[..., Awaitable[App]]
SALT = "00" * 16

# Passes every 0.1 s; the gap grows 6 points a second from 3 (gap(w) = 3 + 6 * floor(w)).
FAST = {"pass_seconds": 0.1, "gap_start": 3.0, "gap_step": 6.0, "step_seconds": 1.0}


@pytest.fixture
def start(start_server: StartServer) -> Start:
    """Start a server (``start_server``) with the fast queue above, 1-deal matches, and
    these ``[matchmaking]`` and ``[ladder]`` overrides."""

    async def go(matchmaking: dict[str, Any] | None = None, **ladder: Any) -> App:
        making = {**FAST, "hands": 1, **(matchmaking or {})}
        return await start_server(ladder=ladder, matchmaking=making)

    return go


async def player(app: App, name: str) -> Wire:
    wire = await Wire.open(url_of(app))
    await wire.answered("register", {"username": name, "password": "correct horse"}, "session")
    return wire


async def guest(app: App) -> Wire:
    wire = await Wire.open(url_of(app))
    await wire.answered("guest", {}, "session")
    return wire


def is_queue(state: str) -> Callable[[Frame], bool]:
    return lambda f: f["type"] == "queue" and f["payload"]["state"] == state


async def queue_status(app: App) -> list[Frame]:
    status, body = await httpkit.http_get(app.port, "/api/queue")
    assert status == 200, body
    queues: list[Frame] = json.loads(body)["queues"]
    return queues


async def sizes(app: App) -> dict[tuple[str, bool], int]:
    return {(q["ladder"], q["casual"]): q["size"] for q in await queue_status(app)}


async def until_size(app: App, ladder: str, casual: bool, size: int) -> None:
    async with asyncio.timeout(10):
        while (await sizes(app))[(ladder, casual)] != size:
            await asyncio.sleep(0.05)


async def rated_match_played(app: App, seats: list[str], at: datetime) -> None:
    """A finished rated match of ``seats`` (registered players), stored as a table would."""
    store = app.store
    match_id = await store.create_match("t0", "mcr", 1, SALT, seats, at, rated=True)
    assert await store.finish_match(match_id, [30, -10, -10, -10], at + timedelta(minutes=1))


# ------------------------------------------------------------------ tests ---


@pytest.mark.asyncio
async def test_four_registered_players_queue_and_play_a_rated_match(start: Start) -> None:
    app = await start()
    names = ["ann", "bob", "cat", "dan"]
    wires = [await player(app, n) for n in names]
    for i, wire in enumerate(wires):
        reply = await wire.answered("queue_join", {"ladder": "mcr"}, "queue")
        assert reply["payload"] == {
            "state": "waiting",
            "ladder": "mcr",
            "casual": False,
            "size": i + 1,
            "waited_seconds": 0,
            "gap": 3.0,
        }
    matched = [(await wire.wait(is_queue("matched")))["payload"] for wire in wires]
    tables = {m["table"] for m in matched}
    assert len(tables) == 1
    (table,) = tables
    assert sorted(m["seat"] for m in matched) == [0, 1, 2, 3]
    assert all(m["ladder"] == "mcr" and m["casual"] is False for m in matched)
    for wire, m in zip(wires, matched, strict=True):
        joined = await wire.wait(lambda f: f["type"] == "joined")
        assert joined["payload"] == {"table": table, "seat": m["seat"]}
    assert (await sizes(app))[("mcr", False)] == 0

    ends = await asyncio.wait_for(
        asyncio.gather(*(play_out(w, table, AutoPass()) for w in wires)), 120
    )
    assert all(end is not None for end in ends)
    for wire in wires:  # the table's summary once, not again as each tablemate sat down
        told = [f["payload"] for f in wire.frames if f["type"] == "table"]
        assert [s["state"] for s in told if s["state"] != "finished"] == ["playing"], told
    end = next(f for f in wires[0].frames if f["type"] == "match_end")["payload"]
    seat_of = {names[i]: m["seat"] for i, m in enumerate(matched)}
    assert sorted(r["name"] for r in end["ratings"]) == names  # a rated match, rated
    assert {r["name"]: r["player"] for r in end["ratings"]} == seat_of
    detail = await app.store.match_detail(end["match"])
    assert {n: detail["seats"].index(n) for n in names} == seat_of


@pytest.mark.asyncio
async def test_far_apart_players_meet_only_once_the_gap_has_grown(start: Start) -> None:
    app = await start()
    # "far" has a rating of mu 40 (a real rated match, then its mu set); the three others
    # have none yet (25): a spread of 15, which the gap reaches after 2 s (3 + 6 * 2).
    helpers = [await player(app, n) for n in ("xia", "xue", "xin")]
    far = await player(app, "far")
    await rated_match_played(
        app, ["far", "xia", "xue", "xin"], datetime.now(UTC) - timedelta(days=2)
    )
    async with app.store._write() as session:
        far_id = await session.scalar(select(Player.id).where(Player.username_key == "far"))
        await session.execute(update(Rating).where(Rating.player_id == far_id).values(mu=40.0))
    found = await app.store.ladder.player("mcr", "far")
    assert found is not None and found["rating"]["mu"] == 40.0
    near = [await player(app, n) for n in ("ann", "bob", "cat")]
    for wire in [far, *near]:
        await wire.answered("queue_join", {}, "queue")
    matched = [(await w.wait(is_queue("matched"), timeout=20))["payload"] for w in [far, *near]]
    assert len({m["table"] for m in matched}) == 1

    def gaps_before_matched(wire: Wire) -> list[float]:
        end = wire.frames.index(next(filter(is_queue("matched"), wire.frames)))
        return [f["payload"]["gap"] for f in wire.frames[:end] if is_queue("waiting")(f)]

    # The last to join has the narrowest gap: while it was short of 15, no table; each of
    # her statuses came from a pass that could not seat the four.
    last = gaps_before_matched(near[-1])
    assert last and all(g < 15 for g in last), last
    far_gaps = gaps_before_matched(far)
    assert far_gaps[0] == 3.0 and len(far_gaps) >= 2 and far_gaps == sorted(far_gaps)  # widening
    # Unsolicited statuses only when they change, at most once a second: the seconds waited
    # never repeat.
    pushed = [f["payload"]["waited_seconds"] for f in far.frames if is_queue("waiting")(f)]
    assert pushed == sorted(set(pushed)), pushed
    for wire in helpers:
        await wire.close()


def told_left(frames: list[Frame]) -> list[Frame]:
    """The ``left`` statuses among ``frames`` that answer no request (pushed)."""
    return [
        f["payload"]
        for f in frames
        if f["type"] == "queue" and "reply_to" not in f and f["payload"]["state"] == "left"
    ]


@pytest.mark.asyncio
async def test_leaving_and_disconnecting_take_a_player_out_of_the_queue(start: Start) -> None:
    app = await start()
    ann, bob = await player(app, "ann"), await player(app, "bob")
    await ann.answered("queue_join", {}, "queue")
    await bob.answered("queue_join", {"casual": True}, "queue")
    assert await sizes(app) == {("mcr", False): 1, ("mcr", True): 1}
    left = await ann.answered("queue_leave", {}, "queue")
    assert left["payload"] == {"state": "left", "ladder": "mcr", "casual": False}
    again = await ann.answered("queue_leave", {}, "queue")  # harmless when not queued
    assert again["payload"]["state"] == "left"
    await bob.close()
    await until_size(app, "mcr", True, 0)
    assert await sizes(app) == {("mcr", False): 0, ("mcr", True): 0}
    # Joining the other queue moves the player; logging out leaves it.
    await ann.answered("queue_join", {}, "queue")
    moved = await ann.answered("queue_join", {"casual": True}, "queue")
    assert moved["payload"]["casual"] is True and moved["payload"]["size"] == 1
    assert await sizes(app) == {("mcr", False): 0, ("mcr", True): 1}
    mark = len(ann.frames)
    await ann.answered("logout", {}, "logged_out")
    assert await sizes(app) == {("mcr", False): 0, ("mcr", True): 0}
    assert told_left(ann.frames[mark:]) == [{"state": "left", "ladder": "mcr", "casual": True}]
    # Logging in as someone else leaves it too, saying so; a refused login does not.
    await ann.answered("login", {"username": "ann", "password": "correct horse"}, "session")
    await ann.answered("queue_join", {}, "queue")
    assert (await sizes(app))[("mcr", False)] == 1
    await ann.refused("login", {"username": "bob", "password": "wrong horse"}, "auth_failed")
    assert (await sizes(app))[("mcr", False)] == 1
    mark = len(ann.frames)
    await ann.answered("login", {"username": "bob", "password": "correct horse"}, "session")
    assert (await sizes(app))[("mcr", False)] == 0
    assert told_left(ann.frames[mark:]) == [{"state": "left", "ladder": "mcr", "casual": False}]
    await ann.answered("logout", {}, "logged_out")
    await ann.refused("queue_join", {}, "not_authenticated")


@pytest.mark.asyncio
async def test_a_guest_queues_casually_only_and_bots_fill_the_table(start: Start) -> None:
    app = await start({"casual_bot_seconds": 0.5})
    wire = await guest(app)
    await wire.refused("queue_join", {}, "not_registered")
    await wire.refused("queue_join", {"ladder": "custom", "casual": True}, "no_such_ladder")
    waiting = await wire.answered("queue_join", {"casual": True}, "queue")
    assert waiting["payload"]["state"] == "waiting" and waiting["payload"]["casual"] is True
    matched = (await wire.wait(is_queue("matched")))["payload"]
    assert matched["casual"] is True and matched["seat"] == 0
    table = await wire.wait(
        lambda f: f["type"] == "table" and f["payload"]["table"] == matched["table"]
    )
    assert table["payload"]["rated"] is False
    assert table["payload"]["seats"][1:] == ["bot:normal"] * 3  # [bots] queue_fill
    assert (await wire.wait(lambda f: f["type"] == "joined"))["payload"]["seat"] == 0
    end = await asyncio.wait_for(play_out(wire, matched["table"], AutoPass()), 120)
    assert end is not None and end["ratings"] == []


@pytest.mark.asyncio
async def test_the_casual_queue_fills_a_table_at_the_level_its_player_chose(start: Start) -> None:
    app = await start({"casual_bot_seconds": 0.3})
    wire = await guest(app)
    reason = await wire.refused("queue_join", {"casual": True, "bot": "fast"}, "bad_message")
    assert reason == "unknown bot level 'fast'; levels: easy, normal, strong"
    await wire.answered("queue_join", {"casual": True, "bot": "easy"}, "queue")
    matched = (await wire.wait(is_queue("matched")))["payload"]
    table = await wire.wait(
        lambda f: f["type"] == "table" and f["payload"]["table"] == matched["table"]
    )
    assert table["payload"]["seats"][1:] == ["bot:easy"] * 3


@pytest.mark.asyncio
async def test_an_empty_ladder_name_is_refused_as_an_unknown_ladder(start: Start) -> None:
    """Only an omitted ``ladder`` is the server's preset; ``""`` names no ladder."""
    app = await start()
    wire = await guest(app)
    reason = await wire.refused("queue_join", {"ladder": "", "casual": True}, "no_such_ladder")
    assert reason == "there is no ladder '' to queue for; ladders: mcr"
    assert (await sizes(app))[("mcr", True)] == 0
    await wire.close()


def test_the_bots_level_is_the_longest_waiting_players_choice_else_the_servers() -> None:
    def waiting(name: str, bot: str | None) -> Waiting:
        return Waiting(None, name, 25.0, 0.0, bot=bot)  # type: ignore[arg-type]

    assert fill_level([waiting("ann", None), waiting("bob", None)], "normal") == "normal"
    assert fill_level([waiting("ann", "strong"), waiting("bob", "easy")], "normal") == "strong"
    assert fill_level([waiting("ann", None), waiting("bob", "easy")], "normal") == "easy"


@pytest.mark.asyncio
async def test_the_farm_limit_keeps_the_same_four_apart(start: Start) -> None:
    app = await start(same_four_per_day=1)
    names = ["ann", "bob", "cat", "dan"]
    wires = [await player(app, n) for n in names]
    await rated_match_played(app, names, datetime.now(UTC) - timedelta(hours=1))
    for wire in wires:
        await wire.answered("queue_join", {}, "queue")
    # Passes go by (each sends a status as the seconds waited grow): nobody is matched.
    await wires[0].wait(lambda f: is_queue("waiting")(f) and f["payload"]["waited_seconds"] >= 1)
    assert not any(is_queue("matched")(f) or f["type"] == "error" for w in wires for f in w.frames)
    assert (await sizes(app))[("mcr", False)] == 4
    # A fifth player makes a table of different four.
    eve = await player(app, "eve")
    await eve.answered("queue_join", {}, "queue")
    table = (await eve.wait(is_queue("matched")))["payload"]["table"]
    await until_size(app, "mcr", False, 1)
    seated = [
        n
        for n, w in zip(names, wires, strict=True)
        if any(is_queue("matched")(f) for f in w.frames)
    ]
    assert len(seated) == 3
    assert app.lobby is not None and all(app.lobby.seated_at(n) == table for n in [*seated, "eve"])


@pytest.mark.asyncio
async def test_a_player_seated_elsewhere_is_refused_or_taken_out(start: Start) -> None:
    app = await start()
    ann = await player(app, "ann")
    created = await ann.answered("create_table", {}, "table_created")
    table = created["payload"]["table"]
    await ann.answered("join_table", {"table": table}, "joined")
    await ann.refused("queue_join", {}, "already_seated")
    await ann.answered("leave_table", {"table": table}, "left")
    # Queued, then sitting down at a table: out of the queue, told so.
    await ann.answered("queue_join", {}, "queue")
    mark = len(ann.frames)
    await ann.answered("join_table", {"table": table}, "joined")
    left = await ann.wait(is_queue("left"), after=mark)
    assert left["payload"] == {"state": "left", "ladder": "mcr", "casual": False}
    assert (await sizes(app))[("mcr", False)] == 0
    # Queued on one connection, seated from another: the next pass takes her out.
    await ann.answered("leave_table", {"table": table}, "left")
    other = await Wire.open(url_of(app))
    await other.answered("login", {"username": "ann", "password": "correct horse"}, "session")
    await ann.answered("queue_join", {}, "queue")
    mark = len(ann.frames)
    await other.answered("join_table", {"table": table}, "joined")
    await ann.wait(is_queue("left"), after=mark)
    assert (await sizes(app))[("mcr", False)] == 0


@pytest.mark.asyncio
async def test_a_player_who_left_her_match_in_play_is_told_where_she_sits(start: Start) -> None:
    """Leaving a match in play keeps her seat (the server plays it; she may come back), so
    the queue and a table of her own are refused ``already_seated``, naming her table
    (``table``) for a client to take her back to it, and so is ``join_table`` at another
    table; ``create_table`` used to make a table she could not sit at."""
    app = await start()
    wire = await guest(app)
    table = (await wire.answered("create_table", {}, "table_created"))["payload"]["table"]
    await wire.answered("join_table", {"table": table}, "joined")
    await add_bots(wire, table)
    await wire.wait(is_update(table))
    await wire.answered("leave_table", {"table": table}, "left")
    for kind, payload in (("queue_join", {"casual": True}), ("create_table", {})):
        refused = await wire.request(kind, payload)
        assert refused["payload"] == {
            "code": "already_seated",
            "reason": f"you already sit at table {table}",
            "table": table,
        }, kind
    assert app.lobby is not None and list(app.lobby.tables) == [table]
    other = await guest(app)  # a table of someone else's, to sit at: refused the same
    elsewhere = (await other.answered("create_table", {}, "table_created"))["payload"]["table"]
    refused = await wire.request("join_table", {"table": elsewhere})
    assert refused["payload"] == {
        "code": "already_seated",
        "reason": f"you already sit at table {table}",
        "table": table,
    }
    await wire.answered("join_table", {"table": table}, "joined")  # hers to come back to


@pytest.mark.asyncio
async def test_the_queue_api_lists_every_queue_with_its_waits(start: Start) -> None:
    app = await start(ladders="mcr, custom")
    queues = await queue_status(app)
    assert [(q["ladder"], q["casual"]) for q in queues] == [
        ("mcr", False),
        ("mcr", True),
        ("custom", False),
        ("custom", True),
    ]
    assert all(q["size"] == 0 and q["longest_wait_seconds"] == 0 for q in queues)
    ann = await player(app, "ann")
    await ann.answered("queue_join", {"ladder": "custom"}, "queue")
    await ann.wait(lambda f: is_queue("waiting")(f) and f["payload"]["waited_seconds"] >= 1)
    (custom,) = [
        q for q in await queue_status(app) if (q["ladder"], q["casual"]) == ("custom", False)
    ]
    assert custom["size"] == 1
    assert custom["longest_wait_seconds"] >= 1 and custom["median_wait_seconds"] >= 1


@pytest.mark.asyncio
async def test_the_python_client_queues_and_plays(start: Start) -> None:
    """``server.client.Client.queue_join``: four clients queue, are matched, play the
    match with bots and get its rating changes."""
    from engine.bots import make_bot  # noqa: PLC0415
    from server.client import Client, play  # noqa: PLC0415

    app = await start()
    clients = [await Client.connect(url_of(app), rate=None) for _ in range(4)]
    try:
        for i, client in enumerate(clients):
            await client.register(f"client_q{i}", "correct horse")
        watching = [  # waiting before the match is made: a message is seen once
            asyncio.create_task(
                client.wait_for(lambda m: m.type == "queue" and m.payload["state"] == "matched", 30)
            )
            for client in clients
        ]
        await asyncio.sleep(0)
        waiting = [await client.queue_join() for client in clients]
        assert all(w["state"] == "waiting" and not w["casual"] for w in waiting)
        matched = await asyncio.gather(*watching)
        table = matched[0].payload["table"]
        assert {m.payload["table"] for m in matched} == {table}
        ends = await asyncio.gather(*(play(c, table, make_bot("fast")) for c in clients))
        assert all(e is not None and len(e["ratings"]) == 4 for e in ends)
        assert (await clients[0].queue_leave())["state"] == "left"
    finally:
        for client in clients:
            await client.close()

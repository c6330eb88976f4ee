"""Rated tables through the real server: only registered accounts, no bots; a rated match
counts even when a player leaves; its end carries the rating changes, which the HTTP API,
the leaderboard and ``guobiao ladder recompute`` agree on; the farm limit on the same four."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from serverkit import StartServer

from engine.bots import make_bot
from server.app import App
from server.cli import main
from server.client import Client, ServerError, play

HttpGet = Callable[[int, str], Awaitable[tuple[int, str]]]
NAMES = ["ladder_ann", "ladder_bob", "ladder_cat", "ladder_dan"]
PASSWORD = "correct horse battery"


async def registered(app: App, names: list[str]) -> list[Client]:
    url = f"ws://127.0.0.1:{app.port}/ws"
    clients = []
    for name in names:
        client = await Client.connect(url, rate=None)
        await client.register(name, PASSWORD)
        clients.append(client)
    return clients


async def play_rated_match(clients: list[Client], leaver: int | None = None) -> list[Any]:
    """The four create and fill a rated one-hand table and play it with bots; ``leaver``
    leaves the table after the first update. Returns each client's ``match_end`` (None for
    the leaver)."""
    table = (await clients[0].create_table(rated=True, hands=1, turn_seconds=1)).table
    for client in clients:
        await client.join_table(table)

    async def seat(i: int, client: Client) -> Any:
        if i == leaver:
            await client.wait_for(lambda m: m.type == "update" and m.table == table)
            await client.leave_table(table)
            return None
        return await play(client, table, make_bot("default"))

    return list(await asyncio.gather(*(seat(i, c) for i, c in enumerate(clients))))


async def get_json(http_get: HttpGet, app: App, path: str) -> tuple[int, Any]:
    status, body = await http_get(app.port, path)
    return status, json.loads(body)


@pytest.mark.asyncio
async def test_a_rated_match_ends_with_its_rating_changes_everywhere(
    start_server: StartServer, http_get: HttpGet, capsys: pytest.CaptureFixture[str]
) -> None:
    app = await start_server()
    clients = await registered(app, NAMES)
    try:
        ends = await play_rated_match(clients)
    finally:
        for client in clients:
            await client.close()
    end = ends[0]
    assert end is not None and all(e == end for e in ends)
    ratings = end["ratings"]
    assert [r["name"] for r in ratings] == NAMES
    assert [r["player"] for r in ratings] == [0, 1, 2, 3]
    assert [r["score"] for r in ratings] == end["scores"]
    assert all((r["mu_before"], r["sigma_before"]) == (25.0, 25 / 3) for r in ratings)
    best = max(range(4), key=lambda i: end["scores"][i])
    assert (ratings[best]["rank"] == 1 and ratings[best]["mu_after"] > 25) or len(
        set(end["scores"])
    ) == 1

    status, match = await get_json(http_get, app, f"/api/matches/{end['match']}")
    assert status == 200 and match["rated"] is True
    assert [{k: c[k] for k in ratings[0]} for c in match["rating_changes"]] == ratings

    status, board = await get_json(http_get, app, "/api/ladders/mcr?provisional=all")
    assert status == 200 and board["total"] == 4
    assert sorted(p["name"] for p in board["players"]) == sorted(NAMES)
    assert all(p["provisional"] and p["matches"] == 1 for p in board["players"])
    shown = [p["rating"] for p in board["players"]]
    assert shown == sorted(shown, reverse=True)
    status, established = await get_json(http_get, app, "/api/ladders/mcr")
    assert (status, established["total"], established["players"]) == (200, 0, [])

    status, ann = await get_json(http_get, app, f"/api/ladders/mcr/players/{NAMES[0]}")
    assert status == 200 and ann["rating"]["rank"] is None  # provisional: not ranked yet
    assert [h["match"] for h in ann["history"]] == [end["match"]]
    assert ann["history"][0]["mu_after"] == ratings[0]["mu_after"]
    status, player = await get_json(http_get, app, f"/api/players/{NAMES[0]}")
    assert status == 200 and [r["ladder"] for r in player["ratings"]] == ["mcr"]
    status, ladders = await get_json(http_get, app, "/api/ladders")
    assert status == 200 and ladders["ladders"][0]["players"] == 4
    season_id = ladders["ladders"][0]["season"]["id"]
    status, season = await get_json(http_get, app, f"/api/seasons/{season_id}?provisional=all")
    assert status == 200 and season["total"] == 4 and season["season"]["rated_matches"] == 1

    url = app.config.database_url
    capsys.readouterr()
    assert (
        await asyncio.to_thread(main, ["ladder", "recompute", "--check", "--database-url", url])
        == 0
    )
    out = capsys.readouterr().out
    assert "1 rated matches" in out and "every stored figure equals the replay" in out


@pytest.mark.asyncio
async def test_leaving_a_rated_match_does_not_protect_a_rating(
    start_server: StartServer, http_get: HttpGet
) -> None:
    app = await start_server()
    clients = await registered(app, NAMES)
    try:
        ends = await play_rated_match(clients, leaver=2)
    finally:
        for client in clients:
            await client.close()
    end = ends[0]
    assert end is not None and ends[2] is None
    assert [r["name"] for r in end["ratings"]] == NAMES  # the leaver is rated too
    status, cat = await get_json(http_get, app, f"/api/ladders/mcr/players/{NAMES[2]}")
    assert status == 200 and cat["rating"]["matches"] == 1


@pytest.mark.asyncio
async def test_rated_tables_take_registered_accounts_only(start_server: StartServer) -> None:
    app = await start_server()
    url = f"ws://127.0.0.1:{app.port}/ws"
    async with (
        await Client.connect(url, rate=None) as owner,
        await Client.connect(url, rate=None) as guest,
    ):
        await owner.register("ladder_owner", PASSWORD)
        await guest.guest()
        table = (await owner.create_table(rated=True)).table
        await owner.join_table(table)
        with pytest.raises(ServerError) as refused:
            await guest.join_table(table)
        assert refused.value.code == "not_registered"
        with pytest.raises(ServerError) as refused:
            await owner.add_bots(table)
        assert refused.value.code == "rated_table"
        with pytest.raises(ServerError) as refused:
            await owner.create_table("custom", rated=True)  # custom has no ladder here
        assert refused.value.code == "no_such_ladder"
        listing = await owner.list_tables()
        assert [t["rated"] for t in listing if t["table"] == table] == [True]


@pytest.mark.asyncio
async def test_the_same_four_may_play_only_so_many_rated_matches_a_day(
    start_server: StartServer,
) -> None:
    app = await start_server(ladder={"same_four_per_day": 1})
    clients = await registered(app, NAMES)
    try:
        await play_rated_match(clients)
        table = (await clients[0].create_table(rated=True, hands=1)).table
        for client in clients[:3]:
            await client.join_table(table)
        with pytest.raises(ServerError) as refused:
            await clients[3].join_table(table)
        assert refused.value.code == "same_four_limit"
        assert "1" in refused.value.reason
        # Another fourth is welcome.
        async with await Client.connect(f"ws://127.0.0.1:{app.port}/ws", rate=None) as eve:
            await eve.register("ladder_eve", PASSWORD)
            assert await eve.join_table(table) == 3
    finally:
        for client in clients:
            await client.close()

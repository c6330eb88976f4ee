"""End to end: the real server in-process (the ``app_on_each_database`` fixture of conftest:
on SQLite, and on PostgreSQL when reachable), four network clients playing a whole match with
engine bots on the wire views (``server.client.play``), a spectator watching; then the match,
its 16 hands, the grades and the action log are checked through the HTTP API."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from engine.bots import make_bot
from server.app import App
from server.cli.replay import read_log
from server.client import Client, play

BOTS = ("default", "fast", "default", "fast")  # default bots claim: melds cross the wire

HttpGet = Callable[[int, str], Awaitable[tuple[int, str]]]  # the ``http_get`` fixture (conftest)


def check_hidden_information(frames: list[dict[str, Any]], me: int | None) -> int:
    """No update shows another player's concealed tiles or drawn tiles while the hand is
    in play (``me`` None: a spectator, who sees none). Returns the updates checked."""
    checked = 0
    for frame in frames:
        if frame["type"] != "update":
            continue
        payload = frame["payload"]
        view = payload.get("view")
        if view is None:
            continue
        checked += 1
        assert view.get("you") == me
        if view["phase"] != "over":
            for seat in view.get("seats", []):  # (protocol version 2: only in full updates)
                assert ("concealed" in seat) == (seat["player"] == me), (me, seat)
            assert "drawn" not in view or view["current"] == me
        for event in payload.get("events", []):
            if event["kind"] in ("deal", "draw") and event["player"] != me:
                assert "tiles" not in event and "tile" not in event, (me, event)
            if event["kind"] == "concealed_kong" and event["player"] != me:
                assert "tile" not in event, (me, event)
    return checked


@pytest.mark.asyncio
async def test_four_network_bots_play_a_whole_match(
    app_on_each_database: App, http_get: HttpGet
) -> None:
    app = app_on_each_database  # SQLite, then PostgreSQL (postgres marker)
    url = f"ws://127.0.0.1:{app.port}/ws"
    # Players 0 and 2 speak protocol version 1 (a full view in every update), 1 and 3 and
    # the spectator version 2 (seats followed from the events).
    clients = [
        await Client.connect(url, record=True, rate=None, versions=(1 + i % 2,)) for i in range(4)
    ]
    watcher = await Client.connect(url, record=True, rate=None)
    try:
        await clients[0].register("alice_e2e", "correct horse battery")
        await clients[1].register("bob_e2e", "correct horse battery")
        for client in (clients[2], clients[3], watcher):
            await client.guest()
        names = [c.username for c in clients]

        table = (await clients[0].create_table(turn_seconds=5)).table
        listed = await clients[1].list_tables()
        assert any(t["table"] == table and t["state"] == "waiting" for t in listed)
        await watcher.watch(table)
        seats = [await c.join_table(table, seat=i) for i, c in enumerate(clients)]
        assert seats == [0, 1, 2, 3]

        ends = await asyncio.wait_for(
            asyncio.gather(
                *(
                    play(c, table, make_bot(name, seed=i))
                    for i, (c, name) in enumerate(zip(clients, BOTS, strict=True))
                )
            ),
            timeout=50,
        )
        assert all(end is not None for end in ends)
        end = ends[0]
        assert end is not None
        assert all(e == end for e in ends)
        scores = end["scores"]
        assert len(scores) == 4 and sum(scores) == 0
        match_id = end["match"]
        if watcher.tables[table].match_end is None:
            await watcher.wait_for(lambda m: m.type == "match_end", timeout=5)
        assert watcher.tables[table].match_end == end

        # Nobody saw what it should not, and every hand's wall was committed and revealed.
        for player, client in enumerate(clients):
            assert check_hidden_information(client.frames, player) > 0
            state = client.tables[table]
            assert state.seat == player
            assert sorted(state.commits) == list(range(1, 17)) == sorted(state.reveals)
            for hand_no, reveal in state.reveals.items():
                digest = hashlib.sha256(
                    bytes.fromhex(reveal["salt"]) + reveal["seed"].to_bytes(8, "big")
                ).hexdigest()
                assert digest == reveal["commitment"] == state.commits[hand_no]
        assert check_hidden_information(watcher.frames, None) > 0

        # The match and its hands, through the HTTP API.
        status, body = await http_get(app.port, f"/api/matches/{match_id}")
        assert status == 200, body
        detail = json.loads(body)
        assert detail["finished"] and detail["final_scores"] == scores
        assert detail["seats"] == names
        hands = detail["hands"]
        assert [h["hand_no"] for h in hands] == list(range(1, 17))
        for hand in hands:
            assert sum(hand["deltas"]) == 0
        assert hands[-1]["scores"] == scores

        # Each player's grade and counts.
        for player, name in enumerate(names):
            status, body = await http_get(app.port, f"/api/players/{name}")
            assert status == 200, body
            summary = json.loads(body)
            assert summary["matches"] == 1 and summary["score"] == scores[player]
            assert isinstance(summary["grade"], (int, float))
            won = sum(1 for h in hands if h["winner"] == player)
            assert summary["hands_won"] == won
            assert summary["recent"][0]["match"] == match_id

        # The published action log replays to the same hands.
        status, body = await http_get(app.port, f"/api/matches/{match_id}/log")
        assert status == 200, body
        (logged,) = read_log(body.splitlines())
        replayed = logged.replay()
        assert replayed.scores == scores and len(replayed.records) == 16
    finally:
        for client in (*clients, watcher):
            await client.close()


def indicators_seen(frames: list[dict[str, Any]]) -> dict[int, str | None]:
    """The indicator shown in each hand's views (``hand_no`` -> tile), checking it never
    changes within a hand."""
    seen: dict[int, str | None] = {}
    for frame in frames:
        if frame["type"] != "update" or frame["payload"].get("view") is None:
            continue
        payload = frame["payload"]
        indicator = payload["view"]["indicator"]
        assert seen.setdefault(payload["hand_no"], indicator) == indicator
    return seen


@pytest.mark.asyncio
@pytest.mark.parametrize("preset", ["custom", "custom-flowers"])
async def test_network_bots_play_a_custom_match(app: App, http_get: HttpGet, preset: str) -> None:
    url = f"ws://127.0.0.1:{app.port}/ws"
    # Players 0 and 2 speak protocol version 1 (a full view in every update), 1 and 3 and
    # the spectator version 2 (seats followed from the events).
    clients = [
        await Client.connect(url, record=True, rate=None, versions=(1 + i % 2,)) for i in range(4)
    ]
    watcher = await Client.connect(url, record=True, rate=None)
    try:
        for client in (*clients, watcher):
            await client.guest()
        table = (await clients[0].create_table(rules=preset, turn_seconds=5)).table
        (listed,) = [t for t in await clients[1].list_tables() if t["table"] == table]
        rules = app.lobby.presets[preset] if app.lobby else None
        assert rules is not None and listed["rule_options"] == rules.to_dict()
        await watcher.watch(table)
        for seat, client in enumerate(clients):
            await client.join_table(table, seat=seat)
        ends = await asyncio.wait_for(
            asyncio.gather(
                *(play(c, table, make_bot("default", seed=i)) for i, c in enumerate(clients))
            ),
            timeout=120,
        )
        end = ends[0]
        assert end is not None and all(e == end for e in ends) and sum(end["scores"]) == 0
        if watcher.tables[table].match_end is None:
            await watcher.wait_for(lambda m: m.type == "match_end", timeout=5)

        # Nobody saw another's concealed or wild tiles; everyone saw the same indicator.
        shown = indicators_seen(watcher.frames)
        for player, client in enumerate(clients):
            assert check_hidden_information(client.frames, player) > 0
            assert indicators_seen(client.frames) == shown
        assert check_hidden_information(watcher.frames, None) > 0
        if rules.wilds.uses_indicator:
            assert shown and all(tile is not None for tile in shown.values())
        else:
            assert set(shown.values()) == {None}

        # The stored match: its rules, at least 16 hands, each zero-sum; the log replays.
        status, body = await http_get(app.port, f"/api/matches/{end['match']}")
        assert status == 200, body
        detail = json.loads(body)
        assert detail["rule_options"] == rules.to_dict()
        hands = detail["hands"]
        assert [h["hand_no"] for h in hands] == list(range(1, len(hands) + 1))
        assert len(hands) >= 16 and all(sum(h["deltas"]) == 0 for h in hands)
        status, body = await http_get(app.port, f"/api/matches/{end['match']}/log")
        assert status == 200, body
        (logged,) = read_log(body.splitlines())
        assert logged.rules == rules
        replayed = logged.replay()
        assert replayed.scores == end["scores"] and len(replayed.records) == len(hands)
    finally:
        for client in (*clients, watcher):
            await client.close()

"""Every limit docs/protocol.md states, checked against a running server, as the message
shapes are (test_protocol_docs.py): the bounds are read from the docs' own words, and the
server must take each bound and refuse one past it with the documented error code.

A limit whose words change in the docs must change here too (the test fails saying which it
no longer finds), so the docs cannot drift from the server.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from serverkit import StartServer

from server import errors
from server.app import App
from server.client import Client, ServerError

DOC = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")
TEXT = re.sub(r"\s+", " ", DOC)  # the docs' words, line breaks aside
DIRECTOR = "dl_director"
PASSWORD = "correct horse"
HttpGet = Callable[[int, str], Awaitable[tuple[int, str]]]


def bounds(pattern: str) -> tuple[int, int]:
    """The (low, high) the docs state where ``pattern`` (a regex with two groups) finds them."""
    found = re.search(pattern, TEXT)
    assert found, f"docs/protocol.md no longer says {pattern!r}: update this test with it"
    return int(found[1]), int(found[2])


def documented_code(code: str) -> str:
    assert f"| `{code}` |" in DOC, f"error code {code!r} is not in the docs' table"
    return code


@dataclass
class Rig:
    app: App
    director: Client
    fresh: Callable[[], str]

    @staticmethod
    async def ask(client: Client, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return dict((await client.request(kind, payload)).payload)

    async def refused(self, client: Client, kind: str, payload: dict[str, Any]) -> str:
        with pytest.raises(ServerError) as refused:
            await client.request(kind, payload)
        return refused.value.code


@pytest_asyncio.fixture
async def rig(start_server: StartServer) -> AsyncIterator[Rig]:
    app = await start_server(tournaments={"directors": DIRECTOR}, accounts={"register_burst": 1000})
    director = await Client.connect(f"ws://127.0.0.1:{app.port}/ws", rate=None)
    await director.register(DIRECTOR, PASSWORD)
    counter = itertools.count()
    try:
        yield Rig(app, director, lambda: f"dl{next(counter)}")
    finally:
        await director.close()


@pytest.mark.asyncio
async def test_usernames_and_passwords(rig: Rig) -> None:
    """'Usernames are 3-20 letters, digits, `_` or `-`; passwords at least 8 characters'."""
    low, high = bounds(r"Usernames are (\d+)-(\d+) letters, digits")
    shortest = int(re.search(r"passwords at least (\d+) characters", TEXT)[1])  # type: ignore[index]
    client = await Client.connect(f"ws://127.0.0.1:{rig.app.port}/ws", rate=None)
    try:
        for length in (low, high):
            name = (rig.fresh() + "x" * high)[:length]
            assert await rig.ask(client, "register", {"username": name, "password": PASSWORD})
        for length in (low - 1, high + 1):
            name = (rig.fresh() + "y" * high)[:length]
            code = await rig.refused(client, "register", {"username": name, "password": PASSWORD})
            assert code == documented_code("bad_username"), length
        assert await rig.ask(
            client, "register", {"username": rig.fresh(), "password": "p" * shortest}
        )
        code = await rig.refused(
            client, "register", {"username": rig.fresh(), "password": "p" * (shortest - 1)}
        )
        assert code == documented_code("weak_password")
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_a_tables_length_and_seats(rig: Rig) -> None:
    """'`hands` | the match's length in deals, 1..16' and '`seat` 0..3'."""
    low, high = bounds(r"`hands` \| the match's length in deals, (\d+)\.\.(\d+)")
    for hands in (low, high):
        made = await rig.ask(rig.director, "create_table", {"hands": hands})
        assert made["table"], hands
    for hands in (low - 1, high + 1):
        code = await rig.refused(rig.director, "create_table", {"hands": hands})
        assert code == documented_code("bad_message"), hands
    first, last = bounds(r"`join_table`: `seat` (\d+)\.\.(\d+)")
    table = (await rig.ask(rig.director, "create_table", {}))["table"]
    for seat in (first - 1, last + 1):
        code = await rig.refused(rig.director, "join_table", {"table": table, "seat": seat})
        assert code == documented_code("bad_message"), seat
    joined = await rig.ask(rig.director, "join_table", {"table": table, "seat": last})
    assert joined["seat"] == last


@pytest.mark.asyncio
async def test_a_tournaments_settings(rig: Rig) -> None:
    """tournament_create's name and settings, and tournament_add_players' list."""
    name_low, name_high = bounds(r"`name` \(required: (\d+)\.\.(\d+) characters once trimmed")
    ranges = {
        "sessions": bounds(r"`sessions` \((\d+)\.\.(\d+),"),
        "hands": bounds(r"`hands` per session's match \((\d+)\.\.(\d+),"),
        "time_cap_minutes": bounds(r"`time_cap_minutes` per session \((\d+)\.\.(\d+),"),
        "spectator_delay_seconds": bounds(r"`spectator_delay_seconds` \((\d+)\.\.(\d+),"),
    }
    bad = documented_code("bad_message")
    for length in (name_low, name_high):
        made = await rig.ask(rig.director, "tournament_create", {"name": "N" * length})
        assert made["name"] == "N" * length
    for name in ("", " " * 3, "N" * (name_high + 1)):
        assert await rig.refused(rig.director, "tournament_create", {"name": name}) == bad
    for key, (low, high) in ranges.items():
        for value in (low, high):
            made = await rig.ask(rig.director, "tournament_create", {"name": key, key: value})
            assert made["settings"][key] == value, key
        for value in (low - 1, high + 1):
            code = await rig.refused(rig.director, "tournament_create", {"name": key, key: value})
            assert code == bad, (key, value)
    low, high = bounds(r"`tournament_add_players`: registers accounts \((\d+)\.\.(\d+) names")
    tid = (await rig.ask(rig.director, "tournament_create", {"name": "players"}))["id"]
    for count in (low - 1, high + 1):
        names = [DIRECTOR] * count
        code = await rig.refused(
            rig.director, "tournament_add_players", {"tournament": tid, "players": names}
        )
        assert code == bad, count
    added = await rig.ask(
        rig.director, "tournament_add_players", {"tournament": tid, "players": [DIRECTOR] * low}
    )
    assert added


@pytest.mark.asyncio
async def test_http_ids_and_pages(rig: Rig, http_get: HttpGet) -> None:
    """A match id '1..2147483647 (400 for anything else, 404 for no such match', the
    leaderboard's '?offset=0&limit=50` (at most 100)' and its '`?q=` a name prefix'."""
    low, high = bounds(r"`\{id\}` is a whole number (\d+)\.\.(\d+) \(400 for anything else")
    port = rig.app.port
    for match_id, status in ((low - 1, 400), (high + 1, 400), (low, 404), (high, 404)):
        got, body = await http_get(port, f"/api/matches/{match_id}")
        assert got == status and json.loads(body)["error"], (match_id, got, body)
    most = int(re.search(r"`\?offset=0&limit=50` \(at most (\d+)\)", TEXT)[1])  # type: ignore[index]
    got, _ = await http_get(port, f"/api/ladders/mcr?limit={most}")
    assert got == 200
    got, body = await http_get(port, f"/api/ladders/mcr?limit={most + 1}")
    assert got == 400 and "limit" in json.loads(body)["error"]


def test_every_code_the_docs_refuse_with_is_the_servers() -> None:
    """Wherever the docs say a request is 'refused with `CODE`', CODE is one the server
    sends (its registry, ``server.errors.CODES``, which the error table lists)."""
    said = set(re.findall(r"refused with `([a-z_]+)`", TEXT))
    assert len(said) >= 10  # (the docs say it of most refusals)
    assert said <= set(errors.CODES), sorted(said - set(errors.CODES))

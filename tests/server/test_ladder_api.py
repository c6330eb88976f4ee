"""The ladder's HTTP API and ``guobiao ladder`` on a server whose database was filled through
the real ``Store`` (rated matches over two seasons): pages, filters, search, seasons, a
player's history, bad queries; the operator's commands; rated tables across a restart."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import pytest_asyncio
from serverkit import StartServer

from server.app import App
from server.cli import main
from server.db.store import Store
from server.ladder.rating import RatingParams, soft_reset
from server.ladder.store import SeasonPolicy, foursome_key

HttpGet = Callable[[int, str], Awaitable[tuple[int, str]]]
T0 = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)
SALT = "00" * 16


async def fill(store: Store, players: int = 14, matches: int = 60) -> list[str]:
    """Rated matches among ``players`` accounts, a new season after two thirds of them."""
    names = [f"rank{i:02d}" for i in range(players)]
    for name in names:
        await store.create_player(name, "x" * 60, False, now=T0)
    rng = random.Random(5)
    at = T0
    for n in range(matches):
        if n == matches * 2 // 3:
            await store.ladder.new_season("mcr", at, "Winter")
        seats = rng.sample(names[: players - 2], 4)  # the last two never play
        result = [rng.choice([-40, -16, 0, 8, 32, 96]) for _ in range(3)]
        result.append(-sum(result))
        match_id = await store.create_match("t1", "mcr", n, SALT, seats, at, rated=True)
        await store.finish_match(match_id, result, at + timedelta(minutes=40), ["10.0.0.1"] * 4)
        at += timedelta(hours=2)
    return names


@pytest_asyncio.fixture
async def filled(start_server: StartServer) -> App:
    app = await start_server(ladder={"provisional_matches": 5})
    await fill(app.store)
    return app


async def get(http_get: HttpGet, app: App, path: str) -> tuple[int, Any]:
    status, body = await http_get(app.port, path)
    return status, json.loads(body)


@pytest.mark.asyncio
async def test_leaderboard_pages_filters_and_search(filled: App, http_get: HttpGet) -> None:
    status, everyone = await get(http_get, filled, "/api/ladders/mcr?provisional=all&limit=100")
    assert status == 200 and everyone["season"]["name"] == "Winter"
    rows = everyone["players"]
    assert len(rows) == everyone["total"] > 4
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert [r["rating"] for r in rows] == sorted((r["rating"] for r in rows), reverse=True)
    status, established = await get(http_get, filled, "/api/ladders/mcr")
    assert set(established) == set(BOARD_FIELDS)
    assert status == 200
    assert all(not r["provisional"] and r["matches"] >= 5 for r in established["players"])
    status, provisional = await get(http_get, filled, "/api/ladders/mcr?provisional=true")
    assert all(r["provisional"] for r in provisional["players"])
    assert established["total"] + provisional["total"] == everyone["total"]
    # Paging: two pages of 3 are the first 6 rows.
    status, one = await get(http_get, filled, "/api/ladders/mcr?provisional=all&limit=3")
    status, two = await get(http_get, filled, "/api/ladders/mcr?provisional=all&limit=3&offset=3")
    assert [r["name"] for r in one["players"] + two["players"]] == [r["name"] for r in rows[:6]]
    assert [r["rank"] for r in two["players"]] == [4, 5, 6]
    # Search keeps each row's rank in the whole list.
    target = rows[4]
    status, found = await get(
        http_get, filled, f"/api/ladders/mcr?provisional=all&q={target['name'].upper()}"
    )
    assert status == 200 and [(r["name"], r["rank"]) for r in found["players"]] == [
        (target["name"], 5)
    ]
    assert found["total"] == 1  # what the search found, not the whole list
    status, some = await get(http_get, filled, "/api/ladders/mcr?provisional=all&q=rank0")
    assert some["total"] == len(some["players"]) == sum(r["name"].startswith("rank0") for r in rows)


@pytest.mark.asyncio
async def test_seasons_and_a_players_history(filled: App, http_get: HttpGet) -> None:
    status, seasons = await get(http_get, filled, "/api/seasons?ladder=mcr")
    assert status == 200 and [s["number"] for s in seasons["seasons"]] == [1, 2]
    first, second = seasons["seasons"]
    assert first["ends_at"] == second["starts_at"] and second["ends_at"] is None
    assert first["rated_matches"] + second["rated_matches"] == 60
    status, past = await get(http_get, filled, f"/api/seasons/{first['id']}?provisional=all")
    assert status == 200 and past["season"]["number"] == 1 and past["total"] > 0
    status, by_number = await get(http_get, filled, "/api/ladders/mcr?season=1&provisional=all")
    assert by_number["players"] == past["players"]

    name = past["players"][0]["name"]
    status, player = await get(http_get, filled, f"/api/ladders/mcr/players/{name}?season=1")
    assert status == 200 and player["season"]["number"] == 1
    history = player["history"]
    assert len(history) == player["rating"]["matches"]
    for a, b in itertools.pairwise(history):  # each change starts where one ended
        assert (b["mu_before"], b["sigma_before"]) == (a["mu_after"], a["sigma_after"])
    assert history[-1]["mu_after"] == player["rating"]["mu"]
    assert next(s["season"] for s in player["seasons"]) == 1
    status, current = await get(http_get, filled, f"/api/ladders/mcr/players/{name}")
    assert current["season"]["number"] == 2
    status, ladders = await get(http_get, filled, "/api/ladders")
    assert ladders["ladders"][0]["season"]["number"] == 2


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        ("/api/ladders/riichi", 404, "no ladder 'riichi'"),
        ("/api/ladders/mcr?season=9", 404, "no season 9"),
        ("/api/ladders/mcr?limit=0", 400, "limit must be"),
        ("/api/ladders/mcr?limit=101", 400, "limit must be"),
        ("/api/ladders/mcr?offset=-1", 400, "offset must be"),
        ("/api/ladders/mcr?provisional=maybe", 400, "provisional must be"),
        ("/api/ladders/mcr?q=" + "x" * 40, 400, "at most 32"),
        ("/api/ladders/mcr/players/nobody", 404, "no player 'nobody'"),
        ("/api/seasons/abc", 400, "a season id must be a whole number"),
        ("/api/ladders/mcr?q=%00", 400, "parameter 'q' holds a control character (U+0000)"),
        ("/api/ladders/mcr?q=%FF%FE", 400, "parameter 'q' is not UTF-8"),
        ("/api/ladders/mcr?offset=1&offset=2", 400, "parameter 'offset' is given more than once"),
        ("/api/seasons/99", 404, "no season 99"),
        ("/api/seasons?ladder=riichi", 404, "no ladder"),
        ("/api/ladders/mcr/whatever", 404, "nothing at"),
    ],
)
async def test_bad_queries_say_what_is_wrong(
    filled: App, http_get: HttpGet, path: str, status: int, words: str
) -> None:
    got, body = await get(http_get, filled, path)
    assert got == status and words in body["error"], body


BOARD_FIELDS = (
    *("ladder", "season", "provisional", "provisional_matches", "search", "total"),
    *("offset", "limit", "players"),
)


@pytest.mark.asyncio
async def test_an_empty_ladder(app: App, http_get: HttpGet) -> None:
    status, ladders = await get(http_get, app, "/api/ladders")
    assert status == 200 and ladders["ladders"][0]["season"] is None
    status, board = await get(http_get, app, "/api/ladders/mcr")
    assert (status, board["total"], board["players"]) == (200, 0, [])
    # The fields a season's page has (docs/protocol.md), the threshold among them.
    assert set(board) == set(BOARD_FIELDS) and board["season"] is None
    assert board["provisional_matches"] == app.config.ladder.provisional_matches


@pytest.mark.asyncio
async def test_seasons_roll_on_by_themselves_with_season_days(store: Store) -> None:
    store.policy = SeasonPolicy(season_days=30)
    names = ["roll_a", "roll_b", "roll_c", "roll_d"]
    for name in names:
        await store.create_player(name, "x" * 60, False, now=T0)
    for day in (0, 10, 75):  # season 1 (two matches); 75 days on: season 3, the 2nd skipped
        at = T0 + timedelta(days=day)
        match_id = await store.create_match("t1", "mcr", day, SALT, names, at, rated=True)
        await store.finish_match(match_id, [30, 10, -10, -30], at)
    seasons = await store.ladder.seasons("mcr")
    assert [(s["number"], s["rated_matches"]) for s in seasons] == [(1, 2), (2, 1)]
    assert seasons[0]["ends_at"] == seasons[0]["starts_at"].replace("11-01", "12-01")
    assert seasons[1]["starts_at"] == "2026-12-31T10:00:00Z"  # 60 days after the first start
    player = await store.ladder.player("mcr", "roll_a")
    assert player is not None and player["history"][0]["mu_before"] > 25  # the soft reset
    assert (await store.ladder.recompute()).equal
    # What the queue matches on: the current rating; after a new season its soft reset.
    current = await store.ladder.skill("mcr", "roll_a")
    assert current.mu == player["rating"]["mu"]
    await store.ladder.new_season("mcr", T0 + timedelta(days=100))
    assert await store.ladder.skill("mcr", "roll_a") == soft_reset(current, RatingParams())
    assert await store.ladder.skill("mcr", "nobody") == RatingParams().initial


@pytest.mark.asyncio
async def test_the_farm_report(store: Store) -> None:
    names = ["farm_a", "farm_b", "farm_c", "farm_d"]
    for name in names:
        await store.create_player(name, "x" * 60, False, now=T0)
    for n in range(3):
        match_id = await store.create_match("t1", "mcr", n, SALT, names, T0, rated=True)
        addresses = ["10.1.1.1", "10.1.1.1", "10.1.1.1", f"10.9.9.{n}"]
        await store.finish_match(match_id, [30, 10, -10, -30], T0, addresses)
    [group] = await store.ladder.farms(T0 - timedelta(days=1), 3)
    assert group["matches"] == 3 and group["shared_addresses"] == ["10.1.1.1"]
    assert [a["name"] for a in group["accounts"]] == names
    assert group["accounts"][3]["addresses"] == ["10.9.9.0", "10.9.9.1", "10.9.9.2"]
    assert await store.ladder.farms(T0 - timedelta(days=1), 4) == []
    ids = [int(i) for i in foursome_key([4, 2, 3, 1]).split(",")]
    assert ids == [1, 2, 3, 4]
    assert await store.ladder.same_four_names(names, T0 - timedelta(hours=1)) == 3
    assert await store.ladder.same_four_names(names, T0 + timedelta(hours=1)) == 0


HUGE = str(10**23)  # past the database's integers (2**63 - 1)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["board", "mcr", "--season", HUGE], "--season: expected a whole number of at most"),
        (["board", "mcr", "--season", "0"], "--season: expected a whole number of at least 1"),
        (["board", "mcr", "--offset", HUGE], "--offset: expected a whole number of at most"),
        (["board", "mcr", "--offset", "-1"], "--offset: expected a whole number of at least 0"),
        (["recompute", "--ladder", "mcr", "--season", HUGE], "--season: expected a whole"),
        (["farms", "--at-least", HUGE], "--at-least: expected a whole number of at most"),
        (["farms", "--at-least", "-1"], "--at-least: expected a whole number of at least 1"),
        (["farms", "--days", "100000000000000"], "--days: expected a positive number of"),
        (["farms", "--days", "-1"], "--days: expected a positive number of days"),
        (["farms", "--days", "nan"], "--days: expected a positive number of days"),
    ],
)  # fmt: skip
def test_a_number_out_of_range_is_a_usage_error_naming_the_option(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not ``OverflowError`` from the driver or ``timedelta``, nor a negative count taken."""
    with pytest.raises(SystemExit) as exited:
        main(["ladder", *argv, "--data-dir", "/nowhere"])
    assert exited.value.code == 2
    assert f"argument {words}" in capsys.readouterr().err


@pytest.mark.asyncio
async def test_the_operators_commands(filled: App, capsys: pytest.CaptureFixture[str]) -> None:
    url = ["--database-url", filled.config.database_url]

    async def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        status = await asyncio.to_thread(main, ["ladder", *args, *url])
        out = capsys.readouterr()
        return status, out.out, out.err

    status, out, _ = await run("recompute")
    assert status == 0 and "2 season(s), 60 rated matches" in out and "equals" in out
    status, out, _ = await run("recompute", "--ladder", "mcr", "--season", "1", "--check")
    assert status == 0 and "1 season(s)" in out
    status, _, err = await run("recompute", "--season", "1")
    assert status == 1 and "--season needs --ladder" in err
    status, _, err = await run("recompute", "--ladder", "mcr", "--season", "7")
    assert status == 1 and "no season 7" in err
    status, out, _ = await run("seasons")
    assert status == 0 and "Winter" in out and "Season 1" in out
    status, out, _ = await run("board", "mcr", "--provisional", "all", "--limit", "3")
    assert status == 0 and len(out.strip().splitlines()) == 5  # title, header, 3 rows
    status, out, _ = await run("board", "mcr", "--json")
    assert status == 0 and json.loads(out)["ladder"] == "mcr"
    status, out, _ = await run("farms", "--at-least", "2", "--days", "90")
    assert status == 0 and "shared addresses: 10.0.0.1" in out
    status, _, err = await run("board", "riichi")
    assert status == 1 and "no ladder 'riichi'" in err
    status, out, _ = await run("season", "new", "mcr", "--name", "Spring")
    assert status == 0 and "Spring (season 3) starts now" in out


@pytest.mark.asyncio
async def test_a_rated_table_stays_rated_across_a_restart(start_server: StartServer) -> None:
    from server.client import Client  # noqa: PLC0415

    app = await start_server(database="restart.db")
    async with await Client.connect(f"ws://127.0.0.1:{app.port}/ws", rate=None) as owner:
        await owner.register("restart_owner", "correct horse battery")
        table = (await owner.create_table(rated=True)).table
    await app.stop()
    again = await start_server(database="restart.db")
    async with await Client.connect(f"ws://127.0.0.1:{again.port}/ws", rate=None) as owner:
        await owner.login("restart_owner", "correct horse battery")
        listing = await owner.list_tables()
    assert [t["rated"] for t in listing if t["table"] == table] == [True]

"""The ladder in a real Chromium against a real ``guobiao serve`` (tests/web/conftest.py: a
player is ranked after 2 rated matches there, ``[ladder] provisional_matches = 2``).

The ladder is seeded as players make it: accounts registered over the protocol play rated
one-hand matches at rated tables, each seat an engine bot on its own connection
(``server.client.play``). Then the pages are used as a person does: the leaderboard (its
order, ranks and links, the search, the provisional filter), a player's chart and history,
a match's rating changes, a rated match played in the page to its end, a phone in Chinese.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import time
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any, Protocol

import pytest
from browserkit import PASSWORD, OpenPage, connected, new_name, play_until, register
from playwright.async_api import Page, expect

from engine.bots import make_bot
from server.client import Client, play

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]  # slow: minutes in all, started first

SCREENSHOT = Path(__file__).resolve().parent.parent.parent / "docs" / "images" / "ladder.png"
CHANGE = re.compile(r"-?[\d,]+\.\d → -?[\d,]+\.\d \([+\u2212\u00b1]\d+\.\d\)")


def figure(value: float, digits: int) -> str:
    """``value`` as the page's ``Intl.NumberFormat`` (en-US) shows it: the shortest decimal
    that reads back as the float, rounded half away from zero, grouped by thousands. Python's
    own format rounds the float's exact binary value instead: a grade of 1.525 (1.52499...)
    is "1.52" there and "1.53" on the page."""
    exact = Decimal(repr(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return f"{exact:,}"


class WebServer(Protocol):
    """The ``web_server`` fixture (tests/web/conftest.py): where ``guobiao serve`` listens."""

    @property
    def port(self) -> int: ...


@dataclass(frozen=True)
class Seed:
    """The ladder the seeding made: the accounts (sharing ``prefix``) and the rated matches
    each played."""

    prefix: str
    matches: dict[str, int]  # name -> rated matches played
    match_ids: list[int]


_seed: Seed | None = None


def socket_url(web_server: WebServer) -> str:
    return f"ws://127.0.0.1:{web_server.port}/ws"


async def registered(web_server: WebServer, names: list[str]) -> list[Client]:
    """A connection per name, each a new registered account."""
    clients = [await Client.connect(socket_url(web_server)) for _ in names]
    for client, name in zip(clients, names, strict=True):
        await client.register(name, PASSWORD)
    return clients


async def bots_play(clients: list[Client], table: str) -> list[dict[str, Any] | None]:
    """Every client plays ``table`` with the default engine bot until its match ends."""
    bot = make_bot("default")
    ends = await asyncio.wait_for(asyncio.gather(*(play(c, table, bot) for c in clients)), 120)
    return list(ends)


async def rated_match(clients: list[Client]) -> int:
    """A rated one-hand match of these four connections; its id."""
    reply = await clients[0].request("create_table", {"rules": "mcr", "hands": 1, "rated": True})
    table = str(reply.payload["table"])
    for seat, client in enumerate(clients):
        await client.join_table(table, seat)
    ends = await bots_play(clients, table)
    assert all(end is not None for end in ends), ends
    first = ends[0]
    assert first is not None and len(first["ratings"]) == 4
    return int(first["match"])


async def seeded(web_server: WebServer) -> Seed:
    """The ladder of this test run (made once): a, b, c play three rated matches, d two
    (all ranked), e one (provisional)."""
    global _seed  # noqa: PLW0603 -- made once for the module's tests: it takes seconds
    if _seed is not None:
        return _seed
    prefix = f"ld{secrets.token_hex(2)}"
    names = {k: f"{prefix}{k}" for k in "abcde"}
    clients = await registered(web_server, list(names.values()))
    by_name = dict(zip(names.values(), clients, strict=True))
    started = time.monotonic()
    try:
        four = [by_name[names[k]] for k in "abcd"]
        other = [by_name[names[k]] for k in "abce"]
        ids = [await rated_match(four), await rated_match(four), await rated_match(other)]
    finally:
        for client in clients:
            await client.close()
    print(f"\nthree rated one-hand matches of network bots in {time.monotonic() - started:.1f} s")
    played = {names["a"]: 3, names["b"]: 3, names["c"]: 3, names["d"]: 2, names["e"]: 1}
    _seed = Seed(prefix, played, ids)
    return _seed


async def api(page: Page, path: str) -> Any:
    """The server's JSON at ``path``, fetched by the page."""
    return json.loads(await page.evaluate(f"fetch({path!r}).then((r) => r.text())"))


async def board_rows(page: Page) -> list[tuple[str, str]]:
    """(rank, name) of each row of the leaderboard on screen."""
    rows = page.locator(".leaderboard tbody tr")
    ranks = await rows.locator("td:nth-child(1)").all_inner_texts()
    names = await rows.locator("td:nth-child(2) a").all_inner_texts()
    return list(zip(ranks, names, strict=True))


async def fits(page: Page) -> None:
    widths = await page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    assert widths[0] <= widths[1], f"{page.url} is {widths[0]} px wide on a {widths[1]} px screen"


async def test_the_leaderboard_ranks_links_search_and_filter(
    open_page: OpenPage, web_server: WebServer
) -> None:
    seed = await seeded(web_server)
    page = await open_page("/")
    await connected(page)
    await page.get_by_role("link", name="Ladder", exact=True).click()
    await expect(page.get_by_role("heading", level=1)).to_have_text(
        "Ladder: MCR (Chinese Official)"
    )
    await expect(page.locator(".season-line")).to_contain_text("Season 1")
    await page.wait_for_selector(".leaderboard tbody tr")

    # In the server's order, ranked 1, 2, 3...: the page shows what the API says.
    expected = await api(page, "/api/ladders/mcr?limit=50")
    rows = await board_rows(page)
    assert rows == [(str(p["rank"]), p["name"]) for p in expected["players"]]
    assert [int(rank) for rank, _ in rows] == list(range(1, len(rows) + 1))
    ranked = [name for _, name in rows if name.startswith(seed.prefix)]
    assert sorted(ranked) == sorted(n for n, k in seed.matches.items() if k >= 2)
    ratings = [p["rating"] for p in expected["players"]]
    assert ratings == sorted(ratings, reverse=True)
    first = expected["players"][0]
    cells = await page.locator(".leaderboard tbody tr").first.locator("td").all_inner_texts()
    assert cells[2] == figure(first["rating"], 1) and cells[3] == str(first["matches"])
    assert cells[4] == figure(first["grade"], 2) and re.fullmatch(r"\d{4}-\d\d-\d\d", cells[5])
    assert await page.locator(".pager-text").inner_text() == (
        f"Players 1–{len(rows)} of {expected['total']}"
    )
    assert await page.get_by_role("button", name="Next page").is_disabled()

    # The search keeps each player's rank; the filter shows the provisional one.
    await page.get_by_label("Search by name").fill(seed.prefix)
    await expect(page.locator(".leaderboard tbody tr")).to_have_count(4)
    found = await board_rows(page)
    assert [name for _, name in found] == ranked
    assert all((rank, name) in rows for rank, name in found)
    await page.get_by_label("Show").select_option(label="Provisional players")
    await expect(page.locator(".leaderboard tbody tr")).to_have_count(1)
    provisional = next(n for n, k in seed.matches.items() if k < 2)
    row = page.locator(".leaderboard tbody tr")
    await expect(row.locator("td:nth-child(2)")).to_have_text(f"{provisional} provisional")
    await page.get_by_label("Show").select_option(label="Everyone")
    await expect(page.locator(".leaderboard tbody tr")).to_have_count(5)
    await page.get_by_label("Search by name").fill(f"{seed.prefix}-nobody")
    await expect(page.locator(".ladder-controls ~ .empty")).to_have_text(
        f"No player whose name starts with “{seed.prefix}-nobody”."
    )

    await page.get_by_label("Search by name").fill(seed.prefix)
    await page.get_by_role("link", name=ranked[0], exact=True).click()
    await expect(page.get_by_role("heading", level=1)).to_have_text(ranked[0])
    if os.environ.get("GUOBIAO_SCREENSHOTS") == "1":
        await page.goto("/#/ladder")
        await page.wait_for_selector(".leaderboard tbody tr")
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(SCREENSHOT))


async def test_the_player_page_charts_the_history_and_a_point_opens_its_match(
    open_page: OpenPage, web_server: WebServer
) -> None:
    seed = await seeded(web_server)
    name = f"{seed.prefix}a"
    page = await open_page(f"/#/player/{name}")
    section = page.locator(".ladder-rating")
    await expect(section.locator("h2")).to_have_text("Ladder: MCR (Chinese Official), season 1")
    history = (await api(page, f"/api/ladders/mcr/players/{name}"))["history"]
    assert len(history) == seed.matches[name] == 3
    points = section.locator("svg a.point")
    await expect(points).to_have_count(3)
    chart = section.locator("svg")
    assert await chart.locator("title").first.text_content() == (
        f"Rating of {name} on the MCR (Chinese Official) ladder, season 1"
    )
    assert "3 rated matches" in (await chart.locator("desc").text_content() or "")
    tips = [await points.nth(i).locator("title").text_content() or "" for i in range(3)]
    for number, (tip, change) in enumerate(zip(tips, history, strict=True), 1):
        assert tip.startswith(f"Match {number} (#{change['match']}): "), tip
        assert CHANGE.search(tip), tip
    rank = (await api(page, f"/api/players/{name}"))["ratings"][0]["rank"]
    stats = await section.locator(".stat dd").all_inner_texts()
    assert stats[1] == f"#{rank}" and stats[2] == "3"
    rows = section.locator(".rating-changes tbody tr")
    await expect(rows).to_have_count(3)
    newest = history[-1]
    assert await rows.first.locator("td").first.inner_text() == f"#{newest['match']}"
    before_after = await rows.first.locator("td:nth-child(4)").inner_text()
    assert CHANGE.fullmatch(before_after), before_after
    assert before_after.startswith(
        f"{figure(newest['rating_before'], 1)} → {figure(newest['rating_after'], 1)} ("
    )

    # A tap on the chart's last point: its match, with a line per player.
    await points.nth(2).click()
    await page.wait_for_url(re.compile(rf".*#/match/{newest['match']}(/.*)?$"))
    table = page.locator(".match-ratings tbody tr")
    await expect(table).to_have_count(4)
    detail = await api(page, f"/api/matches/{newest['match']}")
    assert detail["rated"] is True
    lines = [await table.nth(i).locator("td").all_inner_texts() for i in range(4)]
    ours = next(line for line in lines if line[1] == name)
    assert ours[0] == str(newest["rank"])
    assert CHANGE.fullmatch(ours[3]), ours
    assert sorted(int(line[0]) for line in lines) == sorted(
        c["rank"] for c in detail["rating_changes"]
    )

    # A provisional player says how far from ranked.
    page = await open_page(f"/#/player/{seed.prefix}e")
    await expect(page.locator(".ladder-rating .stat dd").nth(1)).to_have_text(
        "Provisional (1 of 2 matches)"
    )
    await expect(page.locator(".ladder-rating svg a.point")).to_have_count(1)


async def test_a_rated_match_played_in_the_page_ends_with_the_rating_changes(
    open_page: OpenPage, web_server: WebServer
) -> None:
    guest = await open_page("/#/lobby")
    await guest.get_by_role("button", name="Play as a guest").click()
    rated_box = guest.get_by_label("Rated (a ladder match: registered players only, no bots)")
    await expect(rated_box).to_be_disabled()
    await expect(guest.locator("#rated-why")).to_contain_text("Rated tables are for registered")
    await expect(guest.get_by_role("button", name="Find a rated match")).to_be_disabled()

    page = await open_page("/")
    me = new_name("lr")
    await register(page, me)
    await page.get_by_role("link", name="Lobby", exact=True).click()
    await page.get_by_label("Length of the match").select_option("1")
    await page.get_by_label("Rated (a ladder match").check()
    await page.get_by_role("button", name="Create the table").click()
    heading = page.locator("#my-table-title")
    await expect(heading).to_contain_text("Your table: ")
    table = (await heading.inner_text()).rsplit(" ", 1)[1]
    mine = page.locator(".my-table")
    await expect(mine.locator(".badge.rated")).to_have_text("Rated")
    assert await mine.get_by_role("button", name="Add bots").count() == 0

    others = await registered(web_server, [new_name("lr") for _ in range(3)])
    try:
        for client in others:
            await client.join_table(table)
        await page.wait_for_url(re.compile(rf".*#/table/{table}$"))
        playing = asyncio.ensure_future(bots_play(others, table))
        clicks = await play_until(page, ".match-end .final", seconds=120)
        ends = await playing
    finally:
        for client in others:
            await client.close()
    print(f"\na rated one-hand match, the page's seat by {clicks} clicks")
    end = ends[0]
    assert end is not None and len(end["ratings"]) == 4
    cells = page.locator(".match-end .final .rating-change")
    await expect(cells).to_have_count(4)
    texts = await cells.all_inner_texts()
    assert all(CHANGE.search(text) for text in texts), texts
    row = page.locator(".match-end .final tr", has=page.get_by_role("link", name=me, exact=True))
    change = next(c for c in end["ratings"] if c["name"] == me)
    shown = await row.locator(".rating-change").inner_text()
    assert f"{figure(change['rating_before'], 1)} → {figure(change['rating_after'], 1)}" in shown


async def test_the_ladder_pages_on_a_phone_in_chinese(
    open_page: OpenPage, web_server: WebServer
) -> None:
    seed = await seeded(web_server)
    page = await open_page("/#/ladder", phone=True, lang="zh")
    await expect(page.get_by_role("heading", level=1)).to_have_text("天梯：国标麻将")
    await page.wait_for_selector(".leaderboard tbody tr")
    heads = await page.locator(".leaderboard thead th").all_inner_texts()
    assert heads == ["名次", "玩家", "积分", "对局数", "级别", "最近对局"]
    await expect(page.get_by_label("按名字搜索")).to_be_visible()
    await expect(page.locator(".season-line")).to_contain_text("第 1 赛季")
    words = set(re.findall(r"[A-Za-z][A-Za-z0-9_-]+", await page.locator("main").inner_text()))
    names = set(await page.locator(".leaderboard tbody a").all_inner_texts())
    assert words <= names, f"English left on the Chinese leaderboard: {words - names}"
    await fits(page)
    await page.goto(f"/#/player/{seed.prefix}b")
    await expect(page.locator(".ladder-rating svg a.point")).to_have_count(3)
    await expect(page.locator(".ladder-rating h2")).to_have_text("天梯：国标麻将，第 1 赛季")
    await fits(page)
    await page.goto(f"/#/match/{seed.match_ids[0]}")
    await expect(page.locator(".match-ratings tbody tr")).to_have_count(4)
    await expect(page.locator(".match-ratings h2")).to_have_text("积分变化")
    await fits(page)
    await page.goto("/")
    await expect(page.get_by_role("button", name="快速休闲局")).to_be_visible()
    await fits(page)


async def test_the_queue_after_a_match_left_in_play_names_its_table(open_page: OpenPage) -> None:
    """Play now, then Home: the bots' match goes on with the seat hers (played for her), so
    "Quick casual match" is refused; the box names that table, in either language, and
    leads back to it (it used to say only "another table")."""
    page = await open_page("/")
    await connected(page)
    await page.get_by_role("button", name="Play now against three bots").click()
    await page.wait_for_selector(".board", timeout=15_000)
    table = page.url.rsplit("/", 1)[1]
    await page.get_by_role("link", name="Home", exact=True).click()
    await page.get_by_role("button", name="Quick casual match").click()
    alert = page.locator(".queue [role=alert]")
    await expect(alert).to_have_text(
        f"You already sit at table {table}: one table at a time, "
        "and a match you left keeps your seat until it ends."
    )
    await page.get_by_role("button", name="中文").click()
    await page.get_by_role("button", name="快速休闲局").click()
    await expect(alert).to_have_text(
        f"你已在牌桌 {table} 入座：每次只能坐一张牌桌，离开的对局在结束前仍保留你的座位。"
    )
    await page.get_by_role("link", name=f"前往牌桌 {table}").click()
    await page.wait_for_url(re.compile(rf".*#/table/{table}$"))
    await page.wait_for_selector(".board")


async def test_the_leaderboard_pages_fifty_players_at_a_time(
    open_page: OpenPage, web_server: WebServer
) -> None:
    await seeded(web_server)
    # 52 more players of one rated match each (provisional), four tables at a time.
    started = time.monotonic()
    prefix = f"pg{secrets.token_hex(2)}"
    for batch in range(4):
        clients = await registered(web_server, [f"{prefix}{batch}x{i}" for i in range(16)])
        try:
            await asyncio.gather(*(rated_match(clients[i : i + 4]) for i in range(0, 16, 4)))
        finally:
            for client in clients:
                await client.close()
    print(f"\n16 more rated matches, four at a time, in {time.monotonic() - started:.1f} s")

    page = await open_page("/#/ladder")
    await page.wait_for_selector(".leaderboard tbody tr")
    await page.get_by_label("Show").select_option(label="Provisional players")
    rows = page.locator(".leaderboard tbody tr")
    await expect(rows).to_have_count(50)
    total = (await api(page, "/api/ladders/mcr?provisional=true&limit=1"))["total"]
    assert total > 50
    pager = page.locator(".pager-text")
    await expect(pager).to_have_text(f"Players 1–50 of {total}")
    assert await page.get_by_role("button", name="Previous page").is_disabled()
    await page.get_by_role("button", name="Next page").click()
    await expect(pager).to_have_text(f"Players 51–{min(total, 100)} of {total}")
    await expect(rows).to_have_count(min(total, 100) - 50)
    assert await rows.first.locator("td").first.inner_text() == "51"
    second = await api(page, "/api/ladders/mcr?provisional=true&offset=50&limit=50")
    assert await board_rows(page) == [(str(p["rank"]), p["name"]) for p in second["players"]]
    await page.get_by_role("button", name="Previous page").click()
    await expect(pager).to_have_text(f"Players 1–50 of {total}")
    assert await rows.first.locator("td").first.inner_text() == "1"


async def test_the_queue_waits_ticks_cancels_then_seats_four_at_a_table(
    open_page: OpenPage, web_server: WebServer
) -> None:
    guest = await open_page("/")
    await connected(guest)
    await expect(guest.get_by_role("button", name="Find a rated match")).to_be_disabled()
    await expect(guest.locator("#queue-why")).to_contain_text("for registered accounts")
    await guest.get_by_role("button", name="Quick casual match").click()  # a visitor: a guest
    box = guest.locator(".queue.waiting")
    await expect(box.locator("h2")).to_have_text("Looking for a casual match…")
    await expect(box.locator(".queue-size")).to_have_text(re.compile(r"^\d+$"))
    assert await box.locator(".queue-gap").count() == 0
    await guest.get_by_role("button", name="Cancel").click()
    await expect(guest.get_by_role("button", name="Quick casual match")).to_be_enabled()

    page = await open_page("/")
    me = new_name("lq")
    await register(page, me)
    await page.get_by_role("link", name="Lobby", exact=True).click()
    await page.get_by_role("button", name="Find a rated match").click()
    box = page.locator(".queue.waiting")
    await expect(box.locator("h2")).to_have_text("Looking for a rated match…")
    await expect(box.locator(".queue-size")).to_have_text("1")
    await expect(box.locator(".queue-gap")).to_have_text(re.compile(r"^±\d+\.\d$"))
    await expect(box.locator(".queue-waited")).not_to_have_text("0:00", timeout=5000)  # ticks
    queues = (await api(page, "/api/queue"))["queues"]
    assert any(q["ladder"] == "mcr" and not q["casual"] and q["size"] == 1 for q in queues)
    await guest.reload()  # another visitor's home page counts who waits
    await expect(guest.locator(".queue-sizes")).to_have_text(
        "Waiting now: 1 for a rated match, 0 for a casual one."
    )
    await page.get_by_role("button", name="Cancel").click()
    await expect(page.get_by_role("button", name="Find a rated match")).to_be_enabled()

    # Queued again, three more players come: the page is taken to its seat. A reload while
    # waiting first: the server forgets the closed connection's place, the page queues again.
    await page.get_by_role("button", name="Find a rated match").click()
    await expect(box.locator(".queue-size")).to_have_text("1")
    await page.reload()
    await expect(box.locator("h2")).to_have_text("Looking for a rated match…")
    await expect(box.locator(".queue-size")).to_have_text("1")
    queues = (await api(page, "/api/queue"))["queues"]
    assert any(q["ladder"] == "mcr" and not q["casual"] and q["size"] == 1 for q in queues)
    others = await registered(web_server, [new_name("lq") for _ in range(3)])
    try:
        for client in others:
            await client.request("queue_join", {})
        await page.wait_for_url(re.compile(r".*#/table/[^/]+$"), timeout=20_000)
        await page.wait_for_selector(".board", timeout=15_000)
        table = page.url.rsplit("/", 1)[1]
        assert me in await page.locator(".board").inner_text()
        # Seated at the table: the queue refuses, in words naming it, and leads back there.
        await page.get_by_role("link", name="Home", exact=True).click()
        await page.get_by_role("button", name="Find a rated match").click()
        await expect(page.locator(".queue [role=alert]")).to_have_text(
            f"You already sit at table {table}: one table at a time, "
            "and a match you left keeps your seat until it ends."
        )
        await page.get_by_role("link", name=f"Go to table {table}").click()
        await page.wait_for_selector(".board")
    finally:
        for client in others:
            await client.close()

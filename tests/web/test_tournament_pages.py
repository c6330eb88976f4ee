"""The tournament pages in a real Chromium against a real ``guobiao serve``
(tests/web/conftest.py).

A director (an account the server's config names, ``[tournaments] directors``) creates a
one-hand tournament in the page; one player registers and checks in through the page,
three more over the protocol (``server.client.Client``), who then leave: the seats of absent
players are played automatically. The director seats and starts session 1 from the console,
the seating shows by wind, the player's "Your place" box shows the table and leads to it,
the player plays the hand out in the page, and the standings show what the API says. Then
the refusals in words, and a phone in Chinese.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pytest
from browserkit import PASSWORD, OpenPage, connected, login, new_name, play_until, register
from httpkit import http_get
from playwright.async_api import Page, Route, expect
from test_shell import english_left, labels

from server.client import Client, ServerError

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]  # slow: minutes in all, started first

REPO = Path(__file__).resolve().parent.parent.parent
SCREENSHOT = REPO / "docs" / "images" / "tournament.png"
WINDS = ["East", "South", "West", "North"]
SESSION_SECONDS = 180  # a one-hand session of engine-played seats and one page's clicks


class WebServer(Protocol):
    """The ``web_server`` fixture (tests/web/conftest.py): where ``guobiao serve`` listens."""

    @property
    def port(self) -> int: ...


def socket_url(web_server: WebServer) -> str:
    return f"ws://127.0.0.1:{web_server.port}/ws"


# The accounts tests/web/conftest.py's ``[tournaments] directors`` names: one per use.
DIRECTORS = {
    "page": "tdirector1",
    "refusals": "tdirector2",
    "played": "tdirector3",
    "console": "tdirector4",
}


async def director_client(web_server: WebServer, key: str) -> Client:
    """A connection logged in as the director ``DIRECTORS[key]``: registered by the first
    test of this server that needs it, logged in by the next."""
    client = await Client.connect(socket_url(web_server))
    try:
        await client.register(DIRECTORS[key], PASSWORD)
    except ServerError as exc:
        if exc.code != "username_taken":
            await client.close()
            raise
        await client.login(DIRECTORS[key], PASSWORD)
    return client


async def api(web_server: WebServer, path: str) -> Any:
    status, body = await http_get(web_server.port, path)
    assert status == 200, f"GET {path}: {status} {body}"
    return json.loads(body)


async def eventually_api(
    web_server: WebServer, path: str, check: Any, seconds: float = SESSION_SECONDS
) -> Any:
    """GET ``path`` until ``check(body)`` holds; the body. Fails after ``seconds``."""
    loop = asyncio.get_running_loop()
    until = loop.time() + seconds
    while True:
        body = await api(web_server, path)
        if check(body):
            return body
        assert loop.time() < until, f"GET {path} never satisfied the check: {body}"
        await asyncio.sleep(0.25)


async def players_over_the_network(web_server: WebServer, tournament: int, count: int) -> list[str]:
    """``count`` new accounts that register for ``tournament``, check in for its next
    session and then leave (their seats are played for them); their names."""
    names = [new_name("tp") for _ in range(count)]
    for name in names:
        client = await Client.connect(socket_url(web_server))
        try:
            await client.register(name, PASSWORD)
            await client.request("tournament_register", {"tournament": tournament})
            await client.request("tournament_check_in", {"tournament": tournament})
        finally:
            await client.close()
    return names


def rows_of(body: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(place, player, table points) of each standings row as the page shows them: the
    decimal with at most two places."""
    return [
        (str(r["place"]), r["player"], shown_points(r["table_points_decimal"]))
        for r in body["standings"]
    ]


def shown_points(value: float) -> str:
    """``value`` as the page shows table points (``Intl.NumberFormat``, at most two
    decimals, a true minus)."""
    text = f"{abs(value):.2f}".rstrip("0").rstrip(".")
    return f"\u2212{text}" if value < 0 and text != "0" else text


async def standings_on_screen(page: Page) -> list[tuple[str, str, str]]:
    rows = page.locator(".standings tbody tr")
    places = await rows.locator("td:nth-child(1)").all_inner_texts()
    names = await rows.locator("td:nth-child(2)").all_inner_texts()
    points = await rows.locator("td:nth-child(3)").all_inner_texts()
    return list(zip(places, names, points, strict=True))


async def fits(page: Page) -> None:
    widths = await page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    assert widths[0] <= widths[1], f"{page.url} is {widths[0]} px wide on a {widths[1]} px screen"


async def create_in_page(page: Page, name: str) -> int:
    """On ``#/tournaments`` as a director: create a two-session, one-hand tournament; its id."""
    await page.get_by_label("Name", exact=True).fill(name)
    await page.get_by_label("Sessions", exact=True).fill("2")
    await page.get_by_label("Hands per session").fill("1")
    await page.get_by_label("Time per move (seconds)").fill("3")
    await page.get_by_role("button", name="Create the tournament").click()
    await page.wait_for_url(re.compile(r".*#/tournament/\d+$"))
    return int(page.url.rsplit("/", 1)[1])


async def test_a_director_runs_session_1_and_a_player_plays_it_to_the_standings(
    open_page: OpenPage, web_server: WebServer
) -> None:
    director = DIRECTORS["page"]
    desk = await open_page("/")
    await register(desk, director)
    await desk.get_by_role("link", name="Tournaments", exact=True).click()
    await expect(desk.get_by_role("heading", level=1)).to_have_text("Tournaments")
    title = f"Cup {director}"
    tournament = await create_in_page(desk, title)
    await expect(desk.get_by_role("heading", level=1)).to_have_text(title)
    console = desk.locator(".console")
    await expect(console.get_by_role("heading", name="Director's console")).to_be_visible()
    await expect(desk.locator(".tournament-summary")).to_contain_text("2 sessions")
    await expect(desk.locator(".tournament-summary")).to_contain_text("1 hand a session")

    # The list shows it, with its link.
    listed = await api(web_server, "/api/tournaments")
    assert any(t["id"] == tournament and t["name"] == title for t in listed["tournaments"])

    # A player registers and checks in in the page; three more over the network.
    me = new_name("tp")
    page = await open_page("/")
    await register(page, me)
    await page.goto(f"/#/tournament/{tournament}")
    box = page.locator(".my-seat")
    await expect(box.locator(".my-status")).to_contain_text("You are not registered.")
    await box.get_by_role("button", name="Register").click()
    await expect(box.locator(".my-status")).to_contain_text("You are registered.")
    await box.get_by_role("button", name="Check in for session 1").click()
    await expect(box.locator(".my-status .badge")).to_have_text("Checked in for session 1")
    others = await players_over_the_network(web_server, tournament, 3)
    everyone = {me, *others}

    # The director's page hears of them (tournament_changed) and seats session 1.
    players = desk.locator(".tournament-players tbody tr")
    await expect(players).to_have_count(4)
    await console.get_by_label("Method").select_option("random")
    await console.get_by_role("button", name="Seat session 1").click()
    seating = desk.locator(".session[data-session='1'] .seating tbody tr")
    await expect(seating).to_have_count(4)
    assert await seating.locator("td:nth-child(1)").all_inner_texts() == WINDS
    assert set(await seating.locator("td:nth-child(2)").all_inner_texts()) == everyone
    detail = await api(web_server, f"/api/tournaments/{tournament}/sessions/1")
    mine = next(s for s in detail["tables"][0]["seats"] if s["player"] == me)
    wind = WINDS["ESWN".index(mine["wind"])]

    # The player's box shows the seat; once the session starts, it leads to the table.
    await expect(box.locator(".my-next-seat")).to_have_text(
        f"Your seat: session 1, table 1, {wind}"
    )
    await console.get_by_role("button", name="Start session 1").click()
    go = box.get_by_role("link", name="Go to my table")
    await expect(go).to_be_visible(timeout=15_000)
    await go.click()
    await page.wait_for_url(re.compile(r".*#/table/[^/]+$"))
    table_id = page.url.rsplit("/", 1)[1]
    detail = await api(web_server, f"/api/tournaments/{tournament}/sessions/1")
    assert detail["tables"][0]["table_id"] == table_id
    clicks = await play_until(page, ".match-end .final", seconds=SESSION_SECONDS)
    print(f"\na one-hand tournament session, the page's seat by {clicks} clicks")

    # The standings, as the API gives them, with the exact figure in each title.
    body = await eventually_api(
        web_server, f"/api/tournaments/{tournament}", lambda b: len(b["standings"]) == 4
    )
    rows = desk.locator(".standings tbody tr")
    await expect(rows).to_have_count(4, timeout=15_000)
    assert await standings_on_screen(desk) == rows_of(body)
    titles = await rows.locator("td:nth-child(3) .points").evaluate_all(
        "(cells) => cells.map((c) => c.title)"
    )
    assert titles == [r["table_points"] for r in body["standings"]]
    scores = await rows.locator("td:nth-child(4)").all_inner_texts()
    assert scores == [str(r["score"]) for r in body["standings"]]
    assert sum(int(s) for s in scores) == 0  # a match's scores are zero-sum
    finished = desk.locator(".session[data-session='1'] .session-table")
    await expect(finished.locator(".facts")).to_contain_text("Finished")
    await expect(finished.locator(".seating thead")).to_contain_text("Table points")

    # The player's page shows the same standings; the exports are linked.
    await page.goto(f"/#/tournament/{tournament}")
    await expect(page.locator(".standings tbody tr")).to_have_count(4)
    assert await standings_on_screen(page) == rows_of(body)
    await expect(page.locator(".site-header .to-table")).to_have_count(0)  # the match is over
    csv = page.get_by_role("link", name="CSV")
    assert await csv.get_attribute("href") == f"/api/tournaments/{tournament}/export.csv"
    status, text = await http_get(web_server.port, f"/api/tournaments/{tournament}/export.csv")
    assert status == 200 and me in text
    if os.environ.get("GUOBIAO_SCREENSHOTS") == "1":
        await page.set_viewport_size({"width": 1000, "height": 1300})
        await page.evaluate("scrollTo(0, 0)")
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(SCREENSHOT))


async def test_refusals_and_confirmations_are_in_words(
    open_page: OpenPage, web_server: WebServer
) -> None:
    # Not a director: the form is there, the server refuses, the page says why.
    page = await open_page("/")
    name = new_name("tn")
    await register(page, name)
    await page.get_by_role("link", name="Tournaments", exact=True).click()
    await page.get_by_label("Name", exact=True).fill("Not mine")
    await page.get_by_role("button", name="Create the tournament").click()
    await expect(page.locator(".create-tournament [role=alert]")).to_have_text(
        "Only a tournament director may do that: your account is not one."
    )

    # A director's tournament: a registered player withdraws only after saying yes.
    director = DIRECTORS["refusals"]
    client = await Client.connect(socket_url(web_server))
    try:
        await client.register(director, PASSWORD)
        made = await client.request("tournament_create", {"name": f"Cup {director}", "hands": 1})
        tournament = int(made.payload["id"])
    finally:
        await client.close()
    await page.goto(f"/#/tournament/{tournament}")
    box = page.locator(".my-seat")
    await box.get_by_role("button", name="Register").click()
    await expect(box.locator(".my-status")).to_contain_text("You are registered.")
    assert await page.locator(".console").count() == 0  # no console for a player
    await box.get_by_role("button", name="Withdraw").click()
    await expect(box.locator(".confirm")).to_contain_text("Withdraw from this tournament?")
    await box.get_by_role("button", name="Cancel").click()
    await expect(box.locator(".my-status")).to_contain_text("You are registered.")
    await box.get_by_role("button", name="Withdraw").click()
    await box.get_by_role("button", name="Yes, withdraw").click()
    await expect(box.locator(".my-status")).to_contain_text("You have withdrawn.")
    row = page.locator(".tournament-players tr", has=page.get_by_role("link", name=name))
    await expect(row).to_contain_text("withdrawn")

    # A guest is told to register instead of being offered a button.
    guest = await open_page(f"/#/tournament/{tournament}")
    await connected(guest)
    await expect(guest.locator(".my-seat")).to_contain_text("Log in with a registered account")
    await guest.goto("/")
    await guest.get_by_role("button", name="Play as a guest").click()
    await guest.goto(f"/#/tournament/{tournament}")
    await expect(guest.locator(".my-seat .hint")).to_have_text(
        "Guests cannot play tournaments: register an account first."
    )
    assert await guest.locator(".my-seat").get_by_role("button", name="Register").count() == 0

    # No such tournament: said in words, with the way back.
    await page.goto("/#/tournament/999999")
    await expect(page.get_by_role("alert")).to_have_text("There is no such tournament.")
    await expect(page.get_by_role("link", name="All tournaments")).to_be_visible()


async def seated_duplicate_session(director: Client, names: list[str]) -> int:
    """A one-session duplicate tournament of one-hand matches with ``names`` registered (no
    check-in, 120 s turns), its session seated at random; its id."""
    settings = {"name": f"Duplicate {new_name('d')}", "hands": 1, "sessions": 1}
    made = await director.request(
        "tournament_create",
        settings | {"duplicate": True, "check_in": False, "turn_seconds": 120},
    )
    tournament = int(made.payload["id"])
    await director.request("tournament_add_players", {"tournament": tournament, "players": names})
    await director.request("tournament_seat", {"tournament": tournament, "method": "random"})
    return tournament


async def accounts(web_server: WebServer, count: int) -> list[str]:
    """``count`` new registered accounts (their connections closed); their names."""
    names = [new_name("tc") for _ in range(count)]
    for name in names:
        client = await Client.connect(socket_url(web_server))
        try:
            await client.register(name, PASSWORD)
        finally:
            await client.close()
    return names


async def seats_of(web_server: WebServer, tournament: int) -> dict[str, str]:
    """Session 1's seating: player (or substitute) -> wind letter."""
    detail = await api(web_server, f"/api/tournaments/{tournament}/sessions/1")
    return {s["player"]: s["wind"] for t in detail["tables"] for s in t["seats"]}


async def test_the_directors_console_adds_removes_seats_swaps_substitutes_corrects_and_closes(
    open_page: OpenPage, web_server: WebServer
) -> None:
    director = DIRECTORS["console"]
    client = await Client.connect(socket_url(web_server))
    try:
        await client.register(director, PASSWORD)
        settings = {"name": f"Cup {director}", "hands": 1, "sessions": 2, "turn_seconds": 3}
        # Open to players, so that closing and opening it shows ("director" would keep it
        # closed to them throughout); the director adds them all the same.
        made = await client.request(
            "tournament_create", settings | {"registration": "open", "check_in": False}
        )
        tournament = int(made.payload["id"])
    finally:
        await client.close()
    names = await accounts(web_server, 5)
    desk = await open_page("/")
    await login(desk, director)
    await desk.goto(f"/#/tournament/{tournament}")
    console = desk.locator(".console")
    summary = desk.locator(".tournament-summary")

    # Players added as a comma list; registration closed and opened again.
    await console.get_by_label("Account names, separated by commas").fill(", ".join(names))
    await console.get_by_role("button", name="Add", exact=True).click()
    players = desk.locator(".tournament-players tbody tr")
    await expect(players).to_have_count(5)
    await expect(summary).to_contain_text("Registration open")
    await console.get_by_role("button", name="Close registration").click()
    await expect(summary).to_contain_text("Registration closed")
    await console.get_by_role("button", name="Open registration").click()
    await expect(summary).to_contain_text("Registration open")

    # One removed, after saying yes: four to seat.
    removed = names[4]
    remove = console.locator("form", has=desk.get_by_role("heading", name="Remove a player"))
    await remove.get_by_label("Player").select_option(removed)
    await remove.get_by_role("button", name="Remove").click()
    await expect(remove.locator(".confirm")).to_contain_text(f"Remove {removed} from")
    await remove.locator(".confirm").get_by_role("button", name="Remove").click()
    row = desk.locator(".tournament-players tr", has=desk.get_by_role("link", name=removed))
    await expect(row).to_contain_text("withdrawn")

    # Seated with a method, two players swapped, one substituted by a bot before the start.
    await console.get_by_label("Method").select_option("balanced")
    await console.get_by_role("button", name="Seat session 1").click()
    seating = desk.locator(".session[data-session='1'] .seating tbody tr")
    await expect(seating).to_have_count(4)
    await expect(desk.locator(".session[data-session='1'] > .facts")).to_contain_text(
        "Seated by: tables balanced by strength"
    )
    before = await seats_of(web_server, tournament)
    a, b = names[0], names[1]
    await console.get_by_label("Swap player").select_option(a)
    await console.get_by_label("with player").select_option(b)
    await console.get_by_role("button", name="Swap the two").click()
    await expect(seating.filter(has=desk.get_by_role("link", name=a))).to_contain_text(
        WINDS["ESWN".index(before[b])]
    )
    after = await seats_of(web_server, tournament)
    assert (after[a], after[b]) == (before[b], before[a])
    sub = console.locator("form", has=desk.get_by_role("heading", name="Substitute a player"))
    await sub.get_by_label("Player").select_option(names[3])
    await sub.get_by_label("Substitute (account name, or “bot”)").fill("bot")
    await sub.get_by_role("button", name="Substitute").click()
    await expect(seating.filter(has=desk.get_by_role("link", name=names[3]))).to_contain_text(
        "(played by Bot · Strong)"
    )

    # Started and played out for the absent: the standings come with the page's refresh,
    # a line for each registered player (docs/tournaments.md, "Who is listed"): the one whose
    # seat a substitute played scores nothing for it (the seat counts for nobody).
    await console.get_by_role("button", name="Start session 1").click()
    standings = desk.locator(".standings tbody tr")
    await expect(standings).to_have_count(4, timeout=SESSION_SECONDS * 1000)
    subbed = standings.filter(has=desk.get_by_role("link", name=names[3], exact=True))
    assert await subbed.locator("td:nth-child(3)").inner_text() == "0"
    assert await subbed.locator("td:nth-child(4)").inner_text() == "0"

    # A penalty, then undone: the log says both, the standings follow the API.
    fix = console.locator("form", has=desk.get_by_role("heading", name="Penalty or correction"))
    await fix.get_by_label("Player").select_option(a)
    await fix.get_by_label("Kind").select_option("penalty")
    await fix.get_by_label("Amount").fill("-8")
    await fix.get_by_label("Reason").fill("slow play")
    await fix.get_by_label("Session (optional)").fill("1")
    await fix.get_by_role("button", name="Enter it").click()
    log = desk.locator(".tournament-log tbody tr")
    await expect(log).to_have_count(1)
    await expect(log.first).to_contain_text(f"#1 penalty: {a} -8 (session 1)")
    body = await api(web_server, f"/api/tournaments/{tournament}")
    assert body["log"][0]["in_force"] is True
    await expect(standings).to_have_count(4)
    assert await standings_on_screen(desk) == rows_of(body)
    undo = console.locator("form", has=desk.get_by_role("heading", name="Undo a log entry"))
    await undo.get_by_label("Reason").fill("entered by mistake")
    await undo.get_by_role("button", name="Undo it").click()
    await expect(log).to_have_count(2)
    await expect(log.nth(1)).to_contain_text("#2 undoes #1")
    await expect(log.first).to_contain_text("undone")
    body = await api(web_server, f"/api/tournaments/{tournament}")
    assert [e["in_force"] for e in body["log"]] == [False, True]
    assert await standings_on_screen(desk) == rows_of(body)

    # The whole console fits a phone.
    await desk.set_viewport_size({"width": 360, "height": 740})
    await fits(desk)
    await desk.set_viewport_size({"width": 1280, "height": 720})

    # Closed once the session is over, after saying yes.
    await eventually_api(
        web_server,
        f"/api/tournaments/{tournament}",
        lambda b: b["sessions"][0]["state"] == "finished",
    )
    close = console.locator(
        ".console-part", has=desk.get_by_role("heading", name="Close the tournament")
    )
    await close.get_by_role("button", name="Close the tournament").click()
    await close.locator(".confirm").get_by_role("button", name="Close the tournament").click()
    await expect(summary.locator(".badge").first).to_have_text("Finished")
    await expect(console.get_by_role("button", name="Seat session 2")).to_have_count(0)


@dataclass(frozen=True)
class Played:
    """A tournament whose session 1's table was played out for its absent players."""

    id: int
    name: str
    players: list[str]


_played: Played | None = None


async def played(web_server: WebServer) -> Played:
    """A one-hand tournament, its first session seated and started, its table played out
    with every seat played for its absent player (made once, over the network)."""
    global _played  # noqa: PLW0603 -- made once for the module's tests: it takes seconds
    if _played is None:
        # Its table's match stored: the standings have a line per player.
        _played = await played_out(
            web_server, f"Cup {DIRECTORS['played']}", 2, lambda b: len(b["standings"]) == 4
        )
    return _played


async def played_out(
    web_server: WebServer, name: str, sessions: int, until: Callable[[dict[str, Any]], bool]
) -> Played:
    """A one-hand tournament ``name`` of ``sessions`` sessions and four players, made over
    the network: its first session seated and started, its table played out for its absent
    players, once its page (``/api/tournaments/{id}``) says ``until``."""
    client = await director_client(web_server, "played")
    try:
        settings = {"name": name, "hands": 1, "sessions": sessions, "turn_seconds": 3}
        tournament = int((await client.request("tournament_create", settings)).payload["id"])
        names = await players_over_the_network(web_server, tournament, 4)
        await client.request("tournament_seat", {"tournament": tournament, "method": "random"})
        await client.request("tournament_start_session", {"tournament": tournament})
    finally:
        await client.close()
    await eventually_api(web_server, f"/api/tournaments/{tournament}", until)
    return Played(tournament, name, names)


async def test_the_tournament_pages_on_a_phone_in_chinese(
    open_page: OpenPage, web_server: WebServer
) -> None:
    cup = await played(web_server)
    page = await open_page("/", phone=True)
    await login(page, cup.players[0])
    await page.get_by_role("button", name="中文").click()
    await page.get_by_role("link", name="赛事", exact=True).click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("赛事")
    await expect(page.get_by_role("link", name=cup.name)).to_be_visible()
    await fits(page)
    listed = await api(web_server, "/api/tournaments")
    names = {t["name"] for t in listed["tournaments"]}
    words = {w for n in names for w in n.split()}
    switch = {"English", "Switch", "to"}  # the language switch names the other language
    assert english_left(await labels(page), {*switch, cup.players[0], *words}) == []

    await page.get_by_role("link", name=cup.name).click()
    await expect(page.locator(".standings tbody tr")).to_have_count(4)
    heads = await page.locator(".standings thead th").all_inner_texts()
    assert heads == ["名次", "选手", "标准分", "得分", "第1轮"]
    await expect(page.locator(".my-seat h2")).to_have_text("我的参赛")
    await expect(page.locator(".session[data-session='1'] .seating tbody tr")).to_have_count(4)
    winds = await page.locator(".seating tbody td:nth-child(1)").all_inner_texts()
    assert winds == ["东", "南", "西", "北"]
    await fits(page)
    detail = await api(web_server, f"/api/tournaments/{cup.id}/sessions/1")
    tables = {t["table_id"] for t in detail["tables"] if t["table_id"]}
    allowed = {*switch, *cup.name.split(), *cup.players, *tables}
    assert english_left(await labels(page), allowed) == []


# The elements of the tables ``selector`` finds, and theirs, that reach past the screen's
# edges, and the page's own width.
OUTSIDE = """(selector) => {
  const outside = [...document.querySelectorAll(selector)]
    .flatMap((table) => [table, ...table.querySelectorAll("*")])
    .map((e) => [e, e.getBoundingClientRect()])
    .filter(([, box]) => box.left < 0 || box.right > innerWidth)
    .map(([e, box]) => `${e.tagName} ${e.innerText.trim().slice(0, 20)} ${box.left}..${box.right}`);
  return {outside, width: document.scrollingElement.scrollWidth};
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_sessions_seating_fits_a_phone(
    open_page: OpenPage, web_server: WebServer, lang: str
) -> None:
    """At 360 px a table's seating (wind, player, score, table points) was wider than its
    card: "Table points" and every table's points were out of sight past the screen's edge,
    to be scrolled to inside the card. Each column now fits, with the players' own names and
    with names of 20 letters (as long as a name can be), which break rather than widen it."""
    cup = await played(web_server)
    page = await open_page("/", phone=True, lang=lang)
    seating = page.locator(".session[data-session='1'] .seating tbody tr")
    await page.goto(f"/#/tournament/{cup.id}")
    await expect(seating).to_have_count(4)
    await expect(seating.locator("td.num").first).to_be_visible()  # the table's results
    seen = await page.evaluate(OUTSIDE, ".seating")
    assert seen == {"outside": [], "width": 360}, seen

    await with_long_names(page, cup)
    await page.reload()
    await expect(seating.first).to_contain_text(long_name(cup.players[0])[:10])
    seen = await page.evaluate(OUTSIDE, ".seating")
    assert seen == {"outside": [], "width": 360}, seen


def long_name(name: str) -> str:
    """``name`` made 20 letters long, as long as a name can be."""
    return name.rjust(20, "W")


async def with_long_names(
    page: Page, cup: Played, change: Callable[[dict[str, Any]], None] | None = None
) -> None:
    """From now on ``page`` is told that ``cup``'s players have names of 20 letters, and
    the tournament's body as ``change`` changes it (its sessions' as they are)."""

    async def answer(route: Route) -> None:
        reply = await route.fetch()
        text = await reply.text()
        for name in cup.players:
            text = text.replace(name, long_name(name))
        body = json.loads(text)
        if change and "standings" in body:
            change(body)
        await route.fulfill(response=reply, body=json.dumps(body))

    await page.route(re.compile(r"/api/tournaments/\d+"), answer)


# The tables of a tournament's page below its sessions.
TABLES = ".standings, .tournament-players, .duplicate-results, .tournament-log"


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_standings_players_and_corrections_fit_a_phone(
    open_page: OpenPage, web_server: WebServer, lang: str
) -> None:
    """At 360 px the players' table was wider than the screen: "Checked in for session 2"
    and each player's answer were cut at its edge, to be scrolled to sideways, and so was
    the standings' last column (by 3 px); the corrections (each entry and reason on one
    line) were twice the screen's width. Each fits, its headings wrapped, with the players'
    own names and with names of 20 letters, which break rather than widen it; so do a
    duplicate tournament's results and a second session's column (the corrections, the
    duplicate results and session 2's points are given to the page: this tournament has
    none yet)."""
    cup = await played(web_server)
    page = await open_page("/", phone=True, lang=lang)
    await page.goto(f"/#/tournament/{cup.id}")
    await expect(page.locator(".standings tbody tr")).to_have_count(4)
    await expect(page.locator(".tournament-players tbody tr")).to_have_count(4)
    await expect(page.locator(".tournament-players th")).to_have_count(3)  # checked in
    seen = await page.evaluate(OUTSIDE, TABLES)
    assert seen == {"outside": [], "width": 360}, seen

    def corrected(body: dict[str, Any]) -> None:
        player, director = body["players"][0]["name"], long_name(DIRECTORS["played"])
        entry = {"player": player, "amount": "-8", "session": 1, "by": director}
        entry |= {"at": "2026-12-07T13:37:00Z", "kind": "penalty"}
        body["log"] = [
            entry | {"id": 1, "reason": "slow play", "in_force": False},
            entry | {"id": 2, "kind": "undo", "of": 1, "reason": "by mistake", "in_force": True},
        ]
        body["duplicate"] = [
            {"player": r["player"], "deals": 4, "difference": "-123/4", "imps": -12}
            for r in body["standings"]
        ]
        for row in body["standings"]:
            row["sessions"].append({"session": 2, "table_points": "-1/4"})

    await with_long_names(page, cup, corrected)
    await page.reload()
    await expect(page.locator(".tournament-log tbody tr")).to_have_count(2)
    await expect(page.locator(".duplicate-results tbody tr")).to_have_count(4)
    await expect(page.locator(".standings th")).to_have_count(6)  # S1 and S2
    await expect(page.locator(".tournament-players")).to_contain_text(long_name(cup.players[0]))
    seen = await page.evaluate(OUTSIDE, TABLES)
    assert seen == {"outside": [], "width": 360}, seen


_finished: Played | None = None


async def finished_cup(web_server: WebServer) -> Played:
    """A one-session, one-hand tournament played out for its four absent players, so that
    it is over (made once, over the network)."""
    global _finished  # noqa: PLW0603 -- made once for the module's tests: it takes seconds
    if _finished is None:
        _finished = await played_out(
            web_server,
            f"Cup {new_name('f')}",
            1,
            lambda b: b["state"] == "finished" and len(b["standings"]) == 4,
        )
    return _finished


# The player's box of a finished tournament: (heading, status, the final place's sentence).
FINISHED_BOX = {
    "en": (
        "Your result",
        "This tournament is over.",
        "Your final place: {place} of 4. Table points: {points}.",
    ),
    "zh": (
        "我的成绩",
        "本赛事已结束。",
        "你的最终名次：第 {place} 名（共 4 人）。标准分：{points}。",
    ),
}


@pytest.mark.parametrize("phone", [True, False], ids=["phone", "desktop"])
@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_finished_tournament_tells_its_player_it_is_over_and_her_final_place(
    open_page: OpenPage, web_server: WebServer, lang: str, phone: bool
) -> None:
    """Once a tournament is over, its player's box said "Your place: You are registered."
    as if it were still to come: it says the tournament is over and gives her final place
    from the standings, and offers nothing to do (withdraw, check in)."""
    cup = await finished_cup(web_server)
    me = cup.players[1]
    body = await api(web_server, f"/api/tournaments/{cup.id}")
    mine = next(r for r in body["standings"] if r["player"] == me)
    page = await open_page("/", phone=phone)
    await login(page, me)
    press = (lambda link: link.tap()) if phone else (lambda link: link.click())
    if lang == "zh":
        await press(page.get_by_role("button", name="中文"))
    await press(
        page.get_by_role("link", name="赛事" if lang == "zh" else "Tournaments", exact=True)
    )
    await press(page.get_by_role("link", name=cup.name))
    await page.wait_for_url(f"**/#/tournament/{cup.id}")
    heading, status, place = FINISHED_BOX[lang]
    box = page.locator(".my-seat")
    await expect(box.get_by_role("heading", level=2)).to_have_text(heading)
    await expect(box.locator(".my-status")).to_have_text(status)
    points = shown_points(mine["table_points_decimal"])
    await expect(box.locator(".my-place")).to_have_text(
        place.format(place=mine["place"], points=points)
    )
    assert await box.get_by_role("button").count() == 0
    # The place said is the standings' own.
    rows = await standings_on_screen(page)
    assert (str(mine["place"]), me, points) in rows
    await fits(page)


async def test_a_tournament_tables_match_end_leads_back_to_the_tournament(
    open_page: OpenPage, web_server: WebServer
) -> None:
    """At the end of a tournament table's match (not a duplicate session's) the sheet
    offered the match, the lobby and nothing of the tournament: "To the tournament" now
    leads to its page (its standings, its next session), on a phone, in both languages."""
    client = await director_client(web_server, "played")
    try:
        settings = {"name": f"Cup {new_name('b')}", "hands": 1, "sessions": 2, "turn_seconds": 3}
        tournament = int((await client.request("tournament_create", settings)).payload["id"])
        names = await players_over_the_network(web_server, tournament, 4)
        page = await open_page("/", phone=True)
        await login(page, names[0])
        await client.request("tournament_seat", {"tournament": tournament, "method": "random"})
        await client.request("tournament_start_session", {"tournament": tournament})
    finally:
        await client.close()
    detail = await api(web_server, f"/api/tournaments/{tournament}/sessions/1")
    await page.goto(f"/#/table/{detail['tables'][0]['table_id']}")
    await play_until(page, ".match-end .final", seconds=SESSION_SECONDS, tap=True)
    final = page.locator(".match-end .final")
    back = final.get_by_role("link", name="To the tournament")
    await expect(back).to_have_attribute("href", f"#/tournament/{tournament}")
    await page.get_by_role("button", name="中文").tap()
    await expect(final.locator(f"a[href='#/tournament/{tournament}']")).to_have_text("前往赛事")
    await final.locator(f"a[href='#/tournament/{tournament}']").tap()
    await page.wait_for_url(f"**/#/tournament/{tournament}")
    await expect(page.locator(".standings tbody tr")).to_have_count(4)


async def test_a_held_duplicate_table_is_said_finished_not_linked_until_the_session_ends(
    open_page: OpenPage, web_server: WebServer
) -> None:
    """A duplicate session of two tables: the player's table (all four absent, played for
    them) finishes while the other waits on a connected player who does not move. The
    player's box says the table has finished and its result comes with the session's end,
    in both languages, and nothing on the page leads to a refusal: no "Go to my table" (the
    table is gone: "no such table"), no match link (its match answers 403). Once the other
    table ends, the session's matches are linked."""
    names = await accounts(web_server, 8)
    me, staller = names[0], names[1]
    client = await director_client(web_server, "played")
    try:
        tournament = await seated_duplicate_session(client, names)
        detail = await api(web_server, f"/api/tournaments/{tournament}/sessions/1")
        tables = [[s["player"] for s in t["seats"]] for t in detail["tables"]]
        if any(me in t and staller in t for t in tables):  # apart: one table waits, one ends
            other = next(p for t in tables if me not in t for p in t)
            swap = {"tournament": tournament, "a": staller, "b": other}
            await client.request("tournament_swap", swap)
        # The staller is connected at the start (put at the seat) and never moves: each of
        # its decisions waits the whole 120 s turn. Everyone else is away.
        waiting = await Client.connect(socket_url(web_server))
        await waiting.login(staller, PASSWORD)
        await client.request("tournament_start_session", {"tournament": tournament})
    finally:
        await client.close()
    try:
        path = f"/api/tournaments/{tournament}/sessions/1"

        def mine_done(body: dict[str, Any]) -> bool:
            states = {s["player"]: t["state"] for t in body["tables"] for s in t["seats"]}
            return bool(states[me] == "finished" and states[staller] != "finished")

        detail = await eventually_api(web_server, path, mine_done)
        match = next(t["match"] for t in detail["tables"] if t["state"] == "finished")
        status, _ = await http_get(web_server.port, f"/api/matches/{match}")
        assert status == 403  # held: what a match link would lead to

        page = await open_page("/", missing=True)  # the held match, asked for below
        await login(page, me)
        await page.goto(f"/#/tournament/{tournament}")
        box = page.locator(".my-seat")
        await expect(box.locator(".my-next-seat")).to_contain_text("session 1, table")
        await expect(box.locator(".my-table-done")).to_have_text(
            "Your table has finished. Its result is revealed when the session ends, "
            "once every table has finished."
        )
        await expect(box.get_by_role("link", name="Go to my table")).to_have_count(0)
        cards = page.locator(".session[data-session='1'] .session-table")
        await expect(cards).to_have_count(2)
        held = cards.filter(has_text="Result revealed when the session ends")
        await expect(held).to_have_count(1)
        hrefs = await page.locator("main a, #app a").evaluate_all(
            "(links) => links.map((a) => a.getAttribute('href'))"
        )
        assert not [h for h in hrefs if re.match(r"#/(table|match|watch)/", h or "")], hrefs

        await page.get_by_role("button", name="中文").click()
        await expect(box.locator(".my-table-done")).to_have_text(
            "你的牌桌已打完。本轮所有牌桌都结束后才公布成绩。"
        )
        await expect(cards.filter(has_text="本轮结束后公布成绩")).to_have_count(1)
        await expect(box.get_by_role("link", name="前往我的牌桌")).to_have_count(0)

        # Its match's page, asked for all the same (a link kept from elsewhere): said held,
        # in the page's language, not the server's English refusal.
        await page.goto(f"/#/match/{match}")
        main = page.locator("main")
        await expect(main.get_by_role("alert")).to_contain_text("仍在进行的复式轮次")
        assert not re.search(r"[A-Za-z]{3,}", await main.inner_text())
        await page.goto(f"/#/tournament/{tournament}")
    finally:
        await waiting.close()  # its seat is played for it now: the session ends

    # The session over, its results are shown and linked (the player's page hears of it).
    await eventually_api(
        web_server,
        f"/api/tournaments/{tournament}",
        lambda b: b["sessions"][0]["state"] == "finished",
    )
    await expect(cards.locator(".facts a")).to_have_count(2, timeout=15_000)
    await expect(box.locator(".my-table-done")).to_have_count(0)
    await expect(page.locator(".standings tbody tr")).to_have_count(8)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_at_a_duplicate_table_the_fairness_line_says_the_seeds_come_with_the_session(
    open_page: OpenPage, web_server: WebServer, lang: str
) -> None:
    """A duplicate session's tables send no reveal (a hand's seed is the wall other tables
    may still play): the hand's result says the seeds come with the session's end, where the
    tournament's page lists them, instead of "waiting for the seed" for ever."""
    names = await accounts(web_server, 4)
    client = await director_client(web_server, "played")
    try:
        tournament = await seated_duplicate_session(client, names)
        await client.request("tournament_start_session", {"tournament": tournament})
    finally:
        await client.close()
    page = await open_page("/")
    await login(page, names[0])
    if lang == "zh":
        await page.get_by_role("button", name="中文").click()
    await page.goto(f"/#/tournament/{tournament}")
    go = "Go to my table" if lang == "en" else "前往我的牌桌"
    await page.locator(".my-seat").get_by_role("link", name=go).click()
    await play_until(page, ".result .fairness", seconds=SESSION_SECONDS)
    line = page.locator(".result .fairness")
    held = {"en": "the seeds are revealed when the session ends", "zh": "种子在本轮结束后公布"}
    await expect(line).to_contain_text(held[lang])
    await expect(line).not_to_contain_text("waiting" if lang == "en" else "等待")

"""Defects an exploratory test found in the pages, each held by a test: an address naming a
thing that does not exist (a match, a tournament, a table, an id the server cannot read)
gets a page in the visitor's language, not the server's text or an endless "Loading…"; a
long unbroken name wraps instead of running off the page; on a phone the own melds keep
clear of the own name line and the header keeps to two rows at most (docs/client.md, "Look"),
"Back to table" shown too; the match page of players with 20-character names fits a phone;
the match page shows the hand its address names, when the address changes too (an edited
address, back and forward), or says there is no such hand; on a phone the replay's menu and
links and the options' checkboxes are a fingertip's size; a phone held sideways shows the
whole board on one screen, its action buttons beside it, long names cut short in their
seats."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import pytest
from browserkit import (
    PASSWORD,
    PLAY_CLICKS,
    OpenPage,
    connected,
    create_table,
    new_name,
    play_now,
    play_until,
    register,
)
from playwright.async_api import Page, Route, expect

from engine.bots import make_bot
from server.client import Client, play

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]  # slow: minutes in all, started first

PHONES = (360, 390, 430)
OVERFLOW = "document.documentElement.scrollWidth - window.innerWidth"

OpenAt = Callable[..., Awaitable[Page]]


@pytest.fixture
def open_at(open_page: OpenPage) -> OpenAt:
    """``await open_at(path, lang="en", width=1280, height=800)``: ``open_page`` at that size
    (a touch phone below 600 px), a fetch the server refuses allowed (the pages below ask for
    things that do not exist)."""

    async def open_one(
        path: str, *, lang: str = "en", width: int = 1280, height: int = 800
    ) -> Page:
        return await open_page(path, lang=lang, size=(width, height), missing=True)

    return open_one


# ---- 1. an address naming nothing ---------------------------------------------------------

# path -> (heading, sentence, link back) in each language.
MISSING = {
    "/#/match/999999": {
        "en": ("No such match", "There is no match 999999", "Back to the lobby"),
        "zh": ("没有这场对局", "没有第 999999 场对局", "返回大厅"),
    },
    "/#/match/" + "9" * 400: {
        "en": ("No such match", "This address does not name a match", "Back to the lobby"),
        "zh": ("没有这场对局", "这个地址不是对局的地址", "返回大厅"),
    },
    "/#/tournament/99999": {
        "en": ("Tournament", "There is no such tournament.", "All tournaments"),
        "zh": ("赛事", "没有这项赛事。", "全部赛事"),
    },
    "/#/watch/tdoesnotexist": {
        "en": ("No such table", "That table does not exist (any more).", "Back to the lobby"),
        "zh": ("没有这张牌桌", "该牌桌不存在（或已解散）。", "返回大厅"),
    },
    "/#/watch/" + "t" * 200: {
        "en": ("No such table", "This address does not name a table", "Back to the lobby"),
        "zh": ("没有这张牌桌", "这个地址不是牌桌的地址", "返回大厅"),
    },
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", list(MISSING))
async def test_an_address_naming_nothing_gets_a_page_in_the_visitors_language(
    open_at: OpenAt, path: str, lang: str
) -> None:
    page = await open_at(path, lang=lang)
    heading, sentence, back = MISSING[path][lang]
    main = page.locator("main")
    await expect(main.get_by_role("heading", level=1)).to_have_text(heading)
    await expect(main.get_by_role("alert")).to_contain_text(sentence)
    await expect(main.get_by_role("link", name=back)).to_be_visible()
    # Nothing loads any more, and none of the server's own words (English, for developers:
    # "no match 999999", "watch: 'table' must be a string of at most 32 characters, ...").
    text = await main.inner_text()
    assert not re.search(r"Loading…|加载中…|(^|\n)no (match|tournament) |must be a", text), text
    await main.get_by_role("link", name=back).click()
    await expect(page).to_have_url(
        "/".join(page.url.split("/")[:3])
        + ("/#/tournaments" if "tournament" in path else "/#/lobby")
    )


# A player's and a ladder's address naming none: the same kind of page (they showed a red
# line alone under the name), with the way back -> (heading, sentence, link back, its address).
MISSING_NAMED = {
    "/#/player/nosuchplayer9": {
        "en": ("No such player", "There is no player named nosuchplayer9.", "Back to the lobby"),
        "zh": ("没有这位玩家", "没有名为 nosuchplayer9 的玩家。", "返回大厅"),
    },
    "/#/ladder/nosuchladder": {
        "en": ("No such ladder", "There is no ladder named nosuchladder.", "See the leaderboard"),
        "zh": ("没有这个天梯", "没有名为 nosuchladder 的天梯。", "查看排行榜"),
    },
}
BACK_TO = {"/#/player/nosuchplayer9": "/#/lobby", "/#/ladder/nosuchladder": "/#/ladder"}


@pytest.mark.parametrize("width", [360, 1280])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", list(MISSING_NAMED))
async def test_a_player_or_ladder_that_does_not_exist_gets_a_page_with_the_way_back(
    open_at: OpenAt, path: str, lang: str, width: int
) -> None:
    page = await open_at(path, lang=lang, width=width, height=740 if width < 600 else 800)
    heading, sentence, back = MISSING_NAMED[path][lang]
    main = page.locator("main")
    await expect(main.locator(".missing").get_by_role("heading", level=1)).to_have_text(heading)
    await expect(main.get_by_role("alert")).to_have_text(sentence)
    assert (await page.title()).startswith(heading)
    link = main.get_by_role("link", name=back)
    if width < 600:
        box = await link.bounding_box()
        assert box is not None
        await page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    else:
        await link.click()
    await expect(page).to_have_url("/".join(page.url.split("/")[:3]) + BACK_TO[path])
    if path.startswith("/#/ladder"):  # the server's first ladder, shown
        await expect(main.get_by_role("heading", level=1)).to_have_text(
            "Ladder: MCR (Chinese Official)" if lang == "en" else "天梯：国标麻将"
        )


# ---- 2. long unbroken text wraps ----------------------------------------------------------


@pytest.mark.parametrize(("lang", "width"), [("en", 1280), ("zh", 390), ("en", 360)])
async def test_a_long_name_in_the_address_wraps_instead_of_running_off_the_page(
    open_at: OpenAt, lang: str, width: int
) -> None:
    name = "W" * 3000
    page = await open_at(f"/#/player/{name}", lang=lang, width=width)
    alert = page.get_by_role("alert")  # no such player, named
    await expect(alert).to_contain_text(name)
    assert await page.evaluate(OVERFLOW) <= 0
    box = await alert.bounding_box()
    assert box is not None and box["x"] + box["width"] <= width


# ---- 3. the own melds keep clear of the own name line on a phone --------------------------

# Play (declaring every chow and pung offered, as a person keen on melds does) until this.
MELD_CLICKS = (
    ".result button.close-result",
    ".actions button.act-win",
    ".actions button.act-pung",
    ".actions button.act-chow",
    *PLAY_CLICKS[2:],
)
# The own seat's name line (each of its parts, but a claim's banner laid over it for a
# moment) and the lowest of them; the highest any own meld tile reaches, counting the claimed
# tile's raise and its mark above it (a box-shadow, which a bounding box leaves out).
OWN_SEAT = """() => {
  const all = (selector) => [...document.querySelectorAll(selector)];
  const head = all(".own .seat-head > :not(.callout)").map((e) => e.getBoundingClientRect().bottom);
  const tops = all(".own .own-tiles img.tile, .own .own-tiles .htile").map(
    (e) => e.getBoundingClientRect().top - (e.classList.contains("claimed-in") ? 3 : 0));
  return {headBottom: Math.max(...head), tilesTop: Math.min(...tops),
          melds: all(".own .melds .claimed-in").length};
}"""


async def test_on_a_phone_the_own_melds_keep_clear_of_the_own_name_line(
    open_page: OpenPage,
) -> None:
    page = await open_page("/", phone=True)
    await play_now(page)
    await play_until(page, ".own .melds .claimed-in", tap=True, clicks=MELD_CLICKS, seconds=120)
    for width, height in [(360, 740), (390, 844), (430, 932)]:
        await page.set_viewport_size({"width": width, "height": height})
        await page.wait_for_timeout(100)
        seat = await page.evaluate(OWN_SEAT)
        assert seat["melds"] >= 1
        assert seat["tilesTop"] >= seat["headBottom"], (width, seat)


# ---- 4. the phone's header: two rows at most, one where all fits --------------------------

HEADER = """() => {
  const header = document.querySelector(".site-header").getBoundingClientRect();
  const who = document.querySelector(".site-header .who") || document.querySelector(".lang-switch");
  return {height: header.height, right: who.getBoundingClientRect().right,
          overflow: document.documentElement.scrollWidth - innerWidth};
}"""
TWO_ROWS = 80  # px: a row is about 36 px high at a phone's 15 px text, with 6 px padding


async def test_on_a_phone_the_header_takes_two_rows_at_most_even_with_a_long_name(
    open_page: OpenPage,
) -> None:
    """Below 480 px the header holds the links on one row and the state, the account and the
    language switch on a second (docs/client.md): a 20-character name is cut short with an
    ellipsis, not wrapped to a third row; in Chinese, a guest's header is one row."""
    page = await open_page("/", phone=True)
    unique = new_name("")
    name = "W" * (20 - len(unique)) + unique  # as wide as a name can be
    await register(page, name)
    who = page.locator(".site-header .who")
    await expect(who).to_have_accessible_name(f"{name}: your page")
    for width in PHONES:
        await page.set_viewport_size({"width": width, "height": 800})
        seen = await page.evaluate(HEADER)
        assert seen["height"] <= TWO_ROWS and seen["overflow"] <= 0, (width, seen)
        assert seen["right"] <= width, (width, seen)

    chinese = await open_page("/", phone=True, lang="zh")
    await connected(chinese)
    for width in PHONES:
        await chinese.set_viewport_size({"width": width, "height": 800})
        seen = await chinese.evaluate(HEADER)
        assert seen["height"] <= TWO_ROWS / 2 + 8, (width, seen)  # one row


# The header of a player seated at a table who browses another page: "Back to table" (shown
# as "To table" on a phone) shares the second row with the state, the account and the
# language, whole (a long name is cut first), in both languages.
TO_TABLE = """() => {
  const link = document.querySelector(".site-header .to-table");
  const text = [...link.children].find((e) => e.getClientRects().length);
  const box = link.getBoundingClientRect();
  return {shown: text.getBoundingClientRect().width, room: box.width - 8, right: box.right};
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_on_a_phone_the_header_takes_two_rows_at_most_with_back_to_table(
    open_page: OpenPage, lang: str
) -> None:
    page = await open_page("/", size=(390, 844))
    unique = new_name("")
    name = "W" * (20 - len(unique)) + unique
    await register(page, name)
    await page.get_by_role("link", name="Lobby", exact=True).click()
    table = await create_table(page, hands=1)
    await page.get_by_role("link", name="Ladder", exact=True).click()
    to_table = page.get_by_role("link", name=f"Back to table {table}")
    await expect(to_table).to_be_visible()
    if lang == "zh":
        await page.get_by_role("button", name="中文").click()
        to_table = page.get_by_role("link", name=f"回到牌桌 {table}")
        await expect(to_table).to_be_visible()
    for width in PHONES:
        await page.set_viewport_size({"width": width, "height": 800})
        seen = await page.evaluate(HEADER)
        assert seen["height"] <= TWO_ROWS and seen["overflow"] <= 0, (width, seen)
        assert seen["right"] <= width, (width, seen)
        link = await page.evaluate(TO_TABLE)
        assert link["shown"] <= link["room"] + 0.5 and link["right"] <= width, (width, link)
        await expect(to_table).to_contain_text(table)
    # Not seated any more (the table left): two rows at most still.
    await to_table.click()
    await page.get_by_role("button", name=re.compile("^(Leave the table|离开牌桌)$")).click()
    await page.get_by_role("link", name=re.compile("^(Ladder|天梯)$")).click()
    await expect(page.locator(".site-header .to-table")).to_have_count(0)
    seen = await page.evaluate(HEADER)
    assert seen["height"] <= TWO_ROWS and seen["overflow"] <= 0, seen


# ---- 5. the match page of players with long names fits a phone ----------------------------


class WebServer(Protocol):
    """The ``web_server`` fixture (tests/web/conftest.py): where ``guobiao serve`` listens."""

    @property
    def port(self) -> int: ...


_long_match: tuple[int, list[str]] | None = None


async def long_named_match(web_server: WebServer) -> tuple[int, list[str]]:
    """A finished rated match of two hands whose four players have 20-character names (as
    wide as a name can be), each seat an engine bot on its own connection; its id and the
    names (made once for the module's tests)."""
    global _long_match  # noqa: PLW0603 -- made once: it takes seconds
    if _long_match is not None:
        return _long_match
    unique = [new_name("") for _ in range(4)]
    names = ["W" * (20 - len(u)) + u for u in unique]
    url = f"ws://127.0.0.1:{web_server.port}/ws"
    clients = [await Client.connect(url) for _ in names]
    try:
        for client, name in zip(clients, names, strict=True):
            await client.register(name, PASSWORD)
        reply = await clients[0].request(
            "create_table", {"rules": "mcr", "hands": 2, "rated": True}
        )
        table = str(reply.payload["table"])
        for seat, client in enumerate(clients):
            await client.join_table(table, seat)
        bot = make_bot("default")
        ends = await asyncio.wait_for(asyncio.gather(*(play(c, table, bot) for c in clients)), 120)
    finally:
        for client in clients:
            await client.close()
    first = ends[0]
    assert first is not None and len(first["ratings"]) == 4, ends
    _long_match = (int(first["match"]), names)
    return _long_match


# Twenty Chinese characters: no account can have them, so the test puts them in the match's
# answers in place of the accounts' names.
CHINESE = ["一二三四五六七八九十百千万亿甲乙丙丁戊" + c for c in "东南西北"]


async def with_names(page: Page, names: list[str], shown: list[str]) -> None:
    """The page gets the match's answers (match, replay, review) with the ``shown`` names
    for ``names``."""

    async def rename(route: Route) -> None:
        reply = await route.fetch()
        text = await reply.text()
        for name, other in zip(names, shown, strict=True):
            text = text.replace(name, other)
        await route.fulfill(response=reply, body=text)

    await page.route(re.compile(r"/api/matches/\d+"), rename)


FITS = "document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth"
LONG_SIDE_RIVERS = """() => {
  for (const river of document.querySelectorAll(".seat-left .river, .seat-right .river")) {
    const tile = river.querySelector("[role=listitem]");
    while (river.children.length < 24) river.appendChild(tile.cloneNode(true));
  }
}"""


@pytest.mark.parametrize("chinese_names", [False, True], ids=["latin-names", "chinese-names"])
@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_match_page_of_long_names_fits_a_phone(
    open_page: OpenPage, web_server: WebServer, lang: str, chinese_names: bool
) -> None:
    match, names = await long_named_match(web_server)
    page = await open_page("/", lang=lang, size=(390, 844))
    if chinese_names:
        await with_names(page, names, CHINESE)
    shown = CHINESE if chinese_names else names
    await page.goto(f"/#/match/{match}")
    main = page.locator("main")
    await expect(main.locator(".match-ratings tbody tr")).to_have_count(4)
    await expect(main.locator(".match-hands tbody tr")).to_have_count(2)
    await expect(main.locator(".board")).to_be_visible()
    await expect(main.locator(".match-ratings")).to_contain_text(shown[0])
    assert await page.evaluate(FITS) <= 0, f"{await page.evaluate(FITS)} px too wide"
    # The hand's last step, with its result beside the board, and the review's names.
    await page.keyboard.press("End")
    await expect(main.locator(".replay-result")).to_be_visible()
    await main.locator(".replay-seat select").select_option(index=3)
    assert await page.evaluate(FITS) <= 0, f"{await page.evaluate(FITS)} px too wide at the end"
    # A wall played out gives the side seats some twenty discards each (a drawn hand, which
    # the bots' match may or may not have): the board with 24 in each side river, drawn by
    # the page's own rules (its tiles copied), still fits.
    await page.evaluate(LONG_SIDE_RIVERS)
    assert await page.evaluate(FITS) <= 0, f"{await page.evaluate(FITS)} px too wide, long rivers"


# ---- 6. the match page shows the hand its address names -----------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_match_page_follows_its_address_to_another_hand_or_none(
    open_page: OpenPage, web_server: WebServer, lang: str
) -> None:
    match, _ = await long_named_match(web_server)
    page = await open_page(f"/#/match/{match}/1/3", lang=lang, missing=True)
    position = {
        "en": lambda hand, step: re.compile(rf"^Hand {hand} of 2 · step {step} of \d+$"),
        "zh": lambda hand, step: re.compile(rf"^第{hand}/2局 · 第{step}/\d+步$"),
    }[lang]
    step = page.locator(".replay-step")
    await expect(step).to_have_text(position(1, 3))

    # The address edited: another hand, then one the match does not have.
    await page.evaluate(f"location.hash = '#/match/{match}/2/4'")
    await expect(step).to_have_text(position(2, 4))
    await page.evaluate(f"location.hash = '#/match/{match}/5/0'")
    alert = page.locator("main .replay-missing [role=alert]")
    await expect(alert).to_have_text(
        {
            "en": f"There is no hand 5 in match {match}: its hands are listed below.",
            "zh": f"对局 {match} 没有第 5 局：这场对局的各局列在下方。",
        }[lang]
    )
    await expect(page.locator("main .board")).to_have_count(0)  # no other hand's board
    await expect(step).to_have_count(0)
    assert page.url.endswith(f"#/match/{match}/5/0")

    # Back and forward.
    await page.go_back()
    await expect(step).to_have_text(position(2, 4))
    await expect(alert).to_have_count(0)
    await page.go_back()
    await expect(step).to_have_text(position(1, 3))
    await page.go_forward()
    await page.go_forward()
    await expect(alert).to_be_visible()
    await page.get_by_role("link", name={"en": "Replay hand 1", "zh": "回放第 1 局"}[lang]).click()
    await expect(step).to_have_text(position(1, 0))

    # A hand still loading when the address moves on to another is not shown.
    slow = asyncio.Event()

    async def late(route: Route) -> None:
        await slow.wait()
        await route.continue_()

    await page.route(re.compile(r"/replay\?hand=2$"), late)
    await page.evaluate(f"location.hash = '#/match/{match}/2/0'")
    await page.wait_for_timeout(300)
    await page.evaluate(f"location.hash = '#/match/{match}/1/5'")
    await expect(step).to_have_text(position(1, 5))
    slow.set()
    await page.wait_for_timeout(500)
    await expect(step).to_have_text(position(1, 5))
    assert page.url.endswith(f"#/match/{match}/1/5")


async def test_the_lobbys_form_offers_the_servers_decision_time(open_page: OpenPage) -> None:
    """The lobby's "Time per move" field defaulted to 15 s with a 3-120 range written in the
    page, whatever the server's ``[timers]`` (this one's: 20 s), so a table made there
    differed from one "Play now" makes. It now offers what the server says in ``welcome``
    (docs/protocol.md)."""
    page = await open_page("/")
    await register(page, new_name("turn"))
    await page.goto("/#/lobby")
    field = page.get_by_label("Time per move (seconds)")
    await expect(field).to_have_value("20")
    assert (await field.get_attribute("min"), await field.get_attribute("max")) == ("3", "120")


# ---- 7. on a phone, small controls are a fingertip's size ---------------------------------

FINGERTIP = 44  # CSS px: WCAG's target size (2.5.5), Apple's and Material's guides
# Each shown element's text and box, in CSS px.
BOXES = """(selector) => [...document.querySelectorAll(selector)]
  .filter((e) => e.getClientRects().length)
  .map((e) => {
    const box = e.getBoundingClientRect();
    return {text: e.innerText.trim().slice(0, 30), width: box.width, height: box.height};
  })"""


async def too_small(page: Page, selector: str, count: int) -> list[dict[str, object]]:
    """The elements of ``selector`` (at least ``count`` of them shown) narrower or shorter
    than a fingertip."""
    boxes = await page.evaluate(BOXES, selector)
    assert len(boxes) >= count, (selector, boxes)
    return [b for b in boxes if min(b["width"], b["height"]) < FINGERTIP]


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_on_a_phone_menus_links_and_checkboxes_are_a_fingertips_size(
    open_page: OpenPage, web_server: WebServer, lang: str
) -> None:
    """At 360 px the replay's "Seen from" menu (19 px tall), its buttons and "Review …'s
    decisions" (40 px), each hand's "Replay" link (16 px) and the options' checkboxes, the
    lobby's and the table's (a line of text, 24 px), were smaller than a finger: each, or
    the label that ticks it, is now at least 44 px tall and wide. (A hand of 14 tiles
    across 360 px cannot grow; it is left out.)"""
    match, names = await long_named_match(web_server)
    page = await open_page("/", phone=True, lang=lang)
    name = {"en": "Play as a guest", "zh": "以游客身份开始"}[lang]
    await page.get_by_role("button", name=name).tap()
    await page.goto("/#/lobby")
    await expect(page.locator(".create")).to_be_visible()
    assert await too_small(page, ".create label.check", 3) == []

    await page.goto("/#/")
    name = {"en": "Play now against three bots", "zh": "立即开局（对战三个机器人）"}[lang]
    await page.get_by_role("button", name=name).tap()
    await expect(page.locator(".own-hand")).to_be_visible(timeout=15_000)
    await page.locator(".table-options summary").tap()
    assert await too_small(page, ".table-options summary, .table-options label", 4) == []

    # Short names: "Review Ann's decisions" on one line (a long name's two were taller).
    await with_names(page, names, ["Ann", "Bea", "Cy", "Di"])
    await page.goto(f"/#/match/{match}")
    await expect(page.locator(".replay .board")).to_be_visible()
    assert await too_small(page, ".replay-seat select", 1) == []
    assert await too_small(page, ".replay-controls button", 5) == []
    assert await too_small(page, ".review-load", 1) == []
    assert await too_small(page, ".match-hands a", 2) == []


# ---- 8. a phone held sideways: the whole board on one screen -----------------------------

# The board, each seat's river and the action bar, in CSS px of the window, and the window.
SIDEWAYS = """() => {
  const box = (e) => { const r = e.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height}; };
  const actions = document.querySelector(".actions");
  return {board: box(document.querySelector(".board")),
          rivers: [...document.querySelectorAll(".board .river")].map(box),
          hand: box(document.querySelector(".own-hand")),
          actions: actions ? box(actions) : null,
          width: innerWidth, height: innerHeight,
          overflow: document.documentElement.scrollWidth - innerWidth};
}"""


def off_the_board(seen: dict[str, Any]) -> list[str]:
    """What of a sideways phone's table cannot be seen with the whole board on screen: the
    board taller than the window, a river or the own hand outside the board, the action bar
    over the board or off the window, the page wider than the window."""
    board, faults = seen["board"], []
    if board["height"] > seen["height"]:
        faults.append(f"the board is {board['height']:.0f} px tall, the window {seen['height']}")
    for part in [*seen["rivers"], seen["hand"]]:
        if part["top"] < board["top"] - 1 or part["bottom"] > board["bottom"] + 1:
            faults.append(f"{part} is outside the board {board}")
    actions = seen["actions"]
    if actions is not None:
        if actions["left"] < board["right"]:
            faults.append(f"the actions {actions} lie over the board {board}")
        if actions["top"] < 0 or actions["bottom"] > seen["height"]:
            faults.append(f"the actions {actions} are off the window")
    if seen["overflow"] > 0:
        faults.append(f"the page is {seen['overflow']} px wider than the window")
    return faults


@pytest.mark.parametrize(
    ("lang", "size"), [("en", (844, 390)), ("zh", (740, 360)), ("en", (667, 375))]
)
async def test_a_phone_held_sideways_shows_the_whole_board_and_its_buttons_at_once(
    open_page: OpenPage, lang: str, size: tuple[int, int]
) -> None:
    """A phone on its side is 360-430 px tall: the table's board was 500-880 px, so a player
    saw the others' rivers or her own hand, never both, and scrolled for the buttons. Now the
    whole board fits the window's height (scrolled to it), every river and the own hand on
    it, and the action buttons stand beside it, on screen wherever the page is scrolled; at
    the hand's end, the rivers at their longest and every hand shown, the board still fits,
    and the result and its Continue button are on screen."""
    page = await open_page("/", size=size, lang=lang, touch=True)
    name = {"en": "Play now against three bots", "zh": "立即开局（对战三个机器人）"}[lang]
    await page.get_by_role("button", name=name).tap()
    await expect(page.locator(".own-hand")).to_be_visible(timeout=15_000)
    await page.locator(".board").evaluate("(board) => board.scrollIntoView()")
    assert off_the_board(await page.evaluate(SIDEWAYS)) == []

    await play_until(page, ".actions button.act-pass", tap=True, seconds=120)  # a claim
    await page.locator(".board").evaluate("(board) => board.scrollIntoView()")
    seen = await page.evaluate(SIDEWAYS)
    assert seen["actions"] is not None
    assert off_the_board(seen) == []
    await page.evaluate("() => window.scrollTo(0, 0)")  # the page's top: the buttons still there
    await expect(page.locator(".actions button.act-pass")).to_be_in_viewport()

    await play_until(page, ".result .close-result", tap=True, seconds=180)  # the hand's end
    await page.locator(".board").evaluate("(board) => board.scrollIntoView()")
    seen = await page.evaluate(SIDEWAYS)
    assert seen["board"]["height"] <= seen["height"], seen["board"]
    sheet = page.locator(".result")
    await expect(page.locator(".result .close-result")).to_be_in_viewport()
    box = await sheet.bounding_box()
    assert box is not None and box["height"] <= size[1], box


# Each seat's name line and its box, in CSS px, where the line runs past the box.
HEADS_OUTSIDE = """() => [...document.querySelectorAll(".board .seat")].flatMap((seat) => {
  const box = seat.getBoundingClientRect();
  const head = seat.querySelector(".seat-head").getBoundingClientRect();
  return head.left < box.left - 1 || head.right > box.right + 1
    ? [{seat: seat.dataset.player, head: [head.left, head.right], box: [box.left, box.right]}] : [];
})"""


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_phone_held_sideways_keeps_20_letter_names_inside_their_seats(
    open_page: OpenPage, web_server: WebServer, lang: str
) -> None:
    """On a sideways phone an opponent's name keeps to one line: a 20-letter one ran out of
    the top seat's box over the next seat's name, under its own flowers (a replay of four
    such names at 844x390). Now it is cut short with an ellipsis, inside its seat."""
    match, _names = await long_named_match(web_server)
    page = await open_page("/", size=(844, 390), touch=True, lang=lang)
    await page.goto(f"/#/match/{match}/1/40")
    await expect(page.locator(".replay .board")).to_be_visible()
    assert await page.evaluate(HEADS_OUTSIDE) == []

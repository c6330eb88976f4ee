"""Defects an exploratory test found in the pages, each held by a test: an address naming a
thing that does not exist (a match, a tournament, a table, an id the server cannot read)
gets a page in the visitor's language, not the server's text or an endless "Loading…"; a
long unbroken name wraps instead of running off the page; on a phone the own melds keep
clear of the own name line and the header keeps to two rows at most (docs/client.md, "Look")."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

import pytest
from browserkit import PLAY_CLICKS, OpenPage, connected, new_name, play_now, play_until, register
from playwright.async_api import Page, expect

pytestmark = pytest.mark.asyncio

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
        "zh": ("没有这场比赛", "没有第 999999 场比赛", "返回大厅"),
    },
    "/#/match/" + "9" * 400: {
        "en": ("No such match", "This address does not name a match", "Back to the lobby"),
        "zh": ("没有这场比赛", "这个地址不是比赛的地址", "返回大厅"),
    },
    "/#/tournament/99999": {
        "en": ("Tournament", "There is no such tournament.", "All tournaments"),
        "zh": ("比赛", "没有这场比赛。", "全部比赛"),
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


# ---- 2. long unbroken text wraps ----------------------------------------------------------


@pytest.mark.parametrize(("lang", "width"), [("en", 1280), ("zh", 390), ("en", 360)])
async def test_a_long_name_in_the_address_wraps_instead_of_running_off_the_page(
    open_at: OpenAt, lang: str, width: int
) -> None:
    name = "W" * 3000
    page = await open_at(f"/#/player/{name}", lang=lang, width=width)
    await expect(page.get_by_role("alert")).to_be_visible()  # no such player
    heading = page.get_by_role("heading", level=1)
    await expect(heading).to_have_text(name)
    assert await page.evaluate(OVERFLOW) <= 0
    box = await heading.bounding_box()
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
# The own seat's name line (each of its parts) and the lowest of them; the highest any own
# meld tile reaches, counting the claimed tile's raise and its mark above it (a box-shadow,
# which a bounding box leaves out).
OWN_SEAT = """() => {
  const all = (selector) => [...document.querySelectorAll(selector)];
  const head = all(".own .seat-head > *").map((e) => e.getBoundingClientRect().bottom);
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

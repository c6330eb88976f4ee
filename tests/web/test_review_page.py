"""The review in the replay viewer (web/js/review.js), in a real Chromium against a real
``guobiao serve``: a finished match bots played (tests/reviewkit.py; its seat 0 played as
the ``fast`` bot, so it has misses) is written into the server's database, its replay opened,
the review of seat 0 asked for; a mark stands on a decision where the player and the bot
disagree, its two values show on hover (a desktop) and on a tap (a phone), and a miss of the
list jumps to its turn. In English and in Chinese. Screenshots for people to look at go to
``GUOBIAO_SCREENSHOTS`` when it names a folder (never in the repository)."""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

import pytest
from browserkit import OpenPage
from conftest import WebServer
from playwright.async_api import Page, expect
from reviewkit import stored_match

from server.db.store import Store

pytestmark = pytest.mark.asyncio

_match: tuple[int, str] | None = None
TEXTS = {
    "en": {
        "load": "Review {name}'s decisions",
        "bot": "the bot:",
        "miss": "Biggest misses",
        "stand_in": "moves the server played for {name}",
    },
    "zh": {
        "load": "复盘 {name} 的每个决定",
        "bot": "机器人：",
        "miss": "最大失误",
        "stand_in": "服务器代 {name} 走的",
    },
}


async def reviewed_match(web_server: WebServer) -> tuple[int, str]:
    """A finished two-hand match in the server's database (made once), the server having
    played hand 2 for seat 0 (away); its id and the name of its seat 0."""
    global _match  # noqa: PLW0603 -- made once for the module's tests
    if _match is None:
        name = f"rw{secrets.token_hex(3)}"
        url = f"sqlite+aiosqlite:///{web_server.log.parent / 'data' / 'guobiao.db'}"
        async with await Store.open(url) as store:
            seats = [name, "bot:normal", "bot:normal", "bot:strong"]
            bots = ["fast", "normal", "normal", "strong"]
            match_id = await stored_match(
                store, f"rw-{name}", seats, bots, seed=4242, hands=2, stand_in={(2, 0)}
            )
        _match = (match_id, name)
    return _match


def screenshot(page: Page, label: str) -> Path | None:
    folder = os.environ.get("GUOBIAO_SCREENSHOTS")
    return Path(folder) / f"review-{label}.png" if folder else None


async def open_review(open_page: OpenPage, web_server: WebServer, lang: str, phone: bool) -> Page:
    match_id, name = await reviewed_match(web_server)
    page = await open_page(f"/#/match/{match_id}/1/0", phone=phone, lang=lang)
    await page.wait_for_selector(".replay .board", timeout=15_000)
    load = page.get_by_role("button", name=TEXTS[lang]["load"].format(name=name))
    await (load.tap() if phone else load.click())
    await expect(page.locator(".review-mark").first).to_be_visible(timeout=20_000)
    assert await page.locator(".review-mark.apart").count() >= 1
    # The moves the server played for her in hand 2 are said, not reviewed.
    stand_in = page.locator(".review-summary .review-stand-in")
    await expect(stand_in).to_contain_text(TEXTS[lang]["stand_in"].format(name=name))
    return page


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_mark_shows_its_values_on_hover_and_the_misses_jump(
    open_page: OpenPage, web_server: WebServer, lang: str
) -> None:
    page = await open_review(open_page, web_server, lang, phone=False)
    texts = TEXTS[lang]
    item = page.locator(".review-item:has(.review-mark.apart)").first
    mark, tip = item.locator(".review-mark"), item.locator(".review-tip")
    await expect(tip).to_be_hidden()
    await mark.hover()
    await expect(tip).to_be_visible()
    await expect(tip).to_contain_text(texts["bot"])
    assert re.search(r"\d\.\d\d.*\d\.\d\d", await tip.inner_text())
    shot = screenshot(page, f"{lang}-desktop")
    if shot:
        await page.screenshot(path=str(shot), full_page=True)

    # A miss of the list shows its turn, the decision's values in the note.
    await expect(page.locator(".review-misses summary")).to_contain_text(texts["miss"])
    before = page.url
    await page.locator(".review-misses li a").first.click()
    await expect(page.locator(".review-mark.current")).to_have_count(1)
    await expect(page.locator(".review-note .apart")).to_contain_text(texts["bot"])
    assert page.url != before and re.search(r"#/match/\d+/\d+/\d+$", page.url)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_tap_on_a_mark_shows_its_values_on_a_phone(
    open_page: OpenPage, web_server: WebServer, lang: str
) -> None:
    page = await open_review(open_page, web_server, lang, phone=True)
    mark = page.locator(".review-mark.apart").first
    await mark.tap()
    await expect(page.locator(".review-mark.current.apart")).to_have_count(1)
    note = page.locator(".review-note .apart")
    await expect(note).to_contain_text(TEXTS[lang]["bot"])
    assert re.search(r"\d\.\d\d.*\d\.\d\d", await note.inner_text())
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"the replay with its review is {width} px wide on a 360 px phone"
    shot = screenshot(page, f"{lang}-phone")
    if shot:
        await page.screenshot(path=str(shot), full_page=True)

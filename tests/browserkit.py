"""What the browser tests share (tests/web/): the ``open_page`` fixture's type and the steps
a person takes in the client, written once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Page

# ``await open_page(path="/", phone=False, lang="en")``: a page in a fresh browser context.
OpenPage = Callable[..., Awaitable[Page]]


# ---- the table (TABLE's steps) ----------------------------------------------------------

# What a person clicks at the table, most wanted first: Continue after a hand's result, a
# win, passing on a claim (the tests play to finish hands, not to claim), the raised tile (a
# second tap discards it), any discardable tile (the first tap raises it).
PLAY_CLICKS = (
    ".result button.close-result",
    ".actions button.act-win",
    ".actions button.act-pass",
    ".own-hand button.htile.raised",
    ".own-hand button.htile",
)


# The first of the selectors present on the page, scrolled into view, and its centre; or
# {found: -2} when the page shows ``done`` instead; null (keep waiting) when neither.
FIRST_PRESENT = """([done, selectors]) => {
  if (document.querySelector(done)) return {found: -2};
  const found = selectors.findIndex((s) => document.querySelector(s));
  if (found < 0) return null;
  const element = document.querySelector(selectors[found]);
  element.scrollIntoView({block: "nearest"});
  const box = element.getBoundingClientRect();
  return {found, x: box.x + box.width / 2, y: box.y + box.height / 2};
}"""


async def _next_spot(page: Page, done: str, selectors: tuple[str, ...], seconds: float) -> Any:
    """Wait (polling inside the page, not over the wire) for ``done`` or a thing to click."""
    handle = await page.wait_for_function(
        FIRST_PRESENT, arg=[done, list(selectors)], polling=30, timeout=seconds * 1000
    )
    return await handle.json_value()


async def _click(page: Page, spot: Any, tap: bool) -> None:
    """A click (or tap) where a person would put the pointer (or finger)."""
    if tap:
        await page.touchscreen.tap(spot["x"], spot["y"])
    else:
        await page.mouse.click(spot["x"], spot["y"])


async def click_first(page: Page, selectors: tuple[str, ...], *, tap: bool = False) -> bool:
    """Click (or tap) the first element matching one of ``selectors``; False when none is
    there."""
    spot = await page.evaluate(FIRST_PRESENT, ["#-none-", list(selectors)])
    if spot is None:
        return False
    await _click(page, spot, tap)
    return True


async def play_until(
    page: Page,
    done: str,
    *,
    seconds: float = 60,
    tap: bool = False,
    clicks: tuple[str, ...] = PLAY_CLICKS,
) -> int:
    """Play at the table by clicks (``PLAY_CLICKS``) until ``done`` (a selector) shows;
    returns the number of clicks. Fails after ``seconds``."""
    loop = asyncio.get_running_loop()
    until = loop.time() + seconds
    count = 0
    while (spot := await _next_spot(page, done, clicks, until - loop.time()))["found"] != -2:
        await _click(page, spot, tap)
        count += 1
    return count


async def play_now(page: Page) -> str:
    """The home page's one button; returns the table id once the own hand shows."""
    await page.get_by_role("button", name="Play now against three bots").click()
    await page.wait_for_selector(".own-hand", timeout=15_000)
    return page.url.rsplit("/", 1)[1]

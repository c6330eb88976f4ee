"""What the browser tests share (tests/web/): the ``open_page`` fixture's type and the steps
a person takes in the client, written once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

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


# The first of the selectors present on the page, scrolled into view, and its centre: -2
# when the page shows ``done`` instead, -1 when none is there.
FIRST_PRESENT = """([done, selectors]) => {
  if (document.querySelector(done)) return {found: -2};
  const found = selectors.findIndex((s) => document.querySelector(s));
  if (found < 0) return {found};
  const element = document.querySelector(selectors[found]);
  element.scrollIntoView({block: "nearest"});
  const box = element.getBoundingClientRect();
  return {found, x: box.x + box.width / 2, y: box.y + box.height / 2};
}"""


async def click_first(page: Page, selectors: tuple[str, ...], *, tap: bool = False) -> bool:
    """Click (or tap) the first element matching one of ``selectors``; False when none is
    there."""
    return await _click_first(page, "#-none-", selectors, tap) is True


async def _click_first(page: Page, done: str, selectors: tuple[str, ...], tap: bool) -> bool | None:
    """One look at the page and a click where a person would put the pointer (or finger):
    None when ``done`` shows, else whether one of ``selectors`` was there and clicked."""
    spot = await page.evaluate(FIRST_PRESENT, [done, list(selectors)])
    if spot["found"] < 0:
        return None if spot["found"] == -2 else False
    if tap:
        await page.touchscreen.tap(spot["x"], spot["y"])
    else:
        await page.mouse.click(spot["x"], spot["y"])
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
    while (clicked := await _click_first(page, done, clicks, tap)) is not None:
        assert loop.time() < until, f"{done} did not show within {seconds} s ({count} clicks)"
        if clicked:
            count += 1
        else:
            await asyncio.sleep(0.03)
    return count


async def play_now(page: Page) -> str:
    """The home page's one button; returns the table id once the own hand shows."""
    await page.get_by_role("button", name="Play now against three bots").click()
    await page.wait_for_selector(".own-hand", timeout=15_000)
    return page.url.rsplit("/", 1)[1]

"""What the browser tests share (tests/web/): the ``open_page`` fixture's type and the steps
a person takes in the client, written once.

Every step finds controls the way a person does, by role and accessible name (the English
texts of web/js/i18n/app.js), so a renamed button breaks the tests that press it."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Page, WebSocket, expect
from playwright.async_api import TimeoutError as PlaywrightTimeout

# ``await open_page(path="/", phone=False, lang="en")``: a page in a fresh browser context.
OpenPage = Callable[..., Awaitable[Page]]

PASSWORD = "correct horse battery"
_names = itertools.count(1)


def new_name(prefix: str = "p") -> str:
    """A username no other test of this run uses (the server lives for the whole run)."""
    return f"{prefix}{next(_names)}x{id(_names) % 100000}"[:20]


async def connected(page: Page) -> None:
    """Wait until the header says the connection is up (hello and resume done)."""
    await expect(page.locator('.conn[data-status="connected"]')).to_be_visible()


async def play_as_guest(page: Page) -> str:
    """On a page with the account form (home, an invite link): play as a guest; the name."""
    await page.get_by_role("button", name="Play as a guest").click()
    who = page.locator(".site-header .who")
    await expect(who).to_contain_text("guest-")
    return (await who.inner_text()).split()[0]


async def _account(page: Page, button: str, name: str, password: str) -> None:
    await page.get_by_label("Username", exact=True).fill(name)
    await page.get_by_label("Password", exact=True).fill(password)
    await page.get_by_role("button", name=button, exact=True).click()


async def register(page: Page, name: str, password: str = PASSWORD) -> None:
    """On the home page: register ``name`` and wait for the session."""
    await _account(page, "Register", name, password)
    await expect(page.get_by_text(f"Logged in as {name}.")).to_be_visible()


async def login(page: Page, name: str, password: str = PASSWORD) -> None:
    """On the home page: log in as ``name`` and wait for the session."""
    await _account(page, "Log in", name, password)
    await expect(page.get_by_text(f"Logged in as {name}.")).to_be_visible()


async def logout(page: Page) -> None:
    """On the home page: log out and wait for the account form."""
    await page.get_by_role("button", name="Log out").click()
    await expect(page.get_by_role("button", name="Play as a guest")).to_be_visible()


async def play_now(page: Page) -> str:
    """On the home page: press "Play now against three bots"; the id of the table it opens,
    once the own hand shows (the deal has come)."""
    await page.get_by_role("button", name="Play now against three bots").click()
    await page.wait_for_url(re.compile(r".*#/table/[^/]+$"))
    await page.wait_for_selector(".own-hand", timeout=15_000)
    return page.url.rsplit("/", 1)[1]


async def create_table(
    page: Page, *, private: bool = False, rules: str = "mcr", hands: int = 16
) -> str:
    """In the lobby (signed in): create a table (``hands``: the length of its match) and sit
    at it; its id."""
    await page.get_by_label("Rules").select_option(rules)
    await page.get_by_label("Length of the match").select_option(str(hands))
    if private:
        await page.get_by_label("Private table").check()
    await page.get_by_role("button", name="Create the table").click()
    heading = page.locator("#my-table-title")
    await expect(heading).to_contain_text("Your table: ")
    return (await heading.inner_text()).rsplit(" ", 1)[1]


async def invite_link(page: Page) -> str:
    """In the lobby, at a private table: the invite link it shows."""
    return await page.get_by_label("Invite link", exact=True).input_value()


def record_frames(page: Page) -> list[tuple[str, dict[str, Any]]]:
    """Every websocket frame the page sends ("sent") or receives ("received"), decoded, from
    now on, across reconnections."""
    frames: list[tuple[str, dict[str, Any]]] = []

    def watch(socket: WebSocket) -> None:
        def keep(way: str, data: str | bytes) -> None:
            if isinstance(data, str):
                frames.append((way, json.loads(data)))

        socket.on("framesent", lambda data: keep("sent", data))
        socket.on("framereceived", lambda data: keep("received", data))

    page.on("websocket", watch)
    return frames


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
    clicked: list[str] = []
    try:
        while (spot := await _next_spot(page, done, clicks, until - loop.time()))["found"] != -2:
            await _click(page, spot, tap)
            clicked.append(clicks[spot["found"]])
    except PlaywrightTimeout:
        state = await page.evaluate(TABLE_STATE)
        raise AssertionError(
            f"{done!r} did not show in {seconds} s after {len(clicked)} clicks"
            f" (the last: {clicked[-5:]}); the page: {state}"
        ) from None
    return len(clicked)


# What a person sees at the table, for a test's failure message: where the page is, its
# connection, the centre (round, wall, clock), the action bar and any dialog.
TABLE_STATE = """() => {
  const text = (s) => [...document.querySelectorAll(s)].map((e) => e.innerText.trim()).join(" | ");
  return {url: location.hash, connection: document.querySelector(".conn")?.dataset.status,
          centre: text(".centre"), actions: text(".actions"), dialog: text("[role=dialog]"),
          status: text("[role=status]"), hand: text(".own-hand")};
}"""


async def play_a_match_with_bots(page: Page, prefix: str, *, tap: bool = False) -> tuple[str, str]:
    """A new player, registered at ``page`` (opened, not signed in), creates a private
    one-hand table, fills it with bots and plays it to its end (``.match-end``; ``tap``: by
    taps): her name and the table."""
    await connected(page)
    name = new_name(prefix)
    await register(page, name)
    await page.goto("/#/lobby")
    table = await create_table(page, hands=1, private=True)
    await page.get_by_role("button", name="Add bots").click()
    await page.wait_for_url(f"**/#/table/{table}")  # taken to the table as it starts
    await play_until(page, ".match-end", seconds=90, tap=tap)
    return name, table

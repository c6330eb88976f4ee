"""The web client's tests: a real ``guobiao serve`` on loopback and a real headless Chromium.

- ``web_server`` (one per test session): ``guobiao serve`` started as a process of its own on
  a free port and a fresh SQLite file, with test timers (no claim window, short pauses),
  account and table limits a test run cannot reach, its in-page tests served (``/test/``),
  a ladder that ranks a player after 2 rated matches, and four tournament directors
  (``tdirector1`` to ``4``, accounts the tournament tests register). ``web_server.url`` is
  the page to open.
- ``browser``: Debian's Chromium driven by Playwright's async API, one for each worker's
  session (its tests run in one event loop: ``pytest_collection_modifyitems``). Found at
  ``GUOBIAO_CHROMIUM`` or as ``chromium`` on the PATH; without one the browser tests skip,
  except under ``CI=true``, where a skip would hide them: there it is a failure (``.ci/run``
  installs the ``chromium`` package). ``playwright install`` is never needed.
- ``open_page``: ``await open_page(path="/", phone=False, lang="en")`` gives a page in a
  fresh browser context (its own storage: a new visitor). ``phone=True`` is a 360 x 740
  touch screen; ``size=(W, H)`` a window of that size instead (a touch screen below 600 px).
  Every page's uncaught script errors and console errors fail the test, and so does a table
  page's warning that it could not follow an update; ``missing=True`` lets the browser's own
  error for a fetch the server refused (4xx) pass, for pages that ask for what is not there.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from browserkit import OpenPage
from playwright.async_api import Browser, Page, async_playwright
from serverkit import served_port

REPO = Path(__file__).resolve().parent.parent.parent
# The table page's warning when it could not follow an update (protocol version 2) and asks
# for a full one: with the server's updates in order, as here, a fault of web/js/follow.js
# that a resync would otherwise hide.
NOT_FOLLOWED = "not followed"
# The browser's own console errors for a network a test cut itself (``set_offline``): the
# socket and the service worker's update check fail, as they must.
OFFLINE = "net::ERR_INTERNET_DISCONNECTED"
# Chromium's console error for every fetch the server refused (``open_page(missing=True)``).
REFUSED = "Failed to load resource: the server responded with a status of 40"
IN_CI = os.environ.get("CI") == "true"
SITE = """\
[server]
host = "127.0.0.1"
data_dir = "{data}"
log_format = "text"
log_level = "warning"
test_pages = true  # /test/: the in-page suites of web/test/ (test_units.py)

[timers]
turn_seconds = 20
min_turn_seconds = 3
hand_pause_seconds = 0.3
result_seconds = 3  # a page that never says it has read a result holds its table this long
unattended_move_seconds = 0
disconnected_seconds = 1
# A tournament's seats wait this long for their players (30 s by default): the tests' players
# who play come within seconds, the tables played out for absent players start sooner.
restart_grace_seconds = 8
claim_window_ms = 0

[accounts]
guest_burst = 1000
guest_per_hour = 100000
register_burst = 1000
register_per_hour = 100000
login_burst = 1000
login_per_minute = 100000

[limits]
waiting_tables_per_account = 0  # every test's page is at 127.0.0.1, some make many tables
waiting_tables_per_address = 0

[ladder]
provisional_matches = 2  # the ladder tests rank a player after two rated matches

[tournaments]
directors = "tdirector1, tdirector2, tdirector3, tdirector4"  # the tournament tests' directors
"""


@dataclass(frozen=True)
class WebServer:
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"


@pytest.fixture(scope="session")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    folder = tmp_path_factory.mktemp("web-server")
    site = folder / "site.toml"
    site.write_text(SITE.format(data=folder / "data"))
    log = folder / "serve.log"
    with log.open("w") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "server", "serve", "--config", str(site), "--port", "0"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], 60)
    line = process.stdout.readline() if ready else ""
    port = served_port(line)
    if port is None:
        process.kill()
        process.wait(10)
        process.stdout.close()
        pytest.fail(f"no URL line from guobiao serve ({line!r}); log:\n{log.read_text()}")
    try:
        yield WebServer(port, log)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        process.stdout.close()


def chromium() -> str | None:
    found = os.environ.get("GUOBIAO_CHROMIUM") or shutil.which("chromium")
    return found or shutil.which("chromium-browser")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every browser test runs in its worker's one event loop (``loop_scope="session"``), so
    that one Chromium (``browser``) serves them all: a Chromium and Playwright's driver
    started for each test cost more CPU than most tests' own steps, on a suite that shares
    two cores. Each test still has a browser context of its own (``open_page``)."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here) and item.get_closest_marker("asyncio"):
            item.add_marker(pytest.mark.asyncio(loop_scope="session"), append=False)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def chromium_of_the_worker() -> AsyncIterator[Browser]:
    executable = chromium()
    if executable is None:
        reason = "no Chromium (install Debian's chromium package or set GUOBIAO_CHROMIUM)"
        if IN_CI:
            pytest.fail(f"{reason}: the browser tests must run in CI")
        pytest.skip(reason)
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=executable)
        try:
            yield launched
        finally:
            await launched.close()


@pytest_asyncio.fixture(loop_scope="session")
async def browser(chromium_of_the_worker: Browser) -> AsyncIterator[Browser]:
    """The worker's Chromium, for one test: every context the test opened is closed after
    it, whether it ended well or not (the next test gets the browser as if new)."""
    yield chromium_of_the_worker
    for context in chromium_of_the_worker.contexts:
        await context.close()


@pytest_asyncio.fixture(loop_scope="session")
async def open_page(browser: Browser, web_server: WebServer) -> AsyncIterator[OpenPage]:
    problems: list[str] = []

    async def open_one(
        path: str = "/",
        *,
        phone: bool = False,
        lang: str = "en",
        size: tuple[int, int] | None = None,
        missing: bool = False,
        touch: bool = False,
    ) -> Page:
        options: dict[str, Any] = {"locale": "zh-CN" if lang == "zh" else "en-US"}
        width, height = (360, 740) if phone else size or (0, 0)
        if width:
            options["viewport"] = {"width": width, "height": height}
        if 0 < width < 600 or touch:  # (touch: a phone on its side, a tablet)
            options |= {"has_touch": True, "is_mobile": True, "device_scale_factor": 2}
        context = await browser.new_context(base_url=web_server.url, **options)
        page = await context.new_page()
        page.on("pageerror", lambda exc: problems.append(f"script error: {exc}"))
        page.on(
            "console",
            lambda message: (
                problems.append(f"console {message.type}: {message.text}")
                if (
                    message.type == "error"
                    and OFFLINE not in message.text
                    and not (missing and REFUSED in message.text)
                )
                or NOT_FOLLOWED in message.text
                else None
            ),
        )
        await page.goto(path)
        return page

    yield open_one
    assert not problems, "\n".join(problems)  # (its pages close after: ``browser``)

"""Accessibility, checked by axe-core (vendored for the tests only: tests/web/vendor/) on the
pages a player goes through, in both languages and on a phone: home, lobby, the table in
play, the hand-end (here the match-end) dialog, the replay, the ladder, the tournaments and
one tournament's page. No violation of impact "serious" or "critical" may remain."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browserkit import OpenPage, connected, create_table, login, play_as_guest, play_until
from playwright.async_api import Page
from test_tournament_pages import WebServer, played

AXE = (Path(__file__).resolve().parent / "vendor" / "axe.min.js").read_text(encoding="utf-8")
BLOCKING = {"serious", "critical"}
RUN = """async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }));
}"""


async def violations(page: Page, where: str) -> list[str]:
    """The serious and critical violations axe finds on the page now, each as a line."""
    if not await page.evaluate("typeof axe !== 'undefined'"):
        await page.evaluate(AXE)  # through the debugger: the page's CSP does not apply
    found: list[dict[str, Any]] = await page.evaluate(RUN)
    return [
        f"{where}: {v['id']} ({v['impact']}) {v['help']} at {v['nodes']}"
        for v in found
        if v["impact"] in BLOCKING
    ]


@pytest.mark.asyncio
@pytest.mark.parametrize(("lang", "phone"), [("en", False), ("zh", False), ("zh", True)])
async def test_no_serious_violation_on_the_players_pages(
    open_page: OpenPage, lang: str, phone: bool
) -> None:
    page = await open_page("/", lang=lang, phone=phone)
    await connected(page)
    found = await violations(page, "home")
    await page.goto("/#/lobby")
    found += await violations(page, "lobby as a visitor")
    await page.goto("/#/")
    if lang == "zh":  # the steps below find controls by their English names
        await page.locator(".lang-switch").click()
    await play_as_guest(page)
    await page.goto("/#/lobby")
    await page.wait_for_selector(".create")
    found += await violations(page, "lobby")
    table = await create_table(page, hands=1)
    await page.get_by_role("button", name="Add bots").click()
    await page.wait_for_url(f"**/#/table/{table}")
    await page.wait_for_selector(".own-hand")
    if lang == "zh":
        await page.locator(".lang-switch").click()
    found += await violations(page, "table")
    if lang == "zh":
        await page.locator(".lang-switch").click()
    await play_until(page, ".match-end", seconds=90, tap=phone)
    if lang == "zh":
        await page.locator(".lang-switch").click()
    found += await violations(page, "hand-end and match-end dialog")
    await page.locator(".match-end a.primary").click()
    await page.wait_for_selector(".replay .board", timeout=15_000)
    found += await violations(page, "replay")
    await page.goto("/#/ladder")
    await page.wait_for_selector("main h1")
    await page.wait_for_timeout(500)
    found += await violations(page, "ladder")
    await page.goto("/#/tournaments")
    await page.wait_for_selector("main h1")
    await page.wait_for_timeout(500)
    found += await violations(page, "tournaments")
    assert not found, "\n".join(found)


@pytest.mark.asyncio
@pytest.mark.parametrize(("lang", "phone"), [("en", False), ("zh", True)])
async def test_no_serious_violation_on_a_tournaments_page(
    open_page: OpenPage, web_server: WebServer, lang: str, phone: bool
) -> None:
    """A tournament with a session played: its standings, seating and the player's place."""
    cup = await played(web_server)
    page = await open_page("/", phone=phone)
    await login(page, cup.players[0])  # (by the form's English names)
    if lang == "zh":
        await page.locator(".lang-switch").click()
    await page.goto(f"/#/tournament/{cup.id}")
    await page.wait_for_selector(".standings tbody tr")
    await page.wait_for_selector(".my-seat h2")
    found = await violations(page, f"tournament {cup.id}")
    assert not found, "\n".join(found)

"""The end of a match at the table page: the final ranking names the players as the table
did during play (a registered player by name, with the grade the match gave her; bots by
their seat and level) and the last hand's result keeps the names too.

The flow: a private table (never listed, so the page cannot learn its seats from the
listing), filled with bots from the lobby, opened once the match is on: the page knows the
names only from the seat's own ``table`` messages, which stop when the match ends."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from browserkit import (
    OpenPage,
    connected,
    create_table,
    new_name,
    play_a_match_with_bots,
    play_until,
    register,
)
from httpkit import http_get
from playwright.async_api import Browser, Route, expect


@pytest.mark.asyncio
async def test_the_final_ranking_names_the_player_and_her_grade_and_the_bots(
    open_page: OpenPage,
) -> None:
    page = await open_page("/")
    name, _ = await play_a_match_with_bots(page, "end")

    final = page.locator(".match-end .final")
    await expect(final.locator("tbody tr")).to_have_count(4)
    await expect(final).to_contain_text(name)
    for seat in (2, 3, 4):
        await expect(final).to_contain_text(f"Bot {seat} · Normal")
    await expect(final).to_contain_text("grade ")  # her grade, once the API has it
    ranking = await final.inner_text()
    assert "Player " not in ranking, ranking
    # The board and the last hand's result, shown again, name them as during play.
    await expect(page.locator(".seat-bottom .name")).to_contain_text(name)
    if await page.locator("button.reopen-result").count():
        await page.locator("button.reopen-result").click()
    result = await page.locator(".match-end").inner_text()
    assert "Player " not in result, result


@pytest.mark.asyncio
async def test_a_player_away_as_her_match_ends_is_shown_its_end_when_she_comes_back(
    open_page: OpenPage, browser: Browser, web_server: Any
) -> None:
    """She closes the page mid-match; the server plays her seat to the match's end. Opening
    her table's address again, she is shown the end as the others were (the last hand's
    result and its fairness check, the final ranking: docs/protocol.md, ``resume``), and no
    "table does not exist" over it (the table is gone; the page's own ``sync`` is refused),
    even when the end came before the table page's script had loaded to hear it."""
    page = await open_page("/")
    await connected(page)
    name = new_name("away")
    await register(page, name)
    await page.goto("/#/lobby")
    table = await create_table(page, hands=1)
    await page.get_by_role("button", name="Add bots").click()
    await page.wait_for_url(f"**/#/table/{table}")
    await page.wait_for_selector(".own-hand", timeout=15_000)
    context = page.context
    await page.close()  # away: the server's stand-in plays her seat from now on

    async def played() -> bool:
        status, body = await http_get(web_server.port, f"/api/players/{name}")
        return status == 200 and json.loads(body)["matches"] == 1

    deadline = asyncio.get_running_loop().time() + 90
    while not await played():
        assert asyncio.get_running_loop().time() < deadline, "the match did not end"
        await asyncio.sleep(0.5)

    # The end comes with her session, before the table page's module has loaded to hear it
    # (as on a loaded machine): the module is held until the socket has brought the end.
    # (A context of her own with her stored session, without the service worker, which
    # would serve the module from its cache around the hold.)
    told = asyncio.Event()

    async def after_the_end(route: Route) -> None:
        await asyncio.wait_for(told.wait(), 30)
        await route.continue_()

    state = await context.storage_state()
    await context.close()
    hers = await browser.new_context(
        base_url=web_server.url, storage_state=state, service_workers="block"
    )
    await hers.route("**/js/pages/table.js", after_the_end)
    again = await hers.new_page()
    again.on(
        "websocket",
        lambda ws: ws.on("framereceived", lambda f: '"match_end"' in str(f) and told.set()),
    )
    await again.goto(f"/#/table/{table}")
    final = again.locator(".match-end .final")
    await expect(final.locator("tbody tr")).to_have_count(4)
    await expect(final).to_contain_text(name)
    await expect(again.locator(".table-error")).to_have_count(0)
    assert told.is_set()
    # Its last hand's result, its fairness checked as if seen live (its reveal told too).
    await expect(again.locator(".match-end .fairness.ok")).to_be_visible()


@pytest.mark.asyncio
async def test_her_table_page_opened_again_after_the_table_is_gone_leads_to_the_match(
    open_page: OpenPage, browser: Browser, web_server: Any
) -> None:
    """Her match over, she leaves; the table, nobody at it, is gone. Its page opened again
    (a reload, a link kept; here on a phone, in Chinese) says the match is over rather than
    that the table never was, and leads to the match's page (the server's ``table_finished``,
    docs/protocol.md)."""
    page = await open_page("/")
    name, table = await play_a_match_with_bots(page, "gone")
    match = await page.locator(".match-end .final a.button.primary").get_attribute("href")
    assert match is not None and match.startswith("#/match/"), match
    state = await page.context.storage_state()
    await page.context.close()  # nobody is left at the table: it goes

    phone = await browser.new_context(
        base_url=web_server.url,
        storage_state=state,
        locale="zh-CN",
        viewport={"width": 360, "height": 740},
        has_touch=True,
        is_mobile=True,
    )
    again = await phone.new_page()
    heading = again.locator(".missing h1")
    for attempt in range(20):  # (the table goes once the server has seen her page close)
        await again.goto(f"/#/table/{table}")
        await expect(heading.or_(again.locator(".board"))).to_be_visible()
        if await heading.count():
            break
        assert attempt < 19, "the table was still there"
        await asyncio.sleep(0.25)
    await expect(heading).to_have_text("这张牌桌的对局已经结束")
    await expect(again.locator(".missing [role=alert]")).to_contain_text("对局页面")
    # Its invite link, followed again, leads to the match too (not to watching a table gone).
    code = match.partition("?invite=")[2]
    await again.goto(f"/#/join/{table}/{code}")
    invitation = again.locator("section", has=again.locator("h1", has_text="邀请"))
    await expect(invitation.get_by_role("alert")).to_contain_text("对局页面")
    links = invitation.locator(".button-row a")
    await expect(links).to_have_text(["查看对局与回放", "前往大厅"])  # and not "watch instead"
    await expect(links.first).to_have_attribute("href", match)
    await again.goto(f"/#/table/{table}")
    await again.locator(".missing a.button").tap()
    await again.wait_for_url(f"**/{match}")
    await expect(again.locator("main")).to_contain_text(name)


# Whether each link and button of the final ranking is what a tap at its centre reaches
# (not under the sheet's sticky foot, the fairness line and the hand's result button).
UNCOVERED = """() => [...document.querySelectorAll('.match-end .final a.button')].map((el) => {
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
  return [el.textContent.trim(), !!hit && el.contains(hit)];
})"""


@pytest.mark.asyncio
async def test_on_a_phone_the_match_ends_buttons_are_not_under_the_sheets_foot(
    open_page: OpenPage,
) -> None:
    """On a phone the result sheet is a third of the screen, its foot sticky; at the match's
    end it grows, so that "Back to the lobby" (a duplicate session's "To the tournament")
    is not hidden under that foot."""
    page = await open_page("/", phone=True)
    await play_a_match_with_bots(page, "phone", tap=True)
    await expect(page.locator(".match-end .final a.button")).to_have_count(2)
    for opened in (False, True):  # the last hand's result closed, then shown below
        toggle = "button.close-result" if not opened else "button.reopen-result"
        if await page.locator(toggle).count():
            await page.locator(toggle).click()
        await page.wait_for_timeout(300)
        assert all(hit for _, hit in await page.evaluate(UNCOVERED)), (
            opened,
            await page.evaluate(UNCOVERED),
        )


@pytest.mark.parametrize("phone", [True, False], ids=["360x740-touch", "1280x800"])
@pytest.mark.asyncio
async def test_keyboard_hints_show_only_where_there_is_a_keyboard(
    open_page: OpenPage, phone: bool
) -> None:
    """The buttons' key chips (Enter, Esc, C, P), the table's and the replay's keys' help
    showed on touch phones, which have no keys: shown on a desktop, hidden on a phone."""
    page = await open_page("/", phone=phone, size=None if phone else (1280, 800))
    await connected(page)
    await register(page, new_name("keys"))
    await page.goto("/#/lobby")
    await create_table(page, hands=1)
    await page.get_by_role("button", name="Add bots").click()
    discard = page.locator(".actions .act-discard")
    await play_until(page, ".actions .act-discard", tap=phone, clicks=(".actions .act-pass",))
    await expect(discard).to_contain_text("Discard")
    chip = discard.locator("kbd")
    await (expect(chip).to_be_hidden() if phone else expect(chip).to_have_text("Enter"))
    await page.get_by_text("Options and keys").click()
    keys = page.get_by_role("heading", name="Keyboard")
    await (expect(keys).to_be_hidden() if phone else expect(keys).to_be_visible())
    await play_until(page, ".match-end .final", seconds=90, tap=phone)
    match = await page.locator(".match-end .final a.button.primary").get_attribute("href")
    await page.goto(f"/{match}/1")
    await page.wait_for_selector(".replay-controls")
    hint = page.get_by_text("Keys: ← → a turn", exact=False)
    await (expect(hint).to_be_hidden() if phone else expect(hint).to_be_visible())

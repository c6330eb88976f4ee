"""The end of a match at the table page: the final ranking names the players as the table
did during play (a registered player by name, with the grade the match gave her; bots by
their seat and level) and the last hand's result keeps the names too.

The flow: a private table (never listed, so the page cannot learn its seats from the
listing), filled with bots from the lobby, opened once the match is on: the page knows the
names only from the seat's own ``table`` messages, which stop when the match ends."""

from __future__ import annotations

import pytest
from browserkit import OpenPage, connected, create_table, new_name, play_until, register
from playwright.async_api import expect


@pytest.mark.asyncio
async def test_the_final_ranking_names_the_player_and_her_grade_and_the_bots(
    open_page: OpenPage,
) -> None:
    page = await open_page("/")
    await connected(page)
    name = new_name("end")
    await register(page, name)
    await page.goto("/#/lobby")
    table = await create_table(page, hands=1, private=True)
    await page.get_by_role("button", name="Add bots").click()
    await page.wait_for_url(f"**/#/table/{table}")  # taken to the table as it starts
    await play_until(page, ".match-end", seconds=90)

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

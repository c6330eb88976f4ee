"""The bots' level in a real Chromium (web/js/bots.js): chosen beside "Play now", remembered
on this device, sent with ``add_bots``, and the bots named by their level at the table and in
the lobby, in English on a desktop and in Chinese on a phone. The lobby's and the table's
"add bots" offer the same choice."""

from __future__ import annotations

import re

import pytest
from browserkit import OpenPage, connected, create_table, play_as_guest, play_now, record_frames
from playwright.async_api import Page, expect

pytestmark = pytest.mark.asyncio


def sent_bots(frames: list[tuple[str, dict[str, object]]]) -> list[object]:
    """The ``bot`` of every ``add_bots`` the page sent."""
    return [
        m["payload"]["bot"]  # type: ignore[index]
        for way, m in frames
        if way == "sent" and m["type"] == "add_bots"
    ]


async def seat_names(page: Page) -> list[str]:
    """The opponents' names around the table, as their seats are labelled, sorted."""
    await page.wait_for_selector(".seat:not(.own)")
    return sorted(
        name
        for name in await page.locator(".seat:not(.own)").evaluate_all(
            "seats => seats.map((s) => s.getAttribute('aria-label'))"
        )
        if name
    )


async def test_play_now_at_the_level_chosen_remembered_and_named_at_the_table(
    open_page: OpenPage,
) -> None:
    page = await open_page("/")
    frames = record_frames(page)
    await page.reload()
    await connected(page)
    levels = page.get_by_role("radiogroup", name="Bots’ level")
    await expect(levels.get_by_role("radio", name="Normal")).to_be_checked()  # the default
    await levels.get_by_role("radio", name="Strong").check()
    await play_now(page)
    assert sent_bots(frames) == ["strong"]
    assert await seat_names(page) == ["Bot 2 · Strong", "Bot 3 · Strong", "Bot 4 · Strong"]
    await page.goto("/#/")
    await page.reload()  # remembered on this device
    await connected(page)
    await expect(levels.get_by_role("radio", name="Strong")).to_be_checked()


async def test_a_phone_in_chinese_chooses_easy_bots_and_names_them(open_page: OpenPage) -> None:
    page = await open_page("/", phone=True, lang="zh")
    frames = record_frames(page)
    await page.reload()
    await connected(page)
    levels = page.get_by_role("radiogroup", name="机器人难度")
    assert await levels.get_by_role("radio").evaluate_all(
        "radios => radios.map((r) => r.closest('label').textContent.trim())"
    ) == ["简单", "普通", "困难"]
    await levels.get_by_role("radio", name="简单").tap()
    await expect(levels.get_by_role("radio", name="简单")).to_be_checked()
    await page.get_by_role("button", name="立即开局（对战三个机器人）").tap()
    await page.wait_for_url(re.compile(r".*#/table/[^/]+$"))
    await page.wait_for_selector(".own-hand", timeout=15_000)
    assert sent_bots(frames) == ["easy"]
    assert await seat_names(page) == ["机器人2·简单", "机器人3·简单", "机器人4·简单"]


async def test_the_lobby_and_the_table_add_bots_of_the_level_chosen(open_page: OpenPage) -> None:
    lobby = await open_page("/#/lobby")
    await play_as_guest(lobby)
    await create_table(lobby)
    mine = lobby.locator(".my-table")
    await (
        mine.get_by_role("radiogroup", name="Bots’ level").get_by_role("radio", name="Easy").check()
    )
    await mine.get_by_role("button", name="Add bots").click()
    await lobby.wait_for_url(re.compile(r".*#/table/[^/]+$"))  # the match began: to the seat
    assert await seat_names(lobby) == ["Bot 2 · Easy", "Bot 3 · Easy", "Bot 4 · Easy"]
    await lobby.goto("/#/lobby")  # the lobby names them as the table does
    await expect(lobby.locator(".my-table .seats")).to_contain_text("Bot 2 · Easy")
    bots = await lobby.locator(".my-table .seat-bot").all_inner_texts()
    assert bots == ["Bot 2 · Easy", "Bot 3 · Easy", "Bot 4 · Easy"]

    table = await open_page("/#/lobby")
    await play_as_guest(table)
    await create_table(table)
    await table.get_by_role("link", name="Open the table").click()
    levels = table.get_by_role("radiogroup", name="Bots’ level")
    await expect(levels.get_by_role("radio", name="Normal")).to_be_checked()  # a new device
    await levels.get_by_role("radio", name="Strong").check()
    await table.get_by_role("button", name="Fill the free seats with bots").click()
    await table.wait_for_selector(".own-hand", timeout=15_000)
    assert await seat_names(table) == ["Bot 2 · Strong", "Bot 3 · Strong", "Bot 4 · Strong"]

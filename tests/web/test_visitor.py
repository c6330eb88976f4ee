"""A visitor (a fresh browser, no account, no guest session) sees the lobby's live tables
and watches one: the server lets a connection without a session list and watch (the
spectator view, as for any spectator), and the client asks for no session to do so."""

from __future__ import annotations

import pytest
from browserkit import OpenPage, connected, create_table, play_as_guest, record_frames
from playwright.async_api import expect


@pytest.mark.asyncio
async def test_a_visitor_sees_a_live_table_in_the_lobby_and_watches_it(
    open_page: OpenPage,
) -> None:
    host = await open_page("/#/lobby")
    await play_as_guest(host)
    table = await create_table(host)
    await host.get_by_role("button", name="Add bots").click()
    await host.wait_for_url(f"**/#/table/{table}")

    visitor = await open_page("/#/lobby")
    frames = record_frames(visitor)
    await visitor.reload()  # its socket from the start
    await connected(visitor)
    await expect(visitor.locator(".site-header .who")).to_have_count(0)  # nobody logged in
    card = visitor.locator(".table-card", has=visitor.locator(f"#table-{table}"))
    await expect(card).to_contain_text("Bot 2 · Normal")  # bots named as at the table
    await visitor.get_by_role("link", name=f"Watch table {table}").click()
    await visitor.wait_for_selector(".board", timeout=15_000)
    await expect(visitor.locator(".watching")).to_be_visible()
    await expect(visitor.locator(".board")).to_contain_text("Bot 2 · Normal")
    sent = {frame["type"] for way, frame in frames if way == "sent"}
    assert not sent & {"guest", "register", "login", "resume"}, sent
    # The spectator view: no concealed tile of anyone.
    views = [
        f["payload"]["view"] for way, f in frames if way == "received" and f["type"] == "update"
    ]
    assert views and all(v.get("you") is None for v in views)
    seats = [s for v in views if v.get("phase") != "over" for s in v.get("seats", [])]
    assert not [s for s in seats if "concealed" in s]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("phone", "lang"), [(False, "en"), (True, "zh")], ids=["desk-en", "phone-zh"]
)
async def test_a_visitor_at_a_players_table_address_watches_it_and_is_shown_how_to_play(
    open_page: OpenPage, phone: bool, lang: str
) -> None:
    """A visitor who opens a live table's address (``#/table/ID``, a player's link) was only
    told "Log in or play as a guest first. Home", no heading, and an id of no table said the
    same. Now she watches the table under a heading, told how to play; no table is said so."""
    host = await open_page("/#/lobby")
    await play_as_guest(host)
    table = await create_table(host)
    await host.get_by_role("button", name="Add bots").click()
    await host.wait_for_url(f"**/#/table/{table}")

    visitor = await open_page(f"/#/table/{table}", phone=phone, lang=lang)
    words = {
        "en": (f"Table {table}", "Log in or play as a guest", "Bot 2 · Normal", "No such table"),
        "zh": (f"牌桌 {table}", "登录或以游客身份开始", "机器人2·普通", "没有这张牌桌"),
    }[lang]
    await expect(visitor.get_by_role("heading", level=1)).to_have_text(words[0])
    await expect(visitor.locator(".board")).to_contain_text(words[2], timeout=15_000)
    await expect(visitor.locator(".site-header .who")).to_have_count(0)  # still nobody
    to_play = visitor.get_by_role("link", name=words[1])
    await (to_play.tap() if phone else to_play.click())
    guest = "Play as a guest" if lang == "en" else "以游客身份开始"
    await expect(visitor.get_by_role("button", name=guest)).to_be_visible()

    await visitor.goto("/#/table/tnosuch")
    await expect(visitor.get_by_role("heading", level=1)).to_have_text(words[3])
    await expect(visitor.locator(".missing a.button")).to_have_attribute("href", "#/lobby")

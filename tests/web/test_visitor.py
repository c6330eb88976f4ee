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

"""The table page, the spectator view and the replay viewer in a real Chromium against a real
``guobiao serve`` (tests/web/conftest.py: claim window 0, 20 s turns, 0.3 s hand pause).

Pages are driven only by what a person clicks or taps (``browserkit.play_until``): the Play
now button, the lobby's form (the short match is one of its lengths), the own tiles (tap to
raise, tap again to discard), the action buttons. Figures are printed, never asserted.
The page speaks protocol version 2 (it follows the seats from the events): one test loses an
update on the way (``page.route_web_socket``) to see it ask for a full one and mend.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sqlite3
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Protocol

import pytest
from browserkit import (
    PLAY_CLICKS,
    OpenPage,
    click_first,
    create_table,
    invite_link,
    play_as_guest,
    play_now,
    play_until,
    record_frames,
)
from playwright.async_api import Browser, Page, WebSocketRoute, expect
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]  # slow: minutes in all, started first

SCREENSHOT = Path(__file__).resolve().parent.parent.parent / "docs" / "images" / "table.png"
RESULT = ".result .fairness.ok"  # a hand's end, checked: the dialog with its ✓


def concealed_leaks(message: dict[str, Any]) -> list[str]:
    """What a spectator's message shows of a concealed tile (nothing, if all is well):
    before a hand is over no seat's ``concealed``, no drawn tile, no dealt or drawn tile
    in the events, no face-down kong's tile."""
    if message.get("type") != "update":
        return []
    payload = message["payload"]
    view = payload["view"]
    leaks = [f"view.{key}" for key in ("drawn", "you", "legal") if key in view]
    over = view["phase"] == "over"
    for seat in view.get("seats", []):  # (protocol version 2: most updates have none)
        if "concealed" in seat and not over:
            leaks.append(f"seat {seat['player']} concealed {seat['concealed']}")
    for event in payload["events"]:
        if event["kind"] in ("deal", "draw", "concealed_kong") and (
            "tiles" in event or "tile" in event
        ):
            leaks.append(f"event {event}")
    return leaks


async def hidden_tiles_in_dom(page: Page) -> list[str]:
    """The faces the spectator's page shows in concealed hands while the hand is played."""
    return await page.eval_on_selector_all(
        ".board:not(.phase-over) .hand img.tile, .board:not(.phase-over) button.htile",
        "els => els.map(e => e.getAttribute('src') || e.outerHTML)"
        "  .filter(s => !s.endsWith('/back.svg'))",
    )


async def test_a_guest_plays_a_whole_hand_by_clicks_and_a_spectator_sees_nothing_hidden(
    open_page: OpenPage,
) -> None:
    page = await open_page("/")
    started = time.monotonic()
    table = await play_now(page)
    watcher = await open_page("about:blank")  # no client yet: its socket is recorded from the start
    frames = record_frames(watcher)
    await watcher.goto(f"/#/watch/{table}")
    await watcher.wait_for_selector(".board", timeout=15_000)
    if os.environ.get("GUOBIAO_SCREENSHOTS") == "1":
        # Mid-hand, on the player's turn: rivers filled a little, a tile raised; at the
        # 1280x800 docs/client.md says.
        await page.set_viewport_size({"width": 1280, "height": 800})
        await play_until(page, ".board:has(.seat-bottom .river span:nth-child(7)) .htile.raised")
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(SCREENSHOT))
    seen_in_dom: list[str] = []

    async def watch() -> None:
        while await watcher.query_selector(".board.phase-over") is None:
            seen_in_dom.extend(await hidden_tiles_in_dom(watcher))
            await asyncio.sleep(0.1)

    spying = asyncio.create_task(watch())
    clicks = await play_until(page, RESULT)
    await asyncio.wait_for(spying, 15)
    print(f"\na whole hand by {clicks} clicks in {time.monotonic() - started:.1f} s")
    # The spectator came after the deal (its `commit` went by): the hand brought its
    # commitment, and its page checks the reveal as the player's does.
    await expect(watcher.locator(RESULT)).to_be_visible(timeout=10_000)
    assert await watcher.locator(".fairness.bad, .fairness.unseen").count() == 0

    result = page.locator(".result")
    assert await result.locator(".payments tbody tr").count() == 4
    assert await result.locator(".revealed-hand").count() == 4
    heading = await result.locator("h2").inner_text()
    fans = await result.locator(".fans tr").all_inner_texts()
    deltas = [
        int(x) for x in await result.locator(".payments tbody td:nth-child(2)").all_inner_texts()
    ]
    assert sum(deltas) == 0
    if "Drawn hand" in heading:
        assert fans == [] and deltas == [0, 0, 0, 0]
    else:
        assert fans[-1].startswith("Total"), fans
        assert len(fans) >= 2 and max(deltas) > 0
    assert "guobiao verify --seed" in (await result.locator("code.verify").text_content() or "")

    assert not seen_in_dom, f"the spectator's page showed concealed tiles: {seen_in_dom[:5]}"
    me = await page.locator(".seat-bottom .name").inner_text()
    assert me.split(" ")[0] in await watcher.locator(".board").inner_text(), "names, not numbers"
    received = [message for way, message in frames if way == "received"]
    updates = [m for m in received if m.get("type") == "update"]
    assert updates, "the spectator got the table's updates"
    leaks = [leak for message in received for leak in concealed_leaks(message)]
    assert not leaks, leaks[:5]
    assert any(u["payload"]["view"]["phase"] == "over" for u in updates)
    brief = sum("seats" not in u["payload"]["view"] for u in updates)
    assert brief, "protocol version 2: the page follows the seats of most updates"
    print(
        f"the spectator received {len(updates)} updates ({brief} without seats),"
        " none with a concealed tile"
    )


async def pass_by_keys_until_my_turn(page: Page) -> None:
    """Esc on every claim offered until the player may discard."""
    while True:
        handle = await page.wait_for_function(
            "() => document.querySelector('.own-hand button.htile') ? 'turn'"
            "  : document.querySelector('.actions .act-pass') ? 'claim' : null"
        )
        if await handle.json_value() == "turn":
            return
        log = await page.locator(".table-log").inner_text()
        await page.keyboard.press("Escape")
        # Answered: the buttons go, or the next update (another claim at once) says more.
        await page.wait_for_function(
            "(log) => !document.querySelector('.actions .act-pass')"
            "  || document.querySelector('.table-log').innerText !== log",
            arg=log,
            polling=30,
        )


async def test_the_playing_aids_say_what_a_raised_discard_leaves(open_page: OpenPage) -> None:
    """Opt-in: the panel is absent until the player turns the aids on; then, on its turn,
    it says for the raised tile how far from ready its discard leaves the hand (computed by
    the server's ``analyze``)."""
    page = await open_page("/")
    await play_now(page)
    panel = page.get_by_role("complementary", name="Playing aids")
    await page.get_by_text("Options and keys").click()
    await play_until(page, ".own-hand button.htile", clicks=(".actions button.act-pass",))
    assert await panel.count() == 0
    await page.get_by_label("Show playing aids", exact=False).check()
    await expect(panel).to_contain_text("Discard")
    await expect(panel).to_contain_text(re.compile(r"from ready|Ready|Complete"))


# Whether the first element of ``selector`` is wholly inside the window.
IN_WINDOW = """(selector) => {
  const r = document.querySelector(selector)?.getBoundingClientRect();
  return r && r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth;
}"""


@pytest.mark.parametrize(
    ("phone", "lang"),
    [(True, "en"), (True, "zh"), (False, "en")],
    ids=["phone-en", "phone-zh", "1280x800"],
)
async def test_the_playing_aids_show_beside_the_hand_where_a_tile_is_raised(
    open_page: OpenPage, phone: bool, lang: str
) -> None:
    """The aids' panel sat at the top of the page, above the board: on a phone, with the hand
    in view, raising a tile showed nothing. It now stays on screen under the hand, above the
    action bar, and names the tile raised."""
    page = await open_page("/", phone=phone, lang=lang, size=None if phone else (1280, 800))
    play = "Play now against three bots" if lang == "en" else "立即开局（对战三个机器人）"
    await page.get_by_role("button", name=play).click()
    await page.wait_for_selector(".own-hand", timeout=15_000)
    await page.get_by_text("Options and keys" if lang == "en" else "选项与快捷键").click()
    aids = "Show playing aids" if lang == "en" else "显示辅助"
    await page.get_by_label(aids, exact=False).check()
    await play_until(page, ".own-hand button.htile.raised", clicks=(".actions button.act-pass",))
    tile = page.locator(".own-hand button.htile:not(.raised)").first
    name = await tile.locator("img").get_attribute("alt")
    await (tile.tap() if phone else tile.click())  # raised: the panel tells its discard
    panel = page.get_by_role("complementary", name="Playing aids" if lang == "en" else "出牌辅助")
    await expect(panel).to_contain_text(f"Discard {name}:" if lang == "en" else f"打{name}：")
    await page.locator(".own-hand button.htile.raised").scroll_into_view_if_needed()
    assert await page.evaluate(IN_WINDOW, ".own-hand button.htile.raised")
    assert await page.evaluate(IN_WINDOW, ".aids"), "the aids are off the screen"
    assert await page.evaluate(IN_WINDOW, ".actions .act-discard")


# What the board shows, seat by seat, as a person sees it: each river's tiles by their alt
# text (``*`` claimed), each meld by its name and tiles, the hand (its backs' count, or the
# own tiles), the flowers; and the wall.
BOARD = """() => ({
  wall: document.querySelector(".centre .wall").textContent,
  seats: [...document.querySelectorAll(".board .seat")].map((seat) => ({
    player: seat.dataset.player,
    own: seat.classList.contains("seat-bottom"),
    river: [...seat.querySelectorAll(".river [role=listitem]")].map(
      (item) => item.querySelector("img.tile").alt + (item.querySelector(".taken") ? "*" : "")),
    melds: [...seat.querySelectorAll(".melds .meld")].map((meld) => meld.getAttribute("aria-label")
      + ": " + [...meld.querySelectorAll("img.tile")].map((img) => img.alt).join(" ")),
    hand: seat.querySelector(".hand.backs")?.getAttribute("aria-label")
      ?? [...seat.querySelectorAll(".own-hand .htile")].map((x) => x.dataset.tile).sort().join(" "),
    flowers: [...seat.querySelectorAll(".flowers img")].map((img) => img.alt),
  })),
})"""
# Claim whatever is offered, kongs too, so that the board soon shows melds.
GREEDY_CLICKS = (
    ".result button.close-result",
    ".actions button.act-win",
    ".actions button.act-kong",
    ".actions button.act-concealed_kong",
    ".actions button.act-add_kong",
    ".actions button.act-pung",
    ".actions button.act-chow",
    *PLAY_CLICKS[2:],
)


async def board_when_asked(page: Page) -> tuple[str, str, dict[str, Any]]:
    """The round, the own name and the board (``BOARD``) as they stand when the hand waits
    for this page's player to discard (no bot moves it on), passing any claim until then."""
    await play_until(page, ".own-hand button.htile", clicks=(".actions button.act-pass",))
    return (
        await page.locator(".centre .round").inner_text(),
        await page.locator(".seat-bottom .name").inner_text(),
        await page.evaluate(BOARD),
    )


RELOADS = 3  # reloads tried, each with her turn waiting for her


def own_seat(board: tuple[str, str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The hand's title and the page's own seat (the bottom one) of ``board_when_asked``."""
    return board[0], next(seat for seat in board[2]["seats"] if seat["own"])


async def test_a_reload_mid_hand_resumes_the_same_seat_and_hand(open_page: OpenPage) -> None:
    """The page follows the seats from each update's events (protocol version 2); a reload
    gets them whole (a full update): the board it shows must be the same."""
    page = await open_page("/")
    table = await play_now(page)
    # Two turns by keyboard: Esc passes a claim, → picks a tile, Enter discards it (the own
    # river grows).
    for _ in range(2):
        await pass_by_keys_until_my_turn(page)
        river = await page.locator(".seat-bottom .river img").count()
        await page.keyboard.press("ArrowRight")
        await page.keyboard.press("Enter")
        await page.wait_for_function(
            "(n) => document.querySelectorAll('.seat-bottom .river img').length > n", arg=river
        )
    for _ in range(RELOADS):
        # Then on, claiming all it may, until a meld and a few discards of its own show.
        await play_until(
            page,
            ".board:not(.phase-over):has(.melds .meld):has(.seat-bottom .river span:nth-child(3))",
            clicks=GREEDY_CLICKS,
        )
        before = await board_when_asked(page)
        await page.reload()
        assert page.url.endswith(f"#/table/{table}")
        after = await board_when_asked(page)
        if after == before:
            break
        # The table waited for her discard: nothing but her own seat could move, unless the
        # reload outlasted the wait for a disconnected player (``disconnected_seconds``, a
        # loaded machine) and the server played her turn. Any other difference is the page's.
        assert own_seat(after) != own_seat(before), (before, after)
    else:
        pytest.fail(f"each of {RELOADS} reloads outlasted the wait for a disconnected player")
    assert "hand " in after[0]
    board = after[2]["seats"]
    assert len(board) == 4 and any(seat["melds"] for seat in board), board
    print(f"\nthe same board after a reload: {board}")
    # The reloaded page never saw the hand's `commit`: its commitment came with the hand,
    # and the hand's end checks (✓, not ✗ nor "never received").
    await play_until(page, RESULT, clicks=GREEDY_CLICKS)
    assert await page.locator(".fairness.bad, .fairness.unseen").count() == 0


class WebServer(Protocol):
    """The ``web_server`` fixture (tests/web/conftest.py): where ``guobiao serve`` listens."""

    @property
    def url(self) -> str: ...


class LoseOneUpdate:
    """Between a page and the server (``page.route_web_socket``): once ``armed``, the first
    update without seats that asks nothing of the page and does not end a hand is lost on
    the way (its ``seq`` is ``lost``); from then on the ``sync`` requests the page sends
    are counted."""

    def __init__(self) -> None:
        self.armed = False
        self.lost: int | None = None
        self.syncs = 0

    async def route(self, page_side: WebSocketRoute) -> None:
        server_side = page_side.connect_to_server()

        def to_page(message: str | bytes) -> None:
            if self.armed and isinstance(message, str):
                decoded = json.loads(message)
                payload = decoded.get("payload") or {}
                view = payload.get("view") or {}
                brief = decoded["type"] == "update" and view and "seats" not in view
                if brief and not view.get("legal") and view["phase"] != "over":
                    self.armed = False
                    self.lost = payload["seq"]
                    return
            page_side.send(message)

        def to_server(message: str | bytes) -> None:
            if self.lost is not None and isinstance(message, str):
                self.syncs += json.loads(message).get("type") == "sync"
            server_side.send(message)

        server_side.on_message(to_page)
        page_side.on_message(to_server)


async def test_a_lost_update_is_asked_for_in_full_and_the_board_mended(
    browser: Browser, web_server: WebServer
) -> None:
    """Protocol version 2: the update after a lost one cannot be followed (its ``seq`` is
    not the next); the page says so and asks for a full update, once (those that come
    before it wait for it), and then shows the same board as a page opened afresh would."""
    context = await browser.new_context(base_url=web_server.url)
    page = await context.new_page()
    errors: list[str] = []
    warnings: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on(
        "console",
        lambda m: {"error": errors, "warning": warnings}.get(m.type, []).append(m.text),
    )
    lossy = LoseOneUpdate()
    await page.route_web_socket(re.compile(r"/ws$"), lossy.route)
    await page.goto("/")
    table = await play_now(page)
    await play_until(page, ".seat-bottom .river span:nth-child(2)")
    lossy.armed = True
    loop = asyncio.get_running_loop()
    until = loop.time() + 60
    while not lossy.syncs:
        assert loop.time() < until, f"no sync asked for after update {lossy.lost} was lost"
        if not await click_first(page, PLAY_CLICKS):
            await asyncio.sleep(0.03)
    mended = await board_when_asked(page)
    assert lossy.syncs == 1, "one sync at a time"
    assert lossy.lost is not None
    said = f"table {table}: update {lossy.lost + 1} (after {lossy.lost - 1}) not followed"
    assert len(warnings) == 1 and warnings[0].startswith(said), warnings
    # A second page of the same player gets the table whole (a full update). Not a reload:
    # a reload leaves the seat without a connection, and a loaded machine's reload can take
    # longer than the server's ``disconnected_seconds`` (1 s), after which it plays the seat
    # and the board moves on; the second page takes the seat over at once.
    fresh = await context.new_page()
    fresh.on("pageerror", lambda exc: errors.append(str(exc)))
    await fresh.goto(page.url)
    assert await board_when_asked(fresh) == mended
    assert not errors, errors
    print(f"\nupdate {lossy.lost} lost: {warnings[0]}")


class CutAtHandEnd:
    """Between a page and the server: once ``armed``, the update that ends a hand is not
    carried and the connection is cut there, as a network failure would (the server does not
    notice: its end stays open). The page's attempts to reconnect fail for ``AWAY`` seconds,
    so it comes back once the next hand has been dealt (the server waited for it to read the
    result, ``result_seconds``, and no longer); ``full`` gets the full updates it is sent
    from then on."""

    AWAY = 4.5  # tests/web/conftest.py's result_seconds (3), and time to deal after it

    def __init__(self) -> None:
        self.armed = False
        self.ended: int | None = None  # the hand whose end was lost
        self.connections = 0
        self.away_until = 0.0  # (the event loop's time)
        self.full: list[dict[str, Any]] = []
        self.cuts: set[asyncio.Task[None]] = set()

    def route(self, page_end: WebSocketRoute) -> None:
        loop = asyncio.get_running_loop()
        if loop.time() < self.away_until:  # the network is still down
            self._spawn(page_end.close(code=1006))
            return
        server_end = page_end.connect_to_server()
        self.connections += 1

        async def cut() -> None:
            await page_end.close(code=1006)

        def to_page(message: str | bytes) -> None:
            if isinstance(message, str):
                decoded = json.loads(message)
                payload = decoded.get("payload") or {}
                if decoded["type"] == "update" and self.ended is not None and payload.get("full"):
                    self.full.append(payload)
                ends = any(e["kind"] == "hand_end" for e in payload.get("events", []))
                if decoded["type"] == "update" and self.armed and ends:
                    self.armed = False
                    self.ended = payload["hand_no"]
                    self.away_until = loop.time() + self.AWAY
                    self._spawn(cut())
                    return
            page_end.send(message)

        server_end.on_message(to_page)
        page_end.on_message(server_end.send)

    def _spawn(self, step: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(step)
        self.cuts.add(task)
        task.add_done_callback(self.cuts.discard)

    def back(self) -> dict[str, Any]:
        """The first full update after the page came back: of the next hand, with the hand
        whose end was lost as ``last_hand``."""
        assert self.ended is not None and self.connections == 2
        back = self.full[0]
        assert back["hand_no"] == self.ended + 1, back
        assert back["last_hand"]["hand_no"] == self.ended, back
        return back


async def page_cut_at_hand_end(
    browser: Browser, web_server: WebServer
) -> tuple[Page, list[str], CutAtHandEnd]:
    """A page in a context of its own (closed by the ``browser`` fixture after the test), its
    websocket led through a ``CutAtHandEnd``, its script errors collected."""
    context = await browser.new_context(base_url=web_server.url)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    lost = CutAtHandEnd()
    await page.route_web_socket(re.compile(r"/ws$"), lost.route)
    return page, errors, lost


async def play_until_a_hand_ends(page: Page, lost: CutAtHandEnd) -> int:
    """Play at ``page`` by clicks until ``lost`` has cut a connection at a hand's end; that
    hand's number."""
    loop = asyncio.get_running_loop()
    until = loop.time() + 240
    while lost.ended is None:
        assert loop.time() < until, "no hand ended"
        if not await click_first(page, PLAY_CLICKS):
            await asyncio.sleep(0.03)
    return lost.ended


async def test_a_hand_that_ended_while_the_page_was_away_is_shown_when_it_is_back(
    browser: Browser, web_server: WebServer
) -> None:
    """The connection drops as a hand ends and comes back once the next one is dealt: the
    page never got the hand's end, and its full update on return is of the next hand. Its
    ``last_hand`` brings the result dialog up as if seen live; a reload, which had shown it,
    only offers it again ("Last hand's result")."""
    page, errors, lost = await page_cut_at_hand_end(browser, web_server)
    await page.goto("/")
    await play_now(page)
    lost.armed = True
    ended = await play_until_a_hand_ends(page, lost)
    dialog = page.locator(".result[role=dialog]")
    await expect(dialog.locator("h2")).to_contain_text(f"Hand {ended}:", timeout=20_000)
    back = lost.back()
    closed = [e["kind"] for e in back["last_hand"]["events"]]
    assert closed[-1] == "hand_end" and ("win" in closed or "exhausted" in closed), closed
    # Its reveal, lost with it, came back too: checked against the commitment of its deal.
    assert back["last_hand"]["reveal"]["hand_no"] == ended
    await expect(dialog.locator(".fairness.ok")).to_be_visible()

    # Closed by the player; then, on its turn in the next hand (the table waits), a reload.
    await page.locator(".result .close-result").click()
    await board_when_asked(page)
    round_text = await page.locator(".centre .round").inner_text()
    assert re.search(rf"\bhand {ended + 1}\b", round_text, re.IGNORECASE), round_text
    await page.reload()
    await board_when_asked(page)
    now = hand_number(await page.locator(".centre .round").inner_text())
    if now == ended + 1:
        assert await dialog.count() == 0
        left = int(await page.locator(".countdown").inner_text())
        await page.locator(".reopen-result").click()
        if left > 9:
            await expect(dialog.locator("h2")).to_contain_text(f"Hand {ended}:")
        else:
            # The reload took most of her turn (a loaded machine): with 8 s or less left
            # the result gives way to the table (RESULT_GIVES_WAY_S), still offered.
            await expect(page.locator(".reopen-result")).to_be_visible()
    else:
        # The reload outlasted the wait for a disconnected player (``disconnected_seconds``,
        # a loaded machine): her seat was played and the hand ended meanwhile. That result
        # she has not seen: it is shown.
        assert now > ended + 1, now
        await expect(dialog.locator("h2")).to_contain_text(f"Hand {now - 1}:")
    assert not errors, errors
    print(f"\nhand {ended}'s end lost with the connection: shown on return, offered after a reload")


def hand_number(round_text: str) -> int:
    """The hand a table's round line names (``... hand 5 ...``)."""
    found = re.search(r"\bhand (\d+)\b", round_text, re.IGNORECASE)
    assert found is not None, round_text
    return int(found[1])


async def test_a_spectator_back_after_a_hand_ended_sees_it_and_a_newcomer_is_only_offered_it(
    open_page: OpenPage, browser: Browser, web_server: WebServer
) -> None:
    """The same for a spectator whose connection drops as a hand ends: back, it sees the
    result it missed. One who comes to watch in the next hand is not shown the hand before
    (it was not there), only offered it ("Last hand's result")."""
    page = await open_page("/")
    table = await play_now(page)
    watcher, errors, lost = await page_cut_at_hand_end(browser, web_server)
    await watcher.goto(f"/#/watch/{table}")
    await watcher.wait_for_selector(".board", timeout=15_000)
    lost.armed = True
    ended = await play_until_a_hand_ends(page, lost)  # the player plays
    # Then the table waits for her at her first turn of the next hand (bots that win
    # before it are rare): the spectator comes back to that hand in play.
    loop = asyncio.get_running_loop()
    until = loop.time() + 60
    while not lost.full:
        assert loop.time() < until, f"the spectator did not come back after hand {ended}"
        await asyncio.sleep(0.05)
    lost.back()
    dialog = watcher.locator(".result[role=dialog]")
    await expect(dialog.locator("h2")).to_contain_text(f"Hand {ended}:", timeout=20_000)

    # The player on its turn (the table waits), a newcomer comes to watch.
    await board_when_asked(page)
    newcomer = await open_page(f"/#/watch/{table}")
    await newcomer.wait_for_selector(".board", timeout=15_000)
    round_text = await newcomer.locator(".centre .round").inner_text()
    assert re.search(rf"\bhand {ended + 1}\b", round_text, re.IGNORECASE), round_text
    assert await newcomer.locator(".result[role=dialog]").count() == 0
    await newcomer.locator(".reopen-result").click()
    await expect(newcomer.locator(".result[role=dialog] h2")).to_contain_text(f"Hand {ended}:")
    assert not errors, errors


async def test_four_pages_play_a_short_match_then_the_replay_shows_it(open_page: OpenPage) -> None:
    pages = [await open_page("/#/lobby") for _ in range(4)]
    names = []
    for page in pages:
        names.append(await play_as_guest(page))
        await page.wait_for_selector(".create", timeout=10_000)
    table = await create_table(pages[0], hands=1)  # the lobby's form seats its creator
    started = time.monotonic()
    for page in pages[1:]:
        await page.get_by_role("button", name=f"Take a seat at table {table}").click()
        await page.wait_for_selector(".my-table, .board", timeout=10_000)
    for page in pages:
        # Everyone waiting in the lobby, the one whose seat filled the table too, is taken to
        # the table when it starts. (A click on "Open" here would race that navigation, and
        # land on whatever the table page shows at that spot.)
        await page.wait_for_url(re.compile(rf".*#/table/{table}$"), timeout=15_000)
    clicks = await asyncio.gather(*(play_until(p, ".match-end", seconds=90) for p in pages))
    seconds = time.monotonic() - started
    print(f"\na one-hand match of four pages: {sum(clicks)} clicks in {seconds:.1f} s")
    final = [await p.locator(".match-end .final tbody tr").count() for p in pages]
    assert final == [4, 4, 4, 4]

    page = pages[0]
    # The final ranking names the players, not "Player 1..4" (nor "Player 1 (you)").
    ranking = await page.locator(".match-end .final").inner_text()
    assert "Player " not in ranking, ranking
    assert all(name in ranking for name in names), (names, ranking)
    await page.locator(".match-end a.primary").click()
    await page.wait_for_selector(".replay .board", timeout=15_000)
    match_id = int(page.url.split("#/match/")[1].split("/")[0])
    detail = json.loads(
        await page.evaluate(f"fetch('/api/matches/{match_id}').then(r => r.text())")
    )
    hand = detail["hands"][0]
    # The preset by its name and the time in the visitor's own zone, not "mcr" and ISO.
    meta = await page.locator(".match-meta").inner_text()
    assert "MCR (Chinese Official)" in meta and re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", meta), meta
    assert "T" not in meta.rsplit("·", 1)[1], meta
    step = page.locator(".replay-step")
    await expect(step).to_contain_text("step 0 of")
    await page.keyboard.press("ArrowRight")
    await page.keyboard.press("ArrowRight")
    await expect(step).to_contain_text("step 2 of")
    assert page.url.endswith(f"#/match/{match_id}/1/2")
    await page.get_by_role("button", name="◀ Turn").click()
    await expect(step).to_contain_text("step 1 of")
    await page.get_by_label("Seen from").select_option("2")
    await expect(page.locator(".replay .seat-bottom .name")).to_contain_text(detail["seats"][2])
    # Every hand is open in the replay: no backs in any concealed hand.
    assert await page.locator(".replay .hand.backs").count() == 0
    await page.keyboard.press("End")
    await page.wait_for_selector(".replay-result")
    shown = await page.locator(".replay-result").inner_text()
    for fan in hand["fans"]:
        assert fan["name"] in shown
    if hand["result"] == "win":
        assert f"{hand['fan_total']} fan" in shown
    else:
        assert "Drawn hand" in shown
    # A deep link opens the same step.
    steps = await step.inner_text()
    await page.goto(f"/#/match/{match_id}/1/3")
    await page.reload()
    await expect(step).to_contain_text("step 3 of")
    print(f"the replay viewer: {steps}")


async def test_a_phone_page_discards_and_claims_by_touch(open_page: OpenPage) -> None:
    page = await open_page("/", phone=True)
    await page.get_by_role("button", name="Play now against three bots").tap()
    await page.wait_for_selector(".own-hand", timeout=15_000)
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"the table is {width} px wide on a 360 px phone"
    # Discard by two taps on one tile, then claim whatever is offered first.
    tile = page.locator(".own-hand button.htile").last
    await play_until(page, ".own-hand button.htile", tap=True, clicks=(".actions button.act-pass",))
    river = await page.locator(".seat-bottom .river img").count()
    await tile.tap()
    if await page.locator(".own-hand button.htile.raised").count():
        await page.locator(".own-hand button.htile.raised").tap()
    await page.wait_for_function(
        "(n) => document.querySelectorAll('.seat-bottom .river img').length > n", arg=river
    )
    # A chow or pung: the player is told to discard, and a raised tile gets a Discard button.
    # (Claimed whenever offered, until one is hers: a bot's pung or win may take the tile
    # from her chow, as the rules say, and the play goes on.)
    claims = (".actions button.act-chow", ".actions button.act-pung")
    await play_until(
        page, ".own .melds .meld", tap=True, clicks=(*PLAY_CLICKS[:2], *claims, *PLAY_CLICKS[2:])
    )
    await expect(page.locator(".actions .prompt")).to_have_text("Choose a tile to discard")
    await page.locator(".own-hand button.htile").first.tap()
    await expect(page.locator(".actions button.act-discard")).to_be_visible()
    await expect(page.locator(".actions .prompt")).to_have_count(0)


# Every announcement a page shows at a seat, as (player, text), kept as they come and go.
# Every callout the page ever shows, from before its own scripts run (an init script: the
# observer watches the document, which has no body yet). The page's templates reuse a seat's
# callout element, changing its text (a Kong, then a Chow soon after, at one seat): each
# callout's text is read after every change, not only the elements added.
WATCH_CALLOUTS = """(() => {
  window.seenCalls = [];
  const last = new WeakMap();
  new MutationObserver(() => {
    for (const call of document.querySelectorAll(".callout")) {
      const seat = call.closest(".seat");
      if (!seat) continue;
      const said = [Number(seat.dataset.player), call.textContent.trim()];
      if (last.get(call) !== said.join()) {
        last.set(call, said.join());
        window.seenCalls.push(said);
      }
    }
  }).observe(document, {childList: true, subtree: true, characterData: true});
})();"""


async def test_claims_are_announced_at_the_claimers_seat_to_a_spectator(
    open_page: OpenPage,
) -> None:
    """Each chow, pung, kong and win the spectator's socket brings is shown at the claimer's
    seat of the spectator's table (Chow, Pung, Kong, Win), whoever made it."""
    page = await open_page("/")
    table = await play_now(page)
    watcher = await open_page("about:blank")
    frames = record_frames(watcher)
    # (Watched from the start, and each callout's text, not only the callouts added: the
    # observer added once the board showed, and seeing added elements only, missed a Chow
    # shown in the element of the Kong its seat had just declared, one run in eight or so.)
    await watcher.add_init_script(WATCH_CALLOUTS)
    await watcher.goto(f"/#/watch/{table}")
    await watcher.wait_for_selector(".board", timeout=15_000)
    words = {"chow": "Chow", "pung": "Pung", "kong": "Kong"}

    def claims() -> list[tuple[int, str]]:
        """The claims the watcher's socket brought as they were made: those in an update
        after its first full one (a claim made before it came, while the watcher was still
        being attached, is only in that snapshot, and nothing is announced of a snapshot)."""
        made, followed = [], False
        for way, message in frames:
            if way != "received" or message.get("type") != "update":
                continue
            payload = message["payload"]
            if payload.get("full"):
                followed = True
            elif followed:
                made += [
                    (e["player"], words[e["type"]])
                    for e in payload["events"]
                    if e["kind"] == "claim"
                ]
        return made

    loop = asyncio.get_running_loop()
    until = loop.time() + 90
    while not claims():
        assert loop.time() < until, "no claim in 90 s of play"
        if not await click_first(page, PLAY_CLICKS):
            await asyncio.sleep(0.03)
    claim = list(claims()[0])
    try:
        await watcher.wait_for_function(
            "(claim) => window.seenCalls.some(([p, text]) => p === claim[0] && text === claim[1])",
            arg=claim,
        )
    except PlaywrightTimeoutError:
        seen = await watcher.evaluate("window.seenCalls")
        pytest.fail(f"claim {claim} never announced (the socket brought {claims()}); seen: {seen}")
    print(f"\nclaims announced to the spectator: {await watcher.evaluate('window.seenCalls')}")


# Every claim's announcement the page shows, measured as it stands once its entrance is
# over: the seats whose river (their discards) it overlaps, if any; and every one shown with
# a hand's (or the match's) result sheet up, or under a sheet left up into the next hand.
WATCH_BANNERS = """(() => {
  window.banners = [];
  window.underSheet = [];
  window.sheets = 0;
  const over = (a, b) =>
    a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const last = new WeakMap();
  const sheets = new WeakSet();
  new MutationObserver(() => {
    const sheet = document.querySelector(".result[role=dialog]");
    if (sheet && !sheets.has(sheet)) (sheets.add(sheet), window.sheets++);
    for (const call of document.querySelectorAll(".callout")) {
      if (!call.getClientRects().length) continue; // not shown
      for (const entrance of call.getAnimations()) entrance.finish();
      const text = call.textContent.trim();
      const box = call.getBoundingClientRect();
      const ended = sheet && sheet.matches(".hand-over, .match-end");
      const under = sheet && over(box, sheet.getBoundingClientRect());
      if (ended || under) window.underSheet.push(text);
      if (last.get(call) === text) continue;
      last.set(call, text);
      const rivers = [...document.querySelectorAll(".board .seat")]
        .filter((seat) => over(box, seat.querySelector(".river").getBoundingClientRect()));
      window.banners.push({text, seat: Number(call.closest(".seat").dataset.player),
                           rivers: rivers.map((seat) => Number(seat.dataset.player))});
    }
  }).observe(document, {childList: true, subtree: true, characterData: true});
})();"""
# At the table, the player claims what she may (her own seat's announcements too).
CLAIM_CLICKS = (
    ".result button.close-result",
    ".actions button.act-win",
    ".actions button.act-pung",
    ".actions button.act-chow",
    *PLAY_CLICKS[2:],
)


@pytest.mark.parametrize("phone", [False, True], ids=["1280x800", "360x740"])
async def test_a_claims_announcement_covers_no_discards_and_no_result_sheet(
    open_page: OpenPage, phone: bool
) -> None:
    """A claim's banner ("Pung", "Win") stood over the middle of the claimer's seat for 1.8 s,
    over the river the others read to decide their next move, and a hand's "Win" showed
    through its result sheet. It is now over the claimer's name line, clear of every river;
    none shows with a hand's result sheet up, nor under the last hand's sheet left up into
    the next (on a phone, none while a sheet is up)."""
    page = await open_page("about:blank", phone=phone)
    await page.add_init_script(WATCH_BANNERS)
    frames = record_frames(page)
    await page.goto("/")
    await play_now(page)

    def won() -> bool:
        return any(
            e["kind"] == "win"
            for way, message in frames
            if way == "received" and message.get("type") == "update"
            for e in message["payload"]["events"]
        )

    loop = asyncio.get_running_loop()
    until = loop.time() + 120
    claims: list[dict[str, Any]] = []
    while not (claims and won()):
        assert loop.time() < until, f"no claim and win in 120 s of play (claims: {claims})"
        if not await click_first(page, CLAIM_CLICKS, tap=phone):
            await asyncio.sleep(0.03)
        banners = await page.evaluate("window.banners")
        claims = [b for b in banners if b["text"] != "Win"]
    banners = await page.evaluate("window.banners")
    print(f"\nannouncements: {[(b['seat'], b['text']) for b in banners]}")
    assert [b for b in banners if b["rivers"]] == []
    assert await page.evaluate("window.sheets") >= 1  # the won hand's result, at least
    assert await page.evaluate("window.underSheet") == []


async def box(page: Page, selector: str) -> dict[str, float]:
    found = await page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not shown"
    return found


@pytest.mark.parametrize("phone", [False, True], ids=["1280x800", "360x740"])
async def test_the_opponents_sit_around_the_centre_and_the_result_leaves_the_board_in_view(
    open_page: OpenPage, phone: bool
) -> None:
    """Each opponent's river lies on its side of the centre; at the hand's end the result's
    Continue button is inside the window, its fairness line scrolled to is too, and the clock
    is not under it (on a phone: once the next hand is dealt under the sheet, the clock then
    running; while the hand is over the sheet is taller, no clock running)."""
    page = await open_page("/", phone=phone)
    if not phone:
        await page.set_viewport_size({"width": 1280, "height": 800})
    await play_now(page)
    rivers = ".board" + "".join(
        f":has(.seat-{side} .river [role=listitem])" for side in ("left", "top", "right", "bottom")
    )
    await play_until(page, rivers, tap=phone)
    centre = await box(page, ".centre .compass")
    left, top, right, own = [
        await box(page, f".seat-{side} .river") for side in ("left", "top", "right", "bottom")
    ]
    assert left["x"] + left["width"] <= centre["x"], (left, centre)
    assert right["x"] >= centre["x"] + centre["width"], (right, centre)
    assert top["y"] + top["height"] <= centre["y"], (top, centre)
    assert own["y"] >= centre["y"] + centre["height"], (own, centre)
    tile = await box(page, ".seat-top .river img.tile")
    print(f"\nriver tiles {tile['width']:.0f} x {tile['height']:.0f} px")
    if not phone:
        assert tile["width"] > 28, tile
    assert await page.evaluate("document.documentElement.scrollWidth") <= (360 if phone else 1280)

    await play_until(page, RESULT, tap=phone)
    await page.evaluate("window.scrollTo(0, 0)")
    size = page.viewport_size
    assert size is not None
    await page.locator(".result .fairness").scroll_into_view_if_needed()
    for part in (".result .fairness", ".result .close-result"):
        seen = await box(page, part)
        assert seen["y"] >= 0 and seen["y"] + seen["height"] <= size["height"], (part, seen)
        assert seen["x"] >= 0 and seen["x"] + seen["width"] <= size["width"], (part, seen)
    if phone:  # dealt after result_seconds (3 s here) with the sheet still open
        await page.wait_for_selector(".board:not(.phase-over) .countdown", timeout=15_000)
        await page.evaluate("window.scrollTo(0, 0)")
    sheet = await box(page, ".result[role=dialog]")
    clock = await box(page, ".centre .compass")
    apart = clock["x"] + clock["width"] <= sheet["x"] or clock["y"] + clock["height"] <= sheet["y"]
    assert apart and clock["y"] >= 0, ("the clock is under the result", clock, sheet)


# Whether each element of ``selector`` is what a tap at its centre reaches: inside the window
# and the sheet, not scrolled away or under something pinned to the sheet's foot.
REACHED = """(selector) => [...document.querySelectorAll(selector)].map((el) => {
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
  return [el.innerText.replace(/\\s+/g, " ").trim().slice(0, 40), !!hit && el.contains(hit)];
})"""


@pytest.mark.parametrize(
    ("phone", "lang"),
    [(True, "en"), (True, "zh"), (False, "en")],
    ids=["phone-en", "phone-zh", "1280x800"],
)
async def test_a_hands_result_shows_how_it_scored_and_nothing_pinned_covers_it(
    open_page: OpenPage, phone: bool, lang: str
) -> None:
    """On a phone the result sheet showed the winning hand and hid the fans, their total and
    the payments under its pinned fairness line; on a desktop that line covered the hands.
    Now the fans, total and payments come first, in view as the sheet opens, and only
    Continue stays at the sheet's foot: every hand, scrolled to, is in view too."""
    page = await open_page("/", phone=phone, lang=lang, size=None if phone else (1280, 800))
    play = "Play now against three bots" if lang == "en" else "立即开局（对战三个机器人）"
    await page.get_by_role("button", name=play).click()
    await page.wait_for_selector(".own-hand", timeout=15_000)
    await play_until(page, RESULT, tap=phone)
    await page.wait_for_timeout(300)  # (the sheet grown to its height)
    rows = await page.evaluate(REACHED, ".result .fans tr, .result .payments tr")
    assert len(rows) >= 5, rows  # the payments' head and four players at least
    assert all(seen for _, seen in rows), rows
    hands = page.locator(".result .revealed-hand")
    for n in range(await hands.count()):
        await hands.nth(n).scroll_into_view_if_needed()  # (at the sheet's foot, if below)
        assert (await page.evaluate(REACHED, ".result .revealed-hand"))[n][1], n


async def test_nothing_moves_for_those_who_ask_for_less_motion(
    browser: Browser, web_server: WebServer, open_page: OpenPage
) -> None:
    """The turn's glow and the tiles' moves are animations; under ``prefers-reduced-motion:
    reduce`` the board runs none."""
    moving = await open_page("/")
    await play_now(moving)
    await play_until(moving, ".seat.turn")
    running = "document.querySelector('.board').getAnimations({subtree: true}).length"
    assert await moving.evaluate(running) > 0
    context = await browser.new_context(base_url=web_server.url, reduced_motion="reduce")
    page = await context.new_page()
    await page.goto("/")
    await play_now(page)
    await play_until(page, ".board:has(.seat-bottom .river [role=listitem]) .seat.turn")
    assert await page.evaluate(running) == 0


async def test_the_next_hand_waits_while_the_player_reads_the_result(open_page: OpenPage) -> None:
    """On a phone the result sheet covers the own hand: the page tells the server when its
    player has read the result (Continue), and until then the next hand is not dealt, so no
    clock runs under the sheet (the server's pause between hands here is 0.3 s)."""
    page = await open_page("/", phone=True)
    await play_now(page)
    await play_until(page, RESULT, tap=True)
    await page.wait_for_timeout(1_500)  # the pause (0.3 s) is long over; result_seconds (3) not
    assert await page.locator(".board.phase-over").count() == 1, "dealt under the sheet"
    assert await page.locator(".countdown").count() == 0, "a clock runs under the sheet"
    await page.locator(".result .close-result").tap()
    await expect(page.locator(".board:not(.phase-over) .own-hand")).to_be_visible(timeout=10_000)


async def test_a_player_who_leaves_a_result_unread_does_not_hold_the_table(
    open_page: OpenPage,
) -> None:
    """The table waits (up to ``result_seconds``) for its seated players to read each hand's
    result. A player who goes to the lobby with the result still open is not reading it: the
    page tells the server she has (``next_hand``) as it leaves, so the others do not wait
    for her. (A hand that ends while she is elsewhere is told as it ends: ``unreadElsewhere``,
    web/test/app.test.js.)"""
    page = await open_page("about:blank")  # no client yet: its socket is recorded from the start
    frames = record_frames(page)
    await page.goto("/")
    table = await play_now(page)
    await play_until(page, RESULT)
    over = [
        p["hand_no"]
        for way, f in frames
        if way == "received" and f["type"] == "update"
        for p in [f["payload"]]
        if p["table"] == table and p["view"]["phase"] == "over"
    ][-1]
    await page.get_by_role("link", name="Lobby", exact=True).click()
    await page.wait_for_url(re.compile(r".*#/lobby$"))

    def told(hand_no: int) -> bool:
        return any(
            way == "sent"
            and f["type"] == "next_hand"
            and f["payload"] == {"table": table, "hand_no": hand_no}
            for way, f in frames
        )

    for _ in range(50):  # (the frame is sent as the page is left; its event may trail)
        if told(over):
            break
        await page.wait_for_timeout(100)
    assert told(over), [f for way, f in frames if way == "sent"][-5:]


async def test_leaving_mid_match_from_the_lobby_keeps_the_seat_to_come_back_to(
    open_page: OpenPage,
) -> None:
    """``leave_table`` during a match hands the seat to the server, and it stays the
    player's (protocol.md): the lobby keeps "Your table" with the way back, and a new table
    cannot be made meanwhile (the server would refuse her seat at it, ``already_seated``,
    and leave it empty). Opening the table again seats her back at her own hand."""
    page = await open_page("/")
    table = await play_now(page)
    await page.get_by_role("link", name="Lobby", exact=True).click()
    await page.wait_for_url(re.compile(r".*#/lobby$"))
    mine = page.locator(".my-table")
    await expect(page.locator("#my-table-title")).to_have_text(f"Your table: {table}")
    await mine.get_by_role("button", name="Leave").click()
    await expect(page.locator(".error[role=alert]")).to_have_count(0)
    # Left, and still hers: the card stays, the form is closed to her.
    await expect(page.locator("#my-table-title")).to_have_text(f"Your table: {table}")
    await expect(page.get_by_role("button", name="Create the table")).to_be_disabled()
    await mine.get_by_role("link", name="Open the table").click()
    await page.wait_for_url(re.compile(rf".*#/table/{table}$"))
    await expect(page.locator(".own-hand")).to_be_visible()


async def test_the_waiting_room_names_the_rules_in_words(open_page: OpenPage) -> None:
    """The waiting room says which rules the table plays as the lobby does ("MCR (Chinese
    Official)"), not by the preset's id."""
    page = await open_page("/")
    await play_as_guest(page)
    await page.get_by_role("link", name="Lobby", exact=True).click()
    table = await create_table(page)
    await page.locator(".my-table").get_by_role("link", name="Open the table").click()
    await page.wait_for_url(re.compile(rf".*#/table/{table}$"))
    line = page.get_by_text("per decision")
    await expect(line).to_contain_text("MCR (Chinese Official)")
    await expect(line).not_to_contain_text("Rules mcr")


# A private table's waiting room in each language: (its facts' line, the copy button, what
# the page says once the link is copied).
PRIVATE_ROOM = {
    "en": ("A match of 8 hands Private", "Copy the link", "Invite link copied."),
    "zh": ("对局长度：8 局 私人牌桌", "复制链接", "邀请链接已复制。"),
}


@pytest.mark.parametrize("phone", [True, False], ids=["phone", "desktop"])
@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_private_tables_waiting_room_says_so_and_offers_its_link_to_copy(
    open_page: OpenPage, lang: str, phone: bool
) -> None:
    """At a private table before its match, the table page showed the invite link as bare
    text (nothing to copy it with) and said neither that the table is private nor how long
    its match is: it says both, and offers the link as the lobby does, with its copy
    button."""
    page = await open_page("/", phone=phone)
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    await play_as_guest(page)
    press = (lambda target: target.tap()) if phone else (lambda target: target.click())
    await press(page.get_by_role("link", name="Lobby", exact=True))
    table = await create_table(page, private=True, hands=8)
    link = await invite_link(page)
    await press(page.locator(".my-table").get_by_role("link", name="Open the table"))
    await page.wait_for_url(re.compile(rf".*#/table/{table}$"))
    if lang == "zh":
        await press(page.get_by_role("button", name="中文"))
    facts, copy, copied = PRIVATE_ROOM[lang]
    room = page.locator(".waiting-room")
    await expect(room.locator(".match-facts")).to_have_text(facts)
    await expect(room.get_by_role("textbox")).to_have_value(link)
    await press(room.get_by_role("button", name=copy))
    await expect(page.locator(".toast")).to_have_text(copied)
    assert await page.evaluate("navigator.clipboard.readText()") == link
    assert await page.evaluate("document.documentElement.scrollWidth - innerWidth") <= 0


async def test_a_move_the_server_could_not_store_is_said_and_offered_again(
    open_page: OpenPage, web_server: StoredServer
) -> None:
    """The database takes no new move of this table's match (a trigger, from another
    process, refuses it as a full disk would) while she taps a discard on a phone, in
    Chinese. The page says her move was not saved, and her tiles are hers to tap again (the
    server asks her again as the table resumes); the discard she taps once the database
    takes moves is stored as hers, not the stand-in's. Before, the page ignored the
    refusal: her tiles stayed shut until her turn ran out."""
    page = await open_page("/", phone=True, lang="zh")
    await page.get_by_role("button", name="立即开局（对战三个机器人）").tap()
    await page.wait_for_url(re.compile(r".*#/table/[^/]+$"))
    table = page.url.rsplit("/", 1)[1]
    await play_until(page, ".own-hand button.htile", tap=True, clicks=(".actions button.act-pass",))
    database = web_server.log.parent / "data" / "guobiao.db"
    river = page.locator(".seat-bottom .river img")
    before = await river.count()
    alert = page.locator(".table-error[role=alert]")
    with contextlib.closing(sqlite3.connect(database, isolation_level=None)) as outside:
        (match,) = outside.execute(
            "SELECT id FROM matches WHERE table_id = ? ORDER BY id DESC LIMIT 1", (table,)
        ).fetchone()
        outside.execute(
            f"CREATE TRIGGER full_disk_{match} BEFORE INSERT ON actions "
            f"WHEN NEW.match_id = {match} "
            "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
        try:
            for _ in range(2):  # refused, asked again, refused again: said each time
                await discard_by_taps(page)
                await expect(alert).to_have_text(re.compile("服务器暂时无法保存"))
                await expect(page.locator(".own-hand button.htile").first).to_be_enabled()
                assert await river.count() == before
            await page.screenshot(path=str(web_server.log.parent / "not-stored.png"))
        finally:
            outside.execute(f"DROP TRIGGER full_disk_{match}")
        await discard_by_taps(page)
        await page.wait_for_function(
            "(n) => document.querySelectorAll('.seat-bottom .river img').length > n", arg=before
        )
        await expect(alert).to_have_count(0)
        (stand_in,) = outside.execute(
            "SELECT stand_in FROM actions WHERE match_id = ? AND player = 0 AND action LIKE "
            "'%discard%' ORDER BY seq LIMIT 1",
            (match,),
        ).fetchone()
    assert stand_in == 0, "her discard was stored as the stand-in's"


async def discard_by_taps(page: Page) -> None:
    """Tap her last tile twice: raised, then discarded."""
    tile = page.locator(".own-hand button.htile").last
    await tile.tap()
    raised = page.locator(".own-hand button.htile.raised")
    if await raised.count():
        await raised.tap()


class StoredServer(Protocol):
    """The ``web_server`` fixture, with its log beside its data folder."""

    @property
    def log(self) -> Path: ...

"""A private table's match page: its players open it from the table's end ("See the match
and its replay"), whose link carries the table's invite code (``#/match/ID?invite=CODE``);
the page asks the server for the match and its replays with it, and keeps it in the
addresses of its hands. Without the code, or with another, the page says in the visitor's
language why it cannot show the match (docs/client.md, "The match page").
"""

from __future__ import annotations

import os
import re
from pathlib import Path

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
from playwright.async_api import Page, expect


async def shoot(page: Page, name: str) -> None:
    """A screenshot to look at (not compared), in the folder ``GUOBIAO_SCREENSHOTS`` names
    when it is set."""
    folder = os.environ.get("GUOBIAO_SCREENSHOTS")
    if folder:
        await page.screenshot(path=Path(folder) / f"private-{name}.png", full_page=True)


@pytest.mark.asyncio
async def test_a_private_tables_match_opens_from_its_end_with_its_invite_code(
    open_page: OpenPage,
) -> None:
    page = await open_page("/")
    name, table = await play_a_match_with_bots(page, "priv")
    code = await page.evaluate(f"JSON.parse(localStorage['guobiao.invites'])[{table!r}]")
    assert code

    see = page.locator(".match-end").get_by_role("link", name="See the match and its replay")
    href = await see.get_attribute("href")
    assert href is not None and re.fullmatch(rf"#/match/\d+\?invite={re.escape(code)}", href)
    await see.click()
    match_id = int(href.split("/")[2].split("?")[0])
    await expect(page.get_by_role("heading", name=f"Match {match_id}", exact=True)).to_be_visible()
    await expect(page.locator(".match-hands tbody tr")).to_have_count(1)
    await expect(page.locator(".replay-controls")).to_be_visible()  # the replay of hand 1
    # The replay keeps the code in its address, and in the links to its hands.
    await expect(page).to_have_url(re.compile(rf"#/match/{match_id}/1/0\?invite="))
    await page.keyboard.press("ArrowRight")
    await expect(page).to_have_url(re.compile(rf"#/match/{match_id}/1/1\?invite="))
    watch = page.locator(".match-hands").get_by_role("link", name="Replay")
    assert (await watch.get_attribute("href")) == f"#/match/{match_id}/1/0?invite={code}"
    # Her review is asked for with the code too.
    await page.get_by_role("button", name=f"Review {name}'s decisions").click()
    await expect(page.locator(".review-mark").first).to_be_visible(timeout=20_000)
    await shoot(page, "match-review-desktop-en")


# What the page says without the code, and with another, in each language.
NO_CODE = {
    "en": "was played at a private table: it opens only from the link",
    "zh": "在私人牌桌进行：只有带该牌桌邀请码的链接",
}
WRONG_CODE = {"en": "this link's invite code is not that table's", "zh": "邀请码不是该牌桌的"}
SIZES = {"390": (390, 844), "desktop": (1280, 800)}


async def finished_private_match(open_page: OpenPage, prefix: str) -> tuple[Page, str]:
    """A registered player's private 1-hand table with bots, played to its end: her page
    (at the table's end) and the link of its "See the match" button."""
    page = await open_page("/")
    await connected(page)
    await register(page, new_name(prefix))
    await page.goto("/#/lobby")
    table = await create_table(page, hands=1, private=True)
    await page.get_by_role("button", name="Add bots").click()
    await page.wait_for_url(f"**/#/table/{table}")
    await play_until(page, ".match-end", seconds=90)
    href = await page.locator(".match-end a.button.primary").get_attribute("href")
    assert href is not None and "?invite=" in href, href
    return page, href


@pytest.mark.asyncio
async def test_a_private_tables_match_without_its_code_says_why(open_page: OpenPage) -> None:
    """A visitor who has the match's number but not the code: the server refuses (403), and
    the page says so in words, in the visitor's language; a wrong code is told apart. The
    link with the code shows the match to anyone who has it, in either language."""
    _, href = await finished_private_match(open_page, "privw")
    match_id = href.split("/")[2].split("?")[0]
    for lang in ("en", "zh"):
        for size, (width, height) in SIZES.items():
            visitor = await open_page(
                f"/#/match/{match_id}", lang=lang, missing=True, size=(width, height)
            )
            main = visitor.locator("main")
            await expect(main).to_contain_text(NO_CODE[lang])
            await expect(visitor.locator(".match-hands")).to_have_count(0)
            await shoot(visitor, f"match-refused-{size}-{lang}")
            await visitor.goto(f"/#/match/{match_id}?invite=not-the-code")
            await expect(main).to_contain_text(WRONG_CODE[lang])
            await shoot(visitor, f"match-wrong-code-{size}-{lang}")
            await visitor.goto(f"/{href}")
            await expect(visitor.locator(".match-hands tbody tr")).to_have_count(1)
            await expect(visitor.locator(".replay-controls")).to_be_visible()
            await shoot(visitor, f"match-{size}-{lang}")
            await visitor.context.close()

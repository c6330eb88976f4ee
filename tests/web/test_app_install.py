"""The client as an installable app: its web manifest and icons, the service worker that
keeps the shell (web/sw.js; its list and version filled in by server/static.py) so that the
page opens without the server and says it cannot reach it, and the opt-in "your turn"
notification while the tab is hidden."""

from __future__ import annotations

import json
import re

import pytest
from browserkit import OpenPage, connected, play_as_guest, play_now
from playwright.async_api import Page, expect
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

OFFLINE = {
    "en": "Cannot reach the server: this device is offline.",
    "zh": "无法连接服务器：此设备处于离线状态。",
}
# Records the page's notifications; asks the browser's own permission (granted or not by the
# context), so the page's behaviour is what is recorded.
NOTIFICATIONS = """(() => {
  const Real = window.Notification;
  window.__notes = [];
  window.__asked = 0;
  window.__hidden = false;
  Object.defineProperty(document, "hidden", { get: () => window.__hidden });
  class Recorded {
    constructor(title, options) { window.__notes.push({ title, body: options && options.body }); }
    close() {}
    static get permission() { return Real.permission; }
    static requestPermission() { window.__asked += 1; return Real.requestPermission(); }
  }
  window.Notification = Recorded;
})();"""


# What the page's service worker registration is doing (each worker's state, or none).
REGISTRATION = """async () => {
  const r = await navigator.serviceWorker.getRegistration();
  if (!r) return "no registration";
  const state = (w) => (w ? w.state : null);
  return JSON.stringify({installing: state(r.installing), waiting: state(r.waiting),
                         active: state(r.active)});
}"""


async def worker_ready(page: Page) -> None:
    """Wait until the service worker controls the page (it is installed, its cache filled, by
    then); fail saying what the registration is doing if it does not within 30 s. (Not
    ``evaluate("navigator.serviceWorker.ready")``: a worker that never installs leaves that
    promise pending for ever, and the test with it.)"""
    try:
        await page.wait_for_function(
            "() => navigator.serviceWorker.controller !== null", timeout=30_000
        )
    except PlaywrightTimeoutError:
        pytest.fail(f"no service worker controls the page: {await page.evaluate(REGISTRATION)}")


@pytest.mark.asyncio
async def test_the_manifest_names_the_app_and_its_icons(open_page: OpenPage) -> None:
    page = await open_page("/")
    link = await page.locator('link[rel="manifest"]').get_attribute("href")
    assert link == "/manifest.webmanifest"
    reply = await page.request.get(link)
    assert reply.ok and reply.headers["content-type"] == "application/manifest+json"
    manifest = json.loads(await reply.text())
    assert manifest["short_name"] == "guobiao" and manifest["display"] == "standalone"
    assert manifest["start_url"] == "/"
    theme = await page.locator('meta[name="theme-color"]').get_attribute("content")
    assert manifest["theme_color"] == theme
    purposes = set()
    for icon in manifest["icons"]:
        image = await page.request.get(icon["src"])
        assert image.ok and image.headers["content-type"] == "image/png", icon
        body = await image.body()
        size = int.from_bytes(body[16:20], "big"), int.from_bytes(body[20:24], "big")
        assert f"{size[0]}x{size[1]}" == icon["sizes"], icon
        purposes.add(icon["purpose"])
    assert {"192x192", "512x512"} <= {i["sizes"] for i in manifest["icons"]}
    assert purposes == {"any", "maskable"}


@pytest.mark.asyncio
@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_shell_opens_offline_and_says_the_server_cannot_be_reached(
    open_page: OpenPage, lang: str
) -> None:
    page = await open_page("/#/lobby", lang=lang)
    await connected(page)
    await worker_ready(page)
    worker = await page.request.get("/sw.js")
    source = await worker.text()
    assert "__SHELL_VERSION__" not in source
    shell = json.loads(re.search(r"const SHELL = (\[.*\]);", source).group(1))  # type: ignore[union-attr]
    assert {"/index.html", "/js/main.js", "/app.css", "/tiles/1m.svg"} <= set(shell)
    assert not [path for path in shell if path.startswith(("/api/", "/ws", "/test/"))]
    await page.context.set_offline(True)
    await page.reload()
    await expect(page.locator(".site-header")).to_be_visible()
    await expect(page.locator("main h1")).to_be_visible()
    await expect(page.locator(".offline-note")).to_contain_text(OFFLINE[lang])
    await page.context.set_offline(False)
    await connected(page)
    await expect(page.locator(".offline-note")).to_have_count(0)


@pytest.mark.asyncio
async def test_the_turn_notification_asks_first_then_comes_while_the_tab_is_hidden(
    open_page: OpenPage,
) -> None:
    page = await open_page("/")
    await page.context.grant_permissions(["notifications"])
    await page.context.add_init_script(NOTIFICATIONS)
    await page.reload()
    await connected(page)
    await play_as_guest(page)
    await play_now(page)
    await page.locator(".table-options summary").click()
    box = page.get_by_label("Notify me when it is my turn while this tab is hidden")
    assert await page.evaluate("window.__asked") == 0  # nothing asked before the box
    await box.check()
    await expect(box).to_be_checked()
    assert await page.evaluate("window.__asked") == 1
    await page.evaluate("window.__hidden = true")
    # Play on (a discard, a pass) until the table asks again: the page cannot be seen.
    for _ in range(200):
        if await page.evaluate("window.__notes.length"):
            break
        for selector in (".actions button.act-pass", ".own-hand button.htile"):
            target = page.locator(selector).last
            if await target.count() and await target.is_enabled():
                await target.click()
                await target.click() if selector.endswith(
                    "htile"
                ) and await target.count() else None
                break
        await page.wait_for_timeout(100)
    notes = await page.evaluate("window.__notes")
    assert notes and notes[0]["title"] == "Your turn", notes

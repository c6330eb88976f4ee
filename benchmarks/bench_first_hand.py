"""From a fresh clone to a hand being played in the browser: the README's first command, timed.

Clones this repository's committed ``HEAD`` into a temporary folder, runs the README's first
command there (``python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/guobiao
serve``, on a free port), and as soon as it prints its address opens it in headless
Chromium (Playwright, ``--chromium`` or ``GUOBIAO_CHROMIUM`` or ``chromium`` on the PATH),
presses "Play now against three bots" and plays until its own first discard, passing any
claim. Prints the seconds from the start of the command to: the server serving, the first
hand dealt on the page, the first own discard. pip's cache makes a second run faster than a
first install on a new machine; the figures say which it was only by their size.

    .venv/bin/python benchmarks/bench_first_hand.py [--chromium PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from benchkit import ROOT, free_port
from playwright.async_api import Page, async_playwright

COMMAND = "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/guobiao serve"


async def first_discard(page: Page) -> None:
    """Play by clicks (pass every claim, discard the raised tile) until the own river has a
    tile."""
    river = page.locator(".seat-bottom .river img")
    while await river.count() == 0:
        for spot in (".actions button.act-pass", ".own-hand button.htile.raised"):
            button = page.locator(spot)
            if await button.count():
                await button.first.click()
                break
        else:
            await page.locator(".own-hand button.htile").last.click()
        await page.wait_for_timeout(100)


async def run(chromium: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        clone = Path(folder) / "guobiao"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        port = free_port()
        started = time.monotonic()
        server = subprocess.Popen(
            f"{COMMAND} --port {port} --data-dir {Path(folder) / 'data'}",
            shell=True,
            cwd=clone,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        assert server.stdout is not None
        try:
            line = await asyncio.to_thread(server.stdout.readline)
            serving = time.monotonic() - started
            print(f"README command to the server serving: {serving:.1f} s ({line.strip()[:40]}...)")
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(executable_path=chromium)
                page = await browser.new_page()
                await page.goto(f"http://127.0.0.1:{port}/")
                await page.get_by_role("button", name="Play now against three bots").click()
                await page.wait_for_selector(".own-hand button.htile")
                dealt = time.monotonic() - started
                await first_discard(page)
                discarded = time.monotonic() - started
                await browser.close()
            print(f"first hand dealt on the page: {dealt:.1f} s")
            print(f"first own discard: {discarded:.1f} s")
        finally:
            os.killpg(server.pid, 15)
            server.wait(30)
            server.stdout.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = os.environ.get("GUOBIAO_CHROMIUM") or shutil.which("chromium") or ""
    parser.add_argument("--chromium", default=default, help="the Chromium to drive")
    args = parser.parse_args()
    if not args.chromium:
        parser.error("no Chromium found: give --chromium PATH (Debian: apt install chromium)")
    asyncio.run(run(args.chromium))


if __name__ == "__main__":
    main()

"""Draw the app's icons (``web/icons/*.png``, named by ``web/manifest.webmanifest``) from
``web/favicon.svg`` with headless Chromium (Debian's ``chromium``, driven by Playwright).

Run ``python3 web/tools/make_icons.py`` (from the project's virtual environment) after
changing the favicon; commit the PNG files it writes. ``icon-192`` and ``icon-512`` are the
tile on the site's felt green, with rounded corners; ``maskable-512`` fills the whole square
with the green and keeps the tile inside the middle 60 % (the safe zone of a maskable icon is
the middle 80 %: a launcher may cut a circle or a squircle out of it).
"""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
from pathlib import Path

from playwright.async_api import async_playwright

WEB = Path(__file__).resolve().parent.parent
FELT = "#174a36"  # the theme colour of index.html and the manifest
ICONS = {  # file -> (size in pixels, tile height as a share of it, corner radius share)
    "icon-192.png": (192, 0.78, 0.18),
    "icon-512.png": (512, 0.78, 0.18),
    "maskable-512.png": (512, 0.6, 0.0),
}
PAGE = """<!doctype html><html><body style="margin:0;background:transparent">
<div style="width:{size}px;height:{size}px;background:{felt};border-radius:{radius}px;
display:flex;align-items:center;justify-content:center">
<img src="data:image/svg+xml;base64,{svg}" style="height:{tile}px"></div></body></html>"""


async def main() -> None:
    svg = base64.b64encode((WEB / "favicon.svg").read_bytes()).decode()
    executable = os.environ.get("GUOBIAO_CHROMIUM") or shutil.which("chromium")
    out = WEB / "icons"
    out.mkdir(exist_ok=True)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=executable)
        for name, (size, tile, radius) in ICONS.items():
            page = await browser.new_page(viewport={"width": size, "height": size})
            html = PAGE.format(
                size=size, felt=FELT, radius=round(size * radius), svg=svg, tile=round(size * tile)
            )
            await page.set_content(html)
            await page.screenshot(path=str(out / name), omit_background=True)
            await page.close()
            print(f"wrote {out / name}")
        await browser.close()


if __name__ == "__main__":
    asyncio.run(main())

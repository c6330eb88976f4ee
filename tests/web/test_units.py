"""The client's pure modules, tested inside a real page: ``/test/`` runs every suite of
``web/test/`` (``suites.js``) and leaves one result per test in ``window.testResults``."""

from __future__ import annotations

import pytest
from browserkit import OpenPage

pytestmark = pytest.mark.asyncio


async def test_the_in_page_suites_pass(open_page: OpenPage) -> None:
    page = await open_page("/test/")
    await page.wait_for_selector("body[data-done]", timeout=30_000)
    results = await page.evaluate("window.testResults")
    failed = [f"{r['name']}: {r['error']}" for r in results if not r["ok"]]
    assert not failed, "\n".join(failed)
    assert len(results) >= 1
    print(f"\n{len(results)} in-page tests passed")

"""What the browser tests share (tests/web/): the ``open_page`` fixture's type and the steps
a person takes in the client, written once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from playwright.async_api import Page

# ``await open_page(path="/", phone=False, lang="en")``: a page in a fresh browser context.
OpenPage = Callable[..., Awaitable[Page]]

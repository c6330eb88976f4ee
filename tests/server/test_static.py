"""The web client's files over HTTP: content types, validators, HEAD, nothing outside them.

``server.static`` serves the files of ``web/`` (the package ``server.web``) from a table read
at start; these tests read them through a running server, byte for byte against the files of
the repository.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from httpkit import http_request

from server.app import App

pytestmark = pytest.mark.asyncio

WEB = Path(__file__).resolve().parent.parent.parent / "web"


async def test_the_page_and_its_modules_are_served_with_their_types(app: App) -> None:
    page = await http_request(app.port, "/")
    assert page.status == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.body == (WEB / "index.html").read_bytes()
    for path, kind in [
        ("/index.html", "text/html; charset=utf-8"),
        ("/app.css", "text/css; charset=utf-8"),
        ("/js/main.js", "text/javascript; charset=utf-8"),
        ("/js/vendor/lit-html.js", "text/javascript; charset=utf-8"),
    ]:
        answer = await http_request(app.port, path)
        assert (answer.status, answer.headers["content-type"]) == (200, kind), path
        assert answer.body == (WEB / path.lstrip("/")).read_bytes(), path
        assert answer.headers["content-length"] == str(len(answer.body))
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert "default-src 'self'" in answer.headers["content-security-policy"]


async def test_an_unchanged_file_is_revalidated_with_its_etag(app: App) -> None:
    first = await http_request(app.port, "/js/main.js")
    etag = first.headers["etag"]
    assert first.headers["cache-control"] == "no-cache"
    for header in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        again = await http_request(app.port, "/js/main.js", headers={"If-None-Match": header})
        assert (again.status, again.body) == (304, b""), header
        assert again.headers["etag"] == etag
    changed = await http_request(app.port, "/js/main.js", headers={"If-None-Match": '"old"'})
    assert (changed.status, changed.body) == (200, first.body)
    other = await http_request(app.port, "/app.css")
    assert other.headers["etag"] != etag


async def test_head_gets_the_headers_of_get_and_no_body(app: App) -> None:
    for path in ("/", "/js/vendor/lit-html.js", "/healthz", "/api/players/nobody"):
        got = await http_request(app.port, path)
        head = await http_request(app.port, path, method="HEAD")
        assert head.status == got.status, path
        assert head.body == b"", path
        assert head.headers["content-length"] == str(len(got.body)), path
        assert head.headers["content-type"] == got.headers["content-type"], path


@pytest.mark.parametrize(
    "path",
    [
        "/../pyproject.toml",
        "/js/../../server/app.py",
        "/js/%2e%2e/%2e%2e/server/app.py",
        "/%2fetc%2fpasswd",
        "//etc/passwd",
        "/__init__.py",  # the package's marker, not part of the client
        "/tools/make_tiles.py",  # the tile generator stays in the repository
        "/js/vendor/",
        "/index.htm",
    ],
)
async def test_nothing_outside_the_client_is_served(app: App, path: str) -> None:
    answer = await http_request(app.port, path)
    assert answer.status == 404, (path, answer.body)
    assert answer.headers["content-type"] == "application/json; charset=utf-8"


async def test_other_methods_are_refused(app: App) -> None:
    for method in ("POST", "PUT", "DELETE"):
        answer = await http_request(app.port, "/", method=method)
        assert answer.status == 405, method
        assert answer.headers["allow"] == "GET, HEAD"
        assert b"only GET and HEAD" in answer.body

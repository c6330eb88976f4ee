"""The web client's files over HTTP: content types, validators, HEAD, nothing outside them.

``server.static`` serves the files of ``web/`` (the package ``server.web``) from a table read
at start; these tests read them through a running server, byte for byte against the files of
the repository.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from httpkit import http_request
from serverkit import StartServer

from server.app import App
from server.config import ConfigError, load
from server.static import WebFiles

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


async def test_the_in_page_tests_are_left_out_unless_asked_for() -> None:
    served = WebFiles()
    assert served.get("/") is not None and served.get("/js/main.js") is not None
    assert not [path for path in served.assets if path.startswith("/test/")]
    for path in ("/test/", "/test/index.html", "/test/harness.js", "/test/suites.js"):
        assert served.get(path) is None, path
    asked = WebFiles(tests=True)
    page = asked.get("/test/")
    assert page is not None and page.body == (WEB / "test" / "index.html").read_bytes()
    assert asked.get("/test/harness.js") is not None
    assert set(asked.assets) - set(served.assets) == {
        f"/{path.relative_to(WEB).as_posix()}" for path in (WEB / "test").iterdir()
    }


async def test_the_server_serves_its_in_page_tests_only_when_configured_to(
    start_server: StartServer,
) -> None:
    default = await start_server()
    assert (await http_request(default.port, "/test/")).status == 404
    assert (await http_request(default.port, "/test/index.html")).status == 404
    testing = await start_server(server={"test_pages": True})
    page = await http_request(testing.port, "/test/")
    assert page.status == 200
    assert page.body == (WEB / "test" / "index.html").read_bytes()
    assert not load(environ={}).server.test_pages
    for word, on in (("true", True), ("1", True), ("off", False), (" No ", False)):
        assert load(environ={"GUOBIAO_SERVER_TEST_PAGES": word}).server.test_pages is on
    with pytest.raises(ConfigError, match=r"\[server\] test_pages must be true or false"):
        load(environ={"GUOBIAO_SERVER_TEST_PAGES": "maybe"})


def _shell_of(files: WebFiles) -> tuple[str, list[str]]:
    """The version and the paths the served ``/sw.js`` was given."""
    worker = files.get("/sw.js")
    assert worker is not None and worker.content_type.startswith("text/javascript")
    text = worker.body.decode()
    version = json.loads(re.search(r"const VERSION = (\".*?\");", text).group(1))  # type: ignore[union-attr]
    shell = json.loads(re.search(r"const SHELL = (\[.*?\]);", text).group(1))  # type: ignore[union-attr]
    return version, shell


async def test_the_service_worker_gets_the_shell_and_a_version_that_follows_its_files(
    tmp_path: Path,
) -> None:
    version, shell = _shell_of(WebFiles(tests=True))
    assert {"/index.html", "/js/main.js", "/manifest.webmanifest", "/icons/icon-192.png"} <= set(
        shell
    )
    assert "/sw.js" not in shell and not [p for p in shell if p.startswith("/test/")]
    # A copy of the client with one file changed: another version, the same paths.
    copy = tmp_path / "web"
    shutil.copytree(WEB, copy, ignore=shutil.ignore_patterns("test", "tools", "__pycache__"))
    assert _shell_of(WebFiles(copy)) == (version, shell)
    (copy / "app.css").write_text((WEB / "app.css").read_text() + "\n/* changed */\n")
    changed, same = _shell_of(WebFiles(copy))
    assert changed != version and same == shell

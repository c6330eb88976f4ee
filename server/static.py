"""The web client's files, served over the same port as the websocket.

The client (``web/`` in the repository, shipped as the package ``server.web``) is a few dozen
small files: they are read once, at start, into a table keyed by URL path. A request is a
lookup in that table, so nothing outside it can ever be served (``..``, encoded slashes, a
symlink: all simply absent). Every answer carries its content type, ``nosniff`` and a strong
``ETag`` (a hash of the bytes) with ``Cache-Control: no-cache``: browsers keep the files and
revalidate them, and an unchanged file costs a ``304 Not Modified`` with no body. The file
names are not hashed, so a new release is picked up on the next load without any build step.

The service worker (``/sw.js``, which keeps the app shell for an instant and offline start)
is the one file filled in as it is read: its ``SHELL`` becomes the list of the client's paths
and its ``VERSION`` a hash of their ``ETag`` headers, so that any changed file makes the browser
install a new worker, which fills a new cache and drops the old one (see ``web/sw.js``).

The client's in-page tests (``web/test/``, the page ``/test/`` that runs them) are served
only when asked (``[server] test_pages``, for the browser tests of a checkout): a production
server has no use for them, and the wheel does not ship them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import http
import json
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".json": "application/json; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".webmanifest": "application/manifest+json",
}
# Not part of the client: the tile generator and the package's own Python files.
SKIPPED_FOLDERS = {"tools", "__pycache__"}
TESTS = "test"  # the in-page tests' folder, served only when asked
SERVICE_WORKER = "/sw.js"
# The placeholders of web/sw.js that the shell's version and paths replace.
SHELL_VERSION = b'"__SHELL_VERSION__"'
SHELL_FILES = b'["__SHELL_FILES__"]'

# The page loads its own scripts, styles and images and talks to its own server only.
# lit-html writes no inline script; `style-src 'unsafe-inline'` allows style attributes.
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self' ws: wss:; frame-ancestors 'none'; "
        "base-uri 'none'; form-action 'self'"
    ),
}


@dataclass(frozen=True, slots=True)
class Asset:
    body: bytes
    content_type: str
    etag: str


class WebFiles:
    """The client's files by URL path (``/`` is ``/index.html``); the in-page tests
    (``/test/``) too with ``tests``, where the install has them."""

    def __init__(self, root: Traversable | None = None, *, tests: bool = False) -> None:
        self.assets: dict[str, Asset] = {}
        self.tests = tests
        self._add(root if root is not None else resources.files("server.web"), "")
        self._fill_service_worker()

    def _add(self, folder: Traversable, prefix: str) -> None:
        for entry in folder.iterdir():
            if entry.is_dir():
                tests = not prefix and entry.name == TESTS
                if entry.name not in SKIPPED_FOLDERS and (self.tests or not tests):
                    self._add(entry, f"{prefix}/{entry.name}")
                continue
            suffix = entry.name[entry.name.rfind(".") :] if "." in entry.name else ""
            content_type = CONTENT_TYPES.get(suffix)
            if content_type is None:  # .py, editor leftovers: not part of the client
                continue
            body = entry.read_bytes()
            etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
            self.assets[f"{prefix}/{entry.name}"] = Asset(body, content_type, etag)

    def _fill_service_worker(self) -> None:
        """Give ``/sw.js`` the shell's paths (every file but itself and the in-page tests)
        and a version that changes whenever one of them does."""
        worker = self.assets.get(SERVICE_WORKER)
        if worker is None:
            return
        tests = f"/{TESTS}/"
        shell = sorted(p for p in self.assets if p != SERVICE_WORKER and not p.startswith(tests))
        tags = "".join(self.assets[p].etag for p in shell)
        version = hashlib.sha256(tags.encode()).hexdigest()[:16]
        body = worker.body.replace(SHELL_VERSION, json.dumps(version).encode())
        body = body.replace(SHELL_FILES, json.dumps(shell).encode())
        etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
        self.assets[SERVICE_WORKER] = Asset(body, worker.content_type, etag)

    def get(self, path: str) -> Asset | None:
        """The file at ``path``, or the ``index.html`` of the folder ``path`` names."""
        return self.assets.get(path) or self.assets.get(path.rstrip("/") + "/index.html")

    def respond(self, connection: ServerConnection, asset: Asset, request: Request) -> Response:
        """``200`` with the file (headers only for ``HEAD``), or ``304`` when the client's
        copy is current (``If-None-Match``)."""
        fresh = _matches(request.headers.get("If-None-Match", ""), asset.etag)
        status = http.HTTPStatus.NOT_MODIFIED if fresh else http.HTTPStatus.OK
        response = connection.respond(status, "")  # its Date and Server headers
        del response.headers["Content-Type"], response.headers["Content-Length"]
        response.headers["Content-Type"] = asset.content_type
        response.headers["ETag"] = asset.etag
        response.headers["Cache-Control"] = "no-cache"
        for name, value in SECURITY_HEADERS.items():
            response.headers[name] = value
        size = 0 if fresh else len(asset.body)
        response.headers["Content-Length"] = str(size)  # for HEAD too: the size of a GET
        body = b"" if fresh or request.method == "HEAD" else asset.body
        return dataclasses.replace(response, body=body)


def _matches(if_none_match: str, etag: str) -> bool:
    """Whether an ``If-None-Match`` header names ``etag`` (weakly compared, ``*`` for any)."""
    tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in tags or etag in tags

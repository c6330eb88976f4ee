"""Which pages may open a websocket (``server.origins``): the rule alone, then the handshake as
a browser meets it, a page of another origin refused with 403 before the websocket opens
(before, ``http://evil.example`` was welcomed)."""

from __future__ import annotations

import json

import pytest
from httpkit import http_request
from serverkit import StartServer
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from websockets.typing import Origin

from server.app import App
from server.config import ConfigError, load
from server.origins import origin_allowed, parse_allowed

NONE: frozenset[str] = frozenset()


@pytest.mark.parametrize(
    ("origin", "host"),
    [
        (None, "play.example:8765"),  # not a browser
        ("http://play.example:8765", "play.example:8765"),  # the page the server served
        ("http://PLAY.example:8765", "play.example:8765"),
        ("https://play.example", "play.example"),  # through a proxy that passes the Host
        ("https://play.example", "play.example:443"),
        ("http://play.example", "play.example:80"),
        ("http://192.168.1.5:8765", "192.168.1.5:8765"),
        ("http://[2001:db8::5]:8765", "[2001:db8::5]:8765"),
        ("http://localhost:3000", "play.example:8765"),  # the machine's own pages
        ("http://127.0.0.1:8765", "play.example:8765"),
        ("http://127.3.2.1", None),
        ("http://[::1]:8000", "play.example:8765"),
        ("http://app.localhost:5173", "play.example:8765"),
    ],
)
def test_own_loopback_and_no_origin_are_allowed(origin: str | None, host: str | None) -> None:
    assert origin_allowed(origin, host, NONE)


@pytest.mark.parametrize(
    ("origin", "host"),
    [
        ("http://evil.example", "127.0.0.1:8765"),
        ("http://evil.example:8765", "play.example:8765"),
        ("http://play.example:9000", "play.example:8765"),  # another port, another origin
        ("https://play.example", "play.example:80"),
        ("http://play.example.evil.example:8765", "play.example:8765"),
        ("null", "play.example:8765"),  # a sandboxed page, a file
        ("", "play.example:8765"),
        ("ws://play.example:8765", "play.example:8765"),
        ("http://play.example:8765", None),  # no Host: nothing is the server's own
        ("http://evil.example", "evil.example@play.example"),
        ("http://play.example:99999", "play.example:99999"),
        ("http://evil.example", "127.0.0.1:8765/x"),
    ],
)
def test_other_origins_are_refused(origin: str, host: str | None) -> None:
    assert not origin_allowed(origin, host, NONE)


def test_the_configured_origins_are_allowed_and_star_allows_all() -> None:
    allowed = parse_allowed("https://Mahjong.example.org/, http://10.0.0.5:8765")
    assert allowed == {"https://mahjong.example.org", "http://10.0.0.5:8765"}
    assert origin_allowed("https://mahjong.example.org", "10.0.0.11:8765", allowed)
    assert origin_allowed("https://mahjong.example.org:443", "10.0.0.11:8765", allowed)
    assert origin_allowed("http://10.0.0.5:8765", "10.0.0.11:8765", allowed)
    assert not origin_allowed("http://mahjong.example.org", "10.0.0.11:8765", allowed)
    assert origin_allowed("http://evil.example", "x", parse_allowed("*"))


@pytest.mark.parametrize(
    "value", ["mahjong.example.org", "https://mahjong.example.org/play", "ftp://x", "https://"]
)
def test_a_listed_origin_that_is_not_one_stops_the_server(value: str) -> None:
    with pytest.raises(ConfigError, match="allowed_origins"):
        load(environ={"GUOBIAO_SERVER_ALLOWED_ORIGINS": value})


async def handshake(port: int, origin: str | None) -> int:
    """The status of a websocket handshake with ``origin``: 101 if it opened."""
    try:
        async with connect(f"ws://127.0.0.1:{port}/ws", origin=origin):  # type: ignore[arg-type]
            return 101
    except InvalidStatus as exc:
        return exc.response.status_code


@pytest.mark.asyncio
async def test_the_handshake_refuses_a_page_of_another_origin(start_server: StartServer) -> None:
    app = await start_server(server={"allowed_origins": "https://mahjong.example.org"})
    port = app.port
    assert await handshake(port, "http://evil.example") == 403
    assert await handshake(port, None) == 101
    assert await handshake(port, f"http://127.0.0.1:{port}") == 101
    assert await handshake(port, "https://mahjong.example.org") == 101
    # The refusal as HTTP sees it: JSON, saying what was refused and why.
    upgrade = {
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version": "13",
        "Origin": "http://evil.example",
    }
    answer = await http_request(port, "/ws", headers=upgrade)
    assert answer.status == 403
    assert answer.headers["content-type"] == "application/json; charset=utf-8"
    reason = json.loads(answer.body)["error"]
    assert "http://evil.example" in reason and "allowed_origins" in reason


@pytest.mark.asyncio
async def test_the_handshake_headers_are_let_go_once_the_websocket_is_open(app: App) -> None:
    # websockets keeps the handshake's request and response for the connection's life:
    # their headers were about 3.5 KiB of every connection (benchmarks/bench_memory.py).
    url = f"ws://127.0.0.1:{app.port}/ws"
    async with connect(url, origin=Origin("http://localhost:3000")) as ws:
        await ws.send(json.dumps({"type": "hello", "id": "h", "payload": {"versions": [1]}}))
        assert json.loads(await ws.recv())["reply_to"] == "h"
        (served,) = app.connections
        assert served.ws.request is not None and served.ws.response is not None
        assert not served.ws.request.headers and not served.ws.response.headers
        await ws.send(json.dumps({"type": "guest", "id": "g", "payload": {}}))
        assert json.loads(await ws.recv())["type"] != "error"  # and it serves on

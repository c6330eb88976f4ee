"""How many websocket connections the server holds, as a client meets the limits: one client
address holds at most ``[limits] connections_per_address`` (so that one address cannot fill
the server and keep everyone else out), the server at most ``max_connections``; one more is
closed as it opens, with 1013 and a reason that says which, and there is room again as soon
as one goes. ``guobiao loadtest`` so refused says which setting to raise. Every test client
is at 127.0.0.1; another address is 127.0.0.2, which Linux's loopback answers too."""

from __future__ import annotations

import asyncio
import json

import pytest
from serverkit import StartServer
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from server.app import App
from server.cli.loadtest import loadtest

TIMEOUT = 10.0


async def open_from(app: App, address: str = "127.0.0.1") -> ClientConnection:
    return await connect(f"ws://127.0.0.1:{app.port}/ws", local_addr=(address, 0))


async def greeted(ws: ClientConnection) -> bool:
    """Whether the server answers a ``hello`` on ``ws`` (False: it closed the connection)."""
    try:
        await ws.send(json.dumps({"type": "hello", "id": 1, "payload": {"versions": [3]}}))
        reply = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
    except ConnectionClosed:
        return False
    assert reply["type"] == "welcome", reply
    return True


async def refused_with(ws: ClientConnection) -> tuple[int, str]:
    """The close code and reason of a connection the server closed as it opened."""
    with pytest.raises(ConnectionClosed) as closed:
        await asyncio.wait_for(ws.recv(), TIMEOUT)
    received = closed.value.rcvd
    assert received is not None
    return received.code, received.reason


async def held_by(app: App, address: str, count: int) -> None:
    """Wait until the server counts ``count`` connections of ``address``."""
    for _ in range(200):
        if app.connections_by_address.get(address, 0) == count:
            return
        await asyncio.sleep(0.02)
    assert app.connections_by_address.get(address, 0) == count, app.connections_by_address


@pytest.mark.asyncio
async def test_one_address_holds_only_so_many_connections(start_server: StartServer) -> None:
    app = await start_server(limits={"connections_per_address": 3})
    held = [await open_from(app) for _ in range(3)]
    others: list[ClientConnection] = []
    try:
        assert all([await greeted(ws) for ws in held])
        extra = await open_from(app)
        assert await refused_with(extra) == (1013, "too many connections from this address")
        # Another address is served meanwhile, to the same limit of its own.
        others = [await open_from(app, "127.0.0.2") for _ in range(3)]
        assert all([await greeted(ws) for ws in others])
        # One goes: there is room again for its address.
        await held.pop().close()
        await held_by(app, "127.0.0.1", 2)
        held.append(await open_from(app))
        assert await greeted(held[-1])
    finally:
        for ws in held + others:
            await ws.close()
    # Each address is forgotten once it holds none (the count does not grow with visitors).
    await held_by(app, "127.0.0.1", 0)
    await held_by(app, "127.0.0.2", 0)
    assert not app.connections_by_address


@pytest.mark.asyncio
async def test_no_limit_per_address_when_it_is_zero(start_server: StartServer) -> None:
    app = await start_server(limits={"connections_per_address": 0, "max_connections": 6})
    held = [await open_from(app) for _ in range(6)]
    try:
        assert all([await greeted(ws) for ws in held])
    finally:
        for ws in held:
            await ws.close()


@pytest.mark.asyncio
async def test_a_full_server_closes_one_more_connection(start_server: StartServer) -> None:
    app = await start_server(limits={"max_connections": 2})
    first, second = await open_from(app), await open_from(app, "127.0.0.2")
    try:
        assert await greeted(first) and await greeted(second)
        assert await refused_with(await open_from(app, "127.0.0.3")) == (1013, "server full")
        await first.close()
        await held_by(app, "127.0.0.1", 0)
        again = await open_from(app, "127.0.0.3")
        assert await greeted(again)
        await again.close()
    finally:
        await first.close()
        await second.close()


@pytest.mark.asyncio
async def test_a_loadtest_refused_connections_says_which_setting_to_raise(
    start_server: StartServer,
) -> None:
    app = await start_server(limits={"connections_per_address": 2})
    report = await loadtest(f"ws://127.0.0.1:{app.port}/ws", tables=1, duration=2.0, rate=None)
    assert report.connect_failures >= 1
    assert any("connections_per_address" in note for note in report.notes), report.notes

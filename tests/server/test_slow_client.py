"""What a client that reads slowly, or not at all, gets from ``server.connection.Connection``.

What is sent to a connection is written straight to its socket while the socket takes it,
and waits in the connection's bounded outbox while it does not (``limits.send_queue``). A
client that stops reading is disconnected (1013, "too slow") once its outbox is full, and the
table plays on; one that pauses and reads again gets every message, in order, whichever way
each went. Here a spectator watches a fast table (a network bot and three server bots); the
socket buffers of the connections under test are made small, on both sides, so that a few
updates fill them.
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest
from serverkit import StartServer
from websockets.asyncio.client import ClientConnection, connect

from engine.bots import make_bot
from server.app import App
from server.client import Client, play

SMALL_BUFFER = 4096  # bytes: each socket buffer of a connection under test


async def spectator(app: App, table: str, name: str) -> tuple[ClientConnection, Any]:
    """A raw websocket that says hello, is a guest and watches ``table``; its socket
    buffers, and its server side's, made small. Returns the socket and its server side."""
    ws = await connect(f"ws://127.0.0.1:{app.port}/ws", max_queue=1)
    for kind, payload in (("hello", {"versions": [1]}), ("guest", {}), ("watch", {"table": table})):
        await ws.send(json.dumps({"type": kind, "id": name, "payload": payload}))
        while True:  # its answer (updates may come first)
            reply = json.loads(await ws.recv())
            if reply.get("reply_to") == name:
                assert reply["type"] != "error", reply
                break
    ws.transport.get_extra_info("socket").setsockopt(
        socket.SOL_SOCKET, socket.SO_RCVBUF, SMALL_BUFFER
    )
    username = next(c.username for c in app.connections if c.username and c.tables.get(table))
    served = next(c for c in app.connections if c.username == username)
    served.ws.transport.get_extra_info("socket").setsockopt(
        socket.SOL_SOCKET, socket.SO_SNDBUF, SMALL_BUFFER
    )
    served.ws.transport.set_write_buffer_limits(high=SMALL_BUFFER)
    return ws, served


async def fast_table(app: App) -> tuple[Client, str, asyncio.Task[Any]]:
    url = f"ws://127.0.0.1:{app.port}/ws"
    player = await Client.connect(url, rate=None)
    await player.guest()
    table = (await player.create_table(turn_seconds=30)).table
    await player.join_table(table, seat=0)
    await player.add_bots(table, "fast")
    return player, table, asyncio.create_task(play(player, table, make_bot("fast")))


async def wait_until(check: Any, timeout: float, what: str) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.01)
    assert check(), what


@pytest.mark.asyncio
async def test_a_client_that_stops_reading_is_dropped_and_the_table_plays_on(
    start_server: StartServer,
) -> None:
    app = await start_server(limits={"send_queue": 8})
    player, table, playing = await fast_table(app)
    try:
        ws, served = await spectator(app, table, "slow")
        ws.transport.pause_reading()  # it reads no more
        await wait_until(lambda: served.dropped, 30, "the slow spectator dropped")
        assert app.slow_drops == 1
        assert app.lobby is not None
        seq = app.lobby.get(table).seq
        await wait_until(lambda: app.lobby.get(table).seq > seq + 20, 30, "the table plays on")
        ws.transport.resume_reading()
        async with asyncio.timeout(10):
            await ws.wait_closed()
        assert ws.close_code == 1013, (ws.close_code, ws.close_reason)
    finally:
        playing.cancel()
        await player.close()


@pytest.mark.asyncio
async def test_a_client_that_pauses_gets_every_update_in_order(start_server: StartServer) -> None:
    """A spectator stops reading for a moment, again and again, while the table plays:
    its socket fills, the server queues, then writes straight again: every update arrives,
    their ``seq`` one after the other, none twice. (A spectator gets every update.)"""
    app = await start_server(limits={"send_queue": 10_000})
    player, table, playing = await fast_table(app)
    try:
        ws, served = await spectator(app, table, "pausing")
        seqs: list[int] = []

        async def read() -> None:
            async for frame in ws:
                message = json.loads(frame)
                if message["type"] == "update" and message["payload"]["table"] == table:
                    seqs.append(message["payload"]["seq"])

        reading = asyncio.create_task(read())
        queued = 0
        for _ in range(10):
            ws.transport.pause_reading()
            await asyncio.sleep(0.3)
            queued = max(queued, served.outbox.qsize() if served.outbox is not None else 0)
            ws.transport.resume_reading()
            await asyncio.sleep(0.1)
        assert queued > 0, "the outbox was never used: the test did not fill the socket"
        assert not served.dropped
        await ws.close()
        await reading
        assert len(seqs) > 50
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
    finally:
        playing.cancel()
        await player.close()

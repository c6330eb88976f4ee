"""What a client that reads slowly, or not at all, gets from ``server.connection.Connection``.

What is sent to a connection is written straight to its socket while the socket takes it,
and waits in the connection's bounded outbox while it does not (``limits.send_queue``
messages, ``limits.send_queue_bytes`` bytes). A client that stops reading is disconnected
(1013, "too slow") once its outbox is full either way, and the table plays on; a visitor who
asks for big answers (the listing) and reads none is held to the bytes too; one that pauses
and reads again gets every message, in order, whichever way each went. Here a spectator
watches a fast table (a network bot and three server bots); the socket buffers of the
connections under test are made small, on both sides, so that a few updates fill them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from typing import Any

import pytest
from serverkit import StartServer
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

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


async def told_too_slow(ws: ClientConnection) -> None:
    """A client that stopped reading reads again: what was on its way, then the server's
    close, 1013 "too slow"."""
    ws.transport.resume_reading()
    with contextlib.suppress(ConnectionClosed):
        async with asyncio.timeout(10):
            async for _ in ws:
                pass
    assert ws.close_code == 1013, (ws.close_code, ws.close_reason)


@pytest.mark.parametrize(
    "limits",
    [{"send_queue": 8}, {"send_queue": 100_000, "send_queue_bytes": 16384}],
    ids=["messages", "bytes"],
)
@pytest.mark.asyncio
async def test_a_client_that_stops_reading_is_dropped_and_the_table_plays_on(
    start_server: StartServer, limits: dict[str, int]
) -> None:
    """Dropped once its outbox is full by count (8 messages) or, though it could hold
    100,000 messages, by bytes (16 KiB queued, ``send_queue_bytes``)."""
    app = await start_server(limits=limits)
    player, table, playing = await fast_table(app)
    try:
        ws, served = await spectator(app, table, "slow")
        ws.transport.pause_reading()  # it reads no more
        held = 0

        def dropped() -> bool:
            nonlocal held
            held = max(held, served.queued_bytes)
            return served.dropped

        await wait_until(dropped, 30, "the slow spectator dropped")
        assert app.slow_drops == 1
        assert 0 < held <= app.config.limits.send_queue_bytes, held
        assert served.outbox is not None and served.outbox.qsize() <= limits["send_queue"]
        assert app.lobby is not None
        seq = app.lobby.get(table).seq
        await wait_until(lambda: app.lobby.get(table).seq > seq + 20, 30, "the table plays on")
        await told_too_slow(ws)
    finally:
        playing.cancel()
        await player.close()


@pytest.mark.asyncio
async def test_a_visitor_asking_for_the_listing_and_reading_none_is_dropped(
    start_server: StartServer,
) -> None:
    """``list_tables`` needs no login and its answer grows with the tables listed: a visitor
    that asks for it again and again and reads nothing is held to ``send_queue_bytes``, not
    to ``send_queue`` listings, and is then disconnected (1013)."""
    app = await start_server(
        limits={
            "send_queue": 100_000,
            "send_queue_bytes": 16384,
            "messages_per_second": 10_000,
            "message_burst": 10_000,
        }
    )
    url = f"ws://127.0.0.1:{app.port}/ws"
    owner = await Client.connect(url, rate=None)
    await owner.guest()
    for _ in range(2):
        await owner.create_table(turn_seconds=30)  # two public tables waiting: listed
    ws = await connect(url, max_queue=1)
    try:
        await ws.send(json.dumps({"type": "hello", "id": 1, "payload": {"versions": [2]}}))
        assert json.loads(await ws.recv())["type"] == "welcome"
        await ws.send(json.dumps({"type": "list_tables", "id": 2, "payload": {}}))
        listing = await ws.recv()
        assert len(json.loads(listing)["payload"]["tables"]) == 2
        ws.transport.get_extra_info("socket").setsockopt(
            socket.SOL_SOCKET, socket.SO_RCVBUF, SMALL_BUFFER
        )
        served = next(c for c in app.connections if c.username is None)
        served.ws.transport.get_extra_info("socket").setsockopt(
            socket.SOL_SOCKET, socket.SO_SNDBUF, SMALL_BUFFER
        )
        served.ws.transport.set_write_buffer_limits(high=SMALL_BUFFER)
        ws.transport.pause_reading()
        asks = 0
        while not served.dropped and asks < 5000:  # each answer about as long as `listing`
            await ws.send(json.dumps({"type": "list_tables", "id": 3, "payload": {}}))
            asks += 1
            await asyncio.sleep(0)
        await wait_until(lambda: served.dropped, 10, "the visitor dropped")
        assert app.slow_drops == 1
        # Dropped long before 100,000 answers, or 5,000: at 16 KiB queued, give or take
        # what the sockets held.
        assert asks < 16384 // len(listing) + 200, (asks, len(listing))
        await told_too_slow(ws)
    finally:
        await ws.close()
        await owner.close()


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

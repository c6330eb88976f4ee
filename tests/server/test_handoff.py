"""Handing a websocket connection to another worker (``server.handoff``): when a connection
may go (between two messages, nothing unread or unwritten), and the hand-over itself, a real
TCP connection passed between two endpoints in this process while its client talks on. That
a cluster's workers use it to seat a player where her table runs is test_cluster.py's."""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import pytest_asyncio
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol

from server.handoff import AdoptedConnection, Handoff, at_frame_boundary, socket_path


def client_frame(text: str, fin: bool = True) -> bytes:
    """A text frame as a client writes it (masked)."""
    return Frame(Opcode.TEXT, text.encode(), fin=fin).serialize(mask=True, extensions=[])


def fed(*chunks: bytes) -> Any:
    """A server connection's protocol (websockets' own) that received ``chunks``, its
    frames taken from it as the connection's reader would: what ``at_frame_boundary``
    reads of a connection."""
    protocol = ServerProtocol(state=State.OPEN)
    for chunk in chunks:
        protocol.receive_data(chunk)
        protocol.events_received()
    return SimpleNamespace(protocol=protocol, recv_messages=SimpleNamespace(frames=[]))


def test_a_connection_is_at_a_frame_boundary_only_between_whole_frames() -> None:
    one, two = client_frame('{"type": "ping"}'), client_frame('{"type": "join"}')
    assert at_frame_boundary(fed())
    assert at_frame_boundary(fed(one))
    assert at_frame_boundary(fed(one + two))
    assert at_frame_boundary(fed(one[:3], one[3:]))
    # A part of a frame read: its head alone, its head and some of its text, one byte.
    assert not at_frame_boundary(fed(one[:2]))
    assert not at_frame_boundary(fed(one[:-1]))
    assert not at_frame_boundary(fed(one + two[:1]))
    # A message of several frames begun (the first without FIN).
    assert not at_frame_boundary(fed(client_frame('{"type":', fin=False)))


def test_a_frame_received_and_not_yet_handled_holds_the_connection() -> None:
    ws = fed(client_frame('{"type": "ping"}'))
    ws.recv_messages.frames.append(object())  # received, waiting for the reader
    assert not at_frame_boundary(ws)


def test_a_workers_socket_path_fits_a_unix_socket() -> None:
    folder = tempfile.mkdtemp(prefix="guobiao-handoff-")
    try:
        path = socket_path(folder, "a-rather-long-host-name.example.org:8765/w12")
        assert len(os.fsencode(path)) < 108
        assert path != socket_path(folder, "a-rather-long-host-name.example.org:8765/w1")
    finally:
        os.rmdir(folder)


# ------------------------------------------------- a real hand-over ---


class Worker:
    """A websocket server with a hand-over endpoint: ``move`` hands the connection to the
    other worker (``to``); any other message is answered with this worker's name and it.
    With a ``gate``, ``move`` first stops reading, says "holding" and waits for the gate."""

    def __init__(self, name: str, folder: str) -> None:
        self.name = name
        self.folder = folder
        self.to: Worker | None = None
        self.handoff = Handoff(folder, name, self._adopt)
        self.served: list[str] = []  # what this worker answered
        self.moved: list[bool] = []  # each ``move``: handed over or not
        self.tasks: set[asyncio.Task[None]] = set()
        self.server: Any = None
        self.gate: asyncio.Event | None = None

    async def start(self) -> int:
        self.handoff.start()
        self.server = await serve(self._serve, "127.0.0.1", 0, compression=None)
        return int(next(iter(self.server.sockets)).getsockname()[1])

    async def close(self) -> None:
        self.handoff.close()
        self.server.close()
        await self.server.wait_closed()
        for task in self.tasks:
            task.cancel()

    async def _serve(self, ws: ServerConnection) -> None:
        async for message in ws:
            if message == "move":
                assert self.to is not None
                if self.gate is not None:
                    ws.transport.pause_reading()
                    await ws.send(f"{self.name} holding")
                    await self.gate.wait()
                to = self.handoff.sibling(self.to.name)
                moved = to is not None and self.handoff.hand_over(ws, to, {"from": self.name})
                self.moved.append(moved)
                if moved:
                    ws.transport.abort()  # (``release``)
                    return
                await ws.send(f"{self.name} kept it")
                continue
            self.served.append(str(message))
            await ws.send(f"{self.name}: {message}")

    def _adopt(self, sock: socket.socket, state: dict[str, Any]) -> None:
        self.task = asyncio.get_running_loop().create_task(self._serve_adopted(sock, state))
        self.tasks.add(self.task)

    async def _serve_adopted(self, sock: socket.socket, state: dict[str, Any]) -> None:
        ws = AdoptedConnection(ServerProtocol(state=State.OPEN), self.server)
        await asyncio.get_running_loop().connect_accepted_socket(lambda: ws, sock)
        await ws.send(f"{self.name} took it from {state['from']}")
        await self._serve(ws)


@pytest_asyncio.fixture
async def workers() -> AsyncIterator[tuple[Worker, Worker, int]]:
    folder = tempfile.mkdtemp(prefix="guobiao-handoff-")
    one, two = Worker("w1", folder), Worker("w2", folder)
    one.to, two.to = two, one
    port = await one.start()
    await two.start()
    try:
        yield one, two, port
    finally:
        await one.close()
        await two.close()
        for name in os.listdir(folder):
            os.unlink(Path(folder) / name)
        os.rmdir(folder)


@pytest.mark.asyncio
async def test_a_connection_handed_over_goes_on_with_the_other_worker(
    workers: tuple[Worker, Worker, int],
) -> None:
    one, two, port = workers
    async with connect(f"ws://127.0.0.1:{port}", compression=None) as client:
        await client.send("before")
        assert await client.recv() == "w1: before"
        await client.send("move")
        assert await client.recv() == "w2 took it from w1"
        await client.send("later")
        assert await client.recv() == "w2: later"
        # And back: the same TCP connection all along.
        await client.send("move")
        assert await client.recv() == "w1 took it from w2"
        await client.send("last")
        assert await client.recv() == "w1: last"
    assert one.served == ["before", "last"] and two.served == ["later"]
    assert one.handoff.handed == 1 and two.handoff.adopted == 1


@pytest.mark.asyncio
async def test_what_the_client_sends_during_the_hand_over_reaches_the_other_worker(
    workers: tuple[Worker, Worker, int],
) -> None:
    one, two, port = workers
    one.gate = asyncio.Event()
    async with connect(f"ws://127.0.0.1:{port}", compression=None) as client:
        await client.send("move")
        assert await client.recv() == "w1 holding"  # w1 reads no more
        await client.send("during")  # in the kernel's buffer, unread
        await asyncio.sleep(0.05)
        one.gate.set()
        assert await client.recv() == "w2 took it from w1"
        assert await client.recv() == "w2: during"
    assert one.served == [] and two.served == ["during"]


@pytest.mark.asyncio
async def test_a_frame_already_read_keeps_the_connection_where_it_is(
    workers: tuple[Worker, Worker, int],
) -> None:
    one, two, port = workers
    async with connect(f"ws://127.0.0.1:{port}", compression=None) as client:
        # "move" and the next message in one write: the next is read with it, so the
        # connection stays (nothing read may be lost) and both are answered by w1.
        assert client.transport is not None
        client.transport.write(client_frame("move") + client_frame("next"))
        assert await client.recv() == "w1 kept it"
        assert await client.recv() == "w1: next"
    assert one.moved == [False] and two.handoff.adopted == 0


@pytest.mark.asyncio
async def test_a_sibling_that_stopped_taking_connections_leaves_it_where_it_is(
    workers: tuple[Worker, Worker, int],
) -> None:
    one, two, port = workers
    two.handoff.close()  # its socket's file goes: it takes none
    await moved_nowhere(one, port)


@pytest.mark.asyncio
async def test_a_dead_siblings_socket_leaves_the_connection_where_it_is(
    workers: tuple[Worker, Worker, int],
) -> None:
    one, two, port = workers
    # Killed: its file is still there, nobody reads it (connecting is refused).
    assert two.handoff.sock is not None
    asyncio.get_running_loop().remove_reader(two.handoff.sock.fileno())
    two.handoff.sock.close()
    two.handoff.sock = None
    assert socket_path(one.folder, "w2").exists()
    await moved_nowhere(one, port)


async def moved_nowhere(one: Worker, port: int) -> None:
    """A client asks w1 to move it: w1 keeps it, and answers it on."""
    async with connect(f"ws://127.0.0.1:{port}", compression=None) as client:
        await client.send("move")
        assert await client.recv() == "w1 kept it"
        await client.send("still here")
        assert await client.recv() == "w1: still here"
    assert one.moved == [False]

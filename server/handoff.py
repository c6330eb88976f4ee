"""A connection handed to the worker that runs its table (``guobiao serve --workers``).

The workers of one machine share one port, and the kernel gives each new connection to any of
them: a player's table is as likely as not run by another worker than hers, and then every
message of hers, and every update to her, is relayed between the two through Redis (about half
of what two workers spend an action: docs/performance.md). So when a connection asks to join or
watch a table a sibling worker runs (or resumes a seat at one), its worker hands it the
connection itself instead: the socket's file descriptor, over a Unix datagram socket of the
sibling's (``SCM_RIGHTS``), with who the client is and what it asked. The sibling serves that
TCP connection from then on, that request first; the client sees nothing but its answer, from
the worker that runs the table.

The siblings' sockets are in one private directory (``[server] handoff_dir``, made by ``serve
--workers`` with mode 0700 and removed when it stops), a file per worker named from its node
name: only this machine's processes of the same user can reach them.

A connection is handed over only between two of its messages: nothing read and not yet handled
(no frame or part of one in websockets' buffers), nothing sent to it still unwritten
(``movable``). Bytes the client sends meanwhile wait in the kernel's buffer for the new
worker. If anything else is the case, or the sibling's socket is gone or full, the connection
stays and is relayed as before; nothing is lost either way. A worker that dies after it took a
connection loses it as it loses its own: the client reconnects and resumes.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import errno
import hashlib
import logging
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from websockets.asyncio.connection import Connection as WsConnection
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request
from websockets.protocol import State

log = logging.getLogger("guobiao.server")

MAX_STATE = 64 * 1024  # bytes of a handed connection's state at most (it is under 1 KiB)
MAX_MOVES = 2  # a connection is handed over this many times at most (a table moving meanwhile)


def socket_path(folder: str | Path, node: str) -> Path:
    """The Unix socket of worker ``node`` in ``folder`` (a name short enough for any folder
    ``serve --workers`` makes: a socket's path is 107 bytes at most)."""
    return Path(folder) / (hashlib.sha256(node.encode()).hexdigest()[:16] + ".sock")


def at_frame_boundary(ws: WsConnection) -> bool:
    """Whether ``ws`` has read nothing it has not handed on: no frame waiting to be received,
    no part of one in the parser (its generator waits in ``at_eof``, before a frame's first
    byte, with an empty buffer) and no fragmented message begun."""
    protocol = ws.protocol
    if len(ws.recv_messages.frames) or protocol.current_size is not None:
        return False  # (``current_size``: the size so far of a message of several frames)
    if protocol.reader.buffer:
        return False
    # The innermost generator the parser waits in (CPython's generators say which).
    waiting: Any = protocol.parser
    while getattr(waiting, "gi_yieldfrom", None) is not None:
        waiting = waiting.gi_yieldfrom
    code = getattr(waiting, "gi_code", None)
    return code is not None and code.co_name == "at_eof"


def movable(ws: WsConnection) -> bool:
    """Whether ``ws`` can be handed over now: open, between two messages, everything it was
    sent written to the kernel (what websockets queued itself, a pong say, is written now)."""
    transport = ws.transport
    if ws.protocol.state is not State.OPEN or transport.is_closing() or ws.paused:
        return False
    if not at_frame_boundary(ws):
        return False
    queued = ws.protocol.data_to_send()
    if queued:
        transport.write(b"".join(queued))
    return transport.get_write_buffer_size() == 0


class Handoff:
    """This worker's end: its socket in ``folder``, where its siblings hand it connections
    (``adopt(sock, state)`` is called with each), and the way to hand one to a sibling."""

    def __init__(
        self, folder: str, node: str, adopt: Callable[[socket.socket, dict[str, Any]], None]
    ) -> None:
        self.folder = folder
        self.node = node
        self.path = socket_path(folder, node)
        self.adopt = adopt
        self.sock: socket.socket | None = None
        self.handed = 0  # connections handed to siblings
        self.adopted = 0  # connections taken from them

    def start(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # this worker's, left by its earlier life
        sock.bind(str(self.path))
        sock.setblocking(False)
        self.sock = sock
        asyncio.get_running_loop().add_reader(sock.fileno(), self._readable)

    def close(self) -> None:
        """Take no more connections: the socket's file goes first, so that a sibling finds
        it gone and relays instead."""
        if self.sock is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        asyncio.get_running_loop().remove_reader(self.sock.fileno())
        self._readable()  # what was sent before the file went (each closed if not served)
        self.sock.close()
        self.sock = None

    def sibling(self, node: str | None) -> Path | None:
        """The socket of worker ``node`` if it is another worker of this machine's that takes
        connections now."""
        if node is None or node == self.node or self.sock is None:
            return None
        path = socket_path(self.folder, node)
        return path if path.exists() else None

    def hand_over(self, ws: WsConnection, to: Path, state: dict[str, Any]) -> bool:
        """Send ``ws``'s socket and ``state`` to the sibling at ``to``; True if it went (this
        worker must then forget the connection without closing it: ``release``). False, and
        the connection as it was, if it is not ``movable`` or the sibling does not take it."""
        if self.sock is None or not movable(ws):
            return False
        raw = ws.transport.get_extra_info("socket")
        if raw is None:
            return False
        data = orjson.dumps(state)
        if len(data) > MAX_STATE:
            return False
        ws.transport.pause_reading()  # what the client sends next stays in the kernel
        duplicate = os.dup(raw.fileno())
        try:
            # (``socket.send_fds`` drops its address before Python 3.12: sendmsg itself.)
            rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [duplicate]))]
            self.sock.sendmsg([data], rights, 0, str(to))
        except OSError as exc:
            # Gone (ENOENT, ECONNREFUSED: the sibling stopped) or full (EAGAIN): relayed.
            if exc.errno not in (errno.ENOENT, errno.ECONNREFUSED, errno.EAGAIN):
                log.warning("handing a connection to %s failed: %s", to, exc)
            ws.transport.resume_reading()
            return False
        finally:
            os.close(duplicate)
        self.handed += 1
        return True

    def _readable(self) -> None:
        """Take every connection waiting on our socket."""
        assert self.sock is not None
        while True:
            try:
                data, fds, flags, _ = socket.recv_fds(self.sock, MAX_STATE, 1)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                log.warning("reading a handed connection failed: %s", exc)
                return
            truncated = flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC)
            if len(fds) != 1 or truncated:
                for fd in fds:
                    os.close(fd)
                log.warning("a handed connection came without its socket or cut short")
                continue
            sock = socket.socket(fileno=fds[0])
            try:
                state = orjson.loads(data)
                if not isinstance(state, dict):
                    raise ValueError("not an object")
            except ValueError as exc:
                log.warning("a handed connection's state is unreadable (%s): closed", exc)
                sock.close()
                continue
            self.adopted += 1
            self.adopt(sock, state)


def release(ws: WsConnection) -> None:
    """Forget ``ws`` here after it was handed over: its socket is closed in this process
    without a close frame or a shutdown (the sibling's copy of it keeps the connection)."""
    ws.transport.abort()


class AdoptedConnection(ServerConnection):
    """A websocket connection another worker opened and handed over: its handshake is done,
    so websockets' server does not run its handler (``server.app.App`` serves it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.request = Request("/", Headers())  # (its frames are frames, not a request)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        WsConnection.connection_made(self, transport)

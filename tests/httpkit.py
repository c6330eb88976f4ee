"""A plain HTTP/1.1 GET against a test server on loopback, for the tests that read its
HTTP API (``/healthz``, ``/api/...``) without a client library."""

from __future__ import annotations

import asyncio


async def http_get(port: int, path: str) -> tuple[int, str]:
    """``(status, body)`` of a plain HTTP/1.1 GET on 127.0.0.1."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body.decode()

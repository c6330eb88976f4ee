"""Plain HTTP/1.1 requests against a test server on loopback, for the tests that read its
HTTP API (``/healthz``, ``/api/...``) and the web client's files without a client library."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes


async def http_request(
    port: int, path: str, method: str = "GET", headers: dict[str, str] | None = None
) -> Answer:
    """One request on 127.0.0.1 (``Connection: close``); the whole answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    fields = dict(line.split(":", 1) for line in header_lines)
    return Answer(
        int(status_line.split(" ", 2)[1]),
        {name.strip().lower(): value.strip() for name, value in fields.items()},
        body,
    )


async def http_get(port: int, path: str) -> tuple[int, str]:
    """``(status, body)`` of a plain HTTP/1.1 GET on 127.0.0.1."""
    answer = await http_request(port, path)
    return answer.status, answer.body.decode()

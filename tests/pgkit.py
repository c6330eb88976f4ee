"""Scratch PostgreSQL databases, for the tests (tests/server/conftest.py, tests/clusterkit.py)
and the benchmarks that run on PostgreSQL (bench_ladder, bench_workers, bench_failover).

The server is the one of ``GUOBIAO_TEST_POSTGRES_URL`` (default
``postgresql+asyncpg://postgres@127.0.0.1:5432/test``) unless a caller names another; the
database in that URL is only the one connected to while others are created and dropped.

- ``create_database(prefix)``: a new, empty database named ``PREFIX_PID_HEX`` (unique, so
  parallel runs and what a killed run left behind never clash); its URL.
- ``drop_database(url)``: drop it again, ``WITH (FORCE)`` (connections still open to it are
  closed: a test that failed half-way must not keep its database alive).
- ``scratch_database(prefix)``: both, as an async context manager.
- ``execute(url, *statements)``: statements outside any transaction (``CREATE DATABASE``
  cannot run inside one, which is why this is plain asyncpg and not SQLAlchemy).
- ``connect(url)``: an asyncpg connection from a SQLAlchemy URL of any driver.

Nothing here depends on pytest: a server that cannot be reached raises ``Unavailable``,
which the tests turn into a skip and the benchmarks into a message.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy import URL, make_url

POSTGRES_URL = os.environ.get(
    "GUOBIAO_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
CONNECT_TIMEOUT = 5.0  # seconds: a server that does not answer is as good as none


class Unavailable(Exception):
    """Something a test or a benchmark needs (a PostgreSQL server, ``redis-server``) is not
    there."""


async def connect(url: str | URL) -> Any:
    """An asyncpg connection to the database of ``url`` (whatever its driver name says)."""
    import asyncpg  # type: ignore[import-untyped]  # noqa: PLC0415 (PostgreSQL only)

    parsed = make_url(url)
    return await asyncpg.connect(
        host=parsed.host or "127.0.0.1",
        port=parsed.port or 5432,
        user=parsed.username,
        password=parsed.password,
        database=parsed.database,
        timeout=CONNECT_TIMEOUT,
    )


async def execute(url: str | URL, *statements: str) -> None:
    """Run ``statements`` on the database of ``url``, one after the other, outside any
    transaction."""
    connection = await connect(url)
    try:
        for statement in statements:
            await connection.execute(statement)
    finally:
        await connection.close()


async def create_database(prefix: str, server_url: str = POSTGRES_URL) -> str:
    """Create a uniquely named empty database on the server of ``server_url``; return its
    URL (``postgresql+asyncpg``, the password kept). ``Unavailable`` when the server cannot
    be reached or refuses."""
    server = make_url(server_url).set(drivername="postgresql+asyncpg")
    name = f"{prefix}_{os.getpid()}_{secrets.token_hex(4)}"
    try:
        await execute(server, f'CREATE DATABASE "{name}"')
    except Exception as exc:  # any failure: no usable server
        where = server.render_as_string(hide_password=True)
        raise Unavailable(f"PostgreSQL not reachable at {where}: {exc!r}") from None
    return server.set(database=name).render_as_string(hide_password=False)


async def drop_database(url: str, server_url: str = POSTGRES_URL) -> None:
    """Drop the database of ``url`` (none there: nothing to do), connected to the database
    of ``server_url`` on the same server (a database cannot drop itself)."""
    parsed = make_url(url)
    maintenance = parsed.set(database=make_url(server_url).database)
    await execute(maintenance, f'DROP DATABASE IF EXISTS "{parsed.database}" WITH (FORCE)')


@contextlib.asynccontextmanager
async def scratch_database(prefix: str, server_url: str = POSTGRES_URL) -> AsyncIterator[str]:
    """``create_database``, yield its URL, then ``drop_database`` (whatever happened)."""
    url = await create_database(prefix, server_url)
    try:
        yield url
    finally:
        await drop_database(url, server_url)

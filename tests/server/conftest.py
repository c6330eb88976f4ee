"""Database fixtures for the server's tests: each test on SQLite and on PostgreSQL.

- ``database_url``: the URL of an empty database, once a temporary SQLite file and once a
  PostgreSQL database (``postgres`` marker). PostgreSQL is at ``GUOBIAO_TEST_POSTGRES_URL``
  (default ``postgresql+asyncpg://postgres@127.0.0.1:5432/test``); each test session creates
  its own uniquely named database there and drops it at the end (tests/pgkit.py), so
  parallel runs don't clash, and each test starts from an empty ``public`` schema.
  Unreachable: skipped.
- ``migrated_url``: the same, migrated to the newest revision (on SQLite a copy of
  ``migrated_sqlite``, a file each session migrates once, instead of running every migration
  again for each test: a fifth of a second or so each time, in many tests).
- ``store``: a ``Store`` open on ``migrated_url``, closed after the test.

The running server, in-process on 127.0.0.1 (port 0: a free one), on a SQLite file under the
test's ``tmp_path`` (a copy of ``migrated_sqlite``: its start-up finds the schema up to date),
with short timers:

- ``start_server``: a factory, ``await start_server(limits={...}, timers={...})`` starts one
  more ``server.app.App`` (its own database file, or ``database="name.db"``: that file, for a
  restart) with those section overrides; every server started is stopped after the test.
- ``app``: one such server with the default test settings (a 3 s turn, no pause between
  hands, a generous rate limit: network bots answer at once).
- ``http_get``: ``await http_get(port, path)`` -> ``(status, body)``, a plain HTTP/1.1 GET.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import os
import secrets
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpkit
import pgkit
import pytest
import pytest_asyncio
import redis
from clusterkit import delete_keys
from serverkit import TEST_LIMITS, TEST_TIMERS, StartServer
from sqlalchemy import URL, make_url

from server.app import App
from server.config import (
    AccountsSection,
    Config,
    DatabaseSection,
    LadderSection,
    MatchmakingSection,
    MetricsSection,
    ServerSection,
    TournamentsSection,
)
from server.db.store import Store, upgrade


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[URL]:
    """A PostgreSQL database of this test session's own (``pgkit``); skips when there is no
    server."""
    try:
        url = asyncio.run(pgkit.create_database("guobiao_test"))
    except pgkit.Unavailable as exc:
        pytest.skip(str(exc))
    try:
        yield make_url(url)
    finally:
        asyncio.run(pgkit.drop_database(url))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """An empty database: a fresh SQLite file, or the session's PostgreSQL database with an
    empty ``public`` schema."""
    if request.param == "sqlite":
        folder = tmp_path_factory.mktemp("db")
        yield f"sqlite+aiosqlite:///{folder / 'data' / 'guobiao.db'}"
        return
    url: URL = request.getfixturevalue("postgres_database")
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        asyncio.run(pgkit.execute(url, "DROP SCHEMA public CASCADE", "CREATE SCHEMA public"))


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to the newest revision, once per test session (per worker): the
    tests that need a migrated SQLite database get a copy of it."""
    path = tmp_path_factory.mktemp("migrated") / "guobiao.db"
    asyncio.run(upgrade(f"sqlite+aiosqlite:///{path}"))
    return path


def copy_migrated(template: Path, url: str) -> None:
    """Put a copy of the migrated ``template`` where the SQLite ``url`` points (the same
    bytes the migrations would have written there)."""
    path = Path(make_url(url).database or "")
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template, path)


@pytest_asyncio.fixture
async def migrated_url(database_url: str, migrated_sqlite: Path) -> str:
    if database_url.startswith("sqlite"):
        copy_migrated(migrated_sqlite, database_url)
    else:
        await upgrade(database_url)
    return database_url


@pytest_asyncio.fixture
async def store(migrated_url: str) -> AsyncIterator[Store]:
    opened = await Store.open(migrated_url)
    try:
        yield opened
    finally:
        await opened.close()


# ------------------------------------------------------- the running server ---


@pytest_asyncio.fixture
async def start_server(tmp_path: Path, migrated_sqlite: Path) -> AsyncIterator[StartServer]:
    """A factory of running servers, each on its own database file (a copy of the migrated
    one, unless the file is there already), all stopped at the end."""
    started: list[App] = []

    async def start(
        *,
        timers: dict[str, Any] | None = None,
        limits: dict[str, Any] | None = None,
        database: str | None = None,
        ladder: dict[str, Any] | None = None,
        matchmaking: dict[str, Any] | None = None,
        tournaments: dict[str, Any] | None = None,
        accounts: dict[str, Any] | None = None,
        server: dict[str, Any] | None = None,
        metrics: dict[str, Any] | None = None,
    ) -> App:
        """Start a server; ``timers`` and ``limits`` replace fields of the test settings
        (``limits=dataclasses.asdict(LimitsSection())``: the production limits);
        ``database`` names its SQLite file under the test's folder, so that servers started
        one after the other with the same name restart on one database (default: a file
        of its own). ``ladder``, ``matchmaking``, ``tournaments``, ``accounts``, ``server``
        and ``metrics`` replace fields of those sections."""
        name = database or f"server{len(started)}.db"
        if not (tmp_path / name).exists():
            shutil.copyfile(migrated_sqlite, tmp_path / name)
        local = ServerSection(host="127.0.0.1", port=0, data_dir=str(tmp_path))
        config = Config(
            server=dataclasses.replace(local, **(server or {})),
            database=DatabaseSection(url=f"sqlite+aiosqlite:///{tmp_path / name}"),
            timers=dataclasses.replace(TEST_TIMERS, **(timers or {})),
            limits=dataclasses.replace(TEST_LIMITS, **(limits or {})),
            ladder=dataclasses.replace(LadderSection(), **(ladder or {})),
            matchmaking=dataclasses.replace(MatchmakingSection(), **(matchmaking or {})),
            tournaments=dataclasses.replace(TournamentsSection(), **(tournaments or {})),
            accounts=dataclasses.replace(AccountsSection(), **(accounts or {})),
            metrics=dataclasses.replace(MetricsSection(), **(metrics or {})),
        )
        app = App(config)
        await app.start()
        started.append(app)
        return app

    try:
        yield start
    finally:
        for server in reversed(started):
            await server.stop()


@pytest_asyncio.fixture
async def app(start_server: StartServer) -> App:
    """A running server with the test settings."""
    return await start_server()


@pytest.fixture
def http_get() -> Callable[[int, str], Awaitable[tuple[int, str]]]:
    """``await http_get(port, path)`` -> ``(status, body)``."""
    return httpkit.http_get


# ------------------------------------------ the running server on each database ---


@pytest_asyncio.fixture
async def app_on_each_database(tmp_path: Path, migrated_url: str) -> AsyncIterator[App]:
    """A running server with the test settings (as ``app``) on the ``database_url``
    database: once on SQLite, once on PostgreSQL (``postgres`` marker, a fresh schema of
    this session's own database; skipped when unreachable). Stopped before the database
    is emptied."""
    config = Config(
        server=ServerSection(host="127.0.0.1", port=0, data_dir=str(tmp_path)),
        database=DatabaseSection(url=migrated_url),
        timers=TEST_TIMERS,
        limits=TEST_LIMITS,
    )
    server = App(config)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


# ------------------------------------------------------------------ Redis ---

REDIS_URL = os.environ.get("GUOBIAO_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture
def redis_url() -> Iterator[str]:
    """The shared test Redis; the test is skipped if it does not answer.

    After the test (its fixtures closed), a collection: a Redis client or socket the test
    left open is reported as its own failure (an unraisable ``ResourceWarning``), not as a
    later test's on the same worker, whenever the collector happens to run."""
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1.0, socket_timeout=1.0)
    try:
        client.ping()
    except (redis.RedisError, OSError) as exc:
        pytest.skip(f"no Redis at {REDIS_URL} (GUOBIAO_TEST_REDIS_URL): {exc!r}")
    finally:
        client.close()
    yield REDIS_URL
    gc.collect()


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this test's own; its keys are deleted afterwards."""
    name = f"gbtest-{secrets.token_hex(4)}"
    yield name
    delete_keys(redis_url, name)

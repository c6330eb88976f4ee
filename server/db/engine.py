"""Database URLs and async engines, shared by the store and the migrations.

Plain URLs are given their async driver: ``sqlite:///x.db`` becomes
``sqlite+aiosqlite:///x.db`` and ``postgresql://`` (or ``postgres://``) becomes
``postgresql+asyncpg://``; any other driver must be an async one.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import URL, Engine, event, make_url
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from server.db.errors import BadDatabaseURL, CannotRead

ASYNC_DRIVERS = {"sqlite": "aiosqlite", "postgresql": "asyncpg", "postgres": "asyncpg"}
# Connection execution option: a unit of work that writes (SQLite then takes the write lock
# at BEGIN, see ``make_engine``).
WRITE_OPTION = "guobiao_write"
# How long a write waits for SQLite's write lock before it fails ("database is locked"): the
# connections' busy timeout, and the longest wait for a turn at the store's write gate.
SQLITE_WRITE_WAIT = 10.0  # seconds
# How long the server's store waits for PostgreSQL to answer one statement, or to open a
# connection, before it counts the database failed (``make_engine``'s ``answer_wait``): as
# long as a write waits for SQLite's lock.
POSTGRES_ANSWER_WAIT = SQLITE_WRITE_WAIT


def parse_url(url: str | URL) -> URL:
    """The URL with its async driver; ``BadDatabaseURL`` if it is not a usable URL."""
    if isinstance(url, URL):
        parsed = url
    else:
        try:
            parsed = make_url(url)
        except ArgumentError:
            raise BadDatabaseURL(
                f"not a database URL: {url!r}; expected e.g. 'sqlite+aiosqlite:///data/"
                "guobiao.db' or 'postgresql+asyncpg://user:password@host:5432/dbname'"
            ) from None
    backend, _, driver = parsed.drivername.partition("+")
    if backend not in ("sqlite", "postgresql", "postgres"):
        raise BadDatabaseURL(
            f"unsupported database {backend!r} in {display(parsed)}; expected sqlite or postgresql"
        )
    if backend == "postgres":
        backend = "postgresql"
    driver = driver or ASYNC_DRIVERS[backend]
    if driver not in ("aiosqlite", "asyncpg"):
        raise BadDatabaseURL(
            f"driver {driver!r} in {display(parsed)} is not an asyncio driver; "
            f"use {backend}+{ASYNC_DRIVERS[backend]}"
        )
    return parsed.set(drivername=f"{backend}+{driver}")


def display(url: str | URL) -> str:
    """The URL for messages and logs, password hidden."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return repr(url)


def trouble(url: str | URL, exc: BaseException) -> str:
    """What went wrong using the database at ``url``, in one line, as the commands say it:
    ``cannot use the database URL: REASON`` (``reason``)."""
    return f"cannot use the database {display(url)}: {reason(exc)}"


def reason(exc: BaseException) -> str:
    """Why the database failed, in a few words: the driver's own error's first line when
    there is one (SQLAlchemy's ``orig``), e.g. "attempt to write a readonly database"."""
    cause = getattr(exc, "orig", None) or exc
    lines = str(cause).splitlines()
    if isinstance(cause, FileExistsError) and cause.filename:  # (making the folder)
        return f"{cause.filename} is a file, where a folder is wanted"
    if isinstance(cause, NotADirectoryError) and cause.filename:
        return f"the path to {cause.filename} goes through a file, where a folder is wanted"
    if lines:
        return lines[0]
    if isinstance(cause, TimeoutError):  # (asyncpg's connect timeout says nothing)
        return "no answer in time (timed out): is it a PostgreSQL server, and up?"
    return type(cause).__name__


def sqlite_path(url: URL) -> Path | None:
    """The database file of a SQLite URL; None for other databases and in-memory SQLite."""
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    if url.database.startswith("file:"):
        return None  # a URI filename: left to SQLite
    return Path(url.database)


def make_engine(
    url: str | URL,
    *,
    store: bool = True,
    read_only: bool = False,
    answer_wait: float | None = None,
) -> AsyncEngine:
    """An async engine for ``url``.

    SQLite (``store=True``): the parent folder is created, and every connection gets
    ``foreign_keys=ON``, WAL journaling and ``synchronous=NORMAL`` (in WAL mode a commit
    survives a crash of the process; only a power loss may lose the last commits), and
    transactions are begun by SQLAlchemy: ``BEGIN IMMEDIATE`` for a unit of work that
    writes, so that a read-then-write transaction waits for the write lock instead of
    failing with "database is locked" when another connection wrote meanwhile.

    ``store=False`` (migrations): no pool and no pragmas, in particular foreign keys stay
    off as Alembic's batch mode on SQLite needs.

    ``read_only`` (the commands that only read: ``guobiao db current``, ``ladder board``,
    ``review``...): nothing is made, no folder, no file (``mode=rw``: ``CannotRead`` if there
    is none), and nothing written: no pragma that writes (setting WAL journaling wrote the
    file, so such a command failed with "attempt to write a readonly database" on a file it
    may only read) and ``query_only`` on. SQLite opens a file this user may not write
    read-only by itself; one it may write it opens read-write all the same, so that the
    last connection to close removes the ``-wal`` and ``-shm`` files of a WAL database as
    usual (one opened read-only, ``mode=ro``, leaves them behind, this user's, where a
    server running as another user then could not write). A database the server has used
    is in WAL mode, which SQLite reads only through the ``-shm`` file beside it: one that is
    not there and cannot be made (a folder this user may not write) is ``CannotRead`` too,
    saying so.

    ``answer_wait`` (PostgreSQL; the server's store: ``POSTGRES_ANSWER_WAIT``): seconds to
    wait for the answer to a statement, and for a new connection, before it fails with
    ``TimeoutError``; None: as long as it takes (the commands, whose reads of a whole
    database may take longer, and whose user sees them wait).
    """
    parsed = parse_url(url)
    path = sqlite_path(parsed)
    if path is not None and read_only:
        parsed = read_only_url(parsed, path)
    elif path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    options: dict[str, Any] = {}
    if not store:
        options["poolclass"] = NullPool
    elif parsed.get_backend_name() == "postgresql":
        # A ping as each connection is checked out (three round trips with asyncpg: a
        # transaction begun, the ping, a rollback). Asking asyncpg whether the connection is
        # closed instead costs none, but a connection PostgreSQL ended in the middle of an
        # operation can be left not closed and unusable ("another operation is in
        # progress"): the fault-injection test that ends the server's connections during a
        # match failed 3 runs in 4 that way (2026-12-05). The action log holds a connection
        # of its own, so its appends do not pay for the ping.
        options["pool_pre_ping"] = True
        if answer_wait is not None:
            # A database that stops answering without closing anything (a network
            # partition, a host paused, a backend stopped) left every statement waiting
            # forever: asyncpg has no timeout unless asked, and TCP's keepalive takes hours.
            # A probe that stopped the server's PostgreSQL processes mid-match found a
            # player's move, /healthz, /readyz and every login unanswered for as long as they
            # were stopped (2026-12-07). Bounded, a statement that gets no answer fails
            # (``TimeoutError``) as one on a connection PostgreSQL ended does: the table
            # pauses, the move is refused and asked again. The connection is set aside (it
            # may still be busy with the statement), and its backend ended before what
            # comes after it goes: the action log's read of whether the append committed,
            # the next short write (server/db/unsettled.py).
            options["connect_args"] = {"command_timeout": answer_wait, "timeout": answer_wait}
    try:
        engine = create_async_engine(parsed, **options)
    except (ArgumentError, NoSuchModuleError, ImportError) as exc:
        extra = ""
        if isinstance(exc, ImportError) and parsed.get_backend_name() == "postgresql":
            extra = " (install the postgres extra: pip install '.[postgres]' in guobiao's folder)"
        raise BadDatabaseURL(f"cannot use {display(parsed)}: {exc}{extra}") from None
    if store and parsed.get_backend_name() == "sqlite":
        _sqlite_events(engine, read_only=read_only and path is not None)
        if not read_only:
            replace_read_only_connections(engine.sync_engine)
    return engine


def cannot_write(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite refusing a write because the connection may not write:
    ``SQLITE_READONLY`` or one of its extended codes ("attempt to write a readonly
    database"), as the driver raises it or as SQLAlchemy does (its ``orig``)."""
    cause = getattr(exc, "orig", None) or exc
    # (An error sqlite3 made itself, or the store did, "closed", has no code.)
    code = getattr(cause, "sqlite_errorcode", None) if isinstance(cause, sqlite3.Error) else None
    return code is not None and code & 0xFF == sqlite3.SQLITE_READONLY  # (extended: READONLY_*)


def replace_read_only_connections(engine: Engine) -> None:
    """Have ``engine``'s pool drop a SQLite connection that refused a write as read-only.

    SQLite opens a database file read-only, by itself and without a word, when it may not
    open it to write (its folder remounted read-only, say), and such a connection stays
    read-only once the file is writable again: held in the pool, it failed every write
    until the server was restarted, while reads worked (a probe's read-only remount, then
    undone). Declaring the refusal a disconnect (``handle_error``'s ``is_disconnect``) is
    SQLAlchemy's own way to have its pool replace a connection: the connection is closed,
    and every other one the pool made before it is replaced as it is next checked out
    (``invalidate_pool_on_disconnect``, left on: those opened while the folder was
    read-only are read-only too), so the next write opens a connection afresh. A write
    that fails on a connection opened afresh while the folder is still read-only replaces
    it again; reads, which a read-only connection serves, never do. The connections of the
    action log, whose writes go past SQLAlchemy, are replaced by ``replace_connections``.
    """

    @event.listens_for(engine, "handle_error")
    def on_error(context: ExceptionContext) -> None:
        if cannot_write(context.original_exception):
            context.is_disconnect = True


async def replace_connections(connection: AsyncConnection) -> None:
    """What ``replace_read_only_connections`` has SQLAlchemy do, for a write that failed
    past SQLAlchemy, on the driver's own connection under ``connection`` (the action log's:
    server/db/sqlite_log.py): ``connection`` is closed, and every other connection its
    engine's pool made before it is replaced as it is next checked out."""
    raw = await connection.get_raw_connection()
    # ``Pool._invalidate`` is the step SQLAlchemy's disconnect handling takes
    # (``Connection._handle_dbapi_exception``); no public method takes it but from within a
    # statement's failure or a checkout. Here it only marks the time (``_checkin=False``):
    # closing an aiosqlite connection must be awaited, which ``invalidate`` does.
    connection.engine.sync_engine.pool._invalidate(raw, _checkin=False)
    await connection.invalidate()


_MAKE = "; 'guobiao db upgrade' or 'guobiao serve' makes one"  # (said when there is none)
# SQLite's file header: the bytes at 18 and 19 are 2 in a database in WAL mode.
_WAL_VERSIONS = slice(18, 20)


def in_wal_mode(header: bytes) -> bool:
    """Whether a SQLite database file whose first bytes are ``header`` is in WAL mode."""
    return header[_WAL_VERSIONS] == b"\x02\x02"


def read_only_url(url: URL, path: Path) -> URL:
    """``url`` opening the SQLite file ``path`` to read only (``make_engine``): as a URI with
    ``mode=rw``, which never makes the file; ``CannotRead`` if there is none, or if SQLite
    could not read it without making a file beside it where this user may not."""
    where = display(url)
    if not path.exists():
        if path.parent.is_dir():
            raise CannotRead(f"{where}: no such database ({path} does not exist){_MAKE}")
        raise CannotRead(f"{where}: no such database (no folder {path.parent}){_MAKE}")
    if not path.is_file():
        raise CannotRead(f"{where}: {path} is not a database file")
    try:
        with path.open("rb") as file:
            header = file.read(100)
    except OSError as exc:
        raise CannotRead(f"{where}: cannot read {path}: {exc.strerror or exc}") from None
    shm = path.with_name(path.name + "-shm")
    wal = in_wal_mode(header)
    if wal and not shm.exists() and not os.access(path.parent, os.W_OK):
        raise CannotRead(
            f"{where}: cannot read it without writing: it is in WAL mode (as the server leaves "
            f"it), which SQLite reads only through {shm.name} beside it, and this user may not "
            f"create that in {path.parent} (run the command as the server's user, or while the "
            "server runs)"
        )
    uri = "file:" + quote(str(path.resolve()))
    return url.set(database=uri, query={**url.query, "mode": "rw", "uri": "true"})


def _sqlite_events(engine: AsyncEngine, *, read_only: bool = False) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        # SQLAlchemy emits BEGIN itself (below); the driver's own transaction handling is off.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA foreign_keys = ON")
            if read_only:  # (setting the journal mode writes the file)
                cursor.execute("PRAGMA query_only = ON")
            else:
                cursor.execute("PRAGMA journal_mode = WAL")
                cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute(f"PRAGMA busy_timeout = {int(SQLITE_WRITE_WAIT * 1000)}")
        finally:
            cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def on_begin(connection: Any) -> None:
        write = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

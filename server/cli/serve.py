"""``guobiao serve``: run the game server until interrupted (Ctrl-C or SIGTERM)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import gc
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from alembic.util.exc import CommandError
from sqlalchemy.exc import SQLAlchemyError

import engine
from server import logs
from server.app import App
from server.cli import workers
from server.config import Config, ConfigError, load
from server.db import migrate
from server.db.engine import display, in_wal_mode, parse_url, sqlite_path, trouble
from server.db.errors import BadDatabaseURL

log = logging.getLogger("guobiao.server")

# The garbage collector's thresholds while serving (Python's default: 700, 10, 10). A server
# holding many connections allocates fast (every update is dozens of objects), so with the
# default the young collections, and the full ones they bring on, run several times a second
# and land in the tail of the latency. Measured with 1,000 connections at human pace
# (`guobiao loadtest --tables 250 --duration 60 --think 0.8-3`, its server latency, a fresh
# server each, two rounds): p99 27 and 176 ms with the default, 11 and 16 ms with the first
# serving thresholds, (100,000, 50, 1000).
# Reference counting frees most objects at once; cycles are collected, only later.
# Not higher: a young collection's pause grows with what it holds, and the next generation's
# with what the young ones passed on. With (100,000, 50, 1000), in 10 minutes of 4,000
# connections at human pace (two workers, `guobiao_gc_pause_seconds`), young collections took
# up to 0.5 s (14 over 100 ms) and the first of the next generation, 50 young ones in
# (about 20 minutes), would hold all they passed on; with these, young ones under 100 ms,
# the next 25 times in 10 minutes, 12 of them over 100 ms (one over 250), and a third as
# many actions over 250 ms (server p99 about 80 ms either way).
GC_THRESHOLDS = (20_000, 10, 1000)


def add_config_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="a TOML file over config/default.toml")
    parser.add_argument("--database-url", metavar="URL", help="SQLAlchemy URL (default: SQLite)")
    parser.add_argument("--data-dir", metavar="DIR", help="folder of the embedded database")


def config_from(args: argparse.Namespace) -> Config:
    overrides: dict[str, dict[str, Any]] = {}
    if getattr(args, "host", None):
        overrides.setdefault("server", {})["host"] = args.host
    if getattr(args, "port", None) is not None:
        overrides.setdefault("server", {})["port"] = args.port
    if args.data_dir:
        overrides.setdefault("server", {})["data_dir"] = args.data_dir
    if args.database_url:
        overrides.setdefault("database", {})["url"] = args.database_url
    if getattr(args, "redis_url", None):
        overrides.setdefault("cluster", {})["redis_url"] = args.redis_url
    if getattr(args, "node", None):
        overrides.setdefault("server", {})["node"] = args.node
    return load(args.config, overrides=overrides)


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "serve",
        help="run the game server",
        description="Run the online MCR server: websockets on ws://HOST:PORT/ws and the HTTP "
        "API on the same port. Applies database migrations on start. With a Redis URL it is "
        "one node of a cluster on a shared PostgreSQL database (docs/deployment.md).",
    )
    add_config_options(parser)
    parser.add_argument("--host", help="interface to listen on")
    parser.add_argument("--port", type=int, help="port (0: any free port)")
    parser.add_argument("--redis-url", metavar="URL", help="cluster mode: [cluster] redis_url")
    parser.add_argument("--node", metavar="NAME", help="this node's name ([server] node)")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="run N worker processes on one port (cluster mode: needs a Redis URL and "
        "PostgreSQL); default 1",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        config = config_from(args)
        config.check_cluster_database()
        if args.workers == 1:  # (``--workers`` names its workers; it says what port it needs)
            config.check_cluster_node()
        config.check_handoff_dir()
    except ConfigError as exc:
        print(f"guobiao serve: {exc}", file=sys.stderr)
        return 2
    if args.workers < 1:
        print(f"guobiao serve: --workers must be 1 or more, got {args.workers}", file=sys.stderr)
        return 2
    if args.workers > 1:
        if not config.clustered:
            print(
                "guobiao serve: --workers needs cluster mode: a Redis URL (--redis-url or "
                "[cluster] redis_url) and a PostgreSQL database (docs/deployment.md)",
                file=sys.stderr,
            )
            return 2
        if not config.server.port:
            print("guobiao serve: --workers needs a fixed --port (not 0)", file=sys.stderr)
            return 2
        address = config.metrics.address
        if address is not None and address[1] and address[1] + args.workers - 1 > 65535:
            print(
                f"guobiao serve: [metrics] listen {config.metrics.listen}: worker {args.workers} "
                f"would listen on port {address[1] + args.workers - 1}, past 65535",
                file=sys.stderr,
            )
            return 2
        return workers.supervise(sys.argv[1:], args.workers, config)
    fmt = logs.setup(config.server.log_level, config.server.log_format)
    tune_collector()
    threading.excepthook = quiet_database_threads
    asyncio.run(serve(config, human=fmt == "human"))  # (Ctrl+C while it starts: cli.main's)
    return 0


def quiet_database_threads(args: threading.ExceptHookArgs) -> None:
    """``threading.excepthook`` while serving: a database thread (aiosqlite's) that ends a
    step after the event loop closed, which a Ctrl+C while the start opens the database
    leaves behind, has nobody to tell; its "Event loop is closed" is dropped, not printed
    as a traceback after the clean interruption. Anything else is Python's to print."""
    thread = args.thread.name if args.thread is not None else ""
    if (
        args.exc_type is RuntimeError
        and str(args.exc_value) == "Event loop is closed"
        and "_connection_worker_thread" in thread
    ):
        return
    threading.__excepthook__(args)


def tune_collector() -> None:
    """The garbage collector's thresholds for serving (``GC_THRESHOLDS``)."""
    gc.set_threshold(*GC_THRESHOLDS)


async def serve(config: Config, ready: asyncio.Event | None = None, *, human: bool = False) -> None:
    """Run the server until SIGINT or SIGTERM. ``human``: say what it did in sentences (a
    person at a terminal) instead of the one line scripts read (the address). One server
    to a SQLite file (``one_server``)."""
    with one_server(config.database_url):
        await _serve(config, ready, human=human)


@contextlib.contextmanager
def one_server(url: str) -> Iterator[None]:
    """Hold the SQLite file's serving lock while a server runs on it: an exclusive
    ``flock`` of ``FILE.serving`` beside it (the holder's pid in it), which the system lets
    go when the process ends, however it ends. A second server on the same file would
    restore the first one's tables and fight it over every move ("another server writes
    this match?"), so it is refused at once: a line naming the holder, status 1. Nothing
    for PostgreSQL (a cluster's nodes share it by design), and nothing when the lock file
    cannot be made (the start then says what is wrong with the folder)."""
    try:
        path = sqlite_path(parse_url(url))
    except BadDatabaseURL:
        path = None  # (the start says what is wrong with it)
    if path is None:
        yield
        return
    lock = path.with_name(path.name + ".serving")
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        held = open(lock, "a+", encoding="utf-8")  # noqa: SIM115 (held while serving)
    except OSError:
        yield
        return
    with held:
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held.seek(0)
            holder = held.read().strip()
            print(
                f"guobiao serve: another server (pid {holder or '?'}) is serving SQLite file "
                f"{path.resolve()}: one server to a SQLite file (stop it first; several "
                "servers share a PostgreSQL database: docs/deployment.md)",
                file=sys.stderr,
            )
            raise SystemExit(1) from None
        held.seek(0)
        before = held.read().strip()  # a pid: the last server on the file did not stop
        held.seek(0)
        held.truncate()
        held.write(f"{os.getpid()}\n")
        held.flush()
        if before:
            _lost_log(path, before)
        try:
            yield
        finally:  # ended in this process (stopped, or a start that gave up): not a crash
            held.seek(0)
            held.truncate()
            held.flush()


def _lost_log(path: Path, pid: str) -> None:
    """Say so if the server before (``pid``) ended without stopping and the write-ahead log
    it left is gone: a database in WAL mode keeps its newest commits in ``FILE-wal`` until a
    checkpoint, and the file is removed only when the last connection closes cleanly, so
    after a crash it is there unless someone removed it. Its commits are lost: the tables
    restore from the older log, and the players are shown the older game."""
    wal = path.with_name(path.name + "-wal")
    try:
        with path.open("rb") as file:
            header = file.read(20)
    except OSError:
        return  # (no database yet, or none to read: the start says so)
    if in_wal_mode(header) and not wal.exists():
        log.warning(
            "the last server on %s (pid %s) ended without stopping, and its write-ahead log "
            "%s is gone: the commits it held are lost, and the tables restore from before "
            "them. Restore a backup if they matter (docs/deployment.md, Backups)",
            path.resolve(),
            pid,
            wal.name,
        )


async def _serve(config: Config, ready: asyncio.Event | None, *, human: bool) -> None:
    app = App(config)
    before = await schema_revision(config.database_url) if human else None
    try:
        await app.start()
    except BadDatabaseURL as exc:
        await _give_up(app, str(exc))
    except (SQLAlchemyError, CommandError) as exc:
        await _give_up(app, trouble(config.database_url, exc))
    except OSError as exc:
        if app.store is None:  # its migration or opening: the database's folder or file
            await _give_up(app, trouble(config.database_url, exc))
        where = exc.filename or f"{config.server.host}:{config.server.port}"  # the metrics'
        await _give_up(app, f"cannot listen on {where}: {exc.strerror}")
    # Before the ready line, not after: whoever reads it may stop the server at once (a
    # supervisor, a test, a person's Ctrl+C), and a signal before these handlers would end
    # the process unstopped (SIGTERM) or, where SIGINT is ignored (a background job), not at
    # all.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    stopping = [signal.SIGINT, signal.SIGTERM]
    if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:  # (not under nohup)
        stopping.append(signal.SIGHUP)  # its terminal closed: stop as on SIGTERM, not dead
    for sig in stopping:
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    with contextlib.suppress(NotImplementedError, AttributeError):
        loop.add_signal_handler(signal.SIGUSR1, _dump_tasks)  # where is it stuck?
    watch = _watch_supervisor(stop)
    host = config.server.host
    metrics = ""
    if app.metrics_port is not None:
        listen = config.metrics.listen.rpartition(":")[0]
        metrics = f", metrics: http://{listen}:{app.metrics_port}/metrics"
    elif config.metrics.game_port:
        metrics = f", metrics: http://{host}:{app.port}/metrics"
    if human:
        print(await started(config, app.port, metrics, before), flush=True)
    else:
        print(
            f"guobiao serving on ws://{host}:{app.port}/ws (play in a browser: "
            f"http://{host}:{app.port}/, health: http://{host}:{app.port}/healthz{metrics}, "
            f"database: {_where(config.database_url)})",
            flush=True,
        )
    if ready is not None:
        ready.set()
    await stop.wait()
    if watch is not None:
        watch.cancel()
    print("guobiao: stopping (finishing writes, telling clients)", flush=True)
    try:
        await asyncio.wait_for(app.stop(), STOP_SECONDS)
    except TimeoutError:
        # Every action was stored before anyone saw it: nothing is lost by going now. What
        # it was waiting for goes to the log, for the bug report.
        print(
            f"guobiao: the stop took over {STOP_SECONDS:g} s ({app.stopping}); exiting anyway "
            "(nothing stored is lost); its tasks follow",
            file=sys.stderr,
            flush=True,
        )
        _dump_tasks()


async def _give_up(app: App, message: str) -> NoReturn:
    """A start that failed: say why in a line, undo what it began, exit with status 1."""
    print(f"guobiao serve: {message}", file=sys.stderr)
    await app.stop()
    raise SystemExit(1) from None


STOP_SECONDS = 60.0  # a graceful stop (tables handed over, clients told) takes at most this
SUPERVISOR_CHECK_SECONDS = 1.0  # how often a worker looks whether its supervisor is there


def _watch_supervisor(stop: asyncio.Event) -> asyncio.Task[None] | None:
    """A worker of ``serve --workers``: stop (``stop``) once its supervisor is gone (its
    parent is another process then: the supervisor was killed), as on SIGTERM."""
    supervisor = os.environ.get(workers.SUPERVISOR_ENV, "")
    if not (supervisor.isascii() and supervisor.isdigit()):
        return None

    async def watch() -> None:
        while os.getppid() == int(supervisor):
            await asyncio.sleep(SUPERVISOR_CHECK_SECONDS)
        print(f"guobiao: the supervisor (pid {supervisor}) is gone: stopping", flush=True)
        stop.set()

    return asyncio.get_running_loop().create_task(watch(), name="watch-supervisor")


def _dump_tasks() -> None:
    """SIGUSR1: every task's stack to stderr (what an operator asks a stuck server)."""
    for task in asyncio.all_tasks():
        print(f"--- task {task.get_name()}", file=sys.stderr)
        task.print_stack(limit=8, file=sys.stderr)
    sys.stderr.flush()


async def schema_revision(url: str) -> str | None:
    """The database's schema revision before start-up; None for a new (or unreadable) one."""
    try:
        return await migrate.current(url)
    except Exception:  # no file yet, or a server not up: the start says what is wrong
        return None


def migrations_between(before: str | None, after: str) -> int:
    """How many migrations lead from revision ``before`` (None: an empty database) to
    ``after``."""
    return len(migrate.revisions_between(before, after))


async def started(config: Config, port: int, metrics: str, before: str | None) -> str:
    """What a person at a terminal is told once the server is up (``serve``'s ``human``)."""
    host = config.server.host
    url = config.database_url
    after = await schema_revision(url) or migrate.head()
    applied = migrations_between(before, after)
    if before is None:
        schema = f"a new database: {applied} migrations applied"
    elif applied:
        schema = f"migrated from schema {before} to {after} ({applied} migrations)"
    else:
        schema = f"schema {after}, up to date"
    where = _where(url)
    kind = "compiled" if engine.compiled() else "pure Python"
    lines = [
        f"guobiao is ready. Open http://{host}:{port}/ in a browser to play.",
        f"  Database: {where} ({schema}).",
        f"  Engine:   {kind} (`GUOBIAO_COMPILE=1 pip install .` compiles it: faster bots)."
        if kind == "pure Python"
        else f"  Engine:   {kind}.",
        f"  Bots and other clients connect to ws://{host}:{port}/ws; health: "
        f"http://{host}:{port}/healthz{metrics}.",
        "  Press Ctrl+C to stop: unfinished matches resume at the next start.",
    ]
    return "\n".join(lines)


def _where(url: str) -> str:
    """The database as the ready line names it: a SQLite file by its whole path (a relative
    one is relative to where the server started), any other by its URL, password hidden."""
    path = sqlite_path(parse_url(url))
    return f"SQLite file {path.resolve()}" if path is not None else display(url)

"""``guobiao serve``'s own settings of the process (server/cli/serve.py), the command line of
its workers (``server.cli.child_command``), and what it tells a person at a terminal."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import io
import json
import logging
import os
import pty
import re
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpkit
import pytest
from serverkit import decoy_checkout, served_port

from server import app as app_module
from server import logs
from server.app import App
from server.cli import child_command
from server.cli.serve import GC_THRESHOLDS, _where, quiet_database_threads, serve
from server.config import load
from server.db.migrate import head, revisions_between

serve_module = importlib.import_module("server.cli.serve")  # (``serve`` is its function)


def test_serving_sets_the_collectors_thresholds() -> None:
    """The thresholds are the serving ones after ``tune_collector`` (in a process of its own:
    this one's collector is left as it is), and differ from Python's default."""
    probe = "import gc; from server.cli.serve import tune_collector as t; t()\n"
    probe += "print(gc.get_threshold())"
    before = subprocess.run(
        [sys.executable, "-c", "import gc; print(gc.get_threshold())"],
        capture_output=True,
        text=True,
        check=True,
    )
    after = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert after.stdout.strip() == str(GC_THRESHOLDS)
    assert before.stdout.strip() != after.stdout.strip()


def test_the_ready_line_names_a_sqlite_file_by_its_whole_path_and_hides_only_a_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _where("sqlite:///data/g.db") == f"SQLite file {tmp_path / 'data' / 'g.db'}"
    assert _where("sqlite+aiosqlite:////srv/g.db") == "SQLite file /srv/g.db"
    pg = "postgresql+asyncpg://{}@db.example:5432/guobiao"
    assert _where(pg.format("guobiao")) == pg.format("guobiao")  # (no password: no ***)
    assert _where(pg.format("guobiao:s3cret")) == pg.format("guobiao:***")


def test_a_child_process_runs_this_server_not_one_in_the_working_directory(
    tmp_path: Path,
) -> None:
    """``serve --workers``' workers (and ``loadtest --processes``' parts) are started with
    ``child_command``: from a folder holding another ``server`` package (the README's
    install is run in a source checkout) they still run this one."""
    done = subprocess.run(
        child_command("fan", "--help"),
        cwd=decoy_checkout(tmp_path),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "guobiao fan" in done.stdout


# ------------------------------------------------------ a person at a terminal ---


def serve_at_a_terminal(folder: Path, seconds: float = 60.0) -> str:
    """``guobiao serve --port 0`` started in ``folder`` with a pseudo-terminal for its
    standard output and error (a person's terminal), stopped with SIGINT once it says it is
    ready: everything it printed."""
    primary, secondary = pty.openpty()
    server = subprocess.Popen(
        child_command("serve", "--port", "0"),
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
        env={k: v for k, v in os.environ.items() if not k.startswith("GUOBIAO_")},
    )
    os.close(secondary)
    printed = b""
    deadline = time.monotonic() + seconds
    try:
        while b"Press Ctrl+C" not in printed and time.monotonic() < deadline:
            ready, _, _ = select.select([primary], [], [], 1.0)
            if ready:
                try:
                    printed += os.read(primary, 65536)
                except OSError:  # the server is gone (EIO)
                    break
        server.send_signal(signal.SIGINT)
        server.wait(30)
        with contextlib.suppress(OSError):
            while select.select([primary], [], [], 0.2)[0]:
                chunk = os.read(primary, 65536)
                if not chunk:
                    break
                printed += chunk
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)  # (reaped here: not "still running" in a later test's collection)
        os.close(primary)
    return printed.decode(errors="replace").replace("\r\n", "\n")


def test_at_a_terminal_the_server_speaks_in_sentences(tmp_path: Path) -> None:
    """At a terminal (``log_format = "auto"``, the default): the address to open, the
    database and what the migrations did, one sentence each, and no JSON lines; a second
    start finds the schema up to date."""
    first = serve_at_a_terminal(tmp_path)
    assert "guobiao is ready. Open http://127.0.0.1:" in first, first
    database = (tmp_path / "data" / "guobiao.db").resolve()
    applied = len(revisions_between(None, head()))
    assert f"Database: SQLite file {database} (a new database: {applied} migrations" in first
    assert "Press Ctrl+C to stop" in first
    assert not [line for line in first.splitlines() if line.lstrip().startswith("{")], first
    assert "Running upgrade" not in first  # Alembic's line per migration is left out
    again = serve_at_a_terminal(tmp_path)
    assert f"(schema {head()}, up to date)" in again, again


def test_auto_is_sentences_at_a_terminal_and_json_elsewhere() -> None:
    class Stream(io.StringIO):
        def __init__(self, tty: bool) -> None:
            super().__init__()
            self.tty = tty

        def isatty(self) -> bool:
            return self.tty

    assert logs.resolve("auto", Stream(tty=True)) == "human"
    assert logs.resolve("auto", Stream(tty=False)) == "json"
    assert logs.resolve("text", Stream(tty=True)) == "text"
    assert logs.resolve("json", Stream(tty=True)) == "json"


def test_a_person_reads_the_time_the_level_of_a_warning_and_the_message() -> None:
    formatter = logs.HumanFormatter()
    record = logging.LogRecord(
        "guobiao.table", logging.WARNING, "", 0, "table %s paused", ("t3",), None
    )
    assert re.fullmatch(r"\d\d:\d\d:\d\d warning: table t3 paused", formatter.format(record))
    record = logging.LogRecord("guobiao.table", logging.INFO, "", 0, "table t3 opened", (), None)
    assert re.fullmatch(r"\d\d:\d\d:\d\d table t3 opened", formatter.format(record))


def test_the_migrations_between_two_revisions_are_counted_oldest_first() -> None:
    every = revisions_between(None, head())
    assert every[-1] == head() and len(every) == len(set(every)) >= 9
    assert every[0] == "0001"
    assert revisions_between(every[-3], every[-1]) == every[-2:]
    assert revisions_between(head(), head()) == []


# ------------------------------------------------------------ stopping it ---


@pytest.mark.asyncio
async def test_by_its_ready_line_a_signal_stops_the_server_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whoever reads the ready line may signal at once (a supervisor, a test, a person): by
    the time it is written SIGINT and SIGTERM are the server's, which stops cleanly. (They
    were taken just after it: a SIGTERM in between ended the process unstopped, and a SIGINT
    where it is ignored, as in a background job, was lost and the server ran on.)"""
    when_ready: list[tuple[object, object]] = []

    class Watched(io.StringIO):
        def write(self, text: str) -> int:
            if "guobiao serving on" in text:
                when_ready.append(
                    (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
                )
            return super().write(text)

    out = Watched()
    monkeypatch.setattr(sys, "stdout", out)
    local = {"host": "127.0.0.1", "port": 0, "data_dir": str(tmp_path)}
    config = load(None, environ={}, overrides={"server": local})
    ready = asyncio.Event()
    serving = asyncio.create_task(serve(config, ready))
    await asyncio.wait_for(ready.wait(), 60)
    [(on_int, on_term)] = when_ready
    assert on_term not in (signal.SIG_DFL, signal.SIG_IGN), on_term
    assert on_int not in (signal.SIG_DFL, signal.SIG_IGN, signal.default_int_handler), on_int
    signal.raise_signal(signal.SIGTERM)
    await asyncio.wait_for(serving, 60)
    assert "guobiao: stopping (finishing writes, telling clients)" in out.getvalue()


def test_ctrl_c_while_the_server_starts_ends_it_without_a_traceback(tmp_path: Path) -> None:
    """Ctrl+C as the start begins (the database's serving lock taken, the migrations to
    run): exit status 130, as a shell gives an interrupted command, and no traceback (it was
    Python's KeyboardInterrupt, printed whole). (It was sent half a second in, which a quiet
    machine's start, 0.53-0.61 s, could beat.)"""
    server = subprocess.Popen(
        child_command("serve", "--port", "0"),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if not k.startswith("GUOBIAO_")},
        # (a person's terminal: SIGINT as Python sets it, whatever this process does with it)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )
    try:
        begun = tmp_path / "data" / "guobiao.db.serving"
        deadline = time.monotonic() + 60
        while not begun.exists() and server.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate(timeout=10)
    # 130 (128 + SIGINT), or ended by SIGINT itself, which a shell reports as 130 too: CPython
    # does that at exit after some interrupted imports (about one in six here, by strace: it
    # re-raises SIGINT on itself), though cli.main caught the KeyboardInterrupt.
    assert server.returncode in (130, -signal.SIGINT), (server.returncode, out, err)
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err, err


@pytest.mark.asyncio
async def test_readyz_says_starting_until_the_start_is_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server listens before its start is done (the metrics' port and, in cluster mode,
    the node's start come after): until then /readyz is 503 "starting", so that whoever
    waits for it to say ready may stop the server at once and have the graceful stop."""
    local = {"host": "127.0.0.1", "port": 0, "data_dir": str(tmp_path)}
    app = App(load(None, environ={}, overrides={"server": local}))
    go_on = asyncio.Event()
    nodes_start = app.nodes.start

    async def held(port: int) -> None:  # the last step of the start, held back
        await go_on.wait()
        await nodes_start(port)

    monkeypatch.setattr(app.nodes, "start", held)
    starting = asyncio.create_task(app.start())
    try:
        for _ in range(600):
            if app.ws_server is not None or starting.done():
                break
            await asyncio.sleep(0.05)
        status, body = await httpkit.http_get(app.port, "/readyz")
        assert (status, json.loads(body)["why"]) == (503, "starting"), body
        go_on.set()
        await asyncio.wait_for(starting, 30)
        status, body = await httpkit.http_get(app.port, "/readyz")
        assert status == 200 and json.loads(body)["ready"], body
    finally:
        go_on.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(starting, 30)
        await app.stop()


@pytest.mark.asyncio
async def test_a_slow_step_of_the_stop_is_logged_and_a_stop_past_its_limit_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A stop that takes long says where: each slow step is logged with its time, and a
    stop cut short at its limit names the step it was in (a two-worker server once took a
    minute to stop, its log silent on why)."""
    monkeypatch.setattr(app_module, "SLOW_STOP_STEP", 0.05)
    monkeypatch.setattr(serve_module, "STOP_SECONDS", 0.5)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    local = {"host": "127.0.0.1", "port": 0, "data_dir": str(tmp_path)}
    config = load(None, environ={}, overrides={"server": local})
    made: list[App] = []
    original = App.__init__

    def keep(self: App, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)  # type: ignore[arg-type]
        made.append(self)

    monkeypatch.setattr(App, "__init__", keep)
    ready = asyncio.Event()
    serving = asyncio.create_task(serve(config, ready))
    await asyncio.wait_for(ready.wait(), 60)
    [app] = made
    released = asyncio.Event()
    close_store = app._close_store

    async def slow_tables() -> None:
        await asyncio.sleep(0.2)

    async def stuck_store() -> None:
        await released.wait()
        await close_store()

    monkeypatch.setattr(app, "_stop_tables", slow_tables)
    monkeypatch.setattr(app, "_close_store", stuck_store)
    caplog.set_level(logging.WARNING, logger="guobiao.server")
    try:
        signal.raise_signal(signal.SIGTERM)
        await asyncio.wait_for(serving, 60)
    finally:
        released.set()
        await close_store()
    slow = [r.getMessage() for r in caplog.records if r.getMessage().startswith("stopping:")]
    assert any(m.startswith("stopping: stopping the tables took 0.") for m in slow), slow
    assert "the stop took over 0.5 s (closing the database)" in err.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("env", "flags", "says"),
    [
        ({}, ["--database-url", "foo://bar"], "unsupported database 'foo' in foo://bar"),
        ({"GUOBIAO_DATABASE_URL": "garbage"}, [], "not a database URL: 'garbage'"),
        ({}, ["--data-dir", "{tmp}/junk.db"], "cannot use the database sqlite+aiosqlite:///"),
        (
            {},
            ["--database-url", "sqlite+aiosqlite:///{tmp}/junk.db"],
            "cannot use the database sqlite+aiosqlite:///{tmp}/junk.db: file is not a database",
        ),
    ],
)
def test_a_database_the_server_cannot_use_stops_it_in_a_line_naming_it(
    tmp_path: Path, env: dict[str, str], flags: list[str], says: str
) -> None:
    """A bad URL, a file that is no database, a data folder that is a file: one line on
    stderr naming the database and what is wrong (as ``guobiao db`` says it), exit status 1,
    no traceback."""
    (tmp_path / "junk.db").write_text("junk\n")
    done = subprocess.run(
        child_command("serve", "--port", "0", *(f.format(tmp=tmp_path) for f in flags)),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("GUOBIAO_")}, **env},
    )
    assert done.returncode == 1, done.stderr
    assert f"guobiao serve: {says.format(tmp=tmp_path)}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def a_server_process(folder: Path, *, ready: bool = True, **options: Any) -> subprocess.Popen[str]:
    """``guobiao serve --port 0`` run in ``folder`` (its data there), none of this
    environment's ``GUOBIAO_`` settings; once its ready line is read unless not ``ready``
    (``options``: more of ``Popen``'s)."""
    server = subprocess.Popen(
        child_command("serve", "--port", "0"),
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("GUOBIAO_")},
        **options,
    )
    if ready:
        assert server.stdout is not None
        line = server.stdout.readline()
        if served_port(line) is None:
            server.kill()
            raise AssertionError(f"no ready line: {line!r} {server.communicate(timeout=10)}")
    return server


def test_a_second_server_on_the_same_sqlite_file_is_refused_until_the_first_is_gone(
    tmp_path: Path,
) -> None:
    """It would restore the first one's tables and fight it over every move: refused at
    once, naming the first one's pid. The lock goes with the process, however it ends (here
    SIGKILL): the next server starts."""
    first = a_server_process(tmp_path)
    try:
        second = a_server_process(tmp_path, ready=False)
        out, err = second.communicate(timeout=60)
        assert second.returncode == 1, (out, err)
        assert err == (
            f"guobiao serve: another server (pid {first.pid}) is serving SQLite file "
            f"{tmp_path / 'data' / 'guobiao.db'}: one server to a SQLite file (stop it first; "
            "several servers share a PostgreSQL database: docs/deployment.md)\n"
        )
        first.kill()
        first.communicate(timeout=10)
        third = a_server_process(tmp_path)
        try:
            assert third.poll() is None
        finally:
            third.terminate()
            third.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate(timeout=10)


@pytest.mark.parametrize("nohup", [False, True])
def test_a_closed_terminal_stops_the_server_cleanly_unless_it_runs_under_nohup(
    tmp_path: Path, nohup: bool
) -> None:
    """SIGHUP (the terminal or SSH session closed) killed the server at once: no line, no
    ``server_shutdown`` to the clients. It now stops as on SIGTERM; under ``nohup`` (SIGHUP
    ignored, by the person's choice) it is ignored still."""
    server = a_server_process(
        tmp_path,
        preexec_fn=lambda: signal.signal(  # (the shell's part)
            signal.SIGHUP, signal.SIG_IGN if nohup else signal.SIG_DFL
        ),
    )
    try:
        server.send_signal(signal.SIGHUP)
        if nohup:
            with pytest.raises(subprocess.TimeoutExpired):
                server.wait(timeout=2)
            server.terminate()
        out, err = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate(timeout=10)
    assert server.returncode == 0, err
    assert "guobiao: stopping (finishing writes, telling clients)" in out


def test_a_write_ahead_log_removed_after_a_crash_is_said_at_the_next_start(
    tmp_path: Path,
) -> None:
    """The server killed (its -wal file left, as a crash leaves it), then the file removed
    (a careless operator): the next start restores the tables from the older log, and says
    at once that the commits the removed file held are lost. A clean stop, and a crash
    that leaves the file alone, say nothing."""
    data = tmp_path / "data"

    def start() -> subprocess.Popen[str]:
        return a_server_process(tmp_path)

    def said(server: subprocess.Popen[str], how: signal.Signals) -> str:
        server.send_signal(how)
        _, err = server.communicate(timeout=60)
        return err

    warning = "ended without stopping, and its write-ahead log guobiao.db-wal is gone"
    assert warning not in said(start(), signal.SIGTERM)  # a new database, stopped
    assert warning not in said(start(), signal.SIGKILL)  # killed: its -wal stays
    assert (data / "guobiao.db-wal").exists()
    killed = start()  # (after a crash that left the file alone: nothing said)
    assert warning not in said(killed, signal.SIGKILL)
    (data / "guobiao.db-wal").unlink()
    (data / "guobiao.db-shm").unlink(missing_ok=True)
    err = said(start(), signal.SIGTERM)
    assert f"the last server on {data / 'guobiao.db'} (pid {killed.pid}) {warning}" in err, err


def test_a_database_thread_left_by_an_interrupted_start_is_not_printed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl+C while the start opens the database (a loaded machine: one run in about twenty)
    left aiosqlite's thread to finish its step after the loop closed, and it printed
    "Event loop is closed" with a traceback after the clean interruption. That complaint
    alone is dropped; any other goes to Python's own hook."""
    printed: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "__excepthook__", printed.append)

    def args(error: BaseException, name: str) -> threading.ExceptHookArgs:
        thread = threading.Thread(name=name)
        return threading.ExceptHookArgs((type(error), error, None, thread))

    worker = "Thread-1 (_connection_worker_thread)"
    quiet_database_threads(args(RuntimeError("Event loop is closed"), worker))
    assert printed == []
    for other in (
        args(RuntimeError("something else"), worker),
        args(ValueError("Event loop is closed"), worker),
        args(RuntimeError("Event loop is closed"), "Thread-2 (mine)"),
    ):
        quiet_database_threads(other)
    assert len(printed) == 3

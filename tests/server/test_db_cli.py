"""The commands that only read the server's database (``guobiao db current`` and ``check``,
``ladder seasons|board|farms``, ``ladder recompute --check``, ``review``): they write
nothing, so they work on a SQLite file this user may not write, and they make no database
(nor its folder) where there is none. A command that writes says in one line that it
cannot."""

from __future__ import annotations

import asyncio
import io
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from faultkit import bot_match, wait_for
from reviewkit import stored_match
from serverkit import StartServer

from server.cli import main
from server.db.engine import BadDatabaseURL, make_engine, trouble
from server.db.migrate import head
from server.db.store import Store

FOUR = ["rc_bea", "bot:normal", "bot:fast", "bot:strong"]
BOTS = ["fast", "normal", "fast", "strong"]


def reads(match: int) -> list[list[str]]:
    """Each reading command, on the database given after it."""
    return [
        ["db", "current"],
        ["db", "check", "--all"],
        ["ladder", "seasons"],
        ["ladder", "board", "mcr"],  # (no season yet: says so, exit status 1)
        ["ladder", "farms"],
        ["ladder", "recompute", "--check"],
        ["review", str(match), "--player", "rc_bea"],
    ]


def journal(path: Path) -> str:
    """The journal mode written in the file's header (bytes 18, 19: 1 rollback, 2 WAL)."""
    return {b"\x01\x01": "rollback", b"\x02\x02": "wal"}[path.read_bytes()[18:20]]


def filled(folder: Path, migrated: Path, *, wal: bool = False) -> int:
    """``folder/guobiao.db``: the migrated database with a finished match, in rollback
    journal mode (as ``guobiao db upgrade`` leaves a new one) or WAL (as the server leaves
    it); the match's id."""
    path = folder / "guobiao.db"
    shutil.copyfile(migrated, path)

    async def fill() -> int:
        async with await Store.open(f"sqlite+aiosqlite:///{path}") as store:
            return await stored_match(store, "c1", FOUR, BOTS, seed=31)

    match = asyncio.run(fill())
    if not wal:
        with sqlite3.connect(path) as connection:
            connection.execute("PRAGMA journal_mode = DELETE")
        connection.close()
    assert journal(path) == ("wal" if wal else "rollback")
    assert sorted(p.name for p in folder.iterdir()) == ["guobiao.db"]
    return match


@pytest.mark.parametrize("wal", [False, True], ids=["rollback", "wal"])
def test_a_reading_command_writes_nothing(
    tmp_path: Path, migrated_sqlite: Path, capsys: pytest.CaptureFixture[str], wal: bool
) -> None:
    """Each set WAL journaling on the file: it rewrote the header of one in rollback mode
    and made -wal and -shm files (and failed on a file it may not write, below). On one in
    WAL mode (as the server leaves it) none leaves the -wal and -shm files SQLite makes to
    read it (a read-only connection, ``mode=ro``, would)."""
    match = filled(tmp_path, migrated_sqlite, wal=wal)
    before = (tmp_path / "guobiao.db").read_bytes()
    for argv in reads(match):
        status = main([*argv, "--data-dir", str(tmp_path)])
        captured = capsys.readouterr()
        assert status == (1 if argv[1] == "board" else 0), (argv, captured.err)
        assert (tmp_path / "guobiao.db").read_bytes() == before, argv
        assert sorted(p.name for p in tmp_path.iterdir()) == ["guobiao.db"], argv
    assert journal(tmp_path / "guobiao.db") == ("wal" if wal else "rollback")


@pytest.mark.parametrize(
    "argv",
    [
        ["db", "current"],
        ["db", "check"],
        ["ladder", "board", "mcr"],
        ["ladder", "season", "new", "mcr"],
        ["review", "1", "--player", "amy"],
        ["tournament", "grant", "amy"],
    ],
)
def test_no_database_is_said_and_none_is_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """``db current`` made the data folder and an empty database, then called it empty; the
    others said it was not migrated, having made it."""
    missing = tmp_path / "data" / "deeper"
    assert main([*argv, "--data-dir", str(missing)]) == 1
    err = capsys.readouterr().err
    assert err.endswith(
        f"{missing / 'guobiao.db'}: no such database (no folder {missing}); 'guobiao db "
        "upgrade' or 'guobiao serve' makes one\n"
    ), err
    assert err.count("\n") == 1
    assert not (tmp_path / "data").exists()
    missing.mkdir(parents=True)
    assert main([*argv, "--data-dir", str(missing)]) == 1
    assert f"no such database ({missing / 'guobiao.db'} does not exist)" in capsys.readouterr().err
    assert not list(missing.iterdir())


@pytest.fixture
def lock() -> Iterator[Callable[[Path], None]]:
    """Make a file or folder this user may not write: mode 444 (555 a folder) and, for root,
    who writes whatever the mode, the immutable attribute too (``chattr +i``: refused to
    root as well). Skips where neither holds (no ``chattr``, a file system without it)."""
    locked: list[Path] = []

    def locking(path: Path) -> None:
        path.chmod(0o555 if path.is_dir() else 0o444)
        locked.append(path)
        if os.geteuid() == 0:
            chattr = shutil.which("chattr")
            done = subprocess.run(
                [chattr or "chattr", "+i", str(path)], capture_output=True, check=False
            )
            if chattr is None or done.returncode:
                pytest.skip(f"root, and no immutable attribute here: {done.stderr!r}")
        if os.access(path, os.W_OK):
            pytest.skip(f"{path} stays writable to this user")

    yield locking
    for path in reversed(locked):
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)
        path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.mark.parametrize("wal", [False, True], ids=["rollback", "wal"])
def test_reading_commands_work_on_a_database_this_user_may_not_write(
    tmp_path: Path,
    migrated_sqlite: Path,
    capsys: pytest.CaptureFixture[str],
    lock: Callable[[Path], None],
    wal: bool,
) -> None:
    """The file and its folder locked (``lock``): every reading command failed with "attempt
    to write a readonly database". In rollback journal mode (a database ``guobiao db
    upgrade`` made) they read it. One in WAL mode (as the server leaves it) SQLite reads only
    through a -shm file beside it, which cannot be made there: that is said in one line. A
    command that writes says in one line that it cannot."""
    data = tmp_path / "data"
    data.mkdir()
    match = filled(data, migrated_sqlite, wal=wal)
    lock(data / "guobiao.db")
    lock(data)
    for argv in reads(match):
        status = main([*argv, "--data-dir", str(data)])
        captured = capsys.readouterr()
        if wal:
            assert status == 1, (argv, captured.out)
            assert captured.err.count("\n") == 1, (argv, captured.err)
            assert "cannot read it without writing: it is in WAL mode" in captured.err
            assert "guobiao.db-shm beside it, and this user may not create that" in captured.err
        else:
            assert status == (1 if argv[1] == "board" else 0), (argv, captured.err)
            assert "readonly" not in captured.err, (argv, captured.err)
            if argv[0] == "review":
                assert captured.out.startswith(f"match {match}, rc_bea (player 0): ")
    assert main(["ladder", "season", "new", "mcr", "--data-dir", str(data)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert ("attempt to write a readonly database" in err) != wal, err
    assert sorted(p.name for p in data.iterdir()) == ["guobiao.db"]


# --------------------------------------------- a database that cannot be used ---


def test_a_database_that_never_answers_is_said_in_one_line() -> None:
    """asyncpg's connect timeout has no message: the line says what happened instead (it
    read ``splitlines()[0]`` of nothing, an IndexError's traceback after a minute)."""
    url = "postgresql+asyncpg://postgres:secret@127.0.0.1:1/x"
    said = trouble(url, TimeoutError())
    assert said == (
        "cannot use the database postgresql+asyncpg://postgres:***@127.0.0.1:1/x: no answer "
        "in time (timed out): is it a PostgreSQL server, and up?"
    )
    assert trouble(url, RuntimeError("")).endswith(": RuntimeError")
    assert trouble(url, OSError("refused\nmore")).endswith("/x: refused")


def test_postgresql_without_its_driver_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "asyncpg", None)  # (as if it were not installed)
    with pytest.raises(BadDatabaseURL, match=r"install the postgres extra: pip install '\.\["):
        make_engine("postgresql+asyncpg://u@127.0.0.1:1/x")


# ------------------------------------------------------------------ backups ---


@pytest.mark.asyncio
async def test_a_backup_taken_while_a_server_plays_is_whole_and_replays(
    start_server: StartServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``db backup`` while a match is being played and stored: the copy holds every match
    and action committed (a copy of the file alone misses what the -wal file holds), and
    every match in it replays (``db check --all``)."""
    app = await start_server(database="live.db")
    assert app.lobby is not None and app.store is not None
    table = await bot_match(app.lobby)
    await wait_for(lambda: table.log_seq >= 40, 60, "forty actions stored")
    url = app.config.database_url
    copy = tmp_path / "copy.db"
    assert await asyncio.to_thread(main, ["db", "backup", str(copy), "--database-url", url]) == 0
    said = capsys.readouterr().out.strip()
    found = re.fullmatch(
        rf".*: backed up to {re.escape(str(copy))} \((\d+) matches, (\d+) actions, schema "
        r"(\w+)\); restore it by stopping the server and putting it in the database's place "
        r"\(docs/deployment\.md, Backups\)",
        said,
    )
    assert found is not None, said
    assert int(found[1]) >= 1 and int(found[2]) >= 40 and found[3] == head()
    with sqlite3.connect(copy) as db:  # (the copy alone: no -wal beside it)
        assert db.execute("SELECT count(*) FROM actions").fetchone()[0] == int(found[2])
    copied = f"sqlite+aiosqlite:///{copy}"
    assert await asyncio.to_thread(main, ["db", "check", "--all", "--database-url", copied]) == 0


def test_a_backup_goes_to_a_new_file_of_a_sqlite_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    there = tmp_path / "there.db"
    there.write_text("keep me")
    url = f"sqlite:///{tmp_path / 'none.db'}"
    pg = "postgresql+asyncpg://u:secret@127.0.0.1:1/x"
    for args, says in (
        ([str(tmp_path / "b.db"), "--database-url", url], "no such database"),
        ([str(there), "--database-url", url], "no such database"),
        ([str(tmp_path / "b.db"), "--database-url", pg], "back up PostgreSQL with pg_dump"),
    ):
        assert main(["db", "backup", *args]) == 1
        err = capsys.readouterr().err
        assert err.startswith("guobiao db: ") and says in err, err
        assert "secret" not in err
    assert there.read_text() == "keep me" and not (tmp_path / "b.db").exists()


def test_a_database_a_newer_guobiao_migrated_is_said_so(
    migrated_sqlite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not "0099 (head is 0010)", as if it were behind, nor Alembic's "Can't locate
    revision": a newer version migrated it (what to do: run that one, or a backup)."""
    path = tmp_path / "newer.db"
    shutil.copyfile(migrated_sqlite, path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE alembic_version SET version_num = '0099'")
    db.close()
    url = f"sqlite:///{path}"
    says = (
        "the database is at schema 0099, which this guobiao does not know (its newest is "
        f"{head()}): a newer guobiao migrated it; run that version, or restore a backup "
        "taken before (docs/deployment.md, Backups)"
    )
    assert main(["db", "current", "--database-url", url]) == 0
    assert capsys.readouterr().out == f"{url}: 0099: {says}\n"
    assert main(["db", "upgrade", "--database-url", url]) == 1
    assert capsys.readouterr().err == f"guobiao db: {url}: {says}\n"
    with sqlite3.connect(path) as db:  # (nothing was done to it)
        assert db.execute("SELECT version_num FROM alembic_version").fetchone() == ("0099",)
    db.close()


def test_a_data_folder_that_is_a_file_is_said_so(tmp_path: Path) -> None:
    """Not ``[Errno 17] File exists``."""
    url = "sqlite:///x/guobiao.db"
    made = FileExistsError(17, "File exists")
    made.filename = str(tmp_path / "data")
    assert trouble(url, made).endswith(f": {tmp_path / 'data'} is a file, where a folder is wanted")
    through = NotADirectoryError(20, "Not a directory")
    through.filename = str(tmp_path / "data" / "sub")
    assert trouble(url, through).endswith(
        f": the path to {tmp_path / 'data' / 'sub'} goes through a file, where a folder is wanted"
    )


@pytest.mark.parametrize("limit", ["0", "-5"])
def test_a_leaderboard_of_no_rows_is_refused(
    limit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["ladder", "board", "mcr", "--limit", limit])
    assert stopped.value.code == 2
    assert f"argument --limit: expected a whole number of at least 1, got '{limit}'" in (
        capsys.readouterr().err
    )


class Terminal(io.StringIO):
    """Standard input at a terminal, where a person types the text it is made with."""

    def isatty(self) -> bool:
        return True


def schema(path: Path) -> tuple[str | None, list[str], int | None]:
    """The file's revision, its tables, and its matches (None: no such table)."""
    with sqlite3.connect(path) as db:
        (revision,) = db.execute("SELECT version_num FROM alembic_version").fetchone() or (None,)
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        count = "SELECT count(*) FROM matches"
        matches = db.execute(count).fetchone()[0] if "matches" in tables else None
    db.close()
    return revision, sorted(tables), matches


@pytest.mark.parametrize(
    ("revision", "says"),
    [
        ("base", "from {head} to base drops every table: every account, match, rating and "
         "tournament it holds is lost"),
        ("-1", "from {head} to -1 undoes 1 migration(s), dropping the tables and columns they "
         "added with what they hold:\n  {head}  "),
    ],
)  # fmt: skip
def test_a_downgrade_not_at_a_terminal_says_what_it_drops_and_needs_yes(
    *,
    tmp_path: Path,
    migrated_sqlite: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    revision: str,
    says: str,
) -> None:
    """``db downgrade base`` emptied a database without a word. Where no one can be asked (a
    script; even one piping "yes" in) it now does nothing without ``--yes``."""
    filled(tmp_path, migrated_sqlite)
    path = tmp_path / "guobiao.db"
    url = f"sqlite:///{path}"
    before = schema(path)
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\n"))
    assert main(["db", "downgrade", revision, "--database-url", url]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"guobiao db: downgrading {url} {says.format(head=head())}"), err
    assert err.endswith(
        "nothing done: not at a terminal to ask, so add --yes to downgrade (back the database "
        "up first: 'guobiao db backup FILE', or pg_dump)\n"
    )
    assert schema(path) == before and before[2] == 1  # (its match is there)
    assert main(["db", "downgrade", revision, "--yes", "--database-url", url]) == 0
    assert "downgraded to" in capsys.readouterr().out
    assert schema(path)[0] != head()


@pytest.mark.parametrize(("answer", "done"), [("y\n", True), ("yes\n", True), ("n\n", False),
                                              ("\n", False), ("", False)])  # fmt: skip
def test_a_downgrade_at_a_terminal_asks_first(
    *,
    tmp_path: Path,
    migrated_sqlite: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    answer: str,
    done: bool,
) -> None:
    filled(tmp_path, migrated_sqlite)
    path = tmp_path / "guobiao.db"
    url = f"sqlite:///{path}"
    before = schema(path)
    monkeypatch.setattr("sys.stdin", Terminal(answer))
    assert main(["db", "downgrade", "base", "--database-url", url]) == (0 if done else 1)
    captured = capsys.readouterr()
    assert "drops every table" in captured.err and "Downgrade? [y/N] " in captured.err
    if done:
        assert "downgraded to no revision" in captured.out
        assert schema(path) == (None, ["alembic_version"], None)
    else:
        assert captured.err.endswith("guobiao db: not downgraded: nothing done\n")
        assert schema(path) == before


def test_a_downgrade_that_undoes_nothing_asks_nothing(
    migrated_sqlite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "at-head.db"
    shutil.copyfile(migrated_sqlite, path)
    assert main(["db", "downgrade", head(), "--database-url", f"sqlite:///{path}"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out.endswith(f"downgraded to {head()} (head)\n")

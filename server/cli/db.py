"""``guobiao db``: migrate the server's database.

    guobiao db upgrade [REVISION]     migrate up (default: to the newest revision, "head")
    guobiao db downgrade REVISION     migrate down ("base": drop every table); says what it
                  [--yes]             drops and asks first, or needs --yes where no one can
                                      be asked (not at a terminal)
    guobiao db current                the revision the database is at
    guobiao db check [--all]          replay every unfinished match's log (--all: and the
                                      finished ones); name those that fail and why
                                      (a match stopped at its table's time cap is complete)
    guobiao db backup FILE            copy a SQLite database whole into FILE, safely while
                                      a server uses it (SQLite's online backup)

The database is the server's: ``--database-url``, else ``GUOBIAO_DATABASE_URL``, else the
configuration (``--config FILE``, ``[database] url``), else SQLite in the data folder.
``current`` and ``check`` only read: they write nothing to a SQLite file, and make no file or
folder where there is none (``server.db.engine.make_engine``'s ``read_only``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy.exc import SQLAlchemyError

from engine.match import Match
from engine.table import Phase
from server import config as server_config
from server.cli.args import database_config, database_options
from server.db import migrate
from server.db.engine import display, parse_url, read_only_url, sqlite_path, trouble
from server.db.errors import BadDatabaseURL, CannotRead
from server.db.store import MatchRow, Store
from server.lobby import replay_log
from server.table import LobbyError


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "db",
        help="migrate the database (upgrade, downgrade, current); check its matches replay; "
        "back it up",
        description="Migrate the server's database with its Alembic migrations, check that its "
        "matches replay, back it up.",
    )
    common = database_options()
    actions = parser.add_subparsers(dest="db_action", metavar="ACTION", required=True)
    up = actions.add_parser(
        "upgrade", parents=[common], help="migrate up (default: to the newest revision)"
    )
    up.add_argument("revision", nargs="?", default="head", help="target revision (default head)")
    down = actions.add_parser(
        "downgrade", parents=[common], help="migrate down to REVISION ('base': empty database)"
    )
    down.add_argument("revision", help="target revision, or 'base'")
    down.add_argument(
        "--yes",
        action="store_true",
        help="drop what the downgrade drops without asking (needed when not at a terminal)",
    )
    actions.add_parser("current", parents=[common], help="print the database's revision")
    check = actions.add_parser(
        "check",
        parents=[common],
        help="replay the stored matches: which fail and why (exit status 1 if any does)",
        description="Replay every unfinished match's action log through the engine, as a "
        "restart does, and compare the hands it stores with the replay; print each match "
        "and what is wrong with it. Exit status 1 if any fails.",
    )
    check.add_argument("--all", action="store_true", help="check the finished matches too")
    backup = actions.add_parser(
        "backup",
        parents=[common],
        help="copy a SQLite database into FILE, safely while a server uses it",
        description="Copy the SQLite database whole into FILE with SQLite's online backup: "
        "a consistent copy of every committed write, taken while the server runs (a copy "
        "of the file alone misses what its -wal file holds). FILE must not exist. For "
        "PostgreSQL use pg_dump (docs/deployment.md, Backups).",
    )
    backup.add_argument("file", help="the copy to make (a new file)")
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        config = database_config(args)
        url = config.database_url
    except server_config.ConfigError as exc:
        return _fail(str(exc))
    try:
        if args.db_action == "check":
            report, failed = asyncio.run(_check(url, config.rule_presets(), args.all))
            print(report)
            return 1 if failed else 0
        if args.db_action == "backup":
            print(backup(url, Path(args.file)))
            return 0
        if args.db_action == "downgrade":
            loss = asyncio.run(downgrade_loss(url, args.revision))
            if loss is not None and not _confirmed(loss, yes=args.yes):
                return 1
        print(asyncio.run(_act(args.db_action, getattr(args, "revision", None), url)))
    except (BadDatabaseURL, CannotRead) as exc:
        return _fail(str(exc))
    except CommandError as exc:
        return _fail(f"{display(url)}: {exc}")
    except (SQLAlchemyError, OSError, sqlite3.Error) as exc:
        return _fail(trouble(url, exc))
    return 0


def backup(url: str, target: Path) -> str:
    """Copy the SQLite database of ``url`` into the new file ``target`` (SQLite's online
    backup: every committed write, the ``-wal`` file's included, while a server goes on
    writing); what was copied, in a line. ``CannotRead`` for a database that is not a
    SQLite file here or a ``target`` that exists."""
    parsed = parse_url(url)
    path = sqlite_path(parsed)
    where = display(url)
    if path is None:
        raise CannotRead(
            f"{where}: 'db backup' copies a SQLite file; back up PostgreSQL with pg_dump "
            "(docs/deployment.md, Backups)"
        )
    opened = read_only_url(parsed, path)  # (as the commands that only read open it)
    if target.exists():
        raise CannotRead(f"{target} exists: the backup goes to a new file")
    source = sqlite3.connect(f"{opened.database}?mode=rw", uri=True)
    try:
        copy = sqlite3.connect(target)
        try:
            source.backup(copy)
            matches = copy.execute("SELECT count(*) FROM matches").fetchone()[0]
            actions = copy.execute("SELECT count(*) FROM actions").fetchone()[0]
            (revision,) = copy.execute("SELECT version_num FROM alembic_version").fetchone()
        finally:
            copy.close()
    finally:
        source.close()
    return (
        f"{where}: backed up to {target.resolve()} ({matches} matches, {actions} actions, "
        f"schema {revision}); restore it by stopping the server and putting it in the "
        "database's place (docs/deployment.md, Backups)"
    )


async def _act(action: str, revision: str | None, url: str) -> str:
    where = display(url)
    if action == "upgrade":
        assert revision is not None
        await migrate.upgrade(url, revision)
        return f"{where}: upgraded to {_describe(await migrate.current(url))}"
    if action == "downgrade":
        assert revision is not None
        await migrate.downgrade(url, revision)
        return f"{where}: downgraded to {_describe(await migrate.current(url))}"
    return f"{where}: {_describe(await migrate.current(url, read_only=True))}"


async def downgrade_loss(url: str, revision: str) -> str | None:
    """What downgrading the database at ``url`` to ``revision`` drops, in words (each
    migration's downgrade drops the tables or columns it added, with what they hold); None
    when it undoes nothing (an empty database, or one at ``revision`` already).
    ``CommandError`` for a revision the downgrade would refuse, with Alembic's words."""
    at = await migrate.current(url)
    if at is None:
        return None
    if not migrate.known(at):
        raise CommandError(migrate.newer(at))
    # The steps as ``alembic.command.downgrade`` finds them (its very call), so what is asked
    # about is what is done: ``iterate_revisions`` counts a relative "-1" from the head, not
    # from the database's revision.
    script = ScriptDirectory(str(migrate.MIGRATIONS))
    undone = [step.revision for step in script._downgrade_revs(revision, at)]
    if not undone:
        return None
    where = display(url)
    if any(step.down_revision is None for step in undone):
        return (
            f"downgrading {where} from {at} to base drops every table: every account, match, "
            "rating and tournament it holds is lost"
        )
    lines = [
        f"downgrading {where} from {at} to {revision} undoes {len(undone)} migration(s), "
        "dropping the tables and columns they added with what they hold:"
    ]
    for step in undone:
        headline = (step.doc or "").split("\n", 1)[0]  # (its docstring's first line)
        lines.append(f"  {step.revision}  {headline}".rstrip())
    return "\n".join(lines)


def _confirmed(loss: str, *, yes: bool) -> bool:
    """Whether to go on with a downgrade that drops ``loss``: ``--yes``, or the person at
    the terminal says so. Not at a terminal (a script, a pipe) without ``--yes``: no, saying
    why."""
    if yes:
        return True
    if not sys.stdin.isatty():
        _fail(
            f"{loss}\nnothing done: not at a terminal to ask, so add --yes to downgrade (back "
            "the database up first: 'guobiao db backup FILE', or pg_dump)"
        )
        return False
    print(loss, file=sys.stderr)
    print("Downgrade? [y/N] ", end="", file=sys.stderr, flush=True)
    if sys.stdin.readline().strip().lower() in ("y", "yes"):
        return True
    _fail("not downgraded: nothing done")
    return False


def _describe(revision: str | None) -> str:
    head = migrate.head()
    if revision is None:
        return f"no revision (empty; 'guobiao db upgrade' migrates to {head})"
    if revision == head:
        return f"{revision} (head)"
    if not migrate.known(revision):
        return f"{revision}: {migrate.newer(revision)}"
    return f"{revision} (head is {head})"


def _fail(message: str) -> int:
    print(f"guobiao db: {message}", file=sys.stderr)
    return 1


async def _check(url: str, presets: dict[str, Any], everything: bool) -> tuple[str, int]:
    """Replay the matches: one line per match, then a summary; and how many failed."""
    if await migrate.current(url, read_only=True) is None:
        raise CommandError("the database is empty: 'guobiao db upgrade' first")
    async with await Store.open(url, read_only=True) as store:
        matches = await store.unfinished_matches()
        if everything:
            matches += await store.finished_matches()
        lines = [f"{display(url)}: checking {len(matches)} match(es)"]
        failed = 0
        for stored in matches:
            state = "finished" if stored.ended_at is not None else "in play"
            where = f"match {stored.id} (table {stored.table_id}, {state})"
            problem, actions = await _check_match(store, stored, presets)
            if problem is None:
                lines.append(f"{where}: ok ({actions} actions)")
            else:
                failed += 1
                lines.append(f"{where}: FAILS: {problem}")
    lines.append(f"{failed} of {len(matches)} match(es) fail" if failed else "every match replays")
    return "\n".join(lines), failed


async def _stopped_at_cap(store: Store, stored: MatchRow, match: Match) -> bool:
    """Whether a finished match whose log ends short of its length stopped at its table's
    time cap (``server.table.Table.ends_at``): its last hand over, and it ended once the
    cap had passed. Such a match is complete (its ``hands_planned`` stays the length it was
    started with), not a log that lost its last hands."""
    if match.hand is None or match.hand.phase is not Phase.OVER or stored.ended_at is None:
        return False
    table = await store.get_table(stored.table_id)
    return table is not None and table.ends_at is not None and stored.ended_at >= table.ends_at


async def _check_match(
    store: Store, stored: MatchRow, presets: dict[str, Any]
) -> tuple[str | None, int]:
    """What is wrong with a stored match (None: nothing), and its number of actions."""
    actions = await store.match_actions(stored.id)
    try:
        match = replay_log(stored, actions, presets)
    except LobbyError as exc:
        return exc.reason, len(actions)
    replayed = [json.loads(json.dumps(r.to_dict())) for r in match.records]
    hands = await store.match_hands(stored.id)
    for hand_no, record in enumerate(hands, 1):
        if hand_no > len(replayed):
            return f"hand {hand_no} is stored but the log does not finish it", len(actions)
        if record != replayed[hand_no - 1]:
            return f"the stored record of hand {hand_no} is not the replay's", len(actions)
    if stored.ended_at is None:
        return None, len(actions)  # hands the log finished but not stored: restore stores them
    if not match.over and await _stopped_at_cap(store, stored, match):
        match.stop()  # complete: it stopped between hands at its table's time cap
    if not match.over:
        return f"finished, but its log ends in hand {match.hand_index + 1}", len(actions)
    if len(hands) != len(replayed):
        return f"{len(replayed)} hands replay, {len(hands)} are stored", len(actions)
    if list(stored.final_scores or ()) != match.scores:
        return (
            f"final scores {list(stored.final_scores or ())} stored, {match.scores} replayed",
            len(actions),
        )
    return None, len(actions)

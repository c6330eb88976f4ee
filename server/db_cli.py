"""``guobiao db``: migrate the server's database.

    guobiao db upgrade [REVISION]     migrate up (default: to the newest revision, "head")
    guobiao db downgrade REVISION     migrate down ("base": drop every table)
    guobiao db current                the revision the database is at

The database is the server's: ``--database-url``, else ``GUOBIAO_DATABASE_URL``, else the
configuration (``--config FILE``, ``[database] url``), else SQLite in the data folder.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from alembic.util.exc import CommandError
from sqlalchemy.exc import SQLAlchemyError

from server import config as server_config
from server.db import migrate
from server.db.engine import display
from server.db.errors import BadDatabaseURL


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "db",
        help="migrate the database: upgrade, downgrade, current",
        description="Migrate the server's database with its Alembic migrations.",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", metavar="FILE", help="server configuration file (TOML)")
    common.add_argument(
        "--database-url",
        metavar="URL",
        help="SQLAlchemy URL, e.g. postgresql+asyncpg://user:pw@host/db (wins over the "
        "configuration and GUOBIAO_DATABASE_URL)",
    )
    common.add_argument("--data-dir", metavar="DIR", help="folder of the default SQLite database")
    actions = parser.add_subparsers(dest="db_action", metavar="ACTION", required=True)
    up = actions.add_parser(
        "upgrade", parents=[common], help="migrate up (default: to the newest revision)"
    )
    up.add_argument("revision", nargs="?", default="head", help="target revision (default head)")
    down = actions.add_parser(
        "downgrade", parents=[common], help="migrate down to REVISION ('base': empty database)"
    )
    down.add_argument("revision", help="target revision, or 'base'")
    actions.add_parser("current", parents=[common], help="print the database's revision")
    return parser


def run(args: argparse.Namespace) -> int:
    overrides: dict[str, dict[str, object]] = {}
    if args.database_url:
        overrides["database"] = {"url": args.database_url}
    if args.data_dir:
        overrides["server"] = {"data_dir": args.data_dir}
    try:
        url = server_config.load(args.config, overrides=overrides).database_url
    except server_config.ConfigError as exc:
        return _fail(str(exc))
    try:
        print(asyncio.run(_act(args.db_action, getattr(args, "revision", None), url)))
    except BadDatabaseURL as exc:
        return _fail(str(exc))
    except CommandError as exc:
        return _fail(f"{display(url)}: {exc}")
    except (SQLAlchemyError, OSError) as exc:
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        return _fail(f"cannot use the database {display(url)}: {reason}")
    return 0


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
    return f"{where}: {_describe(await migrate.current(url))}"


def _describe(revision: str | None) -> str:
    head = migrate.head()
    if revision is None:
        return f"no revision (empty; 'guobiao db upgrade' migrates to {head})"
    if revision == head:
        return f"{revision} (head)"
    return f"{revision} (head is {head})"


def _fail(message: str) -> int:
    print(f"guobiao db: {message}", file=sys.stderr)
    return 1

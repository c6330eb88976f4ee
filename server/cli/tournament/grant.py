"""``guobiao tournament grant``: the operator gives (``--revoke``: takes back) the
director role, on the server's database directly, as ``guobiao ladder`` does.
"""

from __future__ import annotations

import argparse
import asyncio

from sqlalchemy.exc import SQLAlchemyError

from server import config as server_config
from server.cli.args import database_config
from server.cli.tournament.printing import fail
from server.db import migrate
from server.db.engine import display, trouble
from server.db.errors import BadDatabaseURL, CannotRead
from server.db.store import Store

# -------------------------------------------------------------------- grant ---


def grant(args: argparse.Namespace) -> int:
    try:
        config = database_config(args)
    except server_config.ConfigError as exc:
        return fail(str(exc), 2)
    url = config.database_url
    try:
        return asyncio.run(_grant_in(args, url))
    except (BadDatabaseURL, CannotRead) as exc:
        return fail(str(exc))
    except (SQLAlchemyError, OSError) as exc:
        return fail(trouble(url, exc))


async def _grant_in(args: argparse.Namespace, url: str) -> int:
    if await migrate.current(url, read_only=True) != migrate.head():  # (makes no file)
        return fail(f"{display(url)} is not migrated: run 'guobiao db upgrade' first")
    what = (
        f"direct tournament {args.tournament}"
        if args.tournament is not None
        else "create tournaments"
    )
    async with await Store.open(url) as store:
        tournaments = store.tournaments
        account = await tournaments.account(args.name)
        if not args.revoke:
            if account is None:
                return fail(f"no account {args.name!r}: it must be registered first")
            if account[1]:
                return fail(f"{args.name} is a guest account: guests cannot {what}")
            if args.tournament is not None and await tournaments.get(args.tournament) is None:
                return fail(f"no tournament {args.tournament}")
        name = account[0] if account is not None else args.name
        changed = await tournaments.grant(name, tournament_id=args.tournament, revoke=args.revoke)
    if args.revoke:
        print(f"{name} may no longer {what}" + ("" if changed else " (nor could before)"))
    else:
        print(f"{name} may now {what}" + ("" if changed else " (could already)"))
    return 0

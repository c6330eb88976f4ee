"""``guobiao ladder``: the operator's side of the ranking ladder (docs/ladder.md).

    guobiao ladder recompute [--ladder L [--season S]] [--check]
                                   replay every rated match in the order it was rated and
                                   compare with the stored ratings; fix what differs (--check:
                                   only report; exit status 1 if anything differs)
    guobiao ladder seasons [--ladder L]       the seasons, with their dates and models
    guobiao ladder season new LADDER [--name NAME]
                                   end the current season now and start the next (its players
                                   start from the soft reset of their last rating)
    guobiao ladder board LADDER [--season S] [--limit N] [--provisional false|true|all]
                                   the leaderboard, as the API gives it
    guobiao ladder farms [--days D] [--at-least N]
                                   groups of four accounts that played N rated matches together
                                   in the last D days, with account ages and addresses

The database is the server's, as for ``guobiao db`` (``--database-url``, else
``GUOBIAO_DATABASE_URL``, else the configuration, else SQLite in the data folder); it must be
migrated. The commands may run while the server does: each is one transaction per step.
Those that only read (``seasons``, ``board``, ``farms``, ``recompute --check``) write nothing
(``server.db.engine.make_engine``'s ``read_only``), so they work on a SQLite file this user may
not write.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from server import config as server_config
from server.cli.args import database_config, database_options, non_negative_int, positive_int
from server.db import migrate
from server.db.engine import display, trouble
from server.db.errors import BadDatabaseURL, CannotRead
from server.db.store import Store
from server.ladder.store import PROVISIONAL_FILTERS, LadderError


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "ladder",
        help="the ranking ladder: recompute ratings, seasons, leaderboard, farm report",
        description="The operator's side of the ranking ladder (docs/ladder.md).",
    )
    common = database_options()
    actions = parser.add_subparsers(dest="ladder_action", metavar="ACTION", required=True)
    recompute = actions.add_parser(
        "recompute",
        parents=[common],
        help="rebuild every rating from the stored results; compare with (and fix) the stored",
    )
    recompute.add_argument("--ladder", help="only this ladder (a rule preset's name)")
    recompute.add_argument(
        "--season", type=positive_int, help="only this season number (needs --ladder)"
    )
    recompute.add_argument(
        "--check", action="store_true", help="only compare: change nothing (exit 1 on a difference)"
    )
    seasons = actions.add_parser("seasons", parents=[common], help="list the seasons")
    seasons.add_argument("--ladder", help="only this ladder")
    season = actions.add_parser("season", help="start a new season")
    season_actions = season.add_subparsers(dest="season_action", metavar="ACTION", required=True)
    new = season_actions.add_parser(
        "new", parents=[common], help="end the ladder's current season now and start the next"
    )
    new.add_argument("ladder", help="the ladder (a rule preset's name, e.g. mcr)")
    new.add_argument("--name", help="the new season's name (default: Season N)")
    board = actions.add_parser("board", parents=[common], help="print a leaderboard page")
    board.add_argument("ladder", help="the ladder")
    board.add_argument("--season", type=positive_int, help="season number (default: the current)")
    board.add_argument(
        "--limit", type=positive_int, default=20, help="rows (default 20, at most 100)"
    )
    board.add_argument("--offset", type=non_negative_int, default=0, help="rows to skip")
    board.add_argument("--provisional", choices=PROVISIONAL_FILTERS, default="false")
    board.add_argument("--json", action="store_true", help="print the API's JSON")
    farms = actions.add_parser(
        "farms", parents=[common], help="groups of four accounts that play together often"
    )
    farms.add_argument("--days", type=days, default=7.0, help="look back this many days (7)")
    farms.add_argument(
        "--at-least", type=positive_int, default=3, help="rated matches together to be listed (3)"
    )
    farms.add_argument("--json", action="store_true", help="print JSON")
    return parser


FARM_DAYS_MAX = 36500  # ``farms --days``: a hundred years back is all there is


def days(text: str) -> float:
    """``farms --days``: a positive number of days, at most ``FARM_DAYS_MAX``."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value <= FARM_DAYS_MAX:
        raise argparse.ArgumentTypeError(
            f"expected a positive number of days, at most {FARM_DAYS_MAX}, got {text!r}"
        )
    return value


def run(args: argparse.Namespace) -> int:
    try:
        config = database_config(args)
    except server_config.ConfigError as exc:
        return _fail(str(exc))
    url = config.database_url
    try:
        return asyncio.run(_run(args, url, config))
    except (BadDatabaseURL, CannotRead, LadderError) as exc:
        return _fail(str(exc))
    except (SQLAlchemyError, OSError) as exc:
        return _fail(trouble(url, exc))


# The actions that only read: they write nothing (``make_engine``'s ``read_only``), so they
# work on a SQLite file this user may not write.
READING = ("seasons", "board", "farms")


async def _run(args: argparse.Namespace, url: str, config: server_config.Config) -> int:
    if await migrate.current(url, read_only=True) != migrate.head():
        return _fail(f"{display(url)} is not migrated: run 'guobiao db upgrade' first")
    action = args.ladder_action
    reading = action in READING or (action == "recompute" and args.check)
    async with await Store.open(url, read_only=reading) as store:
        store.policy = config.season_policy()
        if action == "recompute":
            return await _recompute(store, args)
        if action == "seasons":
            _print_seasons(await store.ladder.seasons(args.ladder))
            return 0
        if action == "season":
            season = await store.ladder.new_season(args.ladder, datetime.now(UTC), args.name)
            print(
                f"{args.ladder}: {season['name']} (season {season['number']}) starts now, "
                f"{season['starts_at']}"
                + (f", ends {season['ends_at']}" if season["ends_at"] else "")
            )
            return 0
        if action == "board":
            store.ladder.check_ladder(args.ladder)
            page = await store.ladder.leaderboard(
                args.ladder,
                season=args.season,
                offset=args.offset,
                limit=args.limit,
                provisional=args.provisional,
            )
            if page is None:
                return _fail(f"ladder {args.ladder} has no such season (or no rated match yet)")
            if args.json:
                print(json.dumps(page, ensure_ascii=False, indent=2))
            else:
                _print_board(page)
            return 0
        assert action == "farms"
        since = datetime.now(UTC) - timedelta(days=args.days)
        groups = await store.ladder.farms(since, args.at_least)
        if args.json:
            print(json.dumps(groups, ensure_ascii=False, indent=2))
        else:
            _print_farms(groups, args.days, args.at_least)
        return 0


async def _recompute(store: Store, args: argparse.Namespace) -> int:
    if args.season is not None and args.ladder is None:
        return _fail("--season needs --ladder")
    if args.ladder is not None:
        store.ladder.check_ladder(args.ladder)
    scope = "every ladder" if args.ladder is None else f"ladder {args.ladder}"
    if args.season is not None:
        scope += f", season {args.season}"
    print(f"recomputing {scope}{' (check only)' if args.check else ''}...", flush=True)
    started = time.perf_counter()

    def progress(matches: int) -> None:
        print(f"  {matches:,} matches replayed", file=sys.stderr, flush=True)

    report = await store.ladder.recompute(
        args.ladder, args.season, fix=not args.check, progress=progress
    )
    seconds = time.perf_counter() - started
    rate = report.matches / seconds if seconds > 0 else 0.0
    print(
        f"{report.seasons} season(s), {report.matches:,} rated matches, {report.players:,} "
        f"player ratings in {seconds:.2f} s ({rate:,.0f} matches/s)"
    )
    if report.equal:
        print("every stored figure equals the replay")
        return 0
    verb = "differ (nothing changed: --check)" if args.check else "differed and were fixed"
    print(f"{report.changes:,} rating change(s) and {report.ratings:,} rating(s) {verb}")
    return 1 if args.check else 0


def _print_seasons(seasons: list[dict[str, Any]]) -> None:
    if not seasons:
        print("no seasons yet (the first starts with the first rated match)")
        return
    for s in seasons:
        ends = s["ends_at"] or "open"
        print(
            f"{s['ladder']:<10} #{s['number']:<3} {s['name']:<20} {s['starts_at']} .. {ends}  "
            f"{s['rated_matches']:,} matches  (id {s['id']})"
        )


def _print_board(page: dict[str, Any]) -> None:
    season = page["season"]
    print(
        f"{page['ladder']} {season['name']}: {page['total']:,} players "
        f"(provisional: {page['provisional']})"
    )
    print(f"{'rank':>5}  {'name':<20} {'rating':>8} {'mu':>7} {'sigma':>6} {'matches':>7}  grade")
    for p in page["players"]:
        print(
            f"{p['rank'] or '-':>5}  {p['name']:<20} {p['rating']:8.2f} {p['mu']:7.2f} "
            f"{p['sigma']:6.2f} {p['matches']:7}  {p['grade']:.2f}"
        )


def _print_farms(groups: list[dict[str, Any]], days: float, at_least: int) -> None:
    print(
        f"{len(groups)} group(s) of four with {at_least}+ rated matches together in "
        f"{server_config.number(days)} days"
    )
    for group in groups:
        shared = ", ".join(group["shared_addresses"]) or "none"
        print(f"- {group['matches']} matches, last {group['last']}; shared addresses: {shared}")
        for account in group["accounts"]:
            print(
                f"    {account['name']:<20} created {account['created_at']}  "
                f"from {', '.join(account['addresses']) or '?'}"
            )


def _fail(message: str) -> int:
    print(f"guobiao ladder: {message}", file=sys.stderr)
    return 1

"""``guobiao review MATCH --player NAME``: the strong bot's review of one player's decisions
in a finished match of the server's database (``engine.review``).

Prints the match's biggest misses first (the decisions whose action cost the most on the
judge's scale, against the one the strong bot prefers), then each hand: how many decisions,
how many agree with the bot, what the others cost, and each decision that disagrees.
``--json`` prints what ``GET /api/matches/{id}/review?player=NAME`` answers. The match is read
as the server reads it (a finished match only, a duplicate session's only once the session is
over); the database is the server's (``--config``, ``--database-url``, ``--data-dir``).
Exit status 1 when the match or the player is not found or the log does not replay.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from http import HTTPStatus
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from engine.errors import MahjongError
from engine.match import check_match_hands
from engine.review import Decision, Review, review_match
from server import config as server_config
from server.cli.args import database_config, database_options, positive_int
from server.db import migrate
from server.db.engine import trouble
from server.db.errors import BadDatabaseURL, CannotRead
from server.db.store import Store
from server.lobby import stored_rules
from server.replay import Refused
from server.review import review_body, seat_of
from server.table import LobbyError

TOP = 10
NOT_FOUND, FORBIDDEN = HTTPStatus.NOT_FOUND, HTTPStatus.FORBIDDEN


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "review",
        parents=[database_options()],
        help="the strong bot's review of a player's decisions in a finished match",
        description="Replay a finished match of the server's database and value each decision "
        "of one player against the strong bot's choice: the biggest misses first, then each "
        "hand.",
    )
    parser.add_argument("match", type=positive_int, help="the match's id")
    parser.add_argument("--player", required=True, metavar="NAME", help="whose decisions")
    parser.add_argument(
        "--top", type=positive_int, default=TOP, help=f"misses listed first (default {TOP})"
    )
    parser.add_argument("--json", action="store_true", help="print the review as JSON")
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        config = database_config(args)
        presets = config.rule_presets()
    except server_config.ConfigError as exc:
        print(f"guobiao review: {exc}", file=sys.stderr)
        return 1
    url = config.database_url
    try:
        behind = asyncio.run(schema_behind(url))
        if behind is not None:
            print(f"guobiao review: {behind}", file=sys.stderr)
            return 1
        started = time.perf_counter()
        review, seats = asyncio.run(_review(url, presets, args.match, args.player))
        seconds = time.perf_counter() - started
    except (BadDatabaseURL, CannotRead, Refused) as exc:
        print(f"guobiao review: {exc}", file=sys.stderr)
        return 1
    except (SQLAlchemyError, OSError) as exc:  # in one line, as ``guobiao db`` says it
        print(f"guobiao review: {trouble(url, exc)}", file=sys.stderr)
        return 1
    except (LobbyError, MahjongError, ValueError) as exc:
        print(f"guobiao review: match {args.match} does not replay: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(review_body(review, seats), ensure_ascii=False))
    else:
        print("\n".join(report(review, seats, args.top)))
    print(f"reviewed in {seconds:.1f} s", file=sys.stderr)
    return 0


async def schema_behind(url: str) -> str | None:
    """Why the database at ``url`` cannot be read yet (its schema is older than this
    guobiao's: the server migrates it when it starts, ``guobiao db upgrade`` at once); None
    when it is up to date."""
    at, newest = await migrate.current(url, read_only=True), migrate.head()
    if at == newest:
        return None
    return (
        f"the database is at schema {at or '(none)'} and this guobiao reads {newest}: run "
        "'guobiao db upgrade' (or start the server, which migrates it) first"
    )


async def _review(
    url: str, presets: dict[str, Any], match_id: int, name: str
) -> tuple[Review, list[str | None]]:
    async with await Store.open(url, read_only=True) as store:
        stored = await store.get_match(match_id)
        if stored is None or stored.ended_at is None:
            raise Refused(
                NOT_FOUND, f"no finished match {match_id} (a match is reviewed once it ends)"
            )
        held = await store.tournaments.held_session(match_id)
        if held is not None:
            raise Refused(
                FORBIDDEN,
                f"match {match_id} was played in duplicate session {held[1]} of tournament "
                f"{held[0]}: it is reviewed once every table of the session has finished",
            )
        player = seat_of(stored.seats, name)
        logged = await store.match_actions(match_id)
    rules = stored_rules(stored, presets)
    hands = check_match_hands(stored.hands_planned)
    review = review_match(
        stored.seed,
        rules,
        [r.played for r in logged],
        player,
        match_id=match_id,
        hands=hands,
        stand_in={r.seq for r in logged if r.stand_in},  # the server's moves: not reviewed
    )
    return review, list(stored.seats)


def report(review: Review, seats: list[str | None], top: int) -> list[str]:
    """The review for people: a heading, the ``top`` biggest misses, then each hand."""
    name = seats[review.player] or f"seat {review.player}"
    decisions = review.decisions
    lines = [
        f"match {review.match}, {name} (player {review.player}): {len(decisions)} decisions "
        f"reviewed, {review.agreed} as the strong bot would play, total loss "
        f"{review.total_loss:.2f}",
        f"values: {review.scale}",
        "",
    ]
    if review.stand_in:
        moves = "move" if review.stand_in == 1 else "moves"
        lines[1:1] = [
            f"{review.stand_in} {moves} the server played for {name} (away or out of time) "
            "are not reviewed"
        ]
    misses = review.misses(top)
    if misses:
        lines.append(f"Biggest misses ({len(misses)} of {len(review.misses())}):")
        lines += _table(misses)
    else:
        lines.append("No miss: every decision was as good as the strong bot's.")
    lines.append("")
    for hand_no in range(1, review.hands + 1):
        mine = [d for d in decisions if d.hand_no == hand_no]
        apart = [d for d in mine if not d.agrees]
        loss = sum(d.loss for d in mine)
        head = f"Hand {hand_no}: {len(mine)} decisions, {len(apart)} apart, loss {loss:.2f}"
        if lines[-1] and (apart or lines[-1].startswith("  ")):  # blank lines around tables
            lines.append("")
        lines += [head, *(_table(apart) if apart else [])]
    return lines


HEAD = ("hand", "action", "phase", "taken", "bot", "value", "bot's", "loss")


def _table(decisions: list[Decision]) -> list[str]:
    rows = [HEAD] + [
        (
            str(d.hand_no),
            str(d.index + 1),
            d.phase,
            str(d.taken),
            str(d.preferred),
            f"{d.taken_value:.2f}",
            f"{d.preferred_value:.2f}",
            f"{d.loss:.2f}",
        )
        for d in decisions
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEAD))]
    right = {0, 1, 5, 6, 7}
    return [
        "  "
        + "  ".join(
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ).rstrip()
        for row in rows
    ]

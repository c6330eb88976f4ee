"""``guobiao bot``: an engine bot plays a match on a guobiao server, over the network.

    guobiao bot --url ws://127.0.0.1:8765/ws --create --add-bots
    guobiao bot --url ws://127.0.0.1:8765/ws --table t3f9a1 --name lin --password 'correct horse'

Logs in (registers the name when it is new; a guest account without ``--name``), joins the
table (``--table``), a new one (``--create``), or else the first open table of the lobby or a
new one; optionally fills the empty seats with server bots; then plays every decision with the
engine bot on its typed view until the match ends, and prints the final scores. A dropped
connection is resumed with the session token (four tries over 15 s).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from typing import Any

from engine.bots import BOTS, make_bot
from server.client import (
    Client,
    ClientError,
    ConnectFailed,
    ConnectionLost,
    Incoming,
    ServerError,
    play,
)
from server.text import refused_character

RECONNECT_DELAYS = (1.0, 2.0, 4.0, 8.0)  # seconds before each try
PASSWORD_ENV = "GUOBIAO_PASSWORD"


class BotError(Exception):
    """A failure to report to the user in one line."""


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "bot",
        help="play a match on a server with an engine bot",
        description="Connect to a guobiao server, sit at a table and let an engine bot play "
        "the whole match over the network; print the final scores.",
    )
    parser.add_argument(
        "--url", required=True, help="the server, ws://HOST:PORT/ws (/ws is added if missing)"
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--table", metavar="ID", help="join this table")
    where.add_argument("--create", action="store_true", help="create a new table and join it")
    parser.add_argument("--seat", type=int, choices=range(4), help="the seat to take (0..3)")
    parser.add_argument("--invite", metavar="CODE", help="invite code of a private table")
    parser.add_argument("--private", action="store_true", help="with --create: a private table")
    parser.add_argument(
        "--turn-seconds", type=int, metavar="T", help="with --create: the time per decision"
    )
    parser.add_argument(
        "--rules", metavar="PRESET", help="with --create: the rule preset (custom, ...)"
    )
    parser.add_argument(
        "--claim-window-ms",
        type=int,
        metavar="MS",
        help="with --create: the least wait after every discard (default: 0 with --add-bots, "
        "where no person plays and nothing is hidden from anyone; else the server's)",
    )
    parser.add_argument("--name", help="account name (registered if new); default: a guest")
    parser.add_argument(
        "--password", help=f"account password (or the {PASSWORD_ENV} environment variable)"
    )
    parser.add_argument(
        "--bot", choices=sorted(BOTS), default="default", help="the engine bot that plays"
    )
    parser.add_argument(
        "--add-bots",
        nargs="?",
        const="normal",
        choices=sorted(BOTS),
        metavar="LEVEL",
        help="fill the empty seats with server bots (LEVEL: easy, normal or strong; fast is a "
        "load-test bot; default normal)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the engine bot's seed")
    parser.add_argument("--quiet", action="store_true", help="print only the final scores")
    return parser


def run(args: argparse.Namespace) -> int:
    if args.name and not (args.password or os.environ.get(PASSWORD_ENV)):
        print(f"guobiao bot: --name needs --password (or {PASSWORD_ENV})", file=sys.stderr)
        return 2
    creating = (
        args.private,
        args.turn_seconds is not None,
        args.rules,
        args.claim_window_ms is not None,
    )
    if any(creating) and not args.create:
        print(
            "guobiao bot: --private, --turn-seconds, --rules and --claim-window-ms go with "
            "--create",
            file=sys.stderr,
        )
        return 2
    try:
        end = asyncio.run(_main(args))
    except KeyboardInterrupt:
        print("guobiao bot: interrupted", file=sys.stderr)
        return 130
    except (BotError, ClientError) as exc:
        print(f"guobiao bot: {exc}", file=sys.stderr)
        return 1
    print(end)
    return 0


async def _main(args: argparse.Namespace) -> str:
    say = _Say(args.quiet)
    client = await _connect(args.url)
    table: str | None = None
    try:
        await _log_in(client, args, say)
        assert client.session is not None
        table = await _sit(client, args, say)
        if args.add_bots:
            try:
                await client.add_bots(table, args.add_bots)
                say(f"added {args.add_bots} server bots")
            except ServerError as exc:
                say(f"could not add bots: {exc.reason}")
        state = client.tables[table]
        if state.summary and any(s is None for s in state.summary.get("seats", [])):
            say(f"waiting for players at table {table} ...")
        bot = make_bot(args.bot, seed=args.seed)
        while True:
            try:
                end = await play(client, table, bot, on_message=say.progress)
            except ConnectionLost:
                end = None
            if end is not None:
                return _final(client, table, end)
            if client.is_open:
                raise BotError(f"the match at table {table} ended while this bot was away")
            client = await _reconnect(client, table, args, say)
    except asyncio.CancelledError:
        if table is not None and client.is_open:  # free the seat, or hand it to the server
            with contextlib.suppress(ClientError, TimeoutError):
                await asyncio.wait_for(client.leave_table(table), 1)
        raise
    finally:
        await client.close()


async def _reconnect(client: Client, table: str, args: argparse.Namespace, say: _Say) -> Client:
    """A new connection, resumed with the session token and back at ``table``."""
    assert client.session is not None
    token = client.session.token
    say(f"connection lost ({client.close_reason or client.close_code}); reconnecting")
    await client.close()
    for delay in RECONNECT_DELAYS:
        await asyncio.sleep(delay)
        try:
            fresh = await Client.connect(args.url)
        except (ConnectFailed, ServerError):
            continue
        try:
            await fresh.resume(token)
            await fresh.join_table(table, invite_code=args.invite)
        except ServerError as exc:
            await fresh.close()
            if exc.code in ("no_such_table", "table_finished", "table_started"):
                match = f"match {exc.match}" if exc.match is not None else "match"
                raise BotError(
                    f"table {table} is gone: its {match} ended while this bot was away"
                ) from None
            raise BotError(f"cannot get back to table {table}: {exc.reason}") from None
        except ClientError:
            await fresh.close()
            continue
        say(f"back at table {table}")
        return fresh
    raise BotError(f"lost the connection and could not reconnect to {args.url}")


async def _connect(url: str) -> Client:
    try:
        return await Client.connect(url)
    except ConnectFailed as exc:
        raise BotError(f"{exc} (is `guobiao serve` running there?)") from None
    except ServerError as exc:
        raise BotError(f"the server refused the connection: {exc.reason}") from None


async def _log_in(client: Client, args: argparse.Namespace, say: _Say) -> None:
    if not args.name:
        session = await client.guest()
        say(f"playing as guest {session.username}")
        return
    password = args.password or os.environ[PASSWORD_ENV]
    name = shown(args.name)  # (as said here: a name with a character a terminal acts on, quoted)
    try:
        await client.login(args.name, password)
        say(f"logged in as {name}")
        return
    except ServerError as exc:
        if exc.code != "auth_failed":
            raise BotError(f"cannot log in as {name}: {exc.reason}") from None
    try:
        await client.register(args.name, password)
    except ServerError as exc:
        if exc.code == "username_taken":
            raise BotError(f"wrong password for {name}") from None
        raise BotError(f"cannot register {name}: {exc.reason}") from None
    say(f"registered and logged in as {name}")


async def _sit(client: Client, args: argparse.Namespace, say: _Say) -> str:
    if args.create:
        window = args.claim_window_ms
        if window is None and args.add_bots:
            window = 0  # this bot and server bots: a claim window would only slow the match
        try:
            created = await client.create_table(
                rules=args.rules,
                turn_seconds=args.turn_seconds,
                private=args.private,
                claim_window_ms=window,
            )
        except ServerError as exc:  # seated already: it plays there (as ``_join`` does)
            seated = await _seated_at(client) if exc.code == "already_seated" else None
            if seated is None:
                raise
            say(f"already seated at table {seated}: going back there")
            return await _join(client, seated, None, args.invite, say)
        table = created.table
        invite = created.invite_code
        say(f"created table {table}" + (f" (invite code {invite})" if invite else ""))
        return await _join(client, table, args.seat, invite, say)
    if args.table:
        return await _join(client, args.table, args.seat, args.invite, say)
    seated = await _seated_at(client)
    if seated is not None:
        return await _join(client, seated, None, args.invite, say)
    for info in await client.list_tables():
        if info.get("state") == "waiting" and None in info.get("seats", []):
            with contextlib.suppress(ServerError):
                return await _join(client, info["table"], args.seat, None, say)
    created = await client.create_table()
    say(f"no open table: created table {created.table}")
    return await _join(client, created.table, args.seat, None, say)


async def _join(client: Client, table: str, seat: int | None, invite: str | None, say: _Say) -> str:
    try:
        mine = await client.join_table(table, seat=seat, invite_code=invite)
    except ServerError as exc:
        if exc.code == "already_seated":
            seated = await _seated_at(client)
            if seated is not None:
                say(f"already seated at table {seated}: going back there")
                return await _join(client, seated, None, invite, say)
        raise BotError(f"cannot join table {table}: {exc.reason} ({exc.code})") from None
    say(f"sitting at table {table}, seat {mine}")
    return table


async def _seated_at(client: Client) -> str | None:
    """The unfinished table where the account sits (the server says so after a login)."""
    name = client.username

    def seated(info: dict[str, Any] | None) -> bool:
        if not info:
            return False
        return info.get("state") != "finished" and name in info.get("seats", [])

    for state in client.tables.values():
        if seated(state.summary):
            return state.table
    for info in await client.list_tables():
        if seated(info):
            return str(info["table"])
    return None


def _final(client: Client, table: str, end: dict[str, Any]) -> str:
    state = client.tables[table]
    seats = (state.summary or {}).get("seats") or [None] * 4
    lines = [f"match {end.get('match')} at table {table} is over; final scores:"]
    for player, points in enumerate(end.get("scores", [])):
        label = seats[player] if player < len(seats) and seats[player] else f"player {player}"
        you = "  (this bot)" if player == state.seat else ""
        lines.append(f"  seat {player}  {label:<24} {points:>+5}{you}")
    return "\n".join(lines)


class _Say:
    """Progress lines on stderr: a hand's end once, also one the bot was away for (told by
    the full update it gets back, ``last_hand``)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.told: set[object] = set()  # the hands whose end was said

    def __call__(self, text: str) -> None:
        if not self.quiet:
            print(f"bot: {text}", file=sys.stderr, flush=True)

    def progress(self, message: Incoming) -> None:
        if self.quiet:
            return
        if message.type == "error":
            self(f"server: {message.code}: {message.payload.get('reason', '')}")
            return
        if message.type != "update":
            return
        payload = message.payload
        scores = payload.get("scores")
        missed = payload.get("last_hand")
        if isinstance(missed, dict):
            self._hand_end(missed.get("hand_no"), missed.get("events"), scores, " (while away)")
        self._hand_end(payload.get("hand_no"), payload.get("events"), scores)

    def _hand_end(self, hand: object, events: object, scores: object, away: str = "") -> None:
        """Say how hand ``hand`` ended if ``events`` do and it was not said yet."""
        for event in events if isinstance(events, list) else []:
            kind = event.get("kind") if isinstance(event, dict) else None
            if kind not in ("win", "exhausted") or hand in self.told:
                continue
            self.told.add(hand)
            if kind == "win":
                how = "self-drawn" if event.get("discarder") is None else "on a discard"
                self(
                    f"hand {hand}: player {event.get('winner')} wins {how} with "
                    f"{event.get('hand')} for {event.get('total')} fan; scores {scores}{away}"
                )
            else:
                self(f"hand {hand}: drawn (wall exhausted){away}")


def shown(name: str) -> str:
    """``name`` as a message shows it: as it is, or quoted with Python's escapes when it holds
    a character the server refuses in a name (a control or format character: an escape
    sequence, a right-to-left override), which a terminal would act on."""
    return name if refused_character(name) is None else repr(name)

"""``guobiao tournament``'s ``run``: the subcommand's request sent over the server's
websocket, logged in as ``--user`` (the password from ``GUOBIAO_PASSWORD`` or asked for,
or the session in ``GUOBIAO_TOKEN``), and what it did printed; ``list``, ``show``,
``standings`` and ``export`` without an account read the HTTP API (``http_api``), and
``grant`` the database (``grant``).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from server.cli.tournament.arguments import (
    PASSWORD_ENV,
    TOKEN_ENV,
    TournamentCliError,
    UsageError,
    prepare,
)
from server.cli.tournament.grant import grant
from server.cli.tournament.http_api import export, http_json, session_view
from server.cli.tournament.printing import (
    fail,
    next_session,
    occupant,
    print_json,
    print_list,
    print_seating,
    print_settings,
    print_show,
    print_standings,
)
from server.client import Client, ClientError, ConnectFailed, ServerError
from server.client.connection import request_frame
from server.config import LimitsSection


def run(args: argparse.Namespace) -> int:
    action: str = args.tournament_action
    try:
        if action == "grant":
            return grant(args)
        request = prepare(args)
        auth: tuple[str, str] | None = None
        if args.user:
            token = os.environ.get(TOKEN_ENV)
            use_token = token and args.tournament_action != "login"
            auth = ("token", token) if use_token else ("password", _password(args))  # type: ignore[assignment]
        return asyncio.run(_main(args, request, auth))
    except UsageError as exc:
        return fail(str(exc), 2)
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    except (TournamentCliError, ClientError) as exc:
        return fail(str(exc))


def _password(args: argparse.Namespace) -> str:
    password = os.environ.get(PASSWORD_ENV)
    if password:
        return password
    try:
        return getpass.getpass(f"password for {args.user}: ")
    except EOFError:
        print(file=sys.stderr)  # end the prompt's line
        raise UsageError(
            f"no password for {args.user}: set {PASSWORD_ENV} or answer the prompt"
        ) from None


async def _main(
    args: argparse.Namespace, request: dict[str, Any], auth: tuple[str, str] | None
) -> int:
    action: str = args.tournament_action
    if action == "export":
        return await export(args)
    if action == "list":
        print_list(args, await http_json(args.server, "/api/tournaments"))
        return 0
    if auth is None:
        assert action in ("show", "standings")
        data = await http_json(args.server, f"/api/tournaments/{args.tournament}")
        return print_read(args, data)
    client = await _connect(args.server)
    try:
        await _log_in(client, args.user, auth)
        if action == "login":
            assert client.session is not None
            print(f"export {TOKEN_ENV}={client.session.token}")
            print(
                f"# {args.user}'s session until {client.session.expires}: the commands use it "
                "instead of logging in again",
                file=sys.stderr,
            )
            return 0
        return await _request(client, args, request)
    finally:
        await client.close()


async def _connect(url: str) -> Client:
    try:
        return await Client.connect(url)
    except ConnectFailed as exc:
        raise TournamentCliError(f"{exc} (is `guobiao serve` running there?)") from None
    except ServerError as exc:
        raise TournamentCliError(f"the server refused the connection: {exc.reason}") from None


async def _log_in(client: Client, user: str, auth: tuple[str, str]) -> None:
    kind, secret = auth
    try:
        if kind == "token":
            session = await client.resume(secret)
            if session.username.lower() != user.lower():
                raise TournamentCliError(
                    f"{TOKEN_ENV} is a session of {session.username}, not of --user {user}"
                )
        else:
            await client.login(user, secret)
    except ServerError as exc:
        how = f"with {TOKEN_ENV}" if kind == "token" else ""
        raise TournamentCliError(
            f"cannot log in as {user}{' ' + how if how else ''}: {exc.code}: {exc.reason}"
        ) from None


Handler = Callable[[Client, argparse.Namespace, dict[str, Any]], Awaitable[int]]


async def _request(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    """Send the subcommand's request; print what it did."""
    action: str = args.tournament_action
    try:
        return await HANDLERS[action](client, args, request)
    except ServerError as exc:
        raise TournamentCliError(f"{exc.code}: {exc.reason}") from None


async def _create(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    data = await client.tournament_create(**request)
    if args.json:
        print_json(data)
    else:
        print(f"created tournament {data['id']}: {data['name']}")
        print_settings(data)
    return 0


# What one ``tournament_add_players`` may carry (docs/protocol.md): at most 256 names, in a
# frame within the server's message limit, ``[limits] max_message_bytes``. The command cannot
# ask a server its limit: it keeps to the default (4 KiB), which a longer list passed and
# the server closed the connection (1009).
NAMES_PER_REQUEST = 256
FRAME_BYTES = LimitsSection().max_message_bytes
_ID_BOUND = 10**9  # a message id at least as long as this command's (its first few)


def name_batches(tournament: int, names: list[str], limit: int = FRAME_BYTES) -> list[list[str]]:
    """``names`` in order, in parts each of which is a ``tournament_add_players`` request of
    at most ``NAMES_PER_REQUEST`` names in a frame of at most ``limit`` bytes."""
    empty = request_frame(
        "tournament_add_players", {"tournament": tournament, "players": []}, _ID_BOUND
    )
    batches: list[list[str]] = []
    batch: list[str] = []
    size = len(empty.encode())
    for name in names:
        grows = len(json.dumps(name).encode()) + (2 if batch else 0)  # (", " between names)
        if batch and (len(batch) == NAMES_PER_REQUEST or size + grows > limit):
            batches.append(batch)
            batch, size = [], len(empty.encode())
            grows -= 2
        batch.append(name)
        size += grows
    if batch:
        batches.append(batch)
    return batches


async def _add_players(client: Client, tid: int, names: list[str]) -> dict[str, Any]:
    """Register ``names`` in as many requests as their length takes (``name_batches``),
    saying on stderr how far it got when there are several."""
    batches = name_batches(tid, names)
    data: dict[str, Any] = {}
    sent = 0
    for number, batch in enumerate(batches, 1):
        try:
            data = await client.tournament_add_players(tid, batch)
        except ServerError as exc:
            if number == 1:
                raise
            raise TournamentCliError(
                f"{exc.code}: {exc.reason}; in part {number} of {len(batches)}: the {sent} "
                "names of the parts before it are registered (registering a name again does "
                "nothing: run the command again once the list is right)"
            ) from None
        sent += len(batch)
        if len(batches) > 1:
            print(
                f"tournament {tid}: part {number} of {len(batches)} sent, {sent} of "
                f"{len(names)} names registered",
                file=sys.stderr,
                flush=True,
            )
    return data


async def _register(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    tid: int = args.tournament
    names: list[str] = request["players"]
    if names:
        before = await client.tournament_get(tid)
        already = {
            p["name"].lower() for p in before.get("players", []) if p.get("status") == "registered"
        }
        data = await _add_players(client, tid, names)
        new = [n for n in names if n.lower() not in already]
        were = [n for n in names if n.lower() in already]
        said = f"registered {', '.join(new)}" if new else "registered nobody new"
        if were:
            said += f" ({', '.join(were)} already {'was' if len(were) == 1 else 'were'})"
        print(f"tournament {tid}: {said}")
    else:
        data = await client.tournament_register(tid)
        print(f"tournament {tid}: {args.user} is registered")
    registered = [p for p in data.get("players", []) if p.get("status") == "registered"]
    print(f"{len(registered)} player(s) registered")
    return 0


async def _withdraw(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    await client.tournament_withdraw(args.tournament)
    print(f"tournament {args.tournament}: {args.user} has withdrawn")
    return 0


async def _check_in(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    data = await client.tournament_check_in(args.tournament)
    print(
        f"tournament {args.tournament}: {args.user} is checked in for session {next_session(data)}"
    )
    return 0


async def _registration(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    data = await client.tournament_registration(args.tournament, args.state == "open")
    state = "open" if data.get("registration_open") else "closed"
    print(f"tournament {args.tournament}: registration is {state}")
    return 0


async def _seat(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    data = await client.tournament_seat(args.tournament, args.method)
    view = await session_view(args, data)
    print(f"tournament {args.tournament}, session {view['number']} seated ({view['method']}):")
    print_seating(view)
    return 0


async def _swap(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    data = await client.tournament_swap(args.tournament, args.a, args.b)
    view = await session_view(args, data)
    print(f"tournament {args.tournament}, session {view['number']}: swapped {args.a} and {args.b}")
    print_seating(view)
    return 0


async def _start(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    data = await client.tournament_start_session(args.tournament)
    view = await session_view(args, data)
    tables = view.get("tables") or []
    ends = f", ends at {view['ends_at']}" if view.get("ends_at") else ""
    print(
        f"tournament {args.tournament}, session {view['number']} started: "
        f"{len(tables)} table(s){ends}"
    )
    for table in tables:
        players = ", ".join(occupant(s) for s in table.get("seats", []))
        print(f"  table {table['table']}: {table.get('table_id') or '-'}  {players}")
    return 0


async def _substitute(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    await client.tournament_substitute(args.tournament, args.player, args.substitute)
    print(f"tournament {args.tournament}: {args.substitute} plays for {args.player} from now on")
    return 0


async def _penalty(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    data = await client.tournament_penalty(args.tournament, **request)
    where = f"session {args.session}" if args.session is not None else "overall"
    print(
        f"tournament {args.tournament}: log entry {data.get('entry')}: {args.kind} "
        f"{request['amount']} for {args.player} ({where}): {args.reason}"
    )
    return 0


async def _undo(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    data = await client.tournament_undo(args.tournament, args.entry, args.reason)
    print(
        f"tournament {args.tournament}: log entry {data.get('entry')}: entry {args.entry} "
        f"undone: {args.reason}"
    )
    return 0


async def _close(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    data = await client.tournament_close(args.tournament)
    print(f"tournament {args.tournament} is {data.get('state', 'closed')}; final standings:")
    print_standings(data)
    return 0


async def _read(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    return print_read(args, await client.tournament_get(args.tournament))


HANDLERS: dict[str, Handler] = {
    "create": _create,
    "register": _register,
    "withdraw": _withdraw,
    "check-in": _check_in,
    "registration": _registration,
    "seat": _seat,
    "swap": _swap,
    "start": _start,
    "substitute": _substitute,
    "penalty": _penalty,
    "undo": _undo,
    "close": _close,
    "show": _read,
    "standings": _read,
}


def print_read(args: argparse.Namespace, data: dict[str, Any]) -> int:
    if args.tournament_action == "standings":
        if args.json:
            print_json(data.get("standings", []))
        else:
            print_standings(data)
        return 0
    if args.json:
        print_json(data)
    else:
        print_show(data)
    return 0

"""``guobiao tournament``: run a tournament from the command line (docs/tournaments.md).

    guobiao tournament login                      print a session token (GUOBIAO_TOKEN)
    guobiao tournament create --name NAME [--sessions N] [--hands H] [--time-cap MIN]
                              [--seating M,M,...] [--duplicate] ...    a new tournament
    guobiao tournament register ID [NAME ...] [--file FILE]
                                   the director registers players (no names: register oneself)
    guobiao tournament withdraw|check-in ID       oneself
    guobiao tournament registration ID open|closed
    guobiao tournament seat ID [--method M]       seat the next session; print its tables
    guobiao tournament swap ID A B                swap two players of the seated session
    guobiao tournament start ID                   start the seated session
    guobiao tournament substitute ID PLAYER SUBSTITUTE   (an account, or "bot")
    guobiao tournament penalty ID PLAYER AMOUNT --reason TEXT [--kind K] [--session N]
    guobiao tournament undo ID ENTRY --reason TEXT
    guobiao tournament close ID
    guobiao tournament list [--json]              the public tournaments
    guobiao tournament show ID [--json]           settings, players, sessions, log
    guobiao tournament standings ID [--json]      place, player, table points, score, sessions
    guobiao tournament export ID --format csv|json [-o FILE]
    guobiao tournament grant NAME [--tournament ID] [--revoke]

Every command but ``grant`` talks to a running server (``--server``, by default the address
``guobiao serve`` listens on). Requests go over its websocket, logged in as ``--user NAME``
with the password from ``GUOBIAO_PASSWORD`` or asked for (never on the command line), or
resuming the session in ``GUOBIAO_TOKEN`` (``login`` prints one: a script logs in once);
``list``, ``show``, ``standings`` and ``export`` read the HTTP API (``ws://HOST:PORT/ws`` ->
``http://HOST:PORT``) and need no account, though ``show`` and ``standings`` ask over the
websocket when ``--user`` is given. ``grant`` is the operator's: it gives (``--revoke``
takes back) the director role, on the server's database directly, as ``guobiao ladder``
does (``--database-url``, ``--config``, ``--data-dir``): without ``--tournament`` the right
to create tournaments, with it the direction of that one.

Arguments are checked before anything is contacted (exit status 2); a refusal of the server
prints one line, its error code and reason, and exits with status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy.exc import SQLAlchemyError

from server import config as server_config
from server.cli.args import database_config, database_options, match_hands, positive_int
from server.client import Client, ClientError, ConnectFailed, ServerError, normalize_url
from server.db import migrate
from server.db.engine import display
from server.db.errors import BadDatabaseURL
from server.db.store import Store
from server.text import BadText, clean
from server.tournaments.scoring import TIE_BREAKS
from server.tournaments.seating import METHODS, WINDS

PASSWORD_ENV = "GUOBIAO_PASSWORD"
# A session token (``guobiao tournament login`` prints one): used instead of logging in
# again for every command, which the server's login limits would soon refuse in a script.
TOKEN_ENV = "GUOBIAO_TOKEN"
DEFAULT_SERVER = f"ws://127.0.0.1:{server_config.ServerSection().port}/ws"
HTTP_TIMEOUT = 10.0
# The settings' ranges (docs/tournaments.md), checked here so that a typo fails at once.
MAX_NAME = 80
MAX_SESSIONS = 32
MAX_TIME_CAP = 600
MAX_SPECTATOR_DELAY = 3600
KINDS = ("penalty", "score", "points")

# Subcommands that send requests as a logged-in account (the others read the HTTP API).
NEEDS_ACCOUNT = frozenset(
    {
        "login",
        "create",
        "register",
        "withdraw",
        "check-in",
        "registration",
        "seat",
        "swap",
        "start",
        "substitute",
        "penalty",
        "undo",
        "close",
    }
)


EXAMPLE = """\
an evening of two sessions (the operator grants td the director role first):
  guobiao tournament grant td
  export GUOBIAO_PASSWORD=...    # td's; or leave it unset and type it when asked
  guobiao tournament create --user td --name "Club night" --sessions 2 --hands 8 \\
      --time-cap 90 --seating random,avoid                 # created tournament 1: ...
  guobiao tournament register 1 --user td --file players.txt
  guobiao tournament seat 1 --user td                      # prints the tables
  guobiao tournament swap 1 amy ben --user td              # (if need be)
  guobiao tournament start 1 --user td
  guobiao tournament standings 1
  guobiao tournament export 1 --format csv -o club-night.csv
"""


class TournamentCliError(Exception):
    """A failure to report in one line (exit status 1)."""


class UsageError(Exception):
    """An argument that makes no sense, found before anything is contacted (exit status 2)."""


# ---------------------------------------------------------------- arguments ---


def _ranged(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected a whole number {low}..{high}, got {text!r}")
        return value

    parse.__name__ = f"whole number {low}..{high}"
    return parse


def tournament_name(text: str) -> str:
    """A tournament's name: 1..80 characters once trimmed, nothing invisible (the server's
    own check, ``server.text.clean``)."""
    try:
        return clean(text, "the name", limit=MAX_NAME)
    except BadText as exc:
        raise argparse.ArgumentTypeError(
            f"expected a name of 1..{MAX_NAME} characters: {exc}"
        ) from None


def reason(text: str) -> str:
    """A correction's reason, shown in the log: at most 80 characters, nothing invisible."""
    try:
        return clean(text, "the reason", limit=MAX_NAME, required=False)
    except BadText as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def seating_methods(text: str) -> list[str]:
    """``random,avoid,avoid,top4``: one seating method, or one per session."""
    methods = [m.strip() for m in text.split(",")]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown seating method {unknown[0]!r}: expected {', '.join(METHODS)} "
            "(one, or a comma-separated list: one per session)"
        )
    return methods


def seating_method(text: str) -> str:
    """One seating method."""
    if text not in METHODS:
        raise argparse.ArgumentTypeError(
            f"unknown seating method {text!r}: expected one of {', '.join(METHODS)}"
        )
    return text


def tie_breaks(text: str) -> list[str]:
    """``table_points,score,player``: the tie-break chain, in order."""
    keys = [k.strip() for k in text.split(",")]
    unknown = [k for k in keys if k not in TIE_BREAKS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown tie-break {unknown[0]!r}: expected a comma-separated list of "
            f"{', '.join(TIE_BREAKS)}"
        )
    if len(set(keys)) != len(keys):
        raise argparse.ArgumentTypeError(f"a tie-break is repeated in {text!r}")
    return keys


def amount(text: str) -> Fraction:
    """A signed amount: whole (``-10``), or for table points a fraction (``-1/2``, ``0.5``)."""
    try:
        return Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(
            f"expected a signed number such as -10 or 1/2, got {text!r}"
        ) from None


def _subparser(
    actions: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    help_text: str,
    example: str,
    parents: Sequence[argparse.ArgumentParser] = (),
) -> argparse.ArgumentParser:
    return actions.add_parser(
        name,
        parents=list(parents),
        help=help_text,
        description=help_text[0].upper() + help_text[1:] + ".",
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "tournament",
        help="run a tournament on a server: create, register, seat, start, standings, export",
        description="Run a tournament on a running guobiao server (docs/tournaments.md): the "
        "director's requests over its websocket, the standings and exports from its HTTP "
        f"API. The password of --user comes from {PASSWORD_ENV} or is asked for.",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    server = argparse.ArgumentParser(add_help=False)
    server.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        metavar="URL",
        help=f"the server's websocket, ws://HOST:PORT/ws (default {DEFAULT_SERVER})",
    )
    server.add_argument(
        "--user",
        metavar="NAME",
        help=f"the account to log in as (password: {PASSWORD_ENV}, else asked for)",
    )
    ident = argparse.ArgumentParser(add_help=False)
    ident.add_argument("tournament", type=positive_int, metavar="ID", help="the tournament's id")
    net = [server, ident]
    actions = parser.add_subparsers(dest="tournament_action", metavar="ACTION", required=True)

    _subparser(
        actions,
        "login",
        f"log in once and print the session token, for {TOKEN_ENV} (the next commands resume "
        "it instead of logging in again, which the server's login limits would refuse)",
        f'eval "$(guobiao tournament login --user alice)"   # sets {TOKEN_ENV}',
        [server],
    )
    create = _subparser(
        actions,
        "create",
        "create a tournament (a director's right: see grant); print its id",
        'guobiao tournament create --user td --name "Club night" --sessions 4 --hands 16 '
        "--time-cap 90 --duplicate --seating random,avoid,avoid,top4",
        [server],
    )
    create.add_argument("--name", required=True, type=tournament_name, help="1..80 characters")
    create.add_argument("--rules", metavar="PRESET", help="rule preset (default: the server's)")
    create.add_argument(
        "--sessions", type=_ranged(1, MAX_SESSIONS), help=f"sessions 1..{MAX_SESSIONS} (4)"
    )
    create.add_argument("--hands", type=match_hands, help="hands per session's match 1..16 (16)")
    create.add_argument(
        "--time-cap",
        type=_ranged(0, MAX_TIME_CAP),
        metavar="MINUTES",
        help="a session's time cap: no hand starts after it (0: none, the default)",
    )
    create.add_argument("--turn-seconds", type=positive_int, help="time per decision")
    create.add_argument("--no-aids", action="store_true", help="no playing aids at the tables")
    create.add_argument(
        "--spectator-delay",
        type=_ranged(0, MAX_SPECTATOR_DELAY),
        metavar="SECONDS",
        help="spectators see the tables this late (0)",
    )
    create.add_argument("--private", action="store_true", help="not listed publicly")
    create.add_argument(
        "--registration",
        choices=("open", "director"),
        help="open: players register themselves; director: only the director adds them",
    )
    create.add_argument(
        "--fill",
        choices=("byes", "substitutes"),
        help="a player count not a multiple of four: byes, or substitute seats",
    )
    create.add_argument("--duplicate", action="store_true", help="duplicate: same walls per table")
    create.add_argument(
        "--no-check-in",
        action="store_true",
        help="seat every registered player (default: only those who checked in)",
    )
    create.add_argument(
        "--tie-breaks", type=tie_breaks, metavar="KEYS", help=f"in order, of {','.join(TIE_BREAKS)}"
    )
    create.add_argument(
        "--seating",
        type=seating_methods,
        metavar="METHODS",
        help=f"one method, or one per session, comma-separated: {', '.join(METHODS)}",
    )
    create.add_argument("--json", action="store_true", help="print the new tournament's JSON")

    register = _subparser(
        actions,
        "register",
        "register players (the director), or with no names oneself",
        "guobiao tournament register 3 --user td alice bob carol dave",
        net,
    )
    register.add_argument("names", nargs="*", metavar="NAME", help="accounts to register")
    register.add_argument(
        "--file", metavar="FILE", help="and the names in FILE, one a line ('#' comments)"
    )
    _subparser(
        actions,
        "withdraw",
        "withdraw oneself from a tournament",
        "guobiao tournament withdraw 3 --user alice",
        net,
    )
    _subparser(
        actions,
        "check-in",
        "check in oneself for the next session",
        "guobiao tournament check-in 3 --user alice",
        net,
    )
    registration = _subparser(
        actions,
        "registration",
        "open or close the players' own registration (the director)",
        "guobiao tournament registration 3 closed --user td",
        net,
    )
    registration.add_argument("state", choices=("open", "closed"))
    seat = _subparser(
        actions,
        "seat",
        "seat the next session (again: recomputed) and print its tables",
        "guobiao tournament seat 3 --user td --method avoid",
        net,
    )
    seat.add_argument(
        "--method", type=seating_method, help="this method instead of the settings' one"
    )
    swap = _subparser(
        actions,
        "swap",
        "swap two players of the seated session (or a player and one on a bye)",
        "guobiao tournament swap 3 alice eve --user td",
        net,
    )
    swap.add_argument("a", metavar="PLAYER")
    swap.add_argument("b", metavar="OTHER")
    _subparser(
        actions,
        "start",
        "start the seated session: its tables open and the players are seated",
        "guobiao tournament start 3 --user td",
        net,
    )
    substitute = _subparser(
        actions,
        "substitute",
        "replace a player's seat in the session in play",
        "guobiao tournament substitute 3 dave bot --user td",
        net,
    )
    substitute.add_argument("player", metavar="PLAYER")
    substitute.add_argument("substitute", metavar="SUBSTITUTE", help='an account, or "bot"')
    penalty = _subparser(
        actions,
        "penalty",
        "enter a penalty or correction in the log; print its entry id",
        "guobiao tournament penalty 3 bob -10 --reason 'late for session 2' --session 2 "
        "--user td\n  (a negative fraction goes after --: "
        "... --kind points --reason R -- -1/2)",
        net,
    )
    penalty.add_argument("player", metavar="PLAYER")
    penalty.add_argument("amount", type=amount, metavar="AMOUNT", help="signed: -10, 1/2")
    penalty.add_argument("--reason", required=True, type=reason, help="why (shown in the log)")
    penalty.add_argument(
        "--kind",
        choices=KINDS,
        default="penalty",
        help="penalty: added to the score, the table not re-ranked (default); score: added "
        "to the recorded score, the table re-ranked (needs --session); points: added to the "
        "table points",
    )
    penalty.add_argument("--session", type=positive_int, help="the session (default: overall)")
    undo = _subparser(
        actions,
        "undo",
        "withdraw a log entry (undoing an undo puts its target back)",
        "guobiao tournament undo 3 7 --reason 'entered twice' --user td",
        net,
    )
    undo.add_argument("entry", type=positive_int, metavar="ENTRY", help="the log entry's id")
    undo.add_argument("--reason", required=True, type=reason, help="why (shown in the log)")
    _subparser(
        actions,
        "close",
        "close the tournament: its standings are final",
        "guobiao tournament close 3 --user td",
        net,
    )
    listing = _subparser(
        actions,
        "list",
        "list the public tournaments, newest first",
        "guobiao tournament list --server ws://club.example:8765/ws",
        [server],
    )
    listing.add_argument("--json", action="store_true", help="print the API's JSON")
    show = _subparser(
        actions,
        "show",
        "print a tournament: settings, directors, players, sessions, log",
        "guobiao tournament show 3",
        net,
    )
    show.add_argument("--json", action="store_true", help="print the API's JSON")
    standings = _subparser(
        actions,
        "standings",
        "print the standings: place, player, table points, score, per session",
        "guobiao tournament standings 3 --json",
        net,
    )
    standings.add_argument("--json", action="store_true", help="print the API's JSON")
    export = _subparser(
        actions,
        "export",
        "save the standings as the server exports them (CSV or JSON)",
        "guobiao tournament export 3 --format csv -o club-night.csv",
        net,
    )
    export.add_argument("--format", required=True, choices=("csv", "json"))
    export.add_argument("-o", "--output", metavar="FILE", help="write FILE (default: stdout)")
    grant = _subparser(
        actions,
        "grant",
        "give an account the director role, on the database (the operator)",
        "guobiao tournament grant td            (td may create tournaments)\n"
        "  guobiao tournament grant lin --tournament 3 --revoke",
        [database_options()],
    )
    grant.add_argument("name", metavar="NAME", help="the account")
    grant.add_argument(
        "--tournament",
        type=positive_int,
        metavar="ID",
        help="director of this tournament only (default: may create tournaments)",
    )
    grant.add_argument("--revoke", action="store_true", help="take the role back")
    return parser


# ---------------------------------------------------------------------- run ---


def run(args: argparse.Namespace) -> int:
    action: str = args.tournament_action
    try:
        if action == "grant":
            return _grant(args)
        request = _prepare(args)
        auth: tuple[str, str] | None = None
        if args.user:
            token = os.environ.get(TOKEN_ENV)
            use_token = token and args.tournament_action != "login"
            auth = ("token", token) if use_token else ("password", _password(args))  # type: ignore[assignment]
        return asyncio.run(_main(args, request, auth))
    except UsageError as exc:
        return _fail(str(exc), 2)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except (TournamentCliError, ClientError) as exc:
        return _fail(str(exc))


def _prepare(args: argparse.Namespace) -> dict[str, Any]:
    """The request's fields, from the arguments (``UsageError`` before any connection)."""
    action: str = args.tournament_action
    if action in NEEDS_ACCOUNT and not args.user:
        raise UsageError(f"'{action}' is a request of an account: give --user NAME")
    if action == "create":
        return _settings(args)
    if action == "register":
        names = list(args.names)
        if args.file:
            listed = _names_in(args.file)
            if not listed:
                raise UsageError(f"no names in {args.file} (one a line)")
            names += listed
        if len(set(names)) != len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise UsageError(f"named more than once: {', '.join(twice)}")
        return {"players": names}
    if action == "penalty":
        value: Fraction = args.amount
        if args.kind != "points" and value.denominator != 1:
            raise UsageError(f"a {args.kind} is a whole number of points, got {value}")
        if args.kind == "score" and args.session is None:
            raise UsageError("a score correction needs --session")
        return {
            "player": args.player,
            "kind": args.kind,
            "amount": value.numerator if value.denominator == 1 else str(value),
            "reason": args.reason,
            "session": args.session,
        }
    return {}


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings of ``create`` given on the command line (the server's defaults for the
    others)."""
    settings: dict[str, Any] = {"name": args.name}
    optional = {
        "rules": args.rules,
        "sessions": args.sessions,
        "hands": args.hands,
        "time_cap_minutes": args.time_cap,
        "turn_seconds": args.turn_seconds,
        "spectator_delay_seconds": args.spectator_delay,
        "registration": args.registration,
        "fill": args.fill,
        "tie_breaks": args.tie_breaks,
    }
    settings.update({k: v for k, v in optional.items() if v is not None})
    if args.no_aids:
        settings["aids"] = False
    if args.private:
        settings["public"] = False
    if args.duplicate:
        settings["duplicate"] = True
    if args.no_check_in:
        settings["check_in"] = False
    if args.seating is not None:
        sessions = args.sessions if args.sessions is not None else 4
        if len(args.seating) > sessions:
            raise UsageError(f"--seating names {len(args.seating)} methods for {sessions} sessions")
        settings["seating"] = args.seating[0] if len(args.seating) == 1 else args.seating
    return settings


def _names_in(path: str) -> list[str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the names in {path}: {exc}") from None
    names = [line.strip() for line in text.splitlines()]
    return [n for n in names if n and not n.startswith("#")]


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
        return await _export(args)
    if action == "list":
        _print_list(args, await _http_json(args.server, "/api/tournaments"))
        return 0
    if auth is None:
        assert action in ("show", "standings")
        data = await _http_json(args.server, f"/api/tournaments/{args.tournament}")
        return _print_read(args, data)
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
        _print_json(data)
    else:
        print(f"created tournament {data['id']}: {data['name']}")
        _print_settings(data)
    return 0


async def _register(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    tid: int = args.tournament
    names: list[str] = request["players"]
    if names:
        data = await client.tournament_add_players(tid, names)
        print(f"tournament {tid}: registered {', '.join(names)}")
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
    print(f"tournament {args.tournament}: {args.user} is checked in for session {_next(data)}")
    return 0


async def _registration(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    data = await client.tournament_registration(args.tournament, args.state == "open")
    state = "open" if data.get("registration_open") else "closed"
    print(f"tournament {args.tournament}: registration is {state}")
    return 0


async def _seat(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    data = await client.tournament_seat(args.tournament, args.method)
    view = await _session_view(args, data)
    print(f"tournament {args.tournament}, session {view['number']} seated ({view['method']}):")
    _print_seating(view)
    return 0


async def _swap(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    data = await client.tournament_swap(args.tournament, args.a, args.b)
    view = await _session_view(args, data)
    print(f"tournament {args.tournament}, session {view['number']}: swapped {args.a} and {args.b}")
    _print_seating(view)
    return 0


async def _start(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    data = await client.tournament_start_session(args.tournament)
    view = await _session_view(args, data)
    tables = view.get("tables") or []
    ends = f", ends at {view['ends_at']}" if view.get("ends_at") else ""
    print(
        f"tournament {args.tournament}, session {view['number']} started: "
        f"{len(tables)} table(s){ends}"
    )
    for table in tables:
        players = ", ".join(_occupant(s) for s in table.get("seats", []))
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
    _print_standings(data)
    return 0


async def _read(client: Client, args: argparse.Namespace, request: dict[str, Any]) -> int:
    return _print_read(args, await client.tournament_get(args.tournament))


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


def _print_read(args: argparse.Namespace, data: dict[str, Any]) -> int:
    if args.tournament_action == "standings":
        if args.json:
            _print_json(data.get("standings", []))
        else:
            _print_standings(data)
        return 0
    if args.json:
        _print_json(data)
    else:
        _print_show(data)
    return 0


# --------------------------------------------------------------------- HTTP ---


def http_base(url: str) -> str:
    """The HTTP address of the server whose websocket is ``url``: ``ws://host:port/ws`` ->
    ``http://host:port`` (``wss`` -> ``https``; a path before ``/ws`` is kept)."""
    parts = urlsplit(normalize_url(url))
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    path = parts.path.removesuffix("/").removesuffix("/ws")
    return urlunsplit((scheme, parts.netloc, path, "", ""))


def _http_fetch(url: str) -> bytes:
    """GET ``url`` without any proxy (as the websocket client); ``TournamentCliError`` with
    the server's ``error`` on a refusal."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=HTTP_TIMEOUT) as response:
            body: bytes = response.read()
            return body
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")
        with contextlib.suppress(ValueError, AttributeError):  # not the API's JSON
            detail = str(json.loads(detail).get("error", detail))
        raise TournamentCliError(
            f"{detail.strip() or exc.reason} (HTTP {exc.code}, {url})"
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, OSError) and reason.strerror:
            reason = reason.strerror.lower()
        raise TournamentCliError(
            f"cannot reach {url}: {reason} (is `guobiao serve` running there?)"
        ) from None


async def _http_json(server: str, path: str) -> dict[str, Any]:
    url = http_base(server) + path
    body = await asyncio.to_thread(_http_fetch, url)
    try:
        data = json.loads(body)
    except ValueError:
        raise TournamentCliError(f"{url} answered something that is not JSON") from None
    if not isinstance(data, dict):
        raise TournamentCliError(f"{url} answered {type(data).__name__}, not an object")
    return data


async def _session_view(args: argparse.Namespace, data: dict[str, Any]) -> dict[str, Any]:
    """The HTTP view of the tournament's latest seated session (``data["session"]``)."""
    number = data.get("session")
    if not isinstance(number, int) or number < 1:
        raise TournamentCliError(f"tournament {args.tournament} has no seated session")
    return await _http_json(args.server, f"/api/tournaments/{args.tournament}/sessions/{number}")


async def _export(args: argparse.Namespace) -> int:
    url = f"{http_base(args.server)}/api/tournaments/{args.tournament}/export.{args.format}"
    body = await asyncio.to_thread(_http_fetch, url)
    if args.output is None or args.output == "-":
        sys.stdout.buffer.write(body)
        sys.stdout.flush()
        return 0
    try:
        Path(args.output).write_bytes(body)
    except OSError as exc:
        raise TournamentCliError(f"cannot write {args.output}: {exc}") from None
    print(
        f"tournament {args.tournament}: {args.format.upper()} standings written to "
        f"{args.output} ({len(body):,} bytes)"
    )
    return 0


# -------------------------------------------------------------------- grant ---


def _grant(args: argparse.Namespace) -> int:
    try:
        config = database_config(args)
    except server_config.ConfigError as exc:
        return _fail(str(exc), 2)
    url = config.database_url
    try:
        return asyncio.run(_grant_in(args, url))
    except BadDatabaseURL as exc:
        return _fail(str(exc))
    except (SQLAlchemyError, OSError) as exc:
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        return _fail(f"cannot use the database {display(url)}: {reason}")


async def _grant_in(args: argparse.Namespace, url: str) -> int:
    if await migrate.current(url) != migrate.head():
        return _fail(f"{display(url)} is not migrated: run 'guobiao db upgrade' first")
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
                return _fail(f"no account {args.name!r}: it must be registered first")
            if account[1]:
                return _fail(f"{args.name} is a guest account: guests cannot {what}")
            if args.tournament is not None and await tournaments.get(args.tournament) is None:
                return _fail(f"no tournament {args.tournament}")
        name = account[0] if account is not None else args.name
        changed = await tournaments.grant(name, tournament_id=args.tournament, revoke=args.revoke)
    if args.revoke:
        print(f"{name} may no longer {what}" + ("" if changed else " (nor could before)"))
    else:
        print(f"{name} may now {what}" + ("" if changed else " (could already)"))
    return 0


# ------------------------------------------------------------------ printing ---


def _print_json(data: object) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def _next(data: dict[str, Any]) -> object:
    """The number of the session to come (the API's ``next_session``; else one past the
    last started)."""
    if data.get("next_session") is not None:
        return data["next_session"]
    started = [s["number"] for s in data.get("sessions", []) if s.get("state") != "seated"]
    return max(started, default=0) + 1


def _occupant(seat: dict[str, Any]) -> str:
    player = str(seat.get("player"))
    sub = seat.get("substitute")
    return f"{player} (played by {sub})" if sub else player


def _print_seating(view: dict[str, Any]) -> None:
    tables = view.get("tables") or []
    grid = [[str(t["table"]), *(_occupant(s) for s in t.get("seats", []))] for t in tables]
    _print_grid(["table", *WINDS], grid, "><<<<")
    byes = view.get("byes") or []
    print(f"byes: {', '.join(byes) if byes else 'none'}")
    repeats = view.get("repeats") or []
    if repeats:
        print("repeat opponents:")
        for r in repeats:
            sessions = ", ".join(str(n) for n in r.get("sessions", []))
            print(f"  {' and '.join(r.get('players', []))} (met in session {sessions})")
    else:
        print("no repeat opponents")
    if view.get("message"):
        print(view["message"])


def _print_settings(data: dict[str, Any]) -> None:
    s = data.get("settings") or {}
    cap = s.get("time_cap_minutes")
    seating = s.get("seating")
    methods = ", ".join(seating) if isinstance(seating, list) else str(seating)
    print(
        f"  {s.get('sessions')} session(s) of {s.get('hands')} hand(s), rules {data.get('rules')}"
        f", time cap {f'{cap} min' if cap else 'none'}, turn {s.get('turn_seconds')} s"
        + (", duplicate" if s.get("duplicate") else "")
    )
    print(
        f"  seating {methods}; registration {s.get('registration')}, fill {s.get('fill')}, "
        f"check-in {'on' if s.get('check_in') else 'off'}, "
        f"{'public' if s.get('public') else 'private'}"
    )


def _print_list(args: argparse.Namespace, data: dict[str, Any]) -> None:
    rows = data.get("tournaments") or []
    if args.json:
        _print_json(rows)
        return
    if not rows:
        print("no public tournaments")
        return
    grid = [
        [
            str(t["id"]),
            str(t["name"]),
            str(t["state"]),
            f"{t['session']}/{t['sessions']}",
            str(t["players"]),
            "open" if t.get("registration_open") else "closed",
            str(t.get("rules")) + (", duplicate" if t.get("duplicate") else ""),
        ]
        for t in rows
    ]
    header = ["id", "name", "state", "session", "players", "registration", "rules"]
    _print_grid(header, grid, "><<>><<")


def _print_show(data: dict[str, Any]) -> None:
    print(
        f"tournament {data.get('id')}: {data.get('name')} ({data.get('state')}; registration "
        f"{'open' if data.get('registration_open') else 'closed'})"
    )
    _print_settings(data)
    print(f"  directors: {', '.join(data.get('directors') or []) or 'none'}")
    players = data.get("players") or []
    registered = [p for p in players if p.get("status") == "registered"]
    withdrawn = [p["name"] for p in players if p.get("status") == "withdrawn"]
    names = ", ".join(p["name"] + ("*" if p.get("checked_in") else "") for p in registered)
    print(f"  players ({len(registered)}, * checked in): {names or 'none'}")
    if withdrawn:
        print(f"  withdrawn: {', '.join(withdrawn)}")
    for s in data.get("sessions") or []:
        tables = s.get("tables")
        count = len(tables) if isinstance(tables, list) else tables
        times = ", ".join(
            f"{label} {s[key]}"
            for key, label in (
                ("started_at", "started"),
                ("ends_at", "cap"),
                ("finished_at", "finished"),
            )
            if s.get(key)
        )
        print(
            f"  session {s.get('number')}: {s.get('state')} ({s.get('method')}), "
            f"{count} table(s)" + (f"; {times}" if times else "")
        )
    log = data.get("log") or []
    if log:
        print("  log:")
    for e in log:
        if e.get("kind") == "undo":
            what = f"undo of entry {e.get('of')}"
        else:
            where = f" in session {e['session']}" if e.get("session") else ""
            what = f"{e.get('kind')} {e.get('amount')} for {e.get('player')}{where}"
        gone = "" if e.get("in_force", True) else "  [undone]"
        print(
            f"    {e.get('id')}: {what}: {e.get('reason')} (by {e.get('by')}, {e.get('at')}){gone}"
        )


def _print_standings(data: dict[str, Any]) -> None:
    rows = data.get("standings") or []
    if not rows:
        held = [s["number"] for s in data.get("sessions", []) if s.get("state") == "playing"]
        if held and (data.get("settings") or {}).get("duplicate"):
            print(
                f"no standings yet: duplicate session {held[-1]}'s results are held until "
                "its last table finishes"
            )
        else:
            print("no standings yet: no table has finished its match")
        return
    numbers = sorted({ln["session"] for row in rows for ln in row.get("sessions", [])})
    grid = []
    for row in rows:
        by_session = {ln["session"]: ln for ln in row.get("sessions", [])}
        cells = [str(row["place"]), str(row["player"]), _points(row), f"{row['score']:+d}"]
        for n in numbers:
            ln = by_session.get(n)
            cells.append("-" if ln is None else f"{ln['table_points']} ({ln['score']:+d})")
        grid.append(cells)
    header = ["place", "player", "points", "score", *(f"S{n}" for n in numbers)]
    _print_grid(header, grid, "><>>" + ">" * len(numbers))
    duplicate = data.get("duplicate") or []
    if duplicate:
        print("duplicate (each seat and deal against the others who held it):")
        grid = [
            [str(r["player"]), str(r["deals"]), str(r["difference"]), f"{r['imps']:+d}"]
            for r in duplicate
        ]
        _print_grid(["player", "deals", "difference", "IMPs"], grid, "<>>>")


def _print_grid(header: list[str], rows: list[list[str]], align: str) -> None:
    """Columns as wide as their widest cell, two spaces apart, aligned by ``align`` (one
    ``<`` or ``>`` a column)."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for cells in [header, *rows]:
        line = "  ".join(f"{c:{a}{w}}" for c, a, w in zip(cells, align, widths, strict=True))
        print(line.rstrip())


def _points(row: dict[str, Any]) -> str:
    """Exact table points, with the decimal beside a fraction: ``7/3 (2.33)``."""
    text = str(row["table_points"])
    if "/" in text and isinstance(row.get("table_points_decimal"), int | float):
        return f"{text} ({row['table_points_decimal']:.2f})"
    return text


def _fail(message: str, status: int = 1) -> int:
    print(f"guobiao tournament: {message}", file=sys.stderr)
    return status

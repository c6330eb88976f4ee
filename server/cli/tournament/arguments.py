"""The arguments of ``guobiao tournament``: the subcommands and their options, each
argument's type (checked before anything is contacted: a typo fails at once, exit status
2), and the request each subcommand's arguments make (``prepare``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from server import config as server_config
from server.cli.args import database_options, match_hands, positive_int
from server.text import BadText, clean
from server.tournaments.scoring import TIE_BREAKS
from server.tournaments.seating import METHODS

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
    except BadText as exc:  # (it says the range: "the name has 81 characters; at most 80")
        raise argparse.ArgumentTypeError(str(exc)) from None


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


def prepare(args: argparse.Namespace) -> dict[str, Any]:
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

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

from server.cli.tournament.arguments import add_parser
from server.cli.tournament.commands import run
from server.cli.tournament.http_api import http_base

__all__ = ["add_parser", "http_base", "run"]

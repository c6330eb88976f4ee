"""The ``guobiao`` command line: ``guobiao COMMAND [ARGS...]``, one module per command
(``serve``, ``fan``, ``simulate``, ``duel``, ``replay``, ``db``, ``ladder``, ``tournament``,
``cluster``, ``bot``, ``loadtest``, ``verify``; ``args`` holds the argument types they
share)."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Protocol

from server import VERSION


class Command(Protocol):
    """What a command module provides."""

    def add_parser(
        self, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]
    ) -> argparse.ArgumentParser:
        """Add the command's sub-parser to ``subparsers`` and return it."""
        ...

    def run(self, args: argparse.Namespace) -> int:
        """Carry out the command; return the process exit status."""
        ...


# The commands, in the order ``--help`` lists them, and their modules: imported only when
# needed (``guobiao fan`` need not load the server's database and websocket stack, which took
# most of a short batch's time). Add a command by adding its module here.
COMMAND_MODULES: dict[str, str] = {
    "serve": "server.cli.serve",
    "fan": "server.cli.fan",
    "simulate": "server.cli.simulate",
    "duel": "server.cli.duel",
    "replay": "server.cli.replay",
    "review": "server.cli.review",
    "db": "server.cli.db",
    "ladder": "server.cli.ladder",
    "tournament": "server.cli.tournament",
    "cluster": "server.cli.cluster",
    "bot": "server.cli.bot",
    "loadtest": "server.cli.loadtest",
    "verify": "server.cli.verify",
}


def _command(name: str) -> Command:
    module: Command = importlib.import_module(COMMAND_MODULES[name])
    return module


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; ``only``: with just that command's sub-parser (what
    ``main`` builds when the command is named, so only its module is imported)."""
    parser = argparse.ArgumentParser(
        prog="guobiao", description="Chinese Official Mahjong (MCR) server and tools."
    )
    parser.add_argument("--version", action="version", version=version_line())
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in [only] if only in COMMAND_MODULES else COMMAND_MODULES:
        command = _command(name)
        command.add_parser(subparsers).set_defaults(run=command.run)
    return parser


def child_command(*args: str) -> list[str]:
    """The command line of a ``guobiao ARGS...`` child process (``serve --workers``' workers,
    ``loadtest --processes``' parts): this Python, ``-m server``, with ``-P`` so that the
    working directory is not put on the child's path. Without it a source checkout there
    (where the README's install is run) shadowed the installed package, which has what the
    checkout lacks (``server.config_files``), and every child failed to start."""
    return [sys.executable, "-P", "-m", "server", *args]


def version_line() -> str:
    """``guobiao VERSION``, as the server's ``welcome`` says it."""
    return f"guobiao {VERSION}"


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: ``sys.argv[1:]``), run the command, return its exit status."""
    words = sys.argv[1:] if argv is None else argv
    if words == ["--version"]:  # (said without importing every command for the parser)
        print(version_line())
        return 0
    try:
        args = build_parser(words[0] if words else None).parse_args(words)
        status: int = args.run(args)
    except BrokenPipeError:  # the reader went away (``guobiao ... | head``): not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:  # Ctrl+C before the command took it over (while importing):
        print(file=sys.stderr)  # a new line after the terminal's ^C, and no traceback
        return 130  # (128 + SIGINT, as a shell reports a command it interrupted)
    return status

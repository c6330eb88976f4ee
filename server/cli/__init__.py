"""The ``guobiao`` command line: ``guobiao COMMAND [ARGS...]``, one module per command
(``serve``, ``fan``, ``simulate``, ``replay``, ``db``, ``ladder``, ``tournament``, ``bot``,
``loadtest``, ``verify``; ``args`` holds the argument types they share)."""

from __future__ import annotations

import argparse
import sys
from typing import Protocol

from server.cli import bot as bot_cli
from server.cli import cluster as cluster_cli
from server.cli import db as db_cli
from server.cli import fan as fan_cli
from server.cli import ladder as ladder_cli
from server.cli import loadtest as loadtest_cli
from server.cli import replay as replay_cli
from server.cli import serve as serve_cli
from server.cli import simulate as simulate_cli
from server.cli import tournament as tournament_cli
from server.cli import verify as verify_cli


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


def _commands(*modules: Command) -> tuple[Command, ...]:
    """The command modules, each checked (by mypy) to provide ``Command``."""
    return modules


# The commands, in the order ``--help`` lists them. Add a command by adding its module here.
COMMANDS: tuple[Command, ...] = _commands(
    serve_cli,
    fan_cli,
    simulate_cli,
    replay_cli,
    db_cli,
    ladder_cli,
    tournament_cli,
    cluster_cli,
    bot_cli,
    loadtest_cli,
    verify_cli,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="guobiao", description="Chinese Official Mahjong (MCR) server and tools."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.add_parser(subparsers).set_defaults(run=command.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: ``sys.argv[1:]``), run the command, return its exit status."""
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except BrokenPipeError:  # the reader went away (``guobiao ... | head``): not an error
        sys.stderr.close()
        return 0
    return status

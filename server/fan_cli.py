"""``guobiao fan``: score a winning hand given in hand notation.

Placeholder until the fan calculator lands.
"""

from __future__ import annotations

import argparse
import sys


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("fan", help="score a winning hand (not implemented yet)")
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return parser


def run(args: argparse.Namespace) -> int:
    print("guobiao fan: not implemented yet", file=sys.stderr)
    return 1

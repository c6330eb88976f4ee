"""Arguments shared by the ``guobiao`` commands: types that refuse nonsense with a clear
message, the options naming the server's database (``database_options``, read by
``database_config``), and those of the matches bots play (``match_options``)."""

from __future__ import annotations

import argparse
import math

from engine.match import MATCH_HANDS
from server import config as server_config


def database_options() -> argparse.ArgumentParser:
    """A parent parser of the options that name the server's database, as ``guobiao serve``
    finds it: ``--config``, ``--database-url``, ``--data-dir``."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", metavar="FILE", help="server configuration file (TOML)")
    common.add_argument(
        "--database-url",
        metavar="URL",
        help="SQLAlchemy URL, e.g. postgresql+asyncpg://user:pw@host/db (wins over the "
        "configuration and GUOBIAO_DATABASE_URL)",
    )
    common.add_argument("--data-dir", metavar="DIR", help="folder of the default SQLite database")
    return common


def database_config(args: argparse.Namespace) -> server_config.Config:
    """The configuration with ``database_options``' flags applied (``ConfigError``)."""
    overrides: dict[str, dict[str, object]] = {}
    if args.database_url:
        overrides["database"] = {"url": args.database_url}
    if args.data_dir:
        overrides["server"] = {"data_dir": args.data_dir}
    return server_config.load(args.config, overrides=overrides)


# The largest whole number the database holds (SQLite's INTEGER, PostgreSQL's BIGINT): an id
# or a count past it would fail in the driver ("Python int too large to convert").
DATABASE_INT_MAX = 2**63 - 1


def whole_number(text: str, low: int, high: int = DATABASE_INT_MAX) -> int:
    """``text`` as a whole number ``low..high``, else ``ArgumentTypeError`` saying which."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least {low}, got {text!r}")
    if value > high:
        raise argparse.ArgumentTypeError(f"expected a whole number of at most {high}, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """A whole number of at least 1 (and at most ``DATABASE_INT_MAX``: an id, a count)."""
    return whole_number(text, 1)


def non_negative_int(text: str) -> int:
    """A whole number of at least 0 (and at most ``DATABASE_INT_MAX``: an offset)."""
    return whole_number(text, 0)


def match_hands(text: str) -> int:
    """A match's length in deals, 1..16 (``engine.match.MATCH_HANDS``)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MATCH_HANDS:
        raise argparse.ArgumentTypeError(f"expected a whole number 1..{MATCH_HANDS}, got {text!r}")
    return value


def positive_seconds(text: str) -> float:
    """A positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def match_options(parser: argparse.ArgumentParser) -> None:
    """``--hands``, ``--rules`` and ``--rules-file``: the matches that ``guobiao simulate``
    and ``guobiao duel`` play."""
    parser.add_argument(
        "--hands",
        type=match_hands,
        default=MATCH_HANDS,
        help=f"each match's length in deals, 1..{MATCH_HANDS} (default {MATCH_HANDS}; 4 is "
        "the East round only)",
    )
    parser.add_argument(
        "--rules",
        default="mcr",
        metavar="PRESET",
        help="rule preset of config/rules.toml: mcr (default), custom, custom-flowers, ...",
    )
    parser.add_argument(
        "--rules-file", default=None, metavar="FILE", help="read presets from FILE instead"
    )

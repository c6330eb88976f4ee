"""Server configuration: ``config/default.toml``, then a file, environment variables, flags.

Every value is checked on load; a bad one is reported with where it came from
(``config/site.toml: [timers] turn_seconds must be between 1 and 3600, got 0``). A file's
value must be of its setting's TOML type (``config/site.toml: [server] port must be a whole
number, not the text "8824" (without the quotes: port = 8824)``); only the environment's,
text, are read as their types, and one that does not read is reported with its variable as
set (``GUOBIAO_SERVER_PORT=abc: [server] port must be a whole number, e.g.
GUOBIAO_SERVER_PORT=8765``).
"""

from __future__ import annotations

import contextlib
import difflib
import importlib.util
import json
import math
import os
import shlex
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.bots import LEVELS, STRONGEST
from engine.rules import RuleSet
from server.ladder.rating import RatingParams
from server.presets import CONFIG_FILES, PresetError, load_presets, preset_claim_windows
from server.text import describe, refused_character

if TYPE_CHECKING:
    from server.ladder.seasons import SeasonPolicy

DEFAULT_FILE = CONFIG_FILES / "default.toml"


class ConfigError(ValueError):
    """A configuration value that is missing, unknown or out of range."""


@dataclass(frozen=True, slots=True)
class ServerSection:
    host: str = "127.0.0.1"
    port: int = 8765
    data_dir: str = "data"
    log_level: str = "info"
    log_format: str = "auto"  # json, text, or auto: sentences at a terminal, else json
    node: str = ""  # this server's name in its metrics; "": hostname:port
    # Origins (a browser's ``Origin`` header) that may open a websocket, besides the server's
    # own and loopback's (server/origins.py), comma-separated; "*": any.
    allowed_origins: str = ""
    test_pages: bool = False  # serve the web client's in-page tests (/test/, web/test/)
    # Each update a player's action caused carries ``input_at``, when the server read that
    # action (its monotonic clock): for ``guobiao loadtest`` on the same machine only
    # (docs/performance.md); it tells every viewer when the last answer came in.
    stamp_updates: bool = False
    # Listen with SO_REUSEPORT: other processes that do may listen on the same port, and the
    # kernel spreads the connections among them. ``serve --workers`` sets it for its workers;
    # a server started alone keeps its port to itself ("address already in use" for another).
    share_port: bool = False
    # A private folder of Unix sockets through which the workers of one machine hand each
    # other connections (a player joining a table another worker runs moves to it, rather
    # than have her every message relayed: server/handoff.py). ``serve --workers`` makes one
    # and sets it for its workers; "" (a server alone, any other node): none.
    handoff_dir: str = ""


@dataclass(frozen=True, slots=True)
class DatabaseSection:
    url: str = ""


@dataclass(frozen=True, slots=True)
class TimersSection:
    turn_seconds: int = 15
    min_turn_seconds: int = 3
    max_turn_seconds: int = 120
    disconnected_seconds: float = 1.0
    hand_pause_seconds: float = 1.0
    # Between hands a table waits besides, at most this long, for the players whose client
    # shows them the hand's result (protocol version 3) to say they have read it (0: never).
    result_seconds: float = 30.0
    unattended_move_seconds: float = 0.5
    restart_grace_seconds: float = 30.0
    # After every discard and added kong a table with a person seated waits at least this long
    # before it goes on, whether or not anyone may claim (docs/protocol.md, "The claim window").
    claim_window_ms: int = 1000
    # A table a player created that waits this long with no person at it is closed (0: never).
    empty_table_seconds: float = 30.0


@dataclass(frozen=True, slots=True)
class LimitsSection:
    max_message_bytes: int = 4096
    messages_per_second: int = 20
    message_burst: int = 40
    send_queue: int = 256
    # Bytes queued for a slow client before it is disconnected, whatever their count: a
    # client that asks for big answers (a listing of many tables) and reads none would
    # otherwise have ``send_queue`` of them held for it.
    send_queue_bytes: int = 4 << 20
    # The listings of the tables a connection may be sent on request (``list_tables``,
    # ``subscribe_lobby`` either way), in bytes a second, in bursts of eight seconds' worth:
    # at a thousand public tables one is 400 KiB, which the message limit alone let a
    # visitor have twenty times a second. Beyond it such a request is refused alone.
    listing_bytes_per_second: int = 262144
    max_tables: int = 1000
    max_connections: int = 5000
    # Websocket connections from one client address at once (0: no limit): so that one
    # address cannot fill ``max_connections`` and keep everyone else out. Behind a reverse
    # proxy every client has the proxy's address: 0 there, and limit at the proxy.
    connections_per_address: int = 256
    # Of max_tables, the share only the ladder queue and tournament sessions may fill.
    reserved_share: float = 0.1
    # Tables waiting for players (not started) that one account, one client address, may
    # have created at once (0: no limit).
    waiting_tables_per_account: int = 2
    waiting_tables_per_address: int = 8

    @property
    def casual_tables(self) -> int:
        """How many tables the server holds before ``create_table`` is refused: ``max_tables``
        less the reserve of the queue's and tournaments' tables."""
        return self.max_tables - math.floor(self.max_tables * self.reserved_share)


@dataclass(frozen=True, slots=True)
class RulesSection:
    preset: str = "mcr"
    file: str = ""  # rule presets; empty: config/rules.toml


@dataclass(frozen=True, slots=True)
class AccountsSection:
    session_days: int = 30
    guest_session_days: int = 3
    # Limits on account requests (server/limits.py), per client address unless named so.
    login_per_minute: float = 30.0
    login_burst: int = 10
    account_login_per_minute: float = 10.0
    account_login_burst: int = 10
    login_backoff_after: int = 5
    login_backoff_seconds: float = 1.0
    login_backoff_max_seconds: float = 300.0
    register_per_hour: float = 30.0
    register_burst: int = 10
    guest_per_hour: float = 120.0
    guest_burst: int = 30
    hash_workers: int = 1
    hash_queue: int = 16
    purge_minutes: float = 60.0


_MODEL = RatingParams()


@dataclass(frozen=True, slots=True)
class LadderSection:
    """The ranking ladder (docs/ladder.md)."""

    ladders: str = ""  # rule presets with a ladder, comma-separated; "": [rules] preset
    provisional_matches: int = 10
    season_days: int = 0
    # The rating model of a new season: RatingParams' own defaults.
    mu: float = _MODEL.mu
    sigma: float = _MODEL.sigma
    beta: float = _MODEL.beta
    tau: float = _MODEL.tau
    reset_keep: float = _MODEL.reset_keep
    reset_sigma: float = _MODEL.reset_sigma
    same_four_per_day: int = 3


@dataclass(frozen=True, slots=True)
class MatchmakingSection:
    """The ladder queue (docs/ladder.md, "Matchmaking")."""

    gap_start: float = 3.0
    gap_step: float = 1.0
    step_seconds: float = 10.0
    gap_max: float = 50.0
    pass_seconds: float = 1.0
    turn_seconds: int = 15
    hands: int = 16
    casual_bot_seconds: float = 30.0


@dataclass(frozen=True, slots=True)
class BotsSection:
    """The level (``engine.bots.LEVELS``) of the bots the server chooses itself
    (docs/protocol.md, "Bots"): who plays an absent or timed-out person's seat
    (``server.table.core.stand_in_level``), and who fills the casual queue's tables."""

    # At a rated or a tournament table (where results move ratings and standings): the
    # strongest, so leaving never hands the others easy points.
    stand_in: str = STRONGEST
    casual_stand_in: str = "normal"  # at any other table
    queue_fill: str = "normal"  # the casual queue's bots, unless the player chose a level


@dataclass(frozen=True, slots=True)
class TournamentsSection:
    """Tournaments (docs/tournaments.md)."""

    # Accounts that may create tournaments (and direct those they create), comma-separated,
    # besides those granted the role with ``guobiao tournament grant``.
    directors: str = ""

    @property
    def director_list(self) -> tuple[str, ...]:
        """The directors' names as written."""
        return tuple(n.strip() for n in self.directors.split(",") if n.strip())

    @property
    def director_names(self) -> frozenset[str]:
        """The directors' names, lowercase (names are unique whatever their case)."""
        return frozenset(n.lower() for n in self.director_list)


@dataclass(frozen=True, slots=True)
class ClusterSection:
    """Several nodes on one PostgreSQL and Redis (docs/deployment.md). Off by default."""

    redis_url: str = ""  # "": one process, no cluster
    lease_seconds: float = 3.0  # a table's lease and a node's presence; renewed every third
    prefix: str = "guobiao"  # of every Redis key and channel (several clusters on one Redis)


@dataclass(frozen=True, slots=True)
class MetricsSection:
    """Where ``GET /metrics`` is served (docs/deployment.md, "Metrics")."""

    listen: str = ""  # "HOST:PORT": also served there; "": only on the game port
    game_port: bool = False  # served on the game port too (they tell secrets: config/default.toml)

    @property
    def address(self) -> tuple[str, int] | None:
        """``listen`` as (host, port), None when empty; checked at load (``load``)."""
        if not self.listen:
            return None
        host, _, port = self.listen.rpartition(":")
        return host.removeprefix("[").removesuffix("]"), int(port)


@dataclass(frozen=True, slots=True)
class ReviewSection:
    """Reviews of finished matches (``GET /api/matches/{id}/review``, server/review.py)."""

    workers: int = 1  # processes that compute reviews, started at the first one asked for
    cache: int = 256  # reviews kept in memory, by (match, player), the least recent dropped
    waiting: int = 8  # reviews waiting for a worker at most; one more is refused (503)
    # Reviews computed per client address (a cached one costs nothing).
    per_minute: float = 6.0
    burst: int = 3


@dataclass(frozen=True, slots=True)
class Config:
    server: ServerSection = ServerSection()
    database: DatabaseSection = DatabaseSection()
    timers: TimersSection = TimersSection()
    limits: LimitsSection = LimitsSection()
    rules: RulesSection = RulesSection()
    accounts: AccountsSection = AccountsSection()
    ladder: LadderSection = LadderSection()
    matchmaking: MatchmakingSection = MatchmakingSection()
    bots: BotsSection = BotsSection()
    tournaments: TournamentsSection = TournamentsSection()
    cluster: ClusterSection = ClusterSection()
    metrics: MetricsSection = MetricsSection()
    review: ReviewSection = ReviewSection()

    @property
    def clustered(self) -> bool:
        """Whether this server is a node of a cluster (``[cluster] redis_url`` set)."""
        return bool(self.cluster.redis_url)

    def check_cluster_database(self) -> None:
        """``ConfigError`` if this is a cluster node on SQLite, or without the cluster extra
        installed (``guobiao serve`` asks; the admin commands, which need no database, ask
        ``check_cluster_client``)."""
        if self.clustered and self.database_url.startswith("sqlite"):
            raise ConfigError(
                "[cluster] redis_url is set but the database is SQLite: the nodes of a cluster "
                "share one PostgreSQL database ([database] url, GUOBIAO_DATABASE_URL)"
            )
        self.check_cluster_client()

    def check_cluster_client(self) -> None:
        """``ConfigError`` if this is a cluster node and the Redis client is not installed
        (the ``cluster`` extra)."""
        if self.clustered and importlib.util.find_spec("redis") is None:
            raise ConfigError(
                "[cluster] redis_url is set but the Redis client is not installed: install "
                "the cluster extra (pip install '.[cluster]' in guobiao's folder; "
                "docs/deployment.md)"
            )

    def check_cluster_node(self) -> None:
        """``ConfigError`` if this is a cluster node with neither a name nor a port: its
        default name, ``hostname:port``, is its identity among the nodes from before it
        listens, so port 0 (any free one) leaves it none (``guobiao serve`` asks)."""
        if self.clustered and not self.server.node and not self.server.port:
            raise ConfigError(
                "[cluster] redis_url is set, [server] node is empty and [server] port is 0: "
                "a cluster node is named by [server] node (--node), or by default "
                "hostname:port, which needs a fixed port"
            )

    def check_handoff_dir(self) -> None:
        """``ConfigError`` if ``[server] handoff_dir`` is set but is not a folder this user
        owns that no one else may enter: whoever can reach the workers' sockets can hand
        them a connection as any player (``guobiao serve`` asks)."""
        folder = self.server.handoff_dir
        if not folder:
            return
        try:
            st = os.stat(folder)
        except OSError as exc:
            raise ConfigError(f"[server] handoff_dir {folder!r}: {exc.strerror}") from exc
        if not stat.S_ISDIR(st.st_mode):
            raise ConfigError(f"[server] handoff_dir {folder!r} is not a folder")
        if st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise ConfigError(
                f"[server] handoff_dir {folder!r} must be this user's own with mode 0700 (it is "
                f"{stat.S_IMODE(st.st_mode):o}, owner {st.st_uid}): other users could hand the "
                "server connections as any player (`serve --workers` makes one: leave it empty)"
            )

    @property
    def database_url(self) -> str:
        """The SQLAlchemy URL: the configured one, or SQLite in the data folder."""
        if self.database.url:
            return self.database.url
        path = Path(self.server.data_dir).resolve() / "guobiao.db"
        return f"sqlite+aiosqlite:///{path}"

    def rule_presets(self) -> dict[str, RuleSet]:
        """The rule presets tables choose from (``[rules] file``, or config/rules.toml)."""
        try:
            return load_presets(self.rules.file or None)
        except PresetError as exc:
            raise ConfigError(f"[rules] file: {exc}") from None

    @property
    def ladder_names(self) -> tuple[str, ...]:
        """The rule presets with a ladder: ``[ladder] ladders``, by default the server's
        preset; ``"none"``: no ladder at all."""
        text = self.ladder.ladders.strip()
        if not text:
            return (self.rules.preset,)
        if text == "none":
            return ()
        return tuple(n.strip() for n in text.split(",") if n.strip())

    def season_policy(self) -> SeasonPolicy:
        """The ladders as the store runs them (``[ladder]``)."""
        # (Imported here: the ladder's modules bring the database's, which a command that
        # only reads the configuration, ``guobiao simulate`` say, need not load.)
        from server.ladder.seasons import SeasonPolicy  # noqa: PLC0415

        ladder = self.ladder
        return SeasonPolicy(
            ladders=self.ladder_names,
            params=RatingParams(
                mu=ladder.mu,
                sigma=ladder.sigma,
                beta=ladder.beta,
                tau=ladder.tau,
                reset_keep=ladder.reset_keep,
                reset_sigma=ladder.reset_sigma,
            ),
            season_days=ladder.season_days,
            provisional_matches=ladder.provisional_matches,
            same_four_per_day=ladder.same_four_per_day,
        )

    def claim_windows(self) -> dict[str, int]:
        """The presets that set their own ``claim_window_ms``, else ``[timers]``'s applies."""
        try:
            return preset_claim_windows(self.rules.file or None)
        except PresetError as exc:
            raise ConfigError(f"[rules] file: {exc}") from None


# Checks beyond the type: (minimum, maximum) for numbers, allowed values for strings.
_RANGES: dict[tuple[str, str], tuple[float, float]] = {
    ("server", "port"): (0, 65535),
    ("timers", "turn_seconds"): (1, 3600),
    ("timers", "min_turn_seconds"): (1, 3600),
    ("timers", "max_turn_seconds"): (1, 3600),
    ("timers", "disconnected_seconds"): (0, 600),
    ("timers", "hand_pause_seconds"): (0, 60),
    ("timers", "result_seconds"): (0, 600),
    ("timers", "unattended_move_seconds"): (0, 60),
    ("timers", "restart_grace_seconds"): (0, 3600),
    ("timers", "claim_window_ms"): (0, 10000),
    ("timers", "empty_table_seconds"): (0, 86400),
    ("limits", "max_message_bytes"): (256, 1 << 20),
    ("limits", "messages_per_second"): (1, 10000),
    ("limits", "message_burst"): (1, 100000),
    ("limits", "send_queue"): (8, 100000),
    ("limits", "send_queue_bytes"): (4096, 1 << 30),
    ("limits", "listing_bytes_per_second"): (64, 1 << 30),
    ("limits", "max_tables"): (1, 1000000),
    ("limits", "max_connections"): (1, 1000000),
    ("limits", "connections_per_address"): (0, 1000000),
    ("limits", "reserved_share"): (0, 0.9),
    ("limits", "waiting_tables_per_account"): (0, 1000000),
    ("limits", "waiting_tables_per_address"): (0, 1000000),
    ("accounts", "session_days"): (1, 3650),
    ("accounts", "guest_session_days"): (1, 3650),
    ("accounts", "login_per_minute"): (0.01, 100000),
    ("accounts", "login_burst"): (1, 100000),
    ("accounts", "account_login_per_minute"): (0.01, 100000),
    ("accounts", "account_login_burst"): (1, 100000),
    ("accounts", "login_backoff_after"): (0, 1000),
    ("accounts", "login_backoff_seconds"): (0.001, 3600),
    ("accounts", "login_backoff_max_seconds"): (0.001, 86400),
    ("accounts", "register_per_hour"): (0.01, 1000000),
    ("accounts", "register_burst"): (1, 100000),
    ("accounts", "guest_per_hour"): (0.01, 1000000),
    ("accounts", "guest_burst"): (1, 100000),
    ("accounts", "hash_workers"): (1, 256),
    ("accounts", "hash_queue"): (0, 100000),
    ("accounts", "purge_minutes"): (0.1, 10080),
    ("ladder", "provisional_matches"): (0, 1000),
    ("ladder", "season_days"): (0, 3650),
    ("ladder", "mu"): (-1e6, 1e6),
    ("ladder", "sigma"): (0.001, 1e6),
    ("ladder", "beta"): (0.001, 1e6),
    ("ladder", "tau"): (0, 1e6),
    ("ladder", "reset_keep"): (0, 1),
    ("ladder", "reset_sigma"): (0, 1e6),
    ("ladder", "same_four_per_day"): (0, 1000),
    ("matchmaking", "gap_start"): (0, 1e6),
    ("matchmaking", "gap_step"): (0, 1e6),
    ("matchmaking", "step_seconds"): (0.1, 86400),
    ("matchmaking", "gap_max"): (0, 1e6),
    ("matchmaking", "pass_seconds"): (0.05, 60),
    ("matchmaking", "turn_seconds"): (1, 3600),
    ("matchmaking", "hands"): (1, 16),
    ("matchmaking", "casual_bot_seconds"): (0, 86400),
    ("cluster", "lease_seconds"): (0.3, 600),
    ("review", "workers"): (1, 64),
    ("review", "cache"): (0, 1000000),
    ("review", "waiting"): (1, 100000),
    ("review", "per_minute"): (0.01, 100000),
    ("review", "burst"): (1, 100000),
}
_CHOICES: dict[tuple[str, str], tuple[str, ...]] = {
    ("server", "log_level"): ("debug", "info", "warning", "error"),
    ("server", "log_format"): ("auto", "json", "text", "human"),
    ("bots", "stand_in"): LEVELS,
    ("bots", "casual_stand_in"): LEVELS,
    ("bots", "queue_fill"): LEVELS,
}


_KIND = {int: "a whole number", float: "a number", str: "text in quotes", bool: "true or false"}
# A boolean in the environment (a TOML file has true and false).
_BOOLS = {"true": True, "yes": True, "on": True, "1": True}
_BOOLS |= {"false": False, "no": False, "off": False, "0": False}


def number(value: float) -> str:
    """A number as one writes it in a file: 1048576 (not ``:g``'s 1.04858e+06), 0.9."""
    if isinstance(value, int) or (math.isfinite(value) and value.is_integer()):
        return str(int(value))
    return repr(value)


def _toml_value(value: object) -> str:
    """A value as TOML read it, its type first: ``the text "8824"``, ``the whole number 1``,
    ``the number 3.5``, ``the boolean true``, ``a list``, ``a table``, ``the date ...``."""
    if isinstance(value, str):
        return f"the text {json.dumps(value, ensure_ascii=False)}"
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, int):
        return f"the whole number {value}"
    if isinstance(value, float):
        return f"the number {value!r}"  # (3.0 as 3.0: a whole number written as a number)
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return f"the date {value}"  # (tomllib's other types: a date, a time, both)


def _typed(
    key: str, value: Any, expected: type, label: str, *, text: bool, example: str = ""
) -> Any:
    """``value`` as ``expected``, or ``ConfigError``. A file (and the command line) must give
    the type itself: ``port = "8824"`` is refused, a quoted number being text, but an int is
    taken where a float is expected (TOML writes 2.0 as ``2``). The environment (``text``)
    gives only text, read as the type; one that does not read so is refused with an
    ``example`` of a variable that does (``GUOBIAO_SERVER_PORT=8765``)."""
    if text and isinstance(value, str):
        word = value.strip()
        if expected is str:
            return value
        if expected is bool and word.lower() in _BOOLS:
            return _BOOLS[word.lower()]
        if expected is not bool:
            with contextlib.suppress(ValueError):
                return expected(word)
        kind = _KIND[expected] + (" (or yes or no, on or off, 1 or 0)" if expected is bool else "")
        raise ConfigError(f"{label} must be {kind}, e.g. {example}")
    if expected is float and type(value) is int:
        return float(value)
    if type(value) is expected:
        return value
    unquoted = _unquoted(value, expected) if isinstance(value, str) else None
    hint = f" (without the quotes: {key} = {unquoted})" if unquoted is not None else ""
    raise ConfigError(f"{label} must be {_KIND[expected]}, not {_toml_value(value)}{hint}")


def _unquoted(value: str, expected: type) -> str | None:
    """How text that reads as a value of ``expected`` is written as one in TOML
    (``"8824"``: ``8824``; ``" true"``: ``true``); None if it does not read so."""
    written = value.strip()
    if not written or any(c in written for c in "\n\r#="):
        return None
    try:
        read = tomllib.loads(f"v = {written}")["v"]
    except tomllib.TOMLDecodeError:
        return None
    if type(read) is expected or (expected is float and type(read) is int):
        return written
    return None


def _coerce(
    section: str, key: str, value: Any, expected: type, where: str, *, text: bool, before: Any
) -> Any:
    """``value`` for ``[section] key`` from ``where``, checked: its type (``_typed``), its
    range, its choices; else ``ConfigError`` saying where it came from, the setting, what
    was wrong and how to write it. The environment's (``text``) is named by the variable as
    it was set (``GUOBIAO_SERVER_PORT=abc: [server] port must be ...``): the name the
    operator wrote, with the value, not repeated after; ``before``, the setting's value
    without it, is the example of one that reads."""
    if text:
        name = variable(section, key)
        label = f"{_assignment(name, value)}: [{section}] {key}"
        example = _assignment(name, _as_text(before))
    else:
        label, example = f"{where}: [{section}] {key}", ""
    value = _typed(key, value, expected, label, text=text, example=example)
    got = "" if text else f", got {value!r}"
    if (section, key) in _RANGES:
        low, high = _RANGES[(section, key)]
        assert isinstance(value, (int, float))  # the ranged keys are numbers (checked above)
        if not low <= value <= high:
            raise ConfigError(f"{label} must be between {number(low)} and {number(high)}{got}")
    if (section, key) in _CHOICES and value not in _CHOICES[(section, key)]:
        choices = ", ".join(_CHOICES[(section, key)])
        raise ConfigError(f"{label} must be one of {choices}{got}")
    return value


def _assignment(name: str, value: str) -> str:
    """``name=value`` as a shell sets it (``GUOBIAO_SERVER_PORT=abc``; ``=''`` for nothing,
    ``='a b'``); a value with a character that does not print as Python writes it
    (``'\\x1b[31m'``: shown, not sent to the terminal)."""
    shown = shlex.quote(value) if value.isprintable() else repr(value)
    return f"{name}={shown}"


def _as_text(value: object) -> str:
    """A setting's value as a variable gives it: ``true``, ``8765``, ``0.5``, the text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return number(value)
    return str(value)


def _types(section_cls: type) -> dict[str, type]:
    defaults = section_cls()
    return {f.name: type(getattr(defaults, f.name)) for f in fields(section_cls)}


def _apply(config: Config, data: dict[str, Any], where: str, *, text: bool = False) -> Config:
    """``config`` with the settings of ``data`` (from ``where``), each checked; ``text``:
    the values are text to read as their types (the environment's)."""
    sections = {f.name: f for f in fields(Config)}
    for section, values in data.items():
        if section not in sections:
            known = ", ".join(sections)
            if not isinstance(values, dict):  # ``port = 8765`` above every [section]
                owners = [s for s in sections if section in _types(type(getattr(config, s)))]
                home = f" (it belongs in [{owners[0]}])" if owners else ""
                raise ConfigError(
                    f"{where}: {section} = ... is outside any [section]{home}; every setting "
                    f"goes in its section: {known}"
                )
            raise ConfigError(f"{where}: unknown section [{section}]; known: {known}")
        if not isinstance(values, dict):
            raise ConfigError(f"{where}: [{section}] must be a table of keys")
        current = getattr(config, section)
        types = _types(type(current))
        changes = {}
        for key, value in values.items():
            if key not in types:
                raise ConfigError(
                    f"{where}: unknown key [{section}] {key}; known: {', '.join(types)}"
                )
            before = getattr(current, key)
            changes[key] = _coerce(section, key, value, types[key], where, text=text, before=before)
        config = replace(config, **{section: replace(current, **changes)})
    return config


def load(
    path: str | Path | None = None,
    environ: dict[str, str] | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
) -> Config:
    """The defaults, then ``path`` (TOML), then ``GUOBIAO_*`` variables, then ``overrides``."""
    config = Config()
    for source in (DEFAULT_FILE, Path(path) if path else None):
        if source is None:
            continue
        try:
            with open(source, "rb") as handle:
                data = tomllib.load(handle)
        except FileNotFoundError:
            raise ConfigError(f"{source}: no such configuration file") from None
        except IsADirectoryError:
            raise ConfigError(f"{source}: is a directory, not a configuration file") from None
        except OSError as exc:
            raise ConfigError(f"{source}: cannot read: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"{source}: not valid TOML: not UTF-8 (byte {exc.start}: {exc.reason})"
            ) from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{source}: not valid TOML: {exc}") from None
        config = _apply(config, data, str(source))
    env = os.environ if environ is None else environ
    from_env: dict[str, dict[str, Any]] = {}
    if env.get("GUOBIAO_DATABASE_URL"):
        from_env.setdefault("database", {})["url"] = env["GUOBIAO_DATABASE_URL"]
    for name, (section, key) in SETTING_VARIABLES.items():
        if name in env:
            from_env.setdefault(section, {})[key] = env[name]
    check_variables(env)
    config = _apply(config, from_env, "environment", text=True)
    config = _apply(config, overrides or {}, "command line")
    timers = config.timers
    if not timers.min_turn_seconds <= timers.turn_seconds <= timers.max_turn_seconds:
        raise ConfigError(
            f"[timers] turn_seconds ({timers.turn_seconds}) must lie between min_turn_seconds "
            f"({timers.min_turn_seconds}) and max_turn_seconds ({timers.max_turn_seconds})"
        )
    accounts = config.accounts
    if accounts.login_backoff_max_seconds < accounts.login_backoff_seconds:
        raise ConfigError(
            f"[accounts] login_backoff_max_seconds ({number(accounts.login_backoff_max_seconds)}) "
            f"must be at least login_backoff_seconds ({number(accounts.login_backoff_seconds)})"
        )
    cluster = config.cluster
    if cluster.redis_url and not cluster.redis_url.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError(
            f"[cluster] redis_url must start with redis://, rediss:// or unix://, got "
            f"{cluster.redis_url!r}"
        )
    if not cluster.prefix or not cluster.prefix.replace("_", "").replace("-", "").isalnum():
        raise ConfigError(
            f"[cluster] prefix must be letters, digits, - and _, got {cluster.prefix!r}"
        )
    check_node(config.server.node)
    check_origins(config.server.allowed_origins)
    check_listen(config.metrics.listen)
    presets = config.rule_presets()
    making = config.matchmaking
    if making.gap_max < making.gap_start:
        raise ConfigError(
            f"[matchmaking] gap_max ({number(making.gap_max)}) must be at least gap_start "
            f"({number(making.gap_start)})"
        )
    if config.rules.preset not in presets:
        raise ConfigError(
            f"[rules] preset {config.rules.preset!r} is not a preset of "
            f"{config.rules.file or 'config/rules.toml'}; known: {', '.join(presets)}"
        )
    for name in config.ladder_names:
        if name not in presets:
            raise ConfigError(
                f"[ladder] ladders names {name!r}, which is not a rule preset; known: "
                f"{', '.join(presets)}"
            )
    return config


ENV_PREFIX = "GUOBIAO_"


def variable(section: str, key: str) -> str:
    """The environment variable of ``[section] key``: ``GUOBIAO_<SECTION>_<KEY>``."""
    return f"{ENV_PREFIX}{section.upper()}_{key.upper()}"


# The variable of each setting, GUOBIAO_<SECTION>_<KEY>: its section and key.
SETTING_VARIABLES: dict[str, tuple[str, str]] = {
    variable(f.name, key): (f.name, key)
    for f in fields(Config)
    for key in _types(type(getattr(Config(), f.name)))
}
# The other GUOBIAO_ variables, read elsewhere: never refused as a misspelt setting.
OTHER_VARIABLES: dict[str, str] = {
    "GUOBIAO_COMPILE": "the install: compile the engine with mypyc (setup.py)",
    "GUOBIAO_BUILD": "the install: set by tools/build_backend.py for setup.py",
    "GUOBIAO_PASSWORD": "guobiao tournament and guobiao bot: the account's password",
    "GUOBIAO_TOKEN": "guobiao tournament: a session to resume instead of logging in",
    "GUOBIAO_SUPERVISOR_PID": "serve --workers: set for each worker, its supervisor's pid",
    "GUOBIAO_CHROMIUM": "the browser tests and web/tools: the Chromium to drive",
    "GUOBIAO_SCREENSHOTS": "the browser tests: write the screenshots of docs/images",
    "GUOBIAO_TEST_POSTGRES_URL": "the tests: a PostgreSQL server to run their database tests on",
    "GUOBIAO_TEST_REDIS_URL": "the tests: a Redis server for the cluster tests",
    "GUOBIAO_TEST_REDIS_SERVER": "the tests: the redis-server program to start",
    "GUOBIAO_DIFF_HANDS": "the tests: hands compared with the reference calculator",
    "GUOBIAO_DIFF_SEED": "the tests: their seed",
    "GUOBIAO_SHANTEN_HANDS": "the tests: hands of the shanten comparison",
    "GUOBIAO_SHANTEN_SEED": "the tests: their seed",
    "GUOBIAO_TABLE_SEED": "the tests: the seed of the random matches",
    "GUOBIAO_TABLE_MATCHES": "the tests: how many random matches",
    "GUOBIAO_CUSTOM_MATCHES": "the tests: how many random matches under the custom rules",
    "GUOBIAO_BENCH_TRACE": "benchmarks/bench_memory.py: trace allocations",
}


def check_variables(env: Mapping[str, str]) -> None:
    """``ConfigError`` for a ``GUOBIAO_`` variable (in any case) that is neither a setting's
    (``SETTING_VARIABLES``) nor one read elsewhere (``OTHER_VARIABLES``): a misspelt setting
    is refused, as an unknown key in a file is, naming the closest setting, instead of being
    ignored."""
    for name in env:
        if not name.upper().startswith(ENV_PREFIX):
            continue
        if name in SETTING_VARIABLES or name in OTHER_VARIABLES:
            continue
        form = (
            "a setting's variable is GUOBIAO_<SECTION>_<KEY>, for the [section] key of "
            "config/default.toml"
        )
        known = [*SETTING_VARIABLES, *OTHER_VARIABLES]
        close = difflib.get_close_matches(name.upper(), known, 1, 0.75)
        guess = f"; did you mean {close[0]}?" if close else ""
        raise ConfigError(f"environment: unknown variable {name}{guess} ({form})")


NODE_MAX = 80  # characters of a node's name (its workers add "/wN")


def check_node(node: str) -> None:
    """``ConfigError`` unless ``[server] node`` is a name a log line, a metrics label and a
    cluster's listing show as it is: at most ``NODE_MAX`` characters, none of them a control
    or format character (an escape sequence, a right-to-left override)."""
    refused = refused_character(node)
    if refused is not None:
        at, char = refused
        raise ConfigError(
            f"[server] node must hold no control or format character, got {node!r} "
            f"({describe(char)} at character {at + 1})"
        )
    if len(node) > NODE_MAX:
        raise ConfigError(
            f"[server] node must be at most {NODE_MAX} characters, got {len(node)} "
            f"({node[:20]!r}...)"
        )


def check_origins(text: str) -> None:
    """``ConfigError`` unless ``text`` (``[server] allowed_origins``) is a comma-separated list
    of origins as browsers send them, ``scheme://host[:port]`` (http or https, no path), or
    ``*``."""
    for item in (part.strip() for part in text.split(",")):
        if not item or item == "*":
            continue
        scheme, _, rest = item.partition("://")
        if scheme.lower() not in ("http", "https") or not rest or any(c in rest for c in "/?#@"):
            raise ConfigError(
                f"[server] allowed_origins: {item!r} is not an origin like "
                f"'https://mahjong.example.org' or 'http://10.0.0.5:8765' (scheme, host and "
                f"port only), nor '*'"
            )


def check_listen(text: str) -> None:
    """``ConfigError`` unless ``text`` (``[metrics] listen``) is empty or ``HOST:PORT``
    (``[::1]:9100`` for an IPv6 address), the port 0..65535."""
    if not text:
        return
    host, colon, port = text.rpartition(":")
    if (
        not colon
        or not host
        or not (port.isascii() and port.isdigit() and int(port) <= 65535)
        or (":" in host and not (host.startswith("[") and host.endswith("]")))
    ):
        raise ConfigError(
            f"[metrics] listen must be HOST:PORT (e.g. 127.0.0.1:9100, [::1]:9100; port "
            f"0..65535), got {text!r}"
        )

"""``guobiao loadtest``: many tables of network bots against one server; latency and throughput.

    guobiao loadtest --url ws://127.0.0.1:8765/ws --tables 10 --duration 30 --bot fast

Runs ``--tables`` tables of four bots each; every bot has its own connection and guest
account, and one bot of each table creates it. A table whose match ends starts a new one with
the same bots, so the load stays steady. The tables are created with ``claim_window_ms`` 0:
no minimum pause after a discard (the bots' connections are people to the server, so their
claim windows are still held open until every answer is in). After ``--duration`` seconds
the bots stop sending, the connections close, and the report is printed (``--json``: one
JSON object):

- actions sent and accepted (not refused by an ``error``), accepted actions per second;
- action-to-update latency: from sending an action to the next ``update`` of that table on
  that connection (p50, p95, p99, max). When several players answer a discard, the update
  comes once the last has answered, so the latency includes the others' decisions;
- the server's latency: from the last action the table waited for to the first ``update`` of
  that table on any of its four connections (a discard is seen by the others at once; a pass
  is answered when the last player asked has answered), counted once every connection is
  seated (start-up, with its logins, left out: the connections held, not being opened). The
  others' decisions are not in it, so at human pace this is the figure of the server's own
  speed (the first is mostly the others' think times);
- error messages received, by code; dropped connections (closed before the end, not by us);
- matches started and completed.

Pacing like people (``--think 0.8-3 --seed 1``): before each decision a bot waits a think
time drawn at random from the range, in seconds, uniformly; a pass (declining a claim) draws
from the range's quickest quarter, as a person who has nothing to claim answers sooner. Each
connection draws from its own random stream, seeded by ``--seed`` and the connection's index
(``Pacer``), so the tables do not all act at the same instant and a run's think times (and
its bots' seeds) are the same for the same seed. ``--think-ms X`` is a fixed pause of X
milliseconds before every action (``--think`` with LOW = HIGH, in seconds); without either
the bots answer at once.

One Python process holding thousands of connections is itself slow to read what arrives: its
latencies then measure the client as much as the server (one process with 4,000 bots
reported a server p99 twice what two processes of 2,000 did, same server, same load).
``--processes N`` spreads the tables over N client processes (``guobiao loadtest`` run N
times, each with its share of the tables, the connections keeping the random streams they
would have in one process) and merges their reports: the percentiles are of every sample.

Start-up is staggered: at most ``--connect-concurrency`` connections are being opened at once.
Outgoing messages are paced per connection (``--rate``, the server's default limit) so the
bots do not trip the server's rate limit; raise it for a server configured higher. Only the
given URL is contacted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from engine.actions import Action, ActionKind
from engine.bots import BOTS, make_bot
from server.cli import child_command
from server.cli.args import positive_int, positive_seconds
from server.client import (
    DEFAULT_BURST,
    DEFAULT_RATE,
    Client,
    ClientError,
    ConnectFailed,
    Incoming,
    ServerError,
    play,
)

CLOSE_SECONDS = 5.0  # the most the closing of all connections may take


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "loadtest",
        help="load a server with tables of network bots; report latency and throughput",
        description="Run N tables of 4 network bots (4N connections, guest accounts) against "
        "a server for S seconds; report actions/s, action-to-update latency percentiles, "
        "errors, dropped connections and completed matches.",
    )
    parser.add_argument("--url", required=True, help="the server, ws://HOST:PORT/ws")
    parser.add_argument("--tables", type=positive_int, default=1, help="tables (default 1)")
    parser.add_argument(
        "--duration", type=positive_seconds, default=30.0, help="seconds to run (default 30)"
    )
    parser.add_argument(
        "--bot", choices=sorted(BOTS), default="fast", help="the engine bot (default fast)"
    )
    parser.add_argument(
        "--turn-seconds", type=positive_int, metavar="T", help="time per decision of the tables"
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=DEFAULT_RATE,
        help=f"messages a second per connection, 0 for no pacing (default {DEFAULT_RATE:g})",
    )
    parser.add_argument(
        "--burst",
        type=positive_int,
        default=DEFAULT_BURST,
        help=f"messages at once per connection (default {DEFAULT_BURST})",
    )
    pacing = parser.add_mutually_exclusive_group()
    pacing.add_argument(
        "--think",
        type=think_range,
        metavar="LOW-HIGH",
        help="a think time before each decision, drawn at random in LOW..HIGH seconds "
        "(e.g. 0.8-3; a pass in the quickest quarter); one number: a fixed pause",
    )
    pacing.add_argument(
        "--think-ms",
        type=think_ms,
        metavar="MS",
        help="a fixed pause before each action, in milliseconds (--think MS/1000)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the think times and the bots, one stream per connection (default 0)",
    )
    parser.add_argument(
        "--connect-concurrency",
        type=positive_int,
        default=16,
        help="connections being opened at once (default 16)",
    )
    parser.add_argument(
        "--processes",
        type=positive_int,
        default=1,
        help="client processes the tables are spread over (default 1); a few thousand "
        "connections are more than one process reads without delays of its own",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    # One process of a ``--processes`` run: its tables start at index FIRST (the random
    # streams of its connections are those of one process), it prints its raw figures.
    parser.add_argument("--part", metavar="K/N", help=argparse.SUPPRESS)
    parser.add_argument("--first-table", type=int, default=0, help=argparse.SUPPRESS)
    return parser


def run(args: argparse.Namespace) -> int:
    if args.processes > 1 and args.part is None:
        return run_processes(args)
    # Thousands of bots keep millions of objects: with Python's default thresholds the
    # garbage collector's full collections stall the client for tenths of a second, and the
    # latencies it measures grow by as much. The server's thresholds, for the same reason.
    from server.cli.serve import tune_collector  # noqa: PLC0415 (only this command needs it)

    tune_collector()
    try:
        report = asyncio.run(
            loadtest(
                args.url,
                tables=args.tables,
                duration=args.duration,
                bot=args.bot,
                turn_seconds=args.turn_seconds,
                rate=args.rate,
                burst=args.burst,
                think=args.think or args.think_ms or Think(0.0, 0.0),
                seed=args.seed,
                connect_concurrency=args.connect_concurrency,
                progress=not args.json,
                first_table=args.first_table,
                part=args.part,
            )
        )
    except KeyboardInterrupt:
        print("guobiao loadtest: interrupted", file=sys.stderr)
        return 130
    except ConnectFailed as exc:
        print(f"guobiao loadtest: {exc} (is `guobiao serve` running there?)", file=sys.stderr)
        return 1
    except ServerError as exc:
        print(f"guobiao loadtest: the server refused: {exc}", file=sys.stderr)
        return 1
    if args.part is not None:
        print(json.dumps(report.raw()))
    else:
        print(json.dumps(report.to_dict(), indent=2) if args.json else report.text())
    return 0 if report.connected else 1


def run_processes(args: argparse.Namespace) -> int:
    """``--processes N``: the tables shared among N ``guobiao loadtest`` processes run at
    once; their reports merged into one."""
    try:
        asyncio.run(_probe(args.url))  # one clear message, not one per process
    except ConnectFailed as exc:
        print(f"guobiao loadtest: {exc} (is `guobiao serve` running there?)", file=sys.stderr)
        return 1
    count = min(args.processes, args.tables)
    shares = [args.tables // count + (k < args.tables % count) for k in range(count)]
    common = [
        *("--url", args.url, "--duration", repr(args.duration), "--bot", args.bot),
        *("--rate", repr(args.rate), "--burst", str(args.burst), "--seed", str(args.seed)),
        *("--connect-concurrency", str(max(1, -(-args.connect_concurrency // count)))),
    ]
    if args.turn_seconds is not None:
        common += ["--turn-seconds", str(args.turn_seconds)]
    think = args.think or args.think_ms
    if think is not None:
        common += ["--think", f"{think.low!r}-{think.high!r}"]
    if args.json:
        common.append("--json")  # (the parts' progress lines: only without --json)
    children: list[subprocess.Popen[str]] = []
    first = 0
    for k, share in enumerate(shares):
        part = ["--tables", str(share), "--first-table", str(first), "--part", f"{k + 1}/{count}"]
        children.append(
            subprocess.Popen(
                child_command("loadtest", *common, *part),
                stdout=subprocess.PIPE,
                text=True,
            )
        )
        first += share
    try:
        outputs = [child.communicate()[0] for child in children]
    except KeyboardInterrupt:
        for child in children:
            child.terminate()
        print("guobiao loadtest: interrupted", file=sys.stderr)
        return 130
    parts: list[Report] = []
    for k, (child, output) in enumerate(zip(children, outputs, strict=True)):
        if child.returncode != 0 or not output.strip():
            print(
                f"guobiao loadtest: client process {k + 1} of {count} failed "
                f"(exit status {child.returncode}; its message is above)",
                file=sys.stderr,
            )
            return 1
        parts.append(Report.from_raw(json.loads(output)))
    report = Report.merge(parts)
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.text())
    return 0 if report.connected else 1


async def _probe(url: str, timeout: float = 10.0) -> None:
    """Connect to ``url`` and leave: ``ConnectFailed`` if the server cannot be reached."""
    probe = await Client.connect(url, timeout=timeout)
    await probe.close()


# ------------------------------------------------------------------ pacing ---


@dataclass(frozen=True, slots=True)
class Think:
    """A range of think times, in seconds: ``low`` <= a pause <= ``high``."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            raise ValueError(f"think times must be finite, got {self.low!r}-{self.high!r}")
        if not 0 <= self.low <= self.high:
            raise ValueError(f"think times need 0 <= LOW <= HIGH, got {self.low:g}-{self.high:g} s")

    @property
    def fixed(self) -> bool:
        return self.low == self.high

    def text(self) -> str:
        return f"{self.low:g} s" if self.fixed else f"{self.low:g}-{self.high:g} s"


class Pacer:
    """One connection's think times: a random stream of its own, seeded by the run's
    ``seed`` and the connection's ``index``, so that two runs with one seed draw the same
    pauses and no two connections draw in step.

    Called with the action the bot chose, it returns the pause before sending it: uniform
    in ``think``'s range, or in the range's quickest quarter for a pass (people decline a
    claim sooner than they choose a discard). ``bot_seed`` is the first draw of the stream:
    the seed of this connection's bot.
    """

    __slots__ = ("_random", "bot_seed", "think")

    def __init__(self, think: Think, seed: int, index: int) -> None:
        self.think = think
        # A string seed is hashed whole (SHA-512), so nearby seeds and indexes give
        # unrelated streams; an int pair packed together could collide.
        self._random = random.Random(f"guobiao loadtest {seed} {index}")
        self.bot_seed = self._random.getrandbits(32)

    def __call__(self, action: Action) -> float:
        low, high = self.think.low, self.think.high
        if action.kind is ActionKind.PASS:
            high = low + (high - low) / 4
        return low if low == high else self._random.uniform(low, high)


def think_range(text: str) -> Think:
    """``LOW-HIGH`` seconds (``0.8-3``) or one number (a fixed pause), for ``--think``."""
    low, sep, high = text.strip().partition("-")
    try:
        return Think(float(low), float(high) if sep else float(low))
    except ValueError as exc:
        detail = str(exc) if str(exc).startswith("think times") else "not a number"
        raise argparse.ArgumentTypeError(
            f"expected seconds LOW-HIGH with 0 <= LOW <= HIGH (e.g. 0.8-3) or one number, "
            f"got {text!r} ({detail})"
        ) from None


def think_ms(text: str) -> Think:
    """A fixed pause in milliseconds (``--think-ms``), as a ``Think`` in seconds."""
    try:
        return Think(float(text) / 1000, float(text) / 1000)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected milliseconds, a number of at least 0, got {text!r}"
        ) from None


# ------------------------------------------------------------------ report ---


@dataclass
class Report:
    url: str
    tables: int
    bot: str
    duration: float  # asked for
    think: Think = field(default_factory=lambda: Think(0.0, 0.0))
    seed: int = 0
    connections: int = 0  # wanted: 4 per table
    connected: int = 0
    connect_failures: int = 0
    startup_seconds: float = 0.0  # until every connection was seated (or gave up)
    elapsed: float = 0.0  # from the start to the stop
    active_seconds: float = 0.0  # from the first match's start to the stop
    actions_sent: int = 0
    actions_refused: int = 0
    updates: int = 0
    latencies: list[float] = field(default_factory=list)
    server_latencies: list[float] = field(default_factory=list)  # to the table's first update
    errors: Counter[str] = field(default_factory=Counter)
    dropped: int = 0
    matches_started: int = 0
    matches_completed: int = 0
    notes: list[str] = field(default_factory=list)
    processes: int = 1  # client processes whose figures these are (``merge``)

    def raw(self) -> dict[str, Any]:
        """Every field, samples included, as JSON values (``from_raw`` reads it back)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["think"] = [self.think.low, self.think.high]
        out["errors"] = dict(self.errors)
        return out

    @classmethod
    def from_raw(cls, data: dict[str, Any]) -> Report:
        low, high = data["think"]
        return cls(**{**data, "think": Think(low, high), "errors": Counter(data["errors"])})

    @classmethod
    def merge(cls, parts: Sequence[Report]) -> Report:
        """One report of the parts run at once (each with its own tables): counts added,
        samples pooled, times the longest part's."""
        first = parts[0]
        out = cls(first.url, 0, first.bot, first.duration, first.think, first.seed)
        for name in (
            "tables",
            "connections",
            "connected",
            "connect_failures",
            "actions_sent",
            "actions_refused",
            "updates",
            "dropped",
            "matches_started",
            "matches_completed",
            "processes",
        ):
            setattr(out, name, sum(getattr(part, name) for part in parts))
        for name in ("startup_seconds", "elapsed", "active_seconds"):
            setattr(out, name, max(getattr(part, name) for part in parts))
        for part in parts:
            out.latencies += part.latencies
            out.server_latencies += part.server_latencies
            out.errors += part.errors
            out.notes += [note for note in part.notes if note not in out.notes]
        return out

    @property
    def accepted(self) -> int:
        return self.actions_sent - self.actions_refused

    def percentiles(self, latencies: list[float] | None = None) -> dict[str, float | None]:
        data = sorted(self.latencies if latencies is None else latencies)
        out: dict[str, float | None] = {}
        for name, q in (("p50", 50), ("p95", 95), ("p99", 99)):
            out[name] = _ms(percentile(data, q)) if data else None
        out["max"] = _ms(data[-1]) if data else None
        out["mean"] = _ms(sum(data) / len(data)) if data else None
        return out

    def to_dict(self) -> dict[str, Any]:
        window = self.active_seconds or 0.0
        return {
            "url": self.url,
            "tables": self.tables,
            "bot": self.bot,
            "duration_s": self.duration,
            "think_s": [self.think.low, self.think.high],
            "seed": self.seed,
            "processes": self.processes,
            "elapsed_s": round(self.elapsed, 3),
            "startup_s": round(self.startup_seconds, 3),
            "active_s": round(window, 3),
            "connections": {
                "wanted": self.connections,
                "connected": self.connected,
                "failed": self.connect_failures,
                "dropped": self.dropped,
            },
            "actions": {
                "sent": self.actions_sent,
                "accepted": self.accepted,
                "refused": self.actions_refused,
                "per_second": round(self.accepted / window, 1) if window else 0.0,
            },
            "updates": {
                "received": self.updates,
                "per_second": round(self.updates / window, 1) if window else 0.0,
            },
            "latency_ms": {**self.percentiles(), "samples": len(self.latencies)},
            "server_latency_ms": {
                **self.percentiles(self.server_latencies),
                "samples": len(self.server_latencies),
            },
            "errors": dict(self.errors.most_common()),
            "matches": {"started": self.matches_started, "completed": self.matches_completed},
            "notes": self.notes,
        }

    def text(self) -> str:
        d = self.to_dict()
        c, a, u, lat = d["connections"], d["actions"], d["updates"], d["latency_ms"]
        first = d["server_latency_ms"]

        def ms(value: float | None) -> str:
            return "-" if value is None else f"{value:.2f} ms"

        errors = ", ".join(f"{k} {v}" for k, v in d["errors"].items()) or "none"
        pace = f", think {self.think.text()} (seed {self.seed})" if self.think.high else ""
        spread = f", {self.processes} client processes" if self.processes > 1 else ""
        lines = [
            f"loadtest {self.url}: {self.tables} table(s) x 4 {self.bot} bots, "
            f"{self.duration:g} s{pace}{spread}",
            f"connections  {c['connected']}/{c['wanted']} connected, {c['failed']} failed, "
            f"{c['dropped']} dropped; start-up {d['startup_s']:.2f} s",
            f"actions      {a['sent']} sent, {a['accepted']} accepted, {a['refused']} refused; "
            f"{a['per_second']:.1f} actions/s over {d['active_s']:.1f} s",
            f"updates      {u['received']} received, {u['per_second']:.1f}/s",
            f"latency      p50 {ms(lat['p50'])}, p95 {ms(lat['p95'])}, p99 {ms(lat['p99'])}, "
            f"max {ms(lat['max'])} ({lat['samples']} samples, action sent -> next update)",
            f"server       p50 {ms(first['p50'])}, p95 {ms(first['p95'])}, "
            f"p99 {ms(first['p99'])}, max {ms(first['max'])} ({first['samples']} samples, "
            "the table's last awaited action -> its first update on any connection, "
            "after start-up)",
            f"errors       {errors}",
            f"matches      {d['matches']['completed']} completed, "
            f"{d['matches']['started']} started",
        ]
        lines.extend(f"note         {n}" for n in self.notes)
        return "\n".join(lines)


def percentile(data: list[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile of sorted ``data``."""
    rank = max(1, math.ceil(q / 100 * len(data)))
    return data[min(rank, len(data)) - 1]


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


# ----------------------------------------------------------------- running ---


class _Run:
    def __init__(self, report: Report, url: str, options: dict[str, Any]) -> None:
        self.report = report
        self.url = url
        self.options = options
        self.stop = asyncio.Event()
        self.clients: list[Client] = []
        self.first_action: float | None = None  # when the first match started
        self.seated = 0
        self.unseated = 0  # bots of groups that gave up (a connection or a login failed)
        self.steady = False  # every connection is seated: start-up is over
        self.groups: dict[str, list[Client]] = {}  # table -> its four bots' connections
        self.served: dict[int, float] = {}  # connection -> its action the server answered

    def on_message(self, message: Incoming, receiver: Client | None = None) -> None:
        report = self.report
        if message.type == "update":
            report.updates += 1
            if message.latency is not None:
                report.latencies.append(message.latency)
            if message.table is not None:
                self._server_latency(message, receiver)
        elif message.type == "error":
            report.errors[message.code or "?"] += 1
            if message.reply_to is not None and message.table is not None:
                report.actions_refused += 1

    def _server_latency(self, message: Incoming, receiver: Client | None) -> None:
        """An update of a table reached ``receiver``, one of its connections: the actions of
        the table's bots it answers are those sent and not answered yet; the server waited
        for the last of them (a pass is answered only once every player asked has
        answered), so the server's latency is from that one to now. Each action is counted
        once. The receiver's own action, if this answers it, is in ``message.latency`` (its
        client forgot when it was sent)."""
        table, now = message.table, message.received_at
        assert table is not None
        pending: list[float] = []
        for client in self.groups.get(table, ()):
            if client is receiver:
                sent = now - message.latency if message.latency is not None else None
                served = self.served.pop(id(client), None)
                if sent is not None and (served is None or abs(served - sent) > 1e-6):
                    pending.append(sent)
                continue
            state = client.tables.get(table)
            sent = state.action_sent_at if state is not None else None
            if sent is not None and self.served.get(id(client)) != sent:
                self.served[id(client)] = sent
                pending.append(sent)
        if pending and self.steady:
            self.report.server_latencies.append(now - max(pending))

    async def open(self, gate: asyncio.Semaphore) -> Client | None:
        async with gate:
            if self.stop.is_set():
                return None
            opened: list[Client] = []  # the connection, once open: whose message it is
            try:
                client = await Client.connect(
                    self.url,
                    on_message=lambda m: self.on_message(m, opened[0] if opened else None),
                    rate=self.options["rate"],
                    burst=self.options["burst"],
                    timeout=self.options["timeout"],
                )
            except (ClientError, OSError) as exc:
                self.report.connect_failures += 1
                self.report.errors[f"connect: {type(exc).__name__}"] += 1
                return None
            opened.append(client)
            self.clients.append(client)
            self.report.connected += 1
            try:
                await client.guest()
            except ClientError as exc:
                code = getattr(exc, "code", type(exc).__name__)
                self.report.errors[f"guest: {code}"] += 1
                hint = (
                    "the server limits guest accounts per address: raise its [accounts] "
                    "guest_burst and guest_per_hour for a load test of this size"
                )
                if code == "rate_limited" and hint not in self.report.notes:
                    self.report.notes.append(hint)
                await client.close()
                return None
            return client

    async def table_group(self, index: int, gate: asyncio.Semaphore) -> None:
        """Four bots: connect, then play matches at fresh tables until the stop."""
        clients: list[Client] = []
        try:
            for _ in range(4):
                client = await self.open(gate)
                if client is None:
                    self.unseated += 4  # the group will not play: start-up is over without it
                    return
                clients.append(client)
            self.seated += 4
            bot, think, seed = self.options["bot"], self.options["think"], self.options["seed"]
            pacers = [Pacer(think, seed, 4 * index + p) for p in range(4)]
            while not self.stop.is_set() and all(c.is_open for c in clients):
                try:
                    # No claim window: its pause would only slow the measure down (the
                    # bots learn nothing from it).
                    created = await clients[0].create_table(
                        turn_seconds=self.options["turn_seconds"], claim_window_ms=0
                    )
                    for client in clients:
                        await client.join_table(created.table)
                    self.groups[created.table] = clients
                except ServerError as exc:
                    self.report.errors[f"{exc.code} (lobby)"] += 1
                    hint = (
                        "the server limits the tables waiting for players per address: raise "
                        "its [limits] waiting_tables_per_address (or 0) for a load test"
                    )
                    if exc.code == "too_many_tables" and hint not in self.report.notes:
                        self.report.notes.append(hint)
                    return
                self.report.matches_started += 1
                if self.first_action is None:
                    self.first_action = time.perf_counter()
                results = await asyncio.gather(
                    *(
                        play(
                            client,
                            created.table,
                            make_bot(bot, seed=pacer.bot_seed),
                            stopping=self.stop.is_set,
                            think=pacer if think.high else 0.0,
                        )
                        for client, pacer in zip(clients, pacers, strict=True)
                    ),
                    return_exceptions=True,
                )
                if any(isinstance(r, dict) for r in results):
                    self.report.matches_completed += 1
        except ClientError:
            return  # the connection went away: counted as dropped at the end


async def loadtest(
    url: str,
    *,
    tables: int,
    duration: float,
    bot: str = "fast",
    turn_seconds: int | None = None,
    rate: float | None = DEFAULT_RATE,
    burst: int = DEFAULT_BURST,
    think: float | Think = 0.0,
    seed: int = 0,
    connect_concurrency: int = 16,
    timeout: float = 10.0,
    progress: bool = False,
    first_table: int = 0,
    part: str | None = None,
) -> Report:
    """Run the load test; raise ``ConnectFailed`` when the server cannot be reached at all.

    ``think``: the bots' think times (a ``Think`` range, drawn per decision by each
    connection's ``Pacer`` from ``seed``), or one fixed pause in seconds. ``first_table``:
    the index of this run's first table among those of a run spread over processes (its
    connections' random streams are those they would have in one process); ``part``
    (``K/N``) names this process in the progress lines."""
    if not isinstance(think, Think):
        think = Think(think, think)
    report = Report(url, tables, bot, duration, think, seed, connections=4 * tables)
    await _probe(url, timeout)  # fail early and clearly
    run = _Run(
        report,
        url,
        {
            "rate": rate,
            "burst": burst,
            "timeout": timeout,
            "bot": bot,
            "think": think,
            "seed": seed,
            "turn_seconds": turn_seconds,
        },
    )
    started = time.perf_counter()
    gate = asyncio.Semaphore(connect_concurrency)
    groups = [asyncio.create_task(run.table_group(first_table + i, gate)) for i in range(tables)]
    name = f"loadtest [{part}]" if part else "loadtest"
    deadline = started + duration
    next_line = started + 5.0
    while (now := time.perf_counter()) < deadline:
        if not report.startup_seconds and (
            run.seated + run.unseated >= 4 * tables or all(g.done() for g in groups)
        ):
            report.startup_seconds = now - started
            run.steady = True
        if progress and now >= next_line:
            next_line += 5.0
            print(
                f"{name}: {now - started:.0f} s, {run.seated}/{4 * tables} bots seated, "
                f"{sum(c.actions_sent for c in run.clients)} actions, "
                f"{report.matches_completed} matches completed",
                file=sys.stderr,
                flush=True,
            )
        if all(g.done() for g in groups):
            report.notes.append("every table group stopped before the end")
            break
        await asyncio.sleep(min(0.1, max(0.0, deadline - now)))
    stopped = time.perf_counter()
    run.stop.set()  # no more actions
    if not report.startup_seconds:
        report.startup_seconds = stopped - started
        if run.seated < 4 * tables:
            report.notes.append(f"only {run.seated} of {4 * tables} bots were seated in time")
    report.dropped = sum(1 for c in run.clients if not c.is_open and not c.closing)
    report.actions_sent = sum(c.actions_sent for c in run.clients)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(
            asyncio.gather(*(c.close() for c in run.clients), return_exceptions=True),
            CLOSE_SECONDS,
        )
    done, pending = await asyncio.wait(groups, timeout=CLOSE_SECONDS)
    for task in pending:
        task.cancel()
    for task in done:
        if not task.cancelled() and task.exception() is not None:
            report.notes.append(f"a table group failed: {task.exception()!r}")
    report.elapsed = stopped - started
    if run.first_action is not None:
        report.active_seconds = stopped - run.first_action
    return report

"""``guobiao loadtest``'s arguments and ``run``: one client process, or ``--processes N``
of them (``guobiao loadtest`` run N times, each with its share of the tables) whose reports
are merged.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys

from engine.bots import BOTS
from server.cli import child_command
from server.cli.args import positive_int, positive_seconds
from server.cli.loadtest.bots import loadtest, probe
from server.cli.loadtest.pacing import Think, think_ms, think_range
from server.cli.loadtest.report import Report
from server.client import DEFAULT_BURST, DEFAULT_RATE, ConnectFailed, ServerError


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
        asyncio.run(probe(args.url))  # one clear message, not one per process
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

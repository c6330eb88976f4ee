"""``guobiao fan --jsonl`` batch throughput against PyMahjongGB on the same hands.

Makes N seeded random winning hands (``tests/handgen.py``, every hand form in turn) and
writes them as the command's JSONL input, one request a line in the form of
``tests/reference.py``'s ``context_json`` (the hand in notation and all seven situation
fields), to a temporary file. Then, in alternating rounds (ours, reference, ours, ...):

- ours: ``server.cli.fan.run_batch``, the very function ``guobiao fan --jsonl`` runs, from
  the file opened as standard input is (text, UTF-8) to ``/dev/null`` opened as standard
  output is: each line decoded, its request checked, the hand parsed, scored, the result
  encoded, written and flushed. Before each round the engine's caches are emptied
  (``cache_clear`` of every ``lru_cache`` in ``engine``), as in a fresh process.
- reference, calculator: ``MahjongFanCalculator`` on the same hands, its arguments (tile
  codes, packs, flags) built before the clock starts: PyMahjongGB has no notation parser
  and no JSON front end, so this is the C++ calculator and its binding alone.
- reference, with JSON: the same calls, plus decoding each input line (``orjson.loads``,
  the line's own text) and encoding the rows it returns to the sink (``orjson.dumps``,
  written and flushed as ours are): the text-in, text-out work a batch tool around it
  would do, short of parsing the notation.

Prints each round's hands/s and the medians, and ours over each reference figure. Then the
real command once, ``guobiao fan --jsonl < file > /dev/null`` in a subprocess (interpreter
start-up and imports included), for scale. The garbage collector stays on (the command
runs with it). Figures only: no assertion, no exit status.

    .venv/bin/python benchmarks/bench_fan_batch.py [--hands 20000] [--rounds 5] [--seed 0]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

import handgen  # noqa: E402 - needs the tests directory on sys.path
import orjson  # noqa: E402
from MahjongGB import MahjongFanCalculator  # noqa: E402
from reference import context_json, reference_args  # noqa: E402

from engine.notation import format_hand  # noqa: E402
from engine.rules import MCR  # noqa: E402
from server.cli.fan import run_batch  # noqa: E402


def _clear_engine_caches() -> None:
    """Empty every cache of the engine's modules (``functools`` caches, and the
    ``forms._Memo`` pattern caches, some held in tuples), as a fresh process has them."""
    for name, module in list(sys.modules.items()):
        if name != "engine" and not name.startswith("engine."):
            continue
        for value in vars(module).values():
            for item in value if isinstance(value, tuple) else (value,):
                clear = getattr(item, "cache_clear", None)
                if callable(clear) and not isinstance(item, type):
                    clear()


def _time_ours(path: str) -> float:
    _clear_engine_caches()
    gc.collect()
    with (
        open(path, encoding="utf-8") as source,
        open(os.devnull, "w", encoding="utf-8") as sink,
    ):
        start = time.perf_counter()
        run_batch(source, sink, MCR)
        return time.perf_counter() - start


def _time_reference(calls: list[dict[str, Any]]) -> float:
    gc.collect()
    start = time.perf_counter()
    for kwargs in calls:
        MahjongFanCalculator(**kwargs)
    return time.perf_counter() - start


def _time_reference_json(lines: list[str], calls: list[dict[str, Any]]) -> float:
    gc.collect()
    loads, dumps = orjson.loads, orjson.dumps
    with open(os.devnull, "wb") as sink:
        start = time.perf_counter()
        for line, kwargs in zip(lines, calls, strict=True):
            loads(line)
            sink.write(dumps(MahjongFanCalculator(**kwargs)) + b"\n")
            sink.flush()
        return time.perf_counter() - start


def _time_command(path: str) -> float:
    """Wall seconds of ``guobiao fan --jsonl < path > /dev/null`` in a subprocess."""
    command = [sys.executable, "-c", "import sys; from server.cli import main; sys.exit(main())"]
    with open(path, "rb") as source:
        start = time.perf_counter()
        subprocess.run(
            [*command, "fan", "--jsonl"],
            stdin=source,
            stdout=subprocess.DEVNULL,
            check=True,
            cwd=ROOT,
        )
        return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=20000, help="hands a round (default 20000)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the hand generator")
    parser.add_argument("--no-command", action="store_true", help="skip the subprocess run")
    args = parser.parse_args(argv)

    hands = handgen.mixed(args.hands, args.seed)
    lines = [
        json.dumps({"hand": format_hand(hand), **context_json(ctx)}, ensure_ascii=False)
        for _, hand, ctx in hands
    ]
    calls = [reference_args(hand, ctx) for _, hand, ctx in hands]
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", suffix=".jsonl", delete=False
    ) as handle:
        handle.write("\n".join(lines) + "\n")
        path = handle.name
    try:
        print(
            f"guobiao fan --jsonl: {len(lines)} hands a round, seed {args.seed}, "
            f"{args.rounds} rounds; Python {platform.python_version()}, "
            f"pymahjonggb {metadata.version('pymahjonggb')}"
        )
        timers: dict[str, Callable[[], float]] = {
            "ours": lambda: _time_ours(path),
            "ref": lambda: _time_reference(calls),
            "ref+json": lambda: _time_reference_json(lines, calls),
        }
        for timer in timers.values():  # warm up: the file in the page cache, the code paths
            timer()
        rates: dict[str, list[float]] = {label: [] for label in timers}
        header = f"{'round':>5} " + " ".join(f"{label + ' h/s':>14}" for label in timers)
        print(header)
        print("-" * len(header))
        for number in range(1, args.rounds + 1):
            order = list(timers) if number % 2 else list(reversed(timers))
            for label in order:
                rates[label].append(len(lines) / timers[label]())
            print(f"{number:>5} " + " ".join(f"{rates[label][-1]:>14,.0f}" for label in timers))
        medians = {label: statistics.median(values) for label, values in rates.items()}
        print("-" * len(header))
        print(f"{'med':>5} " + " ".join(f"{medians[label]:>14,.0f}" for label in timers))
        print(
            f"ours / ref (calculator alone): {medians['ours'] / medians['ref']:.3f};  "
            f"ours / ref+json: {medians['ours'] / medians['ref+json']:.3f}"
        )
        if not args.no_command:
            seconds = _time_command(path)
            print(
                f"the command in a subprocess (start-up included): {seconds:.2f} s, "
                f"{len(lines) / seconds:,.0f} hands/s"
            )
    finally:
        os.unlink(path)


if __name__ == "__main__":
    main()

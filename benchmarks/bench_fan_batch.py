"""``guobiao fan --jsonl`` batch throughput against PyMahjongGB on the same hands.

Makes N seeded random winning hands (``tests/handgen.py``, every hand form in turn) and
writes them as the command's JSONL input, one request a line in the form of
``tests/reference.py``'s ``context_json`` (the hand in notation and all seven situation
fields), to a temporary file. Then rounds over all the hands, each timed in slices of 500
hands, the three sides in turns (ABC, CBA, ...) so that a busy machine slows all alike:

- ours: ``server.cli.fan.run_batch``, the very function ``guobiao fan --jsonl`` runs, from
  the file opened as standard input is (text, UTF-8) to ``/dev/null`` opened as standard
  output is: each line decoded, its request checked, the hand parsed, scored, the result
  encoded, written and flushed. The file is read straight on, slice after slice; at the
  start of each round the engine's caches are emptied (every ``cache_clear`` in
  ``engine``), as in a fresh process.
- reference, calculator: ``MahjongFanCalculator`` on the same hands, its arguments (tile
  codes, packs, flags) built before the clock starts: PyMahjongGB has no notation parser
  and no JSON front end, so this is the C++ calculator and its binding alone.
- reference, with JSON: the same calls, plus decoding each input line (``orjson.loads``,
  the line's own text) and encoding the rows it returns to the sink (``orjson.dumps``,
  written and flushed as ours are): the text-in, text-out work a batch tool around it
  would do, short of parsing the notation.

With ``--other TREE`` another checkout's ``run_batch`` (say, main before a change) is timed
beside ours in the same slices, both loaded in this process. The command's own small tables
(the situations and fan texts of ``server/cli/fan.py``) are not emptied between rounds.

Prints each round's hands/s and each tree's time over the reference's (its ratio), then
the medians. Then the real command once, ``guobiao fan --jsonl < file > /dev/null`` in a
subprocess (interpreter start-up and imports included), for scale. The garbage collector
stays on (the command runs with it). Figures only: no assertion, no exit status.

    .venv/bin/python benchmarks/bench_fan_batch.py [--hands 20000] [--rounds 5] [--seed 0]
        [--other /work/main] [--no-command]
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from importlib import metadata
from itertools import islice
from pathlib import Path
from types import ModuleType
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

SLICE = 500  # hands a timed slice


@dataclass
class Tree:
    """A checkout's ``run_batch`` and the engine modules whose caches it fills."""

    label: str
    run_batch: Callable[..., None]
    rules: Any  # its MCR
    modules: list[ModuleType]


def _ours(name: str) -> bool:
    return name in ("engine", "server") or name.startswith(("engine.", "server."))


def _this_tree() -> Tree:
    modules = [m for n, m in sys.modules.items() if n == "engine" or n.startswith("engine.")]
    return Tree("ours", run_batch, MCR, modules)


def _other_tree(root: Path) -> Tree:
    """``root``'s ``server.cli.fan`` imported beside this tree's (its functions keep their
    own module globals), this tree's modules put back after."""
    kept = {n: m for n, m in sys.modules.items() if _ours(n)}
    for name in kept:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        fan = importlib.import_module("server.cli.fan")
        rules = importlib.import_module("engine.rules")
        modules = [m for n, m in sys.modules.items() if n == "engine" or n.startswith("engine.")]
        return Tree(root.name, fan.run_batch, rules.MCR, modules)
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if _ours(n)]:
            del sys.modules[name]
        sys.modules.update(kept)


def _clear_caches(tree: Tree) -> None:
    """Empty every cache of the tree's engine modules (``functools`` caches, and the
    ``forms.Memo`` pattern caches, some held in tuples), as a fresh process has them."""
    for module in tree.modules:
        for value in vars(module).values():
            for item in value if isinstance(value, tuple) else (value,):
                clear = getattr(item, "cache_clear", None)
                if callable(clear) and not isinstance(item, type):
                    clear()


def _round(
    path: str, trees: list[Tree], lines: list[str], calls: list[dict[str, Any]]
) -> dict[str, float]:
    """One round: the seconds of each side over all the hands, timed slice by slice in
    turns (ABC CBA ...), so that a busy machine slows all alike. Each tree reads the file
    straight on, slice after slice, its caches emptied at the start of the round only."""
    for tree in trees:
        _clear_caches(tree)
    gc.collect()
    order = [tree.label for tree in trees] + ["ref", "ref+json"]
    spent = dict.fromkeys(order, 0.0)
    by_label = {tree.label: tree for tree in trees}
    loads, dumps = orjson.loads, orjson.dumps
    with ExitStack() as stack:
        sources = {tree.label: stack.enter_context(open(path, encoding="utf-8")) for tree in trees}
        sink = stack.enter_context(open(os.devnull, "w", encoding="utf-8"))
        raw_sink = stack.enter_context(open(os.devnull, "wb"))
        for number, start in enumerate(range(0, len(lines), SLICE)):
            stop = min(start + SLICE, len(lines))
            for label in order if number % 2 == 0 else reversed(order):
                began = time.perf_counter()
                if label == "ref":
                    for kwargs in calls[start:stop]:
                        MahjongFanCalculator(**kwargs)
                elif label == "ref+json":
                    for line, kwargs in zip(lines[start:stop], calls[start:stop], strict=True):
                        loads(line)
                        raw_sink.write(dumps(MahjongFanCalculator(**kwargs)) + b"\n")
                        raw_sink.flush()
                else:  # run_batch reads any iterable of lines
                    tree = by_label[label]
                    tree.run_batch(islice(sources[label], stop - start), sink, tree.rules)
                spent[label] += time.perf_counter() - began
    return spent


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
    parser.add_argument(
        "--other", type=Path, default=None, help="another checkout to time beside (say, main)"
    )
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
        trees = [_this_tree()]
        if args.other is not None:
            trees.append(_other_tree(args.other.resolve()))
            print(f"ours = {ROOT}, {trees[1].label} = {args.other.resolve()}")
        _round(path, trees, lines[: SLICE * 4], calls[: SLICE * 4])  # warm up: the code paths
        labels = [tree.label for tree in trees] + ["ref", "ref+json"]
        rates: dict[str, list[float]] = {label: [] for label in labels}
        ratios: dict[str, list[float]] = {tree.label: [] for tree in trees}
        header = (
            f"{'round':>5} "
            + " ".join(f"{label + ' h/s':>14}" for label in labels)
            + " ".join(f"{t.label + '/ref':>11}" for t in trees)
        )
        print(header)
        print("-" * len(header))
        for number in range(1, args.rounds + 1):
            spent = _round(path, trees, lines, calls)
            for label in labels:
                rates[label].append(len(lines) / spent[label])
            for tree in trees:
                ratios[tree.label].append(spent["ref"] / spent[tree.label])
            print(
                f"{number:>5} "
                + " ".join(f"{rates[label][-1]:>14,.0f}" for label in labels)
                + " ".join(f"{ratios[t.label][-1]:>11.3f}" for t in trees)
            )
        print("-" * len(header))
        print(
            f"{'med':>5} "
            + " ".join(f"{statistics.median(rates[label]):>14,.0f}" for label in labels)
            + " ".join(f"{statistics.median(ratios[t.label]):>11.3f}" for t in trees)
        )
        for tree in trees:
            with_json = [
                rate / ref for rate, ref in zip(rates[tree.label], rates["ref+json"], strict=True)
            ]
            print(
                f"{tree.label} / ref (calculator alone), median of the rounds: "
                f"{statistics.median(ratios[tree.label]):.3f};  "
                f"{tree.label} / ref+json: {statistics.median(with_json):.3f}"
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

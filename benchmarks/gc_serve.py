"""``guobiao serve`` with its full garbage collection timed: how long the pause is that a
server of this size takes now and then (docs/performance.md, "Latency under load").

A full collection (the oldest generation) walks every object the collector tracks and is
rare in a serving process, so it is forced here: every ``--every`` seconds a thread of the
server counts the tracked objects (by type with ``--types``), then calls
``gc.collect(2)``. The collection holds the interpreter lock throughout, so the event loop
pauses exactly as for a collection of its own. Each line goes to stderr:

    gc_serve: full collection of 1,105,711 objects: 0.567 s

Start it as ``guobiao serve`` (its arguments after ``--``), put a load on it from another
terminal (``guobiao loadtest ... --think 0.8-3 --processes 2``), read the lines, stop it
with Ctrl-C. Figures only.

    .venv/bin/python benchmarks/gc_serve.py [--every 30] [--types] -- serve --config site.toml
"""

from __future__ import annotations

import argparse
import collections
import gc
import sys
import threading
import time

from server.cli import main as guobiao


def collect_every(seconds: float, types: bool) -> None:
    while True:
        time.sleep(seconds)
        tracked = gc.get_objects()
        count = len(tracked)
        if types:
            kinds = collections.Counter(type(o).__qualname__ for o in tracked)
            top = ", ".join(f"{name} {n:,}" for name, n in kinds.most_common(12))
            print(f"gc_serve: tracked by type: {top}", file=sys.stderr, flush=True)
            del kinds
        del tracked  # (a list of every object: not held while collecting)
        started = time.perf_counter()
        gc.collect(2)
        pause = time.perf_counter() - started
        print(
            f"gc_serve: full collection of {count:,} objects: {pause:.3f} s",
            file=sys.stderr,
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=30.0, help="seconds between collections")
    parser.add_argument("--types", action="store_true", help="count the objects by type first")
    parser.add_argument("serve", nargs=argparse.REMAINDER, help="-- serve [its options]")
    args = parser.parse_args()
    command = args.serve[1:] if args.serve[:1] == ["--"] else args.serve
    if command[:1] != ["serve"]:
        parser.error("give the server's command after --: -- serve [options]")
    if args.every <= 0:
        parser.error(f"--every must be above 0, got {args.every:g}")
    threading.Thread(target=collect_every, args=(args.every, args.types), daemon=True).start()
    return guobiao(command)


if __name__ == "__main__":
    sys.exit(main())

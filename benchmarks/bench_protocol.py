"""Decoding client frames: what the edge's guards (nesting bound, Unicode check) cost.

For a few typical frames (an action, a login with non-ASCII text, a ping) prints the
microseconds per frame of ``json.loads`` alone, of the guarded parse (``protocol._parse`` and
``protocol._check_strings``: the depth pre-scan and the lone-surrogate check), and of the whole
``protocol.decode``; then the same for a frame at the size limit full of brackets inside
strings (the pre-scan's worst case) and one nested past the bound (refused). Each figure is the
best of ``--repeat`` passes. Prints figures only: no assertion, no exit status.

    .venv/bin/python benchmarks/bench_protocol.py [--frames 50000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from server import protocol

FRAMES = {
    "action": {
        "type": "action",
        "id": 13,
        "payload": {"table": "t4", "seq": 57, "action": {"type": "chow", "tile": "7p"}},
    },
    "login (non-ASCII)": {
        "type": "login",
        "id": "r3",
        "payload": {"username": "lin", "password": "马上 correct horse"},
    },
    "ping": {"type": "ping", "id": 99, "payload": {}},
    "4 KiB of brackets in strings": {"type": "ping", "id": 1, "payload": {"x": "[{" * 2000}},
}


def _best(call: Callable[[], Any], n: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for _ in range(n):
            call()
        best = min(best, time.perf_counter() - started)
    return best / n * 1e6


def _guarded(text: str) -> Any:
    data = protocol._parse(text)
    protocol._check_strings(text, data)
    return data


def _refused(text: str) -> None:
    try:
        protocol.decode(text)
    except protocol.ProtocolError:
        return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n, repeat = args.frames, args.repeat
    print(f"{'frame':32} {'json.loads':>11} {'guarded':>9} {'decode':>9}  (us per frame)")
    for label, message in FRAMES.items():
        text = json.dumps(message, ensure_ascii=False)
        loads = _best(lambda t=text: json.loads(t), n, repeat)
        guarded = _best(lambda t=text: _guarded(t), n, repeat)
        whole = _best(lambda t=text: protocol.decode(t), n, repeat)
        print(f"{label:32} {loads:11.2f} {guarded:9.2f} {whole:9.2f}")
    deep = "[" * 2048 + "]" * 2048
    refused = _best(lambda: _refused(deep), max(1, n // 10), repeat)
    print(f"{'4 KiB nested 2048 deep (refused)':32} {'-':>11} {'-':>9} {refused:9.2f}")


if __name__ == "__main__":
    main()

"""The wire's cost per update: encoding the views the server sends, and decoding them back.

Plays a few seeded matches with the fast bots and, at every state, times what the server
does for an update: build and encode the view of each of the five viewers (four seats and a
spectator; the public seats' JSON is built once per state and shared). Then, on the views
and events collected, times ``engine.wire``'s decoders (what ``server.client`` runs for a
bot playing over the network) and the event encoders. Prints microseconds; no assertion.

The view-encoding figure uses only ``HandState.view(...).to_dict()``, so running this script
with another checkout first on the path (``PYTHONPATH=OTHER_TREE .venv/bin/python
benchmarks/bench_wire.py --encode-only``) gives that tree's figure to compare with.

    .venv/bin/python benchmarks/bench_wire.py [--matches 3] [--hands 4] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

if str(Path(__file__).resolve().parent.parent) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # after PYTHONPATH

import engine
from engine.bots import make_bot
from engine.match import Match
from engine.rules import MCR
from engine.table import Phase

VIEWERS = (0, 1, 2, 3, None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=3)
    parser.add_argument("--hands", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5, help="passes; the best is printed")
    parser.add_argument("--encode-only", action="store_true", help="only the view encoding")
    args = parser.parse_args()

    best = float("inf")
    views: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    updates = 0
    for attempt in range(args.repeat):
        spent = 0.0
        updates = 0
        for seed in range(1, args.matches + 1):
            match = Match(seed, MCR)
            bots = [make_bot("fast", seed=seed + p) for p in range(4)]
            for _ in range(args.hands):
                if match.over:
                    break
                sent = match.start_hand()
                hand = match.hand
                assert hand is not None
                while True:
                    start = time.perf_counter()
                    encoded = [hand.view(v).to_dict() for v in VIEWERS]
                    spent += time.perf_counter() - start
                    updates += 1
                    if attempt == 0:
                        views.extend(encoded)
                        events.extend({"kind": e.kind, **e.data} for e in sent)
                    if hand.phase is Phase.OVER:
                        break
                    player = hand.awaiting()[0]
                    sent = match.apply(player, bots[player].choose(hand.view(player)))
        best = min(best, spent)
    per_view = best / (updates * len(VIEWERS)) * 1e6
    print(f"engine: {Path(engine.__file__).parent}")
    print(f"{updates} updates x {len(VIEWERS)} viewers: view encoding {per_view:.2f} us a view")
    if args.encode_only:
        return

    from engine import wire  # noqa: PLC0415 (absent from older trees: --encode-only)

    def best_of(work: Any, items: list[Any]) -> float:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            for item in items:
                work(item)
            times.append(time.perf_counter() - start)
        return min(times) / len(items) * 1e6

    typed_events = [wire.decode_event(e) for e in events]
    print(f"view decoding {best_of(wire.decode_view, views):.2f} us a view ({len(views)} views)")
    print(f"event decoding {best_of(wire.decode_event, events):.2f} us an event ({len(events)})")
    print(f"event encoding {best_of(wire.encode_event, typed_events):.2f} us an event")


if __name__ == "__main__":
    main()

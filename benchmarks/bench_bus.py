"""What a cluster node's publication round trip costs: the bus's own against redis-py's pipeline.

Each node publishes what it relays (a remote player's action to the table's owner, the
owner's updates to the players on other nodes) from one sender task, one round trip a turn
of the event loop that found messages queued (server/cluster/bus.py). This times that round
trip on a Redis (``--redis-url``) for a batch of ``--batch`` publications (1: a lightly
loaded node; the default also times 5) of a relayed update's size (430 bytes), to a channel
nobody reads: ``Bus._publish`` (a connection of the sender's own) and, as the bus did
before, redis-py's ``pipeline(transaction=False)`` (a pooled connection), in turns, each
``--rounds`` round trips a run, ``--runs`` runs. Prints the CPU time (this process's, the
event loop's included) a round trip: the median over the runs and their range. Figures only.

    .venv/bin/python benchmarks/bench_bus.py [--runs 5] [--rounds 3000] [--batch 1,5]
        [--redis-url redis://127.0.0.1:6379/0]
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys
import time
from collections.abc import Awaitable, Callable

from benchkit import ROOT

sys.path.insert(0, str(ROOT))  # this tree's server, not an installed one

from server.cluster.bus import Bus
from server.cluster.state import node_client

UPDATE = b"x" * 430  # a relayed update's size (the mean of a match's protocol-2 updates)

Publish = Callable[[list[tuple[bytes, bytes]]], Awaitable[None]]


async def _per_round(publish: Publish, batch: list[tuple[bytes, bytes]], rounds: int) -> float:
    """CPU microseconds a round trip of ``batch``, over ``rounds`` of them."""
    await publish(batch)  # (the connection opened, not timed)
    began = time.process_time()
    for _ in range(rounds):
        await publish(batch)
    return (time.process_time() - began) / rounds * 1e6


async def _main(args: argparse.Namespace) -> None:
    redis = node_client(args.redis_url)
    channel = f"guobiao-bench-bus-{secrets.token_hex(4)}".encode()

    async def nothing(*_: object) -> None:
        pass

    bus = Bus(redis, "bench", "n1", nothing, nothing)

    async def pipeline(publications: list[tuple[bytes, bytes]]) -> None:
        async with redis.pipeline(transaction=False) as pipe:
            for to, data in publications:
                pipe.publish(to, data)
            await pipe.execute()

    ways: dict[str, Publish] = {"redis-py pipeline": pipeline, "Bus._publish": bus._publish}
    print(f"CPU a round trip (us), {args.rounds} round trips a run, {args.runs} runs in turns")
    try:
        for size in args.batch:
            batch = [(channel, UPDATE)] * size
            figures: dict[str, list[float]] = {name: [] for name in ways}
            for _ in range(args.runs):
                for name, publish in ways.items():
                    figures[name].append(await _per_round(publish, batch, args.rounds))
            for name, runs in figures.items():
                print(
                    f"  {size} a round trip, {name:18} median {statistics.median(runs):6.1f}"
                    f"  (runs {min(runs):.1f}-{max(runs):.1f})"
                )
    finally:
        await bus.close()
        await redis.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3000)
    parser.add_argument(
        "--batch", type=lambda text: [int(n) for n in text.split(",")], default=[1, 5]
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()

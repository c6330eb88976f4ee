"""What a cluster node's beat costs to read the others' directory, with thousands of players;
with ``--publish``, what its own publication costs.

Every beat (a third of ``[cluster] lease_seconds``) each node reads what every node published
in Redis: the seated players (``PREFIX:seated``, one entry a player) and the public tables
(``PREFIX:listing``). This fills a Redis (``--redis-url``, keys under a prefix of the run's
own, deleted after) with ``--players`` seated players and a table listed for every four, in
the name of another live node, then times a node's read of the cluster (``Node._read_cluster``)
``--beats`` times, a ``--churn`` fraction of the players sitting down elsewhere between two
beats (matches ending and starting). Each tree (``--other``: another checkout, a git
worktree) runs in a child process of its own, in turns, ``--runs`` times, with redis-py's
parser as installed (hiredis, if it is) and, with ``--pure``, with its Python parser too.
Prints the CPU time and the wall time a beat, medians. Figures only.

``--publish``: the other way, a node with ``--players`` seated at its own tables (a listed
summary for every four) publishes them (``Directory.publish``), ``--churn`` of them sitting
down at a new table between two publications (the lobby making that table's summary): what
every seat taken costs a node within ``PUBLISH_SOON`` while thousands of players sit down.

    .venv/bin/python benchmarks/bench_directory.py [--players 8000] [--beats 20] [--churn 0.01]
        [--runs 3] [--other TREE] [--pure] [--publish] [--redis-url redis://127.0.0.1:6379/0]
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import subprocess
import sys
from pathlib import Path

from benchkit import ROOT

sys.path.insert(0, str(ROOT / "tests"))  # clusterkit: deleting a run's keys

from clusterkit import delete_keys

# Run in a child process with the tree's code first on the path: prints {"cpu_ms": C,
# "wall_ms": W}, a beat's read of the directory, the median over BEATS beats.
CHILD = """
import sys
if sys.argv[7] == "pure":
    sys.modules["hiredis"] = None  # redis-py falls back on its Python parser
sys.path.insert(0, sys.argv[1])
import asyncio, json, random, statistics, time
import orjson
import redis.asyncio as aioredis
from server.cluster.node import Node
from server.config import ClusterSection

url, prefix = sys.argv[2], sys.argv[3]
players, beats, churn = int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])


class Feed:
    def changed(self):
        pass


class Lobby:
    def __init__(self):
        self.feed, self.summaries, self.tables, self.seated, self.creators = Feed(), {}, {}, {}, {}


class Summary:
    def __init__(self, table, players):
        self.listed = {"table": table, "seats": players, "rules": "mcr", "state": "playing"}


async def publish():
    # A node publishing its own tables: prints a publication's CPU and wall time.
    lobby = Lobby()
    for i in range(0, players, 4):
        table, four = f"t{i // 4:012x}", [f"guest{p:06d}" for p in range(i, min(i + 4, players))]
        lobby.tables[table] = object()
        lobby.summaries[table] = Summary(table, four)
        lobby.seated.update(dict.fromkeys(four, table))
    config = ClusterSection(redis_url=url, lease_seconds=600.0, prefix=prefix)
    node = Node(config, "writer", store=None, lobby=lobby, connections=[], by_cid={})
    await node.directory.publish()  # the first: everything is new
    rng = random.Random(1)
    cpu, wall = [], []
    for beat in range(beats):
        for _ in range(max(1, int(players * churn))):
            user, table = f"guest{rng.randrange(players):06d}", f"n{rng.randrange(10**9):012x}"
            lobby.tables[table] = object()
            lobby.summaries[table] = Summary(table, [user])
            lobby.seated[user] = table
        started, started_cpu = time.perf_counter(), time.process_time()
        await node.directory.publish()
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started)
    await node.close()
    figures = {"cpu_ms": 1000 * statistics.median(cpu), "wall_ms": 1000 * statistics.median(wall)}
    print(json.dumps(figures))


async def main():
    if sys.argv[8] == "publish":
        return await publish()
    other = aioredis.from_url(url)
    presence = orjson.dumps({"node": "other", "speaks": 2})
    await other.set(f"{prefix}:node:other", presence, px=600_000)
    seated = {f"guest{i:06d}": f"t{i // 4:012x} other" for i in range(players)}
    await other.hset(f"{prefix}:seated", mapping=seated)
    listing = {
        f"t{t:012x}": orjson.dumps({"n": "other", "l": {"table": f"t{t:012x}", "seats": []}})
        for t in range(players // 4)
    }
    await other.hset(f"{prefix}:listing", mapping=listing)
    config = ClusterSection(redis_url=url, lease_seconds=600.0, prefix=prefix)
    node = Node(config, "reader", store=None, lobby=Lobby(), connections=[], by_cid={})
    await node._presence()
    await node._read_cluster()  # the first read: everything is new
    rng = random.Random(1)
    cpu, wall = [], []
    for beat in range(beats):
        moved = {
            f"guest{rng.randrange(players):06d}": f"t{rng.randrange(10**6):012x} other"
            for _ in range(int(players * churn))
        }
        if moved:
            await other.hset(f"{prefix}:seated", mapping=moved)
        started, started_cpu = time.perf_counter(), time.process_time()
        await node._read_cluster()
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started)
    assert len(node.directory.seated) == players, len(node.directory.seated)
    await node.close()
    await other.aclose()
    figures = {"cpu_ms": 1000 * statistics.median(cpu), "wall_ms": 1000 * statistics.median(wall)}
    print(json.dumps(figures))


asyncio.run(main())
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=8000)
    parser.add_argument("--beats", type=int, default=20)
    parser.add_argument("--churn", type=float, default=0.01, help="players moved a beat")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--other", type=Path, help="another checkout to compare with")
    parser.add_argument("--pure", action="store_true", help="redis-py's Python parser too")
    parser.add_argument("--publish", action="store_true", help="time a node's own publication")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    trees = [("this", ROOT)] + ([("other", args.other.resolve())] if args.other else [])
    parsers = ["installed"] + (["pure"] if args.pure else [])
    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    what = "read" if not args.publish else "publish"
    if args.publish:
        print(
            f"{args.players} players seated at this node's tables, a table listed for every "
            f"four; {args.churn:.0%} of them sat down at a new table between two publications; "
            f"{args.beats} publications a run"
        )
    else:
        print(
            f"{args.players} players seated on another node, a table listed for every four; "
            f"{args.churn:.0%} of them moved between beats; {args.beats} beats a run"
        )
    for run in range(1, args.runs + 1):
        for label, tree in trees:
            for kind in parsers:
                prefix = f"bench_directory_{secrets.token_hex(3)}"
                try:
                    done = subprocess.run(
                        [
                            *(sys.executable, "-c", CHILD, str(tree), args.redis_url, prefix),
                            *(str(args.players), str(args.beats), str(args.churn), kind, what),
                        ],
                        capture_output=True,
                        text=True,
                        check=True,
                    )
                finally:
                    delete_keys(args.redis_url, prefix)
                figures = json.loads(done.stdout.strip().splitlines()[-1])
                results.setdefault((label, kind), []).append(figures)
                print(
                    f"run {run} {label:5} {kind:9}: a {what} {figures['cpu_ms']:.2f} ms CPU, "
                    f"{figures['wall_ms']:.2f} ms wall",
                    flush=True,
                )
    for (label, kind), runs in results.items():
        cpu = statistics.median(r["cpu_ms"] for r in runs)
        wall = statistics.median(r["wall_ms"] for r in runs)
        print(f"median {label:5} {kind:9}: a {what} {cpu:.2f} ms CPU, {wall:.2f} ms wall")


if __name__ == "__main__":
    main()

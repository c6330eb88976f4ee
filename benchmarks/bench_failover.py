"""Failover: how long a cluster takes to bring back the tables of a node killed with kill -9
(or stopped with SIGTERM, or drained: ``--stop``).

    .venv/bin/python benchmarks/bench_failover.py [--nodes 3] [--tables 100] [--hands 1]
        [--pace 0.5] [--lease 3.0] [--settle 5] [--stop kill|term|drain]

Starts ``--nodes`` nodes (tests/clusterkit.py: ``guobiao serve`` processes on a fresh
PostgreSQL database of GUOBIAO_TEST_POSTGRES_URL's server and a Redis of its own), then
``--tables`` tables spread round-robin over the nodes (each created through a guest on its
node, so that node owns it): the guest sits, three ``default`` server bots fill the table and
the guest disconnects, so the server plays all four seats, one move every ``--pace`` seconds
(``[timers] unattended_move_seconds``). After ``--settle`` seconds it kills -9 the node that
owns most tables (its /healthz ``tables_owned``; ``--stop term``: SIGTERM, its graceful stop,
which hands its tables over; ``--stop drain``: ``guobiao cluster drain``, which hands them
over and leaves it up) and prints, from the kill (the signal, the drain command's start):

- lease: when the last of its tables had a lease naming a surviving node (Redis
  ``PREFIX:lease:TABLE``);
- owned: when the survivors' /healthz ``tables_owned`` added up to every unfinished table;
- resumed: when the last of its tables had a new action stored after its lease moved (its
  match played on, on a survivor);
- for term and drain, how long the stop or the drain command took, and, from the node's log,
  how many tables it handed over and between its first hand-off and its last;
- how many of the survivors' own tables changed hands meanwhile (none should);

then waits for every match to finish and prints how many did, and how many are exactly the
offline match of their seed (``engine.simulation.play_match``, four default bots) with an
action log 1..n. A benchmark prints figures; it asserts no timing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

import pgkit  # noqa: E402 - needs the tests directory on sys.path
from clusterkit import Cluster, Node, Unavailable  # noqa: E402

from engine.bots import make_bot  # noqa: E402
from engine.rules import MCR  # noqa: E402
from engine.simulation import play_match  # noqa: E402
from server.client import Client  # noqa: E402

POLL = 0.05  # seconds between polls after the kill


async def matches(db: Any) -> dict[str, tuple[int, int, bool]]:
    """table id -> (match id, last stored seq, finished) of every match."""
    rows = await db.fetch(
        "SELECT m.table_id, m.id, COALESCE(MAX(a.seq), 0) AS seq, m.ended_at IS NOT NULL AS done"
        " FROM matches m LEFT JOIN actions a ON a.match_id = m.id GROUP BY m.id"
    )
    return {r["table_id"]: (r["id"], r["seq"], r["done"]) for r in rows}


async def make_table(node: Node, hands: int) -> str:
    """A guest creates a table on ``node``, sits, adds three bots, and goes away."""
    client = await Client.connect(node.url, rate=None)
    try:
        await client.guest()
        table = (await client.create_table(turn_seconds=60, hands=hands)).table
        await client.join_table(table, seat=0)
        await client.add_bots(table, "default")
    finally:
        await client.close()
    return table


async def owned(node: Node) -> int:
    try:
        body = await asyncio.wait_for(node.healthz(), 2)
    except (OSError, TimeoutError, AssertionError):
        return 0
    return int(body.get("cluster", {}).get("tables_owned", 0))


def handoffs(log: str) -> str:
    """How many tables a node's log says it handed over, and over how long (its text lines'
    times: ``2026-12-05 18:26:48,750 INFO guobiao.cluster: cluster: handed table ...``)."""
    times = [
        datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")
        for line in log.splitlines()
        if "cluster: handed table" in line
    ]
    if not times:
        return "no table handed over"
    span = (max(times) - min(times)).total_seconds()
    return f"{len(times)} tables handed over in {1000 * span:.0f} ms (first to last)"


def offline(seed: int, match_id: int, hands: int) -> tuple[list[Any], list[int]]:
    bots = [make_bot("default", seed=p) for p in range(4)]
    match = play_match(seed, bots, MCR, match_id, hands=hands)
    return [json.loads(json.dumps(r.to_dict())) for r in match.records], list(match.scores)


async def check_offline(db: Any, match_id: int, hands: int) -> bool:
    """Whether the stored match is the offline one of its seed, its log 1..n."""
    seed = await db.fetchval("SELECT seed FROM matches WHERE id = $1", match_id)
    scores = await db.fetchval("SELECT final_scores FROM matches WHERE id = $1", match_id)
    records = [
        json.loads(r) if isinstance(r, str) else r
        for r in await db.fetchval(
            "SELECT array_agg(record ORDER BY hand_no) FROM hands WHERE match_id = $1", match_id
        )
        or []
    ]
    seqs = [
        r["seq"]
        for r in await db.fetch(
            "SELECT seq FROM actions WHERE match_id = $1 ORDER BY seq", match_id
        )
    ]
    expected, expected_scores = offline(seed, match_id, hands)
    scores = json.loads(scores) if isinstance(scores, str) else scores
    return (
        records == expected
        and list(scores or []) == expected_scores
        and seqs == list(range(1, len(seqs) + 1))
    )


async def run(args: argparse.Namespace) -> int:
    folder = Path(tempfile.mkdtemp(prefix="bench_failover_"))
    timers = {
        "turn_seconds": 60,
        "min_turn_seconds": 1,
        "max_turn_seconds": 120,
        "disconnected_seconds": 0.2,
        "hand_pause_seconds": 0,
        "unattended_move_seconds": args.pace,
        "restart_grace_seconds": 0.5,
        "claim_window_ms": 0,
    }
    sections = {"accounts": {"guest_per_hour": 100_000, "guest_burst": 100_000}}
    try:
        cluster = await Cluster.create(
            folder, lease_seconds=args.lease, timers=timers, sections=sections
        )
    except Unavailable as exc:
        print(f"bench_failover: {exc}", file=sys.stderr)
        return 2
    db = None
    try:
        started = time.monotonic()
        nodes = await cluster.start(args.nodes)
        print(f"{args.nodes} nodes ready in {time.monotonic() - started:.1f} s (logs in {folder})")
        started = time.monotonic()
        tables: list[str] = []
        for batch in range(0, args.tables, 10):
            made = await asyncio.gather(
                *(
                    make_table(nodes[i % len(nodes)], args.hands)
                    for i in range(batch, min(batch + 10, args.tables))
                )
            )
            tables.extend(made)
        print(f"{len(tables)} tables created in {time.monotonic() - started:.1f} s")
        await asyncio.sleep(args.settle)

        counts = {node.name: await owned(node) for node in nodes}
        victim = max(nodes, key=lambda n: counts[n.name])
        survivors = [n for n in nodes if n is not victim]
        leases = await cluster.redis.command(
            "MGET", *(f"{cluster.prefix}:lease:{t}" for t in tables)
        )
        mine = [t for t, owner in zip(tables, leases, strict=True) if owner == victim.name]
        db = await pgkit.connect(cluster.database_url)
        doing = {"kill": "killing", "term": "stopping (SIGTERM)", "drain": "draining"}
        print(f"tables owned: {counts}; {doing[args.stop]} {victim.name} ({len(mine)} tables)")

        before = await matches(db)
        killed = time.monotonic()
        stopping: asyncio.Task[Any] | None = None
        if args.stop == "kill":
            await victim.kill()
        elif args.stop == "term":
            stopping = asyncio.create_task(victim.stop(timeout=args.timeout))
        else:
            stopping = asyncio.create_task(cluster.cli("drain", victim.name))
        live = [t for t in mine if t in before and not before[t][2]]
        print(f"{len(live)} of them unfinished")
        moved_at: dict[str, int] = {}  # table -> its last stored seq when its lease moved
        stopped_after: float | None = None
        leased: dict[str, float] = {}
        # The survivors' own tables: none should change hands (a survivor busy adopting
        # that failed to renew its own leases would lose them to the others).
        original = {
            t: owner
            for t, owner in zip(tables, leases, strict=True)
            if owner is not None and owner != victim.name
        }
        shifted: set[str] = set()
        resumed: dict[str, float] = {}
        owned_at: float | None = None
        deadline = killed + args.timeout
        while time.monotonic() < deadline:
            now = time.monotonic() - killed
            owners = dict(
                zip(
                    tables,
                    await cluster.redis.command(
                        "MGET", *(f"{cluster.prefix}:lease:{t}" for t in tables)
                    ),
                    strict=True,
                )
            )
            state = await matches(db)
            for table in live:
                owner = owners[table]
                if owner is not None and owner != victim.name and table not in leased:
                    leased[table] = now
                    moved_at[table] = state[table][1]
            for table, first in original.items():  # a survivor's table changing hands
                if owners[table] not in (None, first):
                    shifted.add(table)
            for table in live:
                if table in resumed or table not in moved_at:
                    continue
                if state[table][1] > moved_at[table] or state[table][2]:
                    resumed[table] = now
            if stopping is not None and stopping.done() and stopped_after is None:
                stopped_after = now
            if owned_at is None:
                unfinished = sum(1 for _, _, done in state.values() if not done)
                total = sum([await owned(n) for n in survivors])
                if total >= unfinished:
                    owned_at = now
            if len(leased) == len(live) and len(resumed) == len(live) and owned_at is not None:
                break
            await asyncio.sleep(POLL)

        def figure(times: dict[str, float]) -> str:
            if not times:
                return f"none of {len(live)}"
            values = sorted(times.values())
            return (
                f"last {values[-1]:.2f} s, median {statistics.median(values):.2f} s, "
                f"first {values[0]:.2f} s ({len(values)} of {len(live)} tables)"
            )

        print(f"lease {args.lease:g} s; from the kill:")
        print(f"  lease on a survivor: {figure(leased)}")
        print(
            "  survivors' tables_owned = unfinished tables: "
            + (f"{owned_at:.2f} s" if owned_at is not None else "never")
        )
        print(f"  a new action stored:  {figure(resumed)}")
        print(f"  survivors' own tables that changed hands meanwhile: {len(shifted)}")
        if stopping is not None:
            result = await stopping
            took = "" if stopped_after is None else f" in {stopped_after:.2f} s"
            if args.stop == "term":
                print(f"  the node exited ({result}){took}")
            else:
                said = (result.stdout.strip() or result.stderr.strip()).splitlines()[-1:]
                print(f"  guobiao cluster drain returned {result.returncode}{took}: {said}")
            print(f"  in {victim.name}'s log: {handoffs(victim.log())}")

        finish_deadline = time.monotonic() + args.finish_timeout
        while time.monotonic() < finish_deadline:
            state = await matches(db)
            if all(done for _, _, done in state.values()) and len(state) == len(tables):
                break
            await asyncio.sleep(0.5)
        state = await matches(db)
        finished = [t for t in tables if t in state and state[t][2]]
        print(
            f"matches finished: {len(finished)} of {len(tables)} "
            f"({time.monotonic() - killed:.1f} s after the kill)"
        )
        exact = [await check_offline(db, state[t][0], args.hands) for t in finished]
        moved = [ok for t, ok in zip(finished, exact, strict=True) if t in live]
        print(
            f"exactly as offline: {sum(exact)} of {len(finished)} "
            f"(of the killed node's tables: {sum(moved)} of {len(moved)})"
        )
        return 0 if len(finished) == len(tables) and all(exact) else 1
    finally:
        if db is not None:
            await db.close()
        cluster.close()
        await pgkit.drop_database(cluster.database_url)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--hands", type=int, default=1, help="hands per match")
    parser.add_argument("--pace", type=float, default=0.5, help="seconds per server move")
    parser.add_argument("--lease", type=float, default=3.0, help="[cluster] lease_seconds")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds before the kill")
    parser.add_argument(
        "--stop",
        choices=("kill", "term", "drain"),
        default="kill",
        help="kill -9 (default), SIGTERM (a graceful stop), or guobiao cluster drain",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait to resume")
    parser.add_argument(
        "--finish-timeout", type=float, default=600.0, help="seconds to wait for the ends"
    )
    return asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())

"""``guobiao cluster``: the operator's view of a cluster, and moving tables between nodes.

It talks to Redis (``[cluster] redis_url``, or ``--redis-url``), where the nodes say they are
alive (``PREFIX:node:NAME``) and who owns which table (``PREFIX:lease:TABLE``), and sends the
nodes their orders on the channels they listen to (server/cluster/node.py):

- ``nodes``: every live node, ready or draining, its tables and connections, the coordinator;
- ``tables [NODE]``: the tables and their owners;
- ``move TABLE NODE``: the owner hands the table to NODE (it stops it, NODE adopts it from the
  log; play pauses a moment, nothing ends); waits until NODE owns it;
- ``drain NODE``: NODE hands every table it owns to the others and takes no new ones (its
  ``/readyz`` says 503); it stays up, so its connections carry on, relayed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

import orjson

from server.cli.serve import add_config_options, config_from
from server.cluster.messages import Drain, Move, encode
from server.config import ConfigError

WAIT_SECONDS = 15.0  # how long move and drain wait for the tables to change hands


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "cluster",
        help="a cluster's nodes and tables: list, move a table, drain a node",
        description="The operator's side of cluster mode (docs/deployment.md): reads and "
        "orders the nodes through Redis.",
    )
    common = argparse.ArgumentParser(add_help=False)
    add_config_options(common)
    common.add_argument("--redis-url", metavar="URL", help="[cluster] redis_url")
    common.add_argument("--json", action="store_true", help="print JSON")
    actions = parser.add_subparsers(dest="cluster_action", metavar="ACTION", required=True)
    actions.add_parser("nodes", parents=[common], help="the live nodes")
    tables = actions.add_parser("tables", parents=[common], help="the tables and their owners")
    tables.add_argument("node", nargs="?", help="only this node's")
    move = actions.add_parser("move", parents=[common], help="hand a table to another node")
    move.add_argument("table", help="the table's id")
    move.add_argument("to", metavar="NODE", help="the node to take it")
    drain = actions.add_parser("drain", parents=[common], help="a node hands all its tables away")
    drain.add_argument("node", help="the node to drain")
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        config = config_from(args)
    except ConfigError as exc:
        print(f"guobiao cluster: {exc}", file=sys.stderr)
        return 2
    if not config.cluster.redis_url:
        print(
            "guobiao cluster: no Redis URL: give --redis-url, GUOBIAO_CLUSTER_REDIS_URL or "
            "[cluster] redis_url in --config",
            file=sys.stderr,
        )
        return 2
    try:
        config.check_cluster_client()
    except ConfigError as exc:
        print(f"guobiao cluster: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(_run(args, config.cluster.redis_url, config.cluster.prefix))


async def _run(args: argparse.Namespace, url: str, prefix: str) -> int:
    import redis.asyncio as aioredis  # noqa: PLC0415 (cluster mode only)
    from redis.exceptions import RedisError  # noqa: PLC0415

    client = aioredis.from_url(url, socket_connect_timeout=2.0, socket_timeout=5.0)
    try:
        admin = _Admin(client, prefix)
        action = args.cluster_action
        if action == "nodes":
            return await admin.nodes(args.json)
        if action == "tables":
            return await admin.tables(args.node, args.json)
        if action == "move":
            return await admin.move(args.table, args.to)
        return await admin.drain(args.node)
    except (RedisError, OSError) as exc:
        print(f"guobiao cluster: Redis at {url} failed: {exc}", file=sys.stderr)
        return 1
    finally:
        await client.aclose()


class _Admin:
    def __init__(self, client: Any, prefix: str) -> None:
        self.redis = client
        self.prefix = prefix

    async def _nodes(self) -> dict[str, dict[str, Any]]:
        keys = [k async for k in self.redis.scan_iter(match=f"{self.prefix}:node:*", count=500)]
        found: dict[str, dict[str, Any]] = {}
        for raw in await self.redis.mget(keys) if keys else []:
            if raw is not None:
                info = orjson.loads(raw)
                found[info["node"]] = info
        return dict(sorted(found.items()))

    async def _leases(self) -> dict[str, str]:
        cut = len(self.prefix) + len(":lease:")
        keys = [k async for k in self.redis.scan_iter(match=f"{self.prefix}:lease:*", count=1000)]
        owners = await self.redis.mget(keys) if keys else []
        return {
            _text(k)[cut:]: _text(o) for k, o in zip(keys, owners, strict=True) if o is not None
        }

    async def nodes(self, as_json: bool) -> int:
        nodes = await self._nodes()
        coordinator = await self.redis.get(f"{self.prefix}:coordinator")
        boss = _text(coordinator) if coordinator is not None else None
        if as_json:
            print(orjson.dumps({"nodes": list(nodes.values()), "coordinator": boss}).decode())
            return 0
        if not nodes:
            print(f"no live node (prefix {self.prefix!r})")
            return 1
        print(f"{'node':24} {'state':9} {'tables':>6} {'conns':>6}  {'pid':>7}  host:port")
        for name, info in nodes.items():
            state = "draining" if info.get("draining") else "ready"
            mark = "  (coordinator)" if name == boss else ""
            where = f"{info.get('host')}:{info.get('port')}"
            print(
                f"{name:24} {state:9} {info.get('tables', 0):>6} "
                f"{info.get('connections', 0):>6}  {info.get('pid', ''):>7}  {where}{mark}"
            )
        return 0

    async def tables(self, node: str | None, as_json: bool) -> int:
        leases = await self._leases()
        rows = sorted((t, o) for t, o in leases.items() if node is None or o == node)
        if as_json:
            print(orjson.dumps([{"table": t, "node": o} for t, o in rows]).decode())
            return 0
        for table, owner in rows:
            print(f"{table:16} {owner}")
        print(f"{len(rows)} table(s)")
        return 0

    async def move(self, table: str, to: str) -> int:
        nodes = await self._nodes()
        if to not in nodes:
            print(f"guobiao cluster: no live node {to!r}; live: {', '.join(nodes)}")
            return 1
        if nodes[to].get("draining"):
            print(f"guobiao cluster: node {to!r} is draining: it takes no tables")
            return 1
        owner = await self.redis.get(f"{self.prefix}:lease:{table}")
        if owner is None:
            print(f"guobiao cluster: no node owns table {table!r} (finished, or unknown)")
            return 1
        if _text(owner) == to:
            print(f"table {table} is on {to} already")
            return 0
        message = encode(Move(table, to))
        await self.redis.publish(f"{self.prefix}:to:{_text(owner)}", orjson.dumps(message))
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            now = await self.redis.get(f"{self.prefix}:lease:{table}")
            if now is not None and _text(now) == to:
                print(f"table {table} moved from {_text(owner)} to {to}")
                return 0
            await asyncio.sleep(0.1)
        print(f"guobiao cluster: table {table} is not on {to} after {WAIT_SECONDS:g} s")
        return 1

    async def drain(self, node: str) -> int:
        nodes = await self._nodes()
        if node not in nodes:
            print(f"guobiao cluster: no live node {node!r}; live: {', '.join(nodes)}")
            return 1
        if not [n for n, i in nodes.items() if n != node and not i.get("draining")]:
            print(f"guobiao cluster: no other ready node to take {node}'s tables")
            return 1
        await self.redis.publish(f"{self.prefix}:to:{node}", orjson.dumps(encode(Drain())))
        deadline = time.monotonic() + WAIT_SECONDS
        left = -1
        while time.monotonic() < deadline:
            left = sum(1 for o in (await self._leases()).values() if o == node)
            if left == 0:
                print(f"node {node} drained: it owns no table and takes none (readyz: 503)")
                return 0
            await asyncio.sleep(0.2)
        print(f"guobiao cluster: node {node} still owns {left} table(s) after {WAIT_SECONDS:g} s")
        return 1


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value

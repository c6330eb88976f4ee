"""Creating a table in cluster mode (``Lobby.create`` with a ``Node``): the node takes the
new table's lease in Redis first; when the database then refuses the table's row, no table
was made and that lease goes at once. Before, it stayed held until the keeper's safety net
(unused claims let go after 30 s), and so did the table id.

One ``Node`` in this process on the real test Redis (``redis_url`` / ``prefix``,
tests/server/conftest.py), its app the little it reads, and the lobby a real one on an
in-memory store (tests/fakes.py) that refuses ``save_table`` while told to.
"""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from fakes import FakeStore, StoreUnavailable, until

from server.cluster.node import Node
from server.config import ClusterSection, Config
from server.lobby import Lobby

pytestmark = pytest.mark.asyncio


async def test_a_table_the_database_refused_leaves_no_lease(redis_url: str, prefix: str) -> None:
    refusing = True
    store = FakeStore(fail=lambda method, _: refusing and method == "save_table")
    lobby = Lobby(Config(), store)
    config = ClusterSection(redis_url=redis_url, prefix=prefix)
    node = Node(config, "n1", store=store, lobby=lobby, connections=[], by_cid={})
    lobby.nodes = node
    client = aioredis.from_url(redis_url)
    try:
        with pytest.raises(StoreUnavailable):
            await lobby.create("mcr", None, False)
        assert store.faults == 1 and not lobby.tables
        leases = f"{prefix}:lease:*"
        await until(lambda: not node.owners and not node._claimed, "the node to forget the table")
        await until_empty(client, leases)

        # The database back: a table is made, its lease held while it lasts.
        refusing = False
        table = await lobby.create("mcr", None, False)
        assert await client.get(node.lease_key(table.id)) == b"n1"
        assert node.owners == {table.id: "n1"}
        await table.stop()
    finally:
        await client.aclose()
        await node.close()  # its background tasks first: none reconnects after


async def until_empty(client: aioredis.Redis, pattern: str) -> None:
    """Wait (5 s at most: the keeper's net would take 30) until no key matches ``pattern``
    (the release runs as a task of its own)."""
    for _ in range(250):
        if not [key async for key in client.scan_iter(match=pattern)]:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"keys {pattern} still held: the lease was not let go")

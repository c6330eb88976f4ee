"""The node's Redis client (``server.cluster.state.node_client``) against the test Redis: more
commands at once than it has connections wait for one, instead of failing."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from server.cluster.state import REDIS_CONNECTIONS, node_client


@pytest.mark.asyncio
async def test_more_commands_at_once_than_connections_wait_for_one(
    redis_url: str, prefix: str
) -> None:
    # Each command holds its connection a little (a blocking pop that times out); half as
    # many again as the client's connections are sent at once. redis-py's own pool refused
    # the 101st (MaxConnectionsError), which the node's beat took for Redis unreachable.
    client = node_client(redis_url)
    try:
        popped = await asyncio.gather(
            *(
                client.blpop([f"{prefix}:nothing:{i}"], timeout=0.3)
                for i in range(REDIS_CONNECTIONS * 3 // 2)
            )
        )
        assert popped == [None] * (REDIS_CONNECTIONS * 3 // 2)
        pool = client.connection_pool
        assert isinstance(pool, aioredis.BlockingConnectionPool)
        assert pool.max_connections == REDIS_CONNECTIONS
    finally:
        await client.aclose()

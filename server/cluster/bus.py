"""The messages between nodes: Redis pub/sub, in order, reconnecting on its own.

Every node listens on two channels, its own (``PREFIX:to:NODE``) and everyone's
(``PREFIX:all``). A message is one of the typed messages of ``server.cluster.messages``, sent
as a small JSON object (orjson); one that cannot be read is logged and dropped. ``Bus.send``
never blocks: messages queue in memory and one sender task publishes them, many per round
trip on a connection of its own, strictly in the order they were queued, so what one node
sends another arrives in order. Consecutive messages to the same channel go as one
publication, a JSON array of them (``PACK_MOST`` at most), where every receiver reads arrays
(``packs``; a node of the previous release reads one object a publication): a relayed
table's updates cost one Redis command and one pub/sub message a batch, not one each.

Pub/sub delivers at most once: while Redis is unreachable what is queued is dropped
(counted, logged) and, once Redis answers again, ``on_up`` is called so the node can bring
everyone back in step (its connections re-attach to their tables, the owners send full
views; nothing stored depends on a message between nodes).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, cast

import orjson
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from server.cluster.messages import BadMessage, Message, decode, encode
from server.tasks import stop_task

log = logging.getLogger("guobiao.cluster")

MAX_QUEUED = 100_000  # messages waiting for Redis before the oldest are dropped
PACK_MOST = 256  # messages in one publication at most
RETRY_FIRST, RETRY_MAX = 0.1, 2.0  # seconds between reconnection attempts


class Bus:
    """This node's pub/sub: ``send``/``broadcast`` out, ``handler`` for what comes in."""

    def __init__(
        self,
        redis: aioredis.Redis,
        prefix: str,
        node: str,
        handler: Callable[[Message], Awaitable[None]],
        on_up: Callable[[], Awaitable[None]],
        *,
        packs: Callable[[bytes], bool] = lambda channel: False,
    ) -> None:
        self.redis = redis
        self.packs = packs  # whether every receiver on a channel reads packed publications
        self.prefix = prefix
        self.node = node
        self.handler = handler
        self.on_up = on_up
        self.up = False  # whether the subscription is live
        self.dropped = 0  # messages lost while Redis was unreachable
        self._queue: list[tuple[bytes, bytes]] = []
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._publisher: Any = None  # the sender's connection (``_publish``), once opened

    def channel(self, node: str) -> bytes:
        return f"{self.prefix}:to:{node}".encode()

    @property
    def everyone(self) -> bytes:
        return f"{self.prefix}:all".encode()

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._listen(), name="cluster-listen"),
            asyncio.create_task(self._send_all(), name="cluster-send"),
        ]

    async def close(self) -> None:
        await self.flush()
        for task in self._tasks:
            await stop_task(task)
        if self._publisher is not None:
            await self._publisher.disconnect()

    # ---------------------------------------------------------- outgoing ---

    def send(self, node: str, message: Message) -> None:
        self._put(self.channel(node), message)

    def broadcast(self, message: Message) -> None:
        self._put(self.everyone, message)

    def _put(self, channel: bytes, message: Message) -> None:
        if len(self._queue) >= MAX_QUEUED:
            self._queue.pop(0)
            self.dropped += 1
        self._queue.append((channel, orjson.dumps(encode(message))))
        self._wake.set()

    async def flush(self, timeout: float = 2.0) -> None:
        """Wait (``timeout`` seconds at most) until what is queued has been published."""
        with contextlib.suppress(asyncio.TimeoutError):
            async with asyncio.timeout(timeout):
                while self._queue:
                    await asyncio.sleep(0.01)

    async def _send_all(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                batch, self._queue = self._queue, []
                # Tried twice: after a Redis restart the first use of a connection fails (it
                # was cut), the next reconnects; the order is kept either way.
                for attempt in (1, 2):
                    try:
                        await self._publish(self._packed(batch))
                        break
                    except (RedisError, OSError) as exc:
                        if attempt == 2:
                            self.dropped += len(batch)
                            log.warning(
                                "cluster: %s message(s) lost, Redis failed: %r", len(batch), exc
                            )
                        await asyncio.sleep(RETRY_FIRST)

    async def _publish(self, publications: list[tuple[bytes, bytes]]) -> None:
        """``publications`` in one round trip, on a connection of the sender's own: written
        as one packet, then each reply read. (Through redis-py's pipeline a round trip of one
        publication cost 100-125 us of CPU, the connection taken from the pool and given
        back, against 60-70 here, ``benchmarks/bench_bus.py``; relayed tables make one a
        turn of the event loop.) A connection that failed is closed; the next round trip
        opens it again."""
        conn = self._publisher
        if conn is None:
            pool: Any = self.redis.connection_pool  # (redis-py does not type it)
            conn = self._publisher = pool.make_connection()
        try:
            if not conn.is_connected:
                await conn.connect()
            commands = [("PUBLISH", channel, data) for channel, data in publications]
            await conn.send_packed_command(conn.pack_commands(commands), check_health=False)
            for _ in commands:
                await conn.read_response()
        except BaseException:
            await conn.disconnect()
            raise

    def _packed(self, batch: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        """``batch``'s publications, in its order: each run of messages to one channel whose
        receivers read packs as one JSON array (``PACK_MOST`` at most), the others alone."""
        out: list[tuple[bytes, bytes]] = []
        run: list[bytes] = []
        channel = b""
        for to, data in batch:
            if run and (to != channel or len(run) == PACK_MOST):
                out.append((channel, b"[" + b",".join(run) + b"]"))
                run = []
            if self.packs(to):
                channel = to
                run.append(data)
            else:
                out.append((to, data))
        if run:
            out.append((channel, b"[" + b",".join(run) + b"]"))
        return out

    # ---------------------------------------------------------- incoming ---

    async def _listen(self) -> None:
        wait = RETRY_FIRST
        while True:
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel(self.node), self.everyone)
                if not self.up:
                    self.up = True
                    wait = RETRY_FIRST
                    log.info("cluster: subscribed to Redis as %s", self.node)
                    await self.on_up()
                while True:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is None or message.get("type") != "message":
                        continue
                    data = message["data"]
                    try:
                        read = orjson.loads(data)
                    except orjson.JSONDecodeError:
                        log.error("cluster: a message that is not JSON: %.200r", data)
                        continue
                    for item in read if isinstance(read, list) else (read,):
                        await self._handle(item)
            except (RedisError, OSError) as exc:
                if self.up:
                    log.error("cluster: lost Redis (%r); retrying", exc)
                self.up = False
                await asyncio.sleep(wait)
                wait = min(wait * 2, RETRY_MAX)
            finally:
                with contextlib.suppress(Exception):
                    # Any: redis-py types aclose from 8.2 on, not before (pyproject: >=5.0)
                    await cast(Any, pubsub).aclose()

    async def _handle(self, item: object) -> None:
        """One message read: typed and handed to the handler; refused with a log line."""
        try:
            body = decode(item)
        except BadMessage as exc:
            log.error("cluster: a message refused: %s", exc)
            return
        try:
            await self.handler(body)
        except Exception:
            log.exception("cluster: handling %.200r failed", body)

"""What the parts of a cluster node share: its state, its Redis keys, its tasks.

A node (``server.cluster.node.Node``) is one object made of parts, one concept each:
``leases`` (which leases it holds and trusts), ``relaying`` (a connection's messages to the
owner of its table, and re-attaching connections when a table moves), ``inbox`` (what the
other nodes' messages do here), and the node itself (presence, the beat, the coordinator,
adoption and hand-off). They share the state set up here, described where it is set.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from collections.abc import Collection, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis

from server.cluster.bus import Bus
from server.cluster.directory import Directory
from server.cluster.keeper import LeaseKeeper, keeper_client
from server.cluster.messages import SPEAKS, Message
from server.cluster.peers import RemotePeer
from server.config import ClusterSection
from server.ladder.queue import Matchmaker
from server.lobby import Lobby
from server.nodes import Here
from server.table import Table
from server.tournaments.host import Tournaments

log = logging.getLogger("guobiao.cluster")

CONNECT_TIMEOUT, REPLY_TIMEOUT = 1.0, 2.0  # seconds, of the node's Redis clients
KEEPER_STOP_SECONDS = CONNECT_TIMEOUT + REPLY_TIMEOUT + 1.0  # the keeper's last round ends
# Commands of the node in flight at once, each on a connection of its own; one more waits for
# a free connection (up to REPLY_TIMEOUT). redis-py's own pool refuses it instead
# (``MaxConnectionsError``, from 100 on since redis-py 8): at 8,000 players on two workers a
# burst of lobby commands took the beat's connection, and the node took Redis for
# unreachable and paused its relays.
REDIS_CONNECTIONS = 128


def node_client(url: str) -> aioredis.Redis:
    """The node's Redis client (its event loop's): timeouts ``CONNECT_TIMEOUT`` and
    ``REPLY_TIMEOUT``, at most ``REDIS_CONNECTIONS`` commands at once, the next waiting."""
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=REDIS_CONNECTIONS,
        timeout=REPLY_TIMEOUT,
        socket_connect_timeout=CONNECT_TIMEOUT,
        socket_timeout=REPLY_TIMEOUT,
    )
    return aioredis.Redis.from_pool(pool)


# The leases are renewed by server.cluster.keeper (renew ours, take back a lapsed one that was
# ours, report another node's). Delete a lease only if it is ours.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


ADOPTING_AT_ONCE = 8  # tables restored from their logs at the same time


class NodeState:
    """A node's state and keys (the parts of ``Node`` build on it)."""

    clustered = True
    id_bytes = 6  # (several nodes pick ids at once: a lease on each refuses one taken)

    def __init__(
        self,
        config: ClusterSection,
        name: str,
        *,
        store: Any,
        lobby: Lobby,
        connections: Collection[Here],
        by_cid: Mapping[str, Here],
        matchmaker: Matchmaker | None = None,
        tournaments: Tournaments | None = None,
    ) -> None:
        """``name``: this node's; ``store``: the database's (``server.db.store.Store``);
        ``lobby``: this node's tables; ``connections`` and ``by_cid``: this node's
        connections (kept up to date by the app); ``matchmaker`` and ``tournaments``: the
        services this node runs while it is the coordinator."""
        self.store = store
        self.lobby = lobby
        self.connections = connections
        self.by_cid = by_cid
        self.matchmaker = matchmaker
        self.tournaments = tournaments
        self.prefix = config.prefix
        self.lease_seconds = config.lease_seconds
        self.lease_ms = int(config.lease_seconds * 1000)
        self.name = name
        self.incarnation = secrets.token_hex(4)  # this run: connection ids are unique
        self.redis = node_client(config.redis_url)
        # Our presence and leases, renewed from a thread of their own while the loop runs.
        self.keeper = LeaseKeeper(
            keeper_client(
                config.redis_url, connect_timeout=CONNECT_TIMEOUT, reply_timeout=REPLY_TIMEOUT
            ),
            owner=self.name,
            presence_key=self.node_key,
            lease_seconds=config.lease_seconds,
            on_lost=self._leases_lost,
            round_seconds=CONNECT_TIMEOUT + REPLY_TIMEOUT,
            on_round=self._renewed,
        )
        self._leases: set[str] = set()  # the lease keys we hold (the keeper renews them)
        # Until when (monotonic) each lease is surely ours: a lease after it was last taken
        # or renewed (``LEASE_TRUST``). A lease that lapsed and was taken back is not trusted
        # until the database says its table's fencing token is still ours (``_suspect``).
        self._held_until: dict[str, float] = {}
        self._suspect: set[str] = set()
        self._renewed_at: dict[str, float] = {}  # when a round last renewed each lease
        self._checking = False  # a check of suspect leases is running
        self._lease_news: list[asyncio.Future[None]] = []  # tables waiting to know (_owned)
        # Messages for tables no node runs right now (one let it go, the next restores it),
        # each waiting for the new owner's word (``moved``): table -> (since, deliver(owner)).
        self.unowned: dict[str, list[tuple[float, Any]]] = {}
        self.stale_words = 0  # words of an owner older than one heard of, dropped
        # Since Redis came back, everyone has been told what we own (``_on_up``).
        self.caught_up = False
        # Our connections sent again to another node's table (``reattach``): (connection id,
        # table). Messages may have been lost before: until the table's full view comes, its
        # updates are dropped (one after a gap would show a move without what came before).
        self.resyncing: set[tuple[str, str]] = set()
        self._claimed: dict[str, float] = {}  # new table -> when its lease was taken
        self.bus = Bus(
            self.redis, self.prefix, self.name, self._on_message, self._on_up, packs=self._packs
        )
        # What the nodes publish for each other: tables, players, creators, presence.
        self.directory = Directory(self.redis, self.prefix, self.name, lobby, self._spawn)
        # The channels whose every listener reads packed publications, as of which presences.
        self._packing: set[bytes] = set()
        self._packing_of: dict[str, dict[str, Any]] | None = None
        self.started = datetime.now(UTC)
        self.owners: dict[str, str] = {}  # table -> its owner, as last heard
        self.tokens: dict[str, int] = {}  # table -> the fencing token its owner last announced
        # Our connections sent to another node's table (``reattach``) that it has not said it
        # took in (``attached``): (connection id, table) -> when last sent. Sent again from the
        # beat until answered: a message between nodes may be lost (Redis restarting, a node
        # not subscribed again yet), and a seated player left out would wait for her turn.
        # The value: when first sent, when last sent.
        self.reattaching: dict[tuple[str, str], tuple[float, float]] = {}
        self.peers: dict[tuple[str, str, str | None], RemotePeer] = {}
        self.coordinator: str | None = None
        self.is_coordinator = False
        self.draining = False
        self.adopting: set[str] = set()
        # Players whose table the queue made here and handed on (``Node.place``) -> (the
        # table, until when): seated there before its owner publishes it.
        self.placed: dict[str, tuple[str, float]] = {}
        # Monotonic: no adoption, and no node taken for dead, before (a lease after Redis
        # came back: every presence may have been lost, and each node writes its own again).
        self.scan_after = 0.0
        self.redis_ok = False
        self.redis_seen = False  # the beat reached Redis once: a later reach is a return
        self.port: int | None = None
        self._counter = itertools.count(1)
        self._tick: asyncio.Task[None] | None = None
        self._release = self.redis.register_script(_RELEASE)
        self._background: set[asyncio.Task[Any]] = set()
        # Adoptions under way at once, orphans and tables handed to us alike: each holds a
        # Redis connection and restores a table from the database.
        self.adoption_room = asyncio.Semaphore(ADOPTING_AT_ONCE)
        self._replies: dict[str, asyncio.Future[Any]] = {}  # request id -> its answer

    # ------------------------------------------------------------ keys ---

    def lease_key(self, table_id: str) -> str:
        return f"{self.prefix}:lease:{table_id}"

    @property
    def node_key(self) -> str:
        return f"{self.prefix}:node:{self.name}"

    @property
    def coordinator_key(self) -> str:
        return f"{self.prefix}:coordinator"

    def new_cid(self) -> str:
        return f"{self.incarnation}.{next(self._counter)}"

    def _packs(self, channel: bytes) -> bool:
        """Whether every node listening on ``channel`` reads packed publications (``Bus``):
        a node's own channel if its presence says so, everyone's if every live node's does."""
        live = self.directory.live
        if live is not self._packing_of:  # (read again at each beat)
            self._packing_of = live
            self._packing = {self.bus.channel(n) for n in self.directory.speakers(SPEAKS)}
            if self.directory.everyone_speaks(SPEAKS):
                self._packing.add(self.bus.everyone)
        return channel in self._packing

    def _spawn(self, coro: Any, name: str) -> None:
        task = asyncio.create_task(coro, name=name)
        self._background.add(task)
        task.add_done_callback(self._background_done)

    def _background_done(self, task: asyncio.Task[Any]) -> None:
        """A background task ended: forgotten, its failure logged now (not as asyncio's
        "never retrieved" whenever the task is collected)."""
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("cluster: %s failed", task.get_name(), exc_info=task.exception())

    def _local_table(self, table_id: str) -> Table | None:
        return self.lobby.tables.get(table_id)

    if TYPE_CHECKING:  # (defined by the parts of ``Node``, which call each other)

        def _leases_lost(self, keys: tuple[str, ...]) -> None: ...

        def _renewed(
            self, began: float, renewed: tuple[str, ...], retaken: tuple[str, ...]
        ) -> None: ...

        async def _on_message(self, message: Message) -> None: ...

        async def _on_up(self) -> None: ...

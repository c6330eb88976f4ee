"""One node of a cluster: presence, table leases, failover, and relaying to other nodes.

Several ``guobiao serve`` processes (the workers of one machine, or several machines) share
one database, the system of record, and one Redis, which carries who is alive, who owns what,
and the messages between them (``server.cluster.bus``). Nothing a client sees depends on
Redis having kept anything: every table can be rebuilt from the database.

Ownership. Each open table is owned by exactly one node, which runs its owner task as a single
process does (``server.table``). The owner holds a lease, the Redis key ``PREFIX:lease:TABLE``
(its name, expiring after ``lease_seconds``), renewed every third of that from a thread of its
own (``server.cluster.keeper``: a busy event loop does not make a live node lose its tables;
a stuck one does, the keeper's watchdog stopping). Taking a table over increments the
table's fencing token in the database (``Store.take_table``); the owner's every
append to the action log, save of the table's row and new match carries the token it took the
table with (``FencedStore``) and the database refuses an older one (``Fenced``), in the same
transaction, holding the table's row. So a node that was paused (SIGSTOP, a long GC, a VM
migration) or cut off, and comes back after its lease moved, cannot write one more action:
its write is refused and it drops the table. Nor does it send anything first: a node trusts
a lease only for a lease after the keeper last renewed it (a lapsed lease the keeper took
back, only once the database says no other node took the table meanwhile), and only while
its messages reach the others (``Bus.up``); a table whose lease it does not trust waits, doing
and sending nothing, its clocks stopped (``server.table.Table._owned``), until the node knows
(a renewal: it goes on; another node holds the lease: it is dropped). So while Redis cannot be
reached every table pauses, its relayed players missing nothing.

Failover. Every node scans, every third of a lease, the open tables in the database whose
lease has lapsed (their owner died or stopped renewing) and adopts its share of them: lease
(``SET NX``), token, restore from the log as a restart does (``Lobby.adopt``), then it tells
everyone (``moved``). A graceful stop (SIGTERM) or ``guobiao cluster drain`` hands each table
to another node instead (the owner stops it first, so the adopter reads the whole log).

Relaying. A connection may be on any node. Its node sends what the client says to a table to
the table's owner (``in``: the frame as received, with who sent it); the owner acts for it
through a ``RemotePeer`` whose ``send`` goes back to the connection's node (``out``), in order,
with the table and its fencing token: a word of an owner older than the newest one the
receiving node has heard of (sent before it learnt it lost the table, or queued before it was
paused) is dropped. When a table moves, its new owner says so (``moved``, with its fencing
token, an older owner's word being ignored, and its seated players) and every node re-attaches
its connections at the table, and those of its seated players (one who came back while no
node ran the table found her seat nowhere), to it (``reattach``: seated players get their seat
back with a full view, spectators watch again). The owner answers ``attached``; a re-attach
not answered within a third of a lease (lost while Redis restarted, say) is sent again, to the
lease's holder. A message for a table between two owners (let go by one, being restored by
the next) waits for the new owner's word and goes on to it (``unowned``): a connection never
loses its table meanwhile. The ladder queue and the tournaments' sessions run on one node,
the coordinator (``PREFIX:coordinator``, leased the same way); the others relay their
players' requests to it.

Who created each of a node's tables still waiting for players (its account and address,
``Lobby.creators``) is published in ``PREFIX:waiting`` with its lobby, so that every node
counts them all against the waiting-table limits (``Lobby._check_room``): each node's as it
published them (soon after a change, and at each beat), read at the reader's beat.

Presence: ``PREFIX:node:NAME`` (JSON, written at each beat, its expiry renewed by the keeper
like a lease) lists the live nodes; a remote peer of a node that is gone is treated as a
closed connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import os
import random
import secrets
import socket
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, assert_never, cast

import orjson
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from server import protocol
from server.cluster.bus import Bus
from server.cluster.keeper import LeaseKeeper, keeper_client
from server.cluster.messages import (
    Attach,
    Attached,
    Back,
    Bye,
    Coordinator,
    Drain,
    FindSeat,
    Gone,
    In,
    Message,
    Move,
    Moved,
    Out,
    Prompt,
    Reattach,
    Released,
    Replace,
    Reply,
    Sender,
    Service,
    ServiceGone,
    TableFinished,
    Take,
)
from server.config import ClusterSection
from server.db.errors import Fenced
from server.db.store import TableRow
from server.errors import ServerError
from server.ladder.queue import Matchmaker
from server.lobby import Lobby
from server.nodes import Creator, Here
from server.protocol import ProtocolError, error
from server.table import (
    BackInput,
    GoneInput,
    LobbyError,
    ReplaceInput,
    SyncInput,
    Table,
    WatchInput,
    input_for,
    speaking,
)
from server.tournaments.host import Tournaments

log = logging.getLogger("guobiao.cluster")

ADOPTING_AT_ONCE = 8  # tables restored from their logs at the same time
PUBLISH_SOON = 0.05  # seconds: a change of seats is published this soon
CONNECT_TIMEOUT, REPLY_TIMEOUT = 1.0, 2.0  # seconds, of the node's Redis clients
KEEPER_STOP_SECONDS = CONNECT_TIMEOUT + REPLY_TIMEOUT + 1.0  # the keeper's last round ends
# A table's lease is taken (``claim_new``) before the lobby saves its row and lists it; the
# lobby does not say when that save fails. A claimed table not in the lobby after this long
# (far longer than one save) was never created: its lease is let go, not renewed for ever.
CLAIM_SECONDS = 30.0
REATTACH_SECONDS = 60.0  # a re-attach no owner answered is sent again until this old
# A lease is trusted for this part of it after the round that renewed it began (Redis renews
# at that time or later; a margin for the clocks): past that the node may have lost it.
LEASE_TRUST = 0.9
UNOWNED_SECONDS = 30.0  # a message for a table no node runs waits this long for an owner
# The leases are renewed by server.cluster.keeper (renew ours, take back a lapsed one that was
# ours, report another node's). Delete a lease only if it is ours.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


# ------------------------------------------------------------ fenced store ---


class FencedStore:
    """A table's store in cluster mode: the database's, with the table's fencing token on
    every write that must be the owner's (``append_action``, ``save_table``,
    ``create_match``). A refused write (``Fenced``) tells the node, which drops the table.
    It is also the table's lease (``held``, ``regained``: ``server.table.Lease``)."""

    def __init__(self, store: Any, table_id: str, token: int, node: Node) -> None:
        self._store = store
        self.table_id = table_id
        self.token = token
        self._node = node
        self.key = node.lease_key(table_id)

    # The table's lease (``server.table.Lease``): whether this node still runs it.

    def held(self) -> bool:
        return self._node.lease_held(self.key)

    async def regained(self) -> bool:
        return await self._node.until_held(self.key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def append_action(self, *args: Any, **kwargs: Any) -> None:
        try:
            await self._store.append_action(*args, fence=(self.table_id, self.token), **kwargs)
        except Fenced:
            self._node.fenced(self.table_id, self.token)
            raise

    async def save_table(self, row: TableRow) -> None:
        try:
            await self._store.save_table(row, fence=self.token)
        except Fenced:
            self._node.fenced(self.table_id, self.token)
            raise

    async def create_match(self, *args: Any, **kwargs: Any) -> int:
        try:
            match_id: int = await self._store.create_match(*args, fence=self.token, **kwargs)
        except Fenced:
            self._node.fenced(self.table_id, self.token)
            raise
        return match_id


# ------------------------------------------------------------- remote peer ---


class RemotePeer:
    """A connection of another node, as this node's tables and services see it: what they
    send it goes back to its node, in order."""

    def __init__(
        self,
        node: Node,
        home: str,
        cid: str,
        *,
        username: str | None,
        guest: bool,
        address: str,
        version: int,
    ) -> None:
        self._node = node
        self.home = home  # the node the connection is on
        self.cid = cid
        self.username = username
        self.guest = guest
        self.address = address
        self.version = version  # the protocol version it speaks
        self.tables: set[str] = set()  # this node's tables it was sent to

    @property
    def sender(self) -> Sender:
        """The connection as the sender of a message relayed for it."""
        return Sender(self.home, self.cid, self.username, self.guest, self.address, self.version)

    def send(self, text: str) -> None:
        stamp = _stamp()
        if stamp is None:
            self._node.bus.send(self.home, Out(self.cid, text))
        else:
            self._node.bus.send(self.home, Out(self.cid, text, *stamp))

    def prompted(self, table: str, seq: int) -> None:
        stamp = _stamp()
        if stamp is None:
            self._node.bus.send(self.home, Prompt(self.cid, table, seq))
        else:
            self._node.bus.send(self.home, Prompt(self.cid, stamp[0], seq, stamp[1]))

    def attach(self, table_id: str) -> None:
        """A table of this node took the connection in (the queue, a tournament seated it)."""
        self.tables.add(table_id)
        self._node.bus.send(self.home, Attach(self.cid, table_id, self._node.name))


def _stamp() -> tuple[str, int] | None:
    """The table speaking (sending from its task, ``server.table.speaking``) and the
    fencing token it runs with, which its words carry: a node that has heard of a newer
    owner drops them. None for a word of no table's (the queue's, a tournament's)."""
    table = speaking.get()
    lease = table.lease if table is not None else None
    if table is not None and lease is not None:
        return table.id, lease.token
    return None


@dataclass(frozen=True, slots=True)
class _Finished:
    """A tournament table finished elsewhere, as ``Tournaments.table_finished`` reads it."""

    id: str
    tournament: tuple[int, int, int]


# -------------------------------------------------------------------- node ---


class Node:
    """This process as a member of the cluster (``[cluster] redis_url`` set)."""

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
        self.redis = aioredis.from_url(
            config.redis_url, socket_connect_timeout=CONNECT_TIMEOUT, socket_timeout=REPLY_TIMEOUT
        )
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
        self.bus = Bus(self.redis, self.prefix, self.name, self._on_message, self._on_up)
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
        self.live: dict[str, dict[str, Any]] = {}  # node name -> its presence
        self.listings: dict[str, dict[str, Any]] = {}  # other nodes' public tables
        self.seated: dict[str, str] = {}  # username -> table, all nodes
        self._published_seated: dict[str, str] = {}
        self.waiting: dict[str, Creator] = {}  # other nodes' waiting tables -> their creator
        self._published_waiting: dict[str, bytes] = {}
        self._published_listing: dict[str, bytes] = {}
        self.coordinator: str | None = None
        self.is_coordinator = False
        self.draining = False
        self.adopting: set[str] = set()
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
        self._replies: dict[str, asyncio.Future[Any]] = {}  # request id -> its answer
        self._publish_soon: asyncio.TimerHandle | None = None
        self._publishing = asyncio.Lock()

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

    # ------------------------------------------------------- lifecycle ---

    async def start(self, port: int) -> None:
        """Join: start the lease keeper, subscribe, say we are here, and start the beat that
        publishes and adopts. Redis being down is no error here: the node retries and is not
        ready meanwhile."""
        self.port = port
        self.keeper.start()  # first: the first beat may adopt tables, leases to renew
        self.bus.start()
        self.scan_after = time.monotonic()
        await self._beat()
        self._tick = asyncio.create_task(self._beat_forever(), name="cluster-beat")

    async def close(self) -> None:
        """Leave: stop beating and renewing, say goodbye (our presence key goes)."""
        if self._tick is not None:
            self._tick.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._tick
        for task in list(self._background):
            task.cancel()
        await self._give_up_coordinator()
        await self.bus.close()
        await self.keeper.close(KEEPER_STOP_SECONDS)
        with contextlib.suppress(RedisError, OSError):
            await self.redis.delete(self.node_key)
        await self.redis.aclose()

    def _spawn(self, coro: Any, name: str) -> None:
        task = asyncio.create_task(coro, name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # ------------------------------------------------------------ beat ---

    async def _beat_forever(self) -> None:
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            try:
                await self._beat()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("cluster: the beat failed")

    async def _beat(self) -> None:
        self._let_go_stray_claims()
        try:
            await self._presence()
            await self._publish_lobby()
            await self._read_cluster()
            await self._coordinate()
        except (RedisError, OSError) as exc:
            if self.redis_ok:
                log.error("cluster: Redis unreachable (%r): play goes on, relays pause", exc)
            self.redis_ok = False
            return
        if not self.redis_ok and self.redis_seen:  # back: the others' presence may be too late
            self.scan_after = max(self.scan_after, time.monotonic() + self.lease_seconds)
        self.redis_ok = self.redis_seen = True
        if time.monotonic() >= self.scan_after:
            # A node whose presence is gone died: its players' seats are theirs no more
            # until they come back. Not right after Redis came back: a node that had not
            # written its presence again yet would lose every player it relays.
            self._forget_dead_peers()
        self._forget_owners()
        await self._reattach_again()
        await self._unowned_too_long()
        if not self.draining and time.monotonic() >= self.scan_after:
            await self._adopt_orphans()

    async def _presence(self) -> None:
        lobby = self.lobby
        info = {
            "node": self.name,
            "incarnation": self.incarnation,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "port": self.port,
            "started": self.started.isoformat().replace("+00:00", "Z"),
            "draining": self.draining,
            "tables": len(lobby.tables) if lobby is not None else 0,
            "connections": len(self.connections),
            "coordinator": self.is_coordinator,
        }
        await self.redis.set(self.node_key, orjson.dumps(info), px=self.lease_ms)

    # ---------------------------------------------------------- leases ---

    @property
    def leases_held(self) -> int:
        """Our tables' leases (created, adopted or being adopted, set aside)."""
        return len(self._leases - {self.coordinator_key})

    def _hold(self, key: str, taken: float) -> None:
        """A lease just taken (``SET NX``, asked at ``taken``): ours for a lease from then;
        the keeper renews it from its next round on."""
        self._leases.add(key)
        self.keeper.hold(self._leases)
        self._trust(key, taken)

    def _forget_lease(self, key: str) -> None:
        """No more renewing a lease another node holds now (a table waiting to know whether
        it is ours hears it is not)."""
        self._leases.discard(key)
        self.keeper.hold(self._leases)
        self._held_until.pop(key, None)
        self._renewed_at.pop(key, None)
        self._suspect.discard(key)
        self._tell_lease_news()

    def _trust(self, key: str, since: float) -> None:
        until = since + self.lease_seconds * LEASE_TRUST
        if until > self._held_until.get(key, 0.0):
            self._held_until[key] = until

    def _trusted(self, key: str) -> bool:
        """Whether the lease ``key`` was taken or renewed less than a lease ago (and not
        merely taken back after it lapsed): it is surely ours."""
        return time.monotonic() < self._held_until.get(key, 0.0)

    def lease_held(self, key: str) -> bool:
        """Whether this node may run the table of lease ``key`` now: the lease surely ours,
        and Redis reachable with everyone told, since it came back, what we own (a table
        whose relayed players cannot be reached, or have not been sent it again, must not
        play on without them)."""
        return self.bus.up and self.caught_up and self._trusted(key)

    async def until_held(self, key: str) -> bool:
        """Wait until the lease ``key`` is surely ours again (True), or is ours no more
        (False: lost or let go; its table is being dropped)."""
        while key in self._leases:
            if self.lease_held(key):
                return True
            news = asyncio.get_running_loop().create_future()
            self._lease_news.append(news)
            await news
        return False

    def _tell_lease_news(self) -> None:
        """Something changed what is known of our leases: those waiting look again."""
        waiting, self._lease_news = self._lease_news, []
        for news in waiting:
            if not news.done():
                news.set_result(None)

    def _renewed(self, began: float, renewed: tuple[str, ...], retaken: tuple[str, ...]) -> None:
        """A keeper round that began at ``began`` renewed ``renewed`` and took ``retaken``
        back (they had lapsed: another node may have taken their tables meanwhile and let
        them go; ours again only once the database says so, ``_check_suspects``)."""
        for key in renewed:
            if key in self._leases:
                self._renewed_at[key] = began
                if key not in self._suspect:
                    self._trust(key, began)
        for key in retaken:
            if key == self.coordinator_key:
                self._trust(key, began)  # (no fencing token: the services are not fenced)
            elif key in self._leases:
                self._renewed_at[key] = began
                self._suspect.add(key)
        if self._suspect and not self._checking:
            self._checking = True
            self._spawn(self._check_suspects(), "check-leases")
        self._tell_lease_news()

    async def _check_suspects(self) -> None:
        """The leases that lapsed and were taken back: each table's fencing token in the
        database still ours, the lease is trusted again; another's, the table is dropped (a
        node took it over while our lease had lapsed). Asked again at the next round if the
        database fails or a table is still being adopted."""
        try:
            cut = len(self.prefix) + len(":lease:")
            tables = {key[cut:]: key for key in self._suspect}
            fences = await self.store.table_fences(sorted(tables))
            for table_id, key in tables.items():
                token = self._token(table_id)
                if key not in self._suspect or token is None:
                    continue  # let go meanwhile, or still being adopted
                if fences.get(table_id) == token:
                    self._suspect.discard(key)
                    self._trust(key, self._renewed_at.get(key, 0.0))
                    self._announce(table_id, token)  # (nodes that heard nothing since)
                else:
                    self.fenced(table_id, token)
        except Exception:
            log.exception("cluster: checking the fencing tokens of lapsed leases failed")
        finally:
            self._checking = False
            self._tell_lease_news()

    async def _release_lease(self, key: str) -> None:
        """Give a lease of ours up: out of the keeper's set, and only once no round that
        may still renew it is in flight (it would take the lapsed lease back) is it
        deleted, if it is still ours."""
        self._forget_lease(key)
        await self.keeper.settle()
        with contextlib.suppress(RedisError, OSError):
            await self._release(keys=[key], args=[self.name])

    def _leases_lost(self, keys: tuple[str, ...]) -> None:
        """The keeper found these leases held by another node (we were cut off or stuck
        past them): the tables are dropped, the coordinator's services stopped."""
        cut = len(self.prefix) + len(":lease:")
        for key in keys:
            self._forget_lease(key)
            if key == self.coordinator_key:
                log.warning("cluster: no longer the coordinator (another node holds its lease)")
                self._spawn(self._stop_services(), "coordinator-lost")
                continue
            table_id = key[cut:]
            log.warning("cluster: lost the lease on table %s (another node holds it)", table_id)
            self._spawn(self.drop(table_id), f"drop-{table_id}")

    def _let_go_stray_claims(self) -> None:
        """Claims (``claim_new``) whose table was created are done with; one whose table
        never came (its creation failed) is let go after ``CLAIM_SECONDS``."""
        lobby = self.lobby
        now = time.monotonic()
        for table_id, claimed in list(self._claimed.items()):
            if lobby is not None and table_id in lobby.tables:
                del self._claimed[table_id]
            elif now - claimed > CLAIM_SECONDS:
                log.warning("cluster: table %s was never created: its lease is let go", table_id)
                self._spawn(self._let_go(table_id), f"release-{table_id}")

    async def _publish_lobby(self) -> None:
        """Our public tables into ``PREFIX:listing``, our seated players into
        ``PREFIX:seated``, the creators of our tables waiting for players into
        ``PREFIX:waiting``: what changed since the last beat. One at a time: the beat's and a
        soon publication (``lobby_changed``) each compare with what the other published."""
        async with self._publishing:
            await self._publish_lobby_now()

    async def _publish_lobby_now(self) -> None:
        lobby = self.lobby
        if lobby is None:
            return
        listing: dict[str, bytes] = {}
        for table_id, summary in lobby.summaries.items():
            if summary.private or summary.state == "finished" or table_id not in lobby.tables:
                continue
            listing[table_id] = orjson.dumps({"n": self.name, "l": summary.listing})
        pipe = self.redis.pipeline(transaction=False)
        key = f"{self.prefix}:listing"
        changed = {t: v for t, v in listing.items() if self._published_listing.get(t) != v}
        gone = [t for t in self._published_listing if t not in listing]
        if changed:
            pipe.hset(key, mapping=cast(Any, changed))
        if gone:
            pipe.hdel(key, *gone)
        # username -> "TABLE NODE": whose word it is (a dead node's are ignored by readers)
        seated = {u: f"{t} {self.name}" for u, t in lobby.seated.items()}
        seat_key = f"{self.prefix}:seated"
        moved = {u: t for u, t in seated.items() if self._published_seated.get(u) != t}
        left = [u for u, t in self._published_seated.items() if u not in seated]
        if moved:
            pipe.hset(seat_key, mapping=cast(Any, moved))
        # table -> its creator: a table's id is ours alone while we hold it.
        waiting = {
            t: orjson.dumps({"n": self.name, "u": c.username, "a": c.address})
            for t, c in lobby.creators.items()
        }
        made = {t: v for t, v in waiting.items() if self._published_waiting.get(t) != v}
        started = [t for t in self._published_waiting if t not in waiting]
        if made:
            pipe.hset(f"{self.prefix}:waiting", mapping=cast(Any, made))
        if started:
            pipe.hdel(f"{self.prefix}:waiting", *started)
        if left:
            # Only if it still says our table (the player may sit elsewhere by now).
            for u in left:
                pipe.hget(seat_key, u)
        busy = changed or gone or moved or left or made or started
        results = await pipe.execute() if busy else []
        if left:
            current = results[-len(left) :]
            stale = [
                u
                for u, now in zip(left, current, strict=True)
                if now is not None and _text(now) == self._published_seated[u]
            ]
            if stale:
                await self.redis.hdel(seat_key, *stale)
        self._published_listing = listing
        self._published_seated = seated
        self._published_waiting = waiting

    def lobby_changed(self) -> None:
        """Who sits where changed here: publish it soon, not at the next beat (a player who
        sits down and reloads the page at once on another node must find her table)."""
        if self._publish_soon is not None:
            return

        def publish() -> None:
            self._publish_soon = None
            self._spawn(self._publish_quietly(), "publish-lobby")

        self._publish_soon = asyncio.get_running_loop().call_later(PUBLISH_SOON, publish)

    async def _publish_quietly(self) -> None:
        with contextlib.suppress(RedisError, OSError):
            await self._publish_lobby()

    async def _sweep(self) -> None:
        """What ``PREFIX:listing`` and ``PREFIX:seated`` say in our name of tables we do not
        hold (an earlier run of this node, killed, left them) goes."""
        lobby = self.lobby
        held = set(lobby.tables) if lobby is not None else set()
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(f"{self.prefix}:listing")
        pipe.hgetall(f"{self.prefix}:seated")
        pipe.hgetall(f"{self.prefix}:waiting")
        listing_raw, seated_raw, waiting_raw = await pipe.execute()
        stale_tables = [
            t
            for t, raw in listing_raw.items()
            if orjson.loads(raw)["n"] == self.name and _text(t) not in held
        ]
        stale_waiting = [
            t
            for t, raw in waiting_raw.items()
            if orjson.loads(raw)["n"] == self.name and _text(t) not in held
        ]
        stale_seats = []
        for user, where in seated_raw.items():
            table_id, _, node = _text(where).partition(" ")
            if node == self.name and table_id not in held:
                stale_seats.append(user)
        if stale_tables:
            await self.redis.hdel(f"{self.prefix}:listing", *stale_tables)
        if stale_seats:
            await self.redis.hdel(f"{self.prefix}:seated", *stale_seats)
        if stale_waiting:
            await self.redis.hdel(f"{self.prefix}:waiting", *stale_waiting)

    async def _read_cluster(self) -> None:
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(f"{self.prefix}:listing")
        pipe.hgetall(f"{self.prefix}:seated")
        pipe.hgetall(f"{self.prefix}:waiting")
        pipe.get(self.coordinator_key)
        listing_raw, seated_raw, waiting_raw, coordinator = await pipe.execute()
        live: dict[str, dict[str, Any]] = {}
        keys = [k async for k in self.redis.scan_iter(match=f"{self.prefix}:node:*", count=500)]
        if keys:
            for raw in await self.redis.mget(keys):
                if raw is not None:
                    info = orjson.loads(raw)
                    live[info["node"]] = info
        self.live = live
        listings: dict[str, dict[str, Any]] = {}
        for table_id, raw in listing_raw.items():
            entry = orjson.loads(raw)
            if entry["n"] != self.name and entry["n"] in live:
                listings[table_id.decode()] = entry["l"]
                self.owners[table_id.decode()] = entry["n"]
        if listings != self.listings:
            self.listings = listings
            if self.lobby is not None:
                self.lobby.feed.changed()
        seated: dict[str, str] = {}
        for user, where in seated_raw.items():
            table_id, _, node = _text(where).partition(" ")
            if node in live:
                seated[_text(user)] = table_id
        self.seated = seated
        waiting: dict[str, Creator] = {}
        for table_id, raw in waiting_raw.items():
            entry = orjson.loads(raw)
            if entry["n"] != self.name and entry["n"] in live:
                waiting[_text(table_id)] = Creator(entry["u"], entry["a"])
        self.waiting = waiting
        self.coordinator = coordinator.decode() if coordinator is not None else None

    # ----------------------------------------------------- coordinator ---

    async def _coordinate(self) -> None:
        """Hold the coordinator's lease, or take it when it lapsed (not while draining)."""
        if self.is_coordinator:  # (the keeper renews its lease, and tells when it is lost)
            if self.matchmaker is not None:
                snapshot = orjson.dumps(self.matchmaker.snapshot(), default=str)
                await self.redis.set(self.queue_key, snapshot, px=self.lease_ms * 2)
            return
        if self.draining or self.coordinator is not None:
            return
        taken = time.monotonic()
        if await self.redis.set(self.coordinator_key, self.name, nx=True, px=self.lease_ms):
            self._hold(self.coordinator_key, taken)
            self.coordinator = self.name
            self.is_coordinator = True
            log.info("cluster: %s is the coordinator (ladder queue, tournaments)", self.name)
            matchmaker = self.matchmaker
            if matchmaker is not None:
                matchmaker.start()
            if self.tournaments is not None:
                self._spawn(self.tournaments.start(), "tournaments-start")
            self.bus.broadcast(Coordinator(self.name))

    async def _stop_services(self) -> None:
        """No longer the coordinator: the queue stops and forgets its players (their nodes
        queue them again at the next coordinator)."""
        self.is_coordinator = False
        matchmaker = self.matchmaker
        if matchmaker is not None:
            await matchmaker.stop()
            for queue in matchmaker.queues.values():
                queue.players.clear()
            matchmaker.where.clear()

    async def _give_up_coordinator(self) -> None:
        if not self.is_coordinator:
            return
        await self._stop_services()
        await self._release_lease(self.coordinator_key)

    @property
    def queue_key(self) -> str:
        return f"{self.prefix}:queue"

    async def queue_snapshot(self) -> Any | None:
        """The coordinator's queue (``/api/queue``), as it last published it; None if we
        are the coordinator."""
        if self.is_coordinator:
            return None
        try:
            raw = await self.redis.get(self.queue_key)
        except (RedisError, OSError):
            raw = None
        return orjson.loads(raw) if raw is not None else {"queues": [], "node": None}

    # -------------------------------------------------------- adoption ---

    def _ready_nodes(self) -> list[str]:
        return sorted(n for n, info in self.live.items() if not info.get("draining"))

    async def _adopt_orphans(self) -> None:
        lobby = self.lobby
        if lobby is None:
            return
        ids = await self.store.open_table_ids()
        mine = set(lobby.tables) | set(lobby.set_aside) | self.adopting
        others = [t for t in ids if t not in mine]
        if not others:
            return
        owners = await self.redis.mget([self.lease_key(t) for t in others])
        orphans = [t for t, owner in zip(others, owners, strict=True) if owner is None]
        if not orphans:
            return
        random.shuffle(orphans)
        share = math.ceil(len(orphans) / max(1, len(self._ready_nodes())))
        # Several at once: each is mostly waiting for the database (the table's rows and
        # log), so a dead node's tables come back together rather than one after another.
        # Every orphan is tried (in our random order) until our share is adopted: another
        # node may win some of them, and then we take others.
        room = asyncio.Semaphore(ADOPTING_AT_ONCE)
        adopted = 0

        async def adopt(table_id: str) -> None:
            nonlocal adopted
            async with room:
                if adopted < share and await self.adopt(table_id):
                    adopted += 1

        await asyncio.gather(*(adopt(t) for t in orphans))

    async def adopt(self, table_id: str) -> bool:
        """Take ``table_id`` over if its lease is free: lease, token, restore, tell."""
        lobby = self.lobby
        if lobby is None or table_id in lobby.tables or table_id in self.adopting:
            return False
        if self.draining:
            return False
        taken = time.monotonic()
        if not await self.redis.set(self.lease_key(table_id), self.name, nx=True, px=self.lease_ms):
            return False
        self._hold(self.lease_key(table_id), taken)
        self.adopting.add(table_id)
        try:
            token = await self.store.take_table(table_id)
            fenced = FencedStore(self.store, table_id, token, self)
            table = await lobby.adopt(table_id, fenced, fenced)
        except Exception:
            log.exception("cluster: adopting table %s failed; its lease is let go", table_id)
            await self._let_go(table_id)
            return False
        finally:
            self.adopting.discard(table_id)
        if table is None and table_id not in lobby.set_aside:
            await self._let_go(table_id)  # it had finished: nothing to own
            return False
        log.info("cluster: adopted table %s (fencing token %s)", table_id, token)
        self._announce(table_id, token)
        return True

    def _announce(self, table_id: str, token: int) -> None:
        """Tell every node (ourselves too: our own connections re-attach through it) that
        we own ``table_id`` with fencing token ``token``, and who sits there (a player who
        came back while no node ran it found it nowhere: her node sends her now)."""
        self.owners[table_id] = self.name
        self.tokens[table_id] = token
        lobby = self.lobby
        summary = lobby.summaries.get(table_id) if lobby is not None else None
        players = list(summary.players) if summary is not None else []
        self.bus.broadcast(Moved(table_id, self.name, token, tuple(players)))

    def _token(self, table_id: str) -> int | None:
        """The fencing token we hold ``table_id`` with, if we run it."""
        table = self._local_table(table_id)
        store = table.store if table is not None else None
        return store.token if isinstance(store, FencedStore) else None

    async def _let_go(self, table_id: str) -> None:
        self._claimed.pop(table_id, None)
        await self._release_lease(self.lease_key(table_id))

    async def claim_new(self, table_id: str, store: Any) -> tuple[FencedStore, FencedStore] | None:
        """The lease on a table this node is creating, and its store (``store`` fenced,
        which is also its lease); None if the id is taken (pick another)."""
        taken = time.monotonic()
        if not await self.redis.set(self.lease_key(table_id), self.name, nx=True, px=self.lease_ms):
            return None
        self._hold(self.lease_key(table_id), taken)
        self._claimed[table_id] = time.monotonic()
        self.owners[table_id] = self.name
        fenced = FencedStore(store, table_id, 0, self)
        return fenced, fenced

    def table_done(self, table_id: str) -> None:
        """A table of ours finished and was forgotten: its lease goes."""
        self.owners.pop(table_id, None)
        self._spawn(self._let_go(table_id), f"release-{table_id}")

    def fenced(self, table_id: str, token: int) -> None:
        """A write of ours was refused: another node owns the table now."""
        log.warning(
            "cluster: table %s was taken over (our token %s is old): dropping it", table_id, token
        )
        self._spawn(self.drop(table_id), f"drop-{table_id}")

    async def drop(self, table_id: str, players: Sequence[str] = ()) -> None:
        """Stop our copy of a table another node owns now, writing nothing, and send our
        connections to the new owner (those of ``players`` too: ``_reattach``)."""
        self._forget_lease(self.lease_key(table_id))
        self._claimed.pop(table_id, None)
        lobby = self.lobby
        if lobby is None:
            return
        table = lobby.tables.get(table_id)
        left: list[Any] = []
        if table is not None:
            await table.stop()
            lobby.forget(table, moved=True)
            left = table.unhandled()
        lobby.set_aside.pop(table_id, None)
        owner = await self.owner_of(table_id, fresh=True)
        if owner is not None and owner != self.name:
            self._reattach(table_id, owner, players)
        await self._pass_on(table_id, left)

    async def _pass_on(self, table_id: str, left: list[Any]) -> None:
        """What a table we gave up had not handled yet: a ``sync`` goes on to its owner
        (its sender waits for the answer); another request is told the table moved (its
        connection is re-attached: its player gets the table again, and acts again)."""
        for item in left:
            peer, reply_to = item.peer, item.reply_to
            if peer is None:
                continue
            if isinstance(item, SyncInput):
                sync = {"type": "sync", "payload": {"table": table_id}}
                frame = orjson.dumps(sync if reply_to is None else {**sync, "id": reply_to})
                if isinstance(peer, RemotePeer):
                    await self._in(In(peer.sender, table_id, frame.decode()))
                else:
                    with contextlib.suppress(ServerError):
                        await self.relay(peer, table_id, frame)
            elif reply_to is not None and not isinstance(item, BackInput | GoneInput):
                peer.send(_moving(table_id, reply_to))

    async def hand_off(self, table_id: str, to: str | None = None) -> bool:
        """Give a table of ours to another node (``to``, else the least loaded ready one):
        stop it (nothing more is written), let the lease go, tell the taker."""
        lobby = self.lobby
        if lobby is None:
            return False
        table = lobby.tables.get(table_id)
        if table is None:
            return False
        targets = [n for n in self._ready_nodes() if n != self.name]
        if to is None:
            if not targets:
                return False
            to = min(targets, key=lambda n: self.live[n].get("tables", 0))
        await table.stop()
        lobby.forget(table, moved=True)
        await self._let_go(table_id)
        self.owners.pop(table_id, None)
        self.bus.send(to, Take(table_id))
        # Nobody relays to us any more: messages for it wait for its new owner (``relay``).
        self.bus.broadcast(Released(table_id, self.name))
        self.lobby_changed()
        if to in self.live:
            self.live[to]["tables"] = self.live[to].get("tables", 0) + 1
        log.info("cluster: handed table %s to %s", table_id, to)
        await self._pass_on(table_id, table.unhandled())
        return True

    async def drain(self) -> int:
        """Stop taking tables and hand every table we own to the others; how many."""
        self.draining = True
        await self._give_up_coordinator()
        with contextlib.suppress(RedisError, OSError):
            await self._presence()
            await self._read_cluster()
        lobby = self.lobby
        moved = 0
        if lobby is not None:
            for table_id in list(lobby.tables):
                if await self.hand_off(table_id):
                    moved += 1
        with contextlib.suppress(RedisError, OSError):
            await self._publish_lobby()  # (nobody is to find those tables or players here)
        await self.bus.flush()
        return moved

    # --------------------------------------------------------- routing ---

    async def owner_of(self, table_id: str, fresh: bool = False) -> str | None:
        if not fresh and table_id in self.owners:
            return self.owners[table_id]
        try:
            raw = await self.redis.get(self.lease_key(table_id))
        except (RedisError, OSError):
            return self.owners.get(table_id)
        if raw is None:
            self.owners.pop(table_id, None)
            return None
        owner = _text(raw)
        self.owners[table_id] = owner
        return owner

    def _sent_by(self, conn: Here) -> Sender:
        """``conn`` as the sender of a relayed message."""
        return Sender(self.name, conn.cid, conn.username, conn.guest, conn.address, conn.version)

    async def relay(self, conn: Here, table_id: str, frame: str | bytes) -> None:
        """Send a client's message for a table this node does not run to the table's owner.
        While no node runs it (one let it go, the next is restoring it) the message waits
        for the new owner (``_park``); ``no_such_table`` only if no such table is open."""
        text = frame.decode() if isinstance(frame, bytes) else frame
        owner = await self.owner_of(table_id)
        if owner is None or owner == self.name:  # (we do not run it: ask the lease)
            owner = await self.owner_of(table_id, fresh=True)
        if owner is not None and owner != self.name:
            self.bus.send(owner, In(self._sent_by(conn), table_id, text))
            conn.relayed.add(owner)
            return
        if not await self._open(table_id):
            raise ServerError("no_such_table", f"there is no table {table_id!r}")

        async def deliver(owner: str | None) -> None:
            if self.by_cid.get(conn.cid) is not conn:
                return  # (the connection is gone)
            if owner is None:
                conn.send(_moving(table_id, protocol.request_id(text)))
            elif owner != self.name:
                self.bus.send(owner, In(self._sent_by(conn), table_id, text))
                conn.relayed.add(owner)
            else:
                await self._local_input(conn, table_id, text)

        await self._park(table_id, deliver)

    async def _open(self, table_id: str) -> bool:
        """Whether ``table_id`` is a table still to be played (being adopted here, or open
        in the database: its new owner is restoring it); True if the database fails."""
        if table_id in self.adopting:
            return True
        try:
            row = await self.store.get_table(table_id)
        except Exception:
            return True
        return row is not None and row.state != "finished"

    async def _park(self, table_id: str, deliver: Any) -> None:
        """``deliver(owner)`` once the table's new owner says it runs it (``moved``), at
        once if it did while we asked (we run it now, or heard of another owner); with None
        if none does within ``UNOWNED_SECONDS``."""
        owner = self.owners.get(table_id)
        if self._local_table(table_id) is not None:
            await deliver(self.name)
        elif owner is not None and owner != self.name:
            await deliver(owner)
        else:
            self.unowned.setdefault(table_id, []).append((time.monotonic(), deliver))

    async def _owned_again(self, table_id: str, owner: str | None) -> None:
        """``table_id``'s new owner is known (None: none came): what waited for it goes."""
        for _, deliver in self.unowned.pop(table_id, []):
            try:
                await deliver(owner)
            except Exception:
                log.exception("cluster: a message for table %s could not be delivered", table_id)

    async def _unowned_too_long(self) -> None:
        """Messages that waited ``UNOWNED_SECONDS`` for an owner: given up (the sender
        hears the table is moving: ``server_busy``)."""
        now = time.monotonic()
        for table_id, waiting in list(self.unowned.items()):
            if waiting and now - waiting[0][0] > UNOWNED_SECONDS:
                log.warning("cluster: no node took table %s in %g s", table_id, UNOWNED_SECONDS)
                await self._owned_again(table_id, None)

    async def _local_input(self, peer: Any, table_id: str, text: str) -> None:
        """A frame of ``peer`` (a connection of ours or another node's) for our table."""
        table = self._local_table(table_id)
        if table is None:  # (let go again meanwhile)
            peer.send(_moving(table_id, protocol.request_id(text)))
            return
        try:
            message = protocol.decode(text)
        except ProtocolError as exc:  # it was decoded once already: only a bug gets here
            peer.send(error(exc.code, exc.reason, protocol.request_id(text)))
            return
        found = input_for(peer, message)
        if found is not None and found[0] == table_id:
            if isinstance(peer, RemotePeer):
                peer.tables.add(table_id)
            await table.queue.put(found[1])

    def relay_back(self, conn: Here, table_id: str) -> None:
        """``conn``'s player came back: to the owner of ``table_id``, where she sits."""
        self._to_owner(conn, table_id, Back(self._sent_by(conn), table_id))

    def relay_gone(self, conn: Here, table_id: str) -> None:
        """``conn`` left ``table_id``: its owner hears."""
        self._to_owner(conn, table_id, Gone(self._sent_by(conn), table_id))

    def _to_owner(self, conn: Here, table_id: str, message: Message) -> None:
        owner = self.owners.get(table_id)
        if owner is None or owner == self.name:
            return
        self.bus.send(owner, message)
        conn.relayed.add(owner)

    def relay_service(self, conn: Here, frame: str | bytes) -> None:
        """A queue or tournament request to the coordinator."""
        if self.coordinator is None:
            raise ServerError(
                "server_busy", "no node runs the queue and tournaments right now; try again"
            )
        text = frame.decode() if isinstance(frame, bytes) else frame
        self.bus.send(self.coordinator, Service(self._sent_by(conn), text))
        conn.relayed.add(self.coordinator)

    def service_gone(self, conn: Here) -> None:
        if self.coordinator is not None and not self.is_coordinator:
            self.bus.send(self.coordinator, ServiceGone(self._sent_by(conn)))

    def bye(self, conn: Here) -> None:
        for node in conn.relayed:
            self.bus.send(node, Bye(self.name, conn.cid))
        conn.relayed.clear()
        for key in [k for k in self.resyncing if k[0] == conn.cid]:
            self.resyncing.discard(key)

    async def seated_table(self, username: str) -> str | None:
        """The table (on any node) where ``username`` sits, as the owners last said."""
        try:
            raw = await self.redis.hget(f"{self.prefix}:seated", username)
        except (RedisError, OSError):
            return self.seated.get(username)
        return _text(raw).partition(" ")[0] if raw is not None else None

    def _reattach(self, table_id: str, owner: str, players: Iterable[str] = ()) -> None:
        """Our connections at ``table_id`` to its new owner ``owner``, and those of its
        seated ``players`` (one who came back, ``resume``, while no node ran the table found
        her seat nowhere: it is hers again now)."""
        seated = set(players)
        for conn in list(self.connections):
            if table_id not in conn.tables and conn.username in seated:
                conn.tables[table_id] = None
            if table_id in conn.tables:
                self._reattach_one(conn, table_id, owner)

    def _reattach_one(self, conn: Here, table_id: str, owner: str) -> None:
        """``conn`` to ``owner``'s table ``table_id``: here at once; to another node until
        it answers ``attached`` (``_reattach_again``)."""
        watch = conn.tables[table_id]
        if owner == self.name:
            self.reattaching.pop((conn.cid, table_id), None)
            self._attach_here(self._local_table(table_id), conn, conn.username, watch)
            return
        self.bus.send(owner, Reattach(self._sent_by(conn), table_id, watch))
        conn.relayed.add(owner)
        self.resyncing.add((conn.cid, table_id))
        now = time.monotonic()
        first, _ = self.reattaching.get((conn.cid, table_id), (now, now))
        self.reattaching[conn.cid, table_id] = (first, now)

    def _forget_owners(self) -> None:
        """What we heard of the owners of tables nobody here has to do with any more (not
        ours, not listed, no connection of ours at them): asked again if ever needed."""
        lobby = self.lobby
        kept = set(self.listings) | {t for conn in self.connections for t in conn.tables}
        if lobby is not None:
            kept |= set(lobby.tables)
        for table_id in [t for t in self.owners if t not in kept]:
            del self.owners[table_id]
        for table_id in [t for t in self.tokens if t not in kept]:
            del self.tokens[table_id]

    async def _reattach_again(self) -> None:
        """Send again the re-attaches no owner has answered for a third of a lease, each to
        its table's owner as the lease now says (none: the table is being adopted, and its
        ``moved`` will send it). Given up after ``REATTACH_SECONDS``."""
        now = time.monotonic()
        due: dict[str, list[str]] = {}
        for (cid, table_id), (first, last) in list(self.reattaching.items()):
            conn = self.by_cid.get(cid)
            if conn is None or table_id not in conn.tables or now - first > REATTACH_SECONDS:
                if conn is not None and table_id in conn.tables:
                    log.warning("cluster: no owner took connection %s back at %s", cid, table_id)
                del self.reattaching[cid, table_id]
                self.resyncing.discard((cid, table_id))
            elif now - last >= self.lease_seconds / 3:
                due.setdefault(table_id, []).append(cid)
        for table_id, cids in due.items():
            owner = await self.owner_of(table_id, fresh=True)
            for cid in cids:
                conn = self.by_cid.get(cid)
                if owner is not None and conn is not None and table_id in conn.tables:
                    self._reattach_one(conn, table_id, owner)

    def _local_table(self, table_id: str) -> Table | None:
        lobby = self.lobby
        return lobby.tables.get(table_id) if lobby is not None else None

    def _attach_here(
        self, table: Table | None, peer: Any, username: str | None, watch: str | None
    ) -> None:
        if table is None or username is None:
            return
        if table.seat_of(username) is not None:  # (its seats are set before it starts)
            table.queue.put_nowait(BackInput(peer, None))
        elif watch is not None:
            try:
                message = protocol.decode(watch)
            except ProtocolError:
                return
            if isinstance(message, protocol.Watch):
                table.queue.put_nowait(WatchInput(peer, None, message.invite_code))

    # -------------------------------------------------------- incoming ---

    def _peer(self, sender: Sender) -> RemotePeer:
        key = (sender.node, sender.cid, sender.username)
        peer = self.peers.get(key)
        if peer is None:
            peer = RemotePeer(
                self,
                sender.node,
                sender.cid,
                username=sender.username,
                guest=sender.guest,
                address=sender.address,
                version=sender.version,
            )
            self.peers[key] = peer
        return peer

    def remote_peers(self) -> Iterable[RemotePeer]:
        return self.peers.values()

    async def _on_message(self, message: Message) -> None:
        match message:
            case In():
                await self._in(message)
            case Back():
                await self._back(message)
            case Reattach():
                await self._reattach_in(message)
            case Attached():
                await self._attached(message)
            case Gone():
                await self._gone(message)
            case Bye():
                await self._bye(message)
            case Service():
                await self._svc(message)
            case ServiceGone():
                await self._svc_gone(message)
            case Out():
                await self._out(message)
            case Prompt():
                await self._prompt(message)
            case Attach():
                await self._attach(message)
            case Moved():
                await self._moved(message)
            case Take():
                await self._take(message)
            case Released():
                await self._released(message)
            case Move():
                await self._move(message)
            case Drain():
                await self._drain(message)
            case Coordinator():
                await self._coordinator_changed(message)
            case TableFinished():
                await self._tournament_table_finished(message)
            case Replace():
                await self._replace(message)
            case FindSeat():
                await self._find_seat(message)
            case Reply():
                await self._reply(message)
            case _:
                assert_never(message)

    async def _in(self, message: In) -> None:
        if await self._elsewhere(message):
            return
        await self._local_input(self._sender(message.sender), message.table, message.frame)

    async def _back(self, message: Back) -> None:
        if await self._elsewhere(message):
            return
        table = self._local_table(message.table)
        if table is not None:
            peer = self._sender(message.sender)
            if isinstance(peer, RemotePeer):
                peer.tables.add(table.id)
            await table.queue.put(BackInput(peer, None))

    def _sender(self, sender: Sender) -> Any:
        """Who sent a relayed message: another node's connection (its ``RemotePeer``), or
        one of ours whose message came back to us (the table moved here on its way): that
        connection itself, not a second peer for it (she would get everything twice)."""
        if sender.node == self.name:
            conn = self.by_cid.get(sender.cid)
            if conn is not None:
                return conn
        return self._peer(sender)

    async def _reattach_in(self, message: Reattach) -> None:
        table = self._local_table(message.table)
        if table is None:  # (being adopted here: answered once it is; else sent again)
            if message.table in self.adopting:

                async def deliver(owner: str | None) -> None:
                    if owner == self.name:
                        await self._reattach_in(message)

                await self._park(message.table, deliver)
            return
        peer = self._peer(message.sender)
        peer.tables.add(table.id)
        self._attach_here(table, peer, peer.username, message.watch)
        self.bus.send(message.sender.node, Attached(message.sender.cid, table.id))

    async def _elsewhere(self, message: In | Back) -> bool:
        """A message of another node's connection for a table we do not run: on to its
        owner (once), or, while no node runs it, kept until one does (``_park``); True
        unless the table is ours."""
        table_id = message.table
        if self._local_table(table_id) is not None:
            return False
        owner = await self.owner_of(table_id, fresh=True)
        if owner is not None and owner != self.name:
            if not message.hop:
                self.bus.send(owner, replace(message, hop=True))  # it moved: on to the owner
            elif isinstance(message, In):  # (it moved twice meanwhile)
                self._sender(message.sender).send(
                    _moving(table_id, protocol.request_id(message.frame))
                )
        elif await self._open(table_id):

            async def deliver(owner: str | None) -> None:
                if owner == self.name:
                    await self._on_message(message)
                elif owner is not None and not message.hop:
                    self.bus.send(owner, replace(message, hop=True))
                elif isinstance(message, In):
                    self._sender(message.sender).send(
                        _moving(table_id, protocol.request_id(message.frame))
                    )

            await self._park(table_id, deliver)
        elif isinstance(message, In):
            self._sender(message.sender).send(
                error(
                    "no_such_table",
                    f"there is no table {table_id!r}",
                    protocol.request_id(message.frame),
                )
            )
        return True

    async def _attached(self, message: Attached) -> None:
        """The owner took our connection in (``reattach``)."""
        self.reattaching.pop((message.cid, message.table), None)

    async def _gone(self, message: Gone) -> None:
        sender = message.sender
        peer = self.peers.get((sender.node, sender.cid, sender.username))
        if peer is None:
            return
        table = self._local_table(message.table)
        peer.tables.discard(message.table)
        if table is not None:
            await table.queue.put(GoneInput(peer, None))

    async def _bye(self, message: Bye) -> None:
        for key in [k for k in self.peers if k[0] == message.node and k[1] == message.cid]:
            await self._drop_peer(self.peers.pop(key))

    async def _drop_peer(self, peer: RemotePeer) -> None:
        for table_id in peer.tables:
            table = self._local_table(table_id)
            if table is not None:
                await table.queue.put(GoneInput(peer, None))
        peer.tables.clear()
        if self.matchmaker is not None and self.is_coordinator:
            self.matchmaker.gone(peer)

    def _forget_dead_peers(self) -> None:
        for key, peer in list(self.peers.items()):
            info = self.live.get(peer.home)
            if info is None or not peer.cid.startswith(info["incarnation"] + "."):
                del self.peers[key]
                self._spawn(self._drop_peer(peer), "drop-peer")

    async def _svc(self, relayed: Service) -> None:
        peer = self._peer(relayed.sender)
        frame = relayed.frame
        reply_to = protocol.request_id(frame)
        if not self.is_coordinator:
            if self.coordinator is not None and self.coordinator != self.name and not relayed.hop:
                self.bus.send(self.coordinator, replace(relayed, hop=True))
            else:
                peer.send(error("server_busy", "the coordinator changed; try again", reply_to))
            return
        try:
            message = protocol.decode(frame)
            if isinstance(message, protocol.QueueJoin) and self.matchmaker is not None:
                await self.matchmaker.join(peer, message.ladder, message.casual, message.id)
            elif isinstance(message, protocol.QueueLeave) and self.matchmaker is not None:
                self.matchmaker.leave(peer, message.id)
            elif isinstance(message, protocol.TournamentRequest) and self.tournaments is not None:
                await self.tournaments.handle(peer, message)
        except ServerError as exc:
            peer.send(error(exc.code, exc.reason, reply_to))
        except Exception:
            log.exception("cluster: a relayed request failed: %.200r", frame)
            peer.send(
                error("internal_error", "the server could not handle that; try again", reply_to)
            )

    async def _svc_gone(self, message: ServiceGone) -> None:
        sender = message.sender
        peer = self.peers.get((sender.node, sender.cid, sender.username))
        if peer is not None and self.is_coordinator and self.matchmaker is not None:
            self.matchmaker.gone(peer)

    async def _out(self, out: Out) -> None:
        conn = self.by_cid.get(out.cid)
        if conn is not None and self._current(out) and self._in_step(out):
            conn.send(out.text)

    def _in_step(self, out: Out) -> bool:
        """Whether a table's word may go to our connection: always, but while she waits to
        be sent the table whole again (``resyncing``), when an update is dropped until the
        full one (or a summary saying no hand is in play: none is coming)."""
        key = (out.cid, out.table)
        if key not in self.resyncing:
            return True
        message = orjson.loads(out.text)
        kind, payload = message.get("type"), message.get("payload") or {}
        if kind == "update" and not payload.get("full"):
            return False  # (it may follow a gap)
        no_hand = kind in ("table", "watching") and payload.get("state") != "playing"
        if kind == "update" or no_hand:
            self.resyncing.discard(key)
        return True

    async def _prompt(self, prompt: Prompt) -> None:
        conn = self.by_cid.get(prompt.cid)
        if conn is not None and self._current(prompt):
            conn.prompted(prompt.table, prompt.seq)

    def _current(self, word: Out | Prompt) -> bool:
        """Whether a table's word (``out``, ``prompt``) is from the newest owner of the
        table we know of: one with an older fencing token (sent by a node before it learnt
        it lost the table, or queued before it was paused) is dropped."""
        token, table_id = word.fence, word.table
        if token is None or table_id is None:
            return True  # (not a table's: the queue's, a tournament's)
        newest = self.tokens.get(table_id, 0)
        if token < newest:
            self.stale_words += 1
            return False
        self.tokens[table_id] = token
        return True

    async def _attach(self, message: Attach) -> None:
        conn = self.by_cid.get(message.cid)
        if conn is not None:
            conn.attach(message.table)
            owner = message.owner
            if owner != self.name:
                self.owners[message.table] = owner
                conn.relayed.add(owner)

    async def find_seat(self, conn: Here) -> None:
        """``conn``'s player logged in or resumed and sits at no table of ours: at another
        node's table (as its owner published), her seat there is hers again (``back``). No
        word of where she sits (the owner publishes it a moment after she sat down): every
        node is asked; the owner seats her back. (A new account sits nowhere.)"""
        if conn.username is None:
            return
        table_id = await self.seated_table(conn.username)
        if table_id is not None and await self.owner_of(table_id) is not None:
            conn.tables[table_id] = None
            self.relay_back(conn, table_id)
        elif table_id is None:
            self.bus.broadcast(FindSeat(self._sent_by(conn)))

    async def _find_seat(self, message: FindSeat) -> None:
        lobby = self.lobby
        if lobby is None or message.sender.node == self.name:
            return
        table = lobby.table_of(message.sender.username)
        if table is not None:
            peer = self._peer(message.sender)
            peer.attach(table.id)
            await table.queue.put(BackInput(peer, None))

    async def _moved(self, message: Moved) -> None:
        """``owner`` runs ``table_id`` with fencing token ``f``, its players ``p`` seated. A
        word older than the last one heard is ignored: a node that lost a table while Redis
        was away may announce it before it learns so. If it is older than our own copy, we
        say again that it is ours. Our connections at the table, and those of its players,
        go to the owner; then what waited for an owner."""
        table_id, owner, token = message.table, message.owner, message.fence
        if token < self.tokens.get(table_id, 0):
            return
        ours = self._token(table_id)
        if owner != self.name and ours is not None and token < ours:
            if self._trusted(self.lease_key(table_id)):  # (else we may have lost it)
                self._announce(table_id, ours)
            return
        self.owners[table_id] = owner
        self.tokens[table_id] = token
        lobby = self.lobby
        if owner != self.name and lobby is not None and table_id in lobby.tables:
            await self.drop(table_id, message.players)  # we were paused: our copy is stale
        else:
            self._reattach(table_id, owner, message.players)
        await self._owned_again(table_id, owner)

    async def _released(self, message: Released) -> None:
        """Its owner handed the table to another: it is no longer where to send its
        messages."""
        if self.owners.get(message.table) == message.owner:
            del self.owners[message.table]

    async def _take(self, message: Take) -> None:
        # In a task of its own: the messages for other tables are not held up meanwhile.
        self._spawn(self.adopt(message.table), f"adopt-{message.table}")

    async def _move(self, message: Move) -> None:
        await self.hand_off(message.table, message.to)

    async def _drain(self, message: Drain) -> None:
        moved = await self.drain()
        log.info("cluster: drained: %s table(s) handed to other nodes", moved)

    async def _coordinator_changed(self, news: Coordinator) -> None:
        self.coordinator = news.owner
        for conn in list(self.connections):
            if conn.queue_frame is None:
                continue
            if self.coordinator == self.name:
                with contextlib.suppress(ServerError):
                    message = protocol.decode(conn.queue_frame)
                    if isinstance(message, protocol.QueueJoin) and self.matchmaker is not None:
                        await self.matchmaker.join(conn, message.ladder, message.casual, None)
            else:
                self.relay_service(conn, conn.queue_frame)

    async def replace_seat(self, table_id: str, seat: int, label: str, timeout: float) -> None:
        """A tournament's substitute into ``seat`` of a table another node owns
        (``server.table.ReplaceInput``); the owner's refusal is raised as the ``LobbyError``
        it was, no answer in ``timeout`` seconds as ``TimeoutError``."""
        owner = await self.owner_of(table_id, fresh=True)
        if owner is None or owner == self.name:
            raise LobbyError("no_such_table", f"no node owns table {table_id!r}")
        rid = secrets.token_hex(6)
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._replies[rid] = answer
        self.bus.send(owner, Replace(self.name, rid, table_id, seat, label))
        try:
            refused = await asyncio.wait_for(answer, timeout)
        finally:
            self._replies.pop(rid, None)
        if refused is not None:
            raise LobbyError(refused[0], refused[1])

    async def _replace(self, message: Replace) -> None:
        table = self._local_table(message.table)
        refused: tuple[str, str] | None = None
        if table is None:
            refused = ("no_such_table", f"table {message.table!r} is not on node {self.name}")
        else:
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            await table.queue.put(ReplaceInput(None, None, message.seat, message.label, done))
            try:
                await asyncio.wait_for(done, 10.0)
            except LobbyError as exc:
                refused = (exc.code, exc.reason)
            except TimeoutError:
                refused = ("server_busy", f"table {table.id} did not answer in time")
        self.bus.send(message.node, Reply(message.request, refused))

    async def _reply(self, message: Reply) -> None:
        answer = self._replies.get(message.request)
        if answer is not None and not answer.done():
            answer.set_result(message.refused)

    async def _tournament_table_finished(self, message: TableFinished) -> None:
        if self.is_coordinator and self.tournaments is not None:
            finished = _Finished(message.table, message.tournament)
            await self.tournaments.table_finished(finished)  # type: ignore[arg-type]

    async def table_finished(self, table: Table) -> None:
        """``Lobby.on_table_finished`` in cluster mode: the coordinator's tournaments hear."""
        if self.is_coordinator and self.tournaments is not None:
            await self.tournaments.table_finished(table)
        elif table.tournament and self.coordinator is not None:
            self.bus.send(self.coordinator, TableFinished(table.id, table.tournament))

    async def _on_up(self) -> None:
        """Redis answers again (or for the first time): our leases and presence first, then
        everyone re-attaches; adoption waits a lease so the others can re-assert theirs.

        Messages were lost while Redis was away, and the nodes come back in any order: each
        tells everyone the tables it (still) owns (``moved``: the nodes already back send
        their connections there again), and sends its own connections to their tables'
        owners. The keeper may take an owner's leases back before its subscription is: what
        we send that owner then is lost, but its own ``moved``, after its subscription and
        its leases, reaches us (we are subscribed already) and sends our connections again.

        Under load both can miss: our ``moved`` sent before the other node's subscription is
        back, and its question for the owner asked before our keeper re-took the lease. So
        the announcing and the re-attaching are done once more a lease later, when every
        live node has re-subscribed and re-taken its leases (a second re-attach of a seated
        player only sends the table again)."""
        self.scan_after = time.monotonic() + self.lease_seconds
        self.caught_up = False  # (our tables wait until everyone is told)
        try:
            with contextlib.suppress(RedisError, OSError):
                await self._presence()
                await self.keeper.renew_now()  # our leases, before we say we own the tables
                self._published_listing.clear()
                self._published_seated.clear()
                self._published_waiting.clear()
                await self._sweep()
                await self._publish_lobby()
            await self._announce_and_reattach()
        finally:
            # Our tables play on: what they send now comes after what we announced, and our
            # connections take it only once their tables sent them whole again (``_out``).
            self.caught_up = True
            self._tell_lease_news()
        self._spawn(self._announce_and_reattach(after=self.lease_seconds), "reattach-again")

    async def _announce_and_reattach(self, after: float = 0.0) -> None:
        """Tell every node the tables we surely own (one whose lease lapsed and was taken
        back is told once the database says it is still ours: ``_check_suspects``); send our
        connections to their tables' owners."""
        if after:
            await asyncio.sleep(after)
        lobby = self.lobby
        for table_id in list(lobby.tables) if lobby is not None else []:
            token = self._token(table_id)
            if token is not None and self._trusted(self.lease_key(table_id)):
                self._announce(table_id, token)
        attached = {t for conn in self.connections for t in conn.tables}
        for table_id in attached:  # each table's owner asked once, its connections sent there
            owner = await self.owner_of(table_id, fresh=True)
            if owner is not None:
                self._reattach(table_id, owner)

    async def hand_over(self) -> None:
        """The server is stopping: every table to another node, none ends."""
        moved = await self.drain()
        log.info("handed %s table(s) to the other nodes", moved)

    def unready(self) -> str | None:
        if self.draining:
            return "draining: this node hands its tables to the others"
        if not (self.redis_ok and self.bus.up):
            return "Redis does not answer"
        return None

    @property
    def runs_services(self) -> bool:
        return self.is_coordinator

    def seated_elsewhere(self, username: str) -> str | None:
        return self.seated.get(username)

    def status(self) -> dict[str, Any]:
        return {
            "redis": "ok" if self.redis_ok and self.bus.up else "unreachable",
            "tables_owned": self.leases_held,
            "draining": self.draining,
            "coordinator": self.is_coordinator,
            "nodes": sorted(self.live),
        }

    def remote_listing(self, local: Collection[str]) -> list[dict[str, Any]]:
        return [entry for t, entry in self.listings.items() if t not in local]

    def remote_creators(self, local: Iterable[str]) -> list[Creator]:
        """The creators of the other nodes' tables waiting for players (as they last
        published them), but those of the tables ``local`` (ours now: we know better)."""
        return [c for t, c in self.waiting.items() if t not in local]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _moving(table_id: str, reply_to: str | int | None) -> str:
    """The answer to a request for a table that moved before it was handled, or that no
    node took over in time."""
    reason = f"table {table_id} is moving to another node; try again in a moment"
    return error("server_busy", reason, reply_to)

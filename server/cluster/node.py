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
players' requests to it. A table the queue makes goes to the node most of its players are
on (``placement``, ``place``: handed off at once, its players re-attached by its adopter's
``moved``).

Who created each of a node's tables still waiting for players (its account and address,
``Lobby.creators``) is published in ``PREFIX:waiting`` with its lobby, so that every node
counts them all against the waiting-table limits (``Lobby._check_room``): each node's as it
published them (soon after a change, and at each beat), read at the reader's beat
(``server.cluster.directory``).

Presence: ``PREFIX:node:NAME`` (JSON, written at each beat, its expiry renewed by the keeper
like a lease) lists the live nodes; a remote peer of a node that is gone is treated as a
closed connection.

The node is one object made of parts, a module each, on the state they share
(``server.cluster.state``): ``leases`` (which leases it holds and trusts), ``relaying``
(its connections' messages to other nodes' tables, re-attaching when a table moves),
``inbox`` (what the other nodes' messages do here, ``server.cluster.messages``), and this
module (presence, the beat, the coordinator, adoption and hand-off). The app and the lobby
see it as ``server.nodes.Nodes``; it sees their connections as ``server.nodes.Here``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import random
import socket
import time
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from typing import Any

import orjson
from redis.exceptions import RedisError

from server.cluster.fenced import FencedStore
from server.cluster.inbox import Inbox
from server.cluster.leases import Leases
from server.cluster.messages import SPEAKS, Coordinator, In, Moved, Released, Take, Unseated
from server.cluster.peers import RemotePeer
from server.cluster.relaying import moving
from server.cluster.state import KEEPER_STOP_SECONDS
from server.errors import ServerError
from server.nodes import Creator
from server.table import BackInput, GoneInput, JoinInput, SyncInput
from server.tasks import stop_task

log = logging.getLogger("guobiao.cluster")

# Leases for which a player whose table the queue handed on counts as seated there, until its
# owner publishes it (a beat, a third of a lease, after it adopted it).
PLACED_LEASES = 3


# -------------------------------------------------------------------- node ---


class Node(Inbox, Leases):
    """This process as a member of the cluster (``[cluster] redis_url`` set): its parts
    (``server.cluster.state``) and presence, the beat, the coordinator, adoption and
    hand-off."""

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
            await stop_task(self._tick)
        for task in list(self._background):
            task.cancel()
        await self._give_up_coordinator()
        await self.bus.close()
        await self.keeper.close(KEEPER_STOP_SECONDS)
        with contextlib.suppress(RedisError, OSError):
            await self.redis.delete(self.node_key)
        await self.redis.aclose()

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
            "tables": len(lobby.tables),
            "connections": len(self.connections),
            "coordinator": self.is_coordinator,
            "speaks": SPEAKS,
        }
        await self.redis.set(self.node_key, orjson.dumps(info), px=self.lease_ms)

    async def _publish_lobby(self) -> None:
        await self.directory.publish()

    def lobby_changed(self) -> None:
        """Who sits where changed here: published soon (``Directory.changed``)."""
        self.directory.changed()

    def match_over(self, table_id: str, players: Sequence[str]) -> None:
        """Every node forgets ``players`` at ``table_id`` now (``Unseated``): a node that read
        ``PREFIX:seated`` before we publish it would refuse them a seat until its next beat.
        Not while a node of the previous release runs (a rolling restart): it would not know
        the message; everyone then learns it at the beat, as that release did."""
        if players and self.directory.everyone_speaks(SPEAKS):
            self.bus.broadcast(Unseated(table_id, tuple(players)))

    async def _read_cluster(self) -> None:
        """What every node published, who is alive, and who is the coordinator."""
        self.coordinator = await self.directory.read()
        self.owners.update(self.directory.listed)

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
        return sorted(n for n, info in self.directory.live.items() if not info.get("draining"))

    async def _adopt_orphans(self) -> None:
        lobby = self.lobby
        ids = await self.store.open_table_ids()
        mine = set(lobby.tables) | set(lobby.set_aside) | self.adopting
        others = [t for t in ids if t not in mine]
        if not others:
            return
        owners = await self.redis.mget([self.lease_key(t) for t in others])
        orphans = [t for t, owner in zip(others, owners, strict=True) if owner is None]
        if orphans:
            # Open still, now that nobody holds them: a table whose match ended after the
            # first read was let go by its owner once stored finished. Leased here even a
            # moment, the other nodes would send us its players' messages (and keep us as
            # its owner), which we could only refuse or keep waiting.
            still = set(await self.store.open_table_ids())
            orphans = [t for t in orphans if t in still]
        if not orphans:
            return
        random.shuffle(orphans)
        share = math.ceil(len(orphans) / max(1, len(self._ready_nodes())))
        # Several at once: each is mostly waiting for the database (the table's rows and
        # log), so a dead node's tables come back together rather than one after another.
        # Every orphan is tried (in our random order) until our share is adopted: another
        # node may win some of them, and then we take others.
        adopted = 0

        async def adopt(table_id: str) -> None:
            nonlocal adopted
            async with self.adoption_room:
                if adopted < share and await self.adopt(table_id):
                    adopted += 1

        await asyncio.gather(*(adopt(t) for t in orphans))

    async def adopt(self, table_id: str) -> bool:
        """Take ``table_id`` over if its lease is free: lease, token, restore, tell."""
        lobby = self.lobby
        if table_id in lobby.tables or table_id in self.adopting:
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
        summary = lobby.summaries.get(table_id)
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
        else:  # (ours: a lapsed lease our keeper took back) finished elsewhere, or between
            # owners (then its next owner's ``moved`` re-attaches them)
            seated = set(players)
            here = [c for c in self.connections if table_id in c.tables or c.username in seated]
            for conn in here:
                conn.tables.setdefault(table_id, None)
            await self._tell_the_end(table_id, here)
        await self._pass_on(table_id, left)

    async def _pass_on(self, table_id: str, left: list[Any]) -> None:
        """What a table we gave up had not handled yet: a ``sync`` or a ``join_table`` goes
        on to its owner (its sender waits for the answer; a join not handled here is hers
        to make there); another request is told the table moved (its connection is
        re-attached: its player gets the table again, and acts again)."""
        for item in left:
            peer, reply_to = item.peer, item.reply_to
            if peer is None:
                continue
            payload: dict[str, Any] = {"table": table_id}
            if isinstance(item, SyncInput):
                kind = "sync"
            elif isinstance(item, JoinInput):
                kind = "join_table"
                payload.update(seat=item.seat, invite_code=item.invite_code)
            else:
                if reply_to is not None and not isinstance(item, BackInput | GoneInput):
                    peer.send(moving(table_id, reply_to))
                continue
            message = {"type": kind, "payload": payload}
            frame = orjson.dumps(message if reply_to is None else {**message, "id": reply_to})
            if isinstance(peer, RemotePeer):
                await self._in(In(peer.sender, table_id, frame.decode()))
            else:
                with contextlib.suppress(ServerError):
                    await self.relay(peer, table_id, frame)

    async def hand_off(self, table_id: str, to: str | None = None) -> bool:
        """Give a table of ours to another node (``to``, else the least loaded ready one):
        stop it (nothing more is written), let the lease go, tell the taker."""
        lobby = self.lobby
        table = lobby.tables.get(table_id)
        if table is None:
            return False
        targets = [n for n in self._ready_nodes() if n != self.name]
        if to is None:
            if not targets:
                return False
            to = min(targets, key=lambda n: self.directory.live[n].get("tables", 0))
        if to in self.directory.live:  # (counted now: a drain's hand-offs run at once)
            self.directory.live[to]["tables"] = self.directory.live[to].get("tables", 0) + 1
        await table.stop()
        lobby.forget(table, moved=True)
        await self._let_go(table_id)
        self.owners.pop(table_id, None)
        self.bus.send(to, Take(table_id))
        # Nobody relays to us any more: messages for it wait for its new owner (``relay``).
        self.bus.broadcast(Released(table_id, self.name))
        self.lobby_changed()
        log.info("cluster: handed table %s to %s", table_id, to)
        await self._pass_on(table_id, table.unhandled())
        return True

    def placement(self, peers: Sequence[Any]) -> str | None:
        """Where a table the queue makes here for ``peers`` had best run: of the ready nodes,
        the one most of their connections are on, if that is another than this one (a tie
        stays here), so that its players are relayed the least and the queue's tables are
        spread over the nodes instead of all running on the coordinator."""
        homes = Counter(p.home if isinstance(p, RemotePeer) else self.name for p in peers)
        ready = {*self._ready_nodes(), self.name}
        counted = [(count, node == self.name, node) for node, count in homes.items()]
        best = max((c for c in counted if c[2] in ready), default=None)
        if best is None or best[2] == self.name or best[0] <= homes[self.name]:
            return None
        return best[2]

    async def place(self, table_id: str, node: str, peers: Sequence[Any]) -> bool:
        """Hand a table the queue just made here for ``peers`` to ``node``, as a drain
        hands a table (its adopter's ``moved`` re-attaches every node's connections of its
        players). From the moment it leaves this lobby until its owner publishes them
        seated, its players count as seated there here (``seated_elsewhere``)."""
        now = time.monotonic()
        self.placed = {name: kept for name, kept in self.placed.items() if kept[1] > now}
        until = now + PLACED_LEASES * self.lease_seconds
        names = [peer.username for peer in peers if peer.username is not None]
        self.placed.update(dict.fromkeys(names, (table_id, until)))
        if await self.hand_off(table_id, node):
            return True
        for name in names:
            self.placed.pop(name, None)
        return False

    async def drain(self) -> int:
        """Stop taking tables and hand every table we own to the others; how many."""
        self.draining = True
        await self._give_up_coordinator()
        with contextlib.suppress(RedisError, OSError):
            await self._presence()
            await self._read_cluster()
        # Every table at once: a table stops at its next input, and one at a time each stop
        # waited while all the others played on (300 tables of unpaced bots: 177 still here
        # after 15 s). A hand-off that fails leaves the others to finish theirs.
        handed = await asyncio.gather(
            *(self.hand_off(table_id) for table_id in list(self.lobby.tables)),
            return_exceptions=True,
        )
        failures = [h for h in handed if isinstance(h, BaseException)]
        if failures:
            raise failures[0]
        moved = sum(1 for h in handed if h is True)
        with contextlib.suppress(RedisError, OSError):
            await self._publish_lobby()  # (nobody is to find those tables or players here)
        await self.bus.flush()
        return moved

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
                self.directory.forget_published()
                await self.directory.sweep()
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
        for table_id in list(lobby.tables):
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
        found = self.directory.seated.get(username)
        if found is None and username in self.placed:  # (pruned by ``place``)
            table_id, until = self.placed[username]
            if time.monotonic() < until:
                return table_id
        return found

    def status(self) -> dict[str, Any]:
        return {
            "redis": "ok" if self.redis_ok and self.bus.up else "unreachable",
            "tables_owned": self.leases_held,
            "draining": self.draining,
            "coordinator": self.is_coordinator,
            "nodes": sorted(self.directory.live),
        }

    def remote_listing(self, local: Collection[str]) -> list[dict[str, Any]]:
        return self.directory.remote_listing(local)

    def remote_creators(self, local: Iterable[str]) -> list[Creator]:
        return self.directory.remote_creators(local)

"""Relaying: a connection's messages to the node that owns its table, and back again.

A connection may be on any node. Its node sends what the client says to a table to the
table's owner (``in``: the frame as received, with who sent it). When a table moves, its
new owner says so (``moved``) and every node re-attaches its connections at the table, and
those of its seated players, to it (``reattach``); the owner answers ``attached``, and a
re-attach not answered within a third of a lease is sent again, to the lease's holder. A
message for a table between two owners (let go by one, being restored by the next) waits
for the new owner's word and goes on to it (``unowned``): a connection never loses its
table meanwhile. The ladder queue and the tournaments run on the coordinator; the other
nodes relay their players' requests to it (``svc``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from server import protocol
from server.cluster.messages import (
    Back,
    Bye,
    Gone,
    In,
    Message,
    Reattach,
    Sender,
    Service,
    ServiceGone,
)
from server.cluster.peers import RemotePeer
from server.cluster.state import NodeState
from server.errors import ServerError
from server.nodes import Here
from server.protocol import ProtocolError, error
from server.table import BackInput, Table, WatchInput, input_for

log = logging.getLogger("guobiao.cluster")

REATTACH_SECONDS = 60.0  # a re-attach no owner answered is sent again until this old
UNOWNED_SECONDS = 30.0  # a message for a table no node runs waits this long for an owner


class Relaying(NodeState):
    """The node's part that relays its connections to other nodes' tables."""

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
                conn.send(moving(table_id, protocol.request_id(text)))
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
            peer.send(moving(table_id, protocol.request_id(text)))
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
        return await self.directory.seated_table(username)

    async def seat_owner(self, username: str) -> str | None:
        """The node that runs the table ``username`` sits at (None: none that we know)."""
        table_id = await self.seated_table(username)
        return None if table_id is None else await self.owner_of(table_id)

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
            table = self._local_table(table_id)
            if table is not None and table.attended_by(conn):
                # At it already: the word of a table made here (``moved``) comes back to us
                # once its players may have sat down; sent it whole again, each would
                # answer its prompt twice.
                return
            self._attach_here(table, conn, conn.username, watch)
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
        kept = set(self.directory.listings) | {t for conn in self.connections for t in conn.tables}
        kept |= set(self.lobby.tables)
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
            conns = [c for c in map(self.by_cid.get, cids) if c is not None]
            if owner is None and await self._tell_the_end(table_id, conns):
                continue  # (its owner finished the match and let the table go meanwhile)
            for conn in conns:
                if owner is not None and table_id in conn.tables:
                    self._reattach_one(conn, table_id, owner)

    async def _tell_the_end(self, table_id: str, conns: Iterable[Here]) -> bool:
        """Tell ``conns`` the end of ``table_id``'s match as stored (its summary and its
        ``match_end``: ``Lobby.stored_end``), if the table is finished: its owner finished
        it and let it go while this node was stopped, or before a re-attach reached it, and
        nobody told them. False if it is not (or the database cannot say: asked again)."""
        try:
            frames = await self.lobby.stored_end(table_id)
        except Exception as exc:
            log.warning("cluster: cannot read how table %s ended: %r", table_id, exc)
            return False
        if frames is None:
            return False
        for conn in conns:
            if conn.tables.pop(table_id, ...) is ...:
                continue
            self.reattaching.pop((conn.cid, table_id), None)
            self.resyncing.discard((conn.cid, table_id))
            for frame in frames:
                conn.send(frame)
        log.info("cluster: table %s finished elsewhere; its connections here were told", table_id)
        return True

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

    if TYPE_CHECKING:  # (the node's and the inbox's)

        def _trusted(self, key: str) -> bool: ...

        async def _in(self, message: In) -> None: ...


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def moving(table_id: str, reply_to: str | int | None) -> str:
    """The answer to a request for a table that moved before it was handled, or that no
    node took over in time."""
    reason = f"table {table_id} is moving to another node; try again in a moment"
    return error("server_busy", reason, reply_to)

"""What the other nodes' messages do here (``server.cluster.messages``, one handler each).

A table's owner acts for another node's connection through a ``RemotePeer``; what the owner
sends it comes back (``out``, ``prompt``), each word with the table and its fencing token: a
word of an owner older than the newest one this node has heard of (sent before it learnt
it lost the table, or queued before it was paused) is dropped. A table's new owner says so
(``moved``, with its token and its seated players; an older owner's word is ignored) and
this node sends its connections there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, assert_never

import orjson
from redis.exceptions import RedisError

from server import protocol
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
    Unseated,
)
from server.cluster.peers import RemotePeer
from server.cluster.relaying import Relaying, moving
from server.errors import ServerError
from server.lobby import finished_refusal
from server.nodes import Here
from server.protocol import error, refusal
from server.table import BackInput, GoneInput, LobbyError, ReplaceInput, Table

log = logging.getLogger("guobiao.cluster")


@dataclass(frozen=True, slots=True)
class _Finished:
    """A tournament table finished elsewhere, as ``Tournaments.table_finished`` reads it."""

    id: str
    tournament: tuple[int, int, int]


class Inbox(Relaying):
    """The node's part that handles the other nodes' messages."""

    def _peer(self, sender: Sender) -> RemotePeer:
        key = (sender.node, sender.cid, sender.username)
        peer = self.peers.get(key)
        if peer is None:
            peer = RemotePeer(
                self.bus,
                self.name,
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
            case Unseated():
                self.directory.unseated(message.table, message.users)
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
                    moving(table_id, protocol.request_id(message.frame))
                )
        elif await self._open(table_id):

            async def deliver(owner: str | None) -> None:
                if owner == self.name:
                    await self._on_message(message)
                elif owner is not None and not message.hop:
                    self.bus.send(owner, replace(message, hop=True))
                elif isinstance(message, In):
                    self._sender(message.sender).send(
                        moving(table_id, protocol.request_id(message.frame))
                    )

            await self._park(table_id, deliver)
        elif isinstance(message, In):
            await self._no_such_table(message)
        return True

    async def _no_such_table(self, message: In) -> None:
        """Refuse a relayed message for a table no node runs, as the sender's own node
        refuses it (``Connection._to_table``): ``table_finished`` with its match if the
        sender's player sat at it, else ``no_such_table``. A node may be asked about a
        table it never ran: the sender's node took it for the owner (its word of the owner
        was old, or this node held the lease a moment, adopting a table that turned out
        finished)."""
        reply_to = protocol.request_id(message.frame)
        sender = self._sender(message.sender)
        finished = await finished_refusal(self.store, message.table, message.sender.username)
        if finished is not None:
            sender.send(refusal(finished, reply_to))
        else:
            sender.send(error("no_such_table", f"there is no table {message.table!r}", reply_to))

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
            info = self.directory.live.get(peer.home)
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
                await self.matchmaker.join(
                    peer, message.ladder, message.casual, message.id, bot=message.bot
                )
            elif isinstance(message, protocol.QueueLeave) and self.matchmaker is not None:
                self.matchmaker.leave(peer, message.id)
            elif isinstance(message, protocol.TournamentRequest) and self.tournaments is not None:
                await self.tournaments.handle(peer, message)
        except ServerError as exc:
            peer.send(refusal(exc, reply_to))
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
        if message.sender.node == self.name:
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
        if owner != self.name and table_id in lobby.tables:
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
        self._spawn(self._adopt_handed(message.table), f"adopt-{message.table}")

    async def _adopt_handed(self, table_id: str) -> None:
        """Adopt a table its owner handed us, as many at once as orphans: a node that stops
        hands all its tables over together, and adopting them all at once ran out of Redis
        connections. Should Redis fail, the table is an orphan: a beat adopts it."""
        async with self.adoption_room:
            try:
                await self.adopt(table_id)
            except (RedisError, OSError) as exc:
                log.warning(
                    "cluster: adopting table %s, handed to us, failed (%r); an orphan now",
                    table_id,
                    exc,
                )

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
                        await self.matchmaker.join(
                            conn, message.ladder, message.casual, None, bot=message.bot
                        )
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

    if TYPE_CHECKING:  # (the node's)

        async def adopt(self, table_id: str) -> bool: ...

        async def drop(self, table_id: str, players: Sequence[str] = ()) -> None: ...

        async def hand_off(self, table_id: str, to: str | None = None) -> bool: ...

        async def drain(self) -> int: ...

        def _token(self, table_id: str) -> int | None: ...

        def _announce(self, table_id: str, token: int) -> None: ...

"""How a node brings connections back to a table after it moved or Redis came back
(``Node._moved``, ``_reattach_one``, ``_reattach_again``, ``_reattach_in``), without the
processes of tests/server/test_cluster.py: one ``Node`` in this process, on the real test
Redis (``redis_url`` / ``prefix``, tests/server/conftest.py), its app the little these read
(connections, a lobby of stand-in tables), and what it would publish recorded instead.

Two ways a relayed player was left waiting after a Redis restart under load (the cluster
test failed so, now and then, in full CI runs):

- a ``reattach`` lost on the way (the owner not subscribed again yet, a cut connection):
  now the owner answers ``attached``, and the node sends it again, to whoever holds the
  lease then, until it is answered;
- a node that lost a table while Redis was away announced it as its own (``moved``)
  before it learnt so, and the real owner, believing it, dropped its copy: now ``moved``
  carries the fencing token, an older word is ignored, and the owner says again that it
  owns the table;
- a node that reached Redis again before another had written its presence again took that
  one for dead and dropped the players it relays: now no node is taken for dead in the
  lease after Redis came back.

And how a handover loses no player and shows her nothing twice (tests/server/
test_cluster_handover.py plays them with processes): a lease is trusted only for a lease
after it was renewed (one taken back after it lapsed, only once the database says the table
is still ours); a table's word to another node carries its fencing token and an older
owner's is dropped; after a re-attach a table's updates wait for its full one; a message for
a table between two owners waits for the new one, and its connection keeps the table; the
new owner's word brings back every connection of its seated players; a message of ours that
comes back to us is our connection's; what a dropped table had not handled goes on; our
own word of a new table sends its players nothing again.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any
from unittest.mock import ANY

import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from fakes import until

from engine.actions import Action, ActionKind
from server.cluster import relaying
from server.cluster.fenced import FencedStore
from server.cluster.messages import Out, Sender, decode, encode
from server.cluster.node import Node
from server.cluster.peers import RemotePeer
from server.config import ClusterSection
from server.errors import ServerError
from server.table import BackInput, GoneInput, JoinInput, PlayInput, SyncInput, speaking


def wire(body: dict[str, Any]) -> Any:
    """A message as another node sends it (its wire form), as the bus hands it over."""
    return decode(body)


@dataclass
class Conn:
    """A connection of this node, as the node reads it."""

    cid: str
    tables: dict[str, str | None]
    username: str | None = "alice"
    guest: bool = False
    address: str = "127.0.0.1"
    version: int = 2
    relayed: set[str] = field(default_factory=set)
    texts: list[str] = field(default_factory=list)  # what it was sent

    def send(self, text: str) -> None:
        self.texts.append(text)


class StandInTable:
    """A table this node runs: its store's fencing token, its seats, its input queue."""

    def __init__(self, table_id: str, node: Node, token: int, seated: str = "alice") -> None:
        self.id = table_id
        self.store = self.lease = FencedStore(None, table_id, token, node)
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.seated = seated
        self.stopped = False
        self.peers: list[Any] = []  # the connections at it

    def attended_by(self, peer: Any) -> bool:
        return any(p is peer for p in self.peers)

    def seat_of(self, username: str | None) -> int | None:
        return 0 if username == self.seated else None

    async def stop(self) -> None:
        self.stopped = True

    def unhandled(self) -> list[Any]:
        left = []
        while not self.queue.empty():
            left.append(self.queue.get_nowait())
        return left


@dataclass
class Lobby:
    tables: dict[str, StandInTable] = field(default_factory=dict)
    set_aside: dict[str, Any] = field(default_factory=dict)
    summaries: dict[str, Any] = field(default_factory=dict)  # (of its tables: who sits there)

    def forget(self, table: StandInTable, moved: bool = False) -> None:
        del self.tables[table.id]


@dataclass
class Database:
    """What the node reads of the database: the open tables (``get_table``) and each
    table's fencing token (``table_fences``); the finished tables, their seats and last
    match (``table_matches``)."""

    fences: dict[str, int] = field(default_factory=dict)  # the open tables
    finished: dict[str, tuple[list[str | None], int]] = field(default_factory=dict)
    taken: list[str] = field(default_factory=list)  # the tables taken over (``take_table``)
    meanwhile: Any = None  # awaited while asked for a table (another message comes)

    async def get_table(self, table_id: str) -> Any:
        if self.meanwhile is not None:
            await self.meanwhile()
        if table_id in self.finished:
            return SimpleNamespace(state="finished", seats=self.finished[table_id][0])
        return SimpleNamespace(state="playing") if table_id in self.fences else None

    async def table_matches(self, table_id: str) -> list[Any]:
        match = self.finished[table_id][1]
        return [SimpleNamespace(id=match, ended_at=datetime.now(UTC))]

    async def open_table_ids(self) -> list[str]:
        opened = [t for t in self.fences if t not in self.finished]
        if self.meanwhile is not None:
            await self.meanwhile()
        return opened

    async def take_table(self, table_id: str) -> int:
        self.taken.append(table_id)
        return self.fences[table_id] + 1

    async def table_fences(self, table_ids: list[str]) -> dict[str, int]:
        return {t: self.fences[t] for t in table_ids if t in self.fences}


@dataclass
class Sent:
    """What the node published: (to, message in its wire form); ``to`` None for everyone."""

    messages: list[tuple[str | None, dict[str, Any]]] = field(default_factory=list)

    def kinds(self, kind: str) -> list[tuple[str | None, dict[str, Any]]]:
        return [(to, m) for to, m in self.messages if m["k"] == kind]


@dataclass
class Rig:
    node: Node
    lobby: Lobby
    sent: Sent
    connections: list[Conn]
    redis: aioredis.Redis

    def connect(self, conn: Conn) -> Conn:
        self.connections.append(conn)
        self.node.by_cid[conn.cid] = conn  # type: ignore[index]
        return conn

    async def lease(self, table_id: str, owner: str | None) -> None:
        key = self.node.lease_key(table_id)
        if owner is None:
            await self.redis.delete(key)
        else:
            await self.redis.set(key, owner)


@pytest_asyncio.fixture
async def rig(redis_url: str, prefix: str) -> AsyncIterator[Rig]:
    config = ClusterSection(redis_url=redis_url, lease_seconds=3.0, prefix=prefix)
    lobby = Lobby()
    connections: list[Conn] = []
    node = Node(
        config,
        "n2",
        store=Database(),
        lobby=lobby,  # type: ignore[arg-type]
        connections=connections,  # type: ignore[arg-type]
        by_cid={},
    )
    sent = Sent()
    node.bus.send = lambda to, message: sent.messages.append((to, encode(message)))  # type: ignore[method-assign]
    node.bus.broadcast = lambda message: sent.messages.append((None, encode(message)))  # type: ignore[method-assign]
    client = aioredis.from_url(redis_url)
    try:
        yield Rig(node, lobby, sent, connections, client)
    finally:
        await client.aclose()
        await node.close()  # its background tasks first: none reconnects after


def age(node: Node, seconds: float) -> None:
    """Every re-attach still waiting for an answer was sent ``seconds`` earlier."""
    node.reattaching = {
        key: (first - seconds, last - seconds) for key, (first, last) in node.reattaching.items()
    }


@pytest.mark.asyncio
async def test_an_unanswered_reattach_is_sent_again_to_whoever_holds_the_lease(rig: Rig) -> None:
    """Table t1 moved to n1: her connection is sent there. Nothing answers (the message was
    lost): a third of a lease later it is sent again, to n1 while n1 holds the lease, to n3
    once n3 does; not while nobody does (the table is being adopted); never again once the
    owner has answered ``attached``."""
    node, sent = rig.node, rig.sent
    conn = rig.connect(Conn("c.1", {"t1": None}))
    await rig.lease("t1", "n1")
    await node._moved(wire({"k": "moved", "t": "t1", "o": "n1", "f": 1}))
    assert [(to, m["c"], m["t"]) for to, m in sent.kinds("reattach")] == [("n1", "c.1", "t1")]
    assert "n1" in conn.relayed

    await node._reattach_again()  # not yet a third of a lease: not again
    assert len(sent.kinds("reattach")) == 1

    age(node, node.lease_seconds / 3)
    await node._reattach_again()
    assert [to for to, _ in sent.kinds("reattach")] == ["n1", "n1"]

    await rig.lease("t1", None)  # lapsed: being adopted
    age(node, node.lease_seconds / 3)
    await node._reattach_again()
    assert len(sent.kinds("reattach")) == 2
    assert ("c.1", "t1") in node.reattaching  # still waiting

    await rig.lease("t1", "n3")
    await node._reattach_again()  # (still due: not sent since)
    assert [to for to, _ in sent.kinds("reattach")] == ["n1", "n1", "n3"]

    await node._attached(wire({"k": "attached", "c": "c.1", "t": "t1"}))
    age(node, node.lease_seconds)
    await node._reattach_again()
    assert len(sent.kinds("reattach")) == 3
    assert node.reattaching == {}


@pytest.mark.asyncio
async def test_a_reattach_is_given_up_when_its_connection_left_or_after_a_minute(
    rig: Rig,
) -> None:
    node, sent = rig.node, rig.sent
    gone = rig.connect(Conn("c.1", {"t1": None}))
    rig.connect(Conn("c.2", {"t1": None}, username="bob"))
    await rig.lease("t1", "n1")
    await node._moved(wire({"k": "moved", "t": "t1", "o": "n1", "f": 1}))
    assert len(sent.kinds("reattach")) == 2
    del gone.tables["t1"]  # she left the table
    age(node, node.lease_seconds / 3)
    await node._reattach_again()
    assert [m["c"] for _, m in sent.kinds("reattach")] == ["c.1", "c.2", "c.2"]
    age(node, relaying.REATTACH_SECONDS + 1)
    await node._reattach_again()
    assert node.reattaching == {}
    assert len(sent.kinds("reattach")) == 3


@pytest.mark.asyncio
async def test_the_owner_answers_a_reattach_it_took_in(rig: Rig) -> None:
    """n2 runs t1: a ``reattach`` of n1's connection seats her back (a ``BackInput`` for her
    remote peer) and is answered ``attached``; one for a table n2 does not run is not."""
    node, sent = rig.node, rig.sent
    table = StandInTable("t1", node, token=2)
    rig.lobby.tables["t1"] = table
    body = {"k": "reattach", "n": "n1", "c": "x.7", "u": "alice", "g": False, "a": "1.2.3.4"}
    await node._reattach_in(wire({**body, "t": "t1", "f": None}))
    item = table.queue.get_nowait()
    assert isinstance(item, BackInput) and item.peer.cid == "x.7"
    assert sent.kinds("attached") == [("n1", {"k": "attached", "c": "x.7", "t": "t1"})]
    await node._reattach_in(wire({**body, "t": "t9", "f": None}))
    assert len(sent.kinds("attached")) == 1


@pytest.mark.asyncio
async def test_an_older_owners_word_does_not_unseat_the_owner(rig: Rig) -> None:
    """n2 adopted t1 (token 5) while Redis was away; n1, which ran it with token 4 and has
    not learnt it lost it, announces it as its own. n2 keeps its table, says again that it
    owns it (token 5); a node that heard token 5 ignores token 4. A newer word (token 6)
    makes n2 drop its copy (it is the stale one then) and send its connection to n1."""
    node, sent = rig.node, rig.sent
    table = StandInTable("t1", node, token=5)
    rig.lobby.tables["t1"] = table
    rig.lobby.summaries["t1"] = SimpleNamespace(players=("alice",))
    node._hold(node.lease_key("t1"), time.monotonic())  # (it took t1's lease: it is ours)
    conn = rig.connect(Conn("c.1", {"t1": None}))

    await node._moved(wire({"k": "moved", "t": "t1", "o": "n1", "f": 4}))
    assert "t1" in rig.lobby.tables and not table.stopped
    said = {"k": "moved", "t": "t1", "o": "n2", "f": 5, "p": ["alice"]}
    assert sent.kinds("moved") == [(None, said)]
    await node._moved(wire(sent.kinds("moved")[0][1]))  # its own word comes back: she is here
    assert isinstance(table.queue.get_nowait(), BackInput)
    assert node.owners["t1"] == "n2" and node.tokens["t1"] == 5
    await node._moved(wire({"k": "moved", "t": "t1", "o": "n1", "f": 4}))  # again: ignored now
    assert len(sent.kinds("moved")) == 1

    await rig.lease("t1", "n1")
    await node._moved(wire({"k": "moved", "t": "t1", "o": "n1", "f": 6}))
    assert table.stopped and "t1" not in rig.lobby.tables
    assert node.owners["t1"] == "n1"
    assert [(to, m["c"]) for to, m in sent.kinds("reattach")] == [("n1", conn.cid)]


@pytest.mark.asyncio
async def test_no_node_is_taken_for_dead_in_the_lease_after_redis_came_back(rig: Rig) -> None:
    """Redis restarted keeps no presence: each node writes its own again at its next beat.
    A node whose beat came first took the others for dead and dropped every player they
    relay (her seat then played by the server, the match over without her). Now it waits a
    lease after Redis came back; then a node still absent is dead."""
    node = rig.node
    node.lease_seconds = 0.3

    async def nothing() -> None:
        return None

    # The beat's writes and adoption are not under test: only what it reads of presence.
    node._presence = node._publish_lobby = node._coordinate = node._adopt_orphans = nothing  # type: ignore[method-assign]
    table = StandInTable("t1", node, token=1, seated="alice")
    rig.lobby.tables["t1"] = table
    peer = node._peer(Sender("n1", "c.1", "alice"))
    peer.tables.add("t1")  # n1 relays her to our table t1; n1 has no presence (yet)

    node.redis_seen, node.redis_ok = True, False  # the beat had lost Redis
    await node._beat()
    assert node.redis_ok and ("n1", "c.1", "alice") in node.peers
    assert table.queue.empty()  # her seat is still hers

    await asyncio.sleep(node.lease_seconds)
    await node._beat()  # a lease later n1 is still absent: dead
    assert ("n1", "c.1", "alice") not in node.peers
    await asyncio.sleep(0.05)  # (the drop runs as a task of its own)
    gone = await asyncio.wait_for(table.queue.get(), 1)
    assert isinstance(gone, GoneInput) and gone.peer is peer


# --------------------------------------------------- a handover loses no one ---


def out(conn: Conn, text: str, table: str | None = None, token: int | None = None) -> Out:
    """A table's word for ``conn`` as its owner sends it (stamped: with its fencing token)."""
    return Out(conn.cid, text) if token is None else Out(conn.cid, text, table, token)


def update(seq: int, full: bool = False) -> str:
    payload: dict[str, Any] = {"table": "t1", "seq": seq, "events": []}
    return json.dumps({"type": "update", "payload": {**payload, "full": True} if full else payload})


@pytest.mark.asyncio
async def test_a_lease_is_trusted_for_a_lease_after_it_was_renewed(rig: Rig) -> None:
    """Taken or renewed less than a lease ago: ours. Taken back by the keeper after it
    lapsed: ours only once the database says the table's fencing token is still ours (else
    another node took the table meanwhile, and ours is dropped), and then said so."""
    node, lease = rig.node, rig.node.lease_seconds
    table = StandInTable("t1", node, token=5)
    rig.lobby.tables["t1"] = table
    key = node.lease_key("t1")
    node._hold(key, time.monotonic() - lease)  # taken a lease ago (then paused, say)
    assert not node._trusted(key)
    node._renewed(time.monotonic(), (key,), ())
    assert node._trusted(key)

    rig.node.store.fences["t1"] = 5
    node._hold(key, time.monotonic() - lease)
    node._held_until.clear()
    node._renewed(time.monotonic(), (), (key,))  # it had lapsed: taken back
    node._renewed(time.monotonic(), (key,), ())  # (and renewed since: still unsure)
    assert not node._trusted(key)
    await until(lambda: node._trusted(key), "the database's word")
    assert rig.sent.kinds("moved")[-1][1]["f"] == 5

    rig.node.store.fences["t1"] = 6  # another node took it over meanwhile
    node._held_until.clear()
    node._renewed(time.monotonic(), (), (key,))
    await until(lambda: table.stopped, "our copy dropped")
    assert not node._trusted(key) and key not in node._leases


@pytest.mark.asyncio
async def test_a_tables_word_to_another_node_carries_its_fencing_token(rig: Rig) -> None:
    """What a table's task sends a connection of another node carries the table and the
    token it runs it with; what anything else sends (the queue, a tournament) does not."""
    node, sent = rig.node, rig.sent
    peer = node._peer(Sender("n1", "c.9", "bob"))
    table = StandInTable("t1", node, token=4)

    async def the_tables_task() -> None:
        speaking.set(table)  # type: ignore[arg-type]
        peer.send("from the table")
        peer.prompted("t1", 7)

    await asyncio.create_task(the_tables_task())
    peer.send("from the queue")
    (said, prompt, other) = [m for _, m in sent.messages]
    assert (said["x"], said["t"], said["f"]) == ("from the table", "t1", 4)
    assert (prompt["s"], prompt["t"], prompt["f"]) == (7, "t1", 4)
    assert "f" not in other and "t" not in other


@pytest.mark.asyncio
async def test_a_word_of_an_older_owner_is_dropped(rig: Rig) -> None:
    """n3 adopted t1 (token 2) while n1, paused, still ran it (token 1): once a word of
    token 2 is heard, n1's (sent before it learnt it lost the table, or queued before its
    pause) reach her no more; nor, once a newer owner announced itself, n3's."""
    node = rig.node
    conn = rig.connect(Conn("c.1", {"t1": None}))
    await node._out(out(conn, "a", "t1", 1))
    await node._out(out(conn, "b", "t1", 2))
    await node._out(out(conn, "c", "t1", 1))
    await node._out(out(conn, "d"))  # (not a table's word)
    assert conn.texts == ["a", "b", "d"] and node.stale_words == 1
    await node._moved(wire({"k": "moved", "t": "t1", "o": "n3", "f": 3}))  # heard of token 3
    await node._out(out(conn, update(9, full=True), "t1", 2))
    assert conn.texts == ["a", "b", "d"] and node.stale_words == 2


@pytest.mark.asyncio
async def test_after_a_reattach_a_tables_updates_wait_for_its_full_one(rig: Rig) -> None:
    """Messages may have been lost before a re-attach (Redis was away): until the owner
    sends the table whole again, an update of it (after a gap) does not reach her; other
    words do; and a table with no hand in play (its summary says so) sends none."""
    node = rig.node
    conn = rig.connect(Conn("c.1", {"t1": None, "t2": None}))
    await rig.lease("t1", "n1")
    await node._moved(wire({"k": "moved", "t": "t1", "o": "n1", "f": 1}))
    playing = json.dumps({"type": "table", "payload": {"table": "t1", "state": "playing"}})
    for text in (update(8), playing, update(9), update(9, full=True), update(10)):
        await node._out(out(conn, text, "t1", 1))
    assert conn.texts == [playing, update(9, full=True), update(10)]

    await rig.lease("t2", "n1")
    await node._moved(wire({"k": "moved", "t": "t2", "o": "n1", "f": 1}))
    waiting = json.dumps({"type": "table", "payload": {"table": "t2", "state": "waiting"}})
    await node._out(out(conn, waiting, "t2", 1))
    await node._out(out(conn, update(1), "t2", 1))  # the deal: no gap before it
    assert conn.texts[-2:] == [waiting, update(1)]


@pytest.mark.asyncio
async def test_a_message_for_a_table_between_two_owners_waits_for_the_new_one(rig: Rig) -> None:
    """t1's owner let it go and its next one is restoring it (no lease, the table open in
    the database): her ``sync`` waits, her connection keeps the table, and both go to the
    new owner once it says it runs t1. A table that is not open is still no table."""
    node, sent = rig.node, rig.sent
    rig.node.store.fences["t1"] = 1
    conn = rig.connect(Conn("c.1", {"t1": None}))
    await rig.lease("t1", None)
    frame = json.dumps({"type": "sync", "id": 3, "payload": {"table": "t1"}})
    await node.relay(conn, "t1", frame)  # type: ignore[arg-type]
    assert not sent.kinds("in") and conn.tables == {"t1": None}

    await rig.lease("t1", "n3")
    await node._moved(wire({"k": "moved", "t": "t1", "o": "n3", "f": 2, "p": ["alice"]}))
    assert [(to, m["k"]) for to, m in sent.messages if m["k"] in ("reattach", "in")] == [
        ("n3", "reattach"),
        ("n3", "in"),
    ]
    assert sent.kinds("in")[0][1]["f"] == frame

    with pytest.raises(ServerError) as refused:
        await node.relay(conn, "t9", frame.replace("t1", "t9"))  # type: ignore[arg-type]
    assert refused.value.code == "no_such_table"


@pytest.mark.asyncio
async def test_a_message_is_not_left_waiting_for_a_word_that_came_while_it_asked(
    rig: Rig,
) -> None:
    """No node held t1's lease when her ``sync`` was relayed; while the node asked the
    database whether t1 is still open, n3's word came (it runs t1 now): the ``sync`` goes
    to n3 at once, not to wait for a word already heard."""
    node, sent = rig.node, rig.sent
    database = rig.node.store
    database.fences["t1"] = 1
    conn = rig.connect(Conn("c.1", {"t1": None}))
    await rig.lease("t1", None)

    async def n3_adopts() -> None:
        database.meanwhile = None
        await rig.lease("t1", "n3")
        await node._moved(wire({"k": "moved", "t": "t1", "o": "n3", "f": 2}))

    database.meanwhile = n3_adopts
    frame = json.dumps({"type": "sync", "id": 3, "payload": {"table": "t1"}})
    await node.relay(conn, "t1", frame)  # type: ignore[arg-type]
    assert [(to, m["f"]) for to, m in sent.kinds("in")] == [("n3", frame)]
    assert not node.unowned


@pytest.mark.asyncio
async def test_the_new_owners_word_brings_back_every_connection_of_its_players(
    rig: Rig,
) -> None:
    """Bob came back (``resume``) while no node ran his table: his seat was found nowhere,
    his connection lists no table. The new owner says who sits at it: bob's connection is
    sent there; a connection of a player who does not sit there is not."""
    node, sent = rig.node, rig.sent
    bob = rig.connect(Conn("c.1", {}, username="bob"))
    rig.connect(Conn("c.2", {}, username="carol"))
    await rig.lease("t1", "n1")
    await node._moved(wire({"k": "moved", "t": "t1", "o": "n1", "f": 1, "p": ["alice", "bob"]}))
    assert [(to, m["c"]) for to, m in sent.kinds("reattach")] == [("n1", "c.1")]
    assert bob.tables == {"t1": None}


@pytest.mark.asyncio
async def test_our_own_word_of_a_new_table_sends_its_players_nothing_again(rig: Rig) -> None:
    """A table made here says so to every node, us too (``moved``); its players who sat
    down meanwhile are at it already: not sent it whole again (each would answer its prompt
    twice, refused as ``stale``: found on two workers). A connection of hers the table does
    not have (relayed elsewhere before) is brought back to it."""
    node = rig.node
    table = StandInTable("t1", node, token=0)
    rig.lobby.tables["t1"] = table
    seated = rig.connect(Conn("c.1", {"t1": None}))
    table.peers.append(seated)
    elsewhere = rig.connect(Conn("c.2", {"t1": None}))
    await rig.lease("t1", "n2")
    await node._moved(wire({"k": "moved", "t": "t1", "o": "n2", "f": 0, "p": ["alice"]}))
    item = table.queue.get_nowait()
    assert isinstance(item, BackInput) and item.peer is elsewhere
    assert table.queue.empty()


@pytest.mark.asyncio
async def test_a_message_of_ours_that_comes_back_is_our_connections(rig: Rig) -> None:
    """Her ``sync`` went to t1's old owner, which sent it on to us, its owner now: the
    table takes it from her connection itself, not from a stand-in for another node's
    (the table would then send her everything twice)."""
    node = rig.node
    table = StandInTable("t1", node, token=2)
    rig.lobby.tables["t1"] = table
    conn = rig.connect(Conn("c.1", {"t1": None}))
    frame = json.dumps({"type": "sync", "id": 3, "payload": {"table": "t1"}})
    body = {"k": "in", "n": "n2", "c": "c.1", "u": "alice", "t": "t1", "f": frame, "hop": 1}
    await node._in(wire(body))
    item = table.queue.get_nowait()
    assert isinstance(item, SyncInput) and item.peer is conn and not node.peers


@pytest.mark.asyncio
async def test_a_relayed_message_for_a_finished_table_tells_its_player_its_match(
    rig: Rig,
) -> None:
    """t1's match (7) ended at n1, which let it go; alice's and bob's ``sync`` of t1 come
    from n3 to us all the same (n3 took us for its owner: we held its lease a moment,
    adopting an orphan that had finished). Alice, who sat there, is refused
    ``table_finished`` with its match, as n3 itself would have told her (a stress run of
    tests/server/test_cluster.py saw her told ``no_such_table``); bob, a stranger,
    ``no_such_table``."""
    node, sent = rig.node, rig.sent
    node.store.finished["t1"] = (["alice", "bot:default", None, None], 7)
    for cid, username in (("c.1", "alice"), ("c.2", "bob")):
        frame = json.dumps({"type": "sync", "id": 3, "payload": {"table": "t1"}})
        await node._in(wire({"k": "in", "n": "n3", "c": cid, "u": username, "t": "t1", "f": frame}))
    answers = [(to, m["c"], json.loads(m["x"])) for to, m in sent.kinds("out")]
    assert [(to, cid, text["payload"]) for to, cid, text in answers] == [
        ("n3", "c.1", {"code": "table_finished", "table": "t1", "match": 7, "reason": ANY}),
        ("n3", "c.2", {"code": "no_such_table", "reason": "there is no table 't1'"}),
    ]
    assert [text["reply_to"] for _, _, text in answers] == [3, 3]


@pytest.mark.asyncio
async def test_a_table_that_finished_as_we_looked_for_orphans_is_not_taken(rig: Rig) -> None:
    """Our sweep for orphans read t1 open; its match ended then, and n1, its owner, let it
    go (stored finished first): when we read the leases nobody holds t1. We do not take it
    (its lease, its fencing token): held by us even a moment, its players' node would send
    us their messages for it and take us for its owner, and each would be refused
    ``no_such_table`` or wait for an owner that never comes (a stress run of
    tests/server/test_cluster.py saw both)."""
    node, database = rig.node, rig.node.store
    database.fences["t1"] = 1

    async def finishes() -> None:
        database.meanwhile = None
        database.finished["t1"] = (["alice", None, None, None], 7)

    database.meanwhile = finishes
    await rig.lease("t1", None)
    await node._adopt_orphans()
    assert database.taken == []
    assert await rig.redis.get(node.lease_key("t1")) is None


@pytest.mark.asyncio
async def test_what_a_dropped_table_had_not_handled_goes_on(rig: Rig) -> None:
    """n1 took t1 over while we were paused; our copy had a ``sync`` of bob's (on n3), an
    action of his and carol's ``join_table`` waiting: the ``sync`` and the join go on to n1
    (each sender waits for the answer; carol's join was not made here), the action is
    answered that the table moved (he is sent the table again anyway)."""
    node, sent = rig.node, rig.sent
    table = StandInTable("t1", node, token=1)
    rig.lobby.tables["t1"] = table
    peer = node._peer(Sender("n3", "c.7", "bob", version=2))
    carol = node._peer(Sender("n3", "c.8", "carol", version=2))
    table.queue.put_nowait(SyncInput(peer, 4))
    table.queue.put_nowait(PlayInput(peer, 5, 9, Action(ActionKind.PASS)))
    table.queue.put_nowait(JoinInput(carol, 6, 2, "k3y"))
    await rig.lease("t1", "n1")
    await node._moved(wire({"k": "moved", "t": "t1", "o": "n1", "f": 2}))
    assert table.stopped
    (to, passed), (to_2, joined) = sent.kinds("in")
    assert to == "n1" and (passed["n"], passed["c"], passed["u"]) == ("n3", "c.7", "bob")
    assert json.loads(passed["f"]) == {"type": "sync", "payload": {"table": "t1"}, "id": 4}
    assert to_2 == "n1" and (joined["c"], joined["u"]) == ("c.8", "carol")
    assert json.loads(joined["f"]) == {
        "type": "join_table",
        "payload": {"table": "t1", "seat": 2, "invite_code": "k3y"},
        "id": 6,
    }
    told = [json.loads(m["x"]) for _, m in sent.kinds("out")]
    assert [(m["reply_to"], m["payload"]["code"]) for m in told] == [(5, "server_busy")]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("homes", "placed"),
    [
        (["n1", "n1", "n1", "n2"], "n1"),  # three of four elsewhere: there
        (["n1", "n1", "n3", "n2"], "n1"),  # the most, even if not half
        (["n1", "n1", "n2", "n2"], None),  # a tie stays here
        (["n1", "n3", "n2", "n2"], None),  # most here already
        (["n3", "n3", "n3", "n2"], None),  # that node is draining
        (["n4", "n4", "n4", "n2"], None),  # that node is not live (as last read)
        (["n1", "n3", "n3", "n3"], "n1"),  # the most of the ready ones
        ([], None),  # nobody came: here
    ],
)
async def test_a_queue_table_is_placed_where_most_of_its_players_are(
    rig: Rig, homes: list[str], placed: str | None
) -> None:
    """``Node.placement`` (n2 the coordinator, n1 and n2 ready, n3 draining): of the ready
    nodes, the one most of the table's connections are on, if that is another; else None
    (here). A connection of this node counts as here, one of another node as its home's."""
    node = rig.node
    node.directory.live = {"n1": {}, "n2": {}, "n3": {"draining": True}}
    peers: list[Any] = [
        Conn(f"c{i}", {}, username=f"p{i}")
        if home == "n2"
        else RemotePeer(
            node.bus, "n2", home, f"c{i}", username=f"p{i}", guest=False, address="", version=2
        )
        for i, home in enumerate(homes)
    ]
    assert node.placement(peers) == placed

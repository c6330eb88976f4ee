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
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest
import pytest_asyncio
import redis.asyncio as aioredis

from server.cluster import node as node_module
from server.cluster.node import FencedStore, Node
from server.config import ClusterSection
from server.table import BackInput, GoneInput


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


class StandInTable:
    """A table this node runs: its store's fencing token, its seats, its input queue."""

    def __init__(self, table_id: str, node: Node, token: int, seated: str = "alice") -> None:
        self.id = table_id
        self.store = FencedStore(None, table_id, token, node)
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.seated = seated
        self.stopped = False

    def seat_of(self, username: str | None) -> int | None:
        return 0 if username == self.seated else None

    async def stop(self) -> None:
        self.stopped = True


@dataclass
class Lobby:
    tables: dict[str, StandInTable] = field(default_factory=dict)
    set_aside: dict[str, Any] = field(default_factory=dict)

    def forget(self, table: StandInTable, moved: bool = False) -> None:
        del self.tables[table.id]


@dataclass
class Sent:
    """What the node published: (to, message); ``to`` None for everyone."""

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
        self.node.app.by_cid[conn.cid] = conn
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
    app = SimpleNamespace(
        config=SimpleNamespace(cluster=config),
        node="n2",
        lobby=lobby,
        connections=connections,
        by_cid={},
    )
    node = Node(app)  # type: ignore[arg-type]
    sent = Sent()
    node.bus.send = lambda to, message: sent.messages.append((to, message))  # type: ignore[method-assign]
    node.bus.broadcast = lambda message: sent.messages.append((None, message))  # type: ignore[method-assign]
    client = aioredis.from_url(redis_url)
    try:
        yield Rig(node, lobby, sent, connections, client)
    finally:
        await client.aclose()
        await node.keeper.close(1.0)
        await node.redis.aclose()


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
    await node._moved({"k": "moved", "t": "t1", "o": "n1", "f": 1})
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

    await node._attached({"k": "attached", "c": "c.1", "t": "t1"})
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
    await node._moved({"k": "moved", "t": "t1", "o": "n1", "f": 1})
    assert len(sent.kinds("reattach")) == 2
    del gone.tables["t1"]  # she left the table
    age(node, node.lease_seconds / 3)
    await node._reattach_again()
    assert [m["c"] for _, m in sent.kinds("reattach")] == ["c.1", "c.2", "c.2"]
    age(node, node_module.REATTACH_SECONDS + 1)
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
    await node._reattach_in({**body, "t": "t1", "f": None})
    item = table.queue.get_nowait()
    assert isinstance(item, BackInput) and item.peer.cid == "x.7"
    assert sent.kinds("attached") == [("n1", {"k": "attached", "c": "x.7", "t": "t1"})]
    await node._reattach_in({**body, "t": "t9", "f": None})
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
    conn = rig.connect(Conn("c.1", {"t1": None}))

    await node._moved({"k": "moved", "t": "t1", "o": "n1", "f": 4})
    assert "t1" in rig.lobby.tables and not table.stopped
    assert sent.kinds("moved") == [(None, {"k": "moved", "t": "t1", "o": "n2", "f": 5})]
    await node._moved(sent.kinds("moved")[0][1])  # its own word comes back: she is here
    assert isinstance(table.queue.get_nowait(), BackInput)
    assert node.owners["t1"] == "n2" and node.tokens["t1"] == 5
    await node._moved({"k": "moved", "t": "t1", "o": "n1", "f": 4})  # again: ignored now
    assert len(sent.kinds("moved")) == 1

    await rig.lease("t1", "n1")
    await node._moved({"k": "moved", "t": "t1", "o": "n1", "f": 6})
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
    peer = node._peer({"n": "n1", "c": "c.1", "u": "alice"})
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

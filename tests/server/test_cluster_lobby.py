"""What a cluster node publishes of its lobby (``Node._publish_lobby``): its public tables in
``PREFIX:listing``, its seated players in ``PREFIX:seated``, the creators of its tables waiting
for players in ``PREFIX:waiting``, each publication the changes since the last one; and what
another node reads of them (``Node._read_cluster``). Against the real test Redis
(``redis_url`` / ``prefix``, tests/server/conftest.py), with a node whose app is the little the
publication reads: its name, its cluster settings and its lobby's summaries, tables, seats
and creators."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
import redis.asyncio as aioredis
from fakes import QUICK, Clock, FakePeer, FakeStore, until

import server.lobby
import server.table
from server.cluster.node import Node
from server.config import ClusterSection, Config, LimitsSection
from server.nodes import Creator
from server.table import AddBotsInput, GoneInput, JoinInput, SyncInput


@dataclass
class Summary:
    listed: dict[str, Any] | None  # its entry in the listing (None: not listed)


class Feed:
    """The lobby's listing feed: told when another node's listing changed."""

    def __init__(self) -> None:
        self.changes = 0

    def changed(self) -> None:
        self.changes += 1


@dataclass
class Lobby:
    feed: Feed = field(default_factory=Feed)
    summaries: dict[str, Summary] = field(default_factory=dict)
    tables: dict[str, object] = field(default_factory=dict)
    seated: dict[str, str] = field(default_factory=dict)
    creators: dict[str, Creator] = field(default_factory=dict)

    def sit(self, username: str, table_id: str) -> None:
        if table_id not in self.tables:
            self.tables[table_id] = object()
            self.summaries[table_id] = Summary({"table": table_id})
        self.seated[username] = table_id


def node_for(redis_url: str, prefix: str, lobby: Lobby, name: str = "n1") -> Node:
    config = ClusterSection(redis_url=redis_url, lease_seconds=3.0, prefix=prefix)
    return Node(config, name, store=None, lobby=lobby, connections=[], by_cid={})  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def nodes_for(
    redis_url: str, prefix: str, *lobbies: Lobby, first: int = 1
) -> AsyncIterator[list[Node]]:
    """Nodes n1, n2, ... (from n``first``) with these lobbies, closed at the end (their
    background tasks first: none reconnects after)."""
    made = [node_for(redis_url, prefix, lobby, f"n{i}") for i, lobby in enumerate(lobbies, first)]
    try:
        yield made
    finally:
        for node in made:
            await node.close()


async def read_hash(redis_url: str, key: str) -> dict[str, str]:
    client = aioredis.from_url(redis_url, decode_responses=True)
    try:
        return dict(await client.hgetall(key))
    finally:
        await client.aclose()


def slow_first_reply(node: Node, seconds: float) -> None:
    """The first pipeline the node runs from now on gets its reply ``seconds`` late (a busy
    Redis, a slow link): another publication can begin and end meanwhile."""
    pipeline = node.redis.pipeline
    slowed = False

    def make(*args: Any, **kwargs: Any) -> Any:
        nonlocal slowed
        pipe = pipeline(*args, **kwargs)
        if not slowed:
            slowed = True
            execute = pipe.execute

            async def late(*a: Any, **k: Any) -> Any:
                reply = await execute(*a, **k)
                await asyncio.sleep(seconds)
                return reply

            pipe.execute = late  # type: ignore[method-assign]
        return pipe

    node.redis.pipeline = make  # type: ignore[method-assign]


@pytest.mark.asyncio
async def test_a_publication_overtaken_by_another_is_not_confused(
    redis_url: str, prefix: str
) -> None:
    """A player left: the beat's publication asks Redis whether the hash still says our
    table, and its reply is slow; a soon publication (``lobby_changed``) starts meanwhile.
    Both end, the player is gone from the hash (before, the slow one read the other's
    bookkeeping, which no longer had her: a KeyError in the beat)."""
    lobby = Lobby()
    lobby.sit("alice", "t1")
    lobby.sit("bob", "t1")
    node = node_for(redis_url, prefix, lobby)
    try:
        await node._publish_lobby()
        del lobby.seated["alice"]
        slow_first_reply(node, 0.2)
        beat = asyncio.create_task(node._publish_lobby())
        await asyncio.sleep(0.05)  # the beat waits for its reply
        await node._publish_lobby()  # the soon one
        await beat
        assert await read_hash(redis_url, f"{prefix}:seated") == {"bob": "t1 n1"}
    finally:
        await node.close()  # its background tasks first: none reconnects after


@pytest.mark.asyncio
async def test_concurrent_publications_leave_exactly_who_sits_where(
    redis_url: str, prefix: str
) -> None:
    """The beat's publication and a soon one (``lobby_changed``) overlap, players leaving and
    sitting down between them: nothing fails (a publication read the other's bookkeeping
    half-way before) and the hash ends as the lobby is."""
    lobby = Lobby()
    for n in range(40):
        lobby.sit(f"p{n}", f"t{n // 4}")
    node = node_for(redis_url, prefix, lobby)
    try:
        await node._publish_lobby()
        for round_no in range(5):
            for n in range(0, 40, 3):  # some leave, some come back at another table
                lobby.seated.pop(f"p{n}", None)
            publications = [asyncio.create_task(node._publish_lobby()) for _ in range(3)]
            await asyncio.sleep(0)
            for n in range(0, 40, 6):
                lobby.sit(f"p{n}", f"t{10 + round_no}")
            publications.append(asyncio.create_task(node._publish_lobby()))
            await asyncio.gather(*publications)
            await node._publish_lobby()
            expected = {u: f"{t} n1" for u, t in lobby.seated.items()}
            assert await read_hash(redis_url, f"{prefix}:seated") == expected
        listing = await read_hash(redis_url, f"{prefix}:listing")
        assert set(listing) == set(lobby.tables)
        assert orjson.loads(listing["t0"]) == {"n": "n1", "l": {"table": "t0"}}
    finally:
        await node.close()  # its background tasks first: none reconnects after


@pytest.mark.asyncio
async def test_every_node_counts_the_others_waiting_tables_by_creator(
    redis_url: str, prefix: str
) -> None:
    """Node n1's tables waiting for players, with who created them, reach node n2, which
    counts them against its own limits (``Lobby._check_room``); a table that starts leaves
    the count at n1's next publication; a dead node's count nowhere."""
    ours, theirs = Lobby(), Lobby()
    ours.creators = {"t1": Creator("alice", "192.0.2.1"), "t2": Creator("bob", "192.0.2.1")}
    async with nodes_for(redis_url, prefix, ours, theirs) as (n1, n2):
        await n1._presence()
        await n2._presence()
        await n1._publish_lobby()
        await n2._read_cluster()
        assert sorted(n2.remote_creators(theirs.tables), key=lambda c: c.username) == [
            Creator("alice", "192.0.2.1"),
            Creator("bob", "192.0.2.1"),
        ]
        assert n2.remote_creators({"t2"}) == [Creator("alice", "192.0.2.1")]  # ours now
        await n1._read_cluster()
        assert n1.remote_creators(ours.tables) == []  # its own are counted from its lobby
        del ours.creators["t1"]  # started
        await n1._publish_lobby()
        await n2._read_cluster()
        assert n2.remote_creators(theirs.tables) == [Creator("bob", "192.0.2.1")]
        await n1.redis.delete(n1.node_key)  # n1 died: its word is no more
        await n2._read_cluster()
        assert n2.remote_creators(theirs.tables) == []


@pytest.mark.asyncio
async def test_players_told_unseated_stay_so_until_their_tables_owner_publishes_it(
    redis_url: str, prefix: str
) -> None:
    """n1's match at t1 finished: n2 hears ``unseated`` before n1 publishes who sits where (a
    moment later), and forgets alice and bob there at once. A beat of n2 reading the hash
    meanwhile does not seat them there again; once the hash says so too, n2 keeps no trace,
    and a later seat of hers is read as usual."""
    ours, theirs = Lobby(), Lobby()
    for name, table in (("alice", "t1"), ("bob", "t1"), ("carol", "t2")):
        ours.sit(name, table)
    async with nodes_for(redis_url, prefix, ours, theirs) as (n1, n2):
        await n1._presence()
        await n2._presence()
        await n1._publish_lobby()
        await n2._read_cluster()
        assert n2.seated_elsewhere("alice") == "t1"
        n2.directory.unseated("t1", ("alice", "bob"))  # as n2's inbox does with the message
        assert n2.seated_elsewhere("alice") is None and n2.seated_elsewhere("carol") == "t2"
        await n2._read_cluster()  # the hash still says t1: n1 has not published yet
        assert n2.seated_elsewhere("alice") is None and n2.seated_elsewhere("bob") is None
        assert await n2.directory.seated_table("alice") is None
        assert n2.seated_elsewhere("carol") == "t2"
        del ours.seated["alice"], ours.seated["bob"]
        await n1._publish_lobby()
        await n2._read_cluster()
        assert n2.directory.unseated_at == {}
        ours.sit("alice", "t3")
        await n1._publish_lobby()
        await n2._read_cluster()
        assert n2.seated_elsewhere("alice") == "t3"


@pytest.mark.asyncio
async def test_a_finished_match_is_told_to_every_node_only_if_every_node_speaks_it(
    redis_url: str, prefix: str
) -> None:
    """``unseated`` is broadcast when a match ends while every live node's presence says it
    speaks it; not while a node of the previous release runs (its presence says nothing),
    which would refuse an unknown message: the beat tells everyone then, as before."""
    async with nodes_for(redis_url, prefix, Lobby()) as (n1,):
        sent: list[Any] = []
        n1.bus.broadcast = sent.append  # type: ignore[method-assign]
        await n1._presence()
        await n1._read_cluster()
        n1.match_over("t1", ("alice", "bob"))
        assert [(m.kind, m.table, m.users) for m in sent] == [("unseated", "t1", ("alice", "bob"))]
        n1.match_over("t2", ())  # nobody sat there (a table closed empty)
        assert len(sent) == 1
        older = {"node": "n0", "incarnation": 1, "tables": 0}  # a presence without "speaks"
        await n1.redis.set(f"{prefix}:node:n0", orjson.dumps(older), px=5000)
        await n1._read_cluster()
        n1.match_over("t3", ("carol",))
        assert len(sent) == 1


@pytest.mark.asyncio
@pytest.mark.parametrize("seed", range(3))
async def test_reading_only_what_changed_gives_what_reading_everything_gives(
    redis_url: str, prefix: str, seed: int
) -> None:
    """n2 reads at every beat only the entries of ``PREFIX:seated`` and ``PREFIX:listing``
    that changed (``Directory._delta``), and n1 publishes only what changed (a table's
    summary that is still the one it published is not encoded again). After each of 40
    random steps of n1 (players sit down, leave, move; tables come and go, their summaries
    replaced by the lobby, by an equal one or not; n1 dies and comes back), what n2 knows is
    what a node reading everything for the first time (n3) knows, and what n1's lobby holds."""
    rng = random.Random(seed)
    ours = Lobby()
    async with nodes_for(redis_url, prefix, ours, Lobby()) as (n1, n2):
        await n2._presence()
        alive = True
        for step in range(40):
            roll = rng.random()
            if roll < 0.1 and alive:  # n1 dies: its word is no more
                await n1.redis.delete(n1.node_key)
                alive = False
            elif roll < 0.2 and not alive:
                alive = True
            for _ in range(rng.randrange(1, 6)):
                user, table = f"p{rng.randrange(12)}", f"t{rng.randrange(5)}"
                if rng.random() < 0.3:
                    ours.seated.pop(user, None)
                else:
                    ours.sit(user, table)
            for table in list(ours.tables):
                if table not in ours.seated.values() and rng.random() < 0.3:
                    del ours.tables[table], ours.summaries[table]
                elif rng.random() < 0.3:  # a new summary (as the lobby makes one): same or not
                    listing = {"table": table, "hand": rng.randrange(3)}
                    ours.summaries[table] = Summary(listing)
            if alive:
                await n1._presence()
            await n1._publish_lobby()
            await n2._read_cluster()
            async with nodes_for(redis_url, prefix, Lobby(), first=3) as (fresh,):
                await fresh._read_cluster()
                assert n2.directory.seated == fresh.directory.seated, step
                assert n2.directory.listings == fresh.directory.listings, step
                assert n2.directory.listed == fresh.directory.listed, step
            expected = dict(ours.seated) if alive else {}  # (a dead node's word is no more)
            assert n2.directory.seated == expected, step
            listings = {t: ours.summaries[t].listed for t in ours.tables} if alive else {}
            assert n2.directory.listings == listings, step
            assert set(n2.directory.listed) == (set(ours.tables) if alive else set()), step


@pytest.mark.asyncio
async def test_a_table_seen_late_is_published_without_its_hand_until_its_end_is_shown(
    redis_url: str, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table whose spectators see it 5 s late (a real lobby's, on a fake store): its entry
    in ``PREFIX:listing`` held its live hand number (each reader hid it), and went as soon
    as its match ended, 5 s before its spectators saw the end; the other nodes listed it no
    more. Published with no hand number, and as it was while played until the end is shown
    them; then it goes."""
    clock = Clock()
    monkeypatch.setattr(server.table.sources, "time", clock)
    config = Config(timers=QUICK, limits=LimitsSection(max_tables=10))
    lobby = server.lobby.Lobby(config, FakeStore())
    try:
        async with nodes_for(redis_url, prefix, lobby, Lobby()) as (n1, n2):  # type: ignore[arg-type]

            async def published() -> dict[str, Any]:
                await n1._presence()
                await n1._publish_lobby()
                await n2._read_cluster()
                entries = await read_hash(redis_url, f"{prefix}:listing")
                return {t: orjson.loads(raw)["l"] for t, raw in entries.items()}

            table = await lobby.create(None, None, False, hands=1, spectator_delay_seconds=5)
            alice = FakePeer("alice")
            await table.queue.put(JoinInput(alice, 1, 0, None))
            await table.queue.put(AddBotsInput(alice, 2, "fast"))
            await until(alice.updates, "the deal")
            playing = (await published())[table.id]
            assert (playing["state"], playing["hand_no"]) == ("playing", None)
            assert n2.directory.listings == {table.id: playing}
            await table.queue.put(GoneInput(alice, None))  # the server plays her seat: it ends
            await until(lambda: lobby.summaries[table.id].state == "finished", "the end")
            assert await published() == {table.id: playing} == n2.directory.listings
            clock.now += 5
            await table.queue.put(SyncInput(FakePeer("stranger"), None))  # (wakes it now)
            await until(lambda: table.id not in lobby.tables, "the table gone, nobody there")
            assert await published() == {} == n2.directory.listings
    finally:
        await lobby.shutdown()

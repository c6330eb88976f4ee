"""Cluster mode: several ``guobiao serve`` nodes on one PostgreSQL database and one Redis
(tests/clusterkit.py starts them as processes, with a Redis of each test's own).

Every player here is a network client playing the ``default`` engine bot over the wire
(``server.client.play``), at tables of four such players or of one and three ``default``
server bots. Turns are 120 s, longer than any wait here: no timeout ever plays for anyone,
and a decision nobody is asked again (an update lost between nodes) fails the test. While a
player is away (her node killed, stopped, restarting), the server plays her seat with the
same bot. A match is then fixed by its seed: whatever happens to the nodes and to Redis, its
stored hands must be exactly those of ``engine.simulation.play_match(seed, four default
bots)``, its action log ``seq`` 1..n without a gap or a duplicate, replaying to the stored
hands.

The scenarios (docs/deployment.md describes the behaviour they check): a match across three
nodes and the lobby of every node; kill -9 of a table's owner; an owner paused past its lease
(fencing); Redis restarted; a rolling restart; the admin CLI; ``--workers``. PostgreSQL is required
(``postgres`` marker: skipped when unreachable); so is ``redis-server`` (skipped when
missing, a failure under ``CI=true``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from clusterkit import (
    TEST_TIMERS,
    Cluster,
    Node,
    Unavailable,
    free_port,
    postgres,
    private_redis,
    until,
)
from httpkit import http_request
from pgkit import drop_database

from engine.bots import make_bot
from engine.rules import MCR
from engine.simulation import play_match
from server.cli.replay import read_log
from server.client import Client, ClientError, ServerError, TableState, play
from server.db.store import Store

# Turns outlast every wait of these tests: a decision nobody is asked again (an update lost
# between nodes) fails the test instead of being played by a timeout, perhaps as the bot would.
TURN_SECONDS = 120
PASSWORD = "correct horse battery"
MATCH_TIMEOUT = 90.0  # seconds for a whole short match, failovers included
HANDS = 3  # short matches: the file must stay within a few minutes


# --------------------------------------------------------------- fixtures ---

MakeCluster = Callable[..., Awaitable[Cluster]]


@pytest_asyncio.fixture
async def make_cluster(tmp_path: Path) -> AsyncIterator[MakeCluster]:
    """``await make_cluster(nodes, lease_seconds=..., prefix=...)``: a cluster with its own
    Redis and database, ``nodes`` nodes started and ready. At the end every process is
    killed and the database dropped; the end of each node's log is printed (pytest shows it
    when the test fails)."""
    made: list[Cluster] = []

    async def make(nodes: int, **options: Any) -> Cluster:
        try:
            cluster = await Cluster.create(tmp_path / f"cluster{len(made)}", **options)
        except Unavailable as exc:
            if os.environ.get("CI") == "true" and "redis" in str(exc):
                pytest.fail(f"CI needs redis-server: {exc}")
            pytest.skip(str(exc))
        made.append(cluster)
        if nodes:
            await cluster.start(nodes)
        return cluster

    try:
        yield make
    finally:
        for cluster in made:
            print(cluster.tails())
            cluster.close()
            with contextlib.suppress(Exception):
                await drop_database(cluster.database_url)


# ---------------------------------------------------------------- players ---


def normalized(value: Any) -> Any:
    return json.loads(json.dumps(value))


def offline_records(seed: int, match_id: int, hands: int) -> tuple[list[dict[str, Any]], list[int]]:
    """The hands and final scores of the match played offline by four default bots."""
    bots = [make_bot("default", seed=p) for p in range(4)]
    match = play_match(seed, bots, MCR, match_id, hands=hands)
    return [normalized(r.to_dict()) for r in match.records], list(match.scores)


async def ready(node: Node) -> bool:
    """Whether a node runs, is not paused and answers /readyz 200 (within a second)."""
    if not node.alive or node.paused:
        return False
    try:
        status, _ = await asyncio.wait_for(node.readyz(), 1)
    except (OSError, TimeoutError, ValueError, IndexError):
        return False
    return status == 200


async def connect(node: Node) -> Client:
    """A connection to ``node`` that keeps every frame it receives (``Client.frames``)."""
    return await Client.connect(node.url, rate=None, record=True)


@dataclass
class Player:
    """A registered player and her current connection (to ``node``)."""

    name: str
    node: Node
    client: Client
    seat: int | None = None
    reconnects: list[str] = field(default_factory=list)  # the nodes she moved to
    earlier: list[dict[str, Any]] = field(default_factory=list)  # her closed connections' frames

    @classmethod
    async def register(cls, node: Node, name: str) -> Player:
        client = await connect(node)
        await client.register(name, PASSWORD)
        return cls(name, node, client)

    @property
    def token(self) -> str:
        assert self.client.session is not None
        return self.client.session.token

    def state(self, table: str) -> TableState:
        return self.client._table(table)

    @property
    def frames(self) -> list[dict[str, Any]]:
        """Every frame she received, on all her connections, in order."""
        return [*self.earlier, *self.client.frames]

    async def move_to(self, node: Node, table: str | None = None) -> None:
        """Close this connection, connect to ``node`` and ``resume``; with ``table``, wait for
        the table's full update there (she is back at her table)."""
        token = self.token
        await self.client.close()  # harmless when it is closed already
        client = await connect(node)
        try:
            full = None
            if table is not None:
                full = asyncio.ensure_future(
                    client.wait_for(
                        lambda m: m.type == "update" and m.table == table and m.payload["full"],
                        timeout=20,
                    )
                )
                await asyncio.sleep(0)
            await client.resume(token)
            if full is not None:
                update = await full
                assert update.payload["view"]["you"] == self.seat
                # Relayed or not, the hand comes with its commitment (its reveal checks).
                assert (
                    update.payload["commitment"]
                    == client.tables[table].commits[update.payload["hand_no"]]
                )
        except BaseException:
            await client.close()
            raise
        self.earlier.extend(self.client.frames)
        self.client, self.node = client, node
        self.reconnects.append(node.name)

    async def reconnect(self, cluster: Cluster, table: str, timeout: float = 30) -> None:
        """Her connection was lost: resume on some ready node (another first)."""
        deadline = time.monotonic() + timeout
        while True:
            candidates = sorted(cluster.nodes.values(), key=lambda n: n is self.node)
            for node in candidates:
                if not await ready(node):
                    continue
                with contextlib.suppress(ClientError, OSError, TimeoutError):
                    await self.move_to(node)
                    return
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name} found no node to resume on:\n{cluster.tails()}")
            await asyncio.sleep(0.2)

    async def play(
        self, cluster: Cluster, table: str, *, think: float = 0.0, timeout: float = MATCH_TIMEOUT
    ) -> dict[str, Any]:
        """Play the table to the match's end with the default bot of her seat, resuming on
        another node whenever her connection is lost; the ``match_end`` payload."""
        assert self.seat is not None
        bot = make_bot("default", seed=self.seat)

        async def rounds() -> dict[str, Any]:
            while True:
                end = await play(self.client, table, bot, think=think)
                if end is not None:
                    return end
                if self.client.is_open:
                    raise AssertionError(f"{self.name}: table {table} ended without match_end")
                await self.reconnect(cluster, table)

        try:
            return await asyncio.wait_for(rounds(), timeout)
        except TimeoutError:
            raise AssertionError(
                f"{self.name} (on {self.node.name}, moved {self.reconnects}) did not see the "
                f"end of table {table} within {timeout:g} s:\n{cluster.tails()}"
            ) from None

    async def close(self) -> None:
        await self.client.close()


async def solo_table(owner: Node, name: str, player_node: Node | None = None) -> tuple[Player, str]:
    """``name`` creates a table on ``owner`` (so ``owner`` owns it), sits at seat 0 and fills
    it with three default server bots: the match starts, and waits for her first discard.
    With ``player_node``, once that node's lobby shows her seated there, she moves to it
    (``test_resume_elsewhere_right_after_sitting`` moves at once)."""
    player = await Player.register(owner, name)
    table = (await player.client.create_table(turn_seconds=TURN_SECONDS, hands=HANDS)).table
    player.seat = await player.client.join_table(table, seat=0)
    summary = await player.client.add_bots(table, "default")
    assert summary["seats"][1:] == ["bot:default"] * 3
    if player_node is not None and player_node is not owner:
        await until(lambda: seated_in_lobby(player_node, table, name), 10, f"{name} listed")
        await player.move_to(player_node)
    return player, table


async def seated_in_lobby(node: Node, table: str, name: str) -> bool:
    """Whether ``node``'s lobby lists ``table`` with ``name`` seated."""
    client = await connect(node)
    try:
        await client.guest()
        return any(t["table"] == table and name in t["seats"] for t in await client.list_tables())
    finally:
        await client.close()


async def hold_at(player: Player, table: str, hand_no: int) -> asyncio.Task[Any]:
    """She plays until hand ``hand_no`` is under way and it is her turn to discard, then
    stops answering: the table waits for her (60 s turns, and she is connected). Returns
    her ``play`` task, which ends (None) when her connection closes."""
    assert player.seat is not None
    state = player.state(table)

    def held() -> bool:
        return state.hand_no >= hand_no and any(a["type"] == "discard" for a in state.legal)

    bot = make_bot("default", seed=player.seat)
    task = asyncio.create_task(play(player.client, table, bot, stopping=held))
    await until(held, 60, f"{player.name}'s turn in hand {hand_no} of table {table}")
    return task


async def progressed(player: Player, table: str, hand_no: int, discards: int = 4) -> None:
    """Until the table is at hand ``hand_no`` with ``discards`` discards in it (or beyond)."""

    def there() -> bool:
        state = player.state(table)
        seen = sum(1 for e in state.events if e.get("kind") == "discard")
        return state.hand_no > hand_no or (state.hand_no == hand_no and seen >= discards)

    await until(there, 60, f"table {table} at hand {hand_no}")


# ----------------------------------------------------------------- checks ---


async def check_as_offline(cluster: Cluster, end: dict[str, Any], hands: int = HANDS) -> int:
    """The finished match (through any running node's HTTP API) is the offline match of its
    seed; its action log is ``seq`` 1..n and replays to the stored hands. Its match id."""
    node = next(n for n in cluster.nodes.values() if n.alive and not n.paused)
    match_id = int(end["match"])
    status, detail = await node.get(f"/api/matches/{match_id}")
    assert status == 200, detail
    assert detail["finished"] and detail["final_scores"] == end["scores"]
    got = [{k: v for k, v in h.items() if k != "finished_at"} for h in detail["hands"]]
    expected, expected_scores = offline_records(detail["seed"], match_id, hands)
    assert [h["hand_no"] for h in got] == list(range(1, hands + 1))
    for mine, theirs in zip(got, expected, strict=True):
        assert mine == theirs, f"hand {theirs['hand_no']} differs from the offline match"
    assert end["scores"] == expected_scores

    store = await Store.open(cluster.database_url)
    try:
        actions = await store.match_actions(match_id)
        stored = await store.match_hands(match_id)
        lines = await store.match_log(match_id)
    finally:
        await store.close()
    assert [a.seq for a in actions] == list(range(1, len(actions) + 1)), "a gap or a duplicate"
    assert lines is not None
    (logged,) = read_log(json.dumps(line) for line in lines)
    replayed = logged.replay()
    assert [normalized(r.to_dict()) for r in replayed.records] == expected
    assert [normalized(h) for h in stored] == expected
    return match_id


async def table_fence(cluster: Cluster, table: str) -> int:
    """``tables.fence`` of the table (incremented by every takeover)."""
    async with postgres(cluster) as connection:
        fence = await connection.fetchval("SELECT fence FROM tables WHERE id = $1", table)
    return int(fence)


async def listed(node: Node, tables: set[str]) -> bool:
    """Whether ``node``'s lobby lists all of ``tables``."""
    client = await connect(node)
    try:
        await client.guest()
        return tables <= {t["table"] for t in await client.list_tables()}
    finally:
        await client.close()


async def owned(node: Node) -> int:
    return int((await node.healthz())["cluster"]["tables_owned"])


async def owned_is(node: Node, count: int) -> bool:
    return await owned(node) == count


# ------------------------------------------------------------------ tests ---


@pytest.mark.asyncio
async def test_private_redis_restarts_empty(tmp_path: Path) -> None:
    """The harness's own Redis: on a port of its own, and empty after a restart (it keeps
    nothing on disk), which the Redis scenario below relies on."""
    redis = await private_redis(tmp_path / "redis")
    try:
        assert redis.port != 6379
        assert await redis.command("SET", "guobiao:lease:T", "n1", "PX", 60_000) == "OK"
        assert await redis.command("GET", "guobiao:lease:T") == "n1"
        await redis.restart(down_seconds=0.1)
        assert await redis.command("GET", "guobiao:lease:T") is None
        assert redis.starts == 2
    finally:
        redis.close()


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_four_players_on_two_nodes_play_a_table_of_a_third(make_cluster: MakeCluster) -> None:
    """Three nodes: the table is created through n3 (n3 owns it), its four players are
    connected to n1 and n2 (their messages relayed to n3); every node's lobby lists the
    tables of every node; a player who leaves mid-match and resumes on n1 is back at her
    table; the match is the offline one of its seed."""
    cluster = await make_cluster(3)
    n1, n2, n3 = cluster["n1"], cluster["n2"], cluster["n3"]
    host = await Player.register(n3, "host3")
    table = (await host.client.create_table(turn_seconds=TURN_SECONDS, hands=HANDS)).table
    assert await cluster.wait_owner(table) == "n3"
    other_host = await Player.register(n1, "host1")
    other = (await other_host.client.create_table(turn_seconds=TURN_SECONDS)).table
    assert await cluster.wait_owner(other) == "n1"
    for node in (n1, n2, n3):
        await until(lambda node=node: listed(node, {table, other}), 10, f"{node.name}'s lobby")
    for node in (n1, n2, n3):
        body = await node.healthz()
        assert body["node"] == node.name and body["cluster"]["redis"] == "ok"
    assert await owned(n3) == 1 and await owned(n1) == 1 and await owned(n2) == 0

    players = [await Player.register(node, f"player{i}") for i, node in enumerate((n1, n2, n1, n2))]
    for seat, player in enumerate(players):
        player.seat = await player.client.join_table(table, seat=seat)
        assert player.seat == seat
    tasks = [asyncio.create_task(p.play(cluster, table)) for p in players if p.name != "player1"]
    p1 = players[1]
    first = await hold_at(p1, table, 2)  # the table waits for her discard
    try:
        await until(lambda: seated_in_lobby(n1, table, p1.name), 10, "n1 sees her seated")
        await p1.move_to(n1, table)  # resumes on another node: back at her table
        assert await asyncio.wait_for(first, 10) is None
        ends = await asyncio.gather(p1.play(cluster, table), *tasks)
    finally:
        for task in (first, *tasks):
            task.cancel()
        for player in (host, other_host, *players):
            await player.close()
    assert all(end == ends[0] for end in ends), "the players saw different match ends"
    assert await cluster.owner(table) in (None, "n3")
    await check_as_offline(cluster, ends[0])


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_a_node_without_a_name_is_named_by_its_host_and_port(
    make_cluster: MakeCluster,
) -> None:
    """``[server] node`` empty (the default): the node is ``hostname:port`` among the nodes
    (it once failed to start: its name was asked before it listened)."""
    cluster = await make_cluster(0)
    cluster.write_config()
    node = await cluster.add("unnamed", args=["--node", ""]).start()
    name = f"{socket.gethostname()}:{node.port}"
    body = await node.healthz()
    assert body["node"] == name and body["cluster"]["nodes"] == [name]
    host = await Player.register(node, "host")
    try:
        table = (await host.client.create_table(turn_seconds=TURN_SECONDS)).table
        assert await cluster.wait_owner(table) == name
    finally:
        await host.close()


@pytest.mark.postgres
@pytest.mark.asyncio
@pytest.mark.parametrize("on_coordinator", [1, 2])
async def test_players_queued_on_both_nodes_are_matched_and_play(
    make_cluster: MakeCluster, on_coordinator: int
) -> None:
    """The ladder's queue runs on the coordinator (docs/deployment.md: "the queue ... work[s]
    the same from every node"). Four registered players queue, ``on_coordinator`` of them
    through the coordinator and the others through the other node: all four are told the
    same table, each her own seat; the table runs where most of them are (three on the
    other node: there; two and two: the coordinator, which made it); they play its match to
    the end, rated, the match the offline one of its seed."""
    cluster = await make_cluster(2, sections={"matchmaking": {"hands": 1, "pass_seconds": 0.2}})
    coordinator = await until(cluster.coordinator, 10, "a coordinator")
    other = "n2" if coordinator == "n1" else "n1"
    # Once the coordinator has read the other node (its lobby lists a table of it), it
    # places tables there.
    host = await Player.register(cluster[other], "host")
    hosted = (await host.client.create_table(turn_seconds=TURN_SECONDS)).table
    await until(lambda: listed(cluster[coordinator], {hosted}), 10, f"{coordinator} reads {other}")
    homes = [cluster[coordinator]] * on_coordinator + [cluster[other]] * (4 - on_coordinator)
    players = [await Player.register(node, f"queued{i}") for i, node in enumerate(homes)]
    try:
        watching = [
            asyncio.ensure_future(
                p.client.wait_for(
                    lambda m: m.type == "queue" and m.payload["state"] == "matched", 30
                )
            )
            for p in players
        ]
        joined = [
            asyncio.ensure_future(p.client.wait_for(lambda m: m.type == "joined", 30))
            for p in players
        ]
        await asyncio.sleep(0)
        for player in players:
            assert (await player.client.queue_join())["state"] == "waiting"
        matched = [m.payload for m in await asyncio.gather(*watching)]
        table = matched[0]["table"]
        assert {m["table"] for m in matched} == {table}
        assert sorted(m["seat"] for m in matched) == [0, 1, 2, 3]
        for player, m in zip(players, matched, strict=True):
            player.seat = m["seat"]
        if on_coordinator < 2:  # queued again at once: she sits there, before its owner says
            with pytest.raises(ServerError) as refused:
                await players[-1].client.queue_join()
            assert refused.value.code == "already_seated", refused.value
        # Each is told she sits there (``joined``, docs/protocol.md), wherever it runs.
        seats = [j.payload for j in await asyncio.gather(*joined)]
        assert seats == [{"table": table, "seat": m["seat"]} for m in matched]
        if on_coordinator < 2:  # made on the coordinator, handed to the other node
            assert await cluster.wait_owner(table, not_in={coordinator}) == other
        else:
            assert await cluster.wait_owner(table) == coordinator
        ends = await asyncio.gather(*(p.play(cluster, table) for p in players))
    finally:
        for player in (host, *players):
            await player.close()
    assert all(end == ends[0] for end in ends), "the players saw different match ends"
    assert sorted(r["name"] for r in ends[0]["ratings"]) == sorted(p.name for p in players)
    for player in players:  # told once
        told = [f["payload"] for f in player.frames if f["type"] == "joined"]
        assert told == [{"table": table, "seat": player.seat}], player.name
    await check_as_offline(cluster, ends[0], hands=1)


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_resume_elsewhere_right_after_sitting(make_cluster: MakeCluster) -> None:
    """She sits at a table of n1 (it starts, waiting for her discard), her connection drops,
    and she resumes at once on n2 (a browser reloading its page through the proxy): she is
    back at her table, as on one node, and plays the match to its end."""
    cluster = await make_cluster(2)
    n1, n2 = cluster["n1"], cluster["n2"]
    alice, table = await solo_table(n1, "alice_quick")
    try:
        await alice.move_to(n2, table)
        end = await alice.play(cluster, table)
    finally:
        await alice.close()
    await check_as_offline(cluster, end)


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_players_joining_a_table_another_worker_runs_are_handed_to_it(
    make_cluster: MakeCluster,
) -> None:
    """Two nodes sharing a folder of hand-over sockets, as ``serve --workers``' workers do:
    the table is n2's, three of its players come in through n1 and ask to join it; n1 hands
    each connection to n2 (server/handoff.py), which seats her and serves her from then on,
    the same TCP connection, nothing relayed (one who followed the lobby follows it from n2;
    a visitor watching the table through n1 is handed over too).
    One of them reconnects through n1 and resumes:
    handed to n2 too, her seat hers again. Then n2 is killed: its players lose their
    connections as any of n2's, resume on n1, which adopts the table, and the match ends as
    the offline one of its seed."""
    folder = tempfile.mkdtemp(prefix="guobiao-handoff-")  # (short: a socket's path is too)
    try:
        cluster = await make_cluster(0, handoff_dir=folder)
        await cluster.start(2)
        n1, n2 = cluster["n1"], cluster["n2"]
        host = await Player.register(n2, "handhost")
        table = (await host.client.create_table(turn_seconds=TURN_SECONDS, hands=HANDS)).table
        assert await cluster.wait_owner(table) == "n2"
        host.seat = await host.client.join_table(table, seat=0)
        players = [host] + [await Player.register(n1, f"handed{i}") for i in (1, 2, 3)]
        assert (await n1.healthz())["connections"] == 3
        # One follows the lobby (as the web client's home page does) before she sits.
        follower = players[3].client
        await follower.request("subscribe_lobby", {"on": True})
        for seat, player in enumerate(players[1:], 1):
            player.seat = await player.client.join_table(table, seat=seat)
            assert player.seat == seat
        # Every player's connection is n2's now, none is n1's: nothing to relay.
        assert (await n1.healthz())["connections"] == 0
        assert (await n2.healthz())["connections"] == 4
        for player in players:
            assert player.client.is_open and player.client.session is not None
            player.node = n2
        # A visitor who watches it through n1 is handed to n2 too, and sees the table.
        watcher = await connect(n1)
        try:
            first_update = asyncio.ensure_future(
                watcher.wait_for(lambda m: m.type == "update" and m.table == table, timeout=10)
            )
            await asyncio.sleep(0)
            await watcher.watch(table)
            await first_update
            assert (await n1.healthz())["connections"] == 0
            assert (await n2.healthz())["connections"] == 5
        finally:
            await watcher.close()
        # She still follows it from n2: a table made meanwhile is pushed to her.
        other_host = await Player.register(n2, "handhost2")
        try:
            listed = asyncio.ensure_future(
                follower.wait_for(
                    lambda m: (
                        m.type == "tables" and any(t["table"] != table for t in m.payload["tables"])
                    ),
                    timeout=10,
                )
            )
            await asyncio.sleep(0)
            other = (await other_host.client.create_table(turn_seconds=TURN_SECONDS)).table
            update = await listed
            assert other in {t["table"] for t in update.payload["tables"]}
        finally:
            await other_host.close()

        one = players[1]
        tasks = [asyncio.create_task(p.play(cluster, table)) for p in players if p is not one]
        first = await hold_at(one, table, 2)  # the table waits for her discard in hand 2
        try:
            # She reconnects through n1 and resumes: handed to n2, seated back there.
            await one.move_to(n1, table)
            assert await asyncio.wait_for(first, 10) is None  # (her old connection closed)
            assert (await n1.healthz())["connections"] == 0
            assert (await n2.healthz())["connections"] == 4
            one.node = n2
            first = asyncio.create_task(one.play(cluster, table))
            await progressed(one, table, 2, discards=8)
            await n2.kill()
            ends = await asyncio.gather(first, *tasks)
        finally:
            for task in (first, *tasks):
                task.cancel()
            for player in players:
                await player.close()
        assert all(end == ends[0] for end in ends), "the players saw different match ends"
        assert [p.reconnects for p in players] == [["n1"], ["n1", "n1"], ["n1"], ["n1"]]
        await check_as_offline(cluster, ends[0])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_a_join_handed_to_a_paused_worker_is_answered_once_it_wakes(
    make_cluster: MakeCluster,
) -> None:
    """The table's worker is paused (SIGSTOP) when a player asks another worker to join it:
    her connection is handed to the paused one and waits there, unread. It stays paused past
    its lease (the other adopts the table); woken, it serves her: the table is no longer its,
    so her join goes on to its new owner, and she is seated there. A pause costs her the
    pause, not her join."""
    lease = 1.5
    folder = tempfile.mkdtemp(prefix="guobiao-handoff-")
    try:
        cluster = await make_cluster(0, handoff_dir=folder, lease_seconds=lease)
        await cluster.start(2)
        n1, n2 = cluster["n1"], cluster["n2"]
        host = await Player.register(n2, "pausedhost")
        table = (await host.client.create_table(turn_seconds=TURN_SECONDS, hands=HANDS)).table
        assert await cluster.wait_owner(table) == "n2"
        await host.client.join_table(table, seat=0)
        guest = await Player.register(n1, "pausedguest")
        n2.pause()
        try:
            joining = asyncio.ensure_future(guest.client.join_table(table, seat=1))
            await until(lambda: n1_handed(n1), 10, "n1 handing her over")
            await asyncio.sleep(0)
            assert await cluster.wait_owner(table, timeout=lease + 15, not_in={"n2"}) == "n1"
            assert not joining.done()  # (her connection waits, unread, at the paused n2)
        finally:
            n2.resume()
        assert await asyncio.wait_for(joining, 30) == 1
        assert await cluster.owner(table) == "n1"
        state = await guest.client.sync(table, timeout=20)
        assert state.seat == 1 and state.summary is not None
        assert state.summary["seats"][:2] == ["pausedhost", "pausedguest"], state.summary
        await host.close()
        await guest.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def n1_handed(node: Node) -> bool:
    """Whether ``node`` has no connection left (the one it had was handed over)."""
    return int((await node.healthz())["connections"]) == 0


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_a_player_whose_match_ended_sits_down_at_once_on_another_node(
    make_cluster: MakeCluster,
) -> None:
    """Her match over, a player sits at a table of another node at once (as ``guobiao
    loadtest`` does, and a person who clicks fast): the finished table's owner tells every
    node (``unseated``) before it tells her, instead of them refusing her (``already_seated``)
    until they next read who sits where, at a beat (4 s here). Alice plays n1's table through
    n2 (relayed), Carol on n1; each then sits at once at a table of n2."""
    # (Waiting for n2 to list her seated polls as guests: slow beats, many guests.)
    guests = {"accounts": {"guest_burst": 1000, "guest_per_hour": 100_000}}
    cluster = await make_cluster(2, lease_seconds=12.0, sections=guests)
    n1, n2 = cluster["n1"], cluster["n2"]
    host = await Player.register(n2, "host_next")
    alice = carol = None
    try:
        following = (await host.client.create_table(turn_seconds=TURN_SECONDS)).table
        assert await cluster.wait_owner(following) == "n2"
        alice, alice_table = await solo_table(n1, "alice_next", player_node=n2)
        carol, carol_table = await solo_table(n1, "carol_next")

        async def play_then_sit(player: Player, table: str, seat: int) -> dict[str, Any]:
            end = await player.play(cluster, table)
            assert await player.client.join_table(following, seat=seat) == seat
            return end

        ends = await asyncio.gather(
            play_then_sit(alice, alice_table, 1), play_then_sit(carol, carol_table, 2)
        )
        # Each reloads her page, Alice now on n1, Carol on n2: their finished tables leave
        # n1 (nobody is at them), and each asks for hers again. Alice on n1 itself and
        # Carol through n2, the refusal relayed, are told its match; a stranger hears
        # there is no such table.
        await alice.move_to(n1)
        await carol.move_to(n2)
        for player, table, end in ((alice, alice_table, ends[0]), (carol, carol_table, ends[1])):
            refused = await refused_sync(player.client, table)
            assert (refused.code, refused.table, refused.match) == (
                "table_finished",
                table,
                end["match"],
            ), refused
        stranger = await refused_sync(host.client, alice_table)
        assert (stranger.code, stranger.match) == ("no_such_table", None), stranger
    finally:
        for player in (host, alice, carol):
            if player is not None:
                await player.close()
    for end in ends:
        await check_as_offline(cluster, end)


async def refused_sync(client: Client, table: str) -> ServerError:
    """The refusal of ``client``'s ``sync`` of ``table``, once its node no longer has the
    table (a finished table stays while someone is at it)."""
    for _ in range(100):
        try:
            await client.sync(table, timeout=10)
        except ServerError as exc:
            return exc
        await asyncio.sleep(0.2)
    raise AssertionError(f"table {table} still answered a sync 20 s after its match")


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_a_relayed_reader_gets_the_next_hand_once_she_has_read_the_result(
    make_cluster: MakeCluster,
) -> None:
    """Protocol version 3 across nodes: she plays from n2 at a table of n1 (her messages
    relayed), on a client that says when she has read each hand's result (``next_hand``).
    The table waits up to ``result_seconds`` (60 here) for its readers: it deals each next
    hand once her word reaches it through the relay, not after the minute."""
    cluster = await make_cluster(2, timers={**TEST_TIMERS, "result_seconds": 60})
    n1, n2 = cluster["n1"], cluster["n2"]
    reader, table = await solo_table(n1, "reader")
    token = reader.token
    await reader.close()
    client = await Client.connect(n2.url, rate=None, record=True, versions=(1, 2, 3))
    sent: list[asyncio.Future[None]] = []

    def read_at_once(message: Any) -> None:
        view = message.payload.get("view") if message.type == "update" else None
        if view is not None and view.get("phase") == "over":
            frame = {
                "type": "next_hand",
                "payload": {"table": table, "hand_no": message.payload["hand_no"]},
            }
            sent.append(asyncio.ensure_future(client.ws.send(json.dumps(frame))))

    try:
        full = asyncio.ensure_future(
            client.wait_for(lambda m: m.type == "update" and m.table == table, timeout=20)
        )
        await asyncio.sleep(0)
        await client.resume(token)
        await full
        assert await cluster.owner(table) == "n1"
        bot = make_bot("default", seed=0)
        end = await asyncio.wait_for(play(client, table, bot, on_message=read_at_once), 45)
    finally:
        await client.close()
    assert end is not None and len(sent) >= HANDS - 1
    await check_as_offline(cluster, end)


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_owner_killed_mid_match_another_node_adopts(make_cluster: MakeCluster) -> None:
    """kill -9 of the owner in hand 2: another node adopts the table within about
    lease_seconds + 1 s, restored from the log; the players connected to the dead node
    resume on the others, those elsewhere are re-attached; the match ends as offline."""
    lease = 1.5
    cluster = await make_cluster(3, lease_seconds=lease)
    n1, n2, n3 = cluster["n1"], cluster["n2"], cluster["n3"]
    host = await Player.register(n1, "host")
    table = (await host.client.create_table(turn_seconds=TURN_SECONDS, hands=HANDS)).table
    await host.close()
    assert await cluster.wait_owner(table) == "n1"
    players = [await Player.register(node, f"killed{i}") for i, node in enumerate((n1, n2, n3, n1))]
    for seat, player in enumerate(players):
        player.seat = await player.client.join_table(table, seat=seat)
    tasks = [asyncio.create_task(p.play(cluster, table)) for p in players]
    try:
        await progressed(players[1], table, 2)
        assert await n1.kill() == -signal.SIGKILL
        killed = time.monotonic()
        adopter = await cluster.wait_owner(table, timeout=lease + 10, not_in={"n1"})
        took = time.monotonic() - killed
        print(f"table {table} adopted by {adopter} {took:.2f} s after the kill")
        assert adopter in ("n2", "n3")
        ends = await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        for player in players:
            await player.close()
    assert all(end == ends[0] for end in ends)
    assert players[0].reconnects and players[3].reconnects, "n1's players resumed elsewhere"
    assert not players[1].reconnects and not players[2].reconnects, "re-attached in place"
    await check_as_offline(cluster, ends[0])


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_owner_paused_past_its_lease_is_fenced(make_cluster: MakeCluster) -> None:
    """SIGSTOP of the owner past its lease, just after its player went away (its timer to
    play her seat is then overdue when it wakes): the other node adopts the table (its fence
    goes up) and plays on; after SIGCONT the old owner writes nothing more (an append with
    the old fence is refused, and it drops the table): the log stays 1..n without a gap or
    a duplicate, the match ends as offline, and the old owner owns nothing."""
    lease = 1.5
    cluster = await make_cluster(2, lease_seconds=lease)
    n1, n2 = cluster["n1"], cluster["n2"]
    alice, table = await solo_table(n1, "alice_fence", player_node=n2)
    assert await cluster.wait_owner(table) == "n1"
    fence = await table_fence(cluster, table)
    first = await hold_at(alice, table, 2)
    try:
        await alice.client.close()  # n2 tells n1 she is away: n1 will play her seat
        assert await asyncio.wait_for(first, 10) is None
        await asyncio.sleep(0.05)  # (only to let that reach n1: the outcome may not depend on it)
        n1.pause()
        assert await cluster.wait_owner(table, timeout=lease + 10, not_in={"n1"}) == "n2"

        async def fence_went_up() -> bool:
            return await table_fence(cluster, table) > fence

        # (the adopter takes the lease a moment before it takes the table in the database)
        await until(fence_went_up, 10, "n2's takeover raising the table's fence")
        n1.resume()
        await alice.move_to(n2, table)
        end = await alice.play(cluster, table)
    finally:
        first.cancel()
        if n1.paused:
            n1.resume()
        await alice.close()
    await check_as_offline(cluster, end)
    await until(lambda: ready(n1), 20, "n1 ready again after SIGCONT")
    await until(lambda: owns_nothing(n1), 10, "n1 owns no table")


async def owns_nothing(node: Node) -> bool:
    return await owned(node) == 0


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_redis_restarted_mid_match(make_cluster: MakeCluster) -> None:
    """Redis killed in hand 2 (it keeps nothing: every lease and presence is gone) and
    started again a second later: the nodes say so meanwhile (/healthz "unreachable",
    /readyz 503), play pauses and resumes, and the match ends as offline."""
    cluster = await make_cluster(2)
    n1, n2 = cluster["n1"], cluster["n2"]
    alice, table = await solo_table(n1, "alice_redis", player_node=n2)
    task = asyncio.create_task(alice.play(cluster, table))
    try:
        await progressed(alice, table, 2)
        await cluster.redis.kill()

        async def redis_down(node: Node) -> bool:
            return bool((await node.healthz())["cluster"]["redis"] == "unreachable")

        for node in (n1, n2):
            await until(lambda node=node: redis_down(node), 10, f"{node.name} sees Redis down")
            status, body = await node.readyz()
            assert status == 503 and body["ready"] is False, body
        updates = alice.state(table).updates
        await asyncio.sleep(1)
        await cluster.redis.start()
        for node in (n1, n2):
            await until(lambda node=node: ready(node), 20, f"{node.name} ready again")
        # Her node re-attaches her to the owner, which sends her the table again: her
        # decision is asked again (without it the table would wait for her, 120 s turns).
        await until(
            lambda: alice.state(table).updates > updates,
            20,
            f"an update of table {table} reaching her on n2 after Redis came back",
        )
        end = await task
    finally:
        task.cancel()
        await alice.close()
    await check_as_offline(cluster, end)


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_rolling_restart_during_matches(make_cluster: MakeCluster) -> None:
    """Three matches on two nodes; each node in turn gets SIGTERM (it hands its tables to
    the other, closes its connections as going away, 1001, and exits 0), is started again
    and waited for (/readyz 200). Two matches play on throughout; the third waits for its
    player's discard the whole time (so each node has a table to hand over), she following
    it from node to node. Every match finishes, exactly as offline. (A seat away waits 5 s
    before the server plays it: players back within that, the held table stays held.)"""
    timers = {**TEST_TIMERS, "disconnected_seconds": 5, "restart_grace_seconds": 5}
    cluster = await make_cluster(2, timers=timers)
    n1, n2 = cluster["n1"], cluster["n2"]
    seated = [
        await solo_table(n1, "roll_a", player_node=n2),
        await solo_table(n2, "roll_b", player_node=n1),
    ]
    waiting, held_table = await solo_table(n1, "roll_c")
    holding = await hold_at(waiting, held_table, 1)
    tasks = [asyncio.create_task(p.play(cluster, t, think=0.1)) for p, t in seated]
    try:
        await progressed(seated[0][0], seated[0][1], 1, discards=2)
        for node, other in ((n1, n2), (n2, n1)):
            assert await owned(node) >= 1
            assert await node.stop() == 0, node.tail()
            assert await cluster.owner(held_table) == other.name
            for player, table in seated:  # handed over too, or finished meanwhile
                if player.state(table).match_end is None:
                    assert await cluster.owner(table) in (other.name, None)
            assert await asyncio.wait_for(holding, 10) is None  # her node closed on her
            assert waiting.client.close_code == 1001
            await waiting.move_to(other, held_table)
            holding = await hold_at(waiting, held_table, 1)
            await node.start()
        holding.cancel()
        await waiting.client.sync(held_table)  # a full update: her turn, to answer now
        ends = await asyncio.gather(*tasks, waiting.play(cluster, held_table))
    finally:
        for task in (holding, *tasks):
            task.cancel()
        for player in (waiting, *(p for p, _ in seated)):
            await player.close()
    assert len({end["match"] for end in ends}) == 3
    for end in ends:
        await check_as_offline(cluster, end)


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_a_node_handed_many_tables_at_once_adopts_every_one(
    make_cluster: MakeCluster,
) -> None:
    """n1 is drained with 150 tables while n2 is busy (paused a moment): n2 reads the 150
    ``take`` together and adopts them a few at a time, as orphans are (before, all at once,
    they ran out of Redis connections, 100 by default, and waited as orphans for a beat)."""
    # n2's registration must outlast its pause and the drain CLI's start, which a loaded
    # machine took past 6 s (the CLI found no ready node): 15 s.
    cluster = await make_cluster(2, lease_seconds=15.0)
    n1, n2 = cluster["n1"], cluster["n2"]
    host = await Player.register(n1, "many_tables")
    try:
        tables = [
            (await host.client.create_table(turn_seconds=TURN_SECONDS)).table for _ in range(150)
        ]
        await until(lambda: owned_is(n1, 150), 10, "n1 owns its 150 tables")
        n2.pause()
        try:
            drained = await cluster.cli("drain", "n1")
        finally:
            n2.resume()
        assert drained.returncode == 0, drained.stdout + drained.stderr
        await until(lambda: owned_is(n2, 150), 30, "n2 owns the 150 tables")
    finally:
        await host.close()
    assert {await cluster.owner(t) for t in tables} == {"n2"}
    log = n2.tail(2000)
    assert "MaxConnectionsError" not in log and "failed" not in log, log


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_admin_cli_nodes_move_drain(make_cluster: MakeCluster) -> None:
    """``guobiao cluster nodes`` lists both nodes (their state, tables, the coordinator);
    ``cluster tables n1`` lists n1's table; ``cluster move TABLE n2`` returns once n2 owns it;
    ``cluster drain n2`` makes n2 hand its tables to n1 and stop being ready (it stays up).
    The table waits for its player throughout; she resumes and the match ends as offline.
    A non-default prefix, which the nodes and the CLI both read from
    GUOBIAO_CLUSTER_PREFIX."""
    cluster = await make_cluster(2, prefix="gbt")
    n1, n2 = cluster["n1"], cluster["n2"]
    alice, table = await solo_table(n1, "alice_cli", player_node=n2)
    first = await hold_at(alice, table, 2)
    try:
        assert await cluster.wait_owner(table) == "n1"
        assert await cluster.redis.command("EXISTS", f"guobiao:lease:{table}") == 0
        nodes = await cluster.cli("nodes")
        assert nodes.returncode == 0, nodes.stdout + nodes.stderr
        lines = nodes.stdout.splitlines()
        assert any("n1" in line for line in lines) and any("n2" in line for line in lines)
        assert await cluster.coordinator() in ("n1", "n2")
        assert "coordinator" in nodes.stdout.lower(), nodes.stdout

        listing = await cluster.cli("tables", "n1")
        assert listing.returncode == 0 and table in listing.stdout, listing

        moved = await cluster.cli("move", table, "n2")
        assert moved.returncode == 0, moved.stdout + moved.stderr
        assert await cluster.owner(table) == "n2"
        assert await owned(n2) == 1 and await owned(n1) == 0
        record = await cluster.node_record("n2")
        assert record is not None and record["node"] == "n2" and record["port"] == n2.port

        drained = await cluster.cli("drain", "n2")
        assert drained.returncode == 0, drained.stdout + drained.stderr
        assert await cluster.wait_owner(table, timeout=10, not_in={"n2"}) == "n1"
        status, body = await n2.readyz()
        assert status == 503 and body["ready"] is False, body
        health = await n2.healthz()
        assert health["cluster"]["draining"] is True and health["cluster"]["tables_owned"] == 0
        assert n2.alive
        after = await cluster.cli("nodes")
        n2_line = next(line for line in after.stdout.splitlines() if "n2" in line)
        assert "draining" in n2_line.lower(), after.stdout

        # A drained node keeps its connections (it relays them): she plays on from n2.
        first.cancel()
        await alice.client.sync(table)  # a full update: her turn, to answer now
        end = await alice.play(cluster, table)
    finally:
        first.cancel()
        await alice.close()
    await check_as_offline(cluster, end)


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive TCP ports free on 127.0.0.1 now."""
    for _ in range(100):
        first = free_port()
        with contextlib.ExitStack() as probes:
            try:
                for port in range(first, first + count):
                    probe = probes.enter_context(socket.socket())
                    probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return first
    raise RuntimeError(f"no {count} consecutive free ports found")


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_workers_share_the_port_and_stop_together(make_cluster: MakeCluster) -> None:
    """``serve --workers 2``: two worker processes on one port, nodes ``NODE/w1`` and
    ``NODE/w2`` of the cluster (each with its presence record); a table created through
    the port is owned by one of them; each serves its own metrics on its own port
    (``[metrics] listen``'s, and the next), none on the game port (``game_port = false``);
    a player who joins the table through the other worker is handed to the table's (their
    private folder of sockets); SIGTERM to the parent stops both, it exits 0 and removes
    the folder."""
    cluster = await make_cluster(0)
    node = cluster.add("w", args=["--workers", "2"])
    metrics = free_ports(2)
    cluster.sections["metrics"] = {"listen": f"127.0.0.1:{metrics}", "game_port": False}
    cluster.write_config()
    await node.start()
    names = ("w/w1", "w/w2")
    records = await workers_present(cluster, names)
    pids = {int(r["pid"]) for r in records}
    assert len(pids) == 2 and node.process is not None and node.process.pid not in pids
    assert {int(r["port"]) for r in records} == {node.port}
    # The workers' folder of hand-over sockets: one, private, the same for both.
    folders = {handoff_dir(pid) for pid in pids}
    assert len(folders) == 1 and None not in folders, folders
    (folder,) = folders
    assert folder is not None and os.stat(folder).st_mode & 0o777 == 0o700

    async def connections(series: str = "guobiao_connections", labels: str = "") -> dict[str, int]:
        """Each worker's value of ``series`` (its open connections), by its metrics."""
        counts = {}
        for port, name in zip((metrics, metrics + 1), names, strict=True):
            scrape = await http_request(port, "/metrics")
            assert scrape.status == 200, (port, scrape.body)
            line = f'{series}{{node="{name}"{labels}}} '.encode()
            assert line in scrape.body, scrape.body[:300]
            counts[name] = int(float(scrape.body.split(line)[1].split()[0]))
        return counts

    alice = await Player.register(node, "alice_workers")
    players = [alice]
    try:
        table = (await alice.client.create_table(turn_seconds=TURN_SECONDS)).table
        owner = await cluster.wait_owner(table)
        assert owner in names
        (other,) = set(names) - {owner}
        # Players come in through the port until one is on the worker that does not run
        # the table (the kernel chooses: 1 in 2 each); then three join it.
        elsewhere: Player | None = None
        for i in range(20):
            players.append(await Player.register(node, f"bob{i}_workers"))
            if (await connections())[other]:
                elsewhere = players[-1]
                break
        assert elsewhere is not None, "the kernel gave every connection to the table's worker"
        while len(players) < 4:
            players.append(await Player.register(node, f"carol{len(players)}_workers"))
        joining = [elsewhere, *[p for p in players[1:] if p is not elsewhere][:2]]
        for seat, player in enumerate(joining, 1):
            assert await player.client.join_table(table, seat=seat) == seat
        for player in players:
            if player is not alice and player not in joining:
                await player.close()
        # The four seated are all on the table's worker: those on the other were handed.
        await until(lambda: connections_are(connections, {owner: 4, other: 0}), 10, "all on it")
        given = await connections("guobiao_handoffs_total", ',way="given"')
        taken = await connections("guobiao_handoffs_total", ',way="taken"')
        assert given[other] >= 1 and given[other] == taken[owner], (given, taken)
        assert given[owner] == taken[other] == 0, (given, taken)
    finally:
        for player in players:
            await player.close()
    listing = await cluster.cli("nodes")
    assert all(name in listing.stdout for name in names), listing.stdout
    assert (await http_request(node.port, "/metrics")).status == 404
    assert await node.stop() == 0, node.tail()
    await until(lambda: not any(running(pid) for pid in pids), 10, "both workers gone")
    assert not os.path.exists(folder), "serve --workers left its folder of sockets"


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_workers_stop_when_their_supervisor_is_killed(make_cluster: MakeCluster) -> None:
    """``serve --workers 2`` killed with SIGKILL (its workers not told): each worker sees its
    supervisor gone and stops as on SIGTERM, handing its tables over, rather than serve on
    beside the workers of the next supervisor on the same port. The table a worker ran is
    then another node's."""
    cluster = await make_cluster(1)
    node = cluster.add("w", args=["--workers", "2"])
    cluster.write_config()
    await node.start()
    names = ("w/w1", "w/w2")
    records = await workers_present(cluster, names)
    pids = {int(r["pid"]) for r in records}
    alice = await Player.register(node, "alice_orphans")
    try:
        table = (await alice.client.create_table(turn_seconds=TURN_SECONDS)).table
        assert await cluster.wait_owner(table) in names
    finally:
        await alice.close()
    assert node.process is not None
    node.process.kill()
    await until(lambda: not any(running(pid) for pid in pids), 30, "both workers gone")
    assert await cluster.wait_owner(table, timeout=10, not_in=set(names)) == "n1"
    log = node.log()
    assert log.count("the supervisor (pid") == 2, node.tail()
    assert "stopping (finishing writes, telling clients)" in log, node.tail()


async def workers_present(cluster: Cluster, names: tuple[str, ...]) -> list[dict[str, Any]]:
    """The presence records of the workers ``names``, once each has written its own."""

    async def all_present() -> list[dict[str, Any]] | None:
        records = [await cluster.node_record(name) for name in names]
        return None if None in records else [r for r in records if r is not None]

    found: list[dict[str, Any]] = await until(all_present, 20, "the workers' presence in Redis")
    return found


async def connections_are(
    connections: Callable[[], Awaitable[dict[str, int]]], expected: dict[str, int]
) -> bool:
    return await connections() == expected


def handoff_dir(pid: int) -> str | None:
    """A process's ``GUOBIAO_SERVER_HANDOFF_DIR`` (None: not set)."""
    with open(f"/proc/{pid}/environ", "rb") as environ:
        for item in environ.read().split(b"\0"):
            name, _, value = item.partition(b"=")
            if name == b"GUOBIAO_SERVER_HANDOFF_DIR":
                return value.decode()
    return None


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_a_node_started_on_another_nodes_port_fails_saying_so(
    make_cluster: MakeCluster,
) -> None:
    """Only ``--workers``' workers share a port: a second node given a running node's port
    (an operator's slip) does not start, saying the address is in use, and the first keeps
    every connection (it used to listen beside it, the kernel splitting the connections)."""
    cluster = await make_cluster(1)
    n1 = cluster["n1"]
    n2 = cluster.add("n2")
    n2.port = n1.port
    with contextlib.suppress(RuntimeError):  # (exited; or n1 answered its wait for /readyz)
        await n2.start()
    await until(lambda: not n2.alive, 30, "n2 exiting")
    assert "address already in use" in n2.tail(), n2.tail()
    for _ in range(20):
        health = await http_request(n1.port, "/healthz")
        assert json.loads(health.body)["node"] == "n1"

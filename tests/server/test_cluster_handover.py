"""No player is lost in a handover between nodes (docs/deployment.md, "Failover"), with real
processes as in tests/server/test_cluster.py, whose players and checks these use.

Every player's frames are checked against the stored log: replayed through the engine, the
log gives each hand's events as each seat may see them; what a player was shown of a hand
(a full update, then each update's events after it) must be, at every update, a beginning of
that. An update shown twice, or one the log does not have, breaks it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from clusterkit import Cluster, Node, postgres, until
from test_cluster import (  # noqa: F401 (make_cluster: its fixture)
    TURN_SECONDS,
    MakeCluster,
    Player,
    check_as_offline,
    hold_at,
    make_cluster,
    progressed,
    solo_table,
)

from engine.actions import Action, Event
from engine.bots import make_bot
from engine.match import Match
from server.db.store import Store

Frame = dict[str, Any]


def wire(events: list[Event], seat: int | None) -> list[Frame]:
    """What ``seat`` (None: a spectator) is shown of ``events``, but the ``match`` header
    (the full update of a table restored from its log lacks it: not what is checked here)."""
    return [{"kind": e.kind, **e.data} for e in events if e.visible_to(seat) and e.kind != "match"]


async def logged_hands(database_url: str, match_id: int) -> dict[int, list[Event]]:
    """Each hand's events as the table publishes them, from the stored match replayed
    (people sit at the table: every claim window is held until all have answered)."""
    store = await Store.open(database_url)
    try:
        stored = await store.get_match(match_id)
        actions = await store.match_actions(match_id)
    finally:
        await store.close()
    assert stored is not None
    match = Match(stored.seed, hands=stored.hands_planned, hold_claims=True)
    hands: dict[int, list[Event]] = {}

    def close_window() -> None:
        if match.hand is not None and match.hand.claims_answered():
            hands[match.hand_index + 1].extend(match.close_claims())

    for _, hand_no, player, action in (a.played for a in actions):
        close_window()
        while match.hand_index + 1 < hand_no:
            events = match.start_hand()
            hands[match.hand_index + 1] = list(events)
        hands[hand_no].extend(match.apply(player, Action.from_dict(action)))
    close_window()
    assert match.over
    return hands


def check_saw_the_log(player: Player, table: str, hands: dict[int, list[Event]]) -> None:
    """What ``player`` was shown of each hand of ``table`` is, update after update, a
    beginning of what the log says her seat (a spectator's: none) may see of it; the last
    hand she saw whole."""
    truth = {n: wire(events, player.seat) for n, events in hands.items()}
    hand_no, seen = 0, list[Frame]()
    for number, frame in enumerate(player.frames):
        payload = frame.get("payload") or {}
        if frame["type"] != "update" or payload.get("table") != table:
            continue
        if payload.get("full") or payload["hand_no"] != hand_no:
            hand_no, seen = payload["hand_no"], []
        seen.extend(e for e in payload["events"] if e["kind"] != "match")
        expected = truth[hand_no]
        assert seen == expected[: len(seen)], (
            f"{player.name}, frame {number} (seq {payload['seq']}, hand {hand_no}): shown "
            f"{seen[-3:]} after {len(seen) - 3} events; the log has "
            f"{expected[len(seen) - 3 : len(seen)]}"
        )
    assert hand_no == max(truth) and seen == truth[hand_no], f"{player.name} missed the end"


@contextlib.asynccontextmanager
async def cleaned_up(node: Node, players: list[Player]) -> AsyncIterator[list[asyncio.Task[Any]]]:
    """However the block ends: the tasks it adds to the list it is given cancelled, ``node``
    continued if it is still stopped, the players' connections closed."""
    running: list[asyncio.Task[Any]] = []
    try:
        yield running
    finally:
        for task in running:
            task.cancel()
        if node.paused:
            node.resume()
        for player in players:
            await player.close()


async def one_hand_table(name: str, nodes: tuple[Node, ...]) -> tuple[str, list[Player]]:
    """A one-hand table made on the first of ``nodes`` (so that node owns it; its host
    leaves it), and a player on each of ``nodes`` seated at it, in order."""
    host = await Player.register(nodes[0], f"{name}_host")
    table = (await host.client.create_table(turn_seconds=TURN_SECONDS, hands=1)).table
    await host.close()
    players = [await Player.register(node, f"{name}{i}") for i, node in enumerate(nodes)]
    for seat, player in enumerate(players):
        player.seat = await player.client.join_table(table, seat=seat)
    return table, players


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_owner_paused_past_its_lease_its_players_play_on(
    make_cluster: MakeCluster,  # noqa: F811 (the fixture imported above)
) -> None:
    """The owner (n1) of a table with two players on each node is stopped (SIGSTOP) while
    it waits for the discard of a player on n1; she discards meanwhile, and a player on n2
    asks n1 for her view (``sync``). n2 adopts the table and plays on; n1 is continued
    (SIGCONT). Every player, those on n1 included, plays to the match's end, and each was
    shown exactly what the log holds: nothing twice, nothing it lacks (n1's answers, made
    before it learnt it had lost the table, reach nobody)."""
    lease = 1.5
    cluster = await make_cluster(2, lease_seconds=lease)
    n1, n2 = cluster["n1"], cluster["n2"]
    table, players = await one_hand_table("paused", (n1, n2, n1, n2))
    east, south = players[:2]  # east (n1) deals, so discards first; south (n2) waits
    async with cleaned_up(n1, players) as running:
        tasks = [asyncio.create_task(p.play(cluster, table, timeout=40)) for p in players[2:]]
        holding = await hold_at(east, table, 1)
        running.extend([*tasks, holding])
        n1.pause()
        view = east.state(table).typed_view()
        assert view is not None
        await east.client.act(table, make_bot("default", seed=0).choose(view))
        await south.client.ws.send(json.dumps({"type": "sync", "payload": {"table": table}}))
        assert await cluster.wait_owner(table, timeout=lease + 10, not_in={"n1"}) == "n2"
        n1.resume()
        holding.cancel()
        tasks += [asyncio.create_task(p.play(cluster, table, timeout=40)) for p in (east, south)]
        running.extend(tasks)
        await south.client.sync(table)  # her turn may have come meanwhile: asked again
        ends = await asyncio.gather(*tasks)
    assert all(end == ends[0] for end in ends)
    match_id = await check_as_offline(cluster, ends[0], hands=1)
    hands = await logged_hands(cluster.database_url, match_id)
    for player in players:
        check_saw_the_log(player, table, hands)


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_owner_paused_until_its_match_ended_elsewhere_its_player_is_told_the_end(
    make_cluster: MakeCluster,  # noqa: F811 (the fixture imported above)
) -> None:
    """The owner (n1) of a one-hand table is stopped (SIGSTOP) while it waits for the
    discard of east, the one player on n1. n2 adopts the table and its three players finish
    the match (east's seat played for her, away) while n1 stays stopped; no node runs the
    table any more. Continued, n1 learns it lost the table: east, whose connection to n1 was
    never closed, is told the match's end as stored, the same ``match_end`` as the others,
    and the table's summary says it is finished."""
    lease = 1.5
    cluster = await make_cluster(2, lease_seconds=lease)
    n1, n2 = cluster["n1"], cluster["n2"]
    table, players = await one_hand_table("ended", (n1, n2, n2, n2))
    east = players[0]
    async with cleaned_up(n1, players) as running:
        tasks = [asyncio.create_task(p.play(cluster, table, timeout=40)) for p in players[1:]]
        holding = await hold_at(east, table, 1)
        running.extend([*tasks, holding])
        n1.pause()
        ends = await asyncio.gather(*tasks)  # adopted by n2 and played to its end meanwhile
        told = asyncio.ensure_future(
            east.client.wait_for(
                lambda m: m.type == "match_end" and m.payload["table"] == table, timeout=30
            )
        )
        summary = asyncio.ensure_future(
            east.client.wait_for(
                lambda m: (
                    m.type == "table"
                    and m.payload["table"] == table
                    and m.payload["state"] == "finished"
                ),
                timeout=30,
            )
        )
        await asyncio.sleep(0)
        n1.resume()
        end, listed = await asyncio.gather(told, summary)
    assert all(e == ends[0] for e in ends) and end.payload == ends[0]
    assert listed.payload["hand_no"] == 1


@contextlib.asynccontextmanager
async def row_locked(cluster: Cluster, table: str) -> AsyncIterator[None]:
    """The table's row locked (``FOR UPDATE``) in PostgreSQL meanwhile: a node adopting the
    table waits in ``take_table`` until the end (a slow database, exactly where it hurts)."""
    async with postgres(cluster) as connection, connection.transaction():
        await connection.execute("SELECT 1 FROM tables WHERE id = $1 FOR UPDATE", table)
        yield


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_a_player_resuming_during_each_handover_of_a_rolling_restart_is_back(
    make_cluster: MakeCluster,  # noqa: F811 (the fixture imported above)
) -> None:
    """A rolling restart: each node in turn gets SIGTERM while it owns the table, which
    waits for its player's discard; she is on that node. It hands the table over and closes
    on her; she resumes at once on the other node, which is still adopting the table (its
    row is held locked in the database meanwhile), and asks for her view (``sync``). The
    answer is her view, once the adoption is done (not ``not_seated`` nor ``no_such_table``,
    and her table is not forgotten); she plays the match to its end."""
    cluster = await make_cluster(2)
    n1, n2 = cluster["n1"], cluster["n2"]
    roller, table = await solo_table(n1, "roller")
    holding = await hold_at(roller, table, 1)
    try:
        for node, other in ((n1, n2), (n2, n1)):
            assert await cluster.owner(table) == node.name and roller.node is node
            async with row_locked(cluster, table):
                stopping = asyncio.create_task(node.stop())
                assert await asyncio.wait_for(holding, 30) is None  # her node closed on her
                await roller.move_to(other)
                sync = asyncio.create_task(roller.client.sync(table, timeout=30))
                # (Answered while the table is still being adopted only if it went wrong.)
                done, _ = await asyncio.wait({sync}, timeout=1.0)
                assert not done or sync.exception() is None, sync.exception()
            state = await sync
            assert state.view is not None and state.view["you"] == roller.seat
            assert await stopping == 0, node.tail()
            holding = await hold_at(roller, table, 1)
            await node.start()
        holding.cancel()
        await roller.client.sync(table)  # a full update: her turn, to answer now
        end = await roller.play(cluster, table)
    finally:
        holding.cancel()
        await roller.close()
    match_id = await check_as_offline(cluster, end)
    check_saw_the_log(roller, table, await logged_hands(cluster.database_url, match_id))


@pytest.mark.postgres
@pytest.mark.asyncio
async def test_play_pauses_while_redis_is_down(
    make_cluster: MakeCluster,  # noqa: F811 (the fixture imported above)
) -> None:
    """Redis is killed mid-match. A node can then neither know that it still runs its
    tables nor reach the players it relays, so every table pauses: no action is stored until
    Redis is back (here a table of n1 where its player, on n1, and three bots would play on,
    watched from n2). Then the match goes on and ends as offline, and the spectator on n2
    was shown exactly what the log holds."""
    cluster = await make_cluster(2)
    n1, n2 = cluster["n1"], cluster["n2"]
    alice, table = await solo_table(n1, "alice_down")
    carol = await Player.register(n2, "carol_down")
    await carol.client.watch(table)
    task = asyncio.create_task(alice.play(cluster, table, think=0.05))
    try:
        await progressed(alice, table, 1)
        await cluster.redis.kill()
        for node in (n1, n2):
            await until(lambda node=node: redis_down(node), 10, f"{node.name} sees Redis down")
        stored: list[int] = []

        async def paused() -> bool:
            async with postgres(cluster) as connection:
                stored.append(await connection.fetchval("SELECT count(*) FROM actions"))
            return len(stored) > 2 and stored[-1] == stored[-3]  # (0.5 s apart)

        await until(paused, 10, "the table paused (no action stored)", interval=0.25)
        # From the moment n1 saw Redis gone: at most the action it was storing then.
        assert stored[-1] - stored[0] <= 1, stored
        assert alice.state(table).match_end is None, "the match went on without Redis"
        await cluster.redis.start()
        end = await task
    finally:
        task.cancel()
        await alice.close()
        await carol.close()
    match_id = await check_as_offline(cluster, end)
    check_saw_the_log(carol, table, await logged_hands(cluster.database_url, match_id))


async def redis_down(node: Node) -> bool:
    return bool((await node.healthz())["cluster"]["redis"] == "unreachable")

"""Every viewer can verify every hand: the commitment of the hand in play reaches whoever gets
the hand, however it gets it (docs/protocol.md, "Fairness").

``commit`` goes to those at the table when a hand is dealt; whoever comes later gets the
hand's ``commitment`` with the hand itself: in its first update (the deal) and in every full
update, so on ``join_table``, ``watch``, ``sync``, a reconnection, a restored table, a delayed
spectator's feed. A full update after a hand ended also carries that hand's ``reveal``
(``last_hand.reveal``) at tables that reveal, since it went by with the hand.

Driven through the table task with fake connections and the in-memory store; the socket
paths (resume, a relayed connection, the browser) are in test_server_hidden_info.py,
test_cluster*.py and tests/web/.
"""

from __future__ import annotations

import types
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from fakes import QUICK, Clock, FakePeer, FakeStore, handled, play_for, until

import server.table
from server.config import Config, LimitsSection
from server.lobby import Lobby
from server.table import (
    AddBotsInput,
    BackInput,
    GoneInput,
    JoinInput,
    LeaveInput,
    SyncInput,
    Table,
    WatchInput,
    hand_reveals,
)

SEED = 20_261_203


def config() -> Config:
    return Config(timers=QUICK, limits=LimitsSection(max_tables=10))


@pytest_asyncio.fixture
async def lobby() -> AsyncIterator[Lobby]:
    made = Lobby(config(), FakeStore())
    yield made
    await made.shutdown()


def truth(lobby: Lobby, table: Table, hands: int) -> list[dict[str, Any]]:
    """The stored match's ``hand_reveal`` of hands 1..``hands``: the commitments to expect."""
    store = lobby.store
    assert isinstance(store, FakeStore) and table.match_id is not None
    row = store.matches[table.match_id]
    return hand_reveals(row.seed, row.salt, hands)


def commitments_seen(peer: FakePeer) -> dict[int, str]:
    """Hand number -> the commitment this connection holds for it, from ``commit`` messages
    and updates, checking that it had one before (or with) the first update of each hand it
    got and that it never got two different ones."""
    held: dict[int, str] = {}
    shown: set[int] = set()
    for frame in peer.sent:
        kind, payload = frame["type"], frame["payload"]
        if kind == "commit":
            got = {payload["hand_no"]: payload["commitment"]}
        elif kind == "update":
            hand_no = payload["hand_no"]
            got = {hand_no: payload["commitment"]} if "commitment" in payload else {}
            if hand_no not in shown:
                assert hand_no in held or hand_no in got, (peer.username, "no commitment", frame)
                shown.add(hand_no)
        else:
            continue
        for hand_no, digest in got.items():
            assert held.setdefault(hand_no, digest) == digest, (peer.username, frame)
    return held


@pytest.mark.asyncio
@pytest.mark.parametrize("reveals", [True, False])
async def test_a_player_seated_before_the_deal_gets_its_commitment_with_the_hand(
    lobby: Lobby, reveals: bool
) -> None:
    """A tournament's table is dealt before its players sit down (``seated``): nobody gets
    hand 1's ``commit``, so the first update each gets carries the commitment; so does a
    duplicate table's one hand (``reveals`` false), checked against the seeds the tournament
    publishes after."""
    table = await lobby.create(
        None,
        60,
        False,
        hands=1,
        seed=SEED,
        reveals=reveals,
        seated=["alice", "bob", *["bot:fast"] * 2],
    )
    await until(lambda: table.match is not None and table.match.hand is not None, "the deal")
    alice, bob = FakePeer("alice"), FakePeer("bob")
    for n, peer in enumerate((alice, bob)):
        await table.queue.put(JoinInput(peer, n, n, None))
    await until(lambda: alice.updates() and bob.updates(), "both joined")
    (expected,) = truth(lobby, table, 1)
    for peer in (alice, bob):
        assert peer.frames("commit") == []  # dealt before they came: the defect's path
        assert commitments_seen(peer) == {1: expected["commitment"]}


@pytest.mark.asyncio
async def test_every_way_of_getting_the_hand_mid_hand_carries_its_commitment(
    lobby: Lobby,
) -> None:
    """A spectator who watches after the deal, a ``sync`` (player and spectator), a player
    back after a dropped connection: each full update carries the hand's commitment, the
    one the players got with ``commit`` and the one the ``reveal`` proves."""
    table = await lobby.create(None, 60, False, hands=2, claim_window_ms=0)
    alice = FakePeer("alice")
    await table.queue.put(JoinInput(alice, 1, 0, None))
    await table.queue.put(AddBotsInput(alice, 2, "fast"))
    await until(alice.updates, "the deal")
    for step in range(6):  # into the hand
        await play_for(table, alice, 10 + step)
        await handled(table)
    carol, again = FakePeer("carol"), FakePeer("alice")
    await table.queue.put(WatchInput(carol, 3, None))
    await table.queue.put(SyncInput(carol, 4))
    await table.queue.put(SyncInput(alice, 5))
    await table.queue.put(GoneInput(alice, None))
    await table.queue.put(BackInput(again, None))
    await handled(table)
    hand_no = table.match.hand_index + 1 if table.match else 0
    assert hand_no == 1
    fulls = [u for p in (carol, alice, again) for u in p.updates() if u.get("full")]
    assert len(fulls) == 4  # watch, two syncs, back
    assert carol.frames("commit") == [] and again.frames("commit") == []
    committed = alice.frames("commit")[0]["commitment"]
    assert {u["commitment"] for u in fulls} == {committed}
    # Play to the end: every reveal matches what each of them holds.
    await table.queue.put(LeaveInput(again, 6))
    await until(lambda: carol.frames("match_end"), "the match's end", timeout=60)
    reveals = {r["hand_no"]: r["commitment"] for r in carol.frames("reveal")}
    assert reveals == {r["hand_no"]: r["commitment"] for r in truth(lobby, table, 2)}
    assert commitments_seen(carol) == reveals
    assert commitments_seen(alice) == commitments_seen(again) == {1: reveals[1]}  # (gone)


@pytest.mark.asyncio
async def test_the_first_update_of_each_hand_carries_its_commitment_and_no_other_update_does(
    lobby: Lobby,
) -> None:
    """The deal's update carries the commitment (the same as the ``commit`` before it);
    updates within a hand do not repeat it (they are the bulk of the traffic)."""
    table = await lobby.create(None, None, False, hands=2, seated=["bot:fast"] * 4)
    watcher = FakePeer("watcher")
    await table.queue.put(WatchInput(watcher, 1, None))
    await until(lambda: watcher.frames("match_end"), "the match's end", timeout=60)
    expected = {r["hand_no"]: r["commitment"] for r in truth(lobby, table, 2)}
    assert commitments_seen(watcher) == expected
    for update in watcher.updates():
        starts = bool(update["events"]) and update["events"][0]["kind"] == "match"
        if starts or update.get("full"):
            assert update["commitment"] == expected[update["hand_no"]]
        else:
            assert "commitment" not in update


@pytest.mark.asyncio
async def test_a_full_update_after_a_hand_carries_that_hands_reveal(lobby: Lobby) -> None:
    """``last_hand.reveal``: the reveal a connection missed with the hand's end, so that a
    page back after it can still check that hand; none at a table that does not reveal."""
    shown = {}
    for reveals in (True, False):
        table = await lobby.create(None, 60, False, hands=2, reveals=reveals)
        alice = FakePeer(f"alice{int(reveals)}")
        await table.queue.put(JoinInput(alice, 1, 0, None))
        await table.queue.put(AddBotsInput(alice, 2, "fast"))
        await until(alice.updates, "the deal")
        await table.queue.put(LeaveInput(alice, 3))  # the server plays her seat
        await until(
            lambda t=table: t.match is not None and t.match.hand_index == 1, "hand 2", timeout=60
        )
        bob = FakePeer("bob")
        await table.queue.put(WatchInput(bob, 4, None))
        await handled(table)
        (full,) = [u for u in bob.updates() if u.get("full")]
        shown[reveals] = full["last_hand"]
        if reveals:
            first = truth(lobby, table, 1)[0]
            record = table.match.records[0] if table.match else None
            assert record is not None
            assert full["last_hand"]["reveal"] == {
                "table": table.id,
                **first,
                "dealer_position": record.dealer_position,
            }
    assert "reveal" in shown[True] and "reveal" not in shown[False]


@pytest.mark.asyncio
async def test_a_delayed_spectator_gets_the_commitment_of_the_hand_he_is_shown(
    lobby: Lobby, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spectator who comes mid-hand to a table shown 2 s late: the full update of then
    carries its hand's commitment."""
    clock = Clock()
    monkeypatch.setattr(
        server.table.sources, "time", types.SimpleNamespace(monotonic=clock.monotonic)
    )
    table = await lobby.create(None, 60, False, claim_window_ms=0, spectator_delay_seconds=2)
    alice = FakePeer("alice")
    await table.queue.put(JoinInput(alice, 1, 0, None))
    await table.queue.put(AddBotsInput(alice, 2, "fast"))
    await until(alice.updates, "the deal")
    for step in range(12):
        clock.now += 0.5
        await play_for(table, alice, 10 + step)
        await handled(table)
    bob = FakePeer("bob")
    await table.queue.put(WatchInput(bob, 3, None))
    await handled(table)
    (full,) = [u for u in bob.updates() if u.get("full")]
    assert full["commitment"] == alice.frames("commit")[0]["commitment"]
    assert bob.frames("commit") == []  # it went by before the 2 s he is shown


@pytest.mark.asyncio
async def test_a_restored_table_gives_the_hand_whole_with_its_commitment() -> None:
    """After a restart the table is rebuilt from its log: a full update of the hand in play
    starts with the hand's ``match`` event (as before the restart) and carries its
    commitment."""
    store = FakeStore()
    lobby = Lobby(config(), store)
    table = await lobby.create(None, None, False)
    alice = FakePeer("alice")
    await table.queue.put(JoinInput(alice, 1, 0, None))
    await table.queue.put(AddBotsInput(alice, 2, "fast"))
    await until(alice.updates, "the deal")
    await table.queue.put(WatchInput(watcher := FakePeer("watcher"), 3, None))
    await handled(table)
    await until(lambda: table.log_seq >= 5, "some play")
    await lobby.shutdown()
    before = [u for u in watcher.updates() if u["hand_no"] == 1]
    again = Lobby(config(), store)
    try:
        assert await again.restore() == 1
        restored = again.tables[table.id]
        await restored.queue.put(LeaveInput(FakePeer("nobody"), None))  # (a no-op input)
        carol = FakePeer("carol")
        await restored.queue.put(WatchInput(carol, 4, None))
        await until(lambda: [u for u in carol.updates() if u.get("full")], "carol's view")
        full = next(u for u in carol.updates() if u.get("full"))
        assert full["events"][0]["kind"] == "match"
        assert full["events"][0] == before[0]["events"][0]
        assert full["commitment"] == alice.frames("commit")[0]["commitment"]
    finally:
        await again.shutdown()

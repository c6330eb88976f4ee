"""No one account or address can fill the server: the lobby's limits on the tables that wait
for players, the reserve of the queue's and tournaments' tables, and a waiting table closing
itself when nobody sits at it. Through ``server.lobby.Lobby`` and its tables, on the in-memory
store (``tests/fakes.py``), the tables' clock moved by hand; the limit as a client meets it is
in ``test_lobby_limits_socket.py``."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import pytest_asyncio
from fakes import QUICK, Clock, FakePeer, FakeStore, handled, pin_tables, until

from server.config import Config, LimitsSection, TimersSection, load
from server.db.store import TableRow
from server.lobby import Lobby
from server.metrics import Metrics
from server.nodes import Creator
from server.table import GoneInput, JoinInput, LeaveInput, LobbyError, SyncInput, Table, WatchInput

EMPTY_SECONDS = 30.0
# The server plays for nobody before a long while: a table made with its four seated (as the
# queue's and tournaments' are) stays as it is for the test.
TIMERS = dataclasses.replace(
    QUICK, empty_table_seconds=EMPTY_SECONDS, restart_grace_seconds=3600, max_turn_seconds=3600
)

ALICE = Creator("alice", "192.0.2.1")
BOB = Creator("bob", "192.0.2.1")  # at alice's address
CAROL = Creator("carol", "198.51.100.7")


def refusals(metrics: Metrics, reason: str) -> float | None:
    return metrics.registry.get_sample_value(
        "guobiao_table_refusals_total", {"reason": reason, "node": "n1"}
    )


@pytest_asyncio.fixture
async def make_lobby() -> AsyncIterator[Callable[..., Lobby]]:
    """``make_lobby(limits=..., timers=...)``: a lobby on a fake store with its own metrics
    (node ``n1``), shut down after the test."""
    made: list[Lobby] = []

    def make(limits: dict[str, Any] | None = None, timers: TimersSection = TIMERS) -> Lobby:
        config = Config(
            timers=timers, limits=dataclasses.replace(LimitsSection(), **(limits or {}))
        )
        server = SimpleNamespace(
            node="n1", connections=[], lobby=None, matchmaker=None, slow_drops=0
        )
        lobby = Lobby(config, FakeStore(), Metrics(server))
        made.append(lobby)
        return lobby

    yield make
    for lobby in made:
        await lobby.shutdown()


async def refused(code: str, making: Any) -> LobbyError:
    with pytest.raises(LobbyError) as caught:
        await making
    assert caught.value.code == code, caught.value.reason
    return caught.value


# ------------------------------------------------------------------ limits ---


@pytest.mark.asyncio
async def test_an_account_and_an_address_have_only_so_many_tables_waiting(
    make_lobby: Callable[..., Lobby],
) -> None:
    lobby = make_lobby({"waiting_tables_per_account": 2, "waiting_tables_per_address": 3})
    first = await lobby.create(None, None, False, creator=ALICE)
    await lobby.create(None, None, True, creator=ALICE)  # private ones count too
    error = await refused("too_many_tables", lobby.create(None, None, False, creator=ALICE))
    assert "2 tables" in error.reason and "one account" in error.reason
    # Another account at the same address: the address has one more, then it is full.
    await lobby.create(None, None, False, creator=BOB)
    error = await refused("too_many_tables", lobby.create(None, None, False, creator=BOB))
    assert "192.0.2.1" in error.reason and "one address" in error.reason
    # Elsewhere, anyone may; and the queue's and tournaments' tables are nobody's.
    await lobby.create(None, None, False, creator=CAROL)
    await lobby.create(None, 60, False, seated=["bot:fast"] * 4)
    assert refusals(lobby.metrics, "account") == 1  # type: ignore[union-attr]
    assert refusals(lobby.metrics, "address") == 1  # type: ignore[union-attr]

    # A table that starts waits no more: its creator may make another (one she does not
    # sit at: seated, she may make none, below).
    await first.queue.put(JoinInput(FakePeer("gus"), 1, 0, None))
    await first.queue.put(JoinInput(FakePeer("dan"), 2, None, None))
    await first.queue.put(JoinInput(FakePeer("erin"), 3, None, None))
    await first.queue.put(JoinInput(FakePeer("fay"), 4, None, None))
    await until(lambda: first.state == "playing", "the first table's match")
    await lobby.create(None, None, False, creator=ALICE)
    await refused("too_many_tables", lobby.create(None, None, False, creator=ALICE))


@pytest.mark.asyncio
async def test_a_player_seated_at_an_unfinished_table_may_create_none(
    make_lobby: Callable[..., Lobby],
) -> None:
    """She could not sit at it (one table at a time), and it would close, empty, after
    ``empty_table_seconds``: refused ``already_seated``, naming the table where she sits."""
    lobby = make_lobby()
    playing = await lobby.create(None, 60, False, seated=["alice", "bot:fast", "bot:fast", "bob"])
    await until(lambda: lobby.seated_at("alice") == playing.id, "the match started")
    error = await refused("already_seated", lobby.create(None, None, False, creator=ALICE))
    assert (error.reason, error.table) == (f"you already sit at table {playing.id}", playing.id)
    assert list(lobby.tables) == [playing.id] and lobby.creators == {}
    await lobby.create(None, None, False, creator=CAROL)  # who sits nowhere may


@pytest.mark.asyncio
async def test_no_limit_when_set_to_zero(make_lobby: Callable[..., Lobby]) -> None:
    lobby = make_lobby({"waiting_tables_per_account": 0, "waiting_tables_per_address": 0})
    for _ in range(5):
        await lobby.create(None, None, False, creator=ALICE)
    assert len(lobby.tables) == 5


@dataclass
class FakeCluster:
    """The little of the other nodes (``server.nodes.Nodes``) a lobby asks when it makes a
    table: their waiting tables by creator (as last read from Redis), a lease per new table."""

    store: FakeStore
    waiting: dict[str, Creator]
    draining: bool = False
    seated: dict[str, str] = field(default_factory=dict)

    id_bytes = 6

    def seated_elsewhere(self, username: str) -> str | None:
        return self.seated.get(username)

    def remote_creators(self, local: Iterable[str]) -> list[Creator]:
        return [c for t, c in self.waiting.items() if t not in local]

    def remote_listing(self, local: Iterable[str]) -> list[dict[str, Any]]:
        return []

    async def claim_new(self, table_id: str, store: FakeStore) -> tuple[FakeStore, FakeStore]:
        return self.store, self.store

    def table_done(self, table_id: str) -> None:
        pass

    def lobby_changed(self) -> None:
        pass


@pytest.mark.asyncio
async def test_in_cluster_mode_the_other_nodes_waiting_tables_count(
    make_lobby: Callable[..., Lobby],
) -> None:
    lobby = make_lobby({"waiting_tables_per_account": 2, "waiting_tables_per_address": 4})
    store = lobby.store
    assert isinstance(store, FakeStore)
    # alice made a table at another node; bob two there, from her address.
    lobby.nodes = FakeCluster(store, {"ta": ALICE, "tb": BOB, "tc": BOB})  # type: ignore[assignment]
    await lobby.create(None, None, False, creator=ALICE)
    error = await refused("too_many_tables", lobby.create(None, None, False, creator=ALICE))
    assert "one account" in error.reason
    error = await refused("too_many_tables", lobby.create(None, None, False, creator=BOB))
    assert "one account" in error.reason
    dan = Creator("dan", ALICE.address)
    error = await refused("too_many_tables", lobby.create(None, None, False, creator=dan))
    assert "one address" in error.reason
    await lobby.create(None, None, False, creator=CAROL)


@pytest.mark.asyncio
async def test_tables_being_made_count_against_the_limits(
    make_lobby: Callable[..., Lobby],
) -> None:
    """Two connections of one address ask at once: the second is counted with the first
    while the first's row is being stored (before, both passed the check, then both were
    made)."""
    lobby = make_lobby({"waiting_tables_per_account": 0, "waiting_tables_per_address": 1})
    store = lobby.store
    assert isinstance(store, FakeStore)
    saving, storing, go_on = store.save_table, asyncio.Event(), asyncio.Event()

    async def slow_save(row: TableRow) -> None:
        storing.set()
        await go_on.wait()
        await saving(row)

    store.save_table = slow_save  # type: ignore[method-assign]
    first = asyncio.create_task(lobby.create(None, None, False, creator=ALICE))
    await asyncio.wait_for(storing.wait(), 5)
    await refused(
        "too_many_tables", asyncio.wait_for(lobby.create(None, None, False, creator=BOB), 5)
    )
    go_on.set()
    await first
    assert list(lobby.creators.values()) == [ALICE]


@pytest.mark.asyncio
async def test_players_tables_leave_the_reserve_to_the_queue_and_tournaments(
    make_lobby: Callable[..., Lobby],
) -> None:
    lobby = make_lobby(
        {
            "max_tables": 10,
            "reserved_share": 0.2,
            "waiting_tables_per_account": 0,
            "waiting_tables_per_address": 0,
        }
    )
    assert lobby.config.limits.casual_tables == 8
    for n in range(8):
        await lobby.create(None, None, False, creator=Creator(f"p{n}", f"203.0.113.{n}"))
    error = await refused("table_full", lobby.create(None, None, False, creator=CAROL))
    assert "8" in error.reason and "10" in error.reason
    # The queue's and the tournaments' tables still find room: the reserve is theirs.
    await lobby.create(None, 60, False, seated=["alice", "bob", "carol", "dan"])
    await lobby.create(None, 60, True, seated=["erin", "fay", "gus", "hal"], tournament=(1, 1, 1))
    await refused("table_full", lobby.create(None, 60, False, seated=["bot:fast"] * 4))
    assert refusals(lobby.metrics, "server") == 1  # type: ignore[union-attr]
    assert refusals(lobby.metrics, "reserve") == 1  # type: ignore[union-attr]


def test_the_reserve_leaves_players_a_table_on_a_small_server() -> None:
    assert LimitsSection(max_tables=1000).casual_tables == 900  # the default share, 0.1
    assert LimitsSection(max_tables=10).casual_tables == 9
    assert LimitsSection(max_tables=1).casual_tables == 1
    assert LimitsSection(max_tables=1000, reserved_share=0).casual_tables == 1000


# ----------------------------------------------------------- empty tables ---


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    return pin_tables(monkeypatch)


def closed(lobby: Lobby, table: Table) -> bool:
    return table.id not in lobby.tables


@pytest.mark.asyncio
async def test_a_table_nobody_sat_at_closes_after_the_grace(
    make_lobby: Callable[..., Lobby], clock: Clock
) -> None:
    lobby = make_lobby()
    table = await lobby.create(None, None, False, creator=ALICE)
    watcher = FakePeer("watcher")
    await table.queue.put(WatchInput(watcher, 1, None))
    clock.now += EMPTY_SECONDS - 1
    await handled(table)
    assert not closed(lobby, table) and lobby.creators == {table.id: ALICE}
    clock.now += 1
    await table.queue.put(SyncInput(FakePeer("stranger"), None))  # wakes it: it is due
    await until(lambda: closed(lobby, table), "the empty table closed")
    assert lobby.creators == {} and lobby.listing() == []
    store = lobby.store
    assert isinstance(store, FakeStore)
    assert store.tables[table.id].state == "finished"  # not restored by a restart
    assert await store.load_open_tables() == []
    last = watcher.frames("table")[-1]
    assert (last["table"], last["state"], last["hand_no"]) == (table.id, "finished", 0)
    assert lobby.metrics is not None
    assert (
        lobby.metrics.registry.get_sample_value("guobiao_empty_tables_closed_total", {"node": "n1"})
        == 1
    )
    await lobby.create(None, None, False, creator=ALICE)  # her limit counts it no more


@pytest.mark.asyncio
async def test_the_grace_runs_from_when_the_last_person_left(
    make_lobby: Callable[..., Lobby], clock: Clock
) -> None:
    lobby = make_lobby()
    table = await lobby.create(None, None, False, creator=ALICE)
    alice, bob = FakePeer("alice"), FakePeer("bob")
    await table.queue.put(JoinInput(alice, 1, 0, None))
    await handled(table)
    clock.now += EMPTY_SECONDS * 10  # a person sits: it waits as long as she likes
    await handled(table)
    assert not closed(lobby, table)
    await table.queue.put(JoinInput(bob, 2, 1, None))
    await table.queue.put(LeaveInput(alice, 3))  # the creator left; bob stays
    clock.now += EMPTY_SECONDS * 10
    await handled(table)
    assert not closed(lobby, table)
    await table.queue.put(GoneInput(bob, None))  # the last person's connection closed
    await handled(table)
    clock.now += EMPTY_SECONDS - 1
    await handled(table)
    assert not closed(lobby, table)
    clock.now += 1
    await table.queue.put(SyncInput(FakePeer("stranger"), None))
    await until(lambda: closed(lobby, table), "the empty table closed")


@pytest.mark.asyncio
async def test_a_creator_who_comes_back_in_time_keeps_the_table(
    make_lobby: Callable[..., Lobby], clock: Clock
) -> None:
    lobby = make_lobby()
    table = await lobby.create(None, None, False, creator=ALICE)
    alice = FakePeer("alice")
    await table.queue.put(JoinInput(alice, 1, 0, None))
    await table.queue.put(GoneInput(alice, None))  # her connection dropped: the seat is free
    await handled(table)
    assert table.seats[0] is None
    clock.now += EMPTY_SECONDS - 1
    again = FakePeer("alice")  # her new connection sits down again
    await table.queue.put(JoinInput(again, 2, 0, None))
    await handled(table)
    clock.now += EMPTY_SECONDS * 10
    await handled(table)
    assert not closed(lobby, table)
    assert table.seats[0] is not None and table.seats[0].name == "alice"


@pytest.mark.asyncio
async def test_the_queues_and_tournaments_tables_never_close_so(
    make_lobby: Callable[..., Lobby], clock: Clock
) -> None:
    """Made with their four seated, away until they attach: nobody sits there yet, and the
    table is not closed for it."""
    lobby = make_lobby()
    queued = await lobby.create(None, 60, False, seated=["alice", "bob", "carol", "dan"])
    clock.now += EMPTY_SECONDS * 10
    await handled(queued)
    assert not closed(lobby, queued) and queued.close_when_empty == 0


@pytest.mark.asyncio
async def test_a_restored_waiting_table_its_players_do_not_come_back_to_closes(
    make_lobby: Callable[..., Lobby], clock: Clock
) -> None:
    """After a restart, a table that waited with alice seated waits for her to come back;
    if she does not, it closes and she may sit elsewhere (before, she sat there for good:
    ``already_seated`` at every other table)."""
    lobby = make_lobby()
    store = lobby.store
    assert isinstance(store, FakeStore)
    row = TableRow(
        id="t0ld",
        rules="mcr",
        turn_seconds=15,
        private=False,
        invite_code=None,
        seats=["alice", None, None, None],
        created_at=datetime(2026, 12, 1, tzinfo=UTC),
        state="waiting",
    )
    await store.save_table(row)
    assert await lobby.restore() == 1
    table = lobby.tables["t0ld"]
    assert lobby.seated_at("alice") == "t0ld"
    clock.now += EMPTY_SECONDS
    await table.queue.put(SyncInput(FakePeer("stranger"), None))
    await until(lambda: closed(lobby, table), "the abandoned table closed")
    assert lobby.seated_at("alice") is None
    assert store.tables["t0ld"].state == "finished"


# -------------------------------------------------------------- the docs ---


def test_the_default_file_and_the_protocol_doc_state_the_defaults() -> None:
    config = load(environ={})
    assert config.limits == LimitsSection() and config.timers == TimersSection()
    root = Path(__file__).parents[2]
    text = " ".join((root / "docs" / "protocol.md").read_text(encoding="utf-8").split())
    limits, timers = LimitsSection(), TimersSection()
    for phrase in [
        f"`waiting_tables_per_account` ({limits.waiting_tables_per_account})",
        f"`waiting_tables_per_address` ({limits.waiting_tables_per_address})",
        f"`[timers] empty_table_seconds` ({timers.empty_table_seconds:g} s)",
    ]:
        assert phrase in text, phrase
    assert limits.reserved_share == 0.1 and "(`reserved_share`, a tenth)" in text

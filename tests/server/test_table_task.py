"""A ``server.table.Table`` driven directly: fake peers, an in-memory store, a fake host;
no sockets, no database (``tests/fakes.py``). What goes over the network is tested in the
end-to-end tests; here, what the table does with each input.

Also the lobby as the tables' host: its listing and its seating come only from what the
tables push.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
import types
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
import pytest_asyncio
from fakes import (
    QUICK,
    Clock,
    FakeHost,
    FakePeer,
    FakeStore,
    StoreUnavailable,
    handled,
    table_for,
    until,
)
from tablekit import discard_only_from_hand_2

import server.table
from engine.actions import Action
from engine.bots import Bot, make_bot
from engine.notation import parse_tiles
from engine.rules import MCR
from engine.simulation import play_match
from engine.tiles import N_KINDS, name
from server.client import view_from_dict
from server.config import Config, LimitsSection
from server.db.store import TableRow
from server.lobby import Lobby, replay_log
from server.table import (
    AddBotsInput,
    BackInput,
    GoneInput,
    JoinInput,
    LeaveInput,
    LobbyError,
    NextHandInput,
    PlayInput,
    Seat,
    SyncInput,
    Table,
    WatchInput,
)

SEED = 20261201


@pytest.fixture(autouse=True)
def fixed_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every match gets ``SEED``; a paused table tries its store again every 10-50 ms."""
    monkeypatch.setattr(server.table.sources, "new_match_seed", lambda: SEED)
    monkeypatch.setattr(server.table.sources, "STORE_RETRY_FIRST", 0.01)
    monkeypatch.setattr(server.table.sources, "STORE_RETRY_MAX", 0.05)


@pytest_asyncio.fixture
async def running() -> AsyncIterator[Callable[..., Table]]:
    """``running(...)``: a started ``table_for(...)``, stopped after the test."""
    started: list[Table] = []

    def start(**kwargs: Any) -> Table:
        table = table_for(**kwargs)
        table.start()
        started.append(table)
        return table

    yield start
    for table in started:
        await table.stop()


def replies(peer: FakePeer, reply_to: int) -> list[dict[str, Any]]:
    return [f for f in peer.sent if f.get("reply_to") == reply_to]


# ------------------------------------------------------------------ seats ---


@pytest.mark.asyncio
async def test_leaving_a_table_one_neither_sits_at_nor_watches_is_refused(
    running: Callable[..., Table],
) -> None:
    """``leave_table``: a spectator stops watching (``left``, and no update after it); a
    connection that neither sits at the table nor watches it has nothing to leave
    (``not_seated``), where it used to be told ``left``."""
    table = running()
    alice, bob, carol = FakePeer("alice"), FakePeer("bob"), FakePeer("carol")
    await table.queue.put(JoinInput(alice, 1, 0, None))
    await table.queue.put(WatchInput(bob, 2, None))
    await table.queue.put(LeaveInput(carol, 3))
    await table.queue.put(LeaveInput(bob, 4))
    await handled(table)
    (refused,) = replies(carol, 3)
    assert refused["type"] == "error" and refused["payload"]["code"] == "not_seated"
    (left,) = replies(bob, 4)
    assert left["type"] == "left" and bob not in table.peers
    seen = len(bob.texts)
    await table.queue.put(AddBotsInput(alice, 5, "fast"))
    await until(alice.updates, "the deal")
    assert len(bob.texts) == seen  # gone: nothing more
    await table.queue.put(LeaveInput(bob, 6))  # twice: nothing to leave now
    await handled(table)
    assert replies(bob, 6)[0]["payload"]["code"] == "not_seated"


@pytest.mark.asyncio
async def test_a_join_takes_the_seat_and_tells_the_host_and_the_store(
    running: Callable[..., Table],
) -> None:
    store, host = FakeStore(), FakeHost()
    table = running(store=store, host=host)
    alice = FakePeer("alice")
    await table.queue.put(JoinInput(alice, 1, 2, None))
    await handled(table)
    (joined,) = replies(alice, 1)
    assert joined["type"] == "joined" and joined["payload"] == {"table": "t1", "seat": 2}
    assert alice.frames("table")[-1]["seats"] == [None, None, "alice", None]
    assert host.summaries[-1].players == ("alice",)
    assert host.summaries[-1].listing["seats"] == [None, None, "alice", None]
    assert store.tables["t1"].seats == (None, None, "alice", None)
    assert host.seated_at("alice") == "t1"


@pytest.mark.asyncio
async def test_a_player_seated_elsewhere_is_refused_and_nothing_changes(
    running: Callable[..., Table],
) -> None:
    store, host = FakeStore(), FakeHost(elsewhere={"alice": "t9"})
    table = running(store=store, host=host)
    alice = FakePeer("alice")
    await table.queue.put(JoinInput(alice, 1, None, None))
    await handled(table)
    (refused,) = replies(alice, 1)
    assert refused["type"] == "error" and refused["payload"]["code"] == "already_seated"
    assert "t9" in refused["payload"]["reason"]
    assert table.seats == [None, None, None, None]
    assert all(s.players == () for s in host.summaries)
    assert "save_table" not in store.counts


@pytest.mark.asyncio
async def test_a_private_table_wants_its_invite(running: Callable[..., Table]) -> None:
    table = running(private=True)
    alice = FakePeer("alice")
    await table.queue.put(JoinInput(alice, 1, None, "wrong"))
    await table.queue.put(WatchInput(alice, 2, None))
    await table.queue.put(JoinInput(alice, 3, None, "secret"))
    await handled(table)
    codes = [replies(alice, n)[0]["payload"].get("code") for n in (1, 2)]
    assert codes == ["wrong_invite", "wrong_invite"]
    assert replies(alice, 3)[0]["type"] == "joined"


@pytest.mark.asyncio
async def test_leaving_a_waiting_table_frees_the_seat(running: Callable[..., Table]) -> None:
    host = FakeHost()
    table = running(host=host)
    alice = FakePeer("alice")
    await table.queue.put(JoinInput(alice, 1, None, None))
    await table.queue.put(LeaveInput(alice, 2))
    await handled(table)
    assert replies(alice, 2)[0]["type"] == "left"
    assert table.seats == [None, None, None, None]
    assert host.summaries[-1].players == () and host.seated_at("alice") is None


@pytest.mark.asyncio
async def test_a_player_gone_from_a_waiting_table_frees_the_seat(
    running: Callable[..., Table],
) -> None:
    host = FakeHost()
    table = running(host=host)
    alice, bob = FakePeer("alice"), FakePeer("bob")
    await table.queue.put(JoinInput(alice, 1, None, None))
    await table.queue.put(JoinInput(bob, 2, None, None))
    await table.queue.put(GoneInput(alice, None))
    await handled(table)
    assert host.summaries[-1].listing["seats"] == [None, "bob", None, None]
    assert bob.frames("table")[-1]["seats"] == [None, "bob", None, None]


@pytest.mark.asyncio
@pytest.mark.parametrize("bot", ["easy", "normal", "strong", "default", "fast"])
async def test_add_bots_seats_bots_of_the_level_asked(
    running: Callable[..., Table], bot: str
) -> None:
    """The levels, ``default`` (normal's old name, for old clients) and ``fast`` (the
    load-test bot) are all accepted; each seat shows ``bot:NAME``."""
    table = running(turn_seconds=60)
    alice = FakePeer("alice")
    await table.queue.put(JoinInput(alice, 1, 0, None))
    await table.queue.put(AddBotsInput(alice, 2, bot))
    await handled(table)
    (reply,) = replies(alice, 2)
    assert reply["type"] == "table"
    assert reply["payload"]["seats"] == ["alice", f"bot:{bot}", f"bot:{bot}", f"bot:{bot}"]


@pytest.mark.asyncio
async def test_an_unknown_bot_is_refused_with_the_levels(running: Callable[..., Table]) -> None:
    table = running(turn_seconds=60)
    alice = FakePeer("alice")
    await table.queue.put(JoinInput(alice, 1, 0, None))
    await table.queue.put(AddBotsInput(alice, 2, "hard"))
    await handled(table)
    (reply,) = replies(alice, 2)
    assert reply["type"] == "error" and reply["payload"] == {
        "code": "bad_message",
        "reason": "unknown bot 'hard'; levels: easy, normal, strong (also accepted: default, fast)",
    }
    assert table.summary()["seats"] == ["alice", None, None, None]


# ------------------------------------------------------------------ a match ---


async def started_match(table: Table, human: str = "alice", bot: str = "fast") -> FakePeer:
    """``human`` joins seat 0 and adds ``bot`` bots: the match starts."""
    peer = FakePeer(human)
    await table.queue.put(JoinInput(peer, 1, 0, None))
    await table.queue.put(AddBotsInput(peer, 2, bot))
    await until(peer.updates, "the deal")
    return peer


@pytest.mark.asyncio
async def test_adding_bots_starts_the_match_and_the_host_hears_of_it(
    running: Callable[..., Table],
) -> None:
    store, host = FakeStore(), FakeHost()
    table = running(store=store, host=host, turn_seconds=60)
    alice = await started_match(table)
    assert replies(alice, 2)[0]["payload"]["seats"] == ["alice", "bot:fast", "bot:fast", "bot:fast"]
    (match,) = store.matches.values()
    assert (match.table_id, match.seed, match.seats[0]) == ("t1", SEED, "alice")
    last = host.summaries[-1]
    assert (last.state, last.listing["hand_no"]) == ("playing", 1)
    assert last.listing["rule_options"] == table.rule_set.to_dict() == match.rule_options
    assert store.tables["t1"].state == "playing"
    assert alice.frames("commit")[0]["hand_no"] == 1
    deal = alice.updates()[0]
    assert deal["seq"] == 1 and deal["view"]["you"] == 0 and deal["deadline_ms"] == 60_000
    assert alice.prompts == [("t1", 1)]  # the dealer is asked to act


@pytest.mark.asyncio
async def test_a_whole_bot_match_plays_to_its_end_and_replays_from_the_store(
    running: Callable[..., Table],
) -> None:
    """Alice leaves once the match starts: the server plays her seat (``default`` bot)."""
    store, host = FakeStore(), FakeHost()
    table = running(store=store, host=host)
    began = time.perf_counter()
    alice = await started_match(table)
    await table.queue.put(LeaveInput(alice, 3))
    await until(lambda: host.done, "the end of the match", timeout=120)
    print(f"\n[table] a whole bot match on the fake store: {time.perf_counter() - began:.2f} s")
    (row,) = store.matches.values()
    assert row.ended_at is not None and row.final_scores is not None
    bots = [make_bot("default", seed=0)] + [make_bot("fast", seed=p) for p in (1, 2, 3)]
    expected = play_match(SEED, bots, table.rule_set, row.id)
    assert list(row.final_scores) == expected.scores and sum(expected.scores) == 0
    actions = await store.match_actions(row.id)
    replayed = replay_log(row, actions, Config().rule_presets())
    assert replayed.log == expected.log and replayed.over
    # Every move of hers the server played for her; the bots' are their own.
    assert {(a.player, a.stand_in) for a in actions} == {
        (0, True),
        (1, False),
        (2, False),
        (3, False),
    }
    assert await store.match_hands(row.id) == [r.to_dict() for r in expected.records]
    assert host.summaries[-1].state == "finished" and host.seated_at("alice") is None
    assert store.tables["t1"].state == "finished"
    assert host.done == [table.id]


@pytest.mark.asyncio
async def test_a_sync_sends_the_whole_hand_again(running: Callable[..., Table]) -> None:
    table = running(turn_seconds=60)
    alice = await started_match(table)
    await table.queue.put(SyncInput(alice, 7))
    await handled(table)
    (full,) = replies(alice, 7)
    assert full["type"] == "update" and full["payload"]["full"]
    assert full["payload"]["seq"] == table.seq
    assert full["payload"]["events"] == alice.updates()[0]["events"]


@pytest.mark.asyncio
async def test_a_stale_action_is_refused_with_a_full_update(
    running: Callable[..., Table],
) -> None:
    store = FakeStore()
    table = running(store=store, turn_seconds=60)
    alice = await started_match(table)
    legal = alice.updates()[-1]["view"]["legal"]
    await table.queue.put(PlayInput(alice, 5, table.seq - 1, Action.from_dict(legal[0])))
    await handled(table)
    stale, full = replies(alice, 5)[0], alice.updates()[-1]
    assert stale["payload"]["code"] == "stale" and full["full"]
    assert store.actions[1] == [] and table.seq == 1


@pytest.mark.asyncio
async def test_a_refused_action_changes_nothing(running: Callable[..., Table]) -> None:
    store = FakeStore()
    table = running(store=store, turn_seconds=60)
    alice = await started_match(table)
    view = alice.updates()[-1]["view"]
    assert table.match is not None and table.match.hand is not None
    before = table.match.hand.view(0).to_dict()
    held = {a.get("tile") for a in view["legal"] if a["type"] == "discard"}
    absent = next(t for t in ("1m", "9m", "1p", "9p", "1s", "9s", "E", "N") if t not in held)
    bad = Action.from_dict({"type": "discard", "tile": absent})
    await table.queue.put(PlayInput(alice, 5, table.seq, bad))
    await handled(table)
    refused = replies(alice, 5)[0]
    assert refused["type"] == "error" and refused["payload"]["code"] == "tile_not_in_hand"
    assert table.match.hand.view(0).to_dict() == before
    assert store.actions[1] == [] and table.seq == 1 and table.log_seq == 0


@pytest.mark.asyncio
async def test_a_failed_store_write_refuses_the_action_and_nothing_changes(
    running: Callable[..., Table],
) -> None:
    store = FakeStore()
    table = running(store=store, turn_seconds=60)
    alice = await started_match(table)
    assert table.match is not None and table.match.hand is not None
    before = table.match.hand.view(0).to_dict()
    discard = next(Action.from_dict(a) for a in alice.updates()[-1]["view"]["legal"])
    # (Its row's saves fail too: a retry that works would end the pause before it is seen.)
    store.fail = lambda method, counts: method in {"append_action", "save_table"}
    await table.queue.put(PlayInput(alice, 5, table.seq, discard))
    await handled(table)
    refused = replies(alice, 5)[0]
    assert refused["payload"]["code"] == "internal_error"
    assert "nothing changed" in refused["payload"]["reason"]
    assert table.match.hand.view(0).to_dict() == before
    assert store.actions[1] == [] and (table.seq, table.log_seq) == (1, 0)
    assert table.store_down_since is not None  # paused until a write works
    store.fail = None
    await table.queue.put(PlayInput(alice, 6, table.seq, discard))
    await until(lambda: table.log_seq >= 1, "the action taken once the store works")
    assert store.actions[1][0].action == discard.to_dict() and table.store_down_since is None


@dataclasses.dataclass
class LostAnswers(FakeStore):
    """A store that makes a match and then fails as if its answer were lost (the table told
    the write failed), and fails every match after it while ``down``."""

    down: bool = True

    async def create_match(self, *args: Any, **kwargs: Any) -> int:
        if self.down and self.matches:
            raise StoreUnavailable("the database is down")
        made = await super().create_match(*args, **kwargs)
        if self.down:
            raise StoreUnavailable("no answer: made, but the table cannot know")
        return made


@pytest.mark.asyncio
async def test_a_match_of_other_players_is_not_the_one_a_failed_try_made(
    running: Callable[..., Table],
) -> None:
    """The fourth player sits, the match is made but the table is told it failed; while it
    waits to try again, a player leaves and another sits. The match it then starts is one of
    the four now seated, made anew; not the match of the four before, which the failed try
    made (a retry finds a match it made by its table, seed and salt: server/db/matches.py)."""
    store = LostAnswers()
    table = running(store=store)
    alice, bob, carol, dan, erin = (FakePeer(n) for n in ("alice", "bob", "carol", "dan", "erin"))
    for seat, peer in enumerate((alice, bob, carol, dan)):
        await table.queue.put(JoinInput(peer, seat + 1, seat, None))
    await until(lambda: bool(store.matches), "the match made, its answer lost")
    await table.queue.put(LeaveInput(alice, 10))
    await table.queue.put(JoinInput(erin, 11, 0, None))
    await handled(table)
    assert table.state == "waiting" and len(store.matches) == 1
    store.down = False
    await until(lambda: table.state == "playing", "the match started")
    assert table.match_id is not None
    started = store.matches[table.match_id]
    assert started.seats == ("erin", "bob", "carol", "dan"), started
    assert len(store.matches) == 2  # the first, its seats' match, never played


@dataclasses.dataclass
class UnsureStore(FakeStore):
    """A store whose log cannot say, while ``unsure``, how a failed append ended (on
    PostgreSQL: the backend that had it not ended yet, server/db/unsettled.py)."""

    unsure: bool = False

    async def last_action(self, match_id: int) -> Any:
        if self.unsure:
            raise TimeoutError("the backend that had the append has not ended")
        return await super().last_action(match_id)


@pytest.mark.asyncio
async def test_a_failed_check_of_a_move_whose_append_failed_is_logged_as_that_check(
    running: Callable[..., Table], clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    """Her move's append failed; the table's retry first asks the log whether it was
    stored after all. That read failing was logged as "the database failed saving table
    ... on its retry", a save the retry never came to. It names the check and the move;
    once the log can say, the table goes on and her move is stored once."""
    store = UnsureStore()
    table = running(store=store, turn_seconds=60)
    alice = await started_match(table)
    discard = next(Action.from_dict(a) for a in alice.updates()[-1]["view"]["legal"])
    store.fail = lambda method, counts: method == "append_action"
    store.unsure = True
    await table.queue.put(PlayInput(alice, 5, table.seq, discard))
    await handled(table)
    assert replies(alice, 5)[0]["payload"]["code"] == "internal_error"
    store.fail = None
    caplog.clear()
    with caplog.at_level("WARNING", logger="guobiao.table"):
        clock.now += 1.0
        await handled(table)  # the retry, due: the check fails
    said = [r.getMessage() for r in caplog.records if "database failed again" in r.getMessage()]
    assert said and f"asking whether table {table.id}'s move 1 was stored" in said[0], said
    assert not any("saving table" in m for m in said), said
    assert table.store_down_since is not None  # still paused
    store.unsure = False
    clock.now += 1.0
    await handled(table)  # the next retry: not stored, the pause ends
    await until(lambda: table.store_down_since is None, "the table goes on")
    await table.queue.put(PlayInput(alice, 6, table.seq, discard))
    await until(lambda: table.log_seq >= 1, "her discard stored")
    first = store.actions[1][0]
    assert (first.seq, first.player, first.action, first.stand_in) == (
        1,
        0,
        discard.to_dict(),
        False,
    )


@pytest.mark.asyncio
async def test_a_move_refused_while_only_appends_fail_is_hers_once_they_work(
    running: Callable[..., Table], clock: Clock
) -> None:
    """The database takes the table's row but no new action (a full disk): each retry's
    row save ends the pause and her re-sent discard's append fails again, for 20 s of a
    10 s turn. Her turn did not run out: once appends work, the discard stored is hers,
    not the stand-in's (before, only the retries' slivers were paused, the rest ran on her
    clock, and the stand-in's move was stored though she had answered)."""
    store = FakeStore()
    table = running(store=store, turn_seconds=10)
    alice = await started_match(table)
    discard = next(Action.from_dict(a) for a in alice.updates()[-1]["view"]["legal"])
    store.fail = lambda method, counts: method == "append_action"
    for n in range(40):  # a client re-sending on each internal_error, half a second later
        await table.queue.put(PlayInput(alice, 10 + n, table.seq, discard))
        await handled(table)
        assert replies(alice, 10 + n)[0]["payload"]["code"] == "internal_error"
        clock.now += 0.05
        await handled(table)  # the retry, due: the row is saved, the pause ends
        clock.now += 0.45
    assert table.durable.pause.failing  # (each retry's row save ended a pause)
    store.fail = None
    clock.now += 0.5
    await handled(table)  # the table drives on: had her turn run out, the stand-in plays
    await table.queue.put(PlayInput(alice, 99, table.seq, discard))
    await until(lambda: table.log_seq >= 1, "her discard stored")
    first = store.actions[1][0]
    assert (first.player, first.action, first.stand_in) == (0, discard.to_dict(), False)
    assert table.store_down_since is None


@pytest.mark.asyncio
async def test_a_move_refused_for_the_database_is_asked_again_each_time_the_table_resumes(
    running: Callable[..., Table], clock: Clock
) -> None:
    """She sends her discard once and is told ``internal_error`` (a full disk: the table's
    row is taken, no move is). She cannot know when to try again, so each time the table
    resumes it sends her that update again, whole, with the time she has left, and she
    answers each such ask only, as the bot does, for 20 s of a 10 s turn. Once moves are
    taken, the discard stored is hers. Before, nothing told her: her clock ran from the
    first row save that ended the pause, and the stand-in's discard was stored."""
    store = FakeStore()
    table = running(store=store, turn_seconds=10)
    alice = await started_match(table)
    first = alice.updates()[-1]
    discard = next(Action.from_dict(a) for a in first["view"]["legal"])
    store.fail = lambda method, counts: method == "append_action"
    await table.queue.put(PlayInput(alice, 10, table.seq, discard))
    await handled(table)
    assert replies(alice, 10)[0]["payload"]["code"] == "internal_error"
    asks, answered = 0, len(alice.updates())
    for n in range(40):
        clock.now += 0.5
        await handled(table)  # the retry, due: the row is saved, the pause ends
        news = alice.updates()[answered:]
        answered = len(alice.updates())
        for ask in news:  # asked again: the same update, whole, her time not run out
            assert (ask["seq"], ask["full"]) == (first["seq"], True)
            assert ask["view"]["legal"] == first["view"]["legal"]
            assert 0 < ask["deadline_ms"] <= 10_000
            asks += 1
            await table.queue.put(PlayInput(alice, 100 + n, ask["seq"], discard))
            await handled(table)
            assert replies(alice, 100 + n)[0]["payload"]["code"] == "internal_error"
    assert asks >= 20 and store.actions[1] == []
    store.fail = None
    clock.now += 0.5
    await handled(table)  # resumed: asked again; had her time run out, the stand-in plays
    ask = alice.updates()[-1]
    assert ask["seq"] == first["seq"] and store.actions[1] == []
    await table.queue.put(PlayInput(alice, 999, ask["seq"], discard))
    await until(lambda: table.log_seq >= 1, "her discard stored")
    stored = store.actions[1][0]
    assert (stored.player, stored.action, stored.stand_in) == (0, discard.to_dict(), False)
    assert table.store_down_since is None and not table.refused


@pytest.mark.asyncio
async def test_a_move_whose_write_waited_for_a_lock_then_failed_is_hers_once_it_works(
    running: Callable[..., Table], clock: Clock
) -> None:
    """Another process holds SQLite's write lock: her discard's append waits 10 s for it,
    then fails. Those 10 s count as paused, as the pause after them does: once the lock is
    free, her re-sent discard is stored, not the stand-in's for a 5 s turn run out."""
    store = FakeStore()
    table = running(store=store, turn_seconds=5)
    alice = await started_match(table)
    discard = next(Action.from_dict(a) for a in alice.updates()[-1]["view"]["legal"])

    def locked(method: str, counts: dict[str, int]) -> bool:
        if method != "append_action":
            return False
        clock.now += 10  # the busy wait
        return True

    store.fail = locked
    await table.queue.put(PlayInput(alice, 10, table.seq, discard))
    await handled(table)
    assert replies(alice, 10)[0]["payload"]["code"] == "internal_error"
    store.fail = None
    clock.now += 0.5
    await handled(table)  # the retry: the pause ends; had her turn run out, the stand-in plays
    await table.queue.put(PlayInput(alice, 11, table.seq, discard))
    await until(lambda: table.log_seq >= 1, "her discard stored")
    first = store.actions[1][0]
    assert (first.player, first.action, first.stand_in) == (0, discard.to_dict(), False)


@pytest.mark.asyncio
async def test_leaving_mid_match_and_coming_back(running: Callable[..., Table]) -> None:
    """Away, her seat is played for her; joining again, she gets her seat and the hand."""
    host = FakeHost()
    table = running(host=host, turn_seconds=60)
    alice = await started_match(table)
    await table.queue.put(LeaveInput(alice, 3))
    await until(lambda: table.log_seq >= 8, "the server playing for her")
    assert host.seated_at("alice") == "t1"  # she still sits there
    back = FakePeer("alice")
    await table.queue.put(JoinInput(back, 4, None, None))
    await handled(table)
    assert replies(back, 4)[0]["payload"] == {"table": "t1", "seat": 0}
    full = back.updates()[0]
    assert full["full"] and full["view"]["you"] == 0 and full["view"]["seats"][0]["concealed"]
    seat = table.seats[0]
    assert seat is not None and seat.connected and seat.away_since is None


@pytest.mark.asyncio
async def test_players_seated_before_they_join_are_each_told_the_table_once() -> None:
    """A table made with its four seated (the queue's, a tournament's): each player who
    joins gets ``joined``, the table's summary and her full update, once; the others, whose
    table did not change, hear nothing of it (each used to get the summary again, once per
    player after her: seat 0 four times). Nor do they when one leaves mid-match (her seat
    stays hers) and comes back."""
    names = ["ann", "bob", "cat", "dan"]
    table = table_for(turn_seconds=60)
    table.seats = [Seat.from_label(name, grace=3600) for name in names]
    table.start()
    peers = [FakePeer(name) for name in names]
    try:
        for seat, peer in enumerate(peers):
            await table.queue.put(JoinInput(peer, None, seat, None))
        await until(lambda: all(p.updates() for p in peers), "every seat's full update")
        await handled(table)
        for peer in peers:
            assert [f["type"] for f in peer.sent] == ["joined", "table", "update"], peer.username
            (summary,) = peer.frames("table")
            assert (summary["seats"], summary["state"]) == (names, "playing")
        await table.queue.put(LeaveInput(peers[0], 1))
        back = FakePeer("ann")
        await table.queue.put(JoinInput(back, 2, None, None))
        await handled(table)
        assert [f["type"] for f in back.sent[:3]] == ["joined", "table", "update"]
        assert [len(p.frames("table")) for p in peers[1:]] == [1, 1, 1]
    finally:
        await table.stop()


# ------------------------------------------------------------ claim window ---


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    fake = Clock()
    monkeypatch.setattr(
        server.table.sources, "time", types.SimpleNamespace(monotonic=fake.monotonic)
    )
    yield fake


@pytest.mark.asyncio
async def test_the_claim_window_closes_only_once_answered_and_its_time_is_up(
    running: Callable[..., Table], clock: Clock
) -> None:
    """Alice (the dealer) discards; the bots answer at once; the table waits the window's
    full 800 ms, then goes on."""
    table = running(turn_seconds=60, claim_window_ms=800)
    alice = await started_match(table)
    assert table.match is not None and table.match.hold_claims
    discard = next(
        Action.from_dict(a) for a in alice.updates()[-1]["view"]["legal"] if a["type"] == "discard"
    )
    await table.queue.put(PlayInput(alice, 5, 1, discard))
    await until(lambda: table.seq == 2, "the discard")
    hand = table.match.hand
    assert hand is not None
    await handled(table)
    assert hand.claims_answered() and table.seq == 2 and hand.phase.value == "claim"
    clock.now += 0.79
    await handled(table)
    assert table.seq == 2  # answered, but the window is not over
    clock.now += 0.01
    await handled(table)
    await until(lambda: table.seq >= 3, "the close of the window")
    after = [u for u in alice.updates() if u["seq"] == 3]
    assert after and after[0]["events"] and after[0]["events"][0]["kind"] != "discard"


@pytest.mark.asyncio
async def test_a_table_told_to_stop_with_a_time_already_due_sleeps_until_its_stop(
    running: Callable[..., Table], clock: Clock
) -> None:
    """Alice's decision clock has run out, and the table is told to stop (``stopping``, as
    the lobby's shutdown tells every table before stopping any): it makes no move, so it must
    not wake for that time either. It did, at once and for ever without yielding: the
    stop, which reaches it through its queue, never ran (a CI run stood still on it)."""
    table = running(turn_seconds=60, claim_window_ms=800)
    await started_match(table)
    clock.now += 61  # the deadline is past: the next wake-up is due now
    table.stopping = True
    assert table._wakeup() is None
    await asyncio.wait_for(table.stop(), 30)
    assert table.task is not None and table.task.done()


@pytest.mark.asyncio
async def test_a_wake_up_with_nothing_due_changes_nothing_and_is_nobodys_input(
    running: Callable[..., Table],
) -> None:
    """The table's timer may wake it before anything is due (it is kept from an earlier
    wait while the next due time is later): the table drives, finds nothing to do, and
    waits again; a wake-up left on the queue of a stopped table is not an input to hand
    on to the table's next owner."""
    store = FakeStore()
    table = running(store=store, turn_seconds=60)
    alice = await started_match(table)
    await handled(table)
    seq, sent, log = table.seq, len(alice.sent), dict(store.actions)
    await table.queue.put(server.table.inputs.WAKE)
    await handled(table)
    assert (table.seq, dict(store.actions)) == (seq, log)
    assert len(alice.sent) == sent  # nothing to her (it is her turn, 60 s to go)
    assert table.wake_timer is not None  # waiting for her clock
    await table.stop()
    assert table.wake_timer is None  # a stopped task leaves no timer behind
    table.queue.put_nowait(server.table.inputs.WAKE)
    assert table.unhandled() == []


@pytest.mark.asyncio
async def test_a_due_time_sooner_than_the_timer_kept_wakes_the_table_on_time(
    running: Callable[..., Table],
) -> None:
    """Alice has a minute to move, and the timer set for it is kept. She discards; the bots
    answer at once, but the claim window (0.2 s) stays open for its whole time, and nothing
    else comes: only the timer can wake the table at the window's end, sooner than the
    timer kept. It is set again for the sooner time, and the table goes on."""
    table = running(turn_seconds=60, claim_window_ms=200)
    alice = await started_match(table)
    await handled(table)
    kept = table.wake_timer
    assert kept is not None
    discard = next(
        Action.from_dict(a) for a in alice.updates()[-1]["view"]["legal"] if a["type"] == "discard"
    )
    await table.queue.put(PlayInput(alice, 5, 1, discard))
    await until(lambda: table.seq >= 3, "the close of the window, by the timer alone", timeout=5)
    assert kept.cancelled()


# ------------------------------------------------------------------ lobby ---


@pytest.mark.asyncio
async def test_the_lobby_lists_and_seats_from_what_tables_push() -> None:
    store = FakeStore()
    lobby = Lobby(Config(timers=QUICK, limits=LimitsSection(max_tables=10)), store)
    try:
        first = await lobby.create(None, None, False)
        second = await lobby.create(None, None, False)
        hidden = await lobby.create(None, None, True)
        assert {t["table"] for t in lobby.listing()} == {first.id, second.id}
        alice = FakePeer("alice")
        await first.queue.put(JoinInput(alice, 1, None, None))
        await handled(first)
        assert lobby.table_of("alice") is first
        (listed,) = [t for t in lobby.listing() if t["table"] == first.id]
        assert listed["seats"] == ["alice", None, None, None]
        await second.queue.put(JoinInput(alice, 2, None, None))
        await handled(second)
        assert replies(alice, 2)[0]["payload"]["code"] == "already_seated"
        assert first.id in replies(alice, 2)[0]["payload"]["reason"]
        await hidden.queue.put(WatchInput(alice, 3, hidden.invite_code))
        await handled(hidden)
        assert replies(alice, 3)[0]["type"] == "watching"
        await first.queue.put(AddBotsInput(alice, 4, "fast"))
        await first.queue.put(LeaveInput(alice, 5))
        await until(lambda: first.id not in lobby.tables, "the first table done", timeout=120)
        assert lobby.table_of("alice") is None
        assert {t["table"] for t in lobby.listing()} == {second.id}
    finally:
        await lobby.shutdown()


@pytest.mark.asyncio
async def test_the_lobby_restores_a_match_from_the_store_and_it_plays_on() -> None:
    store = FakeStore()
    config = Config(timers=QUICK, limits=LimitsSection(max_tables=10))
    lobby = Lobby(config, store)
    table = await lobby.create(None, None, False)
    alice = FakePeer("alice")
    await table.queue.put(JoinInput(alice, 1, 0, None))
    await table.queue.put(AddBotsInput(alice, 2, "fast"))
    await table.queue.put(LeaveInput(alice, 3))
    await until(lambda: table.log_seq >= 30, "some play")
    await lobby.shutdown()
    (row,) = store.matches.values()
    assert row.ended_at is None
    again = Lobby(config, store)
    assert await again.restore() == 1
    restored = again.tables[table.id]
    assert again.table_of("alice") is restored
    assert again.listing()[0]["state"] == "playing"
    await until(lambda: table.id not in again.tables, "the restored match's end", timeout=10)
    (row,) = store.matches.values()
    bots = [make_bot("default", seed=0)] + [make_bot("fast", seed=p) for p in (1, 2, 3)]
    expected = play_match(SEED, bots, config.rule_presets()["mcr"], row.id)
    assert list(row.final_scores or ()) == expected.scores
    await again.shutdown()


# ------------------------------------------ away, back and stopping (recovery) ---
# Moved from the socket tests (test_server_recovery.py, test_server_bad_input.py): what they
# checked is the table's doing. The resume over a real socket stays in
# test_server_recovery.py (test_reconnect_mid_hand_resyncs_and_plays_on).


def lobby_for(**timers: Any) -> Lobby:
    """A lobby on a fake store, with ``QUICK`` timers changed by ``timers``."""
    config = Config(
        timers=dataclasses.replace(QUICK, **timers), limits=LimitsSection(max_tables=10)
    )
    return Lobby(config, FakeStore())


@pytest.mark.asyncio
async def test_sync_by_a_stranger_is_refused(running: Callable[..., Table]) -> None:
    table = running(turn_seconds=60)
    await started_match(table)
    stranger = FakePeer("stranger")
    await table.queue.put(SyncInput(stranger, 1))
    await handled(table)
    # Whatever it gets, it is never the table's state.
    assert not any(f["type"] == "update" for f in stranger.sent)
    (reply,) = replies(stranger, 1)
    assert reply["type"] == "error" and reply["payload"]["code"] == "not_seated", reply


@pytest.mark.asyncio
async def test_a_disconnected_player_comes_back_with_resume() -> None:
    """His connection goes; his seat is played; on a new connection he authenticates again
    (``resume``: the connection finds his table with ``Lobby.table_of`` and tells it
    ``BackInput``): the table sends it his seat's full update at once."""
    lobby = lobby_for(turn_seconds=10, disconnected_seconds=0.1)
    try:
        table = await lobby.create(None, 10, False)
        player, leaver = FakePeer("player"), FakePeer("leaver")
        await table.queue.put(JoinInput(player, 1, 0, None))
        await table.queue.put(JoinInput(leaver, 2, 1, None))
        await table.queue.put(AddBotsInput(player, 3, "fast"))
        await until(leaver.updates, "the deal")
        await table.queue.put(GoneInput(leaver, None))
        await asyncio.sleep(3 * 0.1)  # its seat is played
        comeback = FakePeer("leaver")
        assert lobby.table_of("leaver") is table
        await table.queue.put(BackInput(comeback, 4))
        await until(comeback.updates, "the table, at once", timeout=2)
        back = comeback.updates()[0]
        assert back.get("full") and back["view"]["you"] == 1
    finally:
        await lobby.shutdown()


@pytest.mark.asyncio
async def test_a_player_back_after_the_match_ended_is_told_its_end() -> None:
    """She goes mid-match; the server plays her seat to the match's end. Her connection
    comes back (``BackInput``: a ``resume``, or a cluster node re-attaching her after it was
    stopped while another finished the match): the table's summary says it is finished, and
    she gets the ``match_end`` the others got, which she missed."""
    table = table_for(turn_seconds=60)
    table.settings = dataclasses.replace(table.settings, hands=1)
    table.start()
    try:
        bob = FakePeer("bob")  # watching: the finished table waits for him to leave
        await table.queue.put(WatchInput(bob, None, None))
        alice = await gone_mid_hand(table)
        await until(lambda: bob.frames("match_end"), "the match's end", timeout=10)
        assert not alice.frames("match_end")  # gone before it ended
        back = FakePeer("alice")
        await table.queue.put(BackInput(back, None))
        await handled(table)
        summary, last, reveal, end = back.sent
        assert summary["type"] == "table" and summary["payload"]["state"] == "finished"
        assert last["type"] == "update" and last["payload"]["view"]["phase"] == "over"
        # The last hand's reveal, as the others got it (its fairness checked as if live).
        assert reveal["type"] == "reveal" and reveal["payload"] == bob.frames("reveal")[-1]
        assert reveal["payload"]["commitment"] == last["payload"]["commitment"]
        assert end["type"] == "match_end" and end["payload"]["table"] == "t1"
        assert end["payload"] == bob.frames("match_end")[0]
        assert table.match is not None and end["payload"]["scores"] == list(table.match.scores)
    finally:
        await table.stop()


@pytest.mark.asyncio
async def test_a_player_back_as_the_match_is_being_finished_is_told_its_end() -> None:
    """Her ``resume`` comes while the table saves its finished row: her ``BackInput`` waits
    behind the end, which counted her away (her end kept for later: ``tell_later``). The
    table answers it before it is done: she is told the end at once, and what was kept for
    later is dropped. Before, the table, finished with nobody at it, was forgotten with her
    input unread, and she got nothing, ever (a browser test met it under load)."""
    saving, go_on = asyncio.Event(), asyncio.Event()

    class SlowToFinish(FakeStore):
        async def save_table(self, row: TableRow) -> None:
            if row.state == "finished":
                saving.set()
                await go_on.wait()
            await super().save_table(row)

    host = FakeHost()
    table = table_for(SlowToFinish(), host, turn_seconds=60)
    table.settings = dataclasses.replace(table.settings, hands=1)
    table.start()
    try:
        await gone_mid_hand(table)
        await until(saving.is_set, "the finished table being saved", timeout=30)
        # A ``resume`` now no longer finds her table (the host heard it finished): the
        # host has her end for her already (it was kept only after the save: she got
        # nothing, a browser test met it on a loaded CI).
        assert host.seated_at("alice") is None
        assert [json.loads(f)["type"] for f in host.untold["alice"]] == [
            "table",
            "update",
            "reveal",
            "match_end",
        ]
        back = FakePeer("alice")
        await table.queue.put(BackInput(back, None))
        await asyncio.sleep(0.01)
        go_on.set()
        await until(lambda: host.done, "the table done", timeout=5)
        assert [f["type"] for f in back.sent] == ["table", "update", "reveal", "match_end"]
        summary, last, _, end = (f["payload"] for f in back.sent)
        assert summary["state"] == "finished" and last["view"]["phase"] == "over"
        assert table.match is not None and end["scores"] == list(table.match.scores)
        assert host.untold == {}  # told once
    finally:
        go_on.set()  # (a failed assert above must not leave the save held)
        await table.stop()


async def gone_mid_hand(table: Table) -> FakePeer:
    """alice sits at seat 0 with three ``default`` bots, and goes once the match starts:
    the server plays her seat; returns once it has played a few moves."""
    alice = await started_match(table, bot="default")
    await table.queue.put(GoneInput(alice, None))
    await until(lambda: table.log_seq >= 8, "the server playing for her")
    return alice


@pytest.mark.asyncio
async def test_resume_resyncs_at_once_while_the_server_plays_the_seat(
    running: Callable[..., Table],
) -> None:
    """docs/protocol.md: on ``resume`` "the server at once sends that table's update with a
    full snapshot". She comes back while the server plays for her: the resync comes within
    a few moves, not at the end of the hand (the table once played its automatic moves
    to the end of the hand without looking at its inputs)."""
    table = running(turn_seconds=60)
    await gone_mid_hand(table)
    before = table.seq
    back = FakePeer("alice")
    await table.queue.put(BackInput(back, 5))
    await until(back.updates, "the resync", timeout=3)
    update = back.updates()[0]
    moves = update["seq"] - before
    print(f"\n[table] resynced {moves} updates after the resume")
    assert moves <= 40, (
        f"resynced {moves} updates after the resume (hand {update['hand_no']}, "
        f"{update['view']['phase']}): the server went on playing her seat meanwhile"
    )
    # A full update of a hand in play: her own view, her concealed tiles, no one else's.
    view = update["view"]
    assert update["table"] == "t1" and update["full"] is True and view["you"] == 0
    assert update["events"], "a full update carries the hand's events so far"
    mine = next(s for s in view["seats"] if s["player"] == 0)
    assert isinstance(mine.get("concealed"), str) and mine["concealed"]
    if view["phase"] != "over":
        assert all("concealed" not in s for s in view["seats"] if s["player"] != 0)
    assert isinstance(view["legal"], list)


@pytest.mark.asyncio
async def test_table_idles_and_takes_inputs_while_a_seat_is_away(
    running: Callable[..., Table],
) -> None:
    """alice and bob sit with two default bots; bob goes once the match starts (the server
    plays his seat); alice has to decide and takes her time. The table has nothing to do
    until she acts: it should use (almost) no CPU meanwhile, answer a spectator's ``watch``
    at once, and stop at once when asked (it once kept bob's past due time among its
    wake-up times: it spun, never took an input, and a stop hung)."""
    timers = dataclasses.replace(QUICK, turn_seconds=60, disconnected_seconds=0.1)
    table = running(timers=timers)
    alice, bob = FakePeer("alice"), FakePeer("bob")
    await table.queue.put(JoinInput(alice, 1, 0, None))
    await table.queue.put(JoinInput(bob, 2, 1, None))
    await table.queue.put(AddBotsInput(alice, 3, "default"))
    await until(alice.updates, "the deal")
    await table.queue.put(GoneInput(bob, None))
    await asyncio.sleep(0.2)  # bob's grace is over
    assert alice.updates()[-1]["view"]["legal"]  # the dealer, alice, is to discard
    seq = table.seq
    cpu, wall = time.process_time(), time.monotonic()
    await asyncio.sleep(1.0)  # alice thinks; nothing else happens
    busy = (time.process_time() - cpu) / (time.monotonic() - wall)
    assert table.seq == seq, "the table moved on without alice"
    watcher = FakePeer("watcher")
    await table.queue.put(WatchInput(watcher, 4, None))
    answered = False
    with contextlib.suppress(TimeoutError):
        await until(lambda: replies(watcher, 4), "the watch answered", timeout=2)
        answered = replies(watcher, 4)[0]["type"] == "watching"
    stopped = False
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(2):
            await table.stop()
        stopped = True
    if not stopped and table.task is not None:
        table.task.cancel()
    assert (busy < 0.1, answered, stopped) == (True, True, True), (
        f"while a seat is away, the table used {busy:.0%} of a CPU waiting for alice, "
        f"answered a watch: {answered}, stopped by itself: {stopped}"
    )


@pytest.mark.asyncio
async def test_stop_does_not_wait_for_a_match_of_bots_to_end() -> None:
    """A graceful stop of a table whose every seat the server plays (here: the only human
    left) should stop it where it is; with no pause between hands, it would otherwise play
    the whole rest of the match first."""
    lobby = lobby_for(turn_seconds=60)
    table = await lobby.create(None, 60, False)
    alice = await started_match(table, bot="default")
    await table.queue.put(LeaveInput(alice, 3))  # her seat is played by the server from now on
    await until(lambda: table.log_seq >= 8, "the server playing for her")
    began = time.monotonic()
    await lobby.shutdown()
    took = time.monotonic() - began
    store = table.store
    assert isinstance(store, FakeStore)
    finished = await store.unfinished_matches() == []
    hands = len(await store.match_hands(1))
    assert not finished, (
        f"the stop took {took:.1f} s: it played the match to its end ({hands} hands)"
    )


# --------------------------------------------------------- lobby refusals ---
# Moved from test_server_bad_input.py's test_lobby_refusals, which keeps what only a
# connection shows: unknown tables, a private table's code in ``table_created``, the
# listing over the wire, and the connection staying open after each refusal.


async def refused(table: Table, peer: FakePeer, item: Any, code: str) -> None:
    await table.queue.put(item)
    await handled(table)
    (reply,) = replies(peer, item.reply_to)
    assert reply["type"] == "error" and reply["payload"]["code"] == code, (item, reply)


@pytest.mark.asyncio
async def test_lobby_refusals_at_the_table() -> None:
    lobby = lobby_for(turn_seconds=60)
    try:
        alice, bob, carol = FakePeer("alice"), FakePeer("bob"), FakePeer("carol")

        # A taken seat; sitting at two tables; bots asked for by someone not seated.
        table = await lobby.create(None, None, False)
        await table.queue.put(JoinInput(alice, 1, 2, None))
        await handled(table)
        assert replies(alice, 1)[0]["type"] == "joined"
        assert replies(alice, 1)[0]["payload"] == {"table": table.id, "seat": 2}
        await refused(table, bob, JoinInput(bob, 2, 2, None), "seat_taken")
        await refused(table, bob, AddBotsInput(bob, 3, "fast"), "not_seated")
        await table.queue.put(WatchInput(bob, 4, None))
        await handled(table)
        assert replies(bob, 4)[0]["type"] == "watching"
        await refused(table, bob, AddBotsInput(bob, 5, "fast"), "not_seated")  # a spectator
        second = await lobby.create(None, None, False)
        await refused(second, alice, JoinInput(alice, 6, None, None), "already_seated")
        summary = table.summary()
        assert summary["seats"] == [None, None, summary["seats"][2], None]
        assert summary["state"] == "waiting"

        # A private table: no code, a wrong code, the right code.
        private = await lobby.create(None, None, True)
        code = private.invite_code
        assert isinstance(code, str) and code
        assert private.id not in [t["table"] for t in lobby.listing()]
        await refused(private, bob, JoinInput(bob, 7, None, None), "wrong_invite")
        await refused(private, bob, JoinInput(bob, 8, None, code + "x"), "wrong_invite")
        await refused(private, bob, WatchInput(bob, 9, None), "wrong_invite")
        await refused(private, bob, WatchInput(bob, 10, "nope"), "wrong_invite")
        await private.queue.put(JoinInput(bob, 11, None, code))
        await handled(private)
        assert replies(bob, 11)[0]["type"] == "joined"

        # A full table: its match has started, so a stranger is turned away.
        await table.queue.put(AddBotsInput(alice, 12, "fast"))
        await until(alice.updates, "the deal")
        await table.queue.put(JoinInput(carol, 13, None, None))
        await handled(table)
        (reply,) = replies(carol, 13)
        # The full table plays: ``table_full`` is never reached for a join (the match starts
        # as soon as the fourth seat is taken), ``table_started`` tells the truth.
        assert reply["type"] == "error"
        assert reply["payload"]["code"] in ("table_started", "table_full"), reply
        await refused(table, carol, JoinInput(carol, 14, 0, None), "table_started")
        await refused(table, alice, AddBotsInput(alice, 15, "fast"), "table_started")
    finally:
        await lobby.shutdown()


@pytest.mark.asyncio
async def test_an_empty_rule_preset_is_refused_as_an_unknown_one() -> None:
    """Only an omitted preset (None) is the server's; ``""`` names no preset."""
    lobby = lobby_for()
    try:
        with pytest.raises(LobbyError) as refusal:
            await lobby.create("", None, False)
        assert refusal.value.code == "bad_message"
        assert str(refusal.value).startswith("unknown rule preset ''; known: mcr, ")
        assert lobby.tables == {}
    finally:
        await lobby.shutdown()


# ------------------------------------------------- a player who goes mid-hand ---
# Moved from test_server_recovery.py (its ``close`` case; the connection cut without a
# close frame stays there, on a socket). alice plays the ``default`` bot on her wire view,
# as ``server.client.play`` does; while she is away the server plays her seat with
# ``make_bot("default", seed=0)``; bots are pure, so the match is the offline match of four
# default bots, whoever plays her seat.


def normalized(value: Any) -> Any:
    """``value`` as it comes back from a JSON column or the wire (tuples become lists)."""
    return json.loads(json.dumps(value))


async def play_as(
    table: Table,
    peer: FakePeer,
    bot: Bot,
    until_: Callable[[dict[str, Any], list[dict[str, Any]]], bool] = lambda p, e: False,
) -> dict[str, Any]:
    """Answer each update that asks ``peer`` to decide, once, with ``bot`` on the wire view;
    return the ``match_end`` payload, or the update for which ``until_(update, the events
    of its hand so far)`` is true (unanswered)."""
    cursor, acted = 0, None
    latest: dict[str, Any] | None = None
    events: list[dict[str, Any]] = []
    while True:
        frames = [json.loads(t) for t in peer.texts[cursor:]]
        cursor += len(frames)
        for frame in frames:
            payload = frame["payload"]
            if frame["type"] == "error" and frame.get("reply_to") == "bot":
                assert payload["code"] == "stale", f"the bot's action was refused: {payload}"
            if frame["type"] == "match_end":
                return dict(payload)
            if frame["type"] == "update":
                if payload.get("full") or (latest and latest["hand_no"] != payload["hand_no"]):
                    events = []
                events.extend(payload["events"])
                latest = payload
        if latest is not None and until_(latest, events):
            return latest
        if latest is not None and latest["seq"] != acted and latest["view"]["legal"]:
            acted = latest["seq"]
            action = bot.choose(view_from_dict(latest["view"]))
            await table.queue.put(PlayInput(peer, "bot", latest["seq"], action))
        await asyncio.sleep(0.001)


@pytest.mark.asyncio
async def test_player_gone_mid_hand_is_played_by_the_server(
    running: Callable[..., Table],
) -> None:
    """Her connection goes while the table waits for her discard (in hand 2 or later, with
    two discards of hers in that hand already): the server plays her seat from then on, the table
    never stalls, and the match ends as the offline match of its seed."""
    store = FakeStore()
    timers = dataclasses.replace(QUICK, turn_seconds=60, disconnected_seconds=0.1)
    table = running(store=store, timers=timers)
    watcher = FakePeer("watcher")
    await table.queue.put(WatchInput(watcher, 1, None))
    alice = FakePeer("alice")
    await table.queue.put(JoinInput(alice, 2, 0, None))
    await table.queue.put(AddBotsInput(alice, 3, "default"))

    def my_discard_from_hand_2_on(p: dict[str, Any], events: list[dict[str, Any]]) -> bool:
        mine = sum(1 for e in events if e["kind"] == "discard" and e.get("player") == 0)
        return discard_only_from_hand_2(p["hand_no"], mine, p["view"]["legal"])

    left = await asyncio.wait_for(
        play_as(table, alice, make_bot("default", seed=0), my_discard_from_hand_2_on), 30
    )
    hand_no, seq = left["hand_no"], left["seq"]
    mark = len(watcher.texts)
    match_id = next(iter(store.matches))
    hers = len(await store.match_actions(match_id))  # she has played everything logged so far
    await table.queue.put(GoneInput(alice, None))

    # The table does not stall: the server discards for her (after disconnected_seconds,
    # long before her 60 s turn is up) and the hand goes on.
    started = time.monotonic()

    def played() -> list[dict[str, Any]]:
        return [
            u
            for u in FakePeer(None, watcher.texts[mark:]).updates()
            if any(e["kind"] == "discard" and e["player"] == 0 for e in u["events"])
        ]

    await until(played, "the server's discard for her", timeout=10)
    assert time.monotonic() - started < 5
    first = played()[0]
    assert first["seq"] > seq and first["hand_no"] == hand_no
    await until(lambda: table.seq > seq + 3, "more moves", timeout=10)
    assert any(u["seq"] > seq + 3 for u in watcher.updates())

    await until(lambda: any(m.ended_at for m in store.matches.values()), "the end", 120)
    await until(lambda: watcher.frames("match_end"), "the match_end sent")
    (end,) = watcher.frames("match_end")
    (row,) = store.matches.values()
    assert row.id == end["match"] and row.final_scores is not None
    assert list(row.final_scores) == end["scores"]
    expected = play_match(SEED, [make_bot("default", seed=p) for p in range(4)], MCR, row.id)
    hands = await store.match_hands(row.id)
    assert [h["hand_no"] for h in hands] == list(range(1, 17))
    for got, want in zip(hands, [normalized(r.to_dict()) for r in expected.records], strict=True):
        assert normalized(got) == want, f"hand {want['hand_no']} differs from the offline match"
    assert end["scores"] == list(expected.scores)
    actions = await store.match_actions(row.id)
    assert not any(a.stand_in for a in actions[:hers])  # her own moves and the bots'
    later = {(a.player, a.stand_in) for a in actions[hers:]}
    assert later == {(0, True), (1, False), (2, False), (3, False)}


@pytest.mark.asyncio
async def test_a_move_the_server_plays_for_a_person_out_of_time_is_logged_as_a_stand_in(
    running: Callable[..., Table],
) -> None:
    """Alice is there but lets her turn run out: the server plays the safe move for her
    and the log says so; the bots' moves after it are their own."""
    store = FakeStore()
    table = running(store=store, turn_seconds=1)
    await started_match(table)
    match_id = next(iter(store.matches))

    def hers_and_more() -> bool:
        log = store.actions.get(match_id, [])
        return any(a.player == 0 for a in log) and any(a.player != 0 for a in log)

    await until(hers_and_more, "her timed-out move and a bot's", timeout=10)
    first, *rest = await store.match_actions(match_id)
    assert (first.player, first.stand_in) == (0, True)  # the dealer's discard, out of time
    assert all(not a.stand_in for a in rest if a.player != 0)


# ---------------------------------------------------------- refused actions ---
# Moved from test_server_bad_input.py's test_refused_actions_change_nothing_..., which keeps
# what only the wire shows: fields a client may not send (``seat``, ``player``), an unknown
# table, the same frame sent twice, the connection staying open, the stored log as published.


@pytest.mark.asyncio
async def test_refused_actions_change_nothing_and_the_match_still_finishes() -> None:
    lobby = lobby_for(turn_seconds=20)
    try:
        # A long turn: the refusals below must not race the server playing for a slow seat.
        table = await lobby.create(None, 20, False)
        store = table.store
        assert isinstance(store, FakeStore)
        players = [FakePeer(f"player{p}") for p in range(4)]
        spectator, outsider = FakePeer("spectator"), FakePeer("outsider")
        elsewhere = await lobby.create(None, None, False)
        await elsewhere.queue.put(JoinInput(outsider, 1, None, None))
        await table.queue.put(WatchInput(spectator, 2, None))
        for seat, peer in enumerate(players):
            await table.queue.put(JoinInput(peer, 3, seat, None))
        await handled(elsewhere)

        # Hand 1: player 0 deals and is to discard; nobody else may do anything.
        await until(lambda: any(u["view"]["legal"] for u in players[0].updates()), "the deal")
        payload = next(u for u in players[0].updates() if u["view"]["legal"])
        seq, view = payload["seq"], payload["view"]
        assert payload["hand_no"] == 1 and view["you"] == 0 and view["current"] == 0
        assert view["phase"] == "turn"
        match_id = table.match_id
        assert match_id is not None
        mine = parse_tiles(next(s for s in view["seats"] if s["player"] == 0)["concealed"])
        drawn = view["drawn"]
        legal = [Action.from_dict(a) for a in view["legal"]]
        assert store.actions[match_id] == []

        def act(peer: FakePeer, a: dict[str, Any], at: int = seq) -> PlayInput:
            return PlayInput(peer, "refused", at, Action.from_dict(a))

        await until(lambda: any(u["seq"] == seq for u in players[1].updates()), "p1's deal")
        p1_view = players[1].updates()[-1]["view"]
        p1_tile = name(
            parse_tiles(next(s for s in p1_view["seats"] if s["player"] == 1)["concealed"])[0]
        )
        not_held = [name(t) for t in range(N_KINDS) if t not in mine]
        refusals: list[tuple[Table, PlayInput, str]] = [
            # Out of turn.
            (table, act(players[1], {"type": "discard", "tile": p1_tile}), "not_your_turn"),
            (table, act(players[1], {"type": "discard", "tile": drawn}), "not_your_turn"),
            (table, act(players[1], {"type": "pass"}), "not_your_turn"),
            (table, act(players[3], {"type": "win"}), "not_your_turn"),
            # Not in the legal list.
            (table, act(players[0], {"type": "pass"}), "illegal_action"),
            (table, act(players[0], {"type": "pung"}), "illegal_action"),
            (table, act(players[0], {"type": "kong"}), "illegal_action"),
            (table, act(players[0], {"type": "chow", "tile": name(mine[0])}), "illegal_action"),
            # A discard of a tile not held.
            *(
                (table, act(players[0], {"type": "discard", "tile": tile}), "tile_not_in_hand")
                for tile in not_held[:3]
            ),
            # Stale: an old or a future seq (followed by the current update).
            (table, act(players[0], {"type": "discard", "tile": drawn}, seq - 1), "stale"),
            (table, act(players[0], {"type": "discard", "tile": drawn}, seq + 100), "stale"),
            # Seated elsewhere, watching, or at a table without a match.
            (table, act(outsider, {"type": "discard", "tile": drawn}), "not_seated"),
            (table, act(spectator, {"type": "discard", "tile": drawn}), "not_seated"),
            (elsewhere, act(outsider, {"type": "pass"}), "hand_over"),
        ]
        for kind in ("concealed_kong", "add_kong"):
            if not any(a.kind.value == kind for a in legal):
                refusals.append(
                    (table, act(players[0], {"type": kind, "tile": drawn}), "illegal_action")
                )
        if not any(a.kind.value == "win" for a in legal):
            refusals.append((table, act(players[0], {"type": "win"}), "illegal_action"))
        for where, item, code in refusals:
            peer = item.peer
            assert isinstance(peer, FakePeer)
            mark = len(peer.texts)
            await where.queue.put(item)
            await handled(where)
            got = FakePeer(None, peer.texts[mark:])
            (reply,) = [f for f in got.sent if f.get("reply_to") == "refused"]
            assert reply["type"] == "error" and reply["payload"]["code"] == code, (item, reply)
            if code == "stale":
                (current,) = got.updates()
                assert current["seq"] == seq and current.get("full")
                assert current["view"] == view
            assert store.actions[match_id] == [], (item, code)
        assert table.seq == seq
        await table.queue.put(SyncInput(players[0], "s"))
        await handled(table)
        (current,) = replies(players[0], "s")  # answered by a full update
        assert current["type"] == "update" and current["payload"].get("full")
        assert current["payload"]["seq"] == seq and current["payload"]["view"] == view

        # An accepted action, then the very same action again: stale, and harmless.
        mark = len(players[0].texts)
        discard = act(players[0], {"type": "discard", "tile": drawn})
        await table.queue.put(dataclasses.replace(discard, reply_to="dup"))
        await until(lambda: table.seq > seq, "the discard")
        assert len(store.actions[match_id]) == 1
        await table.queue.put(dataclasses.replace(discard, reply_to="dup2"))
        await handled(table)
        (dup,) = replies(players[0], "dup2")
        assert dup["type"] == "error" and dup["payload"]["code"] == "stale", dup
        assert len(store.actions[match_id]) == 1
        after = FakePeer(None, players[0].texts[mark:]).frames("error")
        assert not [e for e in after if e["code"] != "stale"]

        # The table plays on: the four finish the match, the spectator sees its end.
        ends = await asyncio.wait_for(
            asyncio.gather(
                *(play_as(table, p, make_bot("fast", seed=i)) for i, p in enumerate(players))
            ),
            timeout=45,
        )
        assert all(end["match"] == match_id for end in ends)
        end = ends[0]
        assert all(e == end for e in ends)
        await until(lambda: spectator.frames("match_end"), "the spectator's match_end")
        assert spectator.frames("match_end")[0] == end

        # What is stored is exactly what was accepted: it replays to the same match.
        stored = await store.match_actions(match_id)
        assert stored[0] == (1, 1, 0, {"type": "discard", "tile": drawn}, False)
        row = store.matches[match_id]
        replayed = replay_log(row, stored, Config().rule_presets())
        assert replayed.scores == end["scores"] and len(replayed.records) == 16
        assert len(replayed.log) == len(stored)

        # After the match: nothing to act on.
        await table.queue.put(PlayInput(players[0], "late", 0, Action.from_dict({"type": "pass"})))
        await handled(table)
        (late,) = replies(players[0], "late")
        assert late["type"] == "error" and late["payload"]["code"] == "hand_over", late
    finally:
        await lobby.shutdown()


# ---------------------------------------------------------- cluster mode ---


class Lease:
    """A table's lease as its node tells it (``server.table.Lease``): ``held`` as set;
    ``regained`` waits for ``say``."""

    token = 3

    def __init__(self) -> None:
        self.holding = True
        self.asked: asyncio.Future[bool] | None = None

    def held(self) -> bool:
        return self.holding

    async def regained(self) -> bool:
        self.asked = asyncio.get_running_loop().create_future()
        return await self.asked

    def say(self, owned: bool) -> None:
        assert self.asked is not None
        self.holding = owned
        self.asked.set_result(owned)


async def unsure(table: Table, alice: FakePeer) -> tuple[Lease, int]:
    """Her node may have lost the table (its lease not renewed for a lease) just as she
    asks for her view and discards: the table waits for its node's word. How many frames
    she had then."""
    lease = table.lease = Lease()
    seen = len(alice.texts)
    lease.holding = False
    legal = alice.updates()[-1]["view"]["legal"]
    discard = next(a for a in legal if a["type"] == "discard")
    await table.queue.put(SyncInput(alice, 7))
    await table.queue.put(PlayInput(alice, 8, table.seq, Action.from_dict(discard)))
    await until(lambda: lease.asked is not None, "the table asking its node")
    return lease, seen


@pytest.mark.asyncio
async def test_a_table_its_node_may_have_lost_does_and_sends_nothing_until_it_knows(
    running: Callable[..., Table],
) -> None:
    """Cluster mode: while its node does not know whether it still holds the table's lease
    (paused past it, cut off from Redis), the table answers no one, takes no action, plays
    for no one, its clocks stopped; told it does, it goes on as if nothing happened."""
    store = FakeStore()
    table = running(store=store, turn_seconds=60)
    alice = await started_match(table)
    deadline = table.deadline
    assert deadline is not None
    lease, seen = await unsure(table, alice)
    assert len(alice.texts) == seen and store.actions[1] == [] and table.log_seq == 0
    lease.say(True)
    await until(lambda: replies(alice, 7), "her view")
    assert replies(alice, 7)[0]["payload"]["full"]
    await until(lambda: table.log_seq >= 4, "her discard, and the bots playing on")
    assert store.actions[1][0].player == 0
    assert table.deadline is None or table.deadline > deadline  # (moved on by the pause)


@pytest.mark.asyncio
async def test_a_table_its_node_lost_ends_without_a_word(running: Callable[..., Table]) -> None:
    """Told that another node runs the table now, it ends, having sent and stored nothing;
    the inputs it did not handle, the one it held meanwhile first, are left for its node to
    pass on (``unhandled``)."""
    store = FakeStore()
    table = running(store=store, turn_seconds=60)
    alice = await started_match(table)
    lease, seen = await unsure(table, alice)
    lease.say(False)
    assert table.task is not None
    await asyncio.wait_for(table.task, 5)
    assert len(alice.texts) == seen and store.actions[1] == []
    assert [type(i) for i in table.unhandled()] == [SyncInput, PlayInput]


@pytest.mark.asyncio
async def test_a_table_waiting_for_its_node_stops_when_told(running: Callable[..., Table]) -> None:
    table = running(turn_seconds=60)
    alice = await started_match(table)
    await unsure(table, alice)
    await asyncio.wait_for(table.stop(), 5)
    assert [type(i) for i in table.unhandled()] == [SyncInput, PlayInput]


@pytest.mark.asyncio
async def test_a_seated_players_connection_the_table_does_not_know_gets_her_view(
    running: Callable[..., Table],
) -> None:
    """Cluster mode: her ``sync`` reached the table's new owner before her re-attach did.
    It is her seat's connection from then on: answered with her view, not ``not_seated``."""
    table = running(turn_seconds=60)
    await started_match(table)
    elsewhere = FakePeer("alice")
    await table.queue.put(SyncInput(elsewhere, 3))
    await handled(table)
    (answer,) = replies(elsewhere, 3)
    assert answer["type"] == "update" and answer["payload"]["view"]["you"] == 0
    assert table.peers[elsewhere] == 0


# ---------------------------------------------------------- between hands ---


@pytest.mark.asyncio
async def test_the_next_hand_waits_for_a_player_reading_the_result(
    running: Callable[..., Table], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client of protocol version 3 says when its player has read a hand's result
    (``next_hand``); until then, within ``result_seconds``, the next hand is not dealt, so
    reading costs no turn time. A ``next_hand`` of another hand, or from a spectator,
    changes nothing."""
    # Her updates keep their seats (as version 1's do), for ``play_as``'s bot to read.
    monkeypatch.setattr(server.table.publish, "BRIEF_VERSION", 4)
    table = running(turn_seconds=60)  # QUICK: no hand pause; result_seconds as configured
    alice = FakePeer("alice", version=3)
    await table.queue.put(JoinInput(alice, 1, 0, None))
    await table.queue.put(AddBotsInput(alice, 2, "fast"))
    spectator = FakePeer("spectator", version=3)
    await table.queue.put(WatchInput(spectator, 3, None))
    over = await play_as(
        table, alice, make_bot("default"), lambda p, e: p["view"]["phase"] == "over"
    )
    hand_no = over["hand_no"]

    def next_dealt() -> bool:
        return any(u["hand_no"] == hand_no + 1 for u in alice.updates())

    await table.queue.put(NextHandInput(alice, 4, hand_no + 1))  # not the hand just over
    await table.queue.put(NextHandInput(spectator, 5, hand_no))
    await handled(table)
    assert replies(spectator, 5)[0]["payload"]["code"] == "not_seated"
    await asyncio.sleep(0.3)  # the hand pause (0 here) is long over
    assert not next_dealt()
    await table.queue.put(NextHandInput(alice, 6, hand_no))
    await until(next_dealt, "the next hand, once she has read the result")
    assert not replies(alice, 6)  # nothing to answer: the deal is the answer


@pytest.mark.asyncio
async def test_a_reader_who_leaves_between_hands_is_not_waited_for(
    running: Callable[..., Table], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server.table.publish, "BRIEF_VERSION", 4)  # (as above)
    table = running(turn_seconds=60)
    alice = FakePeer("alice", version=3)
    await table.queue.put(JoinInput(alice, 1, 0, None))
    await table.queue.put(AddBotsInput(alice, 2, "fast"))
    over = await play_as(
        table, alice, make_bot("default"), lambda p, e: p["view"]["phase"] == "over"
    )
    await asyncio.sleep(0.2)
    assert table.match is not None and table.match.hand_index + 1 == over["hand_no"]
    await table.queue.put(GoneInput(alice, None))
    await until(
        lambda: table.match is not None and table.match.hand_index + 1 == over["hand_no"] + 1,
        "the next hand, dealt without her",
    )

"""A tournament's tables (``Lobby.create``'s ``ends_at``, ``seed``, ``reveals``,
``watchable``, ``spectator_delay_seconds``, ``tournament``; ``ReplaceInput``;
``Lobby.on_table_finished``), driven through the table task with fake connections and the
in-memory store (``tests/fakes.py``), and, for a restart, on a real database.
"""

from __future__ import annotations

import asyncio
import dataclasses
import http
import json
import logging
import types
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import pytest_asyncio
from fakes import QUICK, Clock, FakePeer, FakeStore, handled, play_for, until

import server.table
from engine.actions import Action
from engine.match import Match, hand_seed
from engine.rules import MCR
from server.cli import main
from server.config import Config, LimitsSection, TimersSection
from server.db.store import MatchRow, Store
from server.lobby import Lobby, replay_log
from server.replay import Refused, hand_replay
from server.table import (
    AddBotsInput,
    GoneInput,
    JoinInput,
    LeaveInput,
    LobbyError,
    PlayInput,
    ReplaceInput,
    SyncInput,
    Table,
    WatchInput,
    commitment,
    hand_reveals,
    hand_salt,
)

SEED = 777_000_123
CAP = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
PRESETS = Config().rule_presets()


def config_for(timers: TimersSection = QUICK) -> Config:
    return Config(timers=timers, limits=LimitsSection(max_tables=10))


@pytest_asyncio.fixture
async def lobby() -> AsyncIterator[Lobby]:
    """A lobby on a fake store with the ``QUICK`` timers, shut down after the test."""
    made = Lobby(config_for(), FakeStore())
    yield made
    await made.shutdown()


def fake_store(lobby: Lobby) -> FakeStore:
    assert isinstance(lobby.store, FakeStore)
    return lobby.store


async def seated_with_bots(table: Table, name: str = "alice") -> FakePeer:
    """``name`` sits at seat 0 and adds fast bots: the match starts, waiting for her."""
    peer = FakePeer(name)
    await table.queue.put(JoinInput(peer, 1, 0, table.invite_code))
    await table.queue.put(AddBotsInput(peer, 2, "fast"))
    await until(peer.updates, "the deal")
    return peer


def public_events(stored: MatchRow, actions: list[Any]) -> dict[int, list[dict[str, Any]]]:
    """The events a spectator may see of each hand, replaying the stored log."""
    match = Match(stored.seed, MCR, stored.id)
    hands: dict[int, list[Any]] = {}
    for _seq, hand_no, player, action in (a.played for a in actions):
        while match.hand_index + 1 < hand_no:
            dealt = match.hand_index + 2
            hands[dealt] = match.start_hand()
        hands[hand_no].extend(match.apply(player, Action.from_dict(action)))
    return {
        n: json.loads(json.dumps([{"kind": e.kind, **e.data} for e in ev if e.visible_to(None)]))
        for n, ev in hands.items()
    }


def dealt_walls(stored: MatchRow, actions: list[Any], hands: int) -> list[Any]:
    """The wall (tiles in order, dice) each of the first ``hands`` hands was dealt from,
    replaying the stored log up to it."""
    walls = []
    for hand_no in range(1, hands + 1):
        match = replay_log(stored, [a for a in actions if a.hand_no < hand_no], PRESETS)
        match.start_hand()
        assert match.hand is not None
        walls.append((list(match.hand.wall.tiles), match.hand.wall.dice))
    return walls


# --------------------------------------------------------------- settings ---


@pytest.mark.asyncio
async def test_the_settings_are_stored_and_in_the_summary(lobby: Lobby) -> None:
    table = await lobby.create(
        None,
        None,
        True,
        ends_at=CAP,
        seed=SEED,
        reveals=False,
        watchable=False,
        spectator_delay_seconds=30,
        tournament=(3, 2, 4),
    )
    listing = lobby.summaries[table.id].listing
    assert listing["tournament"] == {"id": 3, "session": 2, "table": 4}
    assert (listing["watchable"], listing["spectator_delay_seconds"]) == (False, 30)
    assert (listing["ends_at"], listing["reveals"]) == ("2026-12-01T12:00:00Z", False)
    row = fake_store(lobby).tables[table.id]
    assert (row.ends_at, row.seed, row.reveals, row.watchable) == (CAP, SEED, False, False)
    assert (row.spectator_delay_seconds, row.tournament) == (30, (3, 2, 4))
    plain = await lobby.create(None, None, False)
    listing = lobby.summaries[plain.id].listing
    assert listing["tournament"] is None and listing["ends_at"] is None
    assert (listing["watchable"], listing["spectator_delay_seconds"]) == (True, 0)


@pytest.mark.asyncio
async def test_the_listing_holds_back_the_hand_of_a_table_seen_late(
    lobby: Lobby, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``list_tables`` (and the lobby feed) showed a delayed table's live ``hand_no``, ahead
    of what its spectators saw: when each hand ended. Listed with none (null), whether the
    table is this node's or another's; a table seen at once keeps its number."""
    delayed = await lobby.create(None, None, False, spectator_delay_seconds=30)
    plain = await lobby.create(None, None, False)
    await seated_with_bots(delayed, "alice")
    await seated_with_bots(plain, "bob")
    listed = {entry["table"]: entry for entry in lobby.listing()}
    assert (listed[plain.id]["state"], listed[plain.id]["hand_no"]) == ("playing", 1)
    assert (listed[delayed.id]["state"], listed[delayed.id]["hand_no"]) == ("playing", None)
    assert lobby.summaries[delayed.id].listing["hand_no"] == 1  # (known here, not told)
    other_nodes = [{**listed[plain.id], "table": "t2", "spectator_delay_seconds": 5}]
    monkeypatch.setattr(lobby.nodes, "remote_listing", lambda local: other_nodes)
    (remote,) = [entry for entry in lobby.listing() if entry["table"] == "t2"]
    assert remote["hand_no"] is None and other_nodes[0]["hand_no"] == 1


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"spectator_delay_seconds": 3601}, "spectator_delay_seconds"),
        ({"spectator_delay_seconds": -1}, "spectator_delay_seconds"),
        ({"ends_at": datetime(2026, 12, 1, 12)}, "ends_at"),  # naive: ambiguous
        ({"seed": -1}, "seed"),
        ({"seed": 2**63}, "seed"),
        ({"tournament": (3, 0, 1)}, "tournament"),
    ],
)
async def test_settings_out_of_their_limits_are_refused(
    lobby: Lobby, settings: dict[str, Any], named: str
) -> None:
    with pytest.raises(LobbyError) as refused:
        await lobby.create(None, None, False, **settings)
    assert refused.value.code == "bad_message" and named in refused.value.reason
    assert fake_store(lobby).tables == {} and lobby.tables == {}


# --------------------------------------------------------------- time cap ---


@pytest.mark.asyncio
async def test_the_time_cap_stops_the_match_once_the_hand_in_play_ends(
    lobby: Lobby, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cap passes while hand 2 is played: hand 2 ends, hand 3 is never dealt, and the
    match finishes as any match does, with the scores of the two hands; its log replays to
    them, and the replay API shows its hands."""
    tables: list[Table] = []

    def now() -> datetime:
        match = tables[0].match if tables else None
        passed = match is not None and match.hand_index >= 1  # hand 2 dealt
        return CAP + timedelta(seconds=1) if passed else CAP - timedelta(seconds=1)

    monkeypatch.setattr(server.table.sources, "_now", now)
    table = await lobby.create(None, 60, False, ends_at=CAP)
    tables.append(table)
    alice = await seated_with_bots(table)
    bob = FakePeer("bob")
    await table.queue.put(WatchInput(bob, 1, None))
    await handled(table)
    await table.queue.put(LeaveInput(alice, 3))  # the server plays her seat
    await until(lambda: bob.frames("match_end"), "the match's end", timeout=60)
    store = fake_store(lobby)
    (row,) = store.matches.values()
    assert row.ended_at == CAP + timedelta(seconds=1) and row.hands_planned == 16
    assert row.rated is False
    hands = await store.match_hands(row.id)
    assert [h["hand_no"] for h in hands] == [1, 2]
    scores = [sum(h["deltas"][p] for h in hands) for p in range(4)]
    assert list(row.final_scores or ()) == scores == hands[-1]["scores"]
    (end,) = bob.frames("match_end")
    assert (end["match"], end["scores"]) == (row.id, scores)
    assert [c["hand_no"] for c in bob.frames("commit")] == [2]  # he came in hand 1
    assert store.tables[table.id].state == "finished"
    replayed = replay_log(row, await store.match_actions(row.id), PRESETS)
    assert replayed.scores == scores and len(replayed.records) == 2
    shown = await hand_replay(store, PRESETS, row.id, "hand=2")
    assert shown["hands"] == 2 and shown["frames"][-1]["scores"] == scores
    with pytest.raises(Refused) as refused:
        await hand_replay(store, PRESETS, row.id, "hand=3")
    assert refused.value.status == http.HTTPStatus.NOT_FOUND


@pytest.mark.asyncio
async def test_a_cap_passed_before_the_first_hand_still_deals_one(lobby: Lobby) -> None:
    table = await lobby.create(
        None, None, False, seated=["bot:fast"] * 4, ends_at=datetime.now(UTC) - timedelta(hours=1)
    )
    await until(lambda: table.state == "finished", "the match's end", timeout=30)
    store = fake_store(lobby)
    (row,) = store.matches.values()
    hands = await store.match_hands(row.id)
    assert len(hands) == 1 and list(row.final_scores or ()) == hands[0]["scores"]


# ------------------------------------------------------------- duplicate ---


@pytest.mark.asyncio
async def test_tables_given_one_seed_deal_the_same_walls_with_their_own_commitments(
    lobby: Lobby,
) -> None:
    """Two all-bot tables with the same seed: the same walls, so (the bots being pure) the
    same play, hand for hand; each its own salt, so other commitments."""
    first, second = [
        await lobby.create(None, None, False, hands=2, seated=["bot:fast"] * 4, seed=SEED)
        for _ in range(2)
    ]
    await until(lambda: first.state == second.state == "finished", "both matches", timeout=60)
    store = fake_store(lobby)
    one, two = sorted(store.matches.values(), key=lambda m: m.id)
    assert one.seed == two.seed == SEED and one.salt != two.salt
    logs = [await store.match_actions(m.id) for m in (one, two)]
    walls = [dealt_walls(m, log, 2) for m, log in zip((one, two), logs, strict=True)]
    assert walls[0] == walls[1] and walls[0][0] != walls[0][1]
    assert [a[1:] for a in logs[0]] == [a[1:] for a in logs[1]]
    hands_one, hands_two = await store.match_hands(one.id), await store.match_hands(two.id)
    assert [{**h, "match": 0} for h in hands_one] == [{**h, "match": 0} for h in hands_two]
    reveals = [hand_reveals(m.seed, m.salt, 2) for m in (one, two)]
    assert [r["seed"] for r in reveals[0]] == [r["seed"] for r in reveals[1]]
    assert all(a["commitment"] != b["commitment"] for a, b in zip(*reveals, strict=True))


@pytest.mark.asyncio
async def test_no_reveals_still_commits_and_the_seeds_come_after(lobby: Lobby) -> None:
    table = await lobby.create(None, 60, False, hands=2, reveals=False)
    alice = await seated_with_bots(table)
    await table.queue.put(LeaveInput(alice, 3))
    bob = FakePeer("bob")
    await table.queue.put(WatchInput(bob, 4, None))
    await until(lambda: bob.frames("match_end"), "the match's end", timeout=60)
    assert bob.frames("reveal") == [] and alice.frames("reveal") == []
    commits = alice.frames("commit") + bob.frames("commit")
    assert {c["hand_no"] for c in commits} == {1, 2}
    revealed = table.revealed_hands()
    (row,) = fake_store(lobby).matches.values()
    assert revealed == hand_reveals(row.seed, row.salt, 2)
    for shown in revealed:
        seed, salt = hand_seed(row.seed, shown["hand_no"]), bytes.fromhex(shown["salt"])
        assert (shown["seed"], shown["seed_hex"]) == (seed, seed.to_bytes(8, "big").hex())
        assert salt == hand_salt(bytes.fromhex(row.salt), shown["hand_no"])
        assert shown["commitment"] == commitment(seed, salt)
    for commit in commits:
        assert commit["commitment"] == revealed[commit["hand_no"] - 1]["commitment"]
    # (Bob keeps the finished table open:) its seats are no longer replaced.
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    await table.queue.put(ReplaceInput(None, None, 2, "carol", done))
    with pytest.raises(LobbyError) as refused:
        await done
    assert refused.value.code == "hand_over"


@pytest.mark.asyncio
async def test_revealed_hands_are_secret_while_the_match_is_played(lobby: Lobby) -> None:
    table = await lobby.create(None, 60, False, reveals=False)
    await seated_with_bots(table)
    assert table.revealed_hands() == []


# ------------------------------------------------------------- watching ---


@pytest.mark.asyncio
async def test_a_table_not_watchable_refuses_spectators_but_not_its_players(
    lobby: Lobby,
) -> None:
    table = await lobby.create(None, 60, False, watchable=False)
    alice = await seated_with_bots(table)
    bob = FakePeer("bob")
    await table.queue.put(WatchInput(bob, 5, None))
    await table.queue.put(WatchInput(alice, 6, None))  # her own table: her own view
    await handled(table)
    (refused,) = [f for f in bob.sent if f.get("reply_to") == 5]
    assert refused["type"] == "error" and refused["payload"]["code"] == "not_watchable"
    assert bob not in table.peers and bob.updates() == []
    (watching,) = [f for f in alice.sent if f.get("reply_to") == 6]
    assert watching["type"] == "watching" and alice.updates()[-1]["view"]["you"] == 0


@dataclass(eq=False)
class TimedPeer(FakePeer):
    """A peer that notes the (fake) time each text reached it."""

    clock: Clock = field(default_factory=Clock)
    times: list[float] = field(default_factory=list)

    def send(self, text: str) -> None:
        self.times.append(self.clock.now)
        super().send(text)

    def timed(self, kind: str) -> list[tuple[float, dict[str, Any]]]:
        return [
            (at, frame["payload"])
            for at, frame in zip(self.times, self.sent, strict=True)
            if frame["type"] == kind
        ]


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The tables' monotonic clock, moved by the test."""
    fake = Clock()
    monkeypatch.setattr(
        server.table.sources, "time", types.SimpleNamespace(monotonic=fake.monotonic)
    )
    return fake


@pytest.mark.asyncio
async def test_spectators_see_the_table_late_and_players_at_once(
    lobby: Lobby, clock: Clock
) -> None:
    """With a delay of 2 s, a spectator never gets a state newer than 2 s (each update's
    ``seq`` reached its seated player at least 2 s before); a new spectator starts from the
    table as it was 2 s ago; in the end the spectators get every update, in order, with the
    events of the spectator's projection and never a concealed tile."""
    delay = 2
    table = await lobby.create(None, 60, False, claim_window_ms=0, spectator_delay_seconds=delay)
    alice = TimedPeer("alice", clock=clock)
    await table.queue.put(JoinInput(alice, 1, 0, None))
    await table.queue.put(AddBotsInput(alice, 2, "fast"))
    await until(alice.updates, "the deal")
    bob, carol = TimedPeer("bob", clock=clock), TimedPeer("carol", clock=clock)
    await table.queue.put(WatchInput(bob, 3, None))
    await handled(table)
    # The deal is too new: he finds the table as it started, waiting for players.
    assert bob.sent[0]["type"] == "watching" and bob.updates() == []
    assert bob.sent[0]["payload"]["state"] == "waiting"
    reached: dict[int, float] = {}  # seq -> when alice got it
    for step in range(60):
        clock.now += 0.5
        await play_for(table, alice, 100 + step)
        await handled(table)
        for at, update in alice.timed("update"):
            reached.setdefault(update["seq"], at)
        assert alice.updates()[-1]["seq"] == table.seq  # seated: never late
        if step == 30:
            await table.queue.put(WatchInput(carol, 4, None))
            await table.queue.put(SyncInput(bob, 5))
            await handled(table)
            newest = max(s for s, at in reached.items() if at <= clock.now - delay)
            (watching, first) = carol.sent[:2]
            assert watching["type"] == "watching" and first["payload"]["full"]
            assert first["payload"]["seq"] == newest
            (synced,) = [f for f in bob.sent if f.get("reply_to") == 5]
            assert synced["payload"]["full"] and synced["payload"]["seq"] == newest
    assert table.seq > 40
    for spectator in (bob, carol):
        updates = spectator.timed("update")
        assert updates, f"{spectator.username} saw nothing"
        for at, update in updates:
            assert reached[update["seq"]] <= at - delay, (spectator.username, update["seq"])
            assert "deadline_ms" not in update
            view = update["view"]
            assert not {"you", "legal", "drawn"} & view.keys()
            if view["phase"] != "over":  # (a finished hand is shown to everyone)
                assert all("concealed" not in seat for seat in view["seats"])
    # 2 s later, every update has reached them, in order.
    clock.now += delay
    await handled(table)
    assert bob.updates()[-1]["seq"] == carol.updates()[-1]["seq"] == table.seq
    seqs = [u["seq"] for u in bob.updates() if u.get("reply_to") is None]
    assert seqs == sorted(seqs)
    store = fake_store(lobby)
    (row,) = store.matches.values()
    public = public_events(row, await store.match_actions(row.id))
    seen: dict[int, list[Any]] = {}
    for frame in bob.sent:
        if frame["type"] == "update" and frame.get("reply_to") is None:
            payload = frame["payload"]
            seen.setdefault(payload["hand_no"], []).extend(payload["events"])
    for hand_no, events in seen.items():
        assert public[hand_no][: len(events)] == events
    assert len(seen[max(seen)]) == len(public[max(seen)])  # up to the last event
    # Bob came less than 2 s after the table started: he saw it from its start.
    assert [c["hand_no"] for c in bob.frames("commit")] == sorted(seen) == list(range(1, 4))
    assert bob.updates()[0]["events"] == public[1][: len(bob.updates()[0]["events"])]


@pytest.mark.asyncio
async def test_a_table_seen_late_is_listed_until_its_spectators_see_the_match_end(
    lobby: Lobby, clock: Clock
) -> None:
    """A table whose spectators see it 5 s late dropped out of the lobby's listing as soon as
    its match ended: anyone reading the listing (its spectators too) knew of the end 5 s
    before they saw it. It stays listed as it was while played (no hand number) and stays
    to be watched, until the end is shown them; then it goes."""
    delay = 5
    table = await lobby.create(
        None, None, False, hands=1, seated=["bot:fast"] * 4, spectator_delay_seconds=delay
    )
    bob = FakePeer("bob")
    await table.queue.put(WatchInput(bob, 1, None))
    await until(lambda: lobby.summaries[table.id].state == "finished", "the match's end")
    assert not bob.frames("match_end")
    (entry,) = lobby.listing()
    assert (entry["table"], entry["state"], entry["hand_no"]) == (table.id, "playing", None)
    carol = FakePeer("carol")  # the listing offers it: she may watch it, as it was then
    await lobby.get(table.id).queue.put(WatchInput(carol, 2, None))
    await handled(table)
    (watching,) = carol.frames("watching")
    assert watching["state"] != "finished" and not carol.frames("match_end")
    clock.now += delay - 0.5
    await handled(table)
    assert lobby.listing() == [entry] and not bob.frames("match_end")
    clock.now += 0.5
    await handled(table)
    assert lobby.listing() == [] and bob.frames("match_end") and carol.frames("match_end")
    await table.queue.put(GoneInput(bob, None))
    await table.queue.put(GoneInput(carol, None))
    await until(lambda: table.id not in lobby.tables, "the table forgotten once left")


# --------------------------------------------------------- substitutes ---


@pytest.mark.asyncio
async def test_a_seat_is_replaced_mid_match_and_the_new_player_takes_it() -> None:
    """Alice is replaced by carol in seat 0: the table row and the lobby know it, alice's
    connection no longer gets seat 0's view, the match and its log are as they were, and
    carol, once she joins, plays seat 0."""
    timers = dataclasses.replace(QUICK, restart_grace_seconds=600)  # carol is waited for
    lobby = Lobby(config_for(timers), FakeStore())
    try:
        table = await lobby.create(None, 60, False)
        alice = await seated_with_bots(table)
        store = fake_store(lobby)
        before = (list(store.actions[1]), store.matches[1])
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        sent = len(alice.sent)
        await table.queue.put(ReplaceInput(None, None, 0, "carol", done))
        await done
        assert store.tables[table.id].seats == ("carol", "bot:fast", "bot:fast", "bot:fast")
        assert lobby.table_of("carol") is table and lobby.table_of("alice") is None
        assert lobby.summaries[table.id].listing["seats"][0] == "carol"
        assert (list(store.actions[1]), store.matches[1]) == before
        after = [f for f in alice.sent[sent:] if f["type"] == "update"]
        assert after and all("you" not in f["payload"]["view"] for f in after)
        assert alice.frames("table")[-1]["seats"][0] == "carol"
        await table.queue.put(PlayInput(alice, 7, table.seq, Action.from_dict({"type": "pass"})))
        carol = FakePeer("carol")
        await table.queue.put(JoinInput(carol, 8, None, None))
        await handled(table)
        (refused,) = [f for f in alice.sent if f.get("reply_to") == 7]
        assert refused["payload"]["code"] == "not_seated"
        (joined,) = [f for f in carol.sent if f.get("reply_to") == 8]
        assert joined["payload"] == {"table": table.id, "seat": 0}
        view = carol.updates()[-1]["view"]
        assert view["you"] == 0 and view["seats"][0]["concealed"]
        await play_for(table, carol, 9)
        await until(lambda: len(store.actions[1]) > len(before[0]), "carol's action")
        assert store.actions[1][len(before[0])].player == 0
    finally:
        await lobby.shutdown()


@pytest.mark.asyncio
async def test_replacements_by_bots_and_the_refused_ones(lobby: Lobby) -> None:
    table = await lobby.create(None, 60, False, watchable=False)
    alice = await seated_with_bots(table)
    other = await lobby.create(None, 60, False)
    await seated_with_bots(other, "dave")
    loop = asyncio.get_running_loop()

    async def replace(seat: int, label: str) -> str | None:
        done: asyncio.Future[None] = loop.create_future()
        await table.queue.put(ReplaceInput(None, None, seat, label, done))
        try:
            await done
        except LobbyError as exc:
            return exc.code
        return None

    assert await replace(4, "carol") == "bad_message"
    assert await replace(1, "bot:nobody") == "bad_message"
    assert await replace(1, "dave") == "already_seated"
    assert await replace(1, "bot:default") is None
    saves = fake_store(lobby).counts["save_table"]
    assert await replace(1, "bot:default") is None  # already so: nothing to do
    assert fake_store(lobby).counts["save_table"] == saves
    assert await replace(0, "bot:fast") is None  # not watchable: alice is detached
    assert fake_store(lobby).tables[table.id].seats[:2] == ("bot:fast", "bot:default")
    assert alice not in table.peers and alice.frames("table")[-1]["seats"][0] == "bot:fast"


# ------------------------------------------------------- the lobby's hook ---


@pytest.mark.asyncio
async def test_the_lobby_hears_of_each_finished_match_once_it_is_stored(
    lobby: Lobby, caplog: pytest.LogCaptureFixture
) -> None:
    store = fake_store(lobby)
    heard: list[tuple[str, bool]] = []

    async def finished(table: Table) -> None:
        assert table.match_id is not None
        heard.append((table.id, store.matches[table.match_id].ended_at is not None))
        if len(heard) == 1:
            raise RuntimeError("the tournament failed")

    lobby.on_table_finished = finished
    first = await lobby.create(None, None, False, hands=1, seated=["bot:fast"] * 4)
    await until(lambda: heard, "the first table's end", timeout=30)
    second = await lobby.create(None, None, False, hands=1, seated=["bot:fast"] * 4)
    await until(lambda: len(heard) == 2, "the second table's end", timeout=30)
    await until(lambda: not lobby.hooks, "the hook calls' end")
    assert heard == [(first.id, True), (second.id, True)]
    assert "on_table_finished failed for table " + first.id in caplog.text
    # A crash came before the second table's row said it finished: the restart tells.
    store.tables[second.id] = dataclasses.replace(store.tables[second.id], state="playing")
    again = Lobby(config_for(), store)
    again.on_table_finished = finished
    assert await again.restore() == 0
    await until(lambda: len(heard) == 3, "the restored table's end")
    assert heard[2] == (second.id, True) and store.tables[second.id].state == "finished"
    await again.shutdown()


# --------------------------------------------------------------- restart ---


@pytest.mark.asyncio
async def test_the_settings_survive_a_restart_and_a_capped_match_then_finishes(
    migrated_url: str,
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """On a real database: a tournament's table, its match waiting for alice (away, given
    time to come back), is restored with every setting; the cap passes while the server is
    down, so the hand in play is played out for her and the match finishes. ``guobiao db
    check`` finds it complete (and would not without its table's cap)."""
    caplog.set_level(logging.WARNING)
    clock_now = [CAP - timedelta(minutes=5)]
    monkeypatch.setattr(server.table.sources, "_now", lambda: clock_now[0])
    settings: dict[str, Any] = {
        "ends_at": CAP,
        "seed": SEED,
        "reveals": False,
        "watchable": False,
        "spectator_delay_seconds": 5,
        "tournament": (3, 2, 4),
    }
    waits = dataclasses.replace(QUICK, restart_grace_seconds=600, turn_seconds=60)
    first = Lobby(config_for(waits), store)
    table = await first.create(None, None, True, seated=["alice", *["bot:fast"] * 3], **settings)
    await until(lambda: table.match is not None and table.match.hand is not None, "the deal")
    listing = first.summaries[table.id].listing
    await first.shutdown()
    (stored,) = await store.unfinished_matches()
    assert stored.seed == SEED and await store.match_actions(stored.id) == []

    clock_now[0] = CAP + timedelta(minutes=1)  # the cap passed while the server was down
    again = Lobby(config_for(), store)  # no grace now: alice's seat is played at once
    heard: list[str] = []

    async def finished(t: Table) -> None:
        heard.append(t.id)

    again.on_table_finished = finished
    try:
        assert await again.restore() == 1
        restored = again.tables[table.id]
        for name, value in settings.items():
            assert getattr(restored, name) == value, name
        after = dict(again.summaries[table.id].listing)
        del after["hand_no"], listing["hand_no"]  # (no action stored: hand 1 is dealt again)
        assert after == listing
        await until(lambda: heard == [table.id], "the match's end", timeout=60)
    finally:
        await again.shutdown()
    (row,) = await store.table_matches(table.id)
    hands = await store.match_hands(row.id)
    assert row.ended_at == CAP + timedelta(minutes=1) and len(hands) == 1
    assert list(row.final_scores or ()) == hands[0]["scores"]
    replayed = replay_log(row, await store.match_actions(row.id), PRESETS)
    assert replayed.scores == list(row.final_scores or ())
    saved = await store.get_table(table.id)
    assert saved is not None and saved.state == "finished" and saved.tournament == (3, 2, 4)

    check = ["db", "check", "--all", "--database-url", migrated_url]
    assert await asyncio.to_thread(main, check) == 0
    assert f"match {row.id} (table {table.id}, finished): ok" in capsys.readouterr().out
    await store.save_table(dataclasses.replace(saved, ends_at=None))  # no cap: it is short
    assert await asyncio.to_thread(main, check) == 1
    assert "FAILS: finished, but its log ends in hand 1" in capsys.readouterr().out


def test_hand_reveals_match_the_reveal_messages_a_table_sends() -> None:
    salt = bytes(range(32))
    (one, two) = hand_reveals(SEED, salt.hex(), 2)
    assert (one["hand_no"], two["hand_no"]) == (1, 2)
    assert one["salt"] == hand_salt(salt, 1).hex() and one["seed"] == hand_seed(SEED, 1)
    assert one["commitment"] == commitment(hand_seed(SEED, 1), hand_salt(salt, 1))

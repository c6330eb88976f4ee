"""A table's match length (``create_table``'s ``hands``) through the real server.

A 1-hand and a 4-hand (East round only) match are played by a network client and three
server bots: ``match_end`` comes after exactly that many hands, every update and summary
says so, and the stored match, its hands, its log and the HTTP API agree. The length is
stored with the match and the table (revision 0003), so a restart resumes the same match,
``guobiao db check`` replays it, and the published log replays it with ``guobiao replay``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from httpkit import http_get
from serverkit import StartServer
from sqlalchemy import text
from test_server_recovery import (
    ME,
    PASSWORD,
    USERNAME,
    discards,
    my_bot,
    play_until,
    resume_and_expect_resync,
)

from engine.bots import make_bot
from engine.rules import MCR
from engine.simulation import play_match
from server import protocol
from server.app import App
from server.cli import main
from server.cli.replay import read_log
from server.client import Client, ServerError, TableState, play
from server.db.engine import make_engine
from server.db.store import Store, TableRow, downgrade, upgrade
from server.table import LobbyError

MATCH_TIMEOUT = 60


def offline(seed: int, match_id: int, hands: int) -> tuple[list[dict[str, Any]], list[int]]:
    """The hands and final scores of the match of ``seed`` played offline by four default
    bots (as alice's bot and the server's play it), ``hands`` deals long."""
    bots = [make_bot("default", seed=p) for p in range(4)]
    match = play_match(seed, bots, MCR, match_id, hands=hands)
    return [json.loads(json.dumps(r.to_dict())) for r in match.records], list(match.scores)


async def db_check(url: str) -> int:
    """``guobiao db check --all`` (it runs its own event loop: in a thread)."""
    return await asyncio.to_thread(main, ["db", "check", "--all", "--database-url", url])


async def get_json(port: int, path: str) -> Any:
    status, body = await http_get(port, path)
    assert status == 200, (path, body)
    return json.loads(body)


async def check_finished(port: int, end: dict[str, Any], hands: int) -> dict[str, Any]:
    """The finished match through the HTTP API: ``hands_planned``, exactly ``hands`` hands,
    the offline match of its seed, a log that replays to the same; the detail."""
    match_id = end["match"]
    detail = await get_json(port, f"/api/matches/{match_id}")
    assert detail["finished"] and detail["hands_planned"] == hands
    records = [{k: v for k, v in h.items() if k != "finished_at"} for h in detail["hands"]]
    assert [h["hand_no"] for h in records] == list(range(1, hands + 1))
    expected, scores = offline(detail["seed"], match_id, hands)
    assert records == expected
    assert detail["final_scores"] == end["scores"] == scores == records[-1]["scores"]

    status, body = await http_get(port, f"/api/matches/{match_id}/log")
    assert status == 200
    lines = [json.loads(line) for line in body.splitlines() if line.strip()]
    assert lines[0]["type"] == "match" and lines[0]["hands"] == hands
    (logged,) = read_log(json.dumps(line) for line in lines)
    replayed = logged.replay()
    assert replayed.over and replayed.hands == hands
    assert [json.loads(json.dumps(r.to_dict())) for r in replayed.records] == expected

    player = await get_json(port, f"/api/players/{USERNAME}")  # graded as any match
    assert player["matches"] == 1 and player["score"] == end["scores"][ME]
    return detail


def check_seen(state: TableState, frames: list[dict[str, Any]], hands: int) -> None:
    """What alice got: ``hands`` commits and reveals, no update past hand ``hands``, every
    update's ``hands_total`` the length, and ``match_end`` after the last hand."""
    assert sorted(state.commits) == list(range(1, hands + 1)) == sorted(state.reveals)
    updates = [f["payload"] for f in frames if f["type"] == "update"]
    assert updates and {u["hand_no"] for u in updates} == set(range(1, hands + 1))
    assert {u["hands_total"] for u in updates} == {hands}
    kinds = [f["type"] for f in frames]
    assert kinds.count("match_end") == 1
    assert "update" not in kinds[kinds.index("match_end") :]


async def sit_with_bots(client: Client, hands: int | None) -> tuple[str, dict[str, Any]]:
    """A table of ``hands`` (None: the default) made by ``client``, who sits at seat 0 with
    three default server bots; the table and its summary once full."""
    table = (await client.create_table(turn_seconds=60, hands=hands)).table
    listed = next(t for t in await client.list_tables() if t["table"] == table)
    assert listed["hands"] == (16 if hands is None else hands)
    assert await client.join_table(table, seat=ME) == ME
    return table, await client.add_bots(table, "default")


# ------------------------------------------------------------ refusals ---


@pytest.mark.parametrize("hands", [0, 17, -4, "4", True, 2.5, [4]])
def test_create_table_refuses_a_length_outside_1_to_16(hands: object) -> None:
    frame = json.dumps({"type": "create_table", "payload": {"hands": hands}})
    with pytest.raises(protocol.ProtocolError) as info:
        protocol.decode(frame)
    assert info.value.code == "bad_message"
    assert info.value.reason == (
        f"create_table: 'hands' must be a whole number 1..16, got {hands!r}"
    )


def test_create_table_takes_a_length_or_none() -> None:
    decoded = protocol.decode('{"type": "create_table", "payload": {"hands": 4}}')
    assert isinstance(decoded, protocol.CreateTable) and decoded.hands == 4
    decoded = protocol.decode('{"type": "create_table", "payload": {}}')
    assert isinstance(decoded, protocol.CreateTable) and decoded.hands is None


@pytest.mark.asyncio
async def test_the_server_refuses_a_bad_length_and_creates_no_table(app: App) -> None:
    async with await Client.connect(f"ws://127.0.0.1:{app.port}/ws", rate=None) as client:
        await client.guest()
        with pytest.raises(ServerError) as info:
            await client.create_table(hands=17)
        assert info.value.code == "bad_message"
        assert "'hands'" in str(info.value)
        assert await client.list_tables() == []
    assert app.lobby is not None
    with pytest.raises(LobbyError) as refused:
        await app.lobby.create(None, None, False, hands=0)
    assert (refused.value.code, refused.value.reason) == (
        "bad_message",
        "hands must be 1..16, got 0",
    )


# ------------------------------------------------------ whole short matches ---


@pytest.mark.asyncio
@pytest.mark.parametrize("hands", [1, 4])
async def test_a_short_match_ends_after_its_hands(
    app_on_each_database: App, database_url: str, hands: int
) -> None:
    app = app_on_each_database
    alice = await Client.connect(f"ws://127.0.0.1:{app.port}/ws", record=True, rate=None)
    try:
        await alice.register(USERNAME, PASSWORD)
        table, summary = await sit_with_bots(alice, hands)
        assert summary["hands"] == hands
        end = await asyncio.wait_for(play(alice, table, my_bot()), MATCH_TIMEOUT)
        assert end is not None
        state = alice.tables[table]
        check_seen(state, alice.frames, hands)
        assert state.summary is not None and state.summary["hands"] == hands
    finally:
        await alice.close()
    await check_finished(app.port, end, hands)

    store = await Store.open(database_url)
    try:
        row = await store.get_match(end["match"])
        assert row is not None and row.hands_planned == hands
        assert len(await store.match_hands(end["match"])) == hands
    finally:
        await store.close()
    assert await db_check(database_url) == 0


@pytest.mark.asyncio
async def test_a_table_without_a_length_plays_sixteen(app: App) -> None:
    async with await Client.connect(f"ws://127.0.0.1:{app.port}/ws", rate=None) as client:
        await client.guest()
        # Waited for from before the bots sit: the first update may come in the same read
        # as the reply that seats them, before this test would look again.
        first = asyncio.create_task(client.wait_for(lambda m: m.type == "update", timeout=10))
        await asyncio.sleep(0)  # (its waiter registered)
        table, summary = await sit_with_bots(client, None)
        assert summary["hands"] == 16
        update = await first
        assert update.payload["hands_total"] == 16
        assert app.lobby is not None
        match = app.lobby.tables[table].match
        assert match is not None and match.hands == 16


# ---------------------------------------------------------------- restart ---


RESTART_DB = "restart.db"  # the servers of one test restart on this file (``start_server``)


def in_hand(hand_no: int) -> Callable[[TableState], bool]:
    return lambda s: s.hand_no == hand_no and len(s.reveals) == hand_no - 1 and discards(s) >= 4


@pytest.mark.asyncio
async def test_a_restart_mid_match_resumes_the_same_length(
    start_server: StartServer,
) -> None:
    first: App = await start_server(database=RESTART_DB)
    alice = await Client.connect(f"ws://127.0.0.1:{first.port}/ws", record=True, rate=None)
    try:
        session = await alice.register(USERNAME, PASSWORD)
        table, _ = await sit_with_bots(alice, 4)
        task = await play_until(alice, table, in_hand(2))
        await first.stop()
        assert await asyncio.wait_for(task, 10) is None  # the connection closed
    finally:
        await alice.close()
    assert not any(f["type"] == "match_end" for f in alice.frames)

    second: App = await start_server(database=RESTART_DB)
    assert second.lobby is not None
    assert second.lobby.summaries[table].listing["hands"] == 4
    restored = second.lobby.tables[table].match
    assert restored is not None and restored.hands == 4 and restored.hand_index + 1 == 2
    url = f"ws://127.0.0.1:{second.port}/ws"
    again, update = await resume_and_expect_resync(url, session.token, table)
    try:
        assert update.payload["hands_total"] == 4
        end = await asyncio.wait_for(play(again, table, my_bot()), MATCH_TIMEOUT)
        assert end is not None
        assert max(again.tables[table].reveals) == 4
    finally:
        await again.close()
    await check_finished(second.port, end, 4)


@pytest.mark.asyncio
async def test_a_waiting_table_keeps_its_length_over_a_restart(
    start_server: StartServer,
) -> None:
    first: App = await start_server(database=RESTART_DB)
    async with await Client.connect(f"ws://127.0.0.1:{first.port}/ws", rate=None) as client:
        await client.guest()
        table = (await client.create_table(hands=2)).table
    await first.stop()

    second: App = await start_server(database=RESTART_DB)
    async with await Client.connect(f"ws://127.0.0.1:{second.port}/ws", rate=None) as client:
        await client.guest()
        (listed,) = await client.list_tables()
        assert (listed["table"], listed["hands"]) == (table, 2)
        await client.join_table(table, seat=0)
        summary = await client.add_bots(table, "fast")
        assert summary["hands"] == 2
        end = await asyncio.wait_for(play(client, table, make_bot("fast")), MATCH_TIMEOUT)
        assert end is not None
        assert sorted(client.tables[table].reveals) == [1, 2]


# ------------------------------------------------- the stored length ---


async def execute(url: str, *statements: str) -> list[Any]:
    """Run ``statements`` in one transaction; the rows of the last."""
    engine = make_engine(url, store=False)
    try:
        async with engine.begin() as connection:
            for statement in statements:
                result = await connection.execute(text(statement))
            return list(result.all()) if result.returns_rows else []
    finally:
        await engine.dispose()


@pytest.mark.asyncio
async def test_db_check_replays_with_the_stored_length(
    start_server: StartServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app: App = await start_server(database=RESTART_DB)
    async with await Client.connect(f"ws://127.0.0.1:{app.port}/ws", rate=None) as client:
        await client.guest()
        table, _ = await sit_with_bots(client, 3)
        end = await asyncio.wait_for(play(client, table, my_bot()), MATCH_TIMEOUT)
        assert end is not None
    await app.stop()
    url = f"sqlite+aiosqlite:///{tmp_path / RESTART_DB}"
    assert await db_check(url) == 0
    assert f"match {end['match']} (table {table}, finished): ok" in capsys.readouterr().out

    # The same log read as a 2-hand match does not replay: the length is the stored one.
    await execute(url, f"UPDATE matches SET hands_planned = 2 WHERE id = {end['match']}")
    assert await db_check(url) == 1
    out = capsys.readouterr().out
    assert "FAILS" in out and "cannot deal hand 3: the match is over" in out
    await execute(url, f"UPDATE matches SET hands_planned = 17 WHERE id = {end['match']}")
    assert await db_check(url) == 1
    assert "hands must be a whole number 1..16, got 17" in capsys.readouterr().out


@pytest.mark.asyncio
async def test_the_store_refuses_a_bad_length(store: Store) -> None:
    now = datetime.now(UTC)
    with pytest.raises(ValueError, match=r"hands must be a whole number 1\.\.16, got 0"):
        TableRow("t1", "mcr", 15, False, None, [None] * 4, now, hands=0)
    with pytest.raises(ValueError, match=r"hands must be a whole number 1\.\.16, got 17"):
        await store.create_match("t1", "mcr", 1, "ab", [None] * 4, now, hands_planned=17)
    assert await store.unfinished_matches() == []
    match_id = await store.create_match("t1", "mcr", 1, "ab", [None] * 4, now, hands_planned=1)
    row = await store.get_match(match_id)
    assert row is not None and row.hands_planned == 1
    await store.save_table(TableRow("t1", "mcr", 15, False, None, [None] * 4, now, hands=5))
    (table,) = await store.load_open_tables()
    assert table.hands == 5


@pytest.mark.asyncio
async def test_0003_gives_older_matches_and_tables_sixteen(database_url: str) -> None:
    """Rows stored under 0002 play 16 after the upgrade; downgrading drops only the new
    columns."""
    await upgrade(database_url, "0002")
    await execute(
        database_url,
        "INSERT INTO matches (table_id, rules, seed, salt, seats, started_at) "
        "VALUES ('t1', 'mcr', 42, 'ab', '[null, null, null, null]', '2026-12-01 10:00:00+00:00')",
        "INSERT INTO tables (id, rules, turn_seconds, private, seats, created_at, state) "
        "VALUES ('t1', 'mcr', 15, false, '[null, null, null, null]', "
        "'2026-12-01 10:00:00+00:00', 'waiting')",
    )
    await upgrade(database_url)
    store = await Store.open(database_url)
    try:
        (match,) = await store.unfinished_matches()
        (table,) = await store.load_open_tables()
    finally:
        await store.close()
    assert (match.seed, match.hands_planned, table.id, table.hands) == (42, 16, "t1", 16)
    await downgrade(database_url, "0002")
    assert await execute(database_url, "SELECT seed FROM matches") == [(42,)]
    assert await execute(database_url, "SELECT id FROM tables") == [("t1",)]


# -------------------------------------------------------- guobiao simulate ---


def test_simulate_plays_short_matches_that_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "actions.jsonl"
    argv = ["simulate", "--matches", "2", "--hands", "4", "--bot", "fast", "--quiet"]
    assert main([*argv, "--log", str(log)]) == 0
    assert capsys.readouterr().out.startswith("2 match(es), 8 hands")
    headers = [json.loads(line) for line in log.read_text().splitlines() if '"match"' in line]
    assert [h["hands"] for h in headers if h["type"] == "match"] == [4, 4]
    assert main(["replay", str(log), "--quiet"]) == 0
    assert "replay ok: 2/2 matches, 8 hands checked" in capsys.readouterr().out


@pytest.mark.parametrize("hands", ["0", "17", "four"])
def test_simulate_refuses_a_bad_length(hands: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["simulate", "--hands", hands])
    assert f"expected a whole number 1..16, got {hands!r}" in capsys.readouterr().err

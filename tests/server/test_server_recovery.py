"""Recovery: a player's connection dropping mid-hand, the server killed mid-match (SIGKILL)
and restarted, and a graceful stop (SIGTERM).

The tables here are one network client (alice, playing the ``default`` engine bot over the
wire with ``server.client.play``) and three ``default`` server bots. Everything that may
play seat 0 then plays it the same way: alice's bot on her wire view, and, while she is
away, the server's ``make_bot("default", seed=0)`` (``Table._auto_action``); bots are pure
(the same view gets the same action). Turns are long (60 s), so no timeout ever plays for
her. A whole match is then fixed by its seed: after any disconnection or crash, the stored
hands must be exactly those of ``engine.simulation.play_match(seed, four default bots)``.

The crash tests run ``guobiao serve`` as a subprocess (``python -m server serve``), on
SQLite and on PostgreSQL (``postgres`` marker; skipped when unreachable).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from httpkit import http_get
from serverkit import served_port
from tablekit import discard_only_from_hand_2
from test_server_bad_input import Wire, add_bots, guest, has_legal, is_update, legal_of

from engine.actions import Action, Event
from engine.bots import make_bot
from engine.match import Match
from engine.rules import MCR
from engine.simulation import play_match
from engine.table import Phase
from server.app import App
from server.cli.replay import read_log
from server.client import Client, Incoming, TableState, play
from server.config import Config, DatabaseSection, LimitsSection, ServerSection, TimersSection
from server.db.store import Store

REPO = Path(__file__).resolve().parents[2]
ME = 0  # alice's seat
TURN_SECONDS = 60  # long: no decision of this test's players ever times out
USERNAME = "alice_recovery"
PASSWORD = "correct horse battery"
MATCH_TIMEOUT = 120  # seconds for the rest of a match (one takes ~10 s here)


# ----------------------------------------------------------------- helpers ---


def normalized(value: Any) -> Any:
    """``value`` as it comes back from a JSON column or the wire (tuples become lists)."""
    return json.loads(json.dumps(value))


def offline_records(seed: int, match_id: int) -> tuple[list[dict[str, Any]], list[int]]:
    """The hands and final scores of the match played offline by four default bots."""
    bots = [make_bot("default", seed=p) for p in range(4)]
    match = play_match(seed, bots, MCR, match_id)
    return [normalized(r.to_dict()) for r in match.records], list(match.scores)


def seen_events(frames: list[dict[str, Any]], table: str) -> dict[int, list[dict[str, Any]]]:
    """The events of each hand that the updates in ``frames`` showed, in order."""
    hands: dict[int, list[dict[str, Any]]] = {}
    for frame in frames:
        payload = frame.get("payload") or {}
        if frame["type"] != "update" or payload.get("table") != table:
            continue
        events = hands.setdefault(payload["hand_no"], [])
        if payload.get("full"):
            events.clear()
        events.extend(payload["events"])
    return hands


def stored_events(
    seed: int, match_id: int, actions: list[Any], player: int, up_to_hand: int
) -> dict[int, list[dict[str, Any]]]:
    """Replay the stored ``actions`` (``store.match_actions``) through the engine and return
    the events of each hand that ``player`` may see, as the server sends them. Hands after
    the last stored action are dealt (from the seed alone) up to ``up_to_hand``."""
    match = Match(seed, MCR, match_id)
    hands: dict[int, list[Event]] = {}

    def deal() -> None:
        hand_no = match.hand_index + 2
        hands[hand_no] = match.start_hand()

    for _seq, hand_no, who, action in (a.played for a in actions):
        while match.hand_index + 1 < hand_no:
            deal()
        hands[hand_no].extend(match.apply(who, Action.from_dict(action)))
    while (
        match.hand_index + 1 < up_to_hand
        and match.hand is not None
        and match.hand.phase is Phase.OVER
    ):
        deal()
    return {
        hand_no: normalized([{"kind": e.kind, **e.data} for e in events if e.visible_to(player)])
        for hand_no, events in hands.items()
    }


async def check_nothing_lost(
    url: str, frames: list[dict[str, Any]], table: str, state: TableState
) -> tuple[int, list[Any], int]:
    """Everything the client saw of the match is in the database: every event it got is
    the replay of stored actions, and every hand revealed to it is stored. Call it with the
    server stopped. Returns (match id, stored actions, stored hands)."""
    store = await Store.open(url)
    try:
        (stored,) = await store.unfinished_matches()
        actions = await store.match_actions(stored.id)
        hands = await store.match_hands(stored.id)
    finally:
        await store.close()
    seen = seen_events(frames, table)
    assert seen, "the client saw no update before the stop"
    last_seen = max(seen)
    replayed = stored_events(stored.seed, stored.id, actions, ME, last_seen)
    for hand_no, events in sorted(seen.items()):
        assert hand_no in replayed, f"the client saw hand {hand_no}; nothing of it is stored"
        got = replayed[hand_no]
        if hand_no < last_seen:
            assert got == events, f"hand {hand_no}: the stored log replays otherwise than seen"
        else:
            assert got[: len(events)] == events, (
                f"hand {hand_no}: the client saw events the stored log does not give: "
                f"seen {len(events)}, stored {len(got)}"
            )
    assert len(hands) >= max(state.reveals, default=0), "a revealed hand was not stored"
    assert [h["hand_no"] for h in hands] == list(range(1, len(hands) + 1))
    return stored.id, actions, len(hands)


async def check_log_kept(url: str, match_id: int, before: list[Any]) -> None:
    """After the restart and the end of the match, the stored log begins with the actions
    stored before the stop (none lost or rewritten), and the published log replays to the
    stored hands."""
    store = await Store.open(url)
    try:
        after = await store.match_actions(match_id)
        lines = await store.match_log(match_id)
    finally:
        await store.close()
    assert after[: len(before)] == before
    assert [a.seq for a in after] == list(range(1, len(after) + 1))
    assert lines is not None
    (logged,) = read_log(json.dumps(line) for line in lines)
    replayed = logged.replay()
    assert len(replayed.records) == 16


async def get_json(port: int, path: str) -> tuple[int, Any]:
    status, body = await http_get(port, path)
    return status, json.loads(body)


async def check_match_as_offline(port: int, match_id: int, scores: list[int]) -> None:
    """The finished match, read through the HTTP API, is the offline match of its seed."""
    status, detail = await get_json(port, f"/api/matches/{match_id}")
    assert status == 200, detail
    assert detail["finished"] and detail["final_scores"] == scores
    hands = [{k: v for k, v in h.items() if k != "finished_at"} for h in detail["hands"]]
    expected, expected_scores = offline_records(detail["seed"], match_id)
    assert [h["hand_no"] for h in hands] == list(range(1, 17))
    for got, want in zip(hands, expected, strict=True):
        assert got == want, f"hand {want['hand_no']} differs from the offline match"
    assert scores == expected_scores


@dataclass
class Watch:
    """Calls ``when`` on every message ``play`` reads; sets ``reached`` the first time it
    returns true (and, with ``stop``, makes ``play`` stop acting from that message on)."""

    state: TableState
    when: Callable[[TableState], bool]
    stop: bool = False
    reached: asyncio.Event = field(default_factory=asyncio.Event)

    def on_message(self, _message: Incoming) -> None:
        if not self.reached.is_set() and self.when(self.state):
            self.reached.set()

    def stopping(self) -> bool:
        return self.stop and self.reached.is_set()


def discards(state: TableState, player: int | None = None) -> int:
    return sum(
        1
        for e in state.events
        if e.get("kind") == "discard" and (player is None or e.get("player") == player)
    )


async def start_table(url: str) -> tuple[Client, str]:
    """alice registers, creates a table, sits at seat 0 and fills it with default server
    bots: the match starts."""
    alice = await Client.connect(url, record=True, rate=None)
    await alice.register(USERNAME, PASSWORD)
    table = (await alice.create_table(turn_seconds=TURN_SECONDS)).table
    assert await alice.join_table(table, seat=ME) == ME
    summary = await alice.add_bots(table, "default")
    assert summary["seats"][1:] == ["bot:default"] * 3
    return alice, table


def my_bot() -> Any:
    return make_bot("default", seed=ME)


async def resume_and_expect_resync(
    url: str, token: str, table: str, timeout: float = 10
) -> tuple[Client, Incoming]:
    """Connect again, ``resume`` with the token, and get the full update of the table."""
    client = await Client.connect(url, record=True, rate=None)
    try:
        full = asyncio.ensure_future(
            client.wait_for(
                lambda m: m.type == "update" and m.table == table and bool(m.payload.get("full")),
                timeout=timeout,
            )
        )
        await asyncio.sleep(0)  # the waiter is registered before anything can answer
        session = await client.resume(token)
        assert session.username == USERNAME
        update = await full
        check_resync(update.payload, table)
    except BaseException:
        await client.close()
        raise
    return client, update


def check_resync(payload: dict[str, Any], table: str) -> None:
    """A full update of a hand in play: our own view, our concealed tiles, no one else's."""
    assert payload["table"] == table and payload["full"] is True
    view = payload["view"]
    assert view is not None and view["you"] == ME
    assert payload["events"], "a full update carries the hand's events so far"
    mine = next(s for s in view["seats"] if s["player"] == ME)
    assert isinstance(mine.get("concealed"), str) and mine["concealed"]
    if view["phase"] != "over":
        others = [s for s in view["seats"] if s["player"] != ME]
        assert all("concealed" not in s for s in others)
    assert isinstance(view["legal"], list)


# ------------------------------------------- disconnect and reconnect (in-process) ---

# These tests found three server bugs, fixed since (they are regression tests now; those of
# bugs 1 and 2 drive the table directly, in test_table_task.py):
#
# 1. Table._wakeup kept an away seat's ``away_since + disconnected_seconds`` among the
#    wake-up times once past, so the table waited for inputs with
#    ``asyncio.wait_for(queue.get(), 0)``, which never takes a queued item (Python 3.11 to
#    3.13): while a player was away the table took no input (her ``resume`` or
#    ``join_table``, a ``watch``, the others' actions, a stop) and spun the CPU.
# 2. Table._drive played automatic moves until a present player had to decide, a pause
#    between hands or the match end, without looking at its input queue: a ``resume`` was
#    answered at the end of the hand (the server playing her seat meanwhile), a stop
#    waited as long (with no pause between hands: the whole match).
# 3. App.stop called ``ws_server.close(close_connections=False)`` first; websockets'
#    ``Server.close`` being idempotent, the later ``close()`` did nothing: no 1001 close,
#    a 5 s wait, then every connection closed with 1011 (internal error).


@pytest_asyncio.fixture
async def start_recovery_app(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """Start the real server in-process on SQLite (the crash tests below cover PostgreSQL)."""
    started: list[App] = []

    async def start(hand_pause_seconds: float = 0) -> App:
        config = Config(
            server=ServerSection(host="127.0.0.1", port=0, data_dir=str(tmp_path)),
            database=DatabaseSection(url=f"sqlite+aiosqlite:///{tmp_path / 'recovery.db'}"),
            timers=TimersSection(
                turn_seconds=TURN_SECONDS,
                min_turn_seconds=1,
                disconnected_seconds=0.1,
                hand_pause_seconds=hand_pause_seconds,
                unattended_move_seconds=0,
                restart_grace_seconds=0.5,
                claim_window_ms=0,  # held, but no minimum: matches at full speed
            ),
            limits=LimitsSection(messages_per_second=10_000, message_burst=10_000),
        )
        server = App(config)
        await server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        if not getattr(server, "stopped_by_test", False):
            await stop_app(server, limit=5)


async def stop_app(app: App, limit: float = 15) -> bool:
    """``app.stop()``; if the tables have not stopped within ``limit`` seconds (as with
    bugs 1 and 2), cancel their tasks so that the stop completes. True if it stopped by
    itself."""
    stopping = asyncio.ensure_future(app.stop())
    done, _ = await asyncio.wait({stopping}, timeout=limit)
    if not done:
        assert app.lobby is not None
        for table in list(app.lobby.tables.values()):
            if table.task is not None:
                table.task.cancel()
    await stopping
    return bool(done)


@pytest_asyncio.fixture
async def recovery_app(start_recovery_app: Callable[..., Any]) -> App:
    server: App = await start_recovery_app()
    return server


@dataclass
class Dropped:
    """A seat whose player went away mid-hand, while the server waited for her discard."""

    alice: Client
    watcher: Client
    table: str
    token: str
    hand_no: int
    seq: int  # the update she did not answer

    async def close(self, *others: Client | None) -> None:
        for client in (self.alice, self.watcher, *others):
            if client is not None:
                await client.close()


async def drop_mid_hand(app: App, how: str) -> Dropped:
    """alice plays until her turn to discard in hand 2 or later, with two discards of hers
    in that hand already; then stops answering and goes away (``close``: a close frame;
    ``drop``: the TCP connection is cut without one). A spectator watches the table
    throughout."""
    url = f"ws://127.0.0.1:{app.port}/ws"
    alice, table = await start_table(url)
    watcher = await Client.connect(url, record=True, rate=None)
    await watcher.guest()
    await watcher.watch(table)
    assert alice.session is not None
    state = alice.tables[table]

    def my_discard_from_hand_2_on(s: TableState) -> bool:
        return discard_only_from_hand_2(s.hand_no, discards(s, ME), s.legal)

    watch = Watch(state, my_discard_from_hand_2_on, stop=True)
    first = asyncio.create_task(
        play(alice, table, my_bot(), stopping=watch.stopping, on_message=watch.on_message)
    )
    await asyncio.wait_for(watch.reached.wait(), 30)
    dropped = Dropped(alice, watcher, table, alice.session.token, state.hand_no, state.seq or 0)
    if how == "drop":
        alice.ws.transport.abort()
    await alice.close()
    assert await asyncio.wait_for(first, 10) is None  # play() ends with the connection
    return dropped


async def server_plays_the_seat(d: Dropped) -> None:
    """The table does not stall: the server discards for alice (after disconnected_seconds,
    long before her 60 s turn is up) and the hand goes on."""
    started = time.monotonic()
    played = await d.watcher.wait_for(
        lambda m: (
            m.type == "update"
            and m.table == d.table
            and any(e["kind"] == "discard" and e["player"] == ME for e in m.payload["events"])
        ),
        timeout=10,
    )
    assert time.monotonic() - started < 5
    assert played.payload["seq"] > d.seq and played.payload["hand_no"] == d.hand_no
    await d.watcher.wait_for(
        lambda m: m.type == "update" and m.table == d.table and m.payload["seq"] > d.seq + 3,
        timeout=10,
    )


@pytest.mark.asyncio
async def test_player_cut_off_mid_hand_is_played_by_the_server(recovery_app: App) -> None:
    """Her TCP connection is cut (no close frame) while the table waits for her discard:
    the server plays her seat from then on, the table never stalls, and the match ends as
    the offline match of its seed (her seat played by the default bot, as she did). (The
    table's side of a player gone mid-hand, with a clean close, is in test_table_task.py.)"""
    d = await drop_mid_hand(recovery_app, "drop")
    try:
        await server_plays_the_seat(d)
        if d.watcher.tables[d.table].match_end is None:
            await d.watcher.wait_for(lambda m: m.type == "match_end", timeout=MATCH_TIMEOUT)
        end = d.watcher.tables[d.table].match_end
        assert end is not None
        await check_match_as_offline(recovery_app.port, end["match"], end["scores"])

        # Away as her match ended, she is told it when she comes back, as the others were:
        # the table finished, her last hand in full (its result), the same match_end.
        again = await Client.connect(f"ws://127.0.0.1:{recovery_app.port}/ws", record=True)
        try:
            told = asyncio.ensure_future(again.wait_for(lambda m: m.type == "match_end", 10))
            await asyncio.sleep(0)  # the waiter is registered before anything can answer
            await again.resume(d.token)
            assert (await told).payload == end
            told_kinds = ("table", "update", "reveal", "match_end")
            frames = [f for f in again.frames if f["type"] in told_kinds]
            assert [f["type"] for f in frames] == list(told_kinds)
            assert frames[0]["payload"]["state"] == "finished"
            last = frames[1]["payload"]
            assert last["full"] and last["view"]["phase"] == "over"
            assert {"hand_end"} <= {e["kind"] for e in last["events"]}
            # Her last hand's fairness is checked as if she had seen it live.
            reveal = frames[2]["payload"]
            assert reveal["hand_no"] == last["hand_no"]
            hashed = bytes.fromhex(reveal["salt"]) + reveal["seed"].to_bytes(8, "big")
            assert hashlib.sha256(hashed).hexdigest() == last["commitment"]
        finally:
            await again.close()
    finally:
        await d.close()


@pytest.mark.asyncio
async def test_reconnect_mid_hand_resyncs_and_plays_on(recovery_app: App) -> None:
    """She comes back with ``resume`` + her token: a full update (``full``, her own view
    with her concealed tiles), and she plays on to the end of the match, which is the
    offline match of its seed."""
    d = await drop_mid_hand(recovery_app, "close")
    second: Client | None = None
    try:
        await server_plays_the_seat(d)
        url = f"ws://127.0.0.1:{recovery_app.port}/ws"
        second, update = await resume_and_expect_resync(url, d.token, d.table, timeout=5)
        assert update.payload["seq"] > d.seq and update.payload["hand_no"] >= d.hand_no
        # With the hand, its commitment: she can check its reveal whatever she missed. (The
        # next hand's may have come since, if she came back between hands; none before.)
        commits = second.tables[d.table].commits
        hand_no = update.payload["hand_no"]
        assert commits[hand_no] == update.payload["commitment"]
        assert min(commits) == hand_no, commits
        end = await asyncio.wait_for(play(second, d.table, my_bot()), MATCH_TIMEOUT)
        assert end is not None and end["table"] == d.table
        if d.watcher.tables[d.table].match_end is None:
            await d.watcher.wait_for(lambda m: m.type == "match_end", timeout=10)
        assert d.watcher.tables[d.table].match_end == end
        await check_match_as_offline(recovery_app.port, end["match"], end["scores"])
    finally:
        await d.close(second)


@pytest.mark.asyncio
async def test_stop_closes_connections_promptly_with_going_away(recovery_app: App) -> None:
    url = f"ws://127.0.0.1:{recovery_app.port}/ws"
    client = await Client.connect(url, record=True, rate=None)
    try:
        await client.guest()
        started = time.monotonic()
        await recovery_app.stop()
        recovery_app.stopped_by_test = True  # type: ignore[attr-defined]
        took = time.monotonic() - started
        await asyncio.wait_for(client.closed.wait(), 3)  # bug 3: never, in-process
        last = client.frames[-1]
        assert last["type"] == "error" and last["payload"]["code"] == "server_shutdown"
        assert (client.close_code, took < 2) == (1001, True), (
            f"closed with {client.close_code} after {took:.1f} s"
        )
    finally:
        await client.close()


# ----------------------------------------------- the server as a subprocess ---


@dataclass
class ServerProcess:
    """``guobiao serve`` in a subprocess; stderr (text logs) goes to a file."""

    process: subprocess.Popen[str]
    log_path: Path
    port: int
    url: str

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""


def write_config(folder: Path, database_url: str) -> Path:
    path = folder / "server.toml"
    path.write_text(
        f"""
[server]
host = "127.0.0.1"
port = 0
data_dir = {json.dumps(str(folder / "data"))}
log_format = "text"
log_level = "info"

[database]
url = {json.dumps(database_url)}

[timers]
turn_seconds = {TURN_SECONDS}
min_turn_seconds = 1
max_turn_seconds = 120
disconnected_seconds = 0.2
hand_pause_seconds = 0
unattended_move_seconds = 0  # full speed while nobody seated is connected
# After a restart her seat waits this long for her, then the server plays it until she
# resumes (she resumes at once here).
restart_grace_seconds = 0.5
claim_window_ms = 0  # claim windows held, but no minimum: the match at full speed

[limits]
messages_per_second = 10000
message_burst = 10000
""",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Start ``python -m server serve --config FILE [--port N]``; wait for its URL line.
    Every process started is killed at the end of the test."""
    started: list[subprocess.Popen[str]] = []
    env = {k: v for k, v in os.environ.items() if not k.startswith("GUOBIAO_")}
    env["PYTHONUNBUFFERED"] = "1"

    async def start(config: Path, port: int = 0) -> ServerProcess:
        log_path = tmp_path / f"serve-{len(started)}.log"
        with open(log_path, "w", encoding="utf-8") as log_file:
            process = subprocess.Popen(
                [sys.executable, "-m", "server", "serve", "--config", str(config)]
                + (["--port", str(port)] if port else []),
                cwd=REPO,
                env=env,
                stdout=subprocess.PIPE,
                stderr=log_file,
                text=True,
            )
        started.append(process)
        assert process.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(process.stdout.readline), 60)
        port = served_port(line)
        if port is None:
            process.kill()
            process.wait()
            pytest.fail(f"no URL line from guobiao serve ({line!r}); log:\n{log_path.read_text()}")
        return ServerProcess(process, log_path, port, f"ws://127.0.0.1:{port}/ws")

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()


async def wait_exit(server: ServerProcess, timeout: float = 20) -> int:
    try:
        return await asyncio.to_thread(server.process.wait, timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"guobiao serve did not exit within {timeout} s; log:\n{server.log()}")


def free_port_is_reusable(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


async def finish_after_restart(
    serve: Callable[..., Any], config: Path, port: int, token: str, table: str
) -> tuple[ServerProcess, dict[str, Any]]:
    """Restart on the same port, resume, play to the end; the match_end payload."""
    assert free_port_is_reusable(port)
    server = await serve(config, port)
    assert server.port == port
    client, _update = await resume_and_expect_resync(server.url, token, table)
    try:
        end = await asyncio.wait_for(play(client, table, my_bot()), MATCH_TIMEOUT)
    finally:
        await client.close()
    assert end is not None, f"no match_end after the restart; log:\n{server.log()}"
    return server, end


async def play_until(
    client: Client, table: str, when: Callable[[TableState], bool]
) -> asyncio.Task[dict[str, Any] | None]:
    """Start playing; return the task once ``when`` is true of the table state."""
    watch = Watch(client.tables[table], when)
    task = asyncio.create_task(play(client, table, my_bot(), on_message=watch.on_message))
    reached = asyncio.create_task(watch.reached.wait())
    done, _ = await asyncio.wait({task, reached}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
    if reached not in done:
        reached.cancel()
        pytest.fail(f"the match did not get there (play ended: {task in done})")
    return task


def mid_hand(hands_done: int, discards_seen: int) -> Callable[[TableState], bool]:
    def when(s: TableState) -> bool:
        return (
            len(s.reveals) >= hands_done
            and s.hand_no == hands_done + 1
            and discards(s) >= discards_seen
        )

    return when


@pytest.mark.asyncio
async def test_sigkill_mid_match_then_restart_finishes_as_offline(
    serve: Callable[..., Any], tmp_path: Path, database_url: str
) -> None:
    config = write_config(tmp_path, database_url)
    server = await serve(config)
    alice, table = await start_table(server.url)
    token = alice.session.token if alice.session else ""
    state = alice.tables[table]
    try:
        task = await play_until(alice, table, mid_hand(3, 6))
        server.process.send_signal(signal.SIGKILL)
        assert await wait_exit(server) == -signal.SIGKILL
        # Everything alice got was sent before the kill; her play() ends with the connection.
        assert await asyncio.wait_for(task, 10) is None
        await alice.closed.wait()
    finally:
        await alice.close()
    assert not any(f["type"] == "match_end" for f in alice.frames)
    match_id, actions, hands = await check_nothing_lost(database_url, alice.frames, table, state)
    assert hands >= 3 and actions

    server, end = await finish_after_restart(serve, config, server.port, token, table)
    assert end["match"] == match_id
    assert "restored after" in server.log()
    await check_match_as_offline(server.port, match_id, end["scores"])

    # The grade counts of the human: one match, her final score.
    status, summary = await get_json(server.port, f"/api/players/{USERNAME}")
    assert status == 200 and summary["matches"] == 1
    assert summary["score"] == end["scores"][ME]
    server.process.send_signal(signal.SIGTERM)
    assert await wait_exit(server) == 0
    await check_log_kept(database_url, match_id, actions)


@pytest.mark.asyncio
async def test_sigterm_tells_clients_and_loses_nothing(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'data' / 'guobiao.db'}"
    config = write_config(tmp_path, database_url)
    server = await serve(config)
    alice, table = await start_table(server.url)
    token = alice.session.token if alice.session else ""
    state = alice.tables[table]
    try:
        task = await play_until(alice, table, mid_hand(2, 4))
        server.process.send_signal(signal.SIGTERM)
        assert await wait_exit(server) == 0, server.log()
        assert await asyncio.wait_for(task, 10) is None
        await alice.closed.wait()
    finally:
        await alice.close()
    assert server.process.stdout is not None
    assert "guobiao: stopping" in server.process.stdout.read()

    # Told before the close: an error server_shutdown, and it is the last thing received.
    codes = [
        f["payload"].get("code")
        for f in alice.frames
        if f["type"] == "error" and f["payload"].get("code") == "server_shutdown"
    ]
    assert codes, "no server_shutdown error before the close"
    last = alice.frames[-1]
    assert last["type"] == "error" and last["payload"]["code"] == "server_shutdown"

    match_id, actions, hands = await check_nothing_lost(database_url, alice.frames, table, state)
    assert hands >= 2

    server, end = await finish_after_restart(serve, config, server.port, token, table)
    assert end["match"] == match_id
    await check_match_as_offline(server.port, match_id, end["scores"])
    server.process.send_signal(signal.SIGTERM)
    assert await wait_exit(server) == 0
    await check_log_kept(database_url, match_id, actions)


@dataclass
class HerTurn:
    """A served table with 2 s turns, its player (``wire``) at seat 0 with three bots, and
    her turn come: ``play``, her discard to send (not the one a stand-in would play)."""

    server: Any
    wire: Wire
    table: str
    play: dict[str, Any]
    database: Path

    def discard_shown(self, mark: int) -> Any:
        """The update, from frame ``mark`` on, that shows seat 0's discard."""

        def shows(f: Any) -> bool:
            events = f["payload"]["events"] if is_update(self.table)(f) else []
            return any(e["kind"] == "discard" and e["player"] == 0 for e in events)

        return self.wire.wait(shows, mark)

    async def hers_stored(self, mark: int) -> None:
        """Her discard, sent from frame ``mark`` on, is the one shown and stored, not a
        stand-in's."""
        shown = await self.discard_shown(mark)
        discard = next(e for e in shown["payload"]["events"] if e["kind"] == "discard")
        assert discard["tile"] == self.play["action"]["tile"], (discard, self.play)
        with contextlib.closing(sqlite3.connect(self.database, timeout=30)) as db:
            first = db.execute("SELECT stand_in FROM actions ORDER BY seq LIMIT 1").fetchone()
        assert first == (0,), "the stand-in's discard was stored"


@contextlib.asynccontextmanager
async def her_turn(serve: Callable[..., Any], tmp_path: Path) -> AsyncIterator[HerTurn]:
    database = tmp_path / "data" / "guobiao.db"
    config = write_config(tmp_path, f"sqlite+aiosqlite:///{database}")
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace(f"turn_seconds = {TURN_SECONDS}", "turn_seconds = 2"))
    server = await serve(config)
    wire = await Wire.open(server.url, version=3)
    try:
        await guest(wire)
        created = await wire.answered("create_table", {"turn_seconds": 2}, "table_created")
        table = created["payload"]["table"]
        await wire.answered("join_table", {"table": table, "seat": 0}, "joined")
        await add_bots(wire, table, "default")
        turn = await wire.wait(is_update(table, has_legal), timeout=30)
        mine = next(a for a in legal_of(turn["payload"]) if a["type"] == "discard")
        play = {"table": table, "seq": turn["payload"]["seq"], "action": mine}
        yield HerTurn(server, wire, table, play, database)
    finally:
        await wire.close()


@pytest.mark.asyncio
async def test_a_database_that_takes_no_new_move_does_not_run_out_a_turn(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    """A failing database costs at most a pause (README). From another process, the
    database is made to refuse every new action while it still takes the table's row (as a
    full disk does: an update in place fits, a new row does not), for 2.5 turns while she
    re-sends her discard on each ``internal_error``, as docs/protocol.md says to. Then it
    takes them again: the discard stored is hers. Before, each retry's row save ended the
    pause, the time between ran on her clock, and the stand-in's discard was stored."""
    async with her_turn(serve, tmp_path) as at:
        with contextlib.closing(sqlite3.connect(at.database, isolation_level=None)) as outside:
            outside.execute(
                "CREATE TRIGGER full_disk BEFORE INSERT ON actions "
                "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
            )
            refused, end = 0, time.monotonic() + 5
            while time.monotonic() < end:
                reply = await at.wire.request("action", at.play)
                assert reply["type"] == "error", reply
                refused += reply["payload"]["code"] == "internal_error"
                await asyncio.sleep(0.25)
            assert refused, "no move was refused while the database took none"
            outside.execute("DROP TRIGGER full_disk")
        await asyncio.sleep(0.5)  # her next re-send comes a little later, as each did
        await at.hers_stored(await at.wire.send({"type": "action", "payload": at.play}))


@pytest.mark.asyncio
async def test_a_bot_whose_move_was_not_stored_is_asked_again_and_plays_its_own_move(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    """A probe's case, with the client ``guobiao bot`` plays with (``server.client.play``),
    which sends each move once. At its turn, the database refuses the match's new actions
    (a trigger from another process, as a full disk does: the table's row is still taken)
    for 2.5 turns of 2 s. The server asks the bot again each time the table goes on, and
    the move stored once the database takes moves is its own: no move of its seat is a
    stand-in's. Before, nothing told it when to try again: its turn ran out, and the
    stand-in's move was stored (every table of the probe's, 5 s after the disk had room)."""
    database = tmp_path / "data" / "guobiao.db"
    config = write_config(tmp_path, f"sqlite+aiosqlite:///{database}")
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace(f"turn_seconds = {TURN_SECONDS}", "turn_seconds = 2"))
    server = await serve(config)
    client = await Client.connect(server.url, rate=None)
    asked = asyncio.Event()

    def seen(message: Incoming) -> None:
        legal = message.payload["view"].get("legal") if message.type == "update" else None
        if legal and any(a["type"] == "discard" for a in legal):
            asked.set()

    try:
        await client.guest()
        table = (await client.create_table(turn_seconds=2)).table
        assert await client.join_table(table, seat=ME) == ME
        await client.add_bots(table, "fast")
        # It thinks half a second a move: the trigger comes while it thinks.
        playing = asyncio.create_task(play(client, table, my_bot(), think=0.5, on_message=seen))
        await asyncio.wait_for(asked.wait(), 30)
        with contextlib.closing(sqlite3.connect(database, isolation_level=None)) as outside:
            outside.execute(
                "CREATE TRIGGER full_disk BEFORE INSERT ON actions "
                "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
            )
            (before,) = outside.execute("SELECT count(*) FROM actions").fetchone()
            await asyncio.sleep(5)
            outside.execute("DROP TRIGGER full_disk")
            await asyncio.sleep(3)  # it plays on
            mine = outside.execute(
                "SELECT seq, stand_in FROM actions WHERE player = ? AND seq > ? ORDER BY seq",
                (ME, before),
            ).fetchall()
        assert mine, "nothing of its seat was stored once the database took moves"
        assert [seq for seq, stand_in in mine if stand_in] == [], "a stand-in played its seat"
        assert not playing.done()
        playing.cancel()
    finally:
        await client.close()
    assert "the database failed storing action" in server.log()


@pytest.mark.asyncio
async def test_a_lock_held_by_another_process_does_not_run_out_a_turn(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    """Another process holds the SQLite database locked past the server's 10 s wait for
    it, a turn being 2 s: her discard's write waits, then fails (``internal_error``). Once
    the lock is free, her re-sent discard is stored. Before, the wait ran on her clock (the
    pause began when the write failed), and the stand-in's discard was stored."""
    async with her_turn(serve, tmp_path) as at:
        with contextlib.closing(sqlite3.connect(at.database, isolation_level=None)) as outside:
            outside.execute("BEGIN EXCLUSIVE")
            try:
                reply = await at.wire.request("action", at.play, timeout=30)
                assert reply["type"] == "error", reply
                assert reply["payload"]["code"] == "internal_error", reply
                await asyncio.sleep(1)
            finally:
                outside.execute("ROLLBACK")
        await asyncio.sleep(0.5)  # her client's re-send comes a little later
        await at.hers_stored(await at.wire.send({"type": "action", "payload": at.play}))


@pytest.mark.asyncio
async def test_a_stopped_server_does_not_count_the_stop_against_a_turn(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    """A stopped process costs at most a pause (docs/deployment.md). The server is stopped
    (SIGSTOP, as a suspended machine or container is) for longer than the turn while a
    player must discard, and she sends her discard meanwhile. Woken (SIGCONT), it takes her
    move: before, it first ran out her clock, which had run on through the stop, and played
    her seat (``stand_in``), then answered her own move ``stale``."""
    async with her_turn(serve, tmp_path) as at:
        at.server.process.send_signal(signal.SIGSTOP)
        try:
            await asyncio.sleep(4)  # twice her turn
            mark = await at.wire.send({"type": "action", "payload": at.play})
            await asyncio.sleep(0.5)  # (her move in the server's socket buffer)
        finally:
            at.server.process.send_signal(signal.SIGCONT)
        await at.hers_stored(mark)
        await at.wire.alive()  # (anything the server answered her move with has come by now)
        assert not at.wire.errors(mark), at.wire.errors(mark)
        assert "did not run for" in at.server.log()

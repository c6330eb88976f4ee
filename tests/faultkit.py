"""Helpers for the fault-injection tests (tests/server/test_faults.py).

- ``FaultyStore``: a real ``Store`` whose writes fail when a plan says so: before the write
  (nothing stored) or after it (stored, but the caller is told it failed, as when the
  connection is lost during the commit). It counts the faults it injected.
- ``bot_match``: a table of the in-process lobby where a registered player joins, adds
  server bots and leaves: the server then plays her seat with its ``default`` bot, so the
  whole match is fixed by its seed (``server.table.new_match_seed`` is replaced).
- ``offline`` and ``check_match``: the same match played offline by the engine, and the
  comparison of a stored match with it: final scores, hand records, action log, the log
  replaying, and the human's counts.
- ``write_config``: the ``guobiao serve`` configuration the SIGKILL tests start it with.
- ``read_only_switch``: a running server's store made to refuse writes, as a read-only file
  does, while a switch says so.
- ``TALLY``: the figures the tests print (faults injected, matches identical, actions lost).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakes import QUICK, FakePeer
from sqlalchemy import event
from sqlalchemy.exc import OperationalError

from engine.actions import Action
from engine.bots import make_bot
from engine.match import Match
from engine.rules import MCR
from engine.simulation import play_match
from server.app import App
from server.config import Config, LimitsSection
from server.db.store import Store
from server.lobby import Lobby, replay_log
from server.table import AddBotsInput, JoinInput, LeaveInput, Table

WRITES = ("append_action", "finish_hand", "create_match", "finish_match", "save_table")
HUMAN = "alice_faults"

# No pacing: bots and the away player are played at once, no pause between hands.
TIMERS = QUICK
CONFIG = Config(timers=TIMERS, limits=LimitsSection(max_tables=10))


def injected(what: str) -> OperationalError:
    """The error a write gets when the database goes away (as SQLAlchemy raises it)."""
    return OperationalError(what, {}, ConnectionError(f"injected fault in {what}"))


# A plan: given the write's method name and how many writes of each method were asked
# for so far (this one included), "before" (fail, nothing written), "after" (written,
# then fail, as when the connection is lost during the commit) or None (work).
Plan = Callable[[str, dict[str, int]], str | None]


@dataclass(frozen=True)
class FailNth:
    """Fail the writes of ``methods`` number ``n`` .. ``n + times - 1`` (counted together)."""

    n: int
    times: int = 1
    when: str = "before"
    methods: tuple[str, ...] = WRITES

    def __call__(self, method: str, counts: dict[str, int]) -> str | None:
        if method not in self.methods:
            return None
        number = sum(counts.get(m, 0) for m in self.methods)
        return self.when if self.n <= number < self.n + self.times else None


@dataclass
class FaultyStore:
    """A ``Store`` whose writes fail as ``plan`` says; everything else is the real store."""

    store: Store
    plan: Plan | None = None
    faults: int = 0  # injected so far
    counts: dict[str, int] = field(default_factory=dict)  # writes asked for, by method
    done: dict[str, int] = field(default_factory=dict)  # writes that returned, by method

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.store, name)
        if name not in WRITES:
            return target

        async def write(*args: Any, **kwargs: Any) -> Any:
            self.counts[name] = self.counts.get(name, 0) + 1
            fate = self.plan(name, self.counts) if self.plan is not None else None
            if fate == "before":
                self.faults += 1
                raise injected(name)
            result = await target(*args, **kwargs)
            if fate == "after":
                self.faults += 1
                raise injected(name)
            self.done[name] = self.done.get(name, 0) + 1
            return result

        return write


Peer = FakePeer  # a connection as a table sees it: it keeps what it is sent


async def bot_match(lobby: Lobby, bot: str = "fast", human: str = HUMAN) -> Table:
    """A table where ``human`` joins seat 0, adds ``bot`` bots and, once the match has
    started, leaves: the server then plays her seat (``default`` bot)."""
    table = await lobby.create(None, None, False)
    peer = Peer(human)
    await table.queue.put(JoinInput(peer, 1, 0, None))
    await table.queue.put(AddBotsInput(peer, 2, bot))
    await wait_for(lambda: table.state == "playing", 30, f"the match at table {table.id}")
    await table.queue.put(LeaveInput(peer, 3))
    return table


def bots_of(bot: str) -> list[Any]:
    """The players of ``bot_match``: her seat's ``default`` bot, then three ``bot``s."""
    return [make_bot("default", seed=0)] + [make_bot(bot, seed=p) for p in (1, 2, 3)]


def offline(seed: int, bot: str, match_id: int) -> Match:
    """The match of ``bot_match`` played offline by the engine: the run without faults."""
    return play_match(seed, bots_of(bot), MCR, match_id)


async def wait_for(check: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll ``check`` (sync or async) until it returns something true."""
    end = time.monotonic() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.01)


async def match_of(store: Any, table_id: str) -> int:
    """The id of the match stored for ``table_id`` (waits for it)."""

    async def find() -> int | None:
        for m in await store.unfinished_matches():
            if m.table_id == table_id:
                return int(m.id)
        return None

    return int(await wait_for(find, 30, f"a match at table {table_id}"))


async def finished(store: Store, match_id: int, timeout: float = 90) -> None:
    async def ended() -> bool:
        row = await store.get_match(match_id)
        return row is not None and row.ended_at is not None

    await wait_for(ended, timeout, f"match {match_id} to finish")


def normalized(value: Any) -> Any:
    return json.loads(json.dumps(value))


def missing(log: list[Any], stored: list[Any]) -> int:
    """The entries of ``log`` that ``stored`` lacks at their place."""
    return sum(1 for i, entry in enumerate(log) if stored[i : i + 1] != [entry])


@dataclass
class Tally:
    faults: int = 0
    matches: int = 0
    identical: int = 0
    lost: int = 0

    def line(self) -> str:
        return (
            f"faults injected: {self.faults}, matches finished identical: "
            f"{self.identical}/{self.matches}, actions lost: {self.lost}"
        )


TALLY = Tally()


async def check_match(
    store: Store,
    match_id: int,
    seed: int,
    bot: str,
    memory: Match | None = None,
    *,
    human: str = HUMAN,
) -> int:
    """The stored match is the offline one, field by field; its log replays. ``memory``:
    the match the table held at the end: every action it applied is stored. Counts the
    match in ``TALLY``; returns the actions lost (asserted 0)."""
    expected = offline(seed, bot, match_id)
    row = await store.get_match(match_id)
    assert row is not None and row.ended_at is not None, f"match {match_id} did not finish"
    actions = await store.match_actions(match_id)
    stored_log = [(r.hand_no - 1, r.player, Action.from_dict(r.action)) for r in actions]
    # Lost: an action of the run without faults, or one the table applied, that the
    # stored log does not have at its place.
    lost = missing(expected.log, stored_log)
    if memory is not None:
        lost = max(lost, missing(memory.log, stored_log))
    TALLY.matches += 1
    TALLY.lost += lost
    assert [a.seq for a in actions] == list(range(1, len(actions) + 1)), "a gap in the log"
    replayed = replay_log(row, actions, CONFIG.rule_presets())
    assert stored_log == expected.log, "the stored log is not the run without faults"
    assert list(row.final_scores or ()) == expected.scores
    assert replayed.scores == expected.scores and replayed.over
    hands = await store.match_hands(match_id)
    assert hands == [normalized(r.to_dict()) for r in expected.records]
    if memory is not None:
        assert memory.log == expected.log
    summary = await store.player_summary(human)
    assert summary is not None
    (mine,) = [m for m in summary["recent"] if m["match"] == match_id]
    assert mine["won"] + mine["lost"] + mine["drawn"] == len(hands)
    assert mine["score"] == expected.scores[0]
    assert lost == 0
    TALLY.identical += 1
    return lost


def write_config(folder: Path, url: str) -> Path:
    """A ``guobiao serve`` configuration for the SIGKILL tests: ``url``'s database, any
    port, no pause anywhere (absent seats played at once), warnings only."""
    path = folder / "server.toml"
    path.write_text(
        f"""
[server]
host = "127.0.0.1"
port = 0
data_dir = {json.dumps(str(folder / "data"))}
log_format = "text"
log_level = "warning"

[database]
url = {json.dumps(url)}

[timers]
disconnected_seconds = 0
hand_pause_seconds = 0
unattended_move_seconds = 0
restart_grace_seconds = 0
claim_window_ms = 0
""",
        encoding="utf-8",
    )
    return path


def read_only_switch(app: App) -> dict[str, bool]:
    """A switch of ``app``'s store (SQLite): while its ``"read_only"`` is true, every
    connection it checks out refuses writes (``PRAGMA query_only``: "attempt to write a
    readonly database", as a read-only file or a full disk fails them) and reads work. The
    pool's connections and the one its short writes make in the event loop alike."""
    state = {"read_only": False}

    def on_checkout(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA query_only = {int(state['read_only'])}")
        cursor.close()

    for engine in (app.store.engine.sync_engine, app.store._now.engine):
        event.listen(engine, "checkout", on_checkout)
    return state

"""Fakes for driving a ``server.table.Table`` without sockets or a database.

- ``FakePeer``: a connection as a table sees it; keeps every text it is sent and every
  prompt (the hook of the connection's rate limit).
- ``FakeStore``: an in-memory ``server.lobby.LobbyStore`` (so also a ``TableStore``): the
  same rows, numbering and ``Conflict`` refusals as ``server.db.store.Store`` for what the
  tables and the lobby use. ``fail`` makes writes fail, to test a table's database pauses.
- ``FakeHost``: a ``server.table.TableHost`` that keeps what its table pushes.
- ``table_for``: a table of the default preset on a fake store and host, with no pacing.
- ``Clock`` and ``pin_tables``: the tables' clock moved by hand, their seeds and salts fixed,
  and the first hand dealt from a given wall; ``until``: wait for what a table does;
  ``handled``: until a table has handled its inputs; ``play_for``: a seated peer answers.
"""

from __future__ import annotations

import asyncio
import json
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

import server.table
from engine.actions import Action
from engine.match import Match
from engine.wall import Wall
from server.config import Config, TimersSection
from server.db.store import ActionRow, Conflict, FinishedMatch, MatchRow, TableRow
from server.table import Table, TableSettings, TableSummary

Frame = dict[str, Any]

WRITES = ("append_action", "finish_hand", "create_match", "finish_match", "save_table")


@dataclass(eq=False)  # a table keys its peers by identity
class FakePeer:
    """A connection as the table sees it, keeping every text it is sent."""

    username: str | None
    texts: list[str] = field(default_factory=list)
    guest: bool = False
    address: str = "192.0.2.1"
    prompts: list[tuple[str, int]] = field(default_factory=list)  # (table, seq) asked to act
    version: int = 1  # the protocol version it speaks (2: updates not full carry no seats)

    def send(self, text: str) -> None:
        self.texts.append(text)

    def prompted(self, table: str, seq: int) -> None:
        self.prompts.append((table, seq))

    @property
    def sent(self) -> list[Frame]:
        """Every frame sent, decoded."""
        return [json.loads(t) for t in self.texts]

    def frames(self, kind: str) -> list[Frame]:
        """The payloads of the frames of type ``kind``."""
        return [f["payload"] for f in self.sent if f["type"] == kind]

    def updates(self) -> list[Frame]:
        return self.frames("update")

    def last(self) -> Frame:
        """The last frame sent (type, payload, id)."""
        return self.sent[-1]


class StoreUnavailable(ConnectionError):
    """The error ``FakeStore`` raises for a write that ``fail`` makes fail."""


@dataclass
class FakeStore:
    """An in-memory store. ``fail(method, counts)`` decides, write by write (``counts``:
    the writes asked for so far by method, this one included), whether it fails before
    writing anything; ``faults`` counts the failures."""

    tables: dict[str, TableRow] = field(default_factory=dict)
    matches: dict[int, MatchRow] = field(default_factory=dict)
    actions: dict[int, list[ActionRow]] = field(default_factory=dict)
    hands: dict[int, dict[int, tuple[dict[str, Any], list[int]]]] = field(default_factory=dict)
    fail: Callable[[str, dict[str, int]], bool] | None = None
    faults: int = 0
    counts: dict[str, int] = field(default_factory=dict)

    def _write(self, method: str) -> None:
        self.counts[method] = self.counts.get(method, 0) + 1
        if self.fail is not None and self.fail(method, self.counts):
            self.faults += 1
            raise StoreUnavailable(f"injected fault in {method}")

    # ---------------------------------------------------------- tables ---

    async def save_table(self, row: TableRow) -> None:
        self._write("save_table")
        self.tables[row.id] = row

    async def load_open_tables(self) -> list[TableRow]:
        return [r for r in self.tables.values() if r.state != "finished"]

    async def get_table(self, table_id: str) -> TableRow | None:
        return self.tables.get(table_id)

    # --------------------------------------------------------- matches ---

    async def create_match(  # noqa: PLR0917 (the store's signature)
        self,
        table_id: str,
        rules: str,
        seed: int,
        salt: str,
        seats: Sequence[str | None],
        started_at: datetime,
        rule_options: Mapping[str, Any] | None = None,
        hands_planned: int = 16,
        rated: bool = False,
    ) -> int:
        self._write("create_match")
        for made in self.matches.values():  # the store's: named by its table, seed and salt
            if (made.table_id, made.seed, made.salt) == (table_id, seed, salt):
                return made.id
        match_id = len(self.matches) + 1
        self.matches[match_id] = MatchRow(
            id=match_id,
            table_id=table_id,
            rules=rules,
            seed=seed,
            salt=salt,
            seats=tuple(seats),
            started_at=started_at,
            ended_at=None,
            final_scores=None,
            rule_options=json.loads(json.dumps(rule_options)) if rule_options else None,
            hands_planned=hands_planned,
            rated=rated,
        )
        self.actions[match_id] = []
        self.hands[match_id] = {}
        return match_id

    async def get_match(self, match_id: int) -> MatchRow | None:
        return self.matches.get(match_id)

    async def table_matches(self, table_id: str) -> list[MatchRow]:
        return [m for m in self.matches.values() if m.table_id == table_id]

    async def unfinished_matches(self) -> list[MatchRow]:
        return [m for m in self.matches.values() if m.ended_at is None]

    async def finish_match(
        self,
        match_id: int,
        final_scores: Sequence[int],
        ended_at: datetime,
        addresses: Sequence[str | None] | None = None,
    ) -> FinishedMatch:
        self._write("finish_match")
        row = self.matches[match_id]
        if row.ended_at is not None:
            return FinishedMatch(False)
        self.matches[match_id] = MatchRow(
            **{
                **{k: getattr(row, k) for k in MatchRow.__dataclass_fields__},
                "ended_at": ended_at,
                "final_scores": tuple(final_scores),
            }
        )
        return FinishedMatch(True)  # no ratings: the ladder is tested on a real database

    # --------------------------------------------------------- the log ---

    async def append_action(
        self,
        match_id: int,
        seq: int,
        hand_no: int,
        player: int,
        action: Mapping[str, Any],
        *,
        now: datetime | None = None,
        stand_in: bool = False,
    ) -> None:
        self._write("append_action")
        log = self.actions.get(match_id)
        if log is None:
            raise Conflict(f"match {match_id} is unknown")
        if any(a.seq == seq for a in log):
            raise Conflict(f"match {match_id} has an action {seq} already")
        log.append(ActionRow(seq, hand_no, player, json.loads(json.dumps(action)), stand_in))

    async def match_actions(self, match_id: int) -> list[ActionRow]:
        return sorted(self.actions.get(match_id, []))

    async def last_action(self, match_id: int) -> ActionRow | None:
        log = await self.match_actions(match_id)
        return log[-1] if log else None

    async def finish_hand(
        self,
        match_id: int,
        hand_no: int,
        record: Mapping[str, Any],
        deltas: Sequence[int],
        *,
        now: datetime | None = None,
    ) -> bool:
        self._write("finish_hand")
        if match_id not in self.hands:
            raise Conflict(f"cannot store hand {hand_no} of match {match_id}: it is unknown")
        stored = self.hands[match_id].get(hand_no)
        new = (json.loads(json.dumps(record)), [int(d) for d in deltas])
        if stored is not None:
            if stored == new:
                return False
            raise Conflict(f"hand {hand_no} of match {match_id} is stored already, with another")
        self.hands[match_id][hand_no] = new
        return True

    async def match_hands(self, match_id: int) -> list[dict[str, Any]]:
        return [r for _, (r, _) in sorted(self.hands.get(match_id, {}).items())]


@dataclass
class FakeHost:
    """A table's host that keeps what the table pushes (and what it would tell a player
    away at the match's end); ``elsewhere`` says who sits at another table."""

    elsewhere: dict[str, str] = field(default_factory=dict)
    summaries: list[TableSummary] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    untold: dict[str, list[str]] = field(default_factory=dict)  # ``tell_later``

    def seated_at(self, username: str) -> str | None:
        if username in self.elsewhere:
            return self.elsewhere[username]
        last = self.summaries[-1] if self.summaries else None
        if last is not None and last.state != "finished" and username in last.players:
            return last.table
        return None

    def table_changed(self, summary: TableSummary) -> None:
        self.summaries.append(summary)

    def table_done(self, table_id: str) -> None:
        self.done.append(table_id)

    def tell_later(self, username: str, frames: list[str]) -> None:
        self.untold[username] = frames

    def untold_end(self, username: str) -> list[str]:
        return self.untold.pop(username, [])

    async def rated_refusal(self, usernames: Sequence[str]) -> str | None:
        return None


# No pacing: bots and absent players are played at once, no pause between hands.
QUICK = TimersSection(
    turn_seconds=3,
    min_turn_seconds=1,
    disconnected_seconds=0,
    hand_pause_seconds=0,
    unattended_move_seconds=0,
    restart_grace_seconds=0,
    claim_window_ms=0,
)


def table_for(
    store: FakeStore | None = None,
    host: FakeHost | None = None,
    *,
    timers: TimersSection = QUICK,
    table_id: str = "t1",
    claim_window_ms: int | None = None,
    private: bool = False,
    turn_seconds: int | None = None,
) -> Table:
    """A table of the ``mcr`` preset (not started: call ``start``)."""
    return Table(
        id=table_id,
        settings=TableSettings(
            rules="mcr",
            turn_seconds=timers.turn_seconds if turn_seconds is None else turn_seconds,
            private=private,
            invite_code="secret" if private else None,
            claim_window_ms=timers.claim_window_ms if claim_window_ms is None else claim_window_ms,
        ),
        preset=Config().rule_presets()["mcr"],
        timers=timers,
        store=store if store is not None else FakeStore(),
        host=host if host is not None else FakeHost(),
        created_at=datetime(2026, 12, 1, tzinfo=UTC),
    )


class Clock:
    """A monotonic clock the test moves by hand (``now``, in seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def pin_tables(monkeypatch: pytest.MonkeyPatch, wall: Wall | None = None) -> Clock:
    """Make ``server.table``'s tables repeatable: their clock is the returned ``Clock``,
    every seed, salt and token is fixed (``server.table.sources.secrets``), and with ``wall``
    the first hand of every match is dealt from it (the later ones from their seeds)."""
    clock = Clock()
    monkeypatch.setattr(
        server.table.sources, "time", types.SimpleNamespace(monotonic=clock.monotonic)
    )
    pinned = types.SimpleNamespace(
        randbits=lambda bits: 12345,
        token_bytes=lambda n: bytes(range(n)),
        token_hex=lambda n: "ab" * n,
        token_urlsafe=lambda n: "x" * n,
    )
    monkeypatch.setattr(server.table.sources, "secrets", pinned)
    if wall is not None:
        first = wall

        class Stacked(Match):
            def _wall(self, hand_no: int) -> Wall:
                return first if hand_no == 1 else super()._wall(hand_no)

        monkeypatch.setattr(server.table.sources, "Match", Stacked)
    return clock


async def until(condition: Callable[[], object], what: str, timeout: float = 20) -> None:
    """Wait (polling) until ``condition()`` is true; fails naming ``what`` after ``timeout``."""
    try:
        async with asyncio.timeout(timeout):
            while not condition():
                await asyncio.sleep(0.002)
    except TimeoutError:
        raise AssertionError(f"waited {timeout} s for {what}") from None


async def handled(table: Table) -> None:
    """Wait until ``table`` has handled every input put so far, and driven on after it: a
    stranger's ``sync`` is answered (refused) only after them."""
    for _ in range(2):  # the second answer comes after the first one's drive
        stranger = FakePeer("stranger")
        await table.queue.put(server.table.SyncInput(stranger, None))
        await until(lambda s=stranger: s.texts, "the stranger's answer")


async def play_for(table: Table, peer: FakePeer, reply_to: int) -> None:
    """``peer`` answers the table's last update to it if it asks her to act: a pass if she
    may, else the discard of her drawn tile, else her first legal action."""
    last = peer.updates()[-1]
    legal = last["view"].get("legal") or []
    if not legal or last["seq"] != table.seq:
        return
    drawn = last["view"].get("drawn")
    choice = next(
        (a for a in legal if a["type"] == "pass"),
        next((a for a in legal if a["type"] == "discard" and a["tile"] == drawn), legal[0]),
    )
    await table.queue.put(
        server.table.PlayInput(peer, reply_to, last["seq"], Action.from_dict(choice))
    )

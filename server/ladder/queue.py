"""The server's ladder queue: players wait, a pass every ``[matchmaking] pass_seconds`` seats
them at tables of four (docs/protocol.md, "The queue").

``Matchmaker`` keeps, per ladder, a rated queue (registered accounts, matched on their rating
mu) and a casual one (guests too; after ``casual_bot_seconds`` a player who could not be
seated gets a table filled with bots, at the level the longest waiting of its players chose
in ``queue_join``, else at ``[bots] queue_fill``). The choice of tables is
``server.ladder.matchmaking.form_tables`` (pure); this module is its I/O: who may queue, the
rating to match on, the farm limit (``Lobby.rated_refusal``), creating the table and
attaching each player's connection to their seat, and the ``queue`` messages. Everything it
holds is in memory: a restart empties the queue (the clients join again).
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.bots import LEVELS
from server.config import Config
from server.errors import shown
from server.ladder.matchmaking import Entry, GapSchedule, form_tables
from server.ladder.store import LadderStore
from server.lobby import Lobby
from server.messages.outbound import Joined, Queue
from server.protocol import encode
from server.table import JoinInput, LobbyError, Peer
from server.tasks import stop_task

log = logging.getLogger("guobiao.queue")

STATUS_SECONDS = 1.0  # a waiting connection gets at most one unsolicited status this often
BARRED_SECONDS = 60.0  # a four the farm limit refused is not asked about again for this long

Key = tuple[str, bool]  # (ladder, casual)


class Queued(Peer, Protocol):
    """A connection as the queue sees it: a table's peer that keeps its tables."""

    def attach(self, table_id: str) -> None:
        """The queue seated it at ``table_id`` (its connection keeps that table)."""


class QueueStore(Protocol):
    ladder: LadderStore


@dataclass(slots=True)
class Waiting:
    peer: Queued
    name: str
    mu: float
    joined: float  # the matchmaker's clock
    bot: str | None = None  # the level of the bots a casual table is filled with (None: any)
    sent: str = ""  # the last status sent (its payload, encoded)
    sent_at: float = -1e9


@dataclass(slots=True)
class _Queue:
    ladder: str
    casual: bool
    players: dict[str, Waiting] = field(default_factory=dict)  # username -> waiting
    # Fours the farm limit refused -> when: not formed again until one of them leaves the
    # queue or BARRED_SECONDS have passed (the limit counts the last 24 hours).
    barred: dict[frozenset[str], float] = field(default_factory=dict)


def fill_level(group: list[Waiting], default: str) -> str:
    """The level of the bots that fill the table of ``group`` (casual players, longest
    waiting first): the level the first of them who chose one chose, else ``default``
    (``[bots] queue_fill``)."""
    return next((w.bot for w in group if w.bot is not None), default)


class Matchmaker:
    """The ladder's queues (rated and casual, per ladder) and the task that seats them."""

    def __init__(
        self,
        config: Config,
        store: QueueStore,
        lobby: Lobby,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.store = store
        self.lobby = lobby
        self.clock = clock
        making = config.matchmaking
        self.schedule = GapSchedule(
            making.gap_start, making.gap_step, making.step_seconds, making.gap_max
        )
        self.queues: dict[Key, _Queue] = {
            (name, casual): _Queue(name, casual)
            for name in config.ladder_names
            for casual in (False, True)
        }
        self.where: dict[str, Key] = {}  # username -> the queue they wait in
        self.last_four: dict[str, frozenset[str]] = {}  # the last table the queue made them
        self.task: asyncio.Task[None] | None = None

    # ---------------------------------------------------------- lifecycle ---

    def start(self) -> None:
        self.task = asyncio.create_task(self._run(), name="matchmaker")

    async def stop(self) -> None:
        if self.task is not None:
            await stop_task(self.task)
            self.task = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.config.matchmaking.pass_seconds)
            try:
                await self.run_pass()
            except Exception:  # a failing database must not stop the queue for good
                log.exception("a matchmaking pass failed")

    # ----------------------------------------------------------- requests ---

    async def join(
        self,
        peer: Queued,
        ladder: str | None,
        casual: bool,
        reply_to: str | int | None,
        *,
        bot: str | None = None,
    ) -> None:
        """Queue ``peer``'s player (answer: a ``waiting`` status), or raise ``LobbyError``.
        ``bot``: a level (``engine.bots.LEVELS``) for the bots that may fill a casual table
        (the rated queue never seats bots and ignores it)."""
        name = peer.username
        assert name is not None  # the connection checks the session first
        if bot is not None and bot not in LEVELS:
            raise LobbyError(
                "bad_message", f"unknown bot level {shown(bot)}; levels: {', '.join(LEVELS)}"
            )
        if ladder is None:  # ("" names no ladder: ``no_such_ladder``, as any unknown name)
            ladder = self.config.rules.preset
        key = (ladder, casual)
        if key not in self.queues:
            ladders = ", ".join(self.config.ladder_names) or "none"
            raise LobbyError(
                "no_such_ladder",
                f"there is no ladder {shown(ladder)} to queue for; ladders: {ladders}",
            )
        if not casual and peer.guest:
            raise LobbyError(
                "not_registered",
                "the rated queue is for registered accounts (register, or queue casually)",
            )
        table = self.lobby.seated_at(name)
        if table is not None:
            raise LobbyError("already_seated", f"you already sit at table {table}", table=table)
        queue = self.queues[key]
        waiting = queue.players.get(name)
        if waiting is None or waiting.peer is not peer:
            mu = await self._mu(ladder, name, peer.guest)
            before = self.where.get(name)  # another queue, or another connection's place
            if before is not None:
                old = self.queues[before].players[name]
                self._remove(self.queues[before], name)
                if old.peer is not peer:
                    old.peer.send(self._left(before))  # that connection waits no more
            waiting = Waiting(peer, name, mu, self.clock())
            queue.players[name] = waiting
            self.where[name] = key
        waiting.bot = bot if casual else None
        self._send_status(queue, waiting, self.clock(), reply_to)

    def leave(self, peer: Queued, reply_to: str | int | None) -> None:
        """Take ``peer``'s player out of the queue (harmless when not queued): ``left``."""
        key = self._key_of(peer) or (self.config.rules.preset, False)
        self.gone(peer)
        peer.send(self._left(key, reply_to))

    def gone(self, peer: Queued, *, tell: bool = False) -> None:
        """``peer`` left (disconnected, logged out, someone else now, sat down elsewhere):
        out of the queue; ``tell``: send it a ``left`` status."""
        key = self._key_of(peer)
        if key is None:
            return
        assert peer.username is not None
        self._remove(self.queues[key], peer.username)
        if tell:
            peer.send(self._left(key))

    def snapshot(self) -> dict[str, Any]:
        """``GET /api/queue``: each queue's size and waiting times, from memory."""
        now = self.clock()
        out = []
        for queue in self.queues.values():
            waits = [now - w.joined for w in queue.players.values()]
            out.append(
                {
                    "ladder": queue.ladder,
                    "casual": queue.casual,
                    "size": len(waits),
                    "longest_wait_seconds": round(max(waits), 1) if waits else 0.0,
                    "median_wait_seconds": round(statistics.median(waits), 1) if waits else 0.0,
                }
            )
        return {"queues": out}

    # --------------------------------------------------------------- pass ---

    async def run_pass(self) -> None:
        """One search of every queue: tables made, bots for the casual who waited too long,
        a status for those still waiting."""
        for queue in self.queues.values():
            for name in [n for n in queue.players if self.lobby.seated_at(n) is not None]:
                peer = queue.players[name].peer
                self._remove(queue, name)  # seated elsewhere (another connection)
                peer.send(self._left((queue.ladder, queue.casual)))
            now = self.clock()
            queue.barred = {b: t for b, t in queue.barred.items() if now - t < BARRED_SECONDS}
            entries = [
                Entry(w.name, w.mu, w.joined, self.last_four.get(w.name))
                for w in queue.players.values()
            ]
            for four in form_tables(entries, now, self.schedule, queue.barred):
                await self._table(queue, list(four))
            if queue.casual:
                await self._bots(queue, self.clock())
            now = self.clock()
            for waiting in list(queue.players.values()):
                self._send_status(queue, waiting, now, None)

    async def _table(self, queue: _Queue, names: list[str]) -> None:
        if not queue.casual:
            refusal = await self.lobby.rated_refusal(names)
            if refusal is not None:
                queue.barred[frozenset(names)] = self.clock()
                log.info("queue: not seating %s together: %s", names, refusal)
                return
        waiting = [queue.players.get(n) for n in names if not n.startswith("bot:")]
        if any(w is None for w in waiting):
            return  # someone left while the farm limit was asked
        making = self.config.matchmaking
        try:
            table = await self.lobby.create(
                queue.ladder,
                making.turn_seconds,
                False,
                hands=making.hands,
                rated=not queue.casual,
                seated=names,
            )
        except LobbyError as exc:  # the server holds as many tables as it may: wait
            log.warning("queue: no table for %s: %s", names, exc.reason)
            return
        humans = frozenset(n for n in names if not n.startswith("bot:"))
        seated: list[tuple[int, Queued]] = []
        for seat, name in enumerate(names):
            if name.startswith("bot:"):
                continue
            self.last_four[name] = humans
            left = queue.players.get(name)
            if left is None:
                continue  # gone while the table was made: the seat waits for them (away)
            self._remove(queue, name)
            seated.append((seat, left.peer))
        # In a cluster the table goes to the node most of them are on, where they sit down
        # as a moved table's players do (``Nodes.place``); else they sit down here.
        nodes, peers = self.lobby.nodes, [peer for _, peer in seated]
        elsewhere = nodes.placement(peers)
        for seat, peer in seated:
            peer.attach(table.id)
            peer.send(encode(Queue("matched", queue.ladder, queue.casual, table.id, seat)))
            if elsewhere is not None:  # (here the table says it: ``JoinInput``)
                peer.send(encode(Joined(table.id, seat)))
        if elsewhere is not None and await nodes.place(table.id, elsewhere, peers):
            return
        for seat, peer in seated:
            await table.queue.put(JoinInput(peer, None, seat, None))

    async def _bots(self, queue: _Queue, now: float) -> None:
        """Casual players who waited ``casual_bot_seconds`` get tables filled with bots, of
        the level the longest waiting of them chose (``fill_level``)."""
        after = self.config.matchmaking.casual_bot_seconds
        if not after:
            return
        overdue = sorted(
            (w for w in queue.players.values() if now - w.joined >= after),
            key=lambda w: (w.joined, w.name),
        )
        for start in range(0, len(overdue), 4):
            group = overdue[start : start + 4]
            bot = f"bot:{fill_level(group, self.config.bots.queue_fill)}"
            await self._table(queue, [w.name for w in group] + [bot] * (4 - len(group)))

    # ------------------------------------------------------------ helpers ---

    async def _mu(self, ladder: str, name: str, guest: bool) -> float:
        initial = self.config.season_policy().params.mu
        if guest:
            return initial
        return (await self.store.ladder.skill(ladder, name)).mu

    def _key_of(self, peer: Queued) -> Key | None:
        name = peer.username
        key = self.where.get(name) if name is not None else None
        if key is None:
            return None
        waiting = self.queues[key].players.get(name)  # type: ignore[arg-type]
        return key if waiting is not None and waiting.peer is peer else None

    def _remove(self, queue: _Queue, name: str) -> None:
        queue.players.pop(name, None)
        self.where.pop(name, None)
        queue.barred = {b: t for b, t in queue.barred.items() if name not in b}

    def _left(self, key: Key, reply_to: str | int | None = None) -> str:
        return encode(Queue("left", key[0], key[1]), reply_to)

    def _send_status(
        self, queue: _Queue, waiting: Waiting, now: float, reply_to: str | int | None
    ) -> None:
        """The ``waiting`` status: always as an answer; unsolicited when it changed, at
        most once every ``STATUS_SECONDS``."""
        waited = now - waiting.joined
        status = Queue(
            "waiting",
            queue.ladder,
            queue.casual,
            size=len(queue.players),
            waited_seconds=int(waited),
            gap=self.schedule.gap(waited),
        )
        text = encode(status)
        if reply_to is None and (text == waiting.sent or now - waiting.sent_at < STATUS_SECONDS):
            return
        waiting.sent, waiting.sent_at = text, now
        waiting.peer.send(text if reply_to is None else encode(status, reply_to))

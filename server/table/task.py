"""The table's owner task: ``Table``, the one task that drives a live table's match.

Connections put inputs on ``Table.queue`` (``server.table.inputs``); the task handles them
one at a time, plays for bots and absent players, starts hands and finishes the match, and
carries out what that means: database writes (``TableStore``), messages to connections
(``Peer``), news for its host (``TableHost``). What a table is and does: ``server.table``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from contextvars import ContextVar

from engine.errors import IllegalAction
from server.db.models import iso
from server.messages.outbound import TableInfo
from server.protocol import encode, error, refusal
from server.table import sources
from server.table.clock import wakeup
from server.table.core import (
    AutoPlay,
    CloseWindow,
    DealHand,
    FinishMatch,
    StopAtCap,
    play_refusal,
    stands_in,
)
from server.table.errors import LobbyError, StoreDown
from server.table.inputs import (
    WAKE,
    AddBotsInput,
    AnalyzeInput,
    BackInput,
    GoneInput,
    JoinInput,
    LeaveInput,
    NextHandInput,
    PlayInput,
    ReplaceInput,
    StopInput,
    SyncInput,
    WakeInput,
    WatchInput,
    _Input,
)
from server.table.ports import Peer
from server.table.seating import Seating

log = logging.getLogger("guobiao.table")

# The table whose task is running (each table's task says so): in cluster mode what it sends
# a connection of another node carries its fencing token (``server.cluster.node``).
speaking: ContextVar[Table | None] = ContextVar("speaking", default=None)


class Table(Seating):
    """One table and its owner task. Built with all it needs (``TableState``): its ``id``,
    its ``settings``, the rules of its preset (``preset``), the server's ``timers``, a
    ``store`` and a ``host``. ``start`` runs the task; inputs go on ``queue``."""

    def start(self) -> None:
        """Run the table's task (and tell the host what the table is)."""
        self.durable.table = self.id  # (its host may have given it another since)
        self._changed()
        if self.settings.spectator_delay_seconds and not self.spectators.shown:
            self._keep_for_spectators(None, dealt=True)  # the table as it starts
        self.task = asyncio.create_task(self._run(), name=f"table-{self.id}")

    async def stop(self) -> None:
        self.stopping = True
        if self.task is not None and not self.task.done():
            await self.queue.put(StopInput(None, None))
            if self.lease_waiting:  # (it waits for its node, not for inputs)
                self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        for task in list(self.analysing.values()):  # nobody waits for them any more
            task.cancel()

    def unhandled(self) -> list[_Input]:
        """The inputs a stopped table never handled (cluster mode: its node hands them to
        the table's next owner, or tells their senders), taken off its queue."""
        left, self.left = self.left, []
        while not self.queue.empty():
            item = self.queue.get_nowait()
            if not isinstance(item, StopInput | WakeInput):
                left.append(item)
        return left

    async def _run(self) -> None:
        try:
            await self._drive_inputs()
        finally:
            if self.wake_timer is not None:
                self.wake_timer.cancel()
                self.wake_timer = None

    async def _drive_inputs(self) -> None:
        speaking.set(self)
        failures = 0
        first = True
        while True:
            try:
                # Before the first input: a restored match may play to its end alone. (Later
                # the drive after each input is the drive before the next; after a failure,
                # the next input or wake-up drives again.)
                if first:
                    first = False
                    if not await self._owned():
                        return
                    if await self._drove_to_the_end():
                        return
                item = await self._next_input()
                if isinstance(item, StopInput):
                    return
                if not await self._owned(item):
                    return
                if item is not None:
                    await self._handle(item)
                done = await self._drove_to_the_end()
                failures = 0
                if done:
                    return
            except Exception:
                # A table must not die of one bad input or a passing database error:
                # log it, wait a little (longer each time), and go on from the stored state.
                failures += 1
                log.exception("table %s: error #%s while driving it", self.id, failures)
                await asyncio.sleep(min(0.1 * 2**failures, 10.0))

    async def _owned(self, item: _Input | None = None) -> bool:
        """Whether this node may go on running the table (always, but in cluster mode).

        A node that may have lost the table's lease (not renewed for a lease: its process
        was paused, it cannot reach Redis) does nothing and sends nothing until it knows: the
        table pauses, its clocks stopped, and goes on once the lease is renewed. False once
        it is known lost (another node runs the table: this copy is being dropped) or the
        table is stopping; ``item``, the input taken meanwhile, is then left for the node
        (``unhandled``)."""
        lease = self.lease
        if lease is None or lease.held():
            return True
        owned = False
        since = sources.time.monotonic()
        self.lease_waiting = True
        try:
            owned = not self.stopping and await lease.regained()
        finally:
            self.lease_waiting = False
            if not owned and item is not None:
                self.left.append(item)
        if owned:
            paused = sources.time.monotonic() - since
            self._move_clocks(since, paused)
            log.info("table %s: its lease is renewed; resuming after %.2f s", self.id, paused)
        return owned

    async def _drove_to_the_end(self) -> bool:
        """Drive the table, tell the host what changed; True once the table is finished,
        saved and left by everyone, and its end shown its delayed spectators (the host is
        told to forget it: it lists the table until then, ``_listed``)."""
        await self._drive()
        self._changed()
        empty = self.empty_since
        if empty is not None and sources.time.monotonic() >= empty + self.close_when_empty:
            await self._close_empty()
        if self.spectators.watch_next:
            self._release()
        done = self.state == "finished" and not self.unsaved and not self.end_held()
        if done and not self.peers:
            if not self.queue.empty():
                return False  # inputs that came as it finished (one back: told its end)
            self.host.table_done(self.id)
            return True
        return False

    async def _next_input(self) -> _Input | None:
        """The next input, or None when it is time to drive the table again.

        What is due without an input wakes the task through its queue: a timer puts
        ``WAKE`` there. The timer is not cancelled when an input comes first, but kept for
        the next wait as long as it is not later than what is due then (a decision's clock
        set after it is later: the timer then wakes the table early, once, and the wait
        starts again). Measured alone, a timer made and cancelled for every wait cost about
        3 us a wait, and ``asyncio.timeout`` (a context manager, the task's cancellation)
        about 6, more than the wait itself (docs/performance.md); ``wait_for`` makes a task
        of every wait."""
        queue = self.queue
        if queue.empty():
            timeout = self._wakeup()
            if timeout is not None:
                if timeout <= 0:
                    return None
                self._wake_within(timeout)
            item = await queue.get()
        else:
            item = queue.get_nowait()
        return None if item is WAKE else item

    def _wake_within(self, timeout: float) -> None:
        """Have ``WAKE`` put on the queue within ``timeout`` seconds (``_next_input``)."""
        loop = asyncio.get_running_loop()
        at = loop.time() + timeout
        timer = self.wake_timer
        if timer is not None and timer.when() <= at:
            return
        if timer is not None:
            timer.cancel()
        self.wake_timer = loop.call_at(at, self._wake)

    def _wake(self) -> None:
        self.wake_timer = None
        self.queue.put_nowait(WAKE)

    def _wakeup(self) -> float | None:
        """Seconds until something is due without any input (``clock.wakeup``); while the
        database fails, only the next try (the clocks are paused). None once the table is
        stopping: it makes no move (``_drive``), so a time already due would wake it at once
        for ever, never yielding to the stop that is to reach it through its queue."""
        if self.stopping:
            return None
        empty = self.empty_since
        return wakeup(
            sources.time.monotonic(),
            self.clock,
            playing=self.state == "playing" and self.match is not None,
            seats=self.seats,
            disconnected_seconds=self.timers.disconnected_seconds,
            release=self._next_release(),  # delayed spectators are sent their due even so
            end_shown=self.end_shown_at if self.end_held() else None,
            empty_due=None if empty is None else empty + self.close_when_empty,
            retry_at=self.durable.pause.retry_at if self.durable.pause.down else None,
        )

    async def _handle(self, item: _Input) -> None:
        peer = item.peer
        try:
            if isinstance(item, JoinInput):
                await self._join(item)
            elif isinstance(item, LeaveInput):
                await self._leave(item)
            elif isinstance(item, AddBotsInput):
                await self._add_bots(item)
            elif isinstance(item, WatchInput):
                self._watch(item)
            elif isinstance(item, SyncInput):
                self._attach_seated(peer)
                if peer is None or peer not in self.peers:
                    raise LobbyError("not_seated", f"you neither sit at nor watch table {self.id}")
                if self.settings.spectator_delay_seconds and self.peers[peer] is None:
                    self._delayed_view(peer, item.reply_to, answer=TableInfo)
                elif self.match is None or self.match.hand is None:
                    peer.send(encode(TableInfo(self.summary()), item.reply_to))  # nothing dealt
                else:
                    self._send_update(peer, self.peers[peer], [], full=True, reply_to=item.reply_to)
            elif isinstance(item, PlayInput):
                self._attach_seated(peer)
                await self._play(item)
            elif isinstance(item, AnalyzeInput):
                self._analyze(item)
            elif isinstance(item, NextHandInput):
                self._has_read(item)
            elif isinstance(item, GoneInput):
                self._gone(item)
            elif isinstance(item, BackInput):
                self._back(item)
            elif isinstance(item, ReplaceInput):
                await self._replace(item)
        except LobbyError as exc:
            if peer is not None:
                peer.send(refusal(exc, item.reply_to))
            if isinstance(item, ReplaceInput):
                log.warning("table %s: seat %s not replaced: %s", self.id, item.seat, exc.reason)
                if item.done is not None and not item.done.done():
                    item.done.set_exception(exc)

    async def _play(self, item: PlayInput) -> None:
        peer = item.peer
        assert peer is not None
        player = self.seat_of(peer.username)
        dealt = self.match is not None and self.match.hand is not None
        refusal = play_refusal(self.id, player, self.peers.get(peer), dealt and self.playing)
        if refusal is not None:
            raise refusal
        assert player is not None
        try:
            await self._play_stored(item, peer, player)
        except StoreDown:
            self.refused[player] = self.seq  # asked again once the table resumes
            raise

    async def _play_stored(self, item: PlayInput, peer: Peer, player: int) -> None:
        """Take ``item``, the seated ``player``'s action, once the database works."""
        if not await self._catch_up(now=True):
            raise StoreDown(
                self.id,
                f"table {self.id} cannot store actions now (database unavailable): "
                "your action was not taken and nothing changed; try again",
            )
        if self._core().stale(item.seq):
            peer.send(
                error(
                    "stale",
                    f"that answers update {item.seq}; the table is at {self.seq}",
                    item.reply_to,
                )
            )
            self._send_update(peer, player, [], full=True)
            return
        try:
            if self.stamp_updates:
                self.serving = item.received
            await self._apply(player, item.action)
        except IllegalAction as exc:
            peer.send(error(exc.code, str(exc), item.reply_to))
        finally:
            self.serving = None
        observer = self.observer
        if observer is not None and item.received is not None and self.seq != item.seq:
            # Its update went out (not held by a claim window, nor by the database).
            observer.update_sent(sources.time.monotonic() - item.received)

    async def _drive(self) -> None:
        """Play for whoever the server plays for, start hands, finish the match; while the
        database fails, only try it again when due. Nothing once the table is stopping."""
        if self.stopping or not await self._catch_up():
            return
        full = all(s is not None for s in self.seats)
        if self.state == "waiting" and full:
            # Again, if the database failed the first time; or a table made full (the
            # matchmaking queue's), which nobody joined.
            await self._start_match()
        if self.state != "playing" or self.match is None:
            return
        match = self.match
        while not self.stopping:
            if self.durable.pause.down:
                return  # paused: _wakeup knows when to try again
            if self.lease is not None and not self.lease.held():
                return  # its node may have lost it: _run waits until it knows (_owned)
            step = self._core().step(sources.time.monotonic(), sources._now())
            if isinstance(step, FinishMatch):
                await self._finish_match()
                return
            if isinstance(step, StopAtCap):
                match.stop()  # the match finishes at the next step, with the scores so far
                log.info(
                    "table %s: time cap %s passed: match %s stops after %s hands",
                    self.id,
                    iso(self.settings.ends_at),
                    self.match_id,
                    len(match.records),
                )
                continue
            if isinstance(step, DealHand):
                self._start_hand()
                continue
            if isinstance(step, CloseWindow):
                await self._close_claims()
                continue
            if not isinstance(step, AutoPlay):
                return  # idle: _wakeup knows when something is due
            hand = match.hand
            for player in step.players:
                if match.hand is not hand or hand is None or player not in hand.awaiting():
                    break
                action = self._auto_action(player)
                try:  # a person's seat: the log says the server played it for her
                    await self._apply(player, action, stand_in=stands_in(self.seats[player]))
                except StoreDown:
                    return  # paused; played again once the database works
            if self._core().paced(sources.time.monotonic(), step.answering):
                return
            await asyncio.sleep(0)  # let connections breathe between automatic moves
            if not self.queue.empty():
                return  # inputs first (a player coming back, a stop); _run drives again

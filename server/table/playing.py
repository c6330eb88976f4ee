"""The match at a table: ``Playing`` checks, stores, applies and tells each action
(``TableCore`` proposes, ``Durable`` stores, only then is it applied), deals hands,
closes claim windows, plays for seats, starts and finishes the match, pauses while the
database fails, and answers ``analyze`` (the playing aids)."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

from engine import analysis
from engine.actions import Action
from engine.bots import safe_action
from engine.table import Phase, View
from server.accounts import RateLimited
from server.messages.outbound import Analysis, Commit, Error, MatchEnd, Reveal, TableInfo, Update
from server.protocol import encode, error
from server.table import sources
from server.table.clock import readers
from server.table.core import (
    Append,
    auto_action,
    seat_bot,
    stand_in_level,
)
from server.table.durable import CREATE, FINISH, ROW
from server.table.errors import LobbyError, StoreDown
from server.table.inputs import AnalyzeInput, NextHandInput
from server.table.ports import Peer
from server.table.seats import HUMAN
from server.table.showing import Showing

log = logging.getLogger("guobiao.table")


class Playing(Showing):
    """A table playing its match (the module's docstring)."""

    async def _apply(self, player: int, action: Action, *, stand_in: bool = False) -> None:
        """Check, store, apply, tell: the order that makes database failures and crashes
        harmless. ``stand_in``: the server plays ``action`` for the person whose seat it is
        (``core.stands_in``; the log says so).

        The core proposes the append (``TableCore.propose``: a listed action, nothing
        waiting for the database) and applies it only once it is stored
        (``TableCore.stored``), so memory never holds an action the log lacks. A failed
        append raises ``StoreDown`` having changed nothing, and pauses the table
        (``Durable.failed``). A hand's end is sent only once its record is stored too.
        """
        assert self.match_id is not None
        append = self._core().propose(player, action, stand_in=stand_in)
        # Committed or not? A connection lost during the commit leaves it unknown: the
        # log is asked (``Durable.reconcile``) before anything else is written.
        stored = await self.durable.append(
            self.store,
            self.match_id,
            append.seq,
            append.hand_no,
            append.player,
            append.action.to_dict(),
            stand_in=append.stand_in,
        )
        if not stored:
            raise StoreDown(
                self.id,
                f"table {self.id} could not store that action (database unavailable): "
                "it was not taken and nothing changed; try again",
            )
        self._stored(append)
        await self._tell()

    def _stored(self, append: Append) -> None:
        """Apply the stored ``append``; what it shows waits in ``durable`` for ``_tell``."""
        applied = self._core().stored(append)
        self.log_seq = append.seq
        if self.observer is not None:
            self.observer.action_applied()
        self.durable.held(applied.events, applied.record)

    async def _tell(self) -> bool:
        """Store the finished hands' records, then send what was held back; False (the
        table paused) if the database failed."""
        durable = self.durable
        if not await durable.store_hands(self.store, self.match_id):
            return False
        events, durable.untold = durable.untold, []
        if events:
            self._publish(events)
        if durable.untold_hand_over:
            durable.untold_hand_over = False
            self._hand_over()
        return True

    async def _catch_up(self, now: bool = False) -> bool:
        """While paused: when the next try is due (at once if ``now``), settle the append
        that failed, save the table's row (a write, so the pause ends only once writes
        work again), then store and send what was held back. True when the table is no
        longer paused."""
        durable = self.durable
        if not durable.pause.down:
            self._ask_again()
            return True
        began = sources.time.monotonic()
        if not now and not durable.pause.due(began):
            return False
        step = f"saving table {self.id} on its retry"
        try:
            if durable.unsure_seq is not None:
                assert self.match_id is not None
                step = f"asking whether table {self.id}'s move {durable.unsure_seq} was stored"
                found = await durable.reconcile(self.store, self.match_id)
                if found is not None:  # it committed after all: apply it now
                    action = Action.from_dict(found.action)
                    self._stored(
                        Append(found.seq, found.hand_no, found.player, action, found.stand_in)
                    )
                step = f"saving table {self.id} on its retry"
            await self.store.save_table(self.row())
        except Exception as exc:
            durable.failed(step, exc, kind=ROW, began=began)  # (the log says which step)
            return False
        durable.unsaved = False
        durable.worked(ROW)
        if not await self._tell():
            return False
        self._ask_again()
        return True

    def _ask_again(self) -> None:
        """The table goes on after a pause: each player whose move the database refused
        while that update still stands, and who is still to decide, gets it again (whole,
        with her deadline, moved on by the pause). Her client, told ``internal_error``,
        answers it; so a move is not lost, nor her time run out, because she was told to
        try again and had no way to know when (a full disk takes the table's row before its
        moves: if her move fails again, the table pauses again from here, and her time
        with it)."""
        if not self.refused:
            return
        refused, self.refused = self.refused, {}
        match = self.match
        if match is None or match.hand is None:
            return
        waiting = match.hand.awaiting()
        for peer, player in list(self.peers.items()):
            if player is not None and refused.get(player) == self.seq and player in waiting:
                self._send_update(peer, player, [], full=True)

    async def _save(self) -> None:
        """Save the table's row; if the database fails, the table pauses and saves later."""
        await self.durable.save(self.store, self.row())

    async def _close_claims(self) -> None:
        """End the claim window: the table goes on as the answers decide. The close is no
        one's action and is not stored (the stored answers replay to the same state); what
        it shows is sent once any hand it finished is stored (``_tell``)."""
        match = self.match
        assert match is not None
        self.clock.close_window()
        records_before = len(match.records)
        events = match.close_claims()
        finished = match.records[-1] if len(match.records) > records_before else None
        self.durable.held(events, finished)
        await self._tell()

    def _auto_action(self, player: int) -> Action:
        """What the server plays for ``player`` (``core.auto_action``); a bot failure
        never stops the table."""
        match = self.match
        assert match is not None and match.hand is not None
        try:
            seat = self.seats[player]
            bot = self.bots.get(player)
            if bot is None:
                stand_in = stand_in_level(self.settings, self.bot_levels)
                bot = self.bots[player] = seat_bot(seat, player, stand_in)
            return auto_action(match.hand.view(player), seat, bot)
        except Exception:
            log.exception("table %s: the automatic player failed; playing safe", self.id)
            return safe_action(match.hand.view(player))

    def _start_hand(self) -> None:
        match = self.match
        assert match is not None
        hand_no = match.hand_index + 2
        self._broadcast_text(encode(Commit(self.id, hand_no, self.hand_commitment(hand_no))))
        self.history = []
        self.clock.new_hand()
        events = match.start_hand()
        self._changed()  # the hand's number
        self._publish(events)

    def _hand_over(self) -> None:
        match = self.match
        assert match is not None
        if self.settings.reveals:  # (else the tournament publishes them: ``hand_reveals``)
            self._broadcast_text(encode(Reveal(self._reveal(match.hand_index + 1))))
        self.clock.hand_over(
            sources.time.monotonic(),
            self.timers.hand_pause_seconds,
            readers(self.peers, self.seats),
            0.0 if match.over else self.timers.result_seconds,
        )

    def _has_read(self, item: NextHandInput) -> None:
        """The peer's player has read the result of hand ``hand_no``: the next hand need not
        wait for her. A ``next_hand`` for another hand (late, or early) changes nothing."""
        peer = item.peer
        player = self.peers.get(peer) if peer is not None else None
        if player is None:
            raise LobbyError("not_seated", f"you do not sit at table {self.id}")
        match = self.match
        if match is None or match.hand is None:
            return
        if match.hand.phase is Phase.OVER and match.hand_index + 1 == item.hand_no:
            self.clock.has_read(player)

    async def _start_match(self) -> None:
        """Create the match in the database, then start it. If the database fails, the
        table stays waiting and ``_drive`` tries again with the same seed and salt: the store
        gives back the match a failed try made if it did commit (``create_match``: a match is
        named by its table, seed and salt). Unless the seats changed meanwhile (a player left
        while it waited, another sat): the match of other players is another match, with a
        seed and salt of its own."""
        seats = tuple(s.label if s else None for s in self.seats)
        if self.new_match is None or self.new_match[2] != seats:
            seed = (
                self.settings.seed if self.settings.seed is not None else sources.new_match_seed()
            )
            self.new_match = (seed, sources.secrets.token_bytes(32), seats)  # a salt of its own
        seed, salt, _ = self.new_match
        rules = self.preset
        began = sources.time.monotonic()
        try:
            match_id = await self.store.create_match(
                self.id,
                self.settings.rules,
                seed,
                salt.hex(),
                list(seats),
                datetime.now(UTC),
                rule_options=rules.to_dict(),
                hands_planned=self.settings.hands,
                **({"rated": True} if self.settings.rated else {}),
            )
        except Exception as exc:
            self.durable.failed(
                f"creating the match of table {self.id}", exc, kind=CREATE, began=began
            )
            return
        self.durable.worked(CREATE)
        self.new_match = None
        self.salt = salt
        self.match_id = match_id
        self.match = sources.Match(
            seed, rules, self.match_id, hands=self.settings.hands, hold_claims=True
        )  # every table holds its claim windows: docs/protocol.md, "The claim window"
        self.state = "playing"
        self.seq = 0
        self.log_seq = 0
        self._changed()
        await self._save()  # if it fails, restore still finds the match by its table
        self._broadcast_text(encode(TableInfo(self.summary())))
        log.info("match %s started at table %s", self.match_id, self.id)

    async def _finish_match(self) -> None:
        """Store the match as finished (its last hand over: ``match.over``, its length
        reached or the match stopped at the time cap), then tell everyone (``match_end``)."""
        match = self.match
        assert match is not None and self.match_id is not None
        addresses = [s.address if s is not None else None for s in self.seats]
        began = sources.time.monotonic()
        try:  # a retry is harmless: a finished match is not finished (nor rated) twice
            finished = await self.store.finish_match(
                self.match_id, list(match.scores), sources._now(), addresses
            )
            ratings = list(finished.rating_changes)
        except Exception as exc:
            self.durable.failed(f"finishing match {self.match_id}", exc, kind=FINISH, began=began)
            return
        self.durable.worked(FINISH)
        self.state = "finished"
        self.clock.match_over()
        self.ended = encode(MatchEnd(self.id, self.match_id, list(match.scores), ratings))
        self._broadcast_text(self.ended)
        delay = self.settings.spectator_delay_seconds
        if delay:  # the end was kept for them just now: shown them once it is due
            self.end_shown_at = self.spectators.due(delay)
        log.info("match %s finished at table %s: %s", self.match_id, self.id, match.scores)
        # Those away are told when they come back: kept for them before the host hears the
        # table finished (``_changed``: from then on a ``resume`` asks the host, not the
        # table), with no wait between. (Before the row's save: stored finished, the match
        # is what a client may be told.)
        here = set(self.peers.values())
        for player, seat in enumerate(self.seats):
            if seat is not None and seat.kind == HUMAN and player not in here:
                self.host.tell_later(seat.name, self._end_frames(player))
        self._changed()
        await self._save()

    def _end_frames(self, player: int) -> list[str]:
        """What the player of seat ``player``, away as her match ended (a lost connection, a
        restart that finished it), is told when she comes back, as a live table would have
        told her: the table's summary (``finished``), her last hand as a full update (every
        protocol version's: a full update carries the seats), its result in its events, its
        ``reveal`` where the table reveals (its fairness is checked as if seen live), and the
        ``match_end``."""
        assert self.ended is not None
        payload = self._update_payload(player, [], full=True)
        last: list[str] = []
        if payload is not None:
            last.append(encode(Update(payload)))
            if self.settings.reveals:
                last.append(encode(Reveal(self._reveal(payload["hand_no"]))))
        return [encode(TableInfo(self.summary())), *last, self.ended]

    async def _close_empty(self) -> None:
        """Close the table: it waited ``close_when_empty`` seconds with no person at it. It
        is stored as finished (no match), its spectators get its summary saying so, and the
        host forgets it."""
        log.info("table %s closed: nobody sat at it for %g s", self.id, self.close_when_empty)
        self.state = "finished"
        self._changed()
        await self._save()
        text = encode(TableInfo(self.summary()))
        for peer in self.peers:  # spectators: nobody sits at it
            peer.send(text)
        self.peers.clear()
        if self.observer is not None:
            self.observer.empty_table_closed()

    def _analyze(self, item: AnalyzeInput) -> None:
        """Start the analysis of the peer's own view (off the event loop: with wild tiles it
        takes up to a few hundred milliseconds); ``_answer_analysis`` sends it. One runs at a
        time per connection, within the connection's bucket (``ANALYSES_PER_SECOND``)."""
        peer = item.peer
        assert peer is not None
        player = self.seat_of(peer.username)
        if player is None or self.peers.get(peer) != player:
            raise LobbyError(
                "not_seated", f"only a player seated at table {self.id} may analyze its hand"
            )
        if not self.settings.aids:
            raise LobbyError("aids_off", f"table {self.id} allows no playing aids")
        match = self.match
        hand = match.hand if match is not None else None
        if hand is None or hand.phase is Phase.OVER or self.state != "playing":
            raise LobbyError("hand_over", "no hand is being played at this table")
        if self.durable.behind():  # the hand is ahead of what the seats were told
            raise StoreDown(self.id, f"table {self.id} is waiting for its database; try again")
        key = id(peer)  # a closed peer's id may be reused: no harm
        running = key in self.analysing
        wait = 1.0 if running else self.analyses.take(key)
        if wait:
            refusal = RateLimited(
                "your last analyze request is still being answered"
                if running
                else "too many analyze requests",
                wait,
            )
            answer = Error(refusal.code, refusal.reason, refusal.retry_after)
            peer.send(encode(answer, item.reply_to))
            return
        task = asyncio.create_task(
            self._answer_analysis(peer, player, (self.seq, hand.view(player)), item.reply_to)
        )
        self.analysing[key] = task
        task.add_done_callback(lambda _: self.analysing.pop(key, None))

    async def _answer_analysis(
        self, peer: Peer, player: int, state: tuple[int, View], reply_to: str | int | None
    ) -> None:
        """Analyse the view of update ``seq`` (``state``; a view is immutable: safe in a
        worker thread) and send it, unless the peer no longer sits there (it logged out)."""
        seq, view = state
        try:
            found = await asyncio.to_thread(analysis.analyze, view)
        except Exception:
            log.exception("table %s: analysing player %s's hand failed", self.id, player)
            peer.send(error("internal_error", "the analysis failed (logged); try again", reply_to))
            return
        if self.peers.get(peer) == player:
            peer.send(encode(Analysis({"table": self.id, "seq": seq, **found.to_dict()}), reply_to))

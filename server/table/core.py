"""The table's rules over its match, sans I/O: given the time, what happens next.

``TableCore`` sees a table's match, seats, clocks and settings (the owner task, ``task``,
hands it its own, and carries out what it decides) and never awaits, sends or writes:

- ``step(now, wall)``: what the table does next with no input, as one ``Step``: finish
  the match (``FinishMatch``), stop it at its time cap (``StopAtCap``), deal the next
  hand (``DealHand``), close the claim window (``CloseWindow``), play for some seats
  (``AutoPlay``: bots, players away for ``disconnected_seconds``, everyone still deciding
  once the deadline passed), or nothing until an input or the next wakeup (``Idle``:
  the pause between hands, the claim window's least time, a decision's clock). It moves
  the clocks as it goes (a new decision starts a new clock; a claim window opens).
- ``propose(player, action)``: an action to store (``Append``), or why not
  (``IllegalAction``; ``StoreDown`` while the database is behind); ``stored(append)``
  applies it, and only then. So an action is applied only once its append is stored:
  persist-before-apply is this interface, not a habit of the caller.
- ``play_refusal`` and ``stale``: why a player's ``play`` is refused before anything (not
  seated, no hand, a stale ``seq``); ``paced``: whether the table, nobody watching, slows
  down.
- ``auto_action``: what the server plays for a seat (the one place that choice is made),
  ``seat_bot`` and ``stand_in_level``: which bot, at which level, plays it.

The wall-clock ``wall`` (UTC) is only compared with a time cap; ``now`` is monotonic.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from engine.actions import Action, ActionKind, Event
from engine.bots import Bot, make_bot, safe_action
from engine.errors import IllegalAction
from engine.match import HandRecord, Match
from engine.table import Phase, View
from server.config import BotsSection, TimersSection
from server.table.clock import TableClock, capped, nobody_watches, plays_itself
from server.table.errors import LobbyError, StoreDown
from server.table.seats import BOT, HUMAN, Seat
from server.table.settings import TableSettings

# --------------------------------------------------------------- steps ---


@dataclass(frozen=True, slots=True)
class Idle:
    """Nothing is due before an input or the next wakeup (``clock.wakeup``)."""


@dataclass(frozen=True, slots=True)
class FinishMatch:
    """The match's last hand is over: store the match as finished, then tell everyone."""


@dataclass(frozen=True, slots=True)
class StopAtCap:
    """The time cap passed between two hands: no hand is dealt; the match stops with the
    scores so far (``Match.stop``) and finishes."""


@dataclass(frozen=True, slots=True)
class DealHand:
    """The pause between hands is over: deal the next one."""


@dataclass(frozen=True, slots=True)
class CloseWindow:
    """Every answer to the claim window is in and its least time has passed: close it."""


@dataclass(frozen=True, slots=True)
class AutoPlay:
    """The server plays for ``players`` (in order, while each still decides in this hand);
    ``answering``: they answer a claim window (such moves are never paced)."""

    players: tuple[int, ...]
    answering: bool


Step = Idle | FinishMatch | StopAtCap | DealHand | CloseWindow | AutoPlay


@dataclass(frozen=True, slots=True)
class Append:
    """Store action ``seq`` of the match (hand ``hand_no``, by ``player``); it is applied
    once stored (``TableCore.stored``). ``stand_in``: the server plays it for the person
    whose seat it is (``stands_in``), which the log says so a review leaves it out."""

    seq: int
    hand_no: int
    player: int
    action: Action
    stand_in: bool = False


@dataclass(frozen=True, slots=True)
class Applied:
    """What a stored action did: its ``events``, and the hand's ``record`` if it ended one."""

    events: list[Event]
    record: HandRecord | None


# ---------------------------------------------------------------- core ---


@dataclass(slots=True)
class TableCore:
    """A table's rules over its state (the module's docstring). ``seq`` numbers the
    table's updates, ``log_seq`` the match's stored actions; ``behind``: something applied
    or attempted still waits for the database (no new action until it is stored)."""

    table: str  # its id (in refusals)
    match: Match
    seats: list[Seat | None]
    clock: TableClock
    settings: TableSettings
    timers: TimersSection
    seq: int
    log_seq: int
    behind: bool = False

    def step(self, now: float, wall: datetime) -> Step:
        """What the table does next with no input, at monotonic ``now`` (and UTC ``wall``)."""
        match, clock = self.match, self.clock
        hand = match.hand
        if hand is not None and hand.phase is Phase.OVER and match.over:
            return FinishMatch()
        if clock.paused(now):
            return Idle()  # between hands, or pacing an unattended table
        if hand is None or hand.phase is Phase.OVER:
            if hand is not None and capped(self.settings.ends_at, wall):
                return StopAtCap()
            return DealHand()
        answering = match.hold_claims and hand.phase in (Phase.CLAIM, Phase.ROB)
        if answering:
            # (Opened by the last move; no least time where no person sits: bots learn
            # nothing from it, and their answers come at once either way.)
            people = any(s is not None and s.kind == HUMAN for s in self.seats)
            clock.open_window(now, self.settings.claim_window_ms if people else 0)
            if hand.claims_answered():
                if clock.window_holds(now):  # nobody decides: only the window is due
                    return Idle()
                return CloseWindow()
        clock.decide(self.seq, now, self.settings.turn_seconds)  # a new one: a new clock
        waiting = hand.awaiting()
        grace = self.timers.disconnected_seconds
        auto = [p for p in waiting if plays_itself(self.seats[p], now, grace)]
        if not auto and clock.expired(now):
            auto = waiting  # time is up: the server plays for everyone still deciding
        if not auto:
            return Idle()
        return AutoPlay(tuple(auto), answering)

    def paced(self, now: float, answering: bool) -> bool:
        """After automatic moves: whether the table slows down (and its clock says until
        when) because no person seated is there to watch. Abandoned tables must not take
        the CPU from live ones; answers to a claim window are never paced (a spectator
        would see it last longer when somebody could claim)."""
        pace = self.timers.unattended_move_seconds
        if pace and nobody_watches(self.seats) and not answering:
            self.clock.pace(now, pace)
            return True
        return False

    def stale(self, seq: int) -> bool:
        """Whether a ``play`` answering update ``seq`` comes too late: the table moved on
        (the player gets the error ``stale`` and the table as it is)."""
        return seq != self.seq

    def propose(self, player: int, action: Action, *, stand_in: bool = False) -> Append:
        """The append that would take ``action`` of ``player`` (``stand_in``: played for
        her by the server, ``stands_in``): it must be one the engine lists, and nothing
        may wait for the database. ``IllegalAction`` (the engine's reason,
        ``HandState.refusal``: asked of the hand without changing it, so the live state is
        never touched by an action the log lacks; it was asked of a deep copy of the hand,
        2.5 ms a refusal, which a seated player sending illegal moves could have the server
        make twenty times a second) or ``StoreDown`` otherwise; nothing changes either
        way."""
        hand = self.match.hand
        if hand is None:
            raise IllegalAction("no_hand", "no hand has been dealt yet")
        refused = hand.refusal(player, action)
        if refused is not None:
            raise refused
        if self.behind:
            raise StoreDown(
                self.table, f"table {self.table} is waiting for its database; try again"
            )
        return Append(self.log_seq + 1, self.match.hand_index + 1, player, action, stand_in)

    def stored(self, append: Append) -> Applied:
        """``append`` is stored: apply it (it was listed as legal: accepted)."""
        match = self.match
        assert append.seq == self.log_seq + 1, "actions are stored in order"
        records_before = len(match.records)
        events = match.apply(append.player, append.action)
        self.log_seq = append.seq
        finished = match.records[-1] if len(match.records) > records_before else None
        return Applied(events, finished)


def play_refusal(
    table: str, player: int | None, attached: int | None, dealt: bool
) -> LobbyError | None:
    """Why a ``play`` at table ``table`` by the player of seat ``player`` (None: she sits
    nowhere there), whose connection plays seat ``attached``, is refused before it is looked
    at; None if it is not. ``dealt``: a hand of the match is being played."""
    if player is None or attached != player:
        return LobbyError("not_seated", f"you do not sit at table {table}")
    if not dealt:
        return LobbyError("hand_over", "no hand is being played at this table")
    return None


# ----------------------------------------------------------- auto-play ---


def auto_action(view: View, seat: Seat | None, bot: Bot) -> Action:
    """What the server plays for a seat, from its ``view``: for a person there but out of
    time, the simplest safe move (pass, or discard the drawn tile); else (a bot, a player
    away) ``bot``'s choice.

    Every choice depends only on the stored match (its seed and log give the view): bots
    are pure (``engine.bots``: no randomness, memos only of pure functions), so a bot kept
    for a seat carries no state between decisions that could change them, and a table
    restored after a crash plays on exactly as it would have. A bot that ever needs
    randomness must seed it per decision from the match seed and the log position, never
    carry it across decisions."""
    if seat is not None and seat.kind == HUMAN and seat.connected:
        safe = safe_action(view)
        if safe.kind is ActionKind.PASS or (
            safe.kind is ActionKind.DISCARD and safe.tile == view.drawn
        ):
            return safe
    return bot.choose(view)


def stands_in(seat: Seat | None) -> bool:
    """Whether a move the server plays for ``seat`` stands in for a person (her seat, she
    away or out of time): logged as ``stand_in``, and not reviewed as her decision. A bot
    seat's moves are the bot's own."""
    return seat is not None and seat.kind == HUMAN


def seat_bot(seat: Seat | None, player: int, stand_in: str) -> Bot:
    """The bot that plays for ``player``'s seat: its own if a bot sits there, else (a
    person's seat, absent or out of time) the ``stand_in`` level (``stand_in_level``);
    seeded by the seat (bots are pure, the seed only names it)."""
    name = seat.name if seat is not None and seat.kind == BOT else stand_in
    return make_bot(name, seed=player)


def stand_in_level(settings: TableSettings, levels: BotsSection) -> str:
    """The level that plays an absent or timed-out person's seat at a table with these
    ``settings``: at a rated or a tournament table, where the result moves ratings and
    standings, ``[bots] stand_in`` (the strongest by default, so leaving never hands the
    others easy points); at any other, ``[bots] casual_stand_in`` (normal by default: the
    level a casual table is played at when nobody chose one)."""
    if settings.rated or settings.tournament is not None:
        return levels.stand_in
    return levels.casual_stand_in

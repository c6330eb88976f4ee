"""A table's clocks, with the time passed in: where "when is the claim-window timer?" has
its answer.

``TableClock`` holds a table's timers (monotonic seconds): the ``deadline`` of the decision
in play (set for update ``deadline_seq``: a new update that asks anyone to act starts a new
clock of ``turn_seconds``), ``pause_until`` (the pause between hands, or the pace of a table
nobody seated watches), ``reading`` (the seats whose players still read the hand just over:
the next hand waits for them until ``reading_until``) and ``window_until`` (the least end of
an open claim window). Its methods take the time ``now`` and never read a clock, so a test
moves time by hand.

The free functions decide the rest: who is waited for between hands (``readers``),
whether the server plays for a seat (``plays_itself``: a bot, or a person away for
``disconnected_seconds``), whether a time cap has passed (``capped``, asked only between
hands), and how long a table's task may sleep (``wakeup``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from server.table.ports import Peer
from server.table.seats import BOT, HUMAN, Seat

# A client of protocol version 3 or later says when its player has read a hand's result
# (``next_hand``), and the next hand waits for it (docs/protocol.md, "Between hands").
READ_VERSION = 3


@dataclass(slots=True)
class TableClock:
    """The timers of one table (see the module's docstring)."""

    deadline: float | None = None  # when the server plays for those still deciding
    deadline_seq: int = -1  # the update the deadline belongs to
    pause_until: float = 0.0
    window_until: float | None = None  # when the open claim window may close
    reading: set[int] = field(default_factory=set)  # who still reads the hand just over
    reading_until: float = 0.0  # the most the next hand waits for them

    def decide(self, seq: int, now: float, turn_seconds: int) -> float:
        """The deadline of update ``seq``'s decision: a new clock of ``turn_seconds`` from
        ``now`` if it is a new decision, else the one running."""
        if self.deadline is None or self.deadline_seq != seq:
            self.deadline = now + turn_seconds
            self.deadline_seq = seq
        return self.deadline

    def expired(self, now: float) -> bool:
        """Whether the decision's time is up: the server plays for everyone still deciding."""
        return self.deadline is not None and now >= self.deadline

    def open_window(self, now: float, claim_window_ms: int) -> None:
        """A claim window is open (the last move opened it, if none was): it may close
        ``claim_window_ms`` after it opened, once every answer is in."""
        if self.window_until is None:
            self.window_until = now + claim_window_ms / 1000

    def window_holds(self, now: float) -> bool:
        """Whether the open window must stay open though every answer is in: its least
        time has not passed. Nobody decides meanwhile, so no deadline runs."""
        if self.window_until is not None and now < self.window_until:
            self.deadline = None
            return True
        return False

    def close_window(self) -> None:
        self.window_until = None

    def new_hand(self) -> None:
        """A hand is dealt: no decision, no window and no reader carry over."""
        self.deadline = None
        self.window_until = None
        self.reading.clear()

    def hand_over(
        self,
        now: float,
        hand_pause_seconds: float,
        readers: Iterable[int] = (),
        result_seconds: float = 0.0,
    ) -> None:
        """A hand ended: nobody decides, and the next one waits ``hand_pause_seconds``, and
        besides for the players of seats ``readers`` to say they have read its result
        (``has_read``), though never more than ``result_seconds``."""
        self.deadline = None
        self.pause_until = now + hand_pause_seconds
        self.reading = set(readers) if result_seconds > 0 else set()
        self.reading_until = now + result_seconds

    def has_read(self, player: int) -> None:
        """The player of seat ``player`` has read the result (or left): not waited for."""
        self.reading.discard(player)

    def match_over(self) -> None:
        self.deadline = None

    def pace(self, now: float, seconds: float) -> None:
        """Nobody seated watches: the next automatic move waits ``seconds``."""
        self.pause_until = max(self.pause_until, now + seconds)

    def paused(self, now: float) -> bool:
        """Whether the table waits (between hands, for its readers, or pacing an
        unattended table)."""
        return now < self.pause_until or (bool(self.reading) and now < self.reading_until)

    def move(self, since: float, paused: float, seats: Iterable[Seat | None]) -> None:
        """The table was paused ``paused`` seconds from ``since`` (its database failed, its
        lease was in doubt): its clocks, and its away players' (``seats``), move on by that
        much, so no one's time ran out meanwhile."""
        if self.deadline is not None:
            self.deadline += paused
        if self.pause_until > since:
            self.pause_until += paused
        if self.reading_until > since:
            self.reading_until += paused
        for seat in seats:
            if seat is not None and seat.away_since is not None:
                seat.away_since += paused


def plays_itself(seat: Seat | None, now: float, disconnected_seconds: float) -> bool:
    """Whether the server plays for ``seat`` without waiting for a deadline: a bot, or a
    person away for ``disconnected_seconds`` (a seat nobody holds too)."""
    if seat is None or seat.kind == BOT:
        return True
    away = seat.away_since  # (the sum ``wakeup`` wakes for: the same comparison)
    return away is not None and now >= away + disconnected_seconds


def readers(peers: Mapping[Peer, int | None], seats: Sequence[Seat | None]) -> set[int]:
    """The seats whose player will say she has read a hand's result: a person there on a
    connection of protocol version ``READ_VERSION`` or later (a spectator, a bot, a player
    away or on an older client is never waited for)."""
    return {
        player
        for peer, player in peers.items()
        if player is not None
        and peer.version >= READ_VERSION
        and (seat := seats[player]) is not None
        and seat.kind == HUMAN
        and seat.connected
    }


def capped(ends_at: datetime | None, now: datetime) -> bool:
    """Whether the time cap ``ends_at`` has passed at ``now`` (UTC): asked only between two
    hands, just before the next would be dealt, so the hand in play always ends."""
    return ends_at is not None and now >= ends_at


def nobody_watches(seats: Sequence[Seat | None]) -> bool:
    """Whether no person seated is there: the table plays on, but paced."""
    return not any(s and s.kind == HUMAN and s.connected for s in seats)


def wakeup(
    now: float,
    clock: TableClock,
    *,
    playing: bool,
    seats: Sequence[Seat | None],
    disconnected_seconds: float,
    release: float | None = None,
    end_shown: float | None = None,
    empty_due: float | None = None,
    retry_at: float | None = None,
) -> float | None:
    """Seconds from ``now`` until something is due without any input (None: nothing is):
    a delayed spectator's ``release``, the moment a finished match's end is shown its
    delayed spectators (``end_shown``: the table is listed no more), the close of a table
    left empty (``empty_due``) and, while the match is ``playing``, the end of the pause
    (between hands, or pacing an unattended table) or else the deadline, the end of the
    claim window and an away player's seat being taken over. While the database fails
    (``retry_at``: its next try), only that try, the release and the end shown (the clocks
    are paused).

    It wakes for exactly what ``TableCore.step`` acts on, compared the same way: a time
    already past that the step does not act on (a spent deadline during a pause, say)
    would wake the task at once, find nothing to do, and wake it at once again."""
    if retry_at is not None:
        retry = min(t for t in (release, end_shown, retry_at) if t is not None)
        return max(0.0, retry - now)
    times = [t for t in (release, end_shown, empty_due) if t is not None]
    if playing and clock.paused(now):
        # Nothing but the pause's end: the step does nothing before it.
        times.append(clock.pause_until if now < clock.pause_until else clock.reading_until)
    elif playing:
        if clock.deadline is not None:
            times.append(clock.deadline)
        if clock.window_until is not None and clock.window_until > now:
            times.append(clock.window_until)
        for seat in seats:
            if seat and seat.kind == HUMAN and seat.away_since is not None:
                due = seat.away_since + disconnected_seconds
                if due > now:  # once due, the table plays for the seat: no more waking
                    times.append(due)
    if not times:
        return None
    return max(0.0, min(times) - now)

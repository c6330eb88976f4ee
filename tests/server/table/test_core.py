"""The table's rules against ``server.table.core.TableCore``, synchronously, with the time
as an input: no event loop, no socket, no sleep. The claim window, away takeover, the
deadline, the time cap, the hand pause, the pace of an unattended table, a stale ``seq``,
a seat replaced mid-match, the auto-play choice and the level of the bot that plays an
absent person's seat, the database pause and persist-before-apply."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.actions import PASS, Action, ActionKind
from engine.bots import BOTS, STRONGEST, make_bot, safe_action
from engine.errors import IllegalAction
from engine.match import Match
from engine.notation import parse_tiles
from engine.rules import MCR
from engine.table import Phase
from server.config import BotsSection, TimersSection
from server.table.clock import TableClock, wakeup
from server.table.core import (
    Append,
    AutoPlay,
    CloseWindow,
    DealHand,
    FinishMatch,
    Idle,
    StopAtCap,
    TableCore,
    auto_action,
    play_refusal,
    seat_bot,
    stand_in_level,
    stands_in,
)
from server.table.errors import StoreDown
from server.table.seats import BOT, HUMAN, Seat
from server.table.settings import TableSettings

# A match whose first hand's dealer (seat 0) may discard 4p, which seat 1 may chow.
SEED, CLAIMED = 2, Action(ActionKind.DISCARD, parse_tiles("4p")[0])
NOW = 1000.0
WALL = datetime(2026, 12, 1, 12, tzinfo=UTC)
TIMERS = TimersSection(
    turn_seconds=20,
    disconnected_seconds=30,
    hand_pause_seconds=2,
    unattended_move_seconds=0.5,
    claim_window_ms=800,
)


def people() -> list[Seat | None]:
    return [Seat(HUMAN, name) for name in ("alice", "bob", "carol", "dan")]


def core_of(
    seats: list[Seat | None] | None = None,
    *,
    hold_claims: bool = True,
    deal: bool = True,
    **settings: object,
) -> TableCore:
    """A core over a new match (its first hand dealt if ``deal``) with four people seated."""
    match = Match(SEED, MCR, 1, hold_claims=hold_claims)
    if deal:
        match.start_hand()
    options = {"turn_seconds": 20, "claim_window_ms": 800, **settings}
    return TableCore(
        "t1",
        match,
        seats if seats is not None else people(),
        TableClock(),
        TableSettings("mcr", **options),  # type: ignore[arg-type]
        TIMERS,
        seq=1,
        log_seq=0,
    )


def stored(core: TableCore, player: int, action: Action) -> None:
    """``action`` proposed, then told stored: the way every action gets in."""
    append = core.propose(player, action)
    core.stored(append)
    core.log_seq = append.seq
    core.seq += 1


def played_out(core: TableCore, now: float) -> float:
    """The hand in play played to its end as the table's task would (its loop in small):
    each step carried out, the time moved on when idle. Returns the time then."""
    hand = core.match.hand
    assert hand is not None
    while hand.phase is not Phase.OVER:
        step = core.step(now, WALL)
        if isinstance(step, AutoPlay):
            for player in step.players:
                if player in hand.awaiting():
                    seat = core.seats[player]
                    stored(
                        core,
                        player,
                        auto_action(hand.view(player), seat, seat_bot(seat, 0, "normal")),
                    )
        elif isinstance(step, CloseWindow):
            core.match.close_claims()
            core.clock.close_window()
        else:
            now += 60
    core.clock.hand_over(now, TIMERS.hand_pause_seconds)
    return now


def dealer(core: TableCore) -> int:
    assert core.match.hand is not None
    (player,) = core.match.hand.awaiting()
    return player


def discard_drawn(core: TableCore) -> tuple[int, Action]:
    """The dealer's discard of its 14th tile (any discard opens a claim window)."""
    player = dealer(core)
    assert core.match.hand is not None
    view = core.match.hand.view(player)
    legal = [a for a in view.legal if a.kind is ActionKind.DISCARD]
    return player, legal[-1]


# ----------------------------------------------------------- persist first ---


def test_a_proposed_action_changes_nothing_until_it_is_stored() -> None:
    core = core_of()
    player, action = discard_drawn(core)
    assert core.match.hand is not None
    before = core.match.hand.view(player).to_dict()
    append = core.propose(player, action)
    assert append == Append(1, 1, player, action)
    assert core.match.hand.view(player).to_dict() == before  # not applied
    assert core.log_seq == 0
    applied = core.stored(append)
    assert applied.events and applied.record is None
    assert core.log_seq == 1 and core.match.hand.view(player).to_dict() != before


def test_an_illegal_action_is_refused_with_the_engines_reason_and_changes_nothing() -> None:
    core = core_of()
    player = dealer(core)
    other = (player + 1) % 4
    assert core.match.hand is not None
    before = core.match.hand.view(None).to_dict()
    with pytest.raises(IllegalAction) as refused:
        core.propose(other, Action(ActionKind.PASS))
    assert refused.value.code
    assert core.match.hand.view(None).to_dict() == before


def test_while_the_database_is_behind_no_action_is_proposed() -> None:
    core = core_of()
    core.behind = True
    player, action = discard_drawn(core)
    with pytest.raises(StoreDown, match="table t1 is waiting for its database"):
        core.propose(player, action)
    assert core.log_seq == 0


def test_a_move_the_server_plays_for_a_person_is_proposed_as_a_stand_in() -> None:
    """Out of time or away, a person's seat is played by the server for her (the log says
    so: her review leaves it out); a bot seat's moves are its own, and so are hers."""
    assert stands_in(Seat(HUMAN, "alice"))  # there, out of time
    assert stands_in(Seat(HUMAN, "alice", connected=False, away_since=NOW))
    assert not stands_in(Seat(BOT, "fast"))
    assert not stands_in(None)
    core = core_of()
    player, action = discard_drawn(core)
    assert core.propose(player, action) == Append(1, 1, player, action, stand_in=False)
    append = core.propose(player, action, stand_in=True)
    assert append == Append(1, 1, player, action, stand_in=True)
    core.stored(append)
    assert core.log_seq == 1


def test_actions_are_stored_in_order() -> None:
    core = core_of()
    player, action = discard_drawn(core)
    with pytest.raises(AssertionError):
        core.stored(Append(2, 1, player, action))  # action 1 was never stored


# ------------------------------------------------------------- the clocks ---


def test_a_person_deciding_gets_a_whole_turn_then_is_played_for() -> None:
    core = core_of()
    player = dealer(core)
    assert core.step(NOW, WALL) == Idle()
    assert core.clock.deadline == NOW + 20
    assert core.step(NOW + 19.9, WALL) == Idle()  # (the same decision: the same clock)
    assert core.step(NOW + 20, WALL) == AutoPlay((player,), answering=False)


def test_a_bot_and_a_seat_away_long_enough_are_played_at_once() -> None:
    seats = people()
    core = core_of(seats)
    player = dealer(core)
    seats[player] = Seat(BOT, "fast")
    assert core.step(NOW, WALL) == AutoPlay((player,), answering=False)
    seats[player] = Seat(HUMAN, "alice", connected=False, away_since=NOW - 29)
    assert core.step(NOW, WALL) == Idle()
    assert core.step(NOW + 1, WALL) == AutoPlay((player,), answering=False)


def test_a_seat_replaced_mid_match_by_a_player_not_yet_there_is_played_after_the_grace() -> None:
    seats = people()
    core = core_of(seats)
    player = dealer(core)
    seats[player] = Seat(HUMAN, "sub", connected=False, away_since=NOW + 10)  # grace: 10 s
    assert core.step(NOW + 39, WALL) == Idle()
    assert core.step(NOW + 40, WALL) == AutoPlay((player,), answering=False)


def test_the_claim_window_holds_until_every_answer_is_in_and_its_time_passed() -> None:
    core = core_of()
    stored(core, 0, CLAIMED)
    hand = core.match.hand
    assert hand is not None and hand.phase in {Phase.CLAIM, Phase.ROB}
    others = hand.awaiting()
    assert others == [1]
    assert core.step(NOW, WALL) == Idle()  # seat 1 decides: the window opened
    assert core.clock.window_until == NOW + 0.8
    for other in others:
        stored(core, other, PASS)
    assert core.step(NOW + 0.5, WALL) == Idle()  # every answer in, the window not over
    assert core.clock.deadline is None  # nobody decides meanwhile
    assert core.step(NOW + 0.8, WALL) == CloseWindow()


def test_answers_to_a_claim_window_are_played_by_the_deadline_unpaced() -> None:
    seats = people()
    core = core_of(seats)
    stored(core, 0, CLAIMED)
    core.step(NOW, WALL)
    assert core.step(NOW + 20, WALL) == AutoPlay((1,), answering=True)
    for i in range(4):
        seats[i] = Seat(HUMAN, seats[i].name, connected=False)  # type: ignore[union-attr]
    assert not core.paced(NOW + 20, answering=True)


def test_a_table_nobody_watches_is_paced() -> None:
    seats: list[Seat | None] = [Seat(BOT, "fast") for _ in range(4)]
    core = core_of(seats, hold_claims=False)
    assert core.paced(NOW, answering=False)
    assert core.clock.pause_until == NOW + 0.5
    assert core.step(NOW + 0.4, WALL) == Idle()
    assert isinstance(core.step(NOW + 0.5, WALL), AutoPlay)
    seats[0] = Seat(HUMAN, "alice")
    assert not core.paced(NOW + 1, answering=False)


def sleep_of(core: TableCore, now: float) -> float | None:
    """How long the table's task sleeps at ``now`` (``clock.wakeup``, as the task asks it)."""
    return wakeup(
        now,
        core.clock,
        playing=True,
        seats=core.seats,
        disconnected_seconds=TIMERS.disconnected_seconds,
    )


def test_a_paced_table_whose_last_decision_ran_out_of_time_sleeps_until_the_pace_is_over() -> None:
    # Nobody is there (so the table is paced); the dealer's clock runs out and the server
    # plays for her. Her spent clock must not wake the table before the pace is over:
    # woken at once, finding nothing to do, it would wake at once again, and spin.
    seats: list[Seat | None] = [
        Seat(HUMAN, name, connected=False, away_since=NOW) for name in ("al", "bo", "cy", "di")
    ]
    core = core_of(seats, hold_claims=False)
    player = dealer(core)
    assert core.step(NOW, WALL) == Idle()
    assert sleep_of(core, NOW) == 20
    assert core.step(NOW + 20, WALL) == AutoPlay((player,), answering=False)
    _, action = discard_drawn(core)
    stored(core, player, action)
    assert core.paced(NOW + 20, answering=False)
    assert core.step(NOW + 20, WALL) == Idle()
    assert sleep_of(core, NOW + 20) == pytest.approx(0.5)


@settings(max_examples=40, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(["bot", "there", "away", "gone"]), min_size=4, max_size=4),
    hold_claims=st.booleans(),
    answers=st.lists(st.floats(0, 1), min_size=1, max_size=40),
)
def test_whenever_the_table_has_nothing_to_do_its_task_sleeps(
    kinds: list[str], hold_claims: bool, answers: list[float]
) -> None:
    # The table's task in small, on a clock that moves only when it sleeps: whenever a
    # step says there is nothing to do (``Idle``), the wakeup must be later than now.
    # (A wakeup already due with nothing to do spins the task: on a real clock until
    # that moment passes, on a test's stopped clock for ever.) People there answer at a
    # random moment of their turn; the others are played by the server, paced.
    seats: list[Seat | None] = []
    for i, kind in enumerate(kinds):
        name = f"p{i}"
        if kind == "bot":
            seats.append(Seat(BOT, "fast"))
        elif kind == "there":
            seats.append(Seat(HUMAN, name))
        else:  # away: back within the grace; gone: never back
            seats.append(Seat(HUMAN, name, connected=False, away_since=NOW))
    core = core_of(seats, hold_claims=hold_claims)
    now, hands = NOW, 0
    there_seats = {p for p, kind in enumerate(kinds) if kind == "there"}
    for i in range(1500):
        moment = answers[i % len(answers)]
        hand = core.match.hand
        assert hand is not None
        step = core.step(now, WALL)
        if isinstance(step, FinishMatch):
            break
        if isinstance(step, DealHand):
            core.clock.new_hand()
            core.match.start_hand()
            continue
        if isinstance(step, CloseWindow):
            core.clock.close_window()
            core.match.close_claims()
        elif isinstance(step, AutoPlay):
            for player in step.players:
                if player in hand.awaiting():
                    seat = core.seats[player]
                    choice = auto_action(hand.view(player), seat, seat_bot(seat, 0, "normal"))
                    stored(core, player, choice)
            core.paced(now, step.answering)
        else:
            assert isinstance(step, Idle)
            sleep = sleep_of(core, now)
            assert sleep is None or sleep > 0, f"idle at {now - NOW:g} s, woken at once"
            there = [p for p in hand.awaiting() if p in there_seats]
            if core.clock.reading and moment < 0.5:  # one reads the result before its time
                core.clock.has_read(min(core.clock.reading))
            elif there and (sleep is None or moment < 0.9):  # a person answers first
                player = there[0]
                legal = hand.legal_actions(player)
                stored(core, player, legal[int(moment * len(legal)) % len(legal)])
                now += moment * (sleep if sleep is not None else 1)
            else:
                assert sleep is not None, "nothing due, nobody to answer: the table stalls"
                now += sleep
        if hand.phase is Phase.OVER and hands == len(core.match.records) - 1:
            hands += 1
            core.clock.hand_over(now, TIMERS.hand_pause_seconds, there_seats, result_seconds=30)
    assert hands >= 1 or not answers  # (the time moved on to the next hand)


def test_between_hands_the_pause_then_the_deal() -> None:
    core = core_of(deal=False)
    assert core.step(NOW, WALL) == DealHand()  # no hand yet
    core.match.start_hand()
    now = played_out(core, NOW)
    assert core.step(now + 1.9, WALL) == Idle()
    assert core.step(now + 2, WALL) == DealHand()


def test_between_hands_the_deal_waits_for_a_reader_up_to_the_result_seconds() -> None:
    core = core_of()
    now = played_out(core, NOW)
    core.clock.hand_over(now, TIMERS.hand_pause_seconds, readers={0, 1}, result_seconds=30)
    assert core.step(now + 5, WALL) == Idle()  # both still read the result
    core.clock.has_read(0)
    assert core.step(now + 5, WALL) == Idle()
    core.clock.has_read(1)
    assert core.step(now + 5, WALL) == DealHand()
    core.clock.hand_over(now, TIMERS.hand_pause_seconds, readers={0}, result_seconds=30)
    assert core.step(now + 29, WALL) == Idle()
    assert core.step(now + 30, WALL) == DealHand()  # never longer than that


def test_the_time_cap_stops_the_match_between_hands_only() -> None:
    cap = WALL
    core = core_of(ends_at=cap)
    assert core.step(NOW, cap + timedelta(hours=1)) == Idle()  # a hand in play always ends
    now = played_out(core, NOW) + TIMERS.hand_pause_seconds
    assert core.step(now, cap - timedelta(seconds=1)) == DealHand()
    assert core.step(now, cap) == StopAtCap()
    core.match.stop()
    assert core.step(now, cap) == FinishMatch()


# ------------------------------------------------------------------- play ---


def test_a_play_is_refused_unless_seated_attached_and_dealt() -> None:
    refusal = play_refusal("t1", None, None, dealt=True)
    assert refusal is not None and refusal.code == "not_seated"
    assert refusal.reason == "you do not sit at table t1"
    refusal = play_refusal("t1", 2, None, dealt=True)  # her seat, another connection
    assert refusal is not None and refusal.code == "not_seated"
    refusal = play_refusal("t1", 2, 2, dealt=False)
    assert refusal is not None and refusal.code == "hand_over"
    assert play_refusal("t1", 2, 2, dealt=True) is None


def test_a_play_answering_an_older_update_is_stale() -> None:
    core = core_of()
    assert not core.stale(1)
    assert core.stale(0) and core.stale(2)


# -------------------------------------------------------------- auto-play ---


def test_a_person_there_out_of_time_discards_the_drawn_tile() -> None:
    core = core_of()
    player = dealer(core)
    assert core.match.hand is not None
    view = core.match.hand.view(player)
    seat = Seat(HUMAN, "alice")
    chosen = auto_action(view, seat, seat_bot(seat, player, "normal"))
    assert chosen == Action(ActionKind.DISCARD, view.drawn)


def test_a_person_there_out_of_time_passes_a_claim() -> None:
    core = core_of()
    stored(core, 0, CLAIMED)
    assert core.match.hand is not None
    seat = Seat(HUMAN, "bob")
    assert auto_action(core.match.hand.view(1), seat, seat_bot(seat, 1, "normal")) == PASS


def test_a_bot_or_a_player_away_gets_the_bots_choice() -> None:
    core = core_of()
    player = dealer(core)
    assert core.match.hand is not None
    view = core.match.hand.view(player)
    for seat in (Seat(BOT, "fast"), Seat(HUMAN, "alice", connected=False, away_since=NOW)):
        bot = seat_bot(seat, player, "normal")
        assert auto_action(view, seat, bot) == make_bot(
            "fast" if seat.kind == BOT else "normal", seed=player
        ).choose(view)
        assert auto_action(view, seat, bot) in view.legal


def test_an_absent_persons_seat_is_played_at_the_strongest_level_where_results_count() -> None:
    """At a rated or a tournament table a person's seat, absent or out of time, is played at
    ``[bots] stand_in`` (the strongest level by default: leaving never hands the others easy
    points); at a casual table at ``casual_stand_in`` (normal by default); both configurable."""
    casual = TableSettings("mcr", 20)
    rated = TableSettings("mcr", 20, rated=True)
    tournament = TableSettings("mcr", 20, tournament=(1, 1, 2))
    levels = BotsSection()
    assert stand_in_level(rated, levels) == stand_in_level(tournament, levels) == STRONGEST
    assert STRONGEST == "strong"
    assert stand_in_level(casual, levels) == "normal"
    chosen = BotsSection(stand_in="normal", casual_stand_in="easy")
    assert stand_in_level(rated, chosen) == stand_in_level(tournament, chosen) == "normal"
    assert stand_in_level(casual, chosen) == "easy"


def test_the_stand_in_plays_a_persons_seat_and_a_bot_keeps_its_own_level() -> None:
    core = core_of()
    player = dealer(core)
    assert core.match.hand is not None
    view = core.match.hand.view(player)
    away = Seat(HUMAN, "alice", connected=False, away_since=NOW)
    assert type(seat_bot(away, player, "strong")) is BOTS["strong"]
    assert auto_action(view, away, seat_bot(away, player, "strong")) == make_bot(
        "strong", seed=player
    ).choose(view)
    assert type(seat_bot(Seat(BOT, "easy"), player, "strong")) is BOTS["easy"]
    assert type(seat_bot(Seat(BOT, "fast"), player, "strong")) is BOTS["fast"]


def test_a_person_there_out_of_time_gets_the_engines_one_safe_move() -> None:
    """The table's pass or drawn discard is ``engine.bots.safe_action``'s, the move the
    client and the fast bot play too."""
    core = core_of()
    player = dealer(core)
    assert core.match.hand is not None
    seat = Seat(HUMAN, "alice")
    view = core.match.hand.view(player)
    assert auto_action(view, seat, seat_bot(seat, player, "normal")) == safe_action(view)
    claims = core_of()
    stored(claims, 0, CLAIMED)
    assert claims.match.hand is not None
    claim_view = claims.match.hand.view(1)
    assert (
        auto_action(claim_view, seat, seat_bot(seat, 1, "normal"))
        == safe_action(claim_view)
        == PASS
    )


def test_a_claim_window_nobody_can_answer_still_holds() -> None:
    """Nobody can claim: every answer is in at once, yet the window lasts its least time,
    so no one learns from its length whether another seat had a choice."""
    core = core_of()
    player, action = discard_drawn(core)  # (its drawn tile: nobody can claim it)
    stored(core, player, action)
    assert core.match.hand is not None and core.match.hand.awaiting() == []
    assert core.step(NOW, WALL) == Idle()
    assert core.step(NOW + 0.8, WALL) == CloseWindow()


def test_an_all_bot_tables_window_closes_once_answered_without_its_least_time() -> None:
    """Held (its update stops at the discard, as at any table), but not for its 800 ms:
    bots learn nothing from a pause, and answer at once either way."""
    core = core_of([Seat(BOT, "fast") for _ in range(4)])
    player, action = discard_drawn(core)
    stored(core, player, action)
    assert core.match.hand is not None and core.match.hand.phase is Phase.CLAIM
    assert core.match.hand.awaiting() == []
    assert core.step(NOW, WALL) == CloseWindow()
    assert core.clock.window_until == NOW

"""Tests of ``engine.match``: the seat rotation over 16 hands, and properties of whole matches.

The properties are checked after every action of seeded matches played by
``tablekit.RandomBot`` (a random legal action, always a win when one is offered unless told
to decline some, mostly a discard toward a ready hand): tile conservation, legal actions as
the rules list them (a win exactly at 8 fan), zero-sum scores and the 8-point payments,
refused actions that change nothing, views that leak nothing, and replays from the seed and
the action log. The number of matches per property is ``GUOBIAO_TABLE_MATCHES`` (default
``DEFAULT_MATCHES``), the first seed ``GUOBIAO_TABLE_SEED`` (default 0)::

    GUOBIAO_TABLE_MATCHES=200 .venv/bin/python -m pytest tests/engine/test_match.py -q
"""

from __future__ import annotations

import os
import random
from collections import Counter

import pytest
import tablekit
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engine.actions import Action, ActionKind, Event
from engine.bots import make_bot
from engine.errors import IllegalAction
from engine.match import HANDS_PER_ROUND, SEATING, Match, ReplayError, hand_seeds
from engine.simulation import play_match
from engine.table import HandState, Phase
from engine.tiles import FIRST_FLOWER, N_FLOWERS, N_KINDS, Wind

DEFAULT_MATCHES = 2
MATCHES = int(os.environ.get("GUOBIAO_TABLE_MATCHES", str(DEFAULT_MATCHES)))
FIRST_SEED = int(os.environ.get("GUOBIAO_TABLE_SEED", "0"))
SEEDS = range(FIRST_SEED, FIRST_SEED + MATCHES)

E, S, W, N = 0, 1, 2, 3  # positions


# ------------------------------------------------------------ the seating ---


def rule_book_seating() -> list[str]:
    """The players A B C D at positions E S W N in each round, moved as the rule book says."""
    rounds = ["ABCD"]
    at = list(rounds[0])

    def swap_pairs(seat: list[str]) -> list[str]:  # E<->S and W<->N
        return [seat[S], seat[E], seat[N], seat[W]]

    at = swap_pairs(at)
    rounds.append("".join(at))
    # Before round 3: E and S go to the opposite positions (W and N), W goes to S, N to E.
    moved = [""] * 4
    moved[W], moved[N], moved[S], moved[E] = at[E], at[S], at[W], at[N]
    at = moved
    rounds.append("".join(at))
    at = swap_pairs(at)
    rounds.append("".join(at))
    return rounds


def test_seating_follows_the_rule_book() -> None:
    assert rule_book_seating() == ["ABCD", "BADC", "CDBA", "DCAB"]
    assert ["".join("ABCD"[p] for p in seats) for seats in SEATING] == rule_book_seating()


def test_everyone_sits_at_every_position_once() -> None:
    for player in range(4):
        assert sorted(seats.index(player) for seats in SEATING) == [E, S, W, N]
    for seats in SEATING:
        assert sorted(seats) == [0, 1, 2, 3]


def test_sixteen_hands_rotate_the_deal_and_the_winds() -> None:
    seen: list[tuple[tuple[int, ...], int, Wind, list[Wind]]] = []

    def after(match: Match, player: int, action: Action, events: list[Event]) -> None:
        hand = match.hand
        assert hand is not None
        if hand.result is not None:
            seen.append(
                (
                    hand.player_at,
                    hand.dealer,
                    hand.round_wind,
                    [hand.seat_wind(p) for p in hand.player_at],
                )
            )

    match = tablekit.play_match(11, after=after)
    assert match.over and len(match.records) == 16 and len(seen) == 16
    dealers = []
    for k, record in enumerate(match.records):
        rnd, nth = divmod(k, HANDS_PER_ROUND)
        player_at, dealer, round_wind, winds = seen[k]
        assert record.hand_no == k + 1
        assert player_at == SEATING[rnd]
        assert round_wind is Wind(rnd) and record.round_wind == "ESWN"[rnd]
        # The deal goes round the table once a round, from East, counter-clockwise.
        assert dealer == record.dealer == SEATING[rnd][nth]
        # The dealer is East, then counter-clockwise by position.
        assert winds == [Wind((pos - nth) % 4) for pos in range(4)]
        assert record.seat_winds[dealer] == "E"
        assert record.seat_winds == tuple(winds[player_at.index(p)].letter for p in range(4))
        dealers.append(dealer)
    for rnd in range(4):
        assert sorted(dealers[4 * rnd : 4 * rnd + 4]) == [0, 1, 2, 3]  # the deal passes
    assert Counter(dealers) == {0: 4, 1: 4, 2: 4, 3: 4}
    # A consequence of the rule-book seating, not a repeat deal: C deals the last hand of
    # round 2 from North, then the first of round 3 from East.
    assert dealers[7] == dealers[8] == 2


def test_match_refuses_out_of_order_calls() -> None:
    match = Match(3)
    with pytest.raises(IllegalAction) as info:
        match.apply(0, Action(ActionKind.PASS))
    assert info.value.code == "no_hand"
    assert match.legal_actions(0) == [] and match.awaiting() == []
    match.start_hand()
    with pytest.raises(IllegalAction) as info:
        match.start_hand()
    assert info.value.code == "hand_in_play"
    played = tablekit.play_match(3)
    with pytest.raises(IllegalAction) as info:
        played.start_hand()
    assert info.value.code == "match_over"


def test_match_view_and_log() -> None:
    match = tablekit.play_match(5)
    view = match.view(1)
    assert view["hand_no"] == 16 and view["hands_total"] == 16
    assert view["scores"] == match.scores
    entries = match.log_entries()
    assert len(entries) == len(match.log)
    hand, player, action = match.log[0]
    assert entries[0] == {"hand": hand + 1, "player": player, "action": action.to_dict()}
    assert all(
        Action.from_dict(e["action"]) == a for e, (_, _, a) in zip(entries, match.log, strict=True)
    )


def test_hand_seeds_are_derived_from_the_match_seed() -> None:
    assert hand_seeds(9, 16) == hand_seeds(9, 16) == Match(9).seeds
    assert len(set(hand_seeds(9, 16))) == 16
    assert hand_seeds(9, 16) != hand_seeds(10, 16)


# -------------------------------------------------------------- properties ---


@pytest.mark.parametrize("seed", SEEDS)
def test_tiles_are_conserved_after_every_action(seed: int) -> None:
    def after(match: Match, player: int, action: Action, events: list[Event]) -> None:
        assert match.hand is not None
        tablekit.check_conservation(match.hand)

    tablekit.play_match(seed, after=after)
    # Declining a quarter of the wins reaches robbing declined, head bumps after a pass and
    # wins refused up to the end of the wall.
    tablekit.play_match(seed, after=after, decline=0.25)


@pytest.mark.parametrize("seed", SEEDS)
def test_legal_actions_follow_the_rules(seed: int) -> None:
    # Exactly the claims, kongs and discards the rules allow; a win exactly when the hand is
    # complete with 8 fan or more (flowers not counted), decided apart from the table's code.
    def after(match: Match, player: int, action: Action, events: list[Event]) -> None:
        assert match.hand is not None
        tablekit.check_legal(match.hand)

    tablekit.play_match(seed, after=after, decline=0.25)


@pytest.mark.parametrize("seed", SEEDS)
def test_scores_sum_to_zero(seed: int) -> None:
    def after(match: Match, player: int, action: Action, events: list[Event]) -> None:
        hand = match.hand
        assert hand is not None
        assert sum(match.scores) == 0
        if hand.result is not None:
            tablekit.check_payments(hand)

    match = tablekit.play_match(seed, after=after)
    totals = [0, 0, 0, 0]
    for record in match.records:
        assert sum(record.result.deltas) == 0
        totals = [t + d for t, d in zip(totals, record.result.deltas, strict=True)]
        assert list(record.scores) == totals
    assert match.scores == totals


ERROR_CODES = {
    "hand_over",
    "no_such_player",
    "not_your_turn",
    "already_answered",
    "tile_not_in_hand",
    "illegal_action",
}


def random_action(rng: random.Random) -> tuple[int, Action]:
    player = rng.choice([-1, 0, 1, 2, 3, 4])
    kind = rng.choice(list(ActionKind))
    tile = rng.choice([None, -1, N_KINDS + N_FLOWERS, FIRST_FLOWER, *range(N_KINDS)])
    return player, Action(kind, tile)


@pytest.mark.parametrize("seed", SEEDS)
def test_refused_actions_change_nothing(seed: int) -> None:
    rng = random.Random(seed)
    tried = Counter[str]()

    def attempt(match: Match) -> None:
        hand = match.hand
        assert hand is not None
        player, action = random_action(rng)
        if player in hand.position and action in hand.legal_actions(player):
            return
        before = tablekit.snapshot(hand)
        log, scores, records = list(match.log), list(match.scores), list(match.records)
        with pytest.raises(IllegalAction) as info:
            match.apply(player, action)
        assert info.value.code in ERROR_CODES
        tried[info.value.code] += 1
        assert tablekit.snapshot(hand) == before
        assert (match.log, match.scores, match.records) == (log, scores, records)

    def after(match: Match, player: int, action: Action, events: list[Event]) -> None:
        if rng.random() < 0.1:
            attempt(match)
        hand = match.hand
        assert hand is not None
        if hand.phase is Phase.OVER:
            attempt(match)  # every action is refused once the hand is over

    tablekit.play_match(seed, after=after)
    assert tried["hand_over"] >= 16
    assert tried["illegal_action"] + tried["not_your_turn"] > 0


@settings(max_examples=max(25, 10 * MATCHES), deadline=None)
@given(
    seed=st.integers(0, 2**64 - 1),
    steps=st.integers(0, 300),
    player=st.sampled_from([-1, 0, 1, 2, 3, 4]),
    kind=st.sampled_from(list(ActionKind)),
    tile=st.none() | st.integers(-1, N_KINDS + N_FLOWERS),
)
def test_a_refused_action_at_any_point_changes_nothing(
    seed: int, steps: int, player: int, kind: ActionKind, tile: int | None
) -> None:
    # A hand of a match played ``steps`` actions in (or to its end), then one random action.
    match = Match(seed)
    match.start_hand()
    hand = match.hand
    assert hand is not None
    bot = tablekit.RandomBot(seed)
    for _ in range(steps):
        if hand.phase is Phase.OVER:
            break
        mover = hand.awaiting()[0]
        match.apply(mover, bot.choose(hand, mover))
    action = Action(kind, tile)
    assume(player not in hand.position or action not in hand.legal_actions(player))
    before = tablekit.snapshot(hand)
    log = list(match.log)
    # Asked first (the server's way of explaining a refusal): the same error, nothing changed.
    refused = hand.refusal(player, action)
    assert tablekit.snapshot(hand) == before
    with pytest.raises(IllegalAction) as info:
        match.apply(player, action)
    assert info.value.code in ERROR_CODES
    assert refused is not None
    assert (refused.code, str(refused)) == (info.value.code, str(info.value))
    assert tablekit.snapshot(hand) == before
    assert match.log == log
    # And no legal action is refused.
    assert all(hand.refusal(p, a) is None for p in hand.awaiting() for a in hand.legal_actions(p))


@pytest.mark.parametrize("seed", SEEDS)
def test_views_leak_nothing(seed: int) -> None:
    def after(match: Match, player: int, action: Action, events: list[Event]) -> None:
        assert match.hand is not None
        tablekit.check_views(match.hand, events)

    match = Match(seed)
    match.start_hand()
    assert match.hand is not None
    tablekit.check_views(match.hand, match.hand.events)
    tablekit.play_match(seed, after=after)


@pytest.mark.parametrize("seed", SEEDS)
def test_replay_from_seed_and_log(seed: int) -> None:
    events: list[list[Event]] = []

    def after(match: Match, player: int, action: Action, new: list[Event]) -> None:
        hand = match.hand
        assert hand is not None
        if hand.phase is Phase.OVER:
            events.append(hand.events)

    match = tablekit.play_match(seed, bot_seed=seed + 1000, after=after)
    again = tablekit.replay(match)
    replayed_events = again.hand_events
    assert again.over
    assert again.records == match.records
    assert [r.to_dict() for r in again.records] == [r.to_dict() for r in match.records]
    assert again.scores == match.scores
    assert again.log == match.log
    assert replayed_events == events
    # The same seed and bots play the same match.
    assert tablekit.play_match(seed, bot_seed=seed + 1000).log == match.log


def store_rows(match: Match) -> list[tuple[int, int, int, dict[str, object]]]:
    """``match``'s actions as the server stores them: (seq from 1, hand_no, player, action)."""
    return [
        (seq, hand_index + 1, player, action.to_dict())
        for seq, (hand_index, player, action) in enumerate(match.log, 1)
    ]


def state_of(hand: HandState) -> dict[str, object]:
    """Everything of a hand but its caches of the seat views."""
    state = tablekit.snapshot(hand)
    del state["_public"], state["_seats"]
    return state


def test_a_replay_stops_exactly_where_the_log_ends() -> None:
    # The server restores an unfinished match from the stored rows: every prefix of the log
    # must rebuild the match exactly as it stood after that many actions.
    match = Match(11)
    rows: list[tuple[int, int, int, dict[str, object]]] = []
    bot = tablekit.RandomBot(11)
    checked = 0
    while not match.over and match.hand_index < 2:
        match.start_hand()
        hand = match.hand
        assert hand is not None
        while hand.phase is not Phase.OVER:
            player = hand.awaiting()[0]
            action = bot.choose(hand, player)
            match.apply(player, action)
            rows.append((len(rows) + 1, match.hand_index + 1, player, action.to_dict()))
            if len(rows) % 7 == 0 or hand.phase is Phase.OVER:
                again = Match.replay(match.seed, match.rules, rows)
                assert again.hand is not None and again.hand_index == match.hand_index
                assert state_of(again.hand) == state_of(hand)
                for viewer in (0, 1, 2, 3, None):
                    assert again.hand.view(viewer) == hand.view(viewer)
                assert (again.records, again.scores, again.log) == (
                    match.records,
                    match.scores,
                    match.log,
                )
                checked += 1
    assert checked > 3
    # A log that ends with a hand over leaves it over: the next hand is not dealt.
    again = Match.replay(match.seed, match.rules, rows)
    assert again.hand is not None and again.hand.phase is Phase.OVER
    assert again.hand_index == match.hand_index == 2 and len(again.records) == 3
    assert Match.replay(match.seed, match.rules, []).hand is None


def test_a_replay_names_the_line_that_does_not_replay() -> None:
    match = tablekit.play_match(4)
    rows = store_rows(match)
    # An action that is not legal where the log puts it.
    seq, hand_no, player, _ = rows[5]
    bad = [*rows[:5], (seq, hand_no, (player + 1) % 4, rows[5][3]), *rows[6:]]
    with pytest.raises(ReplayError) as info:
        Match.replay(match.seed, match.rules, bad)
    assert info.value.line == 6 and str(info.value).startswith("line 6: hand 1, player ")
    cause = info.value.__cause__
    assert isinstance(cause, IllegalAction) and cause.code == "not_your_turn"
    assert str(info.value).endswith("to play, not yours")
    # A malformed action.
    broken = [*rows[:2], (3, 1, rows[2][2], {"type": "discard", "tile": "xx"}), *rows[3:]]
    with pytest.raises(ReplayError, match=r"^line 3: hand 1, player \d, action "):
        Match.replay(match.seed, match.rules, broken)
    # A hand out of order, and a hand left unfinished.
    first_of_2 = next(i for i, row in enumerate(rows) if row[1] == 2)
    back = [*rows[: first_of_2 + 1], (first_of_2 + 2, 1, 0, rows[0][3])]
    with pytest.raises(ReplayError, match=f"^line {first_of_2 + 2}: hand 1 after hand 2"):
        Match.replay(match.seed, match.rules, back)
    skipping = [*rows[: first_of_2 - 1], rows[first_of_2]]
    with pytest.raises(ReplayError, match=f"line {rows[first_of_2][0]}: hand 1 is not over"):
        Match.replay(match.seed, match.rules, skipping)


def test_a_replay_checks_the_logged_results() -> None:
    match = tablekit.play_match(6)
    rows = store_rows(match)
    last_of_1 = max(i for i, row in enumerate(rows) if row[1] == 1)
    record = match.records[0].to_dict()
    # Results are checked where their lines fall: after hand 1's last action.
    line = rows[last_of_1][0]
    rows_after = [(r[0] * 2, *r[1:]) for r in rows]  # room for a result line between actions
    ok = Match.replay(match.seed, match.rules, rows_after, results=[(line * 2 + 1, 1, record)])
    assert ok.records == match.records
    with pytest.raises(ReplayError, match=f"^line {line * 2 - 1}: hand 1 is not over"):
        Match.replay(match.seed, match.rules, rows_after, results=[(line * 2 - 1, 1, record)])
    wrong = {**record, "scores": [1, 2, 3, -6]}
    with pytest.raises(ReplayError, match=r"hand 1 replays differently \(logged, replayed\)"):
        Match.replay(match.seed, match.rules, rows_after, results=[(line * 2 + 1, 1, wrong)])


def test_the_lines_of_a_log_are_shared_by_every_match_and_read_as_before() -> None:
    # A match keeps its whole log; a line is made once per (hand, player, action) and shared
    # by every match of the process, not a new tuple for every action.
    first = play_match(3, [make_bot("normal", seed=p) for p in range(4)], hands=2)
    second = play_match(3, [make_bot("normal", seed=p) for p in range(4)], hands=2)
    assert first.log == second.log and len(first.log) > 50
    assert all(a is b for a, b in zip(first.log, second.log, strict=True))
    hand, player, action = first.log[0]
    assert (hand, player) == (0, 0) and action.kind is ActionKind.DISCARD

"""Tests of a match's length (``Match(..., hands=N)``): a table option, not a rule.

The rule: a match ends after the hand in which the deal passes for the ``hands``-th time.
Without dealer repeat every hand passes the deal, so that is ``hands`` hands; with it, a
dealer's wins add hands without passing the deal. The hands played are those of a whole
match cut short: same walls, same seats, same winds.
"""

from __future__ import annotations

import json
from itertools import pairwise

import pytest
import tablekit
from test_custom_match import ScriptedMatch, deals, repeat_rules

from engine.bots import make_bot
from engine.errors import IllegalAction
from engine.match import MATCH_HANDS, SEATING, Match, ReplayError
from engine.matchlog import LogError, log_lines, read_log
from engine.rules import MCR, RuleSet
from engine.simulation import play_match


def bot_match(seed: int, hands: int = MATCH_HANDS, rules: RuleSet = MCR) -> Match:
    bots = [make_bot("fast", seed=seed * 4 + p) for p in range(4)]
    return play_match(seed, bots, rules, hands=hands)


@pytest.fixture(scope="module")
def whole() -> Match:
    """A whole MCR match between bots: the shorter ones are its first hands."""
    return bot_match(3)


def test_the_default_is_the_whole_match(whole: Match) -> None:
    assert Match(1).hands == MATCH_HANDS == 16
    assert len(whole.records) == 16 == whole.hands_total
    assert [r.round_wind for r in whole.records[::4]] == ["E", "S", "W", "N"]


@pytest.mark.parametrize("hands", [1, 4, 6, 15])
def test_a_shorter_match_is_the_first_hands_of_a_whole_one(whole: Match, hands: int) -> None:
    match = bot_match(3, hands)
    assert match.over
    assert match.hands == hands == match.hands_total == len(match.records)
    assert match.view(0)["hands_total"] == hands
    assert match.records == whole.records[:hands]  # same walls, dealers, seat winds, scores
    assert match.scores == list(whole.records[hands - 1].scores)
    assert match.seeds == whole.seeds[:hands]
    with pytest.raises(IllegalAction) as info:
        match.start_hand()
    assert info.value.code == "match_over"


def test_the_east_round_only_keeps_the_first_seating(whole: Match) -> None:
    match = bot_match(3, 4)
    assert {r.round_wind for r in match.records} == {"E"}
    assert [r.dealer for r in match.records] == list(SEATING[0])
    six = bot_match(3, 6)  # into the South round: the players have moved as in a whole match
    assert [r.dealer for r in six.records[4:]] == [SEATING[1][0], SEATING[1][1]]
    assert [r.round_wind for r in six.records[4:]] == ["S", "S"]


@pytest.mark.parametrize("hands", [0, 17, -1, True, 4.0, "4", None])
def test_a_length_outside_1_to_16_is_refused(hands: object) -> None:
    with pytest.raises(ValueError, match=r"hands must be a whole number 1\.\.16"):
        Match(1, hands=hands)  # type: ignore[arg-type]


# ------------------------------------------------------------ dealer repeat ---


def passes(match: Match) -> int:
    """How many times the deal passed in ``match``'s hands (the last hand's pass counted
    when the match is over)."""
    steps = [(r.round_wind, r.dealer_position) for r in match.records]
    passed = sum(1 for a, b in pairwise(steps) if a != b)
    return passed + (1 if match.over else 0)


def test_under_dealer_repeat_the_deal_must_pass_hands_times() -> None:
    # The dealer wins twice, then the next player: three hands, and the deal passed once.
    match = ScriptedMatch("dealer dealer next", repeat_rules(), hands=1)
    match.play_hand()
    match.play_hand()
    assert not match.over and match.hands_total is None  # a dealer's win does not count
    match.play_hand()
    assert match.over
    assert deals(match) == [("E", 0, 0, 0), ("E", 0, 1, 0), ("E", 0, 2, 0)]
    assert match.hands_total == 3 == len(match.records)
    assert passes(match) == 1


def test_under_dealer_repeat_a_draw_and_the_cap_pass_the_deal() -> None:
    match = ScriptedMatch("dealer draw dealer dealer dealer", repeat_rules(cap=2), hands=2)
    match.play()
    # E0 wins, E0 draws (passes), E1 wins twice more and reaches the cap on its third win.
    assert deals(match) == [
        ("E", 0, 0, 0),
        ("E", 0, 1, 0),
        ("E", 1, 0, 1),
        ("E", 1, 1, 1),
        ("E", 1, 2, 1),
    ]
    assert match.over and passes(match) == 2 == match.hands
    assert match.hands_total == 5


def test_under_dealer_repeat_a_longer_match_reaches_the_next_round() -> None:
    match = ScriptedMatch("dealer next next next next dealer next", repeat_rules(), hands=5)
    match.play()
    assert match.over
    assert deals(match) == [
        ("E", 0, 0, 0),
        ("E", 0, 1, 0),
        ("E", 1, 0, 1),
        ("E", 2, 0, 2),
        ("E", 3, 0, 3),
        ("S", 0, 0, SEATING[1][0]),
        ("S", 0, 1, SEATING[1][0]),
    ]
    assert passes(match) == 5


@pytest.mark.parametrize("hands", [1, 3, 8])
def test_dealer_repeat_bot_matches_stop_after_hands_passes(hands: int) -> None:
    rules = repeat_rules()
    short, long = bot_match(11, hands, rules), bot_match(11, MATCH_HANDS, rules)
    assert short.over and passes(short) == hands
    assert short.hands_total == len(short.records) >= hands
    assert short.records == long.records[: len(short.records)]


# ------------------------------------------------------------------- logs ---


def test_the_match_log_carries_the_length_and_replays_it() -> None:
    match = bot_match(5, 4)
    lines = [json.dumps(line) for line in log_lines(match, bots=["fast"] * 4)]
    assert json.loads(lines[0])["hands"] == 4
    (logged,) = read_log(lines, lambda name: MCR)
    assert logged.hands == 4
    again = logged.replay()
    assert again.over and again.records == match.records and again.hands == 4
    assert tablekit.replay(match).records == match.records


def test_a_log_without_a_length_is_a_whole_match() -> None:
    match = bot_match(5, 4)
    header, *rest = list(log_lines(match))
    del header["hands"]  # written before the option existed
    (logged,) = read_log([json.dumps(line) for line in [header, *rest]], lambda name: MCR)
    assert logged.hands == MATCH_HANDS
    again = logged.replay()
    assert again.records == match.records
    assert not again.over  # as a whole match it would go on after hand 4


@pytest.mark.parametrize("hands", [0, 17, "4", None])
def test_a_log_with_a_bad_length_is_refused_by_line(hands: object) -> None:
    header, *rest = list(log_lines(bot_match(5, 1)))
    header["hands"] = hands
    lines = [json.dumps(line) for line in [header, *rest]]
    with pytest.raises(LogError, match=r"^line 1: a match's hands must be a whole number 1\.\.16"):
        list(read_log(lines, lambda name: MCR))


def test_a_replay_refuses_hands_past_the_length() -> None:
    whole = bot_match(5)
    rows = [(seq, h + 1, p, a.to_dict()) for seq, (h, p, a) in enumerate(whole.log, 1)]
    with pytest.raises(ReplayError, match="the match is over") as info:
        Match.replay(whole.seed, MCR, rows, hands=2)
    first_of_hand_3 = next(seq for seq, hand_no, _, _ in rows if hand_no == 3)
    assert info.value.line == first_of_hand_3

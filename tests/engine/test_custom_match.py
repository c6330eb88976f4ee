"""Tests of ``engine.match`` with dealer repeat (连庄, the ``custom`` rule set).

Each hand is played on a stacked wall (``ScriptedMatch`` overrides ``Match._wall``) whose
outcome the test picks: the dealer wins on its initial tiles, the player after the dealer
wins on the dealer's first discard, or nobody wins (a drawn hand).
"""

from __future__ import annotations

import hashlib

import pytest
import tablekit

from engine.actions import PASS, WIN, Action, ActionKind
from engine.errors import IllegalAction
from engine.match import HANDS_PER_ROUND, MATCH_HANDS, SEATING, Match, hand_seed, hand_seeds
from engine.rules import CUSTOM, MCR, RuleSet, Wilds, custom_rules
from engine.table import Phase
from engine.wall import Wall

# Hands by position counted from the dealer (the dealer's first, 14 tiles).
DEALER_WINS = (
    "123m456p789sEEE11s",
    "1199m2288p3377sN",
    "WWCCFFPP2s4s6s8s9p",
    "3m4m6m7m8m1p3p4p6p5s6s9mE",
)
NEXT_WINS = (
    "1199m2288p3377sEN",
    "123m456p789sSS12s",
    "WWCCFFPP2s4s6s8s9p",
    "3m4m6m7m8m1p3p4p6p5s6s9mE",
)


def discard(tile: int) -> Action:
    return Action(ActionKind.DISCARD, tile)


class ScriptedMatch(Match):
    """A match whose hands end as ``outcomes`` say: "dealer", "next" or "draw"."""

    def __init__(self, outcomes: str, rules: RuleSet, *, hands: int = MATCH_HANDS) -> None:
        super().__init__(7, rules, hands=hands)
        self.outcomes = outcomes.split()

    def _wall(self, hand_no: int) -> Wall:
        layout = DEALER_WINS if self.outcome(hand_no) == "dealer" else NEXT_WINS
        d = self.dealer_position
        hands = {(d + k) % 4: layout[k] for k in range(4)}
        return tablekit.stacked_wall(hands, dealer=d)

    def outcome(self, hand_no: int) -> str:
        return self.outcomes[hand_no - 1] if hand_no <= len(self.outcomes) else "next"

    def play_hand(self) -> None:
        self.start_hand()
        hand = self.hand
        assert hand is not None
        outcome = self.outcome(self.hand_index + 1)
        if outcome == "dealer":
            self.apply(hand.dealer, WIN)
        elif outcome == "next":
            self.apply(hand.dealer, tablekit.discard("3s"))
            self.apply(hand.next_player(hand.dealer), WIN)
        else:  # nobody takes a win: every claim passed, every drawn tile discarded
            while hand.phase is not Phase.OVER:
                player = hand.awaiting()[0]
                legal = hand.legal_actions(player)
                drawn = discard(hand.drawn) if hand.drawn is not None else None
                if PASS in legal:
                    self.apply(player, PASS)
                elif drawn in legal:
                    self.apply(player, drawn)
                else:
                    self.apply(player, next(a for a in legal if a.kind is ActionKind.DISCARD))
        assert hand.result is not None
        assert (hand.result.result == "draw") is (outcome == "draw")

    def play(self, hands: int | None = None) -> None:
        while not self.over and (hands is None or len(self.records) < hands):
            self.play_hand()


def repeat_rules(cap: int = 8) -> RuleSet:
    return custom_rules(wilds=Wilds.NONE, dealer_repeat=True, repeat_cap=cap)


def deals(match: Match) -> list[tuple[str, int, int, int]]:
    """(round wind, dealer position, repeat, dealer player) of each hand played."""
    return [(r.round_wind, r.dealer_position, r.repeat, r.dealer) for r in match.records]


def test_the_dealer_keeps_the_deal_while_winning() -> None:
    match = ScriptedMatch("dealer dealer next next", repeat_rules())
    match.play(4)
    assert deals(match) == [("E", 0, 0, 0), ("E", 0, 1, 0), ("E", 0, 2, 0), ("E", 1, 0, 1)]
    assert [r.hand_no for r in match.records] == [1, 2, 3, 4]
    assert match.records[0].to_dict()["repeat"] == 0
    assert match.records[1].to_dict()["repeat"] == 1
    assert match.hands_total is None
    assert match.view(0)["hands_total"] is None
    assert match.view(0)["repeat"] == 0 and match.view(0)["dealer_position"] == 1


def test_another_players_win_passes_the_deal() -> None:
    match = ScriptedMatch("next next", repeat_rules())
    match.play(2)
    assert deals(match) == [("E", 0, 0, 0), ("E", 1, 0, 1)]


def test_a_drawn_hand_passes_the_deal() -> None:
    match = ScriptedMatch("dealer draw next", repeat_rules())
    match.play(3)
    assert deals(match) == [("E", 0, 0, 0), ("E", 0, 1, 0), ("E", 1, 0, 1)]
    assert match.records[1].result.result == "draw"


def test_the_deal_passes_once_the_cap_is_reached() -> None:
    match = ScriptedMatch("dealer dealer dealer dealer", repeat_rules(cap=2))
    match.play(4)
    # Three hands for the first dealer (two repeats), then the deal passes though it won.
    assert deals(match) == [("E", 0, 0, 0), ("E", 0, 1, 0), ("E", 0, 2, 0), ("E", 1, 0, 1)]
    assert match.records[2].result.winner == 0


def test_without_dealer_repeat_the_deal_passes_after_a_dealer_win() -> None:
    rules = custom_rules(wilds=Wilds.NONE, dealer_repeat=False)
    match = ScriptedMatch("dealer dealer", rules)
    match.play(2)
    assert deals(match) == [("E", 0, 0, 0), ("E", 1, 0, 1)]
    assert match.hands_total == 16


def test_a_round_passes_when_the_deal_has_gone_round() -> None:
    match = ScriptedMatch("dealer next next next next next", repeat_rules())
    match.play(6)
    assert deals(match) == [
        ("E", 0, 0, 0),
        ("E", 0, 1, 0),
        ("E", 1, 0, 1),
        ("E", 2, 0, 2),
        ("E", 3, 0, 3),
        # Round 2: the players sit as SEATING[1] (B A D C), the player at East deals.
        ("S", 0, 0, SEATING[1][0]),
    ]
    assert match.round_index == 1


def test_the_match_ends_after_four_rounds() -> None:
    # Every dealer wins its first hand once, then the next player wins: 32 hands.
    outcomes = " ".join(["dealer next"] * 16)
    match = ScriptedMatch(outcomes, repeat_rules())
    match.play()
    assert match.over
    assert len(match.records) == 32 == match.hands_total
    assert [r.round_wind for r in match.records[::8]] == ["E", "S", "W", "N"]
    for k, record in enumerate(match.records):
        rnd, rest = divmod(k, 2 * HANDS_PER_ROUND)
        position, repeat = divmod(rest, 2)
        assert (record.dealer_position, record.repeat) == (position, repeat)
        assert record.dealer == SEATING[rnd][position]
    assert sum(match.scores) == 0
    with pytest.raises(IllegalAction) as info:
        match.start_hand()
    assert info.value.code == "match_over"
    # Everyone dealt the same number of hands.
    assert sorted({sum(1 for r in match.records if r.dealer == p) for p in range(4)}) == [8]


def test_dealer_payments_double_in_the_match_scores() -> None:
    match = ScriptedMatch("dealer next", repeat_rules())
    match.play(2)
    first, second = match.records
    assert first.result.score is not None
    pay = 2 * (2 + first.result.score.total)  # base 2 (no wild tiles), doubled: the dealer won
    assert first.result.deltas == (3 * pay, -pay, -pay, -pay)
    assert sum(second.result.deltas) == 0
    assert list(second.scores) == [
        a + b for a, b in zip(first.result.deltas, second.result.deltas, strict=True)
    ]


def test_hand_seeds_are_one_way_and_unchanged_for_mcr() -> None:
    def old(seed: int, n: int) -> int:  # the derivation MCR matches always used
        key = seed.to_bytes(16, "big", signed=True)
        return int.from_bytes(hashlib.sha256(key + n.to_bytes(2, "big")).digest()[:8], "big")

    for seed in (0, 9, -5, 2**62 + 3):
        assert hand_seeds(seed, 16) == [old(seed, n) for n in range(1, 17)]
        assert [hand_seed(seed, n) for n in range(1, 17)] == hand_seeds(seed, 16)
        assert Match(seed).seeds == hand_seeds(seed, 16)
        assert Match(seed).hand_seed(40) == old(seed, 40)
    assert len(set(hand_seeds(9, 200))) == 200
    # The seed of a hand depends on its number only, not on how the deal went.
    match = ScriptedMatch("dealer dealer next", repeat_rules())
    match.play(3)
    assert match.seeds == hand_seeds(7, 3)


def test_mcr_matches_are_unchanged() -> None:
    match = Match(3, MCR)
    assert match.hands_total == 16
    match.start_hand()
    assert match.dealer_position == 0 and match.repeat == 0
    view = match.view(0)
    assert set(view) >= {"hand_no", "hands_total", "scores"}
    assert "repeat" not in view and "rules" not in view and "indicator" not in view
    assert match.hand is not None
    assert "rules" not in match.hand.events[0].data
    # A custom preset named "mcr-like" with the MCR options plays as MCR too.
    assert not Match(3, RuleSet(name="house")).extended
    assert Match(3, CUSTOM).extended

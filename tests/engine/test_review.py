"""Tests of ``engine.review`` on matches bots play (``engine.simulation.play_match``).

The checks hold for any honest judge (``engine.bots.judge``: every legal action valued, the
best first, the first what the strong bot plays), not for its values: the strong bot itself
never misses, ``fast`` (it discards what it draws and never claims) does, no loss is
negative, every decision with a choice is reviewed and no forced one, each in its place in
the log, and the misses come biggest first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from engine.actions import Action, ActionKind
from engine.bots import Bot, make_bot
from engine.match import Match, ReplayError
from engine.review import PHASES, Review, review_match
from engine.rules import MCR
from engine.simulation import play_match
from engine.view import View

SEED = 20261204
HANDS = 4
STRONG, FAST = 0, 1
CLAIM_KINDS = {ActionKind.WIN, ActionKind.KONG, ActionKind.PUNG, ActionKind.CHOW, ActionKind.PASS}


@dataclass
class Watched:
    """A bot that notes each choice it is asked for: (hand, legal actions, its answer)."""

    bot: Bot
    finished: list[int]  # the hands finished so far (one shared counter)
    asked: list[tuple[int, int, Action]] = field(default_factory=list)

    def choose(self, view: View) -> Action:
        action = self.bot.choose(view)
        self.asked.append((self.finished[0] + 1, len(view.legal), action))
        return action


@pytest.fixture(scope="module")
def played() -> tuple[Match, list[Watched]]:
    finished = [0]
    bots = [Watched(make_bot(n), finished) for n in ("strong", "fast", "normal", "normal")]

    def count(_match: Match, _record: object) -> None:
        finished[0] += 1

    match = play_match(SEED, bots, MCR, on_hand=count, hands=HANDS)
    return match, bots


def rows_of(match: Match) -> list[tuple[int, int, int, dict]]:  # type: ignore[type-arg]
    return [(i, h + 1, p, a.to_dict()) for i, (h, p, a) in enumerate(match.log, 1)]


def reviewed(match: Match, player: int) -> Review:
    return review_match(match.seed, match.rules, rows_of(match), player, hands=match.hands)


def test_the_strong_bot_never_misses(played: tuple[Match, list[Watched]]) -> None:
    match, _ = played
    review = reviewed(match, STRONG)
    assert review.decisions
    assert review.misses() == []
    assert all(d.agrees and d.loss == 0 for d in review.decisions)
    assert review.agreed == len(review.decisions)


def test_fast_misses_and_every_loss_is_not_negative(played: tuple[Match, list[Watched]]) -> None:
    match, _ = played
    for player in range(4):
        review = reviewed(match, player)
        for d in review.decisions:
            assert d.loss >= 0, d
            assert d.preferred_value >= d.taken_value
            assert d.agrees or d.taken != d.preferred
            assert d.phase in PHASES
    fast = reviewed(match, FAST)
    misses = fast.misses()
    assert misses, "fast played as the strong bot all match"
    assert all(not d.agrees for d in misses)
    losses = [d.loss for d in misses]
    assert losses == sorted(losses, reverse=True)
    assert fast.misses(top=2) == misses[:2]
    assert fast.total_loss == pytest.approx(sum(losses))


def test_each_decision_with_a_choice_is_reviewed_in_its_place(
    played: tuple[Match, list[Watched]],
) -> None:
    match, bots = played
    by_hand: dict[int, list[tuple[int, Action]]] = {}
    for hand_index, player, action in match.log:
        by_hand.setdefault(hand_index + 1, []).append((player, action))
    for player, bot in enumerate(bots):
        review = reviewed(match, player)
        chosen = [(h, a) for h, choices, a in bot.asked if choices > 1]
        assert [(d.hand_no, d.taken) for d in review.decisions] == chosen
        assert all(d.choices > 1 for d in review.decisions)
        for d in review.decisions:
            assert by_hand[d.hand_no][d.index] == (player, d.taken)
            if d.phase in ("claim", "rob"):
                assert d.taken.kind in CLAIM_KINDS and d.preferred.kind in CLAIM_KINDS
            else:
                assert d.taken.kind not in (ActionKind.PASS, ActionKind.CHOW, ActionKind.PUNG)
        assert review.hands == len(match.records) == HANDS


def test_the_json_form_lists_the_misses_by_their_place(
    played: tuple[Match, list[Watched]],
) -> None:
    match, _ = played
    review = reviewed(match, FAST)
    body = review.to_dict(top=3)
    assert body["scale"] == review.scale and body["player"] == FAST
    assert len(body["decisions"]) == len(review.decisions)
    shown = [body["decisions"][i] for i in body["misses"]]
    assert [d["loss"] for d in shown] == [d.loss for d in review.misses(3)]
    assert all(d["taken"] != d["preferred"] for d in shown)


def test_moves_the_server_played_for_the_player_are_not_reviewed_but_counted(
    played: tuple[Match, list[Watched]],
) -> None:
    """The log's lines the server played (``stand_in``) are no decisions of the player's:
    fast's misses among them vanish from its decisions and misses, the rest of its review is
    as it was, and they are counted apart; another player's such lines change nothing."""
    match, _ = played
    rows = rows_of(match)
    whole = reviewed(match, FAST)
    line_of: dict[tuple[int, int], int] = {}  # (hand, its action's index) -> the log's line
    index, hand = 0, 0
    for line, hand_no, _player, _ in rows:
        index = index + 1 if hand_no == hand else 0
        hand = hand_no
        line_of[hand_no, index] = line
    flagged = whole.misses()[::2]  # every other miss: the server played it
    first = [r[0] for r in rows if r[2] == FAST][:1]  # and fast's first move, whatever it was
    others = [r[0] for r in rows if r[2] == STRONG][:5]
    stand_in = {line_of[d.hand_no, d.index] for d in flagged} | set(first) | set(others)
    review = review_match(match.seed, match.rules, rows, FAST, hands=match.hands, stand_in=stand_in)
    kept = [d for d in whole.decisions if line_of[d.hand_no, d.index] not in stand_in]
    assert review.decisions == tuple(kept)
    assert review.misses() == [d for d in whole.misses() if d in kept]
    assert not set(review.misses()) & set(flagged)
    assert review.stand_in == len({line_of[d.hand_no, d.index] for d in flagged} | set(first))
    assert whole.stand_in == 0 and whole.to_dict()["stand_in"] == 0
    assert review.to_dict()["stand_in"] == review.stand_in
    strong = review_match(
        match.seed, match.rules, rows, STRONG, hands=match.hands, stand_in=stand_in
    )
    assert strong.stand_in == len(others)
    assert len(strong.decisions) <= len(reviewed(match, STRONG).decisions)


def test_a_log_that_does_not_replay_is_refused_naming_its_row(
    played: tuple[Match, list[Watched]],
) -> None:
    match, _ = played
    rows = rows_of(match)
    line, hand_no, player, _ = rows[5]
    rows[5] = (line, hand_no, player, {"type": "win"})
    with pytest.raises(ReplayError) as caught:
        review_match(match.seed, match.rules, rows, FAST, hands=match.hands)
    assert caught.value.line == line
    with pytest.raises(ValueError, match=r"0\.\.3"):
        review_match(match.seed, match.rules, rows_of(match), 4, hands=match.hands)

"""``server.table.publish``: each viewer's ``update`` payload, the hand's commitment and its
reveal, and a seat's ``deadline_ms``, as pure functions of a match (no table, no clock)."""

from __future__ import annotations

from engine.actions import PASS, Action, ActionKind
from engine.match import Match
from engine.rules import MCR
from server.fairness import commitment, hand_reveal, hand_salt
from server.table import publish

SEED, SALT = 20261201, bytes(range(32))


def dealt() -> tuple[Match, list]:
    match = Match(SEED, MCR, 7)
    return match, match.start_hand()


def test_nothing_is_published_before_the_first_deal() -> None:
    match = Match(SEED, MCR, 7)
    assert publish.update_payload("t1", match, SALT, 0, [], None, []) is None
    assert publish.update_payload("t1", None, SALT, 0, [], None, []) is None


def test_the_deal_carries_the_hands_commitment_and_each_viewer_its_own_projection() -> None:
    match, events = dealt()
    seat = publish.update_payload("t1", match, SALT, 1, events, 0, events)
    watcher = publish.update_payload("t1", match, SALT, 1, events, None, events)
    assert seat is not None and watcher is not None
    expected = commitment(match.hand_seed(1), hand_salt(SALT, 1))
    assert seat["commitment"] == watcher["commitment"] == expected
    assert (seat["table"], seat["seq"], seat["hand_no"], seat["scores"]) == ("t1", 1, 1, [0] * 4)
    assert seat["view"]["seats"][0]["concealed"]  # her own tiles
    assert not any("concealed" in s for s in watcher["view"]["seats"])  # nobody's
    assert "full" not in seat


def test_a_later_update_has_no_commitment_and_a_brief_one_no_seats() -> None:
    match, events = dealt()
    assert match.hand is not None
    dealer = match.hand.awaiting()[0]
    drawn = match.hand.view(dealer).drawn
    action = (
        Action(ActionKind.DISCARD, drawn)
        if drawn is not None
        else match.hand.legal_actions(dealer)[0]
    )
    later = match.apply(dealer, action)
    history = [*events, *later]
    payload = publish.update_payload("t1", match, SALT, 2, history, None, later)
    brief = publish.update_payload("t1", match, SALT, 2, history, None, later, brief=True)
    assert payload is not None and brief is not None
    assert "commitment" not in payload
    assert "seats" in payload["view"] and "seats" not in brief["view"]
    assert [e["kind"] for e in payload["events"]] == [e.kind for e in later if e.visible_to(None)]


def test_a_full_update_is_of_the_whole_hand_with_its_commitment() -> None:
    match, events = dealt()
    full = publish.update_payload("t1", match, SALT, 5, events, None, [], full=True, brief=True)
    assert full is not None
    assert full["full"] is True
    assert "seats" in full["view"]  # a full update is never brief
    assert len(full["events"]) == len([e for e in events if e.visible_to(None)])
    assert full["commitment"] == publish.hand_commitment(match, SALT, 1)


def test_the_reveal_of_a_hand_is_the_fairness_reveal_with_its_dealer() -> None:
    match, _ = dealt()
    assert match.hand is not None
    while match.hand.phase.name != "OVER":
        player = match.hand.awaiting()[0]
        legal = match.hand.legal_actions(player)
        match.apply(player, PASS if PASS in legal else legal[0])
    reveal = publish.reveal("t1", match, SALT, 1)
    assert reveal == {
        "table": "t1",
        **hand_reveal(SEED, SALT, 1),
        "dealer_position": match.records[0].dealer_position,
    }


def test_a_deadline_is_what_is_left_of_the_decisions_clock_or_a_whole_turn() -> None:
    assert publish.deadline_ms(1020.0, 3, 3, now=1005.5, turn=20) == 14_500
    assert publish.deadline_ms(1020.0, 3, 3, now=1030.0, turn=20) == 0  # never negative
    assert publish.deadline_ms(1020.0, 3, 4, now=1005.0, turn=20) == 20_000  # another update's
    assert publish.deadline_ms(None, -1, 4, now=1005.0, turn=20) == 20_000

"""Decoding a player's action (``Action.from_dict``): what the server does with every
``play``. The same fields give the same action each time, the very object the table lists
(so a legal one is found by identity); what is refused is refused each time alike."""

from __future__ import annotations

import pytest

from engine.actions import DISCARDS, KONG, PASS, PUNG, WIN, Action, ActionKind, legal_json
from engine.errors import IllegalAction
from engine.tiles import N_KINDS


def test_a_listed_action_decodes_to_the_object_the_table_lists() -> None:
    for tile in range(N_KINDS):
        wire = DISCARDS[tile].to_dict()
        assert Action.from_dict(wire) is DISCARDS[tile]
        assert Action.from_dict(dict(wire)) is DISCARDS[tile]  # again, from memory
    for listed in (PASS, WIN, PUNG, KONG):
        assert Action.from_dict(listed.to_dict()) is listed


def test_the_same_fields_in_another_order_decode_alike() -> None:
    assert Action.from_dict({"tile": "5m", "type": "discard"}) is Action.from_dict(
        {"type": "discard", "tile": "5m"}
    )
    chow = Action.from_dict({"type": "chow", "tile": "3p"})
    assert chow == Action(ActionKind.CHOW, chow.tile) and chow.tile is not None
    assert Action.from_dict({"tile": "3p", "type": "chow"}) == chow


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "discard", "tile": ["5m"]},  # not hashable: decoded anew each time
        {"type": "discard"},
        {"type": "discard", "tile": "5m", "extra": 1},
        {"type": "fly"},
        {"type": "discard", "tile": "55m"},
        ["discard"],
    ],
)
def test_a_refused_action_is_refused_every_time(bad: object) -> None:
    for _ in range(2):
        with pytest.raises(IllegalAction) as refused:
            Action.from_dict(bad)
        assert refused.value.code == "bad_action"


def test_the_legal_actions_json_form_is_each_actions_own_made_once() -> None:
    actions = [PASS, WIN, PUNG, KONG, *DISCARDS, Action(ActionKind.CHOW, 4)]
    actions += [Action(ActionKind.CONCEALED_KONG, 30), Action(ActionKind.ADD_KONG, 2)]
    first = legal_json(actions)
    assert first == [a.to_dict() for a in actions]
    again = legal_json([Action(ActionKind.CHOW, 4)])  # an equal action: the same form
    assert again[0] is first[-3]

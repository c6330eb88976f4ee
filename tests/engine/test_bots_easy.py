"""Tests of ``engine.bots.easy``: a beginner that plays legal, seeded moves, wins hands,
claims pungs greedily and slips now and then (plays otherwise than ``normal``)."""

from __future__ import annotations

import tablekit
from tablekit import deal, discard

from engine.actions import PASS, PUNG, ActionKind
from engine.bots import BOTS, DefaultBot, EasyBot, make_bot
from engine.table import Phase

Q2 = "26m26p26sCFPESW"
Q3 = "37m37p37sCFPESW"
Q4 = "48m48p48sCFPESW"


def test_the_registry_names_the_easy_bot() -> None:
    assert BOTS["easy"] is EasyBot
    assert make_bot("easy", seed=5).seed == 5


def test_the_easy_bot_plays_legal_seeded_moves_and_wins_hands() -> None:
    match, seen = tablekit.play_bots(("easy",) * 4, seed=2)
    assert sum(r.result.winner is not None for r in match.records) >= len(match.records) // 2
    # Seeded: a bot of the same seed answers every view as the one that played.
    for view, action in seen[::5]:
        assert view.viewer is not None
        assert EasyBot(seed=2 * 4 + view.viewer).choose(view) == action


def test_the_easy_bot_slips_sometimes() -> None:
    _, seen = tablekit.play_bots(("easy",) * 4, seed=3)
    turns = [(v, a) for v, a in seen if v.phase is Phase.TURN and len(v.legal) > 1]
    differ = sum(DefaultBot().choose(v) != a for v, a in turns)
    assert 0 < differ < len(turns) // 2


def test_the_easy_bot_claims_a_pung_it_is_offered_with_no_set_showing() -> None:
    # South holds a pair of 7p and nothing a pung of 7p serves: normal passes, easy claims.
    state = deal({0: "7p159m159p159sESWN", 1: "77p159m159sESWNC", 2: Q3 + "N", 3: Q4 + "N"})
    state.apply(0, discard("7p"))
    view = state.view(1)
    assert PUNG in view.legal
    assert DefaultBot().choose(view) == PASS
    assert EasyBot().choose(view) == PUNG
    assert all(a.kind is not ActionKind.WIN for a in view.legal)

"""Tests of ``engine.bots.danger``: the order of discards rebuilt from a view, the tiles an
opponent let pass, and the danger read from copies seen and an opponent's sets."""

from __future__ import annotations

from dataclasses import replace

from tablekit import deal, discard, tile

from engine.actions import PASS, PUNG
from engine.bots.danger import READY, discard_order, read_danger
from engine.bots.reading import discard as bot_discard
from engine.bots.reading import unseen_copies
from engine.hand import Meld, MeldKind
from engine.table import HandState
from engine.tiles import N_KINDS
from engine.view import Phase, View

# Player 1 pungs the dealer's 7p, as in test_bots.py; the others hold quiet hands.
HANDS = {
    0: "7p159m159p159sESWN",
    1: "77p159m159sESWNC",
    2: "123456789m22s68p",
    3: "48m48p48sCFPESWN",
}


def unseen(view: View) -> list[int]:
    me = view.seat(view.viewer if view.viewer is not None else 0)
    assert me.concealed is not None
    counts = [0] * N_KINDS
    for t in me.concealed:
        counts[t] += 1
    return unseen_copies(view, counts)


def passes(state: HandState) -> None:
    """Every seat that may answer a discard passes."""
    while state.phase is Phase.CLAIM:
        for q in state.awaiting():
            state.apply(q, PASS)


def played() -> View:
    """After: 0 discards 7p, 1 pungs it and discards C, 2 and 3 discard their draws."""
    state = deal(HANDS, draws="F P F 7p", tail="P")
    state.apply(0, discard("7p"))
    for p in state.awaiting():
        state.apply(p, PUNG if p == 1 else PASS)
    state.apply(1, discard("C"))
    for p in (2, 3):
        passes(state)
        assert state.current == p and state.drawn is not None
        state.apply(p, bot_discard(state.drawn))
    passes(state)
    return state.view(0)


def test_the_order_of_discards_follows_the_claims() -> None:
    view = played()
    # East's 7p was claimed by South (player 1), so South discards next, then West, North.
    order = discard_order(view)
    assert [pos for pos, _ in order] == [0, 1, 2, 3]
    assert order[0][1] == tile("7p") and order[1][1] == tile("C")
    assert [t for _, t in order[2:]] == [tile("F"), tile("P")]


def test_tiles_discarded_after_an_opponents_last_discard_are_safe_against_it() -> None:
    view = played()
    danger = read_danger(view, unseen(view))
    south = next(t for t in danger.threats if t.player == 1)
    # South discarded C; West's F and North's P came after and South let them pass.
    assert south.passed == {tile("F"), tile("P")}
    assert south.deal_in(tile("F")) == 0.0
    assert tile("C") not in south.passed  # its own discard: no furiten in MCR
    west = next(t for t in danger.threats if t.player == 2)
    assert west.passed == {tile("P")}


def test_an_honor_with_no_copy_unseen_cannot_be_waited_on() -> None:
    view = played()
    copies = unseen(view)
    copies[tile("W")] = 0
    copies[tile("S")] = 2
    south = read_danger(view, copies).threats[0]  # were it ready
    assert south.risk[tile("W")] == 0.0
    assert south.risk[tile("S")] > 0.0


def test_an_opponent_with_sets_of_one_suit_makes_that_suit_dangerous() -> None:
    view = played()
    south = view.seats[1]
    flush = replace(
        south,
        melds=(Meld(MeldKind.PUNG, tile("7p"), 1), Meld(MeldKind.PUNG, tile("2p"), 2)),
    )
    plain = replace(
        south,
        melds=(Meld(MeldKind.PUNG, tile("7p"), 1), Meld(MeldKind.PUNG, tile("2s"), 2)),
    )
    copies = [4] * N_KINDS
    flushing = read_danger(replace(view, seats=(view.seats[0], flush, *view.seats[2:])), copies)
    mixed = read_danger(replace(view, seats=(view.seats[0], plain, *view.seats[2:])), copies)
    one = next(t for t in flushing.threats if t.player == 1)
    other = next(t for t in mixed.threats if t.player == 1)
    assert one.deal_in(tile("5p")) > other.deal_in(tile("5p"))
    assert one.deal_in(tile("5m")) < other.deal_in(tile("5m"))
    # More sets showing: more likely ready.
    assert all(a <= b for a, b in zip(READY[1], READY[2], strict=True))
    assert one.ready == READY[2][0]


def test_a_tile_whose_waiting_shapes_are_all_blocked_is_safer() -> None:
    view = played()
    copies = [4] * N_KINDS
    open_ = read_danger(view, copies)
    for t in ("1s", "2s", "4s", "5s"):
        copies[tile(t)] = 0
    copies[tile("3s")] = 0
    blocked = read_danger(view, copies)
    assert blocked.threats[0].risk[tile("3s")] < open_.threats[0].risk[tile("3s")]


def test_an_honor_is_safer_against_an_opponent_showing_a_set() -> None:
    view = played()
    copies = [4] * N_KINDS
    threats = {t.player: t for t in read_danger(view, copies).threats}
    assert view.seats[1].melds and not view.seats[3].melds
    assert 0.0 < threats[1].risk[tile("E")] < threats[3].risk[tile("E")]


def test_a_tile_the_opponent_discarded_itself_is_safer_against_it() -> None:
    view = played()
    north = view.seats[3]
    copies = [4] * N_KINDS
    let_go = replace(north, river=((tile("5m"), False), *north.river))
    before = read_danger(view, copies).threats[2]
    after = read_danger(replace(view, seats=(*view.seats[:3], let_go)), copies).threats[2]
    assert before.player == after.player == 3
    assert after.risk[tile("5m")] < 0.5 * before.risk[tile("5m")]
    assert after.risk[tile("5p")] == before.risk[tile("5p")]

"""``engine.analysis``: waits, their fan totals and unseen copies, and what each discard
leaves, from the player's own view.

Views are written as the wire shows them (``engine.wire.decode_view``), so a test says
exactly what the player sees; hands dealt on stacked walls check the views the table itself
builds. Totals are the calculator's (``engine.scoring.score``) for the same hand and
situation, asked separately.
"""

from __future__ import annotations

import random
from typing import Any

import handgen
import pytest
import tablekit
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engine import analysis
from engine.analysis import Analysis, NoHand, Outcome, Wait, analyze
from engine.forms import is_winning
from engine.hand import Hand, Meld
from engine.notation import parse_hand, parse_tiles
from engine.rules import MCR, RuleSet, Wilds, custom_rules
from engine.scoring import WinContext, score
from engine.shanten import waits as shanten_waits
from engine.table import View
from engine.tiles import N_KINDS, WILD, Tile, Wind, counts_of, name
from engine.wilds import is_winning_with_wilds
from engine.wire import decode_view

OTHER = {"concealed_count": 13, "melds": [], "flowers": [], "river": []}


def view(
    concealed: str,
    *,
    melds: tuple[str, ...] = (),
    flowers: tuple[str, ...] = (),
    others: dict[int, dict[str, Any]] | None = None,
    river: tuple[str, ...] = (),
    legal: tuple[str, ...] = (),
    rules: RuleSet = MCR,
    wild: dict[str, Any] | None = None,
    **fields: Any,
) -> View:
    """Player 0's view (East, dealer) with ``concealed`` tiles: ``others`` set what the
    other seats show, ``legal`` the tiles it may discard."""
    seats = [
        {
            "player": 0,
            "wind": "E",
            "concealed_count": len(parse_tiles(concealed.replace("f", ""))),
            "melds": list(melds),
            "flowers": list(flowers),
            "river": list(river),
            "concealed": concealed,
        }
    ]
    for p, wind in ((1, "S"), (2, "W"), (3, "N")):
        seats.append({"player": p, "wind": wind, **OTHER, **(others or {}).get(p, {})})
    d: dict[str, Any] = {
        "phase": "turn",
        "round_wind": "E",
        "dealer": 0,
        "dice": [[1, 2], [3, 4]],
        "wall_remaining": 50,
        "current": 0,
        "seats": seats,
        "you": 0,
        "legal": [{"type": "discard", "tile": t} for t in legal],
        **fields,
    }
    if rules is not MCR:
        d |= {"rules": rules.to_dict(), "indicator": None, "dead_flowers": [], "wild_tiles": []}
        d |= wild or {}
    return decode_view(d)


def waits_of(found: Analysis) -> dict[str, Wait]:
    assert found.waits is not None
    return {name(w.tile): w for w in found.waits}


def outcome(hand: str, rules: RuleSet = MCR, **ctx: Any) -> Outcome:
    """The calculator's own answer for ``hand`` (the winning tile last)."""
    result = score(parse_hand(hand), WinContext(**ctx), rules)
    return Outcome(result.total, result.meets_minimum)


# --------------------------------------------------------------- a ready hand ---


def test_a_ready_hand_lists_its_waits_with_the_calculators_totals() -> None:
    found = analyze(view("234m567p3488s678s"))
    assert found.min_fan == 8 and found.shanten == 0 and found.discards is None
    waits = waits_of(found)
    assert list(waits) == ["2s", "5s"]
    for tile in ("2s", "5s"):
        wait = waits[tile]
        assert wait.unseen == 4
        assert wait.discard == outcome(f"234m567p3488s678s{tile}") == Outcome(7, False)
        assert wait.self_drawn == outcome(f"234m567p3488s678s{tile}", self_drawn=True)
        assert wait.self_drawn == Outcome(9, True)  # 7 fan on a discard: needs 8


def test_the_situation_the_player_knows_counts_winds_and_flowers() -> None:
    """A pung of the prevalent wind (the South round), two flowers."""
    found = analyze(view("SSS123m456p789s5p", flowers=("f1", "f2"), round_wind="S"))
    wait = waits_of(found)["5p"]
    expected = outcome("SSS123m456p789s5p5p", round_wind=Wind.SOUTH, flowers=2)
    assert wait.discard == expected != outcome("SSS123m456p789s5p5p")


def test_no_wait_is_listed_when_the_hand_is_not_ready() -> None:
    found = analyze(view("13579m13579p1sEE"))
    assert found.shanten > 0 and found.waits == ()


def test_unseen_counts_own_tiles_melds_and_rivers_a_claimed_tile_once() -> None:
    """Player 0 waits on 5s and E (two pairs). 5s: two in its hand, one in player 1's river,
    one chowed by player 3 from player 2 (in player 2's river marked claimed, and in the
    meld: counted once). E: two in its hand, one in player 2's river."""
    others = {
        1: {"river": ["5s"]},
        2: {"river": ["E", "5s*"]},
        3: {"melds": ["[456s,2]"], "concealed_count": 10},
    }
    found = analyze(view("123m456p789p55sEE", others=others))
    waits = waits_of(found)
    assert {t: w.unseen for t, w in waits.items()} == {"5s": 0, "E": 1}
    assert waits["5s"].discard == outcome("123m456p789p55sEE5s")


def test_last_tile_when_the_other_three_copies_are_in_the_open() -> None:
    """和绝张 on a closed wait 5s: two 5s in the rivers, one chowed (counted once)."""
    shown = {
        1: {"river": ["5s"]},
        2: {"river": ["5s", "5s*"]},
        3: {"melds": ["[345s,3]"], "concealed_count": 10},
    }
    wait = waits_of(analyze(view("123m456p789s46sEE", others=shown)))["5s"]
    assert wait.unseen == 1  # the last one
    assert wait.discard == outcome("123m456p789s46sEE5s", last_of_kind=True)
    assert wait.discard != outcome("123m456p789s46sEE5s")
    assert wait.self_drawn == outcome("123m456p789s46sEE5s", last_of_kind=True, self_drawn=True)


def test_the_discard_being_answered_is_not_one_of_the_other_three_copies() -> None:
    pending = {
        1: {"river": ["5s"]},
        2: {"river": ["5s"]},
        3: {"melds": ["[345s,3]"], "concealed_count": 10},
    }
    claim = {"tile": "5s", "from": 2, "kind": "discard"}
    found = analyze(view("123m456p789s46sEE", others=pending, phase="claim", claim=claim))
    assert waits_of(found)["5s"].discard == outcome("123m456p789s46sEE5s")


def test_the_last_discard_of_the_wall_scores_last_tile_claim() -> None:
    found = analyze(view("234m567p3488s678s", wall_remaining=0))
    assert waits_of(found)["2s"].discard == outcome("234m567p3488s678s2s", wall_last=True)


def test_a_wait_of_which_the_player_holds_every_copy_is_not_listed() -> None:
    """A single 1m beside a pung of 1m: by shape 1m completes the hand, but no copy is
    left."""
    found = analyze(view("1m234m567m888m", melds=("[111m,1]",)))
    by_shape = {name(t) for t in shanten_waits(counts_of(parse_tiles("1m234m567m888m")), 1)}
    assert "1m" in by_shape
    assert set(waits_of(found)) == by_shape - {"1m"}


def test_a_spectators_view_has_no_hand() -> None:
    spectator = tablekit.deal(
        {0: "1112345678999m5p", 1: "123456789p123sE", 2: "EEESSSWWWNNNC", 3: "147m258p369sCFPN"}
    ).view(None)
    with pytest.raises(NoHand, match="spectator"):
        analyze(spectator)


# ---------------------------------------------------------------- discards ---


def test_a_fourteen_tile_hand_lists_what_each_discard_leaves_best_first() -> None:
    state = tablekit.deal(
        {0: "1112345678999m5p", 1: "123456789p123sE", 2: "EEESSSWWWNNNC", 3: "147m258p369sCFPN"}
    )
    found = analyze(state.view(0))
    assert found.waits is None and found.discards is not None
    assert found.shanten == 0
    listed = [name(d.tile) for d in found.discards]
    legal = {name(a.tile) for a in state.legal_actions(0) if a.tile is not None}
    assert sorted(listed) == sorted(legal)  # each discardable tile once
    best = found.discards[0]
    assert name(best.tile) == "5p" and best.shanten == 0
    assert [name(w.tile) for w in best.waits] == [f"{r}m" for r in range(1, 10)]  # 九莲宝灯
    nine_gates = outcome("1112345678999m5m")
    assert {w.tile: w.discard for w in best.waits}[parse_tiles("5m")[0]] == nine_gates
    # then the discards that leave a single wait on 5p, then those that leave 1-shanten
    assert [(name(d.tile), d.shanten) for d in found.discards[1:4]] == [
        ("2m", 0),
        ("5m", 0),
        ("8m", 0),
    ]
    assert all(d.shanten == 1 and d.waits == () for d in found.discards[4:])
    # after the discard, its tile is in the open: Last Tile counts it
    assert [name(w.tile) for w in found.discards[1].waits] == ["5p"]


def test_a_discard_in_the_open_counts_for_last_tile() -> None:
    """Two 5s in the rivers: discarding its 5s leaves the player on a closed wait 5s whose
    three other copies are then in the open."""
    others = {1: {"river": ["5s"]}, 2: {"river": ["5s"]}}
    found = analyze(view("123m456m789m46s5sEE", others=others, legal=("5s",)))
    assert found.discards is not None
    (choice,) = found.discards
    (wait,) = choice.waits
    assert name(wait.tile) == "5s" and wait.unseen == 1
    last = outcome("123m456m789m46sEE5s", last_of_kind=True)
    assert wait.discard == last != outcome("123m456m789m46sEE5s")
    assert wait.self_drawn == outcome("123m456m789m46sEE5s", last_of_kind=True, self_drawn=True)


# --------------------------------------------------------------- wild tiles ---

CUSTOM_8 = custom_rules("custom-8fan", eight_fan=True)


def test_a_drawn_wild_tile_is_a_wait_won_self_drawn_only() -> None:
    """Custom rules, 5m wild (the indicator 5m, 翻混): the hand holds one 5m."""
    rules = custom_rules()
    wild = {"indicator": "5m", "wild_tiles": ["5m"]}
    found = analyze(view("5m123p456p789s99sE", rules=rules, wild=wild))
    waits = waits_of(found)
    assert "5m" not in waits and {"9s", "E", "*"} <= set(waits)  # a drawn 5m is "*"
    star = waits["*"]
    assert star.discard is None
    assert star.unseen == 2  # 4 less the indicator and the one held
    standing = (*parse_tiles("123p456p789s99sE"), WILD)
    assert star.self_drawn == outcome_of(
        Hand((), standing, WILD), WinContext(self_drawn=True), rules
    )
    on_e = outcome_of(Hand((), standing, parse_tiles("E")[0]), WinContext(), rules)
    assert waits["E"].discard == on_e and on_e.meets_minimum  # no minimum: complete is enough


def test_four_wild_tiles_are_not_scored_they_reach_any_minimum() -> None:
    rules = custom_rules("custom-flowers", wilds=Wilds.FLOWERS)
    flowers = {"wild_tiles": [f"f{i}" for i in range(1, 9)]}
    found = analyze(view("f1f2f3f4123m456p78s9s", rules=rules, wild=flowers))
    waits = waits_of(found)
    assert len(waits) > 1 and waits["*"].unseen == 4
    outcomes = [o for w in waits.values() for o in (w.discard, w.self_drawn) if o is not None]
    assert outcomes and set(outcomes) == {Outcome(None, True)}


def test_the_scoring_budget_leaves_totals_unknown_under_a_minimum(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(analysis, "SCORE_BUDGET", 4)
    wild = {"indicator": "5m", "wild_tiles": ["5m"]}
    found = analyze(view("55m12346789m234p", rules=CUSTOM_8, wild=wild))
    outcomes = [o for w in found.waits or () for o in (w.discard, w.self_drawn) if o]
    scored = [o for o in outcomes if o.total is not None]
    assert len(scored) == 4 < len(outcomes)
    assert all(o == Outcome(None, None) for o in outcomes if o.total is None)


# -------------------------------------------------------------- properties ---


def ready(form: str, seed: int, drop: int) -> tuple[tuple[Meld, ...], list[Tile]]:
    """A complete hand of ``form`` less one of its concealed tiles: its melds and the rest."""
    ((hand, _),) = handgen.generate(form, 1, seed)
    tiles = sorted([*hand.standing, hand.win_tile])
    del tiles[drop % len(tiles)]
    return hand.melds, tiles


def own_view(
    melds: tuple[Meld, ...], tiles: list[Tile], wilds: int = 0, rules: RuleSet = MCR
) -> View:
    """Player 0 holding ``tiles`` and ``wilds`` wild 5m (the indicated kind) beside them."""
    text = "5m" * wilds + "".join(name(t) for t in tiles)
    wild = {"indicator": "5m", "wild_tiles": ["5m"]} if rules is not MCR else None
    return view(text, melds=tuple(str(m) for m in melds), rules=rules, wild=wild)


def outcome_of(hand: Hand, ctx: WinContext, rules: RuleSet = MCR) -> Outcome:
    result = score(hand, ctx, rules)
    return Outcome(result.total, result.meets_minimum)


def plus(counts: list[int], tile: Tile) -> list[int]:
    return [n + (t == tile) for t, n in enumerate(counts)]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(handgen.FORMS)), st.integers(0, 10_000), st.integers(0, 13))
def test_every_wait_completes_the_hand_and_none_is_missing(form: str, seed: int, drop: int) -> None:
    melds, tiles = ready(form, seed, drop)
    found = analyze(own_view(melds, tiles))
    counts = counts_of(tiles)
    meld_counts = counts_of(t for m in melds for t in m.tiles)
    expected = {
        t
        for t in range(N_KINDS)
        if counts[t] + meld_counts[t] < 4 and is_winning(plus(counts, t), len(melds))
    }
    assert found.shanten == 0 and {w.tile for w in found.waits or ()} == expected
    shown = counts_of(t for m in melds if not m.concealed for t in m.tiles)
    for wait in found.waits or ():
        won = Hand(melds, tuple(tiles), wait.tile)
        last = shown[wait.tile] == 3  # the player's own exposed melds are in the open
        assert wait.discard == outcome_of(won, WinContext(last_of_kind=last))
        assert wait.self_drawn == outcome_of(won, WinContext(self_drawn=True, last_of_kind=last))
        assert wait.unseen == 4 - counts[wait.tile] - meld_counts[wait.tile]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 13), st.integers(1, 2), st.randoms())
def test_with_wild_tiles_every_wait_completes_the_hand(
    seed: int, drop: int, wilds: int, rng: random.Random
) -> None:
    """A regular hand with one or two of its tiles turned into wild tiles (5m indicated)."""
    melds, tiles = ready("regular", seed, drop)
    five = parse_tiles("5m")[0]
    meld_counts = counts_of(t for m in melds for t in m.tiles)
    assume(five not in tiles and not meld_counts[five] and len(tiles) > wilds)
    for _ in range(wilds):
        tiles.remove(rng.choice(tiles))
    found = analyze(own_view(melds, tiles, wilds, custom_rules()))
    counts = counts_of(tiles)
    kinds = {
        t
        for t in range(N_KINDS)
        if t != five
        and counts[t] + meld_counts[t] < 4
        and is_winning_with_wilds(plus(counts, t), wilds, len(melds), meld_counts)
    }
    listed = {w.tile for w in found.waits or ()}
    assert listed - {WILD} == kinds
    drawn_wild = is_winning_with_wilds(counts, wilds + 1, len(melds), meld_counts)
    assert (WILD in listed) == drawn_wild

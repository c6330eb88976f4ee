"""``web/js/follow.js`` (protocol version 2 in the browser) against the engine, in a real page:
the seats it follows from the last view and an update's events are exactly the seats of the
view the table would send in full.

The cases are made as ``tests/engine/test_follow.py`` makes them: seeded matches under every
rule preset, with the claim windows held open and not, players choosing at random among
their legal actions (a win whenever they may, often a claim or a kong); after every change,
for every viewer (each player and a spectator), one case: the full view before (None before
the first deal), the events as that viewer got them, the view without its seats
(``hand.brief``) and the seats expected. Each case stands alone, so that beside every change
of a few whole matches, the changes that are rare in play (kongs of every kind, a robbed
kong, an added kong completed by its replacement draw, a head bump, a drawn hand) are taken
from more matches until each happened.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from browserkit import OpenPage

from engine.actions import Action, ActionKind
from engine.match import Match
from engine.rules import MCR, RuleSet, Wilds, custom_rules
from engine.table import Phase, View

pytestmark = pytest.mark.asyncio

RULES = {
    "mcr": MCR,
    "custom": custom_rules(),
    "custom-before": custom_rules("custom-before", wilds=Wilds.BEFORE),
    "custom-flowers": custom_rules("custom-flowers", wilds=Wilds.FLOWERS),
    "custom-nowild": custom_rules("custom-nowild", wilds=Wilds.NONE),
    "custom-8fan": custom_rules("custom-8fan", eight_fan=True),
}
VIEWERS = (0, 1, 2, 3, None)
# What a few matches seldom show; cases with them are taken from more matches.
RARE = (
    "claim kong",
    "concealed_kong",
    "add_kong",
    "kong completed",  # by the replacement draw after the others let it stand
    "robbed kong",
    "head_bump",
    "exhausted",
)
ENOUGH = 5  # changes of each rare kind taken from further matches, at most (about)
MISMATCHES_SHOWN = 3

Case = dict[str, Any]


def choose(rng: random.Random, legal: list[Action]) -> Action:
    """A win if there is one; else mostly a claim, a kong or a discard at random."""
    kinds = {a.kind for a in legal}
    if ActionKind.WIN in kinds:
        return next(a for a in legal if a.kind is ActionKind.WIN)
    bold = [a for a in legal if a.kind not in (ActionKind.PASS, ActionKind.DISCARD)]
    if bold and rng.random() < 0.7:
        return rng.choice(bold)
    return rng.choice(legal)


def play(
    seed: int, rules: RuleSet, hold: bool, hands: int, keep: Callable[[Counter[str]], bool]
) -> tuple[list[Case], Counter[str]]:
    """A match played at random: the cases of the changes ``keep`` wants (given what
    happened in the change, by kind), and what happened in those."""
    rng = random.Random(seed)
    match = Match(seed, rules, hands=hands, hold_claims=hold)
    cases: list[Case] = []
    seen: Counter[str] = Counter()
    before: dict[int | None, View | None] = dict.fromkeys(VIEWERS)
    robbed = False
    change = 0
    while not match.over:
        events = match.start_hand()
        hand = match.hand
        assert hand is not None
        while True:
            kinds = Counter(
                e.kind if e.kind != "claim" else f"claim {e.data['type']}" for e in events
            )
            last = before[None]
            kinds["kong completed"] = int(
                last is not None
                and last.claim is not None
                and last.claim.kind == "add_kong"
                and any(e.kind == "draw" and e.data["source"] == "kong" for e in events)
            )
            kinds["robbed kong"] = int(robbed)
            kept = keep(kinds)
            for viewer in VIEWERS:
                full = hand.view(viewer)
                if kept:
                    was = before[viewer]
                    cases.append(
                        {
                            "where": f"{rules.name}, seed {seed}, {'a' if hold else 'no'} claim "
                            f"window, change {change}, viewer {viewer}",
                            "before": None if was is None else was.to_dict(),
                            "events": [
                                {"kind": e.kind, **e.data} for e in events if e.visible_to(viewer)
                            ],
                            "view": hand.brief(viewer),
                            "seats": full.to_dict()["seats"],
                        }
                    )
                before[viewer] = full
            if kept:
                seen.update(kinds)
            change += 1
            if hand.phase is Phase.OVER:
                break
            robbing = hand.phase is Phase.ROB
            waiting = hand.awaiting()
            if not waiting:
                events = match.close_claims()
            else:
                player = waiting[0]
                events = match.apply(player, choose(rng, list(hand.legal_actions(player))))
            robbed = robbing and any(e.kind == "win" for e in events)
    return cases, seen


def make_cases() -> tuple[list[Case], Counter[str]]:
    """Every change of one hand per preset and claim window; then the rare changes of
    further matches until each rare kind was seen a few times."""
    cases: list[Case] = []
    seen: Counter[str] = Counter()
    for rules in RULES.values():
        for hold in (False, True):
            made, kinds = play(0, rules, hold, 1, lambda _: True)
            cases += made
            seen += kinds

    def wanted(kinds: Counter[str]) -> bool:
        return any(kinds[k] and seen[k] < ENOUGH for k in RARE)

    seed = 1
    while seed < 400 and not all(seen[k] for k in RARE):
        rules = list(RULES.values())[seed % len(RULES)]
        made, kinds = play(seed, rules, seed % 2 == 0, 4, wanted)
        cases += made
        seen += kinds
        seed += 1
    return cases, seen


def mismatch(case: Case, got: Any) -> str:
    """A case followed wrong: where, the events, and the seats that differ (all of them when
    the page threw or gave another number of seats)."""
    expected = case["seats"]
    if isinstance(got, list) and len(got) == len(expected):
        pairs = [(e, g) for e, g in zip(expected, got, strict=True) if e != g]
    else:
        pairs = [(expected, got)]
    seats = "".join(f"\n  expected {e}\n  got      {g}" for e, g in pairs)
    return f"{case['where']}: events {case['events']}{seats}"


# In the page: each case's seats, or the error it threw (as JSON both ways: a long string
# crosses from Python to the page and back much faster than as many small objects).
FOLLOW_ALL = """async (text) => {
  const { follow } = await import("/js/follow.js");
  return JSON.stringify(JSON.parse(text).map((c) => {
    try {
      return follow(c.before, c.events, c.view);
    } catch (error) {
      return { error: String(error) };
    }
  }));
}"""


async def test_the_seats_followed_in_the_page_are_the_full_views_seats(
    open_page: OpenPage,
) -> None:
    started = time.monotonic()
    cases, seen = make_cases()
    assert all(seen[k] for k in RARE), seen
    for kind in ("deal", "draw", "discard", "claim chow", "claim pung", "flower", "hand_end"):
        assert seen[kind], (kind, seen)
    assert len(cases) > 3000
    made = time.monotonic() - started
    page = await open_page("/")
    asked = json.dumps([{k: c[k] for k in c if k != "seats"} for c in cases])
    got = json.loads(await page.evaluate(FOLLOW_ALL, asked))
    assert len(got) == len(cases)
    wrong = [(c, g) for c, g in zip(cases, got, strict=True) if g != c["seats"]]
    shown = "\n\n".join(mismatch(c, g) for c, g in wrong[:MISMATCHES_SHOWN])
    assert not wrong, f"{len(wrong)} of {len(cases)} cases followed wrong; the first:\n{shown}"
    print(
        f"\nfollow.js: {len(cases)} cases agree with the engine's views "
        f"(made in {made:.1f} s, followed in {time.monotonic() - started - made:.1f} s)"
    )

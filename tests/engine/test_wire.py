"""The wire module (``engine.wire``): every view and event of seeded bot matches, under MCR
and custom rules, decodes to its typed form and encodes back to the very JSON the table
sends; malformed input is refused naming the field."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import wire
from engine.actions import ActionKind
from engine.bots import make_bot
from engine.errors import InvalidWire
from engine.hand import Meld, MeldKind
from engine.match import Match
from engine.rules import MCR, RuleSet, Wilds
from engine.table import Phase, View
from engine.tiles import WILD

CUSTOM = RuleSet(
    name="custom",
    min_fan=0,
    base_points=0,
    wilds=Wilds.INDICATOR,
    extra_fans=True,
    dealer_repeat=True,
    dealer_doubles=True,
    repeat_cap=8,
)
RULES = {
    "mcr": MCR,
    "custom": CUSTOM,
    "custom-flowers": RuleSet(name="custom-flowers", min_fan=0, wilds=Wilds.FLOWERS),
    "custom-after": RuleSet(name="custom-after", min_fan=0, wilds=Wilds.AFTER, extra_fans=True),
}
VIEWERS = (0, 1, 2, 3, None)


def played(
    seed: int, rules: RuleSet, bots: list[str], hands: int
) -> Iterator[tuple[View, list[dict[str, Any]]]]:
    """After every step of ``hands`` hands: each viewer's view and the events it was sent."""
    match = Match(seed, rules)
    players = [make_bot(b, seed=seed + p) for p, b in enumerate(bots)]
    for _ in range(hands):
        if match.over:
            return
        events = match.start_hand()
        hand = match.hand
        assert hand is not None
        while True:
            for viewer in VIEWERS:
                sent = [{"kind": e.kind, **e.data} for e in events if e.visible_to(viewer)]
                yield hand.view(viewer), sent
            if hand.phase is Phase.OVER:
                break
            player = hand.awaiting()[0]
            events = match.apply(player, players[player].choose(hand.view(player)))


def same_json(a: object, b: object) -> bool:
    """Equal as the server's JSON text: keys in the same order, too."""
    return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


MATCHES = (  # preset, seed, bots, hands
    ("mcr", 1, ["default"] * 4, 16),  # two winners on one discard
    ("mcr", 11, ["default"] * 4, 16),  # concealed and added kongs
    ("mcr", 2, ["default", "fast"] * 2, 4),
    ("custom", 14, ["default"] * 4, 16),
    ("custom-flowers", 4, ["default"] * 4, 4),
    ("custom-after", 5, ["fast"] * 4, 6),
)


def test_every_view_and_event_of_bot_matches_round_trips() -> None:
    kinds: Counter[str] = Counter()
    for preset, seed, bots, hands in MATCHES:
        rules = RULES[preset]
        plain = rules is MCR
        for view, events in played(seed, rules, bots, hands):
            sent = json.loads(json.dumps(view.to_dict()))
            typed = wire.decode_view(sent)
            assert typed == view, sent
            assert same_json(wire.encode_view(typed, plain), sent)
            assert wire.decode_view(wire.encode_view(typed, plain)) == typed
            for event in events:
                on_wire = json.loads(json.dumps(event))
                decoded = wire.decode_event(on_wire)
                assert event["kind"] == type(decoded).KIND
                assert same_json(wire.encode_event(decoded), event), event
                assert wire.decode_event(wire.encode_event(decoded)) == decoded
                kinds[event["kind"]] += 1
                kinds[f"{event['kind']} {sorted(event)}"] += 1
    # The matches sent every kind of event, in each of its forms (a seat's own, the others').
    assert set(wire.EVENT_KINDS) <= set(kinds), kinds
    for form in (
        "deal ['count', 'kind', 'player']",
        "deal ['kind', 'player', 'tiles']",
        "draw ['kind', 'player', 'source']",
        "draw ['kind', 'player', 'source', 'tile']",
        "concealed_kong ['kind', 'player']",
        "concealed_kong ['kind', 'player', 'tile']",
        "hand_start ['dealer', 'dice', 'kind', 'round_wind', 'rules', 'seat_winds']",
        "match ['hand_no', 'kind', 'repeat', 'scores']",
    ):
        assert kinds[form], (form, kinds)


def test_the_typed_events_read_as_documented() -> None:
    assert wire.decode_event({"kind": "head_bump", "winner": 1, "others": [3]}) == wire.HeadBump(
        1, (3,)
    )
    claim = {"kind": "claim", "player": 0, "type": "chow", "tile": "7p", "from": 1}
    assert wire.decode_event({**claim, "meld": "[789p,1]"}) == wire.Claim(
        0, ActionKind.CHOW, 15, 1, Meld(MeldKind.CHOW, 15, 1)
    )
    win = wire.decode_event(
        {
            "kind": "win",
            "winner": 2,
            "discarder": None,
            "tile": "*",
            "hand": "123m456p789s123sE*",
            "total": 4,
            "meets_minimum": True,
            "fans": [{"name": "All Chows", "name_zh": "平和", "points": 2, "count": 2}],
            "deltas": [-4, -4, 12, -4],
        }
    )
    assert isinstance(win, wire.Win)
    assert win.tile == WILD and win.discarder is None
    assert win.fans == (wire.WonFan("All Chows", "平和", 2, 2),)
    assert wire.decode_event({"kind": "concealed_kong", "player": 3}) == wire.ConcealedKong(3)
    assert wire.encode_event(wire.Exhausted()) == {"kind": "exhausted"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"player": 1}, "missing field 'kind'"),
        ({"kind": "lunch"}, "event.kind: expected one of match, hand_start"),
        ({"kind": "discard", "player": 1}, "event discard: missing field 'tile'"),
        ({"kind": "discard", "player": "1", "tile": "5m"}, "event discard.player: expected an"),
        ({"kind": "discard", "player": 1, "tile": "10m"}, "event discard.tile"),
        ({"kind": "discard", "player": 1, "tile": "5m", "x": 1}, "unknown field(s) ['x']"),
        ({"kind": "draw", "player": 1, "source": "sky"}, "event draw.source: expected one of"),
        ({"kind": "claim", "player": 0, "type": "win", "tile": "7p", "from": 1}, "claim.type"),
        ({"kind": "flower", "player": 0, "flower": "f9"}, "event flower.flower: expected a"),
        ({"kind": "match", "hand_no": 1, "scores": [0, 0]}, "match.scores: expected a list of 4"),
        ({"kind": "hand_end", "hands": [{"concealed": "1x", "melds": []}]}, "hands[0].concealed"),
        ({"kind": "hand_end", "hands": [{"concealed": "1m", "melds": ["[12m]"]}]}, "melds[0]"),
        ([], "event: expected an object, got []"),
    ],
)
def test_malformed_events_are_refused_naming_the_field(data: object, message: str) -> None:
    with pytest.raises(InvalidWire) as caught:
        wire.decode_event(data)
    assert message in str(caught.value)


def test_malformed_views_are_refused_naming_the_field() -> None:
    match = Match(5)
    match.start_hand()
    assert match.hand is not None
    good = match.hand.view(0).to_dict()
    for key, value, message in (
        ("phase", "lunch", "view.phase: expected one of turn"),
        ("round_wind", "X", "view.round_wind: expected a wind"),
        ("drawn", "10m", "view.drawn"),
        ("legal", [{"type": "fly"}], "view.legal[0]"),
        ("seats", [{"player": 0}], "view.seats[0]: missing field"),
        ("dice", [[1]], "view.dice: expected two pairs"),
        ("claim", {"tile": "5m", "from": 1, "kind": "rob"}, "view.claim.kind"),
    ):
        with pytest.raises(InvalidWire) as caught:
            wire.decode_view({**good, key: value})
        assert message in str(caught.value), (key, caught.value)
    with pytest.raises(InvalidWire, match="missing field 'current'"):
        wire.decode_view({k: v for k, v in good.items() if k != "current"})


def test_tiles_and_melds_as_the_server_writes_them_read_as_the_careful_reader_reads_them() -> None:
    # The readers look up a tile, a meld or a river's entry as ``str``/``name`` write them;
    # any other spelling goes the long way (the notation's reader). Both give the same.
    for text, tile in wire._TILE_NAMED.items():
        assert wire.decode_tile(text, "t") == tile == wire.decode_tile(f"{text[0]} {text[1:]}", "t")
        assert wire._RIVER_WRITTEN[text + wire.CLAIMED_MARK] == (tile, True)
    assert len(wire._TILE_NAMED) == 34
    for text, meld in wire._MELD_WRITTEN.items():
        assert str(meld) == text
        assert wire.decode_meld(f"[ {text[1:]}") == meld  # (a space: the long way)
    kinds = Counter(m.kind for m in wire._MELD_WRITTEN.values())
    assert kinds == {MeldKind.CHOW: 21 * 3, MeldKind.PUNG: 34 * 3, MeldKind.KONG: 34 * 4}


def test_a_view_spelt_otherwise_decodes_the_same_and_errors_name_the_river_entry() -> None:
    match = Match(8)
    bots = [make_bot("fast", seed=8 + p) for p in range(4)]
    match.start_hand()
    hand = match.hand
    assert hand is not None
    for _ in range(40):  # some discards, so that every river has tiles
        player = hand.awaiting()[0]
        match.apply(player, bots[player].choose(hand.view(player)))
    good = hand.view(0).to_dict()
    respelt = json.loads(json.dumps(good))
    for seat in respelt["seats"]:  # honors as 1z..7z, suited tiles with a space
        seat["river"] = [
            f"{'ESWNCFP'.index(t[0]) + 1}z{t[1:]}" if t[0] in "ESWNCFP" else f"{t[0]} {t[1:]}"
            for t in seat["river"]
        ]
    assert any(seat["river"] for seat in respelt["seats"])
    assert wire.decode_view(respelt) == wire.decode_view(good)
    broken = json.loads(json.dumps(good))
    broken["seats"][2]["river"] = [*broken["seats"][2]["river"], "0m*"]
    at = len(broken["seats"][2]["river"]) - 1
    with pytest.raises(InvalidWire, match=rf"view\.seats\[2\]\.river\[{at}\]"):
        wire.decode_view(broken)


# -------------------------------------------------------------- the docs ---

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def doc_values() -> Iterator[Any]:
    """Every JSON value of every ```json block of docs/protocol.md."""
    decoder = json.JSONDecoder()
    for block in re.findall(r"^```json\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.M | re.S):
        at = 0
        while True:
            while at < len(block) and block[at].isspace():
                at += 1
            if at >= len(block):
                break
            value, at = decoder.raw_decode(block, at)
            yield value


def elided(value: Any) -> Any:
    """``value`` without the docs' ``"..."`` (standing for more of the same) in its lists."""
    if isinstance(value, dict):
        return {k: elided(v) for k, v in value.items()}
    if isinstance(value, list):
        return [elided(v) for v in value if v != "..."]
    return value


def nested(value: Any) -> Iterator[tuple[str | None, Any]]:
    """Every object in ``value`` with the key it stands under."""
    stack: list[tuple[str | None, Any]] = [(None, value)]
    while stack:
        key, item = stack.pop()
        if isinstance(item, dict):
            yield key, item
            stack.extend(item.items())
        elif isinstance(item, list):
            stack.extend((key, x) for x in item)


def test_the_docs_examples_decode_and_encode_back_to_themselves() -> None:
    events, views = [], []
    for value in doc_values():
        for key, item in nested(elided(value)):
            if key == "view" and "seats" in item:  # (not version 2's, which has no seats)
                views.append(item)
            elif key in (None, "events") and item.get("kind") in wire.EVENT_TYPES:
                events.append(item)
    assert {e["kind"] for e in events} == set(wire.EVENT_KINDS)
    for example in events:
        assert same_json(wire.encode_event(wire.decode_event(example)), example), example
    assert views
    for example in views:
        typed = wire.decode_view(example)
        assert same_json(wire.encode_view(typed, "rules" not in example), example), example


def test_the_docs_event_table_lists_the_wire_event_kinds() -> None:
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("| event | fields |") :].split("\n\n")[0]
    kinds = re.findall(r"^\| `(\w+)` \|", table, re.M)
    # The wild-tile indicator is documented with the custom rules, not in the table.
    assert "- Events: `indicator` (to everyone" in text
    assert sorted([*kinds, "indicator"]) == sorted(wire.EVENT_KINDS)

"""Golden fan tests: every hand of ``data/fans-curated.jsonl`` scored and compared exactly.

The corpus (kept in the repository) holds 210 hands, one JSON object a line::

    {"request": {"hand": "...", "self_drawn": false, "last_of_kind": false, "kong": false,
                 "wall_last": false, "round_wind": "E", "seat_wind": "E", "flowers": 0},
     "expect": {"total": 14, "fans": [["All Chows", 2, 1], ["Knitted Straight", 12, 1]]}}

The hands are the test inputs of ChineseOfficialMahjongHelper's ``unit_test.cpp`` (its dated
bug cases and the rule-book examples); the expected results were computed with PyMahjongGB
1.4.0. In ``fans`` the points are **per fan**, not times the count: ``["Pung of Terminals or
Honors", 1, 2]`` is two pungs worth 1 each, and ``total`` is the sum of points x count
(``test_corpus_is_consistent`` checks this). Fans compare order-insensitively.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.fans import Fan
from engine.notation import parse_hand
from engine.scoring import WinContext, score
from engine.tiles import Wind

CORPUS = Path(__file__).parent / "data" / "fans-curated.jsonl"


def _load() -> list[Any]:
    cases = []
    with CORPUS.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                case = json.loads(line)
                cases.append(pytest.param(case, id=f"{number}:{case['request']['hand']}"))
    return cases


CASES = _load()


def _context(request: dict[str, Any]) -> WinContext:
    return WinContext(
        self_drawn=request["self_drawn"],
        last_of_kind=request["last_of_kind"],
        kong=request["kong"],
        wall_last=request["wall_last"],
        seat_wind=Wind.parse(request["seat_wind"]),
        round_wind=Wind.parse(request["round_wind"]),
        flowers=request["flowers"],
    )


def test_corpus_is_consistent() -> None:
    assert len(CASES) == 210
    for param in CASES:
        (case,) = param.values
        expect = case["expect"]
        assert expect["total"] == sum(points * count for _, points, count in expect["fans"])
        for name, points, count in expect["fans"]:
            assert Fan.by_name(name).points == points, name
            assert count >= 1


@pytest.mark.parametrize("case", CASES)
def test_golden(case: dict[str, Any]) -> None:
    request, expect = case["request"], case["expect"]
    hand = parse_hand(request["hand"])
    result = score(hand, _context(request))
    got_fans = sorted([fc.fan.en, fc.fan.points, fc.count] for fc in result.fans)
    want_fans = sorted(expect["fans"])
    assert (result.total, got_fans) == (expect["total"], want_fans), (
        f"{request['hand']}: got {result.total} {got_fans}, want {expect['total']} {want_fans}"
    )
    flowers = request["flowers"]
    assert result.meets_minimum == (result.total - flowers >= 8)

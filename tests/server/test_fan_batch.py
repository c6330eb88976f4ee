"""``guobiao fan --jsonl`` writes, byte for byte, what the plain way of writing it writes.

``run_batch`` reads requests with orjson (the standard library where the two could differ),
shares the ``WinContext`` of a situation between requests, and writes each result from
cached pieces. Here its whole output is compared with the straightforward pipeline it
replaces (``json.loads``, ``parse_request``, ``score``, ``json.dumps(result.to_dict(),
ensure_ascii=False)``) on seeded random hands, under MCR and with wild tiles under the
custom rules, and on lines made to tell orjson and the standard library apart.
"""

from __future__ import annotations

import io
import json
import random

import handgen
import pytest
from reference import context_json

from engine.errors import MahjongError
from engine.hand import Hand
from engine.notation import format_hand
from engine.rules import CUSTOM, MCR, RuleSet
from engine.scoring import score
from engine.tiles import WILD
from server.cli import fan
from server.cli.fan import RequestError, encode_score, parse_request, run_batch


def _plainly(lines: list[str], rules: RuleSet) -> str:
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            result: dict[str, object] = {
                "error": f"line {number}: empty line; expected a JSON request"
            }
        else:
            try:
                request = json.loads(line)
            except ValueError as exc:
                result = {"error": f"line {number}: not valid JSON: {exc}"}
            else:
                try:
                    hand, ctx = parse_request(request)
                    result = score(hand, ctx, rules).to_dict()
                except (RequestError, MahjongError) as exc:
                    result = {"error": f"line {number}: {exc}"}
        out.append(json.dumps(result, ensure_ascii=False) + "\n")
    return "".join(out)


def _batch(lines: list[str], rules: RuleSet) -> str:
    sink = io.StringIO()
    run_batch(io.StringIO("".join(line + "\n" for line in lines)), sink, rules)
    return sink.getvalue()


def _requests(n: int, seed: int, wilds: int = 0) -> list[str]:
    rng = random.Random(f"batch-{seed}-{wilds}")
    lines = []
    for _, hand, ctx in handgen.mixed(n, seed):
        request: dict[str, object] = {"hand": format_hand(hand), **context_json(ctx)}
        if wilds:
            tiles = list(hand.standing)
            for i in rng.sample(range(len(tiles)), min(wilds, len(tiles))):
                tiles[i] = WILD
            request["hand"] = format_hand(Hand(hand.melds, tuple(sorted(tiles)), hand.win_tile))
        for key in [k for k in request if k != "hand"]:
            if rng.random() < 0.3:
                del request[key]  # left to its default
        lines.append(json.dumps(request, ensure_ascii=False))
    return lines


def test_mcr_batch_is_byte_identical() -> None:
    lines = _requests(3000, seed=21)
    assert _batch(lines, MCR) == _plainly(lines, MCR)


@pytest.mark.parametrize("wilds", [0, 1, 2])
def test_custom_batch_is_byte_identical(wilds: int) -> None:
    lines = _requests(300, seed=22, wilds=wilds)
    assert _batch(lines, CUSTOM) == _plainly(lines, CUSTOM)


def test_encoded_score_is_json_dumps_of_its_dict() -> None:
    for _, hand, ctx in handgen.mixed(1000, seed=23):
        for rules in (MCR, CUSTOM):
            result = score(hand, ctx, rules)
            assert encode_score(result) == json.dumps(result.to_dict(), ensure_ascii=False) + "\n"


def _with(fields: str) -> str:
    return '{"hand": "555666777p5556s7s", ' + fields + "}"


ODD_LINES = [
    _with('"flowers": 123456789012345678901234567890'),  # orjson: a float
    _with('"flowers": -9223372036854775809'),
    _with('"flowers": 18446744073709551615'),
    _with('"flowers": 1e400'),  # orjson refuses, json: inf
    _with('"flowers": NaN'),
    _with('"flowers": 2.0'),
    _with('"kong": [123456789012345678901234567890]'),
    _with('"seat_wind": "\\ud800"'),  # a lone surrogate
    '{"hand": "555666777p5556s\\udc80"}',
    _with('"seat_wind": "south"'),
    _with('"seat_wind": " s "'),
    _with('"round_wind": 1'),
    _with('"self_drawn": 1'),
    _with('"seat_flowers": true'),
    _with('"hand": "123m"'),  # the last one counts, in both
    '\ufeff{"hand": "555666777p5556s7s"}',
    '{"hand": "555666777p5556s7s"} x',
    '{"hand": "555666777p5556s7s",}',
    '{"hand": "555666777p5556s\t7s"}',  # a raw tab: not JSON
    "123456789012345678901234567890",
    "[1e400]",
    "null",
    "   ",
    '{"hand": "5 5 5 666777p5556s7s"}',
    '{"hand": "[555p][666p][777p]5556s7s", "self_drawn": true, "flowers": 8}',
]


def test_odd_lines_are_answered_as_before() -> None:
    assert _batch(ODD_LINES, MCR) == _plainly(ODD_LINES, MCR)
    assert _batch(ODD_LINES, CUSTOM) == _plainly(ODD_LINES, CUSTOM)


# ``run_batch`` reads the hand of a line as text when the rest of the line (after the hand's
# closing quote) is that of a right request seen before. Each rest below is first seen with a
# plain hand, then with hands that must not be read as text, or whose line is another request.
_REST = ', "self_drawn": true, "seat_wind": "S"}'
TEXT_LINES = [
    '{"hand": "555666777p5556s7s"' + _REST,
    '{"hand": "555666777p5556s\\u0037s"' + _REST,  # an escape: the same hand
    '{"hand": "555666777p5556s\\"7s"' + _REST,  # an escaped quote: not the end of the hand
    '{"hand": "555666777p5556s\t7s"' + _REST,  # a raw tab: not JSON
    '{"hand": "555666777p5556s\x7f7s"' + _REST,  # DEL: JSON, left to the parser
    '{"hand": "555666777p5556s7s\u3000"' + _REST,  # a wide space, written as it is
    '{"hand": "123m"' + _REST,  # not a hand
    '{"hand": "[555p][666p][777p]5556s7s"' + _REST,
    '{"hand": 5' + _REST,
    '{"hand": "555666777p5556s7s", "kong": true, "hand": "123m"}',  # the last hand counts
    '{"hand": "123m", "kong": true, "hand": "123m"}',
    '{"hand": "555666777p5556s7s", "kong": true, "hand": "123m"}',
    '{"hand": "555666777p5556s7s", "kong": true, "h\\u0061nd": "123m"}',
    '{"hand": "555666777p5556s7s", "kong": true, "h\\u0061nd": "123m"}',
    '{"hand": "555666777p5556s7s", "flowers": 1}',
    '{"hand": "555666777p5556s7s", "flowers": 1.0}',
    '{"hand": "555666777p5556s7s", "flowers": true}',
    '{"hand": "555666777p5556s7s", "flowers": 1}',
    '{"hand": "555666777p5556s7s"}',
    '{"hand": "555666777p5556s7s"} ',
    '{"hand": "555666777p5556s7s" }',
    '{"hand": ""}',
    '{"hand": "", "seat_wind": "S"}',
]


def test_lines_read_as_text_are_answered_as_before() -> None:
    for lines in (TEXT_LINES, TEXT_LINES[::-1], TEXT_LINES + TEXT_LINES):
        assert _batch(lines, MCR) == _plainly(lines, MCR)
        assert _batch(lines, CUSTOM) == _plainly(lines, CUSTOM)
    assert _REST + "\n" in fan._BY_REST  # the text was read

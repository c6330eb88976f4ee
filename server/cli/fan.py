"""``guobiao fan``: score a winning hand given in hand notation.

One hand from the command line::

    guobiao fan "[123m][EEE,2]456p789s5s5s" --self-drawn --seat-wind S --flowers 2

or a batch (``--jsonl``): one JSON request per input line, one JSON result per
output line, in order. A bad line gets ``{"error": "..."}`` and the batch goes on.

``--rules NAME`` scores under a preset of ``config/rules.toml`` (default ``mcr``);
under the ``custom`` presets a ``*`` in the hand is a wild tile (财神) and the
starred fans of document 000 count (``--heavenly``, ``--seat-flowers``, ...).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from typing import TextIO

import orjson

from engine.errors import MahjongError
from engine.hand import Hand
from engine.notation import format_hand, parse_hand
from engine.rules import MCR, RuleSet
from engine.scoring import FanCount, Score, WinContext, check_situation, score
from engine.tiles import Wind
from server.presets import PresetError, load_presets

# The request fields of ``--jsonl`` and their defaults.
_FLAGS = ("self_drawn", "last_of_kind", "kong", "wall_last", "heavenly", "earthly", "human")
_DEFAULTS: dict[str, object] = {
    "self_drawn": False,
    "last_of_kind": False,
    "kong": False,
    "wall_last": False,
    "heavenly": False,
    "earthly": False,
    "human": False,
    "seat_wind": "E",
    "round_wind": "E",
    "flowers": 0,
    "seat_flowers": 0,
}


class RequestError(ValueError):
    """A ``--jsonl`` request that is not of the documented form."""


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "fan",
        help="score a winning hand",
        description="Score a winning hand: its fans, points and total. The last tile of HAND "
        "is the winning tile; melds go in brackets, e.g. [123m][EEE,2]456p789s5s5s.",
    )
    parser.add_argument("hand", nargs="?", help="the hand in notation (omit with --jsonl)")
    parser.add_argument("--self-drawn", action="store_true", help="won by self-draw (自摸)")
    parser.add_argument(
        "--last-tile",
        action="store_true",
        help="the winning tile was the last of its kind: the other three were visible (和绝张)",
    )
    parser.add_argument(
        "--kong",
        action="store_true",
        help="kong-related: Out with Replacement Tile when self-drawn (杠上开花), "
        "Robbing The Kong on a discard (抢杠和)",
    )
    parser.add_argument(
        "--wall-last",
        action="store_true",
        help="the last tile of the wall: Last Tile Draw (妙手回春) / Last Tile Claim (海底捞月)",
    )
    parser.add_argument(
        "--seat-wind", type=_wind, default=Wind.EAST, metavar="WIND", help="E, S, W or N"
    )
    parser.add_argument(
        "--round-wind", type=_wind, default=Wind.EAST, metavar="WIND", help="E, S, W or N"
    )
    parser.add_argument("--flowers", type=_flowers, default=0, metavar="N", help="flowers, 0-8")
    parser.add_argument(
        "--rules",
        default="mcr",
        metavar="PRESET",
        help="rule preset of config/rules.toml (default mcr); under custom presets * is a "
        "wild tile and the starred fans count",
    )
    parser.add_argument(
        "--rules-file", default=None, metavar="FILE", help="read presets from FILE instead"
    )
    custom = parser.add_argument_group("custom rule set only (document 000, starred fans)")
    custom.add_argument("--heavenly", action="store_true", help="天和: the dealer's initial 14")
    custom.add_argument(
        "--earthly", action="store_true", help="地和: on the dealer's first discard"
    )
    custom.add_argument(
        "--human", action="store_true", help="人和: before one's first discard, no claim made"
    )
    custom.add_argument(
        "--seat-flowers",
        type=_seat_flowers,
        default=0,
        metavar="N",
        help="季花: how many of the flowers are the seat's own (0-2)",
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the result as JSON")
    output.add_argument(
        "--jsonl",
        action="store_true",
        help="batch: JSON requests on standard input, one JSON result per line",
    )
    return parser


def _wind(text: str) -> Wind:
    try:
        return Wind.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _flowers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 8:
        raise argparse.ArgumentTypeError(f"flowers must be a whole number 0..8, got {text!r}")
    return value


def _seat_flowers(text: str) -> int:
    if text not in ("0", "1", "2"):
        raise argparse.ArgumentTypeError(f"seat flowers must be 0, 1 or 2, got {text!r}")
    return int(text)


def _rules(args: argparse.Namespace) -> RuleSet | None:
    """The chosen preset, or ``None`` after printing why it cannot be had."""
    try:
        presets = load_presets(args.rules_file)
    except PresetError as exc:
        print(f"guobiao fan: {exc}", file=sys.stderr)
        return None
    if args.rules not in presets:
        print(
            f"guobiao fan: unknown rule preset {args.rules!r}; known: {', '.join(presets)}",
            file=sys.stderr,
        )
        return None
    return presets[args.rules]


def run(args: argparse.Namespace) -> int:
    rules = _rules(args)
    if rules is None:
        return 2
    if args.jsonl:
        if args.hand is not None:
            print(
                "guobiao fan: --jsonl reads hands from standard input, not the command line",
                file=sys.stderr,
            )
            return 2
        run_batch(sys.stdin, sys.stdout, rules)
        return 0
    starred = [opt for opt in ("heavenly", "earthly", "human") if getattr(args, opt)]
    if args.seat_flowers:
        starred.append("seat-flowers")
    if starred and not rules.extra_fans:
        names = ", ".join(f"--{opt}" for opt in starred)
        print(f"guobiao fan: {names}: {_no_starred(rules)} (try --rules custom)", file=sys.stderr)
        return 2
    if args.hand is None:
        print(
            "guobiao fan: give a hand, e.g. guobiao fan '[123m][EEE,2]456p789s5s5s' "
            "(or --jsonl for a batch)",
            file=sys.stderr,
        )
        return 2
    try:
        ctx = WinContext(
            self_drawn=args.self_drawn,
            last_of_kind=args.last_tile,
            kong=args.kong,
            wall_last=args.wall_last,
            seat_wind=args.seat_wind,
            round_wind=args.round_wind,
            flowers=args.flowers,
            heavenly=args.heavenly,
            earthly=args.earthly,
            human=args.human,
            seat_flowers=args.seat_flowers,
        )
    except MahjongError as exc:  # options that do not fit together: a usage error
        print(f"guobiao fan: {_OPTION_NAMES.sub(_option, str(exc))}", file=sys.stderr)
        return 2
    try:
        hand = parse_hand(args.hand)
    except MahjongError as exc:
        print(f"guobiao fan: {exc}", file=sys.stderr)
        return 1
    try:
        check_situation(hand, ctx)  # (--heavenly with a meld: options that do not fit the hand)
    except MahjongError as exc:
        print(f"guobiao fan: {_OPTION_NAMES.sub(_option, str(exc))}", file=sys.stderr)
        return 2
    try:
        result = score(hand, ctx, rules)
    except MahjongError as exc:
        print(f"guobiao fan: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        print(render(hand, ctx, result, rules))
    return 0


# ``WinContext``'s fields, as its errors name them, and the options that set them.
_OPTIONS = {
    "self_drawn": "--self-drawn",
    "last_of_kind": "--last-tile",
    "kong": "--kong",
    "wall_last": "--wall-last",
    "seat_wind": "--seat-wind",
    "round_wind": "--round-wind",
    "flowers": "--flowers",
    "heavenly": "--heavenly",
    "earthly": "--earthly",
    "human": "--human",
    "seat_flowers": "--seat-flowers",
}
_OPTION_NAMES = re.compile(r"(?<![-\w])(" + "|".join(_OPTIONS) + r")(?![-\w])")


def _option(match: re.Match[str]) -> str:
    return _OPTIONS[match[1]]


def render(hand: Hand, ctx: WinContext, result: Score, rules: RuleSet = MCR) -> str:
    """A readable breakdown: one line a fan, then the total and the minimum."""
    how = "self-drawn" if ctx.self_drawn else "on a discard"
    lines = [
        f"{format_hand(hand)}  ({how}, seat {ctx.seat_wind.letter}, round {ctx.round_wind.letter})"
    ]
    width = max(len(fc.fan.en) for fc in result.fans) + 4
    for fc in result.fans:
        label = fc.fan.en + (f" x{fc.count}" if fc.count > 1 else "")
        lines.append(f"  {label:<{width}}{_pad(fc.fan.zh, 8)}{fc.points:>4}")
    lines.append(f"  {'Total':<{width}}{_pad('合计', 8)}{result.total:>4}")
    without = result.total - ctx.flowers
    if rules.min_fan:
        verdict = "meets" if result.meets_minimum else "does NOT meet"
        lines.append(
            f"{without} fan without flowers: {verdict} the {rules.min_fan}-fan minimum to win"
        )
    else:
        lines.append(f"no minimum under {rules.name}: any complete hand wins")
    return "\n".join(lines)


def _no_starred(rules: RuleSet) -> str:
    """Why a starred situation is refused under ``rules`` (one without ``extra_fans``)."""
    return (
        "the starred fans (天和, 地和, 人和, 季花) are the custom rules' only; rule set "
        f"{rules.name!r} has none"
    )


def _check_starred(ctx: WinContext, rules: RuleSet) -> None:
    """``RequestError`` naming the starred fields of a ``--jsonl`` request (``ctx``) set under
    ``rules`` without the starred fans: refused as the options are, not scored without them."""
    if rules.extra_fans or not (ctx.heavenly or ctx.earthly or ctx.human or ctx.seat_flowers):
        return
    starred = [field for field in ("heavenly", "earthly", "human") if getattr(ctx, field)]
    if ctx.seat_flowers:
        starred.append("seat_flowers")
    raise RequestError(f"{', '.join(map(repr, starred))}: {_no_starred(rules)}")


def _pad(text: str, width: int) -> str:
    """Left-justify ``text`` to ``width`` terminal columns (CJK characters take two)."""
    used = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return text + " " * max(width - used, 0)


def parse_request(request: object) -> tuple[Hand, WinContext]:
    """Decode one ``--jsonl`` request.

    Raises ``RequestError`` or ``MahjongError`` saying what is wrong.
    """
    # A request whose situation fields were all seen before, in a request that was right: its
    # hand is the only thing left to check. Anything else takes ``_checked_request``.
    if type(request) is dict and _FIELDS.issuperset(request):
        hand_text = request.get("hand")
        if type(hand_text) is str:
            situation = tuple(map(request.get, _SITUATION, _SITUATION_DEFAULTS))
            if tuple(map(type, situation)) == _SITUATION_TYPES:  # then hashable, and 1 != True
                ctx = _CONTEXTS.get(situation)
                if ctx is not None:
                    return parse_hand(hand_text), ctx
    return _checked_request(request)


def _checked_request(request: object) -> tuple[Hand, WinContext]:
    """``parse_request`` checking every field, in order."""
    if type(request) is not dict and not isinstance(request, Mapping):  # (an ABC is slow)
        raise RequestError(f"a request must be a JSON object, got {type(request).__name__}")
    if not _FIELDS.issuperset(request):
        unknown = sorted(set(request) - _FIELDS)
        raise RequestError(
            f"unknown field(s) {', '.join(map(repr, unknown))}; expected hand, "
            + ", ".join(_DEFAULTS)
        )
    if "hand" not in request:
        raise RequestError("missing field 'hand'")
    hand_text = request["hand"]
    if not isinstance(hand_text, str):
        raise RequestError(f"'hand' must be a string, got {type(hand_text).__name__}")
    get = request.get
    flags = [get(flag, False) for flag in _FLAGS]
    if list(map(type, flags)) != _ALL_BOOL:
        for flag, value in zip(_FLAGS, flags, strict=True):
            if not isinstance(value, bool):
                raise RequestError(f"{flag!r} must be true or false, got {value!r}")
    seat_wind = _request_wind(request, "seat_wind")
    round_wind = _request_wind(request, "round_wind")
    flowers = get("flowers", 0)
    if isinstance(flowers, bool) or not isinstance(flowers, int) or not 0 <= flowers <= 8:
        raise RequestError(f"'flowers' must be a whole number 0..8, got {flowers!r}")
    seat_flowers = get("seat_flowers", 0)
    if isinstance(seat_flowers, bool) or seat_flowers not in (0, 1, 2):
        raise RequestError(f"'seat_flowers' must be 0, 1 or 2, got {seat_flowers!r}")
    key = (*flags, seat_wind, round_wind, flowers, seat_flowers)
    ctx = _BY_VALUES.get(key)
    if ctx is None:
        self_drawn, last_of_kind, kong, wall_last, heavenly, earthly, human = flags
        ctx = WinContext(
            self_drawn=self_drawn,
            last_of_kind=last_of_kind,
            kong=kong,
            wall_last=wall_last,
            seat_wind=seat_wind,
            round_wind=round_wind,
            flowers=flowers,
            heavenly=heavenly,
            earthly=earthly,
            human=human,
            seat_flowers=seat_flowers,
        )
        if len(_BY_VALUES) < 4096:
            _BY_VALUES[key] = ctx
    situation = tuple(map(get, _SITUATION, _SITUATION_DEFAULTS))
    if tuple(map(type, situation)) == _SITUATION_TYPES and len(_CONTEXTS) < 4096:
        _CONTEXTS[situation] = ctx
    return parse_hand(hand_text), ctx


_FIELDS = frozenset(("hand", *_DEFAULTS))
_ALL_BOOL = [bool] * len(_FLAGS)
_WIND_LETTERS = {wind.letter: wind for wind in Wind}
# The WinContext of each situation checked, by its fields (of fixed types by position, so that
# True and 1 never share an entry): frozen, so the requests of one situation share it.
_BY_VALUES: dict[tuple[object, ...], WinContext] = {}
# The same by the situation fields as written (``_SITUATION``, defaults filled in), all of the
# types ``_SITUATION_TYPES`` (a field of another type, or equal but of another type, as 1 to
# True, is checked again): ``parse_request`` finds a request's context here without checking.
_SITUATION = (*_FLAGS, "seat_wind", "round_wind", "flowers", "seat_flowers")
_SITUATION_DEFAULTS = tuple(_DEFAULTS[field] for field in _SITUATION)
_SITUATION_TYPES = tuple(map(type, _SITUATION_DEFAULTS))
_CONTEXTS: dict[tuple[object, ...], WinContext] = {}


def _request_wind(request: Mapping[str, object], key: str) -> Wind:
    value = request.get(key, "E")
    if type(value) is str:
        wind = _WIND_LETTERS.get(value)  # the usual letters; Wind.parse takes "east", " s"...
        if wind is not None:
            return wind
    if isinstance(value, str):
        try:
            return Wind.parse(value)
        except ValueError as exc:
            raise RequestError(f"{key!r}: {exc}") from None
    raise RequestError(f'{key!r} must be one of "E", "S", "W", "N", got {value!r}')


def _decode(line: str) -> object:
    """``json.loads(line)``, through orjson where both give the same value.

    orjson reads a request about three times faster, and where it reads one at all its
    strings, booleans and in-range ints are exactly the standard library's; it differs on
    what no valid request holds (big ints become floats, ``NaN`` and lone surrogates are
    refused, other error messages). So a line orjson refuses is read again by
    ``json.loads``, and ``_score_each`` reads a request again with it when the request is
    refused: a refusal quotes the standard library's values and message.
    """
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def _score_each(lines: Iterable[str], rules: RuleSet) -> Iterator[Score | dict[str, object]]:
    """Score each JSON request line: its ``Score``, or ``{"error": ...}`` for a bad line."""
    for number, line in enumerate(lines, 1):
        yield _score_line(number, line, rules)


def _score_line(number: int, line: str, rules: RuleSet) -> Score | dict[str, object]:
    """Score line ``number``: its ``Score``, or ``{"error": ...}`` for a bad line."""
    if not line or line.isspace():  # (``strip`` would copy every line)
        return {"error": f"line {number}: empty line; expected a JSON request"}
    try:
        request = _decode(line)
    except ValueError as exc:
        return {"error": f"line {number}: not valid JSON: {exc}"}
    try:
        try:
            hand, ctx = parse_request(request)
        except RequestError:
            hand, ctx = parse_request(json.loads(line))  # raises, quoting json's values
        _check_starred(ctx, rules)
        return score(hand, ctx, rules)
    except (RequestError, MahjongError) as exc:
        return {"error": f"line {number}: {exc}"}


def score_lines(lines: Iterable[str], rules: RuleSet = MCR) -> Iterator[dict[str, object]]:
    """Score each JSON request line; a bad line yields ``{"error": ...}``."""
    for result in _score_each(lines, rules):
        yield result.to_dict() if isinstance(result, Score) else result


def run_batch(source: TextIO, sink: TextIO, rules: RuleSet = MCR) -> None:
    write, flush, loads = sink.write, sink.flush, orjson.loads
    extra = rules.extra_fans
    for number, line in enumerate(source, 1):
        # The plain way of ``_score_line``, in line; a line it refuses, ``_score_line`` reads
        # again from the start and says what is wrong as it does.
        try:
            ctx = None
            if line.startswith(_HAND_FIRST):  # a situation seen before: the hand read as text
                end = line.find('"', _HAND_AT)
                ctx = _BY_REST.get(line[end + 1 :]) if end > 0 else None
            hand_text = line[_HAND_AT:end] if ctx is not None else ""
            request = None
            if ctx is not None and "\\" not in hand_text and hand_text.isprintable():
                hand = parse_hand(hand_text)
            else:
                request = loads(line)
                hand, ctx = parse_request(request)
            if not extra and (ctx.heavenly or ctx.earthly or ctx.human or ctx.seat_flowers):
                raise RequestError("a starred field")  # (``_score_line`` names them)
            result = score(hand, ctx, rules)
            if request is not None:
                _remember_rest(line, request, ctx)
        except (ValueError, MahjongError):  # (RequestError, orjson's errors: ValueErrors)
            answer = _score_line(number, line, rules)
            if isinstance(answer, Score):
                write(encode_score(answer))
            else:
                write(json.dumps(answer, ensure_ascii=False) + "\n")
        else:
            write(encode_score(result))
        flush()


# A request as ``json.dumps`` writes it with the hand first: ``{"hand": "...", ...}``. What
# follows the hand's closing quote, the rest of the line, says the situation, the same
# whatever the hand. ``_BY_REST`` keeps the context of each rest of a line that was right, so
# that a line with the same rest after ``{"hand": "HAND"`` is read from its text alone: it is
# that line with HAND for the hand, when HAND is a JSON string's text as it is (no ``\``, no
# control character: no escape, and it is one string; the ``"`` found ends it) and the rest
# holds no other ``"hand"`` (without a ``\`` in it, no key can be an escaped "hand").
_HAND_FIRST = '{"hand": "'
_HAND_AT = len(_HAND_FIRST)
_BY_REST: dict[str, WinContext] = {}


def _remember_rest(line: str, request: object, ctx: WinContext) -> None:
    """Keep ``ctx`` for the rest of ``line``, a right request whose hand was written first."""
    if not line.startswith(_HAND_FIRST) or len(_BY_REST) >= 4096:
        return
    end = line.find('"', _HAND_AT)
    rest = line[end + 1 :]
    if (
        end > 0
        and type(request) is dict
        and request.get("hand") == line[_HAND_AT:end]
        and "\\" not in line
        and '"hand"' not in rest
    ):
        _BY_REST[rest] = ctx


def encode_score(result: Score) -> str:
    """``json.dumps(result.to_dict(), ensure_ascii=False) + "\\n"``, the same text, from
    each fan's JSON written once (``tests/server/test_fan_batch.py`` compares the two)."""
    fans = result.fans
    # By the fan entries themselves: the engine's are shared, one a fan and count. The ids of
    # a remembered tuple's entries are its own: the tuple kept beside the text keeps them
    # alive, so no other entry can have them meanwhile.
    key = tuple(map(id, fans))
    known = _FANS_JSON.get(key)
    if known is None:
        text = ", ".join([_fan_json(fc) for fc in fans])
        if len(_FANS_JSON) < 4096:
            _FANS_JSON[key] = (fans, text)
    else:
        text = known[1]
    minimum = "true" if result.meets_minimum else "false"
    return f'{{"total": {result.total}, "meets_minimum": {minimum}, "fans": [{text}]}}\n'


# The JSON of each tuple of fan entries written, by their ids, with the tuple (see above).
_FANS_JSON: dict[tuple[int, ...], tuple[tuple[FanCount, ...], str]] = {}
# Each fan entry's JSON by (English name, count): a ``FanCount`` hashes in Python (a dataclass
# of an Enum), a name and a count in C.
_FAN_JSON: dict[tuple[str, int], str] = {}


def _fan_json(fc: FanCount) -> str:
    key = (fc.fan.en, fc.count)
    text = _FAN_JSON.get(key)
    if text is None:
        text = json.dumps(fc.to_dict(), ensure_ascii=False)
        if len(_FAN_JSON) < 4096:
            _FAN_JSON[key] = text
    return text

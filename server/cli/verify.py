"""``guobiao verify``: check a hand's wall against the commitment published before it.

    guobiao verify --seed 1234 --salt 5b0f...aa --commitment 9f2c...e1 --dealer-position 2

Checks ``sha256(salt || seed)`` against the commitment, then rebuilds the wall from
the seed exactly as the server did and prints the dice and each position's deal (and,
under rules with an indicator, the tile turned up), so a player can compare them with
what the table showed. ``--rules`` names the table's preset (default ``mcr``).
"""

from __future__ import annotations

import argparse
import sys

from engine.notation import format_tiles
from engine.rules import Wilds
from engine.table import HandState
from engine.tiles import FLOWER_NAMES, Wind, is_flower, name
from engine.wall import Wall
from server.fairness import commitment
from server.presets import PresetError, load_presets


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "verify",
        help="check a revealed wall against its commitment and show the deal",
        description="Check a hand's revealed seed and salt against the commitment sent "
        "before the hand, and rebuild the wall (dice and deal) from the seed.",
    )
    parser.add_argument(
        "--seed", type=int, required=True, help="the revealed seed (a whole number 0..2**64-1)"
    )
    parser.add_argument("--salt", required=True, help="the revealed salt (64 hex digits)")
    parser.add_argument(
        "--commitment", required=True, help="the commitment sent before the hand (64 hex digits)"
    )
    parser.add_argument(
        "--dealer-position",
        type=int,
        choices=range(4),
        default=0,
        help="the dealer's position 0..3 (E S W N of the round's seating; in the reveal)",
    )
    parser.add_argument(
        "--rules", default="mcr", metavar="PRESET", help="the table's rule preset (default mcr)"
    )
    return parser


# What the reveal gives (docs/protocol.md, "Fairness"): ``seed`` a whole number below 2**64,
# ``salt`` 64 hex digits (32 bytes), ``commitment`` 64 hex digits (a sha256).
SEED_LIMIT = 2**64
HEX_DIGITS = 64


def _hex_digits(option: str, text: str, what: str) -> str | None:
    """``text`` as lowercase hex, or ``None`` after printing that ``option`` must be 64 hex
    digits (a shorter salt or commitment is no reveal's: checking it could only say
    MISMATCH)."""
    value = text.strip().lower()
    if len(value) == HEX_DIGITS and all(c in "0123456789abcdef" for c in value):
        return value
    print(
        f"guobiao verify: {option} must be {HEX_DIGITS} hex digits ({what}), got {text!r}",
        file=sys.stderr,
    )
    return None


def run(args: argparse.Namespace) -> int:
    salt_hex = _hex_digits("--salt", args.salt, "32 bytes: the reveal's salt")
    if salt_hex is None:
        return 2
    given = _hex_digits("--commitment", args.commitment, "a sha256: the commit's commitment")
    if given is None:
        return 2
    salt = bytes.fromhex(salt_hex)
    if not 0 <= args.seed < SEED_LIMIT:
        print(
            "guobiao verify: --seed must be a whole number 0..2**64-1 (the reveal's seed), got "
            f"{args.seed}",
            file=sys.stderr,
        )
        return 2
    try:
        presets = load_presets()
    except PresetError as exc:
        print(f"guobiao verify: {exc}", file=sys.stderr)
        return 2
    if args.rules not in presets:
        known = ", ".join(presets)
        print(
            f"guobiao verify: unknown rule preset {args.rules!r}; known: {known}", file=sys.stderr
        )
        return 2
    rules = presets[args.rules]
    expected = commitment(args.seed, salt)
    if expected != given:
        print(f"MISMATCH: sha256(salt || seed) is {expected}, not the commitment given")
        return 1
    print("commitment OK: the wall was fixed before the hand began")
    wall = Wall.from_seed(args.seed, args.dealer_position)
    hand = HandState(wall, (0, 1, 2, 3), args.dealer_position, Wind.EAST, rules)
    events = hand.start()
    print(f"dice {wall.dice.first} {wall.dice.second}, break at stack {wall.break_stack}")
    for event in events:
        if event.kind == "deal" and event.to is not None:
            p = event.data["player"]
            dealt = event.data["tiles"]
            flowers = [t for t in dealt if t.startswith("f")]
            print(f"position {Wind(p).letter}: dealt {' '.join(dealt)}")
            if flowers:
                names = ", ".join(FLOWER_NAMES[int(f[1:]) - 1] for f in flowers)
                print(f"  flowers {names}")
    if hand.indicator is not None:
        dead = " ".join(name(t) for t in hand.dead_flowers)
        wild = " ".join(name(t) for t in sorted(hand.wilds))
        print(f"indicator {name(hand.indicator)}" + (f" (after {dead})" if dead else ""), end="")
        print(f": wild tile {wild}")
    for p in range(4):
        tiles = [t for t in range(34) for _ in range(hand.concealed[p][t])]
        held = "".join(name(t) for t in hand.held[p])  # flowers kept as wild tiles
        print(f"position {Wind(p).letter} after flowers: {held}{format_tiles(tiles)}")
    flowers_wild = rules.wilds is Wilds.FLOWERS
    rest = [name(t) for t in wall.peek_order() if flowers_wild or not is_flower(t)][:8]
    print(f"next draws from the head: {' '.join(rest)} ...")
    return 0

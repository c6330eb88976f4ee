"""The hand notation of the common MCR calculator apps.

Suits ``m`` (characters 万), ``p`` (dots 饼), ``s`` (bamboo 条), a run of digits
before its suit letter (``123m``); honors ``E S W N`` (winds) and ``C F P``
(red 中, green 发, white 白), ``1z``..``7z`` accepted for them. Melds in
brackets with an optional offer digit after the tiles, with or without a comma
(``[123m]``, ``[EEE,2]``, ``[5555p1]``); a kong without offer is concealed, a
chow or pung without offer counts as claimed from the previous player.
Standing tiles follow; the last tile of the string is the winning tile.
Spaces are ignored. Example: ``[123m][EEE,2]456p789s5s5s``. Under rules with
wild tiles (财神) a ``*`` is a wild tile standing for any tile: ``**23m456p...``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from engine.errors import InvalidHand, InvalidNotation
from engine.hand import Hand, Meld, MeldKind
from engine.tiles import EAST, HONOR_LETTERS, N_KINDS, SUIT_LETTERS, WILD, Tile, is_suited, name

_SUIT_BASE: Final = {"m": 0, "p": 9, "s": 18}


def _scan_tiles(text: str, start: int, stop: str) -> tuple[list[tuple[Tile, int]], str, int]:
    """Read tiles from ``text[start:]`` up to a character in ``stop`` or the end.

    Returns ``(tiles with their positions, trailing digits without suit, position
    after the scan)``; the caller decides whether trailing digits are allowed.
    """
    tiles: list[tuple[Tile, int]] = []
    digits = ""
    digits_at = start
    i = start
    while i < len(text) and text[i] not in stop:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if "0" <= ch <= "9":  # (not ``isdigit``: '²' and '１' are digits to it)
            if not digits:
                digits_at = i
            digits += ch
        elif ch in _SUIT_BASE or ch == "z":
            if not digits:
                raise InvalidNotation(f"suit letter {ch!r} has no digits before it", text, i)
            for k, d in enumerate(digits):
                value = int(d)
                if ch == "z":
                    if not 1 <= value <= 7:
                        raise InvalidNotation(
                            f"honor {d}z does not exist (1z..7z)", text, digits_at + k
                        )
                    tiles.append((EAST + value - 1, digits_at + k))
                else:
                    if value == 0:
                        raise InvalidNotation(
                            f"tile 0{ch} does not exist (ranks are 1..9)", text, digits_at + k
                        )
                    tiles.append((_SUIT_BASE[ch] + value - 1, digits_at + k))
            digits = ""
        elif ch == "*":
            if digits:
                raise InvalidNotation(f"digits {digits!r} have no suit letter", text, digits_at)
            tiles.append((WILD, i))
        elif ch in HONOR_LETTERS:
            if digits:
                raise InvalidNotation(f"digits {digits!r} have no suit letter", text, digits_at)
            tiles.append((EAST + HONOR_LETTERS.index(ch), i))
        else:
            raise InvalidNotation(
                f"unknown character {ch!r}; expected digits with m/p/s/z, "
                "E S W N C F P, * or [...]",
                text,
                i,
            )
        i += 1
    return tiles, digits, i if digits == "" else digits_at


def _make_meld(tiles: list[Tile], offer: int, text: str, position: int) -> Meld:
    shown = "".join(name(t) for t in tiles)
    if WILD in tiles:
        raise InvalidNotation(f"meld [{shown}]: a wild tile is never melded", text, position)
    if len(tiles) == 4 and len(set(tiles)) == 1:
        return Meld(MeldKind.KONG, tiles[0], offer)
    if len(tiles) == 3 and len(set(tiles)) == 1:
        kind = MeldKind.PUNG
    elif (
        len(tiles) == 3
        and all(is_suited(t) for t in tiles)
        and sorted(tiles)[2] - sorted(tiles)[0] == 2
        and len(set(tiles)) == 3
        and sorted(tiles)[0] // 9 == sorted(tiles)[2] // 9
    ):
        kind = MeldKind.CHOW
    else:
        raise InvalidNotation(f"meld [{shown}] is not a chow, pung or kong", text, position)
    if offer == 0:
        offer = 1
    return Meld(kind, min(tiles), offer)


def parse_tiles(text: str) -> list[Tile]:
    """Parse a plain run of tiles (no brackets): ``"123m55pEEE"`` -> tile ints."""
    plain = _plain_tiles(text)
    if plain is not None:
        return plain
    tiles, digits, at = _scan_tiles(text, 0, "[]")
    if digits:
        raise InvalidNotation(f"digits {digits!r} have no suit letter", text, at)
    if at < len(text):
        raise InvalidNotation(f"unexpected {text[at]!r} in a tile list", text, at)
    return [t for t, _ in tiles]


def parse_hand(text: str) -> Hand:
    """Parse a winning hand; raise ``InvalidNotation`` or ``InvalidHand`` saying what and where."""
    if not isinstance(text, str):
        raise InvalidNotation(f"a hand must be a string, got {type(text).__name__}")
    return _parse_written_plainly(text) or _parse_hand(text)


# The fast path. Most hands are written plainly: melds in one of the forms of
# ``_MELD_BODIES`` first, then runs of ``1-9`` digits before ``m p s`` and honor letters (or
# ``*``), no spaces, no ``z``. ``_parse_written_plainly`` reads those byte by byte with a
# table and gives up (``None``) on anything else, a hand that cannot exist included;
# ``_parse_hand`` then reads the text character by character and says what is wrong and
# where. Both give the same hand for a text both read (``tests/engine/test_notation.py``).


def _plain_codes() -> tuple[int, ...]:
    """What each byte is in plainly written standing tiles: a digit its rank (1..9), a suit
    letter 100 + its suit's first tile, an honor letter or ``*`` 200 + its tile; 0 anything
    else."""
    codes = [0] * 256
    for rank in range(1, 10):
        codes[ord(str(rank))] = rank
    for letter, base in _SUIT_BASE.items():
        codes[ord(letter)] = 100 + base
    for i, letter in enumerate(HONOR_LETTERS):
        codes[ord(letter)] = 200 + EAST + i
    codes[ord("*")] = 200 + WILD
    return tuple(codes)


_PLAIN_CODES: Final = _plain_codes()


def _meld_bodies() -> dict[str, Meld]:
    """Each meld written plainly, inside its brackets: the tiles in order (``123m``, ``EEE``,
    ``5555p``), then nothing, ``,N`` or ``N`` for the offer (nothing: a chow or pung from the
    previous player, a concealed kong)."""
    bodies: dict[str, Meld] = {}
    for kind in MeldKind:
        for tile in range(N_KINDS):
            if kind is MeldKind.CHOW and not (is_suited(tile) and tile % 9 <= 6):
                continue
            tiles = Meld(kind, tile).tiles
            body = "".join(name(t)[0] for t in tiles) + (name(tile)[1:] if is_suited(tile) else "")
            bodies[body] = Meld(kind, tile, 0 if kind is MeldKind.KONG else 1)
            for offer in (1, 2, 3):
                bodies[f"{body},{offer}"] = bodies[f"{body}{offer}"] = Meld(kind, tile, offer)
    return bodies


_MELD_BODIES: Final = _meld_bodies()


def _parse_written_plainly(text: str) -> Hand | None:
    melds: tuple[Meld, ...] = ()
    rest = text
    if text[:1] == "[":
        close = text.rfind("]") + 1
        rest = text[close:]
        found: list[Meld] = []
        for body in text[1 : close - 1].split("]["):
            meld = _MELD_BODIES.get(body)
            if meld is None:
                return None
            found.append(meld)
        melds = tuple(found)
    tiles = _plain_tiles(rest)
    if tiles is None or len(tiles) != 14 - 3 * len(melds):
        return None
    win = tiles.pop()
    tiles.sort()
    try:
        return Hand(melds, tuple(tiles), win)
    except InvalidHand:
        return None


def _plain_tiles(text: str) -> list[Tile] | None:
    """The tiles of a run written plainly (``1-9`` digits before ``m p s``, honor letters,
    ``*``; no spaces, no ``z``); None for anything else, for the careful reader to read or
    refuse (``parse_tiles``, ``_parse_hand``)."""
    try:
        data = text.encode("ascii")
    except UnicodeEncodeError:
        return None
    tiles: list[Tile] = []
    digits = -1  # where the run of digits waiting for its suit letter starts
    for i, byte in enumerate(data):
        code = _PLAIN_CODES[byte]
        if code < 100:
            if not code:
                return None
            if digits < 0:
                digits = i
        elif code < 200:
            if digits < 0:
                return None
            base = code - 101  # a rank's tile is base + rank
            for j in range(digits, i):
                tiles.append(base + _PLAIN_CODES[data[j]])
            digits = -1
        else:
            if digits >= 0:
                return None
            tiles.append(code - 200)
    return None if digits >= 0 else tiles


def _parse_hand(text: str) -> Hand:
    """``parse_hand`` character by character, every error said with its position."""
    melds: list[Meld] = []
    standing: list[tuple[Tile, int]] = []
    i = 0
    while i < len(text):
        if text[i] == "[":
            if standing:
                raise InvalidNotation("melds [...] must come before the standing tiles", text, i)
            close = text.find("]", i)
            if close < 0:
                raise InvalidNotation("'[' is never closed", text, i)
            body = text[i + 1 : close]
            offer = 0
            comma = body.find(",")
            if comma >= 0:
                offer_text = body[comma + 1 :].strip()
                if offer_text not in ("1", "2", "3"):
                    raise InvalidNotation(
                        f"meld offer {offer_text!r} must be 1, 2 or 3", text, i + 1 + comma + 1
                    )
                offer = int(offer_text)
                body = body[:comma]
            found, digits, _ = _scan_tiles(body, 0, "[")
            if digits:
                if comma >= 0 or len(digits) != 1 or digits not in "123":
                    raise InvalidNotation(
                        f"digits {digits!r} in a meld have no suit letter "
                        "(an offer is one digit 1..3)",
                        text,
                        i + 1 + body.rfind(digits),
                    )
                offer = int(digits)
            if not found:
                raise InvalidNotation("empty meld []", text, i)
            if len(melds) == 4:
                raise InvalidNotation("a hand has at most 4 melds", text, i)
            melds.append(_make_meld([t for t, _ in found], offer, text, i))
            i = close + 1
        elif text[i] == "]":
            raise InvalidNotation("']' without '['", text, i)
        else:
            found, digits, stop = _scan_tiles(text, i, "[]")
            if digits:
                raise InvalidNotation(f"digits {digits!r} have no suit letter", text, stop)
            standing.extend(found)
            i = stop
    if not standing:
        raise InvalidNotation(
            "no standing tiles: the last tile of the string is the winning tile", text
        )
    expected = 14 - 3 * len(melds)
    if len(standing) != expected:
        raise InvalidNotation(
            f"with {len(melds)} meld(s) a hand needs {expected} standing tiles "
            f"(the last one is the winning tile), got {len(standing)}",
            text,
        )
    tiles = [t for t, _ in standing]
    try:
        return Hand(tuple(melds), tuple(sorted(tiles[:-1])), tiles[-1])
    except InvalidHand as exc:
        raise InvalidNotation(str(exc), text) from None


def format_tiles(tiles: Iterable[Tile]) -> str:
    """``[0, 1, 2, 27]`` -> ``"123mE"``: sorted, digits grouped before their suit letter."""
    out: list[str] = []
    run = ""
    run_suit = ""
    ordered = sorted(tiles)
    wilds = ordered.count(WILD)
    if wilds:
        out.append("*" * wilds)  # wild tiles are kept at the left
        ordered = ordered[:-wilds]
    for tile in ordered:
        if is_suited(tile):
            letter = SUIT_LETTERS[tile // 9]
            if run and letter != run_suit:
                out.append(run + run_suit)
                run = ""
            run += str(tile % 9 + 1)
            run_suit = letter
        else:
            if run:
                out.append(run + run_suit)
                run = ""
            out.append(name(tile))
    if run:
        out.append(run + run_suit)
    return "".join(out)


def format_hand(hand: Hand) -> str:
    """The canonical notation: melds, sorted standing tiles, the winning tile last."""
    return "".join(str(m) for m in hand.melds) + format_tiles(hand.standing) + name(hand.win_tile)

"""The hand notation: round-trips (Hypothesis) and the errors a user can make.

Round-trips: ``parse_hand(format_hand(h)) == h`` for generated hands, winning (``handgen``)
or not; any way of writing a hand (tiles in any order, runs split or merged, ``1z..7z`` for
honors, offers with or without a comma, spaces) parses to the same hand and formats to one
canonical string; ``parse_tiles``/``format_tiles`` likewise.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import handgen
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import notation
from engine.errors import InvalidNotation
from engine.hand import Hand, Meld, MeldKind
from engine.notation import format_hand, format_tiles, parse_hand, parse_tiles
from engine.tiles import EAST, HONOR_LETTERS, N_KINDS, SUIT_LETTERS, Tile

# --- strategies ----------------------------------------------------------------------------


@st.composite
def winning_hands(draw: st.DrawFn) -> Hand:
    """A hand of any form from the seeded generator."""
    form = draw(st.sampled_from(sorted(handgen.FORMS)))
    seed = draw(st.integers(0, 2**32 - 1))
    return handgen.FORMS[form](random.Random(seed))


@st.composite
def any_hands(draw: st.DrawFn) -> Hand:
    """A well-formed hand, winning or not: 0..4 melds of any kind and offer, free standing tiles."""
    used = [0] * N_KINDS
    melds: list[Meld] = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(MeldKind))
        if kind is MeldKind.CHOW:
            tile = draw(st.sampled_from([t for t in range(EAST) if t % 9 <= 6]))
            offer = draw(st.integers(1, 3))
        else:
            tile = draw(st.integers(0, N_KINDS - 1))
            offer = draw(st.integers(0 if kind is MeldKind.KONG else 1, 3))
        meld = Meld(kind, tile, offer)
        if all(used[t] + meld.tiles.count(t) <= 4 for t in meld.tiles):
            for t in meld.tiles:
                used[t] += 1
            melds.append(meld)
    free = [t for t in range(N_KINDS) for _ in range(4 - used[t])]
    k = 14 - 3 * len(melds)
    picks = draw(st.lists(st.integers(0, len(free) - 1), min_size=k, max_size=k, unique=True))
    tiles = [free[i] for i in picks]
    return Hand(tuple(melds), tuple(sorted(tiles[:-1])), tiles[-1])


hands = st.one_of(winning_hands(), any_hands())


def _tokens(draw: Callable[..., Any], tiles: list[Tile]) -> str:
    """Write ``tiles`` in the given order, honors as letters or ``1z..7z``, runs split or merged."""
    out: list[tuple[str, str]] = []  # (digits, suit letter) or (honor letter, "")
    for tile in tiles:
        if tile < EAST:
            digit, letter = str(tile % 9 + 1), SUIT_LETTERS[tile // 9]
        elif draw(st.booleans()):
            digit, letter = str(tile - EAST + 1), "z"
        else:
            out.append((HONOR_LETTERS[tile - EAST], ""))
            continue
        if out and out[-1][1] == letter and draw(st.booleans()):
            out[-1] = (out[-1][0] + digit, letter)
        else:
            out.append((digit, letter))
    space: str = draw(st.sampled_from(["", "", " "]))
    return space.join(digits + letter for digits, letter in out)


@st.composite
def written(draw: st.DrawFn, hand: Hand) -> str:
    """Some valid way, canonical or not, of writing ``hand``."""
    parts: list[str] = []
    for meld in hand.melds:
        body = _tokens(draw, draw(st.permutations(meld.tiles)))
        if meld.concealed:
            offer = ""
        else:
            forms = [f",{meld.offer}", f", {meld.offer}", str(meld.offer)]
            if meld.offer == 1 and meld.kind is not MeldKind.KONG:
                forms.append("")  # a chow or pung without offer is from the previous player
            offer = draw(st.sampled_from(forms))
        parts.append(f"[{body}{offer}]")
    standing = list(draw(st.permutations(hand.standing)))
    parts.append(_tokens(draw, [*standing, hand.win_tile]))
    return draw(st.sampled_from(["", " "])).join(parts)


@st.composite
def hands_written(draw: st.DrawFn) -> tuple[Hand, str]:
    hand = draw(hands)
    return hand, draw(written(hand))


# --- round-trips ---------------------------------------------------------------------------


@given(hands)
def test_format_then_parse_gives_the_hand(hand: Hand) -> None:
    assert parse_hand(format_hand(hand)) == hand


@given(hands_written())
def test_any_writing_parses_to_the_hand_and_formats_canonically(case: tuple[Hand, str]) -> None:
    hand, text = case
    parsed = parse_hand(text)
    assert parsed == hand, text
    canonical = format_hand(parsed)
    assert canonical == format_hand(hand)
    assert format_hand(parse_hand(canonical)) == canonical


@given(st.lists(st.integers(0, N_KINDS - 1), max_size=20))
def test_format_then_parse_tiles(tiles: list[Tile]) -> None:
    assert parse_tiles(format_tiles(tiles)) == sorted(tiles)


@given(st.data())
def test_parse_tiles_keeps_the_written_order(data: st.DataObject) -> None:
    tiles = data.draw(st.lists(st.integers(0, N_KINDS - 1), max_size=20))
    assert parse_tiles(_tokens(data.draw, tiles)) == tiles


@given(st.text(alphabet="0123456789mpszESWNCFP*[] x", max_size=24))
def test_the_plain_reader_reads_what_the_careful_one_does(text: str) -> None:
    # ``parse_tiles`` reads a run written plainly by a table of bytes and leaves the rest
    # (spaces, ``z``, a ``0``, anything it cannot read) to the careful reader: what the
    # first reads, the second reads the same, and the first gives up on nothing the second
    # reads but for a space, a ``z`` or a ``0``.
    plain = notation._plain_tiles(text)
    try:
        careful: list[Tile] | None = notation.parse_tiles(" " + text)  # (a space: careful)
    except InvalidNotation:
        careful = None
    if plain is not None:
        assert plain == careful
    elif careful is not None:
        assert any(c in text for c in " z0"), text


def test_canonical_examples() -> None:
    assert format_hand(parse_hand("[123m][EEE,2]456p789s5s5s")) == "[123m,1][EEE,2]456p5789s5s"
    assert format_tiles([27, 0, 33, 9, 1]) == "12m1pEP"
    assert parse_tiles("19m19p19sESWNCFP") == [0, 8, 9, 17, 18, 26, *range(EAST, N_KINDS)]


# --- what the notation accepts -------------------------------------------------------------


def test_1z_to_7z_are_the_honors() -> None:
    assert parse_tiles("1234567z") == parse_tiles("ESWNCFP") == list(range(EAST, N_KINDS))
    assert parse_hand("[555z2]123m456p789s11z") == parse_hand("[CCC,2]123m456p789sEE")


@pytest.mark.parametrize("meld", ["[EEE,2]", "[EEE2]", "[EEE, 2]", "[111z,2]", "[111z2]"])
def test_offer_with_or_without_comma(meld: str) -> None:
    hand = parse_hand(meld + "123m456p789s55s")
    assert hand.melds == (Meld(MeldKind.PUNG, EAST, 2),)


def test_chow_offer_says_which_tile_was_claimed() -> None:
    hand = parse_hand("[123m3]456p789s123sEE")
    assert hand.melds == (Meld(MeldKind.CHOW, 0, 3),)


def test_chow_and_pung_without_offer_come_from_the_previous_player() -> None:
    hand = parse_hand("[123m][EEE]456p789s5s5s")
    assert hand.melds == (Meld(MeldKind.CHOW, 0, 1), Meld(MeldKind.PUNG, EAST, 1))


def test_kong_without_offer_is_concealed() -> None:
    concealed = parse_hand("[5555p]123m789s123sEE")
    assert concealed.melds == (Meld(MeldKind.KONG, 13, 0),)
    assert concealed.melds[0].concealed
    assert concealed.is_concealed
    assert format_hand(concealed) == "[5555p]123m123789sEE"
    exposed = parse_hand("[5555p1]123m789s123sEE")
    assert exposed.melds == (Meld(MeldKind.KONG, 13, 1),)
    assert not exposed.is_concealed
    assert exposed == parse_hand("[5555p,1]123m789s123sEE")


def test_last_tile_is_the_winning_tile() -> None:
    hand = parse_hand("123m456p789s5s23sE1s")
    assert hand.win_tile == 18
    assert hand.standing == tuple(sorted(parse_tiles("123m456p789s5s23sE")))
    assert parse_hand("123m456p789s5s23sE1s") != parse_hand("123m456p789s1s23sE5s")


# --- errors: the type, what went wrong, and where ------------------------------------------

# (text, words the message must contain, position of the problem)
LOCATED_ERRORS = [
    pytest.param("123m456p789s12x3sEE", "unknown character 'x'", 14, id="unknown-character"),
    pytest.param("123m456p789s123sE#E", "unknown character '#'", 17, id="unknown-symbol"),
    pytest.param("123m456p789s123EE", "digits '123' have no suit letter", 12, id="digits-no-suit"),
    pytest.param("123m456p789s123sEE9", "digits '9' have no suit letter", 18, id="trailing-digit"),
    pytest.param("m123", "suit letter 'm' has no digits", 0, id="suit-without-digits"),
    pytest.param("123m456p789s123s8z8z", "8z", 16, id="honor-8z"),
    pytest.param("123m456p789s123s0m0m", "0m", 16, id="rank-0"),
    pytest.param("[124m]456p789s123sEE", "is not a chow, pung or kong", 0, id="bad-meld"),
    pytest.param("[123m][EEF]456p789s12sEE", "is not a chow, pung or kong", 6, id="bad-meld-2"),
    pytest.param("[789m1p]456p789s123sEE", "is not a chow, pung or kong", 0, id="chow-two-suits"),
    pytest.param("[EEEEE]456p789s123s", "is not a chow, pung or kong", 0, id="five-in-a-meld"),
    pytest.param("[ESW]123m456p789sEE", "is not a chow, pung or kong", 0, id="honor-chow"),
    pytest.param("[]123m456p789s123sEE", "empty meld", 0, id="empty-meld"),
    pytest.param("[123m][456m][789m][123p][456p]EE", "at most 4 melds", 24, id="more-than-4-melds"),
    pytest.param("[123m,4]456p789s123sEE", "offer '4' must be 1, 2 or 3", 6, id="offer-4"),
    pytest.param("[EEE,0]123m456p789sSS", "offer '0' must be 1, 2 or 3", 5, id="offer-0"),
    pytest.param("[EEE,x]123m456p789sSS", "offer 'x' must be 1, 2 or 3", 5, id="offer-letter"),
    pytest.param("[123m,]456p789s123sEE", "offer '' must be 1, 2 or 3", 6, id="offer-empty"),
    pytest.param("[123m4]456p789s123sEE", "an offer is one digit 1..3", 5, id="offer-4-no-comma"),
    pytest.param("[123m12]456p789s123sEE", "an offer is one digit 1..3", 5, id="offer-2-digits"),
    pytest.param("[123m456p789s123sEE", "'[' is never closed", 0, id="unclosed"),
    pytest.param("123m]456p789s123sEE", "']' without '['", 4, id="stray-close"),
    pytest.param("123m[456p]789s123sEE", "melds [...] must come before", 4, id="meld-after-tiles"),
    # Characters Python takes for digits that are not ours: a superscript made ``int`` raise
    # (a traceback from ``guobiao fan``, the rest of a batch lost), a fullwidth digit was
    # read as its rank.
    pytest.param("\u00b923m456p789s123s5s5s", "unknown character '\u00b9'", 0, id="superscript"),
    pytest.param("12\uff13m456p789s123s5s5s", "unknown character '\uff13'", 2, id="fullwidth"),
]


@pytest.mark.parametrize(("text", "words", "position"), LOCATED_ERRORS)
def test_error_names_problem_and_position(text: str, words: str, position: int) -> None:
    with pytest.raises(InvalidNotation) as info:
        parse_hand(text)
    message = str(info.value)
    assert words in message
    assert info.value.position == position
    assert f"position {position} of {text!r}" in message


# Problems of the hand as a whole: no single position, the message quotes the input.
WHOLE_HAND_ERRORS = [
    pytest.param("123m456p789s12sEE", "needs 14 standing tiles", id="13-tiles"),
    pytest.param("123m456p789s123sEEE", "needs 14 standing tiles", id="15-tiles"),
    pytest.param("[123m][456m][789m][123p]E", "needs 2 standing tiles", id="4-melds-1-tile"),
    pytest.param("[123m]456p789s123sEEE", "needs 11 standing tiles", id="meld-and-14"),
    pytest.param("11111m456p789s12sE", "1m appears 5 times", id="fifth-tile"),
    pytest.param("[EEEE]123m456p789sEE", "E appears 6 times", id="fifth-tile-with-kong"),
    pytest.param("[1111m][1111p]123s456s789sE", "needs 8 standing tiles", id="two-kongs-10-tiles"),
    pytest.param("", "no standing tiles", id="empty"),
    pytest.param("[123m][456m][789m][123p]", "no standing tiles", id="only-melds"),
]


@pytest.mark.parametrize(("text", "words"), WHOLE_HAND_ERRORS)
def test_error_for_the_whole_hand_quotes_it(text: str, words: str) -> None:
    with pytest.raises(InvalidNotation) as info:
        parse_hand(text)
    message = str(info.value)
    assert words in message
    if info.value.position is None:
        assert repr(text) in message or not text
    else:
        assert f"position {info.value.position} of {text!r}" in message


@pytest.mark.parametrize(
    ("text", "words", "position"),
    [
        pytest.param("12x3m", "unknown character 'x'", 2, id="unknown"),
        pytest.param("123", "digits '123' have no suit letter", 0, id="no-suit"),
        pytest.param("12m[3m]", "unexpected '['", 3, id="bracket"),
    ],
)
def test_parse_tiles_errors(text: str, words: str, position: int) -> None:
    with pytest.raises(InvalidNotation) as info:
        parse_tiles(text)
    assert words in str(info.value)
    assert info.value.position == position


def test_invalid_notation_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown character"):
        parse_hand("123m456p789s123sE?")

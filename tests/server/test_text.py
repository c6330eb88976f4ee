"""Text that users write (server.text): the one check of every name and text shown to others,
where the protocol, the accounts and the command line apply it, and the username skeleton."""

from __future__ import annotations

import json
import string
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server import protocol
from server.accounts import USERNAME, AccountError, check_username
from server.text import BadText, clean, skeleton

REFUSED = ["Cc", "Cf", "Co", "Cs", "Zl", "Zp"]
# A few of each kind that a name must not hide: direction overrides and isolates, zero-width
# characters, the soft hyphen and the byte order mark, a tag, controls, a line separator,
# private use, a Hangul filler that shows as nothing.
KNOWN_BAD = "\u202e\u202d\u2066\u2069\u200e\u200f\u061c\u200b\u200c\u200d\u2060\u00ad\ufeff"
KNOWN_BAD += "\U000e0041\t\n\r\x00\x7f\u2028\u2029\ue000\u3164"


def refused(char: str) -> bool:
    return (
        unicodedata.category(char) in REFUSED
        or unicodedata.bidirectional(char) in {"LRE", "RLE", "LRO", "RLO", "PDF"}
        or unicodedata.bidirectional(char) in {"LRI", "RLI", "FSI", "PDI"}
        or char in "\u115f\u1160\u3164\uffa0"
    )


allowed_text = st.text(
    st.characters(exclude_categories=REFUSED).filter(lambda c: not refused(c)), max_size=60
)


@given(st.text(max_size=60))
def test_clean_keeps_what_it_accepts_in_nfc_and_refuses_the_rest(text: str) -> None:
    normal = unicodedata.normalize("NFC", text)
    try:
        got = clean(text, "name", limit=80, required=False)
    except BadText as exc:
        assert any(refused(c) for c in normal) or len(normal.strip()) > 80, (text, exc)
    else:
        assert got == normal.strip()
        assert not any(refused(c) for c in got)


@given(allowed_text, st.sampled_from(KNOWN_BAD) | st.characters(categories=REFUSED), st.data())
def test_a_refused_character_anywhere_is_named_with_its_place(
    text: str, bad: str, data: st.DataObject
) -> None:
    at = data.draw(st.integers(0, len(text)))
    with pytest.raises(BadText) as caught:
        clean(text[:at] + bad + text[at:], "name", limit=80)
    # NFC may compose a letter with the mark before it, moving the place: it is named as found.
    assert f"U+{ord(bad):04X}" in str(caught.value)


def test_clean_trims_normalises_and_says_what_is_wrong() -> None:
    assert clean("  Club night ", "name", limit=80) == "Club night"
    assert clean("Cafe\u0301 \u4e2d\u6587 \u2764\ufe0f", "name", limit=80) == "Café 中文 ❤️"
    with pytest.raises(BadText, match=r"name must not be empty \(1 to 80 characters\)"):
        clean("   ", "name", limit=80)
    assert clean("", "reason", limit=80, required=False) == ""
    with pytest.raises(BadText, match="name has 81 characters; at most 80"):
        clean("x" * 81, "name", limit=80)
    with pytest.raises(BadText, match=r"U\+202E RIGHT-TO-LEFT OVERRIDE \(character 5\)"):
        clean("Club\u202enight", "name", limit=80)
    with pytest.raises(BadText, match=r"U\+000A \(a control character\) \(character 4\)"):
        clean("abc\n", "name", limit=80)  # refused, not trimmed away


# --- where the check applies ------------------------------------------------------------


def decode(kind: str, payload: dict[str, object]) -> protocol.Message:
    return protocol.decode(json.dumps({"type": kind, "payload": payload}))


@pytest.mark.parametrize(
    ("kind", "payload", "words"),
    [
        ("tournament_create", {"name": ""}, "name must not be empty"),
        ("tournament_create", {"name": "   "}, "name must not be empty"),
        ("tournament_create", {"name": "Club\u202enight"}, "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("tournament_create", {"name": "\u200b"}, "U+200B ZERO WIDTH SPACE"),
        ("tournament_create", {"name": "x" * 81}, "name has 81 characters; at most 80"),
        ("tournament_create", {"name": "x" * 3000}, "name has 3000 characters; at most 80"),
        ("tournament_create", {"name": 5}, "'name' must be a string of at most 80 characters"),
        ("tournament_configure", {"tournament": 1, "name": ""}, "name must not be empty"),
        ("tournament_configure", {"tournament": 1, "name": "a\u2066b"}, "U+2066"),
        (
            "tournament_penalty",
            {"tournament": 1, "player": "mei", "kind": "penalty", "amount": -5,
             "reason": "slow\u202eplay"},
            "reason may not hold U+202E",
        ),
        ("tournament_undo", {"tournament": 1, "entry": 1, "reason": "ok\ufeff"}, "U+FEFF"),
    ],
)  # fmt: skip
def test_every_text_shown_to_others_is_checked_on_the_wire(
    kind: str, payload: dict[str, object], words: str
) -> None:
    with pytest.raises(protocol.ProtocolError) as caught:
        decode(kind, payload)
    assert caught.value.code == "bad_message"
    assert caught.value.reason.startswith(f"{kind}: ") and words in caught.value.reason


def test_a_tournament_name_arrives_trimmed_and_in_nfc() -> None:
    message = decode("tournament_create", {"name": "  Cafe\u0301 night "})
    assert isinstance(message, protocol.TournamentRequest)
    assert message.get("name") == "Café night"
    undo = decode("tournament_undo", {"tournament": 1, "entry": 1, "reason": ""})
    assert isinstance(undo, protocol.TournamentRequest) and undo.get("reason") == ""


@pytest.mark.parametrize("name", ["li\u202en", "\u200blin", "lin\u00ad", "l\u0131n"])
def test_a_username_with_a_refused_or_foreign_character_is_bad(name: str) -> None:
    with pytest.raises(AccountError) as caught:
        check_username(name)
    assert caught.value.code == "bad_username"
    found = next(c for c in name if not c.isascii())
    if refused(found):
        assert f"U+{ord(found):04X}" in caught.value.reason


# --- the username skeleton --------------------------------------------------------------

USERNAME_CHARS = string.ascii_letters + string.digits + "_-"
usernames = st.text(st.sampled_from(USERNAME_CHARS), min_size=3, max_size=20)
# UTS #39's confusables among those characters (confusables.txt: 0 -> O, 1 -> l, I -> l,
# m -> rn), each a group of spellings that look alike; and any letter in either case.
LOOK_ALIKE = [("0", "O", "o"), ("1", "l", "I", "L", "i"), ("m", "rn", "M", "RN", "rN", "Rn")]


def test_the_skeleton_of_the_reported_names_and_others() -> None:
    assert skeleton("Iin") == skeleton("lin") == skeleton("1in") == skeleton("LIN") == "lln"
    assert skeleton("B0B") == skeleton("bob")
    assert skeleton("mei") == skeleton("rnei") == skeleton("RNEI")
    assert skeleton("lin") != skeleton("lan") and skeleton("bob") != skeleton("b0d")
    assert skeleton("guest-0427") == "guest-o427"


@given(usernames)
def test_the_skeleton_ignores_case_and_is_its_own_skeleton(name: str) -> None:
    assert skeleton(name) == skeleton(name.upper()) == skeleton(name.lower())
    assert skeleton(skeleton(name)) == skeleton(name)


@given(usernames, st.data())
def test_spellings_that_look_alike_have_one_skeleton(name: str, data: st.DataObject) -> None:
    changed = []
    for char in name:
        group = next((g for g in LOOK_ALIKE if char in g), None)
        changed.append(data.draw(st.sampled_from(group)) if group else char)
    assert skeleton("".join(changed)) == skeleton(name)


def test_usernames_hold_only_the_ascii_the_skeleton_covers() -> None:
    """The skeleton knows UTS #39's confusables among ASCII only: the day a username may hold
    another character, this fails (and the skeleton must take the whole table first)."""
    beyond = [f"U+{cp:04X}" for cp in range(0x80, 0x110000) if USERNAME.fullmatch(chr(cp) * 3)]
    assert beyond == []
    assert {c for c in map(chr, range(0x80)) if USERNAME.fullmatch(c * 3)} == set(USERNAME_CHARS)

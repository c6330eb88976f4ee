"""Text that users write and others read: one check for all of it, and the username skeleton.

**Names and free text** (``clean``): every string a user writes that is shown to other
people (a username, a tournament's name, the reason of a director's correction) goes
through ``clean``: normalised to NFC, trimmed of surrounding white space, and refused
(``BadText``, naming the character, its code point and its place) if it holds a character
that is invisible or changes how the text around it is shown:

- Unicode categories Cc (controls: tab, line feed, ...), Cf (format: the zero-width space,
  joiners and no-break, the soft hyphen, the byte order mark, the bidirectional marks,
  embeddings, overrides and isolates such as U+202E RIGHT-TO-LEFT OVERRIDE, the tag
  characters), Co (private use), Cs (surrogates), Zl and Zp (line and paragraph separators);
- the explicit bidirectional formatting characters by their bidirectional class (LRE, RLE,
  LRO, RLO, PDF, LRI, RLI, FSI, PDI: all Cf today, checked by class too so that the rule
  does not hang on their category);
- the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0): letters that show as nothing.

Spaces inside the text, letters and marks of any script, and emoji (with their variation
selectors) are kept. A rule refuses rather than strips: a name shown to others is the one
its author sees.

**The username skeleton** (``skeleton``): two usernames are one name when they look alike.
A username is ASCII letters, digits, ``_`` and ``-`` (``server.accounts.USERNAME``), and
names are one in any case already; among those characters the confusables of Unicode's
UTS #39 (``confusables.txt``) map ``0`` to ``O``, ``1`` and ``I`` to ``l``, and ``m`` to
``rn``, and no others. Closed under case, that is: the name in lower case, with ``i``,
``1`` (and so ``I``, ``l``, ``L``) as ``l``, ``0`` (and ``O``) as ``o``, and ``m`` as
``rn``: ``Iin``, ``lin``, ``1in`` and ``LIN`` have one skeleton, ``lln``. Beyond ASCII the
skeleton is only NFKC and case folding: a username that may hold more than ASCII needs the
whole UTS #39 table here first (``tests/server/test_text.py`` fails the day the username
pattern admits a character outside ASCII).
"""

from __future__ import annotations

import unicodedata

REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp"})
BIDI_CONTROLS = frozenset({"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"})
INVISIBLE_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")  # the Hangul fillers

# UTS #39's ASCII confusables (0 -> O, 1 -> l, I -> l, m -> rn), closed under case.
_SKELETON = str.maketrans({"i": "l", "1": "l", "0": "o", "m": "rn"})


class BadText(ValueError):
    """A name or text refused by ``clean``; the message says which character and where."""


def refused_character(text: str) -> tuple[int, str] | None:
    """The place and the first character of ``text`` that ``clean`` refuses, else None."""
    for at, char in enumerate(text):
        if (
            unicodedata.category(char) in REFUSED_CATEGORIES
            or unicodedata.bidirectional(char) in BIDI_CONTROLS
            or char in INVISIBLE_LETTERS
        ):
            return at, char
    return None


_UNNAMED = {"Cc": "a control character", "Cs": "a surrogate", "Co": "a private-use character"}


def describe(char: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``, ``U+0009 (a control character)``: a character by
    its code point and name."""
    name = unicodedata.name(char, "")
    if not name:
        category = unicodedata.category(char)
        name = f"({_UNNAMED.get(category, category)})"
    return f"U+{ord(char):04X} {name}"


def clean(value: str, what: str, *, limit: int, required: bool = True) -> str:
    """``value`` normalised to NFC and trimmed, if it is at most ``limit`` characters
    (at least 1 when ``required``) and holds no refused character; ``BadText`` saying
    which rule ``what`` (``"name"``, ``"a username"``) breaks otherwise."""
    text = unicodedata.normalize("NFC", value)
    found = refused_character(text)  # before trimming: a line break at the end is refused too
    if found is not None:
        at, char = found
        raise BadText(
            f"{what} may not hold {describe(char)} (character {at + 1}): no control, "
            "format (invisible or direction-changing), private-use or line-separator "
            "characters"
        )
    text = text.strip()
    if required and not text:
        raise BadText(f"{what} must not be empty (1 to {limit} characters)")
    if len(text) > limit:
        raise BadText(f"{what} has {len(text)} characters; at most {limit}")
    return text


def skeleton(username: str) -> str:
    """The form in which look-alike usernames are equal (the module docstring says how).

    >>> skeleton("Iin"), skeleton("LIN"), skeleton("1in"), skeleton("B0B"), skeleton("mei")
    ('lln', 'lln', 'lln', 'bob', 'rnel')
    """
    return unicodedata.normalize("NFKC", username).casefold().translate(_SKELETON)

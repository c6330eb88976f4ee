"""The engine's exception tree.

::

    MahjongError                      base of everything the engine raises on purpose
    ├── InvalidNotation (ValueError)  a hand or tile string that does not parse
    ├── InvalidHand (ValueError)      a well-formed hand that cannot exist (tile counts, melds)
    ├── NotWinning (ValueError)       a hand that is not a complete winning hand
    ├── InvalidWire (ValueError)      a view or event in its JSON form that does not decode
    └── IllegalAction                 an action the table does not allow now (stable ``code``)

Messages quote the input with ``{x!r}`` and say what was expected, so that a
user pasting a hand, or a client sending an action, can see what to fix.
"""

from __future__ import annotations


class MahjongError(Exception):
    """Base class of all errors raised deliberately by the engine."""


class InvalidNotation(MahjongError, ValueError):
    """A hand or tile string that does not follow the notation.

    ``position`` is the 0-based index in ``text`` where the problem was found
    (``None`` when the problem is the string as a whole).
    """

    def __init__(self, message: str, text: str = "", position: int | None = None) -> None:
        if position is not None:
            message = f"{message} (at position {position} of {text!r})"
        elif text:
            message = f"{message} (in {text!r})"
        super().__init__(message)
        self.text = text
        self.position = position


class InvalidHand(MahjongError, ValueError):
    """A hand whose tiles or melds cannot exist: a fifth copy, a wrong tile count..."""


class NotWinning(MahjongError, ValueError):
    """A hand that is not a complete winning hand of any form."""


class InvalidWire(MahjongError, ValueError):
    """A view or event in its JSON form (``engine.wire``) that does not decode; the message
    names the field and quotes what it held."""


class IllegalAction(MahjongError):
    """An action the table does not allow now.

    ``code`` is stable and sent over the wire (``"not_your_turn"``,
    ``"tile_not_in_hand"``...); the message explains it to a person.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code

"""What an HTTP request names: its ids in the path and its query string, read by one set of
rules for every endpoint (docs/protocol.md, "HTTP on the same port").

- An id in a path is a whole number within its column's range (``ID_MAX``: an ``Integer``
  column, 32-bit signed on PostgreSQL); anything else is a malformed request (400), never
  "not found" (404), whatever the endpoint.
- A query string is ``name=value`` pairs: percent-escapes must decode to UTF-8 text, a value
  may hold no control character (NUL and the rest of Unicode's Cc), and a name is given at
  most once (``?offset=1&offset=2`` is not "the last one wins"); at most ``MAX_FIELDS``
  pairs. What breaks a rule is ``BadRequest``, saying which parameter and why.
"""

from __future__ import annotations

import unicodedata
from urllib.parse import unquote_to_bytes

from server.errors import shown

ID_MAX = 2**31 - 1
MAX_FIELDS = 16


class BadRequest(ValueError):
    """A request parameter that is not what the endpoint takes (HTTP 400)."""


def whole_number(text: str, what: str, low: int = 1, high: int = ID_MAX) -> int:
    """``text`` (a path part, a parameter's value) as a whole number ``low..high`` (leading
    zeros allowed; thousands of digits refused without making an int of them)."""
    digits = text.lstrip("0") or "0"
    if (
        not (text.isascii() and text.isdigit())
        or len(digits) > len(str(high))
        or not low <= int(digits) <= high
    ):
        raise BadRequest(f"{what} must be a whole number {low}..{high}, got {shown(text)}")
    return int(digits)


def parse_query(text: str) -> dict[str, str]:
    """The query string ``text`` (without its ``?``) as names and values; ``BadRequest``
    for a repeated name, an escape that is not UTF-8, a control character, too many pairs."""
    out: dict[str, str] = {}
    if not text:
        return out
    fields = [f for f in text.split("&") if f]
    if len(fields) > MAX_FIELDS:
        raise BadRequest(f"a query has at most {MAX_FIELDS} parameters, got {len(fields)}")
    for field in fields:
        raw_name, _, raw_value = field.partition("=")
        name = _decoded(raw_name, "a parameter's name")
        value = _decoded(raw_value, f"parameter {shown(name)}")
        if name in out:
            raise BadRequest(f"parameter {shown(name)} is given more than once")
        out[name] = value
    return out


def _decoded(raw: str, what: str) -> str:
    try:
        text = unquote_to_bytes(raw.replace("+", " ")).decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest(f"{what} is not UTF-8 text once its %-escapes are decoded") from None
    for char in text:
        if unicodedata.category(char) == "Cc":
            raise BadRequest(f"{what} holds a control character (U+{ord(char):04X})")
    return text

"""server.query: one reading of request ids and query strings for every HTTP endpoint."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.errors import shown
from server.query import ID_MAX, MAX_FIELDS, BadRequest, parse_query, whole_number


def test_whole_numbers_in_range_and_nothing_else() -> None:
    assert whole_number("1", "an id") == 1
    assert whole_number("0007", "an id") == 7
    assert whole_number(str(ID_MAX), "an id") == ID_MAX
    for bad in ("0", str(ID_MAX + 1), "9" * 5000, "-1", "1e3", "+1", "1.0", "", " 1", "١"):
        with pytest.raises(BadRequest, match=r"an id must be a whole number 1\.\.2147483647"):
            whole_number(bad, "an id")


def test_a_long_bad_value_is_quoted_short() -> None:
    with pytest.raises(BadRequest) as refused:
        whole_number("x" * 3000, "an id")
    assert len(str(refused.value)) < 150 and "(3000 characters)" in str(refused.value)
    assert shown("abc") == "'abc'"


def test_a_query_string_is_read_strictly() -> None:
    assert parse_query("") == {}
    assert parse_query("q=li%20n&offset=10&flag") == {"q": "li n", "offset": "10", "flag": ""}
    assert parse_query("q=%E4%B8%AD+x") == {"q": "中 x"}
    for text, words in [
        ("q=%00", "parameter 'q' holds a control character (U+0000)"),
        ("q=a%0Ab", "U+000A"),
        ("q=%FF%FE", "parameter 'q' is not UTF-8"),
        ("%FF=1", "a parameter's name is not UTF-8"),
        ("offset=1&offset=2", "parameter 'offset' is given more than once"),
        ("&".join(f"k{i}=1" for i in range(MAX_FIELDS + 1)), f"at most {MAX_FIELDS}"),
    ]:
        with pytest.raises(BadRequest, match=re.escape(words)):
            parse_query(text)


@given(st.dictionaries(st.text(min_size=1, max_size=8), st.text(max_size=20), max_size=MAX_FIELDS))
def test_any_text_without_control_characters_round_trips(pairs: dict[str, str]) -> None:
    if any(c < " " or "\x7f" <= c <= "\x9f" for text in (*pairs, *pairs.values()) for c in text):
        with pytest.raises(BadRequest):
            parse_query("&".join(f"{quote(k)}={quote(v)}" for k, v in pairs.items()))
        return
    try:
        text = "&".join(f"{quote(k)}={quote(v)}" for k, v in pairs.items())
    except UnicodeEncodeError:  # (a lone surrogate is not text a URL can carry)
        return
    assert parse_query(text) == pairs

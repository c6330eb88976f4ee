"""docs/protocol.md and the message registry (``server.messages.registry``) agree both ways.

Every message type the document shows (an example ``{"type": ..., "payload": ...}`` outside
the HTTP section) exists in the registry, on the side it is shown on (a client message, or a
server one: those with ``reply_to``, and the types the server sends), with no field the
registry does not know; every type of the registry is documented, and each of its fields
too. A field is documented by an example of its type that carries it, by ``type.field`` in
the text, by a list item that starts with its type (``- `tournament_create`: `name`
...``) and names it, or by the first column of a table of "the fields of an ``update``".
``check`` is a pure function of the text and the registry, tested here on a made-up
document and registry too: it fails when either side grows alone.

What the examples' values look like is ``test_protocol_docs``'s business (against a real
server); this test needs none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from server.messages import registry

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
HTTP_SECTION = "HTTP on the same port"

Fields = Mapping[str, Sequence[str]]  # a message type -> its payload's fields


def messages_shown(text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each message of the document's ```json blocks outside the HTTP section, with its
    line: a top-level object with a string ``type`` and a ``payload`` object."""
    decoder = json.JSONDecoder()
    lines = text.splitlines()
    section = ""
    i = 0
    while i < len(lines):
        if lines[i].startswith("## "):
            section = lines[i][3:].strip()
        if lines[i].strip() == "```json":
            start = i + 1
            while lines[i + 1].strip() != "```":
                i += 1
            block = "\n".join(lines[start : i + 1])
            at = 0
            while True:
                while at < len(block) and block[at].isspace():
                    at += 1
                if at >= len(block):
                    break
                value, end = decoder.raw_decode(block, at)
                line = start + 1 + block.count("\n", 0, at)
                at = end
                if (
                    section != HTTP_SECTION
                    and isinstance(value, dict)
                    and isinstance(value.get("type"), str)
                    and isinstance(value.get("payload"), dict)
                ):
                    yield line, value
        i += 1


FIELD_TABLE = re.compile(r"fields of (?:an? |the )?`([a-z_]+)`[^\n]*\n\n((?:\|[^\n]*\n)+)")


def named_in_text(text: str, kinds: set[str]) -> dict[str, set[str]]:
    """The fields the text names for each type of ``kinds``: ``type.field`` anywhere, every
    backticked word of a list item that begins with ``type``, and the first column of a
    table just after a line that speaks of "the fields of an ``type``"."""
    named: dict[str, set[str]] = {kind: set() for kind in kinds}
    for kind, name in re.findall(r"`([a-z_]+)\.([a-z_]+)`", text):
        if kind in named:
            named[kind].add(name)
    for kind, table in FIELD_TABLE.findall(text):
        if kind in named:
            for row in table.splitlines():
                named[kind] |= set(re.findall(r"`([a-z_]+)`", row.split("|")[1]))
    for item in re.split(r"\n(?=- |\n)", text):
        first = re.match(r"- `([a-z_]+)`", item)
        if first and first.group(1) in named:
            named[first.group(1)] |= set(re.findall(r"`([a-z_]+)`", item))
    return named


def check(text: str, inbound: Fields, outbound: Fields) -> list[str]:
    """How ``text`` and the registry (``inbound``: what clients send, ``outbound``: what
    the server sends, each type with its fields) disagree; empty when they agree."""
    problems: list[str] = []
    shown: dict[str, dict[str, set[str]]] = {"client": {}, "server": {}}
    for line, value in messages_shown(text):
        kind = value["type"]
        side = "server" if "reply_to" in value or kind not in inbound else "client"
        known = inbound if side == "client" else outbound
        if kind not in known:
            problems.append(f"line {line}: a {side} message {kind!r} the registry does not hold")
            continue
        unknown = set(value["payload"]) - set(known[kind])
        if unknown:
            problems.append(f"line {line}: {kind!r} has no field {sorted(unknown)} in the registry")
        shown[side].setdefault(kind, set()).update(value["payload"])
    for side, known in (("client", inbound), ("server", outbound)):
        named = named_in_text(text, set(known))
        for kind, fields in known.items():
            if kind not in shown[side]:
                problems.append(f"the {side} message {kind!r} has no example in the document")
                continue
            missing = set(fields) - shown[side][kind] - named[kind]
            if missing:
                problems.append(f"the {side} message {kind!r}: {sorted(missing)} not documented")
    return problems


def registry_fields() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    return (
        {kind: spec.fields for kind, spec in registry.INBOUND.items()},
        {kind: spec.fields for kind, spec in registry.OUTBOUND.items()},
    )


def test_the_document_and_the_registry_agree() -> None:
    problems = check(DOC.read_text(encoding="utf-8"), *registry_fields())
    assert not problems, "\n".join(problems)


MADE_UP = """# A protocol

## Talking

```json
{"type": "hello", "id": 1, "payload": {"versions": [1]}}
{"type": "welcome", "reply_to": 1, "payload": {"version": 1}}
```

- `hello`: `versions`, and `client` (a name).
- `welcome.server`: the server's name.

The fields of a `welcome` payload:

| field | |
| --- | --- |
| `motd` | a greeting |

## HTTP on the same port

```json
{"type": "ignored", "payload": {}}
```
"""
INBOUND = {"hello": ("versions", "client")}
OUTBOUND = {"welcome": ("version", "server", "motd")}


def test_check_passes_a_document_that_matches_its_registry() -> None:
    assert check(MADE_UP, INBOUND, OUTBOUND) == []


def test_check_fails_when_the_registry_grows_alone() -> None:
    assert check(MADE_UP, {**INBOUND, "ping": ()}, OUTBOUND) == [
        "the client message 'ping' has no example in the document"
    ]
    assert check(MADE_UP, INBOUND, {"welcome": ("version", "server", "motd", "news")}) == [
        "the server message 'welcome': ['news'] not documented"
    ]


def test_check_fails_when_the_document_grows_alone() -> None:
    more = MADE_UP.replace(
        '{"version": 1}}', '{"version": 1, "news": "hi"}}\n{"type": "pong", "payload": {}}'
    )
    assert check(more, INBOUND, OUTBOUND) == [
        "line 7: 'welcome' has no field ['news'] in the registry",
        "line 8: a server message 'pong' the registry does not hold",
    ]


def test_a_field_named_only_in_another_types_item_is_not_documented() -> None:
    other = MADE_UP.replace(
        "- `hello`: `versions`, and `client` (a name).", "- `welcome`: `client`."
    )
    assert check(other, INBOUND, OUTBOUND) == [
        "the client message 'hello': ['client'] not documented"
    ]

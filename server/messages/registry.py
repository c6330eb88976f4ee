"""Every message type of the protocol, both ways, with its class and its payload fields.

``INBOUND`` is what clients send (``server.messages.inbound``: the server decodes them, the
Python client writes them), ``OUTBOUND`` what the server sends (``server.messages.outbound``:
the server writes them, the Python client reads them). The docs test holds
``docs/protocol.md`` to this registry both ways: every documented type and field exists
here, and every type here is documented with its fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from server.messages import inbound, outbound


@dataclass(frozen=True, slots=True)
class Spec:
    """One message type: its wire ``type`` (``kind``), its class and the fields its payload
    may hold."""

    kind: str
    cls: type
    fields: tuple[str, ...]


def _inbound_fields(kind: str, cls: type) -> tuple[str, ...]:
    if cls is inbound.TournamentRequest:
        first = () if kind == "tournament_create" else ("tournament",)
        return first + tuple(inbound.TOURNAMENT_FIELDS[kind])
    return tuple(f.name for f in fields(cls) if f.name != "id")


INBOUND: dict[str, Spec] = {
    kind: Spec(kind, cls, _inbound_fields(kind, cls)) for kind, cls in inbound.CLASSES.items()
}
OUTBOUND: dict[str, Spec] = {
    cls.TYPE: Spec(cls.TYPE, cls, outbound.fields_of(cls)) for cls in outbound.MESSAGES
}


def outbound_class(kind: str) -> type[outbound.ServerMessage]:
    """The class of server message ``kind``; KeyError for a type the server never sends."""
    cls: type[outbound.ServerMessage] = OUTBOUND[kind].cls
    return cls


def read(kind: str, payload: Mapping[str, Any]) -> outbound.ServerMessage | None:
    """The typed message of a server frame's ``type`` and payload; None for a type the
    registry does not know (a newer server's). ``KeyError`` for a missing field."""
    spec = OUTBOUND.get(kind)
    if spec is None:
        return None
    cls: type[outbound.ServerMessage] = spec.cls
    return cls.from_payload(payload)

"""The wire's views and events back as the engine's types (``engine.wire``, the module the
server encodes with), so that the engine's bots can play over the network."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine import wire
from engine.errors import InvalidWire
from engine.hand import Meld
from engine.table import View
from server.client.errors import ViewError

HIDDEN_KONG = wire.HIDDEN_KONG  # a face-down kong in a view


def parse_meld(text: str) -> Meld:
    """``"[123m,1]"`` (chow, claimed tile 1st), ``"[EEE,2]"``, ``"[5555p]"`` (concealed kong)."""
    try:
        return wire.decode_meld(text)
    except InvalidWire as exc:
        raise ViewError(str(exc)) from None


def view_from_dict(d: Mapping[str, Any]) -> View:
    """The engine's ``View`` from its wire form (``engine.wire.decode_view``, the inverse of
    ``View.to_dict``).

    ``"[????]"`` melds become ``hidden_kongs``; river tiles with ``*`` were claimed; a view
    without ``you`` is a spectator's (``viewer`` None, nothing legal). Raises ``ViewError``
    saying what is malformed.
    """
    try:
        return wire.decode_view(d)
    except InvalidWire as exc:
        raise ViewError(str(exc)) from None


def event_from_dict(d: Mapping[str, Any]) -> wire.WireEvent:
    """An event (``{"kind": "discard", ...}``) as its ``engine.wire`` type; raises
    ``ViewError`` saying what is malformed."""
    try:
        return wire.decode_event(d)
    except InvalidWire as exc:
        raise ViewError(str(exc)) from None

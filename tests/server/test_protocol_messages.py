"""The message registry (``server.messages``): every type both ways, typed, and written
exactly as the dicts it replaced were."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError

import pytest

from server import protocol
from server.messages import inbound, outbound, registry


def test_the_registry_holds_every_type_the_server_decodes() -> None:
    assert set(registry.INBOUND) == protocol.MESSAGE_TYPES == set(inbound.DECODERS)
    assert registry.INBOUND["join_table"].fields == ("table", "seat", "invite_code")
    assert registry.INBOUND["action"].cls is protocol.Play
    assert registry.INBOUND["tournament_create"].fields[:2] == ("name", "rules")
    assert registry.INBOUND["tournament_swap"].fields == ("tournament", "a", "b")


def test_the_registry_holds_one_class_per_server_type() -> None:
    assert len(registry.OUTBOUND) == len(outbound.MESSAGES)
    assert not set(registry.OUTBOUND) & set(registry.INBOUND)  # no type names both ways
    assert registry.outbound_class("queue") is outbound.Queue
    assert registry.OUTBOUND["table"].fields == outbound.SUMMARY_FIELDS
    with pytest.raises(KeyError):
        registry.outbound_class("hello")


@pytest.mark.parametrize(
    ("message", "kind", "payload"),
    [
        (outbound.Welcome(2, "guobiao 0.1.0", 20), "welcome",
         {"version": 2, "server": "guobiao 0.1.0", "heartbeat_seconds": 20}),
        (outbound.Welcome(3, "guobiao 0.1.0", 20, 15, 3, 120), "welcome",
         {"version": 3, "server": "guobiao 0.1.0", "heartbeat_seconds": 20, "turn_seconds": 15,
          "min_turn_seconds": 3, "max_turn_seconds": 120}),
        (outbound.Pong(), "pong", {}),
        (outbound.Error("stale", "late"), "error", {"code": "stale", "reason": "late"}),
        (outbound.Error("rate_limited", "slow", 1.5), "error",
         {"code": "rate_limited", "reason": "slow", "retry_after": 1.5}),
        (outbound.TableCreated("t1", None), "table_created", {"table": "t1", "invite_code": None}),
        (outbound.Queue("left", "mcr", True), "queue",
         {"state": "left", "ladder": "mcr", "casual": True}),
        (outbound.Queue("matched", "mcr", False, "t2", 3), "queue",
         {"state": "matched", "ladder": "mcr", "casual": False, "table": "t2", "seat": 3}),
        (outbound.Queue("waiting", "mcr", True, size=2, waited_seconds=0, gap=0.0), "queue",
         {"state": "waiting", "ladder": "mcr", "casual": True, "size": 2, "waited_seconds": 0,
          "gap": 0.0}),
        (outbound.TournamentSession(1, 2, 3, "S", "t9"), "tournament_session",
         {"tournament": 1, "session": 2, "table": 3, "wind": "S", "table_id": "t9"}),
        (outbound.Update({"table": "t1", "seq": 4}), "update", {"table": "t1", "seq": 4}),
    ],
)  # fmt: skip
def test_a_typed_message_is_written_as_its_dict_was(
    message: outbound.ServerMessage, kind: str, payload: dict[str, object]
) -> None:
    assert protocol.encode(message) == protocol.write(kind, payload)
    assert protocol.encode(message, "r1") == protocol.write(kind, payload, "r1")
    assert list(json.loads(protocol.encode(message))["payload"]) == list(payload)  # the order
    assert set(payload) <= set(outbound.fields_of(type(message)))
    assert registry.OUTBOUND[kind].cls is type(message)


def test_error_is_the_typed_error() -> None:
    assert protocol.error("stale", "late", 7) == protocol.encode(outbound.Error("stale", "late"), 7)


def test_messages_are_frozen() -> None:
    message = outbound.Joined("t1", 0)
    with pytest.raises(FrozenInstanceError):
        message.seat = 1  # type: ignore[misc]


def test_a_typed_message_takes_no_payload_of_its_own() -> None:
    with pytest.raises(TypeError):
        protocol.encode(outbound.Pong(), {"x": 1})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        protocol.encode("pong")  # type: ignore[arg-type]

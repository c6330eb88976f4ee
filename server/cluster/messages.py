"""The messages between nodes: one frozen dataclass per kind, each with its wire form.

A node sends another (or everyone) a small JSON object over Redis pub/sub
(``server.cluster.bus``). Its kind is ``k``; its fields have one- or two-letter keys, named
beside each field below (``metadata["key"]``), so that a busy table's relayed updates stay
small. The wire form is the one the nodes have always spoken, so nodes of the previous
release and of this one can run side by side during a rolling restart.

``encode(message)`` gives the JSON object; ``decode(body)`` the typed message, or raises
``BadMessage`` (an unknown kind, a missing or ill-typed field): the bus logs it and goes on,
a message it cannot read never stops a node. ``KINDS`` lists every kind, which the docs'
table (docs/deployment.md, "Messages between nodes") is checked against.

The fields are declared once, as the dataclass's fields; the codec reads them: a field
without a default is required; ``None``, ``False`` and an empty tuple are left out of the
wire form (the reader takes the default back); ``hop`` is sent as ``1``. A ``Sender`` field
(the connection a relayed message is from) is written flat into the message (``n``, ``c``,
``u``, ``g``, ``a``, ``v``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Union

__all__ = [
    "KINDS",
    "SPEAKS",
    "Attach",
    "Attached",
    "Back",
    "BadMessage",
    "Bye",
    "Coordinator",
    "Drain",
    "FindSeat",
    "Gone",
    "In",
    "Message",
    "Move",
    "Moved",
    "Out",
    "Prompt",
    "Reattach",
    "Released",
    "Replace",
    "Reply",
    "Sender",
    "Service",
    "ServiceGone",
    "TableFinished",
    "Take",
    "Unseated",
    "decode",
    "encode",
]

# The messages this release speaks, written in each node's presence (``speaks``): 1, those of
# the first release; 2 adds ``unseated`` and publications packing several messages (a JSON
# array, ``server.cluster.bus``). A node sends a newer form only to nodes that speak it (a
# rolling restart runs both releases side by side).
SPEAKS = 2


class BadMessage(ValueError):
    """A message between nodes that cannot be read: an unknown kind, a missing field, a
    field of the wrong type. The message is quoted, shortened."""

    def __init__(self, reason: str, body: object) -> None:
        super().__init__(f"{reason}: {body!r:.200}")
        self.reason = reason


def key(name: str) -> dict[str, str]:
    """A field's wire key (``field(metadata=key("t"))``)."""
    return {"key": name}


# ------------------------------------------------------------------ who sent it ---


@dataclass(frozen=True, slots=True)
class Sender:
    """The connection a relayed message is from: its node (``n``), its id there (``c``),
    and who it is (account ``u``, guest ``g``, address ``a``, protocol version ``v``), as
    the receiving node's ``RemotePeer`` for it needs them."""

    node: str = field(metadata=key("n"))
    cid: str = field(metadata=key("c"))
    username: str | None = field(default=None, metadata=key("u"))
    guest: bool = field(default=False, metadata=key("g"))
    address: str = field(default="unknown", metadata=key("a"))
    version: int = field(default=1, metadata=key("v"))


# ------------------------------------------------- a connection's node -> owner ---


@dataclass(frozen=True, slots=True)
class In:
    """A client's frame (``f``, as received) for table ``t``, to the node that owns it.
    ``hop``: forwarded once already by a node the table had left (it is not forwarded
    again)."""

    kind: ClassVar[str] = "in"
    sender: Sender
    table: str = field(metadata=key("t"))
    frame: str = field(metadata=key("f"))
    hop: bool = field(default=False, metadata=key("hop"))


@dataclass(frozen=True, slots=True)
class Back:
    """The sender's player came back (``login``, ``resume``): her seat at table ``t``."""

    kind: ClassVar[str] = "back"
    sender: Sender
    table: str = field(metadata=key("t"))
    hop: bool = field(default=False, metadata=key("hop"))


@dataclass(frozen=True, slots=True)
class Gone:
    """The sender's connection left table ``t`` (it closed, or watches no more)."""

    kind: ClassVar[str] = "gone"
    sender: Sender
    table: str = field(metadata=key("t"))


@dataclass(frozen=True, slots=True)
class Reattach:
    """Table ``t`` has a new owner: the sender is at it again (her seat, or, with the
    ``watch`` frame ``f`` she watched it with, as a spectator). Answered ``attached``."""

    kind: ClassVar[str] = "reattach"
    sender: Sender
    table: str = field(metadata=key("t"))
    watch: str | None = field(default=None, metadata=key("f"))


@dataclass(frozen=True, slots=True)
class FindSeat:
    """To every node: where does the sender's player sit? Her table's owner seats her back
    (``attach``)."""

    kind: ClassVar[str] = "find_seat"
    sender: Sender


@dataclass(frozen=True, slots=True)
class Service:
    """A queue or tournament request (frame ``f``) to the coordinator. ``hop``: forwarded
    once already by a node that was the coordinator no more."""

    kind: ClassVar[str] = "svc"
    sender: Sender
    frame: str = field(metadata=key("f"))
    hop: bool = field(default=False, metadata=key("hop"))


@dataclass(frozen=True, slots=True)
class ServiceGone:
    """The sender's connection, queued at the coordinator, closed."""

    kind: ClassVar[str] = "svc_gone"
    sender: Sender


@dataclass(frozen=True, slots=True)
class Bye:
    """Connection ``c`` of node ``n`` closed: every node it was relayed to forgets it."""

    kind: ClassVar[str] = "bye"
    node: str = field(metadata=key("n"))
    cid: str = field(metadata=key("c"))


# ----------------------------------------------- an owner -> a connection's node ---


@dataclass(frozen=True, slots=True)
class Out:
    """Text ``x`` for connection ``c``. A table's word carries the table ``t`` and the
    fencing token ``f`` its owner runs it with (a word of an older owner is dropped);
    the queue's and the tournaments' carry neither."""

    kind: ClassVar[str] = "out"
    cid: str = field(metadata=key("c"))
    text: str = field(metadata=key("x"))
    table: str | None = field(default=None, metadata=key("t"))
    fence: int | None = field(default=None, metadata=key("f"))


@dataclass(frozen=True, slots=True)
class Prompt:
    """Connection ``c`` has a decision to make at table ``t`` (update ``s``): its node
    counts the time it takes to answer. With the owner's fencing token ``f``."""

    kind: ClassVar[str] = "prompt"
    cid: str = field(metadata=key("c"))
    table: str = field(metadata=key("t"))
    seq: int = field(metadata=key("s"))
    fence: int | None = field(default=None, metadata=key("f"))


@dataclass(frozen=True, slots=True)
class Attach:
    """Table ``t`` of node ``o`` took connection ``c`` in (the queue or a tournament
    seated her): her node sends what she says there to ``o``."""

    kind: ClassVar[str] = "attach"
    cid: str = field(metadata=key("c"))
    table: str = field(metadata=key("t"))
    owner: str = field(metadata=key("o"))


@dataclass(frozen=True, slots=True)
class Attached:
    """The owner took connection ``c`` in at table ``t`` (the answer to ``reattach``)."""

    kind: ClassVar[str] = "attached"
    cid: str = field(metadata=key("c"))
    table: str = field(metadata=key("t"))


# -------------------------------------------------------------- who owns what ---


@dataclass(frozen=True, slots=True)
class Moved:
    """To every node: node ``o`` owns table ``t`` with fencing token ``f`` (an older
    token's word is ignored), players ``p`` seated there. Every node sends its connections
    at the table, and those of its players, there (``reattach``)."""

    kind: ClassVar[str] = "moved"
    table: str = field(metadata=key("t"))
    owner: str = field(metadata=key("o"))
    fence: int = field(default=0, metadata=key("f"))
    players: tuple[str, ...] = field(default=(), metadata=key("p"))


@dataclass(frozen=True, slots=True)
class Released:
    """To every node: node ``o`` handed table ``t`` to another; messages for it wait for
    the new owner's ``moved``."""

    kind: ClassVar[str] = "released"
    table: str = field(metadata=key("t"))
    owner: str = field(metadata=key("o"))


@dataclass(frozen=True, slots=True)
class Take:
    """To the node a table is handed to: adopt table ``t`` (restore it from its log)."""

    kind: ClassVar[str] = "take"
    table: str = field(metadata=key("t"))


@dataclass(frozen=True, slots=True)
class Move:
    """From ``guobiao cluster move``, to table ``t``'s owner: hand it to node ``to`` (the
    least loaded ready node without it)."""

    kind: ClassVar[str] = "move"
    table: str = field(metadata=key("t"))
    to: str | None = field(default=None, metadata=key("to"))


@dataclass(frozen=True, slots=True)
class Drain:
    """From ``guobiao cluster drain``: hand every table to the others, take none."""

    kind: ClassVar[str] = "drain"


@dataclass(frozen=True, slots=True)
class Coordinator:
    """To every node: node ``o`` is the coordinator now (the ladder queue and the
    tournaments); queued connections are queued there again."""

    kind: ClassVar[str] = "coordinator"
    owner: str = field(metadata=key("o"))


@dataclass(frozen=True, slots=True)
class Unseated:
    """To every node: the people ``us`` sit no more at table ``t``, whose match finished on
    the sender's node. Each node forgets them there at once, not at its next read of
    ``PREFIX:seated`` (a player who leaves a finished match may sit down anywhere at once).
    Sent before the players are told the match ended, so every node hears it first."""

    kind: ClassVar[str] = "unseated"
    table: str = field(metadata=key("t"))
    users: tuple[str, ...] = field(metadata=key("us"))


# ------------------------------------------------------------------ tournaments ---


@dataclass(frozen=True, slots=True)
class TableFinished:
    """To the coordinator: tournament table ``t`` (of tournament, round and table
    ``tour``) finished on the sender's node."""

    kind: ClassVar[str] = "tfin"
    table: str = field(metadata=key("t"))
    tournament: tuple[int, int, int] = field(metadata=key("tour"))


@dataclass(frozen=True, slots=True)
class Replace:
    """To table ``t``'s owner, from node ``n``: a tournament's substitute ``l`` into seat
    ``s``. Answered ``reply`` with request id ``r``."""

    kind: ClassVar[str] = "replace"
    node: str = field(metadata=key("n"))
    request: str = field(metadata=key("r"))
    table: str = field(metadata=key("t"))
    seat: int = field(metadata=key("s"))
    label: str = field(metadata=key("l"))


@dataclass(frozen=True, slots=True)
class Reply:
    """The answer to request ``r`` (``replace``): refused ``e`` (code, reason), or done."""

    kind: ClassVar[str] = "reply"
    request: str = field(metadata=key("r"))
    refused: tuple[str, str] | None = field(default=None, metadata=key("e"))


Message = Union[  # noqa: UP007 (a union of classes, read by get_type_hints below too)
    In,
    Back,
    Gone,
    Reattach,
    FindSeat,
    Service,
    ServiceGone,
    Bye,
    Out,
    Prompt,
    Attach,
    Attached,
    Moved,
    Released,
    Take,
    Move,
    Drain,
    Coordinator,
    Unseated,
    TableFinished,
    Replace,
    Reply,
]

KINDS: dict[str, type[Message]] = {cls.kind: cls for cls in typing.get_args(Message)}


# ------------------------------------------------------------------------ codec ---


def encode(message: Message) -> dict[str, Any]:
    """The wire form of ``message``: its kind ``k`` and its fields by their keys."""
    body: dict[str, Any] = {"k": message.kind}
    _write(message, body)
    return body


def _write(value: Any, body: dict[str, Any]) -> None:
    for slot in _layout(type(value)):
        data = getattr(value, slot.attr)
        if slot.sender:
            _write(data, body)
        elif data is None or data is False or data == ():
            continue  # (the reader takes the default back)
        elif data is True:
            body[slot.key] = 1
        elif isinstance(data, tuple):
            body[slot.key] = list(data)
        else:
            body[slot.key] = data


def decode(body: object) -> Message:
    """The typed message of a wire form; ``BadMessage`` if it is not one."""
    if not isinstance(body, Mapping):
        raise BadMessage("not an object", body)
    cls = KINDS.get(body.get("k"))  # type: ignore[arg-type]
    if cls is None:
        raise BadMessage(f"unknown kind {body.get('k')!r}", body)
    message: Message = _read(cls, body)
    return message


def _read(cls: type[Any], body: Mapping[str, Any]) -> Any:
    values: dict[str, Any] = {}
    for slot in _layout(cls):
        if slot.sender:
            values[slot.attr] = _read(Sender, body)
            continue
        value = body.get(slot.key)
        if value is None:
            if slot.required:
                raise BadMessage(f"{cls.__name__} without {slot.key!r}", body)
        elif type(value) is slot.plain:  # (a str field holding a str: most of them)
            values[slot.attr] = value
        else:
            values[slot.attr] = _check(slot.hint, value, slot.key, body)
    return cls(**values)


@dataclass(frozen=True, slots=True)
class _Slot:
    """A field of a message as the codec reads and writes it, worked out once per kind."""

    attr: str  # the dataclass field
    key: str  # its wire key ("" for the ``Sender``, written flat)
    hint: Any  # its type
    plain: type | None  # str or int when the field is exactly that: read without a check
    required: bool
    sender: bool


_LAYOUTS: dict[type[Any], tuple[_Slot, ...]] = {}


def _layout(cls: type[Any]) -> tuple[_Slot, ...]:
    layout = _LAYOUTS.get(cls)
    if layout is None:
        hints = typing.get_type_hints(cls)
        layout = _LAYOUTS[cls] = tuple(
            _slot(item, hints[item.name]) for item in dataclasses.fields(cls)
        )
    return layout


def _slot(item: dataclasses.Field[Any], hint: Any) -> _Slot:
    return _Slot(
        attr=item.name,
        key=item.metadata.get("key", ""),
        hint=hint,
        plain=hint if hint in (str, int) else None,
        required=item.default is dataclasses.MISSING,
        sender=hint is Sender,
    )


def _check(hint: Any, value: Any, name: str, body: Mapping[str, Any]) -> Any:
    """``value`` as a field of type ``hint``, or ``BadMessage``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType):  # (X | None: None was handled by the caller)
        return _check(next(a for a in args if a is not type(None)), value, name, body)
    if origin is tuple:
        if isinstance(value, list | tuple):
            items = args[:1] * len(value) if args[-1] is Ellipsis else args
            if len(items) == len(value):
                return tuple(_check(a, v, name, body) for a, v in zip(items, value, strict=True))
    elif hint is bool:
        if isinstance(value, bool | int):
            return bool(value)
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif isinstance(value, hint):
        return value
    raise BadMessage(f"{name!r} is not a {getattr(hint, '__name__', hint)}", body)

"""The messages between nodes (``server.cluster.messages``): every kind round-trips through
its wire form and JSON, every kind and field is in docs/deployment.md's table, and what
cannot be read is refused (``BadMessage``), by the bus with a log line, never a crash. The
bus packs runs of messages to one channel into one publication only for receivers that read
packs, and keeps the order of everything it sends."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
import typing
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis.asyncio as aioredis
from clusterkit import private_redis, until

from server.cluster.bus import Bus
from server.cluster.messages import (
    KINDS,
    BadMessage,
    Bye,
    Message,
    Moved,
    Out,
    Sender,
    decode,
    encode,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "deployment.md"


def example(cls: type[Any], filled: bool) -> Any:
    """An instance of ``cls`` with every field set (``filled``), or only the required ones."""
    values: dict[str, Any] = {}
    hints = typing.get_type_hints(cls)
    for item in dataclasses.fields(cls):
        if not filled and item.default is not dataclasses.MISSING:
            continue
        values[item.name] = value_of(hints[item.name], item.name)
    return cls(**values)


def value_of(hint: Any, name: str) -> Any:
    if hint is Sender:
        return example(Sender, filled=True)
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if len(args) == 1 and typing.get_origin(hint) is not tuple:
        hint = args[0]  # (X | None)
    if hint is str:
        return f"{name}-1"
    if hint is bool:
        return True
    if hint is int:
        return 7
    if typing.get_origin(hint) is tuple:
        items = typing.get_args(hint)
        if items[-1] is Ellipsis:
            return (value_of(items[0], name), value_of(items[0], name + "b"))
        return tuple(value_of(item, f"{name}{i}") for i, item in enumerate(items))
    raise AssertionError(f"no example for {hint!r}")


ALL = [example(cls, filled) for cls in KINDS.values() for filled in (True, False)]


@pytest.mark.parametrize("message", ALL, ids=lambda m: f"{m.kind}-{len(encode(m))}")
def test_every_kind_round_trips(message: Message) -> None:
    wire = orjson.loads(orjson.dumps(encode(message)))
    assert wire["k"] == message.kind
    assert decode(wire) == message


def test_the_wire_form_is_the_one_the_nodes_speak() -> None:
    """Compact and unchanged (nodes of the release before run beside these during a
    rolling restart): defaults left out, ``hop`` as 1, the sender written flat."""
    assert encode(Out("c.1", "hi")) == {"k": "out", "c": "c.1", "x": "hi"}
    assert encode(Moved("t1", "n2", 5, ("alice",))) == {
        "k": "moved",
        "t": "t1",
        "o": "n2",
        "f": 5,
        "p": ["alice"],
    }
    body = {"k": "in", "n": "a", "c": "x.1", "u": "bo", "g": 1, "a": "1.2.3.4", "v": 2}
    message = decode({**body, "t": "t1", "f": "{}", "hop": 1})
    assert message == KINDS["in"](Sender("a", "x.1", "bo", True, "1.2.3.4", 2), "t1", "{}", True)
    # An older node's form: a guest as false, no address, no version, a reply's "e" null.
    old = decode({"k": "in", "n": "a", "c": "x.1", "u": None, "g": False, "t": "t", "f": ""})
    assert old == KINDS["in"](Sender("a", "x.1"), "t", "")
    assert decode({"k": "reply", "r": "q", "e": None}) == KINDS["reply"]("q", None)


@pytest.mark.parametrize(
    "body",
    [
        [1, 2],
        "moved",
        {"t": "t1"},
        {"k": "no_such_kind"},
        {"k": "moved", "o": "n1"},  # no table
        {"k": "moved", "t": 7, "o": "n1"},  # a table that is not a string
        {"k": "moved", "t": "t1", "o": "n1", "f": "5"},
        {"k": "moved", "t": "t1", "o": "n1", "f": True},
        {"k": "moved", "t": "t1", "o": "n1", "p": "alice"},
        {"k": "tfin", "t": "t1", "tour": [1, 2]},
        {"k": "reply", "r": "q", "e": ["only a code"]},
        {"k": "in", "c": "x.1", "t": "t1", "f": ""},  # no sender node
    ],
)
def test_what_cannot_be_read_is_refused(body: Any) -> None:
    with pytest.raises(BadMessage):
        decode(body)


def documented() -> dict[str, str]:
    """docs/deployment.md's table of messages: kind -> its fields column."""
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## Messages between nodes", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \|[^|]*\|[^|]*\|([^|]*)\|", section, re.MULTILINE)
    return dict(rows)


def test_every_kind_and_field_is_documented() -> None:
    rows = documented()
    assert sorted(rows) == sorted(KINDS)
    sender = {f.metadata["key"] for f in dataclasses.fields(Sender)}
    for cls in KINDS.values():
        fields = rows[cls.kind]
        keys = set(encode(example(cls, filled=True))) - {"k"}
        if any(f.name == "sender" for f in dataclasses.fields(cls)):
            assert "SENDER" in fields, cls.kind
            keys -= sender
        for key in keys:
            assert f"`{key}`" in fields, (cls.kind, key)


class Received:
    """What a bus hands its handler; ``all_in`` is set once ``expect`` messages came."""

    def __init__(self, expect: int) -> None:
        self.got: list[Message] = []
        self.expect = expect
        self.all_in = asyncio.Event()

    async def handler(self, message: Message) -> None:
        self.got.append(message)
        if len(self.got) >= self.expect:
            self.all_in.set()


@contextlib.asynccontextmanager
async def bus_of_n1(
    redis_url: str, prefix: str, received: Received, **options: Any
) -> AsyncIterator[tuple[Bus, aioredis.Redis]]:
    """Node n1's bus, subscribed, handing what it reads to ``received``; and its Redis."""

    async def nothing() -> None:
        pass

    redis = aioredis.from_url(redis_url)
    bus = Bus(redis, prefix, "n1", received.handler, nothing, **options)
    bus.start()
    try:
        async with asyncio.timeout(5):
            while not bus.up:
                await asyncio.sleep(0.01)
        yield bus, redis
    finally:
        await bus.close()
        await redis.aclose()


@pytest.mark.asyncio
async def test_the_bus_logs_and_drops_what_it_cannot_read(
    redis_url: str, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    received = Received(1)
    async with bus_of_n1(redis_url, prefix, received) as (bus, redis):
        with caplog.at_level(logging.ERROR, logger="guobiao.cluster"):
            await redis.publish(bus.channel("n1"), b"not json")
            await redis.publish(bus.channel("n1"), orjson.dumps({"k": "moved", "t": 1}))
            await redis.publish(bus.channel("n1"), orjson.dumps({"k": "what"}))
            bus.send("n1", Bye("n2", "x.1"))
            await asyncio.wait_for(received.all_in.wait(), 5)
    assert received.got == [Bye("n2", "x.1")]
    refused = [r.getMessage() for r in caplog.records]
    assert len(refused) == 3 and "unknown kind 'what'" in refused[2], refused


async def raw_publications(redis: aioredis.Redis, channels: list[bytes], into: list[Any]) -> None:
    """What Redis delivers on ``channels``, one entry a publication: (channel, data)."""
    pubsub = redis.pubsub(ignore_subscribe_messages=True)
    await pubsub.subscribe(*channels)
    try:
        async for message in pubsub.listen():
            into.append((message["channel"], message["data"]))
    finally:
        await pubsub.aclose()


@pytest.mark.asyncio
@pytest.mark.parametrize("packs", [True, False])
async def test_the_bus_packs_runs_of_one_channel_and_keeps_the_order(
    redis_url: str, prefix: str, packs: bool
) -> None:
    """600 messages to n1, then one to everyone, then two to n1 again, queued in one turn:
    n1 gets all 603 in order. To a receiver that reads packs they are 5 publications (256,
    256, 88, the broadcast, 2: the broadcast is not moved ahead of nor behind its
    neighbours); to one that does not (a node of the previous release), 603 objects."""
    received = Received(603)
    seen: list[Any] = []
    async with bus_of_n1(redis_url, prefix, received, packs=lambda channel: packs) as (bus, redis):
        channels = [bus.channel("n1"), bus.everyone]
        watcher = asyncio.create_task(raw_publications(redis, channels, seen))
        try:
            await asyncio.sleep(0.1)  # the watcher subscribed too
            sent: list[Message] = [Bye("n2", f"x.{i}") for i in range(600)]
            sent += [Moved("t1", "n2", 7, ("alice",)), Bye("n2", "y.1"), Bye("n2", "y.2")]
            for message in sent[:600]:
                bus.send("n1", message)
            bus.broadcast(sent[600])
            bus.send("n1", sent[601])
            bus.send("n1", sent[602])
            await asyncio.wait_for(received.all_in.wait(), 5)
            await asyncio.sleep(0.1)
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
    assert received.got == sent
    if packs:
        counts = [len(orjson.loads(data)) for _, data in seen]
        assert counts == [256, 256, 88, 1, 2]
        assert seen[3][0] == bus.everyone
    else:
        assert len(seen) == 603
        assert all(isinstance(orjson.loads(data), dict) for _, data in seen)


@pytest.mark.asyncio
async def test_the_bus_reads_a_pack_and_refuses_only_what_it_cannot_read_in_it(
    redis_url: str, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A publication of several messages, one of them of an unknown kind and one ill-typed:
    the others are handled, in order, and each bad one is logged."""
    received = Received(2)
    pack = [encode(Bye("n2", "a")), {"k": "what"}, {"k": "moved", "t": 1}, encode(Bye("n2", "b"))]
    async with bus_of_n1(redis_url, prefix, received) as (bus, redis):
        with caplog.at_level(logging.ERROR, logger="guobiao.cluster"):
            await redis.publish(bus.channel("n1"), orjson.dumps(pack))
            await asyncio.wait_for(received.all_in.wait(), 5)
    assert received.got == [Bye("n2", "a"), Bye("n2", "b")]
    refused = [r.getMessage() for r in caplog.records]
    assert len(refused) == 2 and "unknown kind 'what'" in refused[0], refused


@pytest.mark.asyncio
async def test_after_a_redis_restart_the_bus_publishes_again(tmp_path: Path, prefix: str) -> None:
    """Redis restarts (a Redis of the test's own): the connection the bus published on is
    cut. Once the bus is subscribed again, what it sends goes on a new connection, in
    order, none dropped."""
    redis_server = await private_redis(tmp_path / "redis")
    received = Received(3)
    try:
        async with bus_of_n1(redis_server.url(), prefix, received) as (bus, _):
            bus.send("n1", Bye("n2", "x.1"))
            await until(lambda: len(received.got) == 1, 5, "the first message")
            await redis_server.restart(down_seconds=0.1)
            channel = bus.channel("n1").decode()

            async def subscribed() -> bool:
                return await redis_server.command("PUBSUB", "NUMSUB", channel) == [channel, 1]

            await until(subscribed, 10, "the bus subscribed again")
            bus.send("n1", Bye("n2", "x.2"))
            bus.send("n1", Bye("n2", "x.3"))
            await asyncio.wait_for(received.all_in.wait(), 5)
            assert bus.dropped == 0
    finally:
        redis_server.close()
    assert received.got == [Bye("n2", f"x.{i}") for i in (1, 2, 3)]

"""The lease keeper (server/cluster/keeper.py) against a real Redis.

Redis is at ``GUOBIAO_TEST_REDIS_URL`` (default ``redis://127.0.0.1:6379/0``; skipped when
nothing answers there); each test uses key names of its own. The restart scenario starts a
private ``redis-server`` (tests/clusterkit.py; skipped when it is not installed).

Leases here are short (0.3-0.5 s) and the event loop is blocked with ``time.sleep``, as a
callback that hogs it does: the keeper's thread must renew meanwhile, stop once the loop has
been silent past its watchdog bound, never take back a lease the loop let go, and report a
lease another owner took exactly once, on the loop's thread. No assertion is on timing: the
sleeps only give the keeper rounds to run (or, blocked, not to run) in.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import redis
from clusterkit import RedisServer, private_redis, until

from server.cluster.keeper import LOOP_SILENT_LEASES, LeaseKeeper, OnRound, keeper_client

OWNER = "node-a"
CONNECT_TIMEOUT, REPLY_TIMEOUT = 1.0, 2.0  # as the node's clients


@pytest.fixture
def other(redis_url: str) -> Iterator[redis.Redis]:
    """A plain client: the other nodes, and the test's eyes."""
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    client.close()


class Lost:
    """The keeper's ``on_lost``: each call, with the thread it ran on."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[str, ...], int]] = []
        self.event = asyncio.Event()

    def __call__(self, keys: tuple[str, ...]) -> None:
        self.calls.append((keys, threading.get_ident()))
        self.event.set()

    @property
    def keys(self) -> list[tuple[str, ...]]:
        return [keys for keys, _ in self.calls]


MakeKeeper = Callable[..., Awaitable[tuple[LeaseKeeper, Lost]]]


@pytest_asyncio.fixture
async def make_keeper(prefix: str, redis_url: str) -> AsyncIterator[MakeKeeper]:
    """``await make_keeper(lease_seconds, client=None, held=(), on_round=None)``: a started
    keeper renewing ``held`` in ``OWNER``'s name (and the presence key
    ``PREFIX:node:OWNER``), and its ``Lost`` recorder. Every keeper is stopped afterwards,
    its thread gone."""
    made: list[LeaseKeeper] = []

    async def make(
        lease_seconds: float,
        client: redis.Redis | None = None,
        held: tuple[str, ...] = (),
        on_round: OnRound | None = None,
    ) -> tuple[LeaseKeeper, Lost]:
        lost = Lost()
        keeper = LeaseKeeper(
            client or new_client(redis_url),
            owner=OWNER,
            presence_key=f"{prefix}:node:{OWNER}",
            lease_seconds=lease_seconds,
            on_lost=lost,
            round_seconds=CONNECT_TIMEOUT + REPLY_TIMEOUT,
            on_round=on_round,
        )
        keeper.hold(held)
        keeper.start()
        made.append(keeper)
        return keeper, lost

    yield make
    for keeper in made:
        await keeper.close(CONNECT_TIMEOUT + REPLY_TIMEOUT + 1.0)
        assert not keeper.running, "the thread lives on"


def new_client(url: str) -> redis.Redis:
    return keeper_client(url, connect_timeout=CONNECT_TIMEOUT, reply_timeout=REPLY_TIMEOUT)


def take(client: redis.Redis, key: str, owner: str, lease_seconds: float) -> None:
    """``SET key owner NX PX lease``, as a node takes a lease; it must succeed."""
    assert client.set(key, owner, nx=True, px=int(lease_seconds * 1000))


def release(client: redis.Redis, key: str, owner: str) -> None:
    """Delete a lease if it is ``owner``'s, as ``Node._release_lease`` does."""
    if client.get(key) == owner:
        client.delete(key)


async def rounds(keeper: LeaseKeeper, count: int) -> None:
    """Let the keeper run about ``count`` rounds, the loop free."""
    await asyncio.sleep(count * keeper.interval)


# ------------------------------------------------------------------ tests ---


@pytest.mark.asyncio
async def test_a_blocked_loop_keeps_its_leases_and_presence(
    make_keeper: MakeKeeper, other: redis.Redis, prefix: str
) -> None:
    """The loop blocked for two leases (within the watchdog's bound): the leases, one held
    from the start and one taken just before the block, and the presence key are still ours
    afterwards, and nothing was reported lost."""
    lease = 0.5
    first, second = f"{prefix}:lease:T1", f"{prefix}:lease:T2"
    presence = f"{prefix}:node:{OWNER}"
    other.set(presence, '{"node": "node-a"}', px=int(lease * 1000))
    take(other, first, OWNER, lease)
    keeper, lost = await make_keeper(lease, held=(first,))
    await keeper.renew_now()
    take(other, second, OWNER, lease)  # a table created now: covered by the next round
    keeper.hold({first, second})
    assert 2 * lease < LOOP_SILENT_LEASES * lease

    time.sleep(2 * lease)  # the loop is busy: no callback of it runs

    assert other.get(first) == OWNER and other.get(second) == OWNER
    assert other.pttl(first) > 0 and other.pttl(second) > 0
    assert other.get(presence) == '{"node": "node-a"}'
    await rounds(keeper, 2)
    assert lost.calls == []


@pytest.mark.asyncio
async def test_a_loop_stuck_past_the_bound_loses_its_leases(
    make_keeper: MakeKeeper,
    other: redis.Redis,
    prefix: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The loop blocked past the watchdog's bound plus three leases: the keeper stops renewing
    (saying so once), the lease and the presence lapse and another node takes the lease
    (``SET NX``) while the loop is still stuck. Once the loop runs again, the keeper renews
    again and reports that lease lost, on the loop's thread."""
    lease = 0.3
    key, presence = f"{prefix}:lease:T1", f"{prefix}:node:{OWNER}"
    other.set(presence, "{}", px=int(lease * 1000))
    take(other, key, OWNER, lease)
    keeper, lost = await make_keeper(lease, held=(key,))
    await keeper.renew_now()
    with caplog.at_level(logging.WARNING, logger="guobiao.cluster"):
        time.sleep(keeper.silent_seconds + 3 * lease)  # stuck
        assert other.set(key, "node-b", nx=True, px=60_000), "the lease should have lapsed"
        assert other.exists(presence) == 0
        loop_thread = threading.get_ident()

        await asyncio.wait_for(lost.event.wait(), 5)
    assert lost.calls == [((key,), loop_thread)]
    assert other.get(key) == "node-b"
    stopped = [r for r in caplog.records if "leases no longer renewed" in r.getMessage()]
    assert len(stopped) == 1, caplog.text
    assert any("renewing leases" in r.getMessage() for r in caplog.records), caplog.text


class GatedRedis(redis.Redis):
    """A real client whose next script call, once ``arm``-ed, waits until ``open``: a round
    of the keeper held between reading its set and reaching Redis (Redis being slow)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.armed = False
        self.entered = threading.Event()
        self.gate = threading.Event()

    def arm(self) -> None:
        self.gate.clear()
        self.entered.clear()
        self.armed = True

    def open(self) -> None:
        self.gate.set()

    def evalsha(self, *args: Any, **kwargs: Any) -> Any:
        if self.armed:
            self.armed = False
            self.entered.set()
            assert self.gate.wait(10), "the test never opened the gate"
        return super().evalsha(*args, **kwargs)


def gated_client(url: str) -> GatedRedis:
    client = keeper_client(url, connect_timeout=CONNECT_TIMEOUT, reply_timeout=REPLY_TIMEOUT)
    return GatedRedis(connection_pool=client.connection_pool)


async def held_mid_round(keeper: LeaseKeeper, client: GatedRedis) -> None:
    """Until a round of ``keeper`` has read its set and waits at the gate."""
    client.arm()
    assert await asyncio.to_thread(client.entered.wait, 10), "no round reached the gate"


async def let_go_mid_round(
    make_keeper: MakeKeeper, other: redis.Redis, prefix: str, redis_url: str
) -> tuple[str, LeaseKeeper, Lost, GatedRedis]:
    """A keeper holding one lease (0.4 s) whose round has read the set and waits at the
    gate, and the loop letting the lease go (out of the set): the lease's key, the keeper,
    its lost leases and its gated client."""
    key = f"{prefix}:lease:T1"
    take(other, key, OWNER, 0.4)
    client = gated_client(redis_url)
    keeper, lost = await make_keeper(0.4, client=client, held=(key,))
    await held_mid_round(keeper, client)
    keeper.hold(frozenset())
    return key, keeper, lost, client


@pytest.mark.asyncio
async def test_a_released_lease_is_not_taken_back(
    make_keeper: MakeKeeper, other: redis.Redis, prefix: str, redis_url: str
) -> None:
    """A round read the set with the table in it and is slow to reach Redis; the loop lets
    the table go (out of the set), ``settle`` waits for that round, and only then is the
    lease released: no round takes it back, and another node can take it."""
    key, keeper, lost, client = await let_go_mid_round(make_keeper, other, prefix, redis_url)
    settling = asyncio.ensure_future(keeper.settle())
    try:
        await asyncio.sleep(0)
        assert not settling.done(), "settle returned with a round in flight"
    finally:
        client.open()
    await settling
    release(other, key, OWNER)

    await rounds(keeper, 4)
    assert other.get(key) is None
    take(other, key, "node-b", 60)
    await rounds(keeper, 3)
    assert other.get(key) == "node-b" and lost.calls == []


@pytest.mark.asyncio
async def test_without_settle_the_round_in_flight_takes_the_lease_back(
    make_keeper: MakeKeeper, other: redis.Redis, prefix: str, redis_url: str
) -> None:
    """The race ``settle`` is there for is real: the same slow round, the lease released
    without waiting for it, and the round re-takes the lapsed lease in our name (which is
    why ``Node._release_lease`` settles first)."""
    key, keeper, _, client = await let_go_mid_round(make_keeper, other, prefix, redis_url)
    release(other, key, OWNER)
    client.open()
    await keeper.settle()
    assert other.get(key) == OWNER
    await until(lambda: other.get(key) is None, 10, "the stray lease to lapse")


@pytest.mark.asyncio
async def test_a_lease_held_elsewhere_is_reported_once_on_the_loop_thread(
    make_keeper: MakeKeeper, other: redis.Redis, prefix: str
) -> None:
    """Of two leases, one another node holds: reported once (however many rounds follow),
    on the loop's thread, and not touched; the other renewed. Let go and held again, it is
    a new lease: reported once more."""
    lease = 0.3
    ours, theirs = f"{prefix}:lease:T1", f"{prefix}:lease:T2"
    take(other, ours, OWNER, lease)
    take(other, theirs, "node-b", 60)
    keeper, lost = await make_keeper(lease, held=(ours, theirs))
    await asyncio.wait_for(lost.event.wait(), 5)
    await rounds(keeper, 6)
    assert lost.calls == [((theirs,), threading.get_ident())]
    assert other.get(theirs) == "node-b" and other.pttl(theirs) > 1000
    assert other.get(ours) == OWNER

    keeper.hold({ours})
    keeper.hold({ours, theirs})
    lost.event.clear()
    await asyncio.wait_for(lost.event.wait(), 5)
    await rounds(keeper, 6)
    assert lost.keys == [(theirs,), (theirs,)]


@pytest.mark.asyncio
async def test_a_lapsed_lease_of_ours_is_taken_back(
    make_keeper: MakeKeeper, other: redis.Redis, prefix: str
) -> None:
    """A held lease gone from Redis (it lapsed while Redis was unreachable, or Redis lost
    it) is taken again in our name (the fencing token guards the rest)."""
    lease = 0.3
    key = f"{prefix}:lease:T1"
    keeper, lost = await make_keeper(lease, held=(key,))
    await keeper.renew_now()
    assert other.get(key) == OWNER and lost.calls == []


@pytest.mark.asyncio
async def test_each_round_says_what_it_renewed_and_what_it_took_back(
    make_keeper: MakeKeeper, other: redis.Redis, prefix: str
) -> None:
    """On the loop's thread, after each round that reached Redis: when it began (before
    Redis renewed anything), the leases it renewed, and those it took back (they had lapsed:
    the node trusts them only once the database says the table is still its own); a lease
    another node holds is in neither."""
    lease = 0.3
    ours, lapsed, theirs = (f"{prefix}:lease:T{i}" for i in (1, 2, 3))
    take(other, ours, OWNER, lease)
    take(other, theirs, "node-b", 60)
    rounds_seen: list[tuple[float, tuple[str, ...], tuple[str, ...], int]] = []

    def on_round(began: float, renewed: tuple[str, ...], retaken: tuple[str, ...]) -> None:
        rounds_seen.append((began, renewed, retaken, threading.get_ident()))

    before = time.monotonic()
    keeper, lost = await make_keeper(lease, held=(ours, lapsed, theirs), on_round=on_round)
    await keeper.renew_now()
    began, renewed, retaken, thread = rounds_seen[0]
    assert before <= began <= time.monotonic() and thread == threading.get_ident()
    assert (renewed, retaken) == ((ours,), (lapsed,))
    await keeper.renew_now()
    assert rounds_seen[-1][1:3] == ((ours, lapsed), ())  # (ours since)
    assert lost.keys == [(theirs,)]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.asyncio
async def test_redis_unreachable_is_logged_once_and_the_thread_lives(
    make_keeper: MakeKeeper, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Nothing listens where Redis should be: every round fails, one error says so, the
    thread keeps trying, and ``renew_now`` still returns (its round ended, failed)."""
    client = new_client(f"redis://127.0.0.1:{closed_port()}/0")
    with caplog.at_level(logging.INFO, logger="guobiao.cluster"):
        keeper, lost = await make_keeper(0.3, client=client, held=(f"{prefix}:lease:T1",))
        for _ in range(4):
            await keeper.renew_now()
    assert keeper.running
    errors = [r for r in caplog.records if "cannot reach Redis" in r.getMessage()]
    assert len(errors) == 1, caplog.text
    assert lost.calls == []


@pytest.mark.asyncio
async def test_after_a_redis_restart_the_leases_are_taken_again(
    make_keeper: MakeKeeper, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A private Redis killed (it keeps nothing) and started again: the keeper logs the
    outage once, and once Redis answers takes its lease again and says so."""
    server = await private_redis(tmp_path / "redis")
    try:
        key = "guobiao:lease:T1"
        with caplog.at_level(logging.INFO, logger="guobiao.cluster"):
            keeper, lost = await make_keeper(0.3, client=new_client(server.url()), held=(key,))
            await keeper.renew_now()
            assert await server.command("GET", key) == OWNER
            await server.command("SET", "guobiao:sentinel", "x")
            await server.kill()
            for _ in range(3):
                await keeper.renew_now()
            await server.start()
            # It kept nothing (asked of a key of the test's own: the keeper, renewing every
            # 0.1 s, may have taken its lease back already, as a loaded CI run once showed).
            assert await server.command("GET", "guobiao:sentinel") is None
            await until(lambda: _owner_is(server, key, OWNER), 10, "the lease taken again")
        assert len([r for r in caplog.records if "cannot reach Redis" in r.getMessage()]) == 1
        assert any("reaches Redis again" in r.getMessage() for r in caplog.records)
        assert lost.calls == []
    finally:
        server.close()


async def _owner_is(server: RedisServer, key: str, owner: str) -> bool:
    return bool(await server.command("GET", key) == owner)


@pytest.mark.asyncio
async def test_stop_is_bounded_and_wakes_who_waits(redis_url: str, prefix: str) -> None:
    """``close`` ends the thread within its bound, and a ``settle`` or ``renew_now`` after
    it returns at once."""
    keeper = LeaseKeeper(
        new_client(redis_url),
        owner=OWNER,
        presence_key=f"{prefix}:node:{OWNER}",
        lease_seconds=0.3,
        on_lost=Lost(),
        round_seconds=CONNECT_TIMEOUT + REPLY_TIMEOUT,
    )
    keeper.start()
    await keeper.renew_now()
    await keeper.close(CONNECT_TIMEOUT + REPLY_TIMEOUT + 1.0)
    assert not keeper.running
    await asyncio.wait_for(keeper.settle(), 1)
    await asyncio.wait_for(keeper.renew_now(), 1)

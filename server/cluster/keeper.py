"""The node's leases, renewed from a thread of their own while its event loop is alive.

A node renews its presence and the leases of its tables (and the coordinator's) every third of
a lease. Done in the event loop, that renewal waits behind the tables' work: under overload it
runs late, the leases lapse and other nodes take the tables of a node that is alive (fencing
keeps the log right, but the players see a pause and a refused move). ``LeaseKeeper`` renews
from a thread with a synchronous Redis client of its own, so a busy node keeps its leases.

It must still let go of a node that is no use: a process killed or stopped (SIGSTOP) renews
nothing, thread included; an event loop that is stuck (a callback that never returns) would
keep its leases forever if the thread went on alone. So the keeper is a watchdog too: each
round it posts a cheap callback to the loop, and it renews only while the loop has run one
within ``LOOP_SILENT_LEASES`` leases. A stuck loop's leases lapse that long after it last
answered (plus the lease itself); when it answers again, the keeper renews again.

Which keys it holds is the loop's to say (``hold``: the whole set each time, under a lock; the
thread reads it at the start of each round). Two orders matter:

- a key is held from the moment its lease is taken (``SET NX``), so it is covered by the next
  round, before it can lapse;
- a key the node gives away (a table released, handed on) must not be renewed after its
  release: the renewal re-takes a lapsed lease that was ours, so a round that read the old set
  and reached Redis after the release would take it back. ``settle`` waits for the round in
  flight, if any: the node calls ``hold`` without the key, ``await settle()``, then releases.

A lease another node holds now is reported to the loop once (``on_lost``, called on the loop's
thread with the keys), and left out of the rounds until the loop's set no longer has it.

Each round that reached Redis is reported too (``on_round``, on the loop's thread): when it
began, the leases it renewed (ours until at least a lease after that), and those it took back
(they had lapsed: another node may have taken the table meanwhile, and let it go). A node
trusts a lease only that long after a round renewed it (``server.cluster.node``): past that,
it may have lost it, and its tables wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Collection

import redis
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.retry import Retry

log = logging.getLogger("guobiao.cluster")

# How long the event loop may run none of the keeper's callbacks before the keeper stops
# renewing, in leases. A loop that is only busy runs each callback within a fraction of a
# second (it waits behind one batch of ready callbacks, not behind the whole beat), so this
# is far above any busy node's lag; a stuck loop then loses its leases about
# LOOP_SILENT_LEASES + 1 leases after it last ran (12 s with the default 3 s lease).
LOOP_SILENT_LEASES = 3.0

# The presence key's expiry only (the loop writes its content at each beat: a key gone with a
# Redis restart stays gone until then), then each lease: ours renewed; a lapsed one that was
# ours taken back (nobody took it, and the fencing token guards anyway); another node's
# reported.
_KEEP = """
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local lost, retaken = {}, {}
for i = 2, #KEYS do
  local key = KEYS[i]
  local owner = redis.call('GET', key)
  if owner == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
  elseif not owner then
    redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
    table.insert(retaken, key)
  else
    table.insert(lost, key)
  end
end
return {lost, retaken}
"""

OnLost = Callable[[tuple[str, ...]], None]
# (when the round began, monotonic; the keys it renewed; those it took back)
OnRound = Callable[[float, tuple[str, ...], tuple[str, ...]], None]


def keeper_client(url: str, *, connect_timeout: float, reply_timeout: float) -> redis.Redis:
    """The keeper's synchronous client: the node's URL and timeouts, and no retries (the
    default retries with backoff could hold one round for many leases; each round is one
    attempt, and the next round the retry)."""
    return redis.Redis.from_url(
        url,
        socket_connect_timeout=connect_timeout,
        socket_timeout=reply_timeout,
        retry=Retry(NoBackoff(), 0),
    )


class LeaseKeeper:
    """Renews ``presence_key`` and the held leases in ``owner``'s name every
    ``lease_seconds / 3`` from a daemon thread, with ``client`` (a synchronous client of the
    keeper's own, without retries: each round is one attempt, the next round the retry)."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        owner: str,
        presence_key: str,
        lease_seconds: float,
        on_lost: OnLost,
        round_seconds: float,
        silent_seconds: float | None = None,
        on_round: OnRound | None = None,
    ) -> None:
        self._client = client
        self._script = client.register_script(_KEEP)
        self.owner = owner
        self.presence_key = presence_key
        self.lease_ms = int(lease_seconds * 1000)
        self.interval = lease_seconds / 3
        # The longest a round can take (the client's connect and reply timeouts): how long
        # ``settle`` and ``renew_now`` wait at most.
        self.round_seconds = round_seconds
        self.silent_seconds = (
            LOOP_SILENT_LEASES * lease_seconds if silent_seconds is None else silent_seconds
        )
        self._on_lost = on_lost
        self._on_round = on_round
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()
        self._stopping = False
        # Shared with the loop, under the lock: what to hold, what was reported lost, the
        # rounds begun and whether one is in flight, and who waits for which round's end.
        self._lock = threading.Lock()
        self._keys: frozenset[str] = frozenset()
        self._version = 0  # of the set: one more at each ``hold``
        self._since: dict[str, int] = {}  # key -> the version of the set it came in with
        self._lost: set[str] = set()
        self._round = 0
        self._busy = False
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        # The thread's own.
        self._answered = time.monotonic()  # when the loop last ran our callback
        self._silent = False  # we stopped renewing: the loop did not answer
        self._failing = False  # the last round failed (Redis unreachable)

    # ------------------------------------------------------- the loop's ---

    def start(self) -> None:
        """Start renewing (called in the event loop it watches)."""
        self._loop = asyncio.get_running_loop()
        self._answered = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="cluster-lease-keeper", daemon=True)
        self._thread.start()

    async def close(self, timeout: float) -> None:
        """Stop renewing; wait (without blocking the loop) up to ``timeout`` s for the thread."""
        self._stopping = True
        self._wake.set()
        thread = self._thread
        deadline = time.monotonic() + timeout
        while thread is not None and thread.is_alive() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        if thread is not None and thread.is_alive():
            log.warning("cluster: the lease keeper did not stop within %g s", timeout)
        self._release_waiters(everyone=True)
        with contextlib.suppress(RedisError, OSError):
            self._client.close()

    def hold(self, keys: Collection[str]) -> None:
        """From the next round on, renew exactly ``keys``."""
        held = frozenset(keys)
        with self._lock:
            self._version += 1
            self._since = {k: self._since.get(k, self._version) for k in held}
            self._keys = held
            self._lost &= held  # a key let go and held again is a new lease: reported anew

    @property
    def running(self) -> bool:
        """Whether the thread runs (it ends only when stopped, or when the loop closed)."""
        return self._thread is not None and self._thread.is_alive()

    async def settle(self) -> None:
        """Return once the round in flight (which may have read an older set) is over: a key
        left out by ``hold`` before this call is renewed by no round after it returns."""
        with self._lock:
            if not self._busy:
                return
            waiting = self._wait_for(self._round)
        await self._until(waiting)

    async def renew_now(self) -> None:
        """A round at once (Redis came back: our leases before anything else), and its end."""
        with self._lock:
            waiting = self._wait_for(self._round + 1)
        self._wake.set()
        await self._until(waiting)

    def _wait_for(self, round_no: int) -> asyncio.Future[None]:
        assert self._loop is not None, "the keeper is not started"
        waiting = self._loop.create_future()
        self._waiters.append((round_no, waiting))
        return waiting

    async def _until(self, waiting: asyncio.Future[None]) -> None:
        if not self.running:
            return  # stopped: no round runs any more
        # Bounded: a round ends within its client's timeouts; a thread that somehow did not
        # answer must not hold the node's release up for ever.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(waiting, self.round_seconds + self.interval + 1.0)

    def _answer(self) -> None:
        self._answered = time.monotonic()

    # ----------------------------------------------------- the thread's ---

    def _run(self) -> None:
        while not self._stopping:
            began = time.monotonic()
            try:
                self._one_round()
            except Exception:  # never end the thread: the next round tries again
                log.exception("cluster: a lease keeper round failed")
            self._wake.wait(max(0.0, began + self.interval - time.monotonic()))
            self._wake.clear()

    def _one_round(self) -> None:
        with self._lock:
            self._round += 1
            self._busy = True
            keys = sorted(self._keys - self._lost)
            version = self._version
        try:
            if not self._post(self._answer):
                self._stopping = True  # the loop is closed: nobody to keep leases for
                return
            if self._loop_silent():
                return
            began = time.monotonic()  # (Redis renews at this time or later)
            answer = self._renew(keys)
            if answer is None:
                return
            taken_by_others, retaken = answer
            lost = self._still_held(taken_by_others, version)
            if lost:
                self._post(self._on_lost, lost)
            if self._on_round is not None:
                others = set(taken_by_others) | set(retaken)
                renewed = tuple(k for k in keys if k not in others)
                self._post(self._on_round, began, renewed, tuple(retaken))
        finally:
            self._release_waiters()

    def _loop_silent(self) -> bool:
        """Whether the loop ran none of our callbacks for too long (logged once each time)."""
        silence = time.monotonic() - self._answered
        if silence > self.silent_seconds:
            if not self._silent:
                log.error(
                    "cluster: the event loop ran nothing for %.1f s: leases no longer renewed "
                    "(they lapse and other nodes take the tables) until it runs again",
                    silence,
                )
            self._silent = True
            return True
        if self._silent:
            log.warning("cluster: the event loop runs again: renewing leases")
        self._silent = False
        return False

    def _renew(self, keys: list[str]) -> tuple[list[str], list[str]] | None:
        """One round trip: presence and leases; the keys another node holds, and those that
        had lapsed and were taken back. None when Redis failed: logged once per outage, the
        round given up (the next one tries again)."""
        try:
            raw = self._script(keys=[self.presence_key, *keys], args=[self.owner, self.lease_ms])
        except (RedisError, OSError) as exc:
            if not self._failing:
                log.error("cluster: the lease keeper cannot reach Redis (%r): retrying", exc)
            self._failing = True
            return None
        if self._failing:
            log.info("cluster: the lease keeper reaches Redis again")
        self._failing = False
        lost, retaken = raw
        return _texts(lost), _texts(retaken)

    def _still_held(self, lost: list[str], version: int) -> tuple[str, ...]:
        """Of the keys this round found another node holding, those the loop still holds
        as it did when the round read the set (one let go meanwhile, perhaps taken again, is
        not this round's to report), marked reported."""
        with self._lock:
            fresh = tuple(k for k in lost if self._since.get(k, version + 1) <= version)
            self._lost.update(fresh)
        return fresh

    def _post(self, callback: Callable[..., None], *args: object) -> bool:
        """``callback(*args)`` on the loop's thread; False if the loop is closed."""
        assert self._loop is not None
        try:
            self._loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the loop is closed
            return False
        return True

    def _release_waiters(self, *, everyone: bool = False) -> None:
        """The round is over: wake who waited for it (or, stopping, everyone)."""
        with self._lock:
            self._busy = False
            done = self._round
            ready = [f for r, f in self._waiters if everyone or r <= done]
            self._waiters = [(r, f) for r, f in self._waiters if not (everyone or r <= done)]
        for waiting in ready:
            self._post(_resolve, waiting)


def _texts(keys: list[bytes | str]) -> list[str]:
    return [key.decode() if isinstance(key, bytes) else str(key) for key in keys]


def _resolve(waiting: asyncio.Future[None]) -> None:
    if not waiting.done():
        waiting.set_result(None)

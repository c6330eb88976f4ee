"""Rate limits for account requests: token buckets per key and a backoff after failures.

Pure bookkeeping, no I/O: the time comes from a ``clock`` given to each (a function
returning seconds, ``time.monotonic`` in the server, a fake in tests), so they are tested
without sleeping. A refusal is the number of seconds to wait before asking again; ``0.0``
means go ahead.

- ``Buckets``: one token bucket per key (a client address, an account name). A bucket
  holds up to ``burst`` tokens and gains ``per_second`` tokens a second; each request
  takes one.
- ``Backoff``: failures per key (an account name). The first ``free`` failures cost
  nothing; after them each attempt must wait ``base * 2**(failures - free)`` seconds after
  the last failure, at most ``cap``. A success forgets the key.

Both keep at most ``max_keys`` keys, so an attacker inventing names or addresses cannot
grow them without bound: a key whose bucket is full again (or whose failures are older
than ``forget``) carries no information and is dropped first, then the least recently
used ones.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

Clock = Callable[[], float]
MAX_KEYS = 100_000


class Buckets:
    """A token bucket per key: ``burst`` requests at once, ``per_second`` sustained."""

    def __init__(
        self, per_second: float, burst: int, clock: Clock, *, max_keys: int = MAX_KEYS
    ) -> None:
        if per_second <= 0 or burst < 1:
            raise ValueError(
                f"a bucket needs per_second > 0 and burst >= 1, got {per_second!r}, {burst!r}"
            )
        self.per_second = per_second
        self.burst = burst
        self.clock = clock
        self.max_keys = max_keys
        self._buckets: dict[Hashable, tuple[float, float]] = {}  # key -> (tokens, at), LRU order

    def _tokens(self, key: Hashable, now: float) -> float:
        tokens, at = self._buckets.get(key, (float(self.burst), now))
        return min(float(self.burst), tokens + (now - at) * self.per_second)

    def wait(self, key: Hashable) -> float:
        """Seconds until ``key`` has a token (0.0: it has one now); takes nothing."""
        tokens = self._tokens(key, self.clock())
        return 0.0 if tokens >= 1 else (1 - tokens) / self.per_second

    def take(self, key: Hashable) -> float:
        """Take a token for ``key``: 0.0 if there was one, else the seconds until there is
        (and nothing is taken)."""
        now = self.clock()
        tokens = self._tokens(key, now)
        if tokens < 1:
            return (1 - tokens) / self.per_second
        self._buckets.pop(key, None)
        self._buckets[key] = (tokens - 1, now)
        if len(self._buckets) > self.max_keys:
            self.prune()
        return 0.0

    def prune(self) -> int:
        """Drop the keys whose bucket is full again, then the least recently used ones
        beyond ``max_keys``; how many were dropped."""
        now = self.clock()
        full = [k for k in self._buckets if self._tokens(k, now) >= self.burst]
        for key in full:
            del self._buckets[key]
        dropped = len(full)
        while len(self._buckets) > self.max_keys:
            del self._buckets[next(iter(self._buckets))]
            dropped += 1
        return dropped

    def __len__(self) -> int:
        return len(self._buckets)


class Backoff:
    """An exponentially growing wait after repeated failures of one key."""

    def __init__(
        self,
        free: int,
        base: float,
        cap: float,
        clock: Clock,
        *,
        forget: float | None = None,
        max_keys: int = MAX_KEYS,
    ) -> None:
        if free < 0 or base <= 0 or cap < base:
            raise ValueError(
                f"a backoff needs free >= 0 and 0 < base <= cap, got {free!r}, {base!r}, {cap!r}"
            )
        self.free = free
        self.base = base
        self.cap = cap
        self.clock = clock
        self.forget = max(forget if forget is not None else 3600.0, 2 * cap)
        self.max_keys = max_keys
        self._failures: dict[Hashable, tuple[int, float]] = {}  # key -> (count, last), LRU

    def delay(self, failures: int) -> float:
        """The wait after ``failures`` failures in a row."""
        if failures < self.free:
            return 0.0
        # min() before the power would overflow a float for a long attack.
        return min(self.cap, self.base * 2.0 ** min(failures - self.free, 64))

    def wait(self, key: Hashable) -> float:
        """Seconds before ``key`` may try again (0.0: now)."""
        count, last = self._failures.get(key, (0, 0.0))
        if count == 0:
            return 0.0
        now = self.clock()
        if now - last >= self.forget:
            return 0.0
        return max(0.0, last + self.delay(count) - now)

    def failed(self, key: Hashable) -> None:
        """Count a failure of ``key`` now."""
        now = self.clock()
        count, last = self._failures.pop(key, (0, now))
        if now - last >= self.forget:
            count = 0
        self._failures[key] = (count + 1, now)
        if len(self._failures) > self.max_keys:
            self.prune()

    def succeeded(self, key: Hashable) -> None:
        """A success: ``key``'s failures are forgotten."""
        self._failures.pop(key, None)

    def failures(self, key: Hashable) -> int:
        """The failures of ``key`` counted now."""
        count, last = self._failures.get(key, (0, 0.0))
        return count if count and self.clock() - last < self.forget else 0

    def prune(self) -> int:
        """Drop the keys whose failures are forgotten, then the least recently failed
        ones beyond ``max_keys``; how many were dropped."""
        now = self.clock()
        old = [k for k, (_, last) in self._failures.items() if now - last >= self.forget]
        for key in old:
            del self._failures[key]
        dropped = len(old)
        while len(self._failures) > self.max_keys:
            del self._failures[next(iter(self._failures))]
            dropped += 1
        return dropped

    def __len__(self) -> int:
        return len(self._failures)

"""Accounts: passwords, usernames, session tokens and the account operations of the protocol.

- Passwords are hashed with scrypt (memory-hard), a random 16-byte salt each, stored as
  ``scrypt$n$r$p$salt_hex$hash_hex`` so the parameters can be raised later without breaking
  old hashes. Hashing runs in a worker thread: it takes tens of milliseconds and 16 MiB.
- Usernames are 3-20 ASCII letters, digits, ``_`` or ``-`` (ASCII only: no look-alike
  letters of other scripts); unique in any case, and names that look alike are one name:
  a new name whose skeleton (``server.text.skeleton``: case, ``I``/``l``/``1``,
  ``O``/``0``, ``m``/``rn``) is an existing account's is refused (``username_confusable``).
  ``guest-`` names are kept for guests.
- A session token is ``secrets.token_urlsafe(32)``; the database keeps only its SHA-256.

The service functions return ``(PlayerRow, token, expires_at)`` and raise ``AccountError``
with the wire protocol's codes: ``bad_username``, ``weak_password``, ``username_taken``,
``username_confusable``, ``auth_failed``, and ``rate_limited`` (a ``RateLimited``, with
``retry_after``).

Under attack (a server passes its ``Guard``; without one nothing is limited):

- Token buckets per client address for logins, registrations and guests, and per account
  name for logins; repeated failed logins of one name back off exponentially
  (``server.limits``). An unknown name is limited, backed off and hashed exactly as a
  known one, so neither the answer nor the work tells whether an account exists.
- Hashing runs in a pool of ``hash_workers`` threads with at most ``hash_queue`` waiting:
  a flood of logins is refused (``rate_limited``, busy) instead of queueing for ever and
  taking every core from the tables.
- Guests live as long as their session (``guest_session_days``); ``purge_guests`` then
  deletes them, except that a guest named in a match keeps its row (match records keep
  their names) and only loses its sessions.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import math
import re
import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from server.config import AccountsSection
from server.db.store import PlayerRow, Store, UsernameLookalike, UsernameTaken
from server.errors import ServerError, shown
from server.limits import Backoff, Buckets, Clock
from server.text import BadText, clean

_T = TypeVar("_T")

SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1
SALT_BYTES = 16
HASH_BYTES = 32
MIN_PASSWORD = 8
USERNAME = re.compile(r"[A-Za-z0-9_-]{3,20}")
GUEST_PREFIX = "guest-"
# Digits of each try at a free guest name: two at four digits, then wider. (Four tries at
# four digits, as before, made 6,300 refused names for 8,000 guests: with most of the
# 10,000 names taken, most guests tried them all. benchmarks/bench_store_writes.py.)
GUEST_DIGITS = (4, 4, 6, 6, 6, 8, 8, 8, 8, 8)


class AccountError(ServerError):
    """An account request refused; ``code`` is the protocol's error code."""


class RateLimited(AccountError):
    """Refused by a limit: try again in ``retry_after`` seconds (a whole number, >= 1)."""

    def __init__(self, reason: str, wait: float) -> None:
        self.retry_after = max(1, math.ceil(wait))
        super().__init__("rate_limited", f"{reason}; try again in {self.retry_after} s")


# Passwords.


def hash_password(password: str, *, n: int = SCRYPT_N, r: int = SCRYPT_R, p: int = SCRYPT_P) -> str:
    """``scrypt$n$r$p$salt_hex$hash_hex`` for ``password`` with a fresh random salt."""
    salt = secrets.token_bytes(SALT_BYTES)
    digest = _scrypt(password, salt, n=n, r=r, p=p, length=HASH_BYTES)
    return f"scrypt${n}${r}${p}${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    """True if ``password`` matches the ``stored`` hash (compared in constant time);
    False for a wrong password or a malformed hash."""
    try:
        scheme, n, r, p, salt_hex, digest_hex = stored.split("$")
        if scheme != "scrypt":
            return False
        salt, expected = bytes.fromhex(salt_hex), bytes.fromhex(digest_hex)
        digest = _scrypt(password, salt, n=int(n), r=int(r), p=int(p), length=len(expected))
    except (ValueError, OverflowError):
        return False
    return hmac.compare_digest(digest, expected)


def _scrypt(password: str, salt: bytes, *, n: int, r: int, p: int, length: int) -> bytes:
    # scrypt needs 128 * n * r * p bytes; allow that plus slack (the default cap is 32 MiB).
    maxmem = 128 * n * r * p + (1 << 20)
    return hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=n, r=r, p=p, maxmem=maxmem, dklen=length
    )


# A hash to check against when the username is unknown (or a guest's, without password), so
# that a login does the same work whether or not the player exists: the current parameters
# and the hash of a random password nobody kept.
DUMMY_HASH = (
    "scrypt$16384$8$1$e89adbcbbe81df500f2708cdf5ba7d00"
    "$f99131d65ea47828015e35c0c4bd32ca653518e9de131f177d06ec96ae2ce281"
)


# Names and tokens.


def check_username(username: object) -> str:
    """The username if valid; ``AccountError("bad_username")`` otherwise."""
    if isinstance(username, str):
        try:  # the check of every name shown to others (the pattern below is stricter)
            clean(username, "a username", limit=len(username), required=False)
        except BadText as exc:
            raise AccountError("bad_username", str(exc)) from None
    if not isinstance(username, str) or not USERNAME.fullmatch(username):
        raise AccountError(
            "bad_username",
            f"a username is 3-20 letters, digits, _ or -, got {shown(username)}",
        )
    if username.lower().startswith(GUEST_PREFIX):
        raise AccountError("bad_username", f"names starting with {GUEST_PREFIX!r} are for guests")
    return username


def check_password(password: object) -> str:
    """The password if acceptable; ``AccountError("weak_password")`` otherwise."""
    if not isinstance(password, str) or len(password) < MIN_PASSWORD:
        raise AccountError("weak_password", f"a password needs at least {MIN_PASSWORD} characters")
    return password


def new_token() -> str:
    """A fresh session token (43 URL-safe characters, 256 random bits)."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """What the database stores for a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def guest_name(digits: int = 4) -> str:
    """``guest-`` and random digits, e.g. ``guest-0427``."""
    return f"{GUEST_PREFIX}{secrets.randbelow(10**digits):0{digits}d}"


# Limits.


class HashPool:
    """Password hashing in ``workers`` threads, with at most ``queue`` hashes waiting for
    one: beyond that ``run`` refuses at once (``RateLimited``) rather than queueing.

    A request may ``reserve`` its place first (refused at once if there is none), then
    ``run_reserved`` its hash, or ``release`` the place if it ends before hashing: so a
    refusal happens before anything else is done or counted for that request."""

    def __init__(self, workers: int, queue: int) -> None:
        self.workers = workers
        self.capacity = workers + queue
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="scrypt")
        self._lock = threading.Lock()
        self._pending = 0  # submitted and not finished (running or waiting)

    @property
    def pending(self) -> int:
        return self._pending

    def reserve(self) -> None:
        """Take a place for one hash, or raise ``RateLimited`` (busy) if there is none."""
        with self._lock:
            if self._pending >= self.capacity:
                raise RateLimited("the server is busy checking passwords", 1)
            self._pending += 1

    def release(self, _: object = None) -> None:
        """Give back a place (a reserved one not used, or one whose hash ended)."""
        with self._lock:
            self._pending -= 1

    async def run(self, work: Callable[..., _T], *args: object) -> _T:
        """``work(*args)`` in a worker thread, if there is a place."""
        self.reserve()
        return await self.run_reserved(work, *args)

    async def run_reserved(self, work: Callable[..., _T], *args: object) -> _T:
        """``work(*args)`` in a worker thread, in a place taken by ``reserve``."""
        try:
            future: Future[_T] = self._executor.submit(work, *args)
        except BaseException:
            self.release()
            raise
        # The place is given back when the work ends (or is cancelled before it starts),
        # not when the caller stops waiting: a hash still running keeps its place.
        future.add_done_callback(self.release)
        return await asyncio.wrap_future(future)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


class Guard:
    """One server's account limits (``[accounts]`` in the configuration): token buckets
    per client address and per account name, the login backoff, the hashing pool."""

    def __init__(self, settings: AccountsSection, clock: Clock = time.monotonic) -> None:
        s = settings
        self.settings = settings
        self.logins = Buckets(s.login_per_minute / 60, s.login_burst, clock)
        self.account_logins = Buckets(s.account_login_per_minute / 60, s.account_login_burst, clock)
        self.backoff = Backoff(
            s.login_backoff_after, s.login_backoff_seconds, s.login_backoff_max_seconds, clock
        )
        self.registrations = Buckets(s.register_per_hour / 3600, s.register_burst, clock)
        self.guests = Buckets(s.guest_per_hour / 3600, s.guest_burst, clock)
        self.hashing = HashPool(s.hash_workers, s.hash_queue)

    def check_login(self, address: str, account: str) -> None:
        """Take a login attempt for ``address`` and ``account``, and a place in the
        hashing pool, or raise ``RateLimited`` (taking nothing). Known and unknown names
        are treated alike."""
        wait = max(
            self.logins.wait(address),
            self.account_logins.wait(account),
            self.backoff.wait(account),
        )
        if wait > 0:
            raise RateLimited("too many login attempts", wait)
        self.hashing.reserve()  # busy: refused before it counts or costs a database read
        self.logins.take(address)
        self.account_logins.take(account)

    def check_register(self, address: str) -> None:
        """Take a registration for ``address`` and a place in the hashing pool, or raise
        ``RateLimited`` (taking nothing)."""
        wait = self.registrations.wait(address)
        if wait > 0:
            raise RateLimited("too many registrations from your address", wait)
        self.hashing.reserve()
        self.registrations.take(address)

    def check_guest(self, address: str) -> None:
        wait = self.guests.take(address)
        if wait > 0:
            raise RateLimited("too many guest accounts from your address", wait)

    def prune(self) -> None:
        """Forget the keys that no longer limit anything (the purge task calls this)."""
        for limit in (self.logins, self.account_logins, self.registrations, self.guests):
            limit.prune()
        self.backoff.prune()

    def close(self) -> None:
        self.hashing.close()


def account_key(username: object) -> str:
    """The key an account name is limited under: the name in lower case (whether or not
    it exists), cut to a length no valid name exceeds so odd input cannot grow it."""
    return str(username).lower()[:32]


async def _hashing(guard: Guard | None, work: Callable[..., _T], *args: object) -> _T:
    """``work(*args)`` in a thread: the guard's pool, in the place its check reserved."""
    if guard is None:
        return await asyncio.to_thread(work, *args)
    return await guard.hashing.run_reserved(work, *args)


# The protocol's account operations.


async def register(
    store: Store,
    username: str,
    password: str,
    days: int,
    *,
    now: datetime | None = None,
    guard: Guard | None = None,
    address: str = "",
) -> tuple[PlayerRow, str, datetime]:
    """Create an account and log it in (``address`` limited by ``guard``, if given)."""
    check_username(username)
    check_password(password)
    if guard is not None:
        guard.check_register(address)
    password_hash = await _hashing(guard, hash_password, password)
    try:
        return await _new_account(store, username, password_hash, days, now)
    except UsernameLookalike as exc:
        raise AccountError(
            "username_confusable",
            f"the username {shown(username)} looks like {exc.existing!r}, an existing "
            "account's name (names are compared in any case, with I, l and 1 alike, O and 0 "
            "alike, m and rn alike): choose another",
        ) from None
    except UsernameTaken:
        raise AccountError("username_taken", f"the username {shown(username)} is taken") from None


async def login(
    store: Store,
    username: str,
    password: str,
    days: int,
    *,
    now: datetime | None = None,
    guard: Guard | None = None,
    address: str = "",
) -> tuple[PlayerRow, str, datetime]:
    """Log in with a username (any case) and password (``address`` and the name limited
    by ``guard``, if given)."""
    key = account_key(username)
    if guard is not None:
        guard.check_login(address, key)
        # Counted as a failure until it succeeds: attempts sent together all see it.
        guard.backoff.failed(key)
    try:
        player = await store.get_player(username) if isinstance(username, str) else None
    except BaseException:
        if guard is not None:
            guard.hashing.release()  # the place check_login reserved
        raise
    stored = player.password_hash if player is not None else None
    # Check a password even when there is none to check (unknown name, guest), so the
    # time taken does not tell whether an account exists.
    ok = await _hashing(guard, verify_password, str(password), stored or DUMMY_HASH)
    if player is None or stored is None or not ok:
        raise AccountError("auth_failed", "wrong username or password")
    if guard is not None:
        guard.backoff.succeeded(key)
    return await _start_session(store, player, days, now)


async def guest(
    store: Store,
    days: int,
    *,
    now: datetime | None = None,
    guard: Guard | None = None,
    address: str = "",
) -> tuple[PlayerRow, str, datetime]:
    """A new guest account (no password, named ``guest-NNNN``), logged in (``address``
    limited by ``guard``, if given)."""
    if guard is not None:
        guard.check_guest(address)
    for digits in GUEST_DIGITS:
        try:
            return await _new_account(store, guest_name(digits), None, days, now, why=False)
        except UsernameTaken:
            continue
    raise AccountError("auth_failed", "no free guest name; try again")


async def resume(
    store: Store, token: str, *, now: datetime | None = None
) -> tuple[PlayerRow, str, datetime]:
    """The session of ``token``: ``auth_failed`` if unknown, expired or revoked."""
    found = None
    if isinstance(token, str) and token:
        found = await store.find_session(token_hash(token), now or datetime.now(UTC))
    if found is None:
        raise AccountError("auth_failed", "unknown, expired or revoked session token")
    return found.player, token, found.expires_at


async def logout(store: Store, token: str, *, now: datetime | None = None) -> None:
    """Revoke the session of ``token`` (nothing happens for an unknown token)."""
    await store.revoke_session(token_hash(token), now=now)


async def _start_session(
    store: Store, player: PlayerRow, days: int, now: datetime | None
) -> tuple[PlayerRow, str, datetime]:
    now = now or datetime.now(UTC)
    token = new_token()
    expires_at = now + timedelta(days=days)
    await store.create_session(player.id, token_hash(token), expires_at, now=now)
    return player, token, expires_at


async def _new_account(
    store: Store,
    username: str,
    password_hash: str | None,
    days: int,
    now: datetime | None,
    *,
    why: bool = True,
) -> tuple[PlayerRow, str, datetime]:
    """A new account (a guest without ``password_hash``) and its first session, in one
    write. ``UsernameTaken`` if the name exists (``UsernameLookalike`` if one like it does,
    unless not asked ``why``: a guest's name is simply tried again)."""
    now = now or datetime.now(UTC)
    token = new_token()
    expires_at = now + timedelta(days=days)
    player = await store.create_account(
        username,
        password_hash,
        password_hash is None,
        (token_hash(token), expires_at),
        now=now,
        why=why,
    )
    return player, token, expires_at


async def purge(
    store: Store, guest_days: int, *, now: datetime | None = None
) -> tuple[int, int, int]:
    """Housekeeping: purge the guests whose lifetime (``guest_days``, their session's) is
    over (see ``Store.purge_guests``), then delete every expired session.
    ``(guests deleted, guests kept for their matches, sessions deleted)``."""
    now = now or datetime.now(UTC)
    deleted = kept = 0
    after: int | None = 0
    while after is not None:
        batch = await store.purge_guests(now - timedelta(days=guest_days), now, after_id=after)
        deleted, kept, after = deleted + batch.deleted, kept + batch.kept, batch.next_after
    sessions = await store.delete_expired_sessions(now)
    return deleted, kept, sessions

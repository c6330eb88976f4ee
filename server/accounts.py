"""Accounts: passwords, usernames, session tokens and the account operations of the protocol.

- Passwords are hashed with scrypt (memory-hard), a random 16-byte salt each, stored as
  ``scrypt$n$r$p$salt_hex$hash_hex`` so the parameters can be raised later without breaking
  old hashes. Hashing runs in a worker thread: it takes tens of milliseconds and 16 MiB.
- Usernames are 3-20 ASCII letters, digits, ``_`` or ``-`` (ASCII only: no look-alike
  names); unique in any case. ``guest-`` names are kept for guests.
- A session token is ``secrets.token_urlsafe(32)``; the database keeps only its SHA-256.

The service functions return ``(PlayerRow, token, expires_at)`` and raise ``AccountError``
with the wire protocol's codes: ``bad_username``, ``weak_password``, ``username_taken``,
``auth_failed``.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import secrets
from datetime import UTC, datetime, timedelta

from server.db.store import PlayerRow, Store, UsernameTaken
from server.errors import ServerError

SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1
SALT_BYTES = 16
HASH_BYTES = 32
MIN_PASSWORD = 8
USERNAME = re.compile(r"[A-Za-z0-9_-]{3,20}")
GUEST_PREFIX = "guest-"
GUEST_DIGITS = (4, 4, 4, 4, 6, 6, 6, 8, 8, 8)  # digits of each try at a free guest name


class AccountError(ServerError):
    """An account request refused; ``code`` is the protocol's error code."""


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


# A hash to check against when the username is unknown, so that a login takes as long
# whether or not the player exists. Computed once, on first use.
_DUMMY_HASH: str | None = None


def _dummy_hash() -> str:
    global _DUMMY_HASH  # noqa: PLW0603 (a lazily computed constant)
    if _DUMMY_HASH is None:
        _DUMMY_HASH = hash_password(secrets.token_urlsafe(16))
    return _DUMMY_HASH


# Names and tokens.


def check_username(username: object) -> str:
    """The username if valid; ``AccountError("bad_username")`` otherwise."""
    if not isinstance(username, str) or not USERNAME.fullmatch(username):
        raise AccountError(
            "bad_username",
            f"a username is 3-20 letters, digits, _ or -, got {username!r}",
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


# The protocol's account operations.


async def register(
    store: Store, username: str, password: str, days: int, *, now: datetime | None = None
) -> tuple[PlayerRow, str, datetime]:
    """Create an account and log it in."""
    check_username(username)
    check_password(password)
    password_hash = await asyncio.to_thread(hash_password, password)
    try:
        player_id = await store.create_player(username, password_hash, guest=False, now=now)
    except UsernameTaken:
        raise AccountError("username_taken", f"the username {username!r} is taken") from None
    return await _start_session(store, player_id, username, days, now)


async def login(
    store: Store, username: str, password: str, days: int, *, now: datetime | None = None
) -> tuple[PlayerRow, str, datetime]:
    """Log in with a username (any case) and password."""
    player = await store.get_player(username) if isinstance(username, str) else None
    stored = player.password_hash if player is not None else None
    # Check a password even when there is none to check (unknown name, guest), so the
    # time taken does not tell whether an account exists.
    ok = await asyncio.to_thread(verify_password, str(password), stored or _dummy_hash())
    if player is None or stored is None or not ok:
        raise AccountError("auth_failed", "wrong username or password")
    return await _start_session(store, player.id, player.username, days, now)


async def guest(
    store: Store, days: int, *, now: datetime | None = None
) -> tuple[PlayerRow, str, datetime]:
    """A new guest account (no password, named ``guest-NNNN``), logged in."""
    for digits in GUEST_DIGITS:
        name = guest_name(digits)
        try:
            player_id = await store.create_player(name, None, guest=True, now=now)
        except UsernameTaken:
            continue
        return await _start_session(store, player_id, name, days, now)
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
    store: Store, player_id: int, username: str, days: int, now: datetime | None
) -> tuple[PlayerRow, str, datetime]:
    now = now or datetime.now(UTC)
    token = new_token()
    expires_at = now + timedelta(days=days)
    await store.create_session(player_id, token_hash(token), expires_at, now=now)
    player = await store.get_player(username)
    assert player is not None, f"player {username!r} vanished"
    return player, token, expires_at

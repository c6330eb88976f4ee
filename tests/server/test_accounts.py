"""Accounts: scrypt hashes, names and passwords, tokens, and register / login / guest /
resume / logout on SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from server import accounts
from server.accounts import (
    AccountError,
    check_password,
    check_username,
    hash_password,
    token_hash,
    verify_password,
)
from server.db.store import Store

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


# Passwords.


def test_a_hash_verifies_and_records_its_parameters() -> None:
    stored = hash_password("correct horse")
    scheme, n, r, p, salt, digest = stored.split("$")
    assert (scheme, n, r, p) == ("scrypt", str(2**14), "8", "1")
    assert len(bytes.fromhex(salt)) == 16 and len(bytes.fromhex(digest)) == 32
    assert verify_password("correct horse", stored)


def test_each_hash_has_its_own_salt() -> None:
    first, second = hash_password("correct horse"), hash_password("correct horse")
    assert first != second
    assert first.split("$")[4] != second.split("$")[4]
    assert verify_password("correct horse", first) and verify_password("correct horse", second)


def test_a_wrong_password_fails() -> None:
    stored = hash_password("correct horse")
    assert not verify_password("correct horsE", stored)
    assert not verify_password("", stored)


def test_the_stored_parameters_are_used() -> None:
    cheap = hash_password("correct horse", n=2**10, r=4, p=2)
    assert cheap.startswith("scrypt$1024$4$2$")
    assert verify_password("correct horse", cheap)
    assert not verify_password("wrong horse", cheap)


@pytest.mark.parametrize(
    "stored",
    ["", "plain", "bcrypt$1$2$3$00$00", "scrypt$16384$8$1$zz$00", "scrypt$1000$8$1$00$00"],
)
def test_a_malformed_hash_never_verifies(stored: str) -> None:
    assert not verify_password("correct horse", stored)


# Names, passwords and tokens.


@pytest.mark.parametrize("name", ["lin", "Lin_Mei-2", "a" * 20, "___", "0-0"])
def test_good_usernames(name: str) -> None:
    assert check_username(name) == name


@pytest.mark.parametrize(
    "name", ["", "ab", "a" * 21, "lin mei", "lin!", "林小美", "é-abc", "guest-1234", "Guest-x", 7]
)
def test_bad_usernames(name: object) -> None:
    with pytest.raises(AccountError) as refused:
        check_username(name)
    assert refused.value.code == "bad_username"


def test_passwords_need_eight_characters() -> None:
    assert check_password("12345678") == "12345678"
    for weak in ("", "1234567", None):
        with pytest.raises(AccountError) as refused:
            check_password(weak)
        assert refused.value.code == "weak_password"


def test_tokens_are_random_and_stored_as_sha256() -> None:
    tokens = {accounts.new_token() for _ in range(100)}
    assert len(tokens) == 100
    token = tokens.pop()
    assert len(token) == 43 and re.fullmatch(r"[A-Za-z0-9_-]+", token)
    assert token_hash(token) == hashlib.sha256(token.encode()).hexdigest()


# The account operations.


@pytest.mark.asyncio
async def test_register_then_resume(store: Store) -> None:
    player, token, expires = await accounts.register(store, "Lin", "correct horse", 30, now=T0)
    assert (player.username, player.guest) == ("Lin", False)
    assert expires == T0 + timedelta(days=30)
    assert player.password_hash is not None and verify_password(
        "correct horse", player.password_hash
    )

    resumed, same, until = await accounts.resume(store, token, now=T0 + timedelta(days=29))
    assert (resumed.id, same, until) == (player.id, token, expires)


@pytest.mark.asyncio
async def test_only_the_token_hash_is_stored(store: Store) -> None:
    _, token, _ = await accounts.register(store, "lin", "correct horse", 30)
    async with store.engine.connect() as connection:
        stored = (await connection.execute(text("SELECT token_hash FROM sessions"))).scalars().all()
    assert stored == [token_hash(token)]
    assert token not in stored


@pytest.mark.asyncio
async def test_register_refusals(store: Store) -> None:
    await accounts.register(store, "lin", "correct horse", 30)
    for username, password, code in [
        ("LIN", "correct horse", "username_taken"),
        ("x", "correct horse", "bad_username"),
        ("mei", "short", "weak_password"),
    ]:
        with pytest.raises(AccountError) as refused:
            await accounts.register(store, username, password, 30)
        assert refused.value.code == code


@pytest.mark.asyncio
async def test_a_name_that_looks_like_an_account_is_refused_naming_it(store: Store) -> None:
    await accounts.register(store, "lin", "correct horse", 30)
    await accounts.register(store, "Bob", "correct horse", 30)
    for username, existing in [("Iin", "lin"), ("1IN", "lin"), ("b0b", "Bob"), ("BO8", None)]:
        if existing is None:  # 8 and B do not look alike to UTS #39
            await accounts.register(store, username, "correct horse", 30)
            continue
        with pytest.raises(AccountError) as refused:
            await accounts.register(store, username, "correct horse", 30)
        assert refused.value.code == "username_confusable"
        assert f"{username!r} looks like {existing!r}" in refused.value.reason
    player, _, _ = await accounts.login(store, "LIN", "correct horse", 7)
    assert player.username == "lin"  # a login finds the account by its own name, in any case
    with pytest.raises(AccountError) as refused:
        await accounts.login(store, "Iin", "correct horse", 7)
    assert refused.value.code == "auth_failed"  # and by no other


@pytest.mark.asyncio
async def test_login(store: Store) -> None:
    registered, first, _ = await accounts.register(store, "Lin", "correct horse", 30)
    player, token, expires = await accounts.login(store, "lin", "correct horse", 7, now=T0)
    assert player.id == registered.id and player.username == "Lin"
    assert token != first and expires == T0 + timedelta(days=7)
    for username, password in [("lin", "wrong horse"), ("nobody", "correct horse")]:
        with pytest.raises(AccountError) as refused:
            await accounts.login(store, username, password, 7)
        assert refused.value.code == "auth_failed"


@pytest.mark.asyncio
async def test_guests(store: Store) -> None:
    first, token, expires = await accounts.guest(store, 3, now=T0)
    second, _, _ = await accounts.guest(store, 3, now=T0)
    assert re.fullmatch(r"guest-\d{4}", first.username)
    assert first.username != second.username
    assert first.guest and first.password_hash is None
    assert expires == T0 + timedelta(days=3)
    assert (await accounts.resume(store, token, now=T0))[0].id == first.id
    with pytest.raises(AccountError) as refused:  # a guest has no password to log in with
        await accounts.login(store, first.username, "", 3)
    assert refused.value.code == "auth_failed"


@pytest.mark.asyncio
async def test_guest_names_avoid_taken_ones(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    names = iter(["guest-0001", "guest-0001", "guest-0002"])
    monkeypatch.setattr(accounts, "guest_name", lambda digits=4: next(names))
    first, _, _ = await accounts.guest(store, 3)
    second, _, _ = await accounts.guest(store, 3)
    assert (first.username, second.username) == ("guest-0001", "guest-0002")


@pytest.mark.asyncio
async def test_expired_and_revoked_tokens_fail(store: Store) -> None:
    _, token, expires = await accounts.register(store, "lin", "correct horse", 30, now=T0)
    _, other, _ = await accounts.login(store, "lin", "correct horse", 30, now=T0)
    for bad, now in [(token, expires), (token, expires + timedelta(seconds=1)), ("nope", T0)]:
        with pytest.raises(AccountError) as refused:
            await accounts.resume(store, bad, now=now)
        assert refused.value.code == "auth_failed"

    await accounts.logout(store, other)
    with pytest.raises(AccountError) as refused:
        await accounts.resume(store, other, now=T0)
    assert refused.value.code == "auth_failed"
    assert (await accounts.resume(store, token, now=T0))[1] == token  # logout is per session
    await accounts.logout(store, "unknown token")  # harmless

"""Accounts under attack: the token buckets and the backoff (``server.limits``, on a fake
clock), the limits of login / register / guest (``rate_limited`` with ``retry_after``), no
account enumeration, the bounded hashing pool, the guest purge, the configuration keys,
and a login flood during a live match."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from server import accounts
from server import connection as connection_module
from server.accounts import AccountError, Guard, HashPool, RateLimited
from server.app import App
from server.cli.loadtest import loadtest
from server.client import Client, ConnectionLost, ServerError
from server.config import AccountsSection, Config, ConfigError, DatabaseSection, ServerSection
from server.config import load as load_config
from server.connection import RATE_STRIKES, REFUSAL_PAUSE
from server.db.models import Player, PlayerSession
from server.db.store import Store, TableRow
from server.limits import Backoff, Buckets

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
PASSWORD = "correct horse"


class FakeClock:
    """Seconds that pass only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def settings(**changes: Any) -> AccountsSection:
    """The default account settings with ``changes``."""
    return dataclasses.replace(AccountsSection(), **changes)


# Token buckets.


def test_a_bucket_allows_its_burst_then_says_how_long_to_wait() -> None:
    clock = FakeClock()
    buckets = Buckets(per_second=0.5, burst=3, clock=clock)
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a") == pytest.approx(2.0)  # one token every 2 s
    assert buckets.take("b") == 0.0  # another key has its own bucket
    clock.advance(1.0)
    assert buckets.take("a") == pytest.approx(1.0)  # a refusal takes nothing
    clock.advance(1.0)
    assert buckets.take("a") == 0.0
    assert buckets.take("a") == pytest.approx(2.0)


def test_a_bucket_refills_up_to_its_burst_only() -> None:
    clock = FakeClock()
    buckets = Buckets(per_second=1.0, burst=2, clock=clock)
    buckets.take("a")
    clock.advance(3600)
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, pytest.approx(1.0)]
    assert buckets.wait("a") == pytest.approx(1.0)  # wait() takes nothing
    assert buckets.wait("a") == pytest.approx(1.0)


def test_buckets_keep_a_bounded_number_of_keys() -> None:
    clock = FakeClock()
    buckets = Buckets(per_second=1.0, burst=1, clock=clock, max_keys=10)
    for n in range(100):
        buckets.take(f"name{n}")
    assert len(buckets) <= 10
    assert buckets.take("name99") > 0  # the most recent keys are the ones kept
    clock.advance(1.0)
    assert buckets.prune() == 10 and len(buckets) == 0  # full again: nothing to remember


def test_bucket_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="per_second > 0"):
        Buckets(per_second=0, burst=1, clock=FakeClock())


# Backoff.


def test_the_backoff_doubles_after_the_free_failures_up_to_the_cap() -> None:
    clock = FakeClock()
    backoff = Backoff(free=3, base=1.0, cap=10.0, clock=clock)
    waits = []
    for _ in range(8):
        waits.append(backoff.wait("lin"))
        clock.advance(waits[-1])  # the attacker waits exactly as long as told
        backoff.failed("lin")
    assert waits == [0, 0, 0, 1, 2, 4, 8, 10]
    assert backoff.wait("lin") == 10.0
    clock.advance(4)
    assert backoff.wait("lin") == pytest.approx(6.0)
    assert backoff.wait("mei") == 0.0  # per key


def test_a_success_resets_the_backoff() -> None:
    clock = FakeClock()
    backoff = Backoff(free=1, base=2.0, cap=60.0, clock=clock)
    backoff.failed("lin")
    backoff.failed("lin")
    assert backoff.wait("lin") == 4.0
    backoff.succeeded("lin")
    assert backoff.wait("lin") == 0.0 and backoff.failures("lin") == 0
    backoff.failed("lin")
    assert backoff.wait("lin") == 2.0  # counted from the start again


def test_old_failures_are_forgotten() -> None:
    clock = FakeClock()
    backoff = Backoff(free=0, base=1.0, cap=5.0, clock=clock, forget=100.0)
    for _ in range(5):
        backoff.failed("lin")
    assert backoff.failures("lin") == 5
    clock.advance(100)
    assert backoff.failures("lin") == 0 and backoff.wait("lin") == 0.0
    backoff.failed("lin")
    assert backoff.failures("lin") == 1  # a new run of failures
    clock.advance(100)
    assert backoff.prune() == 1 and len(backoff) == 0


def test_a_long_attack_does_not_overflow_the_delay() -> None:
    backoff = Backoff(free=0, base=1.0, cap=300.0, clock=FakeClock())
    assert backoff.delay(100_000) == 300.0


# The limits of the account operations (on SQLite and PostgreSQL).


@pytest.mark.asyncio
async def test_logins_per_address_are_limited(store: Store) -> None:
    clock = FakeClock()
    guard = Guard(settings(login_per_minute=6, login_burst=3, login_backoff_after=100), clock)
    await accounts.register(store, "lin", PASSWORD, 30)
    for _ in range(3):
        with pytest.raises(AccountError) as failed:
            await accounts.login(store, "lin", "wrong horse", 30, guard=guard, address="10.0.0.1")
        assert failed.value.code == "auth_failed"
    with pytest.raises(RateLimited) as limited:  # even with the right password
        await accounts.login(store, "lin", PASSWORD, 30, guard=guard, address="10.0.0.1")
    assert limited.value.code == "rate_limited" and limited.value.retry_after == 10
    assert "try again in 10 s" in limited.value.reason
    # Another address is not limited by this one, and the right password works.
    await accounts.login(store, "lin", PASSWORD, 30, guard=guard, address="10.0.0.2")
    clock.advance(10)
    await accounts.login(store, "lin", PASSWORD, 30, guard=guard, address="10.0.0.1")
    guard.close()


@pytest.mark.asyncio
async def test_logins_per_account_are_limited_from_any_address(store: Store) -> None:
    clock = FakeClock()
    guard = Guard(
        settings(account_login_per_minute=1, account_login_burst=2, login_backoff_after=100), clock
    )
    await accounts.register(store, "lin", PASSWORD, 30)
    for address in ("10.0.0.1", "10.0.0.2"):
        await accounts.login(store, "LIN", PASSWORD, 30, guard=guard, address=address)
    with pytest.raises(RateLimited) as limited:
        await accounts.login(store, "lin", PASSWORD, 30, guard=guard, address="10.0.0.3")
    assert limited.value.retry_after == 60
    clock.advance(60)
    await accounts.login(store, "lin", PASSWORD, 30, guard=guard, address="10.0.0.3")
    guard.close()


@pytest.mark.asyncio
async def test_registrations_per_address_are_limited(store: Store) -> None:
    clock = FakeClock()
    guard = Guard(settings(register_per_hour=2, register_burst=2), clock)
    for name in ("lin", "mei"):
        await accounts.register(store, name, PASSWORD, 30, guard=guard, address="10.0.0.1")
    with pytest.raises(RateLimited) as limited:
        await accounts.register(store, "tao", PASSWORD, 30, guard=guard, address="10.0.0.1")
    assert limited.value.code == "rate_limited" and limited.value.retry_after == 1800
    assert await store.get_player("tao") is None  # refused before anything is stored
    await accounts.register(store, "tao", PASSWORD, 30, guard=guard, address="10.0.0.2")
    clock.advance(1800)
    await accounts.register(store, "wen", PASSWORD, 30, guard=guard, address="10.0.0.1")
    guard.close()


@pytest.mark.asyncio
async def test_guests_per_address_are_limited(store: Store) -> None:
    clock = FakeClock()
    guard = Guard(settings(guest_per_hour=60, guest_burst=2), clock)
    for _ in range(2):
        await accounts.guest(store, 3, guard=guard, address="10.0.0.1")
    with pytest.raises(RateLimited) as limited:
        await accounts.guest(store, 3, guard=guard, address="10.0.0.1")
    assert limited.value.code == "rate_limited" and limited.value.retry_after == 60
    async with store._read() as session:
        assert await session.scalar(select(func.count()).select_from(Player)) == 2
    await accounts.guest(store, 3, guard=guard, address="10.0.0.2")
    guard.close()


@pytest.mark.asyncio
async def test_failed_logins_back_off_and_a_success_resets(store: Store) -> None:
    clock = FakeClock()
    guard = Guard(
        settings(login_backoff_after=2, login_backoff_seconds=2, login_backoff_max_seconds=5),
        clock,
    )
    await accounts.register(store, "lin", PASSWORD, 30)

    async def attempt(password: str, address: str = "10.0.0.1") -> str:
        try:
            await accounts.login(store, "lin", password, 30, guard=guard, address=address)
        except RateLimited as exc:
            return f"wait {exc.retry_after}"
        except AccountError as exc:
            return exc.code
        return "ok"

    answers = []
    for _ in range(5):
        answers.append(await attempt("wrong horse"))
        if answers[-1].startswith("wait"):
            clock.advance(int(answers[-1].split()[1]))
            answers.append(await attempt("wrong horse"))
    assert answers == [
        "auth_failed",
        "auth_failed",
        "wait 2",  # after 2 failures: 2 s
        "auth_failed",
        "wait 4",  # then doubling
        "auth_failed",
        "wait 5",  # up to the cap
        "auth_failed",
    ]
    # The backoff is the account's, whatever the address.
    assert await attempt(PASSWORD, "10.0.0.9") == "wait 5"
    clock.advance(5)
    assert await attempt(PASSWORD, "10.0.0.9") == "ok"
    assert guard.backoff.failures("lin") == 0
    assert await attempt("wrong horse") == "auth_failed"  # a fresh start
    assert await attempt("wrong horse") == "auth_failed"
    guard.close()


# No account enumeration.


@pytest.mark.asyncio
async def test_unknown_and_known_names_get_the_same_answer_and_work(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    await accounts.register(store, "lin", PASSWORD, 30)
    await accounts.guest(store, 3)
    guest_name = await _a_guest_name(store)
    calls: list[tuple[int, int, int, int]] = []
    real_scrypt = accounts._scrypt

    def counting(password: str, salt: bytes, *, n: int, r: int, p: int, length: int) -> bytes:
        calls.append((n, r, p, length))
        return real_scrypt(password, salt, n=n, r=r, p=p, length=length)

    monkeypatch.setattr(accounts, "_scrypt", counting)
    clock = FakeClock()
    guard = Guard(settings(login_backoff_after=2, login_backoff_seconds=3), clock)
    answers: dict[str, list[tuple[str, str, int | None]]] = {}
    work: dict[str, list[tuple[int, int, int, int]]] = {}
    for name in ("lin", "nobody", guest_name):
        answers[name], work[name] = [], []
        for _ in range(4):
            calls.clear()
            try:
                await accounts.login(store, name, "wrong horse", 30, guard=guard, address=name)
            except AccountError as exc:
                answers[name].append((exc.code, exc.reason, getattr(exc, "retry_after", None)))
            work[name].append(tuple(calls))  # type: ignore[arg-type]
    assert answers["lin"] == answers["nobody"] == answers[guest_name]
    assert answers["lin"] == [
        ("auth_failed", "wrong username or password", None),
        ("auth_failed", "wrong username or password", None),
        ("rate_limited", "too many login attempts; try again in 3 s", 3),
        ("rate_limited", "too many login attempts; try again in 3 s", 3),
    ]
    # One scrypt of the same parameters for a wrong password, an unknown name and a
    # guest; none once refused by the backoff.
    one = ((2**14, 8, 1, 32),)
    assert work["lin"] == work["nobody"] == work[guest_name] == [one, one, (), ()]
    guard.close()


def test_the_dummy_hash_has_the_current_parameters() -> None:
    scheme, n, r, p, salt, digest = accounts.DUMMY_HASH.split("$")
    assert (scheme, int(n), int(r), int(p)) == (
        "scrypt",
        accounts.SCRYPT_N,
        accounts.SCRYPT_R,
        accounts.SCRYPT_P,
    )
    assert len(bytes.fromhex(salt)) == accounts.SALT_BYTES
    assert len(bytes.fromhex(digest)) == accounts.HASH_BYTES


async def _a_guest_name(store: Store) -> str:
    async with store._read() as session:
        name = await session.scalar(select(Player.username).where(Player.guest.is_(True)))
    assert name is not None
    return name


# The hashing pool.


@pytest.mark.asyncio
async def test_the_pool_runs_at_most_its_workers_and_refuses_beyond_its_queue() -> None:
    pool = HashPool(workers=2, queue=3)
    release = threading.Event()
    lock = threading.Lock()
    running = [0, 0]  # now, most at once

    def work(n: int) -> int:
        with lock:
            running[0] += 1
            running[1] = max(running)
        release.wait(10)
        with lock:
            running[0] -= 1
        return n

    tasks = [asyncio.create_task(pool.run(work, n)) for n in range(5)]
    await asyncio.sleep(0)  # every task submitted
    while running[0] < 2:
        await asyncio.sleep(0.01)
    assert pool.pending == 5
    with pytest.raises(RateLimited) as busy:
        await pool.run(work, 5)
    assert busy.value.code == "rate_limited" and busy.value.retry_after == 1
    assert "busy" in busy.value.reason
    release.set()
    assert await asyncio.gather(*tasks) == [0, 1, 2, 3, 4]
    assert running[1] == 2
    assert pool.pending == 0
    assert await pool.run(work, 6) == 6  # room again
    pool.close()


@pytest.mark.asyncio
async def test_a_login_flood_hashes_at_most_hash_workers_at_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    await accounts.register(store, "lin", PASSWORD, 30)
    lock = threading.Lock()
    release = threading.Event()
    running = [0, 0]  # now, most at once
    real_scrypt = accounts._scrypt

    def counting(password: str, salt: bytes, *, n: int, r: int, p: int, length: int) -> bytes:
        with lock:
            running[0] += 1
            running[1] = max(running)
        try:
            release.wait(10)  # every hash is slow until the flood has been answered
            return real_scrypt(password, salt, n=n, r=r, p=p, length=length)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(accounts, "_scrypt", counting)
    unlimited = {"login_burst": 1000, "account_login_burst": 1000, "login_backoff_after": 1000}
    guard = Guard(settings(hash_workers=2, hash_queue=4, **unlimited))
    logins = [
        asyncio.create_task(
            accounts.login(store, "lin", "wrong horse", 30, guard=guard, address="10.0.0.1")
        )
        for _ in range(30)
    ]
    try:
        for _ in range(500):  # all but the workers' and the queue's are answered at once
            if sum(t.done() for t in logins) >= 30 - 6:
                break
            await asyncio.sleep(0.01)
        for _ in range(500):  # the two workers' threads under way (a loaded machine: late)
            if running[0] == 2:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)  # (nothing else would finish, nor start hashing)
        assert sum(t.done() for t in logins) == 24 and guard.hashing.pending == 6
        assert running == [2, 2]  # two hashing, four waiting
    finally:
        release.set()
    results = await asyncio.gather(*logins, return_exceptions=True)
    codes = Counter(r.code for r in results if isinstance(r, AccountError))
    print(f"\n30 concurrent logins, 2 workers, queue 4: {dict(codes)}, most at once {running[1]}")
    assert codes == {"auth_failed": 6, "rate_limited": 24}  # the rest refused, not queued
    assert running[1] == 2
    assert guard.backoff.failures("lin") == 6  # a busy refusal is no failed password
    assert guard.hashing.pending == 0
    guard.close()


# The guest purge (on SQLite and PostgreSQL).


async def _guest(store: Store, name: str, created: datetime, days: int = 3) -> int:
    player_id = await store.create_player(name, None, guest=True, now=created)
    await store.create_session(
        player_id, accounts.token_hash(name), created + timedelta(days=days), now=created
    )
    return player_id


async def _sessions(store: Store) -> Counter[int]:
    async with store._read() as session:
        return Counter(await session.scalars(select(PlayerSession.player_id)))


@pytest.mark.asyncio
async def test_expired_guests_are_purged_unless_a_match_names_them(store: Store) -> None:
    now = T0 + timedelta(days=10)
    old = T0  # created 10 days ago: a 3-day guest session is long over
    never_played = await _guest(store, "guest-0001", old)
    finished = await _guest(store, "guest-0002", old)
    in_play = await _guest(store, "guest-0003", old)
    at_table = await _guest(store, "guest-0004", old)
    young = await _guest(store, "guest-0005", now - timedelta(days=1))
    logged_out = await _guest(store, "guest-0006", now - timedelta(days=1))
    await store.revoke_session(accounts.token_hash("guest-0006"), now=now)
    member = await store.create_player("lin", "scrypt$x", guest=False, now=old)
    await store.create_session(member, "f" * 64, old + timedelta(days=1), now=old)

    done = await store.create_match(
        "t1", "mcr", 1, "00", ["guest-0002", "bot:fast", "bot:fast", "lin"], old
    )
    await store.finish_match(done, [0, 0, 0, 0], old + timedelta(hours=1))
    await store.create_match("t2", "mcr", 2, "00", ["bot:fast", "GUEST-0003", None, None], old)
    await store.save_table(
        TableRow("t3", "mcr", 15, False, None, [None, "guest-0004", None, None], old)
    )

    deleted, kept, sessions = await accounts.purge(store, 3, now=now)
    assert (deleted, kept) == (1, 3)
    assert await store.get_player("guest-0001") is None
    for name in ("guest-0002", "guest-0003", "guest-0004", "guest-0005", "guest-0006", "lin"):
        assert await store.get_player(name) is not None, name
    left = await _sessions(store)
    assert never_played not in left and finished not in left
    assert in_play not in left and at_table not in left  # kept rows, sessions dropped
    assert left[young] == 1 and left[logged_out] == 1  # their lifetime is not over yet
    assert member not in left and sessions == 1  # the member's expired session went too
    detail = await store.match_detail(done)
    assert detail is not None and detail["seats"][0] == "guest-0002"  # the record's name

    # Once the table is gone and the lifetime is over, the others go too; played stays.
    await store.save_table(
        TableRow("t3", "mcr", 15, False, None, [None, "guest-0004", None, None], old, "finished")
    )
    later = now + timedelta(days=3)
    deleted, kept, _ = await accounts.purge(store, 3, now=later)
    assert (deleted, kept) == (3, 2)  # guest-0004, -0005, -0006; -0002 and -0003 stay
    assert await store.get_player("guest-0002") is not None
    assert await store.get_player("guest-0003") is not None
    assert await accounts.purge(store, 3, now=later) == (0, 2, 0)  # nothing more to do


@pytest.mark.asyncio
async def test_the_purge_goes_through_every_batch(store: Store) -> None:
    for n in range(7):
        await _guest(store, f"guest-{n:04d}", T0)
    await store.create_match("t1", "mcr", 1, "00", ["guest-0000", None, None, None], T0)
    result = await store.purge_guests(T0 + timedelta(days=1), T0 + timedelta(days=4), limit=3)
    assert result == (2, 1, result.next_after) and result.next_after is not None
    deleted, kept, _ = await accounts.purge(store, 3, now=T0 + timedelta(days=4))
    assert (deleted, kept) == (4, 1)  # the rest, in batches; guest-0000 kept each time
    async with store._read() as session:
        assert await session.scalar(select(func.count()).select_from(Player)) == 1


@pytest.mark.asyncio
async def test_the_server_purges_at_start_up(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'guobiao.db'}"
    config = Config(
        server=ServerSection(host="127.0.0.1", port=0, data_dir=str(tmp_path)),
        database=DatabaseSection(url=url),
    )
    first = App(config)
    await first.start()
    await _guest(first.store, "guest-0001", datetime.now(UTC) - timedelta(days=4))
    await _guest(first.store, "guest-0002", datetime.now(UTC))
    await first.stop()
    second = App(config)
    await second.start()
    try:
        assert await second.store.get_player("guest-0001") is None
        assert await second.store.get_player("guest-0002") is not None
        assert second.purger is not None and not second.purger.done()  # and periodically
    finally:
        await second.stop()
    assert second.purger.done()


# Configuration.


def test_the_account_limits_are_configurable_and_checked(tmp_path: Path) -> None:
    config = load_config(environ={"GUOBIAO_ACCOUNTS_LOGIN_BURST": "3"})
    assert config.accounts.login_burst == 3
    assert config.accounts.hash_workers == AccountsSection().hash_workers
    for text, words in [
        ("[accounts]\nlogin_burst = 0\n", "[accounts] login_burst must be between 1 and"),
        ("[accounts]\nhash_workers = 'two'\n", "[accounts] hash_workers must be a whole number"),
        ("[accounts]\nlogin_per_minute = -1\n", "[accounts] login_per_minute must be between"),
        ("[accounts]\nlogins = 3\n", "unknown key [accounts] logins"),
        (
            "[accounts]\nlogin_backoff_seconds = 10\nlogin_backoff_max_seconds = 5\n",
            "login_backoff_max_seconds (5) must be at least login_backoff_seconds (10)",
        ),
    ]:
        site = tmp_path / "site.toml"
        site.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError) as refused:
            load_config(site, environ={})
        assert words in str(refused.value)


def test_every_account_key_is_in_the_default_file() -> None:
    text = (Path(__file__).parents[2] / "config" / "default.toml").read_text(encoding="utf-8")
    section = text.split("[accounts]", 1)[1]
    for field in dataclasses.fields(AccountsSection):
        assert f"\n{field.name} = " in section, field.name


def test_the_protocol_doc_states_the_default_limits() -> None:
    path = Path(__file__).parents[2] / "docs" / "protocol.md"
    text = " ".join(path.read_text(encoding="utf-8").split())
    d = AccountsSection()
    for phrase in [
        f"`login` ({d.login_burst} at once, {d.login_per_minute:g} a minute)",
        f"`register` ({d.register_burst} at once, {d.register_per_hour:g} an hour)",
        f"`guest` ({d.guest_burst} at once, {d.guest_per_hour:g} an hour)",
        f"`login` ({d.account_login_burst} at once, {d.account_login_per_minute:g} a minute)",
        f"after {d.login_backoff_after} failed logins in a row",
        f"must wait {d.login_backoff_seconds:g} s, then {2 * d.login_backoff_seconds:g}",
        f"up to {d.login_backoff_max_seconds / 60:g} minutes",
        f"(`guest_session_days`, {d.guest_session_days})",
        f"{RATE_STRIKES} refusals in a row",
    ]:
        assert phrase in text, phrase


# Over the wire.


async def _wire_login(client: Client, username: str, password: str) -> dict[str, Any]:
    """The error payload of a refused login (a login that succeeds fails the test)."""
    try:
        await client.login(username, password)
    except ServerError:
        pass
    else:
        pytest.fail(f"{username!r} logged in with {password!r}")
    (last,) = [f for f in client.frames[-1:] if f["type"] == "error"]
    payload: dict[str, Any] = last["payload"]
    return payload


@pytest.mark.asyncio
async def test_a_refusal_on_the_wire_carries_retry_after(start_server: Any) -> None:
    app: App = await start_server()
    url = f"ws://127.0.0.1:{app.port}/ws"
    async with await Client.connect(url, record=True, rate=None) as client:
        free = app.config.accounts.login_backoff_after  # fewer than the address's burst
        answers = [await _wire_login(client, "nobody", "wrong horse") for _ in range(free + 1)]
    assert [a["code"] for a in answers[:free]] == ["auth_failed"] * free
    assert all("retry_after" not in a for a in answers[:free])
    limited = answers[free]
    assert limited["code"] == "rate_limited"
    assert limited["retry_after"] == 1  # the first backoff step, 1 s
    assert f"try again in {limited['retry_after']} s" in limited["reason"]


@pytest.mark.asyncio
async def test_a_connection_that_ignores_retry_after_is_closed(
    start_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection_module, "REFUSAL_PAUSE", 0.0)  # not a second per refusal here
    app: App = await start_server()
    url = f"ws://127.0.0.1:{app.port}/ws"
    codes: list[str] = []
    async with await Client.connect(url, rate=None) as client:
        with pytest.raises(ConnectionLost) as lost:
            for _ in range(100):
                try:
                    await client.login("nobody", "wrong horse")
                except ServerError as exc:
                    codes.append(exc.code)
    free = app.config.accounts.login_backoff_after
    assert codes[:free] == ["auth_failed"] * free
    assert set(codes[free:]) == {"rate_limited"}
    # The last refusal closes the connection (its error may or may not arrive first).
    assert RATE_STRIKES - 1 <= len(codes[free:]) <= RATE_STRIKES
    assert lost.value.code == 1008
    # A new connection is welcome, and a success resets the count.
    async with await Client.connect(url, rate=None) as client:
        await client.guest()


async def _flood(url: str, victim: str, stop: asyncio.Event, counts: Counter[str]) -> None:
    """Wrong-password logins for ``victim`` as fast as the server answers, connecting
    again whenever the server closes the connection."""
    while not stop.is_set():
        counts["connections"] += 1
        async with await Client.connect(url, rate=None, timeout=30) as client:
            while not stop.is_set():
                try:
                    await client.login(victim, "wrong horse battery")
                    counts["ok"] += 1
                except ServerError as exc:
                    counts[exc.code] += 1
                except ConnectionLost:
                    counts["closed"] += 1
                    break


def ms(latency: float | None) -> str:
    """A latency of the load tool's report as printed: none when it measured no update (its
    run too short on a machine too loaded: the assertions below say so, not the print)."""
    return "none" if latency is None else f"{latency:.2f} ms"


@pytest.mark.asyncio
async def test_a_login_flood_during_a_live_match_is_refused_and_the_match_plays_on(
    start_server: Any,
) -> None:
    app: App = await start_server()
    url = f"ws://127.0.0.1:{app.port}/ws"
    async with await Client.connect(url, rate=None) as owner:
        await owner.register("victim", PASSWORD)

    quiet = await loadtest(url, tables=1, duration=2.0, rate=None)
    counts: Counter[str] = Counter()
    stop = asyncio.Event()
    started = time.monotonic()
    flooders = [asyncio.create_task(_flood(url, "victim", stop, counts)) for _ in range(32)]
    try:
        flooded = await loadtest(url, tables=1, duration=2.0, rate=None)
    finally:
        stop.set()
        await asyncio.gather(*flooders)
    elapsed = time.monotonic() - started

    q, f = quiet.to_dict()["latency_ms"], flooded.to_dict()["latency_ms"]
    print(
        f"\nlogin flood: {counts['auth_failed'] + counts['rate_limited']} logins in "
        f"{elapsed:.1f} s, {dict(counts)}; "
        f"action-to-update latency p50 {ms(q['p50'])} quiet, {ms(f['p50'])} flooded "
        f"(p95 {ms(q['p95'])} / {ms(f['p95'])}; {q['samples']} / {f['samples']} updates)"
    )
    assert counts["ok"] == 0
    assert counts["rate_limited"] > counts["auth_failed"]  # refused, not hashed
    # No more hashes than the address's bucket holds plus what it refilled meanwhile...
    limits = app.config.accounts
    assert counts["auth_failed"] <= limits.login_burst + limits.login_per_minute / 60 * elapsed
    # ...and each refusal held for REFUSAL_PAUSE, so a connection gets one a second at most.
    assert counts["rate_limited"] <= counts["connections"] * (elapsed / REFUSAL_PAUSE + 1)
    assert not set(counts) - {"auth_failed", "rate_limited", "connections"}
    # The match was served meanwhile, without errors or drops.
    assert flooded.actions_sent > 0 and f["samples"] > 0
    assert not flooded.errors and flooded.dropped == 0


@pytest.mark.asyncio
async def test_a_loadtest_refused_guests_says_which_setting_to_raise(tmp_path: Path) -> None:
    config = Config(
        server=ServerSection(host="127.0.0.1", port=0, data_dir=str(tmp_path)),
        database=DatabaseSection(url=f"sqlite+aiosqlite:///{tmp_path / 'guests.db'}"),
        accounts=settings(guest_burst=2, guest_per_hour=1),
    )
    app = App(config)
    await app.start()
    try:
        report = await loadtest(f"ws://127.0.0.1:{app.port}/ws", tables=1, duration=3.0)
    finally:
        await app.stop()
    # Two guests allowed; the third bot is refused and its table group gives up.
    assert report.errors["guest: rate_limited"] == 1
    assert any("guest_burst" in note for note in report.notes), report.notes

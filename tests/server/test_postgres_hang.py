"""A PostgreSQL that stops answering without closing anything: a network partition, a host
paused, a backend stopped. Every statement on its connections waits, with no error.

The faults are real: the PostgreSQL backends serving a database of the test's own are
stopped (SIGSTOP), and any backend that starts for it meanwhile too (as a partition leaves
a new connection unanswered), then continued (SIGCONT). Only that database's backends: the
postmaster and every other database's are left alone. A probe so (2026-12-07) found a
player's move, ``/healthz``, ``/readyz`` and every login unanswered for as long as the
backends were stopped: a wait with no bound (server/db/engine.py).

- ``Store``, in-process: a statement with no answer fails in time; ``ping`` answers within
  its wait; after an append that got no answer the log says how it ended only once the
  backend that had it has ended (an answer before then could be undone by its late
  commit); after a short write (a table's row, a match) that got no answer, no other goes
  to the database until that backend has ended (a late commit would overwrite a newer row
  with its older one, or make a match twice).
- ``guobiao serve``, with a player over the network mid-match: her move is refused
  (``internal_error``) rather than left unanswered, ``/healthz`` says ``degraded`` in time,
  a login is refused in time, her turn does not run out, and once the backends go on the
  match finishes as the offline one, with no move of hers played by a stand-in.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pgkit
import pytest
from httpkit import http_get
from test_server_recovery import (  # noqa: F401 (serve: its fixture)
    ME,
    TURN_SECONDS,
    check_match_as_offline,
    my_bot,
    serve,
    write_config,
)

from engine.actions import Action
from server.client import Client, Incoming, ServerError, play
from server.db.engine import POSTGRES_ANSWER_WAIT
from server.db.store import PING_WAIT, Store, TableRow, upgrade
from server.db.unsettled import UNSETTLED_WAIT, StillRunning

pytestmark = [pytest.mark.postgres, pytest.mark.asyncio]

T0 = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
SEATS = ("ann", "bot:default", "bot:default", "bot:default")


@contextlib.asynccontextmanager
async def own_database() -> AsyncIterator[str]:
    """A PostgreSQL database of this test's own (its URL); skips when there is no server."""
    try:
        url = await pgkit.create_database("guobiao_hang")
    except pgkit.Unavailable as exc:
        pytest.skip(str(exc))
    try:
        yield url
    finally:
        await pgkit.drop_database(url)


class Freezer:
    """Stops the PostgreSQL backends of one database (``freeze``: those there, and every
    one that starts until ``thaw``), and continues them (``thaw``)."""

    def __init__(self, url: str) -> None:
        self.database = url.rsplit("/", 1)[1]
        self.stopped: set[int] = set()
        self._admin: Any = None
        self._task: asyncio.Task[None] | None = None

    async def backends(self) -> list[int]:
        if self._admin is None:  # (connected to the maintenance database: never stopped)
            self._admin = await pgkit.connect(pgkit.POSTGRES_URL)
        rows = await self._admin.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = $1", self.database
        )
        return [int(row["pid"]) for row in rows]

    def stop(self, pid: int) -> None:
        if pid not in self.stopped:
            os.kill(pid, signal.SIGSTOP)
            self.stopped.add(pid)

    async def freeze(self, *, new_ones: bool = True) -> None:
        """Stop every backend of the database; ``new_ones``: and, until ``thaw``, each one
        that starts (looked for every 10 ms)."""
        for pid in await self.backends():
            self.stop(pid)
        if new_ones:
            self._task = asyncio.create_task(self._keep_frozen())

    async def _keep_frozen(self) -> None:
        while True:
            await asyncio.sleep(0.01)
            for pid in await self.backends():
                self.stop(pid)

    async def thaw(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for pid in self.stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        self.stopped.clear()

    async def close(self) -> None:
        await self.thaw()
        if self._admin is not None:
            await self._admin.close()


@contextlib.asynccontextmanager
async def freezer_of(url: str) -> AsyncIterator[Freezer]:
    freezer = Freezer(url)
    try:
        yield freezer
    finally:
        await freezer.close()  # (never leave a backend stopped)


async def within(seconds: float, awaitable: Any) -> tuple[float, Any]:
    """How long ``awaitable`` took, and its result (an exception raised is the result)."""
    began = time.monotonic()
    try:
        result = await asyncio.wait_for(awaitable, seconds)
    except Exception as exc:
        result = exc
    return time.monotonic() - began, result


# ------------------------------------------------------------- the store ---


QUICK = 1.0  # seconds the store waits for an answer here (the server's: 10)


async def test_an_append_with_no_answer_is_settled_only_once_its_backend_ended() -> None:
    """The backend that holds the action log's connection is stopped, then an action is
    appended: the append fails in time (``TimeoutError``, the table's unsure append), and
    the log does not say how it ended while that backend may still commit it (it says so
    in ``UNSETTLED_WAIT``: ``TimeoutError``). Continued, the backend commits it or ends
    first; what the log then says is what it keeps. Before, ``last_action`` answered at
    once that the action was not stored, and the backend, continued, committed it."""
    async with own_database() as url, freezer_of(url) as freezer:
        await upgrade(url)
        store = await Store.open(url, answer_wait=QUICK)
        try:
            await store.save_table(TableRow("t1", "mcr", 15, False, None, SEATS, T0, "playing"))
            match_id = await store.create_match("t1", "mcr", 7, "00" * 16, SEATS, T0)
            await store.append_action(match_id, 1, 1, 0, {"type": "discard", "tile": "1m"})
            assert store._pg_driver is not None
            freezer.stop(store._pg_driver[1].get_server_pid())  # the log's connection's

            took, failed = await within(
                5, store.append_action(match_id, 2, 1, 1, {"type": "discard", "tile": "2m"})
            )
            assert isinstance(failed, TimeoutError), failed
            assert took < QUICK + 1
            took, unsure = await within(10, store.last_action(match_id))
            assert isinstance(unsure, TimeoutError), f"the log answered {unsure!r}"
            assert UNSETTLED_WAIT <= took < UNSETTLED_WAIT + 1

            await freezer.thaw()
            said = await store.last_action(match_id)
            assert said is not None
            await asyncio.sleep(0.5)  # (a late commit would have come by now)
            stored = await store.match_actions(match_id)
            assert stored[-1] == said, "the log said one thing, and kept another"
            # The table goes on from there: its next action is appended.
            await store.append_action(match_id, said.seq + 1, 1, 2, {"type": "pass"})
        finally:
            await store.close()


def short_writes_backend(store: Store) -> int:
    """The backend of the connection the store's next short write (server/db/postgres_now.py)
    takes: the one the last took (the last used first)."""
    assert store._pg_now is not None
    driver = store._pg_now.held[0].driver
    assert driver is not None, "no short write yet"
    return int(driver.get_server_pid())


async def test_a_table_saved_with_no_answer_does_not_overwrite_its_newer_row() -> None:
    """The backend of the short writes' connection is stopped as a table's row is saved:
    the save fails (no answer, and its retry does not go while that backend may still
    commit it). The table's next save, a newer row, is refused in time while that backend
    is stopped (``StillRunning``), and stored once it has been continued: the stored row is
    the newer. Before, the retry and the newer save went on other connections, and the
    stopped backend, continued, committed the older row over the newer."""
    async with own_database() as url, freezer_of(url) as freezer:
        await upgrade(url)
        store = await Store.open(url, answer_wait=QUICK)
        try:
            waiting = TableRow("t1", "mcr", 15, False, None, (None,) * 4, T0)
            await store.save_table(waiting)
            older = replace(waiting, seats=("ann", None, None, None))
            newer = replace(waiting, seats=SEATS, state="playing")
            freezer.stop(short_writes_backend(store))

            took, failed = await within(10, store.save_table(older))
            took_newer, saved = await within(10, store.save_table(newer))
            await freezer.thaw()
            if saved is not None:  # refused: the table saves again later, as for any failure
                await store.save_table(newer)
            await asyncio.sleep(0.5)  # (a late commit would have come by now)
            assert await store.get_table("t1") == newer, "an older save committed over it"
            assert isinstance(failed, TimeoutError), failed
            assert took < QUICK + UNSETTLED_WAIT + 1
            assert isinstance(saved, StillRunning), saved
            assert UNSETTLED_WAIT <= took_newer < UNSETTLED_WAIT + 1
        finally:
            await store.close()


async def test_a_match_made_with_no_answer_is_not_made_twice() -> None:
    """The backend of the short writes' connection is stopped as a table's match is made:
    the write fails (no answer), and the table's next try is refused in time while that
    backend may still commit the first (``StillRunning``). Continued, the table tries
    again and the match is made: one match, not two. Before, the next try made the match
    on another connection, and the stopped backend, continued, made it again."""
    async with own_database() as url, freezer_of(url) as freezer:
        await upgrade(url)
        store = await Store.open(url, answer_wait=QUICK)
        try:
            await store.save_table(TableRow("t1", "mcr", 15, False, None, SEATS, T0, "playing"))

            def create(salt: str = "11" * 16) -> Any:  # (the table's second match's salt)
                return store.create_match("t1", "mcr", 7, salt, SEATS, T0)

            # Its first match, on the connection (asyncpg then has the statement prepared:
            # the next is sent whole, as a server's are, not parsed first and waited for).
            first = await create("00" * 16)
            freezer.stop(short_writes_backend(store))

            took, failed = await within(10, create())
            assert isinstance(failed, TimeoutError), failed  # (not tried twice: not known)
            assert took < QUICK + 1
            took, refused = await within(10, create())
            await freezer.thaw()
            made = refused
            if not isinstance(made, int):  # refused: the table tries again later
                made = await create()
            await asyncio.sleep(0.5)  # (a late commit would have come by now)
            connection = await pgkit.connect(url)
            try:
                matches = await connection.fetch("SELECT id FROM matches WHERE table_id = 't1'")
            finally:
                await connection.close()
            assert sorted(row["id"] for row in matches) == [first, made], "made twice"
            assert isinstance(refused, StillRunning), refused
            assert UNSETTLED_WAIT <= took < UNSETTLED_WAIT + 1
        finally:
            await store.close()


async def test_ping_answers_in_time_while_the_database_does_not() -> None:
    """The backend of the store's pooled connection stopped: ``ping`` says no within
    ``PING_WAIT``, and again when asked again while that ping still waits (one ping at a
    time: not a connection more for each probe), and yes once the backend goes on. Before,
    it waited as long as the backend was stopped, and /healthz with it."""
    async with own_database() as url, freezer_of(url) as freezer:
        await upgrade(url)
        store = await Store.open(url, answer_wait=POSTGRES_ANSWER_WAIT)
        try:
            assert await store.ping()  # (a connection in the pool, as a server has)
            await freezer.freeze(new_ones=False)
            for _ in range(2):
                took, answer = await within(PING_WAIT + 3, store.ping())
                assert answer is False
                assert took < PING_WAIT + 0.5
            assert len(await freezer.backends()) == 1, "a ping opened another connection"
            await freezer.thaw()
            took, answer = await within(PING_WAIT + 3, store.ping())
            assert answer is True, "no answer once the database went on"
        finally:
            await store.close()


# --------------------------------------------------------------- a server ---

TURN = 3  # seconds: shorter than the stop, so a turn run out during it would show
HOLD = POSTGRES_ANSWER_WAIT + 3  # seconds the backends are stopped: past the server's wait


async def health(port: int, limit: float) -> tuple[float, Any]:
    """``GET /healthz`` as a probe with ``limit`` seconds does it: how long, and the answer
    (status, body), or the exception."""
    took, answer = await within(limit, http_get(port, "/healthz"))
    if isinstance(answer, tuple):
        answer = (answer[0], json.loads(answer[1]))
    return took, answer


async def test_a_database_that_stops_answering_mid_match_costs_a_pause(
    serve: Callable[..., Any],  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    """The backends serving ``guobiao serve``'s database are stopped as a player's move
    is on its way, and every one that starts meanwhile, for longer than the server waits
    for an answer and than her turn. Meanwhile her move is refused (``internal_error``),
    ``/healthz`` answers within its wait and says ``degraded``, and a new login is
    refused, each within seconds. Continued, the server goes on without a restart: she is
    asked again, the match finishes as the offline one (nothing lost, nothing doubled),
    none of her moves a stand-in's, and ``/healthz`` says ``ok``. Before, each of them
    waited, unanswered, until the backends went on."""
    async with own_database() as url, freezer_of(url) as freezer:
        config = write_config(tmp_path, url)
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace(f"turn_seconds = {TURN_SECONDS}", f"turn_seconds = {TURN}"))
        server = await serve(config)
        alice = await Client.connect(server.url, record=True, rate=None)
        armed = asyncio.Event()  # she is asked to discard: freeze while she thinks
        sent_frozen: list[float] = []  # when her move went, on stopped backends
        refused: list[float] = []  # when a move of hers was refused

        def seen(message: Incoming) -> None:
            if message.type == "error" and message.code == "internal_error":
                refused.append(time.monotonic())
            asked(message)

        def asked(message: Incoming) -> None:
            state = alice.tables.get(message.table or "")
            hand = state.hand_no if state is not None else 0
            legal = (
                message.payload.get("view", {}).get("legal") if message.type == "update" else None
            )
            if hand >= 2 and legal and any(a["type"] == "discard" for a in legal):
                armed.set()

        def think(_action: Action) -> float:
            if armed.is_set() and not sent_frozen:
                sent_frozen.append(time.monotonic() + 1.0)
                return 1.0  # the freeze comes meanwhile
            return 0.0

        try:
            await alice.register("alice_hang", "correct horse battery")
            table = (await alice.create_table(turn_seconds=TURN)).table
            assert await alice.join_table(table, seat=ME) == ME
            await alice.add_bots(table, "default")
            playing = asyncio.create_task(
                play(alice, table, my_bot(), think=think, on_message=seen)
            )
            await asyncio.wait_for(armed.wait(), 60)
            await freezer.freeze()
            began = time.monotonic()

            # Meanwhile: /healthz as a probe with a 5 s limit, every second; a new login.
            async def login() -> Any:
                bob = await Client.connect(server.url, rate=None)
                try:
                    return await bob.request("guest", timeout=HOLD)
                finally:
                    await bob.close()

            logging_in = asyncio.create_task(within(HOLD, login()))
            probes = []
            while time.monotonic() - began < HOLD:
                probes.append(await health(server.port, 5))
                await asyncio.sleep(1)
            login_took, login_answer = await logging_in
            await freezer.thaw()
            thawed = time.monotonic() - began

            print(
                f"\n[hang] backends stopped {thawed:.1f} s; her move refused after "
                f"{[round(at - sent_frozen[0], 1) for at in refused]} s; /healthz answered in "
                f"{max(took for took, _ in probes):.1f} s at most ({len(probes)} probes); "
                f"a login refused after {login_took:.1f} s"
            )
            assert refused and refused[0] < began + thawed, (
                f"her move got no answer in {thawed:.1f} s of stopped backends; "
                f"log:\n{server.log()}"
            )
            slow = [took for took, _ in probes if took > PING_WAIT + 1]
            assert not slow, f"/healthz took {slow} s to answer ({len(probes)} probes)"
            said = [answer for _, answer in probes]
            assert all(isinstance(a, tuple) for a in said), said
            assert any(status == 503 and body["status"] == "degraded" for status, body in said), (
                said
            )
            assert isinstance(login_answer, ServerError), (login_took, login_answer)
            assert login_answer.code == "internal_error"

            end = await asyncio.wait_for(playing, 90)
            assert end is not None, f"no match_end; log:\n{server.log()}"
            _, (status, body) = await health(server.port, 5)
            assert status == 200 and body["database"] == "ok", body
            await check_match_as_offline(server.port, end["match"], end["scores"])
            connection = await pgkit.connect(url)
            try:
                stand_ins = await connection.fetchval(
                    "SELECT count(*) FROM actions WHERE player = $1 AND stand_in", ME
                )
            finally:
                await connection.close()
            assert stand_ins == 0, "her turn ran out while her move could not be stored"
            assert "the database failed storing action" in server.log()
        finally:
            await alice.close()
            server.process.kill()

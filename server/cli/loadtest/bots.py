"""The load of ``guobiao loadtest``: ``--tables`` tables of four network bots, each on its
own connection and guest account (``Run``), playing until ``--duration`` is over, measured
into a ``Report``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from typing import Any

from engine.bots import SEATLESS, make_bot
from server.cli.loadtest.pacing import Pacer, Think
from server.cli.loadtest.report import Report
from server.client import (
    DEFAULT_BURST,
    DEFAULT_RATE,
    Client,
    ClientError,
    Incoming,
    ServerError,
    play,
)
from server.connection import TOO_MANY_FROM_ADDRESS

CLOSE_SECONDS = 5.0  # the most the closing of all connections may take
LAG_EVERY = 0.05  # seconds between two samples of this process's own event loop lag
# Seconds after start-up before the served time counts as the steady state's too: the
# tables all start their matches about when the last bots are seated.
SETTLE_SECONDS = 20.0


class Run:
    """One client process's load: its bots' connections, tables and the report they fill."""

    def __init__(self, report: Report, url: str, options: dict[str, Any]) -> None:
        self.report = report
        self.url = url
        self.options = options
        self.stop = asyncio.Event()
        self.clients: list[Client] = []
        self.first_action: float | None = None  # when the first match started
        self.seated = 0
        self.unseated = 0  # bots of groups that gave up (a connection or a login failed)
        self.steady = False  # every connection is seated: start-up is over
        self.settled_at: float | None = None  # SETTLE_SECONDS after that (perf_counter)
        self.groups: dict[str, list[Client]] = {}  # table -> its four bots' connections
        self.served: dict[int, float] = {}  # connection -> its action the server answered

    def on_message(self, message: Incoming, receiver: Client | None = None) -> None:
        report = self.report
        if message.type == "update":
            report.updates += 1
            if message.latency is not None:
                report.latencies.append(message.latency)
            stamp = message.payload.get("input_at")
            if isinstance(stamp, float):
                # The server read the action that caused it at ``stamp`` (the machine's
                # monotonic clock, as ``received_at``): its service, to this receipt.
                served = message.received_at - stamp
                if not self.steady:  # the tables that play while others are seated
                    report.startup_latencies.append(served)
                else:
                    report.served_latencies.append(served)
                    if self.settled_at is not None and message.received_at >= self.settled_at:
                        report.settled_latencies.append(served)
            if message.table is not None:
                self._server_latency(message, receiver)
        elif message.type == "error":
            report.errors[message.code or "?"] += 1
            if message.reply_to is not None and message.table is not None:
                report.actions_refused += 1

    def _server_latency(self, message: Incoming, receiver: Client | None) -> None:
        """An update of a table reached ``receiver``, one of its connections: the actions of
        the table's bots it answers are those sent and not answered yet; the server waited
        for the last of them (a pass is answered only once every player asked has
        answered), so the server's latency is from that one to now. Each action is counted
        once. The receiver's own action, if this answers it, is in ``message.latency`` (its
        client forgot when it was sent)."""
        table, now = message.table, message.received_at
        assert table is not None
        pending: list[float] = []
        for client in self.groups.get(table, ()):
            if client is receiver:
                sent = now - message.latency if message.latency is not None else None
                served = self.served.pop(id(client), None)
                if sent is not None and (served is None or abs(served - sent) > 1e-6):
                    pending.append(sent)
                continue
            state = client.tables.get(table)
            sent = state.action_sent_at if state is not None else None
            if sent is not None and self.served.get(id(client)) != sent:
                self.served[id(client)] = sent
                pending.append(sent)
        if pending and self.steady:
            self.report.server_latencies.append(now - max(pending))

    async def open(self) -> Client | None:
        if self.stop.is_set():
            return None
        opened: list[Client] = []  # the connection, once open: whose message it is
        try:
            client = await Client.connect(
                self.url,
                # No pings of its own, as a browser sends none: the server pings each
                # connection already, and at 8,000 connections the tool's pings and their
                # pongs were 400 more messages a second on the cores both share.
                ping_interval=None,
                # A bot that reads no seats (the fast bot) has none followed: following
                # them was a tenth of the tool's CPU an update.
                follow_seats=self.options["bot"] not in SEATLESS,
                on_message=lambda m: self.on_message(m, opened[0] if opened else None),
                rate=self.options["rate"],
                burst=self.options["burst"],
                timeout=self.options["timeout"],
            )
        except (ClientError, OSError) as exc:
            self.report.connect_failures += 1
            self.report.errors[f"connect: {type(exc).__name__}"] += 1
            if getattr(exc, "reason", "") == TOO_MANY_FROM_ADDRESS:
                self._hint(
                    "the server limits the connections per address: raise its [limits] "
                    "connections_per_address (or 0) for a load test of this size"
                )
            return None
        opened.append(client)
        self.clients.append(client)
        self.report.connected += 1
        try:
            await client.guest()
        except ClientError as exc:
            code = getattr(exc, "code", type(exc).__name__)
            self.report.errors[f"guest: {code}"] += 1
            if code == "rate_limited":
                self._hint(
                    "the server limits guest accounts per address: raise its [accounts] "
                    "guest_burst and guest_per_hour for a load test of this size"
                )
            await client.close()
            return None
        return client

    def _hint(self, text: str) -> None:
        """Say in the report, once, which of the server's limits refused the load."""
        if text not in self.report.notes:
            self.report.notes.append(text)

    async def table_group(self, index: int, gate: asyncio.Semaphore) -> None:
        """Four bots: connect, then play matches at fresh tables until the stop."""
        clients: list[Client] = []
        try:
            # The group holds a place at the gate while it opens its four, one after the
            # other: the gate serves first come, first served, so the groups are opened in
            # turn and each table starts as soon as its players are in, as people arriving
            # do. (A place per connection had every group wait behind every other group's
            # connection of the same rank: no table started before three quarters of all
            # the connections were open, the first seconds of a large run logins alone.)
            async with gate:
                for _ in range(4):
                    client = await self.open()
                    if client is None:
                        self.unseated += 4  # the group will not play: start-up is over
                        return
                    clients.append(client)
            self.seated += 4
            bot, think, seed = self.options["bot"], self.options["think"], self.options["seed"]
            pacers = [Pacer(think, seed, 4 * index + p) for p in range(4)]
            while not self.stop.is_set() and all(c.is_open for c in clients):
                try:
                    # No claim window: its pause would only slow the measure down (the
                    # bots learn nothing from it).
                    created = await clients[0].create_table(
                        turn_seconds=self.options["turn_seconds"], claim_window_ms=0
                    )
                    for client in clients:
                        await client.join_table(created.table)
                    self.groups[created.table] = clients
                except ServerError as exc:
                    self.report.errors[f"{exc.code} (lobby)"] += 1
                    if exc.code == "too_many_tables":
                        self._hint(
                            "the server limits the tables waiting for players per address: "
                            "raise its [limits] waiting_tables_per_address (or 0) for a load test"
                        )
                    return
                self.report.matches_started += 1
                if self.first_action is None:
                    self.first_action = time.perf_counter()
                results = await asyncio.gather(
                    *(
                        play(
                            client,
                            created.table,
                            make_bot(bot, seed=pacer.bot_seed),
                            stopping=self.stop.is_set,
                            think=pacer if think.high else 0.0,
                        )
                        for client, pacer in zip(clients, pacers, strict=True)
                    ),
                    return_exceptions=True,
                )
                if any(isinstance(r, dict) for r in results):
                    self.report.matches_completed += 1
        except ClientError:
            return  # the connection went away: counted as dropped at the end


async def loadtest(
    url: str,
    *,
    tables: int,
    duration: float,
    bot: str = "fast",
    turn_seconds: int | None = None,
    rate: float | None = DEFAULT_RATE,
    burst: int = DEFAULT_BURST,
    think: float | Think = 0.0,
    seed: int = 0,
    connect_concurrency: int = 16,
    timeout: float = 10.0,
    progress: bool = False,
    first_table: int = 0,
    part: str | None = None,
) -> Report:
    """Run the load test; raise ``ConnectFailed`` when the server cannot be reached at all.

    ``think``: the bots' think times (a ``Think`` range, drawn per decision by each
    connection's ``Pacer`` from ``seed``), or one fixed pause in seconds. ``first_table``:
    the index of this run's first table among those of a run spread over processes (its
    connections' random streams are those they would have in one process); ``part``
    (``K/N``) names this process in the progress lines."""
    if not isinstance(think, Think):
        think = Think(think, think)
    report = Report(url, tables, bot, duration, think, seed, connections=4 * tables)
    await probe(url, timeout)  # fail early and clearly
    run = Run(
        report,
        url,
        {
            "rate": rate,
            "burst": burst,
            "timeout": timeout,
            "bot": bot,
            "think": think,
            "seed": seed,
            "turn_seconds": turn_seconds,
        },
    )
    started, cpu_started = time.perf_counter(), time.process_time()
    sampler = asyncio.create_task(_sample_lag(run))
    gate = asyncio.Semaphore(connect_concurrency)
    groups = [asyncio.create_task(run.table_group(first_table + i, gate)) for i in range(tables)]
    name = f"loadtest [{part}]" if part else "loadtest"
    deadline = started + duration
    next_line = started + 5.0
    while (now := time.perf_counter()) < deadline:
        if not report.startup_seconds and (
            run.seated + run.unseated >= 4 * tables or all(g.done() for g in groups)
        ):
            report.startup_seconds = now - started
            run.steady = True
            run.settled_at = now + SETTLE_SECONDS
        if progress and now >= next_line:
            next_line += 5.0
            print(
                f"{name}: {now - started:.0f} s, {run.seated}/{4 * tables} bots seated, "
                f"{sum(c.actions_sent for c in run.clients)} actions, "
                f"{report.matches_completed} matches completed",
                file=sys.stderr,
                flush=True,
            )
        if all(g.done() for g in groups):
            report.notes.append("every table group stopped before the end")
            break
        await asyncio.sleep(min(0.1, max(0.0, deadline - now)))
    stopped = time.perf_counter()
    report.cpu_seconds = time.process_time() - cpu_started
    run.stop.set()  # no more actions
    sampler.cancel()
    if not report.startup_seconds:
        report.startup_seconds = stopped - started
        if run.seated < 4 * tables:
            report.notes.append(f"only {run.seated} of {4 * tables} bots were seated in time")
    report.dropped = sum(1 for c in run.clients if not c.is_open and not c.closing)
    report.actions_sent = sum(c.actions_sent for c in run.clients)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(
            asyncio.gather(*(c.close() for c in run.clients), return_exceptions=True),
            CLOSE_SECONDS,
        )
    done, pending = await asyncio.wait(groups, timeout=CLOSE_SECONDS)
    for task in pending:
        task.cancel()
    for task in done:
        if not task.cancelled() and task.exception() is not None:
            report.notes.append(f"a table group failed: {task.exception()!r}")
    report.elapsed = stopped - started
    if run.first_action is not None:
        report.active_seconds = stopped - run.first_action
    return report


async def _sample_lag(run: Run) -> None:
    """How late this process's own event loop runs (``Report.loop_lags``, once start-up is
    over): a sleep of ``LAG_EVERY`` seconds that wakes later was held up by the load tool
    itself, and every update it read meanwhile was read that much late."""
    while True:
        before = time.perf_counter()
        await asyncio.sleep(LAG_EVERY)
        if run.steady:
            run.report.loop_lags.append(max(0.0, time.perf_counter() - before - LAG_EVERY))


async def probe(url: str, timeout: float = 10.0) -> None:
    """Connect to ``url`` and leave: ``ConnectFailed`` if the server cannot be reached."""
    probe = await Client.connect(url, timeout=timeout)
    await probe.close()

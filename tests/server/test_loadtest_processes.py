"""``guobiao loadtest --processes N``: the tables spread over N client processes, whose
reports merge into one (counts added, samples pooled, the percentiles of them all); a real
run against a server; an unreachable server said once; a table whose bots could not all
log in does not keep the others' start-up from ending."""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from serverkit import decoy_checkout, group_opens
from sqlalchemy import func, select

from server.cli import main
from server.cli.loadtest import Report, Think, loadtest
from server.cli.loadtest.bots import Run
from server.client import Client
from server.db.models import GameTable, Match


def part(latencies: list[float], **counts: Any) -> Report:
    report = Report("ws://h/ws", 0, "fast", 10.0, Think(0.8, 3.0), 1)
    report.latencies = latencies
    report.server_latencies = [x / 2 for x in latencies]
    for name, value in counts.items():
        setattr(report, name, value)
    return report


def test_a_report_survives_its_raw_form() -> None:
    report = part([0.001, 0.002], tables=3, connected=12, errors=Counter({"stale": 2}), notes=["n"])
    again = Report.from_raw(json.loads(json.dumps(report.raw())))
    assert again == report


def test_parts_merge_into_one_report_of_every_sample() -> None:
    # One part's samples are all fast, the other's all slow: the merged p50 lies between
    # (neither part's own), the p99 is the slow part's.
    fast = part(
        [0.001] * 60,
        tables=2,
        connections=8,
        connected=8,
        actions_sent=60,
        actions_refused=1,
        updates=300,
        cpu_seconds=0.25,
        startup_seconds=1.5,
        elapsed=10.0,
        active_seconds=9.0,
        errors=Counter({"stale": 1}),
        matches_started=2,
        notes=["only 7 of 8 bots were seated in time"],
    )
    slow = part(
        [0.2] * 40,
        tables=1,
        connections=4,
        connected=3,
        connect_failures=1,
        actions_sent=40,
        updates=200,
        cpu_seconds=0.5,
        startup_seconds=2.5,
        elapsed=10.5,
        active_seconds=8.0,
        errors=Counter({"stale": 2, "hand_over": 1}),
        dropped=1,
        matches_started=1,
        matches_completed=1,
        notes=["only 7 of 8 bots were seated in time", "every table group stopped"],
    )
    merged = Report.merge([fast, slow])
    figures = merged.to_dict()
    assert figures["processes"] == 2 and figures["tables"] == 3
    assert figures["connections"] == {"wanted": 12, "connected": 11, "failed": 1, "dropped": 1}
    assert figures["actions"]["sent"] == 100 and figures["actions"]["refused"] == 1
    assert figures["actions"]["per_second"] == round(99 / 9.0, 1)  # over the longest window
    assert (figures["startup_s"], figures["elapsed_s"]) == (2.5, 10.5)
    # Both processes' CPU, over both processes' updates.
    assert figures["tool_cpu"] == {"seconds": 0.75, "us_per_update": 1500.0}
    assert figures["latency_ms"]["samples"] == 100
    assert figures["latency_ms"]["p50"] == 1.0 and figures["latency_ms"]["p99"] == 200.0
    assert figures["server_latency_ms"]["p99"] == 100.0
    assert figures["errors"] == {"stale": 3, "hand_over": 1}
    assert figures["matches"] == {"started": 3, "completed": 1}
    assert merged.notes == ["only 7 of 8 bots were seated in time", "every table group stopped"]
    assert "2 client processes" in merged.text()


@pytest.mark.asyncio
async def test_a_run_over_two_processes_plays_every_table_and_reports_once(
    start_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    app = await start_server()
    url = f"ws://127.0.0.1:{app.port}/ws"
    args = ["loadtest", "--url", url, "--tables", "3", "--duration", "3", "--processes", "2"]
    # The command waits for its processes: in a thread, so this loop goes on serving.
    status = await asyncio.to_thread(main, [*args, "--think", "0.001-0.004", "--json"])
    assert status == 0
    report = json.loads(capsys.readouterr().out)
    assert report["processes"] == 2 and report["tables"] == 3
    assert report["connections"] == {"wanted": 12, "connected": 12, "failed": 0, "dropped": 0}
    assert report["think_s"] == [0.001, 0.004]
    assert report["actions"]["accepted"] > 0 and report["errors"] == {}
    assert report["latency_ms"]["samples"] > 0 and report["matches"]["started"] >= 3
    cpu = report["tool_cpu"]  # the two processes' own, not this one's (a thread's waiting)
    assert 0 < cpu["seconds"] < 2 * 3 and cpu["us_per_update"] > 0
    # The three groups of four each made a table here (and one more for each match after):
    # counted in the database, since a table whose match ended as the run did is forgotten
    # by the lobby once its players have gone (its summary is no count of what was made).
    async with app.store.engine.connect() as connection:
        made = await connection.scalar(select(func.count()).select_from(GameTable))
        started = await connection.scalar(select(func.count()).select_from(Match))
    assert made is not None and made >= 3 and started is not None and started >= 3


@pytest.mark.asyncio
async def test_an_unreachable_server_is_said_once(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--url", "ws://127.0.0.1:1/ws", "--tables", "4", "--processes", "3"]
    status = await asyncio.to_thread(main, ["loadtest", *args])
    assert status == 1
    err = capsys.readouterr().err
    assert err.count("cannot connect to ws://127.0.0.1:1/ws") == 1


@pytest.mark.asyncio
async def test_a_group_that_cannot_log_in_does_not_hold_the_start_up_open(
    start_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The second table's bots are refused as a login refused would refuse them (a limit on
    # guest accounts cannot pick which group it stops: they connect in turns).
    app = await start_server()

    async def refused(run: Run) -> Client | None:
        run.report.errors["guest: rate_limited"] += 1
        return None

    group_opens(monkeypatch, 1, refused)
    report = await loadtest(f"ws://127.0.0.1:{app.port}/ws", tables=2, duration=3.0, rate=None)
    assert report.errors["guest: rate_limited"] == 1
    assert report.matches_started >= 1 and report.connected == 4
    # Start-up ended when the second group gave up: the first table's latencies count.
    assert report.startup_seconds < 3.0
    assert report.server_latencies


@pytest.mark.asyncio
async def test_groups_are_opened_in_turn_so_each_table_starts_as_its_players_are_in(
    start_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One connection opened at a time: the first group's four, then the second's, and the
    # first table plays before the last group has connected (not each group's first, then
    # each group's second...: no table could start until the last round of connections).
    app = await start_server()
    group: contextvars.ContextVar[int] = contextvars.ContextVar("group")
    real_group, real_open = Run.table_group, Run.open
    events: list[tuple[str, int]] = []

    async def table_group(run: Run, index: int, gate: asyncio.Semaphore) -> None:
        group.set(index)
        await real_group(run, index, gate)

    async def open_(run: Run) -> Client | None:
        client = await real_open(run)
        events.append(("opened", group.get()))
        return client

    def on_message(run: Run, message: Any, client: Client | None) -> None:
        if message.type == "update" and ("update", 0) not in events:
            events.append(("update", 0))
        real_on_message(run, message, client)

    real_on_message = Run.on_message
    monkeypatch.setattr(Run, "table_group", table_group)
    monkeypatch.setattr(Run, "open", open_)
    monkeypatch.setattr(Run, "on_message", on_message)
    report = await loadtest(
        f"ws://127.0.0.1:{app.port}/ws", tables=5, duration=2.0, rate=None, connect_concurrency=1
    )
    assert report.connected == 20
    opened = [index for what, index in events if what == "opened"]
    assert opened == [i for i in range(5) for _ in range(4)]
    last_group = events.index(("opened", 4))
    assert events.index(("update", 0)) < last_group  # the first table plays meanwhile


@pytest.mark.asyncio
async def test_the_parts_run_this_loadtest_whatever_the_working_directory_holds(
    start_server: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(decoy_checkout(tmp_path))
    app = await start_server()
    args = ["--url", f"ws://127.0.0.1:{app.port}/ws", "--tables", "2", "--duration", "2"]
    status = await asyncio.to_thread(main, ["loadtest", *args, "--processes", "2", "--json"])
    assert status == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["connections"]["connected"] == 8

"""``guobiao loadtest``'s human-like pacing: think times drawn per decision from a range,
one seeded stream per connection (``Pacer``), the ``--think`` / ``--think-ms`` / ``--seed``
arguments and their errors, and a short real run with a tiny range."""

from __future__ import annotations

import argparse
from typing import Any

import pytest
from serverkit import group_opens

from engine.actions import Action, ActionKind
from engine.bots import SEATLESS
from engine.notation import parse_tiles
from server.cli import build_parser, main
from server.cli.loadtest import Pacer, Report, Think, loadtest, think_ms, think_range
from server.cli.loadtest.bots import Run
from server.client import Client

DISCARD = Action(ActionKind.DISCARD, tile=parse_tiles("5m")[0])
PASS = Action(ActionKind.PASS)


def draws(pacer: Pacer, action: Action = DISCARD, n: int = 500) -> list[float]:
    return [pacer(action) for _ in range(n)]


def test_think_times_fall_within_the_range_and_spread_over_it() -> None:
    times = draws(Pacer(Think(0.8, 3.0), seed=1, index=0))
    assert all(0.8 <= t <= 3.0 for t in times)
    # Drawn, not fixed: they cover most of the range.
    assert min(times) < 1.0 and max(times) > 2.8
    assert len(set(times)) == len(times)


def test_a_pass_is_drawn_from_the_quickest_quarter_of_the_range() -> None:
    times = draws(Pacer(Think(1.0, 3.0), seed=1, index=0), PASS)
    assert all(1.0 <= t <= 1.5 for t in times)
    assert max(times) > 1.4


def test_the_same_seed_and_index_draw_the_same_times() -> None:
    first = Pacer(Think(0.8, 3.0), seed=7, index=3)
    again = Pacer(Think(0.8, 3.0), seed=7, index=3)
    assert first.bot_seed == again.bot_seed
    assert draws(first) == draws(again)


def test_each_connection_and_each_seed_has_its_own_stream() -> None:
    think = Think(0.8, 3.0)
    streams = [draws(Pacer(think, seed, index), n=5) for seed in (0, 1) for index in range(8)]
    assert len({tuple(s) for s in streams}) == len(streams)
    assert len({Pacer(think, 0, index).bot_seed for index in range(8)}) == 8


def test_a_fixed_pause_is_always_the_same() -> None:
    assert set(draws(Pacer(Think(0.25, 0.25), seed=1, index=0))) == {0.25}
    assert set(draws(Pacer(Think(0.25, 0.25), seed=1, index=0), PASS)) == {0.25}


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0.8-3", Think(0.8, 3.0)), ("1.5", Think(1.5, 1.5)), ("0-0", Think(0.0, 0.0))],
)
def test_think_ranges_parse(text: str, expected: Think) -> None:
    assert think_range(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("3-1", "0 <= LOW <= HIGH, got 3-1 s"),
        ("-1-2", "not a number"),
        ("fast", "not a number"),
        ("1-", "not a number"),
        ("nan", "finite"),
        ("0.5-inf", "finite"),
    ],
)
def test_bad_think_ranges_are_refused_saying_what_was_expected(text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="expected seconds LOW-HIGH") as err:
        think_range(text)
    assert message in str(err.value)
    assert repr(text) in str(err.value)


def test_think_ms_is_a_fixed_pause_in_seconds() -> None:
    assert think_ms("250") == Think(0.25, 0.25)
    for text in ("-5", "soon"):
        with pytest.raises(argparse.ArgumentTypeError, match="milliseconds"):
            think_ms(text)


def loadtest_args(*extra: str) -> argparse.Namespace:
    return build_parser().parse_args(["loadtest", "--url", "ws://127.0.0.1:1/ws", *extra])


def test_the_arguments_reach_the_run() -> None:
    args = loadtest_args("--think", "0.8-3", "--seed", "5")
    assert (args.think, args.think_ms, args.seed) == (Think(0.8, 3.0), None, 5)
    assert loadtest_args("--think-ms", "200").think_ms == Think(0.2, 0.2)
    assert loadtest_args().seed == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--think", "3-0.8"], "argument --think: expected seconds LOW-HIGH"),
        (["--think-ms", "-1"], "argument --think-ms: expected milliseconds"),
        (["--think", "1-2", "--think-ms", "5"], "not allowed with argument"),
        (["--seed", "one"], "argument --seed: invalid int value"),
    ],
)
def test_bad_pacing_arguments_stop_the_command_with_a_clear_message(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["loadtest", "--url", "ws://127.0.0.1:1/ws", *extra])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


async def short_run(app: Any) -> Report:
    """Two seconds of one table's four bots, a few ms of think each, against ``app``."""
    return await loadtest(
        f"ws://127.0.0.1:{app.port}/ws",
        tables=1,
        duration=2.0,
        rate=None,
        think=Think(0.001, 0.004),
        seed=3,
    )


@pytest.mark.asyncio
async def test_a_short_run_with_a_tiny_think_range_plays_and_reports(start_server: Any) -> None:
    app = await start_server()
    report = await short_run(app)
    assert report.connected == 4 and report.dropped == 0 and not report.errors
    assert report.actions_sent > 0 and report.latencies
    assert report.matches_started >= 1
    figures = report.to_dict()
    assert figures["think_s"] == [0.001, 0.004] and figures["seed"] == 3
    assert "think 0.001-0.004 s (seed 3)" in report.text()
    # The server's latency: one sample per update that answered actions, never more than
    # the actions, each from the last action the table waited for.
    first = report.server_latencies
    assert 0 < len(first) <= report.actions_sent and min(first) >= 0
    assert figures["server_latency_ms"]["samples"] == len(first)
    assert "the table's last awaited action -> its first update" in report.text()
    # A server that does not stamp its updates: no service time, but the tool's own lag.
    assert report.served_latencies == [] and "served " not in report.text()
    assert report.loop_lags and min(report.loop_lags) >= 0 and "tool lag" in report.text()


@pytest.mark.asyncio
@pytest.mark.parametrize("bot", ["fast", "normal"])
async def test_the_bots_connections_follow_the_seats_only_for_a_bot_that_reads_them(
    start_server: Any, monkeypatch: pytest.MonkeyPatch, bot: str
) -> None:
    """The fast bot reads no seats (``SEATLESS``): its connections leave them unfollowed,
    and it plays all the same; another bot's connections follow them."""
    app = await start_server()
    asked: list[bool] = []
    connect = Client.connect.__func__  # type: ignore[attr-defined]

    async def recording(cls: type[Client], url: str, **options: Any) -> Client:
        if "on_message" in options:  # a bot's connection (not the tool's first probe)
            asked.append(options.get("follow_seats", True))
        client: Client = await connect(cls, url, **options)
        return client

    monkeypatch.setattr(Client, "connect", classmethod(recording))
    report = await loadtest(
        f"ws://127.0.0.1:{app.port}/ws", tables=1, duration=2.0, rate=None, bot=bot, seed=3
    )
    assert asked == [bot not in SEATLESS] * 4
    assert report.connected == 4 and not report.errors and report.actions_sent > 0
    assert report.actions_refused == 0


@pytest.mark.asyncio
async def test_against_a_server_that_stamps_updates_the_service_time_is_measured(
    start_server: Any,
) -> None:
    """``[server] stamp_updates``: each update an action caused says when the server read
    that action, and the tool measures from then to each connection's receipt: never
    negative (one clock, one machine), and never more than the whole round trip it is part
    of, the tool's own latency (action sent -> next update)."""
    report = await short_run(await start_server(server={"stamp_updates": True}))
    served = report.served_latencies
    assert len(served) > report.actions_sent  # each action's update reaches four connections
    assert min(served) >= 0 and max(served) < 5.0
    assert sorted(served)[len(served) // 2] <= sorted(report.latencies)[len(report.latencies) // 2]
    assert "the server reading an action -> each connection's receipt" in report.text()
    assert report.to_dict()["served_latency_ms"]["samples"] == len(served)


@pytest.mark.asyncio
async def test_the_tables_that_play_while_others_are_seated_are_measured_apart(
    start_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run whose start-up never ends (a group's logins still pending at the stop: a load
    the server cannot seat in time) still says how the tables that did play were served:
    as ``start-up``, apart from the steady figure, which has no sample."""
    app = await start_server(server={"stamp_updates": True})

    async def stalled(run: Run) -> Client | None:
        await run.stop.wait()  # a login that does not finish before the stop
        return None

    group_opens(monkeypatch, 1, stalled)
    report = await loadtest(
        f"ws://127.0.0.1:{app.port}/ws", tables=2, duration=2.0, rate=None, think=0.002
    )
    assert "only 4 of 8 bots were seated in time" in report.notes
    assert report.served_latencies == [] and report.settled_latencies == []
    startup = report.startup_latencies
    assert len(startup) > report.actions_sent and min(startup) >= 0
    assert report.to_dict()["startup_latency_ms"]["samples"] == len(startup)
    assert "before every player was seated" in report.text() and "served " not in report.text()

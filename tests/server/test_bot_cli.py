"""``guobiao bot``: a network bot against the real server (the ``app`` fixture), here at a
table it creates under a custom preset, with server bots in the other seats."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from server.app import App
from server.cli import main
from server.cli.bot import _Say
from server.client import Incoming
from server.table import Table


@pytest.mark.asyncio
async def test_bot_creates_a_custom_table_and_plays_the_match(
    start_server: Callable[..., Awaitable[App]], capsys: pytest.CaptureFixture[str]
) -> None:
    # The server's default claim window is on; a table of this bot and server bots has
    # nobody to hide claims from, so the bot creates it without one.
    app = await start_server(timers={"claim_window_ms": 1000})
    assert app.lobby is not None
    windows: list[int] = []
    create = app.lobby.create

    async def recording_create(*args: Any, **kwargs: Any) -> Table:
        table = await create(*args, **kwargs)
        windows.append(table.claim_window_ms)
        return table

    app.lobby.create = recording_create  # type: ignore[method-assign]
    url = f"ws://127.0.0.1:{app.port}/ws"
    args = ["bot", "--url", url, "--create", "--rules", "custom-after", "--add-bots", "fast"]
    status = await asyncio.wait_for(asyncio.to_thread(main, [*args, "--quiet"]), 120)
    out = capsys.readouterr().out
    assert status == 0, out
    assert "match 1 at table" in out and "(this bot)" in out
    assert app.store is not None
    row = await app.store.get_match(1)
    assert row is not None and row.ended_at is not None and row.rules == "custom-after"
    assert row.rule_options is not None and row.rule_options["wilds"] == "after"
    assert row.final_scores is not None and sum(row.final_scores) == 0
    assert f"{row.final_scores[0]:+d}  (this bot)" in out
    assert windows == [0]


def test_rules_go_with_create(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bot", "--url", "ws://127.0.0.1:1/ws", "--rules", "custom"]) == 2
    assert "go with --create" in capsys.readouterr().err
    assert main(["bot", "--url", "ws://127.0.0.1:1/ws", "--claim-window-ms", "0"]) == 2


def test_progress_says_each_hands_end_once_and_one_missed_while_away(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A full update repeats the hand's events (after a refusal, a reconnection): its end
    is said once. One that comes back after a reconnection in the next hand carries the
    hand before (``last_hand``): said then, marked as missed, and only once."""
    win = {"kind": "win", "winner": 2, "discarder": None, "hand": "123m456p789s11zW", "total": 9}
    scores = [-8, -8, 24, -8]
    back = Incoming(
        "update",
        {
            "hand_no": 3,
            "events": [],
            "scores": scores,
            "full": True,
            "last_hand": {"hand_no": 2, "events": [{"kind": "exhausted"}]},
        },
    )
    messages = [
        Incoming("update", {"hand_no": 1, "events": [win, {"kind": "hand_end"}], "scores": scores}),
        Incoming("update", {"hand_no": 1, "events": [win], "scores": scores, "full": True}),
        back,
        back,  # given again (a refusal): the missed hand is not said twice
        Incoming("error", {"code": "stale", "reason": "an older update"}),
    ]
    say = _Say(quiet=False)
    for message in messages:
        say.progress(message)
    assert capsys.readouterr().err.splitlines() == [
        "bot: hand 1: player 2 wins self-drawn with 123m456p789s11zW for 9 fan; "
        "scores [-8, -8, 24, -8]",
        "bot: hand 2: drawn (wall exhausted) (while away)",
        "bot: server: stale: an older update",
    ]


@pytest.mark.asyncio
@pytest.mark.parametrize("name", ["a\x1b[31mb", "ab\u202ecd"])
async def test_a_name_the_server_refuses_is_said_quoted_not_sent_to_the_terminal(
    app: App, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    url = f"ws://127.0.0.1:{app.port}/ws"
    args = ["bot", "--url", url, "--create", "--name", name, "--password", "secret123"]
    status = await asyncio.wait_for(asyncio.to_thread(main, args), 30)
    err = capsys.readouterr().err
    assert status == 1
    assert err.startswith(f"guobiao bot: cannot register {name!r}: "), err
    assert name not in err  # (its escape or override reaches no terminal)

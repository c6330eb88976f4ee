"""``guobiao bot``: a network bot against the real server (the ``app`` fixture), here at a
table it creates under a custom preset, with server bots in the other seats."""

from __future__ import annotations

import asyncio

import pytest

from server.app import App
from server.cli import main


@pytest.mark.asyncio
async def test_bot_creates_a_custom_table_and_plays_the_match(
    app: App, capsys: pytest.CaptureFixture[str]
) -> None:
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


def test_rules_go_with_create(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bot", "--url", "ws://127.0.0.1:1/ws", "--rules", "custom"]) == 2
    assert "--rules go with --create" in capsys.readouterr().err

"""The claim window's settings: ``[timers] claim_window_ms``, the ``create_table`` field, the
table summary, and which tables hold their claim windows (docs/protocol.md, "The claim
window"). What the window hides is tested in ``test_server_hidden_info.py``."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import pytest
from fakes import table_for

from server import protocol
from server.app import App
from server.client import Client
from server.config import ConfigError, TimersSection, load
from server.protocol import ProtocolError, decode
from server.table import BOT, HUMAN, Seat


def test_the_default_window_is_on_and_the_file_and_code_agree() -> None:
    config = load(environ={})
    assert config.timers.claim_window_ms == TimersSection().claim_window_ms == 1000


@pytest.mark.parametrize("value", [-1, 10_001, "soon"])
def test_a_window_out_of_range_is_refused_with_where_it_came_from(value: object) -> None:
    with pytest.raises(ConfigError, match=r"command line: \[timers\] claim_window_ms") as caught:
        load(environ={}, overrides={"timers": {"claim_window_ms": value}})
    assert repr(value) in str(caught.value)


def test_the_window_from_the_environment() -> None:
    config = load(environ={"GUOBIAO_TIMERS_CLAIM_WINDOW_MS": "0"})
    assert config.timers.claim_window_ms == 0


def test_create_table_takes_a_window() -> None:
    text = json.dumps({"type": "create_table", "payload": {"claim_window_ms": 250}})
    assert decode(text) == protocol.CreateTable(None, None, None, False, 250)
    text = json.dumps({"type": "create_table", "payload": {}})
    assert decode(text) == protocol.CreateTable(None, None, None, False, None)


@pytest.mark.parametrize("value", [-5, 10_001, 1.5, True, "800"])
def test_create_table_refuses_a_bad_window(value: object) -> None:
    text = json.dumps({"type": "create_table", "payload": {"claim_window_ms": value}})
    with pytest.raises(ProtocolError) as caught:
        decode(text)
    assert caught.value.code == "bad_message" and "'claim_window_ms'" in caught.value.reason
    assert "0..10000" in caught.value.reason


@pytest.mark.asyncio
async def test_a_table_shows_its_window_the_servers_or_its_own(
    start_server: Callable[..., Awaitable[App]],
) -> None:
    app = await start_server(timers={"claim_window_ms": 700})
    client = await Client.connect(f"ws://127.0.0.1:{app.port}/ws", rate=None)
    try:
        await client.guest()
        default = (await client.create_table()).table
        own = (await client.create_table(claim_window_ms=0)).table
        listed = {t["table"]: t["claim_window_ms"] for t in await client.list_tables()}
        assert listed[default] == 700 and listed[own] == 0
    finally:
        await client.close()


def test_only_tables_with_a_person_seated_hold_their_claim_windows() -> None:
    table = table_for()
    table.seats = [Seat(BOT, "default") for _ in range(4)]
    assert not table.holds_claims
    table.seats[2] = Seat(HUMAN, "lin", connected=False)  # away or not: a person sits there
    assert table.holds_claims

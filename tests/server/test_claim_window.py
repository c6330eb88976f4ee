"""The claim window's settings: ``[timers] claim_window_ms``, the ``create_table`` field, the
table summary, and which tables hold their claim windows (docs/protocol.md, "The claim
window"). What the window hides is tested in ``test_server_hidden_info.py``."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from fakes import QUICK, FakePeer, FakeStore, until

from engine.rules import RuleSet
from server import protocol
from server.app import App
from server.client import Client
from server.config import Config, ConfigError, LimitsSection, RulesSection, TimersSection, load
from server.lobby import Lobby
from server.presets import PresetError, load_presets, preset_claim_windows
from server.protocol import ProtocolError, decode
from server.table import WatchInput


def test_the_default_window_is_on_and_the_file_and_code_agree() -> None:
    config = load(environ={})
    assert config.timers.claim_window_ms == TimersSection().claim_window_ms == 1000


@pytest.mark.parametrize("value", [-1, 10_001, "soon"])
def test_a_window_out_of_range_is_refused_with_where_it_came_from(value: object) -> None:
    with pytest.raises(ConfigError, match=r"command line: \[timers\] claim_window_ms") as caught:
        load(environ={}, overrides={"timers": {"claim_window_ms": value}})
    assert str(value) in str(caught.value)  # (text is quoted as TOML quotes it: "soon")


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


@pytest.mark.asyncio
async def test_a_spectator_of_an_all_bot_table_sees_every_discard_stop() -> None:
    """A table of four bots holds its claim windows too (without their least time): each
    update that shows a discard stops there, so a spectator cannot tell from where updates
    stop which discards someone could claim (an outside probe counted 9 of 40 discards
    stopping, exactly those a bot answered). Before, only a person's table held them."""
    lobby = Lobby(Config(timers=QUICK, limits=LimitsSection(max_tables=10)), FakeStore())
    try:
        table = await lobby.create(None, 60, False, hands=1, seated=["bot:fast"] * 4)
        spectator = FakePeer("visitor")
        await table.queue.put(WatchInput(spectator, None, None))
        await until(lambda: spectator.frames("match_end"), "the match's end", timeout=30)
        discards = 0
        for update in spectator.updates():
            kinds = [e["kind"] for e in update["events"]]
            for at, kind in enumerate(kinds):
                if kind == "discard" and update["view"]["phase"] != "over":
                    discards += 1
                    assert at == len(kinds) - 1, kinds  # the update stops at the discard
        assert discards >= 10
    finally:
        await lobby.shutdown()


# A preset's own window (config/rules.toml: claim_window_ms beside the rule options).

PRESETS_WITH_WINDOWS = """
[mcr]
variant = "mcr"

[mcr-slow]
variant = "mcr"
claim_window_ms = 2500

[custom-fast]
variant = "custom"
claim_window_ms = 0
"""


def test_a_preset_may_set_its_own_window_which_is_not_a_rule(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(PRESETS_WITH_WINDOWS, encoding="utf-8")
    assert preset_claim_windows(path) == {"mcr-slow": 2500, "custom-fast": 0}
    presets = load_presets(path)
    assert presets["mcr-slow"] == RuleSet(name="mcr-slow")  # plain MCR rules
    assert "claim_window_ms" not in presets["custom-fast"].to_dict()
    assert preset_claim_windows() == {}  # the shipped presets take the server's window


@pytest.mark.parametrize("value", ["-1", "10001", "1.5", "true", '"800"'])
def test_a_bad_preset_window_names_the_file_and_the_preset(tmp_path: Path, value: str) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(f'[slow]\nvariant = "mcr"\nclaim_window_ms = {value}\n', encoding="utf-8")
    with pytest.raises(PresetError, match=r"rules\.toml: \[slow\] claim_window_ms must be"):
        load_presets(path)


@pytest.mark.asyncio
async def test_a_table_takes_its_presets_window_unless_its_creator_chose(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(PRESETS_WITH_WINDOWS, encoding="utf-8")
    config = Config(
        timers=TimersSection(claim_window_ms=700),
        rules=RulesSection(file=str(path)),
        limits=LimitsSection(max_tables=10),
    )
    lobby = Lobby(config, FakeStore())
    try:
        windows = {
            "server's": (await lobby.create("mcr", None, False)).claim_window_ms,
            "preset's": (await lobby.create("mcr-slow", None, False)).claim_window_ms,
            "preset's 0": (await lobby.create("custom-fast", None, False)).claim_window_ms,
            "chosen": (
                await lobby.create("mcr-slow", None, False, claim_window_ms=90)
            ).claim_window_ms,
        }
        assert windows == {"server's": 700, "preset's": 2500, "preset's 0": 0, "chosen": 90}
    finally:
        await lobby.shutdown()

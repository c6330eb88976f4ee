"""A table gone after its match: one of its players who comes back to it (a page reloaded
after the end, a server restarted since, a link kept) is refused ``table_finished`` with
the match, whose page has its end; anyone else hears ``no_such_table``, as of a table that
never was (docs/protocol.md, ``error``). Through the real server and the Python client."""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, datetime

import pytest
from serverkit import StartServer
from test_server_match_length import sit_with_bots
from test_server_recovery import PASSWORD, USERNAME, my_bot

from server.app import App
from server.cli import bot
from server.client import Client, ServerError, play
from server.db.store import Store, TableRow

MATCH_TIMEOUT = 60
DATABASE = "finished.db"  # the test's servers, one after the other, on this file


async def refusal(client: Client, kind: str, table: str) -> ServerError:
    """What the server answers ``client``'s ``sync`` or ``watch`` of ``table`` with."""
    with pytest.raises(ServerError) as refused:
        if kind == "sync":
            await client.sync(table, timeout=10)
        else:
            await client.watch(table)
    return refused.value


async def gone(app: App, table: str) -> None:
    """Until the lobby has let the finished table go (its row saved, nobody left at it)."""
    assert app.lobby is not None
    for _ in range(200):
        if table not in app.lobby.tables:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"table {table} still live after its match")


@pytest.mark.asyncio
async def test_a_player_back_at_her_finished_table_is_told_its_match_and_a_stranger_is_not(
    start_server: StartServer,
) -> None:
    app = await start_server(database=DATABASE)
    url = f"ws://127.0.0.1:{app.port}/ws"
    async with await Client.connect(url, rate=None) as alice:
        session = await alice.register(USERNAME, PASSWORD)
        table, _ = await sit_with_bots(alice, 1)
        end = await asyncio.wait_for(play(alice, table, my_bot()), MATCH_TIMEOUT)
        assert end is not None
    await gone(app, table)  # (it stays while someone is there to see it)
    async with await Client.connect(url, rate=None) as alice:  # her page, reloaded
        await alice.resume(session.token)
        for kind in ("sync", "watch"):  # her table's page; a link to watch it
            refused = await refusal(alice, kind, table)
            assert (refused.code, refused.table, refused.match) == (
                "table_finished",
                table,
                end["match"],
            ), refused
            assert str(end["match"]) in refused.reason
        # ``guobiao bot``, back from a lost connection, says the match ended meanwhile.
        said: list[str] = []
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(bot, "RECONNECT_DELAYS", (0.0,))
            args = argparse.Namespace(url=url, invite=None)
            with pytest.raises(bot.BotError) as stopped:
                await bot._reconnect(alice, table, args, said.append)
        assert str(stopped.value) == (
            f"table {table} is gone: its match {end['match']} ended while this bot was away"
        )
    async with await Client.connect(url, rate=None) as visitor:  # no session at all
        for kind in ("sync", "watch"):
            refused = await refusal(visitor, kind, table)
            assert (refused.code, refused.match) == ("no_such_table", None), refused
        await visitor.guest()  # a session, not hers
        for kind in ("sync", "watch"):
            refused = await refusal(visitor, kind, table)
            assert (refused.code, refused.match) == ("no_such_table", None), refused
    await app.stop()

    # A table closed before any match (nobody came), hers all the same: nothing to tell.
    store = await Store.open(f"sqlite+aiosqlite:///{app.config.server.data_dir}/{DATABASE}")
    try:
        closed = TableRow(
            id="t-closed",
            rules="mcr",
            turn_seconds=60,
            private=False,
            invite_code=None,
            seats=(USERNAME, None, None, None),
            created_at=datetime.now(UTC),
            state="finished",
        )
        await store.save_table(closed)
    finally:
        await store.close()

    # After a restart nothing of the match is in memory: the database says it all the same.
    again = await start_server(database=DATABASE)
    async with await Client.connect(f"ws://127.0.0.1:{again.port}/ws", rate=None) as alice:
        await alice.resume(session.token)
        refused = await refusal(alice, "sync", table)
        assert (refused.code, refused.match) == ("table_finished", end["match"]), refused
        refused = await refusal(alice, "sync", "t-closed")
        assert (refused.code, refused.match) == ("no_such_table", None), refused
        refused = await refusal(alice, "sync", "t-never")
        assert (refused.code, refused.match) == ("no_such_table", None), refused

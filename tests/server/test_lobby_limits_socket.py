"""The limit on the tables waiting for players as a client meets it: guests of one address
(every test client is at 127.0.0.1) make tables until the address has as many waiting as the
server allows; the next ``create_table`` is refused with ``too_many_tables``, whoever asks
from there, and is allowed again once one of them starts; ``guobiao loadtest`` so refused says
which setting to raise. The rules themselves are tested on the lobby
(``test_lobby_limits.py``)."""

from __future__ import annotations

import asyncio

import pytest
from serverkit import StartServer

from server.cli.loadtest import loadtest
from server.client import Client, ServerError


@pytest.mark.asyncio
async def test_an_address_has_only_so_many_tables_waiting(start_server: StartServer) -> None:
    app = await start_server(
        limits={"waiting_tables_per_account": 2, "waiting_tables_per_address": 3}
    )
    url = f"ws://127.0.0.1:{app.port}/ws"
    first, second = await Client.connect(url, rate=None), await Client.connect(url, rate=None)
    try:
        for client in (first, second):
            await client.guest()
        made = [(await first.create_table()).table for _ in range(2)]
        made.append((await second.create_table()).table)
        with pytest.raises(ServerError) as refused:
            await second.create_table()
        assert refused.value.code == "too_many_tables"
        assert "127.0.0.1" in refused.value.reason, refused.value.reason
        # One of them starts (its creator sits and fills it with bots): room again.
        await first.join_table(made[0])
        # (waited for from before the bots sit: it may come in the same read as the reply)
        dealt = asyncio.create_task(
            first.wait_for(lambda m: m.type == "update" and m.table == made[0])
        )
        await asyncio.sleep(0)
        await first.add_bots(made[0], "fast")
        await dealt
        assert (await second.create_table()).table not in made
    finally:
        for client in (first, second):
            await client.close()


@pytest.mark.asyncio
async def test_a_loadtest_refused_tables_says_which_setting_to_raise(
    start_server: StartServer,
) -> None:
    app = await start_server(limits={"waiting_tables_per_address": 1})
    url = f"ws://127.0.0.1:{app.port}/ws"
    first = await Client.connect(url, rate=None)
    try:
        await first.guest()
        await first.create_table()  # the address's one table waiting for players
        report = await loadtest(url, tables=1, duration=2.0, rate=None)
    finally:
        await first.close()
    assert report.errors["too_many_tables (lobby)"] == 1
    assert any("waiting_tables_per_address" in note for note in report.notes), report.notes

"""``GET /metrics`` through the real server: four network bots play a one-hand match and the
scrape (parsed with prometheus_client's own text parser) agrees with what happened, the
stored action log included; a flood's refusals are counted; two servers in one process
count apart, each under its own ``node``."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import socket
import time
from typing import Any

import pytest
from faultkit import read_only_switch
from httpkit import http_request
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from serverkit import StartServer
from test_server_bad_input import Wire
from websockets.asyncio.client import connect

from engine.bots import make_bot
from server.app import App
from server.client import Client, play
from server.config import ConfigError, load
from server.metrics import Metrics

# ``GET /metrics`` on the game port, where these tests read it (by default it is nowhere).
GAME_PORT = {"game_port": True}

# A scrape: (sample name, labels without ``node`` as sorted pairs) -> value.
Scrape = dict[tuple[str, tuple[tuple[str, str], ...]], float]


async def scrape(app: App) -> Scrape:
    """``GET /metrics`` of ``app``, parsed; every sample must carry ``app``'s node."""
    answer = await http_request(app.port, "/metrics")
    assert answer.status == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples: Scrape = {}
    for family in text_string_to_metric_families(answer.body.decode()):
        assert family.documentation, family.name  # every series says what it is
        for sample in family.samples:
            labels = dict(sample.labels)
            assert labels.pop("node") == app.node, sample
            samples[(sample.name, tuple(sorted(labels.items())))] = sample.value
    return samples


def value(samples: Scrape, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def tables(samples: Scrape) -> dict[str, float]:
    return {
        s: value(samples, "guobiao_tables", state=s) for s in ("waiting", "playing", "finished")
    }


@pytest.mark.asyncio
async def test_a_match_shows_in_the_metrics_as_it_is_stored(start_server: StartServer) -> None:
    app = await start_server(metrics=GAME_PORT)
    url = f"ws://127.0.0.1:{app.port}/ws"
    clients = [await Client.connect(url, rate=None) for _ in range(4)]
    try:
        for client in clients:
            await client.guest()
        before = await scrape(app)
        assert value(before, "guobiao_connections") == 4
        assert tables(before) == {"waiting": 0, "playing": 0, "finished": 0}
        assert value(before, "guobiao_actions_total") == 0
        assert value(before, "guobiao_action_update_seconds_count") == 0
        assert value(before, "guobiao_queue_players", ladder="mcr", mode="rated") == 0
        assert value(before, "guobiao_queue_players", ladder="mcr", mode="casual") == 0
        assert value(before, "guobiao_tournaments", state="registering") == 0
        assert value(before, "process_cpu_seconds_total") > 0

        table = (await clients[0].create_table(hands=1, turn_seconds=5)).table
        await clients[0].create_table()  # one more, nobody at it: waiting
        for client in clients:
            await client.join_table(table)
        await clients[0].wait_for(lambda m: m.type == "update" and m.table == table)
        # Nobody has acted yet (the first decision's clock runs 5 s): the match is playing.
        assert tables(await scrape(app)) == {"waiting": 1, "playing": 1, "finished": 0}

        ends = await asyncio.wait_for(
            asyncio.gather(*(play(c, table, make_bot("fast")) for c in clients)), 30
        )
        end = ends[0]
        assert end is not None
        after = await scrape(app)  # the four still sit at the finished table
    finally:
        for client in clients:
            await client.close()

    log = await http_request(app.port, f"/api/matches/{end['match']}/log")
    stored = [line for line in map(json.loads, log.body.splitlines()) if line["type"] == "action"]
    assert stored
    assert value(after, "guobiao_actions_total") == len(stored)
    assert tables(after) == {"waiting": 1, "playing": 0, "finished": 1}
    # The players' own actions that showed at once (the rest are the server's plays and
    # answers held by claim windows): some, never more than were stored.
    played = value(after, "guobiao_action_update_seconds_count")
    assert 0 < played <= len(stored)
    assert value(after, "guobiao_action_update_seconds_bucket", le="+Inf") == played
    assert value(after, "guobiao_action_update_seconds_sum") > 0
    assert value(after, "guobiao_store_commit_seconds_count", what="actions") > 0
    assert value(after, "guobiao_store_commit_seconds_count", what="hand") == 1
    assert value(after, "guobiao_store_commit_seconds_count", what="match") == 1
    assert value(after, "guobiao_slow_client_drops_total") == 0
    assert value(after, "guobiao_leases_held") == 0  # one process holds no lease
    assert value(after, "guobiao_rate_limited_total", limit="messages") == 0


@pytest.mark.asyncio
async def test_refusals_are_counted_per_server_under_its_own_node(
    start_server: StartServer,
) -> None:
    calm = await start_server(metrics=GAME_PORT)
    # The production message limit (20 a second, bursts of 40); one guest account at once.
    strict = await start_server(
        limits={"messages_per_second": 20, "message_burst": 40},
        accounts={"guest_burst": 1},
        metrics=GAME_PORT,
    )
    assert strict.metrics.registry is not calm.metrics.registry
    assert {calm.node, strict.node} == {
        f"{socket.gethostname()}:{calm.port}",
        f"{socket.gethostname()}:{strict.port}",
    }
    pings = 50  # past the burst, short of the strikes that close the connection
    frames: list[dict[str, Any]] = []
    async with connect(f"ws://127.0.0.1:{strict.port}/ws") as ws:
        await ws.send(json.dumps({"type": "hello", "payload": {"versions": [1]}}))
        for n in range(pings):
            await ws.send(json.dumps({"type": "ping", "id": n, "payload": {}}))
        while len(frames) < pings + 1:  # the welcome, then one answer for each ping
            frames.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
    async with connect(f"ws://127.0.0.1:{strict.port}/ws") as ws:  # a full bucket again
        await ws.send(json.dumps({"type": "hello", "payload": {"versions": [1]}}))
        for n in range(2):
            await ws.send(json.dumps({"type": "guest", "id": f"g{n}", "payload": {}}))
        while len(frames) < pings + 4:
            frames.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
    limited = [f for f in frames if f["type"] == "error" and f["payload"]["code"] == "rate_limited"]
    refused_guest = [f for f in limited if f.get("reply_to") == "g1"]
    assert len(refused_guest) == 1
    flooded = len(limited) - 1
    assert flooded > 0

    samples = await scrape(strict)
    assert value(samples, "guobiao_rate_limited_total", limit="messages") == flooded
    assert value(samples, "guobiao_rate_limited_total", limit="accounts") == 1
    assert value(samples, "guobiao_connections") == 0
    untouched = await scrape(calm)  # the other server's registry saw none of it
    assert value(untouched, "guobiao_rate_limited_total", limit="messages") == 0
    assert value(untouched, "guobiao_rate_limited_total", limit="accounts") == 0


@pytest.mark.asyncio
async def test_a_named_node_and_openmetrics_on_request(start_server: StartServer) -> None:
    assert load(environ={"GUOBIAO_SERVER_NODE": "east-1"}).server.node == "east-1"
    app = await start_server(metrics=GAME_PORT)
    app.config = dataclasses.replace(
        app.config, server=dataclasses.replace(app.config.server, node="east-1")
    )
    assert app.node == "east-1"
    assert value(await scrape(app), "guobiao_connections") == 0  # (scrape checks the node)
    answer = await http_request(
        app.port, "/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"}
    )
    assert answer.status == 200
    assert answer.headers["content-type"].startswith("application/openmetrics-text")
    assert answer.body.endswith(b"# EOF\n")
    assert b'guobiao_connections{node="east-1"} 0' in answer.body
    head = await http_request(app.port, "/metrics", method="HEAD")
    assert head.status == 200 and head.body == b""


@pytest.mark.asyncio
async def test_a_held_loop_and_every_collection_are_timed(start_server: StartServer) -> None:
    app = await start_server(metrics=GAME_PORT)
    before = await scrape(app)
    await asyncio.sleep(0.3)  # the lag is sampled every 0.25 s: one sample at least
    time.sleep(0.3)  # the point: hold the server's loop, as a long task would
    gc.collect(0)
    gc.collect(2)
    await asyncio.sleep(0.3)
    after = await scrape(app)

    def count(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    # The held loop: a timer due while it was held (they are 0.25 s apart) fired at least
    # 0.05 s late.
    assert count("guobiao_event_loop_lag_seconds_count") >= 2
    late = count("guobiao_event_loop_lag_seconds_count") - count(
        "guobiao_event_loop_lag_seconds_bucket", le="0.025"
    )
    assert late >= 1
    assert count("guobiao_gc_pause_seconds_count", generation="0") >= 1
    assert count("guobiao_gc_pause_seconds_count", generation="2") >= 1
    assert count("guobiao_gc_pause_seconds_sum", generation="2") > 0
    callback = app.metrics._collected
    await app.stop()
    assert callback not in gc.callbacks  # a stopped server times nothing more


@pytest.mark.asyncio
async def test_failed_writes_are_counted_and_whether_writes_fail_now(
    start_server: StartServer,
) -> None:
    """The database refuses writes (read-only here; a full disk alike): only ``/healthz``
    said so, and only while it lasted, no series. ``guobiao_write_failures_total`` counts
    each write it failed (a login's here) and ``guobiao_writes_failing`` is 1 while they
    fail, 0 again once a write works; the count stays."""
    app = await start_server(metrics=GAME_PORT)
    state = read_only_switch(app)

    def writes(samples: Scrape) -> tuple[float, float]:
        failed = value(samples, "guobiao_write_failures_total")
        return failed, value(samples, "guobiao_writes_failing")

    wire = await Wire.open(f"ws://127.0.0.1:{app.port}/ws")
    try:
        assert writes(await scrape(app)) == (0, 0)
        state["read_only"] = True
        await wire.refused("guest", {}, "internal_error")
        assert writes(await scrape(app)) == (1, 1)
        await wire.refused("guest", {}, "internal_error")
        assert writes(await scrape(app)) == (2, 1)
        state["read_only"] = False
        await wire.answered("guest", {}, "session")
        assert writes(await scrape(app)) == (2, 0)
    finally:
        await wire.close()


@pytest.mark.asyncio
async def test_no_metrics_for_anyone_by_default(start_server: StartServer) -> None:
    """Their counters tell what players may not know (each answer in a claim window is
    counted as it is stored: the count after a discard says how many opponents could claim
    it): by default a client finds them nowhere, the settings of config/default.toml alike."""
    app = await start_server()
    assert app.metrics_port is None
    assert (await http_request(app.port, "/metrics")).status == 404
    defaults = load(None, environ={}).metrics
    assert (defaults.listen, defaults.game_port) == ("", False)


@pytest.mark.asyncio
async def test_metrics_at_an_address_of_their_own_and_off_the_game_port(
    start_server: StartServer,
) -> None:
    """``[metrics] listen`` serves ``GET /metrics`` there (and nothing else), ``game_port =
    false`` no longer on the game port: a scraper on a private address, the players' port
    without the live counters that time every move."""
    app = await start_server(metrics={"listen": "127.0.0.1:0", "game_port": False})
    port = app.metrics_port
    assert port is not None and port != app.port
    assert (await http_request(app.port, "/metrics")).status == 404
    answer = await http_request(port, "/metrics")
    assert answer.status == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    families = {f.name for f in text_string_to_metric_families(answer.body.decode())}
    assert {"guobiao_connections", "guobiao_actions", "guobiao_tables"} <= families
    assert f'node="{app.node}"'.encode() in answer.body
    head = await http_request(port, "/metrics", method="HEAD")
    assert head.status == 200 and head.body == b""
    for path in ("/", "/healthz", "/ws", "/api/players/nobody"):
        assert (await http_request(port, path)).status == 404, path
    assert (await http_request(app.port, "/healthz")).status == 200  # the game port as ever
    both = await start_server(metrics={"listen": "127.0.0.1:0", **GAME_PORT})
    assert both.metrics_port is not None
    assert (await http_request(both.port, "/metrics")).status == 200
    assert (await http_request(both.metrics_port, "/metrics")).status == 200


@pytest.mark.parametrize("listen", ["9100", "localhost", ":9100", "::1:9100", "h:70000", "h:x"])
def test_a_metrics_address_that_is_not_one_stops_the_server(listen: str) -> None:
    with pytest.raises(ConfigError, match=r"\[metrics\] listen must be HOST:PORT"):
        load(environ={"GUOBIAO_METRICS_LISTEN": listen})
    assert load(environ={"GUOBIAO_METRICS_LISTEN": "[::1]:9100"}).metrics.address == ("::1", 9100)


def test_leases_held_is_read_from_the_nodes_interface() -> None:
    """``guobiao_leases_held`` is what the app's ``nodes`` hold (in cluster mode the node's
    leases; a server alone, ``OneNode``, holds none): the gauge reads the interface the app
    talks to, not an attribute of cluster mode."""

    class Nodes:
        leases_held = 3

    class Server:
        node = "n1"
        connections: tuple[object, ...] = ()
        lobby = None
        matchmaker = None
        nodes = Nodes()
        slow_drops = 0
        handoff = None
        write_failures = 0
        writes_failing = False

    metrics = Metrics(Server())
    text = generate_latest(metrics.registry).decode()
    samples = {
        s.name: s.value for family in text_string_to_metric_families(text) for s in family.samples
    }
    assert samples["guobiao_leases_held"] == 3

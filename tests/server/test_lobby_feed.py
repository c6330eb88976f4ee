"""The live lobby feed (``subscribe_lobby``) against the real server (the ``app`` fixture),
with raw websocket clients (``Wire``): what a subscriber is sent as tables are created,
seated and started; the pace (at most one message a second, always the latest listing, never
the same listing twice); and how it stops (``on: false``, logout, disconnection).

That a connection was *not* sent something is checked by a ``ping`` after the change was
sent to someone else: the connection's frames are queued in order, so a ``tables`` message
queued for it would come before the ``pong``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest
from test_server_bad_input import Frame, Wire, add_bots, guest, url_of

from server.app import App
from server.lobby import FEED_SECONDS

Listing = list[dict[str, Any]]


def unsolicited(frame: Frame) -> bool:
    return frame["type"] == "tables" and "reply_to" not in frame


def feed(wire: Wire, after: int = 0) -> list[Listing]:
    """The unsolicited ``tables`` messages ``wire`` got (from frame ``after`` on)."""
    return [f["payload"]["tables"] for f in wire.frames[after:] if unsolicited(f)]


async def fed(
    wire: Wire, predicate: Callable[[Listing], bool], after: int = 0, timeout: float = 10
) -> Listing:
    """The first unsolicited listing from frame ``after`` on for which ``predicate`` holds."""
    frame = await wire.wait(
        lambda f: unsolicited(f) and predicate(f["payload"]["tables"]), after, timeout
    )
    listing: Listing = frame["payload"]["tables"]
    return listing


def entry(listing: Listing, table: str) -> dict[str, Any] | None:
    return next((t for t in listing if t["table"] == table), None)


async def nothing_more(wire: Wire, mark: int) -> None:
    """``wire`` got no ``tables`` message since frame ``mark`` (up to a ping's pong)."""
    await wire.alive()
    assert feed(wire, mark) == [], feed(wire, mark)


async def subscribed(app: App) -> Wire:
    wire = await Wire.open(url_of(app))
    await guest(wire)
    reply = await wire.answered("subscribe_lobby", {}, "tables")  # "on" defaults to true
    assert reply["payload"] == {"tables": []}, reply
    return wire


@pytest.mark.asyncio
async def test_a_subscriber_sees_tables_created_seated_and_started(app: App) -> None:
    watcher = await subscribed(app)
    host = await Wire.open(url_of(app))
    name = await guest(host)
    # A private table is never listed: its changes are not even looked at.
    mark = len(watcher.frames)
    await host.answered("create_table", {"private": True}, "table_created")
    listed = await host.answered("list_tables", {}, "tables")
    assert listed["payload"]["tables"] == []
    await nothing_more(watcher, mark)

    created = await host.answered("create_table", {"turn_seconds": 60}, "table_created")
    table = created["payload"]["table"]
    waiting = await fed(watcher, lambda t: entry(t, table) is not None, mark)
    assert waiting == [entry(waiting, table)]  # the private table is not there
    summary = entry(waiting, table)
    assert summary is not None
    assert summary["state"] == "waiting" and summary["seats"] == [None] * 4
    assert summary["hand_no"] == 0

    await host.answered("join_table", {"table": table, "seat": 0}, "joined")
    seated = await fed(watcher, lambda t: (entry(t, table) or {}).get("seats", [None])[0] == name)
    assert entry(seated, table)["state"] == "waiting"  # type: ignore[index]

    await add_bots(host, table, "default")
    started = await fed(
        watcher, lambda t: (entry(t, table) or {}).get("hand_no") == 1, len(watcher.frames) - 1
    )
    summary = entry(started, table)
    assert summary is not None and summary["state"] == "playing"
    assert summary["seats"] == [name, "bot:default", "bot:default", "bot:default"]
    # What the feed says is what list_tables says (the table waits for its person: at rest).
    assert (await watcher.answered("list_tables", {}, "tables"))["payload"]["tables"] == started
    # The table finishes (its person leaves, the server plays the seat): it leaves the list.
    await host.answered("leave_table", {"table": table}, "left")
    await fed(watcher, lambda t: entry(t, table) is None, len(watcher.frames) - 1, timeout=120)
    for wire in (watcher, host):
        await wire.close()


class Recorder:
    """A subscriber inside the server: each message it is sent, with the loop's time."""

    def __init__(self) -> None:
        self.sent: list[tuple[float, str]] = []

    def send(self, text: str) -> None:
        self.sent.append((asyncio.get_running_loop().time(), text))


@pytest.mark.asyncio
async def test_changes_are_sent_at_most_once_a_second_and_the_last_one_always(app: App) -> None:
    assert app.lobby is not None
    lobby_feed = app.lobby.feed
    assert lobby_feed.seconds == FEED_SECONDS == 1.0
    recorder = Recorder()
    lobby_feed.subscribe(recorder, None)  # beside a real connection
    watcher = await subscribed(app)
    host = await Wire.open(url_of(app))
    await guest(host)
    # A burst of changes, far more than one a second.
    tables = []
    for _ in range(8):
        created = await host.answered("create_table", {}, "table_created")
        tables.append(created["payload"]["table"])
    final = await fed(watcher, lambda t: {e["table"] for e in t} == set(tables))
    assert final == (await host.answered("list_tables", {}, "tables"))["payload"]["tables"]
    while len(recorder.sent) < 2 or tables[-1] not in recorder.sent[-1][1]:
        await asyncio.sleep(0.05)  # the recorder is sent in the same turn as the watcher
    # Coalesced: fewer messages than changes, each a second after the one before, each one
    # a different listing, growing as the tables were created.
    listings = feed(watcher)
    assert len(listings) < len(tables)
    times = [t for t, _ in recorder.sent[1:]]  # after the answer to its subscription
    assert all(b - a >= FEED_SECONDS - 0.01 for a, b in itertools.pairwise(times))
    assert all(a != b for a, b in itertools.pairwise(listings))
    counts = [len(listing) for listing in listings]
    assert counts == sorted(counts) and counts[-1] == len(tables)
    # The recorder (subscribed first) was sent the same messages.
    assert [json.loads(text)["payload"]["tables"] for _, text in recorder.sent[1:]] == listings
    # A change that leaves the listing as it is sends nothing.
    mark, before = len(watcher.frames), len(recorder.sent)
    lobby_feed.changed()
    while lobby_feed.due is not None:
        await asyncio.sleep(0.05)
    assert len(recorder.sent) == before
    await nothing_more(watcher, mark)
    lobby_feed.unsubscribe(recorder)
    for wire in (watcher, host):
        await wire.close()


@pytest.mark.asyncio
async def test_unsubscribing_or_leaving_stops_the_feed_logging_out_does_not(app: App) -> None:
    assert app.lobby is not None
    stays, stops, logs_out, leaves = [await subscribed(app) for _ in range(4)]
    host = await Wire.open(url_of(app))
    await guest(host)

    reply = await stops.answered("subscribe_lobby", {"on": False}, "tables")
    assert reply["payload"] == {"tables": []}
    await logs_out.answered("logout", {}, "logged_out")  # a visitor now: still following
    await leaves.close()
    while len(app.lobby.feed.subscribers) > 2:  # the server sees the disconnection
        await asyncio.sleep(0.01)
    mark = len(stops.frames)
    await host.answered("create_table", {}, "table_created")
    await fed(stays, lambda t: len(t) == 1)
    await fed(logs_out, lambda t: len(t) == 1)
    await nothing_more(stops, mark)
    assert len(app.lobby.feed.subscribers) == 2  # ``stays`` and ``logs_out``

    # A visitor may subscribe, and "on" is true or false.
    await stops.refused("subscribe_lobby", {"on": "yes"}, "bad_message")
    fresh = await Wire.open(url_of(app))
    await fresh.answered("subscribe_lobby", {}, "tables")
    for wire in (stays, stops, logs_out, host, fresh):
        await wire.close()


@pytest.mark.asyncio
async def test_a_table_seen_late_stays_listed_until_its_spectators_see_its_end(app: App) -> None:
    """A tournament's table whose spectators see it 2 s late dropped out of the listing the
    moment its match ended: a subscriber (a spectator too) knew of the end 2 s before the
    spectators saw it. Listed as it was while played (no hand number) until then, it goes
    from the feed once the end is shown them."""
    assert app.lobby is not None
    lobby, delay = app.lobby, 2
    watcher = await subscribed(app)
    spectator = await Wire.open(url_of(app))
    await guest(spectator)
    table = await lobby.create(
        None, None, False, hands=1, seated=["bot:fast"] * 4, spectator_delay_seconds=delay
    )
    await spectator.answered("watch", {"table": table.id}, "watching")
    while lobby.summaries[table.id].state != "finished":
        await asyncio.sleep(0.002)
    ended = asyncio.get_running_loop().time()
    listed = entry(
        (await watcher.answered("list_tables", {}, "tables"))["payload"]["tables"], table.id
    )
    assert listed is not None and (listed["state"], listed["hand_no"]) == ("playing", None)
    assert not any(f["type"] == "match_end" for f in spectator.frames)
    mark = len(watcher.frames)
    await fed(watcher, lambda t: entry(t, table.id) is None, mark)
    assert asyncio.get_running_loop().time() - ended >= delay - 0.05
    await spectator.wait(lambda f: f["type"] == "match_end")
    for wire in (watcher, spectator):
        await wire.close()

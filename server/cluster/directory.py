"""What each node publishes in Redis for the others: its tables, its players, its creators.

Each node writes, soon after a change (``changed``) and at each beat (``publish``), what
changed since it last did:

- ``PREFIX:listing``: its public unfinished tables (table -> its node and its entry as
  anyone may be shown it, ``TableSummary.listed``: no live hand number for a table whose
  spectators see it late, kept after its match ended until they see the end), which every
  node's lobby lists beside its own;
- ``PREFIX:seated``: its seated players (username -> "TABLE NODE"), so that a player who
  comes back on any node finds her table;
- ``PREFIX:waiting``: the creators of its tables waiting for players (table -> node,
  account, address), so that every node counts them all against the waiting-table limits
  (``Lobby._check_room``).

and reads, at each beat (``read``), the others' as they published them, and the live
nodes' presence (``PREFIX:node:NAME``): what a node that is gone published is ignored.
``sweep`` removes what an earlier run of this node left in its name.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Collection, Coroutine, Iterable
from typing import Any, cast

import orjson
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from server.lobby import Lobby
from server.nodes import Creator

PUBLISH_SOON = 0.05  # seconds: a change of seats is published this soon
FULL_READ_EVERY = 60  # reads (beats): every entry read looked at again, not only the changes


class Directory:
    """This node's publications, and what it last read of every node's."""

    def __init__(
        self,
        redis: aioredis.Redis,
        prefix: str,
        name: str,
        lobby: Lobby,
        spawn: Callable[[Coroutine[Any, Any, None], str], None],
    ) -> None:
        self.redis = redis
        self.prefix = prefix
        self.name = name
        self.lobby = lobby
        self._spawn = spawn  # runs a publication in a task of the node's
        self.live: dict[str, dict[str, Any]] = {}  # node name -> its presence
        self.listings: dict[str, dict[str, Any]] = {}  # other nodes' public tables
        self.listed: dict[str, str] = {}  # other nodes' public tables -> their node
        self.seated: dict[str, str] = {}  # username -> table, all nodes
        # username -> the finished table its owner said she left (``unseated``), until
        # ``PREFIX:seated`` no longer says she sits there (its owner publishes it soon).
        self.unseated_at: dict[str, str] = {}
        self.waiting: dict[str, Creator] = {}  # other nodes' waiting tables -> their creator
        # What the last read found, raw, and the live nodes then (``read``).
        self._listing_raw: dict[bytes, bytes] = {}
        self._seated_raw: dict[bytes, bytes] = {}
        self._alive: frozenset[str] = frozenset()
        self._reads = 0
        # What the last publication wrote: each public table's entry and the summary it was
        # made of (the lobby replaces a table's summary when it changes: one still there is
        # not encoded again), and each seated player's table.
        self._published_listing: dict[str, bytes] = {}
        self._published_summaries: dict[str, Any] = {}
        self._published_seated: dict[str, str] = {}
        self._published_waiting: dict[str, bytes] = {}
        self._publish_soon: asyncio.TimerHandle | None = None
        self._publishing = asyncio.Lock()

    def forget_published(self) -> None:
        """Redis may have lost everything (it restarted): the next publication writes all."""
        self._published_listing.clear()
        self._published_summaries.clear()
        self._published_seated.clear()
        self._published_waiting.clear()

    async def publish(self) -> None:
        """Our public tables into ``PREFIX:listing``, our seated players into
        ``PREFIX:seated``, the creators of our tables waiting for players into
        ``PREFIX:waiting``: what changed since the last beat. One at a time: the beat's and a
        soon publication (``changed``) each compare with what the other published."""
        async with self._publishing:
            await self._publish_now()

    async def _publish_now(self) -> None:
        # Soon after every seat taken (``changed``): with thousands of tables, what costs is
        # what did not change, so it is passed over without being encoded or copied.
        lobby = self.lobby
        summaries: dict[str, Any] = {}
        changed: dict[str, bytes] = {}
        published, encoded = self._published_listing, self._published_summaries
        for table_id, summary in lobby.summaries.items():
            if summary.listed is None or table_id not in lobby.tables:
                continue
            summaries[table_id] = summary
            if encoded.get(table_id) is not summary:
                entry = orjson.dumps({"n": self.name, "l": summary.listed})
                if published.get(table_id) != entry:
                    changed[table_id] = entry
        pipe = self.redis.pipeline(transaction=False)
        key = f"{self.prefix}:listing"
        gone = [t for t in encoded if t not in summaries]
        if changed:
            pipe.hset(key, mapping=cast(Any, changed))
        if gone:
            pipe.hdel(key, *gone)
        # username -> "TABLE NODE": whose word it is (a dead node's are ignored by readers)
        seated = dict(lobby.seated)
        seat_key = f"{self.prefix}:seated"
        was = self._published_seated
        moved = {u: f"{t} {self.name}" for u, t in seated.items() if was.get(u) != t}
        left = [u for u in was if u not in seated]
        if moved:
            pipe.hset(seat_key, mapping=cast(Any, moved))
        # table -> its creator: a table's id is ours alone while we hold it.
        waiting = {
            t: orjson.dumps({"n": self.name, "u": c.username, "a": c.address})
            for t, c in lobby.creators.items()
        }
        made = {t: v for t, v in waiting.items() if self._published_waiting.get(t) != v}
        started = [t for t in self._published_waiting if t not in waiting]
        if made:
            pipe.hset(f"{self.prefix}:waiting", mapping=cast(Any, made))
        if started:
            pipe.hdel(f"{self.prefix}:waiting", *started)
        if left:
            # Only if it still says our table (the player may sit elsewhere by now).
            for u in left:
                pipe.hget(seat_key, u)
        busy = changed or gone or moved or left or made or started
        results = await pipe.execute() if busy else []
        if left:
            current = results[-len(left) :]
            stale = [
                u
                for u, now in zip(left, current, strict=True)
                if now is not None and _text(now) == f"{was[u]} {self.name}"
            ]
            if stale:
                await self.redis.hdel(seat_key, *stale)
        published.update(changed)
        for table_id in gone:
            published.pop(table_id, None)
        self._published_summaries = summaries
        self._published_seated = seated
        self._published_waiting = waiting

    def changed(self) -> None:
        """Who sits where changed here: publish it soon, not at the next beat (a player who
        sits down and reloads the page at once on another node must find her table)."""
        if self._publish_soon is not None:
            return

        def publish() -> None:
            self._publish_soon = None
            self._spawn(self._publish_quietly(), "publish-lobby")

        self._publish_soon = asyncio.get_running_loop().call_later(PUBLISH_SOON, publish)

    async def _publish_quietly(self) -> None:
        with contextlib.suppress(RedisError, OSError):
            await self.publish()

    async def sweep(self) -> None:
        """What ``PREFIX:listing`` and ``PREFIX:seated`` say in our name of tables we do not
        hold (an earlier run of this node, killed, left them) goes."""
        held = set(self.lobby.tables)
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(f"{self.prefix}:listing")
        pipe.hgetall(f"{self.prefix}:seated")
        pipe.hgetall(f"{self.prefix}:waiting")
        listing_raw, seated_raw, waiting_raw = await pipe.execute()
        stale_tables = [
            t
            for t, raw in listing_raw.items()
            if orjson.loads(raw)["n"] == self.name and _text(t) not in held
        ]
        stale_waiting = [
            t
            for t, raw in waiting_raw.items()
            if orjson.loads(raw)["n"] == self.name and _text(t) not in held
        ]
        stale_seats = []
        for user, where in seated_raw.items():
            table_id, _, node = _text(where).partition(" ")
            if node == self.name and table_id not in held:
                stale_seats.append(user)
        if stale_tables:
            await self.redis.hdel(f"{self.prefix}:listing", *stale_tables)
        if stale_seats:
            await self.redis.hdel(f"{self.prefix}:seated", *stale_seats)
        if stale_waiting:
            await self.redis.hdel(f"{self.prefix}:waiting", *stale_waiting)

    async def read(self) -> str | None:
        """What every node published (and who is alive), as it is now; the coordinator's
        name (``PREFIX:coordinator``), read with it.

        The hashes are read whole (thousands of entries with thousands of players), but only
        their entries that changed since the last read are looked at (``_delta``): at 8,000
        players a beat costs 3.8 ms of CPU instead of 8.0 (``benchmarks/bench_directory.py``,
        hiredis parsing the replies). Everything is looked at again when who is alive
        changed, and every ``FULL_READ_EVERY`` reads."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(f"{self.prefix}:listing")
        pipe.hgetall(f"{self.prefix}:seated")
        pipe.hgetall(f"{self.prefix}:waiting")
        pipe.get(f"{self.prefix}:coordinator")
        listing_raw, seated_raw, waiting_raw, coordinator = await pipe.execute()
        live: dict[str, dict[str, Any]] = {}
        keys = [k async for k in self.redis.scan_iter(match=f"{self.prefix}:node:*", count=500)]
        if keys:
            for raw in await self.redis.mget(keys):
                if raw is not None:
                    info = orjson.loads(raw)
                    live[info["node"]] = info
        self.live = live
        self._reads += 1
        alive = frozenset(live)
        full = alive != self._alive or self._reads % FULL_READ_EVERY == 0
        self._alive = alive
        if full:  # (and the players told unseated whom the hash no longer names)
            named = {_text(user) for user in seated_raw}
            self.unseated_at = {u: t for u, t in self.unseated_at.items() if u in named}
        self._read_listing(listing_raw, live, full)
        self._read_seated(seated_raw, live, full)
        waiting: dict[str, Creator] = {}
        for table_id, raw in waiting_raw.items():
            entry = orjson.loads(raw)
            if entry["n"] != self.name and entry["n"] in live:
                waiting[_text(table_id)] = Creator(entry["u"], entry["a"])
        self.waiting = waiting
        return coordinator.decode() if coordinator is not None else None

    def _read_listing(self, raw: dict[bytes, bytes], live: Collection[str], full: bool) -> None:
        """The other nodes' public tables, from ``PREFIX:listing`` as read (what changed;
        everything if ``full``)."""
        changed, gone = _delta({} if full else self._listing_raw, raw)
        self._listing_raw = raw
        if not changed and not gone and not full:
            return
        listings, listed = ({}, {}) if full else (dict(self.listings), dict(self.listed))
        for table_id in map(_text, gone):
            listings.pop(table_id, None)
            listed.pop(table_id, None)
        for key, value in changed.items():
            table_id, entry = _text(key), orjson.loads(value)
            if entry["n"] != self.name and entry["n"] in live:
                listings[table_id], listed[table_id] = entry["l"], entry["n"]
            else:
                listings.pop(table_id, None)
                listed.pop(table_id, None)
        self.listed = listed
        if listings != self.listings:
            self.listings = listings
            self.lobby.feed.changed()

    def _read_seated(self, raw: dict[bytes, bytes], live: Collection[str], full: bool) -> None:
        """Who sits where on every node, from ``PREFIX:seated`` as read (what changed;
        everything if ``full``); a player told ``unseated`` from a table is not seated there
        again by an entry its owner has not published anew yet (``unseated_at``)."""
        changed, gone = _delta({} if full else self._seated_raw, raw)
        self._seated_raw = raw
        if not changed and not gone and not full:
            return
        seated = {} if full else dict(self.seated)
        for user in map(_text, gone):
            seated.pop(user, None)
            self.unseated_at.pop(user, None)
        for key, value in changed.items():
            user = _text(key)
            table_id, _, node = _text(value).partition(" ")
            if self.unseated_at.get(user) == table_id:
                seated.pop(user, None)  # (its owner has not published it yet)
                continue
            self.unseated_at.pop(user, None)
            if node in live:
                seated[user] = table_id
            else:
                seated.pop(user, None)
        self.seated = seated

    def unseated(self, table_id: str, users: Iterable[str]) -> None:
        """``users`` sit at ``table_id`` no more (its match finished): forgotten there now,
        and in what ``PREFIX:seated`` says until its owner has published it."""
        for user in users:
            self.unseated_at[user] = table_id
            if self.seated.get(user) == table_id:
                del self.seated[user]

    def everyone_speaks(self, level: int) -> bool:
        """Whether every live node speaks the messages of ``level`` (``messages.SPEAKS``);
        not before the first read of who is live."""
        return bool(self.live) and len(self.speakers(level)) == len(self.live)

    def speakers(self, level: int) -> list[str]:
        """The live nodes that speak the messages of ``level``."""
        return [name for name, info in self.live.items() if info.get("speaks", 1) >= level]

    async def seated_table(self, username: str) -> str | None:
        """The table (on any node) where ``username`` sits, as the owners last said."""
        try:
            raw = await self.redis.hget(f"{self.prefix}:seated", username)
        except (RedisError, OSError):
            return self.seated.get(username)
        if raw is None:
            return None
        table_id = _text(raw).partition(" ")[0]
        return None if self.unseated_at.get(username) == table_id else table_id

    def remote_listing(self, local: Collection[str]) -> list[dict[str, Any]]:
        return [entry for t, entry in self.listings.items() if t not in local]

    def remote_creators(self, local: Iterable[str]) -> list[Creator]:
        """The creators of the other nodes' tables waiting for players (as they last
        published them), but those of the tables ``local`` (ours now: we know better)."""
        return [c for t, c in self.waiting.items() if t not in local]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _delta(
    before: dict[bytes, bytes], now: dict[bytes, bytes]
) -> tuple[dict[bytes, bytes], set[bytes]]:
    """What changed from ``before`` to ``now``: the entries new or changed, and the keys gone.
    (A comprehension comparing values: about half the time of the items' set difference,
    which makes a tuple of every entry; 0.4 ms for 8,000 entries.)"""
    known = before.get
    return {k: v for k, v in now.items() if known(k) != v}, set(before.keys() - now.keys())

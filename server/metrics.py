"""The server's Prometheus metrics: ``GET /metrics`` (docs/protocol.md, docs/deployment.md).

One ``Metrics`` per ``server.app.App``, with a ``CollectorRegistry`` of its own (never
``prometheus_client``'s global default one: tests run several servers in one process, and
each must count only its own). Every series carries the label ``node``, the server's name
(``[server] node``, by default ``hostname:port``), so the series of several nodes stay apart
whatever the scraper's own labels.

What is counted where, and what it costs:

- computed at scrape time from what the server holds anyway, nothing on the hot path:
  ``guobiao_connections``, ``guobiao_tables{state}`` (the lobby's summaries),
  ``guobiao_queue_players{ladder,mode}`` and ``guobiao_queue_longest_wait_seconds``
  (``Matchmaker.snapshot``), ``guobiao_slow_client_drops_total`` (``App.slow_drops``),
  ``guobiao_handoffs_total{way}`` (``serve --workers``: ``server.handoff``'s counts),
  ``guobiao_leases_held`` (cluster mode: the tables this node owns),
  ``guobiao_write_failures_total`` and ``guobiao_writes_failing`` (the store's account of its
  writes, ``server.db.write_health``, and the tables paused by theirs, as ``/healthz``),
  ``guobiao_actions_total`` (a plain int the tables add one to: the server is one event
  loop, so it needs no lock), and ``guobiao_tournaments{state}`` (one indexed query of the
  unfinished tournaments, made by ``scrape`` before the registry is read);
- observed as they happen: ``guobiao_action_update_seconds`` (once per player action that
  shows, in the table's task), ``guobiao_store_commit_seconds{what}`` (once per database
  transaction of actions, of a finished hand, of a finished match),
  ``guobiao_rate_limited_total{limit}`` (once per refusal),
  ``guobiao_table_refusals_total{reason}`` (once per new table refused) and
  ``guobiao_empty_tables_closed_total`` (once per table closed with nobody at it);
- sampled: ``guobiao_event_loop_lag_seconds`` (how late a timer set ``LAG_EVERY`` seconds
  ahead fired: everything the server does waits that long behind whatever held the loop)
  and ``guobiao_gc_pause_seconds{generation}`` (every garbage collection of the process,
  timed by a ``gc.callbacks`` hook: ``start``/``stop`` around one collection);
- the standard ``process_*`` series (CPU seconds, memory, open files), read from ``/proc``
  at scrape time: CPU per action is ``rate(process_cpu_seconds_total[1m]) /
  rate(guobiao_actions_total[1m])``.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections import Counter as Tally
from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram, ProcessCollector
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

log = logging.getLogger("guobiao.metrics")

TABLE_STATES = ("waiting", "playing", "finished")
TOURNAMENT_STATES = ("registering", "running")  # finished ones only grow: not a gauge
STORE_WRITES = ("actions", "hand", "match")
RATE_LIMITS = ("messages", "accounts")
# Why a new table was refused (``server.lobby.Lobby._check_room``): a player's account or
# address has as many waiting tables as allowed, the players' share of the server is full,
# the whole server is full (a table of the queue or a tournament).
TABLE_REFUSALS = ("account", "address", "server", "reserve")

# Seconds. The load bar is a p99 under 100 ms: finer below it, coarser above.
UPDATE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
# The loop's lag and the collector's pauses: from a tenth of a millisecond (a young
# collection) to the seconds a full one of a big heap can take.
PAUSE_BUCKETS = (0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5)
LAG_EVERY = 0.25  # seconds between two samples of the loop's lag
COMMIT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)


class _Stated(Protocol):
    @property
    def state(self) -> str: ...


class Listed(Protocol):
    """The tables as the lobby last heard of them (``server.lobby.Lobby.summaries``)."""

    @property
    def summaries(self) -> Mapping[str, _Stated]: ...


class Queued(Protocol):
    """The ladder queue (``server.ladder.queue.Matchmaker.snapshot``)."""

    def snapshot(self) -> dict[str, Any]: ...


class Leased(Protocol):
    """The other nodes (``server.nodes.Nodes``): how many table leases this node holds."""

    @property
    def leases_held(self) -> int: ...


class Observed(Protocol):
    """The running server as its metrics read it at scrape time (``server.app.App``)."""

    @property
    def node(self) -> str:
        """The ``node`` label: ``[server] node``, or ``hostname:port``."""

    @property
    def connections(self) -> Sized: ...

    @property
    def lobby(self) -> Listed | None: ...

    @property
    def matchmaker(self) -> Queued | None: ...

    @property
    def nodes(self) -> Leased: ...

    @property
    def slow_drops(self) -> int: ...

    @property
    def handoff(self) -> Handing | None: ...

    @property
    def write_failures(self) -> int:
        """The writes the database failed since the server started (``WriteHealth``)."""

    @property
    def writes_failing(self) -> bool:
        """Whether the server's writes fail now, as ``/healthz`` says it."""


class Handing(Protocol):
    """A worker's end of the connections handed between workers (``server.handoff``)."""

    handed: int
    adopted: int


class TournamentSource(Protocol):
    """Where the unfinished tournaments are (``server.tournaments.store.TournamentStore``)."""

    async def unfinished(self) -> Sequence[_Stated]: ...


class Metrics:
    """The metrics of one server; ``registry`` is what ``GET /metrics`` exposes.

    The hot path touches three things: ``actions`` (``+= 1`` per applied action),
    ``update_seconds.observe`` (per player action whose update went out) and
    ``commit_seconds`` (per database write). The rest is read from ``server`` when scraped.
    """

    def __init__(self, server: Observed) -> None:
        self.server = server
        self.actions = 0  # actions applied by every table of this server, since it started
        self.tournaments: dict[str, int] | None = None  # by state, as ``scrape`` last found
        own = CollectorRegistry(auto_describe=False)  # the series before the node label
        self.update_seconds = Histogram(
            "guobiao_action_update_seconds",
            "Seconds from a player's action message being decoded to the update it caused "
            "being queued for every connection at the table (table queue wait, store "
            "commit, rules, encoding). Actions whose update is held (an answer inside a "
            "claim window) are not observed.",
            buckets=UPDATE_BUCKETS,
            registry=own,
        )
        commit = Histogram(
            "guobiao_store_commit_seconds",
            "Seconds a database write transaction took, by what it stored: a group commit "
            "of appended actions, a finished hand, a finished match (with its ratings).",
            ["what"],
            buckets=COMMIT_BUCKETS,
            registry=own,
        )
        self._commits = {what: commit.labels(what) for what in STORE_WRITES}
        limited = Counter(
            "guobiao_rate_limited",
            "Requests refused with rate_limited: messages over a connection's message "
            "limit, account requests (login, register, guest) over the account limits.",
            ["limit"],
            registry=own,
        )
        self.rate_limited = {limit: limited.labels(limit) for limit in RATE_LIMITS}
        refused = Counter(
            "guobiao_table_refusals",
            "New tables refused, by reason: account and address (too_many_tables: that many "
            "tables a player created wait for players), server (table_full: the players' "
            "share of max_tables is taken), reserve (a table of the ladder queue or a "
            "tournament refused: max_tables is reached).",
            ["reason"],
            registry=own,
        )
        self.table_refusals = {reason: refused.labels(reason) for reason in TABLE_REFUSALS}
        self.empty_tables_closed = Counter(
            "guobiao_empty_tables_closed",
            "Tables closed because they waited [timers] empty_table_seconds for players "
            "with no person at them.",
            registry=own,
        )
        self.loop_lag = Histogram(
            "guobiao_event_loop_lag_seconds",
            f"How late a timer set {LAG_EVERY:g} s ahead fired (sampled every {LAG_EVERY:g} s): "
            "how long the server's event loop was held by one thing (a burst of messages, "
            "a garbage collection) while everything else waited.",
            buckets=PAUSE_BUCKETS,
            registry=own,
        )
        pauses = Histogram(
            "guobiao_gc_pause_seconds",
            "Seconds each garbage collection of the process took, by generation (0, 1: the "
            "young ones; 2: a full one). The server stands still meanwhile.",
            ["generation"],
            buckets=PAUSE_BUCKETS,
            registry=own,
        )
        self._pauses = [pauses.labels(str(generation)) for generation in range(3)]
        self._collecting = 0.0  # perf_counter at the start of the collection under way
        self._watcher: asyncio.Task[None] | None = None
        own.register(_Scraped(self))
        ProcessCollector(registry=own)
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(_Node(own, lambda: self.server.node))

    # The table's observer (``server.table.TableObserver``): what each table tells.

    def action_applied(self) -> None:
        """A table applied one stored action."""
        self.actions += 1

    def update_sent(self, seconds: float) -> None:
        """A player's action showed, its update sent ``seconds`` after it came in."""
        self.update_seconds.observe(seconds)

    def empty_table_closed(self) -> None:
        """A table closed itself: nobody sat at it for ``empty_table_seconds``."""
        self.empty_tables_closed.inc()

    def start(self) -> None:
        """Start sampling the loop's lag and timing the collector (``stop`` undoes it)."""
        gc.callbacks.append(self._collected)
        self._watcher = asyncio.create_task(self._watch_loop(), name="loop lag")

    async def stop(self) -> None:
        if self._collected in gc.callbacks:
            gc.callbacks.remove(self._collected)
        if self._watcher is not None:
            self._watcher.cancel()
            await asyncio.gather(self._watcher, return_exceptions=True)
            self._watcher = None

    async def _watch_loop(self) -> None:
        clock = asyncio.get_running_loop().time
        while True:
            due = clock() + LAG_EVERY
            await asyncio.sleep(LAG_EVERY)
            self.loop_lag.observe(max(0.0, clock() - due))

    def _collected(self, phase: str, info: dict[str, int]) -> None:
        """``gc.callbacks``: around every collection, in whichever thread runs it."""
        if phase == "start":
            self._collecting = time.perf_counter()
        elif self._collecting:
            self._pauses[info["generation"]].observe(time.perf_counter() - self._collecting)
            self._collecting = 0.0

    def commit_seconds(self, what: str, seconds: float) -> None:
        """A database write of ``what`` (``STORE_WRITES``) committed in ``seconds``
        (``server.db.store.Store.on_commit``)."""
        self._commits[what].observe(seconds)

    async def scrape(
        self, accept: str | None, tournaments: TournamentSource | None = None
    ) -> tuple[bytes, str]:
        """The exposition (body, content type) in the format the ``Accept`` header
        ``accept`` asks for: the Prometheus text format, or OpenMetrics if asked for.
        ``tournaments`` are counted first; if that fails, the scrape goes on without them."""
        self.tournaments = None
        if tournaments is not None:
            try:
                self.tournaments = dict(Tally(t.state for t in await tournaments.unfinished()))
            except Exception:  # a failing database must not fail the whole scrape
                log.exception("counting the tournaments for /metrics failed")
        encoder, content_type = choose_encoder(accept or "")
        return encoder(self.registry), content_type


class _Scraped(Collector):
    """The series computed when scraped, from what the server holds."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterable[Metric]:
        metrics = self.metrics
        server = metrics.server
        yield GaugeMetricFamily(
            "guobiao_connections", "Websocket connections open.", value=len(server.connections)
        )
        tables = GaugeMetricFamily(
            "guobiao_tables",
            "Live tables by state (finished: until its last player leaves).",
            labels=["state"],
        )
        lobby = server.lobby
        found = Tally(s.state for s in lobby.summaries.values()) if lobby else Tally[str]()
        for state in TABLE_STATES:
            tables.add_metric([state], found.get(state, 0))
        yield tables
        yield CounterMetricFamily(
            "guobiao_actions",
            "Actions applied at this server's tables (players', bots' and timeouts'); "
            "actions per second is rate() of it.",
            value=metrics.actions,
        )
        yield CounterMetricFamily(
            "guobiao_slow_client_drops",
            "Connections closed because their outgoing queue was full (1013 too slow).",
            value=server.slow_drops,
        )
        handoff = server.handoff
        handed = CounterMetricFamily(
            "guobiao_handoffs",
            "Connections handed to the worker that runs their table (way=given) or taken "
            "from another worker (way=taken): serve --workers only.",
            labels=["way"],
        )
        handed.add_metric(["given"], handoff.handed if handoff else 0)
        handed.add_metric(["taken"], handoff.adopted if handoff else 0)
        yield handed
        yield CounterMetricFamily(
            "guobiao_write_failures",
            "Database writes that failed: the database full, read-only, locked or "
            "unreachable (not a write refused for what it asked, a name taken). Any write: "
            "a table's move (each try again too), a login, a match's end. /healthz says "
            "the last one's time and reason.",
            value=server.write_failures,
        )
        yield GaugeMetricFamily(
            "guobiao_writes_failing",
            "1 while the server's writes fail (the last one failed, or a table is paused "
            "by its own: /healthz's writes failing), 0 once one works again.",
            value=int(server.writes_failing),
        )
        yield GaugeMetricFamily(
            "guobiao_leases_held",
            "Table leases this node holds (cluster mode: the tables it owns; one process: 0).",
            value=server.nodes.leases_held,
        )
        players = GaugeMetricFamily(
            "guobiao_queue_players",
            "Players waiting in the ladder queue, by ladder and mode (rated or casual).",
            labels=["ladder", "mode"],
        )
        longest = GaugeMetricFamily(
            "guobiao_queue_longest_wait_seconds",
            "How long the longest-waiting player of each queue has waited.",
            labels=["ladder", "mode"],
        )
        matchmaker = server.matchmaker
        for queue in matchmaker.snapshot()["queues"] if matchmaker else []:
            labels = [queue["ladder"], "casual" if queue["casual"] else "rated"]
            players.add_metric(labels, queue["size"])
            longest.add_metric(labels, queue["longest_wait_seconds"])
        yield players
        yield longest
        if metrics.tournaments is not None:
            tournaments = GaugeMetricFamily(
                "guobiao_tournaments", "Unfinished tournaments by state.", labels=["state"]
            )
            for state in TOURNAMENT_STATES:
                tournaments.add_metric([state], metrics.tournaments.get(state, 0))
            yield tournaments


class _Node(Collector):
    """Every series of ``inner`` with the label ``node`` added, its value asked of
    ``node`` at each scrape (a server listening on port 0 knows its port only once it
    listens)."""

    def __init__(self, inner: CollectorRegistry, node: Callable[[], str]) -> None:
        self.inner = inner
        self.node = node

    def collect(self) -> Iterable[Metric]:
        node = self.node()
        for family in self.inner.collect():  # (each collect makes its families anew)
            family.samples = [s._replace(labels={**s.labels, "node": node}) for s in family.samples]
            yield family

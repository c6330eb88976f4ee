"""The lobby: the server's live tables, created, listed, restored and set aside.

``Lobby`` creates each ``server.table.Table`` with what it needs (its settings, the
timers, the preset's rules, the store) and is its ``TableHost``: it keeps its own copy
of each table's ``TableSummary``, pushed by the table's task, so listing the tables and
knowing who sits where (``listing``, ``table_of``) never read a table's match or seats
from a connection's task. On restart ``restore`` rebuilds each unfinished match by
replaying its stored actions through the engine (``replay_log``); a table whose log does
not replay is set aside (``set_aside``, shown by ``/healthz``) and the others resume.
``LobbyFeed`` sends the listing to the connections that subscribed to it
(``subscribe_lobby``) whenever it changes, at most once a second.

A player's ``create_table`` names its ``Creator`` (account and client address): the lobby
keeps who created each table still waiting for players, and refuses a new one
(``too_many_tables``) past ``[limits] waiting_tables_per_account`` or
``waiting_tables_per_address`` (in cluster mode counting the other nodes' waiting tables too, as
they last published them). Players' tables may fill ``max_tables`` only up to its reserve
(``LimitsSection.casual_tables``): the rest is for the tables the ladder queue and the
tournaments create (no creator), so those are made whatever players did. A table made
without its four seated closes itself once it has waited ``[timers] empty_table_seconds`` with
no person at it (``server.table``).

A tournament creates its tables here too, with their own settings (``create``'s ``ends_at``,
``seed``, ``reveals``, ``watchable``, ``spectator_delay_seconds``, ``tournament``: stored
with the table and restored with it), and hears of each table whose match finished
(``on_table_finished``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import secrets
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from engine.match import MATCH_HANDS, Match, ReplayError, check_match_hands
from engine.rules import RulesError, RuleSet, rule_set_from_dict
from server.config import Config
from server.db.store import ActionRow, Conflict, MatchRow, TableRow
from server.ladder.store import LadderStore
from server.messages.outbound import MatchEnd, TableInfo, Tables
from server.metrics import Metrics
from server.nodes import Creator, Nodes, OneNode
from server.protocol import encode
from server.table import (
    HUMAN,
    Lease,
    LobbyError,
    Seat,
    Table,
    TableSettings,
    TableStore,
    TableSummary,
    listed,
)

log = logging.getLogger("guobiao.lobby")
# Players told their match's end when they come back, at most (``Lobby.tell_later``).
UNTOLD_MAX = 1000

HOOK_SECONDS = 10.0  # how long shutdown waits for the on_table_finished calls still running


class LobbyStore(TableStore, Protocol):
    """The database as the lobby uses it: what its tables use, what restore reads, and the
    ladder (the farm limit)."""

    ladder: LadderStore

    async def load_open_tables(self) -> list[TableRow]: ...

    async def get_table(self, table_id: str) -> TableRow | None: ...

    async def table_matches(self, table_id: str) -> list[MatchRow]: ...

    async def match_actions(self, match_id: int) -> list[ActionRow]: ...

    async def match_hands(self, match_id: int) -> list[dict[str, Any]]: ...

    async def rating_changes(self, match_id: int) -> list[dict[str, Any]]: ...


# ------------------------------------------------------------------ replay ---


@dataclass(frozen=True, slots=True)
class SetAside:
    """A stored table that restore could not rebuild, and why (``/healthz``)."""

    table: str
    match: int | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "match": self.match, "reason": self.reason}


def stored_rules(stored: MatchRow, presets: dict[str, RuleSet]) -> RuleSet:
    """The rules a stored match (a ``MatchRow``) was played with: its own options, else
    its preset; ``LobbyError`` (``corrupt_match``) if neither is usable."""
    if stored.rule_options is not None:
        try:
            return rule_set_from_dict(stored.rule_options)
        except RulesError as exc:
            raise LobbyError("corrupt_match", f"match {stored.id}: {exc}") from None
    if stored.rules not in presets:
        raise LobbyError(
            "corrupt_match", f"match {stored.id}: unknown rule preset {stored.rules!r}"
        )
    return presets[stored.rules]


def replay_log(
    stored: MatchRow, actions: Iterable[ActionRow], presets: dict[str, RuleSet]
) -> Match:
    """The match ``stored`` (a ``MatchRow``) rebuilt from its action log (``ActionRow``s in
    ``seq`` order) by ``Match.replay``. ``LobbyError`` (``corrupt_match``) naming the first
    action that does not replay and why: a gap in the numbering, a hand out of order, an
    illegal action; or what is wrong with its stored rules or length."""
    rows = list(actions)
    for expected, row in enumerate(rows, 1):
        if row[0] != expected:
            raise LobbyError(
                "corrupt_match",
                f"the log goes from action {expected - 1} to {row[0]} "
                f"({row[0] - expected} missing)",
            )
    rules = stored_rules(stored, presets)
    try:
        hands = check_match_hands(stored.hands_planned)
    except ValueError as exc:
        raise LobbyError("corrupt_match", f"match {stored.id}: {exc}") from None
    try:
        return Match.replay(stored.seed, rules, [r.played for r in rows], stored.id, hands=hands)
    except ReplayError as exc:
        raise LobbyError("corrupt_match", f"action {exc.line} does not replay: {exc.why}") from None


async def finished_refusal(
    store: LobbyStore, table_id: str, username: str | None
) -> LobbyError | None:
    """What ``username`` is refused with when she asks for ``table_id``, a table no node
    runs, if its match finished there and she sat at it: ``table_finished``, with the
    table's last match (she comes back to a table gone: a reload after the end, a restart
    since, a link kept). None for anyone else, who still hears only that there is no such
    table (a private or tournament table's end is not a stranger's to learn), and None if
    the database cannot say (a refusal then, as before). Whichever node answers her, her
    own or (cluster mode) one her message was relayed to, answers so."""
    if username is None:
        return None
    try:
        row = await store.get_table(table_id)
        if row is None or row.state != "finished" or username not in row.seats:
            return None
        matches = await store.table_matches(table_id)
    except Exception:  # the refusal stands without its match
        log.exception("looking up table %s's last match failed", table_id)
        return None
    ended = [m.id for m in matches if m.ended_at is not None]
    if not ended:
        return None
    return LobbyError(
        "table_finished",
        f"table {table_id} is gone: its match {ended[-1]} is over",
        table=table_id,
        match=ended[-1],
    )


# -------------------------------------------------------------------- feed ---

FEED_SECONDS = 1.0  # a subscriber gets at most one unsolicited ``tables`` message this often


class Subscriber(Protocol):
    """A connection as the feed sees it."""

    def send(self, text: str) -> None:
        """Queue ``text`` for the client (never blocks)."""


class LobbyFeed:
    """The live lobby: ``listing`` sent as a ``tables`` message to every subscriber when it
    changes. Changes are coalesced: the first goes out at once, the next ones together at
    most once every ``seconds``, always the latest listing, and a subscriber never gets a
    listing the same as the last one it got. With no subscriber a change costs nothing."""

    def __init__(
        self, listing: Callable[[], list[dict[str, Any]]], seconds: float = FEED_SECONDS
    ) -> None:
        self.listing = listing
        self.seconds = seconds
        self.subscribers: dict[Subscriber, str] = {}  # -> the last listing it got, as sent
        self.due: asyncio.TimerHandle | None = None  # the next send, when one is due
        self.sent_at = -math.inf  # loop time of the last send

    def subscribe(self, peer: Subscriber, reply_to: str | int | None) -> None:
        """Subscribe ``peer`` and answer it with the listing now."""
        listing = Tables(self.listing())
        self.subscribers[peer] = encode(listing)
        peer.send(encode(listing, reply_to))

    def unsubscribe(self, peer: Subscriber) -> None:
        self.subscribers.pop(peer, None)

    def changed(self) -> None:
        """The listing may have changed: send it as soon as the pace allows."""
        if not self.subscribers or self.due is not None:
            return
        loop = asyncio.get_running_loop()
        self.due = loop.call_later(max(0.0, self.sent_at + self.seconds - loop.time()), self._send)

    def _send(self) -> None:
        self.due = None
        self.sent_at = asyncio.get_running_loop().time()
        text = encode(Tables(self.listing()))
        for peer, last in list(self.subscribers.items()):
            if last != text:
                self.subscribers[peer] = text
                peer.send(text)

    def close(self) -> None:
        """Stop: nothing more is sent."""
        if self.due is not None:
            self.due.cancel()
            self.due = None
        self.subscribers.clear()


# ------------------------------------------------------------------- lobby ---


class Lobby:
    """All live tables of the server, and the host of each (``server.table.TableHost``)."""

    def __init__(self, config: Config, store: LobbyStore, metrics: Metrics | None = None) -> None:
        self.config = config
        self.store = store
        self.metrics = metrics  # the server's, handed to each table (server/metrics.py)
        self.tables: dict[str, Table] = {}  # where to put a table's inputs
        self.summaries: dict[str, TableSummary] = {}  # as the tables last pushed them
        self.seated: dict[str, str] = {}  # username -> the unfinished table she sits at
        self.creators: dict[str, Creator] = {}  # a player's table still waiting -> its creator
        self.creating: list[Creator | None] = []  # the tables being made (``create``)
        self.presets: dict[str, RuleSet] = config.rule_presets()
        self.claim_windows: dict[str, int] = config.claim_windows()  # presets' own windows
        self.set_aside: dict[str, SetAside] = {}  # tables restore could not rebuild
        # The players away when their match ended (a lost connection; a crash as its last
        # hand ended, the restart finishing it): what to tell each when she comes back
        # (``tell_later``), the oldest first.
        self.untold: dict[str, list[str]] = {}
        self.feed = LobbyFeed(self.listing)  # subscribe_lobby
        # The length of the last listing a connection was sent on request: what the next one
        # is charged before it is made (``Connection._listing_allowed``).
        self.listing_bytes = 0
        # Called (and awaited, in a task of its own; an exception is logged) with each table
        # whose match was stored as finished, and with each table ``restore`` finds finished
        # (its match ended just before a crash): the tournaments set it, before ``restore``.
        self.on_table_finished: Callable[[Table], Awaitable[None]] | None = None
        self.hooks: set[asyncio.Task[None]] = set()  # the calls of it running
        # The other nodes (``server.nodes``): none for a server alone; in cluster mode the
        # node (server/cluster/node.py), which leases each table this lobby creates or
        # adopts, and knows the other nodes' tables and players.
        self.nodes: Nodes = OneNode()

    # -------------------------------------------------- the tables' host ---

    def seated_at(self, username: str) -> str | None:
        found = self.seated.get(username)
        if found is None:
            found = self.nodes.seated_elsewhere(username)  # at another node's table
        return found

    def table_changed(self, summary: TableSummary) -> None:
        before = self.summaries.get(summary.table)
        if summary.state == "finished" and (before is None or before.state != "finished"):
            table = self.tables.get(summary.table)
            if table is not None:  # (its state is finished once its match is stored so)
                self._table_finished(table)
            # The other nodes hear it now, before the players are told the match ended.
            self.nodes.match_over(summary.table, (before or summary).players)
        if before is not None:
            for name in before.players:
                if self.seated.get(name) == summary.table:
                    del self.seated[name]
        # A player's table no longer waiting: its creator may make another.
        started = summary.state != "waiting" and self.creators.pop(summary.table, None) is not None
        self.summaries[summary.table] = summary
        if summary.state != "finished":
            for name in summary.players:
                self.seated[name] = summary.table
        if before is None or before.players != summary.players or started:
            self.nodes.lobby_changed()
        if not summary.private:  # a private table is never listed
            self.feed.changed()

    def table_done(self, table_id: str) -> None:
        table = self.tables.get(table_id)
        if table is not None:
            self.forget(table)

    def _table_finished(self, table: Table) -> None:
        """Call ``on_table_finished`` for ``table``, in a task: the table's task, which
        tells the lobby, never waits for it."""
        hook = self.on_table_finished
        if hook is None:
            return

        async def call() -> None:
            try:
                await hook(table)
            except Exception:
                log.exception("on_table_finished failed for table %s", table.id)

        task = asyncio.create_task(call(), name=f"table-finished-{table.id}")
        self.hooks.add(task)
        task.add_done_callback(self.hooks.discard)

    async def rated_refusal(self, usernames: Sequence[str]) -> str | None:
        limit = self.config.ladder.same_four_per_day
        if not limit:
            return None
        since = datetime.now(UTC) - timedelta(days=1)
        played = await self.store.ladder.same_four_names(usernames, since)
        if played < limit:
            return None
        return (
            f"{', '.join(usernames)} have started {played} rated matches together in the last "
            f"24 hours, the most the server allows ({limit}); play with others, or casually"
        )

    # ------------------------------------------------------------ lookups ---

    def _new_id(self) -> str:
        # Several nodes pick ids at once in cluster mode: longer ones (a lease on each new id,
        # ``claim_new``, refuses one taken by a live table).
        size = self.nodes.id_bytes
        while True:
            table_id = "t" + secrets.token_hex(size)
            if table_id not in self.tables:
                return table_id

    def listing(self) -> list[dict[str, Any]]:
        """The public unfinished tables (and those whose delayed spectators have not seen
        their match end yet), each as its table last told the lobby anyone may be shown it
        (``TableSummary.listed``)."""
        local = [
            s.listed
            for s in self.summaries.values()
            if s.listed is not None and s.table in self.tables
        ]
        # As the others last published them: their ``listed`` entries (held back here too, as
        # a node of an earlier release, in a rolling restart, published its tables' own).
        local.extend(listed(entry) for entry in self.nodes.remote_listing(self.tables))
        return local

    def get(self, table_id: str) -> Table:
        table = self.tables.get(table_id)
        if table is None:
            raise LobbyError("no_such_table", f"there is no table {table_id!r}")
        return table

    def stalled(self, lost: float) -> None:
        """The server did not run for ``lost`` seconds (``server.stalls``): every table's
        clocks move on by that much, as for a database pause."""
        for table in self.tables.values():
            table.moved_on(lost)

    def tell_later(self, username: str, frames: list[str]) -> None:
        """``username`` was away when her match ended: ``frames`` are for her when she comes
        back (``untold_end``); the oldest are forgotten past ``UNTOLD_MAX`` (the match's page
        has its end always)."""
        self.untold.pop(username, None)
        self.untold[username] = frames
        while len(self.untold) > UNTOLD_MAX:
            del self.untold[next(iter(self.untold))]

    def untold_end(self, username: str) -> list[str]:
        """The end of ``username``'s last match if she was away when it ended (``untold``),
        once; else nothing."""
        return self.untold.pop(username, [])

    def table_of(self, username: str | None) -> Table | None:
        """The unfinished table where ``username`` sits, if any."""
        table_id = self.seated.get(username) if username is not None else None
        return self.tables.get(table_id) if table_id is not None else None

    async def create(
        self,
        rules: str | None,
        turn_seconds: int | None,
        private: bool,
        *,
        claim_window_ms: int | None = None,
        hands: int | None = None,
        aids: bool = True,
        rated: bool = False,
        seated: Sequence[str] | None = None,
        ends_at: datetime | None = None,
        seed: int | None = None,
        reveals: bool = True,
        watchable: bool = True,
        spectator_delay_seconds: int = 0,
        tournament: tuple[int, int, int] | None = None,
        creator: Creator | None = None,
    ) -> Table:
        """A new table, started; ``LobbyError`` (``bad_message``) naming a setting outside
        its limits; ``already_seated`` naming the table where ``creator`` sits, if she sits
        at one still unfinished (she could not sit at this one); ``too_many_tables`` or
        ``table_full`` when there is no room for it (``_check_room``). ``creator``: the
        player whose ``create_table`` it is (None: the queue's and tournaments' tables,
        made with their players seated).
        ``hands``: its match's length in deals (None: a whole match, 16).
        ``rated``: a table of the ladder of its preset (``no_such_ladder`` if it has none).
        ``seated``: four usernames (or ``"bot:NAME"``) already seated (the queue's tables, a
        tournament's): its match starts at once, and each player's connection attaches with
        a ``join_table``.

        A tournament's settings (``server.table``'s docstring), all kept over a restart:
        ``ends_at`` (UTC) the time cap, after which no hand is dealt (the match finishes
        with the scores so far; it has at least one hand); ``seed`` the match's seed,
        0 <= seed < 2**63 (the same at every table of a duplicate session: the same walls);
        ``reveals`` false: no ``reveal`` messages (``server.fairness.hand_reveals`` gives the
        seeds afterwards); ``watchable`` false: ``watch`` is refused (``not_watchable``);
        ``spectator_delay_seconds`` (0..3600) how late spectators see the table;
        ``tournament`` (tournament id, session number, table number), shown in its summary.
        """
        timers = self.config.timers
        if rules is None:  # ("" is no preset's name: refused below, as any unknown name)
            rules = self.config.rules.preset
        if claim_window_ms is not None:
            window = claim_window_ms
        else:
            window = self.claim_windows.get(rules, timers.claim_window_ms)
        settings = TableSettings(
            rules=rules,
            turn_seconds=timers.turn_seconds if turn_seconds is None else turn_seconds,
            private=private,
            claim_window_ms=window,
            hands=MATCH_HANDS if hands is None else hands,
            aids=aids,
            rated=rated,
            ends_at=ends_at,
            seed=seed,
            reveals=reveals,
            watchable=watchable,
            spectator_delay_seconds=spectator_delay_seconds,
            tournament=tournament,
        )
        settings.validate(
            presets=self.presets,
            turn_seconds=(timers.min_turn_seconds, timers.max_turn_seconds),
            ladders=self.config.ladder_names,
        )
        sits = self.seated_at(creator.username) if creator is not None else None
        if sits is not None:
            raise LobbyError("already_seated", f"you already sit at table {sits}", table=sits)
        self._check_room(creator)
        if self.nodes.draining:
            raise LobbyError(
                "server_shutdown", "this node is handing its tables over; reconnect soon"
            )
        if private:
            settings = dataclasses.replace(settings, invite_code=secrets.token_urlsafe(6))
        table = Table(
            id=self._new_id(),
            settings=settings,
            preset=self.presets[rules],
            timers=timers,
            bot_levels=self.config.bots,
            store=self.store,
            host=self,
            observer=self.metrics,
            stamp_updates=self.config.server.stamp_updates,
            # Made to wait for players: closed if none sits at it (the queue's and
            # tournaments' tables are made with their four seated).
            close_when_empty=timers.empty_table_seconds if seated is None else 0.0,
        )
        if seated is not None:
            grace = timers.restart_grace_seconds  # time to attach before the seat is played
            table.seats = [Seat.from_label(name, grace) for name in seated]
        self.creating.append(creator)  # counted by ``_check_room`` until it is made, or not
        try:
            await self._store_new(table)
        finally:
            self.creating.remove(creator)
        if creator is not None:
            self.creators[table.id] = creator
        self.tables[table.id] = table
        table.start()
        return table

    async def _store_new(self, table: Table) -> None:
        """Store the new ``table``'s row; first take its lease (in cluster mode: under
        another id if its own is taken) and give it its store (the fenced one) and lease."""
        while (claimed := await self.nodes.claim_new(table.id, self.store)) is None:
            table.id = self._new_id()
        table.store, table.lease = claimed
        # If the database fails, no table was created (and, in cluster mode, the lease
        # taken for it goes at once, not when the keeper finds it unused).
        try:
            await self.store.save_table(table.row())
        except BaseException:
            self.nodes.table_done(table.id)
            raise

    def _check_room(self, creator: Creator | None) -> None:
        """``LobbyError`` if no table may be made now: ``too_many_tables`` if ``creator`` (a
        player's ``create_table``) has as many tables waiting for players as ``[limits]``
        allows one account, or their address has as many as it allows one address (in
        cluster mode the other nodes' waiting tables count too, as last published);
        ``table_full`` if the server holds its share of players' tables
        (``LimitsSection.casual_tables``) or, for the queue's and tournaments' tables,
        ``max_tables``. Each refusal is counted (``Metrics.table_refusals``)."""
        limits = self.config.limits
        holding = len(self.tables) + len(self.creating)
        if creator is None:
            if holding >= limits.max_tables:
                self._refused("reserve")
                raise LobbyError(
                    "table_full",
                    f"the server holds {limits.max_tables} tables, the most it may",
                )
            return
        waiting = [*self.creators.values(), *(c for c in self.creating if c is not None)]
        waiting.extend(self.nodes.remote_creators(self.tables))
        account = limits.waiting_tables_per_account
        mine = sum(c.username == creator.username for c in waiting)
        if account and mine >= account:
            self._refused("account")
            raise LobbyError(
                "too_many_tables",
                f"you have created {mine} tables that wait for players, the most one account "
                "may: sit at one, or wait until one starts or closes",
            )
        address = limits.waiting_tables_per_address
        near = sum(c.address == creator.address for c in waiting)
        if address and near >= address:
            self._refused("address")
            raise LobbyError(
                "too_many_tables",
                f"{near} tables created from your address ({creator.address}) wait for "
                "players, the most one address may: sit at one, or wait until one starts "
                "or closes",
            )
        if holding >= limits.casual_tables:
            self._refused("server")
            raise LobbyError(
                "table_full",
                f"the server holds {holding} tables, as many as players may create "
                f"({limits.casual_tables}; the rest of its {limits.max_tables} are kept for "
                "the ladder queue and tournaments): try again later, or join a table",
            )

    def _refused(self, reason: str) -> None:
        if self.metrics is not None:
            self.metrics.table_refusals[reason].inc()

    def forget(self, table: Table, *, moved: bool = False) -> None:
        """Drop ``table``, its summary and its seats (it finished, or it is set aside; in
        cluster mode, ``moved``: another node owns it now)."""
        if not moved and table.id in self.tables:
            self.nodes.table_done(table.id)
        self.tables.pop(table.id, None)
        self.creators.pop(table.id, None)
        summary = self.summaries.pop(table.id, None)
        for name in summary.players if summary is not None else ():
            if self.seated.get(name) == table.id:
                del self.seated[name]
        if summary is not None and not summary.private:
            self.feed.changed()

    async def restore(self) -> int:
        """Rebuild the open tables and replay unfinished matches from the database.

        Table by table: one that cannot be rebuilt (its log does not replay, its rules are
        unknown, any error) is set aside, with the reason in ``set_aside`` and the log, its
        stored rows kept as they are, and every other table resumes."""
        restored = 0
        matches = {m.table_id: m for m in await self.store.unfinished_matches()}
        for row in await self.store.load_open_tables():
            stored = matches.get(row.id)
            try:
                table = await self._restore_table(row, stored)
                if table.state == "finished":
                    await self.store.save_table(table.row())  # it ended just before a crash
                    self._table_finished(table)  # (its hook may not have been called)
                    ended = await self.stored_end(table.id)  # (stored, not replayed)
                    for seat in table.seats:
                        if ended is not None and seat is not None and seat.kind == HUMAN:
                            self.tell_later(seat.name, ended)
                    continue
            except Exception as exc:
                reason = exc.reason if isinstance(exc, LobbyError) else repr(exc)
                match_id = stored.id if stored is not None else None
                self.set_aside[row.id] = SetAside(row.id, match_id, reason)
                log.error(
                    "table %s (match %s) set aside, not restored: %s (its stored rows are "
                    "kept; 'guobiao db check' lists what does not replay)",
                    row.id,
                    match_id,
                    reason,
                )
                continue
            self.tables[table.id] = table
            table.start()
            restored += 1
        return restored

    async def adopt(
        self, table_id: str, store: TableStore, lease: Lease | None = None
    ) -> Table | None:
        """Take over the stored table ``table_id`` (cluster mode: its lease and fencing
        token are ours, ``store`` writes with that token, ``lease`` says whether this node
        still holds the table): rebuilt as ``restore`` rebuilds it, and started. None if it
        has finished (a match that ended just before its owner died is stored so here) or
        it cannot be rebuilt (set aside, as ``restore`` does)."""
        row = await self.store.get_table(table_id)
        if row is None or row.state == "finished":
            return None
        played = await self.store.table_matches(table_id)
        stored = played[-1] if played and played[-1].ended_at is None else None
        try:
            table = await self._restore_table(row, stored, store, lease)
            if table.state == "finished":
                await store.save_table(table.row())
                self._table_finished(table)
                return None
        except Exception as exc:
            reason = exc.reason if isinstance(exc, LobbyError) else repr(exc)
            match_id = stored.id if stored is not None else None
            self.set_aside[table_id] = SetAside(table_id, match_id, reason)
            log.error("table %s (match %s) set aside, not adopted: %s", table_id, match_id, reason)
            return None
        self.tables[table.id] = table
        table.start()
        return table

    async def stored_end(self, table_id: str) -> list[str] | None:
        """The end of ``table_id``'s match as its owner told its players, from the database:
        the table's summary (``finished``) and its ``match_end``, encoded. For the players
        of a node that was stopped while another finished the match (cluster mode: no node
        runs the table any more, and nobody told them). None unless the table's last match
        is stored as finished."""
        row = await self.store.get_table(table_id)
        played = await self.store.table_matches(table_id) if row is not None else []
        match = played[-1] if played else None  # (stored before the row says it finished)
        if row is None or match is None or match.final_scores is None:
            return None  # (not finished; or closed with nobody at it: no match to end)
        scores = list(match.final_scores)
        settings = TableSettings.from_row(
            row,
            claim_window_ms=self._claim_window(row),
            hands=match.hands_planned,
            rated=match.rated,
        )
        summary = settings.summary(
            table_id,
            rule_options=stored_rules(match, self.presets).to_dict(),
            seats=row.seats,
            state="finished",
            hand_no=len(await self.store.match_hands(match.id)),
        )
        ratings = await self.store.rating_changes(match.id) if match.rated else []
        end = MatchEnd(table_id, match.id, scores, ratings)
        return [encode(TableInfo(summary)), encode(end)]

    async def _restore_table(
        self,
        row: TableRow,
        stored: MatchRow | None,
        store: TableStore | None = None,
        lease: Lease | None = None,
    ) -> Table:
        if stored is not None:
            preset = stored_rules(stored, self.presets)  # the rules its match is played with
        elif row.rules in self.presets:
            preset = self.presets[row.rules]
        else:
            raise LobbyError("corrupt_match", f"its rule preset {row.rules!r} is no longer defined")
        timers = self.config.timers
        table = Table(
            id=row.id,
            settings=TableSettings.from_row(
                row,
                claim_window_ms=self._claim_window(row),
                hands=stored.hands_planned if stored is not None else row.hands,
                rated=stored.rated if stored is not None else row.rated,
            ),
            preset=preset,
            timers=timers,
            bot_levels=self.config.bots,
            store=self.store if store is None else store,
            host=self,
            observer=self.metrics,
            stamp_updates=self.config.server.stamp_updates,
            lease=lease,
            created_at=row.created_at,
            # A player's table still waiting: closed if nobody comes back to it.
            close_when_empty=timers.empty_table_seconds if row.tournament is None else 0.0,
        )
        grace = timers.restart_grace_seconds
        table.seats = [Seat.from_label(label, grace) if label else None for label in row.seats]
        if stored is not None:
            await self._replay(table, stored)
        elif row.state == "playing":
            # Its match finished (a crash came before the row said so), or never got
            # stored: then let it start again.
            played = await self.store.table_matches(row.id)
            if played and played[-1].ended_at:
                table.state, table.match_id = "finished", played[-1].id
            else:
                table.state = "waiting"
        return table

    def _claim_window(self, row: TableRow) -> int:
        """A stored table's claim window: its own (stored since revision 0008), else its
        preset's, else the server's."""
        if row.claim_window_ms is not None:
            return row.claim_window_ms
        return self.claim_windows.get(row.rules, self.config.timers.claim_window_ms)

    async def _replay(self, table: Table, stored: MatchRow) -> None:
        match = replay_log(stored, await self.store.match_actions(stored.id), self.presets)
        for record in match.records:  # a crash may have come between an action and its hand
            try:
                await self.store.finish_hand(
                    stored.id, record.hand_no, record.to_dict(), list(record.result.deltas)
                )
            except Conflict as exc:
                raise LobbyError("corrupt_match", str(exc)) from None
        table.resume(match, stored.id, bytes.fromhex(stored.salt))
        log.info(
            "match %s at table %s restored after %s actions", stored.id, table.id, table.log_seq
        )

    async def shutdown(self) -> None:
        """Stop every table task; what they stored stays (``App.stop`` tells the clients).
        The ``on_table_finished`` calls still running are waited for."""
        self.feed.close()
        tables = list(self.tables.values())
        for table in tables:  # all told first: none moves again while the others stop
            table.stopping = True
        await asyncio.gather(*(table.stop() for table in tables))
        if self.hooks:
            _, late = await asyncio.wait(self.hooks, timeout=HOOK_SECONDS)
            for task in late:
                log.error("on_table_finished still running at shutdown: cancelled (%s)", task)
                task.cancel()

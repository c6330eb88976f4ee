"""Reviews of finished matches over HTTP: ``GET /api/matches/{id}/review?player=NAME``.

A review (``engine.review``) asks the strong bot's judge about every decision a player took
in a match: far more CPU than any other request, and bots must never hold up the live
tables. So it is computed on demand in worker processes (``Reviews``: a
``ProcessPoolExecutor`` of ``[review] workers`` processes, started at the first review asked
for), never on the event loop; the answer is kept in memory by (match, player), the
``[review] cache`` most recently asked for (a finished match never changes, so a kept review
stays true), and requests for a review being computed wait for that one. Each client address
may have ``[review] per_minute`` reviews computed (``burst`` at once; a cached one costs
nothing), then gets 429 with ``Retry-After``; past ``[review] waiting`` reviews waiting for a
worker, everyone gets 503 with ``Retry-After``.

Who may read a review is who may read the match's record (``server.app`` checks it before,
with the record's own check): a finished match only, and a duplicate session's only once
the whole session is over.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import http
import logging
import math
import multiprocessing
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from engine.errors import MahjongError
from engine.match import check_match_hands
from engine.review import Review, review_match
from engine.rules import RuleSet
from server.config import ReviewSection
from server.errors import shown
from server.limits import Buckets, Clock
from server.lobby import stored_rules
from server.query import BadRequest, parse_query
from server.replay import Refused, ReplayStore
from server.table import LobbyError

log = logging.getLogger("guobiao.review")

Key = tuple[int, int]  # (match, player)


class Busy(Refused):
    """A review refused for now (429: this address asked too often; 503: too many wait):
    ask again in ``retry_after`` seconds (a whole number, >= 1)."""

    def __init__(self, status: http.HTTPStatus, reason: str, wait: float) -> None:
        self.retry_after = max(1, math.ceil(wait))
        super().__init__(status, f"{reason}; try again in {self.retry_after} s")


def player_of(seats: Sequence[str | None], query: str) -> int:
    """The player index ``player=NAME`` of a query names among ``seats`` (``seat_of``);
    ``Refused`` (400) for a query without it."""
    try:
        name = parse_query(query).get("player", "")
    except BadRequest as exc:
        raise Refused(http.HTTPStatus.BAD_REQUEST, str(exc)) from None
    return seat_of(seats, name)


def seat_of(seats: Sequence[str | None], name: str) -> int:
    """The player index of ``name`` among ``seats`` (names compare whatever their case).
    ``Refused``: 400 without a name or for a name several seats share (bots), 404 for a
    name no seat has."""
    if not name:
        raise Refused(
            http.HTTPStatus.BAD_REQUEST, "say whose decisions to review: ?player=NAME (a seat)"
        )
    found = [p for p, seat in enumerate(seats) if seat is not None and seat.lower() == name.lower()]
    if len(found) > 1:
        raise Refused(
            http.HTTPStatus.BAD_REQUEST,
            f"seats {', '.join(map(str, found))} are all {shown(name)}: name a player who sat once",
        )
    if not found:
        players = ", ".join(shown(s) for s in seats if s is not None)
        raise Refused(
            http.HTTPStatus.NOT_FOUND,
            f"no player {shown(name)} in this match (its seats: {players})",
        )
    return found[0]


def review_body(review: Review, seats: Sequence[str | None]) -> dict[str, Any]:
    """The JSON answer: the review (``Review.to_dict``: every decision, the misses biggest
    first) with the match's seats and the reviewed player's name."""
    return {**review.to_dict(), "name": seats[review.player], "seats": list(seats)}


class Reviews:
    """The server's reviews: the worker processes, the cache, the rate limit."""

    def __init__(self, settings: ReviewSection, clock: Clock = time.monotonic) -> None:
        self.settings = settings
        self.limit = Buckets(settings.per_minute / 60, settings.burst, clock)
        self.cache: OrderedDict[Key, dict[str, Any]] = OrderedDict()
        self.running: dict[Key, asyncio.Future[dict[str, Any]]] = {}
        self.pool: concurrent.futures.ProcessPoolExecutor | None = None
        self.computed = 0  # reviews computed (not served from the cache)

    async def answer(
        self,
        store: ReplayStore,
        presets: dict[str, RuleSet],
        match_id: int,
        query: str,
        address: str,
    ) -> dict[str, Any]:
        """The review the query asks for, of the finished match ``match_id``, for a client
        at ``address``. ``Refused``: 400 or 404 for the player (``player_of``), 404 for a
        match unknown or in play, 429 or 503 (``Busy``), 500 for a log that does not
        replay."""
        stored = await store.get_match(match_id)
        if stored is None or stored.ended_at is None:
            raise Refused(
                http.HTTPStatus.NOT_FOUND,
                f"no finished match {match_id} (reviews are given once a match has ended)",
            )
        player = player_of(stored.seats, query)
        key = (match_id, player)
        if key in self.cache:
            self.cache.move_to_end(key)
            return self.cache[key]
        running = self.running.get(key)
        if running is None:
            if len(self.running) >= self.settings.waiting:
                raise Busy(
                    http.HTTPStatus.SERVICE_UNAVAILABLE, "the server is busy with other reviews", 1
                )
            wait = self.limit.take(address)
            if wait:
                raise Busy(http.HTTPStatus.TOO_MANY_REQUESTS, "too many reviews asked for", wait)
            running = asyncio.ensure_future(self._compute(store, presets, stored, key))
            self.running[key] = running
            running.add_done_callback(lambda _: self.running.pop(key, None))
        # Shielded: a client that goes away does not cancel what others wait for.
        return await asyncio.shield(running)

    async def _compute(
        self, store: ReplayStore, presets: dict[str, RuleSet], stored: Any, key: Key
    ) -> dict[str, Any]:
        match_id, player = key
        logged = await store.match_actions(match_id)
        rows = [r.played for r in logged]
        stand_in = frozenset(r.seq for r in logged if r.stand_in)  # the server's, not reviewed
        try:
            rules = stored_rules(stored, presets)
            hands = check_match_hands(stored.hands_planned)
            # The worker is given the engine's own function: it imports the engine alone.
            work = functools.partial(
                review_match, match_id=match_id, hands=hands, stand_in=stand_in
            )
            review = await asyncio.get_running_loop().run_in_executor(
                self._pool(), work, stored.seed, rules, rows, player
            )
        except (LobbyError, MahjongError, ValueError) as exc:
            log.error("match %s does not replay for its review: %s", match_id, exc)
            raise Refused(
                http.HTTPStatus.INTERNAL_SERVER_ERROR,
                f"match {match_id}'s stored log does not replay (logged); it cannot be reviewed",
            ) from None
        except BrokenProcessPool:
            self.pool = None  # a worker died (killed?): the next review starts new ones
            raise
        body = review_body(review, stored.seats)
        self.computed += 1
        if self.settings.cache:
            self.cache[key] = body
            while len(self.cache) > self.settings.cache:
                self.cache.popitem(last=False)
        return body

    def _pool(self) -> concurrent.futures.ProcessPoolExecutor:
        if self.pool is None:
            # Spawned, not forked: a fork of a process with threads (the database's) and an
            # event loop may deadlock; the workers import only the engine.
            context = multiprocessing.get_context("spawn")
            self.pool = concurrent.futures.ProcessPoolExecutor(
                self.settings.workers, mp_context=context
            )
        return self.pool

    async def close(self) -> None:
        """Stop the workers (a review being computed is abandoned)."""
        pool, self.pool = self.pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)

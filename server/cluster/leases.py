"""A cluster node's leases: which it holds, and whether it may trust each now.

The owner of a table holds its lease, the Redis key ``PREFIX:lease:TABLE`` (its name,
expiring after ``lease_seconds``), renewed every third of that by the keeper's thread
(``server.cluster.keeper``). A node trusts a lease only for a lease after the keeper last
renewed it (``LEASE_TRUST``), and a lapsed lease the keeper took back only once the
database says no other node took the table meanwhile (``_check_suspects``); and only while
its messages reach the others (``Bus.up``). A table whose lease its node does not trust
waits, doing and sending nothing (``server.table.Table._owned``), until the node knows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from server.cluster.state import NodeState

log = logging.getLogger("guobiao.cluster")

# A table's lease is taken (``claim_new``) before the lobby saves its row and lists it; the
# lobby does not say when that save fails. A claimed table not in the lobby after this long
# (far longer than one save) was never created: its lease is let go, not renewed for ever.
CLAIM_SECONDS = 30.0
# A lease is trusted for this part of it after the round that renewed it began (Redis renews
# at that time or later; a margin for the clocks): past that the node may have lost it.
LEASE_TRUST = 0.9


class Leases(NodeState):
    """The node's part that keeps its leases."""

    @property
    def leases_held(self) -> int:
        """Our tables' leases (created, adopted or being adopted, set aside)."""
        return len(self._leases - {self.coordinator_key})

    def _hold(self, key: str, taken: float) -> None:
        """A lease just taken (``SET NX``, asked at ``taken``): ours for a lease from then;
        the keeper renews it from its next round on."""
        self._leases.add(key)
        self.keeper.hold(self._leases)
        self._trust(key, taken)

    def _forget_lease(self, key: str) -> None:
        """No more renewing a lease another node holds now (a table waiting to know whether
        it is ours hears it is not)."""
        self._leases.discard(key)
        self.keeper.hold(self._leases)
        self._held_until.pop(key, None)
        self._renewed_at.pop(key, None)
        self._suspect.discard(key)
        self._tell_lease_news()

    def _trust(self, key: str, since: float) -> None:
        until = since + self.lease_seconds * LEASE_TRUST
        if until > self._held_until.get(key, 0.0):
            self._held_until[key] = until

    def _trusted(self, key: str) -> bool:
        """Whether the lease ``key`` was taken or renewed less than a lease ago (and not
        merely taken back after it lapsed): it is surely ours."""
        return time.monotonic() < self._held_until.get(key, 0.0)

    def lease_held(self, key: str) -> bool:
        """Whether this node may run the table of lease ``key`` now: the lease surely ours,
        and Redis reachable with everyone told, since it came back, what we own (a table
        whose relayed players cannot be reached, or have not been sent it again, must not
        play on without them)."""
        return self.bus.up and self.caught_up and self._trusted(key)

    async def until_held(self, key: str) -> bool:
        """Wait until the lease ``key`` is surely ours again (True), or is ours no more
        (False: lost or let go; its table is being dropped)."""
        while key in self._leases:
            if self.lease_held(key):
                return True
            news = asyncio.get_running_loop().create_future()
            self._lease_news.append(news)
            await news
        return False

    def _tell_lease_news(self) -> None:
        """Something changed what is known of our leases: those waiting look again."""
        waiting, self._lease_news = self._lease_news, []
        for news in waiting:
            if not news.done():
                news.set_result(None)

    def _renewed(self, began: float, renewed: tuple[str, ...], retaken: tuple[str, ...]) -> None:
        """A keeper round that began at ``began`` renewed ``renewed`` and took ``retaken``
        back (they had lapsed: another node may have taken their tables meanwhile and let
        them go; ours again only once the database says so, ``_check_suspects``)."""
        for key in renewed:
            if key in self._leases:
                self._renewed_at[key] = began
                if key not in self._suspect:
                    self._trust(key, began)
        for key in retaken:
            if key == self.coordinator_key:
                self._trust(key, began)  # (no fencing token: the services are not fenced)
            elif key in self._leases:
                self._renewed_at[key] = began
                self._suspect.add(key)
        if self._suspect and not self._checking:
            self._checking = True
            self._spawn(self._check_suspects(), "check-leases")
        self._tell_lease_news()

    async def _check_suspects(self) -> None:
        """The leases that lapsed and were taken back: each table's fencing token in the
        database still ours, the lease is trusted again; another's, the table is dropped (a
        node took it over while our lease had lapsed). Asked again at the next round if the
        database fails or a table is still being adopted."""
        try:
            cut = len(self.prefix) + len(":lease:")
            tables = {key[cut:]: key for key in self._suspect}
            fences = await self.store.table_fences(sorted(tables))
            for table_id, key in tables.items():
                token = self._token(table_id)
                if key not in self._suspect or token is None:
                    continue  # let go meanwhile, or still being adopted
                if fences.get(table_id) == token:
                    self._suspect.discard(key)
                    self._trust(key, self._renewed_at.get(key, 0.0))
                    self._announce(table_id, token)  # (nodes that heard nothing since)
                else:
                    self.fenced(table_id, token)
        except Exception:
            log.exception("cluster: checking the fencing tokens of lapsed leases failed")
        finally:
            self._checking = False
            self._tell_lease_news()

    async def _release_lease(self, key: str) -> None:
        """Give a lease of ours up: out of the keeper's set, and only once no round that
        may still renew it is in flight (it would take the lapsed lease back) is it
        deleted, if it is still ours."""
        self._forget_lease(key)
        await self.keeper.settle()
        with contextlib.suppress(RedisError, OSError):
            await self._release(keys=[key], args=[self.name])

    def _leases_lost(self, keys: tuple[str, ...]) -> None:
        """The keeper found these leases held by another node (we were cut off or stuck
        past them): the tables are dropped, the coordinator's services stopped."""
        cut = len(self.prefix) + len(":lease:")
        for key in keys:
            self._forget_lease(key)
            if key == self.coordinator_key:
                log.warning("cluster: no longer the coordinator (another node holds its lease)")
                self._spawn(self._stop_services(), "coordinator-lost")
                continue
            table_id = key[cut:]
            log.warning("cluster: lost the lease on table %s (another node holds it)", table_id)
            self._spawn(self.drop(table_id), f"drop-{table_id}")

    def _let_go_stray_claims(self) -> None:
        """Claims (``claim_new``) whose table was created are done with; one whose table
        never came (its creation failed) is let go after ``CLAIM_SECONDS``."""
        lobby = self.lobby
        now = time.monotonic()
        for table_id, claimed in list(self._claimed.items()):
            if table_id in lobby.tables:
                del self._claimed[table_id]
            elif now - claimed > CLAIM_SECONDS:
                log.warning("cluster: table %s was never created: its lease is let go", table_id)
                self._spawn(self._let_go(table_id), f"release-{table_id}")

    if TYPE_CHECKING:  # (the node's)

        def _token(self, table_id: str) -> int | None: ...

        def _announce(self, table_id: str, token: int) -> None: ...

        def fenced(self, table_id: str, token: int) -> None: ...

        async def drop(self, table_id: str, players: Sequence[str] = ()) -> None: ...

        async def _stop_services(self) -> None: ...

        async def _let_go(self, table_id: str) -> None: ...

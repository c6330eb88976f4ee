"""The other nodes, as the app and the lobby see them: one interface, local or cluster.

A server runs alone (``OneNode``: one process, every table here, nothing to relay) or as a
node of a cluster (``server.cluster.node.Node``: tables leased across processes sharing one
database and one Redis, the messages of connections relayed to their tables' owners). The
app and the lobby ask ``Nodes`` what they need (where else a player sits, which tables
other nodes list, a lease for a new table, a frame relayed to a table elsewhere) and never
which of the two they run as: the choice is made once, when the app starts.

The cluster's node sees this node's connections through ``Here`` (what it relays for them
and sends them), never the app's ``Connection`` itself, so ``server.cluster`` does not
import ``server.app``.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from server.table import Lease, LobbyError, TableStore

__all__ = ["Creator", "Here", "Nodes", "OneNode"]


@dataclass(frozen=True, slots=True)
class Creator:
    """Who asked for a table (``create_table``): the account, and the client's IP address as
    the server sees it (behind a reverse proxy, the proxy's)."""

    username: str
    address: str


class Here(Protocol):
    """A connection of this node, as the other nodes' messages reach it and it is relayed
    to them (``server.connection.Connection``)."""

    cid: str  # unique in the cluster: how other nodes address it
    username: str | None
    guest: bool
    address: str
    version: int
    tables: dict[str, str | None]  # its tables, each with the watch frame that made it a spectator
    relayed: set[str]  # the other nodes it spoke to
    queue_frame: str | None  # its queue_join, sent again should the coordinator change

    def send(self, text: str) -> None: ...

    def prompted(self, table: str, seq: int) -> None: ...

    def attach(self, table_id: str) -> None: ...


class Nodes(Protocol):
    """What the app and the lobby ask of the other nodes (none, for a server alone)."""

    @property
    def clustered(self) -> bool:
        """Whether other nodes may run tables (a table not here may be elsewhere)."""
        ...

    @property
    def draining(self) -> bool:
        """Whether this node is handing its tables over (it makes none)."""
        ...

    @property
    def leases_held(self) -> int:
        """The table leases this node holds (``guobiao_leases_held``; none alone)."""
        ...

    @property
    def id_bytes(self) -> int:
        """Random bytes in a new table's id (longer when several nodes pick ids at once)."""
        ...

    # -- lifecycle (the app) --

    def new_cid(self) -> str:
        """A connection id no other connection of the cluster has."""
        ...

    async def start(self, port: int) -> None: ...

    async def hand_over(self) -> None:
        """The server is stopping: hand every table to another node (none ends)."""
        ...

    async def close(self) -> None: ...

    def unready(self) -> str | None:
        """Why a proxy should send this node no new connection (``/readyz``), if it should not."""
        ...

    def status(self) -> dict[str, Any] | None:
        """The cluster's part of ``/healthz``."""
        ...

    async def queue_snapshot(self) -> Any | None:
        """The ladder queue as the node that runs it published it (``/api/queue``); None if
        it runs here."""
        ...

    def remote_peers(self) -> Iterable[Any]:
        """Other nodes' connections that spoke to this one (the tournaments tell them too)."""
        ...

    # -- a connection (the app) --

    async def relay(self, conn: Here, table_id: str, frame: str | bytes) -> None:
        """A frame for a table not on this node, to its owner; ``ServerError``
        ``no_such_table`` if no node runs it."""
        ...

    async def owner_of(self, table_id: str) -> str | None:
        """The node that runs ``table_id`` as far as this one knows (None: none does, or
        not in a cluster)."""
        ...

    async def seat_owner(self, username: str) -> str | None:
        """The node that runs the table ``username`` sits at, as far as this one knows (None:
        none, or not in a cluster)."""
        ...

    async def find_seat(self, conn: Here) -> None:
        """``conn``'s player logged in or resumed, and sits at no table here: her seat on
        another node is hers again."""
        ...

    def relay_gone(self, conn: Here, table_id: str) -> None: ...

    def bye(self, conn: Here) -> None:
        """``conn`` closed."""
        ...

    @property
    def runs_services(self) -> bool:
        """Whether the ladder queue and the tournaments run here."""
        ...

    def relay_service(self, conn: Here, frame: str | bytes) -> None:
        """A queue or tournament request to the node that runs them."""
        ...

    def service_gone(self, conn: Here) -> None:
        """``conn``, queued at the node that runs the queue, left it."""
        ...

    async def replace_seat(self, table_id: str, seat: int, label: str, timeout: float) -> None:
        """A tournament's substitute into ``seat`` of a table another node owns; its
        refusal raised as a ``LobbyError``, no answer in ``timeout`` seconds as
        ``TimeoutError``."""
        ...

    # -- the lobby --

    def seated_elsewhere(self, username: str) -> str | None:
        """The table of another node where ``username`` sits, as its owner last said."""
        ...

    def lobby_changed(self) -> None:
        """Who sits where, or which tables wait for players, changed here."""
        ...

    def match_over(self, table_id: str, players: Sequence[str]) -> None:
        """The match of ``table_id``, a table here, finished: ``players`` sit there no more
        (called before they are told)."""
        ...

    def remote_listing(self, local: Collection[str]) -> list[dict[str, Any]]:
        """The other nodes' public tables, but ``local`` (ours now)."""
        ...

    def remote_creators(self, local: Iterable[str]) -> list[Creator]:
        """The creators of the other nodes' tables waiting for players, but ``local``'s."""
        ...

    async def claim_new(
        self, table_id: str, store: TableStore
    ) -> tuple[TableStore, Lease | None] | None:
        """The store (``store``, or the cluster's fenced wrapping of it) and the lease for a
        table this node is making; None if ``table_id`` is taken (pick another)."""
        ...

    def table_done(self, table_id: str) -> None:
        """A table of this node finished, or was never made: its lease goes."""
        ...

    def placement(self, peers: Sequence[Any]) -> str | None:
        """Where a table the queue makes for ``peers`` had best run: the node most of their
        connections are on, if that is another, ready one; None: here."""
        ...

    async def place(self, table_id: str, node: str, peers: Sequence[Any]) -> bool:
        """Hand a table this node just made for ``peers`` (none sitting yet) to ``node``
        (``placement``): True, and they sit down there as any moved table's players do
        (``moved``); False if it could not be handed, and it stays here."""
        ...


class OneNode:
    """A server alone: every table is here, nothing is relayed or published; the queue and
    the tournaments run here."""

    clustered = False
    draining = False
    leases_held = 0
    id_bytes = 3
    runs_services = True

    def __init__(self) -> None:
        self._cids = itertools.count(1)

    def new_cid(self) -> str:
        return str(next(self._cids))

    async def start(self, port: int) -> None:
        pass

    async def hand_over(self) -> None:
        pass

    async def close(self) -> None:
        pass

    def unready(self) -> str | None:
        return None

    def status(self) -> dict[str, Any] | None:
        return None

    async def queue_snapshot(self) -> Any | None:
        return None

    def remote_peers(self) -> Iterable[Any]:
        return ()

    async def relay(self, conn: Here, table_id: str, frame: str | bytes) -> None:
        raise LobbyError("no_such_table", f"there is no table {table_id!r}")

    async def owner_of(self, table_id: str) -> str | None:
        return None

    async def seat_owner(self, username: str) -> str | None:
        return None

    async def find_seat(self, conn: Here) -> None:
        pass

    def relay_gone(self, conn: Here, table_id: str) -> None:
        pass

    def bye(self, conn: Here) -> None:
        pass

    def relay_service(self, conn: Here, frame: str | bytes) -> None:
        raise AssertionError("the services run here")

    def service_gone(self, conn: Here) -> None:
        pass

    async def replace_seat(self, table_id: str, seat: int, label: str, timeout: float) -> None:
        raise LobbyError("no_such_table", f"there is no table {table_id!r}")

    def seated_elsewhere(self, username: str) -> str | None:
        return None

    def lobby_changed(self) -> None:
        pass

    def match_over(self, table_id: str, players: Sequence[str]) -> None:
        pass

    def remote_listing(self, local: Collection[str]) -> list[dict[str, Any]]:
        return []

    def remote_creators(self, local: Iterable[str]) -> list[Creator]:
        return []

    async def claim_new(
        self, table_id: str, store: TableStore
    ) -> tuple[TableStore, Lease | None] | None:
        return store, None

    def table_done(self, table_id: str) -> None:
        pass

    def placement(self, peers: Sequence[Any]) -> str | None:
        return None

    async def place(self, table_id: str, node: str, peers: Sequence[Any]) -> bool:
        return False

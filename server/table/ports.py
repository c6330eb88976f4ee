"""What a table is given and talks to, as protocols: the connections (``Peer``), the
database (``TableStore``), its host (``TableHost``, told ``TableSummary``s), its lease in
cluster mode (``Lease``) and whoever counts what it does (``TableObserver``: the server's
metrics). A table depends on these shapes only, so nothing in ``server.table`` imports the
lobby, the metrics, the tournaments, the ladder or the cluster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from engine.match import MATCH_HANDS
from server.db.store import ActionRow, FinishedMatch, MatchRow, TableRow


class Peer(Protocol):
    """A connection as a table sees it."""

    username: str | None
    guest: bool  # a guest account (it may not sit at a rated table)
    address: str  # the client's IP address (recorded with a rated match's players)
    version: int  # the protocol version it speaks: 2 follows the seats from the events

    def send(self, text: str) -> None:
        """Queue ``text`` for the client (never blocks; a slow client is dropped)."""

    def prompted(self, table: str, seq: int) -> None:
        """The update just sent (``seq`` of ``table``) asks the client to act."""


class TableStore(Protocol):
    """The database as a table uses it: exactly these methods of ``server.db.store.Store``
    (a test gives a table an in-memory one, ``tests/server/fakes.py``)."""

    async def save_table(self, row: TableRow) -> None: ...

    async def create_match(  # noqa: PLR0917 (the store's signature)
        self,
        table_id: str,
        rules: str,
        seed: int,
        salt: str,
        seats: Sequence[str | None],
        started_at: datetime,
        *,
        rule_options: Mapping[str, Any] | None = None,
        hands_planned: int = MATCH_HANDS,
        rated: bool = False,
    ) -> int: ...

    async def unfinished_matches(self) -> list[MatchRow]: ...

    async def append_action(
        self,
        match_id: int,
        seq: int,
        hand_no: int,
        player: int,
        action: Mapping[str, Any],
        *,
        stand_in: bool = False,
    ) -> None: ...

    async def last_action(self, match_id: int) -> ActionRow | None: ...

    async def finish_hand(
        self,
        match_id: int,
        hand_no: int,
        record: Mapping[str, Any],
        deltas: Sequence[int],
        *,
        now: datetime | None = None,
    ) -> bool: ...

    async def finish_match(
        self,
        match_id: int,
        final_scores: Sequence[int],
        ended_at: datetime,
        addresses: Sequence[str | None] | None = None,
    ) -> FinishedMatch:
        """Store the match as ended (once: a retry finds it ended and changes nothing);
        a rated match is rated in the same transaction and its changes come back."""


class Lease(Protocol):
    """Cluster mode: the table's lease, which says whether this node still runs the table
    (``server.cluster.fenced.FencedStore``)."""

    token: int  # the fencing token the node runs the table with

    def held(self) -> bool:
        """Whether the node surely holds the table's lease now (cheap: asked often)."""
        ...

    async def regained(self) -> bool:
        """Wait until the node surely holds it again (True), or knows it lost it (False:
        another node runs the table, this one is being dropped)."""
        ...


@dataclass(frozen=True, slots=True)
class TableSummary:
    """What a table tells its host whenever any of it changes: enough to list the table
    and to know who sits where, so no one else ever reads the table's own state."""

    table: str
    private: bool
    state: str  # waiting, playing, finished
    players: tuple[str, ...]  # the usernames of the people seated
    listing: dict[str, Any]  # the table as it is (``Table.summary``): its host's to know
    # Its entry in the lobby's listing as anyone may be shown it (``settings.listed``); None:
    # not listed (private, or finished). A table whose spectators see it late is listed as it
    # was while played until they see its match end: the listing must not tell them sooner.
    listed: dict[str, Any] | None


class TableHost(Protocol):
    """Whoever created a table and keeps track of it (the lobby; later a tournament or
    another node). A table calls it from its own task only."""

    def seated_at(self, username: str) -> str | None:
        """The id of the unfinished table where ``username`` sits, if any."""

    def table_changed(self, summary: TableSummary) -> None:
        """The table's seats, state, hand or rules changed: here is what it is now."""

    def table_done(self, table_id: str) -> None:
        """The table finished and nobody is left at it: forget it."""

    def tell_later(self, username: str, frames: list[str]) -> None:
        """``username`` was away when her match ended: tell her ``frames`` when she comes
        back."""

    def untold_end(self, username: str) -> list[str]:
        """What ``tell_later`` kept for ``username``, forgotten (she is told now)."""

    async def rated_refusal(self, usernames: Sequence[str]) -> str | None:
        """Why these four may not start a rated match now (the farm limit), or None."""


class TableObserver(Protocol):
    """Whoever counts what tables do (``server.metrics.Metrics``): called from a table's
    task, so each call is cheap (an addition, an observation)."""

    def action_applied(self) -> None:
        """A table applied one stored action."""

    def update_sent(self, seconds: float) -> None:
        """A player's action showed: its update went out ``seconds`` after it came in."""

    def empty_table_closed(self) -> None:
        """A table closed itself: nobody sat at it for ``empty_table_seconds``."""

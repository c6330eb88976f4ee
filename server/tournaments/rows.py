"""What ``TournamentStore`` gives back: plain frozen snapshots of the tournaments' rows,
never ORM objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from server.db.models import Tournament


@dataclass(frozen=True, slots=True)
class TournamentRow:
    id: int
    name: str
    rules: str
    state: str
    settings: dict[str, Any]
    registration_open: bool
    seed: int
    created_by: str
    created_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class Entrant:
    """A registered (or withdrawn) player."""

    name: str
    status: str
    registered_at: datetime
    withdrawn_at: datetime | None


@dataclass(frozen=True, slots=True)
class SessionRow:
    number: int
    state: str
    method: str
    seed: int
    seating: dict[str, Any]
    seated_at: datetime
    started_at: datetime | None
    ends_at: datetime | None
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class TableMatch:
    """A session table and its match (None until its match is created)."""

    session: int
    number: int
    table_id: str
    match_id: int | None
    seats: tuple[str | None, ...]
    scores: tuple[int, ...] | None  # the final scores, once finished and shown (``held``)
    seed: int | None
    salt: str | None
    hands_played: int
    finished: bool = False  # its match is over (its scores may still be held)
    ended_at: datetime | None = None  # when its match ended


@dataclass(frozen=True, slots=True)
class SubstitutionRow:
    session: int
    player: str
    substitute: str
    by: str
    at: datetime


@dataclass(frozen=True, slots=True)
class LogRow:
    seq: int
    kind: str
    player: str | None
    session: int | None
    amount: str | None
    of: int | None
    reason: str
    by: str
    at: datetime


def tournament_row(t: Tournament) -> TournamentRow:
    return TournamentRow(
        t.id,
        t.name,
        t.rules,
        t.state,
        dict(t.settings),
        t.registration_open,
        t.seed,
        t.created_by,
        t.created_at,
        t.finished_at,
    )

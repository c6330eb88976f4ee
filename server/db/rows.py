"""What the ``Store`` gives back: plain frozen snapshots of rows (``PlayerRow``,
``TableRow``, ``MatchRow``...), never ORM objects, so nothing outside ``server.db`` can
lazy-load or mutate a row by accident.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from engine.match import MATCH_HANDS, check_match_hands
from server.db.models import TABLE_STATES, GameTable, Match, Player


def is_bot(seat: str | None) -> bool:
    """True for a bot seat (``"bot:default"``, ``"bot:fast"``)."""
    return seat is not None and seat.startswith("bot:")


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class PlayerRow:
    """A player as stored: the account and the cached counts and grade."""

    id: int
    username: str
    password_hash: str | None
    guest: bool
    created_at: datetime
    score: int
    hands_won: int
    hands_lost: int
    hands_drawn: int
    matches: int
    grade: float

    @classmethod
    def of(cls, player: Player) -> PlayerRow:
        return cls(
            id=player.id,
            username=player.username,
            password_hash=player.password_hash,
            guest=player.guest,
            created_at=player.created_at,
            score=player.score,
            hands_won=player.hands_won,
            hands_lost=player.hands_lost,
            hands_drawn=player.hands_drawn,
            matches=player.matches,
            grade=player.grade,
        )


@dataclass(frozen=True, slots=True)
class SessionRow:
    """A valid login session and its player."""

    player: PlayerRow
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class TableRow:
    """A lobby table. ``seats``: 4 entries, each a username, ``"bot:NAME"`` or None (kept
    as a tuple whatever sequence is given)."""

    id: str
    rules: str
    turn_seconds: int
    private: bool
    invite_code: str | None
    seats: Sequence[str | None]
    created_at: datetime
    state: str = "waiting"  # "waiting", "playing" or "finished"
    hands: int = MATCH_HANDS  # its match's length in deals (0003)
    aids: bool = True  # whether seated players may ``analyze`` their hands
    rated: bool = False  # whether its matches change ratings (0005)
    # A tournament's settings (0006; ``server.table.Table`` says what each does).
    ends_at: datetime | None = None  # the time cap: no hand starts after it
    seed: int | None = None  # its match's seed, fixed (None: a random one)
    reveals: bool = True  # whether each hand's seed is revealed as it ends
    watchable: bool = True  # whether it may be watched
    spectator_delay_seconds: int = 0  # how late spectators see it
    claim_window_ms: int | None = None  # its own claim window (0008; None: its preset's)
    tournament: tuple[int, int, int] | None = None  # (tournament id, session, table 1..)

    def __post_init__(self) -> None:
        object.__setattr__(self, "seats", tuple(self.seats))
        if len(self.seats) != 4:
            raise ValueError(f"a table has 4 seats, got {self.seats!r}")
        if self.state not in TABLE_STATES:
            raise ValueError(f"table state must be one of {TABLE_STATES}, got {self.state!r}")
        check_match_hands(self.hands)
        if self.tournament is not None:
            object.__setattr__(self, "tournament", tuple(self.tournament))
            if len(self.tournament) != 3:
                raise ValueError(
                    f"a table's tournament is (id, session, table), got {self.tournament!r}"
                )

    @classmethod
    def of(cls, table: GameTable) -> TableRow:
        """The row of a ``tables`` model."""
        number, session, place = (
            table.tournament_id,
            table.tournament_session,
            table.tournament_table,
        )
        tournament = None
        if number is not None and session is not None and place is not None:
            tournament = (number, session, place)
        return cls(
            id=table.id,
            rules=table.rules,
            turn_seconds=table.turn_seconds,
            private=table.private,
            invite_code=table.invite_code,
            seats=tuple(table.seats),
            created_at=table.created_at,
            state=table.state,
            hands=table.hands,
            aids=table.aids,
            rated=table.rated,
            ends_at=table.ends_at,
            seed=table.seed,
            reveals=table.reveals,
            watchable=table.watchable,
            spectator_delay_seconds=table.spectator_delay_seconds,
            claim_window_ms=table.claim_window_ms,
            tournament=tournament,
        )

    def columns(self) -> dict[str, Any]:
        """Its ``tables`` row's columns but the id (and the fencing token, which only a
        takeover changes), by name: what a save writes, on either path (``server.db.tables``,
        ``server.db.postgres_now``)."""
        tournament = self.tournament or (None, None, None)
        return {
            "rules": self.rules,
            "turn_seconds": self.turn_seconds,
            "private": self.private,
            "invite_code": self.invite_code,
            "seats": list(self.seats),
            "created_at": self.created_at,
            "state": self.state,
            "hands": self.hands,
            "aids": self.aids,
            "rated": self.rated,
            "ends_at": self.ends_at,
            "seed": self.seed,
            "reveals": self.reveals,
            "watchable": self.watchable,
            "spectator_delay_seconds": self.spectator_delay_seconds,
            "claim_window_ms": self.claim_window_ms,
            "tournament_id": tournament[0],
            "tournament_session": tournament[1],
            "tournament_table": tournament[2],
        }


@dataclass(frozen=True, slots=True)
class MatchRow:
    """A match. ``seed`` and ``salt`` are secret while it is in play."""

    id: int
    table_id: str
    rules: str
    seed: int
    salt: str
    seats: tuple[str | None, ...]
    started_at: datetime
    ended_at: datetime | None
    final_scores: tuple[int, ...] | None
    rule_options: dict[str, Any] | None = None  # RuleSet.to_dict() at the start (0002)
    hands_planned: int = MATCH_HANDS  # its length in deals, ``Match.hands`` (0003)
    rated: bool = False  # whether it changes ratings (0005)

    @classmethod
    def of(cls, match: Match) -> MatchRow:
        return cls(
            id=match.id,
            table_id=match.table_id,
            rules=match.rules,
            seed=match.seed,
            salt=match.salt,
            seats=tuple(match.seats),
            started_at=match.started_at,
            ended_at=match.ended_at,
            final_scores=tuple(match.final_scores) if match.final_scores is not None else None,
            rule_options=match.rule_options,
            hands_planned=match.hands_planned,
            rated=match.rated,
        )


@dataclass(frozen=True, slots=True)
class MatchPrivacy:
    """What decides who may read a match's record over HTTP, and how much of it
    (``server.match_access``): its table's ``invite_code`` (None: the table is not private),
    its spectators' delay in seconds (0: none) and when the match ended (None: in play)."""

    invite_code: str | None
    spectator_delay_seconds: int
    ended_at: datetime | None


@dataclass(frozen=True, slots=True)
class FinishedMatch:
    """What ``Store.finish_match`` did: ``ended_now``, whether this call ended the match
    (False: it was finished already, and nothing changed), and ``rating_changes``, a rated
    match's rating changes by player index (``LadderStore.match_changes``' dicts; empty for
    an unrated match). True as ``ended_now`` is, as the bool it returned before."""

    ended_now: bool
    rating_changes: tuple[dict[str, Any], ...] = ()

    def __bool__(self) -> bool:
        return self.ended_now


class ActionRow(NamedTuple):
    """One logged action: ``(seq, hand_no, player, action, stand_in)``; ``stand_in``: the
    server played it for the person whose seat it was (away or out of time)."""

    seq: int
    hand_no: int
    player: int
    action: dict[str, Any]
    stand_in: bool = False

    @property
    def played(self) -> tuple[int, int, int, dict[str, Any]]:
        """The row as ``Match.replay`` takes it: ``(seq, hand_no, player, action)`` (who
        chose the move does not change the game)."""
        return self.seq, self.hand_no, self.player, self.action


class GuestPurge(NamedTuple):
    """What one ``Store.purge_guests`` call did; ``next_after``: where the next batch
    starts (None: no more)."""

    deleted: int
    kept: int
    next_after: int | None

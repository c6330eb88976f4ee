"""A table's settings as one frozen value: what its creator chose (``create_table``, the
queue, a tournament), stored in its row and kept over a restart.

``TableSettings`` holds them all; ``validate`` is the one check of them (the lobby's,
with its error codes and messages), ``summary`` the table as a ``table`` message and a
``tables`` listing show it (``listed``: as anyone may be shown it in the listing), ``row``
the table as the database stores it, ``from_row`` the settings of a stored table. What each
does is told in ``server.table``'s docstring.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.match import MATCH_HANDS
from server.db.models import iso
from server.db.store import TableRow
from server.presets import MAX_CLAIM_WINDOW_MS
from server.table.errors import LobbyError

MAX_SPECTATOR_DELAY = 3600  # seconds: a tournament's spectators see its tables this late at most


@dataclass(frozen=True, slots=True)
class TableSettings:
    """The settings of one table: the preset's name ``rules``, ``turn_seconds``, ``private``
    and its ``invite_code``, ``claim_window_ms`` (the least a claim window lasts, with a
    person seated), ``hands`` (its match's length in deals), ``aids`` (whether seated players
    may ``analyze``), ``rated`` (its matches change the ladder ratings), and a tournament's:
    ``ends_at`` (the time cap, UTC: no hand is dealt from then on), ``seed`` (its match's
    seed, fixed: duplicate walls; None: a random one), ``reveals`` (whether each hand's seed
    and salt are sent as it ends), ``watchable`` (whether anyone not seated may watch),
    ``spectator_delay_seconds`` (how late its spectators get everything) and ``tournament``
    (tournament id, session, table 1..)."""

    rules: str
    turn_seconds: int
    private: bool = False
    invite_code: str | None = None
    claim_window_ms: int = 0
    hands: int = MATCH_HANDS
    aids: bool = True
    rated: bool = False
    ends_at: datetime | None = None
    seed: int | None = None
    reveals: bool = True
    watchable: bool = True
    spectator_delay_seconds: int = 0
    tournament: tuple[int, int, int] | None = None

    def validate(
        self,
        *,
        presets: Collection[str],
        turn_seconds: tuple[int, int],
        ladders: Collection[str],
    ) -> None:
        """``LobbyError`` naming the first setting out of its limits: ``bad_message`` (an
        unknown preset, ``turn_seconds`` outside ``turn_seconds`` (least, most), a claim
        window, a length or a tournament's setting out of range), ``no_such_ladder`` (rated,
        but its preset has no ladder among ``ladders``)."""
        rules = self.rules
        if rules not in presets:
            raise LobbyError(
                "bad_message", f"unknown rule preset {rules!r}; known: {', '.join(presets)}"
            )
        least, most = turn_seconds
        if not least <= self.turn_seconds <= most:
            raise LobbyError(
                "bad_message", f"turn_seconds must be {least}..{most}, got {self.turn_seconds}"
            )
        window = self.claim_window_ms
        if not 0 <= window <= MAX_CLAIM_WINDOW_MS:
            raise LobbyError(
                "bad_message", f"claim_window_ms must be 0..{MAX_CLAIM_WINDOW_MS}, got {window}"
            )
        if self.rated and rules not in ladders:
            names = ", ".join(ladders) or "none"
            raise LobbyError(
                "no_such_ladder",
                f"rule preset {rules!r} has no ladder, so no rated tables; ladders: {names}",
            )
        if not 1 <= self.hands <= MATCH_HANDS:
            raise LobbyError("bad_message", f"hands must be 1..{MATCH_HANDS}, got {self.hands}")
        self._validate_tournament()

    def _validate_tournament(self) -> None:
        """``LobbyError`` (``bad_message``) naming the first of a tournament table's settings
        that is out of its limits."""
        ends_at, seed, tournament = self.ends_at, self.seed, self.tournament
        if ends_at is not None and (ends_at.tzinfo is None or ends_at.utcoffset() is None):
            raise LobbyError(
                "bad_message", f"ends_at must be an aware datetime (UTC), got {ends_at!r}"
            )
        if seed is not None and (isinstance(seed, bool) or not 0 <= seed < 2**63):
            raise LobbyError("bad_message", f"seed must be 0..2**63-1, got {seed!r}")
        delay = self.spectator_delay_seconds
        if not 0 <= delay <= MAX_SPECTATOR_DELAY:
            raise LobbyError(
                "bad_message",
                f"spectator_delay_seconds must be 0..{MAX_SPECTATOR_DELAY}, got {delay!r}",
            )
        if tournament is not None and (
            len(tournament) != 3 or not all(isinstance(n, int) and n >= 1 for n in tournament)
        ):
            raise LobbyError(
                "bad_message",
                f"tournament must be (tournament id, session, table), each 1 or more, "
                f"got {tournament!r}",
            )

    def summary(
        self,
        table: str,
        *,
        rule_options: dict[str, Any],
        seats: Sequence[str | None],
        state: str,
        hand_no: int,
    ) -> dict[str, Any]:
        """The table ``table`` as a ``table`` message and a ``tables`` listing show it: these
        settings with the rules in play (``rule_options``), its ``seats``' labels, its
        ``state`` and the number of the hand in play (0: none yet)."""
        return {
            "table": table,
            "rules": self.rules,
            "rule_options": rule_options,
            "turn_seconds": self.turn_seconds,
            "seats": list(seats),
            "state": state,
            "hand_no": hand_no,
            "private": self.private,
            "claim_window_ms": self.claim_window_ms,
            "hands": self.hands,
            "aids": self.aids,
            "rated": self.rated,
            "reveals": self.reveals,
            "watchable": self.watchable,
            "spectator_delay_seconds": self.spectator_delay_seconds,
            "ends_at": iso(self.ends_at),
            "tournament": (
                None
                if self.tournament is None
                else dict(zip(("id", "session", "table"), self.tournament, strict=True))
            ),
        }

    def row(
        self, table: str, *, seats: Sequence[str | None], state: str, created_at: datetime
    ) -> TableRow:
        """The table ``table`` as the database stores it."""
        return TableRow(
            id=table,
            rules=self.rules,
            turn_seconds=self.turn_seconds,
            private=self.private,
            invite_code=self.invite_code,
            seats=seats,
            created_at=created_at,
            state=state,
            hands=self.hands,
            aids=self.aids,
            rated=self.rated,
            ends_at=self.ends_at,
            seed=self.seed,
            reveals=self.reveals,
            watchable=self.watchable,
            spectator_delay_seconds=self.spectator_delay_seconds,
            tournament=self.tournament,
            claim_window_ms=self.claim_window_ms,
        )

    @classmethod
    def from_row(
        cls, row: TableRow, *, claim_window_ms: int, hands: int, rated: bool
    ) -> TableSettings:
        """The settings of the stored table ``row``, with its claim window (a row stored
        before it had one: its preset's), its match's length and whether it is rated (its
        stored match's, if it has one)."""
        return cls(
            rules=row.rules,
            turn_seconds=row.turn_seconds,
            private=row.private,
            invite_code=row.invite_code,
            claim_window_ms=claim_window_ms,
            hands=hands,
            aids=row.aids,
            rated=rated,
            ends_at=row.ends_at,
            seed=row.seed,
            reveals=row.reveals,
            watchable=row.watchable,
            spectator_delay_seconds=row.spectator_delay_seconds,
            tournament=row.tournament,
        )


def listed(entry: dict[str, Any]) -> dict[str, Any]:
    """A table's entry in the lobby's listing (its ``TableSettings.summary``) as anyone may be
    shown it. A table whose spectators see it late (``spectator_delay_seconds``) is listed
    without its hand number (null): the live one ran ahead of what its spectators see,
    telling them (and the feed's subscribers, pushed the listing as each hand began) when
    each hand ended. A tournament's session page holds it back so too
    (``Tournaments.session_detail``)."""
    if not entry.get("spectator_delay_seconds"):
        return entry
    return {**entry, "hand_no": None}

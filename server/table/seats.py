"""Who sits in a seat: a person (``HUMAN``, by username) or a server bot (``BOT``), and
whether the person is there (``connected``) or since when away (``away_since``, the
table's monotonic time)."""

from __future__ import annotations

from dataclasses import dataclass

from server.table import sources

HUMAN, BOT = "human", "bot"


@dataclass
class Seat:
    kind: str  # HUMAN or BOT
    name: str  # the username, or the bot's name
    connected: bool = True
    away_since: float | None = None  # monotonic time the human left or lost the connection
    address: str | None = None  # where the human last connected from (rated matches keep it)

    @property
    def label(self) -> str:
        return self.name if self.kind == HUMAN else f"bot:{self.name}"

    @classmethod
    def from_label(cls, label: str, grace: float = 0.0) -> Seat:
        """A seat restored from the database: its player counts as away only after
        ``grace`` seconds, time to reconnect after a restart."""
        if label.startswith("bot:"):
            return cls(BOT, label[4:])
        away = sources.time.monotonic() + grace
        return cls(HUMAN, label, connected=False, away_since=away)

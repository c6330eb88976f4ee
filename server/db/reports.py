"""Reports read from the database for the HTTP API: a player's summary, a match's detail,
and a finished match as the replayable JSON lines of ``guobiao simulate --log``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import aliased

from server.db.models import GameTable, Hand, Match, MatchAction, MatchPlayer, Player, iso
from server.db.rows import MatchPrivacy
from server.db.transactions import Transactions
from server.tournaments.held import held

RECENT_MATCHES = 20  # matches listed by player_summary


def private() -> ColumnElement[bool]:
    """True for a match (``Match``, correlated with the query it is used in) played at a
    private table: its record is its invite code's (``server.match_access``), and no list
    names it. Not a private tournament's table: its matches are the tournament's, whose
    pages link them (``private_code``). (Its own name for the table it reads, as ``held``
    has.)"""
    table = aliased(GameTable, name="private_table")
    return (
        select(table.id)
        .where(
            table.id == Match.table_id,
            table.private.is_(True),
            table.invite_code.is_not(None),
            table.tournament_id.is_(None),
        )
        .exists()
    )


def private_code(private: bool, invite_code: str | None, tournament_id: int | None) -> str | None:
    """The invite code without which a table's match is not shown (``private``): a private
    table's, unless the table is a tournament's. A private tournament's tables are private
    too (unlisted, watched with their code), but its matches are the tournament's: its
    pages, which whoever has its link may read, link them, and its players have no code
    (docs/tournaments.md)."""
    return invite_code if private and tournament_id is None else None


class Reports(Transactions):
    """The ``Store``'s reports (the HTTP API)."""

    async def player_summary(
        self, username: str, recent: int = RECENT_MATCHES
    ) -> dict[str, Any] | None:
        """Grade, counts and the most recent finished matches of a player; None if unknown.
        A match whose outcome is held (``server.tournaments.held``) is not listed, nor
        counted (``finish_match``) until its session is over; a private table's match is
        counted but never listed (``private``)."""
        async with self._read() as session:
            player = await session.scalar(
                select(Player).where(Player.username_key == username.lower())
            )
            if player is None:
                return None
            rows = await session.execute(
                select(MatchPlayer, Match)
                .join(Match, Match.id == MatchPlayer.match_id)
                .where(MatchPlayer.player_id == player.id, ~held(), ~private())
                .order_by(Match.ended_at.desc(), Match.id.desc())
                .limit(recent)
            )
            matches = [
                {
                    "match": match.id,
                    "table": match.table_id,
                    "rules": match.rules,
                    "ended_at": iso(match.ended_at),
                    "player": mp.player,
                    "score": mp.score,
                    "won": mp.won,
                    "lost": mp.lost,
                    "drawn": mp.drawn,
                    "final_scores": match.final_scores,
                    "seats": match.seats,
                }
                for mp, match in rows
            ]
            return {
                "username": player.username,
                "guest": player.guest,
                "created_at": iso(player.created_at),
                "grade": player.grade,
                "score": player.score,
                "hands_won": player.hands_won,
                "hands_lost": player.hands_lost,
                "hands_drawn": player.hands_drawn,
                "matches": player.matches,
                "recent": matches,
            }

    async def match_privacy(self, match_id: int) -> MatchPrivacy | None:
        """What ``server.match_access`` weighs of a match before any path of the HTTP API
        shows it: its table's invite code (a private table's), its spectators' delay, its
        end; None for no such match. One read of two rows by their keys."""
        async with self._read() as session:
            row = (
                await session.execute(
                    select(
                        Match.ended_at,
                        GameTable.private,
                        GameTable.invite_code,
                        GameTable.spectator_delay_seconds,
                        GameTable.tournament_id,
                    )
                    .outerjoin(GameTable, GameTable.id == Match.table_id)
                    .where(Match.id == match_id)
                )
            ).first()
        if row is None:
            return None
        return MatchPrivacy(
            invite_code=private_code(bool(row.private), row.invite_code, row.tournament_id),
            spectator_delay_seconds=row.spectator_delay_seconds or 0,
            ended_at=row.ended_at,
        )

    async def match_detail(
        self, match_id: int, *, shown_until: datetime | None = None
    ) -> dict[str, Any] | None:
        """A match and its finished hands (fans, deltas...); None if unknown. The seed and
        salt are included only once the match is finished. ``shown_until`` (a table whose
        spectators see it late, ``server.match_access.shown_until``): only the hands
        finished by then are listed, and the match reads as in play (no end, no final
        scores, no seed), as its spectators still see it."""
        async with self._read() as session:
            match = await session.get(Match, match_id)
            if match is None:
                return None
            shown = select(Hand).where(Hand.match_id == match_id)
            if shown_until is not None:
                shown = shown.where(Hand.finished_at <= shown_until)
            hands = await session.scalars(shown.order_by(Hand.hand_no))
            ended_at = match.ended_at if shown_until is None else None
            detail: dict[str, Any] = {
                "match": match.id,
                "table": match.table_id,
                "rules": match.rules,
                "rule_options": match.rule_options,
                "hands_planned": match.hands_planned,
                "rated": match.rated,
                "seats": match.seats,
                "started_at": iso(match.started_at),
                "ended_at": iso(ended_at),
                "finished": ended_at is not None,
                "final_scores": match.final_scores if ended_at is not None else None,
                "hands": [{**h.record, "finished_at": iso(h.finished_at)} for h in hands],
            }
            if ended_at is not None:
                detail["seed"] = match.seed
                detail["salt"] = match.salt
            return detail

    async def match_log(self, match_id: int) -> list[dict[str, Any]] | None:
        """A finished match as the JSON lines of ``guobiao simulate --log`` (replayable with
        ``guobiao replay``): a ``match`` line with the seed, then each hand's ``action``
        lines (with ``"stand_in": true`` on a move the server played for a person) and its
        ``result`` line. None for an unknown match or one still in play (its seed is
        secret)."""
        async with self._read() as session:
            match = await session.get(Match, match_id)
            if match is None or match.ended_at is None:
                return None
            actions = await session.execute(
                select(
                    MatchAction.hand_no,
                    MatchAction.player,
                    MatchAction.action,
                    MatchAction.stand_in,
                )
                .where(MatchAction.match_id == match_id)
                .order_by(MatchAction.seq)
            )
            hands = await session.execute(
                select(Hand.hand_no, Hand.record)
                .where(Hand.match_id == match_id)
                .order_by(Hand.hand_no)
            )
            header = {
                "type": "match",
                "match": match.id,
                "seed": match.seed,
                "rules": match.rules,
                "table": match.table_id,
                "seats": match.seats,
            }
            if match.rule_options is not None:
                header["rule_options"] = match.rule_options
            header["hands"] = match.hands_planned
            return [header, *_log_lines(match.id, actions.all(), hands.all())]


def _log_lines(
    match_id: int,
    actions: Iterable[tuple[int, int, dict[str, Any], bool]],
    hands: Iterable[tuple[int, dict[str, Any]]],
) -> list[dict[str, Any]]:
    """Each hand's actions, then its result line (the order ``guobiao replay`` reads). An
    action the server played for a person says so (``"stand_in": true``, only then: the
    other lines are as they always were; a replay reads past it)."""
    by_hand: dict[int, list[dict[str, Any]]] = {}
    for hand_no, player, action, stand_in in actions:
        line = {
            "type": "action",
            "match": match_id,
            "hand": hand_no,
            "player": player,
            "action": action,
        }
        if stand_in:
            line["stand_in"] = True
        by_hand.setdefault(hand_no, []).append(line)
    results = dict(hands)
    lines: list[dict[str, Any]] = []
    for hand_no in sorted(by_hand.keys() | results.keys()):
        lines.extend(by_hand.get(hand_no, []))
        if hand_no in results:
            lines.append(
                {"type": "result", "match": match_id, "hand": hand_no, "record": results[hand_no]}
            )
    return lines

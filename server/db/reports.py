"""Reports read from the database for the HTTP API: a player's summary, a match's detail,
and a finished match as the replayable JSON lines of ``guobiao simulate --log``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select

from server.db.models import Hand, Match, MatchAction, MatchPlayer, Player, iso
from server.db.transactions import Transactions
from server.tournaments.held import held

RECENT_MATCHES = 20  # matches listed by player_summary


class Reports(Transactions):
    """The ``Store``'s reports (the HTTP API)."""

    async def player_summary(
        self, username: str, recent: int = RECENT_MATCHES
    ) -> dict[str, Any] | None:
        """Grade, counts and the most recent finished matches of a player; None if unknown.
        A match whose outcome is held (``server.tournaments.held``) is not listed, nor
        counted (``finish_match``) until its session is over."""
        async with self._read() as session:
            player = await session.scalar(
                select(Player).where(Player.username_key == username.lower())
            )
            if player is None:
                return None
            rows = await session.execute(
                select(MatchPlayer, Match)
                .join(Match, Match.id == MatchPlayer.match_id)
                .where(MatchPlayer.player_id == player.id, ~held())
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

    async def match_detail(self, match_id: int) -> dict[str, Any] | None:
        """A match and its finished hands (fans, deltas...); None if unknown. The seed and
        salt are included only once the match is finished."""
        async with self._read() as session:
            match = await session.get(Match, match_id)
            if match is None:
                return None
            hands = await session.scalars(
                select(Hand).where(Hand.match_id == match_id).order_by(Hand.hand_no)
            )
            detail: dict[str, Any] = {
                "match": match.id,
                "table": match.table_id,
                "rules": match.rules,
                "rule_options": match.rule_options,
                "hands_planned": match.hands_planned,
                "rated": match.rated,
                "seats": match.seats,
                "started_at": iso(match.started_at),
                "ended_at": iso(match.ended_at),
                "finished": match.ended_at is not None,
                "final_scores": match.final_scores,
                "hands": [{**h.record, "finished_at": iso(h.finished_at)} for h in hands],
            }
            if match.ended_at is not None:
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

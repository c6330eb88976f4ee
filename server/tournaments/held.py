"""The one rule of whether anything of a match's outcome may be shown yet (``held``): not
while the duplicate session it was played in goes on (docs/tournaments.md, "Duplicate
MCR"). Every read of an outcome applies it in its query (the player pages, the match
records, the standings, the session pages), and a held match's players' counts and grades
wait for the session's end (``recount``, in the transaction that ends it), so no page can
show them early and none shows them twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import JSON, ColumnElement, and_, func, select, type_coerce
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from server.db.models import GameTable, Match, MatchPlayer, Player, Tournament, TournamentSession
from server.grades import grade


def held() -> ColumnElement[bool]:
    """True for a match (``Match``, correlated with the query it is used in) whose outcome
    may not be shown yet: one played at a table of a duplicate tournament session that has
    not finished. Its tables play the same walls, so any of its results (scores, hands,
    counts, a grade, standings) would tell the tables still playing what their walls hold.

    The session's table is known from the lobby table's own tag (``tables.tournament_id``,
    ``tournament_session``), written before its match is created. (Its own names for the
    tables it reads, so that a query reading them too, ``Match`` aside, is not confused.)"""
    table = aliased(GameTable, name="held_table")
    session = aliased(TournamentSession, name="held_session")
    tournament = aliased(Tournament, name="held_tournament")
    duplicate = type_coerce(tournament.settings, JSON)["duplicate"].as_boolean()
    return (
        select(table.id)
        .join(
            session,
            and_(
                session.tournament_id == table.tournament_id,
                session.number == table.tournament_session,
            ),
        )
        .join(tournament, tournament.id == table.tournament_id)
        .where(table.id == Match.table_id, session.state != "finished", duplicate.is_(True))
        .exists()
    )


async def recount(session: AsyncSession, player_ids: Sequence[int]) -> None:
    """Set each player's cached counts and grade (``players``: score, hands won, lost and
    drawn, matches, grade) to the sum of its recorded matches (``match_players``) that may
    be shown (``held``): the counts of a duplicate session's matches, held until it ends,
    are taken in by the transaction that ends it. Exact whatever came before (a restart, a
    repeated call): a sum, not an increment. The rows are locked first, in id order, as
    ``Store.finish_match`` locks them, so a match finishing meanwhile is counted once."""
    if not player_ids:
        return
    ids = sorted(set(player_ids))
    players = {
        p.id: p
        for p in await session.scalars(
            select(Player).where(Player.id.in_(ids)).order_by(Player.id).with_for_update()
        )
    }
    totals = {
        row.player_id: row
        for row in await session.execute(
            select(
                MatchPlayer.player_id,
                func.coalesce(func.sum(MatchPlayer.score), 0).label("score"),
                func.coalesce(func.sum(MatchPlayer.won), 0).label("won"),
                func.coalesce(func.sum(MatchPlayer.lost), 0).label("lost"),
                func.coalesce(func.sum(MatchPlayer.drawn), 0).label("drawn"),
                func.count().label("matches"),
            )
            .join(Match, Match.id == MatchPlayer.match_id)
            .where(MatchPlayer.player_id.in_(ids), ~held())
            .group_by(MatchPlayer.player_id)
        )
    }
    for player_id, player in players.items():
        row = totals.get(player_id)
        score, won, lost, drawn, matches = (
            (int(row.score), int(row.won), int(row.lost), int(row.drawn), int(row.matches))
            if row is not None
            else (0, 0, 0, 0, 0)
        )
        player.score, player.hands_won, player.hands_lost = score, won, lost
        player.hands_drawn, player.matches = drawn, matches
        player.grade = grade(score, won, lost, drawn)

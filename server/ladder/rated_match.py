"""A rated match in the database: ``rate_match`` runs inside the transaction of
``Store.finish_match`` (a rated match is finished and rated together, once, or not at
all) and returns the rating changes it made, so the table tells its players without
reading them back; ``match_changes`` reads them back later (the match page, a retried
finish); ``foursome_key`` names a match's four accounts (the farm limit).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.models import Match, Player, Rating, RatingChange, iso
from server.ladder.rating import Rating as Skill
from server.ladder.rating import RatingParams, conservative, ranks, rate
from server.ladder.seasons import SeasonPolicy, current_season, earlier_rating, season_start


async def rate_match(
    session: AsyncSession,
    match: Match,
    *,
    players: Sequence[Player],
    scores: Sequence[int],
    now: datetime,
    policy: SeasonPolicy,
) -> list[dict[str, Any]]:
    """Rate a finished rated match (in the caller's transaction): the season that holds
    ``now``, each player's rating before (their row in the season, or the season's start),
    one update, the ratings and the rating changes stored, the match given its season and
    its place in the season's order. ``players``: the accounts by player index. Returns the
    rating changes by player index, as ``LadderStore.match_changes`` reads them back."""
    player_ids = [p.id for p in players]
    season = await current_season(session, match.rules, now, policy)
    params = RatingParams.from_dict(season.params)
    rows = {
        r.player_id: r
        for r in await session.scalars(
            select(Rating)
            .where(Rating.season_id == season.id, Rating.player_id.in_(player_ids))
            .with_for_update()
        )
    }
    before = []
    for player_id in player_ids:
        row = rows.get(player_id)
        if row is not None:
            before.append(Skill(row.mu, row.sigma))
        else:
            before.append(season_start(await earlier_rating(session, season, player_id), params))
    after = rate(before, scores, params)
    places = ranks(scores)
    season.rated_matches += 1
    match.season_id = season.id
    match.rating_seq = season.rated_matches
    changes = []
    for index, (player, old, new) in enumerate(zip(players, before, after, strict=True)):
        player_id = player.id
        change = RatingChange(
            match_id=match.id,
            player=index,
            player_id=player_id,
            season_id=season.id,
            rank=places[index],
            score=int(scores[index]),
            mu_before=old.mu,
            sigma_before=old.sigma,
            mu_after=new.mu,
            sigma_after=new.sigma,
        )
        session.add(change)
        changes.append({**change_dict(change, now), "name": player.username})
        row = rows.get(player_id)
        if row is None:
            session.add(
                Rating(
                    season_id=season.id,
                    player_id=player_id,
                    mu=new.mu,
                    sigma=new.sigma,
                    conservative=new.conservative,
                    matches=1,
                    last_played_at=now,
                )
            )
        else:
            row.mu, row.sigma, row.conservative = new.mu, new.sigma, new.conservative
            row.matches += 1
            row.last_played_at = now
    return changes


async def match_changes(session: AsyncSession, match_id: int) -> list[dict[str, Any]]:
    """The stored rating changes of a match, by player index (empty if it made none), in
    the caller's transaction: what ``rate_match`` returned when it rated the match."""
    rows = await session.execute(
        select(RatingChange, Match.ended_at, Player.username)
        .join(Match, Match.id == RatingChange.match_id)
        .join(Player, Player.id == RatingChange.player_id)
        .where(RatingChange.match_id == match_id)
        .order_by(RatingChange.player)
    )
    return [{**change_dict(c, ended), "name": name} for c, ended, name in rows]


def foursome_key(player_ids: Sequence[int]) -> str:
    """The four accounts of a rated match, as ``matches.foursome`` stores them."""
    return ",".join(str(i) for i in sorted(player_ids))


def change_dict(change: RatingChange, ended_at: datetime | None) -> dict[str, Any]:
    return {
        "match": change.match_id,
        "ended_at": iso(ended_at),
        "player": change.player,
        "rank": change.rank,
        "score": change.score,
        "mu_before": change.mu_before,
        "sigma_before": change.sigma_before,
        "mu_after": change.mu_after,
        "sigma_after": change.sigma_after,
        "rating_before": conservative(change.mu_before, change.sigma_before),
        "rating_after": conservative(change.mu_after, change.sigma_after),
    }

"""A ladder's seasons in the database (docs/ladder.md): how the ladders run
(``SeasonPolicy``, the ``[ladder]`` configuration), the season that holds a moment (created
when the first rated match of a new season ends), and the rating a player starts a season
with (the soft reset of an earlier season's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.models import Rating, Season, iso
from server.ladder.rating import Rating as Skill
from server.ladder.rating import RatingParams, soft_reset


@dataclass(frozen=True, slots=True)
class SeasonPolicy:
    """How the ladders run (``[ladder]`` in the configuration): which rule presets have a
    ladder, the rating model of a new season, how long seasons last (0: until an operator
    starts the next), how many matches make a player established, and the farm limit."""

    ladders: tuple[str, ...] = ("mcr",)
    params: RatingParams = field(default_factory=RatingParams)
    season_days: int = 0
    provisional_matches: int = 10
    same_four_per_day: int = 3


class LadderError(ValueError):
    """A ladder request that cannot be met: an unknown ladder or season."""


def season_name(number: int) -> str:
    return f"Season {number}"


async def current_season(
    session: AsyncSession, ladder: str, now: datetime, policy: SeasonPolicy
) -> Season:
    """The season of ``ladder`` that holds ``now``, created if there is none yet (the first
    season starts at ``now``) or if the latest one has ended (with ``season_days``, seasons
    roll on from the first one's start; empty ones are skipped, not created)."""
    latest = await session.scalar(
        select(Season)
        .where(Season.ladder == ladder)
        .order_by(Season.number.desc())
        .limit(1)
        .with_for_update()
    )
    if latest is not None and (latest.ends_at is None or now < latest.ends_at):
        return latest
    days = timedelta(days=policy.season_days)
    if latest is None:
        number, starts = 1, now
    else:
        assert latest.ends_at is not None
        number, starts = latest.number + 1, latest.ends_at
        if policy.season_days:
            while starts + days <= now:  # seasons nobody played in are not created
                starts += days
    return await add_season(session, ladder, number, name=None, starts=starts, policy=policy)


async def add_season(
    session: AsyncSession,
    ladder: str,
    number: int,
    *,
    name: str | None,
    starts: datetime,
    policy: SeasonPolicy,
) -> Season:
    """A new season of ``ladder`` from ``starts``, under the configured rating model; it
    ends ``season_days`` later (with none, when the next one starts)."""
    days = timedelta(days=policy.season_days)
    season = Season(
        ladder=ladder,
        number=number,
        name=name or season_name(number),
        starts_at=starts,
        ends_at=starts + days if policy.season_days else None,
        params=policy.params.to_dict(),
        rated_matches=0,
    )
    session.add(season)
    await session.flush()
    return season


async def earlier_rating(
    session: AsyncSession, season: Season, player_id: int
) -> tuple[Skill, RatingParams] | None:
    """A player's last rating in an earlier season of the same ladder, with its season's
    model (which says how it is reset)."""
    row = (
        await session.execute(
            select(Rating.mu, Rating.sigma, Season.params)
            .join(Season, Season.id == Rating.season_id)
            .where(
                Rating.player_id == player_id,
                Season.ladder == season.ladder,
                Season.number < season.number,
            )
            .order_by(Season.number.desc())
            .limit(1)
        )
    ).first()
    if row is None:
        return None
    return Skill(row.mu, row.sigma), RatingParams.from_dict(row.params)


def season_start(earlier: tuple[Skill, RatingParams] | None, params: RatingParams) -> Skill:
    """A player's rating before the first match of a season: the soft reset of the last one
    of an earlier season (by that season's rule), or a new player's."""
    if earlier is None:
        return params.initial
    rating, earlier_params = earlier
    return soft_reset(rating, earlier_params)


def season_summary(season: Season) -> dict[str, Any]:
    return {
        "id": season.id,
        "ladder": season.ladder,
        "number": season.number,
        "name": season.name,
        "starts_at": iso(season.starts_at),
        "ends_at": iso(season.ends_at),
        "rated_matches": season.rated_matches,
        "params": season.params,
    }

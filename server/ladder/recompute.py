"""``guobiao ladder recompute``'s work (``LadderStore.recompute``): every rated match of
the chosen seasons replayed, in the order it was rated (``matches.rating_seq``), from the
stored results (``match_players``: who sat where, the final scores), and each rating
change and each final rating compared with what is stored, and fixed if asked.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.models import Match, MatchPlayer, Rating, RatingChange, Season
from server.ladder.rating import Rating as Skill
from server.ladder.rating import RatingParams, ranks, rate
from server.ladder.seasons import LadderError, season_start


@dataclass(frozen=True, slots=True)
class RecomputeReport:
    """What ``recompute`` found: matches and players replayed, and the stored figures that
    differed from the replay (``changes``: rating-change rows, ``ratings``: rating rows),
    each fixed unless it was a check only."""

    seasons: int
    matches: int
    players: int
    changes: int
    ratings: int
    seconds: float = 0.0

    @property
    def equal(self) -> bool:
        return self.changes == 0 and self.ratings == 0


class Recomputation:
    """One run of ``LadderStore.recompute``, on the store's units of work."""

    def __init__(
        self,
        read: Callable[[], AbstractAsyncContextManager[AsyncSession]],
        write: Callable[[], AbstractAsyncContextManager[AsyncSession]],
    ) -> None:
        self._read = read
        self._write = write

    async def run(
        self,
        ladder: str | None = None,
        season: int | None = None,
        *,
        fix: bool = True,
        progress: Callable[[int], None] | None = None,
    ) -> RecomputeReport:
        """``LadderStore.recompute``: replay the chosen seasons, compare, fix if asked.

        A season is replayed from the start ratings its players had: the soft reset of
        their last rating of an earlier season, as stored (or as replayed just before, when
        the earlier season is part of the same run)."""
        if season is not None and ladder is None:
            raise LadderError("a season number needs its ladder")
        async with self._read() as session:
            query = select(Season).order_by(Season.ladder, Season.number)
            if ladder is not None:
                query = query.where(Season.ladder == ladder)
            if season is not None:
                query = query.where(Season.number == season)
            seasons = list(await session.scalars(query))
        if season is not None and not seasons:
            raise LadderError(f"ladder {ladder!r} has no season {season}")
        replayed: dict[tuple[str, int], dict[int, Skill]] = {}
        totals = [0, 0, 0, 0]  # matches, players, changes, ratings
        for found in seasons:
            finals, counts = await self._replay_season(found, replayed, fix, progress)
            replayed[(found.ladder, found.number)] = finals
            for i, n in enumerate(counts):
                totals[i] += n
        return RecomputeReport(len(seasons), *totals)

    async def _replay_season(
        self,
        season: Season,
        replayed: dict[tuple[str, int], dict[int, Skill]],
        fix: bool,
        progress: Callable[[int], None] | None,
    ) -> tuple[dict[int, Skill], tuple[int, int, int, int]]:
        async with self._read() as session:
            replay = _SeasonReplay(
                season.id,
                RatingParams.from_dict(season.params),
                await self._earlier_ratings(session, season, replayed),
            )
            rows = await session.stream(
                select(
                    Match.id,
                    Match.ended_at,
                    MatchPlayer.player,
                    MatchPlayer.player_id,
                    MatchPlayer.score,
                    *CHANGE_FIGURES,  # columns, not entities: a third of the time
                )
                .join(MatchPlayer, MatchPlayer.match_id == Match.id)
                .outerjoin(
                    RatingChange,
                    and_(
                        RatingChange.match_id == Match.id,
                        RatingChange.player == MatchPlayer.player,
                    ),
                )
                .where(Match.season_id == season.id)
                .order_by(Match.rating_seq, MatchPlayer.player)
                .execution_options(yield_per=4000)
            )
            group: list[Any] = []
            async for partition in rows.partitions():  # a batch a wait, not a row a wait
                for row in partition:
                    if group and group[0][0] != row[0]:
                        replay.match(group)
                        group = []
                        if progress is not None and replay.matches % 10000 == 0:
                            progress(replay.matches)
                    group.append(row)
            if group:
                replay.match(group)
            stored = {
                r.player_id: r
                for r in await session.execute(
                    select(
                        Rating.player_id,
                        Rating.mu,
                        Rating.sigma,
                        Rating.conservative,
                        Rating.matches,
                        Rating.last_played_at,
                    ).where(Rating.season_id == season.id)
                )
            }
        wrong_ratings = []
        for player_id, skill in replay.current.items():
            kept = stored.get(player_id)
            values = {
                "mu": skill.mu,
                "sigma": skill.sigma,
                "conservative": skill.conservative,
                "matches": replay.played[player_id],
                "last_played_at": replay.last_at[player_id],
            }
            if kept is None or any(getattr(kept, k) != v for k, v in values.items()):
                wrong_ratings.append((player_id, values, kept is None))
        extra = [pid for pid in stored if pid not in replay.current]
        if fix and (replay.wrong or wrong_ratings or extra):
            async with self._write() as session:
                for change in replay.wrong:
                    existing = await session.get(
                        RatingChange, (change["match_id"], change["player"])
                    )
                    if existing is None:
                        session.add(RatingChange(**change))
                    else:
                        for name, value in change.items():
                            setattr(existing, name, value)
                for player_id, values, missing in wrong_ratings:
                    if missing:
                        session.add(Rating(season_id=season.id, player_id=player_id, **values))
                    else:
                        await session.execute(
                            update(Rating)
                            .where(Rating.season_id == season.id, Rating.player_id == player_id)
                            .values(**values)
                        )
                for player_id in extra:
                    gone = await session.get(Rating, (season.id, player_id))
                    if gone is not None:
                        await session.delete(gone)
        counts = (
            replay.matches,
            len(replay.current),
            len(replay.wrong),
            len(wrong_ratings) + len(extra),
        )
        return replay.current, counts

    async def _earlier_ratings(
        self,
        session: AsyncSession,
        season: Season,
        replayed: dict[tuple[str, int], dict[int, Skill]],
    ) -> dict[int, tuple[Skill, RatingParams]]:
        """Each player's last rating before ``season`` (of its ladder), with the model of
        the season it was earned in: replayed in this run if that season was, else stored."""
        earlier: dict[int, tuple[Skill, RatingParams]] = {}
        rows = await session.execute(
            select(Season)
            .where(Season.ladder == season.ladder, Season.number < season.number)
            .order_by(Season.number)
        )
        for (past,) in rows.all():
            past_params = RatingParams.from_dict(past.params)
            finals = replayed.get((past.ladder, past.number))
            if finals is None:
                finals = {
                    r.player_id: Skill(r.mu, r.sigma)
                    for r in await session.execute(
                        select(Rating.player_id, Rating.mu, Rating.sigma).where(
                            Rating.season_id == past.id
                        )
                    )
                }
            for player_id, skill in finals.items():
                earlier[player_id] = (skill, past_params)  # later seasons overwrite
        return earlier


# What a stored rating change holds, in ``_SeasonReplay.match``'s order of ``figures``.
CHANGE_FIGURES = (
    RatingChange.rank,
    RatingChange.score,
    RatingChange.mu_before,
    RatingChange.sigma_before,
    RatingChange.mu_after,
    RatingChange.sigma_after,
)


@dataclass
class _SeasonReplay:
    """One season being replayed by ``recompute``: the ratings so far, and the stored
    rating changes that differ from the replay (``wrong``, as rows to store)."""

    season_id: int
    params: RatingParams
    earlier: dict[int, tuple[Skill, RatingParams]]
    current: dict[int, Skill] = field(default_factory=dict)
    played: dict[int, int] = field(default_factory=dict)
    last_at: dict[int, datetime] = field(default_factory=dict)
    wrong: list[dict[str, Any]] = field(default_factory=list)
    matches: int = 0

    def match(self, group: list[Any]) -> None:
        """Replay one match: its rows ``(match id, ended_at, player index, player id,
        score, *stored CHANGE_FIGURES or Nones)`` by player index."""
        self.matches += 1
        ids = [row[3] for row in group]
        scores = [row[4] for row in group]
        before = [
            self.current[pid]
            if pid in self.current
            else season_start(self.earlier.get(pid), self.params)
            for pid in ids
        ]
        after = rate(before, scores, self.params)
        for row, old, new, place in zip(group, before, after, ranks(scores), strict=True):
            match_id, ended_at, index, pid, score = row[:5]
            self.current[pid] = new
            self.played[pid] = self.played.get(pid, 0) + 1
            self.last_at[pid] = ended_at
            figures = {
                "rank": place,
                "score": score,
                "mu_before": old.mu,
                "sigma_before": old.sigma,
                "mu_after": new.mu,
                "sigma_after": new.sigma,
            }
            if tuple(row[5:]) != tuple(figures.values()):  # (all None: no stored row)
                self.wrong.append(
                    {
                        "match_id": match_id,
                        "player": index,
                        "player_id": pid,
                        "season_id": self.season_id,
                        **figures,
                    }
                )

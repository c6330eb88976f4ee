"""The ladder in the database: seasons, ratings, rating changes (docs/ladder.md).

``LadderStore`` (``Store.ladder``) holds the reads (ladders, leaderboards, a player's
history, seasons, the farm report) and the operator's writes (a new season, ``recompute``);
each is one unit of work, like the ``Store``'s own methods. Its parts:

- ``server.ladder.seasons``: how the ladders run (``SeasonPolicy``) and their seasons;
- ``server.ladder.rated_match``: ``rate_match``, which runs inside the transaction of
  ``Store.finish_match`` (a rated match is finished and rated together, once, or not at
  all) and returns the rating changes it made;
- ``server.ladder.recompute``: the replay of the stored history, checked against what is
  stored (the order ratings were applied in is stored, ``matches.rating_seq``, per season,
  so the history can be replayed exactly).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, literal, or_, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.models import Match, MatchPlayer, Player, Rating, RatingChange, Season, iso
from server.errors import shown
from server.ladder.rated_match import change_dict, foursome_key, match_changes, rate_match
from server.ladder.rating import Rating as Skill
from server.ladder.rating import RatingParams, is_provisional
from server.ladder.recompute import Recomputation, RecomputeReport
from server.ladder.seasons import (
    LadderError,
    SeasonPolicy,
    add_season,
    earlier_rating,
    season_start,
    season_summary,
)

__all__ = [
    "HISTORY_LIMIT",
    "PAGE_LIMIT",
    "PROVISIONAL_FILTERS",
    "LadderError",
    "LadderStore",
    "RecomputeReport",
    "SeasonPolicy",
    "foursome_key",
    "match_changes",
    "rate_match",
]

PAGE_LIMIT = 100  # the most rows one leaderboard page gives
HISTORY_LIMIT = 500  # the most rating changes one player page gives


def _rating_dict(
    rating: Rating, player: Player, rank: int | None, policy: SeasonPolicy
) -> dict[str, Any]:
    return {
        "rank": rank,
        "name": player.username,
        "rating": rating.conservative,
        "mu": rating.mu,
        "sigma": rating.sigma,
        "matches": rating.matches,
        "provisional": is_provisional(rating.matches, policy.provisional_matches),
        "grade": player.grade,
        "last_played": iso(rating.last_played_at),
    }


PROVISIONAL_FILTERS = ("false", "true", "all")


def _before(rating: Rating) -> Any:
    """Rows ahead of ``rating`` on the board (higher figure; on a tie, the higher id). The
    plain bound first: it is the range of the board index the databases read."""
    return and_(
        Rating.conservative >= rating.conservative,
        or_(
            Rating.conservative > rating.conservative,
            and_(Rating.conservative == rating.conservative, Rating.player_id > rating.player_id),
        ),
    )


def _after(rating: Rating) -> Any:
    """Rows behind ``rating`` on the board (with its plain bound, as ``_before``)."""
    return and_(
        Rating.conservative <= rating.conservative,
        or_(
            Rating.conservative < rating.conservative,
            and_(Rating.conservative == rating.conservative, Rating.player_id < rating.player_id),
        ),
    )


def _named(search: str, dialect: str) -> Any:
    """The ids of the players whose name starts with ``search`` (any case). On SQLite, the
    ``LIKE`` (the meaning) goes with the same prefix as a range of ``username_key``, which
    its unique index answers (a ``LIKE`` alone reads every name there: the index does not
    fold case). The range is exact there (binary order of ASCII names); PostgreSQL keeps the
    ``LIKE`` alone, as a range would depend on the database's collation."""
    key = search.lower()
    escaped = key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    name = Player.username_key
    query = select(Player.id).where(name.like(f"{escaped}%", escape="\\"))
    if dialect == "sqlite":
        query = query.where(name >= key, name < key + "\U0010ffff")
    return query


class LadderStore:
    """The ladder's reads and the operator's writes; ``Store.ladder``."""

    def __init__(
        self,
        read: Callable[[], AbstractAsyncContextManager[AsyncSession]],
        write: Callable[[], AbstractAsyncContextManager[AsyncSession]],
        policy: Callable[[], SeasonPolicy],
    ) -> None:
        self._read = read
        self._write = write
        self._policy = policy

    @property
    def policy(self) -> SeasonPolicy:
        return self._policy()

    def check_ladder(self, ladder: str) -> None:
        if ladder not in self.policy.ladders:
            known = ", ".join(self.policy.ladders) or "none"
            raise LadderError(f"there is no ladder {shown(ladder)}; ladders: {known}")

    async def _season(
        self, session: AsyncSession, ladder: str, number: int | None
    ) -> Season | None:
        query = select(Season).where(Season.ladder == ladder)
        if number is not None:
            query = query.where(Season.number == number)
        return await session.scalar(query.order_by(Season.number.desc()).limit(1))

    async def ladders(self) -> list[dict[str, Any]]:
        """Every ladder with its current season (None before its first rated match) and
        how many players it has, established and in all."""
        policy = self.policy
        out = []
        async with self._read() as session:
            for ladder in policy.ladders:
                season = await self._season(session, ladder, None)
                entry: dict[str, Any] = {
                    "id": ladder,
                    "season": season_summary(season) if season is not None else None,
                    "players": 0,
                    "established": 0,
                    "provisional_matches": policy.provisional_matches,
                }
                if season is not None:
                    entry["players"] = await session.scalar(
                        select(func.count()).where(Rating.season_id == season.id)
                    )
                    entry["established"] = await session.scalar(
                        select(func.count()).where(
                            Rating.season_id == season.id,
                            Rating.matches >= policy.provisional_matches,
                        )
                    )
                out.append(entry)
        return out

    async def seasons(self, ladder: str | None = None) -> list[dict[str, Any]]:
        """The seasons of one ladder (or all), oldest first."""
        async with self._read() as session:
            query = select(Season).order_by(Season.ladder, Season.number)
            if ladder is not None:
                query = query.where(Season.ladder == ladder)
            return [season_summary(s) for s in await session.scalars(query)]

    async def season_by_id(self, season_id: int) -> dict[str, Any] | None:
        async with self._read() as session:
            season = await session.get(Season, season_id)
            return season_summary(season) if season is not None else None

    async def leaderboard(
        self,
        ladder: str,
        *,
        season: int | None = None,
        season_id: int | None = None,
        offset: int = 0,
        limit: int = 50,
        provisional: str = "false",
        search: str | None = None,
    ) -> dict[str, Any] | None:
        """One page of a season's table (the current season unless ``season`` names its
        number, or ``season_id`` its id), ordered by the conservative figure, highest
        first. ``provisional``: ``"false"`` lists the established players (ranked 1, 2,
        ...), ``"true"`` the provisional ones, ``"all"`` both. ``search``: names starting
        with it (each keeps its rank). ``total``: the rows listed before paging (those the
        search found, with one). None if the season does not exist."""
        if provisional not in PROVISIONAL_FILTERS:
            raise LadderError(f"provisional must be one of {', '.join(PROVISIONAL_FILTERS)}")
        limit = max(1, min(limit, PAGE_LIMIT))
        offset = max(0, offset)
        policy = self.policy
        async with self._read() as session:
            if season_id is not None:
                found = await session.get(Season, season_id)
            else:
                found = await self._season(session, ladder, season)
            if found is None:
                return None
            conditions = [Rating.season_id == found.id]
            threshold = policy.provisional_matches
            if provisional == "false":
                conditions.append(Rating.matches >= threshold)
            elif provisional == "true":
                conditions.append(Rating.matches < threshold)
            order = (Rating.conservative.desc(), Rating.player_id.desc())
            # The page's players first, from the board index alone (it covers the filter),
            # then their rows: a deep offset skips index entries, not joined rows.
            page = select(Rating.player_id).where(*conditions)
            if search:
                dialect = session.get_bind().dialect.name
                page = page.where(Rating.player_id.in_(_named(search, dialect)))
            total = await session.scalar(select(func.count()).select_from(page.subquery()))
            chosen = page.order_by(*order).offset(offset).limit(limit).subquery()
            rows = (
                await session.execute(
                    select(Rating, Player)
                    .join(chosen, chosen.c.player_id == Rating.player_id)
                    .join(Player, Player.id == Rating.player_id)
                    .where(Rating.season_id == found.id)
                    .order_by(*order)
                )
            ).all()
            if search:
                places = await self._ranks(session, [r for r, _ in rows], conditions)
            else:
                places = [offset + i + 1 for i in range(len(rows))]
            players = [
                _rating_dict(rating, player, rank, policy)
                for (rating, player), rank in zip(rows, places, strict=True)
            ]
            return {
                "ladder": found.ladder,
                "season": season_summary(found),
                "provisional": provisional,
                "provisional_matches": threshold,
                "search": search or None,
                "total": total,
                "offset": offset,
                "limit": limit,
                "players": players,
            }

    @staticmethod
    async def _better(session: AsyncSession, rating: Rating, conditions: list[Any]) -> int:
        """How many rows of the listing come before ``rating`` (the board's order): a
        range of the board index, which covers the conditions."""
        count = await session.scalar(
            select(func.count()).select_from(Rating).where(*conditions, _before(rating))
        )
        return int(count or 0)

    @staticmethod
    async def _ranks(
        session: AsyncSession, ratings: Sequence[Rating], conditions: list[Any]
    ) -> list[int]:
        """The ranks of ``ratings`` (rows of the listing, in the board's order) in the
        listing: the rows before the first, then the rows between each and the next, in
        one query, so the index is read once up to the last, not once per row."""
        if not ratings:
            return []
        parts = [
            select(literal(0).label("i"), func.count().label("n"))
            .select_from(Rating)
            .where(*conditions, _before(ratings[0]))
        ]
        for i in range(1, len(ratings)):
            parts.append(
                select(literal(i).label("i"), func.count().label("n"))
                .select_from(Rating)
                .where(*conditions, _after(ratings[i - 1]), _before(ratings[i]))
            )
        gaps: dict[int, int] = dict((await session.execute(union_all(*parts))).all())
        out, rank = [], 0
        for i in range(len(ratings)):
            rank += int(gaps[i]) + 1
            out.append(rank)
        return out

    async def player(
        self, ladder: str, username: str, *, season: int | None = None
    ) -> dict[str, Any] | None:
        """A player on a ladder: the season's rating (None before a rated match in it), the
        rank among the established (None while provisional), the rating changes of the
        season oldest first, and a line per season played. None for an unknown player."""
        async with self._read() as session:
            player = await session.scalar(
                select(Player).where(Player.username_key == username.lower())
            )
            if player is None:
                return None
            found = await self._season(session, ladder, season)
            out: dict[str, Any] = {
                "ladder": ladder,
                "name": player.username,
                "guest": player.guest,
                "created_at": iso(player.created_at),
                "grade": player.grade,
                "season": season_summary(found) if found is not None else None,
                "rating": None,
                "history": [],
                "seasons": [],
            }
            if found is None:
                return out
            out["rating"] = await self._board_row(session, found, player)
            changes = await session.execute(
                select(RatingChange, Match.ended_at)
                .join(Match, Match.id == RatingChange.match_id)
                .where(RatingChange.player_id == player.id, RatingChange.season_id == found.id)
                .order_by(Match.rating_seq.desc())
                .limit(HISTORY_LIMIT)
            )
            out["history"] = [change_dict(c, ended) for c, ended in reversed(changes.all())]
            played = await session.execute(
                select(Rating, Season)
                .join(Season, Season.id == Rating.season_id)
                .where(Rating.player_id == player.id, Season.ladder == ladder)
                .order_by(Season.number)
            )
            out["seasons"] = [
                {
                    "season": s.number,
                    "id": s.id,
                    "name": s.name,
                    "rating": r.conservative,
                    "mu": r.mu,
                    "sigma": r.sigma,
                    "matches": r.matches,
                }
                for r, s in played
            ]
            return out

    async def _board_row(
        self, session: AsyncSession, season: Season, player: Player
    ) -> dict[str, Any] | None:
        """The player's leaderboard row in ``season`` (None before a rated match in it),
        ranked among the established (``rank`` None while provisional)."""
        policy = self.policy
        rating = await session.get(Rating, (season.id, player.id))
        if rating is None:
            return None
        rank = None
        if not is_provisional(rating.matches, policy.provisional_matches):
            conditions = [
                Rating.season_id == season.id,
                Rating.matches >= policy.provisional_matches,
            ]
            rank = 1 + await self._better(session, rating, conditions)
        return _rating_dict(rating, player, rank, policy)

    async def player_ratings(self, username: str) -> list[dict[str, Any]]:
        """A player's rating on each ladder's current season (the player page)."""
        out: list[dict[str, Any]] = []
        async with self._read() as session:
            player = await session.scalar(
                select(Player).where(Player.username_key == username.lower())
            )
            if player is None:
                return out
            for ladder in self.policy.ladders:
                season = await self._season(session, ladder, None)
                row = await self._board_row(session, season, player) if season else None
                if season is not None and row is not None:
                    out.append({"ladder": ladder, "season": season.number, **row})
        return out

    async def match_changes(self, match_id: int) -> list[dict[str, Any]]:
        """The rating changes a match made, by player index (empty if it made none)."""
        async with self._read() as session:
            return await match_changes(session, match_id)

    async def same_four(self, player_ids: Sequence[int], since: datetime) -> int:
        """Rated matches among exactly these four accounts started since ``since``."""
        async with self._read() as session:
            count = await session.scalar(
                select(func.count())
                .select_from(Match)
                .where(
                    Match.rated.is_(True),
                    Match.foursome == foursome_key(player_ids),
                    Match.started_at >= since,
                )
            )
            return int(count or 0)

    async def same_four_names(self, usernames: Sequence[str], since: datetime) -> int:
        """``same_four`` by usernames (unknown names: 0)."""
        async with self._read() as session:
            ids = list(
                await session.scalars(
                    select(Player.id).where(Player.username_key.in_([n.lower() for n in usernames]))
                )
            )
        if len(ids) != len(usernames):
            return 0
        return await self.same_four(ids, since)

    async def skill(self, ladder: str, username: str) -> Skill:
        """The rating a player would bring to a rated match now (the matchmaking queue
        compares these): the current season's, else the season's start (the soft reset of
        an earlier season's, or a newcomer's). Unknown names: a newcomer's."""
        policy = self.policy
        async with self._read() as session:
            season = await self._season(session, ladder, None)
            params = RatingParams.from_dict(season.params) if season is not None else policy.params
            player_id = await session.scalar(
                select(Player.id).where(Player.username_key == username.lower())
            )
            if player_id is None:
                return params.initial
            if season is None:
                return params.initial
            rating = await session.get(Rating, (season.id, player_id))
            if rating is not None:
                return Skill(rating.mu, rating.sigma)
            return season_start(await earlier_rating(session, season, player_id), params)

    # ------------------------------------------------------- operator's ---

    async def new_season(
        self, ladder: str, now: datetime, name: str | None = None
    ) -> dict[str, Any]:
        """End the ladder's current season at ``now`` and start the next one (with the
        configured rating model); the first season if it has none."""
        self.check_ladder(ladder)
        policy = self.policy
        async with self._write() as session:
            latest = await self._season(session, ladder, None)
            number = 1 if latest is None else latest.number + 1
            if latest is not None and (latest.ends_at is None or latest.ends_at > now):
                if now <= latest.starts_at:
                    raise LadderError(
                        f"season {latest.number} of {ladder} starts at {iso(latest.starts_at)}: "
                        "it cannot end before it starts"
                    )
                latest.ends_at = now
            season = await add_season(session, ladder, number, name=name, starts=now, policy=policy)
            return season_summary(season)

    async def farms(self, since: datetime, at_least: int = 2) -> list[dict[str, Any]]:
        """Groups of four accounts that played ``at_least`` rated matches together since
        ``since``, most first, with each account's age and the addresses it played from:
        what an operator looks at for one person farming a rating with four accounts."""
        async with self._read() as session:
            groups = await session.execute(
                select(Match.foursome, func.count(), func.max(Match.started_at))
                .where(
                    Match.rated.is_(True), Match.foursome.is_not(None), Match.started_at >= since
                )
                .group_by(Match.foursome)
                .having(func.count() >= at_least)
                .order_by(func.count().desc(), Match.foursome)
            )
            out = []
            for key, count, last in groups.all():
                ids = [int(i) for i in str(key).split(",")]
                accounts: list[dict[str, Any]] = []
                seen: dict[str, int] = {}
                for player in await session.scalars(
                    select(Player).where(Player.id.in_(ids)).order_by(Player.id)
                ):
                    addresses = await session.scalars(
                        select(MatchPlayer.address)
                        .join(Match, Match.id == MatchPlayer.match_id)
                        .where(
                            MatchPlayer.player_id == player.id,
                            MatchPlayer.address.is_not(None),
                            Match.foursome == key,
                        )
                        .distinct()
                    )
                    used = sorted(a for a in addresses if a is not None)
                    for address in used:
                        seen[address] = seen.get(address, 0) + 1
                    accounts.append(
                        {
                            "name": player.username,
                            "created_at": iso(player.created_at),
                            "addresses": used,
                        }
                    )
                out.append(
                    {
                        "accounts": accounts,
                        "matches": count,
                        "last": iso(last),
                        "shared_addresses": sorted(a for a, n in seen.items() if n > 1),
                    }
                )
            return out

    async def recompute(
        self,
        ladder: str | None = None,
        season: int | None = None,
        *,
        fix: bool = True,
        progress: Callable[[int], None] | None = None,
    ) -> RecomputeReport:
        """Replay every rated match of the chosen seasons (all seasons of all ladders, of
        one ladder, or one season of one ladder) in the order they were rated, from the
        stored results, and compare each rating change and each final rating with what is
        stored; with ``fix``, a stored figure that differs is replaced by the replayed one
        (``server.ladder.recompute``)."""
        return await Recomputation(self._read, self._write).run(
            ladder, season, fix=fix, progress=progress
        )

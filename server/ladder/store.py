"""The ladder in the database: seasons, ratings, rating changes (docs/ladder.md).

``rate_match`` runs inside the transaction of ``Store.finish_match``: a rated match is
finished and rated together, once, or not at all; it returns the rating changes it made,
so the table tells its players without reading them back. ``LadderStore`` (``Store.ladder``) holds
the reads (ladders, leaderboards, a player's history, seasons, the farm report) and the
operator's writes (a new season, ``recompute``); each is one unit of work, like the
``Store``'s own methods.

The order ratings were applied in is stored (``matches.rating_seq``, per season), so the
history can be replayed exactly: ``recompute`` rebuilds every rating from the stored
results (``match_players``: who sat where, the final scores) in that order and compares
with what is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, literal, or_, select, union_all, update
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.models import Match, MatchPlayer, Player, Rating, RatingChange, Season, iso
from server.errors import shown
from server.ladder.rating import Rating as Skill
from server.ladder.rating import (
    RatingParams,
    conservative,
    is_provisional,
    ranks,
    rate,
    soft_reset,
)

PAGE_LIMIT = 100  # the most rows one leaderboard page gives
HISTORY_LIMIT = 500  # the most rating changes one player page gives


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


# ------------------------------------------------------------------ seasons ---


def _season_name(number: int) -> str:
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
    return await _add_season(session, ladder, number, name=None, starts=starts, policy=policy)


async def _add_season(
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
        name=name or _season_name(number),
        starts_at=starts,
        ends_at=starts + days if policy.season_days else None,
        params=policy.params.to_dict(),
        rated_matches=0,
    )
    session.add(season)
    await session.flush()
    return season


async def _earlier_rating(
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


# ------------------------------------------------------------------- rating ---


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
            before.append(season_start(await _earlier_rating(session, season, player_id), params))
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
        changes.append({**_change_dict(change, now), "name": player.username})
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
    return [{**_change_dict(c, ended), "name": name} for c, ended, name in rows]


def foursome_key(player_ids: Sequence[int]) -> str:
    """The four accounts of a rated match, as ``matches.foursome`` stores them."""
    return ",".join(str(i) for i in sorted(player_ids))


# ------------------------------------------------------------------ reading ---


def _season_summary(season: Season) -> dict[str, Any]:
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


def _change_dict(change: RatingChange, ended_at: datetime | None) -> dict[str, Any]:
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
                    "season": _season_summary(season) if season is not None else None,
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
            return [_season_summary(s) for s in await session.scalars(query)]

    async def season_by_id(self, season_id: int) -> dict[str, Any] | None:
        async with self._read() as session:
            season = await session.get(Season, season_id)
            return _season_summary(season) if season is not None else None

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
                "season": _season_summary(found),
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
                "season": _season_summary(found) if found is not None else None,
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
            out["history"] = [_change_dict(c, ended) for c, ended in reversed(changes.all())]
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
            return season_start(await _earlier_rating(session, season, player_id), params)

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
            season = await _add_season(
                session, ladder, number, name=name, starts=now, policy=policy
            )
            return _season_summary(season)

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
        stored; with ``fix``, a stored figure that differs is replaced by the replayed one.

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

"""A big ladder, fast but real: players and rated matches written in bulk, rated as the server
would have rated them (``benchmarks/bench_ladder.py``, ``tests/server/ladder/test_ladder_seed.py``).

``plan`` draws the players and the matches (deterministic for a seed); ``seed`` writes them
into one new season of the ``mcr`` ladder with bulk ``insert()`` of rows, a batch of matches
per transaction. The ratings are computed with ``server.ladder.rating.rate`` in match order,
exactly as ``server.ladder.store.rate_match`` does inside ``Store.finish_match``: the
season (``rated_matches``), each match's ``season_id``, ``rating_seq`` and ``foursome``,
``match_players`` (player ids, scores), ``rating_changes`` (before, after, rank, score),
the final ``ratings`` (matches, ``last_played_at``) and the players' cached totals. The test
checks this row for row against the same plan played through ``Store.finish_match``.

The matches have no hand records (so, as ``finish_match`` counts them, no hands won, lost or
drawn), no addresses and no rule options: the ladder does not read them.

Activity: each player plays at least one match; how many more is drawn from a log-normal
distribution (a few play a lot, many play a little) scaled so the seats add up to 4 per
match. Most players are established only when there are enough seats for it: at least 10
matches each for most of them needs ``matches`` well above ``2.5 * players`` (with as many
matches as players, the mean is 4 a player and about a sixth are established).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.models import Match, MatchPlayer, Player, Rating, RatingChange, Season
from server.db.store import Store
from server.grades import grade
from server.ladder.rating import Rating as Skill
from server.ladder.rating import ranks, rate
from server.ladder.store import foursome_key
from server.text import skeleton

LADDER = "mcr"
START = datetime(2026, 9, 1, 8, 0, tzinfo=UTC)
MATCH_MINUTES = 40  # from start to end of a match
PASSWORD_HASH = "scrypt$seeded$" + "0" * 46  # no one logs in as a seeded player
SYLLABLES = (
    "an",
    "bai",
    "bo",
    "chen",
    "da",
    "fan",
    "feng",
    "gao",
    "hai",
    "hong",
    "hua",
    "jia",
    "jin",
    "kai",
    "lan",
    "lei",
    "li",
    "lin",
    "long",
    "mei",
    "ming",
    "nan",
    "ping",
    "qing",
    "rui",
    "shan",
    "tao",
    "wei",
    "wen",
    "xia",
    "xin",
    "yan",
    "yong",
    "yu",
    "yun",
    "zhang",
    "zhi",
    "zhou",
)
FANS = (8, 8, 8, 9, 10, 11, 12, 12, 13, 16, 16, 24, 32, 48, 64, 88)  # a winning hand's fans


@dataclass(frozen=True, slots=True)
class PlannedMatch:
    """One rated match: its seats (usernames by player index) and final scores."""

    seats: tuple[str, str, str, str]
    scores: tuple[int, int, int, int]
    started_at: datetime
    ended_at: datetime
    seed: int
    salt: str
    table_id: str


@dataclass(frozen=True, slots=True)
class Plan:
    players: list[str]  # usernames; ids are given in this order
    created_at: datetime
    matches: list[PlannedMatch]

    def activity(self, provisional_matches: int) -> dict[str, Any]:
        """How many matches the players play: min, median, max, and how many are
        provisional (under ``provisional_matches``)."""
        counts: dict[str, int] = dict.fromkeys(self.players, 0)
        for match in self.matches:
            for name in match.seats:
                counts[name] += 1
        ordered = sorted(counts.values())
        return {
            "min": ordered[0],
            "median": ordered[len(ordered) // 2],
            "max": ordered[-1],
            "provisional": sum(c < provisional_matches for c in ordered),
        }


def _names(count: int, rng: random.Random) -> list[str]:
    """``count`` distinct usernames like ``lanfeng417`` (valid account names)."""
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < count:
        name = f"{rng.choice(SYLLABLES)}{rng.choice(SYLLABLES)}{rng.randrange(1000)}"
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names


def _counts(players: int, seats: int, rng: random.Random) -> list[int]:
    """Matches per player: each at least 1, log-normal above that, adding up to ``seats``."""
    if seats < players:
        raise ValueError(f"{players} players need {players} seats, only {seats} (4 a match)")
    cap = max(1, seats // 16)  # nobody sits at more than a quarter of the tables
    if players * cap < seats:
        raise ValueError(f"{players} players cannot fill {seats // 4} matches")
    activity = [rng.lognormvariate(0.0, 1.1) for _ in range(players)]
    extra, total = seats - players, sum(activity)
    counts = [min(cap, 1 + int(a * extra / total)) for a in activity]
    total = sum(counts)
    while (short := seats - total) > 0:  # what rounding and the cap left: spread it
        for i in rng.sample(range(players), min(short, players)):
            if counts[i] < cap and total < seats:
                counts[i] += 1
                total += 1
    return counts


def _tables(counts: Sequence[int], rng: random.Random) -> list[list[int]]:
    """The seats dealt into matches of four different players."""
    seats = [p for p, c in enumerate(counts) for _ in range(c)]
    rng.shuffle(seats)
    groups = [seats[i : i + 4] for i in range(0, len(seats), 4)]
    for i, group in enumerate(groups):
        while len(set(group)) < 4:  # a player twice at a table: swap one out
            at = next(k for k in range(4) if group[k] in group[:k])
            other = rng.randrange(len(groups))
            j = rng.randrange(4)
            swap = groups[other][j]
            if other == i or swap in group or group[at] in groups[other]:
                continue
            group[at], groups[other][j] = swap, group[at]
    return groups


def _scores(skills: Sequence[float], rng: random.Random, hands: int = 16) -> tuple[int, ...]:
    """Final scores of a match of MCR hands (8 from each player to the winner, the fans
    from the discarder or from all three on a self-draw), winners favoured by skill."""
    scores = [0, 0, 0, 0]
    weights = [math.exp(s) for s in skills]
    for _ in range(hands):
        if rng.random() < 0.12:
            continue  # a drawn hand
        winner = rng.choices(range(4), weights)[0]
        fans = rng.choice(FANS)
        if rng.random() < 0.3:  # self-drawn
            for p in range(4):
                scores[p] += 3 * (8 + fans) if p == winner else -(8 + fans)
        else:
            discarder = rng.choice([p for p in range(4) if p != winner])
            for p in range(4):
                if p == winner:
                    scores[p] += 24 + fans
                elif p == discarder:
                    scores[p] -= 8 + fans
                else:
                    scores[p] -= 8
    return tuple(scores)


def plan(players: int, matches: int, seed: int = 1) -> Plan:
    """``players`` accounts and ``matches`` rated matches among them, a match every 50 s
    from ``START`` (each player in at least one)."""
    rng = random.Random(seed)
    names = _names(players, rng)
    skills = [rng.gauss(0.0, 0.6) for _ in range(players)]
    planned = []
    for n, group in enumerate(_tables(_counts(players, 4 * matches, rng), rng)):
        ended = START + timedelta(seconds=50 * (n + 1))
        scores = _scores([skills[p] for p in group], rng)
        planned.append(
            PlannedMatch(
                seats=(names[group[0]], names[group[1]], names[group[2]], names[group[3]]),
                scores=(scores[0], scores[1], scores[2], scores[3]),
                started_at=ended - timedelta(minutes=MATCH_MINUTES),
                ended_at=ended,
                seed=rng.getrandbits(63),
                salt=rng.randbytes(16).hex(),
                table_id=f"r{n % 500 + 1}",
            )
        )
    return Plan(names, START - timedelta(days=30), planned)


@dataclass
class _Totals:
    """A player's season rating (``ratings``) so far."""

    rating: Skill | None = None
    matches: int = 0
    last_at: datetime | None = None


@dataclass
class SeedReport:
    players: int
    matches: int
    season_id: int
    seconds: dict[str, float] = field(default_factory=dict)


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


async def _next_id(connection: AsyncConnection, column: Any) -> int:
    return int(await connection.scalar(select(func.coalesce(func.max(column), 0)))) + 1


async def seed(
    store: Store,
    planned: Plan,
    *,
    batch: int = 2000,
    progress: Callable[[str], None] | None = None,
) -> SeedReport:
    """Write ``planned`` into ``store``'s database as the first season of the ``mcr`` ladder
    (which must have none yet), rated under ``store.policy``'s model; ``batch`` matches a
    transaction."""
    import time  # noqa: PLC0415 (only for the report's figures)

    say = progress or (lambda _line: None)
    params = store.policy.params
    engine = store.engine
    clock = time.perf_counter()
    async with engine.begin() as connection:
        if await connection.scalar(select(func.count()).where(Season.ladder == LADDER)):
            raise ValueError(f"the {LADDER} ladder has seasons already: seed an empty one")
        first_player = await _next_id(connection, Player.id)
        first_match = await _next_id(connection, Match.id)
        season_id = await connection.scalar(
            insert(Season)
            .values(
                ladder=LADDER,
                number=1,
                name="Season 1",
                starts_at=planned.matches[0].ended_at,  # the first rated match made it
                ends_at=None,
                params=params.to_dict(),
                rated_matches=0,
            )
            .returning(Season.id)
        )
    ids = {name: first_player + i for i, name in enumerate(planned.players)}
    totals = {name: _Totals() for name in planned.players}
    cached = {name: [0, 0] for name in planned.players}  # score, matches: as all are finished
    for m in planned.matches:
        for name, score in zip(m.seats, m.scores, strict=True):
            cached[name][0] += score
            cached[name][1] += 1

    # Names that look alike (server.text.skeleton) share one skeleton: as the migration does
    # with such accounts, the first keeps it and the others have none (the column is unique).
    skeletons: dict[str, str | None] = {}
    taken: set[str] = set()
    for name in planned.players:
        found = skeleton(name)
        skeletons[name] = None if found in taken else found
        taken.add(found)

    # The players first, with their totals after all the matches, then the matches.
    async with engine.begin() as connection:
        for chunk in _chunks(planned.players, 5000):
            await connection.execute(
                insert(Player),
                [
                    {
                        "id": ids[name],
                        "username": name,
                        "username_key": name.lower(),
                        "username_skeleton": skeletons[name],
                        "password_hash": PASSWORD_HASH,
                        "guest": False,
                        "created_at": planned.created_at,
                        "score": cached[name][0],
                        "hands_won": 0,  # no hand records: as finish_match counts them
                        "hands_lost": 0,
                        "hands_drawn": 0,
                        "matches": cached[name][1],
                        "grade": grade(cached[name][0], 0, 0, 0),
                    }
                    for name in chunk
                ],
            )
    say(f"  {len(planned.players)} players")
    rating_seconds = 0.0
    for start in range(0, len(planned.matches), batch):
        matches, players, changes = [], [], []
        tick = time.perf_counter()
        for seq, m in enumerate(planned.matches[start : start + batch], start + 1):
            match_id = first_match + seq - 1
            before = [totals[name].rating or params.initial for name in m.seats]
            after = rate(before, m.scores, params)
            places = ranks(m.scores)
            player_ids = [ids[name] for name in m.seats]
            matches.append(
                {
                    "id": match_id,
                    "table_id": m.table_id,
                    "rules": LADDER,
                    "rule_options": None,
                    "hands_planned": 16,
                    "seed": m.seed,
                    "salt": m.salt,
                    "seats": list(m.seats),
                    "started_at": m.started_at,
                    "ended_at": m.ended_at,
                    "final_scores": list(m.scores),
                    "rated": True,
                    "foursome": foursome_key(player_ids),
                    "season_id": season_id,
                    "rating_seq": seq,
                }
            )
            for index, name in enumerate(m.seats):
                old, new, score = before[index], after[index], m.scores[index]
                players.append(
                    {
                        "match_id": match_id,
                        "player": index,
                        "player_id": player_ids[index],
                        "score": score,
                        "won": 0,
                        "lost": 0,
                        "drawn": 0,
                        "address": None,
                    }
                )
                changes.append(
                    {
                        "match_id": match_id,
                        "player": index,
                        "player_id": player_ids[index],
                        "season_id": season_id,
                        "rank": places[index],
                        "score": score,
                        "mu_before": old.mu,
                        "sigma_before": old.sigma,
                        "mu_after": new.mu,
                        "sigma_after": new.sigma,
                    }
                )
                total = totals[name]
                total.rating = new
                total.matches += 1
                total.last_at = m.ended_at
        rating_seconds += time.perf_counter() - tick
        async with engine.begin() as connection:
            await connection.execute(insert(Match), matches)
            await connection.execute(insert(MatchPlayer), players)
            await connection.execute(insert(RatingChange), changes)
        done = min(start + batch, len(planned.matches))
        rate_now = done / (time.perf_counter() - clock)
        say(f"  {done}/{len(planned.matches)} matches ({rate_now:.0f}/s)")

    # The season's ratings and count, and the players' totals, as the last finish left them.
    async with engine.begin() as connection:
        rows = []
        for name, total in totals.items():
            if total.rating is None:
                continue
            rows.append(
                {
                    "season_id": season_id,
                    "player_id": ids[name],
                    "mu": total.rating.mu,
                    "sigma": total.rating.sigma,
                    "conservative": total.rating.conservative,
                    "matches": total.matches,
                    "last_played_at": total.last_at,
                }
            )
        for chunk in _chunks(rows, 5000):
            await connection.execute(insert(Rating), list(chunk))
        await connection.execute(
            update(Season).where(Season.id == season_id).values(rated_matches=len(planned.matches))
        )
        if connection.dialect.name == "postgresql":  # the ids were given: move the sequences on
            for table in ("players", "matches"):
                await connection.execute(
                    text(
                        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                        f"(SELECT max(id) FROM {table}))"
                    )
                )
    say(f"  {len(rows)} ratings")
    return SeedReport(
        len(planned.players),
        len(planned.matches),
        int(season_id),
        {"rating": rating_seconds, "total": time.perf_counter() - clock},
    )

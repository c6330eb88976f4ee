"""The ladder in the database, on SQLite and PostgreSQL: a finished rated match is rated once,
in the transaction that finishes it, with the library's own arithmetic; seasons and the soft
reset; provisional players; the leaderboard and a player's history; recompute equals stored."""

from __future__ import annotations

import random
import secrets
from datetime import UTC, datetime, timedelta

import pytest
from openskill.models import PlackettLuce

from server.db.store import NotRateable, Store
from server.ladder.rating import Rating as Skill
from server.ladder.rating import RatingParams, conservative, soft_reset
from server.ladder.store import SeasonPolicy

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
SALT = "00" * 16


async def make_players(store: Store, names: list[str], *, guest: bool = False) -> None:
    for name in names:
        await store.create_player(name, None if guest else "x" * 60, guest, now=T0)


async def rated_match(
    store: Store, seats: list[str], scores: list[int], at: datetime, seed: int = 1
) -> int:
    salt = secrets.token_hex(32)  # a match of its own (a table's match is named by its salt)
    match_id = await store.create_match("t1", "mcr", seed, salt, seats, at, rated=True)
    assert await store.finish_match(match_id, scores, at + timedelta(minutes=30))
    return match_id


@pytest.mark.asyncio
async def test_a_rated_match_moves_ratings_as_the_library_does(store: Store) -> None:
    names = ["ann", "bob", "cat", "dan"]
    await make_players(store, names)
    match_id = await rated_match(store, names, [120, -40, -40, -40], T0)

    model = PlackettLuce()
    expected = model.rate([[model.rating()] for _ in names], ranks=[1.0, 2.0, 2.0, 2.0])
    changes = await store.rating_changes(match_id)
    assert [c["name"] for c in changes] == names
    assert [c["rank"] for c in changes] == [1, 2, 2, 2]
    assert [c["score"] for c in changes] == [120, -40, -40, -40]
    for change, team in zip(changes, expected, strict=True):
        assert (change["mu_before"], change["sigma_before"]) == (25.0, 25 / 3)
        assert (change["mu_after"], change["sigma_after"]) == (team[0].mu, team[0].sigma)
        assert change["rating_after"] == team[0].ordinal()
    # The three tied players moved alike; the winner went up.
    assert changes[1]["mu_after"] == changes[2]["mu_after"] == changes[3]["mu_after"] < 25
    assert changes[0]["mu_after"] > 25

    # Finishing it again (a retry after a lost reply) changes nothing, and gives back the
    # changes made the first time.
    again = await store.finish_match(match_id, [120, -40, -40, -40], T0)
    assert not again.ended_now and list(again.rating_changes) == changes
    assert await store.rating_changes(match_id) == changes
    board = await store.ladder.leaderboard("mcr", provisional="all")
    assert board is not None
    assert [p["matches"] for p in board["players"]] == [1, 1, 1, 1]


@pytest.mark.asyncio
async def test_finish_match_returns_the_rating_changes_it_made(store: Store) -> None:
    """The changes ``finish_match`` returns are those stored (``rating_changes`` reads them
    back), field for field, in a first season and in a later one, where the ratings before
    are not the newcomers'."""
    names = ["ann", "bob", "cat", "dan"]
    await make_players(store, names)
    for n, scores in enumerate(([120, -40, -40, -40], [-60, 80, 10, -30], [5, 5, -5, -5])):
        at = T0 + timedelta(hours=n)
        match_id = await store.create_match("t1", "mcr", n, SALT, names, at, rated=True)
        finished = await store.finish_match(match_id, scores, at + timedelta(minutes=30))
        assert finished.ended_now
        assert list(finished.rating_changes) == await store.rating_changes(match_id)
        assert [c["name"] for c in finished.rating_changes] == names
        assert [c["score"] for c in finished.rating_changes] == scores
        assert finished.rating_changes[0]["ended_at"] == f"2026-12-01T1{n}:30:00Z"
    await store.ladder.new_season("mcr", T0 + timedelta(days=1))
    match_id = await store.create_match(
        "t1", "mcr", 9, SALT, names, T0 + timedelta(days=2), rated=True
    )
    finished = await store.finish_match(match_id, [1, 2, 3, -6], T0 + timedelta(days=2, hours=1))
    assert list(finished.rating_changes) == await store.rating_changes(match_id)
    assert finished.rating_changes[0]["mu_before"] != 25.0  # the soft reset of season 1's


@pytest.mark.asyncio
async def test_a_rated_match_needs_four_registered_accounts(store: Store) -> None:
    await make_players(store, ["ann", "bob", "cat"])
    await make_players(store, ["guest-1"], guest=True)
    for seats in (
        ["ann", "bob", "cat", "guest-1"],
        ["ann", "bob", "cat", "bot:default"],
        ["ann", "bob", "cat", "nobody"],
        ["ann", "bob", "cat", "ANN"],
    ):
        with pytest.raises(NotRateable):
            await store.create_match("t1", "mcr", 1, SALT, seats, T0, rated=True)


@pytest.mark.asyncio
async def test_recompute_gives_back_exactly_the_stored_figures(store: Store) -> None:
    """Many seeded matches over two seasons (a soft reset between), then recompute: every
    stored figure equal; a damaged figure is found and repaired."""
    rng = random.Random(11)
    names = [f"p{i:02d}" for i in range(12)]
    await make_players(store, names)
    at = T0
    for n in range(60):
        if n == 30:
            await store.ladder.new_season("mcr", at)
        seats = rng.sample(names, 4)
        scores = [rng.choice([-48, -24, 0, 8, 24, 64, 120]) for _ in range(3)]
        scores.append(-sum(scores))
        await rated_match(store, seats, scores, at, seed=n)
        at += timedelta(hours=1)
    report = await store.ladder.recompute()
    assert (report.seasons, report.matches) == (2, 60)
    assert report.equal, report

    # The second season started everyone from the soft reset of their first-season rating.
    first = await store.ladder.player("mcr", "p00", season=1)
    second = await store.ladder.player("mcr", "p00", season=2)
    assert first is not None and second is not None and second["history"]
    end = first["rating"]
    start = soft_reset(Skill(end["mu"], end["sigma"]), RatingParams())
    assert (second["history"][0]["mu_before"], second["history"][0]["sigma_before"]) == (
        start.mu,
        start.sigma,
    )

    # Damage one stored rating: recompute --check finds it, recompute repairs it.
    from sqlalchemy import update  # noqa: PLC0415

    from server.db.models import Rating  # noqa: PLC0415

    async with store._write() as session:
        await session.execute(update(Rating).where(Rating.season_id == 2).values(mu=99.0))
    check = await store.ladder.recompute("mcr", 2, fix=False)
    assert not check.equal and check.ratings > 0
    assert not (await store.ladder.recompute("mcr", 2, fix=False)).equal  # check changed nothing
    assert not (await store.ladder.recompute()).equal  # repaired now
    assert (await store.ladder.recompute()).equal


@pytest.mark.asyncio
async def test_provisional_players_and_the_leaderboard(store: Store) -> None:
    store.policy = SeasonPolicy(provisional_matches=3)
    names = ["ann", "bob", "cat", "dan", "eve"]
    await make_players(store, names)
    at = T0
    for _ in range(3):
        await rated_match(store, ["ann", "bob", "cat", "dan"], [90, 10, -30, -70], at)
        at += timedelta(hours=1)
    await rated_match(store, ["eve", "bob", "cat", "dan"], [90, 10, -30, -70], at)
    established = await store.ladder.leaderboard("mcr")
    assert established is not None
    assert [p["name"] for p in established["players"]] == ["ann", "bob", "cat", "dan"]
    assert [p["rank"] for p in established["players"]] == [1, 2, 3, 4]
    assert established["total"] == 4
    ratings = [p["rating"] for p in established["players"]]
    assert ratings == sorted(ratings, reverse=True)
    assert all(p["rating"] == conservative(p["mu"], p["sigma"]) for p in established["players"])
    provisional = await store.ladder.leaderboard("mcr", provisional="true")
    assert provisional is not None
    assert [(p["name"], p["provisional"]) for p in provisional["players"]] == [("eve", True)]
    eve = await store.ladder.player("mcr", "eve")
    assert eve is not None and eve["rating"]["rank"] is None and len(eve["history"]) == 1
    found = await store.ladder.leaderboard("mcr", search="ca")
    assert found is not None and [(p["name"], p["rank"]) for p in found["players"]] == [("cat", 3)]

"""The ladder benchmark's bulk seeding (benchmarks/ladder_seed.py) writes exactly what the
server writes: the same plan of players and rated matches, once seeded in bulk and once
played through ``Store.finish_match``, gives the same rows in every table the ladder
touches, figure for figure; ``recompute`` finds the seeded ratings all equal; and the seeded
database goes on like the real one (the next match gets the next id and rating_seq)."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from server.db.models import Match, MatchPlayer, Player, Rating, RatingChange, Season
from server.db.store import Store, upgrade

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import ladder_seed

TABLES = (Player, Season, Match, MatchPlayer, Rating, RatingChange)


async def dump(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the ladder's tables, every column, in primary-key order."""
    out = {}
    async with store.engine.connect() as connection:
        for model in TABLES:
            table = model.__table__
            rows = await connection.execute(select(table).order_by(*table.primary_key.columns))
            out[table.name] = [tuple(row) for row in rows]
    return out


async def play(store: Store, planned: ladder_seed.Plan) -> None:
    """The plan through the server's own doors: accounts, then each match created and
    finished (rated in ``finish_match``'s transaction)."""
    for name in planned.players:
        await store.create_player(name, ladder_seed.PASSWORD_HASH, False, now=planned.created_at)
    for m in planned.matches:
        match_id = await store.create_match(
            m.table_id, "mcr", m.seed, m.salt, list(m.seats), m.started_at, rated=True
        )
        assert await store.finish_match(match_id, list(m.scores), m.ended_at)


@pytest.mark.asyncio
async def test_seeding_writes_what_finish_match_writes(store: Store, tmp_path: Path) -> None:
    planned = ladder_seed.plan(40, 200, seed=3)
    activity = planned.activity(store.policy.provisional_matches)
    assert activity["min"] >= 1 and 0 < activity["provisional"] < 40  # both kinds of player
    report = await ladder_seed.seed(store, planned, batch=64)  # several batches
    assert (report.players, report.matches) == (40, 200)

    url = f"sqlite+aiosqlite:///{tmp_path / 'reference.db'}"
    await upgrade(url)
    async with await Store.open(url) as reference:
        await play(reference, planned)
        expected = await dump(reference)
        seeded = await dump(store)
        for name, rows in expected.items():
            assert len(seeded[name]) == len(rows), name
            for got, want in zip(seeded[name], rows, strict=True):
                assert got == want, name
        assert len(seeded["rating_changes"]) == 800 and len(seeded["ratings"]) == 40

        recomputed = await store.ladder.recompute()
        assert (recomputed.seasons, recomputed.matches, recomputed.players) == (1, 200, 40)
        assert recomputed.equal, recomputed

        # The next match, on both: the seeded database goes on exactly as the real one.
        last = planned.matches[-1]
        later = last.ended_at + timedelta(hours=1)
        seats = list(planned.players[:4])
        for db in (store, reference):
            match_id = await db.create_match("t9", "mcr", 7, last.salt, seats, later, rated=True)
            assert match_id == 201
            assert await db.finish_match(match_id, [40, 8, -16, -32], later)
        assert await dump(store) == await dump(reference)
        board = await store.ladder.leaderboard("mcr", provisional="all", limit=100)
        assert board is not None and board["season"]["rated_matches"] == 201


@pytest.mark.asyncio
async def test_pages_searches_and_ranks_agree_with_sorting(store: Store) -> None:
    """The leaderboard's queries (a page from the board index, ranks of a search counted in
    one pass) against the board sorted here, on a seeded season with players of both kinds
    and tied figures: every filter, offset and name prefix, and each player's rank."""
    planned = ladder_seed.plan(60, 150, seed=5)
    await ladder_seed.seed(store, planned)
    ties = ["tiea", "tieb", "tiec", "tied"]  # one match of four newcomers, all square: a tie
    for name in ties:
        await store.create_player(name, ladder_seed.PASSWORD_HASH, False)
    at = planned.matches[-1].ended_at + timedelta(minutes=5)
    match_id = await store.create_match("t9", "mcr", 9, "00" * 16, ties, at, rated=True)
    assert await store.finish_match(match_id, [0, 0, 0, 0], at)
    threshold = store.policy.provisional_matches
    async with store.engine.connect() as connection:
        rows = (
            await connection.execute(
                select(Player.username, Rating.conservative, Rating.player_id, Rating.matches).join(
                    Rating, Rating.player_id == Player.id
                )
            )
        ).all()
    board = sorted(rows, key=lambda r: (-r.conservative, -r.player_id))
    figures = [r.conservative for r in board]
    assert len(set(figures)) < len(figures)  # ties, broken by the id
    listings = {
        "false": [r for r in board if r.matches >= threshold],
        "true": [r for r in board if r.matches < threshold],
        "all": board,
    }
    assert all(len(rows) > 10 for rows in listings.values())
    prefixes = [
        "",
        "tie",
        "TIEC",
        "z",
        "Zh",
        "a",
        "an",
        "wei",
        "x%",
        "_",
        "%",
        planned.players[7].upper(),
    ]
    for provisional, listing in listings.items():
        for prefix in prefixes:
            found = [
                (r.username, i + 1)
                for i, r in enumerate(listing)
                if r.username.startswith(prefix.lower())
            ]
            for offset, limit in ((0, 50), (3, 5), (max(0, len(found) - 2), 50), (500, 10)):
                page = await store.ladder.leaderboard(
                    "mcr", offset=offset, limit=limit, provisional=provisional, search=prefix
                )
                assert page is not None
                got = [(p["name"], p["rank"]) for p in page["players"]]
                assert got == found[offset : offset + limit], (provisional, prefix, offset)
                assert page["total"] == len(found)  # what the search found
    established = {r.username: i + 1 for i, r in enumerate(listings["false"])}
    for name in planned.players[:20]:
        found = await store.ladder.player("mcr", name)
        assert found is not None and found["rating"] is not None
        assert found["rating"]["rank"] == established.get(name)

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

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

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

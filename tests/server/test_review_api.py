"""``GET /api/matches/{id}/review?player=NAME`` against the real server: matches bots played
(tests/reviewkit.py) are stored as a table stores them, then reviewed over HTTP.

Served: a finished match's review, the one a worker process computed (the server's own
process never runs the judge), the same body again from the cache without a second
computation. Refused in the API's error form: a match in play, an unknown match or player, a
player several seats share; a duplicate session's match while the session plays (403, the
record's own check: the review must not tell a client another table's result), served once
the session is over; past the per-address limit 429 with ``Retry-After``, while a cached
review is still served.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from httpkit import Answer, http_request
from reviewkit import T0, stored_match
from serverkit import TEST_LIMITS, TEST_TIMERS
from test_duplicate_hold_back import session_table

from server.app import App
from server.config import Config, DatabaseSection, ReviewSection, ServerSection

FOUR = ["rv_ann", "bot:normal", "bot:normal", "bot:strong"]
BOTS = ["fast", "normal", "normal", "strong"]  # rv_ann plays as the fast bot: she misses
BURST = 3


@pytest_asyncio.fixture
async def app(tmp_path: Path, migrated_sqlite: Path) -> AsyncIterator[App]:
    """A server whose reviews are limited to ``BURST`` per address at once, one a minute
    after (the tests run well within a minute)."""
    shutil.copyfile(migrated_sqlite, tmp_path / "review.db")
    config = Config(
        server=ServerSection(host="127.0.0.1", port=0, data_dir=str(tmp_path)),
        database=DatabaseSection(url=f"sqlite+aiosqlite:///{tmp_path / 'review.db'}"),
        timers=TEST_TIMERS,
        limits=TEST_LIMITS,
        review=ReviewSection(workers=1, per_minute=1.0, burst=BURST),
    )
    server = App(config)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def get(app: App, path: str) -> tuple[Answer, Any]:
    answer = await http_request(app.port, path)
    body = json.loads(answer.body)
    if answer.status != 200:
        assert answer.headers["content-type"] == "application/json; charset=utf-8"
        assert isinstance(body["error"], str) and body["error"], body
    return answer, body


def review_path(match_id: int, name: str) -> str:
    return f"/api/matches/{match_id}/review?player={name}"


@pytest.mark.asyncio
async def test_a_finished_matchs_review_is_computed_in_a_worker_then_cached(app: App) -> None:
    match_id = await stored_match(app.store, "t1", FOUR, BOTS, seed=11, hands=2)
    first, body = await get(app, review_path(match_id, "RV_ANN"))  # any case
    assert first.status == 200, body
    assert body["match"] == match_id and body["player"] == 0 and body["name"] == "rv_ann"
    assert body["seats"] == FOUR and body["hands"] == 2 and body["scale"]
    assert body["stand_in"] == 0  # she played every move herself
    decisions = body["decisions"]
    assert decisions and all(d["choices"] > 1 and d["loss"] >= 0 for d in decisions)
    misses = [decisions[i] for i in body["misses"]]
    assert misses, "the fast bot's play had no miss"
    assert [m["loss"] for m in misses] == sorted((m["loss"] for m in misses), reverse=True)
    assert all(m["taken"] != m["preferred"] for m in misses)
    # Computed in a worker process, never the server's own.
    assert app.reviews.pool is not None
    workers = app.reviews.pool._processes  # (the processes the pool has started)
    assert workers and os.getpid() not in workers

    again, cached = await get(app, review_path(match_id, "rv_ann"))
    assert again.status == 200 and again.body == first.body and cached == body
    assert app.reviews.computed == 1

    strong = (await get(app, review_path(match_id, "bot:strong")))[1]
    assert strong["player"] == 3 and strong["decisions"] and strong["misses"] == []
    assert all(d["agrees"] for d in strong["decisions"])


@pytest.mark.asyncio
async def test_the_moves_the_server_played_for_the_player_are_not_reviewed(app: App) -> None:
    """rv_ann was away all hand 2: the server's moves for her there are counted
    (``stand_in``), not reviewed; hand 1 is hers and reviewed as always."""
    match_id = await stored_match(app.store, "t1", FOUR, BOTS, seed=11, hands=2, stand_in={(2, 0)})
    logged = await app.store.match_actions(match_id)
    played = [a for a in logged if a.stand_in]
    assert played and all((a.hand_no, a.player) == (2, 0) for a in played)
    answer, body = await get(app, review_path(match_id, "rv_ann"))
    assert answer.status == 200, body
    assert body["stand_in"] == len(played)
    assert body["decisions"] and {d["hand_no"] for d in body["decisions"]} == {1}
    assert all(body["decisions"][i]["hand_no"] == 1 for i in body["misses"])


@pytest.mark.asyncio
async def test_refusals_are_clear_json_errors(app: App) -> None:
    finished = await stored_match(app.store, "t2", FOUR, BOTS, seed=12)
    playing = await stored_match(app.store, "t3", FOUR, BOTS, seed=13, finished=False)
    cases = [
        (review_path(playing, "rv_ann"), 404, "no finished match"),
        (review_path(999_999, "rv_ann"), 404, "no finished match"),
        (review_path(finished, "nobody"), 404, "no player 'nobody'"),
        (f"/api/matches/{finished}/review", 400, "player=NAME"),
        (review_path(finished, "bot:normal"), 400, "seats 1, 2"),
        ("/api/matches/x/review?player=rv_ann", 400, "a match id"),
    ]
    for path, status, words in cases:
        answer, body = await get(app, path)
        assert answer.status == status, (path, body)
        assert words in body["error"], (path, body)
    assert app.reviews.computed == 0


@pytest.mark.asyncio
async def test_a_duplicate_sessions_match_is_reviewed_only_once_the_session_is_over(
    app: App,
) -> None:
    store = app.store
    tid = await session_table(store, "d1", duplicate=True, seats=FOUR)
    held = await stored_match(store, "d1", FOUR, BOTS, seed=14)
    for name in FOUR[:1] + FOUR[3:]:
        answer, body = await get(app, review_path(held, name))
        assert answer.status == 403, body
        assert "duplicate session 1" in body["error"]
        assert "decisions" not in body
    assert app.reviews.computed == 0  # refused before anything was read or computed

    assert await store.tournaments.finish_session(tid, 1, T0)
    answer, body = await get(app, review_path(held, "rv_ann"))
    assert answer.status == 200, body
    assert body["match"] == held and body["decisions"]


@pytest.mark.asyncio
async def test_past_the_limit_an_address_waits_but_a_cached_review_is_served(app: App) -> None:
    ids = [await stored_match(app.store, f"r{i}", FOUR, BOTS, seed=20 + i) for i in range(2)]
    asked = [(ids[0], "rv_ann"), (ids[0], "bot:strong"), (ids[1], "rv_ann")]
    assert len(asked) == BURST
    for match_id, name in asked:
        answer, body = await get(app, review_path(match_id, name))
        assert answer.status == 200, body
    answer, body = await get(app, review_path(ids[1], "bot:strong"))
    assert answer.status == 429, body
    assert "too many reviews" in body["error"]
    assert int(answer.headers["retry-after"]) == body["retry_after"] >= 1
    # What is cached costs nothing.
    answer, body = await get(app, review_path(ids[0], "rv_ann"))
    assert answer.status == 200 and body["match"] == ids[0]
    assert app.reviews.computed == BURST

"""Who may read a match's record over HTTP, and how much of it (``server.match_access``),
against the real server.

- A private table's match (its creator's ``create_table`` with ``private``) answers every
  path (``/api/matches/{id}``, ``/log``, ``/replay``, ``/review``) only with the table's
  invite code as ``?invite=CODE``: without it, or with another, 403 saying so, while in play
  and after; the player pages count it but do not list it.
- A table whose spectators see it late (``spectator_delay_seconds``) lists a finished hand
  only once it finished the delay ago, and reads as finished (scores, seed, log) only once
  it ended the delay ago.

And the rules themselves, as pure functions of the table and the time.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from httpkit import http_request
from test_server_bad_input import Wire, add_bots, guest, has_legal, play_out, url_of

from engine.bots import make_bot
from server.app import App
from server.db.store import MatchPrivacy
from server.match_access import invite_refusal, shown_until

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
DELAY = 5  # seconds: the delayed table's spectators see it this late
SECOND = timedelta(seconds=1)


async def get(app: App, path: str) -> tuple[int, Any]:
    """``(status, body)`` of a GET: JSON, or for a 200 of ``/log`` its JSON lines."""
    answer = await http_request(app.port, path)
    text = answer.body.decode()
    if answer.status == 200 and path.partition("?")[0].endswith("/log"):
        return answer.status, [json.loads(line) for line in text.splitlines()]
    return answer.status, json.loads(text)


async def stored_hands(app: App, match_id: int, count: int) -> list[dict[str, Any]]:
    """The match's hands as stored, once it has ``count`` of them (read past the HTTP API)."""
    async with asyncio.timeout(60):
        while True:
            detail = await app.store.match_detail(match_id)
            assert detail is not None
            if len(detail["hands"]) >= count:
                hands: list[dict[str, Any]] = detail["hands"]
                return hands
            await asyncio.sleep(0.02)


def refused_for_its_code(status: int, body: Any, match_id: int) -> None:
    assert status == 403, body
    assert body["private"] is True, body
    assert f"match {match_id} was played at a private table" in body["error"], body
    assert "invite" in body["error"], body


# ------------------------------------------------------------ private tables ---


@pytest.mark.asyncio
async def test_a_private_tables_match_is_read_only_with_its_invite_code(app: App) -> None:
    wire = await Wire.open(url_of(app))
    try:
        name = await guest(wire)
        payload = {"private": True, "hands": 2, "turn_seconds": 20}
        created = (await wire.answered("create_table", payload, "table_created"))["payload"]
        table, code = created["table"], created["invite_code"]
        assert code
        join = {"table": table, "seat": 0, "invite_code": code}
        await wire.answered("join_table", join, "joined")
        await add_bots(wire, table)
        bot = make_bot("default", seed=0)
        second = await play_out(wire, table, bot, until=lambda p: p["hand_no"] == 2)
        assert second is not None
        (match,) = await app.store.table_matches(table)
        match_id = match.id
        await stored_hands(app, match_id, 1)

        # In play, after hand 1: a visitor (no code, or a wrong one) learns nothing of it.
        where = f"/api/matches/{match_id}"
        for query in ("", "?invite=", "?invite=wrong", f"?invite={code}x", "?invite=%E4%B8%AD"):
            status, body = await get(app, where + query)
            refused_for_its_code(status, body, match_id)
        status, body = await get(app, f"{where}?invite={code}")
        assert status == 200, body
        assert body["table"] == table and body["seats"][0] == name
        assert [h["hand_no"] for h in body["hands"]][:1] == [1]

        end = await asyncio.wait_for(play_out(wire, table, bot), 120)
        assert end is not None and end["match"] == match_id
    finally:
        await wire.close()

    # Finished: every path of it is the code's, the log's seed and the replays included.
    for path in ("", "/log", "/replay", "/replay?hand=2", f"/review?player={name}"):
        status, body = await get(app, where + path)
        refused_for_its_code(status, body, match_id)
        joiner = "&" if "?" in path else "?"
        status, body = await get(app, f"{where}{path}{joiner}invite=wrong")
        refused_for_its_code(status, body, match_id)
        status, body = await get(app, f"{where}{path}{joiner}invite={code}")
        assert status == 200, (path, body)
    status, body = await get(app, f"{where}?invite={code}")
    assert body["finished"] is True and body["seed"] is not None
    status, body = await get(app, f"{where}/log?invite={code}")
    assert body[0]["type"] == "match" and body[0]["table"] == table

    # The player page counts the match, but lists none of a private table.
    status, summary = await get(app, f"/api/players/{name}")
    assert status == 200, summary
    assert summary["matches"] == 1 and summary["recent"] == []


@pytest.mark.asyncio
async def test_a_public_tables_match_needs_no_code_and_ignores_one(app: App) -> None:
    assert app.lobby is not None
    table = await app.lobby.create(None, None, False, hands=1, seated=["bot:fast"] * 4)
    (match,) = await app.store.table_matches(table.id)
    await stored_hands(app, match.id, 1)
    for query in ("", "?invite=anything"):
        status, body = await get(app, f"/api/matches/{match.id}{query}")
        assert status == 200 and body["table"] == table.id, body


# ------------------------------------------------------------ delayed tables ---


def split_by_delay(
    stored: list[dict[str, Any]], before: datetime, after: datetime
) -> tuple[set[int], set[int]]:
    """The hands that must be listed (finished the delay ago already when the request was
    sent) and those that must not (finished less than the delay before its answer). A
    hand's ``finished_at`` is shown to the second, the stored time cut: it ended within the
    second after."""
    due = {h["hand_no"] for h in stored if ended(h) + SECOND <= before - timedelta(seconds=DELAY)}
    early = {h["hand_no"] for h in stored if ended(h) > after - timedelta(seconds=DELAY)}
    return due, early


def ended(hand: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(hand["finished_at"])


async def read_delayed(app: App, match_id: int, table: str) -> tuple[Any, bool]:
    """``GET /api/matches/{id}`` of the delayed table, checked against the stored hands and
    end and the time: each hand listed once it ended the delay ago, not before; the match
    finished (scores, seed; its log, replays and reviews given) once it ended the delay ago,
    not before. The body, and whether it showed the match finished."""
    where = f"/api/matches/{match_id}"
    before = datetime.now(UTC)
    status, body = await get(app, where)
    after = datetime.now(UTC)
    assert status == 200, body
    stored = await stored_hands(app, match_id, 1)
    (row,) = await app.store.table_matches(table)
    due, early = split_by_delay(stored, before, after)
    listed = {h["hand_no"] for h in body["hands"]}
    assert due <= listed and not listed & early, (due, listed, early)
    shown_end = row.ended_at + timedelta(seconds=DELAY) if row.ended_at is not None else None
    if shown_end is None or shown_end > after:
        assert body["finished"] is False and body["final_scores"] is None, body
        assert body["ended_at"] is None and "seed" not in body, body
        assert body["rating_changes"] == [], body
    if shown_end is not None and shown_end <= before:
        assert body["finished"] is True, body
        return body, True
    for path in ("/log", "/replay", "/review?player=bot:fast"):
        status, refused = await get(app, where + path)
        if shown_end is None or shown_end > datetime.now(UTC):
            assert status == 404, (path, refused)
            if shown_end is not None:  # (in play: the path's own refusal)
                assert f"{DELAY} s after its end" in refused["error"], refused
    return body, body["finished"]


@pytest.mark.asyncio
async def test_a_delayed_tables_hands_are_listed_only_the_delay_after_they_end(
    app: App,
) -> None:
    assert app.lobby is not None
    wire = await Wire.open(url_of(app))
    try:
        name = await guest(wire)
        seated = [name, "bot:fast", "bot:fast", "bot:fast"]
        table = await app.lobby.create(
            None, 20, False, hands=2, seated=seated, spectator_delay_seconds=DELAY
        )
        await wire.answered("join_table", {"table": table.id}, "joined")
        (match,) = await app.store.table_matches(table.id)
        bot = make_bot("default", seed=0)
        # She plays hand 1; its record is read as soon as it ends (she sees its end)...
        over = await play_out(wire, table.id, bot, until=lambda p: p["view"]["phase"] == "over")
        assert over is not None and over["hand_no"] == 1
        (first,) = await stored_hands(app, match.id, 1)
        body, finished = await read_delayed(app, match.id, table.id)
        assert body["hands"] == [] and not finished  # hand 1 has just ended
        assert ended(first) > datetime.now(UTC) - timedelta(seconds=DELAY)
        # ... then she holds her first decision of hand 2 (20 s to take it).
        hold = await play_out(
            wire, table.id, bot, until=lambda p: p["hand_no"] == 2 and has_legal(p)
        )
        assert hold is not None
        async with asyncio.timeout(DELAY + 5):  # listed the delay after its end
            while not body["hands"]:
                await asyncio.sleep(0.2)
                body, finished = await read_delayed(app, match.id, table.id)
        assert [h["hand_no"] for h in body["hands"]] == [1] and not finished
        end = await asyncio.wait_for(play_out(wire, table.id, bot), 120)
        assert end is not None and end["match"] == match.id
    finally:
        await wire.close()

    # Ended: it still reads as in play (hand 2 and the end unseen) until the delay passes.
    async with asyncio.timeout(DELAY + 5):
        while not finished:
            await asyncio.sleep(0.2)
            body, finished = await read_delayed(app, match.id, table.id)
    stored = await stored_hands(app, match.id, 2)
    assert [h["hand_no"] for h in body["hands"]] == [h["hand_no"] for h in stored]
    assert body["final_scores"] == end["scores"] and "seed" in body
    status, lines = await get(app, f"/api/matches/{match.id}/log")
    assert status == 200 and lines[0]["seed"] == body["seed"]


# ----------------------------------------------------------------- the rules ---


def test_only_a_private_tables_match_asks_for_its_code() -> None:
    public = MatchPrivacy(invite_code=None, spectator_delay_seconds=0, ended_at=None)
    assert invite_refusal(public, 7, None) is None
    assert invite_refusal(public, 7, "anything") is None
    private = MatchPrivacy(invite_code="Ab3-x_", spectator_delay_seconds=0, ended_at=None)
    assert invite_refusal(private, 7, "Ab3-x_") is None
    for given in (None, "", "ab3-x_", "Ab3-x", "Ab3-x_ ", "中文"):
        reason = invite_refusal(private, 7, given)
        assert reason is not None and "match 7 was played at a private table" in reason


def test_a_delayed_tables_record_is_shown_the_delay_late() -> None:
    none = MatchPrivacy(invite_code=None, spectator_delay_seconds=0, ended_at=None)
    assert shown_until(none, T0) is None
    playing = MatchPrivacy(invite_code=None, spectator_delay_seconds=30, ended_at=None)
    assert shown_until(playing, T0) == T0 - timedelta(seconds=30)
    ended_now = MatchPrivacy(invite_code=None, spectator_delay_seconds=30, ended_at=T0)
    assert shown_until(ended_now, T0 + timedelta(seconds=29)) == T0 - timedelta(seconds=1)
    assert shown_until(ended_now, T0 + timedelta(seconds=30)) is None

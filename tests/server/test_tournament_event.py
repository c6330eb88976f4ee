"""Whole tournaments through the real server, with network clients playing engine bots:
16 players (and 15, and 17), 4 sessions, a time cap, a withdrawal, a substitute and a
penalty; the standings checked against an independent computation from the match results,
the seating checked for repeats and wind balance, every match against its replay; and a
duplicate session, its walls compared table by table (docs/tournaments.md)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import timedelta
from fractions import Fraction
from typing import Any

import pytest
from serverkit import StartServer
from tournamentkit import ask, connect, table_points, until_finished

import server.table
from engine.bots import make_bot
from engine.match import hand_seed
from engine.wall import Wall
from server.app import App
from server.client import Client, ConnectionLost, ServerError, play
from server.lobby import replay_log

HttpGet = Callable[[int, str], Awaitable[tuple[int, str]]]
DIRECTOR = "te_director"
RESERVE = "te_reserve"

pytestmark = pytest.mark.asyncio
# Twenty accounts registered from one address at once: more than the server lets a stranger.
MANY = {"register_burst": 100}


async def get_json(http_get: HttpGet, app: App, path: str) -> Any:
    status, body = await http_get(app.port, path)
    assert status == 200, (path, body)
    return json.loads(body)


async def agent(
    client: Client, played: list[str], seen: Callable[[Any], None] | None = None
) -> None:
    """A player: each time the server seats it (``tournament_session``), it plays that
    table with the default engine bot; ``played`` gets each table's id, ``seen`` every
    message of its tables."""
    with contextlib.suppress(ConnectionLost, asyncio.CancelledError):
        while True:
            told = await client.wait_for(lambda m: m.type == "tournament_session", timeout=3600)
            table = told.payload["table_id"]
            played.append(table)
            await play(client, table, make_bot("default"), on_message=seen)


async def match_row(app: App, table_id: str) -> Any:
    """The stored match (a ``MatchRow``) of a tournament table."""
    return (await app.store.table_matches(table_id))[-1]


@pytest.mark.parametrize(("count", "fill"), [(16, "byes"), (15, "substitutes"), (17, "byes")])
async def test_a_whole_tournament(
    start_server: StartServer,
    http_get: HttpGet,
    monkeypatch: pytest.MonkeyPatch,
    count: int,
    fill: str,
) -> None:
    app = await start_server(tournaments={"directors": DIRECTOR}, accounts=MANY)
    names = [f"te_p{i:02d}" for i in range(count)]
    director = await connect(app, DIRECTOR)
    clients = {n: await connect(app, n) for n in [*names, RESERVE]}
    played: dict[str, list[str]] = {n: [] for n in clients}
    agents = [asyncio.create_task(agent(c, played[n])) for n, c in clients.items()]
    clock = {"ahead": timedelta(0)}
    real_now = server.table.sources._now
    monkeypatch.setattr(server.table.sources, "_now", lambda: real_now() + clock["ahead"])
    try:
        tid = (
            await ask(
                director,
                "tournament_create",
                name=f"Event of {count}",
                sessions=4,
                hands=3,
                time_cap_minutes=1,
                turn_seconds=2,
                fill=fill,
                check_in=False,
            )
        )["id"]
        await ask(director, "tournament_add_players", tournament=tid, players=names)
        withdrawn = names[5]
        substituted = penalised = ""
        for number in range(1, 5):
            await ask(director, "tournament_seat", tournament=tid)
            if number == 2:  # the reserve takes a seat (a named substitute)
                # Two players seated in session 2 (with byes, not everyone is): the first
                # gives up the seat, the second is penalised in that session after it.
                seated = await get_json(http_get, app, f"/api/tournaments/{tid}/sessions/2")
                substituted, penalised = [
                    seat["player"]
                    for t in seated["tables"]
                    for seat in t["seats"]
                    if seat["player"]
                ][:2]
                await ask(
                    director,
                    "tournament_substitute",
                    tournament=tid,
                    player=substituted,
                    substitute=RESERVE,
                )
            if number == 3:  # past the cap at once: every table plays just its first hand
                clock["ahead"] = timedelta(minutes=2)
            await ask(director, "tournament_start_session", tournament=tid)
            body = await until_finished(director, tid, number)
            clock["ahead"] = timedelta(0)
            if number == 1:
                gone = await ask(clients[withdrawn], "tournament_withdraw", tournament=tid)
                assert gone["you"]["status"] == "withdrawn"
            if number == 2:
                await ask(
                    director,
                    "tournament_penalty",
                    tournament=tid,
                    player=penalised,
                    kind="penalty",
                    amount=-10,
                    reason="slow play",
                    session=2,
                )
        assert body["state"] == "finished"
        sessions = [
            await get_json(http_get, app, f"/api/tournaments/{tid}/sessions/{n}")
            for n in range(1, 5)
        ]
        detail = await get_json(http_get, app, f"/api/tournaments/{tid}")
    finally:
        for task in agents:
            task.cancel()
        await asyncio.gather(*agents, return_exceptions=True)
        for c in (director, *clients.values()):
            await c.close()

    # Every player could check every hand it played: it held the hand's commitment (the
    # tables are dealt before their players sit down, so hand 1's came with the hand).
    checked = 0
    for name, client in clients.items():
        for table_id in played[name]:
            state = client.tables[table_id]
            assert state.reveals and set(state.reveals) <= set(state.commits), (name, table_id)
            for hand_no, reveal in state.reveals.items():
                assert state.commits[hand_no] == reveal["commitment"], (name, table_id)
                checked += 1
    assert checked

    # The seating: every player at most once a session, the withdrawn one not after, the
    # repeats exactly those reported, and the winds as even as four sessions allow.
    pairs: Counter[frozenset[str]] = Counter()
    winds: dict[str, Counter[str]] = {n: Counter() for n in names}
    for s in sessions:
        seated = [seat["player"] for t in s["tables"] for seat in t["seats"] if seat["player"]]
        assert len(seated) == len(set(seated))
        assert set(seated) | set(s["byes"]) == (
            set(names) if s["number"] == 1 else set(names) - {withdrawn}
        )
        reported = {frozenset(r["players"]) for r in s["repeats"]}
        found = set()
        for t in s["tables"]:
            real = [seat["player"] for seat in t["seats"] if seat["player"]]
            for seat in t["seats"]:
                if seat["player"]:
                    winds[seat["player"]][seat["wind"]] += 1
            for pair in itertools.combinations(real, 2):
                if pairs[frozenset(pair)]:
                    found.add(frozenset(pair))
        assert found == reported, s["number"]
        assert bool(found) == bool(s["message"])
        for t in s["tables"]:
            real = [seat["player"] for seat in t["seats"] if seat["player"]]
            pairs.update(frozenset(p) for p in itertools.combinations(real, 2))
    repeats = sum(c - 1 for c in pairs.values() if c > 1)
    imbalance = max(
        max(w.values(), default=0) - min(w.get(x, 0) for x in "ESWN") for w in winds.values()
    )
    print(
        f"\n{count} players, 4 sessions ({fill}): {repeats} repeat pairing(s), "
        f"wind imbalance {imbalance}"
    )
    assert imbalance <= 2

    # The time cap: session 3's tables each played one hand; the others all three.
    hands = {}
    for s in sessions:
        for t in s["tables"]:
            detail_match = await get_json(http_get, app, f"/api/matches/{t['match']}")
            hands[s["number"], t["table"]] = len(detail_match["hands"])
    assert all(n == (1 if key[0] == 3 else 3) for key, n in hands.items()), hands

    # Every match finished with the result its log replays to.
    await check_replays(app, [t["table_id"] for s in sessions for t in s["tables"]])

    # The standings: recomputed here from the tables' final scores, substitutes left out.
    points: dict[str, Fraction] = {}
    scores: dict[str, int] = {}
    for s in sessions:
        for t in s["tables"]:
            for seat, tp, score in zip(
                t["seats"], table_points(t["scores"]), t["scores"], strict=True
            ):
                if seat["player"] is None or seat["substitute"] is not None:
                    continue
                points[seat["player"]] = points.get(seat["player"], Fraction(0)) + tp
                scores[seat["player"]] = scores.get(seat["player"], 0) + score
            assert [Fraction(x) for x in t["table_points"]] == table_points(t["scores"])
    scores[penalised] -= 10
    got = {r["player"]: (Fraction(r["table_points"]), r["score"]) for r in detail["standings"]}
    assert got == {p: (points[p], scores[p]) for p in points}
    assert RESERVE not in got  # a substitute is never a participant
    rows = {r["player"]: r for r in detail["standings"]}
    byes = {s["number"]: set(s["byes"]) for s in sessions}
    assert [ln["session"] for ln in rows[substituted]["sessions"]] == [
        n for n in (1, 3, 4) if substituted not in byes[n]
    ]
    if withdrawn in byes[1]:  # sat out session 1, then withdrew: never played
        assert withdrawn not in rows
    else:
        assert [ln["session"] for ln in rows[withdrawn]["sessions"]] == [1]
    order = [(Fraction(r["table_points"]), r["score"]) for r in detail["standings"]]
    assert order == sorted(order, reverse=True)
    # The players seated were told and played; the reserve played session 2 only.
    assert len(played[RESERVE]) == 1
    assert len(played[substituted]) == len(rows[substituted]["sessions"])


async def check_replays(app: App, table_ids: list[str]) -> None:
    """Each table's finished match has the final scores its action log replays to."""
    presets = app.lobby.presets if app.lobby else {}
    for table_id in table_ids:
        row = await match_row(app, table_id)
        match = replay_log(row, await app.store.match_actions(row.id), presets)
        assert row.ended_at is not None and list(match.scores) == list(row.final_scores)


async def test_a_duplicate_session_plays_the_same_walls_at_every_table(
    start_server: StartServer, http_get: HttpGet
) -> None:
    app = await start_server(tournaments={"directors": DIRECTOR}, accounts=MANY)
    names = [f"td_d{i}" for i in range(12)]
    director = await connect(app, DIRECTOR)
    clients = {n: await connect(app, n) for n in names}
    played: dict[str, list[str]] = {n: [] for n in clients}
    seen: list[Any] = []
    agents = [asyncio.create_task(agent(c, played[n], seen.append)) for n, c in clients.items()]
    try:
        tid = (
            await ask(
                director,
                "tournament_create",
                name="Duplicate",
                sessions=1,
                hands=4,
                turn_seconds=2,
                duplicate=True,
                check_in=False,
            )
        )["id"]
        await ask(director, "tournament_add_players", tournament=tid, players=names)
        await ask(director, "tournament_seat", tournament=tid)
        await ask(director, "tournament_start_session", tournament=tid)
        # A table's match exists once its four players have sat down (the agents do so
        # as they are told): until then the listing has no match to ask for.
        async with asyncio.timeout(30):
            while True:
                live = await get_json(http_get, app, f"/api/tournaments/{tid}/sessions/1")
                table = live["tables"][0]
                if table["match"] is not None:
                    break
                await asyncio.sleep(0.02)
        assert not table["watchable"]
        with pytest.raises(ServerError) as refused:
            await director.request("watch", {"table": table["table_id"]})
        assert refused.value.code == "not_watchable"
        status, body = await http_get(app.port, f"/api/matches/{table['match']}")
        assert status == 403 and "duplicate" in json.loads(body)["error"]
        during = await ask(director, "tournament_get", tournament=tid)
        assert during["standings"] == [] and during["duplicate"] == []
        await until_finished(director, tid, 1)
        session = await get_json(http_get, app, f"/api/tournaments/{tid}/sessions/1")
        detail = await get_json(http_get, app, f"/api/tournaments/{tid}")
    finally:
        for task in agents:
            task.cancel()
        await asyncio.gather(*agents, return_exceptions=True)
        for c in (director, *clients.values()):
            await c.close()

    # The walls: each table's match dealt every hand from the same seed, so the same wall.
    store = app.store
    rows = [await match_row(app, t["table_id"]) for t in session["tables"]]
    assert len(rows) == 3 and len({r.seed for r in rows}) == 1
    assert len({r.salt for r in rows}) == 3  # each table its own commitments
    presets = app.lobby.presets if app.lobby else {}
    walls = []
    for row in rows:
        match = replay_log(row, await store.match_actions(row.id), presets)
        walls.append(
            [
                (
                    record.dice,
                    Wall.from_seed(
                        hand_seed(row.seed, record.hand_no), record.dealer_position
                    ).tiles,
                )
                for record in match.records
            ]
        )
    assert walls[0] == walls[1] == walls[2]
    assert [w["seed_hex"] for w in session["walls"]] == [
        hand_seed(rows[0].seed, n).to_bytes(8, "big").hex() for n in range(1, len(walls[0]) + 1)
    ]
    # No reveal was sent during the session; each table's commitments check with the seeds,
    # and each player held the commitment of every hand played (hand 1's with the hand: the
    # table dealt it before they sat down).
    assert not any(m.type == "reveal" for m in seen)
    for t in session["tables"]:
        published = {c["hand_no"]: c["commitment"] for c in t["commitments"]}
        for c in t["commitments"]:
            salt = bytes.fromhex(c["salt"])
            seed = hand_seed(rows[0].seed, c["hand_no"])
            assert server.table.commitment(seed, salt) == c["commitment"]
        for seat in t["seats"]:
            held = clients[seat["player"]].tables[t["table_id"]].commits
            assert held == published, (seat["player"], t["table_id"])
    # Each player compared with the two others who held the same seat on each deal.
    assert {d["player"] for d in detail["duplicate"]} == set(names)
    assert all(d["deals"] == len(walls[0]) for d in detail["duplicate"])
    assert sum(Fraction(d["difference"]) for d in detail["duplicate"]) == 0

"""Tournaments through the real server: who may do what, registration, check-in, seating,
sessions whose tables the server makes and starts at once, standings from the results and
the corrections log, the HTTP API (docs/tournaments.md, docs/protocol.md "Tournaments")."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from fractions import Fraction
from typing import Any

import pytest
from serverkit import StartServer

from engine.bots import make_bot
from server.app import App
from server.client import Client, ServerError, play

HttpGet = Callable[[int, str], Awaitable[tuple[int, str]]]
PASSWORD = "correct horse battery"
DIRECTOR = "td_director"

pytestmark = pytest.mark.asyncio


async def connect(app: App, name: str | None) -> Client:
    """A client registered as ``name`` (a guest for None)."""
    client = await Client.connect(f"ws://127.0.0.1:{app.port}/ws", rate=None)
    if name is None:
        await client.guest()
    else:
        await client.register(name, PASSWORD)
    return client


async def ask(client: Client, kind: str, /, **payload: Any) -> dict[str, Any]:
    """The ``tournament`` reply to a request (``ServerError`` if refused)."""
    reply = await client.request(kind, payload)
    assert reply.type == "tournament", reply
    return reply.payload


async def refused(client: Client, kind: str, /, **payload: Any) -> ServerError:
    with pytest.raises(ServerError) as caught:
        await client.request(kind, payload)
    return caught.value


async def get_json(http_get: HttpGet, app: App, path: str) -> tuple[int, Any]:
    status, body = await http_get(app.port, path)
    return status, json.loads(body)


def expected_points(scores: list[int]) -> list[Fraction]:
    """4-2-1-0 by score, ties sharing the summed points (an independent computation)."""
    points = [4, 2, 1, 0]
    out = []
    for s in scores:
        above = sum(1 for x in scores if x > s)
        tied = sum(1 for x in scores if x == s)
        out.append(Fraction(sum(points[above : above + tied]), tied))
    return out


async def test_only_directors_create_and_direct_and_guests_take_no_part(
    start_server: StartServer,
) -> None:
    app = await start_server(tournaments={"directors": f"{DIRECTOR}, someone_else"})
    director = await connect(app, DIRECTOR)
    player = await connect(app, "td_player")
    guest = await connect(app, None)
    try:
        error = await refused(player, "tournament_create", name="Mine")
        assert error.code == "not_director" and "grant" in error.reason
        error = await refused(guest, "tournament_create", name="Mine")
        assert error.code == "not_registered"

        made = await ask(director, "tournament_create", name="Club night", sessions=3, hands=8)
        assert made["name"] == "Club night" and made["state"] == "registering"
        assert made["settings"]["sessions"] == 3 and made["settings"]["hands"] == 8
        assert made["settings"]["seating"] == ["random", "avoid", "avoid"]
        assert made["you"]["director"] and not made["you"]["player"]
        tid = made["id"]

        # A director-only action from a player is refused, and changes nothing.
        for kind, payload in [
            ("tournament_seat", {}),
            ("tournament_start_session", {}),
            ("tournament_registration", {"open": False}),
            ("tournament_add_players", {"players": ["td_player"]}),
            ("tournament_close", {}),
            ("tournament_penalty", {"player": "x", "kind": "penalty", "amount": -5, "reason": "r"}),
        ]:
            error = await refused(player, kind, tournament=tid, **payload)
            assert error.code == "not_director", (kind, error)
        seen = await ask(player, "tournament_get", tournament=tid)
        assert (
            seen["players"] == [] and seen["registration_open"] and seen["state"] == "registering"
        )
        assert not seen["you"]["director"]

        # The operator's grant (the CLI's store call) lets another account create.
        await app.store.tournaments.grant("td_player")
        assert (await ask(player, "tournament_create", name="Second"))["id"] == tid + 1
        error = await refused(player, "tournament_get", tournament=999)
        assert error.code == "no_such_tournament"
        error = await refused(director, "tournament_create", name="Bad", rules="nope")
        assert error.code == "bad_message" and "nope" in error.reason
        error = await refused(director, "tournament_create", name="Bad", seating=["zig"])
        assert error.code == "bad_message" and "zig" in error.reason
    finally:
        for c in (director, player, guest):
            await c.close()


async def test_registration_withdrawal_and_check_in(
    start_server: StartServer, http_get: HttpGet
) -> None:
    app = await start_server(tournaments={"directors": DIRECTOR})
    director = await connect(app, DIRECTOR)
    ann = await connect(app, "td_ann")
    bob = await connect(app, "td_bob")
    try:
        tid = (await ask(director, "tournament_create", name="Open", sessions=2))["id"]
        mine = await ask(ann, "tournament_register", tournament=tid)
        assert mine["you"]["player"] and mine["you"]["status"] == "registered"
        assert (await refused(ann, "tournament_register", tournament=tid)).code == (
            "already_registered"
        )
        assert (await refused(bob, "tournament_withdraw", tournament=tid)).code == "not_a_player"
        checked = await ask(ann, "tournament_check_in", tournament=tid)
        assert checked["you"]["checked_in"]
        assert [p["checked_in"] for p in checked["players"]] == [True]
        assert (await refused(ann, "tournament_check_in", tournament=tid)).code == (
            "already_registered"
        )

        await ask(director, "tournament_registration", tournament=tid, open=False)
        error = await refused(bob, "tournament_register", tournament=tid)
        assert error.code == "registration_closed" and "closed" in error.reason
        # The director still adds players; an unknown name adds nobody.
        error = await refused(
            director, "tournament_add_players", tournament=tid, players=["td_bob", "td_nobody"]
        )
        assert error.code == "bad_message" and "td_nobody" in error.reason
        assert [
            p["name"] for p in (await ask(bob, "tournament_get", tournament=tid))["players"]
        ] == ["td_ann"]
        added = await ask(director, "tournament_add_players", tournament=tid, players=["TD_BOB"])
        assert [p["name"] for p in added["players"]] == ["td_ann", "td_bob"]  # as spelled

        gone = await ask(ann, "tournament_withdraw", tournament=tid)
        assert gone["you"]["status"] == "withdrawn"
        assert {p["name"]: p["status"] for p in gone["players"]} == {
            "td_ann": "withdrawn",
            "td_bob": "registered",
        }
        status, body = await get_json(http_get, app, f"/api/tournaments/{tid}")
        assert status == 200 and {p["name"] for p in body["players"]} == {"td_ann", "td_bob"}
        assert "you" not in body  # the API is the same for everyone
        status, listed = await get_json(http_get, app, "/api/tournaments")
        assert status == 200 and [t["id"] for t in listed["tournaments"]] == [tid]
        assert listed["tournaments"][0]["players"] == 1
        for path, code in [
            ("/api/tournaments/99", 404),
            ("/api/tournaments/x", 400),
            (f"/api/tournaments/{tid}/sessions/1", 404),
            (f"/api/tournaments/{tid}/sessions/0", 400),
            (f"/api/tournaments/{tid}/nothing", 404),
        ]:
            status, body = await get_json(http_get, app, path)
            assert status == code and body["error"], (path, body)
    finally:
        for c in (director, ann, bob):
            await c.close()


async def test_a_session_is_seated_swapped_started_played_and_scored(
    start_server: StartServer, http_get: HttpGet
) -> None:
    """Eight players, two one-hand sessions: the players connected are seated and play;
    the standings are the table points of the results plus the director's corrections."""
    app = await start_server(tournaments={"directors": DIRECTOR})
    names = [f"td_p{i}" for i in range(8)]
    director = await connect(app, DIRECTOR)
    players = [await connect(app, n) for n in names]
    try:
        tid = (
            await ask(
                director,
                "tournament_create",
                name="Two sessions",
                sessions=2,
                hands=1,
                turn_seconds=1,
                seating=["random", "avoid"],
            )
        )["id"]
        for p in players:
            await ask(p, "tournament_register", tournament=tid)
        # Check-in: six of eight for session 1 -> one table of four, two byes.
        for p in players[:6]:
            await ask(p, "tournament_check_in", tournament=tid)
        assert (await refused(director, "tournament_start_session", tournament=tid)).code == (
            "no_seating"
        )
        seated = await ask(director, "tournament_seat", tournament=tid)
        assert seated["sessions"][0]["state"] == "seated" and seated["sessions"][0]["tables"] == 1
        status, session = await get_json(http_get, app, f"/api/tournaments/{tid}/sessions/1")
        assert status == 200 and len(session["byes"]) == 2
        table = [s["player"] for s in session["tables"][0]["seats"]]
        assert sorted(table + session["byes"]) == sorted(names[:6])
        # Every player checked in later is seated once the director seats again.
        for p in players[6:]:
            await ask(p, "tournament_check_in", tournament=tid)
        await ask(director, "tournament_seat", tournament=tid)
        _, session = await get_json(http_get, app, f"/api/tournaments/{tid}/sessions/1")
        first = [[s["player"] for s in t["seats"]] for t in session["tables"]]
        assert session["byes"] == [] and sorted(p for t in first for p in t) == sorted(names)
        # A swap between tables, atomically; an unknown player refused.
        a, b = first[0][0], first[1][0]
        await ask(director, "tournament_swap", tournament=tid, a=a, b=b)
        _, session = await get_json(http_get, app, f"/api/tournaments/{tid}/sessions/1")
        swapped = [[s["player"] for s in t["seats"]] for t in session["tables"]]
        assert swapped[0][0] == b and swapped[1][0] == a
        error = await refused(director, "tournament_swap", tournament=tid, a=a, b="td_nobody")
        assert error.code == "bad_message"

        ends = await run_session(director, players, tid)
        status, body = await get_json(http_get, app, f"/api/tournaments/{tid}")
        assert body["sessions"][0]["state"] == "finished"
        check_standings(body, ends, await seats_of(http_get, app, tid, 1))

        # Session 2 (check-in again): 8 players cannot avoid every repeat; the seating says so.
        for p in players:
            assert (await ask(p, "tournament_check_in", tournament=tid))["you"]["checked_in"]
        await ask(director, "tournament_seat", tournament=tid)
        _, session = await get_json(http_get, app, f"/api/tournaments/{tid}/sessions/2")
        assert session["repeats"] and "repeat" in session["message"]
        ends |= await run_session(director, players, tid)

        # A penalty, then its undo: recomputed each time, the log keeps both.
        victim = names[3]
        before = await ask(director, "tournament_get", tournament=tid)
        error = await refused(
            director,
            "tournament_penalty",
            tournament=tid,
            player=victim,
            kind="penalty",
            amount=5,
            reason="positive",
        )
        assert error.code == "bad_message" and "negative" in error.reason
        penalised = await ask(
            director,
            "tournament_penalty",
            tournament=tid,
            player=victim,
            kind="penalty",
            amount=-10,
            reason="late to the table",
        )
        score = {r["player"]: r["score"] for r in before["standings"]}
        after = {r["player"]: r["score"] for r in penalised["standings"]}
        assert after[victim] == score[victim] - 10
        assert {p: s for p, s in after.items() if p != victim} == {
            p: s for p, s in score.items() if p != victim
        }
        undone = await ask(
            director, "tournament_undo", tournament=tid, entry=penalised["entry"], reason="appeal"
        )
        assert {r["player"]: r["score"] for r in undone["standings"]} == score
        assert [(e["kind"], e["in_force"]) for e in undone["log"]] == [
            ("penalty", False),
            ("undo", True),
        ]
        body = (await get_json(http_get, app, f"/api/tournaments/{tid}"))[1]
        assert body["state"] == "finished"  # its last session played
        check_standings(body, ends, await seats_of(http_get, app, tid, 2))
        status, text = await http_get(app.port, f"/api/tournaments/{tid}/export.csv")
        assert status == 200 and text.splitlines()[0].startswith("place,player")
        assert len(text.splitlines()) == 1 + len(names)
        _, exported = await get_json(http_get, app, f"/api/tournaments/{tid}/export.json")
        assert [r["player"] for r in exported["standings"]] == [
            r["player"] for r in body["standings"]
        ]
    finally:
        for c in (director, *players):
            await c.close()


async def run_session(
    director: Client, players: list[Client], tid: int
) -> dict[tuple[int, int], dict[str, Any]]:
    """Start the seated session; every player, told where they sit, plays with a bot.
    Returns each table's ``match_end`` with its seats, by (session, table)."""

    async def seat_and_play(client: Client) -> tuple[dict[str, Any], dict[str, Any] | None]:
        told = await client.wait_for(lambda m: m.type == "tournament_session", timeout=20)
        end = await play(client, told.payload["table_id"], make_bot("default"))
        return told.payload, end

    playing = [asyncio.create_task(seat_and_play(p)) for p in players]
    await asyncio.sleep(0)
    started = await ask(director, "tournament_start_session", tournament=tid)
    assert started["sessions"][-1]["state"] == "playing"
    out: dict[tuple[int, int], dict[str, Any]] = {}
    for told, end in await asyncio.gather(*playing):
        assert end is not None
        out[told["session"], told["table"]] = end
    # The session is finished once every table's match is stored (the server's own check).
    for _ in range(100):
        body = await ask(director, "tournament_get", tournament=tid)
        if body["sessions"][-1]["state"] == "finished":
            return out
        await asyncio.sleep(0.05)
    raise AssertionError("the session never finished")


async def seats_of(
    http_get: HttpGet, app: App, tid: int, sessions: int
) -> dict[tuple[int, int], list[str]]:
    """Who sat at each seat of each table, by (session, table), as the API shows it."""
    out = {}
    for number in range(1, sessions + 1):
        _, session = await get_json(http_get, app, f"/api/tournaments/{tid}/sessions/{number}")
        for t in session["tables"]:
            out[number, t["table"]] = [s["player"] for s in t["seats"]]
    return out


def check_standings(
    body: dict[str, Any],
    ends: dict[tuple[int, int], dict[str, Any]],
    seats: dict[tuple[int, int], list[str]],
) -> None:
    """The standings' totals are, per player, the sum of the table points and scores of the
    tables played (recomputed here from the match ends), corrections in force added."""
    points: dict[str, Fraction] = {}
    scores: dict[str, int] = {}
    for key, end in ends.items():
        for name, tp, score in zip(
            seats[key], expected_points(end["scores"]), end["scores"], strict=True
        ):
            points[name] = points.get(name, Fraction(0)) + tp
            scores[name] = scores.get(name, 0) + score
    for entry in body["log"]:
        if entry["in_force"] and entry["kind"] == "penalty":
            scores[entry["player"]] += int(entry["amount"])
    got = {r["player"]: (Fraction(r["table_points"]), r["score"]) for r in body["standings"]}
    assert got == {p: (points[p], scores[p]) for p in points}
    order = [(Fraction(r["table_points"]), r["score"]) for r in body["standings"]]
    assert order == sorted(order, reverse=True)

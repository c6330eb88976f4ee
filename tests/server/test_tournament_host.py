"""Tournaments through the real server: who may do what, registration, check-in, seating,
sessions whose tables the server makes and starts at once, standings from the results and
the corrections log, the HTTP API (docs/tournaments.md, docs/protocol.md "Tournaments")."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from typing import Any

import pytest
from serverkit import StartServer
from tournamentkit import PASSWORD, ask, connect, refused, table_points, until_finished

from engine.bots import make_bot
from server.app import App
from server.client import Client, ServerError, play
from server.tournaments import host as host_module

HttpGet = Callable[[int, str], Awaitable[tuple[int, str]]]
DIRECTOR = "td_director"

pytestmark = pytest.mark.asyncio


async def get_json(http_get: HttpGet, app: App, path: str) -> tuple[int, Any]:
    status, body = await http_get(app.port, path)
    return status, json.loads(body)


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


async def test_a_tournament_whose_director_registers_the_players_is_not_open_to_them(
    start_server: StartServer, http_get: HttpGet
) -> None:
    """``registration_open`` says what players can do: with ``registration`` ``director`` it
    is false everywhere it is shown, though the director never closed registration."""
    app = await start_server(tournaments={"directors": DIRECTOR})
    director = await connect(app, DIRECTOR)
    ann = await connect(app, "td_ann")
    try:
        made = await ask(director, "tournament_create", name="Invited", registration="director")
        tid = made["id"]
        assert made["registration_open"] is False
        error = await refused(ann, "tournament_register", tournament=tid)
        assert error.code == "registration_closed" and "director registers" in error.reason
        assert (await ask(ann, "tournament_get", tournament=tid))["registration_open"] is False
        _, body = await get_json(http_get, app, f"/api/tournaments/{tid}")
        assert body["registration_open"] is False
        _, listed = await get_json(http_get, app, "/api/tournaments")
        assert [t["registration_open"] for t in listed["tournaments"]] == [False]
        # Made open before the first session: players may register at once.
        opened = await ask(director, "tournament_configure", tournament=tid, registration="open")
        assert opened["registration_open"] is True
        assert (await ask(ann, "tournament_register", tournament=tid))["you"]["player"]
    finally:
        for c in (director, ann):
            await c.close()


async def test_an_empty_seating_method_is_refused_as_an_unknown_one(
    start_server: StartServer,
) -> None:
    """Only an omitted ``method`` is the session's planned one; ``""`` names no method."""
    app = await start_server(tournaments={"directors": DIRECTOR})
    director = await connect(app, DIRECTOR)
    try:
        tid = (await ask(director, "tournament_create", name="Empty method"))["id"]
        error = await refused(director, "tournament_seat", tournament=tid, method="")
        assert error.code == "bad_message"
        assert error.reason.startswith("method: unknown seating method ''; known: ")
    finally:
        await director.close()


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

        # A penalty before anyone played waits in the log, then counts (check_standings).
        early = await ask(
            director,
            "tournament_penalty",
            tournament=tid,
            player=names[0],
            kind="penalty",
            amount=-3,
            reason="no-show at the briefing",
        )
        assert early["standings"] == [] and early["log"][0]["in_force"]
        error = await refused(
            director,
            "tournament_penalty",
            tournament=tid,
            player=names[0],
            kind="penalty",
            amount=-3,
            reason="x",
            session=1,
        )
        assert error.code == "bad_message" and "not been played" in error.reason
        ends = await run_session(director, players, tid)
        status, body = await get_json(http_get, app, f"/api/tournaments/{tid}")
        assert body["sessions"][0]["state"] == "finished"
        check_standings(body, ends, await seats_of(http_get, app, tid, 1))

        # Session 2 (check-in again): 8 players cannot avoid every repeat; the seating says so,
        # and that four pairings are the fewest, proven (two tables from two tables).
        for p in players:
            assert (await ask(p, "tournament_check_in", tournament=tid))["you"]["checked_in"]
        await ask(director, "tournament_seat", tournament=tid)
        _, session = await get_json(http_get, app, f"/api/tournaments/{tid}/sessions/2")
        assert len(session["repeats"]) == 4 and "repeat" in session["message"]
        assert session["fewest"] is True and session["unavoidable"] == 4
        assert "the fewest possible (proven by the search)" in session["message"]
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
            ("penalty", True),
            ("penalty", False),
            ("undo", True),
        ]

        # A score correction's amount is added to the recorded score (docs/tournaments.md,
        # "Penalties and corrections"), and the table is ranked again from the corrected
        # scores; its undo puts the recorded one back.
        line = next(
            ln
            for r in undone["standings"]
            if r["player"] == victim
            for ln in r["sessions"]
            if ln["session"] == 2
        )
        _, played = await get_json(http_get, app, f"/api/tournaments/{tid}/sessions/2")
        table = played["tables"][line["table"] - 1]
        corrected = await ask(
            director,
            "tournament_penalty",
            tournament=tid,
            player=victim,
            kind="score",
            amount=40,
            reason="a fan missed",
            session=2,
        )
        scores = list(table["scores"])
        scores[line["seat"]] += 40
        lines = {
            r["player"]: ln
            for r in corrected["standings"]
            for ln in r["sessions"]
            if ln["session"] == 2
        }
        assert lines[victim]["score"] == table["scores"][line["seat"]] + 40 == scores[line["seat"]]
        for seat, points in zip(table["seats"], table_points(scores), strict=True):
            if seat["player"] is not None and seat["substitute"] is None:
                assert Fraction(lines[seat["player"]]["table_points"]) == points
        assert corrected["log"][-1]["amount"] == "40"
        restored = await ask(
            director, "tournament_undo", tournament=tid, entry=corrected["entry"], reason="no"
        )
        assert restored["standings"] == undone["standings"]
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


async def test_a_player_on_a_bye_is_in_the_standings_and_both_exports(
    start_server: StartServer, http_get: HttpGet
) -> None:
    """An outside probe's case: five players, one on a bye in session 1. After the session
    the standings (the API, the ``tournament`` reply) and both exports list all five: the
    bye player with nothing from the session, their penalty counted, ranked with the
    others; a player who withdrew after playing stays; a penalty for the session the bye
    player sat out is refused (docs/tournaments.md, "Byes and substitutes", "Scoring")."""
    app = await start_server(tournaments={"directors": DIRECTOR})
    names = [f"td_y{i}" for i in range(5)]
    director = await connect(app, DIRECTOR)
    players = {n: await connect(app, n) for n in names}
    try:
        tid = (
            await ask(
                director,
                "tournament_create",
                name="Five",
                sessions=2,
                hands=1,
                turn_seconds=1,
                check_in=False,
            )
        )["id"]
        await ask(director, "tournament_add_players", tournament=tid, players=names)
        await ask(director, "tournament_seat", tournament=tid)
        _, session = await get_json(http_get, app, f"/api/tournaments/{tid}/sessions/1")
        (bye,) = session["byes"]
        seated = [n for n in names if n != bye]
        ends = await run_session(director, [players[n] for n in seated], tid)
        gone = seated[0]  # played session 1, then withdraws: the result stays
        await ask(players[gone], "tournament_withdraw", tournament=tid)

        error = await refused(
            director,
            "tournament_penalty",
            tournament=tid,
            player=bye,
            kind="penalty",
            amount=-3,
            reason="x",
            session=1,
        )
        assert error.code == "bad_message" and f"{bye} did not play session 1" in error.reason
        fined = await ask(
            director,
            "tournament_penalty",
            tournament=tid,
            player=bye,
            kind="penalty",
            amount=-7,
            reason="slow play",
        )
        _, body = await get_json(http_get, app, f"/api/tournaments/{tid}")
        assert fined["standings"] == body["standings"]
        rows = {r["player"]: r for r in body["standings"]}
        assert sorted(rows) == names
        assert {k: rows[bye][k] for k in ("table_points", "score", "sessions")} == {
            "table_points": "0",
            "score": -7,
            "sessions": [],
        }
        assert (rows[bye]["firsts"], rows[bye]["best_session"]) == (0, None)
        assert [ln["session"] for ln in rows[gone]["sessions"]] == [1]
        # Totals from the match ends, here, and the order they give; the chain ends with the
        # player key, so no place is shared.
        check_standings(body, ends, await seats_of(http_get, app, tid, 1), (bye,))
        assert [r["place"] for r in body["standings"]] == [1, 2, 3, 4, 5]

        # export.json: the same rows, in the same order, the bye player with no session.
        _, exported = await get_json(http_get, app, f"/api/tournaments/{tid}/export.json")
        assert exported["sessions"] == [1]
        assert [(r["place"], r["player"]) for r in exported["standings"]] == [
            (r["place"], r["player"]) for r in body["standings"]
        ]
        row = next(r for r in exported["standings"] if r["player"] == bye)
        assert (row["table_points"], row["score"], row["sessions"]) == ("0", -7, [])
        # ... and the bye said (the seating's ``byes``), not left to be guessed from an
        # empty session.
        assert {r["player"]: r["byes"] for r in exported["standings"]} == {
            n: [1] if n == bye else [] for n in names
        }
        # export.csv: a line for each of the five, the bye player's session cells empty and
        # the session's bye column (after the columns of old) 1, the others' 0.
        status, text = await http_get(app.port, f"/api/tournaments/{tid}/export.csv")
        assert status == 200
        header, *lines = list(csv.reader(io.StringIO(text)))
        assert header[:4] == ["place", "player", "table_points", "score"] and len(header) == 9
        assert header[4:] == [
            "session_1_table",
            "session_1_seat",
            "session_1_table_points",
            "session_1_score",
            "session_1_bye",
        ]
        assert [line[1] for line in lines] == [r["player"] for r in body["standings"]]
        (line,) = [line for line in lines if line[1] == bye]
        assert line == [str(rows[bye]["place"]), bye, "0", "-7", "", "", "", "", "1"]
        assert all(line[8] == "0" and line[4] for line in lines if line[1] != bye)
    finally:
        for c in (director, *players.values()):
            await c.close()


async def run_session(
    director: Client, players: list[Client], tid: int, *, shown: bool = True
) -> dict[tuple[int, int], dict[str, Any]]:
    """Start the seated session; every player, told where they sit, plays with a bot.
    Returns each table's ``match_end`` with its seats, by (session, table), once the
    session shows finished (``shown``; else at once)."""

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
    if shown:
        await until_finished(director, tid, len(started["sessions"]), seconds=5)
    return out


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
    unseated: tuple[str, ...] = (),
) -> None:
    """The standings' totals are, per player, the sum of the table points and scores of the
    tables played (recomputed here from the match ends), corrections in force added; the
    ``unseated`` players (who played no table) are listed with nothing but their
    corrections."""
    points: dict[str, Fraction] = dict.fromkeys(unseated, Fraction(0))
    scores: dict[str, int] = dict.fromkeys(unseated, 0)
    for key, end in ends.items():
        for name, tp, score in zip(
            seats[key], table_points(end["scores"]), end["scores"], strict=True
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


async def test_a_crash_while_a_session_starts_makes_its_missing_tables_at_restart(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session is marked started before its tables are made: when making the second
    table fails (the process dies there), the next start makes it, and only it."""
    app = await start_server(tournaments={"directors": DIRECTOR}, database="crash.db")
    director = await connect(app, DIRECTOR)
    names = [f"td_c{i}" for i in range(8)]
    for name in names:
        await app.store.create_player(name, "x" * 60, False)
    tid = (
        await ask(director, "tournament_create", name="Crash", sessions=1, hands=1, check_in=False)
    )["id"]
    await ask(director, "tournament_add_players", tournament=tid, players=names)
    await ask(director, "tournament_seat", tournament=tid)
    assert app.lobby is not None
    real_create = app.lobby.create
    made: list[str] = []

    async def dies_at_the_second(*args: Any, **kwargs: Any) -> Any:
        if made:
            raise RuntimeError("the process died here")
        table = await real_create(*args, **kwargs)
        made.append(table.id)
        return table

    monkeypatch.setattr(app.lobby, "create", dies_at_the_second)
    error = await refused(director, "tournament_start_session", tournament=tid)
    assert error.code == "internal_error"
    assert [t.number for t in await app.store.tournaments.tables(tid)] == [1]
    await director.close()
    await app.stop()

    again = await start_server(tournaments={"directors": DIRECTOR}, database="crash.db")
    tables = await again.store.tournaments.tables(tid)
    assert [t.number for t in tables] == [1, 2] and tables[0].table_id == made[0]
    client = await Client.connect(f"ws://127.0.0.1:{again.port}/ws", rate=None)
    try:
        await client.login(DIRECTOR, PASSWORD)
        for _ in range(400):
            body = await ask(client, "tournament_get", tournament=tid)
            if body["state"] == "finished":
                break
            await asyncio.sleep(0.05)
        assert body["state"] == "finished" and len(body["standings"]) == 8
    finally:
        await client.close()


async def test_a_substitute_takes_a_seat_in_play_or_is_refused_and_forgotten(
    start_server: StartServer, http_get: HttpGet
) -> None:
    app = await start_server(tournaments={"directors": DIRECTOR}, accounts={"register_burst": 50})
    director = await connect(app, DIRECTOR)
    names = [f"td_s{i}" for i in range(4)]
    players = [await connect(app, n) for n in names]
    reserve = await connect(app, "td_reserve")
    try:
        tid = (
            await ask(
                director,
                "tournament_create",
                name="Subs",
                sessions=1,
                hands=1,
                turn_seconds=60,
                check_in=False,
            )
        )["id"]
        await ask(director, "tournament_add_players", tournament=tid, players=names)
        await ask(director, "tournament_seat", tournament=tid)
        told = [
            asyncio.create_task(p.wait_for(lambda m: m.type == "tournament_session"))
            for p in players
        ]
        await asyncio.sleep(0)
        await ask(director, "tournament_start_session", tournament=tid)
        await asyncio.gather(*told)  # seated, attached, not playing: the table waits for them
        # The reserve sits at another table: refused there, and nothing is recorded.
        other = (await reserve.create_table()).table
        await reserve.join_table(other)
        error = await refused(
            director,
            "tournament_substitute",
            tournament=tid,
            player=names[1],
            substitute="td_reserve",
        )
        assert error.code == "already_seated"
        # A bot takes names[0]'s seat mid-match; the table shows it at once.
        await ask(
            director, "tournament_substitute", tournament=tid, player=names[0], substitute="bot"
        )
        _, session = await get_json(http_get, app, f"/api/tournaments/{tid}/sessions/1")
        seats = session["tables"][0]["seats"]
        assert {s["player"]: s["substitute"] for s in seats} == {
            names[0]: "bot:strong",
            names[1]: None,
            names[2]: None,
            names[3]: None,
        }
        assert app.lobby is not None
        live = app.lobby.get(session["tables"][0]["table_id"])
        assert [s.label for s in live.seats if s is not None].count("bot:strong") == 1
    finally:
        for c in (*players, reserve):
            await c.close()  # gone: their seats are played to the end
    try:
        for _ in range(400):
            body = await ask(director, "tournament_get", tournament=tid)
            if body["state"] == "finished":
                break
            await asyncio.sleep(0.05)
        # The bot's seat counts for nobody; names[0] (whose seat it was) stays listed, with
        # nothing from the session (docs/tournaments.md, "Scoring").
        rows = {r["player"]: r for r in body["standings"]}
        assert sorted(rows) == names
        assert (rows[names[0]]["table_points"], rows[names[0]]["score"]) == ("0", 0)
        assert rows[names[0]]["sessions"] == [] and rows[names[0]]["best_session"] is None
        assert all(len(rows[n]["sessions"]) == 1 for n in names[1:])
    finally:
        await director.close()


async def seated_and_still(director: Client, players: list[Client], tid: int) -> None:
    """Seat and start the tournament's next session: its ``players`` are told their seats
    and sit there without moving (the table waits on them)."""
    await ask(director, "tournament_seat", tournament=tid)
    told = [
        asyncio.create_task(p.wait_for(lambda m: m.type == "tournament_session")) for p in players
    ]
    await asyncio.sleep(0)
    await ask(director, "tournament_start_session", tournament=tid)
    await asyncio.gather(*told)


async def test_a_penalty_given_before_a_substitute_takes_the_seat_still_counts(
    start_server: StartServer, http_get: HttpGet
) -> None:
    """An outside probe's case: a player is penalised in the session being played, then a
    substitute takes her seat. The penalty stayed in the log, in force, and the standings
    skipped it without a word. It is hers and counts (docs/tournaments.md, "Scoring"); one
    entered after the substitute took the seat counts the same, whatever the order."""
    app = await start_server(tournaments={"directors": DIRECTOR})
    director = await connect(app, DIRECTOR)
    names = [f"td_f{i}" for i in range(4)]
    players = [await connect(app, n) for n in names]
    gone = names[0]
    try:
        tid = (
            await ask(
                director,
                "tournament_create",
                name="Fined",
                sessions=1,
                hands=1,
                turn_seconds=60,
                check_in=False,
            )
        )["id"]
        await ask(director, "tournament_add_players", tournament=tid, players=names)
        await seated_and_still(director, players, tid)
        fine = {"tournament": tid, "player": gone, "kind": "penalty", "session": 1}
        await ask(director, "tournament_penalty", **fine, amount=-10, reason="slow play")
        await ask(director, "tournament_substitute", tournament=tid, player=gone, substitute="bot")
        await ask(director, "tournament_penalty", **fine, amount=-5, reason="left the table")
    finally:
        for c in players:
            await c.close()  # gone: their seats are played to the end
    try:
        body = await until_finished(director, tid, 1)
    finally:
        await director.close()
    assert [(e["player"], e["amount"], e["in_force"]) for e in body["log"]] == [
        (gone, "-10", True),
        (gone, "-5", True),
    ]
    rows = {r["player"]: r for r in body["standings"]}
    assert sorted(rows) == names
    assert {k: rows[gone][k] for k in ("table_points", "score", "sessions")} == {
        "table_points": "0",
        "score": -15,
        "sessions": [],
    }
    _, exported = await get_json(http_get, app, f"/api/tournaments/{tid}/export.json")
    (row,) = [r for r in exported["standings"] if r["player"] == gone]
    assert (row["score"], row["sessions"], row["byes"]) == (-15, [], [])


async def test_checking_in_while_the_last_session_is_played_is_refused_in_true_words(
    start_server: StartServer,
) -> None:
    """Check-in is for the next session, and while the last one is being played there is
    none: the refusal says so (it said every session had been played, not yet true)."""
    app = await start_server(tournaments={"directors": DIRECTOR})
    director = await connect(app, DIRECTOR)
    names = [f"td_k{i}" for i in range(4)]
    players = [await connect(app, n) for n in names]
    try:
        tid = (
            await ask(
                director,
                "tournament_create",
                name="Last",
                sessions=1,
                hands=1,
                turn_seconds=60,
            )
        )["id"]
        await ask(director, "tournament_add_players", tournament=tid, players=names)
        for p in players:  # for session 1, the one to come
            assert (await ask(p, "tournament_check_in", tournament=tid))["you"]["checked_in"]
        await seated_and_still(director, players, tid)
        error = await refused(players[0], "tournament_check_in", tournament=tid)
        assert error.code == "tournament_state"
        assert error.reason == (
            "session 1, the tournament's last, is being played: check-in is for the next "
            "session, and there is none after it"
        )
    finally:
        for c in (director, *players):
            await c.close()


async def test_a_private_tournament_is_unlisted_and_its_players_still_sit_at_its_tables(
    start_server: StartServer, http_get: HttpGet
) -> None:
    app = await start_server(tournaments={"directors": DIRECTOR})
    director = await connect(app, DIRECTOR)
    names = [f"td_q{i}" for i in range(4)]
    players = [await connect(app, n) for n in names]
    watcher = await connect(app, "td_watcher")
    try:
        tid = (
            await ask(
                director,
                "tournament_create",
                name="Invitation only",
                sessions=1,
                hands=1,
                turn_seconds=1,
                public=False,
                check_in=False,
            )
        )["id"]
        await ask(director, "tournament_add_players", tournament=tid, players=names)
        await ask(director, "tournament_seat", tournament=tid)
        _, listed = await get_json(http_get, app, "/api/tournaments")
        assert tid not in [t["id"] for t in listed["tournaments"]]
        ends = await run_session(director, players, tid)  # joined without an invite code
        assert len(ends) == 1 and all(e["scores"] for e in ends.values())
        _, session = await get_json(http_get, app, f"/api/tournaments/{tid}/sessions/1")
        table = session["tables"][0]["table_id"]
        assert table not in [t["table"] for t in (await watcher.list_tables())]
        with pytest.raises(ServerError) as caught:  # the table is private: not for strangers
            await watcher.request("watch", {"table": table})
        assert caught.value.code in ("wrong_invite", "no_such_table")
    finally:
        for c in (director, *players, watcher):
            await c.close()


async def test_a_push_being_sent_as_the_server_stops_is_waited_for_and_none_begins_after(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tournament_changed`` is sent from a task of its own, which reads the tournament from
    the store: the server's stop waits for one begun (the store closes after it) and begins
    none. (A push that read a closing store failed, or left a connection unclosed.)"""
    app = await start_server(tournaments={"directors": DIRECTOR})
    director = await connect(app, DIRECTOR)
    try:
        tid = (await ask(director, "tournament_create", name="Late news"))["id"]
    finally:
        await director.close()
    tournaments = app.tournaments
    assert tournaments is not None
    reading, go_on = asyncio.Event(), asyncio.Event()
    get = tournaments.store.get

    async def slow_get(tournament_id: int) -> Any:
        reading.set()
        await go_on.wait()
        return await get(tournament_id)

    monkeypatch.setattr(tournaments.store, "get", slow_get)
    tournaments._push(tid, "table_finished")
    await asyncio.wait_for(reading.wait(), 10)  # the push's task reads the tournament
    closing = asyncio.create_task(tournaments.close())
    await asyncio.sleep(0.1)
    assert not closing.done(), "close() did not wait for the push being sent"
    go_on.set()
    await asyncio.wait_for(closing, 10)
    assert not [t for t in asyncio.all_tasks() if "_deliver" in repr(t.get_coro())]

    reading.clear()
    tournaments._push(tid, "closed")  # after close: nothing scheduled, nothing read
    assert tournaments.pushes == {}
    await asyncio.sleep(0.2)
    assert not reading.is_set()


async def test_a_delayed_tournaments_outcomes_show_as_late_as_its_spectators_see_them(
    start_server: StartServer, http_get: HttpGet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its tables' spectators see play ``spectator_delay_seconds`` late: until its end is
    that old, no page says how a table ended (the session page, the standings, both
    exports, the listing, a player's ``tournament_get``). Before, they all did at once (a
    probe read the results half a second after the end, twelve before the spectators saw
    it)."""
    app = await start_server(tournaments={"directors": DIRECTOR})
    director = await connect(app, DIRECTOR)
    players = [await connect(app, f"tl_p{i}") for i in range(4)]
    try:
        tid = (
            await ask(
                director,
                "tournament_create",
                name="Late",
                sessions=1,
                hands=1,
                turn_seconds=1,
                spectator_delay_seconds=3600,
            )
        )["id"]
        for p in players:
            await ask(p, "tournament_register", tournament=tid)
            await ask(p, "tournament_check_in", tournament=tid)
        await ask(director, "tournament_seat", tournament=tid)
        ends = await run_session(director, players, tid, shown=False)
        (end,) = ends.values()
        assert app.tournaments is not None
        for _ in range(600):  # (stored finished: what the pages could say)
            if (await app.tournaments.store.sessions(tid))[0].state == "finished":
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the session was never stored finished")

        async def pages() -> dict[str, Any]:
            seen: dict[str, Any] = {}
            for path in (
                f"/api/tournaments/{tid}",
                f"/api/tournaments/{tid}/sessions/1",
                f"/api/tournaments/{tid}/export.json",
                "/api/tournaments",
            ):
                status, seen[path] = await get_json(http_get, app, path)
                assert status == 200, (path, seen[path])
            seen["csv"] = (await http_get(app.port, f"/api/tournaments/{tid}/export.csv"))[1]
            seen["get"] = await ask(players[0], "tournament_get", tournament=tid)
            return seen

        now = await pages()
        session = now[f"/api/tournaments/{tid}/sessions/1"]
        (table,) = session["tables"]
        assert (session["state"], session["finished_at"]) == ("playing", None)
        assert table["state"] != "finished"
        assert (table["scores"], table["table_points"], table["hand_no"]) == (None, None, None)
        for detail in (now[f"/api/tournaments/{tid}"], now["get"]):
            assert detail["standings"] == [] and detail["state"] == "running"
            assert detail["sessions"][0]["state"] == "playing"
        assert now[f"/api/tournaments/{tid}/export.json"]["standings"] == []
        assert len(now["csv"].strip().splitlines()) == 1  # (its header alone)
        listed = next(t for t in now["/api/tournaments"]["tournaments"] if t["id"] == tid)
        assert listed["state"] == "running"

        # An hour on, the spectators have seen it all: so may everyone.
        later = datetime.now(UTC) + timedelta(seconds=3601)
        monkeypatch.setattr(host_module, "_now", lambda: later)
        then = await pages()
        session = then[f"/api/tournaments/{tid}/sessions/1"]
        (table,) = session["tables"]
        assert session["state"] == "finished" and table["state"] == "finished"
        assert table["scores"] == end["scores"]
        assert len(then[f"/api/tournaments/{tid}"]["standings"]) == 4
        assert len(then[f"/api/tournaments/{tid}/export.json"]["standings"]) == 4
        assert len(then["get"]["standings"]) == 4
        assert len(then["csv"].strip().splitlines()) == 5
        stored = await app.tournaments.store.get(tid)
        assert stored is not None and stored.state == "finished"  # (its one session over)
        listed = next(t for t in then["/api/tournaments"]["tournaments"] if t["id"] == tid)
        assert listed["state"] == then[f"/api/tournaments/{tid}"]["state"] == "finished"
    finally:
        for client in (director, *players):
            await client.close()


async def test_a_director_named_in_the_config_who_is_no_account_is_warned_of_at_start(
    start_server: StartServer, caplog: pytest.LogCaptureFixture
) -> None:
    """It was taken without a word: a misspelt name gives no one the role, and whoever
    registers it later gets it. A warning, not a refusal (the account may come later); a
    registered account, in any case, is fine; a guest's cannot create tournaments."""
    app = await start_server(database="directors.db")
    await app.store.create_player("Td_Known", "x" * 60, False)
    await app.store.create_player("guest-0427", None, True)
    await app.stop()
    directors = "td_known, Td_Nobody, guest-0427"
    with caplog.at_level(logging.WARNING, logger="guobiao.tournaments"):
        await start_server(database="directors.db", tournaments={"directors": directors})
    assert [r.getMessage() for r in caplog.records if r.name == "guobiao.tournaments"] == [
        "[tournaments] directors: no account is named 'Td_Nobody' (yet): until one is, no one "
        "has its role, and whoever registers that name gets it",
        "[tournaments] directors: 'guest-0427' is a guest account, and guests cannot create "
        "tournaments",
    ]

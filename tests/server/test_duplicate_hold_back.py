"""A duplicate session leaks nothing until it is over (docs/tournaments.md, "Duplicate MCR").

In the store: the one rule (``server.tournaments.store.held``) holds a duplicate session's
matches until the session is finished, and no other match; a held match's players' counts
and grades wait for the session's end, which takes them in exactly once (a second call, a
store opened anew, a match of theirs finished meanwhile at another table).

Through the real server: one duplicate session of two tables on the same walls; table A
finishes its one hand while table B is held on its first hand by its East, a connected
player who does not answer (its turn is an hour long). In that state every path by which
anything of A's outcome could be read is walked as an outside client would: the player
pages (recent matches, counts, grade, ratings), the ladder's pages, the match record, log and
replay, the tournament's page, session page, exports and listing, the lobby, ``/metrics``,
what a player of table A can ask over the websocket (and what it is pushed), and the
command line (``guobiao tournament standings|show|export``, ``guobiao ladder board``).
Nothing of it shows. Then the server restarts, table B finishes and with it the session, and
each path shows table A's result, the grades computed exactly once (so the test cannot pass
for a path that never shows anything).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from serverkit import StartServer
from sqlalchemy import text
from tournamentkit import PASSWORD, ask, connect

from engine.bots import make_bot
from server.app import App
from server.cli import main
from server.client import Client, Incoming, ServerError, play, play_tournament
from server.db.store import Store, TableRow
from server.grades import Counts, hand_counts
from server.tournaments.host import Settings

HttpGet = Callable[[int, str], Awaitable[tuple[int, str]]]

DIRECTOR = "dh_director"
OUTSIDER = "dh_outsider"
PLAYERS = [f"dh_p{i}" for i in range(8)]
LADDER = "mcr"
BOARD = f"/api/ladders/{LADDER}?provisional=all"  # its players have few rated matches
# Ten accounts registered from one address at once: more than the server lets a stranger.
MANY = {"register_burst": 100}


# ------------------------------------------------------------------ the store ---

T0 = datetime(2026, 5, 1, 18, 0, tzinfo=UTC)
SALT = "cd" * 32
FOUR = ["ann", "bo", "cy", "di"]


def win(winner: int, deltas: list[int]) -> dict[str, Any]:
    return {"hand_no": 1, "result": "win", "winner": winner, "deltas": deltas}


async def session_table(store: Store, table_id: str, *, duplicate: bool, seats: list[str]) -> int:
    """A tournament (duplicate or not) whose session 1 is being played at ``table_id``, the
    lobby table tagged as its table 1; the tournament's id."""
    settings = Settings(sessions=1, hands=1, duplicate=duplicate).to_dict()
    tid = await store.tournaments.create("Night", "mcr", settings, 7, "rita", T0, True)
    await store.tournaments.save_seating(tid, 1, "random", 8, {"tables": [seats]}, T0)
    assert await store.tournaments.start_session(tid, 1, T0, None)
    tag = (tid, 1, 1)
    await store.save_table(TableRow(table_id, "mcr", 15, False, None, seats, T0, tournament=tag))
    await store.tournaments.add_table(tid, 1, 1, table_id)
    return tid


async def played(
    store: Store, table_id: str, seats: Sequence[str], hand: dict[str, Any], at: datetime
) -> int:
    """A one-hand match at ``table_id``, finished at ``at``; its id."""
    match_id = await store.create_match(table_id, "mcr", 5, SALT, seats, T0, hands_planned=1)
    await store.finish_hand(match_id, 1, hand, hand["deltas"])
    assert await store.finish_match(match_id, hand["deltas"], at)
    return match_id


async def totals(store: Store, name: str) -> tuple[int, int, int, int, int, float]:
    """A player's cached counts and grade: score, hands won, lost, drawn, matches, grade."""
    p = await store.get_player(name)
    assert p is not None
    return p.score, p.hands_won, p.hands_lost, p.hands_drawn, p.matches, p.grade


def counted(hands: Sequence[dict[str, Any]], seat: int) -> tuple[Any, ...]:
    """What ``totals`` should be for the player of ``seat`` in one-hand matches ``hands``."""
    c = sum((hand_counts(hand)[seat] for hand in hands), Counts())
    return c.score, c.won, c.lost, c.drawn, len(hands), pytest.approx(c.grade)


@pytest.mark.asyncio
async def test_a_duplicate_sessions_matches_are_held_until_it_is_over(
    store: Store, migrated_url: str
) -> None:
    for name in FOUR:
        await store.create_player(name, "h", guest=False)
    first, second, third = (
        win(0, [24, -8, -8, -8]),
        win(2, [-16, -8, 40, -16]),
        win(3, [-8] * 3 + [24]),
    )
    casual = await played(store, "c1", FOUR, first, T0)
    tid = await session_table(store, "d1", duplicate=True, seats=FOUR)
    plain = await session_table(store, "p1", duplicate=False, seats=["bot:a"] * 4)
    shown = await played(store, "p1", ["bot:a"] * 4, win(1, [-8, 24, -8, -8]), T0)
    held = await played(store, "d1", FOUR, second, T0 + timedelta(hours=1))

    # Held: the player pages, the counts and the grades, the match endpoint's answer, the
    # session's scores and hands. Nothing else is: a casual match, a plain tournament's.
    for seat, name in enumerate(FOUR):
        assert await totals(store, name) == counted([first], seat)
        summary = await store.player_summary(name)
        assert summary is not None and [m["match"] for m in summary["recent"]] == [casual]
    assert await store.tournaments.held_session(held) == (tid, 1)
    assert await store.tournaments.held_session(shown) is None
    assert await store.tournaments.held_session(casual) is None
    [table] = await store.tournaments.tables(tid)
    assert table.finished and table.scores is None
    assert await store.tournaments.hand_deltas([held, shown]) == [(shown, 1, [-8, 24, -8, -8])]
    [other] = await store.tournaments.tables(plain)
    assert other.finished and other.scores == (-8, 24, -8, -8)

    # A match of theirs finished at another table meanwhile counts at once.
    later = await played(store, "c2", FOUR, third, T0 + timedelta(hours=2))
    assert await totals(store, "ann") == counted([first, third], 0)

    # The session's end shows the match and takes it into the counts, once.
    assert await store.tournaments.finish_session(tid, 1, T0 + timedelta(hours=3))
    assert await store.tournaments.held_session(held) is None
    [table] = await store.tournaments.tables(tid)
    assert table.scores == (-16, -8, 40, -16)

    async def check(store: Store) -> None:
        for seat, name in enumerate(FOUR):
            assert await totals(store, name) == counted([first, second, third], seat), name
            summary = await store.player_summary(name)
            assert summary is not None
            assert [m["match"] for m in summary["recent"]] == [later, held, casual]

    await check(store)
    assert not await store.tournaments.finish_session(tid, 1, T0 + timedelta(hours=4))
    await check(store)
    async with await Store.open(migrated_url) as reopened:  # as a restarted server reads it
        await check(reopened)


@pytest.mark.asyncio
async def test_the_sessions_end_makes_the_counts_exact_whatever_was_counted_before(
    store: Store,
) -> None:
    """A held match counted already (by a server from before the rule, upgraded in the
    middle of a session) is not counted twice: the session's end sets the counts to the sum
    of the player's matches that may be shown; it does not add to them."""
    for name in FOUR:
        await store.create_player(name, "h", guest=False)
    tid = await session_table(store, "d1", duplicate=True, seats=FOUR)
    hand = win(0, [24, -8, -8, -8])
    await played(store, "d1", FOUR, hand, T0)
    async with store.engine.begin() as connection:  # what the server before the rule did
        await connection.execute(
            text("UPDATE players SET score = 24, hands_won = 1, matches = 1 WHERE username = 'ann'")
        )
    assert await store.tournaments.finish_session(tid, 1, T0 + timedelta(hours=1))
    assert await totals(store, "ann") == counted([hand], 0)


# ------------------------------------------------------------ the real server ---


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> Awaitable[str]:
    """``guobiao ARGV...`` in a thread (it runs its own event loop); its standard output."""

    async def run() -> str:
        capsys.readouterr()
        status = await asyncio.wait_for(asyncio.to_thread(main, list(argv)), 60)
        out = capsys.readouterr().out
        assert status == 0, (argv, out)
        return out

    return run()


def _walk(body: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    yield path, body
    if isinstance(body, dict):
        for key, value in body.items():
            yield from _walk(value, f"{path}.{key}")
    elif isinstance(body, list):
        for i, value in enumerate(body):
            yield from _walk(value, f"{path}[{i}]")


def outcome_in(body: Any, match_id: int, final_scores: list[int]) -> list[str]:
    """Where in the JSON ``body`` anything of a match's outcome is: its final scores, a
    result field with a value (scores, table points, standings, duplicate results, hands,
    walls), or an entry naming the match with a score."""
    found = []
    for where, value in _walk(body):
        if value == final_scores and any(final_scores):  # (all zero: a draw, too common)
            found.append(f"{where} = the final scores")
        if isinstance(value, dict):
            for key in ("final_scores", "scores", "table_points", "commitments", "walls"):
                if value.get(key):
                    found.append(f"{where}.{key}")
            for key in ("standings", "duplicate", "hands"):
                if isinstance(value.get(key), list) and value[key]:
                    found.append(f"{where}.{key}")
            if value.get("match") == match_id and "score" in value:
                found.append(f"{where}: match {match_id} with a score")
    return found


async def pushed(client: Client, heard: list[Incoming], *what: str) -> Incoming:
    """The ``tournament_changed`` push saying one of ``what`` that ``client`` was sent (into
    ``heard``, its ``on_message`` log) or, when it has not come yet, is sent next."""

    def wanted(message: Incoming) -> bool:
        return message.type == "tournament_changed" and message.payload.get("what") in what

    found = next((m for m in heard if wanted(m)), None)
    return found if found is not None else await client.wait_for(wanted, timeout=30)


async def get(http_get: HttpGet, app: App, path: str, status: int = 200) -> Any:
    answer, body = await http_get(app.port, path)
    assert answer == status, (path, answer, body)
    return json.loads(body)


async def rated_match(app: App, names: list[str]) -> None:
    """The four play a rated one-hand match (so they have ratings on the ladder)."""
    clients = [await Client.connect(f"ws://127.0.0.1:{app.port}/ws", rate=None) for _ in names]
    try:
        for client, name in zip(clients, names, strict=True):
            await client.login(name, PASSWORD)
        table = (await clients[0].create_table(rated=True, hands=1, turn_seconds=1)).table
        for client in clients:
            await client.join_table(table)
        ends = await asyncio.gather(*(play(c, table, make_bot("default")) for c in clients))
        assert all(end is not None for end in ends)
    finally:
        for client in clients:
            await client.close()


async def public_views(
    http_get: HttpGet, app: App, capsys: pytest.CaptureFixture[str], tid: int
) -> dict[str, Any]:
    """What anyone can read of the players, the ladder and the tournament: every HTTP page
    and command line output, by name."""
    url = f"ws://127.0.0.1:{app.port}/ws"
    views: dict[str, Any] = {}
    for name in PLAYERS:
        views[f"/api/players/{name}"] = await get(http_get, app, f"/api/players/{name}")
        path = f"/api/ladders/{LADDER}/players/{name}"
        views[path] = await get(http_get, app, path)
    for path in (
        BOARD,
        "/api/tournaments",
        f"/api/tournaments/{tid}",
        f"/api/tournaments/{tid}/sessions/1",
        f"/api/tournaments/{tid}/export.json",
    ):
        views[path] = await get(http_get, app, path)
    views["export.csv"] = (await http_get(app.port, f"/api/tournaments/{tid}/export.csv"))[1]
    status, views["/metrics"] = await http_get(app.port, "/metrics")
    assert status == 200
    views["cli standings"] = await cli(capsys, "tournament", "standings", str(tid), "--server", url)
    views["cli standings --json"] = json.loads(
        await cli(capsys, "tournament", "standings", str(tid), "--json", "--server", url)
    )
    views["cli show --json"] = json.loads(
        await cli(capsys, "tournament", "show", str(tid), "--json", "--server", url)
    )
    views["cli export csv"] = await cli(
        capsys, "tournament", "export", str(tid), "--format", "csv", "--server", url
    )
    database = app.config.database_url
    views["cli ladder board"] = await cli(
        capsys, "ladder", "board", LADDER, "--provisional", "all", "--database-url", database
    )
    return views


def expected_counts(player: str, matches: list[dict[str, Any]]) -> Counts:
    """A player's totals over ``matches`` (``GET /api/matches/{id}`` bodies), counted here
    from each hand's deltas and winner."""
    total = Counts()
    for match in matches:
        if player not in match["seats"]:
            continue
        seat = match["seats"].index(player)
        for hand in match["hands"]:
            total += hand_counts(hand)[seat]
    return total


@pytest.mark.asyncio
async def test_nothing_of_a_finished_table_shows_until_its_duplicate_session_is_over(
    start_server: StartServer, http_get: HttpGet, capsys: pytest.CaptureFixture[str]
) -> None:
    hour = {"max_turn_seconds": 3600}
    app = await start_server(
        database="hold.db",
        tournaments={"directors": DIRECTOR},
        accounts=MANY,
        timers=hour,
        metrics={"game_port": True},  # (its names too: none of a player held)
    )
    director = await connect(app, DIRECTOR)
    outsider = await connect(app, OUTSIDER)
    clients = {name: await connect(app, name) for name in PLAYERS}
    tid = (
        await ask(
            director,
            "tournament_create",
            name="Held back",
            sessions=1,
            hands=1,
            turn_seconds=3600,
            duplicate=True,
            check_in=False,
        )
    )["id"]
    await ask(director, "tournament_add_players", tournament=tid, players=PLAYERS)
    await ask(director, "tournament_seat", tournament=tid)
    seating = await get(http_get, app, f"/api/tournaments/{tid}/sessions/1")
    table_a, table_b = ([seat["player"] for seat in t["seats"]] for t in seating["tables"])
    silent = table_b[0]  # East of table B: the first to act there, and it never does
    # Table A's players have a rating and a grade from a rated match before the session.
    await rated_match(app, table_a)
    before = await public_views(http_get, app, capsys, tid)
    assert all(before[f"/api/players/{name}"]["ratings"] for name in table_a)
    assert {row["name"] for row in before[BOARD]["players"]} == set(table_a)

    # Everything each player is sent that answers no request of its own.
    heard: dict[str, list[Incoming]] = {name: [] for name in PLAYERS}
    for name in PLAYERS:
        clients[name].on_message = heard[name].append
    playing = {
        name: asyncio.create_task(
            play_tournament(clients[name], tid, make_bot("default"), session=1, timeout=60)
        )
        for name in PLAYERS
        if name != silent
    }
    try:
        await ask(director, "tournament_start_session", tournament=tid)
        # Table B waits for its East: an update asks it to act, and it never answers.
        table_b_id = (await clients[silent].wait_tournament_session(tid, 1, 60)).table_id
        while not (
            clients[silent].tables.get(table_b_id) and clients[silent].tables[table_b_id].legal
        ):
            await clients[silent].next_message(timeout=60)
        # Table A has finished: its four have their match_end, the same for all.
        ends = [await playing[name] for name in table_a]
        end = ends[0]
        assert end is not None and all(e == end for e in ends)
        session = await get(http_get, app, f"/api/tournaments/{tid}/sessions/1")
        match_a, match_b = (t["match"] for t in session["tables"])
        assert [t["state"] for t in session["tables"]] == ["finished", "playing"]
        assert clients[silent].tables[table_b_id].hand_no == 1  # B is still on its first hand
        scores = end["scores"]
        # Its players were told the table finished (a push says what changed, not how).
        for name in table_a:
            told = await pushed(clients[name], heard[name], "table_finished")
            assert told.payload == {"tournament": tid, "what": "table_finished"}

        # --- while table B plays: nothing of table A's outcome anywhere ---
        during = await public_views(http_get, app, capsys, tid)
        # The player pages (recent matches, counts, grade, ratings) and the ladder's pages
        # are exactly as they were before the session.
        unchanged = [BOARD, "cli ladder board"]
        for name in PLAYERS:
            unchanged += [f"/api/players/{name}", f"/api/ladders/{LADDER}/players/{name}"]
        leaks = [f"{key} changed" for key in unchanged if during[key] != before[key]]
        for key, view in during.items():
            if key not in unchanged and isinstance(view, (dict, list)):
                leaks += [f"{key}: {where}" for where in outcome_in(view, match_a, scores)]
        assert not leaks, "\n".join(leaks)
        page = during[f"/api/tournaments/{tid}"]
        assert page["standings"] == [] and page["duplicate"] == []
        assert during[f"/api/tournaments/{tid}/export.json"]["standings"] == []
        assert during["export.csv"].strip().count("\n") == 0  # the header alone
        assert during["cli export csv"] == during["export.csv"]
        assert during["cli standings --json"] == []
        assert "results are held" in during["cli standings"]
        live = during[f"/api/tournaments/{tid}/sessions/1"]
        assert live["walls"] is None
        for t in live["tables"]:
            assert (t["scores"], t["table_points"], t.get("commitments")) == (None, None, None)
        for name in PLAYERS:  # (its series are counts by state: no player, no match)
            assert name not in during["/metrics"]
        for number in (match_a, match_b):
            for tail in ("", "/log", "/replay?hand=1"):
                body = await get(http_get, app, f"/api/matches/{number}{tail}", 403)
                assert "duplicate" in body["error"]

        # What a player of the finished table (and anyone else) can ask over the websocket.
        asker = clients[table_a[1]]
        for client in (asker, outsider):
            got = await client.tournament_get(tid)
            assert not outcome_in(got, match_a, scores), outcome_in(got, match_a, scores)
            listing = await client.list_tables()
            assert not outcome_in(listing, match_a, scores)
            others = [t["table_id"] for t in session["tables"]][client is asker :]
            for table in others:  # (a player watching its own table keeps its own view)
                with pytest.raises(ServerError) as refused:
                    await client.watch(table)
                assert refused.value.code == "not_watchable"
            with pytest.raises(ServerError) as refused:
                await client.join_table(table_b_id)
            assert refused.value.code == "table_started"
            with pytest.raises(ServerError) as refused:
                await client.sync(table_b_id)
            assert refused.value.code == "not_seated"
        # Everything table A's players were sent after their match_end: pushes that name
        # what changed, nothing of how any table ended.
        for name in table_a:
            types = [m.type for m in heard[name]]
            later = heard[name][types.index("match_end") + 1 :]
            assert later and all(m.type == "tournament_changed" for m in later), later
        # Table B's players were sent nothing of table A.
        for name in table_b:
            for message in heard[name]:
                assert message.table in (None, table_b_id), message
                if message.table is None:
                    assert not outcome_in(message.payload, match_a, scores), message
    finally:
        for task in playing.values():
            task.cancel()
        await asyncio.gather(*playing.values(), return_exceptions=True)
        for client in (director, outsider, *clients.values()):
            await client.close()

    # --- the server restarts; table B's players come back and finish it ---
    await app.stop()
    app = await start_server(
        database="hold.db",
        tournaments={"directors": DIRECTOR},
        accounts=MANY,
        timers={**hour, "restart_grace_seconds": 3600},  # B waits for its players
        metrics={"game_port": True},
    )
    url = f"ws://127.0.0.1:{app.port}/ws"
    watcher = await Client.connect(url, rate=None)
    await watcher.login(table_a[0], PASSWORD)
    watched: list[Incoming] = []
    watcher.on_message = watched.append
    back = [await Client.connect(url, rate=None) for _ in table_b]
    try:
        for client, name in zip(back, table_b, strict=True):
            await client.login(name, PASSWORD)
        ends_b = await asyncio.gather(*(play(c, table_b_id, make_bot("default")) for c in back))
        assert all(e is not None for e in ends_b)
        # The last push says the tournament (its one session) is over, not merely that a
        # table finished; it comes once it is.
        told = await pushed(watcher, watched, "closed")
        assert told.payload == {"tournament": tid, "what": "closed"}
        got = await watcher.tournament_get(tid)
        assert got["sessions"][0]["state"] == "finished"
    finally:
        for client in (watcher, *back):
            await client.close()

    # --- the session is over: every path shows table A's result ---
    assert {row["player"] for row in got["standings"]} == set(PLAYERS)
    after = await public_views(http_get, app, capsys, tid)
    record_a = await get(http_get, app, f"/api/matches/{match_a}")
    record_b = await get(http_get, app, f"/api/matches/{match_b}")
    assert record_a["final_scores"] == scores and record_a["rated"] is False
    assert (await http_get(app.port, f"/api/matches/{match_a}/log"))[0] == 200
    assert (await http_get(app.port, f"/api/matches/{match_a}/replay?hand=1"))[0] == 200
    rated = {}
    for name in table_a:  # the rated match before: its one record per player
        recent = before[f"/api/players/{name}"]["recent"]
        assert len(recent) == 1
        rated[name] = await get(http_get, app, f"/api/matches/{recent[0]['match']}")
    for name in PLAYERS:
        page = after[f"/api/players/{name}"]
        assert page["recent"][0]["match"] == (match_a if name in table_a else match_b)
        record = record_a if name in table_a else record_b
        assert page["recent"][0]["final_scores"] == record["final_scores"]
        earlier = [rated[name]] if name in table_a else []
        total = expected_counts(name, [*earlier, record])
        counts = (page["score"], page["hands_won"], page["hands_lost"], page["hands_drawn"])
        assert counts == (total.score, total.won, total.lost, total.drawn), name
        assert page["matches"] == len(earlier) + 1
        assert page["grade"] == pytest.approx(total.grade)
        assert after[f"/api/ladders/{LADDER}/players/{name}"]["grade"] == page["grade"]
        # A tournament match is never rated: the ratings are as before, but for the grade.
        assert page["ratings"] == [
            {**r, "grade": page["grade"]} for r in before[f"/api/players/{name}"]["ratings"]
        ]
    board = {row["name"]: row for row in after[BOARD]["players"]}
    for name in table_a:
        assert board[name]["grade"] == after[f"/api/players/{name}"]["grade"]
        assert f"{board[name]['grade']:.2f}" in after["cli ladder board"]
    page = after[f"/api/tournaments/{tid}"]
    assert {row["player"] for row in page["standings"]} == set(PLAYERS)
    assert {row["player"] for row in page["duplicate"]} == set(PLAYERS)
    assert after[f"/api/tournaments/{tid}/sessions/1"]["tables"][0]["scores"] == scores
    assert after[f"/api/tournaments/{tid}/sessions/1"]["walls"]
    assert len(after[f"/api/tournaments/{tid}/export.json"]["standings"]) == len(PLAYERS)
    assert after["export.csv"].strip().count("\n") == len(PLAYERS)
    assert after["cli export csv"] == after["export.csv"]
    assert {row["player"] for row in after["cli standings --json"]} == set(PLAYERS)
    assert all(name in after["cli standings"] for name in PLAYERS)
    assert outcome_in(after["cli show --json"], match_a, scores)

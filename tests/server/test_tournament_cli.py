"""``guobiao tournament``: the command line against a real server (``server_app``), run
in-process (``main([...])`` in a thread, as a shell would run it), with four network bot
clients (``server.client.play_tournament``) playing the session it starts; a swap with a
player on a bye and a substitute; and its refusals: a non-director's requests, and bad
arguments caught before connecting."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from httpkit import http_request
from serverkit import TEST_LIMITS, TEST_TIMERS

from engine.bots import make_bot
from server.app import App
from server.cli import main
from server.cli.tournament import http_base
from server.client import Client, play_tournament
from server.config import AccountsSection, Config, DatabaseSection, ServerSection

PASSWORD = "correct horse battery"
PLAYERS = ["amy", "ben", "cai", "dee"]


def cli(*argv: str) -> Awaitable[int]:
    """``guobiao tournament ARGV...`` in a thread (it runs its own event loop)."""
    return asyncio.wait_for(asyncio.to_thread(main, ["tournament", *argv]), 60)


async def accounts(app: App, *names: str) -> None:
    """Register the accounts ``names`` (password ``PASSWORD``)."""
    for name in names:
        async with await Client.connect(f"ws://127.0.0.1:{app.port}/ws") as client:
            await client.register(name, PASSWORD)


async def get_json(app: App, path: str) -> Any:
    answer = await http_request(app.port, path)
    assert answer.status == 200, (path, answer.status, answer.body)
    return json.loads(answer.body)


async def until(check: Callable[[], Awaitable[bool]], timeout: float = 60) -> None:
    """Wait (polling) until ``check()`` is true; fail after ``timeout`` seconds."""
    async with asyncio.timeout(timeout):
        while not await check():
            await asyncio.sleep(0.1)


@pytest_asyncio.fixture
async def server_app(tmp_path: Path) -> AsyncIterator[App]:
    """A running server with the test settings (as the ``app`` fixture) whose login limits
    let a director's script through: every ``guobiao tournament`` command logs in anew,
    a dozen in a few seconds from one address and account."""
    accounts = dataclasses.replace(
        AccountsSection(),
        login_per_minute=6000,
        login_burst=1000,
        account_login_per_minute=6000,
        account_login_burst=1000,
    )
    config = Config(
        server=ServerSection(host="127.0.0.1", port=0, data_dir=str(tmp_path)),
        database=DatabaseSection(url=f"sqlite+aiosqlite:///{tmp_path / 'server.db'}"),
        timers=TEST_TIMERS,
        limits=TEST_LIMITS,
        accounts=accounts,
    )
    server = App(config)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
def password(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("GUOBIAO_PASSWORD", PASSWORD)
    return PASSWORD


async def created_tournament(app: App, capsys: pytest.CaptureFixture[str], *extra: str) -> int:
    """A tournament created by the director ``rita`` with the CLI; its id."""
    server = f"ws://127.0.0.1:{app.port}/ws"
    status = await cli(
        "create", "--server", server, "--user", "rita", "--name", "Club night",
        "--sessions", "2", "--hands", "1", "--turn-seconds", "1", "--no-check-in",
        "--seating", "random,avoid", *extra,
    )  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0, out
    found = re.match(r"created tournament (\d+): Club night\n", out)
    assert found, out
    return int(found[1])


@pytest.mark.asyncio
async def test_a_director_runs_a_session_from_the_command_line(
    server_app: App, capsys: pytest.CaptureFixture[str], tmp_path: Path, password: str
) -> None:
    app = server_app
    server = f"ws://127.0.0.1:{app.port}/ws"
    await accounts(app, "rita", *PLAYERS)
    database = ["--database-url", app.config.database_url]
    assert await cli("grant", "rita", *database) == 0
    assert capsys.readouterr().out == "rita may now create tournaments\n"
    tid = await created_tournament(app, capsys)

    names = tmp_path / "players.txt"
    names.write_text("# the last two\ncai\n\ndee\n", encoding="utf-8")
    status = await cli(
        "register", str(tid), "amy", "ben", "--file", str(names), "--server", server,
        "--user", "rita",
    )  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0, out
    assert out == f"tournament {tid}: registered amy, ben, cai, dee\n4 player(s) registered\n"
    # Again, with two of them: nothing new, and said so (it said "registered ben, cai").
    again = ["register", str(tid), "ben", "cai", "--server", server, "--user", "rita"]
    assert await cli(*again) == 0
    said = capsys.readouterr().out.splitlines()
    assert said == [
        f"tournament {tid}: registered nobody new (ben, cai already were)",
        "4 player(s) registered",
    ]

    # Three players connect and wait for their seats before the session starts; the
    # fourth connects once it has started (no push for it: it finds its table by asking).
    clients = [await Client.connect(server, record=i == 3) for i in range(len(PLAYERS))]
    try:
        for client, name in zip(clients[:3], PLAYERS[:3], strict=True):
            await client.login(name, password)
        plays = [
            asyncio.create_task(play_tournament(c, tid, make_bot("fast"), session=1, timeout=60))
            for c in clients[:3]
        ]
        assert await cli("seat", str(tid), "--server", server, "--user", "rita") == 0
        out = capsys.readouterr().out
        lines = out.splitlines()
        assert lines[0] == f"tournament {tid}, session 1 seated (random):"
        assert lines[1].split() == ["table", "E", "S", "W", "N"]
        assert lines[2].split()[0] == "1" and sorted(lines[2].split()[1:]) == PLAYERS
        assert "byes: none" in lines and "no repeat opponents" in lines

        assert await cli("start", str(tid), "--server", server, "--user", "rita") == 0
        out = capsys.readouterr().out
        assert out.startswith(f"tournament {tid}, session 1 started: 1 table(s)\n"), out
        await clients[3].login(PLAYERS[3], password)
        last = play_tournament(clients[3], tid, make_bot("fast"), timeout=60)
        plays.append(asyncio.create_task(last))
        ends = await asyncio.wait_for(asyncio.gather(*plays), 120)
    finally:
        for client in clients:
            await client.close()
    assert all(end is not None for end in ends)
    assert not any(f["type"] == "tournament_session" for f in clients[3].frames)
    seated = {(c.username, s.table, s.wind) for c in clients for s in c.tournament_seats.values()}
    assert len(seated) == 4 and {t for _, t, _ in seated} == {1}
    assert sorted(w for _, _, w in seated) == sorted("ESWN")

    # The session finishes once its table's match is stored.
    async def finished() -> bool:
        data = await get_json(app, f"/api/tournaments/{tid}")
        return bool(data["sessions"]) and data["sessions"][0]["state"] == "finished"

    await until(finished)
    api = await get_json(app, f"/api/tournaments/{tid}")
    assert await cli("standings", str(tid), "--json", "--server", server) == 0
    standings = json.loads(capsys.readouterr().out)
    assert standings == api["standings"]
    assert sorted(row["player"] for row in standings) == PLAYERS
    assert sum(Fraction(row["table_points"]) for row in standings) == 7
    assert sum(row["score"] for row in standings) == 0
    # The scores are those of the match the bots played.
    played = {
        c.username: end["scores"][seat.seat]
        for c, end in zip(clients, ends, strict=True)
        if end is not None
        for seat in c.tournament_seats.values()
    }
    assert {row["player"]: row["score"] for row in standings} == played
    # The same over the websocket, logged in.
    assert await cli("standings", str(tid), "--json", "--server", server, "--user", "amy") == 0
    assert json.loads(capsys.readouterr().out) == api["standings"]
    assert await cli("standings", str(tid), "--server", server) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["place", "player", "points", "score", "S1"]
    assert [line.split()[1] for line in table[1:]] == [row["player"] for row in standings]

    csv_file = tmp_path / "club-night.csv"
    status = await cli(
        "export", str(tid), "--format", "csv", "-o", str(csv_file), "--server", server
    )
    assert status == 0
    assert capsys.readouterr().out.startswith(f"tournament {tid}: CSV standings written to")
    exported = await http_request(app.port, f"/api/tournaments/{tid}/export.csv")
    assert exported.status == 200
    assert csv_file.read_bytes() == exported.body
    header, *rows = csv_file.read_text(encoding="utf-8").splitlines()
    assert header.startswith("place,player,table_points,score,session_1_table,session_1_seat,")
    assert [r.split(",")[1] for r in rows] == [row["player"] for row in standings]

    # A penalty moves the player's score; its undo puts it back.
    first = standings[0]["player"]
    status = await cli(
        "penalty", str(tid), first, "-10", "--reason", "slow play", "--session", "1",
        "--server", server, "--user", "rita",
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 0, err
    entry = re.match(rf"tournament {tid}: log entry (\d+): penalty -10 for {first}", out)
    assert entry, out
    after = {r["player"]: r for r in (await get_json(app, f"/api/tournaments/{tid}"))["standings"]}
    assert after[first]["score"] == standings[0]["score"] - 10
    status = await cli(
        "undo", str(tid), entry[1], "--reason", "entered by mistake", "--server", server,
        "--user", "rita",
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 0, err
    assert re.fullmatch(
        rf"tournament {tid}: log entry \d+: entry {entry[1]} undone: entered by mistake\n", out
    ), out
    again = (await get_json(app, f"/api/tournaments/{tid}"))["standings"]
    assert again == standings
    assert await cli("list", "--server", server) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0].split() == [
        "id",
        "name",
        "state",
        "session",
        "players",
        "registration",
        "rules",
    ]
    assert listed[1].split() == [str(tid), "Club", "night", "running", "1/2", "4", "open", "mcr"]
    assert await cli("show", str(tid), "--server", server) == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"tournament {tid}: Club night (running; ")
    assert "directors: rita" in shown and "players (4" in shown
    assert f"penalty -10 for {first} in session 1: slow play" in shown and "[undone]" in shown

    assert await cli("close", str(tid), "--server", server, "--user", "rita") == 0
    closed = capsys.readouterr().out.splitlines()
    assert closed[0] == f"tournament {tid} is finished; final standings:"
    assert closed[1:] == table


@pytest.mark.asyncio
async def test_a_long_list_of_names_is_sent_in_parts_that_fit(
    server_app: App, capsys: pytest.CaptureFixture[str], tmp_path: Path, password: str
) -> None:
    """300 names are more than one message of the server's 4 KiB limit: the command sends
    them in parts that fit, saying how far it got (one request closed the connection, 1009);
    a name the server refuses in a later part says what the earlier parts registered."""
    app = server_app
    server = f"ws://127.0.0.1:{app.port}/ws"
    await accounts(app, "rita")
    assert await cli("grant", "rita", "--database-url", app.config.database_url) == 0
    capsys.readouterr()
    tid = await created_tournament(app, capsys)
    names = [f"participant_{n:03}" for n in range(300)]
    for name in names:
        await app.store.create_player(name, None, False)
    listing = tmp_path / "players.txt"
    listing.write_text("\n".join(names) + "\n", encoding="utf-8")
    register = ["register", str(tid), "--server", server, "--user", "rita"]
    status = await cli(*register, "--file", str(listing))
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.out.endswith("\n300 player(s) registered\n")
    parts = re.findall(r"part (\d+) of (\d+) sent, (\d+) of 300 names registered", captured.err)
    assert len(parts) >= 2 and parts[-1][0] == parts[-1][1] and parts[-1][2] == "300"
    data = await get_json(app, f"/api/tournaments/{tid}")
    registered = [p["name"] for p in data["players"] if p["status"] == "registered"]
    assert sorted(registered) == names

    listing.write_text("\n".join([*names, "nobody_here"]) + "\n", encoding="utf-8")
    assert await cli(*register, "--file", str(listing)) == 1
    err = capsys.readouterr().err
    assert "'nobody_here' is not a registered account" in err
    refused = re.search(r"in part (\d+) of \1: the (\d+) names of the parts before it are", err)
    assert refused and 0 < int(refused[2]) < 300, err


def test_the_parts_of_a_list_of_names_fit_one_message() -> None:
    """Each part is a request within the limit and of at most 256 names, in order, and as
    full as it may be."""
    from server.cli.tournament.commands import name_batches  # noqa: PLC0415
    from server.client.connection import request_frame  # noqa: PLC0415

    def size(batch: list[str]) -> int:
        payload = {"tournament": 7, "players": batch}
        return len(request_frame("tournament_add_players", payload, 10**9).encode())

    for names in (
        [f"participant_{n:03}" for n in range(300)],
        ["x"] * 1000,  # (more than 256 a part would fit)
        ["龍" * 32] * 40,  # written \\u9f8d: six bytes a character
        ["a"],
    ):
        batches = name_batches(7, names)
        assert [n for batch in batches for n in batch] == names
        assert all(size(batch) <= 4096 and len(batch) <= 256 for batch in batches)
        for batch, after in itertools.pairwise(batches):
            assert len(batch) == 256 or size([*batch, after[0]]) > 4096


@pytest.mark.asyncio
async def test_a_non_director_is_refused_in_one_line(
    server_app: App, capsys: pytest.CaptureFixture[str], password: str
) -> None:
    app = server_app
    server = f"ws://127.0.0.1:{app.port}/ws"
    await accounts(app, "rita", "lina")
    assert await cli("grant", "rita", *_db(app)) == 0
    assert await cli("grant", "rita", *_db(app)) == 0
    out = capsys.readouterr().out
    assert (
        out == "rita may now create tournaments\nrita may now create tournaments (could already)\n"
    )
    tid = await created_tournament(app, capsys)

    status = await cli("create", "--name", "Mine", "--server", server, "--user", "lina")
    err = capsys.readouterr().err
    assert status == 1
    assert err.startswith("guobiao tournament: not_director: ") and err.count("\n") == 1, err
    assert await cli("seat", str(tid), "--server", server, "--user", "lina") == 1
    err = capsys.readouterr().err
    assert err.startswith("guobiao tournament: not_director: ") and err.count("\n") == 1, err
    # A director of this one tournament may direct it, and once revoked may not.
    assert await cli("grant", "nobody", *_db(app)) == 1
    assert capsys.readouterr().err == (
        "guobiao tournament: no account 'nobody': it must be registered first\n"
    )
    assert await cli("grant", "lina", "--tournament", "999", *_db(app)) == 1
    assert capsys.readouterr().err == "guobiao tournament: no tournament 999\n"
    assert await cli("grant", "lina", "--tournament", str(tid), *_db(app)) == 0
    assert capsys.readouterr().out == f"lina may now direct tournament {tid}\n"
    assert await cli("registration", str(tid), "closed", "--server", server, "--user", "lina") == 0
    assert capsys.readouterr().out == f"tournament {tid}: registration is closed\n"
    assert await cli("grant", "lina", "--tournament", str(tid), "--revoke", *_db(app)) == 0
    assert capsys.readouterr().out == f"lina may no longer direct tournament {tid}\n"
    assert await cli("registration", str(tid), "open", "--server", server, "--user", "lina") == 1
    assert "not_director" in capsys.readouterr().err

    status = await cli("show", "999", "--server", server)
    err = capsys.readouterr().err
    assert status == 1 and "HTTP 404" in err and err.count("\n") == 1, err
    assert await cli("standings", "999", "--server", server, "--user", "lina") == 1
    assert capsys.readouterr().err.startswith("guobiao tournament: no_such_tournament: ")


@pytest.mark.asyncio
async def test_a_director_swaps_a_bye_in_and_names_a_substitute(
    server_app: App, capsys: pytest.CaptureFixture[str], password: str
) -> None:
    app = server_app
    director = ["--server", f"ws://127.0.0.1:{app.port}/ws", "--user", "rita"]
    await accounts(app, "rita", *PLAYERS, "eve")
    assert await cli("grant", "rita", *_db(app)) == 0
    capsys.readouterr()
    tid = await created_tournament(app, capsys)
    assert await cli("register", str(tid), *PLAYERS, "eve", *director) == 0
    assert await cli("seat", str(tid), *director) == 0
    out = capsys.readouterr().out
    bye = re.search(r"^byes: (\w+)$", out, re.MULTILINE)
    assert bye, out
    view = await get_json(app, f"/api/tournaments/{tid}/sessions/1")
    seated = [seat["player"] for seat in view["tables"][0]["seats"]]
    assert view["byes"] == [bye[1]] and bye[1] not in seated

    assert await cli("swap", str(tid), seated[0], bye[1], *director) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"tournament {tid}, session 1: swapped {seated[0]} and {bye[1]}"
    assert lines[2].split() == ["1", bye[1], *seated[1:]]
    assert lines[3] == f"byes: {seated[0]}"

    assert await cli("substitute", str(tid), seated[1], "bot", *director) == 0
    assert capsys.readouterr().out == (f"tournament {tid}: bot plays for {seated[1]} from now on\n")
    view = await get_json(app, f"/api/tournaments/{tid}/sessions/1")
    seats = view["tables"][0]["seats"]
    assert [(s["player"], s["substitute"]) for s in seats[:2]] == [
        (bye[1], None),
        (seated[1], "bot:strong"),
    ]
    assert await cli("substitute", str(tid), "nobody", "bot", *director) == 1
    assert "bad_message: player: 'nobody' has no seat in session 1" in capsys.readouterr().err


def _db(app: App) -> list[str]:
    return ["--database-url", app.config.database_url]


# Nothing listens on port 1: a command that got as far as connecting would exit 1 saying so.
NOWHERE = ["--server", "ws://127.0.0.1:1/ws", "--user", "rita"]


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (["create", "--name", "x", "--sessions", "0"], "argument --sessions: expected a whole"),
        (["create", "--name", "x", "--hands", "17"], "argument --hands: expected a whole"),
        (["create", "--name", "  "], "argument --name: the name must not be empty (1 to 80 "),
        (["create", "--name", "x" * 81], "--name: the name has 81 characters; at most 80\n"),
        (["create", "--name", "Club\u202enight"], "U+202E RIGHT-TO-LEFT OVERRIDE (character 5)"),
        (["undo", "1", "2", "--reason", "a\u200bb"], "U+200B ZERO WIDTH SPACE (character 2)"),
        (["create", "--name", "x", "--seating", "random,snake"], "unknown seating method 'snake'"),
        (["create", "--name", "x", "--tie-breaks", "luck"], "unknown tie-break 'luck'"),
        (["seat", "1", "--method", "alphabetical"], "unknown seating method 'alphabetical'"),
        (["seat", "0"], "argument ID: expected a whole number of at least 1"),
        (["show", str(2**63)], f"argument ID: expected a whole number of at most {2**63 - 1}"),
        (["penalty", "1", "amy", "ten", "--reason", "r"], "expected a signed number"),
        (["export", "1", "--format", "xml"], "argument --format: invalid choice: 'xml'"),
    ],
)
def test_bad_arguments_are_refused_before_connecting(
    argv: list[str], complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["tournament", *argv, *NOWHERE])
    assert exited.value.code == 2
    assert complaint in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (["create", "--name", "x", "--sessions", "2", "--seating", "random,avoid,top4"],
         "--seating names 3 methods for 2 sessions"),
        (["penalty", "1", "amy", "1/2", "--reason", "r"], "a penalty is a whole number"),
        (["penalty", "1", "amy", "5", "--reason", "r", "--kind", "score"],
         "a score correction needs --session"),
        (["register", "1", "amy", "amy"], "named more than once: amy"),
        (["register", "1", "--file", "/nonexistent/players.txt"], "cannot read the names in"),
        (["register", "1", "--file", "/dev/null"], "no names in /dev/null"),
    ],
)  # fmt: skip
def test_inconsistent_arguments_are_refused_before_connecting(
    argv: list[str], complaint: str, capsys: pytest.CaptureFixture[str], password: str
) -> None:
    assert main(["tournament", *argv, *NOWHERE]) == 2
    err = capsys.readouterr().err
    assert err.startswith("guobiao tournament: ") and complaint in err, err
    assert "cannot connect" not in err


@pytest.mark.parametrize("server", ["garbage", "ftp://host/ws", "ws://[::1"])
@pytest.mark.parametrize("argv", [["list"], ["show", "1"]])
def test_what_reads_over_http_refuses_an_address_that_is_not_a_servers(
    argv: list[str], server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """As the websocket requests do (``create``): a line naming the address, no traceback."""
    assert main(["tournament", *argv, "--server", server]) == 1
    err = capsys.readouterr().err
    assert err == f"guobiao tournament: {server} is not a websocket URL (ws://HOST:PORT/ws)\n"


def test_a_grant_of_a_tournament_past_the_databases_ids_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["tournament", "grant", "rita", "--tournament", str(2**63), "--data-dir", "/nowhere"])
    assert exited.value.code == 2
    assert "argument --tournament: expected a whole number of at most" in capsys.readouterr().err


def test_a_request_needs_an_account(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "seat", "1", "--server", "ws://127.0.0.1:1/ws"]) == 2
    assert "'seat' is a request of an account: give --user NAME" in capsys.readouterr().err


def test_the_http_address_is_the_websockets() -> None:
    assert http_base("ws://127.0.0.1:8765/ws") == "http://127.0.0.1:8765"
    assert http_base("wss://mahjong.example/club/ws") == "https://mahjong.example/club"
    assert http_base("ws://[::1]:9000") == "http://[::1]:9000"


def test_every_subcommand_has_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    for action in ("create", "register", "seat", "start", "standings", "export", "show", "list",
                   "penalty", "undo", "substitute", "swap", "close", "grant"):  # fmt: skip
        with pytest.raises(SystemExit) as exited:
            main(["tournament", action, "--help"])
        assert exited.value.code == 0
        assert f"example:\n  guobiao tournament {action}" in capsys.readouterr().out


@pytest.mark.asyncio
async def test_a_login_token_carries_a_script_past_the_login_limits(
    start_server: Any,
    capsys: pytest.CaptureFixture[str],
    password: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the server's own login limits (10 logins of an account at once), a script of
    more commands logs in once (``login``) and resumes its token after."""
    app = await start_server(tournaments={"directors": "rita"})
    server = f"ws://127.0.0.1:{app.port}/ws"
    await accounts(app, "rita", "lina")
    assert await cli("login", "--server", server, "--user", "rita") == 0
    printed = capsys.readouterr().out.strip()
    found = re.fullmatch(r"export GUOBIAO_TOKEN=(\S+)", printed)
    assert found, printed
    monkeypatch.setenv("GUOBIAO_TOKEN", found[1])
    monkeypatch.delenv("GUOBIAO_PASSWORD")  # the token alone
    status = await cli("create", "--server", server, "--user", "rita", "--name", "Tokens")
    tid = int(re.match(r"created tournament (\d+)", capsys.readouterr().out)[1])  # type: ignore[index]
    assert status == 0
    for _ in range(12):  # more than the logins an account may make at once
        assert (
            await cli("registration", str(tid), "open", "--server", server, "--user", "rita") == 0
        )
    assert capsys.readouterr().out.count("registration is open") == 12
    # A token of another account is refused for --user, in one line.
    assert await cli("registration", str(tid), "open", "--server", server, "--user", "lina") == 1
    err = capsys.readouterr().err
    assert err == "guobiao tournament: GUOBIAO_TOKEN is a session of rita, not of --user lina\n"

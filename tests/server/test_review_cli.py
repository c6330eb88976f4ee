"""``guobiao review MATCH --player NAME`` on a database with a stored match (tests/reviewkit.py):
the biggest misses first, then each hand; ``--json`` as the HTTP API answers; a clear error
and exit status 1 for a match in play, an unknown match or player, and a duplicate session's
match while the session plays."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from reviewkit import stored_match
from test_duplicate_hold_back import session_table

from server.cli import main
from server.db.migrate import head, revisions_between, upgrade
from server.db.store import Store

FOUR = ["rc_bea", "bot:normal", "bot:fast", "bot:strong"]
BOTS = ["fast", "normal", "fast", "strong"]


@pytest.fixture
def database(tmp_path: Path, migrated_sqlite: Path) -> tuple[str, list[int]]:
    """A database with a finished match, one in play, a held one, and a finished one whose
    hand 2 the server played for rc_bea; the URL and their ids."""
    shutil.copyfile(migrated_sqlite, tmp_path / "cli.db")
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"

    async def fill() -> list[int]:
        async with await Store.open(url) as store:
            done = await stored_match(store, "c1", FOUR, BOTS, seed=31, hands=2)
            playing = await stored_match(store, "c2", FOUR, BOTS, seed=32, finished=False)
            await session_table(store, "d1", duplicate=True, seats=FOUR)
            held = await stored_match(store, "d1", FOUR, BOTS, seed=33)
            away = await stored_match(store, "c3", FOUR, BOTS, seed=31, hands=2, stand_in={(2, 0)})
            return [done, playing, held, away]

    return url, asyncio.run(fill())


def test_the_biggest_misses_come_first_then_each_hand(
    database: tuple[str, list[int]], capsys: pytest.CaptureFixture[str]
) -> None:
    url, (done, *_) = database
    assert (
        main(["review", str(done), "--player", "rc_bea", "--top", "3", "--database-url", url]) == 0
    )
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith(f"match {done}, rc_bea (player 0): ")
    biggest = lines.index(next(line for line in lines if line.startswith("Biggest misses")))
    assert lines[biggest + 1].split() == [
        "hand",
        "action",
        "phase",
        "taken",
        "bot",
        "value",
        "bot's",
        "loss",
    ]
    rows = lines[biggest + 2 : biggest + 5]
    losses = [float(row.split()[-1]) for row in rows]
    assert losses == sorted(losses, reverse=True) and losses[0] > 0
    assert lines[biggest + 5] == ""
    assert [line.split(":")[0] for line in lines if line.startswith("Hand ")] == [
        "Hand 1",
        "Hand 2",
    ]

    assert main(["review", str(done), "--player", "rc_bea", "--json", "--database-url", url]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["match"] == done and body["name"] == "rc_bea" and body["misses"]
    shown = [body["decisions"][i]["loss"] for i in body["misses"][:3]]
    assert shown == pytest.approx(losses, abs=0.005)  # (printed to 2 places)

    assert main(["review", str(done), "--player", "bot:strong", "--database-url", url]) == 0
    assert "No miss" in capsys.readouterr().out


def test_the_moves_the_server_played_for_her_are_said_and_not_reviewed(
    database: tuple[str, list[int]], capsys: pytest.CaptureFixture[str]
) -> None:
    url, (done, _, _, away) = database
    assert main(["review", str(done), "--player", "rc_bea", "--database-url", url]) == 0
    assert "the server played" not in capsys.readouterr().out
    assert main(["review", str(away), "--player", "rc_bea", "--database-url", url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"match {away}, rc_bea (player 0): ")
    count = int(lines[1].split()[0])
    assert count > 0
    assert lines[1] == (
        f"{count} moves the server played for rc_bea (away or out of time) are not reviewed"
    )
    assert next(line for line in lines if line.startswith("Hand 2:")).startswith(
        "Hand 2: 0 decisions"
    )
    assert main(["review", str(away), "--player", "rc_bea", "--json", "--database-url", url]) == 0
    assert json.loads(capsys.readouterr().out)["stand_in"] == count


@pytest.mark.parametrize(
    ("which", "player", "words"),
    [
        (1, "rc_bea", "no finished match"),
        (2, "rc_bea", "duplicate session 1"),
        (0, "nobody", "no player 'nobody'"),
        (None, "rc_bea", "no finished match 999"),
    ],
)
def test_what_cannot_be_reviewed_is_said(
    database: tuple[str, list[int]],
    capsys: pytest.CaptureFixture[str],
    which: int | None,
    player: str,
    words: str,
) -> None:
    url, ids = database
    match_id = 999 if which is None else ids[which]
    assert main(["review", str(match_id), "--player", player, "--database-url", url]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("guobiao review: ") and words in captured.err


def test_a_database_not_yet_migrated_is_named_with_what_to_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A database an older guobiao wrote (its schema a revision behind) gets one clear line
    saying what to run, not the database's error about a missing column."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
    before = revisions_between(None, head())[-2]
    asyncio.run(upgrade(url, before))
    assert main(["review", "1", "--player", "ann", "--database-url", url]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"guobiao review: the database is at schema {before} and this guobiao reads {head()}: "
        "run 'guobiao db upgrade' (or start the server, which migrates it) first\n"
    )


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        ([str(2**63)], f"argument match: expected a whole number of at most {2**63 - 1}"),
        (["0"], "argument match: expected a whole number of at least 1"),
        (["1", "--top", str(10**30)], "argument --top: expected a whole number of at most"),
    ],
)
def test_a_number_the_database_cannot_hold_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], words: str
) -> None:
    """Not ``OverflowError`` from the driver: argparse names the argument, exit status 2."""
    with pytest.raises(SystemExit) as exited:
        main(["review", *argv, "--player", "alice", "--data-dir", str(tmp_path)])
    assert exited.value.code == 2
    assert words in capsys.readouterr().err

"""Alembic migrations: up, down to base and up again on SQLite and PostgreSQL; the migrated
schema is exactly the models'."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, inspect, text

from server.cli import main
from server.db.engine import make_engine
from server.db.migrate import alembic_config
from server.db.models import metadata, schema_filter
from server.db.store import Store, UsernameLookalike, current, downgrade, head, upgrade
from server.text import skeleton

TABLES = {
    "players",
    "sessions",
    "tables",
    "matches",
    "hands",
    "actions",
    "match_players",
    "seasons",
    "ratings",
    "rating_changes",
    "tournaments",
    "tournament_roles",
    "tournament_players",
    "tournament_checkins",
    "tournament_sessions",
    "tournament_tables",
    "tournament_substitutions",
    "tournament_log",
}


async def table_names(url: str) -> set[str]:
    engine = make_engine(url, store=False)
    try:
        async with engine.connect() as connection:
            names = await connection.run_sync(lambda c: inspect(c).get_table_names())
    finally:
        await engine.dispose()
    return set(names) - {"alembic_version"}


async def schema_differences(url: str) -> list[object]:
    def compare(connection: Connection) -> list[object]:
        options = {"include_object": schema_filter(connection.dialect.name)}
        return list(
            compare_metadata(MigrationContext.configure(connection, opts=options), metadata)
        )

    engine = make_engine(url, store=False)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(compare)
    finally:
        await engine.dispose()


@pytest.mark.asyncio
async def test_upgrade_downgrade_upgrade(database_url: str) -> None:
    assert await current(database_url) is None
    await upgrade(database_url)
    assert await current(database_url) == head() == "0010"
    assert await table_names(database_url) == TABLES

    await downgrade(database_url, "base")
    assert await current(database_url) is None
    assert await table_names(database_url) == set()

    await upgrade(database_url, "head")
    assert await current(database_url) == head()
    assert await table_names(database_url) == TABLES


@pytest.mark.asyncio
async def test_upgrade_twice_changes_nothing(database_url: str) -> None:
    await upgrade(database_url)
    await upgrade(database_url)
    assert await current(database_url) == head()


@pytest.mark.asyncio
async def test_migrated_schema_is_the_models(database_url: str) -> None:
    await upgrade(database_url)
    assert await schema_differences(database_url) == []


@pytest.mark.asyncio
async def test_constraints_follow_the_naming_convention(database_url: str) -> None:
    await upgrade(database_url)
    engine = make_engine(database_url, store=False)
    try:
        async with engine.connect() as connection:

            def names(sync: Connection) -> dict[str, object]:
                inspector = inspect(sync)
                return {
                    "unique": {u["name"] for u in inspector.get_unique_constraints("actions")},
                    "fk": {f["name"] for f in inspector.get_foreign_keys("actions")},
                    "index": {i["name"] for i in inspector.get_indexes("match_players")},
                }

            found = await connection.run_sync(names)
    finally:
        await engine.dispose()
    assert found == {
        "unique": {"uq_actions_match_id_seq"},
        "fk": {"fk_actions_match_id_matches"},
        "index": {"ix_match_players_player_id"},
    }


def test_offline_mode_writes_the_sql() -> None:
    config = alembic_config("postgresql+asyncpg://user:pa%40ss@db.invalid/guobiao")
    config.output_buffer = io.StringIO()
    command.upgrade(config, "head", sql=True)
    sql = config.output_buffer.getvalue()
    assert "CREATE TABLE players" in sql
    assert "CONSTRAINT uq_players_username_key UNIQUE (username_key)" in sql
    assert "TIMESTAMP WITH TIME ZONE" in sql


# guobiao db.


def test_db_command_upgrades_downgrades_and_tells(
    database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if database_url.startswith("sqlite"):  # a read makes no file, nor its folder
        assert main(["db", "current", "--database-url", database_url]) == 1
        assert "no such database (no folder " in capsys.readouterr().err
    else:
        assert main(["db", "current", "--database-url", database_url]) == 0
        assert "no revision" in capsys.readouterr().out
    assert main(["db", "upgrade", "--database-url", database_url]) == 0
    assert "upgraded to 0010 (head)" in capsys.readouterr().out
    assert main(["db", "current", "--database-url", database_url]) == 0
    assert capsys.readouterr().out.strip().endswith(": 0010 (head)")
    assert main(["db", "downgrade", "base", "--database-url", database_url]) == 1
    assert "drops every table" in capsys.readouterr().err  # (not at a terminal: --yes)
    assert main(["db", "downgrade", "base", "--yes", "--database-url", database_url]) == 0
    assert "downgraded to no revision" in capsys.readouterr().out


def test_db_command_reads_the_environment_and_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from_env = tmp_path / "env" / "g.db"
    monkeypatch.setenv("GUOBIAO_DATABASE_URL", f"sqlite:///{from_env}")
    assert main(["db", "upgrade"]) == 0
    assert from_env.exists()
    monkeypatch.delenv("GUOBIAO_DATABASE_URL")
    site = tmp_path / "site.toml"
    site.write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\n', encoding="utf-8")
    assert main(["db", "upgrade", "0001", "--config", str(site)]) == 0
    assert (tmp_path / "data" / "guobiao.db").exists()
    assert "upgraded to 0001 (head is 0010)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("nonsense", "not a database URL: 'nonsense'"),
        ("mysql://u@h/db", "unsupported database 'mysql'"),
        ("postgresql+psycopg2://u@h/db", "not an asyncio driver"),
        ("postgresql://u:secret@127.0.0.1:1/db", "cannot use the database postgresql://u:***@"),
    ],
)
def test_db_command_explains_a_bad_database(
    url: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["db", "upgrade", "--database-url", url]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("guobiao db: ") and message in captured.err
    assert "secret" not in captured.err


def test_db_command_explains_an_unknown_revision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'g.db'}"
    assert main(["db", "downgrade", "nope", "--database-url", url]) == 1
    assert "Can't locate revision identified by 'nope'" in capsys.readouterr().err


@pytest.mark.asyncio
async def test_0002_keeps_the_matches_stored_before_it(database_url: str) -> None:
    """A match stored under 0001 survives the upgrade, with no rule options (its preset
    is used), and downgrading drops only the new column."""
    await upgrade(database_url, "0001")
    engine = make_engine(database_url, store=False)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO matches (table_id, rules, seed, salt, seats, started_at) "
                    "VALUES ('t1', 'mcr', 42, 'ab', '[null, null, null, null]', "
                    "'2026-11-29 10:00:00+00:00')"
                )
            )
        await upgrade(database_url)
        async with engine.connect() as connection:
            row = (
                await connection.execute(text("SELECT seed, rules, rule_options FROM matches"))
            ).one()
        assert tuple(row) == (42, "mcr", None)
        await downgrade(database_url, "0001")
        async with engine.connect() as connection:
            seeds = (await connection.execute(text("SELECT seed FROM matches"))).scalars().all()
        assert seeds == [42]
    finally:
        await engine.dispose()


@pytest.mark.asyncio
async def test_0004_lets_the_tables_stored_before_it_keep_their_aids(database_url: str) -> None:
    """A table stored under 0002 allows aids after the upgrade (as every table did), and
    downgrading drops only the new column."""
    await upgrade(database_url, "0002")
    engine = make_engine(database_url, store=False)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO tables (id, rules, turn_seconds, private, seats, created_at, "
                    "state) VALUES ('t1', 'mcr', 15, false, '[null, null, null, null]', "
                    "'2026-11-29 10:00:00+00:00', 'waiting')"
                )
            )
        await upgrade(database_url)
        async with engine.connect() as connection:
            row = (await connection.execute(text("SELECT id, aids FROM tables"))).one()
        assert tuple(row) == ("t1", True)
        await downgrade(database_url, "0002")
        async with engine.connect() as connection:
            ids = (await connection.execute(text("SELECT id FROM tables"))).scalars().all()
        assert ids == ["t1"]
    finally:
        await engine.dispose()


@pytest.mark.asyncio
async def test_0005_makes_the_tables_and_matches_stored_before_it_casual(
    database_url: str,
) -> None:
    """Rows stored under 0004 are casual after the upgrade (no rating, no season); the
    downgrade drops the ladder's tables and columns and keeps the rows."""
    await upgrade(database_url, "0004")
    engine = make_engine(database_url, store=False)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO tables (id, rules, turn_seconds, private, seats, created_at, "
                    "state) VALUES ('t1', 'mcr', 15, false, '[null, null, null, null]', "
                    "'2026-11-29 10:00:00+00:00', 'waiting')"
                )
            )
            await connection.execute(
                text(
                    "INSERT INTO matches (table_id, rules, seed, salt, seats, started_at) "
                    "VALUES ('t1', 'mcr', 42, '00', '[null, null, null, null]', "
                    "'2026-11-29 10:00:00+00:00')"
                )
            )
        await upgrade(database_url)
        async with engine.connect() as connection:
            table = (await connection.execute(text("SELECT id, rated FROM tables"))).one()
            match = (
                await connection.execute(text("SELECT rated, season_id, foursome FROM matches"))
            ).one()
        assert tuple(table) == ("t1", False)
        assert tuple(match) == (False, None, None)
        await downgrade(database_url, "0004")
        assert not {"seasons", "ratings", "rating_changes"} & await table_names(database_url)
        async with engine.connect() as connection:
            seeds = (await connection.execute(text("SELECT seed FROM matches"))).scalars().all()
        assert seeds == [42]
    finally:
        await engine.dispose()


@pytest.mark.asyncio
async def test_0007_makes_the_tables_stored_before_it_no_tournaments(database_url: str) -> None:
    """A table stored under 0006 has no tournament settings after the upgrade (no cap, a
    random seed, reveals, watchable, no delay, no tournament); the downgrade keeps it."""
    await upgrade(database_url, "0006")
    engine = make_engine(database_url, store=False)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO tables (id, rules, turn_seconds, private, seats, created_at, "
                    "state) VALUES ('t1', 'mcr', 15, false, '[null, null, null, null]', "
                    "'2026-11-29 10:00:00+00:00', 'waiting')"
                )
            )
        await upgrade(database_url)
        async with engine.connect() as connection:
            row = (
                await connection.execute(
                    text(
                        "SELECT ends_at, seed, reveals, watchable, spectator_delay_seconds, "
                        "tournament_id, tournament_session, tournament_table FROM tables"
                    )
                )
            ).one()
        assert tuple(row) == (None, None, True, True, 0, None, None, None)
        await downgrade(database_url, "0006")
        async with engine.connect() as connection:
            ids = (await connection.execute(text("SELECT id FROM tables"))).scalars().all()
        assert ids == ["t1"]
    finally:
        await engine.dispose()


@pytest.mark.asyncio
async def test_0008_gives_the_tables_stored_before_it_fencing_token_0(database_url: str) -> None:
    """A table stored under 0007 has fencing token 0 after the upgrade (what one process
    never changes); the downgrade keeps the table."""
    await upgrade(database_url, "0007")
    engine = make_engine(database_url, store=False)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO tables (id, rules, turn_seconds, private, seats, created_at, "
                    "state) VALUES ('t1', 'mcr', 15, false, '[null, null, null, null]', "
                    "'2026-11-29 10:00:00+00:00', 'waiting')"
                )
            )
        await upgrade(database_url)
        async with engine.connect() as connection:
            fence = (await connection.execute(text("SELECT fence FROM tables"))).scalar_one()
        assert fence == 0
        await downgrade(database_url, "0007")
        async with engine.connect() as connection:
            ids = (await connection.execute(text("SELECT id FROM tables"))).scalars().all()
        assert ids == ["t1"]
    finally:
        await engine.dispose()


@pytest.mark.asyncio
async def test_0009_gives_each_account_its_skeleton_and_keeps_those_that_look_alike(
    database_url: str,
) -> None:
    """Accounts stored under 0008 get their username skeleton (server.text.skeleton); of
    names that already look alike the oldest keeps it and the others get none, and all still
    log in by their own names; a new look-alike is refused; the downgrade keeps them all."""
    names = ["lin", "Iin", "mei", "Bob", "b0b", "1in", "rnei", "guest-0427", "kai"]
    await upgrade(database_url, "0008")
    engine = make_engine(database_url, store=False)
    try:
        async with engine.begin() as connection:
            for name in names:
                await connection.execute(
                    text(
                        "INSERT INTO players (username, username_key, password_hash, guest, "
                        "created_at, score, hands_won, hands_lost, hands_drawn, matches, grade) "
                        "VALUES (:name, :key, NULL, :guest, '2026-11-29 10:00:00+00:00', "
                        "0, 0, 0, 0, 0, 0.0)"
                    ),
                    {"name": name, "key": name.lower(), "guest": name.startswith("guest-")},
                )
        await upgrade(database_url)
        async with engine.connect() as connection:
            rows = await connection.execute(
                text("SELECT username, username_skeleton FROM players ORDER BY id")
            )
            stored = dict(rows.all())
        kept = {"lin", "mei", "Bob", "guest-0427", "kai"}  # the oldest of each look-alike group
        assert stored == {n: skeleton(n) if n in kept else None for n in names}
        store = await Store.open(database_url)
        try:
            for name in names:  # each logs in by its own name, as before
                found = await store.get_player(name.upper())
                assert found is not None and found.username == name
            with pytest.raises(UsernameLookalike) as caught:
                await store.create_player("LlN", None, False)
            assert caught.value.existing == "lin"
            with pytest.raises(UsernameLookalike):
                await store.create_player("RNEI", None, False)  # like mei, not rnei: its is null
            await store.create_player("lan", None, False)
        finally:
            await store.close()
        await downgrade(database_url, "0008")
        async with engine.connect() as connection:
            count = (await connection.execute(text("SELECT COUNT(*) FROM players"))).scalar_one()
        assert count == len(names) + 1
    finally:
        await engine.dispose()


@pytest.mark.asyncio
async def test_0010_marks_the_actions_stored_before_it_as_their_players_own(
    database_url: str,
) -> None:
    """An action stored under 0009 is not a stand-in's after the upgrade (``stand_in``
    false: reviewed as before); the downgrade keeps the action."""
    await upgrade(database_url, "0009")
    engine = make_engine(database_url, store=False)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO matches (id, table_id, rules, seed, salt, seats, started_at) "
                    "VALUES (1, 't1', 'mcr', 7, 'salt', '[\"a\", \"b\", \"c\", \"d\"]', "
                    "'2026-11-29 10:00:00+00:00')"
                )
            )
            await connection.execute(
                text(
                    "INSERT INTO actions (match_id, seq, hand_no, player, action, created_at) "
                    "VALUES (1, 1, 1, 0, '{\"type\": \"pass\"}', '2026-11-29 10:00:01+00:00')"
                )
            )
        await upgrade(database_url)
        async with engine.connect() as connection:
            flag = (await connection.execute(text("SELECT stand_in FROM actions"))).scalar_one()
        assert not flag and flag is not None  # (SQLite: 0)
        await downgrade(database_url, "0009")
        async with engine.connect() as connection:
            count = (await connection.execute(text("SELECT COUNT(*) FROM actions"))).scalar_one()
        assert count == 1
    finally:
        await engine.dispose()

"""Alembic, driven from code: no ``alembic.ini``.

The configuration is built here (``script_location`` is the repository's ``migrations/``
folder, installed as the package ``server.migrations``; ``sqlalchemy.url`` the server's
database URL). Migrations run on a connection of an async engine through ``run_sync``
(Alembic's "connection sharing" recipe), so they work the same on aiosqlite and asyncpg and
never block another thread's event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Connection, text

from server.db.engine import make_engine, parse_url

# The repository's migrations/, shipped as the package server.migrations (pyproject.toml says
# how). Installed packages are folders on disk: Alembic gets a real path.
MIGRATIONS = Path(str(resources.files("server.migrations")))


def alembic_config(url: str) -> Config:
    """An Alembic configuration for ``url`` (with its async driver)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    # The value goes through ConfigParser interpolation: a percent-encoded password needs %%.
    rendered = parse_url(url).render_as_string(hide_password=False)
    config.set_main_option("sqlalchemy.url", rendered.replace("%", "%%"))
    return config


def head() -> str:
    """The newest revision of ``migrations/versions``."""
    revision = ScriptDirectory(str(MIGRATIONS)).get_current_head()
    assert revision is not None, "migrations/versions holds no revision"
    return revision


def revisions_between(before: str | None, after: str) -> list[str]:
    """The revisions an upgrade from ``before`` (None: an empty database) to ``after``
    applies, oldest first."""
    script = ScriptDirectory(str(MIGRATIONS))
    steps = script.iterate_revisions(after, before or "base")
    return [step.revision for step in reversed(list(steps)) if step is not None]


async def upgrade(url: str, revision: str = "head") -> None:
    """Migrate the database at ``url`` up to ``revision`` (default: the newest)."""
    await _run(url, command.upgrade, revision)


async def downgrade(url: str, revision: str) -> None:
    """Migrate the database at ``url`` down to ``revision`` (``"base"``: an empty database)."""
    await _run(url, command.downgrade, revision)


async def current(url: str, *, read_only: bool = False) -> str | None:
    """The revision the database at ``url`` is at; None before any migration.
    ``read_only``: as ``make_engine``'s (no SQLite file is made, nor its folder)."""
    engine = make_engine(url, store=False, read_only=read_only)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(
                lambda sync: MigrationContext.configure(sync).get_current_revision()
            )
    finally:
        await engine.dispose()


def known(revision: str) -> bool:
    """Whether ``revision`` is one of this version's migrations."""
    try:
        ScriptDirectory(str(MIGRATIONS)).get_revision(revision)
    except Exception:  # alembic's "Can't locate revision", or an ambiguous prefix
        return False
    return True


def newer(revision: str) -> str:
    """What to say of a database at ``revision``, which this version does not know."""
    return (
        f"the database is at schema {revision}, which this guobiao does not know (its newest "
        f"is {head()}): a newer guobiao migrated it; run that version, or restore a backup "
        "taken before (docs/deployment.md, Backups)"
    )


async def _run(url: str, step: Callable[[Config, str], Any], revision: str) -> None:
    config = alembic_config(url)
    engine = make_engine(url, store=False)

    def run(connection: Connection) -> None:
        config.attributes["connection"] = connection
        at = MigrationContext.configure(connection).get_current_revision()
        if at is not None and not known(at):
            raise CommandError(newer(at))
        step(config, revision)

    try:
        async with engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                # Several nodes of a cluster start at once: one migrates, the others wait
                # here (the lock ends with the transaction) and then find nothing to do.
                await connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK})
            await connection.run_sync(run)
    finally:
        await engine.dispose()


_LOCK = 0x6775_6F62  # "guob": the advisory lock the migrations hold on PostgreSQL

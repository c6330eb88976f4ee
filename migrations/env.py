"""Alembic environment for guobiao (async engines: aiosqlite and asyncpg).

There is no ``alembic.ini``: ``server/db/migrate.py`` builds the configuration and runs
the migrations on a connection it passes in ``config.attributes["connection"]``. Without
one (a hand-made configuration), this file opens an async engine on ``sqlalchemy.url``
itself; in offline mode (``--sql``) it writes the SQL instead.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy import Connection, pool
from sqlalchemy.ext.asyncio import async_engine_from_config

from server.db.models import UTCDateTime, metadata, schema_filter

config = context.config
target_metadata = metadata


def render_item(kind: str, item: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    """Autogenerate writes the models' ``UTCDateTime`` as the plain type it stores: a
    migration must not import the application's code."""
    if kind == "type" and isinstance(item, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        render_item=render_item,
    )
    with context.begin_transaction():
        context.run_migrations()


def do_run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite alters tables by copying them ("batch mode"); the later migrations need it.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        render_item=render_item,
        include_object=schema_filter(connection.dialect.name),
    )
    with context.begin_transaction():
        context.run_migrations()


async def run_async_migrations() -> None:
    engine = async_engine_from_config(
        config.get_section(config.config_ini_section, {}),
        prefix="sqlalchemy.",
        poolclass=pool.NullPool,
    )
    try:
        async with engine.connect() as connection:
            await connection.run_sync(do_run_migrations)
    finally:
        await engine.dispose()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        asyncio.run(run_async_migrations())
    else:
        do_run_migrations(connection)


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()

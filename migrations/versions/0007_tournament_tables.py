"""Store each table's tournament settings.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

A tournament's table keeps, over a restart, what its session set: ``ends_at`` the session's
time cap (no hand starts after it), ``seed`` its match's seed (duplicate: every table of a
session gets the same walls), ``reveals`` whether each hand's seed is sent as it ends,
``watchable`` whether it may be watched, ``spectator_delay_seconds`` how late its spectators
see it, and ``tournament_id``, ``tournament_session``, ``tournament_table`` which table of
which session it is (no foreign key: revision 0006's ``tournament_tables`` is the
tournament's own record of its tables). Tables stored
before this revision are no tournament's: no cap, a random seed, reveals, watchable, no
delay.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.add_column(sa.Column("ends_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("seed", sa.BigInteger(), nullable=True))
        batch.add_column(
            sa.Column("reveals", sa.Boolean(), nullable=False, server_default=sa.true())
        )
        batch.add_column(
            sa.Column("watchable", sa.Boolean(), nullable=False, server_default=sa.true())
        )
        batch.add_column(
            sa.Column("spectator_delay_seconds", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("tournament_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("tournament_session", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("tournament_table", sa.Integer(), nullable=True))
        batch.create_index(op.f("ix_tables_tournament_id"), ["tournament_id"])


def downgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.drop_index(op.f("ix_tables_tournament_id"))
        batch.drop_column("tournament_table")
        batch.drop_column("tournament_session")
        batch.drop_column("tournament_id")
        batch.drop_column("spectator_delay_seconds")
        batch.drop_column("watchable")
        batch.drop_column("reveals")
        batch.drop_column("seed")
        batch.drop_column("ends_at")

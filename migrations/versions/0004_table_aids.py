"""Store whether each table allows playing aids (``analyze``).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

A table created with ``aids`` false (a tournament's) must stay so after a restart, or its
players would get the analysis it forbids. Tables stored before this revision allowed them.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.add_column(sa.Column("aids", sa.Boolean(), nullable=False, server_default=sa.true()))


def downgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("aids")

"""A fencing token per table, for several nodes; each table's own claim window.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

In cluster mode (several ``guobiao serve`` nodes on one database) a table is owned by one node
at a time, under a lease. ``tables.fence`` is the lease's fencing token: a node that takes a
table over increments it, and every append to the table's action log, every save of its row
and every new match of it is refused unless the writer's token is the current one, so a node
that was paused or cut off and comes back after its lease moved writes nothing more. Tables
stored before this revision start at 0 (one process never changes it).

``tables.claim_window_ms`` keeps a table's own claim window (``create_table``'s
``claim_window_ms``), so a table adopted by another node or restored after a restart plays at
the pace it was created with; null (every table stored before this revision): its preset's.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.add_column(sa.Column("fence", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("claim_window_ms", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("claim_window_ms")
        batch.drop_column("fence")

"""Store each match's length, and each table's, in deals.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01

A table may play a shorter match than the whole 16 hands (``create_table``'s ``hands``: 4 is
the East round only). A match is rebuilt after a restart by replaying its actions, and the
replay must stop where the match was to stop: ``matches.hands_planned`` holds the length it
was started with (``engine.match.Match.hands``), ``tables.hands`` the length a waiting
table's match will have. Rows stored before this revision played, or will play, 16.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.add_column(
            sa.Column("hands_planned", sa.Integer(), server_default="16", nullable=False)
        )
    with op.batch_alter_table("tables") as batch:
        batch.add_column(sa.Column("hands", sa.Integer(), server_default="16", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("hands")
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("hands_planned")

"""Store each match's rule options beside its preset name.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29

A match is rebuilt after a restart by replaying its actions under its rules. The preset
name alone is not enough: ``config/rules.toml`` may redefine a preset between two runs, and
the replay would then diverge from what was played. ``rule_options`` holds
``engine.rules.RuleSet.to_dict()`` as it was when the match started; matches stored before
this revision have none and fall back to their preset.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("rule_options", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("rule_options")

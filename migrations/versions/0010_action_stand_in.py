"""Whether the server played a logged action for the person whose seat it was.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04

``actions.stand_in`` is true for a move the server played for a seat a person held (away
longer than ``disconnected_seconds``, or out of time), false for the person's own moves and
for a bot seat's (the bot's own decisions). A review of a player's decisions leaves the moves
the server played for her out. Actions stored before this revision are all false: who played
them is not known any more, so they are reviewed as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("actions") as batch:
        batch.add_column(
            sa.Column("stand_in", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("actions") as batch:
        batch.drop_column("stand_in")

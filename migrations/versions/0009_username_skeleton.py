"""Each account's username skeleton, unique: names that look alike are one name.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-08

``players.username_skeleton`` is the name as ``server.text.skeleton`` compares it: in lower
case, with ``i`` and ``1`` read as ``l``, ``0`` as ``o`` and ``m`` as ``rn`` (UTS #39's
confusables among the ASCII characters a username holds, closed under case). Its unique
index refuses a new name that looks like an existing one, and finds it in one lookup.

The accounts stored before this revision get their skeleton here, in SQL (the same on SQLite
and PostgreSQL, and in offline mode). Where some already look alike (``lin`` and ``Iin``,
registered when only case was compared), the oldest account keeps the skeleton and the
others get none (null, which the unique index allows any number of times): every one of
them stays as it was and logs in with its own name, and no new name like theirs can be
registered. (An account that a node of the older version creates during a rolling upgrade
gets no skeleton either: the column allows it, so those nodes run on.) The downgrade drops
the column.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# server.text.skeleton for ASCII names (every stored username is: server.accounts.USERNAME),
# frozen here as it was at this revision. LOWER folds ASCII alike on both databases.
SKELETON = (
    "REPLACE(REPLACE(REPLACE(REPLACE(LOWER(username), 'i', 'l'), '1', 'l'), '0', 'o'), 'm', 'rn')"
)


def upgrade() -> None:
    op.add_column("players", sa.Column("username_skeleton", sa.String(length=64), nullable=True))
    op.execute(f"UPDATE players SET username_skeleton = {SKELETON}")
    # The oldest account of each look-alike group keeps its skeleton, the others none.
    op.execute(
        "UPDATE players SET username_skeleton = NULL WHERE id NOT IN "
        "(SELECT MIN(id) FROM players GROUP BY username_skeleton)"
    )
    op.create_index(
        op.f("ix_players_username_skeleton"), "players", ["username_skeleton"], unique=True
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_players_username_skeleton"), table_name="players")
    with op.batch_alter_table("players") as batch:
        batch.drop_column("username_skeleton")

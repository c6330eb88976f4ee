"""The ranking ladder: rated tables and matches, seasons, ratings and rating changes.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

Tables and matches stored before this revision are casual (``rated`` false). ``address`` on
``match_players`` records where each player connected from (docs/ladder.md, "Farming").
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _utc(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "seasons",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("ladder", sa.String(length=32), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        _utc("starts_at"),
        _utc("ends_at", nullable=True),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("rated_matches", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_seasons")),
        sa.UniqueConstraint("ladder", "number", name=op.f("uq_seasons_ladder_number")),
    )
    op.create_table(
        "ratings",
        sa.Column("season_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("conservative", sa.Float(), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        _utc("last_played_at"),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_ratings_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["season_id"], ["seasons.id"], name=op.f("fk_ratings_season_id_seasons")
        ),
        sa.PrimaryKeyConstraint("season_id", "player_id", name=op.f("pk_ratings")),
    )
    op.create_index(  # holds ``matches`` too: pages and ranks read the index alone
        "ix_ratings_season_board",
        "ratings",
        ["season_id", "conservative", "player_id", "matches"],
    )
    op.create_index(op.f("ix_ratings_player_id"), "ratings", ["player_id"])
    op.create_table(
        "rating_changes",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("player", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("season_id", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("mu_before", sa.Float(), nullable=False),
        sa.Column("sigma_before", sa.Float(), nullable=False),
        sa.Column("mu_after", sa.Float(), nullable=False),
        sa.Column("sigma_after", sa.Float(), nullable=False),
        sa.CheckConstraint("player BETWEEN 0 AND 3", name=op.f("ck_rating_changes_player")),
        sa.ForeignKeyConstraint(
            ["match_id"],
            ["matches.id"],
            name=op.f("fk_rating_changes_match_id_matches"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_rating_changes_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["season_id"], ["seasons.id"], name=op.f("fk_rating_changes_season_id_seasons")
        ),
        sa.PrimaryKeyConstraint("match_id", "player", name=op.f("pk_rating_changes")),
    )
    op.create_index(
        "ix_rating_changes_history", "rating_changes", ["player_id", "season_id", "match_id"]
    )
    with op.batch_alter_table("tables") as batch:
        batch.add_column(
            sa.Column("rated", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("matches") as batch:
        batch.add_column(
            sa.Column("rated", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("foursome", sa.String(length=96), nullable=True))
        batch.add_column(sa.Column("season_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("rating_seq", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            op.f("fk_matches_season_id_seasons"), "seasons", ["season_id"], ["id"]
        )
        batch.create_index("ix_matches_foursome", ["foursome", "started_at"])
    with op.batch_alter_table("match_players") as batch:
        batch.add_column(sa.Column("address", sa.String(length=64), nullable=True))
    if op.get_context().dialect.name == "postgresql":  # see models.Player
        op.create_index(
            "ix_players_username_prefix",
            "players",
            ["username_key"],
            postgresql_ops={"username_key": "varchar_pattern_ops"},
        )


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.drop_index("ix_players_username_prefix", table_name="players")
    with op.batch_alter_table("match_players") as batch:
        batch.drop_column("address")
    with op.batch_alter_table("matches") as batch:
        batch.drop_index("ix_matches_foursome")
        batch.drop_constraint(op.f("fk_matches_season_id_seasons"), type_="foreignkey")
        batch.drop_column("rating_seq")
        batch.drop_column("season_id")
        batch.drop_column("foursome")
        batch.drop_column("rated")
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("rated")
    op.drop_index("ix_rating_changes_history", table_name="rating_changes")
    op.drop_table("rating_changes")
    op.drop_index(op.f("ix_ratings_player_id"), table_name="ratings")
    op.drop_index("ix_ratings_season_board", table_name="ratings")
    op.drop_table("ratings")
    op.drop_table("seasons")

"""Tournaments: events, directors, players, check-ins, seatings, their tables,
substitutions and the corrections log (docs/tournaments.md).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

New tables only: nothing stored before this revision changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _utc(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _tournament_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["tournament_id"],
        ["tournaments.id"],
        name=op.f(f"fk_{table}_tournament_id_tournaments"),
        ondelete="CASCADE",
    )


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("rules", sa.String(length=32), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("registration_open", sa.Boolean(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("created_by", sa.String(length=32), nullable=False),
        _utc("created_at"),
        _utc("finished_at", nullable=True),
        sa.CheckConstraint(
            "state IN ('registering', 'running', 'finished')", name=op.f("ck_tournaments_state")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournaments")),
    )
    op.create_index(op.f("ix_tournaments_state"), "tournaments", ["state"])
    op.create_table(
        "tournament_roles",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("username_key", sa.String(length=32), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=True),
        sa.Column("role", sa.String(length=16), nullable=False),
        _utc("granted_at"),
        _tournament_fk("tournament_roles"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournament_roles")),
        sa.UniqueConstraint(
            "username_key",
            "tournament_id",
            "role",
            name=op.f("uq_tournament_roles_username_key_tournament_id_role"),
        ),
    )
    op.create_index(op.f("ix_tournament_roles_username_key"), "tournament_roles", ["username_key"])
    op.create_table(
        "tournament_players",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("username", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        _utc("registered_at"),
        _utc("withdrawn_at", nullable=True),
        _tournament_fk("tournament_players"),
        sa.PrimaryKeyConstraint("tournament_id", "username", name=op.f("pk_tournament_players")),
    )
    op.create_table(
        "tournament_checkins",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("session", sa.Integer(), nullable=False),
        sa.Column("username", sa.String(length=32), nullable=False),
        _utc("at"),
        _tournament_fk("tournament_checkins"),
        sa.PrimaryKeyConstraint(
            "tournament_id", "session", "username", name=op.f("pk_tournament_checkins")
        ),
    )
    op.create_table(
        "tournament_sessions",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("seating", sa.JSON(), nullable=False),
        _utc("seated_at"),
        _utc("started_at", nullable=True),
        _utc("ends_at", nullable=True),
        _utc("finished_at", nullable=True),
        sa.CheckConstraint(
            "state IN ('seated', 'playing', 'finished')",
            name=op.f("ck_tournament_sessions_state"),
        ),
        _tournament_fk("tournament_sessions"),
        sa.PrimaryKeyConstraint("tournament_id", "number", name=op.f("pk_tournament_sessions")),
    )
    op.create_table(
        "tournament_tables",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("session", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.String(length=32), nullable=False),
        _tournament_fk("tournament_tables"),
        sa.PrimaryKeyConstraint(
            "tournament_id", "session", "number", name=op.f("pk_tournament_tables")
        ),
        sa.UniqueConstraint("table_id", name=op.f("uq_tournament_tables_table_id")),
    )
    op.create_table(
        "tournament_substitutions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("session", sa.Integer(), nullable=False),
        sa.Column("player", sa.String(length=32), nullable=False),
        sa.Column("substitute", sa.String(length=48), nullable=False),
        sa.Column("by", sa.String(length=32), nullable=False),
        _utc("at"),
        _tournament_fk("tournament_substitutions"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournament_substitutions")),
    )
    op.create_index(
        op.f("ix_tournament_substitutions_tournament_id"),
        "tournament_substitutions",
        ["tournament_id"],
    )
    op.create_table(
        "tournament_log",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("player", sa.String(length=32), nullable=True),
        sa.Column("session", sa.Integer(), nullable=True),
        sa.Column("amount", sa.String(length=32), nullable=True),
        sa.Column("of", sa.Integer(), nullable=True),
        sa.Column("reason", sa.String(length=200), nullable=False),
        sa.Column("by", sa.String(length=32), nullable=False),
        _utc("at"),
        _tournament_fk("tournament_log"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournament_log")),
        sa.UniqueConstraint(
            "tournament_id", "seq", name=op.f("uq_tournament_log_tournament_id_seq")
        ),
    )


def downgrade() -> None:
    for table in (
        "tournament_log",
        "tournament_substitutions",
        "tournament_tables",
        "tournament_sessions",
        "tournament_checkins",
        "tournament_players",
        "tournament_roles",
    ):
        op.drop_table(table)
    op.drop_index(op.f("ix_tournaments_state"), table_name="tournaments")
    op.drop_table("tournaments")

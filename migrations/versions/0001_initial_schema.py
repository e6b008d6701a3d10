"""The initial schema: every table of bot/store/models.py as of the first release.

Written out in full (no imports from bot/): a revision is frozen history, while the models move on.

Revision ID: 0001
Revises:
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Our row ids: BIGINT on PostgreSQL, the INTEGER rowid on SQLite. Discord ids: plain BIGINT.
RowId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON(none_as_null=True)
Time = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "servers",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("settings", Json, nullable=False),
        sa.Column("created_at", Time, nullable=False),
        sa.Column("updated_at", Time, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_servers")),
    )
    op.create_table(
        "games",
        sa.Column("id", RowId, autoincrement=True, nullable=False),
        sa.Column("server_id", sa.BigInteger(), nullable=False),
        sa.Column("ruleset", sa.String(length=32), nullable=False),
        sa.Column("options", Json, nullable=False),
        sa.Column("channels", Json, nullable=False),
        sa.Column("schedule", Json, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("status_error", sa.Text(), nullable=True),
        sa.Column("commitment", sa.String(length=128), nullable=False),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        sa.Column("created_at", Time, nullable=False),
        sa.Column("updated_at", Time, nullable=False),
        sa.Column("finished_at", Time, nullable=True),
        sa.Column("scored_at", Time, nullable=True),
        sa.CheckConstraint(
            "status IN ('active', 'stopped_error', 'finished')", name=op.f("ck_games_status_known")
        ),
        sa.ForeignKeyConstraint(
            ["server_id"], ["servers.id"], name=op.f("fk_games_server_id_servers")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_games")),
        sqlite_autoincrement=True,
    )
    op.create_index(
        op.f("ix_games_server_id_status"), "games", ["server_id", "status"], unique=False
    )
    op.create_index(op.f("ix_games_status"), "games", ["status"], unique=False)

    op.create_table(
        "standings",
        sa.Column("server_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("season", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("points", sa.Integer(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("updated_at", Time, nullable=False),
        sa.ForeignKeyConstraint(
            ["server_id"], ["servers.id"], name=op.f("fk_standings_server_id_servers")
        ),
        sa.PrimaryKeyConstraint("server_id", "season", "user_id", name=op.f("pk_standings")),
    )
    op.create_table(
        "game_secrets",
        sa.Column("game_id", RowId, autoincrement=False, nullable=False),
        sa.Column("seed", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_game_secrets_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_game_secrets")),
    )
    op.create_table(
        "inputs",
        sa.Column("message_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("game_id", RowId, nullable=False),
        sa.Column("outcome", Json, nullable=True),
        sa.Column("first_seq", sa.Integer(), nullable=True),
        sa.Column("last_seq", sa.Integer(), nullable=True),
        sa.Column("received_at", Time, nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_inputs_game_id_games"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("message_id", name=op.f("pk_inputs")),
    )
    op.create_index(op.f("ix_inputs_game_id"), "inputs", ["game_id"], unique=False)

    op.create_table(
        "seats",
        sa.Column("game_id", RowId, nullable=False),
        sa.Column("seat", sa.SmallInteger(), autoincrement=False, nullable=False),
        sa.Column("term", sa.SmallInteger(), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=True),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("since_seq", sa.Integer(), nullable=False),
        sa.Column("since", Time, nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_seats_game_id_games"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("game_id", "seat", "term", name=op.f("pk_seats")),
    )
    op.create_index(op.f("ix_seats_user_id"), "seats", ["user_id"], unique=False)

    op.create_table(
        "snapshots",
        sa.Column("game_id", RowId, nullable=False),
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("version", sa.String(length=64), nullable=False),
        sa.Column("state", Json, nullable=False),
        sa.Column("created_at", Time, nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_snapshots_game_id_games"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("game_id", "seq", name=op.f("pk_snapshots")),
    )
    op.create_table(
        "events",
        sa.Column("game_id", RowId, nullable=False),
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("payload", Json, nullable=False),
        sa.Column("message_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", Time, nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_events_game_id_games"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["inputs.message_id"],
            name=op.f("fk_events_message_id_inputs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("game_id", "seq", name=op.f("pk_events")),
    )
    op.create_index(op.f("ix_events_message_id"), "events", ["message_id"], unique=False)

    op.create_table(
        "outbox",
        sa.Column("id", RowId, autoincrement=True, nullable=False),
        sa.Column("game_id", RowId, nullable=False),
        sa.Column("seq", sa.Integer(), nullable=True),
        sa.Column("message_id", sa.BigInteger(), nullable=True),
        sa.Column("payload", Json, nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", Time, nullable=False),
        sa.Column("done_at", Time, nullable=True),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_outbox_game_id_games"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["inputs.message_id"],
            name=op.f("fk_outbox_message_id_inputs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox")),
        sqlite_autoincrement=True,
    )
    op.create_index(
        op.f("ix_outbox_done_at_game_id"), "outbox", ["done_at", "game_id"], unique=False
    )
    op.create_index(op.f("ix_outbox_message_id"), "outbox", ["message_id"], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_index(op.f("ix_outbox_message_id"), table_name="outbox")
    op.drop_index(op.f("ix_outbox_done_at_game_id"), table_name="outbox")

    op.drop_table("outbox")
    op.drop_index(op.f("ix_events_message_id"), table_name="events")

    op.drop_table("events")
    op.drop_table("snapshots")
    op.drop_index(op.f("ix_seats_user_id"), table_name="seats")

    op.drop_table("seats")
    op.drop_index(op.f("ix_inputs_game_id"), table_name="inputs")

    op.drop_table("inputs")
    op.drop_table("game_secrets")
    op.drop_table("standings")
    op.drop_index(op.f("ix_games_status"), table_name="games")
    op.drop_index(op.f("ix_games_server_id_status"), table_name="games")

    op.drop_table("games")
    op.drop_table("servers")

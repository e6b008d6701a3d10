"""The outbox's index of undone effects: partial (``done_at IS NULL``).

Every outbox read asks for the undone effects (a game's, or all of them at a restart); the index
over (done_at, game_id) held every effect ever performed too, and a vote post's reply moved in it
twice: in at its NULL end when recorded, out to its dated end when marked done — two pages of the
index written per post, beside the row's own. The partial index, on the same columns (so SQLite's
planner takes it for the same reads), holds only the undone ones: a reply is written into one page
and taken out of the same. Measured with C ``sqlite3`` writing the bot's rows: WAL frames per post
12.7–13.3 → 11.5–11.9 one post per commit, 1.9–3.9 → 1.1–2.6 a hundred posts per commit
(docs/performance.md, tenth pass).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UNDONE = sa.text("done_at IS NULL")


def upgrade() -> None:
    """The partial index first, so no read is left without one meanwhile."""
    op.create_index(
        "ix_outbox_undone",
        "outbox",
        ["done_at", "game_id"],
        sqlite_where=UNDONE,
        postgresql_where=UNDONE,
    )
    op.drop_index("ix_outbox_done_at_game_id", table_name="outbox")


def downgrade() -> None:
    """The index over (done_at, game_id) back."""
    op.create_index("ix_outbox_done_at_game_id", "outbox", ["done_at", "game_id"])
    op.drop_index("ix_outbox_undone", table_name="outbox")

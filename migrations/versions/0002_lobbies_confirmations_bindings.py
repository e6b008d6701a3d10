"""Sign-ups, role confirmations and channel bindings as rows (issue 12).

No more read-modify-write of a JSON value (the ``lobby:<channel>`` server settings, the
``confirmed`` list of a game's channels), and one holder per channel enforced by a primary key.

The data of existing open sign-ups, confirmations and active games' channels is moved over.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RowId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON(none_as_null=True)
Time = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Upgrade schema, then move the JSON-held data into the new tables."""
    op.create_table(
        "lobbies",
        sa.Column("id", RowId, autoincrement=True, nullable=False),
        sa.Column("server_id", sa.BigInteger(), nullable=False),
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("vote_channel_id", sa.BigInteger(), nullable=False),
        sa.Column("min_players", sa.SmallInteger(), nullable=False),
        sa.Column("max_players", sa.SmallInteger(), nullable=False),
        sa.Column("settings", Json, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("game_id", RowId, nullable=True),
        sa.Column("created_at", Time, nullable=False),
        sa.Column("updated_at", Time, nullable=False),
        sa.CheckConstraint(
            "status IN ('open', 'started', 'cancelled')", name=op.f("ck_lobbies_status_known")
        ),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f("fk_lobbies_game_id_games")),
        sa.ForeignKeyConstraint(
            ["server_id"], ["servers.id"], name=op.f("fk_lobbies_server_id_servers")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lobbies")),
        sqlite_autoincrement=True,
    )
    op.create_index(
        op.f("ix_lobbies_channel_id_status"), "lobbies", ["channel_id", "status"], unique=False
    )
    op.create_table(
        "lobby_players",
        sa.Column("lobby_id", RowId, nullable=False),
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("joined_at", Time, nullable=False),
        sa.ForeignKeyConstraint(
            ["lobby_id"],
            ["lobbies.id"],
            name=op.f("fk_lobby_players_lobby_id_lobbies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("lobby_id", "user_id", name=op.f("pk_lobby_players")),
        sa.UniqueConstraint(
            "lobby_id", "position", name=op.f("uq_lobby_players_lobby_id_position")
        ),
    )
    op.create_table(
        "confirmations",
        sa.Column("game_id", RowId, nullable=False),
        sa.Column("seat", sa.SmallInteger(), autoincrement=False, nullable=False),
        sa.Column("term", sa.SmallInteger(), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("confirmed_at", Time, nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_confirmations_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("game_id", "seat", "term", name=op.f("pk_confirmations")),
    )
    op.create_table(
        "channel_bindings",
        sa.Column("channel_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("server_id", sa.BigInteger(), nullable=False),
        sa.Column("lobby_id", RowId, nullable=True),
        sa.Column("game_id", RowId, nullable=True),
        sa.Column("created_at", Time, nullable=False),
        sa.CheckConstraint(
            "lobby_id IS NOT NULL OR game_id IS NOT NULL",
            name=op.f("ck_channel_bindings_held_by_something"),
        ),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_channel_bindings_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["lobby_id"],
            ["lobbies.id"],
            name=op.f("fk_channel_bindings_lobby_id_lobbies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("channel_id", name=op.f("pk_channel_bindings")),
    )
    op.create_index(
        op.f("ix_channel_bindings_game_id"), "channel_bindings", ["game_id"], unique=False
    )
    op.create_index(
        op.f("ix_channel_bindings_lobby_id"), "channel_bindings", ["lobby_id"], unique=False
    )
    _move_data()


def _move_data() -> None:
    """Active games' channels, open sign-ups and confirmations, from JSON into rows."""
    conn = op.get_bind()
    now = datetime.now(UTC)
    meta = sa.MetaData()
    servers = sa.Table("servers", meta, sa.Column("id", sa.BigInteger), sa.Column("settings", Json))
    games = sa.Table(
        "games",
        meta,
        sa.Column("id", RowId),
        sa.Column("server_id", sa.BigInteger),
        sa.Column("channels", Json),
        sa.Column("status", sa.String),
    )
    seats = sa.Table(
        "seats",
        meta,
        sa.Column("game_id", RowId),
        sa.Column("seat", sa.SmallInteger),
        sa.Column("term", sa.SmallInteger),
        sa.Column("user_id", sa.BigInteger),
    )
    new = sa.MetaData()
    lobbies = sa.Table("lobbies", new, autoload_with=conn)
    players = sa.Table("lobby_players", new, autoload_with=conn)
    confirmations = sa.Table("confirmations", new, autoload_with=conn)
    bindings = sa.Table("channel_bindings", new, autoload_with=conn)
    held: dict[int, dict[str, Any]] = {}
    active = conn.execute(
        sa.select(games.c.id, games.c.server_id, games.c.channels)
        .where(games.c.status == "active")
        .order_by(games.c.id)
    ).all()
    for game_id, server_id, channels in active:
        for key in ("game", "vote"):
            if isinstance(channels, dict) and str(channels.get(key, "")).isdigit():
                held[int(channels[key])] = {  # the newest game wins, as the routing did
                    "channel_id": int(channels[key]), "server_id": server_id,
                    "lobby_id": None, "game_id": game_id, "created_at": now,
                }  # fmt: skip
        confirmed = channels.get("confirmed", []) if isinstance(channels, dict) else []
        for seat in {int(s) for s in confirmed if str(s).isdigit()}:
            holder = conn.execute(
                sa.select(seats.c.term, seats.c.user_id)
                .where(seats.c.game_id == game_id, seats.c.seat == seat)
                .order_by(seats.c.term.desc())
                .limit(1)
            ).first()
            if holder is not None and holder[1] is not None:
                conn.execute(
                    confirmations.insert().values(
                        game_id=game_id, seat=seat, term=holder[0], user_id=holder[1],
                        confirmed_at=now,
                    )
                )  # fmt: skip
    for server_id, settings in conn.execute(sa.select(servers.c.id, servers.c.settings)).all():
        for key, lobby in (settings or {}).items():
            if not key.startswith("lobby:") or not isinstance(lobby, dict):
                continue
            channel_id = int(key.removeprefix("lobby:"))
            vote_id = int(lobby.get("vote", channel_id))
            if channel_id in held or vote_id in held:
                continue  # a sign-up naming a running game's channel: dropped
            kept = {k: v for k, v in lobby.items() if k not in ("players", "min", "max", "vote")}
            lobby_id = conn.execute(
                lobbies.insert()
                .values(
                    server_id=server_id, channel_id=channel_id, vote_channel_id=vote_id,
                    min_players=int(lobby["min"]), max_players=int(lobby["max"]), settings=kept,
                    status="open", game_id=None, created_at=now, updated_at=now,
                )
                .returning(lobbies.c.id)
            ).scalar_one()  # fmt: skip
            for position, (user_id, name) in enumerate(lobby.get("players", []), 1):
                conn.execute(
                    players.insert().values(
                        lobby_id=lobby_id, user_id=int(user_id), position=position,
                        name=str(name)[:100], joined_at=now,
                    )
                )  # fmt: skip
            for cid in {channel_id, vote_id}:
                held[cid] = {"channel_id": cid, "server_id": server_id, "lobby_id": lobby_id,
                             "game_id": None, "created_at": now}  # fmt: skip
        left = {k: v for k, v in (settings or {}).items() if not k.startswith("lobby:")}
        if left != (settings or {}):
            conn.execute(servers.update().where(servers.c.id == server_id).values(settings=left))
    if held:
        conn.execute(bindings.insert(), list(held.values()))


def downgrade() -> None:
    """Downgrade schema (open sign-ups and confirmations are dropped with their tables)."""
    op.drop_index(op.f("ix_channel_bindings_lobby_id"), table_name="channel_bindings")
    op.drop_index(op.f("ix_channel_bindings_game_id"), table_name="channel_bindings")
    op.drop_table("channel_bindings")
    op.drop_table("confirmations")
    op.drop_table("lobby_players")
    op.drop_index(op.f("ix_lobbies_channel_id_status"), table_name="lobbies")
    op.drop_table("lobbies")

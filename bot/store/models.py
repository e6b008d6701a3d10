"""The schema as typed SQLAlchemy models; migrations/ must match it (a test runs ``alembic check``).

Payloads (events, effects, outcomes, snapshots, settings) are opaque JSON: the store never reads
inside them, so the engine can change its event shapes without a migration here.

Discord ids (snowflakes) are BIGINT columns without sequences (``autoincrement=False``); our own
row ids are BIGINT on PostgreSQL and INTEGER (the rowid) on SQLite, the only way SQLite
autoincrements.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from bot.store.db import UTCDateTime

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

RowId = BigInteger().with_variant(Integer(), "sqlite")
Json = JSON(none_as_null=True)


class GameStatus(enum.StrEnum):
    """Where a game stands for the shell: only ``active`` games take input and are recovered."""

    ACTIVE = "active"
    STOPPED_ERROR = "stopped_error"
    FINISHED = "finished"


class Base(DeclarativeBase):
    """Declarative base with a naming convention, so constraint names match on every backend."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {  # noqa: RUF012 (SQLAlchemy reads this class attribute)
        datetime: UTCDateTime(),
        dict[str, Any]: Json,
    }


class Server(Base):
    """A Discord guild and its settings (channels, roles, season, locale, …) as a JSON object."""

    __tablename__ = "servers"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    settings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class Game(Base):
    """One game: its setup, where it is played, its status. The seed is in ``GameSecret``."""

    __tablename__ = "games"
    __table_args__ = (
        CheckConstraint("status IN ('active', 'stopped_error', 'finished')", name="status_known"),
        Index(None, "server_id", "status"),
        Index(None, "status"),
        # AUTOINCREMENT: SQLite must never reuse an id (only id order is exposed).
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    server_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("servers.id"))
    ruleset: Mapped[str] = mapped_column(String(32))
    options: Mapped[dict[str, Any]] = mapped_column(default=dict)
    channels: Mapped[dict[str, Any]] = mapped_column(default=dict)
    schedule: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(16), default=GameStatus.ACTIVE.value)
    status_error: Mapped[str | None] = mapped_column(Text)
    commitment: Mapped[str] = mapped_column(String(128))
    last_seq: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    scored_at: Mapped[datetime | None]


class GameSecret(Base):
    """The game's secret seed, apart from everything the shell shows; read it only at the end."""

    __tablename__ = "game_secrets"

    game_id: Mapped[int] = mapped_column(
        RowId, ForeignKey("games.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    seed: Mapped[str] = mapped_column(Text)

    def __repr__(self) -> str:  # never let a log line or traceback show the seed
        return f"GameSecret(game_id={self.game_id!r}, seed=<hidden>)"


class Seat(Base):
    """Who holds a seat from when: term 0 is the original player, each substitute the next term."""

    __tablename__ = "seats"
    __table_args__ = (Index(None, "user_id"),)

    game_id: Mapped[int] = mapped_column(
        RowId, ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(SmallInteger, primary_key=True, autoincrement=False)
    term: Mapped[int] = mapped_column(SmallInteger, primary_key=True, autoincrement=False)
    user_id: Mapped[int | None] = mapped_column(BigInteger)
    name: Mapped[str] = mapped_column(String(100))
    since_seq: Mapped[int] = mapped_column(Integer)
    since: Mapped[datetime]


class Input(Base):
    """An accepted Discord input (message or interaction id) and the outcome it got.

    The unique key that makes a redelivered Discord event a no-op; its events and outbox rows
    carry the same ``message_id``.
    """

    __tablename__ = "inputs"
    __table_args__ = (Index(None, "game_id"),)

    message_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    game_id: Mapped[int] = mapped_column(RowId, ForeignKey("games.id", ondelete="CASCADE"))
    outcome: Mapped[dict[str, Any] | None]
    first_seq: Mapped[int | None] = mapped_column(Integer)
    last_seq: Mapped[int | None] = mapped_column(Integer)
    received_at: Mapped[datetime]


class Event(Base):
    """One event of a game: append-only, ``seq`` = 1, 2, 3, … within the game."""

    __tablename__ = "events"
    __table_args__ = (Index(None, "message_id"),)

    game_id: Mapped[int] = mapped_column(
        RowId, ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    type: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]]
    message_id: Mapped[int | None] = mapped_column(
        BigInteger, ForeignKey("inputs.message_id", ondelete="CASCADE")
    )
    created_at: Mapped[datetime]


class Outbox(Base):
    """An effect to perform, written with the events that caused it; ``done_at`` once performed."""

    __tablename__ = "outbox"
    __table_args__ = (
        # The undone effects only: what every outbox read asks for (``done_at IS NULL``, a
        # game's or all). A row leaves it when marked done, so a vote post's reply is written
        # into one page of it and taken out of the same, where an index of every row moved it
        # to a second page (migration 0003). ``done_at`` stays its first column: SQLite's
        # planner then takes it for the read of all games (by ``game_id`` alone it scanned the
        # table, to save the sort by id).
        Index(
            "ix_outbox_undone",
            "done_at",
            "game_id",
            sqlite_where=text("done_at IS NULL"),
            postgresql_where=text("done_at IS NULL"),
        ),
        Index(None, "message_id"),
        # AUTOINCREMENT: a reused id would reuse an idempotency key and the effect be skipped.
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    game_id: Mapped[int] = mapped_column(RowId, ForeignKey("games.id", ondelete="CASCADE"))
    seq: Mapped[int | None] = mapped_column(Integer)
    message_id: Mapped[int | None] = mapped_column(
        BigInteger, ForeignKey("inputs.message_id", ondelete="CASCADE")
    )
    payload: Mapped[dict[str, Any]]
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]
    done_at: Mapped[datetime | None]


class Snapshot(Base):
    """A serialized state covering events 1..seq, to skip replaying them; events stay the truth."""

    __tablename__ = "snapshots"

    game_id: Mapped[int] = mapped_column(
        RowId, ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    version: Mapped[str] = mapped_column(String(64))
    state: Mapped[dict[str, Any]]
    created_at: Mapped[datetime]


class Standing(Base):
    """A player's season total on one server."""

    __tablename__ = "standings"

    server_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.id"), primary_key=True, autoincrement=False
    )
    season: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    points: Mapped[int] = mapped_column(Integer, default=0)
    games: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime]


class LobbyStatus(enum.StrEnum):
    """A sign-up's life: ``open`` takes joins; ``started`` once dealt (exactly once); or
    ``cancelled`` (replaced by a new ``/game new`` in its channel)."""

    OPEN = "open"
    STARTED = "started"
    CANCELLED = "cancelled"


class Lobby(Base):
    """One sign-up for a game in a channel. Join, leave and start each take this row's lock
    first (a conditional UPDATE on ``status = 'open'``), so they happen one at a time."""

    __tablename__ = "lobbies"
    __table_args__ = (
        CheckConstraint("status IN ('open', 'started', 'cancelled')", name="status_known"),
        Index(None, "channel_id", "status"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    server_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("servers.id"))
    channel_id: Mapped[int] = mapped_column(BigInteger)
    vote_channel_id: Mapped[int] = mapped_column(BigInteger)
    min_players: Mapped[int] = mapped_column(SmallInteger)
    max_players: Mapped[int] = mapped_column(SmallInteger)
    settings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(16), default=LobbyStatus.OPEN.value)
    game_id: Mapped[int | None] = mapped_column(RowId, ForeignKey("games.id"))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class LobbyPlayer(Base):
    """One sign-up: one per (lobby, user) (the primary key); ``position`` orders the seats (join
    order, unique in the lobby)."""

    __tablename__ = "lobby_players"
    __table_args__ = (UniqueConstraint("lobby_id", "position"),)

    lobby_id: Mapped[int] = mapped_column(
        RowId, ForeignKey("lobbies.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    position: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(100))
    joined_at: Mapped[datetime]


class Confirmation(Base):
    """A seat holder has confirmed their role: per term, so a substitute must confirm again."""

    __tablename__ = "confirmations"

    game_id: Mapped[int] = mapped_column(
        RowId, ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(SmallInteger, primary_key=True, autoincrement=False)
    term: Mapped[int] = mapped_column(SmallInteger, primary_key=True, autoincrement=False)
    user_id: Mapped[int] = mapped_column(BigInteger)
    confirmed_at: Mapped[datetime]


class ChannelBinding(Base):
    """A channel held by an open sign-up or a game in play: one holder per channel (the primary
    key). Written when a sign-up opens, moved to its game when it starts, deleted when the
    sign-up is cancelled or the game finishes or is stopped (taken back if it is resumed)."""

    __tablename__ = "channel_bindings"
    __table_args__ = (
        CheckConstraint("lobby_id IS NOT NULL OR game_id IS NOT NULL", name="held_by_something"),
        Index(None, "lobby_id"),
        Index(None, "game_id"),
    )

    channel_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    server_id: Mapped[int] = mapped_column(BigInteger)
    lobby_id: Mapped[int | None] = mapped_column(
        RowId, ForeignKey("lobbies.id", ondelete="CASCADE")
    )
    game_id: Mapped[int | None] = mapped_column(RowId, ForeignKey("games.id", ondelete="CASCADE"))
    created_at: Mapped[datetime]

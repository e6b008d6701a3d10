"""Durable storage: the event log, the outbox, migrations; SQLite by default, PostgreSQL by URL.

Use ``open_database(url)`` for engine + sessions, ``await upgrade(url)`` before first use,
``Repository(db.sessions)`` for everything else, and ``recover``/``deliver`` for effects.
"""

from bot.store.db import DEFAULT_URL, URL_ENV, Database, UTCDateTime, open_database, resolve_url
from bot.store.errors import (
    ChannelHeld,
    CorruptLog,
    GameNotActive,
    GameNotFound,
    LobbyRefused,
    SeedSealed,
    SeqConflict,
    StoreError,
)
from bot.store.lobbies import Lobbies
from bot.store.migrate import main_db_upgrade, upgrade
from bot.store.models import GameStatus, LobbyStatus
from bot.store.recovery import (
    Delivery,
    Perform,
    RecoveryReport,
    attempt_failed,
    deliver,
    rebuild,
    rebuild_games,
    recover,
)
from bot.store.repository import Repository
from bot.store.values import (
    Fold,
    GameDraft,
    GameInfo,
    Joined,
    Loaded,
    LobbyEntry,
    LobbyInfo,
    OutboxItem,
    RecordResult,
    SeatSpec,
    SeatTerm,
    Shards,
    SnapshotCodec,
    StandingRow,
    StoredEvent,
)

__all__ = [
    "DEFAULT_URL",
    "URL_ENV",
    "ChannelHeld",
    "CorruptLog",
    "Database",
    "Delivery",
    "Fold",
    "GameDraft",
    "GameInfo",
    "GameNotActive",
    "GameNotFound",
    "GameStatus",
    "Joined",
    "Loaded",
    "Lobbies",
    "LobbyEntry",
    "LobbyInfo",
    "LobbyRefused",
    "LobbyStatus",
    "OutboxItem",
    "Perform",
    "RecordResult",
    "RecoveryReport",
    "Repository",
    "SeatSpec",
    "SeatTerm",
    "SeedSealed",
    "SeqConflict",
    "Shards",
    "SnapshotCodec",
    "StandingRow",
    "StoreError",
    "StoredEvent",
    "UTCDateTime",
    "attempt_failed",
    "deliver",
    "main_db_upgrade",
    "open_database",
    "rebuild",
    "rebuild_games",
    "recover",
    "resolve_url",
    "upgrade",
]

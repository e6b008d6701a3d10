"""Durable storage: the event log, the outbox, migrations; SQLite by default, PostgreSQL by URL.

Use ``open_database(url)`` for engine + sessions, ``await upgrade(url)`` before first use,
``Repository(db.sessions)`` for everything else, and ``recover``/``deliver`` for effects.
"""

from bot.store.db import DEFAULT_URL, URL_ENV, Database, UTCDateTime, open_database, resolve_url
from bot.store.errors import (
    CorruptLog,
    GameNotActive,
    GameNotFound,
    SeedSealed,
    SeqConflict,
    StoreError,
)
from bot.store.migrate import main_db_upgrade, upgrade
from bot.store.models import GameStatus
from bot.store.recovery import Delivery, Perform, RecoveryReport, deliver, rebuild, recover
from bot.store.repository import Repository
from bot.store.values import (
    Fold,
    GameInfo,
    Loaded,
    OutboxItem,
    RecordResult,
    SeatSpec,
    SeatTerm,
    SnapshotCodec,
    StandingRow,
    StoredEvent,
)

__all__ = [
    "DEFAULT_URL",
    "URL_ENV",
    "CorruptLog",
    "Database",
    "Delivery",
    "Fold",
    "GameInfo",
    "GameNotActive",
    "GameNotFound",
    "GameStatus",
    "Loaded",
    "OutboxItem",
    "Perform",
    "RecordResult",
    "RecoveryReport",
    "Repository",
    "SeatSpec",
    "SeatTerm",
    "SeedSealed",
    "SeqConflict",
    "SnapshotCodec",
    "StandingRow",
    "StoreError",
    "StoredEvent",
    "UTCDateTime",
    "deliver",
    "main_db_upgrade",
    "open_database",
    "rebuild",
    "recover",
    "resolve_url",
    "upgrade",
]

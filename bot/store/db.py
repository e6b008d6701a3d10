"""Engines and sessions from a URL, the same way for SQLite and PostgreSQL.

Theory of operation: the rest of the store never looks at the backend. Everything that differs
lives here: SQLite gets WAL, ``synchronous=FULL`` (a commit survives power loss, so an accepted
input is durable before its effects are performed), foreign keys, a busy timeout, and real
transactions (the sqlite3 driver's legacy mode would not BEGIN before a SELECT or DDL, so we
disable it and emit BEGIN ourselves). Write transactions in the repository begin with
``BEGIN IMMEDIATE`` (``WRITE_NOW``), so on SQLite they take the write lock at once and never fail
on a stale read snapshot, whatever statement comes first.
Datetimes are stored as UTC and come back UTC-aware on both backends (``UTCDateTime``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

from sqlalchemy import DateTime, Dialect, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.pool import ConnectionPoolEntry
from sqlalchemy.types import TypeDecorator

DEFAULT_URL = "sqlite+aiosqlite:///./faguan.db"
"""The default database: a file beside the working directory."""

URL_ENV = "FAGUAN_DATABASE_URL"
"""Environment variable naming the database when nothing else does (Alembic command line too)."""

SQLITE_BUSY_TIMEOUT_MS = 10_000

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The default clock of the store (tests inject their own)."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp stored in UTC and always returned UTC-aware, whatever the backend.

    Naive datetimes are refused on the way in: guessing their zone is how records drift.
    SQLite keeps no zone, so values are stored as naive UTC and UTC is re-attached on the way out.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r}: store only timezone-aware datetimes")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def normalize_url(url: str | URL) -> URL:
    """Parse a URL and give plain driver names their async driver (``sqlite:`` → aiosqlite)."""
    u = make_url(url)
    if u.drivername in ("sqlite", "sqlite+pysqlite"):
        u = u.set(drivername="sqlite+aiosqlite")
    elif u.drivername in ("postgresql", "postgres", "postgresql+psycopg2", "postgresql+psycopg"):
        u = u.set(drivername="postgresql+asyncpg")
    return u


def resolve_url(url: str | URL | None = None) -> URL:
    """The URL to use: the one given, else ``$FAGUAN_DATABASE_URL``, else ./faguan.db."""
    return normalize_url(url if url is not None else os.environ.get(URL_ENV) or DEFAULT_URL)


# One serializer for both backends: no NaN (PostgreSQL's json refuses it), Chinese kept readable.
_json_dumps = partial(json.dumps, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
json_dumps = _json_dumps
"""The store's JSON serializer, for writes that bypass SQLAlchemy (``bot.store.sqlite_group``)."""


def _on_sqlite_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
    # Disable the driver's own (legacy) BEGIN handling; _on_sqlite_begin emits BEGIN instead.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    finally:
        cursor.close()


LAZY_COMMIT = "faguan_lazy_commit"
"""Execution option: this transaction's commit may return before it is on disk (SQLite:
``synchronous=NORMAL`` for it, so a crash of the process loses nothing but a power cut may)."""


WRITE_NOW = "faguan_write_now"
"""Execution option: this transaction writes; on SQLite it takes the write lock at BEGIN."""


def _on_sqlite_begin(conn: Any) -> None:
    # The sync level cannot change inside a transaction: set it before BEGIN, when it changes.
    options = conn.get_execution_options()
    level = "NORMAL" if options.get(LAZY_COMMIT) else "FULL"
    info = conn.connection.info
    if info.get("synchronous", "FULL") != level:
        conn.exec_driver_sql(f"PRAGMA synchronous={level}")
        info["synchronous"] = level
    conn.exec_driver_sql("BEGIN IMMEDIATE" if options.get(WRITE_NOW) else "BEGIN")


def create_engine(url: str | URL | None = None, **kwargs: Any) -> AsyncEngine:
    """An async engine for ``url`` (see ``resolve_url``), with the SQLite settings applied."""
    u = resolve_url(url)
    kwargs.setdefault("json_serializer", _json_dumps)
    if u.get_backend_name() == "postgresql":
        # A restarted server leaves dead pooled connections: test each before use.
        kwargs.setdefault("pool_pre_ping", True)
    engine = create_async_engine(u, **kwargs)
    if u.get_backend_name() == "sqlite":
        event.listen(engine.sync_engine, "connect", _on_sqlite_connect)
        event.listen(engine.sync_engine, "begin", _on_sqlite_begin)
    return engine


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions whose objects stay readable after commit (the repository returns plain values)."""
    return async_sessionmaker(engine, expire_on_commit=False)


@dataclass(frozen=True)
class Database:
    """An engine and its session factory; ``await db.dispose()`` at shutdown."""

    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]

    async def dispose(self) -> None:
        """Close every pooled connection."""
        await self.engine.dispose()


def open_database(url: str | URL | None = None, **kwargs: Any) -> Database:
    """Engine plus session factory for ``url``; no I/O until first use."""
    engine = create_engine(url, **kwargs)
    return Database(engine=engine, sessions=session_factory(engine))

"""Engines and sessions from a URL, the same way for SQLite and PostgreSQL.

Theory of operation: the rest of the store never looks at the backend. Everything that differs
lives here: SQLite gets WAL, ``synchronous=FULL`` (a commit survives power loss, so an accepted
input is durable before its effects are performed), foreign keys, a busy timeout, and real
transactions (the sqlite3 driver's legacy mode would not BEGIN before a SELECT or DDL, so we
disable it and emit BEGIN ourselves). Write transactions in the repository begin with
``BEGIN IMMEDIATE`` (``WRITE_NOW``), so on SQLite they take the write lock at once and never fail
on a stale read snapshot, whatever statement comes first.
Datetimes are stored as UTC and come back UTC-aware on both backends (``UTCDateTime``).

The pool is tuned for many short transactions: a SQLite connection is rolled back on its return
only if a transaction is open (otherwise it would cost a round trip to aiosqlite's thread for
nothing), and a PostgreSQL connection is tested before use only if it idled ``PING_IDLE_SECONDS``
(a test is three round trips; SQLAlchemy's ``pool_pre_ping`` tests every check-out).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Dialect, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.pool import ConnectionPoolEntry, PoolResetState
from sqlalchemy.types import TypeDecorator

from bot.store.sqlite_group import configure, json_dumps

DEFAULT_URL = "sqlite+aiosqlite:///./faguan.db"
"""The default database: a file beside the working directory."""

URL_ENV = "FAGUAN_DATABASE_URL"
"""Environment variable naming the database for a caller that gives no URL (``resolve_url(None)``):
Alembic's own command line (alembic.ini, migrations/env.py). The faguan commands never rely on
it: they always give a URL (``--database-url``, else ``database.url`` of the config file, whose
default is ./faguan.db), as README.md and docs/deploy.md say."""

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
    """The URL to use: the one given, else ``$FAGUAN_DATABASE_URL``, else ./faguan.db (the
    faguan commands always give one: see ``URL_ENV``)."""
    return normalize_url(url if url is not None else os.environ.get(URL_ENV) or DEFAULT_URL)


def in_memory(url: URL) -> bool:
    """Whether ``url`` names an in-memory SQLite database (each connection has its own)."""
    database = url.database or ""
    memory = not database or database == ":memory:" or database.startswith("file::memory:")
    return memory or url.query.get("mode") == "memory"


def _on_sqlite_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
    configure_sqlite(dbapi_connection)


def configure_sqlite(dbapi_connection: Any) -> None:
    """Our settings on a new pooled SQLite connection (``sqlite_group.configure``, the writer
    process's too); _on_sqlite_begin emits BEGIN."""
    configure(dbapi_connection, SQLITE_BUSY_TIMEOUT_MS)


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


def _on_sqlite_reset(
    dbapi_connection: Any, _record: ConnectionPoolEntry, state: PoolResetState
) -> None:
    # A connection back in the pool is rolled back only if a transaction is open: BEGIN is ours
    # (see _on_sqlite_connect), so sqlite3's ``in_transaction`` is exact, and rolling back
    # outside a transaction does nothing in SQLite but cost a round trip to aiosqlite's thread
    # (a one-call group write returns its connection that way, once per group).
    if not state.asyncio_safe or state.transaction_was_reset:
        return  # garbage-collected (nothing may be awaited) / SQLAlchemy rolled back already
    try:
        open_transaction = bool(dbapi_connection.driver_connection.in_transaction)
    except ValueError:  # aiosqlite's connection is closed: nothing to roll back
        return
    if open_transaction:
        dbapi_connection.rollback()


PING_IDLE_SECONDS = 1.0
"""A PostgreSQL connection idle in the pool this long is tested before use (a restarted server
leaves dead ones). One used less than this ago is not: testing costs three round trips (BEGIN,
an empty query, ROLLBACK), more than a group commit's own one."""


_IDLE_SINCE = "faguan_idle_since"


def _on_pg_idle(_dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
    # opened or checked in: idle from now
    record.info[_IDLE_SINCE] = time.monotonic()


def _on_pg_checkout(dbapi_connection: Any, record: ConnectionPoolEntry, _proxy: Any) -> None:
    since = record.info.get(_IDLE_SINCE)
    if since is not None and time.monotonic() - since < PING_IDLE_SECONDS:
        return
    try:
        dbapi_connection.ping()
    except Exception as exc:  # the pool replaces it with a new connection
        raise DisconnectionError(f"idle connection failed its test ({type(exc).__name__})") from exc


def create_engine(url: str | URL | None = None, **kwargs: Any) -> AsyncEngine:
    """An async engine for ``url`` (see ``resolve_url``), with the SQLite settings applied."""
    u = resolve_url(url)
    kwargs.setdefault("json_serializer", json_dumps)
    if u.get_backend_name() == "sqlite":
        kwargs.setdefault("pool_reset_on_return", None)  # _on_sqlite_reset does it
    engine = create_async_engine(u, **kwargs)
    if u.get_backend_name() == "postgresql" and not kwargs.get("pool_pre_ping"):
        # A restarted server leaves dead pooled connections: test those idle a while.
        event.listen(engine.sync_engine, "connect", _on_pg_idle)
        event.listen(engine.sync_engine, "checkin", _on_pg_idle)
        event.listen(engine.sync_engine, "checkout", _on_pg_checkout)
    if u.get_backend_name() == "sqlite":
        event.listen(engine.sync_engine, "connect", _on_sqlite_connect)
        event.listen(engine.sync_engine, "begin", _on_sqlite_begin)
        event.listen(engine.sync_engine, "reset", _on_sqlite_reset)
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

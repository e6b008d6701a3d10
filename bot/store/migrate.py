"""Schema migrations, run from code: at bot start, by ``faguan db upgrade``, and in tests.

The Alembic config is built here, pointing at the project's migrations/ by path, so nothing
depends on the working directory or on alembic.ini (which is only for running alembic by hand).
"""

from __future__ import annotations

import argparse
import asyncio
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import aiosqlite
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy.engine import URL, Connection
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import NullPool

from bot.store.db import create_engine, resolve_url

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"
MIGRATING_KEY = 0x46A60003
"""Advisory lock held while migrating PostgreSQL: shard processes started together on a new
database migrate one after the other (the later ones find it up to date), not at once."""


def alembic_config() -> Config:
    """An Alembic config for migrations/, with no ini file and no logging set-up of its own."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["configure_logger"] = False
    return config


WORKER_STOP_SECONDS = 10.0
"""How long a SQLite connection that could not open waits for aiosqlite's thread to stop."""


def _engine(url: str | URL | None) -> AsyncEngine:
    """An engine for a migration's one connection; on SQLite, one whose failure to open is
    raised only once aiosqlite's thread has stopped (`_open_sqlite`)."""
    resolved = resolve_url(url)
    if resolved.get_driver_name() != "aiosqlite":
        return create_engine(resolved, poolclass=NullPool)
    # SQLAlchemy's aiosqlite adapter calls this instead of aiosqlite.connect, with the same
    # arguments (the URL's), and awaits what it returns
    opened = {"async_creator_fn": _open_sqlite}
    return create_engine(resolved, poolclass=NullPool, connect_args=opened)


async def _open_sqlite(*args: Any, **kwargs: Any) -> aiosqlite.Connection:
    """`aiosqlite.connect`, except that a file it cannot open (its folder missing, not a file)
    is raised only once the connection's thread has stopped.

    aiosqlite raises that failure at once and only queues the stop of its thread, which then
    posts the stop's result to the event loop. `faguan db upgrade` (and `faguan run`) end right
    after the failure: when `asyncio.run` had closed the loop before the thread got to post
    (about one run in ten where it was seen), the thread died printing a traceback
    ("RuntimeError: Event loop is closed") after the command's one-line message. Waiting here
    for the thread keeps the loop open until it has posted; the engine's dispose has nothing to
    do with it (no connection was made, so the pool holds none to close)."""
    connection = aiosqlite.connect(*args, **kwargs)
    # aiosqlite 0.22 keeps its thread in `_thread` (SQLAlchemy's own connect reaches for it
    # there too); before, the connection was the thread
    thread = connection if isinstance(connection, threading.Thread) else None
    thread = thread or getattr(connection, "_thread", None)
    if isinstance(thread, threading.Thread):
        thread.daemon = True  # as SQLAlchemy makes it: a stuck thread never holds the exit
    try:
        return await connection
    except BaseException:
        if isinstance(thread, threading.Thread) and thread.is_alive():
            await asyncio.to_thread(thread.join, WORKER_STOP_SECONDS)
        raise


async def _run(url: str | URL | None, action: Callable[[Config], None]) -> None:
    engine = _engine(url)

    def with_connection(connection: Connection) -> None:
        if connection.dialect.name == "postgresql":  # released when the transaction ends
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATING_KEY})")
        config = alembic_config()
        config.attributes["connection"] = connection
        action(config)

    try:
        async with engine.begin() as connection:  # one transaction: all revisions or none
            await connection.run_sync(with_connection)
    finally:
        await engine.dispose()


class SchemaTooNew(Exception):
    """The database is at a schema revision this version does not have: a newer faguan wrote it."""

    def __init__(self, revisions: Sequence[str]) -> None:
        self.revisions = tuple(revisions)
        super().__init__(f"unknown schema revision {', '.join(self.revisions)}")


def _refuse_unknown_revisions(config: Config) -> None:
    """Raise SchemaTooNew before Alembic tries (and fails at length) to upgrade from it."""
    heads = MigrationContext.configure(config.attributes["connection"]).get_current_heads()
    script = ScriptDirectory.from_config(config)
    unknown = [revision for revision in heads if not _known(script, revision)]
    if unknown:
        raise SchemaTooNew(unknown)


def is_known_revision(revision: str) -> bool:
    """Whether `revision` is one of migrations/ (else a newer faguan wrote it)."""
    return _known(ScriptDirectory.from_config(alembic_config()), revision)


def _known(script: ScriptDirectory, revision: str) -> bool:
    try:
        return script.get_revision(revision) is not None
    except CommandError:  # alembic's ResolutionError: no such revision
        return False


def _upgrade(config: Config, revision: str) -> None:
    _refuse_unknown_revisions(config)
    command.upgrade(config, revision)


async def upgrade(url: str | URL | None = None, revision: str = "head") -> None:
    """Bring the database at ``url`` (default: ``resolve_url``) up to ``revision``.

    Raises SchemaTooNew, changing nothing, when the database is at a revision not in migrations/.
    """
    await _run(url, lambda config: _upgrade(config, revision))


async def downgrade(url: str | URL | None, revision: str) -> None:
    """Take the database at ``url`` down to ``revision`` (``"base"``: no tables left)."""
    await _run(url, lambda config: command.downgrade(config, revision))


async def check(url: str | URL | None = None) -> None:
    """``alembic check``: raise ``alembic.util.AutogenerateDiffsDetected`` if models ≠ schema."""
    await _run(url, command.check)


async def current(url: str | URL | None = None) -> str | None:
    """The revision the database is at (None for an empty database)."""
    engine = _engine(url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(
                lambda sync: MigrationContext.configure(sync).get_current_revision()
            )
    finally:
        await engine.dispose()


def main_db_upgrade(
    argv: Sequence[str] | None = None,
    *,
    default_url: str | Callable[[], str | None] | None = None,
    check_url: Callable[[URL], None] | None = None,
) -> int:
    """``faguan db upgrade [--database-url URL]``: the CLI entry; returns the exit status.

    Without ``--database-url``: ``default_url`` (the configured database; a callable is called
    only then, so a URL on the command line needs no config file). ``faguan db upgrade`` always
    gives it: ``database.url`` of the config file, whose default is ./faguan.db, so
    ``$FAGUAN_DATABASE_URL`` is never read there (it is Alembic's own command line's,
    alembic.ini); only a caller giving no ``default_url`` falls back to it (``resolve_url``).
    ``check_url`` may refuse the resolved URL (by raising) before anything connects.
    """
    parser = argparse.ArgumentParser(
        prog="faguan db upgrade", description="Bring the database schema up to date."
    )
    parser.add_argument("--database-url", help="database URL (default: the configured one)")
    args = parser.parse_args(argv)
    if args.database_url:
        url = resolve_url(args.database_url)
    else:
        url = resolve_url(default_url() if callable(default_url) else default_url)
    if check_url is not None:
        check_url(url)
    asyncio.run(upgrade(url))
    print(f"database {url.render_as_string(hide_password=True)} is at the latest schema")
    return 0

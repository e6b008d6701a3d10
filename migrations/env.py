"""Alembic environment (async): the faguan schema on SQLite or PostgreSQL.

The database comes, in order, from a connection handed in by ``bot.store.migrate`` (the bot and
``faguan db upgrade``), ``-x url=URL`` on the alembic command line, ``sqlalchemy.url`` in the
config, ``$FAGUAN_DATABASE_URL``, or the default ./faguan.db; the engine is built by
``bot.store.db`` so migrations run with the same SQLite settings as the bot (real transactions:
a failed migration leaves nothing half done).
"""

from __future__ import annotations

import asyncio
from logging.config import fileConfig

from alembic import context
from sqlalchemy.engine import Connection
from sqlalchemy.pool import NullPool

from bot.store.db import create_engine, resolve_url
from bot.store.models import Base

config = context.config
target_metadata = Base.metadata

if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def _url() -> str | None:
    return (
        context.get_x_argument(as_dictionary=True).get("url")
        or config.get_main_option("sqlalchemy.url")
        or None
    )


def _configure(**kwargs: object) -> None:
    context.configure(
        target_metadata=target_metadata,
        compare_type=True,
        transactional_ddl=True,  # SQLite too: bot.store.db makes its transactions real
        **kwargs,  # type: ignore[arg-type]
    )


def run_migrations_offline() -> None:
    """Emit SQL instead of running it (``alembic upgrade head --sql``)."""
    url = resolve_url(_url())
    _configure(
        url=url,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        render_as_batch=url.get_backend_name() == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def do_run_migrations(connection: Connection) -> None:
    """Run the migrations on a (sync-adapted) connection."""
    _configure(connection=connection, render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


async def run_async_migrations() -> None:
    """Command-line path: our own engine, one connection, disposed after."""
    engine = create_engine(_url(), poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(do_run_migrations)
            await connection.commit()
    finally:
        await engine.dispose()


def run_migrations_online() -> None:
    """Use the connection handed in, else open one."""
    connection = config.attributes.get("connection")
    if connection is not None:
        do_run_migrations(connection)
    else:
        asyncio.run(run_async_migrations())


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()

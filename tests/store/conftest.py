"""Fixtures: every store test runs on SQLite (a file) and on PostgreSQL (a database of its own).

PostgreSQL is 127.0.0.1:5432, database ``test`` (override with $FAGUAN_TEST_PG_URL). If it is not
reachable the PostgreSQL tests fail rather than skip: CI starts the server, and a skipped backend
would hide a broken one.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest
import pytest_asyncio
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the project is not installed in the test virtualenv
    sys.path.insert(0, str(ROOT))

from bot.store.db import Database, open_database  # noqa: E402
from bot.store.migrate import upgrade  # noqa: E402
from bot.store.repository import Repository  # noqa: E402

PG_URL = os.environ.get("FAGUAN_TEST_PG_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
BACKENDS = ["sqlite", "postgresql"]
T = TypeVar("T")


async def _pg_admin(sql: str) -> None:
    engine = create_async_engine(PG_URL, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            await connection.execute(text(sql))
    finally:
        await engine.dispose()


def _run_apart(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to the end on its own loop and thread (for session-wide set-up)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _pg_url(name: str) -> str:
    return make_url(PG_URL).set(database=name).render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file, copied by each test that needs a migrated database."""
    path = tmp_path_factory.mktemp("template") / "faguan.db"
    _run_apart(upgrade(f"sqlite+aiosqlite:///{path}"))
    return path


@pytest.fixture(scope="session")
def pg_template() -> Iterator[str]:
    """A migrated PostgreSQL database, the template of each test's own database."""
    name = f"faguan_test_template_{uuid.uuid4().hex[:12]}"
    _run_apart(_pg_admin(f'CREATE DATABASE "{name}"'))
    try:
        _run_apart(upgrade(_pg_url(name)))
        yield name
    finally:
        _run_apart(_pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each test that uses a database runs once per backend."""
    return str(request.param)


async def _own_pg_database(template: str | None = None) -> str:
    name = f"faguan_test_{uuid.uuid4().hex[:16]}"
    suffix = f' TEMPLATE "{template}"' if template else ""
    await _pg_admin(f'CREATE DATABASE "{name}"{suffix}')
    return name


@pytest_asyncio.fixture
async def database_url(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    """An empty database of the backend, gone after the test."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'faguan.db'}"
        return
    name = await _own_pg_database()
    try:
        yield _pg_url(name)
    finally:
        await _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest_asyncio.fixture
async def migrated_url(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[str]:
    """A database of the backend at the latest schema (a copy of a migrated template)."""
    if backend == "sqlite":
        path = tmp_path / "faguan.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite+aiosqlite:///{path}"
        return
    name = await _own_pg_database(request.getfixturevalue("pg_template"))
    try:
        yield _pg_url(name)
    finally:
        await _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest_asyncio.fixture
async def db(migrated_url: str) -> AsyncIterator[Database]:
    """Engine and sessions on the migrated database."""
    database = open_database(migrated_url)
    try:
        yield database
    finally:
        await database.dispose()


@pytest.fixture
def repo(db: Database) -> Repository:
    """A repository on the migrated database."""
    return Repository(db.sessions)

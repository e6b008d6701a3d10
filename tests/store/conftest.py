"""Fixtures: every store test runs on SQLite (a file) and on PostgreSQL (a database of its own).

PostgreSQL is the session's `pg_server` (tests/conftest.py): the server $FAGUAN_TEST_PG_URL names,
or a throwaway one the tests start. If it cannot be had the PostgreSQL tests fail rather than
skip: a skipped backend would hide a broken one.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest
import pytest_asyncio
from pgserver import PgServer

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the project is not installed in the test virtualenv
    sys.path.insert(0, str(ROOT))

from bot.store.db import Database, open_database  # noqa: E402
from bot.store.migrate import upgrade  # noqa: E402
from bot.store.repository import Repository  # noqa: E402

BACKENDS = ["sqlite", "postgresql"]
T = TypeVar("T")


def _run_apart(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to the end on its own loop and thread (for session-wide set-up)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file, copied by each test that needs a migrated database."""
    path = tmp_path_factory.mktemp("template") / "faguan.db"
    _run_apart(upgrade(f"sqlite+aiosqlite:///{path}"))
    return path


@pytest.fixture(scope="session")
def pg_template(pg_server: PgServer) -> Iterator[str]:
    """A migrated PostgreSQL database, the template of each test's own database."""
    name = f"faguan_test_template_{uuid.uuid4().hex[:12]}"
    _run_apart(pg_server.create_database(name))
    try:
        _run_apart(upgrade(pg_server.url(name)))
        yield name
    finally:
        _run_apart(pg_server.drop_database(name))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each test that uses a database runs once per backend."""
    return str(request.param)


async def _own_pg_database(server: PgServer, template: str | None = None) -> str:
    name = f"faguan_test_{uuid.uuid4().hex[:16]}"
    await server.create_database(name, template)
    return name


@pytest_asyncio.fixture
async def database_url(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[str]:
    """An empty database of the backend, gone after the test."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'faguan.db'}"
        return
    server: PgServer = request.getfixturevalue("pg_server")
    name = await _own_pg_database(server)
    try:
        yield server.url(name)
    finally:
        await server.drop_database(name)


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
    server: PgServer = request.getfixturevalue("pg_server")
    name = await _own_pg_database(server, request.getfixturevalue("pg_template"))
    try:
        yield server.url(name)
    finally:
        await server.drop_database(name)


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

"""The connections under the store: SQLite's group writer has its own, which never keeps a
process alive; a pooled SQLite connection is rolled back on return only if a transaction is
open; PostgreSQL tests a pooled connection before use only after it idled."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from bot.store import db as store_db
from bot.store.db import Database, open_database
from bot.store.migrate import upgrade
from bot.store.models import Base
from bot.store.repository import Repository
from bot.store.sqlite_process import SqliteProcess
from tests.store.test_store_recovery import make_game

ROOT = Path(__file__).resolve().parents[2]


LEAVER = """
import asyncio, sys
from bot.store.db import open_database
from bot.store.migrate import upgrade
from bot.store.repository import Repository
from tests.store.test_store_recovery import make_game

async def main(url):
    await upgrade(url)
    repo = Repository(open_database(url).sessions)
    game = await make_game(repo)
    await repo.record(game, events=[{"type": "Added", "n": 1}])  # a small group: written here
    await repo._sqlite_process.pragma("journal_mode", "wal")  # the writer process started too
    print("recorded", repo._sqlite_process.pid, flush=True)

asyncio.run(main(sys.argv[1]))
"""


async def test_a_process_that_never_closes_its_store_still_exits(tmp_path: Path) -> None:
    """The group writer process ends at the end of its stdin: a bot that dies without disposing
    of its database (an unhandled error on the way out) is not left hanging, nor leaves its
    writer process behind."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'left.db'}"
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", LEAVER, url], cwd=ROOT, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said, pid = done.stdout.split()
    assert said == "recorded"
    assert await ended(int(pid))


async def ended(pid: int, within: float = 30) -> bool:
    """Whether process ``pid`` ends (or is only left to be reaped) within ``within`` seconds."""
    stat = Path(f"/proc/{pid}/stat")
    for _ in range(int(within / 0.05)):
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                return True
        except FileNotFoundError:
            return True
        await asyncio.sleep(0.05)
    return False


async def test_an_in_memory_database_writes_groups_through_the_pool() -> None:
    """A memory database is one per connection: the writer may not open its own there."""
    url = "sqlite+aiosqlite://"
    database = open_database(url)
    try:
        async with database.engine.begin() as conn:
            await conn.run_sync(Base.metadata.create_all)
        repo = Repository(database.sessions)
        game = await make_game(repo)
        recorded = await repo.record(game, events=[{"type": "Added", "n": 1}], message_id=9)
        assert not recorded.duplicate
        assert (await repo.load_events(game))[-1] == {"type": "Added", "n": 1}
    finally:
        await database.dispose()


async def test_a_sqlite_connection_returned_in_a_transaction_is_rolled_back(
    tmp_path: Path,
) -> None:
    """The pool rolls back only connections with a transaction open: one left open under
    SQLAlchemy's back (a driver call) would hold SQLite's write lock for the next user."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'reset.db'}"
    await upgrade(url)
    database = open_database(url, pool_size=1, max_overflow=0)
    try:
        async with database.engine.connect() as conn:
            raw = (await conn.get_raw_connection()).driver_connection
            await raw.execute("BEGIN IMMEDIATE")
            await raw.execute(
                "INSERT INTO servers (id, settings, created_at, updated_at) VALUES (42, '{}', 'x', 'x')"
            )
            assert raw.in_transaction
        async with database.engine.connect() as conn:  # the same pooled connection
            raw = (await conn.get_raw_connection()).driver_connection
            assert not raw.in_transaction
            assert (await conn.scalar(text("SELECT count(*) FROM servers"))) == 0
    finally:
        await database.dispose()


@pytest.mark.parametrize("backend", ["postgresql"])
async def test_postgresql_tests_a_connection_only_after_it_idled(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Testing costs three round trips: not for a connection used a moment ago."""
    pings: list[int] = []
    record_ping = pings.append

    def counted(adapter: Any) -> None:
        record_ping(1)
        real_ping(adapter)

    async with db.engine.connect() as conn:
        adapter_class = type((await conn.get_raw_connection()).dbapi_connection)
    real_ping = adapter_class.ping
    monkeypatch.setattr(adapter_class, "ping", counted)
    for _ in range(3):  # used one after another: no test
        async with db.engine.connect() as conn:
            assert await conn.scalar(text("SELECT 1")) == 1
    assert pings == []
    monkeypatch.setattr(store_db, "PING_IDLE_SECONDS", 0.0)
    async with db.engine.connect() as conn:  # idle "long enough": tested first
        await conn.scalar(text("SELECT 1"))
    assert pings == [1]


@pytest.mark.parametrize("backend", ["postgresql"])
async def test_postgresql_replaces_a_dead_idle_connection(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server restart kills the pooled connections: the first use after it gets a live one."""
    async with db.engine.connect() as conn:
        pid = await conn.scalar(text("SELECT pg_backend_pid()"))
    other = open_database(db.engine.url)
    try:
        async with other.engine.connect() as conn:
            await conn.execute(text(f"SELECT pg_terminate_backend({int(pid)})"))
    finally:
        await other.dispose()
    monkeypatch.setattr(store_db, "PING_IDLE_SECONDS", 0.0)
    async with db.engine.connect() as conn:
        assert await conn.scalar(text("SELECT pg_backend_pid()")) != pid


@pytest.mark.parametrize(
    ("url", "memory"),
    [
        ("sqlite+aiosqlite://", True),
        ("sqlite+aiosqlite:///:memory:", True),
        ("sqlite+aiosqlite:///file::memory:?cache=shared&uri=true", True),
        ("sqlite+aiosqlite:///file:games?mode=memory&uri=true", True),
        ("sqlite+aiosqlite:///faguan.db", False),
        ("sqlite+aiosqlite:///file:faguan.db?mode=rwc&uri=true", False),
    ],
)
def test_which_sqlite_urls_are_in_memory(url: str, memory: bool) -> None:
    """Where the writer may not open a second connection (it would see another database)."""
    assert store_db.in_memory(make_url(url)) is memory
    engine = store_db.create_engine(url, poolclass=NullPool)  # nothing is opened
    assert (SqliteProcess.for_engine(engine) is None) is memory


async def test_a_clean_stop_leaves_the_whole_database_in_its_file(tmp_path: Path) -> None:
    """Closing the store closes the writer's own connection too: the last connection to close
    checkpoints the WAL into the file and removes it (a copy of the file alone is the whole
    database); the writer opens again for a later call."""
    path = tmp_path / "stop.db"
    url = f"sqlite+aiosqlite:///{path}"
    await upgrade(url)
    database = open_database(url)
    repo = Repository(database.sessions)
    game = await make_game(repo)
    await repo.record(game, events=[{"type": "Added", "n": 1}])
    await repo.close()
    await repo.record(game, events=[{"type": "Added", "n": 2}])  # opened again
    await repo.close()
    await database.dispose()
    assert not Path(f"{path}-wal").exists()
    copy = open_database(f"sqlite+aiosqlite:///{path}")
    try:
        events = await Repository(copy.sessions).load_events(game)
        assert events[-2:] == [{"type": "Added", "n": 1}, {"type": "Added", "n": 2}]
    finally:
        await copy.dispose()

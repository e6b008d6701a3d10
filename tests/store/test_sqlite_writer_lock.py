"""The SQLite writer process's lock (``bot.store.sqlite_lock``): a restarted bot's recovery reads
only once a writer process of the run before it, still committing what its dead bot sent, has
ended (else the group's effects stay undone, unseen); writer processes of live runs share the
lock and never wait for each other; the wait is bounded; the lock file's path for each way a
database is named."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
import pytest_asyncio

from bot.store import sqlite_lock
from bot.store.db import Database
from bot.store.recovery import rebuild_games
from bot.store.repository import Repository
from bot.store.sqlite_process import SqliteProcess
from bot.store.writer import Stage
from tests.store.test_sqlite_process_lifecycle import added, process_only, reaped, started
from tests.store.test_store_recovery import fold, make_game

on_sqlite = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest_asyncio.fixture
async def dead_runs_writer(db: Database) -> AsyncIterator[SqliteProcess]:
    """A writer process of its own (the run before the restart), closed after the test."""
    made = SqliteProcess.for_engine(db.engine)
    assert made is not None
    try:
        yield process_only(made)
    finally:
        await made.aclose()


def lock_of(db: Database) -> str:
    path = sqlite_lock.lock_path([str(db.engine.url.database)], {})
    assert path is not None
    return path


@pytest.mark.asyncio
@on_sqlite
async def test_recovery_reads_the_group_the_dead_runs_writer_process_still_commits(
    db: Database, dead_runs_writer: SqliteProcess
) -> None:
    game = await make_game(Repository(db.sessions), 2)
    await started(dead_runs_writer)
    pid = dead_runs_writer.pid
    assert pid is not None
    holder = sqlite3.connect(str(db.engine.url.database), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # its commit waits in SQLite's busy handler
    sent = asyncio.ensure_future(
        dead_runs_writer.commit(Stage(), True, NOW, [], [added(game, 5)], {})
    )
    await asyncio.sleep(0.2)  # sent: the writer process waits for the database
    dead_runs_writer.end()  # the bot dies: the writer process answers what it was sent, then ends
    sent.cancel()
    asyncio.get_running_loop().call_later(0.3, holder.close)  # the database lets go later

    restarted = Repository(db.sessions)
    report = await rebuild_games(restarted, fold)

    assert report.games[game].state == 2 + 5  # the group committed after the death is read
    assert await reaped(pid, within=1)  # read once the dead run's writer had ended
    with pytest.raises(asyncio.CancelledError):
        await sent


@pytest.mark.asyncio
@on_sqlite
async def test_the_lock_is_shared_by_live_writers_and_let_go_when_they_end(db: Database) -> None:
    game = await make_game(Repository(db.sessions))
    one, two = SqliteProcess.for_engine(db.engine), SqliteProcess.for_engine(db.engine)
    assert one is not None and two is not None
    try:
        for writer, n in ((one, 1), (two, 2)):  # a bot and a tool beside it: neither waits
            await process_only(writer).commit(Stage(), True, NOW, [], [added(game, n)], {})
        assert not sqlite_lock.is_free(lock_of(db))
        await one.aclose()
        assert not sqlite_lock.is_free(lock_of(db))  # the other still runs
        assert await two.earlier_writer_ended() == 0.0  # its own runs: no wait
    finally:
        await one.aclose()
        await two.aclose()
    assert sqlite_lock.is_free(lock_of(db))
    events = await Repository(db.sessions).load_events(game)
    assert [e.get("n") for e in events] == [None, 1, 2]


@pytest.mark.asyncio
@on_sqlite
async def test_the_wait_for_a_writer_that_lives_on_is_bounded(db: Database) -> None:
    game = await make_game(Repository(db.sessions))
    tool = SqliteProcess.for_engine(db.engine)
    assert tool is not None
    try:
        await process_only(tool).commit(Stage(), True, NOW, [], [added(game, 1)], {})
        assert await sqlite_lock.wait_until_free(lock_of(db), at_most=0.1) is None
    finally:
        await tool.aclose()
    assert await sqlite_lock.wait_until_free(lock_of(db), at_most=0.1) == 0.0


@pytest.mark.parametrize(
    ("args", "kwargs", "path"),
    [
        (["/data/faguan.db"], {}, "/data/faguan.db-writer"),
        ([], {"database": "faguan.db"}, "faguan.db-writer"),
        ([":memory:"], {}, None),
        ([""], {}, None),
        (["file:/data/faguan.db?cache=shared"], {"uri": True}, "/data/faguan.db-writer"),
        (["file:x?mode=memory&cache=shared"], {"uri": True}, None),
        (["/data/file:odd.db"], {}, "/data/file:odd.db-writer"),
    ],
)
def test_the_lock_file_sits_beside_the_database(
    args: list[Any], kwargs: dict[str, Any], path: str | None
) -> None:
    assert sqlite_lock.lock_path(args, kwargs) == path

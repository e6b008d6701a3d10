"""SQLite's group writer (``bot.store.sqlite_process``) over its life: a small group is written
in this process and a large one in the writer process; a small group that finds the database
held by another process waits for it in the writer process, not on the event loop; a request
whose caller stopped waiting (the group writer cancelled as the process goes down) still runs and
the writer goes on serving; a writer process killed mid-request leaves that request unknown
(``WriterLost``) and the next request starts a new one; a statement that fails before COMMIT is
raised as sqlite3's error, the stage cleared, wherever the group is written; closing a writer
that never ran a request, or closing it twice, does nothing, and a later request starts it
again."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
import pytest_asyncio

from bot.store.db import Database
from bot.store.repository import Repository
from bot.store.sqlite_group import PlannedAppend, Written
from bot.store.sqlite_here import SMALL_GROUP, SMALL_PAYLOAD
from bot.store.sqlite_process import SqliteProcess, WriterLost
from bot.store.writer import Stage
from tests.store.test_store_recovery import make_game

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.parametrize("backend", ["sqlite"], indirect=True),
]

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def added(game_id: int, n: int, *, extra: list[int] | None = None) -> PlannedAppend:
    """One input adding ``n`` to game ``game_id``, as the repository plans it (``extra``: a
    list carried in its event)."""
    event: dict[str, Any] = {"type": "Added", "n": n}
    if extra is not None:
        event["extra"] = extra
    return PlannedAppend(game_id, None, False, None, None, [event], ["Added"], [])


@pytest_asyncio.fixture
async def writer(db: Database) -> AsyncIterator[SqliteProcess]:
    """The group writer of ``db``, closed after the test."""
    made = SqliteProcess.for_engine(db.engine)
    assert made is not None
    try:
        yield made
    finally:
        await made.aclose()


def process_only(writer: SqliteProcess) -> SqliteProcess:
    """``writer``, writing every group in its writer process."""
    writer.small_group = 0
    return writer


@contextmanager
def write_locked(db: Database) -> Iterator[None]:
    """Another connection holding the database's write lock: the writer's commit waits (in
    SQLite's busy handler) until it lets go."""
    holder = sqlite3.connect(str(db.engine.url.database), isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        yield
    finally:
        holder.close()


async def reaped(pid: int, within: float = 10) -> bool:
    """Whether this process's child ``pid`` is reaped (gone, not a zombie) within ``within`` s
    (read in /proc: Linux, where CI runs)."""
    for _ in range(int(within / 0.05)):
        if not os.path.exists(f"/proc/{pid}"):
            return True
        await asyncio.sleep(0.05)
    return False


async def started(writer: SqliteProcess) -> SqliteProcess:
    """``writer`` with its process running and its connection open."""
    assert await writer.pragma("journal_mode") == "wal"
    return writer


async def test_a_request_whose_caller_was_cancelled_still_runs_and_the_writer_serves_on(
    db: Database, writer: SqliteProcess
) -> None:
    process_only(writer)
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    game = await make_game(Repository(db.sessions))
    try:
        await started(writer)
        with write_locked(db):
            call = asyncio.ensure_future(
                writer.commit(Stage(), True, NOW, [], [added(game, 1)], {})
            )
            await asyncio.sleep(0.2)  # sent: the writer waits for the lock
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
        # answered after the cancelled request's answer came back (answers are in order)
        assert await writer.pragma("query_only") == 0  # the writer serves on
        assert reported == []  # the late answer went nowhere, quietly
        events = await Repository(db.sessions).load_events(game)
        assert events[-1] == {"type": "Added", "n": 1}  # it ran all the same
    finally:
        loop.set_exception_handler(None)


async def test_a_writer_killed_mid_request_loses_it_and_the_next_request_starts_another(
    db: Database, writer: SqliteProcess
) -> None:
    process_only(writer)
    game = await make_game(Repository(db.sessions))
    first = (await started(writer)).pid
    assert first is not None
    stage = Stage()
    with write_locked(db):
        call = asyncio.ensure_future(writer.commit(stage, True, NOW, [], [added(game, 1)], {}))
        await asyncio.sleep(0.2)  # sent: the writer waits for the lock
        os.kill(first, signal.SIGKILL)
        with pytest.raises(WriterLost):
            await call
    assert stage.committing  # the outcome is unknown (here: nothing was written)
    assert await reaped(first)  # at once, not only when the next request replaces it
    written = await writer.commit(Stage(), True, NOW, [], [added(game, 2)], {})
    assert isinstance(written, Written) and written.appends == [(2, [])]
    assert writer.pid not in (None, first)
    events = await Repository(db.sessions).load_events(game)
    assert events == [{"type": "Started"}, {"type": "Added", "n": 2}]


@pytest.mark.parametrize("here", [True, False], ids=["here", "in-the-writer-process"])
async def test_a_statement_that_fails_before_commit_raises_sqlite3s_error(
    db: Database, writer: SqliteProcess, here: bool
) -> None:
    if not here:
        process_only(writer)
    game = await make_game(Repository(db.sessions))
    assert await writer.pragma("query_only", "ON") == 1  # on both connections
    stage = Stage()
    with pytest.raises(sqlite3.OperationalError, match="readonly database"):
        await writer.commit(stage, True, NOW, [], [added(game, 1)], {})
    assert not stage.committing  # nothing was written: the inputs may be written alone
    await writer.pragma("query_only", "OFF")
    written = await writer.commit(stage, True, NOW, [], [added(game, 1)], {})
    assert written.appends == [(2, [])]


async def test_a_small_group_is_written_here_and_a_large_one_in_the_writer_process(
    db: Database, writer: SqliteProcess
) -> None:
    repo = Repository(db.sessions)
    games = [await make_game(repo) for _ in range(SMALL_GROUP)]
    small = [added(g, 1) for g in games[:-1]]
    written = await writer.commit(Stage(), True, NOW, [], small, {})
    assert written.appends == [(2, [])] * len(small)
    assert await writer.pragma("synchronous") == 2  # FULL, read where it was written
    assert writer.pid is None  # no writer process was needed, for the group nor the read
    big_payload = added(games[0], 2, extra=list(range(SMALL_PAYLOAD)))
    await writer.commit(Stage(), True, NOW, [], [big_payload], {})
    started = writer.pid
    assert started is not None  # a payload this large: written there
    writer.end()  # the writer process ends; the next large group starts another
    large = [added(g, 3) for g in games]
    written = await writer.commit(Stage(), True, NOW, [], large, {})
    assert written.appends == [(4, [])] + [(3, [])] * (len(games) - 2) + [(2, [])]
    assert writer.pid not in (None, started)
    for game in games[1:-1]:
        events = await repo.load_events(game)
        assert [e.get("n") for e in events] == [None, 1, 3]


async def test_a_small_group_finding_the_database_held_waits_in_the_writer_process(
    db: Database, writer: SqliteProcess
) -> None:
    game = await make_game(Repository(db.sessions))
    with write_locked(db):
        call = asyncio.ensure_future(writer.commit(Stage(), True, NOW, [], [added(game, 1)], {}))
        loop = asyncio.get_running_loop()
        before = loop.time()
        await asyncio.sleep(0.2)  # the loop runs on: the wait is not here
        assert loop.time() - before < 1.0
        assert not call.done()
    written = await call  # once the other process lets go
    assert written.appends == [(2, [])]
    assert writer.pid is not None  # it waited in the writer process
    events = await Repository(db.sessions).load_events(game)
    assert events[-1] == {"type": "Added", "n": 1}


async def test_closing_a_writer_that_never_ran_or_closing_twice_does_nothing(
    db: Database, writer: SqliteProcess
) -> None:
    repo = Repository(db.sessions)
    await repo.close()  # a clean stop before any group was written
    gid = await make_game(repo)
    await repo.record(gid, events=[{"type": "Added", "n": 1}])  # a group: the writer starts
    await repo.close()
    await repo.close()  # closed already
    # a later group starts it again
    await repo.record(gid, events=[{"type": "Added", "n": 2}])
    await repo.close()
    assert await Repository(db.sessions).load_events(gid) == [
        {"type": "Started"},
        {"type": "Added", "n": 1},
        {"type": "Added", "n": 2},
    ]

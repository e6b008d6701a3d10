"""SQLite's group writer (its own connection and thread, ``bot.store.sqlite_writer``) over its
life: a call whose caller stopped waiting (the group writer cancelled as the process goes down)
still runs, as aiosqlite's would, and the writer goes on serving; closing a writer that never
ran a call, or closing it twice, does nothing, and a later call starts it again."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from sqlalchemy import select

from bot.store.db import Database
from bot.store.models import Server
from bot.store.repository import Repository
from bot.store.sqlite_writer import SqliteWriter
from tests.store.test_store_recovery import make_game

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.parametrize("backend", ["sqlite"], indirect=True),
]


async def test_a_call_whose_caller_was_cancelled_still_runs_and_the_writer_serves_on(
    db: Database,
) -> None:
    writer = SqliteWriter.for_engine(db.engine)
    assert writer is not None
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    started, go = threading.Event(), threading.Event()

    def insert(conn: Any, _info: dict[str, Any]) -> str:
        started.set()
        assert go.wait(30)
        conn.execute(
            "INSERT INTO servers (id, settings, created_at, updated_at) "
            "VALUES (7, '{}', '2026-01-01 00:00:00.000000', '2026-01-01 00:00:00.000000')"
        )
        return "written"

    def count(conn: Any, _info: dict[str, Any]) -> int:
        return int(conn.execute("SELECT count(*) FROM servers WHERE id = 7").fetchone()[0])

    try:
        call = asyncio.ensure_future(writer.run(insert))
        assert await asyncio.to_thread(started.wait, 30)  # running on the writer's thread
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        go.set()
        # answered after the cancelled call's answer came back to the loop (calls are in order)
        assert await writer.run(count) == 1  # it ran all the same, and the writer serves on
        assert reported == []  # its late answer went nowhere, quietly
        async with db.sessions() as s:
            assert await s.scalar(select(Server.id).where(Server.id == 7)) == 7
    finally:
        go.set()
        loop.set_exception_handler(None)
        await writer.aclose()


async def test_closing_a_writer_that_never_ran_or_closing_twice_does_nothing(
    db: Database,
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

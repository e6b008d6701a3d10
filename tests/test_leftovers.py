"""The guard of `tests/conftest.py` (`tests/leftovers.py`) sees what a test leaves open: an
aiosqlite connection's thread and a SQLite writer process until they are closed, and not a
library's idle pool thread (which says nothing of an open resource). It fails a test that
leaves one, unless the test says why (`leaves_running`)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import aiosqlite
import pytest
from leftovers import AIOSQLITE_THREAD, Running, left_running, nothing_left_running

from bot.store.sqlite_process import SqliteProcess


async def test_an_open_aiosqlite_connection_is_left_running_until_closed(tmp_path: Path) -> None:
    before = Running.now()
    connection = await aiosqlite.connect(tmp_path / "open.db")
    try:
        left = left_running(before, grace=0.05)
    finally:
        await connection.close()
    assert [t.name.endswith(AIOSQLITE_THREAD) for t in left.threads] == [True]
    assert not left.processes
    assert not left_running(before)


async def test_a_writer_process_is_left_running_until_it_ends(tmp_path: Path) -> None:
    before = Running.now()
    writer = SqliteProcess([str(tmp_path / "writer.db")], {})
    try:
        await writer.pragma("user_version")  # starts the writer process
        left = left_running(before, grace=0.05)
    finally:
        await writer.aclose()
    assert writer.pid is None and left.processes and not left.threads
    assert "SQLite writer process" in left.describe()
    assert not left_running(before)


async def test_an_idle_library_pool_thread_is_not_ours() -> None:
    before = Running.now()
    await asyncio.to_thread(lambda: None)  # asyncio's default executor's thread stays, idle
    assert not left_running(before, grace=0.0)


async def test_a_connection_left_open_fails_the_test_naming_its_thread(tmp_path: Path) -> None:
    connection = None
    left = f"left running: thread .*{re.escape(AIOSQLITE_THREAD)}"
    try:
        with pytest.raises(pytest.fail.Exception, match=left), nothing_left_running(grace=0.05):
            connection = await aiosqlite.connect(tmp_path / "left.db")
    finally:
        if connection is not None:
            await connection.close()


async def test_a_connection_closed_in_time_passes(tmp_path: Path) -> None:
    with nothing_left_running():
        connection = await aiosqlite.connect(tmp_path / "closed.db")
        await connection.close()


async def test_a_reason_lets_a_test_leave_one_and_an_empty_one_does_not(tmp_path: Path) -> None:
    with nothing_left_running(why="a simulated crash's writer lives on"):
        connection = await aiosqlite.connect(tmp_path / "kept.db")
    await connection.close()
    with pytest.raises(TypeError, match="reason"), nothing_left_running(why=" "):
        pass

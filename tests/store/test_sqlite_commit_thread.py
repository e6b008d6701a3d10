"""A small SQLite group is written on the bot's own connection (``bot.store.sqlite_here``), its
``COMMIT`` on the event loop unless a timer is due soon or the disk was slow lately, then on a
thread: the event loop serves on while the disk is waited for; a caller that stops waiting leaves
its ``COMMIT`` to end before the connection is used again; a ``COMMIT`` that fails is raised to its
caller, its outcome unknown, and the connection serves on."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from functools import partial
from typing import Any, ClassVar

import pytest
import pytest_asyncio

from bot.store import sqlite_here
from bot.store.db import Database
from bot.store.repository import Repository
from bot.store.sqlite_group import PlannedAppend
from bot.store.sqlite_here import SLOW_COMMIT, timer_due
from bot.store.sqlite_process import SqliteProcess
from bot.store.writer import Stage
from tests.store.test_store_recovery import make_game

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.parametrize("backend", ["sqlite"], indirect=True),
]

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def added(game_id: int, n: int) -> PlannedAppend:
    event = {"type": "Added", "n": n}
    return PlannedAppend(game_id, None, False, None, None, [event], ["Added"], [])


class GatedCommits(sqlite3.Connection):
    """A connection whose ``COMMIT`` waits for ``gate`` (set by the test) and may fail once."""

    gate = threading.Event()
    entered = threading.Event()
    fail_next = False
    delay = 0.0
    """Seconds each ``COMMIT`` takes past the gate (a slow disk)."""
    threads: ClassVar[list[int]] = []
    """The thread of each ``COMMIT``."""

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql == "COMMIT":
            type(self).threads.append(threading.get_ident())
            type(self).entered.set()
            assert type(self).gate.wait(10), "the test never opened the gate"
            time.sleep(type(self).delay)
            if type(self).fail_next:
                type(self).fail_next = False
                raise sqlite3.OperationalError("disk I/O error")
        return super().execute(sql, *args)


@pytest.fixture
def gated() -> type[GatedCommits]:
    GatedCommits.gate = threading.Event()
    GatedCommits.entered = threading.Event()
    GatedCommits.fail_next = False
    GatedCommits.delay = 0.0
    GatedCommits.threads = []
    return GatedCommits


def deadline_soon(monkeypatch: pytest.MonkeyPatch) -> asyncio.TimerHandle:
    """A deadline's timer that counts as due soon for the rest of the test: ``timer_due`` looks an
    hour ahead and the timer is a minute away. (A real one due within ``FREE_FOR`` can fire, on a
    loaded machine, before the ``COMMIT`` looks; the ``COMMIT`` then holds the loop the test
    needs.) ``timer_due`` itself: tests/store/test_sqlite_timer_due.py."""
    monkeypatch.setattr(sqlite_here, "timer_due", partial(timer_due, within=3600.0))
    return asyncio.get_running_loop().call_later(60, lambda: None)


@pytest.mark.parametrize("due", [False, True], ids=["no timer due", "a deadline due"])
async def test_the_commit_runs_on_the_loop_unless_a_timer_is_due(
    db: Database,
    gated: type[GatedCommits],
    writer: SqliteProcess,
    monkeypatch: pytest.MonkeyPatch,
    due: bool,
) -> None:
    game = await make_game(Repository(db.sessions))
    gated.gate.set()
    timer = deadline_soon(monkeypatch) if due else None
    written = await writer.commit(Stage(), True, NOW, [], [added(game, 1)], {})
    assert written.appends == [(2, [])]
    on_loop = gated.threads == [threading.get_ident()]
    assert on_loop is not due, gated.threads
    if timer is not None:
        timer.cancel()


async def test_a_slow_commit_on_the_loop_sends_the_next_ones_to_the_thread(
    db: Database, gated: type[GatedCommits], writer: SqliteProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_here, "SLOW_FOR", 0.3)
    game = await make_game(Repository(db.sessions))
    gated.gate.set()
    gated.delay = SLOW_COMMIT * 4  # the disk is slow: this COMMIT held the loop
    await writer.commit(Stage(), True, NOW, [], [added(game, 1)], {})
    gated.delay = 0.0
    await writer.commit(Stage(), True, NOW, [], [added(game, 2)], {})
    await asyncio.sleep(0.3)  # SLOW_FOR later, the loop is tried again
    await writer.commit(Stage(), True, NOW, [], [added(game, 3)], {})
    me = threading.get_ident()
    assert [thread == me for thread in gated.threads] == [True, False, True]
    events = await Repository(db.sessions).load_events(game)
    assert [e.get("n") for e in events[-3:]] == [1, 2, 3]


@pytest_asyncio.fixture
async def writer(db: Database, gated: type[GatedCommits]) -> AsyncIterator[SqliteProcess]:
    """A writer on ``db``'s file writing small groups here, on gated connections."""
    path = str(db.engine.url.database)
    made = SqliteProcess([path], {"check_same_thread": False, "factory": gated})
    try:
        yield made
    finally:
        gated.gate.set()
        await made.aclose()


async def test_the_loop_serves_on_while_a_commit_waits_for_the_disk(
    db: Database, gated: type[GatedCommits], writer: SqliteProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = await make_game(Repository(db.sessions))
    soon = deadline_soon(monkeypatch)
    call = asyncio.ensure_future(writer.commit(Stage(), True, NOW, [], [added(game, 1)], {}))
    assert await asyncio.to_thread(gated.entered.wait, 10)
    await asyncio.sleep(0.05)  # the loop runs while the COMMIT waits on its thread
    assert not call.done()
    gated.gate.set()  # the disk answers
    written = await call
    soon.cancel()
    assert written.appends == [(2, [])]
    assert writer.pid is None  # written here
    events = await Repository(db.sessions).load_events(game)
    assert events[-1] == {"type": "Added", "n": 1}


async def test_a_commit_whose_caller_stopped_waiting_ends_before_the_next_group(
    db: Database, gated: type[GatedCommits], writer: SqliteProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = await make_game(Repository(db.sessions))
    stage = Stage()
    soon = deadline_soon(monkeypatch)
    call = asyncio.ensure_future(writer.commit(stage, True, NOW, [], [added(game, 1)], {}))
    assert await asyncio.to_thread(gated.entered.wait, 10)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert stage.committing  # its outcome is unknown to its caller
    threading.Timer(0.2, gated.gate.set).start()  # the disk answers later
    # the next group waits for that COMMIT, then is written after it
    written = await writer.commit(Stage(), True, NOW, [], [added(game, 2)], {})
    soon.cancel()
    assert written.appends == [(3, [])]
    events = await Repository(db.sessions).load_events(game)
    assert events[-2:] == [{"type": "Added", "n": 1}, {"type": "Added", "n": 2}]


@pytest.mark.parametrize("due", [False, True], ids=["on the loop", "on the thread"])
async def test_a_failed_commit_is_raised_and_the_connection_serves_on(
    db: Database,
    gated: type[GatedCommits],
    writer: SqliteProcess,
    monkeypatch: pytest.MonkeyPatch,
    due: bool,
) -> None:
    game = await make_game(Repository(db.sessions))
    gated.gate.set()
    gated.fail_next = True
    stage = Stage()
    timer = deadline_soon(monkeypatch) if due else None
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        await writer.commit(stage, True, NOW, [], [added(game, 1)], {})
    assert (gated.threads == [threading.get_ident()]) is not due
    if timer is not None:
        timer.cancel()
    assert stage.committing  # a failure at COMMIT: the outcome is unknown
    written = await writer.commit(Stage(), True, NOW, [], [added(game, 2)], {})
    assert written.appends == [(2, [])]  # the failed one was rolled back
    events = await Repository(db.sessions).load_events(game)
    assert events == [{"type": "Started"}, {"type": "Added", "n": 2}]

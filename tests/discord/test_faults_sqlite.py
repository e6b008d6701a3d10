"""The SQLite file itself failing mid-game, for real (not a patched method): another process
holding the write lock past the busy timeout (`database is locked`), and the database refusing
writes (`attempt to write a readonly database`). While it lasts, commands answer "try again" and
change nothing, vote posts still count at the lock (read back from the channel), a deadline that
cannot be recorded is tried again; once it clears, the game ends exactly as without the fault."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from envclock import EnvClock
from faultkit import play_through_a_fault
from gamebot import BotEnv, Table, build_table, settings_for
from sqlalchemy import event

import bot.store.db
from bot.discord.client import create_bot
from bot.runtime.timing import DeadlineScheduler
from bot.store import Database, open_database, upgrade
from bot.store.sqlite_process import SqliteProcess

SEED = "sqlite-fault-seed"
HOLD_WRITE_LOCK = (
    "import sqlite3, sys\n"
    "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "c.execute('BEGIN EXCLUSIVE')\n"
    "print('held', flush=True)\n"
    "sys.stdin.readline()\n"
)
"""Another process that takes the database's write lock and keeps it until told to stop."""


class Faults:
    """The two real ways a SQLite file stops taking writes, switched on and off by the test."""

    def __init__(self, path: Path, database: Database, monkeypatch: pytest.MonkeyPatch) -> None:
        self.path = path
        self.readonly = False
        event.listen(database.engine.sync_engine, "checkout", self._on_checkout)
        # the group writer process's connection (bot.store.sqlite_process) is no pool's: set it
        # too, before each group written there
        commit = SqliteProcess.commit

        async def commit_read_only(writer: SqliteProcess, *args: Any) -> Any:
            await writer.pragma("query_only", "ON" if self.readonly else "OFF")
            return await commit(writer, *args)

        monkeypatch.setattr(SqliteProcess, "commit", commit_read_only)

    def _on_checkout(self, dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA query_only={'ON' if self.readonly else 'OFF'}")
        finally:
            cursor.close()

    @contextmanager
    def locked_by_another_process(self) -> Iterator[None]:
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD_WRITE_LOCK, str(self.path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "held"
        try:
            yield
        finally:
            holder.stdin.close()
            holder.wait(timeout=30)

    @contextmanager
    def read_only(self) -> Iterator[None]:
        self.readonly = True
        try:
            yield
        finally:
            self.readonly = False


@pytest_asyncio.fixture
async def rig(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[Table, Faults]]:
    monkeypatch.setattr(bot.store.db, "SQLITE_BUSY_TIMEOUT_MS", 200)  # fail fast, not in 10 s
    path = tmp_path / "g.db"
    settings = settings_for(path)
    await upgrade(settings.database.url)
    database = open_database(settings.database.url)
    faults = Faults(path, database, monkeypatch)
    clock = EnvClock()
    made = create_bot(
        settings,
        clock=clock,
        scheduler=DeadlineScheduler(clock),
        database=database,
        seed_source=lambda: SEED,
    )
    env = BotEnv(made, check_errors=False)
    clock.bind(env)
    table = build_table(env, 8)
    await env.start()
    try:
        yield table, faults
    finally:
        await env.shutdown()
        await database.dispose()


FAULTS: dict[str, Callable[[Faults], AbstractContextManager[None]]] = {
    "locked": Faults.locked_by_another_process,
    "read_only": Faults.read_only,
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_sqlite_refusing_writes_mid_game_loses_nothing(
    rig: tuple[Table, Faults], fault: str
) -> None:
    table, faults = rig
    await play_through_a_fault(table, lambda: FAULTS[fault](faults), SEED)

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
from conftest import EnvClock
from faultkit import assert_same_game, drain, roles_of
from gamebot import Driver, Table, build_table, settings_for
from simcord import Env
from sqlalchemy import event

import bot.store.db
from bot.app import create_bot
from bot.store import Database, open_database, upgrade
from bot.timing import DeadlineScheduler
from engine.model import PhaseKind, Seat
from engine.record import record_of
from engine.state import DayRecord

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

    def __init__(self, path: Path, database: Database) -> None:
        self.path = path
        self.readonly = False
        event.listen(database.engine.sync_engine, "checkout", self._on_checkout)

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
async def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[Table, Faults]]:
    monkeypatch.setattr(bot.store.db, "SQLITE_BUSY_TIMEOUT_MS", 200)  # fail fast, not in 10 s
    path = tmp_path / "g.db"
    settings = settings_for(path)
    await upgrade(settings.database.url)
    database = open_database(settings.database.url)
    faults = Faults(path, database)
    clock = EnvClock()
    made = create_bot(
        settings, clock=clock, scheduler=DeadlineScheduler(clock), database=database, seed_source=lambda: SEED
    )
    env = Env(made, check_errors=False)
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
async def test_sqlite_refusing_writes_mid_game_loses_nothing(rig: tuple[Table, Faults], fault: str) -> None:
    table, faults = rig
    refusing = FAULTS[fault]
    service = table.bot.service
    d = Driver(table, "v2")
    roles = await d.start()
    k1, k2 = roles_of(roles, "killer")
    c1, c2 = roles_of(roles, "civilian")[:2]
    police = roles_of(roles, "police")[0]
    await d.power_by_menu(k1, "kill", c1)

    with refusing(faults):
        before = await service.state(d.game_id)
        answer = await table.player(police).slash(table.channel, "act", power="check", target=k1)
        assert answer.ephemeral and "try again" in answer.response.content
        assert await service.state(d.game_id) == before  # nothing changed
        await d.lock()  # the deadline fires but cannot be recorded
        state = await service.state(d.game_id)
        assert state.phase is not None and state.phase.kind is PhaseKind.NIGHT
        assert not any(p.startswith("【看表】") for p in table.public())
        assert table.bot.lock_failures[d.game_id] == 1
    await table.run_deadline()  # tried again once the database takes writes
    await drain(table)
    state = await service.state(d.game_id)
    assert state.phase is not None and state.phase.label() == "day 1"

    voters = [s for s in range(1, 9) if s not in (c1, k1)]
    with refusing(faults):  # posted while nothing can be recorded: read back at the lock
        for seat in voters[:3]:
            await d.post_vote(seat, f"投 {k1}", k1)
        assert (await service.state(d.game_id)).posts == ()  # none of them could be recorded
    for seat in voters[3:]:
        await d.post_vote(seat, f"投 {k1}", k1)
    await d.lock()
    await drain(table)
    state = await service.state(d.game_id)
    day = [r for r in state.history if isinstance(r, DayRecord)][-1]
    assert dict(day.tally) == {k1: len(voters)}

    await d.power_by_menu(k2, "kill", c2)
    await d.lock()
    for seat in (s for s in range(1, 9) if s not in (c1, c2, k1)):
        await d.post_vote(seat, f"投 {k2}", k2)
    await d.lock()
    await drain(table)
    state = await service.state(d.game_id)
    assert state.over
    faulty = record_of(state, names={Seat(i): n for i, n in enumerate(table.names, 1)})
    assert_same_game(faulty, d, roles, SEED)
    assert len([p for p in table.public() if p.startswith("【看表】第1夜")]) == 1  # never doubled

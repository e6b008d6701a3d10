"""The bot's own backups (`[backup]`, `bot.runtime.backups`): a checked copy every `every`, named
by its time, the newest `keep` kept and nothing else in the folder touched; due from the newest
in the folder (a restart does not skip one); a failure logged, tried again later, never raised."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import sqlite3
import stat
from pathlib import Path

import pytest
from fakes import runtime_on

from bot.config import BackupSettings
from bot.runtime.backups import AutoBackups
from bot.runtime.metrics import Metrics
from bot.runtime.timing import FakeClock, SystemClock
from bot.store.db import resolve_url
from bot.store.migrate import upgrade

START = dt.datetime(2026, 12, 3, 4, 0, tzinfo=dt.UTC)


async def database(tmp_path: Path) -> Path:
    path = tmp_path / "faguan.db"
    await upgrade(f"sqlite+aiosqlite:///{path}")
    return path


def backups_of(path: Path, folder: Path, clock: object, **settings: object) -> AutoBackups:
    options = BackupSettings(folder=str(folder), **settings)  # type: ignore[arg-type]
    return AutoBackups(resolve_url(f"sqlite+aiosqlite:///{path}"), options, clock)  # type: ignore[arg-type]


async def test_a_backup_is_a_checked_copy_named_by_its_time_and_the_oldest_go(
    tmp_path: Path,
) -> None:
    path = await database(tmp_path)
    folder = tmp_path / "backups"
    folder.mkdir()
    (folder / "notes.txt").write_text("the operator's")
    (folder / "faguan-manual.db").write_text("not one of the bot's names")
    clock = FakeClock(START)
    auto = backups_of(path, folder, clock, keep=2)
    for _ in range(4):
        assert await auto.take() is not None
        clock.advance(dt.timedelta(hours=6))
    names = sorted(p.name for p in folder.iterdir())
    assert names == [
        "faguan-20261203T160000Z.db",
        "faguan-20261203T220000Z.db",
        "faguan-manual.db",
        "notes.txt",
    ]
    with sqlite3.connect(folder / names[1]) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("SELECT count(*) FROM alembic_version").fetchone() == (1,)


async def test_a_backup_is_the_owners_alone_whatever_the_umask(tmp_path: Path) -> None:
    path = await database(tmp_path)  # it holds the sealed seeds of the games in play
    path.chmod(0o600)
    auto = backups_of(path, tmp_path / "backups", FakeClock(START))
    old = os.umask(0o022)  # the usual one: what it makes, every local user reads
    try:
        taken = await auto.take()
    finally:
        os.umask(old)
    assert taken is not None and stat.S_IMODE(taken.stat().st_mode) == 0o600


async def test_the_next_backup_is_due_every_after_the_newest_in_the_folder(
    tmp_path: Path,
) -> None:
    path = await database(tmp_path)
    folder = tmp_path / "backups"
    clock = FakeClock(START)
    auto = backups_of(path, folder, clock, every=dt.timedelta(hours=6))
    assert auto.due() == START  # none yet (and no folder yet): now
    await auto.take()
    clock.advance(dt.timedelta(hours=1))
    restarted = backups_of(path, folder, clock, every=dt.timedelta(hours=6))
    assert restarted.due() == START + dt.timedelta(hours=6)  # a restart does not restart the count


async def test_a_failed_backup_is_logged_not_raised_and_tried_again_every_later(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock(START)
    auto = backups_of(tmp_path / "gone.db", tmp_path / "backups", clock)
    with caplog.at_level(logging.ERROR, logger="bot.runtime.backups"):
        assert await auto.take() is None
    assert "backup not taken: no database at" in caplog.text
    assert list((tmp_path / "backups").iterdir()) == []
    auto._tried = clock.now()  # what the timer notes before each try
    assert auto.due() == START + auto.every  # not at once, again and again


async def test_the_timer_takes_backups_until_closed(tmp_path: Path) -> None:
    path = await database(tmp_path)
    folder = tmp_path / "backups"
    auto = backups_of(path, folder, SystemClock(), every=dt.timedelta(seconds=1.1), keep=10)
    auto.start()
    try:
        async with asyncio.timeout(30):
            while len(auto.taken()) < 2:
                await asyncio.sleep(0.05)
    finally:
        auto.close()
    taken = auto.taken()
    assert taken[1][0] - taken[0][0] >= dt.timedelta(seconds=1)
    await asyncio.sleep(1.5)
    assert auto.taken() == taken  # closed: no more


async def test_a_runtime_with_a_backup_folder_runs_the_timer_and_stops_it(
    tmp_path: Path,
) -> None:
    w = await runtime_on(tmp_path, backup={"folder": str(tmp_path / "backups")})
    try:
        assert w.runtime.backups is not None
        async with asyncio.timeout(30):  # none in the folder: the first is due at once
            while not w.runtime.backups.taken():
                await asyncio.sleep(0.05)
    finally:
        w.runtime.close()
        await w.database.dispose()
    assert w.runtime.backups._task is None
    (one,) = w.runtime.backups.taken()
    with sqlite3.connect(one[1]) as conn:
        assert conn.execute("SELECT count(*) FROM games").fetchone() == (0,)


async def test_the_metrics_say_when_the_last_backup_was_taken_and_how_many_failed(
    tmp_path: Path,
) -> None:
    path = await database(tmp_path)
    clock = FakeClock(START)
    metrics = Metrics()
    good = backups_of(path, tmp_path / "backups", clock)
    good.metrics = metrics
    bad = backups_of(tmp_path / "gone.db", tmp_path / "elsewhere", clock)
    bad.metrics = metrics
    await good.take()
    await bad.take()
    await bad.take()
    assert (
        metrics.registry.get_sample_value("faguan_backup_taken_timestamp_seconds")
        == START.timestamp()
    )
    assert metrics.registry.get_sample_value("faguan_backups_failed_total") == 2


async def test_an_unforeseen_error_is_logged_and_the_timer_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = await database(tmp_path)
    auto = backups_of(path, tmp_path / "backups", SystemClock(), every=dt.timedelta(seconds=1.1))
    calls = 0

    def broken(*_: object) -> None:
        nonlocal calls
        calls += 1
        raise RuntimeError("a bug")

    monkeypatch.setattr("bot.runtime.backups.backup", broken)
    with caplog.at_level(logging.ERROR, logger="bot.runtime.backups"):
        auto.start()
        try:
            async with asyncio.timeout(30):
                while calls < 2:
                    await asyncio.sleep(0.05)
        finally:
            auto.close()
    assert "backup not taken: RuntimeError (a bug: please report it)" in caplog.text

"""`faguan run` and `faguan db upgrade` as a newcomer meets them; a real APScheduler deadline."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from gamebot import BotEnv, Driver, build_table, settings_for

from bot.cli import main
from bot.discord.client import create_bot
from bot.runtime.timing import DeadlineScheduler, SystemClock
from engine.commands import SetDeadline
from engine.model import Instant


def test_run_without_a_token_says_what_to_do(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["run"]) == 2
    err = capsys.readouterr().err
    assert "DISCORD_TOKEN" in err and "config.example.toml" in err


def test_run_names_every_config_mistake(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[game]\ntimezone = "Mars/Olympus"\nlanguage = "fr"\n[discord]\ntokn = "x"\n', "utf-8"
    )
    assert main(["run", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "game.timezone" in err and "game.language" in err and "tokn" in err


def test_db_upgrade_creates_the_schema(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    assert main(["db", "upgrade", "--database-url", f"sqlite:///{db}"]) == 0
    tables = {
        row[0]
        for row in sqlite3.connect(db).execute("select name from sqlite_master where type='table'")
    }
    assert {"games", "events", "outbox", "seats", "servers", "standings"} <= tables


async def test_a_real_apscheduler_deadline_locks_the_window(tmp_path: Path) -> None:
    clock = SystemClock()
    bot = create_bot(
        settings_for(tmp_path / "g.db"),
        clock=clock,
        scheduler=DeadlineScheduler(clock),
        seed_source=lambda: "s",
    )
    env = BotEnv(bot)
    table = build_table(env, 8)
    await env.start()
    try:
        assert not bot.runtime.scheduler.manual
        d = Driver(table, "v2")
        await d.start()
        soon = Instant(bot.runtime.now_ms() + 300)
        await bot.runtime.service.submit(d.game_id, SetDeadline(deadline=soon))
        for _ in range(200):  # a short real wait (at most 10 s) for APScheduler to fire
            await asyncio.sleep(0.05)
            state = await bot.runtime.service.state(d.game_id)
            if state.phase is not None and state.phase.label() == "day 1":
                break
        state = await bot.runtime.service.state(d.game_id)
        assert state.phase is not None and state.phase.label() == "day 1"
        assert any(p.startswith("【看表】第1夜截止") for p in table.public())
    finally:
        await env.shutdown()

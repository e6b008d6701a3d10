"""The bot on PostgreSQL (the same code, a URL): a game survives the server dropping every
connection mid-game."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest_asyncio
from conftest import EnvClock
from gamebot import Driver, Table, build_table
from simcord import Env

from bot.app import create_bot
from bot.config import load
from bot.timing import DeadlineScheduler

ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


@pytest_asyncio.fixture
async def pg_url() -> AsyncIterator[str]:
    name = f"faguan_bot_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(ADMIN)
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    finally:
        await admin.execute(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'")
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        await admin.close()


async def _drop_connections(url: str) -> int:
    name = url.rsplit("/", 1)[1]
    admin = await asyncpg.connect(ADMIN)
    try:
        rows = await admin.fetch(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            name,
        )
        return len(rows)
    finally:
        await admin.close()


async def test_a_game_on_postgresql_survives_dropped_connections(pg_url: str) -> None:
    clock = EnvClock()
    settings = load(
        {
            "discord": {"token": "t", "moderator_role": "主持人"},
            "database": {"url": pg_url},
            "game": {"schedule": {"power": "1h", "vote": "1h"}, "reminder": "off"},
        },
        env={},
    )
    bot = create_bot(settings, clock=clock, scheduler=DeadlineScheduler(clock), seed_source=lambda: "pg")
    env = Env(bot)
    clock.bind(env)
    table: Table = build_table(env, 8)
    await env.start()
    try:
        d = Driver(table, "v2")
        roles: dict[int, Any] = await d.start()
        killer = next(s for s, r in roles.items() if r == "killer")
        victim = next(s for s, r in roles.items() if r == "civilian")
        await d.power_by_menu(killer, "kill", victim)
        assert await _drop_connections(pg_url) >= 1  # the server drops the bot's connections
        await d.lock()
        state = await bot.service.state(d.game_id)
        assert not state.seat(victim).alive and state.phase is not None and state.phase.label() == "day 1"
        assert not await bot.service.repo.undone_effects(d.game_id)
    finally:
        await env.shutdown()

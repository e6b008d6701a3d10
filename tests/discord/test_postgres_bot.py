"""The bot on PostgreSQL (the same code, a URL): a game survives the server dropping every
connection mid-game, and the server itself stopping and starting again (a real restart)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from envclock import EnvClock
from faultkit import play_through_a_fault
from gamebot import BotEnv, Driver, Table, build_table
from pgserver import ThrowawayServer

from bot.config import load
from bot.discord.client import create_bot
from bot.runtime.timing import DeadlineScheduler

SEED = "pg"


@pytest_asyncio.fixture
async def pg_url(own_pg_server: ThrowawayServer) -> AsyncIterator[str]:
    """A database of its own on the session's own server (the test stops and starts that server)."""
    name = f"faguan_bot_{uuid.uuid4().hex[:10]}"
    await own_pg_server.create_database(name)
    try:
        yield own_pg_server.url(name)
    finally:
        await own_pg_server.drop_database(name)


@pytest_asyncio.fixture
async def pg_table(pg_url: str) -> AsyncIterator[Table]:
    clock = EnvClock()
    settings = load(
        {
            "discord": {"token": "t", "moderator_role": "主持人"},
            "database": {"url": pg_url},
            "game": {"schedule": {"power": "1h", "vote": "1h"}, "reminder": "off"},
        },
        env={},
    )
    bot = create_bot(
        settings, clock=clock, scheduler=DeadlineScheduler(clock), seed_source=lambda: SEED
    )
    env = BotEnv(bot, check_errors=False)
    clock.bind(env)
    table: Table = build_table(env, 8)
    table.url = pg_url  # type: ignore[attr-defined]
    await env.start()
    try:
        yield table
    finally:
        await env.shutdown()


async def test_a_game_on_postgresql_survives_dropped_connections(
    pg_table: Table, own_pg_server: ThrowawayServer
) -> None:
    table, bot = pg_table, pg_table.bot
    d = Driver(table, "v2")
    roles: dict[int, Any] = await d.start()
    killer = next(s for s, r in roles.items() if r == "killer")
    victim = next(s for s, r in roles.items() if r == "civilian")
    await d.power_by_menu(killer, "kill", victim)
    name = table.url.rsplit("/", 1)[1]  # type: ignore[attr-defined]
    assert await own_pg_server.drop_connections(name) >= 1
    await d.lock()
    state = await bot.runtime.service.state(d.game_id)
    assert (
        not state.seat(victim).alive and state.phase is not None and state.phase.label() == "day 1"
    )
    assert not await bot.runtime.service.repo.undone_effects(d.game_id)


async def test_a_game_on_postgresql_survives_the_server_restarting(
    pg_table: Table, own_pg_server: ThrowawayServer
) -> None:
    await play_through_a_fault(pg_table, own_pg_server.down, SEED)

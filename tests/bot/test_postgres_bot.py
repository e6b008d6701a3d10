"""The bot on PostgreSQL (the same code, a URL): a game survives the server dropping every
connection mid-game, and the server itself stopping and starting again (a real restart)."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import asyncpg
import pytest_asyncio
from conftest import EnvClock
from faultkit import play_through_a_fault
from gamebot import Driver, Table, build_table
from simcord import Env

from bot.app import create_bot
from bot.config import load
from bot.timing import DeadlineScheduler

ADMIN = "postgresql://postgres@127.0.0.1:5432/test"
SEED = "pg"


@pytest_asyncio.fixture
async def pg_url() -> AsyncIterator[str]:
    name = f"faguan_bot_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(ADMIN)
    await admin.execute(f'CREATE DATABASE "{name}"')
    await admin.close()
    try:
        yield f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    finally:
        admin = await asyncpg.connect(ADMIN)  # a new one: the server may have restarted
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


def _cluster(action: str) -> None:
    """Stop or start this machine's PostgreSQL server (as .ci/run starts it)."""
    version = sorted(p.name for p in Path("/etc/postgresql").iterdir())[-1]
    command = ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", action]
    subprocess.run([*command, "-m", "fast"] if action == "stop" else command, check=True, timeout=120)


@contextmanager
def server_down() -> Iterator[None]:
    """The PostgreSQL server stopped until the block ends, then started again."""
    _cluster("stop")
    try:
        yield
    finally:
        _cluster("start")


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
    bot = create_bot(settings, clock=clock, scheduler=DeadlineScheduler(clock), seed_source=lambda: SEED)
    env = Env(bot, check_errors=False)
    clock.bind(env)
    table: Table = build_table(env, 8)
    table.url = pg_url  # type: ignore[attr-defined]
    await env.start()
    try:
        yield table
    finally:
        await env.shutdown()


async def test_a_game_on_postgresql_survives_dropped_connections(pg_table: Table) -> None:
    table, bot = pg_table, pg_table.bot
    d = Driver(table, "v2")
    roles: dict[int, Any] = await d.start()
    killer = next(s for s, r in roles.items() if r == "killer")
    victim = next(s for s, r in roles.items() if r == "civilian")
    await d.power_by_menu(killer, "kill", victim)
    assert await _drop_connections(table.url) >= 1  # type: ignore[attr-defined]
    await d.lock()
    state = await bot.service.state(d.game_id)
    assert not state.seat(victim).alive and state.phase is not None and state.phase.label() == "day 1"
    assert not await bot.service.repo.undone_effects(d.game_id)


async def test_a_game_on_postgresql_survives_the_server_restarting(pg_table: Table) -> None:
    await play_through_a_fault(pg_table, server_down, SEED)

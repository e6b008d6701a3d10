"""Databases for the bench: a fresh SQLite file (WAL, the bot's own settings) or a fresh PostgreSQL
database, migrated, with the real `Repository` and `GameService` on top and a no-op performer.

Everything the bench measures goes through `bot.store.open_database`, so SQLite runs with exactly
the settings the bot uses (`journal_mode=WAL`, `synchronous=FULL`); the raw baselines use the
same engine.
"""

from __future__ import annotations

import datetime as dt
import itertools
import shutil
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from bot.config import parse_deadline_rule
from bot.runtime.schedule import GameSchedule
from bot.runtime.service import GameService, PlayerSpec
from bot.runtime.timing import SystemClock
from bot.store import Database, OutboxItem, Repository, open_database, upgrade

DEFAULT_PG_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
DISCORD_EPOCH_MS = 1_420_070_400_000
SERVER_ID = 1_300_000_000_000_000_777
PLAYERS = 16
RULESET = "v2"


class Snowflakes:
    """Discord-like message ids: milliseconds since the Discord epoch << 22 | a counter."""

    def __init__(self) -> None:
        self._seq = itertools.count()

    def next(self) -> int:
        """A new id, increasing, unique in this run."""
        ms = int(time.time() * 1000) - DISCORD_EPOCH_MS
        return (ms << 22) | (next(self._seq) & 0x3FFFFF)


async def noop_performer(item: OutboxItem) -> None:
    """Performs nothing: the effect is handed over and marked done, as after a Discord call."""


@dataclass
class Bench:
    """One database with the bot's storage and service on it."""

    backend: str
    url: str
    db: Database
    repo: Repository
    service: GameService

    async def new_service(self) -> GameService:
        """A fresh service (empty caches) on the same database: what a restarted bot has."""
        service = GameService(self.repo, SystemClock())
        service.set_performer(noop_performer)
        return service


def schedule() -> GameSchedule:
    """Day and night windows of 24 hours, so no deadline passes during a run."""
    return GameSchedule(
        power=parse_deadline_rule("24h"),
        vote=parse_deadline_rule("24h"),
        timezone=ZoneInfo("Asia/Shanghai"),
    )


def player_specs(game: int, players: int = PLAYERS) -> list[PlayerSpec]:
    """Players with Discord-like ids and names 玩家1…玩家N."""
    base = 1_400_000_000_000_000_000 + game * 100
    return [PlayerSpec(user_id=base + i, name=f"玩家{i}") for i in range(1, players + 1)]


async def create_game(service: GameService, game: int, *, ruleset: str = RULESET) -> int:
    """A started game (deal, night 1), created through the service as `/game start` does."""
    return await service.create_game(
        server_id=SERVER_ID,
        ruleset=ruleset,
        players=player_specs(game),
        seed=f"bench-{game}",
        options={"tie": "lots", "language": "zh-CN"},
        channels={"game": str(10_000 + game), "vote": str(20_000 + game)},
        schedule=schedule(),
    )


async def lock_now(service: GameService, game_id: int) -> None:
    """Close the open window now (a moderator's advance): night 1 → day 1's vote window."""
    state = await service.state(game_id)
    info = await service.info(game_id)
    outcome = await service.submit(game_id, service.lock_command(state, info, forced=True))
    if outcome.error is not None:
        raise RuntimeError(f"game {game_id}: lock refused: {outcome.error.key}")


def sqlite_url(path: Path) -> str:
    """The bot's URL form for a SQLite file."""
    return f"sqlite+aiosqlite:///{path}"


async def _pg_admin(admin_url: str, sql: str) -> None:
    engine = create_async_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            await connection.execute(text(sql))
    finally:
        await engine.dispose()


async def pg_reachable(url: str) -> str | None:
    """None if PostgreSQL answers at `url`, else why not (one line)."""
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
        return None
    except Exception as exc:  # any failure to connect means: skip PostgreSQL, say why
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".strip()
    finally:
        await engine.dispose()


@asynccontextmanager
async def open_bench(
    backend: str, pg_url: str = DEFAULT_PG_URL, **engine: Any
) -> AsyncIterator[Bench]:
    """A fresh, migrated database of `backend` (`sqlite` or `postgresql`), removed afterwards."""
    workdir: Path | None = None
    pg_name: str | None = None
    if backend == "sqlite":
        workdir = Path(tempfile.mkdtemp(prefix="faguan-bench-"))
        url = sqlite_url(workdir / "bench.db")
    elif backend == "postgresql":
        pg_name = f"faguan_bench_{uuid.uuid4().hex[:12]}"
        await _pg_admin(pg_url, f'CREATE DATABASE "{pg_name}"')
        url = make_url(pg_url).set(database=pg_name).render_as_string(hide_password=False)
    else:
        raise ValueError(f"unknown backend {backend!r}: sqlite or postgresql")
    db: Database | None = None
    repo: Repository | None = None
    try:
        await upgrade(url)
        db = open_database(url, **engine)
        repo = Repository(db.sessions)
        service = GameService(repo, SystemClock())
        service.set_performer(noop_performer)
        yield Bench(backend=backend, url=url, db=db, repo=repo, service=service)
    finally:
        if db is not None:
            if repo is not None:
                await repo.flush()
            await db.dispose()
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
        if pg_name is not None:
            await _pg_admin(pg_url, f'DROP DATABASE IF EXISTS "{pg_name}" WITH (FORCE)')


def utcnow() -> dt.datetime:
    """Now, aware UTC (what the store writes)."""
    return dt.datetime.now(dt.UTC)

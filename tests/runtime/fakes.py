"""A runtime without Discord: a fake port (posts held per channel, private messages kept, the
servers it serves) and a runtime wired to it on a fresh SQLite file, with a fake clock and a
manual scheduler — what `bot.discord.client.FaguanBot` builds, minus the client."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from bot.config import Settings, load
from bot.runtime.port import ChannelPost
from bot.runtime.runtime import Runtime
from bot.runtime.service import GameService
from bot.runtime.timing import DeadlineScheduler, FakeClock
from bot.store import Database, OutboxItem, Repository, open_database, upgrade


@dataclass
class FakePort:
    """`ChatPort` as a test sees it: what it would have read and sent."""

    servers: set[int] = field(default_factory=lambda: {1, 2})
    posts: dict[int, list[ChannelPost]] = field(default_factory=dict)
    """Channel id → people's posts there, oldest first."""
    sent: list[tuple[int, str]] = field(default_factory=list)
    """(user id, text) of every private message sent."""
    closed_dms: set[int] = field(default_factory=set)
    stuck: list[tuple[int, int]] = field(default_factory=list)
    stuck_privately: list[bool] = field(default_factory=list)
    reconciled: list[int] = field(default_factory=list)
    recovering_seen: list[bool] = field(default_factory=list)
    lost: dict[int, str] = field(default_factory=dict)
    """Game id → its channel ("game", "vote") deleted on the platform."""
    told_stopped: list[tuple[int, str]] = field(default_factory=list)

    def serves(self, server_id: int) -> bool:
        return server_id in self.servers

    def member_name(self, server_id: int, user_id: int) -> str | None:
        return None

    async def posts_after(self, channel_id: int, after_id: int) -> AsyncIterator[ChannelPost]:
        for post in self.posts.get(channel_id, []):
            if post.id > after_id:
                yield post

    async def send_private(self, user_id: int, text: str) -> bool:
        if user_id in self.closed_dms:
            return False
        self.sent.append((user_id, text))
        return True

    async def tell_stuck(self, game_id: int, attempts: int, *, privately: bool = False) -> None:
        self.stuck.append((game_id, attempts))
        self.stuck_privately.append(privately)

    async def lost_channel(self, game_id: int) -> str | None:
        return self.lost.get(game_id)

    async def tell_stopped(self, game_id: int, lost: str) -> None:
        self.told_stopped.append((game_id, lost))

    async def reconcile_permissions(self, game_id: int) -> None:
        self.reconciled.append(game_id)

    def recovering(self, on: bool) -> None:
        self.recovering_seen.append(on)


def settings(
    db: Path,
    discord: dict[str, object] | None = None,
    metrics: dict[str, object] | None = None,
    backup: dict[str, object] | None = None,
    **game: object,
) -> Settings:
    return load(
        {
            "metrics": metrics or {},
            "backup": backup or {},
            "discord": {"token": "test-token", **(discord or {})},
            "database": {"url": f"sqlite+aiosqlite:///{db}"},
            "game": {"schedule": {"power": "1h", "vote": "1h"}, "reminder": "off", **game},
        },
        env={},
    )


@dataclass
class Wired:
    runtime: Runtime
    port: FakePort
    clock: FakeClock
    database: Database

    async def restart(self, port: FakePort | None = None, config: Settings | None = None) -> Wired:
        """A new runtime on the same database (the old one's jobs find nothing to do)."""
        self.runtime.close()
        config = config or self.runtime.settings
        return await wire(config, self.database, self.clock, port or self.port)


async def wire(config: Settings, database: Database, clock: FakeClock, port: FakePort) -> Wired:
    runtime = Runtime(config, port=port, clock=clock, scheduler=DeadlineScheduler(clock))
    service = GameService(Repository(database.sessions), clock)
    runtime.start(service)
    return Wired(runtime, port, clock, database)


async def runtime_on(
    tmp: Path,
    port: FakePort | None = None,
    metrics: dict[str, object] | None = None,
    backup: dict[str, object] | None = None,
    **game: object,
) -> Wired:
    """A started runtime on a fresh, migrated SQLite file (`metrics`, `backup`: those tables)."""
    db = tmp / "runtime.db"
    config = settings(db, metrics=metrics, backup=backup, **game)
    await upgrade(config.database.url)
    # from now: a catch-up reads from the game's creation, which the database stamps
    clock = FakeClock(dt.datetime.now(dt.UTC).replace(microsecond=0))
    return await wire(config, open_database(config.database.url), clock, port or FakePort())


class Performer(Protocol):
    """A test's stand-in for Discord: performs outbox items; `released` ends a held call."""

    released: asyncio.Event

    async def __call__(self, item: OutboxItem) -> None: ...


P = TypeVar("P", bound=Performer)


@contextlib.asynccontextmanager
async def performing(tmp: Path, platform: P) -> AsyncIterator[tuple[Wired, P]]:
    """A started runtime whose effects `platform` performs; at the end a call still held in
    flight (a failed test's) is released before the runtime closes."""
    w = await runtime_on(tmp)
    w.runtime.service.set_performer(platform)
    try:
        yield w, platform
    finally:
        platform.released.set()
        w.runtime.close()
        await w.database.dispose()

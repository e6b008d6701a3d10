"""Shared scaffolding for end-to-end game tests on simcord: a bot from our factory on a fresh
SQLite file, a guild with a moderator and N players, and helpers to play through Discord only."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import discord
from simcord import ChannelHandle, Env, GuildHandle, MemberActor, RoleHandle

from bot.app import FaguanBot, create_bot
from bot.config import load
from bot.timing import DeadlineScheduler

GUILD_ID = 1_300_000_000_000_000_777


def settings_for(db: Path, **game: Any) -> Any:
    """Settings for a test bot: its own SQLite file, 1-hour windows by default."""
    return load(
        {
            "discord": {"token": "test-token", "moderator_role": "主持人"},
            "database": {"url": f"sqlite+aiosqlite:///{db}"},
            "game": {"schedule": {"power": "1h", "vote": "1h"}, "reminder": "off", **game},
        },
        env={},
    )


def make_bot(db: Path, clock: Any, seed: str = "e2e-seed") -> FaguanBot:
    """A bot from the production factory, on the simcord clock, with a fixed seed."""
    return create_bot(settings_for(db), clock=clock, scheduler=DeadlineScheduler(clock), seed_source=lambda: seed)


@dataclass
class Table:
    """A guild with a game channel, a moderator and players."""

    env: Env
    guild: GuildHandle
    channel: ChannelHandle
    moderator: MemberActor
    players: list[MemberActor]
    mod_role: RoleHandle
    outside: MemberActor
    names: list[str] = field(default_factory=list)

    @property
    def bot(self) -> FaguanBot:
        bot = self.env.bot
        assert isinstance(bot, FaguanBot)
        return bot

    def seat_of(self, member: MemberActor) -> int:
        return self.players.index(member) + 1

    def player(self, seat: int) -> MemberActor:
        return self.players[seat - 1]

    async def advance(self, seconds: float) -> None:
        await self.env.advance_time(seconds)

    async def run_deadline(self) -> list[str]:
        """Move the clock to the game's deadline and fire it through the scheduler."""
        scheduler = self.bot.scheduler
        jobs = scheduler.jobs()
        assert jobs, "no deadline scheduled"
        when = min(j.when for j in jobs)
        now = self.env.now()
        if when > now:
            await self.env.advance_time((when - now).total_seconds())
        fired = await scheduler.run_due()
        await self.env.settle()
        return fired

    def dms(self, member: MemberActor) -> list[discord.Message]:
        channel = member.user.dm_channel
        return list(channel.history()) if channel is not None else []

    def public(self) -> list[str]:
        return [m.content for m in self.channel.history()]


def build_table(env: Env, players: int) -> Table:
    guild = env.create_guild("杀人游戏", id=GUILD_ID)
    mod_role = guild.create_role("主持人")
    channel = guild.create_text_channel("game")
    moderator = guild.add_member(env.create_user("mod"), roles=[mod_role])
    names = [f"玩家{i}" for i in range(1, players + 1)]
    members = [guild.add_member(env.create_user(name)) for name in names]
    outside = guild.add_member(env.create_user("路人"))
    return Table(env=env, guild=guild, channel=channel, moderator=moderator, players=members, mod_role=mod_role, outside=outside, names=names)


def at(hour: int, minute: int = 0, second: int = 0, ms: int = 0) -> dt.datetime:
    return dt.datetime(2026, 1, 1, hour, minute, second, ms * 1000, tzinfo=dt.UTC)

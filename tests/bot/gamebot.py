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
    return create_bot(
        settings_for(db), clock=clock, scheduler=DeadlineScheduler(clock), seed_source=lambda: seed
    )


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
        jobs = [j for j in scheduler.jobs() if j.id.endswith(":deadline")]  # not reminders
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
    return Table(
        env=env,
        guild=guild,
        channel=channel,
        moderator=moderator,
        players=members,
        mod_role=mod_role,
        outside=outside,
        names=names,
    )


def at(hour: int, minute: int = 0, second: int = 0, ms: int = 0) -> dt.datetime:
    return dt.datetime(2026, 1, 1, hour, minute, second, ms * 1000, tzinfo=dt.UTC)


# -- driving a game through Discord only, and the same game through `faguan replay` -----------------


class Driver:
    """Plays steps through Discord and records the same steps for the replay."""

    def __init__(self, table: Table, ruleset: str, **new_options: Any) -> None:
        self.table = table
        self.ruleset = ruleset
        self.new_options = new_options
        self.steps: list[dict[str, Any]] = []
        self.game_id = 0

    async def start(self) -> dict[int, str]:
        t = self.table
        r = await t.moderator.slash(t.channel, "game new", ruleset=self.ruleset, **self.new_options)
        assert r.response is not None and not r.ephemeral
        for p in t.players:
            await p.slash(t.channel, "game join")
        await t.moderator.slash(t.channel, "game start")
        self.game_id = t.bot.channel_games[t.channel.id]
        state = await t.bot.service.state(self.game_id)
        return {int(s.seat): s.role.value for s in state.seats}

    def name(self, seat: int) -> str:
        return self.table.names[seat - 1]

    def _dm_with(self, seat: int, custom_id_prefix: str) -> discord.Message:
        for message in reversed(self.table.dms(self.table.player(seat))):
            for row in message.components:
                for child in getattr(row, "children", []):
                    if str(getattr(child, "custom_id", "")).startswith(custom_id_prefix):
                        return message
        raise AssertionError(f"seat {seat} has no DM with {custom_id_prefix}")

    async def power_by_menu(self, seat: int, power: str, target: int | None) -> Any:
        """Choose in the DM's select menu (the way most players act)."""
        state = await self.table.bot.service.state(self.game_id)
        assert state.window is not None
        prefix = f"faguan:act:{self.game_id}:{state.window.number}:{power}"
        message = self._dm_with(seat, prefix)
        result = await self.table.player(seat).user.select(
            message, ["pass" if target is None else str(target)], custom_id=prefix
        )
        self._power_step(seat, power, target)
        return result

    async def power_by_command(self, seat: int, power: str, target: int | None) -> Any:
        """/act or /pass in the game channel (answered ephemerally)."""
        member = self.table.player(seat)
        if target is None:
            result = await member.slash(self.table.channel, "pass", power=power)
        else:
            result = await member.slash(self.table.channel, "act", power=power, target=target)
        self._power_step(seat, power, target)
        return result

    def _power_step(self, seat: int, power: str, target: int | None) -> None:
        step: dict[str, Any] = {"do": "power", "by": self.name(seat), "power": power}
        if target is None:
            step["pass"] = True
        else:
            step["target"] = self.name(target)
        self.steps.append(step)

    async def post_vote(self, seat: int, text: str, target: int | None) -> discord.Message:
        """A public vote post in the vote channel; `target` None is an abstention."""
        message = await self.table.player(seat).send(self.table.channel, text)
        await self.table.env.settle()
        self.steps.append(
            {
                "do": "vote",
                "by": self.name(seat),
                "target": "abstain" if target is None else self.name(target),
            }
        )
        return message

    async def slash_vote(self, seat: int, target: int | None) -> Any:
        result = await self.table.player(seat).slash(
            self.table.channel, "vote", target="abstain" if target is None else str(target)
        )
        self.steps.append(
            {
                "do": "vote",
                "by": self.name(seat),
                "target": "abstain" if target is None else self.name(target),
            }
        )
        return result

    async def last_words(self, seat: int, words: str) -> None:
        member = self.table.player(seat)
        shown = await member.slash(self.table.channel, "lastwords")
        assert shown.modal is not None, shown.response
        await member.submit_modal(shown, {"words": words})
        self.steps.append({"do": "last_words", "by": self.name(seat), "text": words})

    async def lock(self) -> None:
        fired = await self.table.run_deadline()
        assert fired, "the deadline did not fire"
        self.steps.append({"do": "lock"})

    def replay_input(
        self, roles: dict[int, str], seed: str, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        return {
            "ruleset": self.ruleset,
            "seed": seed,
            "players": list(self.table.names),
            "roles": {self.name(s): r for s, r in roles.items()},
            "options": options or {},
            "steps": self.steps,
        }

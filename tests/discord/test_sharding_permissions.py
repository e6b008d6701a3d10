"""Sharding (each process owns its guilds' games and timers) and the start-up permission check."""

from __future__ import annotations

from pathlib import Path

import discord
from envclock import EnvClock
from gamebot import BotEnv, invite_permissions, settings_for
from simcord import Env

from bot.config import load
from bot.discord.client import FaguanBot, create_bot
from bot.runtime.timing import DeadlineScheduler


def sharded(db: Path, clock: EnvClock, ids: list[int]) -> FaguanBot:
    base = settings_for(db)
    settings = load(
        {
            "discord": {
                "token": "t",
                "moderator_role": "主持人",
                "shard_count": 2,
                "shard_ids": ids,
            },
            "database": {"url": base.database.url},
            "game": {"schedule": {"power": "1h", "vote": "1h"}, "reminder": "off"},
        },
        env={},
    )
    return create_bot(
        settings, clock=clock, scheduler=DeadlineScheduler(clock), seed_source=lambda: "s"
    )


async def _open_game(env: Env, shard: int, name: str) -> int:
    guild = env.create_guild(name, shard_id=shard)
    invite_permissions(env, guild)
    mod_role = guild.create_role("主持人")
    channel = guild.create_text_channel("game")
    moderator = guild.add_member(env.create_user(f"mod-{name}"), roles=[mod_role])
    players = [guild.add_member(env.create_user(f"{name}-{i}")) for i in range(8)]
    await env.settle()
    await moderator.slash(channel, "game new", ruleset="v2")
    for p in players:
        await p.slash(channel, "game join")
    await moderator.slash(channel, "game start")
    return channel.id


async def test_each_shard_owns_only_its_guilds_games_and_timers(tmp_path: Path) -> None:
    clock = EnvClock()
    both = sharded(tmp_path / "g.db", clock, [0, 1])
    assert isinstance(both, discord.AutoShardedClient)
    env = BotEnv(both)
    clock.bind(env)
    await env.start()
    try:
        mine = await _open_game(env, 0, "甲服")
        theirs = await _open_game(env, 1, "乙服")
        assert {mine, theirs} <= set(both.runtime.routes.channel_games)
        shard0 = sharded(tmp_path / "g.db", clock, [0])
        await env.restart_bot(shard0)
        await env.settle()
        assert (
            mine in shard0.runtime.routes.channel_games
            and theirs not in shard0.runtime.routes.channel_games
        )
        assert [job.id for job in shard0.runtime.scheduler.jobs()] == [
            f"game:{shard0.runtime.routes.channel_games[mine]}:deadline"
        ]
    finally:
        await env.shutdown()


async def test_missing_permissions_are_named_at_start(tmp_path: Path) -> None:
    clock = EnvClock()
    bot = create_bot(
        settings_for(tmp_path / "g.db"), clock=clock, scheduler=DeadlineScheduler(clock)
    )
    env = BotEnv(bot)
    clock.bind(env)
    guild = env.create_guild("小服")
    invite_permissions(env, guild)
    await env.start()
    try:
        assert bot.missing_permissions[guild.id] == []
        bot_role = guild.roles["TestBot"]
        weak = discord.Permissions(send_messages=True, read_message_history=True, view_channel=True)
        env.backend.edit_role(guild.id, bot_role.id, {"permissions": str(weak.value)})
        await env.settle()
        bot.check_permissions()
        # @everyone still gives Send Messages in Threads and Add Reactions (Discord's defaults)
        assert bot.missing_permissions[guild.id] == [
            "manage_roles",
            "manage_channels",
            "manage_threads",
            "manage_messages",
            "create_private_threads",
        ]
    finally:
        await env.shutdown()


async def test_a_game_id_from_another_server_is_not_reachable(tmp_path: Path) -> None:
    clock = EnvClock()
    bot = create_bot(
        settings_for(tmp_path / "g.db"),
        clock=clock,
        scheduler=DeadlineScheduler(clock),
        seed_source=lambda: "s",
    )
    env = BotEnv(bot)
    clock.bind(env)
    await env.start()
    try:
        mine = await _open_game(env, 0, "甲服")
        game_id = bot.runtime.routes.channel_games[mine]
        other = env.create_guild("乙服")
        invite_permissions(env, other)
        channel = other.create_text_channel("game")
        stranger = other.add_member(env.create_user("乙服的人"))
        await env.settle()
        r = await stranger.slash(channel, "game status", game_id=game_id)
        assert r.ephemeral and "no game" in r.response.content.lower()
    finally:
        await env.shutdown()

"""A server that changes under a game, or that withholds a permission: the bot without Manage
Roles, the players' role deleted by an admin (and deleted twice at the end), a player who left
the server dying, a killers' thread deleted before a dead killer leaves it. The game goes on;
no effect is left undone for good; nothing public or logged names a player or a role."""

from __future__ import annotations

import logging
from typing import Any

import discord
import pytest
import simcord.backend.ops.channels as ops
from gamebot import Driver, Table, by_role, invite_permissions, make_bot
from simcord.backend import errors as backend_errors

from bot.discord.client import FaguanBot
from bot.discord.override_log import LOG_CHANNEL
from engine.model import PhaseKind, Seat

SEED = "server-seed"
pytestmark = pytest.mark.table(seed=SEED)


def bot_guild(t: Table) -> discord.Guild:
    guild = t.bot.get_guild(t.guild.id)
    assert guild is not None
    return guild


def role_dms(t: Table) -> list[int]:
    """The seats whose holder got their role message (it has the confirm button's embed)."""
    return [t.seat_of(m) for m in t.players if any(msg.embeds for msg in t.dms(m))]


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


async def test_without_manage_roles_a_game_is_played_and_ended_without_its_role(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that took Manage Roles from the bot: the start logs that it cannot make the
    players' role nor set its own overwrite (naming no player), every player still gets their
    role message, a day opens with nothing to open the channels with, a restart reconciles
    nothing, and `/mod end` releases nothing — no effect left undone, nothing said publicly."""
    t = table
    invite_permissions(t.env, t.guild, without="manage_roles")
    await t.env.settle()
    caplog.set_level(logging.INFO, logger="bot")
    d = Driver(t, "basic")
    await d.start()
    assert role_dms(t) == list(range(1, 9))
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    assert "players_role" not in info.channels
    assert not any(r.name.startswith("法官·") for r in bot_guild(t).roles)
    said = warnings(caplog)
    assert "game 1: cannot set the bot's own overwrite" in said
    assert "game 1: cannot make the players' role (missing permission)" in said
    assert "game 1: no players' role to add the players to" in said
    assert sum("Discord refused a permission edit" in line for line in said) == 1  # told once
    await d.quiet_night()
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.window is not None and state.window.kind is PhaseKind.DAY
    assert not await t.bot.runtime.service.repo.undone_effects()

    restarted = make_bot(t.db, t.clock, seed=SEED)  # type: ignore[attr-defined]
    await t.env.restart_bot(restarted)
    await t.env.settle()
    assert isinstance(t.bot, FaguanBot)
    ended = await t.moderator.slash(t.channel, "mod end", winner="good")
    assert ended.ephemeral
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.over
    assert not await t.bot.runtime.service.repo.undone_effects()
    for text in warnings(caplog):
        assert not any(str(m.id) in text for m in t.players), text
    assert not any("Manage Roles" in p or "权限" in p for p in t.public())


async def test_a_players_role_deleted_by_an_admin_mid_game(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    """An admin deletes the game's players' role during night 1: the day opens all the same
    (nothing to open), and at the end nothing is left to release; when the role goes at the
    very moment the bot deletes it (404), that is logged, not retried."""
    t = table
    d = Driver(t, "basic")
    await d.start()
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    role_id = int(info.channels["players_role"])
    t.env.backend.delete_role(t.guild.id, role_id)
    await t.env.settle()
    assert bot_guild(t).get_role(role_id) is None
    await d.quiet_night()
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.window is not None and state.window.kind is PhaseKind.DAY
    await t.moderator.slash(t.channel, "mod end", winner="good")
    assert (await t.bot.runtime.service.state(d.game_id)).over
    assert not await t.bot.runtime.service.repo.undone_effects()

    # a second game: its role vanishes as the bot deletes it at the end
    second = t.guild.create_text_channel("game-2")
    t.channel, first = second, t.channel
    d2 = Driver(t, "basic")
    await d2.start()
    info = await t.bot.runtime.service.info(d2.game_id, refresh=True)
    role_id = int(info.channels["players_role"])
    caplog.set_level(logging.INFO, logger="bot")
    t.env.inject_error(
        "DELETE", f"/guilds/{t.guild.id}/roles/{role_id}", status=404, code=10011, times=1
    )
    await t.moderator.slash(t.channel, "mod end", winner="good")
    assert (await t.bot.runtime.service.state(d2.game_id)).over
    assert not await t.bot.runtime.service.repo.undone_effects()
    assert any(
        r.getMessage() == f"game {d2.game_id}: the players' role was already gone"
        for r in caplog.records
    )
    t.channel = first


async def test_a_player_who_left_the_server_can_still_be_voted_out(table: Table) -> None:
    """A player leaves the server mid-game and is voted out: their overwrite waits for them
    (no member to set it on), the game goes on to the night, no effect is stuck."""
    t = table
    d = Driver(t, "basic")
    roles = await d.start()
    await d.quiet_night()
    leaver = by_role(roles, "civilian")[0]
    t.guild.remove_member(t.player(leaver))
    await t.env.settle()
    assert bot_guild(t).get_member(t.player(leaver).id) is None
    await d.vote_out(leaver)
    state = await t.bot.runtime.service.state(d.game_id)
    assert not state.seat(leaver).alive
    assert state.window is not None and state.window.kind is PhaseKind.NIGHT
    assert not await t.bot.runtime.service.repo.undone_effects()
    channel = bot_guild(t).get_channel(t.channel.id)
    assert isinstance(channel, discord.TextChannel)
    assert channel.overwrites_for(discord.Object(t.player(leaver).id)).is_empty()


async def test_a_dead_killer_leaves_a_team_thread_an_admin_deleted(table: Table) -> None:
    """The killers' thread is deleted by an admin; a killer voted out then "leaves" it: nothing
    to leave, no error, nothing stuck, and the dead killer is silenced in the game channel."""
    t = table
    d = Driver(t, "basic")
    roles = await d.start()
    await d.quiet_night()
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    thread_id = int(info.channels["thread_killers"])
    t.env.backend.delete_channel(thread_id)
    await t.env.settle()
    killer = by_role(roles, "killer")[0]
    await d.vote_out(killer)
    state = await t.bot.runtime.service.state(d.game_id)
    assert not state.seat(killer).alive
    undone = [i.payload["type"] for i in await t.bot.runtime.service.repo.undone_effects()]
    assert "LeaveTeamThreads" not in undone and "SeatLeft" not in undone
    channel = bot_guild(t).get_channel(t.channel.id)
    assert isinstance(channel, discord.TextChannel)
    assert channel.overwrites_for(discord.Object(t.player(killer).id)).send_messages is False


async def test_a_player_who_left_before_the_start_is_dealt_in_without_the_role(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    """A signed-up player leaves the server before the moderator starts: the game starts with
    their seat (the sign-up is what counts), the others get the players' role, and the log
    says a player was not given it without naming them."""
    t = table
    await t.moderator.slash(t.channel, "game new", ruleset="basic")
    for member in t.players:
        await member.slash(t.channel, "game join")
    gone = t.player(5)
    t.guild.remove_member(gone)
    await t.env.settle()
    caplog.set_level(logging.WARNING, logger="bot")
    started = await t.moderator.slash(t.channel, "game start")
    assert started.ephemeral
    game_id = t.bot.runtime.routes.channel_games[t.channel.id]
    state = await t.bot.runtime.service.state(game_id)
    assert state.seat_of(str(gone.id)) is not None
    info = await t.bot.runtime.service.info(game_id, refresh=True)
    role = bot_guild(t).get_role(int(info.channels["players_role"]))
    assert role is not None
    assert sorted(m.id for m in role.members) == sorted(m.id for m in t.players if m is not gone)
    said = [m for m in warnings(caplog) if "not given the role" in m]
    assert said == [f"game {game_id}: a player was not given the role (NotFound)"]
    assert not await t.bot.runtime.service.repo.undone_effects()


@pytest.fixture
def threads_refuse_non_members(monkeypatch: pytest.MonkeyPatch) -> None:
    """Discord refuses to add a user who is not a member of the server to a thread (404,
    Unknown Member); simcord adds anyone: made to refuse as Discord does."""
    real = ops.ChannelMixin.add_thread_member

    def add(backend: Any, thread_id: int, user_id: int) -> Any:
        thread = backend.get_thread(thread_id)
        if user_id not in backend.get_guild(thread.guild_id).members:
            raise backend_errors.unknown_member()
        return real(backend, thread_id, user_id)

    monkeypatch.setattr(ops.ChannelMixin, "add_thread_member", add)


@pytest.mark.parametrize(("seat", "role"), [(3, "killer"), (4, "civilian")])
@pytest.mark.usefixtures("threads_refuse_non_members")
async def test_a_player_who_left_before_the_start_holds_nothing_up_whatever_their_role(
    table: Table, caplog: pytest.LogCaptureFixture, seat: int, role: str
) -> None:
    """A killer who left the server before the start cannot join the killers' thread: that is
    skipped, as giving them the players' role is, so every private effect of the night goes out
    (the police's menus) and nothing is logged at ERROR, as for a civilian who left. Retried
    for good, it held every later private effect and told the police (no menu) and the log
    that the one who left holds a team role."""
    t = table
    await t.moderator.slash(t.channel, "game new", ruleset="basic")
    for member in t.players:
        await member.slash(t.channel, "game join")
    t.guild.remove_member(t.player(seat))
    await t.env.settle()
    caplog.set_level(logging.DEBUG, logger="bot")
    await t.moderator.slash(t.channel, "game start")
    await t.env.settle()
    game_id = t.bot.runtime.routes.channel_games[t.channel.id]
    state = await t.bot.runtime.service.state(game_id)
    assert state.seat(Seat(seat)).role.value == role  # the deal this seed makes
    assert not await t.bot.runtime.service.repo.undone_effects()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not [r for r in caplog.records if r.levelno >= logging.INFO and "seat" in r.getMessage()]
    police = [int(s.seat) for s in state.seats if s.role.value == "police"]
    menus = {s: [m for m in t.dms(t.player(s)) if m.components and not m.embeds] for s in police}
    assert police and all(menus.values()), menus


async def test_a_warning_the_override_log_cannot_take_stays_in_the_log(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    """The bot joins a server without the configured moderator role whose override log channel
    it may not write in: the warning is logged, and that it could not be written there too;
    nothing is posted anywhere."""
    t = table
    caplog.set_level(logging.WARNING, logger="bot")
    guild = t.env.create_guild("另一个服务器")
    invite_permissions(t.env, guild)
    bot_role = guild.roles[t.env.backend.bot_user.name]
    log_here = guild.create_text_channel(
        "mod-log", overwrites={bot_role: discord.PermissionOverwrite(send_messages=False)}
    )
    await t.env.settle()
    await t.bot.runtime.service.repo.update_settings(guild.id, {LOG_CHANNEL: str(log_here.id)})
    joined = t.bot.get_guild(guild.id)
    assert joined is not None
    # Discord's join dispatches guild_join; simcord announces the guild as available (see
    # test_disclosure.py): the bot's handler is called as discord.py would, and awaited
    await t.bot.on_guild_join(joined)
    said = warnings(caplog)
    assert any("moderator role" in m and str(guild.id) in m for m in said)
    assert f"guild {guild.id}: could not write the warning to the override log (Forbidden)" in said
    assert list(log_here.history()) == []

"""Overwrites a game must set, lift or tell about outside its own game and vote channels, and
after its players left: a forum game's team threads live in the text channel it was opened from
(a dead player is denied posting in threads there, whatever their role, until the end, and the
bot keeps its own overwrite there to take them out of the threads); a player who left the server
keeps no deny of an ended game, and a deny left from before mutes no living player of the next
game; a forum game whose players' role an admin deleted tells its moderators, and its end opens
the forum to everyone again."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import discord
import pytest
from envclock import EnvClock
from gamebot import Driver, Table, by_role, invite_permissions, running_table
from simcord import BackendError
from simcord.backend.models.channel import Overwrite
from simcord.enums import OverwriteType

from bot.discord import permissions
from bot.discord.judge import judge_of
from bot.discord.override_log import LOG_CHANNEL
from bot.discord.permission_refusals import tell_role_gone

SEED = "server-seed"
THREADS = discord.Permissions(send_messages_in_threads=True).value
OUT = discord.Permissions(
    send_messages=True,
    send_messages_in_threads=True,
    create_public_threads=True,
    create_private_threads=True,
    add_reactions=True,
).value
"""`bot.discord.permissions.OUT`: what a player out of the game is denied in its channels."""


pytestmark = pytest.mark.table(seed=SEED)


def members_overwrites(t: Table, channel_id: int) -> dict[int, tuple[int, int]]:
    """The channel's member overwrites as Discord holds them: member → (allow, deny)."""
    channel = t.env.backend.get_channel(channel_id)
    return {
        o.target_id: (o.allow, o.deny) for o in channel.overwrites if o.type == OverwriteType.MEMBER
    }


def players_overwrites(t: Table, channel_id: int) -> dict[int, tuple[int, int]]:
    players = {m.id for m in t.players}
    return {k: v for k, v in members_overwrites(t, channel_id).items() if k in players}


def teams_channel(t: Table) -> int:
    """The text channel a forum game was opened from: its team threads are there."""
    return t.guild.channels["game"].id


async def team_thread(t: Table, game_id: int, team: str) -> discord.Thread:
    info = await t.bot.runtime.service.info(game_id, refresh=True)
    thread = t.bot.get_channel(int(info.channels[f"thread_{team}"]))
    assert isinstance(thread, discord.Thread)
    return thread


def leaving_threads_fails(t: Table, thread_id: int) -> None:
    """Discord refuses to take anyone out of this thread for now (an archived thread's 400): the
    private step that takes a dead player out waits, and is tried again later."""
    t.env.inject_error(
        "DELETE",
        f"/channels/{thread_id}/thread-members/*",
        status=400,
        code=50083,
        message="Thread is archived",
        times=None,
    )


@pytest.mark.table(hosting="forum")
async def test_a_forum_games_dead_are_denied_its_team_threads_until_the_end(table: Table) -> None:
    """A killer voted out of a forum game whose removal from the killers' thread is not done yet
    cannot post there any more (the teams channel denies them posting in threads); a civilian
    voted out gets the very same overwrite there (nothing says who was a killer), and nothing
    else of that channel is denied them. The end lifts both."""
    t = table
    d = Driver(t, "basic")
    roles = await d.start()
    teams = teams_channel(t)
    await d.quiet_night()  # day 1
    thread = await team_thread(t, d.game_id, "killers")
    leaving_threads_fails(t, thread.id)
    killer, living_killer = by_role(roles, "killer")[:2]
    await d.vote_out(killer)  # night 2: the killer is out, still in the thread
    state = await t.bot.runtime.service.state(d.game_id)
    assert not state.seat(killer).alive
    assert t.player(killer).id in t.env.backend.get_thread(thread.id).thread_members
    handle = next(th for th in t.guild.channels["game"].threads if th.id == thread.id)
    with pytest.raises(BackendError, match="Missing Permissions"):
        await t.player(killer).send(handle, "我死了，但还能出主意：今晚杀3号")
    await t.player(living_killer).send(handle, "今晚杀3号")  # the living still plan there
    assert players_overwrites(t, teams) == {t.player(killer).id: (0, THREADS)}

    t.env.backend.faults.clear()
    await d.quiet_night()  # day 2
    civilian = by_role(roles, "civilian")[0]
    await d.vote_out(civilian)
    assert players_overwrites(t, teams) == {
        t.player(killer).id: (0, THREADS),
        t.player(civilian).id: (0, THREADS),
    }
    await t.moderator.slash(t.channel, "mod end", winner="good")
    await t.env.settle()
    assert (await t.bot.runtime.service.state(d.game_id)).over
    assert players_overwrites(t, teams) == {}


@pytest.mark.table(hosting="forum")
async def test_a_forum_games_bot_keeps_managing_its_team_threads(table: Table) -> None:
    """The server takes Manage Threads from the bot mid-game: its own overwrite on the teams
    channel (as on a text game's channel) still lets it take a dead killer out of the killers'
    thread, so no private effect is held behind that."""
    t = table
    d = Driver(t, "basic")
    roles = await d.start()
    await d.quiet_night()  # day 1
    invite_permissions(t.env, t.guild, without="manage_threads")
    await t.env.settle()
    killer = by_role(roles, "killer")[0]
    await d.vote_out(killer)  # night 2
    thread = await team_thread(t, d.game_id, "killers")
    assert t.player(killer).id not in t.env.backend.get_thread(thread.id).thread_members
    assert not await t.bot.runtime.service.repo.undone_effects()
    me = t.bot.get_guild(t.guild.id).me  # type: ignore[union-attr]
    teams = t.bot.get_channel(teams_channel(t))
    assert isinstance(teams, discord.TextChannel)
    assert teams.overwrites_for(me).manage_threads is True  # its own, as on a game channel


@pytest.mark.parametrize("hosting", ["text", "forum"])
async def test_a_player_who_left_keeps_no_deny_after_the_end(tmp_path: Path, hosting: str) -> None:
    """A player voted out leaves the server, and the game ends: their deny goes all the same
    (Discord keeps a member's overwrites when they leave), from the game channel or the forum,
    and from a forum game's teams channel; what an admin set on the same overwrite stays. Back
    on the server, they post again."""
    async with running_table(tmp_path / "g.db", 8, EnvClock(), SEED, hosting) as t:
        d = Driver(t, "basic")
        roles = await d.start()
        await d.quiet_night()  # day 1
        out = by_role(roles, "civilian")[0]
        await d.vote_out(out)  # night 2: `out` is denied in the game's channels
        user = t.player(out).user
        channels = [t.channel.id] if t.forum is None else [t.forum.id, teams_channel(t)]
        for channel in channels:
            assert user.id in members_overwrites(t, channel)
        embed = discord.Permissions(embed_links=True).value
        denied = members_overwrites(t, channels[0])[user.id][1]
        admins = Overwrite(target_id=user.id, type=OverwriteType.MEMBER, allow=embed, deny=denied)
        t.env.backend.set_overwrite(channels[0], admins)
        t.guild.remove_member(t.player(out))
        await t.env.settle()
        await t.moderator.slash(t.channel, "mod end", winner="good")
        await t.env.settle()
        assert (await t.bot.runtime.service.state(d.game_id)).over
        assert not await t.bot.runtime.service.repo.undone_effects()
        assert members_overwrites(t, channels[0])[user.id] == (embed, 0)
        for channel in channels[1:]:
            assert user.id not in members_overwrites(t, channel)
        back = t.guild.add_member(user)
        await t.env.settle()
        await back.send(t.guild.channels["game"], "游戏结束了，我回来了")


async def test_a_deny_left_from_before_mutes_no_living_player(table: Table) -> None:
    """A deny an earlier game left on a player in the game channel (they had left the server
    when it ended, before the end lifted such denies) is lifted when the next game there starts:
    they play and post; what a server's admin set on the same overwrite stays."""
    t = table
    player = t.player(3)
    embed = discord.Permissions(embed_links=True).value
    t.env.backend.set_overwrite(
        t.channel.id,
        Overwrite(target_id=player.id, type=OverwriteType.MEMBER, allow=embed, deny=OUT),
    )
    await t.env.settle()
    d = Driver(t, "basic")
    await d.start()
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.window is not None and state.seat(3).alive
    assert members_overwrites(t, t.channel.id)[player.id] == (embed, 0)
    await player.send(t.channel, "这局我活着，能发言")


async def role_deleted(t: Table) -> Driver:
    """A game started, whose players' role an admin deletes during night 1."""
    d = Driver(t, "basic")
    await d.start()
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    t.env.backend.delete_role(t.guild.id, int(info.channels["players_role"]))
    await t.env.settle()
    return d


@pytest.mark.parametrize(
    ("hosting", "what"), [("forum", "主帖"), ("text", "投票轮")], ids=["forum", "text"]
)
async def test_a_deleted_players_role_is_told_to_the_games_moderators(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, hosting: str, what: str
) -> None:
    """An admin deletes a game's players' role: a forum game's players can no longer post in its
    posts (a text game's channels are never shut again). The game's moderators are told by DM
    and in the override log, once, naming no player; the role is not made again."""
    async with running_table(tmp_path / "g.db", 8, EnvClock(), SEED, hosting) as t:
        caplog.set_level(logging.INFO, logger="bot")
        log_here = t.guild.create_text_channel("faguan-log")
        settings = {LOG_CHANNEL: str(log_here.id)}
        await t.bot.runtime.service.repo.update_settings(t.guild.id, settings)
        d = await role_deleted(t)
        await d.quiet_night()  # day 1: the channels open, with no role to open them to
        told = "⚠ 第1局：本局玩家的身份组“法官·第1局”在游戏进行中被删除。"
        dms = [m.content for m in t.dms(t.moderator)]
        assert [m[: len(told)] for m in dms] == [told] and what in dms[0]
        assert [m.content for m in log_here.history()] == dms
        said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert said == [
            "game 1: the players' role was deleted from the server while the game is in play; "
            "the game's moderators are told"
        ]
        roles = t.bot.get_guild(t.guild.id).roles  # type: ignore[union-attr]
        assert not any(r.name.startswith("法官·") for r in roles)
        await d.lock()  # night 2 opens: nothing told again
        assert len(t.dms(t.moderator)) == 1
        assert not await t.bot.runtime.service.repo.undone_effects()


@pytest.mark.table(hosting="forum")
async def test_a_forum_game_ended_without_its_role_opens_the_forum_again(table: Table) -> None:
    """The end of a forum game whose players' role an admin deleted opens the forum to everyone
    again, as it does when the role is there."""
    t = table
    d = await role_deleted(t)
    await t.moderator.slash(t.channel, "mod end", winner="good")
    await t.env.settle()
    assert (await t.bot.runtime.service.state(d.game_id)).over
    assert not await t.bot.runtime.service.repo.undone_effects()
    assert t.forum is not None
    forum_channel = t.bot.get_channel(t.forum.id)
    assert isinstance(forum_channel, discord.ForumChannel)
    assert forum_channel.overwrites_for(forum_channel.guild.default_role).is_empty()
    await t.outside.send(t.channel, "游戏结束了，路人也能说话")


@pytest.mark.table(hosting="forum")
async def test_a_players_role_missing_from_the_cache_still_opens_the_forum(table: Table) -> None:
    """The forum is shut to the players (as a 看表帖 leaves it) and the bot's cache does not
    hold the players' role (discord.py does not cache a role it makes; the gateway's event may
    come late): Discord has it, so the day's opening lets the players post in the main post all
    the same, and no one is told it was deleted."""
    t = table
    assert t.forum is not None
    d = Driver(t, "basic")
    await d.start()
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    role_id = int(info.channels["players_role"])
    shut = Overwrite(target_id=role_id, type=OverwriteType.ROLE, deny=THREADS)
    t.env.backend.set_overwrite(t.forum.id, shut)
    await t.env.settle()
    guild = t.bot.get_guild(t.guild.id)
    assert guild is not None
    guild._remove_role(role_id)
    await cannot_post(t, 1)
    await d.quiet_night()  # day 1 opens
    await t.player(1).send(t.channel, "白天了，我能发言")
    assert not t.dms(t.moderator)


async def cannot_post(t: Table, seat: int) -> None:
    with pytest.raises(BackendError, match="Missing Permissions"):
        await t.player(seat).send(t.channel, "现在能发言吗")


async def test_a_deleted_role_told_twice_at_once_is_told_once(table: Table) -> None:
    """A window's opening and a restart's reconcile notice the deleted role at once: the
    game's moderators get one DM."""
    t = table
    d = await role_deleted(t)
    judge = judge_of(t.bot)
    await asyncio.gather(tell_role_gone(judge, d.game_id), tell_role_gone(judge, d.game_id))
    await t.env.settle()
    assert len(t.dms(t.moderator)) == 1
    await d.quiet_night()  # the day's opening: nothing more
    assert len(t.dms(t.moderator)) == 1


UNKNOWN_OVERWRITE = 10009


def overwrite_refused(t: Table, channel_id: int, user_id: int) -> None:
    """From now on Discord answers an edit of this member's overwrite 404 (Unknown Overwrite), as
    it may for one who is no member of the server."""
    t.env.inject_error(
        "PUT",
        f"/channels/{channel_id}/permissions/{user_id}",
        status=404,
        code=UNKNOWN_OVERWRITE,
        message="Unknown Overwrite",
        times=None,
    )


def requests_about(t: Table, since: int, user_id: int) -> list[tuple[str, str]]:
    return [
        (r.method, r.path)
        for r in t.env.backend.http_requests[since:]
        if r.path.endswith(f"/{user_id}")
    ]


async def test_a_departed_players_overwrite_discord_will_not_edit_is_not_asked_again(
    table: Table,
) -> None:
    """A living player's stale deny, beside an admin's own allow, in the game channel; they left
    the server, and Discord answers the edit lifting the deny 404 (Unknown Overwrite). The
    window's opening tries once; the next windows ask nothing more about them (neither the
    member nor the edit), and the overwrite stays as it was."""
    t = table
    d = Driver(t, "basic")
    roles = await d.start()
    player = t.player(by_role(roles, "civilian")[0])
    embed = discord.Permissions(embed_links=True).value
    t.env.backend.set_overwrite(
        t.channel.id,
        Overwrite(target_id=player.id, type=OverwriteType.MEMBER, allow=embed, deny=OUT),
    )
    t.guild.remove_member(player)
    overwrite_refused(t, t.channel.id, player.id)
    await t.env.settle()
    since = len(t.env.backend.http_requests)
    await d.quiet_night()  # day 1: tried once
    assert ("PUT", f"/channels/{t.channel.id}/permissions/{player.id}") in requests_about(
        t, since, player.id
    )
    since = len(t.env.backend.http_requests)
    await d.lock()  # night 2
    await d.quiet_night()  # day 2
    assert requests_about(t, since, player.id) == []
    assert members_overwrites(t, t.channel.id)[player.id] == (embed, OUT)
    assert not await t.bot.runtime.service.repo.undone_effects()


async def test_a_departed_players_overwrite_of_the_games_fields_alone_is_deleted_instead(
    table: Table,
) -> None:
    """Discord will not edit a departed player's overwrite holding nothing but what the game
    sets: lifting part of it, the bot deletes it instead (the rest waits for them, as a new
    deny does)."""
    t = table
    player = t.player(3)
    t.env.backend.set_overwrite(
        t.channel.id, Overwrite(target_id=player.id, type=OverwriteType.MEMBER, deny=OUT)
    )
    t.guild.remove_member(player)
    overwrite_refused(t, t.channel.id, player.id)
    await t.env.settle()
    channel = t.bot.get_channel(t.channel.id)
    assert isinstance(channel, discord.TextChannel)
    lifted = await permissions.set_member(t.bot, channel, str(player.id), (), permissions.TEAMS_OUT)
    await t.env.settle()
    assert lifted and player.id not in members_overwrites(t, t.channel.id)

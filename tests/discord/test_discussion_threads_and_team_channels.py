"""Threads and who may read or post in them.

- A public thread of a text game's discussion channel is the discussion: Discord's overwrites
  (森林老人's silence denies Send Messages; a shut window closes the channel to the players' role)
  do not reach it, so the bot takes down a post there by a player who may not speak in the
  discussion now, and tells them privately why. The game's own team threads are no such thread.
- The text channel holding a forum game's team threads is no place for a text game: that game's
  overwrites for a player out of it would mute them in the forum game's team threads.
- Discord shows every private thread to a member with Manage Threads (or Administrator): a player
  who has it is warned at `/game join`, and the moderator told at `/game start`.
"""

from __future__ import annotations

from pathlib import Path

import discord
import pytest
from envclock import EnvClock
from gamebot import Driver, Table, by_role, running_table
from simcord import BackendError, ChannelHandle, MemberActor

from bot.records.i18n import render
from engine.model import Seat

PUBLIC_THREAD = 11


async def open_thread(t: Table, who: MemberActor, name: str) -> ChannelHandle:
    """A public thread of the game channel, opened by `who` as a Discord client does (Discord
    asks for Create Public Threads, which no overwrite of the game denies a living player)."""
    backend = t.env.backend
    backend.require_permissions(t.guild.id, who.id, t.channel.id, "create_public_threads")
    made = backend.create_thread(t.channel.id, name, who.id, type=PUBLIC_THREAD)
    await t.env.settle()
    return next(h for h in t.channel.threads if h.id == made.id)


def shown(where: ChannelHandle, message: discord.Message) -> discord.Message | None:
    return next((m for m in where.history() if m.id == message.id), None)


def told(t: Table, who: MemberActor) -> list[str]:
    return [m.content for m in t.dms(who)]


async def test_a_silenced_players_post_edit_and_reaction_in_a_public_thread_are_taken_down(
    tmp_path: Path,
) -> None:
    async with running_table(tmp_path / "g.db", 11, EnvClock(), "silence") as t:
        d = Driver(t, "v4_butterfly")
        roles = await d.start()
        elder = by_role(roles, "elder")[0]
        quiet = by_role(roles, "killer")[0]  # silenced, and still talks in the team's thread
        other = by_role(roles, "civilian")[0]
        thread = await open_thread(t, t.player(other), "讨论")
        said = await t.player(quiet).send(thread, "夜里先说一句")  # night 1: open to all
        chat = await t.player(other).send(thread, "我也说一句")
        await d.power_by_menu(elder, "silence", quiet)
        await d.lock()  # day 1: `quiet` may not speak in the discussion
        state = await t.bot.runtime.service.state(d.game_id)
        assert state.seat(Seat(quiet)).alive and state.window is not None

        before = len(told(t, t.player(quiet)))
        post = await t.player(quiet).send(thread, "我被禁言了，但在子区里照样发言")
        await t.env.settle()
        assert shown(thread, post) is None
        notice = render("zh-CN", "notice.thread_post_removed_silenced", {"game": d.game_id})
        assert told(t, t.player(quiet))[before:] == [notice]

        kept = await t.player(other).send(thread, "我可以说话")
        await t.env.settle()
        assert shown(thread, kept) is not None

        await t.player(quiet).edit(said, "禁言了我也要改")  # no Send Messages needed to edit
        await t.env.settle()
        assert shown(thread, said) is None
        assert "禁言" in told(t, t.player(quiet))[-1]

        await t.player(other).react(chat, "👍")
        await t.player(quiet).react(chat, "👍")
        await t.env.settle()
        post_now = shown(thread, chat)
        assert post_now is not None
        assert [(str(r.emoji), r.count) for r in post_now.reactions] == [("👍", 1)]

        info = await t.bot.runtime.service.info(d.game_id, refresh=True)
        team = next(h for h in t.channel.threads if h.id == int(info.channels["thread_killers"]))
        plan = await t.player(quiet).send(team, "白天在杀手讨论串里说话")
        await t.env.settle()
        assert shown(team, plan) is not None  # the team thread is the team's, not the discussion


async def test_while_the_discussion_is_shut_a_post_in_its_public_thread_is_taken_down(
    tmp_path: Path,
) -> None:
    """A victim's choice (tie=victim_choice) shuts the discussion to every player: a living
    player's post in a public thread of it goes too, a non-player's stays (the overwrites shut
    the channel to the players' role only); once the discussion reopens, posts stay."""
    async with running_table(tmp_path / "g.db", 8, EnvClock(), "shut") as t:
        d = Driver(t, "v2", tie="victim_choice")
        roles = await d.start()
        killers = by_role(roles, "killer")
        victim, a, b, *_ = by_role(roles, "civilian")
        talker = next(s for s in range(1, 9) if s not in (victim, a, b, *killers))
        thread = await open_thread(t, t.player(talker), "场外讨论")
        for killer in killers:
            await d.power_by_command(killer, "kill", victim)
        await d.lock()  # day 1: `victim` is out
        voters = [s for s in range(1, 9) if s not in (victim, a, b)][:4]
        for _round in range(2):  # tied, then tied again in the run-off: the victim picks
            for voter, target in zip(voters, (a, a, b, b), strict=True):
                await d.post_vote(voter, f"投 {target}", target)
            await d.lock()
        state = await t.bot.runtime.service.state(d.game_id)
        assert state.window is not None and state.window.chooser == victim

        with pytest.raises(BackendError):  # the discussion itself is shut by the overwrites
            await t.player(talker).send(t.channel, "我来说两句")
        post = await t.player(talker).send(thread, "趁现在在子区说两句")
        await t.env.settle()
        assert shown(thread, post) is None
        notice = render("zh-CN", "notice.thread_post_removed_shut", {"game": d.game_id})
        assert told(t, t.player(talker))[-1] == notice
        onlooker = await t.outside.send(thread, "路人说一句")
        await t.env.settle()
        assert shown(thread, onlooker) is not None

        await t.player(victim).slash(t.channel, "choose", target=a)
        await d.lock()  # the pick is taken at the deadline
        state = await t.bot.runtime.service.state(d.game_id)
        assert state.window is not None and state.window.kind.value == "night"
        again = await t.player(talker).send(thread, "入夜了，可以说了")
        await t.env.settle()
        assert shown(thread, again) is not None


async def test_a_text_game_cannot_use_the_channel_holding_a_forum_games_team_threads(
    tmp_path: Path,
) -> None:
    async with running_table(tmp_path / "g.db", 8, EnvClock(), "server-seed", "forum") as t:
        teams_channel = t.channel
        d = Driver(t, "basic")
        await d.start()  # `t.channel` is the forum game's main post now
        other = t.guild.create_text_channel("别的频道")
        await t.env.settle()
        held = render(
            "en",
            "notice.teams_channel_held",
            {"channel": f"<#{teams_channel.id}>", "game": d.game_id},
        )
        r = await t.moderator.slash(teams_channel, "game new", ruleset="basic")
        assert r.response is not None and r.ephemeral and r.response.content == held
        r = await t.moderator.slash(other, "game new", ruleset="basic", vote_channel=teams_channel)
        assert r.response is not None and r.ephemeral and r.response.content == held
        assert await t.bot.runtime.service.repo.lobbies.newest(teams_channel.id) is None
        r = await t.moderator.slash(other, "game new", ruleset="basic")  # elsewhere: opened
        assert r.response is not None and not r.ephemeral


async def test_a_forum_sign_up_and_a_text_game_opened_meanwhile_do_not_both_start(
    tmp_path: Path,
) -> None:
    """A forum sign-up opened from a channel, then a text game opened and started in that
    channel: the forum game may not start (its team threads would be under the text game's
    overwrites)."""
    async with running_table(tmp_path / "g.db", 8, EnvClock(), "server-seed", "forum") as t:
        assert t.forum is not None
        teams_channel = t.channel
        r = await t.moderator.slash(teams_channel, "game new", ruleset="basic", forum=t.forum)
        assert r.response is not None and not r.ephemeral
        (main,) = t.forum.threads
        for p in t.players:
            await p.slash(main, "game join")
        text = Driver(t, "basic")
        forum, t.forum = t.forum, None
        await text.start()  # a text game in `teams_channel`
        t.forum = forum
        r = await t.moderator.slash(main, "game start")
        refused = render(
            "en",
            "notice.teams_channel_in_text_game",
            {"channel": f"<#{teams_channel.id}>", "game": text.game_id},
        )
        assert r.response is not None and r.ephemeral and r.response.content == refused
        assert main.id not in t.bot.runtime.routes.channel_games


async def test_a_text_sign_up_does_not_start_where_a_forum_game_started_meanwhile_keeps_its_teams(
    tmp_path: Path,
) -> None:
    async with running_table(tmp_path / "g.db", 8, EnvClock(), "server-seed", "forum") as t:
        assert t.forum is not None
        teams_channel = t.channel
        r = await t.moderator.slash(teams_channel, "game new", ruleset="basic")
        assert r.response is not None and not r.ephemeral
        for p in t.players:
            await p.slash(teams_channel, "game join")
        forum_game = Driver(t, "basic")
        await forum_game.start()  # a forum game whose team threads are in `teams_channel`
        r = await t.moderator.slash(teams_channel, "game start")
        refused = render(
            "en",
            "notice.teams_channel_held_start",
            {"channel": f"<#{teams_channel.id}>", "game": forum_game.game_id},
        )
        assert r.response is not None and r.ephemeral and r.response.content == refused
        assert teams_channel.id not in t.bot.runtime.routes.channel_games


async def test_a_player_who_can_read_every_private_thread_is_warned_and_named_at_the_start(
    tmp_path: Path,
) -> None:
    """A moderator who plays, their moderator role carrying Manage Threads, is warned privately
    at `/game join` (the join itself is public and says nothing of it); a player given
    Administrator after joining is named, with them, to the moderator at `/game start`. Both
    are asked of by their permission alone, before any role is dealt or whatever it is."""
    async with running_table(tmp_path / "g.db", 8, EnvClock(), "server-seed") as t:
        perms = discord.Permissions(manage_threads=True, manage_messages=True)
        t.env.backend.edit_role(t.guild.id, t.mod_role.id, {"permissions": perms.value})
        user4 = t.players[3].user
        t.guild.remove_member(t.players[3])
        t.players[3] = t.guild.add_member(user4, roles=[t.mod_role])  # a moderator who plays
        await t.env.settle()
        r = await t.moderator.slash(t.channel, "game new", ruleset="basic")
        assert r.response is not None and not r.ephemeral
        warning = render("en", "notice.sees_private_threads", {"channel": f"<#{t.channel.id}>"})
        for seat, p in enumerate(t.players, start=1):
            r = await p.slash(t.channel, "game join")
            assert r.response is not None and not r.ephemeral
            assert "Manage Threads" not in r.response.content
            private = [f.content for f in r.followups if f.ephemeral]
            assert private == ([warning] if seat == 4 else []), (seat, private)
        admin = t.guild.create_role("管理员", permissions=discord.Permissions(administrator=True))
        user6 = t.players[5].user
        t.env.backend.add_member_role(t.guild.id, user6.id, admin.id)
        await t.env.settle()
        r = await t.moderator.slash(t.channel, "game start")
        named = render(
            "en",
            "notice.players_see_private_threads",
            {
                "channel": f"<#{t.channel.id}>",
                "players": f"<@{t.players[3].id}>, <@{t.players[5].id}>",
            },
        )
        assert [f.content for f in r.followups if f.ephemeral][-1] == named
        assert not any("Manage Threads" in m for m in t.public())

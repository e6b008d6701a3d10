"""Only the living speak, where the rules let them, and the bot relays no pings (issue 13, points
3 and 4): a player out of the game loses every game channel and team thread at once, and a
restart gives nothing back; /vote posts only what the voter may vote; the end of a game leaves no
overwrite or role behind; relayed words ping nobody. What Discord allows without Send Messages or
Add Reactions (editing one's own earlier post, joining a reaction already there) is taken down
when the game keeps the player silent (out of the game; silenced, in the discussion)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import discord
import pytest
from envclock import EnvClock
from gamebot import (
    GUILD_ID,
    Driver,
    Table,
    by_role,
    invite_permissions,
    make_bot,
    running_table,
)
from simcord import BackendError, ChannelHandle, MemberActor

from bot.discord.client import FaguanBot
from engine.commands import Lock, PostVote
from engine.effects import ReleaseChannels, SeatLeft
from engine.game import apply, new_game, replay_events, start_events
from engine.model import Instant, Seat
from engine.publish import effects_for
from engine.state import DayRecord, GameState

SEED = "speech-seed"
pytestmark = pytest.mark.table(seed=SEED)


async def restart(t: Table) -> FaguanBot:
    bot = make_bot(t.db, t.clock, seed=SEED)  # type: ignore[attr-defined]
    await t.env.restart_bot(bot)
    await t.env.settle()
    return bot


def thread_of(t: Table, key: str, channels: dict[str, Any]) -> ChannelHandle:
    return next(h for h in t.channel.threads if h.id == int(channels[key]))


def guild(t: Table) -> discord.Guild:
    found = t.bot.get_guild(GUILD_ID)
    assert found is not None
    return found


def game_channel(t: Table) -> discord.TextChannel:
    channel = guild(t).get_channel(t.channel.id)
    assert isinstance(channel, discord.TextChannel)
    return channel


async def member(t: Table, who: MemberActor) -> discord.Member:
    """The member as the bot sees it (after a restart its cache may not hold them yet)."""
    return guild(t).get_member(who.user.id) or await guild(t).fetch_member(who.user.id)


def overwrite(t: Table, who: MemberActor) -> discord.PermissionOverwrite:
    """The member's overwrite in the game channel, as the bot sees it."""
    return game_channel(t).overwrites_for(discord.Object(who.user.id))


async def vote_out(d: Driver, target: int, voters: list[int]) -> None:
    for seat in voters:
        await d.post_vote(seat, f"投 {target}", target)
    await d.lock()


async def cannot_post(who: MemberActor, where: ChannelHandle, text: str) -> None:
    with pytest.raises(BackendError) as refused:
        await who.send(where, text)
    assert refused.value.code in (50001, 50013)  # missing access (not in the thread) / permission


async def test_a_dead_killer_loses_the_team_thread_and_a_restart_gives_nothing_back(
    table: Table,
) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    k1, k2 = by_role(roles, "killer")
    info = await t.bot.runtime.service.info(d.game_id)
    thread = thread_of(t, "thread_killers", info.channels)
    await t.player(k1).send(thread, "今晚刀谁？")  # the living killers talk at night
    await d.lock()  # a quiet night
    await vote_out(d, k1, [s for s in range(1, 9) if s != k1])
    state = await t.bot.runtime.service.state(d.game_id)
    assert not state.seat(k1).alive and state.result is None
    await cannot_post(t.player(k1), thread, "我死了也要说")
    await cannot_post(t.player(k1), t.channel, "诈尸")
    assert t.player(k1).user.id not in t.env.backend.get_channel(thread.id).thread_members
    dead = overwrite(t, t.player(k1))
    assert dead.send_messages is False and dead.send_messages_in_threads is False
    await d.lock()  # night 2: the other killer still talks in the thread
    await t.player(k2).send(thread, "只剩我了")

    # Edits lost (an admin's hand, a crash): the overwrite gone, the dead killer back in the
    # thread. A restart reconciles the permissions with the state.
    channel = game_channel(t)
    await channel.set_permissions(await member(t, t.player(k1)), overwrite=None)
    bot_thread = guild(t).get_thread(thread.id) or await t.bot.fetch_channel(thread.id)
    assert isinstance(bot_thread, discord.Thread)
    await bot_thread.add_user(discord.Object(t.player(k1).user.id))
    await t.env.settle()
    await restart(t)
    await cannot_post(t.player(k1), thread, "重启了我能说话吗")
    assert t.player(k1).user.id not in t.env.backend.get_channel(thread.id).thread_members
    dead = overwrite(t, t.player(k1))
    assert dead.send_messages is False and dead.send_messages_in_threads is False
    living = overwrite(t, t.player(k2))
    assert living.is_empty()  # the living are not denied
    await t.player(k2).send(thread, "我还在")


async def test_a_restart_lifts_a_stale_denial_from_a_living_player(table: Table) -> None:
    t = table
    d = Driver(t, "v2")
    await d.start()
    await d.lock()  # day 1: the channel is open to the living
    alive = t.player(3)
    await game_channel(t).set_permissions(
        await member(t, alive), send_messages=False, view_channel=True
    )
    await t.env.settle()
    await restart(t)
    await alive.send(t.channel, "我还活着，可以说话")
    kept = overwrite(t, alive)
    assert kept.send_messages is None and kept.view_channel is True  # others' fields kept


@pytest.mark.table(players=11)
async def test_a_restart_sets_the_channels_as_the_night_says_and_keeps_the_elders_silence(
    table: Table,
) -> None:
    t = table
    vote = t.guild.create_text_channel("vote")
    d = Driver(t, "v4_butterfly", vote_channel=vote)
    roles = await d.start()
    elder = by_role(roles, "elder")[0]
    quiet, other = by_role(roles, "civilian")[:2]
    info = await t.bot.runtime.service.info(d.game_id)
    role = guild(t).get_role(int(info.channels["players_role"]))
    vote_channel = guild(t).get_channel(vote.id)
    assert role is not None and isinstance(vote_channel, discord.TextChannel)
    # Lost edits at night: the discussion shut, the vote channel open. A restart sets both as
    # the night says (docs/rulings.md, "The forum's rhythm").
    await game_channel(t).set_permissions(role, send_messages=False)
    await vote_channel.set_permissions(role, overwrite=None)
    await t.env.settle()
    await restart(t)
    await t.player(other).send(t.channel, "天黑了也能聊")
    await cannot_post(t.player(other), vote, "投 1")
    await d.power_by_menu(elder, "silence", quiet)
    await d.lock()  # day 1: the silenced player may not talk
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.seat(quiet).alive and state.seat(other).alive
    await game_channel(t).set_permissions(await member(t, t.player(quiet)), overwrite=None)
    await t.env.settle()
    await restart(t)
    await cannot_post(t.player(quiet), t.channel, "我有话说")
    await t.player(quiet).send(vote, "弃权")  # a silenced player still votes
    await t.player(other).send(t.channel, "白天我可以说话")
    await d.lock()  # night 2 lifts the silence
    await d.lock()  # day 2
    await restart(t)
    state = await t.bot.runtime.service.state(d.game_id)
    if state.seat(quiet).alive and state.result is None:
        await t.player(quiet).send(t.channel, "今天我能说话了")
    else:  # voted out on day 1: stays closed
        await cannot_post(t.player(quiet), t.channel, "诈尸")


def posted(t: Table) -> int:
    return len(t.channel.history())


async def test_vote_refuses_privately_and_posts_nothing(table: Table) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    killer = by_role(roles, "killer")[0]
    victim, voter = by_role(roles, "civilian")[:2]
    before = posted(t)
    night = await t.player(voter).slash(t.channel, "vote", target=str(killer))
    assert night.ephemeral and night.response is not None
    assert night.response.content == "The vote window (投票轮) is not open."
    assert posted(t) == before

    await d.power_by_menu(killer, "kill", victim)
    await d.lock()  # day 1: the victim is out
    before = posted(t)
    dead = await t.player(victim).slash(t.channel, "vote", target=str(killer))
    assert dead.ephemeral and dead.response is not None
    assert dead.response.content == "You are out of the game (出局) and cannot vote."
    stranger = await t.outside.slash(t.channel, "vote", target=str(killer))
    assert stranger.ephemeral and stranger.response is not None
    assert stranger.response.content == "You are not a player in this game."
    assert posted(t) == before
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.posts == ()

    ok = await t.player(voter).slash(t.channel, "vote", target=str(killer))  # the living still do
    assert ok.response is not None and ok.response.content == "Received."
    assert posted(t) == before + 1
    state = await t.bot.runtime.service.state(d.game_id)
    assert [(p.seat, p.target, p.void_reason) for p in state.posts] == [(voter, killer, None)]


async def test_the_end_leaves_no_overwrite_nor_role_and_the_dead_vote_next_game(
    table: Table,
) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    killer = by_role(roles, "killer")[0]
    victim = by_role(roles, "civilian")[0]
    await d.power_by_menu(killer, "kill", victim)
    await d.lock()  # day 1: the victim is out
    info = await t.bot.runtime.service.info(d.game_id)
    role_id = int(info.channels["players_role"])
    assert overwrite(t, t.player(victim)).send_messages is False
    ended = await t.moderator.slash(t.channel, "mod end", winner="draw")
    assert ended.response is not None
    await t.env.settle()
    assert not [r.name for r in guild(t).roles if r.name.startswith("法官")]
    assert guild(t).get_role(role_id) is None
    players = {m.user.id for m in t.players}
    left = [
        target
        for target, overwrite in game_channel(t).overwrites.items()
        if target.id in players or target.id == role_id
    ]
    assert left == []

    # Game 2 in the same channels: game 1's victim is alive again, talks and votes by post.
    d2 = Driver(t, "v2")
    roles2 = await d2.start()
    await d2.lock()  # a quiet night
    await t.player(victim).send(t.channel, "上一局我死了，这局我还在")
    target = next(s for s in by_role(roles2, "killer") if s != victim)
    await d2.post_vote(victim, f"投 {target}", target)
    state = await t.bot.runtime.service.state(d2.game_id)
    assert [(p.seat, p.target, p.void_reason) for p in state.posts] == [(victim, target, None)]


async def test_relayed_words_ping_nobody(table: Table) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    killer = by_role(roles, "killer")[0]
    victim, voter = by_role(roles, "civilian")[:2]
    await d.power_by_menu(killer, "kill", victim)
    await d.lock()  # day 1: the victim has last words
    post = await t.player(voter).send(t.channel, "投 @everyone")
    await t.env.settle()
    mod_role = t.mod_role.id
    await d.last_words(victim, f"@everyone @here <@&{mod_role}> <@{t.moderator.user.id}> 记住我")
    store = t.env.backend.messages[t.channel.id]
    bot_id = t.bot.user.id  # type: ignore[union-attr]
    relayed = [m for m in store.values() if m.author_id == bot_id and m.id > post.id]
    echo = [m for m in relayed if "@everyone" in m.content]
    assert len(echo) == 2  # the reply to the vote post and the last words
    for message in relayed:
        assert not message.mention_everyone, message.content
        assert message.ping_role_ids == [] and message.ping_user_ids == [], message.content


async def test_the_stuck_notice_pings_the_moderators_role_only(table: Table) -> None:
    """The moderators' role is pinged when it is mentionable: the invite gives the bot no
    Mention @everyone, which pinging a role that is not would take (docs/moderators.md)."""
    t = table
    t.env.backend.edit_role(t.guild.id, t.mod_role.id, {"mentionable": True})
    d = Driver(t, "v2")
    await d.start()
    await t.bot.runtime.deadlines.tell_stuck(d.game_id, 99)
    store = t.env.backend.messages[t.channel.id]
    notice = next(m for m in reversed(store.values()) if "法官暂时无法完成操作" in m.content)
    assert notice.ping_role_ids == [t.mod_role.id] and not notice.mention_everyone


def test_every_end_releases_the_channels_once_after_the_last_departure() -> None:
    """A game that ends by the rules (not only /mod end) emits `ReleaseChannels` once, with the
    end, after every `SeatLeft`: the end's cleanup comes after the last permission it undoes."""
    players = [f"p{i}" for i in range(1, 9)]
    roles = ["killer", "killer", "police", "police"] + ["civilian"] * 4
    created = new_game(
        ruleset="v2", players=players, seed="s", roles=dict(zip(players, roles, strict=True))
    )
    events = start_events(created, Instant(1_000))
    state = replay_events(events)
    effects = effects_for(None, events)
    now = 1_000
    for killer in (1, 2):
        for command in (
            Lock(at=Instant(now), next_deadline=Instant(now + 1_000)),  # a quiet night
            *(
                PostVote(player=p, post_id=f"{killer}-{p}", target=Seat(killer), at=Instant(now))
                for p in players[2:]
            ),
            Lock(at=Instant(now + 1_000), next_deadline=Instant(now + 2_000)),  # voted out
        ):
            new_state, new = apply(state, command)
            effects += effects_for(state, new)
            state = new_state
        now += 2_000
    assert state.over
    released = [i for i, e in enumerate(effects) if isinstance(e, ReleaseChannels)]
    left = [i for i, e in enumerate(effects) if isinstance(e, SeatLeft)]
    assert len(released) == 1 and len(left) == 2 and max(left) < released[0]


async def test_the_closed_dms_notice_at_the_deal_pings_that_player_only(table: Table) -> None:
    t = table
    closed = t.player(3)
    dm = await closed.user.send_dm("hi")  # opens the DM channel, then it refuses the bot
    t.env.inject_error(
        "POST",
        f"/channels/{dm.channel.id}/messages",
        status=403,
        code=50007,
        message="Cannot send messages to this user",
        times=None,
    )
    await Driver(t, "v2").start()
    store = t.env.backend.messages[t.channel.id]
    notice = next(m for m in store.values() if f"<@{closed.user.id}>" in m.content)
    assert notice.ping_user_ids == [closed.user.id] and notice.ping_role_ids == []
    assert not notice.mention_everyone


@pytest.mark.table(players=11)
async def test_a_substitute_takes_the_seats_silence_and_the_old_player_keeps_none(
    table: Table,
) -> None:
    t = table
    d = Driver(t, "v4_butterfly")
    roles = await d.start()
    elder = by_role(roles, "elder")[0]
    quiet = by_role(roles, "civilian")[0]
    await d.power_by_menu(elder, "silence", quiet)
    await d.lock()  # day 1: the silenced player may not talk
    old = t.player(quiet)
    await cannot_post(old, t.channel, "我有话说")
    await t.moderator.slash(t.channel, "mod replace", seat=quiet, member=t.outside)
    await t.env.settle()
    await cannot_post(t.outside, t.channel, "我是替补")
    assert overwrite(t, old).is_empty()


# -- what Discord lets through: an edit of an earlier post, joining an existing reaction -----------


def shown(where: ChannelHandle, message: discord.Message) -> discord.Message | None:
    """The post as the channel shows it now (None: taken down)."""
    return next((m for m in where.history() if m.id == message.id), None)


def reacted(where: ChannelHandle, message: discord.Message, emoji: str) -> int:
    """How many reacted to the post with `emoji`."""
    post = shown(where, message)
    assert post is not None
    return next((r.count for r in post.reactions if str(r.emoji) == emoji), 0)


def told(t: Table, who: MemberActor) -> list[str]:
    return [m.content for m in t.dms(who)]


async def v2_started(t: Table) -> tuple[Driver, int, int]:
    """A v2 game at night 1: the driver, a killer and a civilian."""
    d = Driver(t, "v2")
    roles = await d.start()
    return d, by_role(roles, "killer")[0], by_role(roles, "civilian")[0]


async def killed_at_night(t: Table) -> tuple[Driver, int, int, discord.Message]:
    """A v2 game at day 1 whose night killed a civilian who had posted: the driver, the killer,
    the victim and the victim's post."""
    d, killer, victim = await v2_started(t)
    said = await t.player(victim).send(t.channel, "我是好人")  # night 1: the channel is open
    await d.power_by_menu(killer, "kill", victim)
    await d.lock()  # day 1: the victim is out
    state = await t.bot.runtime.service.state(d.game_id)
    assert not state.seat(victim).alive
    return d, killer, victim, said


async def silenced_at_night(t: Table) -> tuple[Driver, int, int, discord.Message, discord.Message]:
    """A v4_butterfly game at day 1 whose night silenced a civilian: the driver, the elder, the
    silenced player, their post of the night and another civilian's."""
    d = Driver(t, "v4_butterfly")
    roles = await d.start()
    elder = by_role(roles, "elder")[0]
    quiet, other = by_role(roles, "civilian")[:2]
    said = await t.player(quiet).send(t.channel, "夜里先说一句")
    chat = await t.player(other).send(t.channel, "我也说一句")
    await d.power_by_menu(elder, "silence", quiet)
    await d.lock()  # day 1: the silenced player may not talk in the discussion
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.seat(quiet).alive and state.seat(other).alive
    return d, elder, quiet, said, chat


async def test_a_dead_players_edit_and_reaction_are_taken_down_a_living_players_stay(
    table: Table,
) -> None:
    t = table
    d, killer, victim, said = await killed_at_night(t)
    living, other = [s for s in range(1, 9) if s not in (killer, victim)][:2]
    before = told(t, t.player(victim))
    await t.player(victim).edit(said, "其实我是警察，1号是杀手")
    await t.env.settle()
    assert shown(t.channel, said) is None
    notices = told(t, t.player(victim))[len(before) :]
    assert len(notices) == 1 and "出局" in notices[0] and "移除" in notices[0], notices

    kept = await t.player(living).send(t.channel, "我是好人")
    await t.player(living).edit(kept, "我是好人（补充）")
    await t.env.settle()
    edited = shown(t.channel, kept)
    assert edited is not None and edited.content == "我是好人（补充）"
    assert not any("移除" in text for text in told(t, t.player(living)))

    vote = await d.post_vote(living, f"投 {killer}", killer)  # counted: the bot's ✅ on it
    assert reacted(t.channel, vote, "✅") == 1
    await t.player(victim).react(vote, "✅")  # joining needs no Add Reactions
    await t.env.settle()
    assert reacted(t.channel, vote, "✅") == 1
    await t.player(other).react(vote, "✅")
    await t.env.settle()
    assert reacted(t.channel, vote, "✅") == 2
    with pytest.raises(BackendError):  # a new emoji needs Add Reactions: denied to the dead
        await t.player(victim).react(vote, "👍")
    assert told(t, t.player(victim))[len(before) :] == notices  # no notice for a reaction


def day_one(state: GameState) -> DayRecord:
    return next(r for r in state.history if isinstance(r, DayRecord) and r.number == 1)


async def test_a_voted_out_players_edited_vote_post_goes_and_the_vote_still_counts(
    table: Table,
) -> None:
    t = table
    d, killer, leaver = await v2_started(t)
    await d.lock()  # day 1, after a quiet night
    vote = await d.post_vote(leaver, f"投 {killer}", killer)
    await vote_out(d, leaver, [s for s in range(1, 9) if s not in (leaver, killer)])
    state = await t.bot.runtime.service.state(d.game_id)
    assert not state.seat(leaver).alive and (leaver, killer) in day_one(state).votes

    await t.player(leaver).edit(vote, f"投 {leaver}")
    await t.env.settle()
    assert shown(t.channel, vote) is None
    assert "出局" in told(t, t.player(leaver))[-1]
    assert not any("编辑投票帖无效" in m.content for m in t.channel.history())  # not answered
    state = await t.bot.runtime.service.state(d.game_id)
    day = day_one(state)
    assert (leaver, killer) in day.votes
    assert [(p.seat, p.target, p.void_reason) for p in day.posts if p.post_id == str(vote.id)] == [
        (leaver, killer, None)
    ]
    bot = await restart(t)  # the catch-up reads the channel without the post
    assert (leaver, killer) in day_one(await bot.runtime.service.state(d.game_id)).votes


@pytest.mark.table(players=11)
async def test_a_silenced_players_edit_and_reaction_in_the_discussion_are_taken_down(
    table: Table,
) -> None:
    t = table
    _d, _elder, quiet, said, chat = await silenced_at_night(t)
    await t.player(quiet).edit(said, "禁言了我也要说")
    await t.env.settle()
    assert shown(t.channel, said) is None
    assert "禁言" in told(t, t.player(quiet))[-1] and "移除" in told(t, t.player(quiet))[-1]
    other = next(p for p in t.players if p.user.id == chat.author.id)
    await other.edit(chat, "我改了一句")
    await t.env.settle()
    edited = shown(t.channel, chat)
    assert edited is not None and edited.content == "我改了一句"
    await other.react(chat, "👍")
    await t.player(quiet).react(chat, "👍")  # a new emoji would do as well: no overwrite denies it
    await t.env.settle()
    assert reacted(t.channel, chat, "👍") == 1


async def test_in_a_forum_game_the_silence_keeps_to_the_main_post(tmp_path: Path) -> None:
    """A silenced player's edit and reaction in the main post are taken down; their reaction in
    the day's 投票帖 stays (the silence is the discussion's, as their votes there count)."""
    async with running_table(tmp_path / "f.db", 11, EnvClock(), SEED, "forum") as t:
        d, elder, quiet, said, chat = await silenced_at_night(t)
        await t.player(quiet).edit(said, "禁言了我也要说")
        await t.env.settle()
        assert shown(t.channel, said) is None
        assert "禁言" in told(t, t.player(quiet))[-1]
        other = next(s for s in range(1, 12) if t.player(s).user.id == chat.author.id)
        await t.player(other).react(chat, "👍")
        await t.player(quiet).react(chat, "👍")
        await t.env.settle()
        assert reacted(t.channel, chat, "👍") == 1
        vote = await d.post_vote(other, f"投 {elder}", elder)
        await t.player(quiet).react(vote, "✅")
        await t.env.settle()
        assert reacted(t.vote_channel(), vote, "✅") == 2


async def test_without_manage_messages_the_edit_stays_and_the_log_says_so_once(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that took Manage Messages from the bot: nothing crashes, the post stays, the
    author is told nothing untrue, and one warning names no one."""
    t = table
    _d, _killer, victim, said = await killed_at_night(t)
    invite_permissions(t.env, t.guild, without="manage_messages")
    await t.env.settle()
    before = told(t, t.player(victim))
    caplog.set_level(logging.WARNING, logger="bot")
    await t.player(victim).edit(said, "其实我是警察")
    await t.player(victim).edit(said, "其实我是警察！")
    await t.env.settle()
    post = shown(t.channel, said)
    assert post is not None and post.content == "其实我是警察！"
    assert told(t, t.player(victim)) == before
    warned = [r.getMessage() for r in caplog.records if "Manage Messages" in r.getMessage()]
    assert len(warned) == 1 and str(t.player(victim).user.id) not in warned[0]

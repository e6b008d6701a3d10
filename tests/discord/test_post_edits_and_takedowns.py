"""Posts in a game's channels when Discord does not go along: the hint to a vote posted in the
discussion whose post is gone before the reply, a vote post edited twice, another bot's edited
post, and a dead player's edit that is already gone (told, as it is gone) or that Discord fails
to take down (left, and nothing untrue said). Nothing is posted publicly about who may not
speak, and nothing in the game changes."""

from __future__ import annotations

import logging

import discord
import pytest
from gamebot import Driver, Table, by_role
from simcord import ChannelHandle

from bot.records.i18n import render

SEED = "edits-seed"
pytestmark = pytest.mark.table(seed=SEED)


def shown(where: ChannelHandle, message: discord.Message) -> discord.Message | None:
    """The post as the channel shows it now (None: taken down)."""
    return next((m for m in where.history() if m.id == message.id), None)


def replies_to(where: ChannelHandle, message: discord.Message) -> list[str]:
    return [
        m.content
        for m in where.history()
        if m.reference is not None and m.reference.message_id == message.id
    ]


def bot_posts(t: Table) -> list[str]:
    return [m.content for m in t.channel.history() if m.author.bot]


def told(t: Table, member: object) -> list[str]:
    return [m.content for m in t.dms(member)]  # type: ignore[arg-type]


async def killed_at_night(t: Table) -> tuple[Driver, int, discord.Message]:
    """A v2 game at day 1 whose night killed a civilian who had posted at night: the driver, the
    victim and the victim's post."""
    d = Driver(t, "v2")
    roles = await d.start()
    killer, victim = by_role(roles, "killer")[0], by_role(roles, "civilian")[0]
    said = await t.player(victim).send(t.channel, "我是好人")
    await d.power_by_menu(killer, "kill", victim)
    await d.lock()
    state = await t.bot.runtime.service.state(d.game_id)
    assert not state.seat(victim).alive
    return d, victim, said


async def test_a_hint_to_a_post_gone_before_the_reply_is_dropped_quietly(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    """A vote posted in the discussion (votes go to a vote channel) and deleted at once: the
    hint's reply fails; nothing else is posted, no error, nothing recorded in the game."""
    t = table
    votes = t.guild.create_text_channel("votes")
    d = Driver(t, "v2", vote_channel=votes)
    roles = await d.start()
    await d.lock()  # day 1
    caplog.set_level(logging.INFO, logger="bot")
    voter, target = by_role(roles, "civilian")[:2]
    before = t.public()
    # Discord's answer to a reply whose message is gone
    t.env.inject_error(
        "POST", f"/channels/{t.channel.id}/messages", status=400, code=50035, times=1
    )
    post = await t.player(voter).send(t.channel, f"投 {target}")
    await t.env.settle()
    assert replies_to(t.channel, post) == []
    assert t.public() == [*before, post.content]
    assert (await t.bot.runtime.service.state(d.game_id)).posts == ()
    assert any("no vote hint" in r.getMessage() for r in caplog.records)
    # another player's vote in the discussion is hinted as usual
    again = await t.player(target).send(t.channel, f"投 {voter}号")
    await t.env.settle()
    assert len(replies_to(t.channel, again)) == 1


async def test_a_vote_post_edited_twice_is_answered_once(table: Table) -> None:
    """The judge reads a vote post as first posted: its first edit is answered (the edit does
    not count), a second edit of the same post gets no second answer; the vote stands."""
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    await d.lock()  # day 1
    voter, target, other = by_role(roles, "civilian")[:3]
    vote = await d.post_vote(voter, f"投 {target}", target)
    await t.player(voter).edit(vote, f"投 {other}")
    await t.env.settle()
    edited = render("zh-CN", "vote.edited", {})
    assert replies_to(t.channel, vote) == [edited]
    await t.player(voter).edit(vote, f"投 {other}号")
    await t.env.settle()
    assert replies_to(t.channel, vote) == [edited]
    state = await t.bot.runtime.service.state(d.game_id)
    assert [(p.seat, p.target) for p in state.posts] == [(voter, target)]


async def test_another_bots_edited_post_in_a_game_channel_is_left_alone(table: Table) -> None:
    """Another bot (a music bot, a server tool) edits its post in the game channel: neither
    taken down nor answered, whatever the game says of the channel."""
    t = table
    d, victim, _said = await killed_at_night(t)
    helper = t.guild.add_member(t.env.create_user("工具人", bot=True))
    posted = await helper.send(t.channel, "今日天气：晴")
    await helper.edit(posted, "今日天气：多云")
    await t.env.settle()
    kept = shown(t.channel, posted)
    assert kept is not None and kept.content == "今日天气：多云"
    assert replies_to(t.channel, posted) == []
    assert told(t, helper) == []
    del d, victim


async def test_a_dead_players_edit_already_gone_is_still_told_privately(table: Table) -> None:
    """The dead player's edited post is deleted by someone else just before the judge takes it
    down (Discord: 404): it is gone all the same, so the player is told so, privately; nothing
    public about it."""
    t = table
    d, victim, said = await killed_at_night(t)
    before, public = told(t, t.player(victim)), bot_posts(t)
    t.env.inject_error(
        "DELETE", f"/channels/{t.channel.id}/messages/{said.id}", status=404, code=10008, times=1
    )
    await t.player(victim).edit(said, "其实我是警察")
    await t.env.settle()
    notices = told(t, t.player(victim))[len(before) :]
    assert notices == [render("zh-CN", "notice.edit_removed_out", {"game": d.game_id})]
    assert bot_posts(t) == public


async def test_a_dead_players_edit_discord_fails_to_take_down_stays_untold(table: Table) -> None:
    """Discord away (500) when the judge takes a dead player's edit down: the post stays, the
    player is told nothing untrue ("removed"), nothing public is said, no error; a reaction
    that cannot be removed likewise stays."""
    t = table
    d, victim, said = await killed_at_night(t)
    before, public = told(t, t.player(victim)), bot_posts(t)
    t.env.inject_error("DELETE", f"/channels/{t.channel.id}/messages/*", status=500, times=1)
    await t.player(victim).edit(said, "其实我是警察")
    await t.env.settle()
    post = shown(t.channel, said)
    assert post is not None and post.content == "其实我是警察"
    assert told(t, t.player(victim)) == before
    assert bot_posts(t) == public
    state = await t.bot.runtime.service.state(d.game_id)
    assert not state.seat(victim).alive and state.posts == ()

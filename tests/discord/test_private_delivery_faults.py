"""Private deliveries and their failures, past what test_disclosure.py covers: a DM Discord
refuses for another reason than closed DMs (retried, never told as "closed" to anyone), the
moderators told of closed DMs when Discord will not list the server's members, a vote post
deleted before the judge's ✅ or reply, and an override log channel the bot may not write in.
Nothing of it reaches a public channel; the game goes on as if Discord had gone along."""

from __future__ import annotations

import logging

import discord
import pytest
from faultkit import drain
from gamebot import (
    Driver,
    Table,
    by_role,
    close_dms,
)
from simcord import MemberActor

from bot.records.i18n import render

SEED = "delivery-seed"


pytestmark = pytest.mark.table(seed=SEED)


def dm_texts(t: Table, member: object) -> list[str]:
    return [m.content for m in t.dms(member)]  # type: ignore[arg-type]


def bot_posts(t: Table) -> list[str]:
    return [m.content for m in t.channel.history() if m.author.bot]


async def police_checked_a_killer(t: Table) -> tuple[Driver, int, int, MemberActor]:
    """A basic game at night 1 in which a police has checked a killer (the result is due by DM
    at dawn): the driver, the police's and the killer's seats, the police's member."""
    d = Driver(t, "basic")
    roles = await d.start()
    police, killer = by_role(roles, "police")[0], by_role(roles, "killer")[0]
    member = t.player(police)
    await member.slash(t.channel, "act", power="check", target=killer)
    return d, police, killer, member


async def test_a_dm_refused_for_another_reason_is_retried_and_never_told_as_closed(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    """The police's check result at dawn meets a 403 that is not "DMs closed" (Discord's
    "opening DMs too fast"): the DM is retried until it goes through; no one is told that the
    police's DMs are closed — not the game channel, not the moderators, not the player — and
    nothing marks them so."""
    t = table
    caplog.set_level(logging.INFO)
    d, police, killer, member = await police_checked_a_killer(t)
    assert member.user.dm_channel is not None  # the role message opened it
    public, police_dms = bot_posts(t), len(dm_texts(t, member))
    moderator_dms = len(dm_texts(t, t.moderator))
    t.env.inject_error(
        "POST",
        f"/channels/{member.user.dm_channel.id}/messages",
        status=403,
        code=40003,
        message="You are opening direct messages too fast",
        times=1,
    )
    await d.lock()  # day 1: the result's DM fails once
    assert await t.bot.runtime.service.repo.undone_effects()  # kept, to be tried again
    await drain(t)
    new = dm_texts(t, member)[police_dms:]
    assert len(new) == 1 and f"{killer}号" in new[0]  # the result, once
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    user = member.user.id
    assert f"dm_blocked:{user}" not in info.channels and f"dm_unseen:{user}" not in info.channels
    assert dm_texts(t, t.moderator)[moderator_dms:] == []
    assert not any("无法私信" in p for p in bot_posts(t)[len(public) :])
    told = render("en", "notice.dm_closed_you", {"game": d.game_id})
    role = await member.slash(t.channel, "role")
    assert role.ephemeral and told not in role.response.content
    assert not any(f"seat {police} " in r.getMessage() for r in caplog.records)


async def test_closed_dms_reach_the_moderators_when_discord_will_not_list_members(
    table: Table,
) -> None:
    """The police's DMs are closed and Discord fails to list the server's members when the
    judge looks for the moderators: the moderators it knows are told, by DM, all the same;
    the game channel says nothing; the player is told with their next answer."""
    t = table
    d, police, _killer, member = await police_checked_a_killer(t)
    assert member.user.dm_channel is not None
    close_dms(t, member.user.dm_channel.id)
    # the member cache as discord.py fills it at startup with the members intent (simcord
    # serves the chunk only when asked)
    guild = t.bot.get_guild(t.guild.id)
    assert guild is not None
    await guild.chunk()
    assert guild.get_member(t.moderator.id) is not None
    t.env.inject_error("GET", f"/guilds/{t.guild.id}/members", status=500, times=None)
    public, moderator_dms = bot_posts(t), len(dm_texts(t, t.moderator))
    await d.lock()
    new = dm_texts(t, t.moderator)[moderator_dms:]
    assert len(new) == 1 and f"{police}号" in new[0] and "无法私信" in new[0]
    assert not any("无法私信" in p for p in bot_posts(t)[len(public) :])
    for other in t.players:  # no player hears of it, by DM or otherwise
        if other is not member:
            assert not any("无法私信" in text for text in dm_texts(t, other))
    answer = await member.slash(t.channel, "role")
    assert answer.ephemeral
    assert render("en", "notice.dm_closed_you", {"game": d.game_id}) in answer.response.content
    t.env.backend.faults.clear()


async def test_a_vote_post_deleted_before_the_judges_answer_still_counts(table: Table) -> None:
    """A counted vote whose post is gone before the ✅ (Discord: 404), and a void one gone
    before the reply saying why: no error, no reply elsewhere; each is judged as posted
    (deleting retracts nothing)."""
    t = table
    d = Driver(t, "basic")
    roles = await d.start()
    await d.lock()  # day 1
    voter, target, other = by_role(roles, "civilian")[:3]
    where = t.channel.id
    t.env.inject_error(
        "PUT", f"/channels/{where}/messages/*/reactions/*", status=404, code=10008, times=1
    )
    counted = await d.post_vote(voter, f"投 {target}", target)
    public = bot_posts(t)
    t.env.inject_error("POST", f"/channels/{where}/messages", status=404, code=10008, times=1)
    await t.player(other).send(t.channel, "投 99")  # no seat 99: void, answered by a reply
    await t.env.settle()
    assert bot_posts(t) == public  # neither the ✅ nor the reply was made, nothing else either
    assert not any(r.count for m in t.channel.history() if m.id == counted.id for r in m.reactions)
    state = await t.bot.runtime.service.state(d.game_id)
    assert [(p.seat, p.target, p.void_reason) for p in state.posts] == [
        (voter, target, None),
        (other, 99, "vote.no_such_seat"),
    ]
    assert not await t.bot.runtime.service.repo.undone_effects()  # done: nothing to retry


async def test_an_override_log_channel_closed_to_the_bot_stops_no_override(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    """The moderators' override log is a channel the bot may no longer write in: `/mod extend`
    still extends, its answer goes to the moderator alone, the log line is skipped with a
    warning, and the game channel is not used instead."""
    t = table
    bot_role = t.guild.roles[t.env.backend.bot_user.name]
    closed = t.guild.create_text_channel(
        "mod-log", overwrites={bot_role: discord.PermissionOverwrite(send_messages=False)}
    )
    set_log = await t.moderator.slash(t.channel, "mod log-channel", channel=closed)
    assert set_log.ephemeral
    d = Driver(t, "basic")
    await d.start()
    before = await t.bot.runtime.service.state(d.game_id)
    assert before.deadline is not None
    caplog.set_level(logging.WARNING, logger="bot")
    public = bot_posts(t)
    result = await t.moderator.slash(t.channel, "mod extend", minutes=30)
    assert result.ephemeral and result.response.content == render("en", "notice.accepted", {})
    after = await t.bot.runtime.service.state(d.game_id)
    assert after.deadline == before.deadline + 30 * 60_000
    assert [m for m in closed.history()] == []
    assert any("override log channel" in r.getMessage() for r in caplog.records)
    assert not any(str(t.moderator.id) in p for p in bot_posts(t)[len(public) :])
    assert not await t.bot.runtime.service.repo.undone_effects()


@pytest.mark.table(reminder="30m")
async def test_a_reminder_to_closed_dms_is_dropped_without_a_word(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    """Only power holders are reminded at night, so a reminder that cannot be sent (the
    police's DMs closed) is told to no one: not the game channel, not the moderators, not the
    log at INFO; it is not tried again, and the other police is reminded as usual."""
    t = table
    caplog.set_level(logging.INFO)
    d = Driver(t, "basic")
    roles = await d.start()
    closed, other = by_role(roles, "police")
    member = t.player(closed)
    assert member.user.dm_channel is not None
    close_dms(t, member.user.dm_channel.id)
    for killer in by_role(roles, "killer"):
        await d.power_by_command(killer, "kill", None)
    public, moderator_dms = bot_posts(t), len(dm_texts(t, t.moderator))
    await t.advance(30 * 60)
    fired = await t.bot.runtime.scheduler.run_due()
    await t.env.settle()
    assert fired == [f"game:{d.game_id}:remind:night-1"]

    def reminded(seat: int) -> int:
        return len([text for text in dm_texts(t, t.player(seat)) if text.startswith("【提醒】")])

    assert [reminded(s) for s in range(1, 9)] == [1 if s == other else 0 for s in range(1, 9)]
    assert bot_posts(t) == public
    assert dm_texts(t, t.moderator)[moderator_dms:] == []
    info = await t.bot.runtime.service.info(d.game_id, refresh=True)
    assert f"dm_blocked:{member.id}" not in info.channels
    assert f"reminded:night-1:{closed}" in info.channels  # not tried again
    assert not any(
        f"seat {closed}" in r.getMessage() for r in caplog.records if r.levelno >= logging.INFO
    )
    assert not await t.bot.runtime.service.repo.undone_effects()
    t.env.backend.faults.clear()


async def test_a_stuck_private_effect_is_never_announced_even_if_no_moderator_hears(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    """The police's result DM keeps failing (Discord 500): after five attempts the moderators
    are told by DM — the only moderator's DMs are closed, so no one is — and still nothing is
    said in the game channel (when a private effect fails depends on roles)."""
    t = table
    d, police, killer, member = await police_checked_a_killer(t)
    await t.moderator.user.send_dm("hi")  # opens the moderator's DM channel
    assert member.user.dm_channel is not None
    for closed in (member.user.dm_channel.id, t.moderator.user.dm_channel.id):
        status, code = (500, 0) if closed == member.user.dm_channel.id else (403, 50007)
        t.env.inject_error("POST", f"/channels/{closed}/messages", status=status, code=code,
                           times=None)  # fmt: skip
    caplog.set_level(logging.WARNING, logger="bot")
    await d.lock()  # day 1; the result's DM fails
    public = bot_posts(t)
    for _ in range(6):
        jobs = [j for j in t.bot.runtime.scheduler.jobs() if j.id.endswith(":retry")]
        assert jobs
        await t.advance(max(0.0, (min(j.when for j in jobs) - t.env.now()).total_seconds()))
        await t.bot.runtime.scheduler.run_due()
        await t.env.settle()
    said = [r.getMessage() for r in caplog.records]
    assert f"game {d.game_id}: a moderator does not accept DMs" in said
    assert any("stuck after" in m for m in said)
    assert bot_posts(t) == public  # no "stuck" notice, no ping, in the game channel
    assert not any(f"{police}号" in m or str(member.id) in m for m in said)
    t.env.backend.faults.clear()
    await drain(t)  # Discord back: the result arrives, once
    results = [text for text in dm_texts(t, member) if f"{killer}号" in text]
    assert len(results) == 1

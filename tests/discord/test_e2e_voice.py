"""The judge speaks with one voice, and moderators act on the thing itself (issue 15, points 3-5),
played on simcord: votes posted in the wrong channel are pointed to the vote channel; a moderator
voids a vote post, replaces or removes a player from its context menu; the 看表帖 after /mod
advance is its own post; the paused status, the confirmation of a choice, the language of public
posts and "管理员已知悉" read as a forum judge would write them.

Interactions on simcord come from an en-US client; the games here are zh-CN (the default), so a
public post in English would be in the asker's language, not the game's."""

from __future__ import annotations

import discord
import pytest
from gamebot import Driver, Table, by_role, close_dms

from bot.records.i18n import render
from bot.records.render import Context, render_private
from engine.effects import Whisper
from engine.model import Seat

SEED = "voice-seed"
pytestmark = pytest.mark.table(seed=SEED)


def zh(key: str, **params: object) -> str:
    return render("zh-CN", key, params)


def en(key: str, **params: object) -> str:
    return render("en", key, params)


def said(t: Table, text: str) -> bool:
    """Whether a public message of the game channel begins with this text (a moderator's
    notice may be followed, in the same message, by what it caused: last words invited…)."""
    return any(m == text or m.startswith(text + "\n") for m in t.public())


async def names(t: Table, d: Driver) -> Context:
    return await t.bot.runtime.contexts.context(d.game_id)


async def to_day_one(d: Driver) -> dict[int, str]:
    roles = await d.start()
    killer = by_role(roles, "killer")[0]
    await d.power_by_menu(killer, "kill", by_role(roles, "civilian")[0])
    await d.lock()
    return roles


# -- point 3: votes find their place --------------------------------------------------------------


async def test_a_vote_in_the_discussion_channel_is_pointed_to_the_vote_channel_once_a_day(
    table: Table,
) -> None:
    t = table
    votes = t.guild.create_text_channel("votes")
    d = Driver(t, "v2", vote_channel=votes)
    roles = await to_day_one(d)
    link = f"<#{votes.id}>"
    day_post = next(m for m in t.public() if m.startswith("第1天讨论与投票开始"))
    assert f"在投票频道 {link} 发帖" in day_post

    killer = by_role(roles, "killer")[0]
    living = [s for s in by_role(roles, "civilian")[1:3]]
    first = await t.player(living[0]).send(t.channel, f"投 {killer}号")
    await t.env.settle()
    hint = zh("hint.vote_elsewhere", vote=zh("window.vote_at", channel=link))
    replies = [m for m in t.channel.history() if m.reference is not None]
    assert [(m.content, m.reference.message_id) for m in replies] == [(hint, first.id)]

    await t.player(living[0]).send(t.channel, f"投 {killer}")  # the same day: no second hint
    await t.player(living[0]).send(t.channel, "大家好")  # chat: none
    other = await t.player(living[1]).send(t.channel, "弃权")  # another player: the same words
    await t.env.settle()
    replies = [m for m in t.channel.history() if m.reference is not None]
    assert [(m.content, m.reference.message_id) for m in replies] == [
        (hint, first.id),
        (hint, other.id),
    ]
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.posts == ()  # nothing counted, nothing recorded in the game

    await t.advance(61)  # the hints delete themselves
    assert [m for m in t.channel.history() if m.reference is not None] == []


# -- point 4: moderators act on the post or the member --------------------------------------------


async def test_void_this_vote_from_the_post_names_the_voter_and_quotes_the_vote(
    table: Table,
) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await to_day_one(d)
    killer = by_role(roles, "killer")[0]
    voter = by_role(roles, "civilian")[1]
    post = await d.post_vote(voter, f"投 {killer}号", killer)

    refused = await t.outside.context_menu(t.channel, "Void this vote", post)
    assert refused.modal is None and refused.response is not None
    assert refused.response.content == en("notice.moderators_only")

    shown = await t.moderator.context_menu(t.channel, "Void this vote", post)
    assert shown.modal is not None
    done = await t.moderator.submit_modal(shown, {"reason": "代投"})
    assert done.response is not None and done.response.content == en("notice.accepted")
    await t.env.settle()

    ctx = await names(t, d)
    voided = zh(
        "override.voided_vote",
        voter=ctx.seat(voter),
        vote=zh("override.vote_for", target=ctx.seat(killer)),
        reason="代投",
    )
    assert said(t, voided)
    assert ctx.names[voter] in voided and ctx.names[killer] in voided
    state = await t.bot.runtime.service.state(d.game_id)
    assert [(p.seat, p.void_reason) for p in state.posts] == [(voter, "vote.voided_by_moderator")]


async def test_a_moderator_who_plays_cannot_use_the_menus(table: Table) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await to_day_one(d)
    playing_mod = t.player(by_role(roles, "civilian")[1])
    t.env.backend.add_member_role(t.guild.id, playing_mod.id, t.mod_role.id)
    await t.env.settle()
    target = t.player(by_role(roles, "killer")[0])
    for menu in ("Modkill", "Replace"):
        refused = await playing_mod.context_menu(t.channel, menu, target)
        assert refused.modal is None and refused.response is not None
        assert refused.response.content == en("notice.mod_plays_here")
    state = await t.bot.runtime.service.state(d.game_id)
    assert all(s.alive for s in state.seats if s.role.value == "killer")


async def test_modkill_and_replace_from_the_member_name_the_seat_player_and_reason(
    table: Table,
) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await to_day_one(d)
    idle, dropped = by_role(roles, "civilian")[1:3]

    shown = await t.moderator.context_menu(t.channel, "Modkill", t.player(idle))
    assert shown.modal is not None
    await t.moderator.submit_modal(shown, {"reason": "长期不发言"})
    await t.env.settle()
    ctx = await names(t, d)
    removed = zh("override.modkill", seat=ctx.seat(idle)) + zh(
        "override.reason", reason="长期不发言"
    )
    assert said(t, removed)
    state = await t.bot.runtime.service.state(d.game_id)
    assert not state.seat(Seat(idle)).alive

    shown = await t.moderator.context_menu(t.channel, "Replace", t.player(dropped))
    assert shown.modal is not None
    await t.moderator.submit_modal(shown, {"substitute": [t.outside], "reason": "掉线"})
    await t.env.settle()
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.seat(Seat(dropped)).player == str(t.outside.id)
    ctx = await names(t, d)
    assert ctx.names[dropped] == "路人"
    replaced = zh("override.replaced", seat=ctx.seat(dropped)) + zh(
        "override.reason", reason="掉线"
    )
    assert said(t, replaced)

    again = await t.moderator.context_menu(t.channel, "Modkill", t.player(idle))
    assert again.modal is None and again.response is not None  # out already: no form
    assert again.response.content == en("mod.seat_out_of_game", seat=idle)
    stranger = await t.moderator.context_menu(t.channel, "Replace", t.player(dropped))
    assert stranger.modal is None and stranger.response is not None  # replaced: no seat now
    assert stranger.response.content == en("notice.not_seated", name=t.names[dropped - 1])


# -- point 5: one voice ---------------------------------------------------------------------------


async def test_after_mod_advance_the_clock_post_is_its_own_post_after_the_notice(
    table: Table,
) -> None:
    t = table
    d = Driver(t, "v2")
    await d.start()
    before = len(t.public())
    await t.moderator.slash(t.channel, "mod advance")
    await t.env.settle()
    new = t.public()[before:]
    assert new[0] == "【管理】管理员提前截止第1夜。"  # which window: two never read the same
    assert new[1].startswith("【看表】第1夜截止"), new  # the 看表帖, as at a deadline


async def test_mod_advance_in_the_warmup_names_it_and_opens_night_one_without_a_clock_post(
    table: Table,
) -> None:
    t = table
    d = Driver(t, "v2", options="warmup=30")
    await d.start()
    before = len(t.public())
    await t.moderator.slash(t.channel, "mod advance")
    await t.env.settle()
    new = t.public()[before:]
    assert new[0] == "【管理】管理员提前截止游戏热身。", new
    assert not any(text.startswith("【看表】") for text in new)  # the warm-up has no 看表帖
    assert new[-1].startswith("天黑了。第1夜"), new
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.window is not None and state.window.kind.value == "night"


async def test_mod_advance_in_a_run_off_names_the_run_off_not_the_day(table: Table) -> None:
    t = table
    d = Driver(t, "v2", tie="revote")
    roles = await to_day_one(d)
    k1, k2 = by_role(roles, "killer")
    p1, p2 = by_role(roles, "police")
    for voter, target in ((p1, k1), (p2, k1), (k1, p1), (k2, p1)):  # 2–2: a run-off
        await d.post_vote(voter, f"投 {target}", target)
    before = len(t.public())
    await t.moderator.slash(t.channel, "mod advance")
    await t.env.settle()
    first = t.public()[before:]
    assert first[0] == "【管理】管理员提前截止第1天。", first
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.window is not None and state.window.revote == 1
    before = len(t.public())
    await t.moderator.slash(t.channel, "mod advance")
    await t.env.settle()
    second = t.public()[before:]
    assert second[0] == "【管理】管理员提前截止第1天第1次 PK。", second
    assert second[1].startswith("【看表】"), second


async def test_paused_status_says_how_long_is_left_and_no_missing_deadline(table: Table) -> None:
    t = table
    d = Driver(t, "v2")
    await d.start()
    await t.advance(30 * 60)
    await t.moderator.slash(t.channel, "mod pause")
    status = await t.player(1).slash(t.channel, "game status")
    assert status.response is not None
    head = status.response.content.splitlines()[0]
    assert head.endswith("Night 1 · paused; 30 min left once the clock resumes"), head
    assert "no deadline" not in status.response.content and "(paused)" not in head


async def test_a_power_is_confirmed_once_by_command_in_the_answer_by_menu_in_the_dm(
    table: Table,
) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    killer, police = by_role(roles, "killer")[0], by_role(roles, "police")[0]
    victim, checked = by_role(roles, "civilian")[:2]
    ctx = await names(t, d)
    en_ctx = Context(locale="en", timezone=ctx.timezone, names=ctx.names)

    dms = len(t.dms(t.player(killer)))
    by_command = await d.power_by_command(killer, "kill", victim)
    assert by_command.response is not None and by_command.ephemeral
    accepted = Whisper(
        seat=Seat(killer), key="power.accepted", params=(("power", "kill"), ("target", victim))
    )
    assert by_command.response.content == render_private(en_ctx, accepted)
    assert len(t.dms(t.player(killer))) == dms  # no DM as well

    dms = len(t.dms(t.player(police)))
    by_menu = await d.power_by_menu(police, "check", checked)
    assert by_menu.acknowledged and not by_menu.ephemeral and by_menu.followups == []  # no reply
    new = t.dms(t.player(police))[dms:]
    check = Whisper(
        seat=Seat(police), key="power.accepted", params=(("power", "check"), ("target", checked))
    )
    assert [m.content for m in new] == [render_private(ctx, check)]


async def test_game_record_posts_publicly_in_the_games_language(table: Table) -> None:
    t = table
    d = Driver(t, "v2")
    await d.start()
    await t.moderator.slash(t.channel, "mod end", winner="draw")
    record = await t.player(1).slash(t.channel, "game record")
    assert record.response is not None and not record.ephemeral
    state = await t.bot.runtime.service.state(d.game_id)
    assert record.response.content == zh(
        "notice.record", seed=state.seed, commitment=state.commitment
    )


async def test_moderators_have_been_told_only_when_a_moderator_got_the_dm(table: Table) -> None:
    t = table
    closed = t.player(3)
    close_dms(t, (await closed.user.send_dm("hi")).channel.id)
    close_dms(t, (await t.moderator.user.send_dm("hi")).channel.id)
    if (
        t.guild.owner.id in t.env.backend.get_guild(t.guild.id).members
    ):  # Manage Server: a moderator
        close_dms(t, (await t.guild.owner.send_dm("hi")).channel.id)
    await Driver(t, "v2").start()
    notice = next(m for m in t.public() if f"<@{closed.user.id}>" in m)
    assert zh("notice.dm_blocked_told") not in notice


async def test_moderators_have_been_told_when_they_were(table: Table) -> None:
    t = table
    closed = t.player(3)
    close_dms(t, (await closed.user.send_dm("hi")).channel.id)
    await Driver(t, "v2").start()
    notice = next(m for m in t.public() if f"<@{closed.user.id}>" in m)
    assert notice.endswith(zh("notice.dm_blocked_told"))
    told = [m.content for m in t.dms(t.moderator) if isinstance(m, discord.Message)]
    assert any(f"<@{closed.user.id}>" in text for text in told)

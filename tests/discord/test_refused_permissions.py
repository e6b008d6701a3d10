"""A server that takes Manage Roles from the bot while a game is in play: Discord refuses the
game's permission edits (a dead player's overwrite, the day's opening, a silence). The game goes
on — the day's post, its deadline, the effects behind them — instead of retrying the edit for
ever; moderators are told once (the log, the override log), naming no one; and what the
overwrites would have stopped is taken down as it comes: a dead or silenced player's post in
the discussion, its author told privately why."""

from __future__ import annotations

import logging

import discord
import pytest
from gamebot import Table, invite_permissions
from test_private_answers import speaking
from test_speech import shown, silenced_at_night, told, v2_started

from bot.discord.required_permissions import REQUIRED_PERMISSIONS
from bot.records.i18n import render
from engine.model import PhaseKind

SEED = "refused-seed"
REFUSED = "Discord refused a permission edit"


pytestmark = pytest.mark.table(seed=SEED)


async def take_manage_roles(t: Table) -> None:
    invite_permissions(t.env, t.guild, without="manage_roles")
    await t.env.settle()


def refusal_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if REFUSED in r.getMessage()]


async def test_a_refused_edit_holds_nothing_back_and_the_dead_are_taken_down(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    t = table
    log = t.guild.create_text_channel("mod-log")
    await t.moderator.slash(t.channel, "mod log-channel", channel=log)
    d, killer, victim = await v2_started(t)
    await take_manage_roles(t)
    caplog.set_level(logging.INFO, logger="bot")
    await d.power_by_menu(killer, "kill", victim)
    await d.lock()  # day 1: the victim's overwrite and the day's opening are refused

    state = await t.bot.runtime.service.state(d.game_id)
    assert state.window is not None and state.window.kind is PhaseKind.DAY
    assert not state.seat(victim).alive
    assert not await t.bot.runtime.service.repo.undone_effects()
    stuck = render("zh-CN", "notice.stuck", {"attempts": 5})[:12]
    assert not any(stuck in p for p in t.public())
    warned = refusal_warnings(caplog)
    assert len(warned) == 1
    assert not any(str(m.user.id) in w for m in t.players for w in warned)
    told_mods = render("zh-CN", "log.permissions_refused", {"game": d.game_id})
    assert [m.content for m in log.history() if m.author.bot].count(told_mods) == 1

    before = told(t, t.player(victim))
    dead = await t.player(victim).send(t.channel, "我是警察，听我的")
    alive = await t.player(killer).send(t.channel, "他在说谎")
    await t.env.settle()
    assert shown(t.channel, dead) is None
    assert shown(t.channel, alive) is not None
    removed = render("zh-CN", "notice.post_removed_out", {"game": d.game_id})
    assert told(t, t.player(victim)) == [*before, removed]
    target = next(s for s in range(1, 9) if s not in (killer, victim))
    vote = await d.post_vote(killer, f"投 {target}", target)  # the living still vote
    state = await t.bot.runtime.service.state(d.game_id)
    assert [p.post_id for p in state.posts] == [str(vote.id)]
    assert shown(t.channel, vote) is not None

    await d.lock()  # night 2: refused again, told no more
    assert len(refusal_warnings(caplog)) == 1
    assert not await t.bot.runtime.service.repo.undone_effects()

    invite_permissions(t.env, t.guild)  # given back: the overwrite stops the post again
    await t.env.settle()
    await t.moderator.slash(t.channel, "mod end", winner="good")
    assert (await t.bot.runtime.service.state(d.game_id)).over
    assert not await t.bot.runtime.service.repo.undone_effects()


async def test_a_chinese_moderator_is_told_the_lacking_permissions_by_discords_chinese_names(
    table: Table,
) -> None:
    """A moderator whose Discord speaks Chinese finds the permissions the judge lacks by the
    names their own screens show, with the English ones for an admin whose client is English,
    listed as Chinese lists things."""
    t = table
    wanted = discord.Permissions(**dict.fromkeys(REQUIRED_PERMISSIONS, True))
    wanted.manage_roles = wanted.manage_messages = False
    bot_role = t.guild.roles[t.env.backend.bot_user.name]
    t.env.backend.edit_role(t.guild.id, bot_role.id, {"permissions": wanted.value})
    await t.env.settle()
    with speaking({t.moderator.id: "zh-CN"}):
        lacking = await t.moderator.slash(t.channel, "game new", ruleset="v2")
    (told_mod,) = lacking.followups
    assert told_mod.flags.ephemeral
    missing = "管理身份组（Manage Roles）、管理消息（Manage Messages）"
    assert told_mod.content == render("zh-CN", "notice.lacking_permissions", {"missing": missing})


@pytest.mark.table(players=11)
async def test_a_silenced_players_post_is_taken_down_when_the_silence_is_refused(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    t = table
    caplog.set_level(logging.WARNING, logger="bot")
    await take_manage_roles(t)
    d, _elder, quiet, _said, _chat = await silenced_at_night(t)
    assert not await t.bot.runtime.service.repo.undone_effects()
    assert len(refusal_warnings(caplog)) == 1

    before = told(t, t.player(quiet))
    hushed = await t.player(quiet).send(t.channel, "我被禁言了吗")
    await t.env.settle()
    assert shown(t.channel, hushed) is None
    removed = render("zh-CN", "notice.post_removed_silenced", {"game": d.game_id})
    assert told(t, t.player(quiet)) == [*before, removed]


async def test_the_sign_up_tells_its_moderator_what_the_judge_lacks_there(table: Table) -> None:
    """`/game new` where the judge lacks a permission it needs opens the sign-up all the same
    and tells the moderator privately which, by Discord's names; with every permission, it
    says nothing more."""
    t = table
    full = await t.moderator.slash(t.channel, "game new", ruleset="v2")
    assert full.response is not None and not full.ephemeral and full.followups == []

    await take_manage_roles(t)
    other = t.guild.create_text_channel("game-2")
    lacking = await t.moderator.slash(other, "game new", ruleset="v2")
    assert lacking.response is not None and not lacking.ephemeral  # the sign-up is open
    (told_mod,) = lacking.followups
    assert told_mod.flags.ephemeral
    assert told_mod.content == render(
        "en", "notice.lacking_permissions", {"missing": "Manage Roles"}
    )

"""Players' display names as they wrote them, end to end: in a post of the judge's a name is text,
never Markdown (escaped: `bot.records.render.plain`), and no name pings anyone; in a component
(a menu option, an autocomplete choice), which shows no Markdown, the name is shown as written
(an escape would show its backslash), still cut to Discord's 100 characters."""

from __future__ import annotations

from typing import Any

import discord
import pytest
import pytest_asyncio
from gamebot import Driver, Table, by_role
from simcord import MemberActor

from bot.discord.required_permissions import REQUIRED_PERMISSIONS
from bot.records.i18n import render
from bot.records.render import plain
from engine.rulesets import get_ruleset

SEED = "names-as-written"
NAMES = ["*星*", "a_b", "**big**", "# title", "||x||", "@everyone", "~~划~~", "role"]
"""Seat 8's name is set to a mention of the (mentionable) moderators' role by the fixture."""
pytestmark = pytest.mark.table(seed=SEED)


@pytest_asyncio.fixture
async def table(table: Table) -> Table:
    """Eight players named in Markdown (and one as a role mention, one as `@everyone`); the bot
    may mention everyone and the moderators' role is mentionable, as in many servers: only what
    the bot sends decides whether a name pings. (The shared table, changed once the bot is up:
    the players join then.)"""
    t, env = table, table.env
    env.backend.edit_role(t.guild.id, t.mod_role.id, {"mentionable": True})
    wanted = discord.Permissions(**dict.fromkeys(REQUIRED_PERMISSIONS, True))
    wanted.mention_everyone = True
    bot_role = t.guild.roles[env.backend.bot_user.name]
    env.backend.edit_role(t.guild.id, bot_role.id, {"permissions": wanted.value})
    names = [*NAMES[:-1], f"<@&{t.mod_role.id}>"]
    for i, name in enumerate(names):
        t.players[i] = t.guild.add_member(env.create_user(f"user{i + 1}"), nick=name)
    t.names = names
    await env.settle()
    return t


def bot_messages(t: Table) -> list[Any]:
    """Every message the bot sent, anywhere (the backend's own records: who they pinged)."""
    bot_id = t.bot.user.id if t.bot.user else 0
    return [
        m
        for store in t.env.backend.messages.values()
        for m in store.values()
        if m.author_id == bot_id
    ]


def options_of(message: discord.Message) -> list[str]:
    """The labels of every select option of a message."""
    return [
        option.label
        for row in message.components
        for child in getattr(row, "children", [])
        for option in getattr(child, "options", [])
    ]


# -- posts: escaped, pinging nobody -----------------------------------------------------------------


async def test_the_sign_up_names_a_player_as_text_and_pings_nobody(table: Table) -> None:
    """A join and a leave are public posts: a name formats none of them (`**big**` bold, `#
    title` a heading, `||x||` a spoiler), and neither `@everyone` nor a role's mention as a name
    pings, though the bot may mention everyone and the role is mentionable."""
    t = table
    await t.moderator.slash(t.channel, "game new", ruleset="v2")
    joined = [await p.slash(t.channel, "game join") for p in t.players]
    most = get_ruleset("v2").max_players
    for seat, (name, r) in enumerate(zip(t.names, joined, strict=True), start=1):
        assert r.response is not None and not r.ephemeral
        values = {"seat": seat, "name": plain(name), "count": seat, "max": most}
        assert r.response.content == render("zh-CN", "notice.joined", values)
    assert "\\*\\*big\\*\\*" in joined[2].response.content
    assert joined[3].response.content.startswith("4号 \\# title")
    left = await t.players[4].slash(t.channel, "game leave")
    assert left.response is not None and "\\|\\|x\\|\\|" in left.response.content
    assert "||x||" not in left.response.content
    sent = bot_messages(t)
    assert any("@everyone" in m.content for m in sent)
    assert any(f"<@&{t.mod_role.id}>" in m.content.replace("\\", "") for m in sent)
    for message in sent:
        assert not message.mention_everyone, message.content
        assert message.ping_role_ids == [] and message.ping_user_ids == [], message.content


async def test_every_post_of_a_game_pings_nobody_through_a_name(table: Table) -> None:
    """The deal, the day's posts, the 票型: names go in escaped, and nothing the bot posts pings
    everyone or a role (the client's default: `allowed_mentions` none)."""
    t = table
    assert t.bot.allowed_mentions is not None
    assert t.bot.allowed_mentions.to_dict() == discord.AllowedMentions.none().to_dict()
    d = Driver(t, "v2")
    await d.start()
    await d.lock()  # a quiet night: day 1
    await d.post_vote(1, "投 6", 6)
    await d.post_vote(2, "投 8", 8)
    await t.run_deadline()
    public = "\n".join(t.public())
    assert f"第1天票型：6号 @everyone←1（1票）；8号 \\<@&{t.mod_role.id}\\>←2（1票）" in public
    for message in bot_messages(t):
        assert not message.mention_everyone, message.content
        assert message.ping_role_ids == [], message.content


# -- components: as written ------------------------------------------------------------------------


async def test_the_power_menu_shows_names_as_written(table: Table) -> None:
    """A select shows no Markdown: `*星*` reads `*星*`, not `\\*星\\*` (the DM's text above it,
    a message, still escapes)."""
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    killer = by_role(roles, "killer")[0]
    labels = [label for m in t.dms(d.member(killer)) for label in options_of(m)]
    shown = [label for label in labels if "→" in label]
    assert shown, labels
    assert not any("\\" in label for label in shown), shown
    for seat, name in enumerate(t.names, start=1):
        if seat not in by_role(roles, "killer"):
            assert f"杀人 → {seat}号 {name}" in labels, (seat, labels)


async def test_autocomplete_shows_names_as_written_and_finds_them_as_typed(table: Table) -> None:
    """/act's and /vote's targets are named as the players wrote them, and typing a name as
    written finds it (`a_b` did not find 「a\\_b」)."""
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    police = by_role(roles, "police")[0]
    checks = await d.member(police).autocomplete(t.channel, "act", "target", "", power="check")
    assert checks
    assert not any("\\" in str(c["name"]) for c in checks), checks
    assert all(str(c["name"]) == f"#{c['value']} {t.names[int(c['value']) - 1]}" for c in checks)
    await d.lock()  # a quiet night: day 1
    voter = 1
    choices = await d.member(voter).autocomplete(t.channel, "vote", "target", "")
    named = [c for c in choices if c["value"] != "abstain"]
    assert {str(c["name"]) for c in named} == {f"#{s} {t.names[s - 1]}" for s in range(1, 9)}
    typed = await d.member(voter).autocomplete(t.channel, "vote", "target", "a_b")
    assert [c["value"] for c in typed] == ["2"]


# -- moderators' answers: escaped --------------------------------------------------------------------


async def test_a_moderators_answer_names_a_member_as_text(table: Table) -> None:
    """/mod's menus answer privately, still a message: a member's Markdown name is text there."""
    t = table
    d = Driver(t, "v2")
    await d.start()
    stranger: MemberActor = t.guild.add_member(t.env.create_user("stranger"), nick="**路人**")
    r = await t.moderator.context_menu(t.channel, "Modkill", stranger)
    assert r.response is not None and r.ephemeral
    assert r.response.content == render("en", "notice.not_seated", {"name": "\\*\\*路人\\*\\*"})

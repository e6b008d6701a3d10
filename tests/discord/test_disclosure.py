"""What a person is shown (issue 13): autocomplete from the engine's answer for the asker, DM
failures told privately, the moderator who plays sees a player's view, votes name seats, names
come from the record, and the moderator role from the config is checked against each server.

Each test here failed on the code before the fix (see the comment on each)."""

from __future__ import annotations

import asyncio
import inspect
import logging
from pathlib import Path

import pytest
import pytest_asyncio
from envclock import EnvClock
from gamebot import BotEnv, Driver, Table, build_table, by_role, invite_permissions, make_bot
from simcord import MemberActor

from bot.config import load
from bot.discord.authority import warn_missing_moderator_role
from bot.discord.client import create_bot
from bot.discord.override_log import LOG_CHANNEL
from bot.discord.views import valid_targets
from bot.records.i18n import render
from bot.runtime.timing import DeadlineScheduler
from engine.model import Power, Seat

SEED = "disclosure-seed"
NICKNAMED = 1
"""Seat of the player whose display name is "5" (a seat number)."""
MOD_PLAYER = 8
"""Seat of the player who holds the moderator role."""

pytestmark = pytest.mark.table(seed=SEED)


@pytest_asyncio.fixture
async def table(table: Table) -> Table:
    """Eight players: seat 1 is nicknamed "5", seat 8 is a moderator who plays (both join the
    shared table's server once the bot is up); a second moderator plays in no game."""
    t, env = table, table.env
    t.players[NICKNAMED - 1] = t.guild.add_member(env.create_user("nick-five"), nick="5")
    t.names[NICKNAMED - 1] = "5"
    t.players[MOD_PLAYER - 1] = t.guild.add_member(env.create_user("modplayer"), roles=[t.mod_role])
    t.names[MOD_PLAYER - 1] = "modplayer"
    await env.settle()
    return t


def dm_texts(table: Table, member: MemberActor) -> list[str]:
    return [m.content for m in table.dms(member)]


def answer(result: object) -> str:
    response = getattr(result, "response", None)
    assert response is not None
    return str(response.content)


async def block_dms_now(table: Table, member: MemberActor) -> None:
    """From now on every DM the bot sends `member` fails as Discord does (403, 50007)."""
    assert member.user.dm_channel is not None  # opened by the role message
    table.env.inject_error(
        "POST",
        f"/channels/{member.user.dm_channel.id}/messages",
        status=403,
        code=50007,
        message="Cannot send messages to this user",
        times=None,
    )


# -- 1. autocomplete ------------------------------------------------------------------------------


async def test_act_target_autocomplete_lists_only_what_the_engine_accepts_from_the_asker(
    table: Table,
) -> None:
    # Before: a killer typing `/act power:check target:` got every living seat except the
    # police (and themselves): the police named by the list.
    d = Driver(table, "basic")
    roles = await d.start()
    state = await table.bot.runtime.service.state(d.game_id)
    killer = by_role(roles, "killer")[0]
    police = by_role(roles, "police")
    civilian = by_role(roles, "civilian")[0]
    for seat, power in ((killer, "check"), (civilian, "check"), (civilian, "kill")):
        offered = await table.player(seat).autocomplete(
            table.channel, "act", "target", "", power=power
        )
        assert offered == [], (seat, power, offered)
    outsider = await table.outside.autocomplete(table.channel, "act", "target", "", power="kill")
    assert outsider == []
    # a holder: exactly what the engine takes from them now
    checks = await table.player(police[0]).autocomplete(
        table.channel, "act", "target", "", power="check"
    )
    assert {c["value"] for c in checks} == {s for s in range(1, 9) if s not in police}
    kills = await table.player(killer).autocomplete(
        table.channel, "act", "target", "", power="kill"
    )
    assert [c["value"] for c in kills] == [
        int(s) for s in valid_targets(state, Seat(killer), Power.KILL)
    ]
    assert kills
    # the engine's own list for a card without the power is empty whatever the others hold
    assert valid_targets(state, Seat(civilian), Power.CHECK) == []


async def test_vote_autocomplete_offers_nothing_to_whoever_has_no_vote(table: Table) -> None:
    # Before: a stranger got the whole list (and the abstain choice).
    d = Driver(table, "basic")
    await d.start()
    await d.lock()  # a quiet night: day 1
    assert await table.outside.autocomplete(table.channel, "vote", "target", "") == []
    mine = await table.player(2).autocomplete(table.channel, "vote", "target", "")
    assert len(mine) == 9  # abstain + the eight living


# -- 2. a failing DM ------------------------------------------------------------------------------


async def test_a_failing_dm_after_the_deal_is_told_privately_never_publicly(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    # Before: "⚠ 无法私信 N号" in the game channel the first time the police's (or the
    # killers') DM failed, which only power holders ever meet at night.
    caplog.set_level(logging.INFO)
    d = Driver(table, "basic")
    roles = await d.start()
    police = by_role(roles, "police")[0]
    killer = by_role(roles, "killer")[0]
    await block_dms_now(table, table.player(police))
    public_before = table.public()
    moderator_dms = len(dm_texts(table, table.moderator))
    # a /act is confirmed in its answer (no DM); the check's result at dawn is a DM, and fails
    result = await table.player(police).slash(table.channel, "act", power="check", target=killer)
    assert answer(result).startswith("Received: check")
    await d.lock()
    assert not any("无法私信" in post for post in table.public()[len(public_before) :])
    # the player: told with their next answer, once
    told = render("en", "notice.dm_closed_you", {"game": d.game_id})
    first = await table.player(police).slash(table.channel, "role")
    assert told in answer(first)
    again = await table.player(police).slash(table.channel, "role")
    assert told not in answer(again)
    # nothing public, nothing in the log naming the seat
    assert not any("无法私信" in post for post in table.public())
    assert not any(
        f"seat {police} " in r.getMessage() for r in caplog.records if r.levelno >= logging.INFO
    )
    # the moderator who plays in no game is told by DM; the moderator who plays is not
    new = dm_texts(table, table.moderator)[moderator_dms:]
    assert len(new) == 1 and f"{police}号" in new[0] and "无法私信" in new[0]
    assert not any("无法私信" in text for text in dm_texts(table, table.player(MOD_PLAYER)))
    # the record of who refuses DMs stays in the game row, not in public posts
    info = await table.bot.runtime.service.info(d.game_id, refresh=True)
    user = table.player(police).user.id
    assert info.channels.get(f"dm_blocked:{user}") is True
    assert f"dm_unseen:{user}" not in info.channels


async def police_dm_failed(table: Table) -> tuple[Driver, int]:
    """A basic game at day 1 whose police's check result, DMed at dawn, failed: the driver and
    the police's seat."""
    d = Driver(table, "basic")
    roles = await d.start()
    police = by_role(roles, "police")[0]
    killer = by_role(roles, "killer")[0]
    await block_dms_now(table, table.player(police))
    await table.player(police).slash(table.channel, "act", power="check", target=killer)
    await d.lock()
    return d, police


async def test_two_answers_at_once_tell_of_a_failed_dm_once(table: Table) -> None:
    # Before: both answers read the `dm_unseen:` mark from the cached row before either had
    # cleared it, and both told the player.
    d, police = await police_dm_failed(table)
    told = render("en", "notice.dm_closed_you", {"game": d.game_id})
    asking = inspect.unwrap(MemberActor.slash)  # simcord's guarded verb refuses overlaps
    results = await asyncio.gather(
        asking(table.player(police), table.channel, "role"),
        asking(table.player(police), table.channel, "game status"),
    )
    assert [told in answer(result) for result in results].count(True) == 1


async def test_a_substitute_is_told_of_their_own_dms_only(table: Table) -> None:
    # Before: the marks were kept per seat, so a substitute was told "the bot could not DM you"
    # for the DM that failed to the player they replaced, and their own closed DMs went untold.
    d, police = await police_dm_failed(table)
    await table.moderator.slash(table.channel, "mod replace", seat=police, member=table.outside)
    told = render("en", "notice.dm_closed_you", {"game": d.game_id})
    assert told not in answer(await table.outside.slash(table.channel, "role"))
    closed = table.guild.add_member(table.env.create_user("closed-dms"))
    await closed.user.send_dm("hi")  # opens the DM channel
    await block_dms_now(table, closed)
    await table.moderator.slash(table.channel, "mod replace", seat=police, member=closed)
    # a substitute's role message goes to one player, as a deal's does to all: said publicly
    assert any("无法私信" in post and f"{police}号" in post for post in table.public())


async def test_a_failing_role_message_at_the_deal_is_public_for_anyone(table: Table) -> None:
    # Every player gets a role message at the deal: a notice then depends on nobody's role.
    for member in table.players[:2]:
        await member.user.send_dm("hi")  # opens the DM channel
        await block_dms_now(table, member)
    d = Driver(table, "basic")
    await d.start()
    notices = [p for p in table.public() if "无法私信" in p]
    assert len(notices) == 2


# -- 3. the moderator who plays -------------------------------------------------------------------


async def test_a_moderator_who_plays_is_refused_every_mod_command_of_that_game(
    table: Table,
) -> None:
    # Before: `/mod pending` at night listed exactly the power holders to a playing moderator.
    d = Driver(table, "basic")
    await d.start()
    refusal = render("en", "notice.mod_plays_here", {})
    playing = table.player(MOD_PLAYER)
    for command, options in (
        ("mod pending", {}),
        ("mod extend", {"minutes": 5}),
        ("mod pause", {}),
    ):
        result = await playing.slash(table.channel, command, **options)
        assert result.ephemeral and answer(result) == refusal, command
    state = await table.bot.runtime.service.state(d.game_id)
    assert state.deadline is not None and not state.paused  # nothing changed
    # a moderator who plays in no game keeps the moderator's view
    result = await table.moderator.slash(table.channel, "mod pending")
    assert result.ephemeral and answer(result) != refusal
    # and the one who plays gets a player's /game status (their vote line, no pending list)
    status = await playing.slash(table.channel, "game status")
    assert status.ephemeral and "still to do" not in answer(status)


# -- 4. votes name seats --------------------------------------------------------------------------


async def test_a_nickname_that_is_a_number_cannot_capture_a_vote(table: Table) -> None:
    # Before: "投 @5" counted for the player nicknamed "5" (seat 1), not for seat 5.
    d = Driver(table, "basic")
    await d.start()
    await d.lock()  # a quiet night: day 1, all alive
    await table.player(2).send(table.channel, "投 @5 他很可疑")
    await table.env.settle()
    state = await table.bot.runtime.service.state(d.game_id)
    post = state.posts[-1]
    assert (post.seat, post.target, post.void_reason) == (2, 5, None)
    # the voter can check privately which seat their vote counts for
    status = await table.player(2).slash(table.channel, "game status")
    assert render("en", "notice.your_vote", {"target": "#5 玩家5"}) in answer(status)
    status = await table.player(3).slash(table.channel, "game status")
    assert render("en", "notice.your_vote_none", {}) in answer(status)
    # a real mention still resolves by user id, to the nicknamed player's own seat
    await table.player(3).send(table.channel, f"投 <@{table.player(NICKNAMED).id}>")
    await table.env.settle()
    state = await table.bot.runtime.service.state(d.game_id)
    assert (state.posts[-1].seat, state.posts[-1].target) == (3, NICKNAMED)


# -- 5. names from the record ---------------------------------------------------------------------


async def test_after_a_restart_with_an_empty_member_cache_posts_show_the_recorded_names(
    table: Table,
) -> None:
    # Before: "昨夜出局：2号 1456074443980800010" (the raw id) when the member was not cached.
    d = Driver(table, "basic")
    roles = await d.start()
    killers = by_role(roles, "killer")
    victim, substituted = by_role(roles, "civilian")[:2]
    # a substitute's name is recorded at /mod replace too
    replaced = await table.moderator.slash(
        table.channel, "mod replace", seat=substituted, member=table.outside
    )
    assert replaced.ephemeral
    new = make_bot(table.db, table.clock, seed=SEED)  # type: ignore[attr-defined]
    await table.env.restart_bot(new)
    await table.env.settle()
    guild = new.get_guild(table.guild.id)
    assert guild is not None
    for member in list(guild.members):  # the member cache knows nobody
        guild._remove_member(member)
    assert guild.get_member(table.player(victim).id) is None
    for killer in killers:
        await d.power_by_command(killer, "kill", victim)
    await d.lock()
    dawn = [p for p in table.public() if "昨夜出局" in p]
    assert dawn and f"{victim}号 {table.names[victim - 1]}" in dawn[-1], dawn
    assert str(table.player(victim).id) not in dawn[-1]
    ctx = await new.runtime.contexts.context(d.game_id)
    assert ctx.names[substituted] == "路人"


# -- 6. the moderator role from the config --------------------------------------------------------


async def test_a_moderator_role_missing_from_a_server_is_named_in_a_warning(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    guild = table.env.create_guild("另一个服务器")
    invite_permissions(table.env, guild)
    log_here = guild.create_text_channel("mod-log")
    await table.env.settle()
    joined = table.bot.get_guild(guild.id)
    assert joined is not None
    # simcord announces a new guild as available (unavailable: false); Discord's join has no
    # such field and discord.py dispatches guild_join: dispatched here as discord.py would.
    table.bot.dispatch("guild_join", joined)
    await table.env.settle()
    assert any(
        "moderator role" in r.getMessage() and str(guild.id) in r.getMessage()
        for r in caplog.records
    )
    bot = table.bot
    await bot.runtime.service.repo.update_settings(guild.id, {LOG_CHANNEL: str(log_here.id)})
    assert await warn_missing_moderator_role(bot.judge, joined)
    assert [m.content for m in log_here.history()] == [
        render("zh-CN", "log.no_moderator_role", {"role": "name '主持人'"})
    ]
    here = bot.get_guild(table.guild.id)
    assert here is not None and not await warn_missing_moderator_role(bot.judge, here)


async def test_at_start_a_moderator_role_missing_from_a_server_is_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    settings = load(
        {
            "discord": {"token": "test-token", "moderator_role": "裁判组"},
            "database": {"url": f"sqlite+aiosqlite:///{tmp_path / 'g.db'}"},
            "game": {"reminder": "off"},
        },
        env={},
    )
    clock = EnvClock()
    env = BotEnv(create_bot(settings, clock=clock, scheduler=DeadlineScheduler(clock)))
    clock.bind(env)
    t = build_table(env, 6)  # its moderator role is 主持人: no 裁判组 there
    await env.start()
    try:
        warned = [r.getMessage() for r in caplog.records if "moderator role" in r.getMessage()]
        assert any(str(t.guild.id) in m and "'裁判组'" in m for m in warned), warned
    finally:
        await env.shutdown()

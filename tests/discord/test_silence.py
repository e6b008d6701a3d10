"""4.0 森林老人's silence on Discord: the silenced player cannot post for the day (votes through
/vote still count) and speaks again the next day."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from envclock import EnvClock
from gamebot import Driver, Table, invite_permissions, running_table
from simcord import BackendError

from bot.records.i18n import render

pytestmark = pytest.mark.table(players=11, seed="silence")


async def test_elder_silence_lasts_one_day(table: Table) -> None:
    d = Driver(table, "v4_butterfly")
    roles = await d.start()
    elder = next(s for s, r in roles.items() if r == "elder")
    quiet = next(s for s, r in sorted(roles.items()) if r == "civilian")
    other = next(s for s, r in sorted(roles.items()) if r == "civilian" and s != quiet)
    await d.power_by_menu(elder, "silence", quiet)
    await d.lock()  # day 1
    with pytest.raises(BackendError) as refused:
        await table.player(quiet).send(table.channel, "我有话说")
    assert refused.value.code == 50013
    await table.player(other).send(table.channel, "我可以说话")
    r = await table.player(quiet).slash(table.channel, "vote", target=str(other))
    assert r.response is not None and "Received" in r.response.content
    await d.lock()  # night 2
    await d.lock()  # day 2: the silence is over
    state = await table.bot.runtime.service.state(d.game_id)
    if state.seat(quiet).alive and state.result is None:
        message = await table.player(quiet).send(table.channel, "今天我能说话了")
        assert message.content == "今天我能说话了"
    else:  # voted out on day 1: stays closed
        with pytest.raises(BackendError):
            await table.player(quiet).send(table.channel, "诈尸")


async def test_in_a_forum_game_a_silenced_players_main_post_is_taken_down(tmp_path: Path) -> None:
    """One overwrite governs a forum's posts, so the silence is kept by taking the silenced
    player's main-post posts down for the day (told privately); their vote in the 投票帖 counts."""
    async with running_table(tmp_path / "f.db", 11, EnvClock(), "silence", "forum") as t:
        d = Driver(t, "v4_butterfly")
        roles = await d.start()
        elder = next(s for s, r in roles.items() if r == "elder")
        quiet = next(s for s, r in sorted(roles.items()) if r == "civilian")
        other = next(s for s, r in sorted(roles.items()) if r == "civilian" and s != quiet)
        await d.power_by_menu(elder, "silence", quiet)
        await d.lock()  # day 1
        await t.player(quiet).send(t.channel, "我有话说")
        await t.player(other).send(t.channel, "我可以说话")
        await t.env.settle()
        said = [m.content for m in t.channel.history()]
        assert "我可以说话" in said and "我有话说" not in said
        told = [m.content for m in t.dms(t.player(quiet))]
        assert any("禁言" in text and "主帖" in text for text in told), told[-2:]
        await d.post_vote(quiet, f"投 {other}号", other)
        state = await t.bot.runtime.service.state(d.game_id)
        assert [(p.seat, p.target, p.void_reason) for p in state.posts] == [(quiet, other, None)]


async def test_in_a_forum_game_without_manage_messages_the_post_stays_and_nothing_says_removed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that took Manage Messages from the bot: the silenced player's main-post post
    stays, they are not told it was removed, and one warning names no one; given it back, the
    next post goes and they are told."""
    async with running_table(tmp_path / "f.db", 11, EnvClock(), "silence", "forum") as t:
        d = Driver(t, "v4_butterfly")
        roles = await d.start()
        elder = next(s for s, r in roles.items() if r == "elder")
        quiet = next(s for s, r in sorted(roles.items()) if r == "civilian")
        await d.power_by_menu(elder, "silence", quiet)
        await d.lock()  # day 1
        invite_permissions(t.env, t.guild, without="manage_messages")
        await t.env.settle()
        before = removed_notices(t, d.game_id, quiet)
        caplog.set_level(logging.WARNING, logger="bot")
        await t.player(quiet).send(t.channel, "我有话说")
        await t.env.settle()
        assert "我有话说" in [m.content for m in t.channel.history()]
        assert removed_notices(t, d.game_id, quiet) == before  # Before: told all the same
        warned = [r.getMessage() for r in caplog.records if "Manage Messages" in r.getMessage()]
        assert len(warned) == 1 and str(t.player(quiet).user.id) not in warned[0]
        invite_permissions(t.env, t.guild)
        await t.env.settle()
        await t.player(quiet).send(t.channel, "我还有话说")
        await t.env.settle()
        assert "我还有话说" not in [m.content for m in t.channel.history()]
        assert removed_notices(t, d.game_id, quiet) == before + 1


def removed_notices(t: Table, game_id: int, seat: int) -> int:
    """How many times the player was told their main-post post was removed."""
    notice = render("zh-CN", "notice.silenced_post_removed", {"game": game_id})
    return sum(m.content == notice for m in t.dms(t.player(seat)))

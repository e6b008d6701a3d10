"""A post of the judge's that the server's AutoMod blocks (Discord: 200000): the game's
moderators are told at once, by DM, what blocked it and how to let the judge through — once,
however often it is blocked — while the post is retried; nothing is said in a channel, and the
post goes out once the block is lifted. Before, they heard five tries later that the judge was
stuck, with "check Discord or the database". simcord has no AutoMod: the block is injected as
Discord answers it."""

from __future__ import annotations

import pytest
from faultkit import drain
from gamebot import Driver, Table

pytestmark = pytest.mark.table(seed="automod-seed")

TOLD = "自动管理（AutoMod）拦截了法官的一条消息"


async def test_a_post_automod_blocks_is_told_to_the_moderators_once_and_sent_when_let_through(
    table: Table,
) -> None:
    t = table
    d = Driver(t, "basic")
    await d.start()
    public = t.public()
    t.env.inject_error("POST", f"/channels/{t.channel.id}/messages", status=400, code=200000,
                       message="Message was blocked by AutoMod", times=3)  # fmt: skip
    await d.lock()  # the night's 看表帖 is blocked, then retried
    told = [m.content for m in t.dms(t.moderator) if TOLD in m.content]
    assert told == [m for m in told if m.startswith(f"⚠ 第{d.game_id}局：")] and len(told) == 1
    assert t.public() == public
    await drain(t)
    told = [m.content for m in t.dms(t.moderator) if TOLD in m.content]
    assert len(told) == 1
    assert any("看表" in p for p in t.public()[len(public) :])
    for player in t.players:
        assert not any(TOLD in m.content for m in t.dms(player))

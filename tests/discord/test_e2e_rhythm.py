"""The forum's rhythm on Discord (issue 15, points 1 and 6; docs/rulings.md "The forum's rhythm"):
the living talk by night in the game channel, the vote channel opens only for votes; each 看表帖
is a post of its own and mutes everyone until the results; the dead never speak; a tie's lots are
drawn in the vote channel, with what is needed to verify them."""

from __future__ import annotations

from typing import Any

import discord
import pytest
from gamebot import GUILD_ID, Driver, Table, by_role
from simcord import BackendError, ChannelHandle, MemberActor

SEED = "rhythm-seed"
pytestmark = pytest.mark.table(seed=SEED)


async def cannot_post(who: MemberActor, where: ChannelHandle, text: str) -> None:
    with pytest.raises(BackendError) as refused:
        await who.send(where, text)
    assert refused.value.code in (50001, 50013)


def watch_posts(t: Table, game_id: int, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Each post the bot sends in the game channel, with whether the players' role could post
    there at that moment (None: open; False: shut)."""
    seen: list[tuple[str, Any]] = []
    effects = t.bot.effects
    send = effects._send

    async def spy(channel: Any, content: str, again: bool, **kwargs: Any) -> discord.Message:
        if getattr(channel, "id", None) == t.channel.id:
            info = await t.bot.runtime.service.info(game_id)
            guild = t.bot.get_guild(GUILD_ID)
            assert guild is not None
            role = guild.get_role(int(info.channels["players_role"]))
            game = guild.get_channel(t.channel.id)
            assert role is not None and isinstance(game, discord.TextChannel)
            seen.append((content, game.overwrites_for(role).send_messages))
        return await send(channel, content, again, **kwargs)

    monkeypatch.setattr(effects, "_send", spy)
    return seen


async def test_open_nights_a_muting_clock_post_and_lots_in_the_vote_channel(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = table
    vote = t.guild.create_text_channel("vote")
    d = Driver(t, "v2", vote_channel=vote)
    roles = await d.start()
    k1, k2 = by_role(roles, "killer")
    p1, p2 = by_role(roles, "police")
    victim, talker, a, b = by_role(roles, "civilian")
    posts = watch_posts(t, d.game_id, monkeypatch)

    # Night 1: the living talk in the game channel; the vote channel waits for the day.
    await t.player(talker).send(t.channel, "夜里先聊两句")
    await t.player(k1).send(t.channel, "我是好人")
    await cannot_post(t.player(talker), vote, f"投 {a}")
    await d.power_by_menu(k1, "kill", victim)
    await d.lock()

    # The 看表帖 is its own post, sent while the night was open; the results follow under the
    # mute, and the day's opening reopens discussion.
    texts = [text for text, _ in posts]
    clock = next(i for i, text in enumerate(texts) if text.startswith("【看表】第1夜截止"))
    assert texts[clock].strip().count("\n\n") == 0 and "出局" not in texts[clock]
    assert posts[clock][1] is None
    results = next(i for i, text in enumerate(texts) if "昨夜出局" in text)
    assert results == clock + 1 and posts[results][1] is False
    assert posts[results + 1][1] is None and "第1天" in texts[results + 1]

    # Day 1: the living talk and vote; the dead are silent everywhere.
    await t.player(talker).send(t.channel, "天亮了")
    await cannot_post(t.player(victim), t.channel, "诈尸")
    await cannot_post(t.player(victim), vote, f"投 {a}")
    for voter, target in ((k1, a), (k2, a), (p1, b), (p2, b)):
        await t.player(voter).send(vote, f"投 {target}")
    await t.env.settle()
    await d.lock()

    # The tie is drawn in the vote channel, with its label and how to verify it.
    state = await t.bot.runtime.service.state(d.game_id)
    draw = state.lots[-1]
    drawn = int(draw.drawn)
    (lot,) = [m.content for m in vote.history() if m.content.startswith("【抽签】")]
    assert f"`{draw.label}`" in lot and state.commitment in lot and "faguan verify" in lot
    assert f"抽中 {drawn}号" in lot
    public = "\n".join(t.public())
    assert f"抽中 {drawn}号" in public  # the result is announced in the game channel too
    assert "【抽签】" not in public

    # Night 2: the living talk again, the vote channel is shut, the drawn player is silent.
    living = next(s for s in (talker, a, b) if s != drawn)
    await t.player(living).send(t.channel, "第二夜继续聊")
    await cannot_post(t.player(living), vote, f"投 {k1}")
    await cannot_post(t.player(drawn), t.channel, "我不服")
    await cannot_post(t.player(victim), t.channel, "还是诈尸")


async def test_a_warmup_is_talk_before_night_one_for_its_set_length(table: Table) -> None:
    t = table
    vote = t.guild.create_text_channel("vote")
    d = Driver(t, "v2", vote_channel=vote, options="warmup=30")
    roles = await d.start()
    (killer, _) = by_role(roles, "killer")
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.window is not None and state.window.kind.value == "warmup"
    assert state.deadline is not None
    started = t.env.now().timestamp() * 1000
    assert state.deadline - started == pytest.approx(30 * 60 * 1000, abs=1000)
    assert any(text.startswith("游戏热身开始") for text in t.public())
    assert not any(text.startswith("天黑了") for text in t.public())
    await t.player(killer).send(t.channel, "热身聊两句")  # the living talk
    await cannot_post(t.player(killer), vote, "投 3")  # no vote in the warm-up
    assert not [m for m in t.dms(t.player(killer)) if "前行使权利" in m.content]  # no power menu
    await d.lock()  # the warm-up ends: night 1's power window, no 看表帖
    assert not any(text.startswith("【看表】") for text in t.public())
    assert t.public()[-1].startswith("天黑了。第1夜")
    await t.player(killer).send(t.channel, "第一夜也能聊")
    assert [m for m in t.dms(t.player(killer)) if "前行使权利" in m.content]  # the menu now
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.window is not None and state.window.kind.value == "night"
    await d.power_by_menu(killer, "kill", by_role(roles, "civilian")[0])

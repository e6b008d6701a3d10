"""The forum rules as players meet them on Discord: silence after the 看表帖, vote posts of every
kind, blocked DMs, moderators' overrides, restarts and posts made while the bot was down."""

from __future__ import annotations

import datetime as dt

import pytest
from gamebot import Driver, Table, make_bot
from simcord import BackendError

from engine.state import DayRecord

SEED = "rules-seed"
pytestmark = pytest.mark.table(seed=SEED)


def seats(roles: dict[int, str], role: str) -> list[int]:
    return [s for s, r in sorted(roles.items()) if r == role]


async def to_day_one(d: Driver) -> dict[int, str]:
    roles = await d.start()
    await d.lock()  # a quiet night: nobody acts
    return roles


def last_day(state) -> DayRecord:  # type: ignore[no-untyped-def]
    return [r for r in state.history if isinstance(r, DayRecord)][-1]


async def test_players_talk_at_night_and_the_clock_post_is_its_own(table: Table) -> None:
    """The forum's rhythm (docs/rulings.md): discussion is open in the power window; the 看表帖
    mutes until the results, which come right after it, in a post of their own."""
    d = Driver(table, "v2")
    await d.start()
    player = table.player(1)
    message = await player.send(table.channel, "天黑了也能说话")
    assert message.content == "天黑了也能说话"
    await table.moderator.send(table.channel, "管理员不受影响")  # not a player
    await d.lock()  # the 看表帖, then the results, then the day opens
    posts = table.public()
    clock = next(p for p in posts if p.startswith("【看表】第1夜截止"))
    assert "天亮了" not in clock
    assert posts[posts.index(clock) + 1].startswith("天亮了。昨夜平安")
    message = await player.send(table.channel, "白天可以发言")  # day: open again
    assert message.content == "白天可以发言"
    await d.lock()  # the day's 看表帖, the results, and night 2 opens: discussion again
    message = await player.send(table.channel, "第二夜接着聊")
    assert message.content == "第二夜接着聊"


async def test_vote_posts_change_abstain_edit_delete_late_dead_and_strangers(table: Table) -> None:
    d = Driver(table, "v2")
    roles = await d.start()
    killer = seats(roles, "killer")[0]
    civ = seats(roles, "civilian")
    victim, a, b, c = civ[0], civ[1], civ[2], civ[3]
    await d.power_by_menu(killer, "kill", victim)
    await d.lock()
    state = await table.bot.runtime.service.state(d.game_id)
    deadline = dt.datetime.fromtimestamp(state.deadline / 1000, dt.UTC)  # type: ignore[operator]

    first = await d.post_vote(a, f"投 {b}号", b)
    await d.post_vote(a, f"投 {c}号", c)  # 改票 by a new post
    edited = await d.post_vote(b, f"投 {a}号", a)
    await table.player(b).edit(edited, f"投 {c}号")  # an edit changes nothing
    await table.env.settle()
    await table.player(a).delete(first)  # deleting a post does not retract anything
    await table.env.settle()
    await d.post_vote(c, "弃权", None)
    stranger = await table.outside.send(table.channel, f"投 {a}号")
    await table.env.settle()
    # exactly at the deadline counts; 1 ms after does not (judged by the post's own time)
    await table.advance((deadline - table.env.now()).total_seconds())
    on_time = await table.player(killer).send(table.channel, f"投 {a}")
    await table.advance(0.001)
    late = await table.player(civ[1] if civ[1] != a else civ[2]).send(table.channel, f"投 {killer}")
    assert on_time.created_at == deadline and late.created_at > deadline
    await table.run_deadline()

    state = await table.bot.runtime.service.state(d.game_id)
    day = last_day(state)
    votes = dict(day.votes)
    assert votes[a] == c and votes[b] == a and votes[c] is None and votes[killer] == a
    reasons = sorted(p.void_reason or "" for p in day.void_posts)
    assert reasons == ["vote.after_deadline", "vote.not_player"]
    replies = [m for m in table.channel.history() if m.reference is not None]
    texts = [m.content for m in replies]
    assert any("编辑投票帖无效" in t for t in texts)  # the edit
    assert any("只有本局玩家可以投票" in t for t in texts)  # the stranger
    assert any(m.reference.message_id == stranger.id for m in replies)
    late_reply = [m for m in replies if m.reference.message_id == late.id]
    assert late_reply and "看表帖" in late_reply[0].content
    ok = next(m for m in table.channel.history() if m.id == on_time.id)
    assert any(str(r.emoji) == "✅" for r in ok.reactions)


async def test_dead_player_cannot_post_or_vote(table: Table) -> None:
    d = Driver(table, "v2")
    roles = await d.start()
    killer = seats(roles, "killer")[0]
    victim = seats(roles, "civilian")[0]
    await d.power_by_menu(killer, "kill", victim)
    await d.lock()
    with pytest.raises(BackendError):
        await table.player(victim).send(table.channel, f"投 {killer}")
    r = await table.player(victim).slash(table.channel, "vote", target=str(killer))
    assert r.response is not None


async def test_player_with_blocked_dms_plays_by_slash_commands(table: Table) -> None:
    # Every player blocks DMs before the deal: the bot tells them publicly (no role in it).
    d = Driver(table, "v2")
    dm_ids = []
    for p in table.players:
        dm = await p.user.send_dm("hi")  # opens the DM channel
        dm_ids.append(dm.channel.id)
    for channel_id in dm_ids:
        table.env.inject_error(
            "POST",
            f"/channels/{channel_id}/messages",
            status=403,
            code=50007,
            message="Cannot send messages to this user",
            times=None,
        )
    roles = await d.start()
    notices = [p for p in table.public() if "无法私信" in p]
    assert len(notices) == 8
    for text in notices:
        assert not any(word in text for word in ("杀手", "警察", "平民"))
    k1, k2 = seats(roles, "killer")
    police = seats(roles, "police")
    c1, c2 = seats(roles, "civilian")[:2]
    r = await table.player(k1).slash(table.channel, "role")
    assert r.ephemeral and "杀手" in r.response.content
    # The whole game through slash commands: /act, /pass, /vote, /role for check results.
    await d.power_by_command(k1, "kill", c1)
    await d.power_by_command(k2, "kill", c1)
    await d.power_by_command(police[0], "check", k1)
    await d.lock()
    r = await table.player(police[0]).slash(table.channel, "role")
    assert f"checked #{k1} " in r.response.content and "killer" in r.response.content
    for seat in (s for s in range(1, 9) if s not in (c1, k1)):
        await d.slash_vote(seat, k1)
    await d.lock()
    await d.power_by_command(k2, "kill", c2)
    await d.power_by_command(police[0], "check", None)
    await d.lock()
    for seat in (s for s in range(1, 9) if s not in (c1, c2, k1)):
        await d.slash_vote(seat, k2)
    await d.lock()
    state = await table.bot.runtime.service.state(d.game_id)
    assert state.result is not None and state.result.winner.value == "good"
    assert any(text.startswith("【终局】") for text in table.public())


async def test_moderator_overrides_and_refusal(table: Table) -> None:
    d = Driver(table, "v2")
    await d.start()
    r = await table.player(1).slash(table.channel, "mod extend", minutes=30)
    assert (
        r.ephemeral and "Only moderators" in r.response.content
    )  # in the asker's language (en-US)
    state = await table.bot.runtime.service.state(d.game_id)
    before = state.deadline
    await table.moderator.slash(table.channel, "mod extend", minutes=30)
    state = await table.bot.runtime.service.state(d.game_id)
    assert state.deadline == before + 30 * 60_000  # type: ignore[operator]
    await table.moderator.slash(table.channel, "mod pause")
    state = await table.bot.runtime.service.state(d.game_id)
    assert state.paused and not table.bot.runtime.scheduler.jobs()
    await table.advance(3 * 3600)
    await table.moderator.slash(table.channel, "mod resume")
    state = await table.bot.runtime.service.state(d.game_id)
    assert not state.paused and state.deadline is not None
    await table.moderator.slash(table.channel, "mod set-deadline", time="2026-01-02 20:00")
    state = await table.bot.runtime.service.state(d.game_id)
    assert state.deadline == int(dt.datetime(2026, 1, 2, 12, 0, tzinfo=dt.UTC).timestamp() * 1000)
    await table.moderator.slash(table.channel, "mod advance")
    state = await table.bot.runtime.service.state(d.game_id)
    assert state.phase is not None and state.phase.label() == "day 1"
    overrides = [p for p in table.public() if p.startswith("【管理】")]
    assert len(overrides) == 5  # extend, pause, resume, set-deadline, advance
    r = await table.player(2).slash(table.channel, "game status")
    assert r.ephemeral and "Day 1" in r.response.content


async def test_restart_mid_window_counts_posts_made_while_down(table: Table) -> None:
    d = Driver(table, "v2")
    roles = await to_day_one(d)
    killer = seats(roles, "killer")[0]
    others = [s for s in range(1, 9) if s != killer]
    await d.post_vote(others[0], f"投 {killer}", killer)
    await table.bot.ws.close()  # the bot goes away; posts keep landing
    for seat in others[1:4]:
        await table.player(seat).send(table.channel, f"投 {killer}号")
    new = make_bot(table.db, table.clock, seed=SEED)  # type: ignore[attr-defined]
    await table.env.restart_bot(new)
    await table.env.settle()
    state = await new.runtime.service.state(d.game_id)
    assert len([p for p in state.posts if p.void_reason is None]) == 4
    await table.run_deadline()
    state = await new.runtime.service.state(d.game_id)
    assert dict(last_day(state).tally) == {killer: 4}
    posts = table.public()
    assert len([p for p in posts if p.startswith("【开局】")]) == 1
    assert len([p for p in posts if p.startswith("【看表】第1夜")]) == 1


async def test_restart_mid_resolution_performs_the_rest_once(table: Table) -> None:
    d = Driver(table, "v2")
    roles = await d.start()
    killer = seats(roles, "killer")[0]
    victim = seats(roles, "civilian")[0]
    await d.power_by_menu(killer, "kill", victim)
    # Discord fails in the middle of the results: the rest stays in the outbox.
    table.env.inject_error(
        "POST",
        f"/channels/{table.channel.id}/messages",
        status=500,
        code=0,
        message="boom",
        times=1,
    )
    await d.lock()
    table.env._errors_acknowledged = len(table.env.errors)
    undone = await table.bot.runtime.service.repo.undone_effects(d.game_id)
    assert undone
    new = make_bot(table.db, table.clock, seed=SEED)  # type: ignore[attr-defined]
    await table.env.restart_bot(new)
    await table.env.settle()
    assert not await new.runtime.service.repo.undone_effects(d.game_id)
    posts = table.public()
    assert len([p for p in posts if p.startswith("【看表】第1夜")]) == 1
    assert len([p for p in posts if "昨夜出局" in p]) == 1
    assert len([p for p in posts if p.startswith("第1天讨论")]) == 1

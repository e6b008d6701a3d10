"""Vote posts as players write them on Discord, end to end (docs/rules.md §1.1, docs/rulings.md
"Votes"): what Discord itself writes in the vote channel (a thread's creation, whose text is the
thread's name), an edit that turns chat into a vote, updates that are no edit (a pin, a link
preview), side threads, forwards, replies, quotes, webhooks, late posts read by the lock's
catch-up, moderators, substitutes, and what the judge answers."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import Any

import discord
import pytest
from envclock import EnvClock
from gamebot import Driver, Table, by_role, make_bot, running_table
from simcord import ChannelHandle, MemberActor
from simcord.backend import serializers

from bot.records.i18n import render
from bot.records.render import plain
from engine.speech import silenced
from engine.state import DayRecord, GameState

SEED = "as-written"
PUBLIC_THREAD = 11
ROLE_WORDS = ("杀手", "警察", "平民", "killer", "police", "civilian")
pytestmark = pytest.mark.table(seed=SEED)


def replies_to(where: ChannelHandle, message: discord.Message) -> list[str]:
    """The judge's replies to a message (its hints included, while they are up)."""
    return [
        m.content
        for m in where.history()
        if m.author.bot and m.reference is not None and m.reference.message_id == message.id
    ]


async def state_of(t: Table, d: Driver) -> GameState:
    return await t.bot.runtime.service.state(d.game_id)


def votes(state: GameState) -> list[tuple[int | None, int | None, str | None]]:
    """The window's vote posts as recorded: (voter, target, void reason)."""
    return [(p.seat, p.target, p.void_reason) for p in state.posts]


def last_day(state: GameState) -> DayRecord:
    return [r for r in state.history if isinstance(r, DayRecord)][-1]


async def day_one(t: Table, **new: Any) -> tuple[Driver, dict[int, str]]:
    d = Driver(t, "v2", **new)
    roles = await d.start()
    await d.lock()  # a quiet night: day 1 is open
    return d, roles


async def open_thread(
    t: Table, parent: ChannelHandle, who: MemberActor, name: str
) -> ChannelHandle:
    """A public thread of `parent`, opened by `who` as a Discord client does: Discord also
    writes its system message in `parent`, by `who`, whose text is the thread's name."""
    made = t.env.backend.create_thread(parent.id, name, who.id, type=PUBLIC_THREAD)
    await t.env.settle()
    return next(h for h in parent.threads if h.id == made.id)


# -- what Discord writes ------------------------------------------------------------------------


async def test_a_thread_named_as_a_vote_is_no_vote_read_live_or_by_the_catch_up(
    table: Table,
) -> None:
    """Opening a thread in the vote channel makes Discord post a system message there, by the
    player, whose text is the thread's name: 「投 5」 as a name is no post, never a vote — read
    as it arrives, nor when the catch-up reads the channel after a restart."""
    t = table
    d, roles = await day_one(t)
    a, b, c = by_role(roles, "civilian")[:3]
    await open_thread(t, t.channel, t.player(a), f"投 {b}")
    assert votes(await state_of(t, d)) == []
    await t.bot.ws.close()  # down: the next one is read by the catch-up
    await open_thread(t, t.channel, t.player(c), f"投 {a}号")
    new = make_bot(t.db, t.bot.runtime.clock, seed=SEED)  # type: ignore[attr-defined]
    await t.env.restart_bot(new)
    await t.env.settle()
    await new.runtime.caught_up()
    state = await new.runtime.service.state(d.game_id)
    assert votes(state) == []
    created = [
        m
        for m in t.channel.history()
        if m.type is discord.MessageType.thread_created and m.author.id != t.bot.user.id
    ]
    assert [replies_to(t.channel, m) for m in created] == [[], []]


async def test_webhooks_other_bots_and_discords_notices_are_no_votes(table: Table) -> None:
    """A webhook posting under a player's name, another bot, a pin's notice by the player: none
    is a player's vote, none is answered."""
    t = table
    d, roles = await day_one(t)
    a, b = by_role(roles, "civilian")[:2]
    hook = t.guild.create_webhook(t.channel)
    faked = await hook.send(f"投 {b}", username=t.names[a - 1])
    helper = t.guild.add_member(t.env.create_user("工具人", bot=True))
    other_bot = await helper.send(t.channel, f"投 {b}")
    await t.env.settle()
    assert votes(await state_of(t, d)) == []
    assert replies_to(t.channel, faked) == [] and replies_to(t.channel, other_bot) == []


# -- edits and what is no edit --------------------------------------------------------------------


async def test_chat_edited_into_a_vote_is_answered_at_once_and_counts_nothing(
    table: Table,
) -> None:
    """A post read as chat, then edited into 「投 N」: a vote is its post as first made, so it
    counts nothing — and its author is told at once, while they can still post again (it was
    told only at the lock, by the catch-up, in words saying the judge had not read it). The
    lock answers nothing more, and the vote posted after it counts."""
    t = table
    d, roles = await day_one(t)
    a, b = by_role(roles, "civilian")[:2]
    chat = await t.player(a).send(t.channel, f"头 {b}")  # a typo: chat
    await t.env.settle()
    await t.player(a).edit(chat, f"投 {b}")
    await t.env.settle()
    told = render("zh-CN", "vote.edited_unseen", {})
    assert replies_to(t.channel, chat) == [told]
    assert votes(await state_of(t, d)) == [(a, b, "vote.edited_unseen")]
    await d.post_vote(a, f"投 {b}", b)  # posted again: counts
    await t.player(a).edit(chat, f"投 {b}号")  # edited again: nothing more
    await t.env.settle()
    await t.run_deadline()
    assert replies_to(t.channel, chat) == [told]
    day = last_day(await state_of(t, d))
    assert dict(day.votes) == {a: b}
    assert [p.post_id for p in day.void_posts] == [str(chat.id)]


async def test_an_edit_of_chat_that_is_still_chat_is_not_answered(table: Table) -> None:
    t = table
    d, roles = await day_one(t)
    a = by_role(roles, "civilian")[0]
    chat = await t.player(a).send(t.channel, "我先想想")
    await t.player(a).edit(chat, "我再想想")
    await t.env.settle()
    assert replies_to(t.channel, chat) == [] and votes(await state_of(t, d)) == []


async def test_an_edit_of_a_post_made_before_the_vote_opened_is_left_alone(table: Table) -> None:
    """A night's chat edited into a vote by day: the lock's catch-up never reads it (it reads
    from the vote window's opening), so neither does the edit."""
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    a, b = by_role(roles, "civilian")[:2]
    night = await t.player(a).send(t.channel, "天黑聊两句")
    await d.lock()  # day 1
    await t.player(a).edit(night, f"投 {b}")
    await t.env.settle()
    assert replies_to(t.channel, night) == [] and votes(await state_of(t, d)) == []


async def update_without_edit(t: Table, message: discord.Message, **fields: Any) -> None:
    """Discord's update of a post that is no edit by its author: a pin, a link preview, embeds
    suppressed. Its payload carries the whole message, with no new edit time."""
    backend = t.env.backend
    stored = backend.get_message(message.channel.id, message.id)
    payload = dict(serializers.message_payload(backend, stored))
    payload.update(edited_timestamp=None, **fields)
    backend.emit("MESSAGE_UPDATE", payload)
    await t.env.settle()


async def test_a_pin_or_link_preview_of_a_vote_post_is_no_edit(table: Table) -> None:
    """A vote post pinned, or given its link preview: Discord updates it without any edit of
    the player's; the judge said 「编辑投票帖无效」 all the same. Now only an edit is answered."""
    t = table
    d, roles = await day_one(t)
    a, b, c = by_role(roles, "civilian")[:3]
    vote = await d.post_vote(a, f"投 {b} 理由 https://example.com/x", b)
    await update_without_edit(t, vote, pinned=True)
    await update_without_edit(t, vote, embeds=[{"type": "link", "url": "https://example.com/x"}])
    assert replies_to(t.channel, vote) == []
    await t.player(a).edit(vote, f"投 {c}")  # a real edit: answered, changes nothing
    await t.env.settle()
    assert replies_to(t.channel, vote) == [render("zh-CN", "vote.edited", {})]
    assert votes(await state_of(t, d)) == [(a, b, None)]


async def test_a_pin_of_a_post_edited_before_is_no_edit_even_after_a_restart(table: Table) -> None:
    """Discord's update for a pin carries the post's last edit time, if it was ever edited: that
    is no new edit. The judge compares it with the post it has cached, or, with none cached (after
    a restart), with the time now: it answered 「编辑投票帖无效」 again, as if edited anew."""
    t = table
    d, roles = await day_one(t)
    a, b, c = by_role(roles, "civilian")[:3]
    vote = await d.post_vote(a, f"投 {b}", b)
    await t.player(a).edit(vote, f"投 {c}")  # an edit: answered once, changes nothing
    await t.env.settle()
    answered = [render("zh-CN", "vote.edited", {})]
    assert replies_to(t.channel, vote) == answered
    cog = t.bot.get_cog("PlayCog")
    stored = t.env.backend.get_message(vote.channel.id, vote.id)
    pin = dict(serializers.message_payload(t.env.backend, stored), pinned=True)
    assert pin["edited_timestamp"]  # Discord's pin update: the old edit time
    cog._edited.clear()  # type: ignore[union-attr]  # what the judge answered: forgotten
    t.env.backend.emit("MESSAGE_UPDATE", pin)  # the post cached as edited then
    await t.env.settle()
    assert replies_to(t.channel, vote) == answered
    await t.env.advance_time(600)
    t.bot._connection._messages.clear()  # type: ignore[union-attr]  # nothing cached, as after a restart
    t.env.backend.emit("MESSAGE_UPDATE", pin)
    await t.env.settle()
    assert replies_to(t.channel, vote) == answered
    assert votes(await state_of(t, d)) == [(a, b, None)]


# -- threads, forwards, replies, quotes ---------------------------------------------------------


async def test_a_vote_in_a_thread_of_the_vote_channel_gets_the_hint(table: Table) -> None:
    """A side thread of the vote channel is no vote channel: a vote said there does not count,
    and its author is told where votes count (it was ignored without a word); once a day."""
    t = table
    vote_channel = t.guild.create_text_channel("votes")
    d, roles = await day_one(t, vote_channel=vote_channel)
    a, b = by_role(roles, "civilian")[:2]
    side = await open_thread(t, vote_channel, t.player(b), "讨论串")
    post = await t.player(a).send(side, f"投 {b}")
    await t.env.settle()
    hint = replies_to(side, post)
    assert len(hint) == 1 and f"<#{vote_channel.id}>" in hint[0]
    again = await t.player(a).send(side, f"投 {b}号")
    chat = await t.player(b).send(side, "随便聊聊")
    await t.env.settle()
    assert replies_to(side, again) == [] and replies_to(side, chat) == []
    assert votes(await state_of(t, d)) == []


async def test_a_vote_in_a_thread_of_the_discussion_gets_the_hint(table: Table) -> None:
    """The same in a public thread of the game channel, which is also the vote channel."""
    t = table
    d, roles = await day_one(t)
    a, b = by_role(roles, "civilian")[:2]
    side = await open_thread(t, t.channel, t.player(b), "分析")
    post = await t.player(a).send(side, f"投 {b}")
    await t.env.settle()
    assert len(replies_to(side, post)) == 1
    assert votes(await state_of(t, d)) == []


async def test_a_forwarded_vote_is_no_vote_and_says_so(table: Table) -> None:
    """Forwarding a vote post (someone's, or one's own from the discussion) is no vote: the
    forward's text is not the forwarder's post. It was ignored without a word while the channel
    shows 「投 N」 under the forwarder's name; now the judge answers it, the same for all."""
    t = table
    d, roles = await day_one(t)
    a, b, c = by_role(roles, "civilian")[:3]
    vote = await d.post_vote(a, f"投 {b}", b)
    forward = await t.player(c).forward(vote, t.channel)
    await t.env.settle()
    assert forward.message_snapshots and forward.content == ""
    assert replies_to(t.channel, forward) == [render("zh-CN", "vote.forwarded", {})]
    chat = await t.player(c).send(t.channel, "我先想想")
    forwarded_chat = await t.player(b).forward(chat, t.channel)
    await t.env.settle()
    assert replies_to(t.channel, forwarded_chat) == []
    assert votes(await state_of(t, d)) == [(a, b, None)]


async def test_replies_quotes_and_attachments_as_written(table: Table) -> None:
    """A reply to someone's vote counts by its own words only; a quote of a vote then one's own
    vote counts one's own (it was read as no vote at all); an image alone is chat."""
    t = table
    d, roles = await day_one(t)
    a, b, c, e = by_role(roles, "civilian")[:4]
    vote = await d.post_vote(a, f"投 {b}", b)
    agree = await t.player(c).send(t.channel, "同意", reply_to=vote)
    await t.player(e).send(t.channel, f"投 {a}", reply_to=vote)
    await t.player(b).send(t.channel, f"> 投 {b}\n投 {c}号")
    await t.player(c).send(t.channel, "", attachments=[("vote.png", b"png")])
    await t.env.settle()
    assert votes(await state_of(t, d)) == [(a, b, None), (e, a, None), (b, c, None)]
    assert replies_to(t.channel, agree) == []


async def test_a_keyword_alone_is_answered_with_the_post_itself(table: Table) -> None:
    """「投」 or 「投票」 alone names nobody: void, and the reply quotes what was posted (it
    quoted nothing: 「无法识别“”的投票对象」), a quote before it not included. (「改票」 alone
    is talk about changing votes: chat.)"""
    t = table
    d, roles = await day_one(t)
    a, b = by_role(roles, "civilian")[:2]
    alone = await t.player(a).send(t.channel, "投")
    changed = await t.player(b).send(t.channel, "> 投 3\n投票")
    await t.env.settle()
    assert replies_to(t.channel, alone) == [render("zh-CN", "vote.unknown_target", {"raw": "投"})]
    assert replies_to(t.channel, changed) == [
        render("zh-CN", "vote.unknown_target", {"raw": "投票"})
    ]
    assert votes(await state_of(t, d)) == [
        (a, None, "vote.unknown_target"),
        (b, None, "vote.unknown_target"),
    ]


# -- time: the lock's catch-up --------------------------------------------------------------------


async def test_posts_read_only_by_the_locks_catch_up_count_by_their_own_time(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Posts the gateway did not deliver before the deadline are read by the lock's catch-up and
    judged by their own time: made at the deadline's very millisecond, counted; one millisecond
    later, void; made well before it, counted."""
    t = table
    d, roles = await day_one(t)
    k = by_role(roles, "killer")[0]
    a, b, c = by_role(roles, "civilian")[:3]
    state = await state_of(t, d)
    assert state.deadline is not None
    deadline = dt.datetime.fromtimestamp(state.deadline / 1000, dt.UTC)
    votes_in = t.bot.runtime.votes
    ingest = votes_in.ingest
    seen: set[int] = set()

    async def lost_once(game_id: int, post: Any) -> Any:
        """The gateway loses each post once: only the catch-up reads it."""
        if post.id not in seen:
            seen.add(post.id)
            return None
        return await ingest(game_id, post)

    monkeypatch.setattr(votes_in, "ingest", lost_once)
    early = await t.player(a).send(t.channel, f"投 {k}")
    await t.advance((deadline - t.env.now()).total_seconds())
    on_time = await t.player(b).send(t.channel, f"投 {k}")
    await t.advance(0.001)
    late = await t.player(c).send(t.channel, f"投 {a}")
    assert on_time.created_at == deadline and late.created_at > deadline
    assert votes(await state_of(t, d)) == []  # nothing read yet
    await t.run_deadline()
    day = last_day(await state_of(t, d))
    assert dict(day.votes) == {a: k, b: k}
    assert [(p.post_id, p.void_reason) for p in day.void_posts] == [
        (str(late.id), "vote.after_deadline")
    ]
    assert {early.id, on_time.id, late.id} <= seen


# -- who posts ----------------------------------------------------------------------------------


async def test_who_posts_moderator_substitute_and_the_replies_tell_nothing_hidden(
    table: Table,
) -> None:
    """A moderator who does not play: void, told so. A substitute (替补) votes for the seat; the
    player replaced no longer can. Each refusal is a reply in the game's language naming only
    public facts."""
    t = table
    d, roles = await day_one(t)
    police = by_role(roles, "police")[0]
    a, b = by_role(roles, "civilian")[:2]
    mod = await t.moderator.send(t.channel, f"投 {a}")
    early = await d.post_vote(police, f"投 {a}", a)  # counts for the seat until replaced
    await t.moderator.slash(t.channel, "mod replace", seat=police, member=t.outside)
    await t.env.settle()
    gone = await t.player(police).send(t.channel, f"投 {b}")
    sub = await t.outside.send(t.channel, f"投 {b}号")
    await t.env.settle()
    not_player = render("zh-CN", "vote.not_player", {})
    assert replies_to(t.channel, mod) == [not_player]
    assert replies_to(t.channel, gone) == [not_player]
    ok = next(m for m in t.channel.history() if m.id == sub.id)
    assert any(str(r.emoji) == "✅" for r in ok.reactions)
    await t.run_deadline()
    day = last_day(await state_of(t, d))
    assert dict(day.votes) == {police: b}
    answered = [replies_to(t.channel, m) for m in (mod, early, gone)]
    assert not any(word in text for texts in answered for text in texts for word in ROLE_WORDS)


async def test_a_spectators_talk_about_the_vote_is_chat_and_their_vote_is_answered(
    table: Table,
) -> None:
    """Someone who holds no seat writing 「投票好激烈」 or "投票 is exciting" talks about the vote:
    it names no one, so it is chat — no reply, nothing recorded, no line in the 票型 (it got 「只
    有本局玩家可以投票」 and an invalid line). Their 「投 N」 reads as a vote and is answered as
    before; a player's 「投票好激烈」 is still an unreadable vote (they may have meant one)."""
    t = table
    d, roles = await day_one(t)
    a, b = by_role(roles, "civilian")[:2]
    talk = [await t.outside.send(t.channel, text) for text in ("投票好激烈", "投票 is exciting")]
    mod_talk = await t.moderator.send(t.channel, "投票 还有十分钟")
    await t.env.settle()
    assert [replies_to(t.channel, m) for m in (*talk, mod_talk)] == [[], [], []]
    assert votes(await state_of(t, d)) == []
    vote = await t.outside.send(t.channel, f"投 {b}")
    abstain = await t.outside.send(t.channel, "弃权")
    mine = await t.player(a).send(t.channel, "投票好激烈")
    await t.env.settle()
    not_player = render("zh-CN", "vote.not_player", {})
    assert replies_to(t.channel, vote) == [not_player]
    assert replies_to(t.channel, abstain) == [not_player]
    assert replies_to(t.channel, mine) == [
        render("zh-CN", "vote.unknown_target", {"raw": "好激烈"})
    ]
    await t.run_deadline()
    day = last_day(await state_of(t, d))
    assert sorted(p.void_reason or "" for p in day.void_posts) == [
        "vote.not_player",
        "vote.not_player",
        "vote.unknown_target",
    ]
    tally = next(text for text in t.public() if text.startswith("第1天票型"))
    assert tally.count("非本局玩家") == 2


async def test_a_spectators_talk_about_the_vote_gets_no_hint_nor_forward_answer(
    table: Table,
) -> None:
    """In the discussion, a spectator's 「投票好激烈」 earns no hint that votes go to the vote
    channel (their 「投 N」 still does, as anyone's); forwarded into the vote channel by a
    spectator, it gets no 「转发的帖子不计票」 (forwarded by a player, it still does)."""
    t = table
    votes_channel = t.guild.create_text_channel("votes")
    d = Driver(t, "v2", vote_channel=votes_channel)
    roles = await d.start()
    await d.lock()  # a quiet night: day 1
    a = by_role(roles, "civilian")[0]
    talk = await t.outside.send(t.channel, "投票好激烈")
    await t.env.settle()
    assert replies_to(t.channel, talk) == []
    vote = await t.outside.send(t.channel, f"投 {a}")
    await t.env.settle()
    assert len(replies_to(t.channel, vote)) == 1  # the day's hint
    forwarded = await t.outside.forward(talk, votes_channel)
    by_player = await t.player(a).forward(talk, votes_channel)
    await t.env.settle()
    assert replies_to(votes_channel, forwarded) == []
    assert replies_to(votes_channel, by_player) == [render("zh-CN", "vote.forwarded", {})]
    assert votes(await state_of(t, d)) == []


async def test_a_silenced_players_vote_post_counts_in_the_vote_channel(tmp_path: Path) -> None:
    """森林老人's silence keeps a player out of the discussion for the day, not out of the vote
    (docs/rules.md §1.6): their post in a vote channel of its own counts, unanswered but ✅."""
    async with running_table(tmp_path / "s.db", 11, EnvClock(), "silence") as t:
        vote_channel = t.guild.create_text_channel("votes")
        d = Driver(t, "v4_butterfly", vote_channel=vote_channel)
        roles = await d.start()
        elder = by_role(roles, "elder")[0]
        quiet, other = by_role(roles, "civilian")[:2]
        await d.power_by_menu(elder, "silence", quiet)
        await d.lock()  # day 1: `quiet` is silenced
        assert quiet in silenced(await t.bot.runtime.service.state(d.game_id))
        post = await t.player(quiet).send(vote_channel, f"投 {other}")
        await t.env.settle()
        state = await t.bot.runtime.service.state(d.game_id)
        assert votes(state) == [(quiet, other, None)]
        shown = next(m for m in vote_channel.history() if m.id == post.id)
        assert any(str(r.emoji) == "✅" for r in shown.reactions)
        assert replies_to(vote_channel, post) == []


# -- /vote typed by hand ------------------------------------------------------------------------


async def test_vote_command_typed_by_hand_reads_the_target_as_a_vote_post_does(
    table: Table,
) -> None:
    """`/vote target:` typed without the suggestions: 「5号」, 「五号」 and a player's name vote
    for that seat, 「弃票」 abstains, as the same words in a vote post would; what names nobody
    is refused privately, with the words typed, and nothing is recorded for it."""
    d, _ = await day_one(table)
    names = await table.bot.runtime.contexts.seat_names(d.game_id, await state_of(table, d))
    typed = {1: "5号", 2: "五号", 3: "弃票", 4: names[6]}
    for seat, target in typed.items():
        answer = await table.player(seat).slash(table.channel, "vote", target=target)
        assert answer.response is not None
    before = await state_of(table, d)
    unread = await table.player(7).slash(table.channel, "vote", target="谁呢")
    assert unread.ephemeral and unread.response is not None
    assert unread.response.content == render("en", "vote.unknown_target", {"raw": "谁呢"})
    after = await state_of(table, d)
    assert after.posts == before.posts
    assert sorted((v, t) for v, t, why in votes(after) if why is None) == [
        (1, 5), (2, 5), (3, None), (4, 6)
    ]  # fmt: skip
    assert next(p for p in after.posts if p.seat == 3).abstain


async def test_an_unreadable_target_is_quoted_as_text(table: Table) -> None:
    """The reply to a vote whose target cannot be read quotes the poster's words as text, as a
    name is in every post: 「投 <@&…>」 was answered with the role's mention (a pill under the
    judge's name), 「投 <#…>」 with a link to a channel; a /vote typed so is answered alike."""
    t = table
    d, roles = await day_one(t)
    a, b = by_role(roles, "civilian")[:2]
    role = await t.player(a).send(t.channel, f"投 <@&{t.mod_role.id}>")
    channel = await t.player(b).send(t.channel, f"投 <#{t.channel.id}>")
    await t.env.settle()
    assert replies_to(t.channel, role) == [
        render("zh-CN", "vote.unknown_target", {"raw": plain(f"<@&{t.mod_role.id}>")})
    ]
    assert replies_to(t.channel, channel) == [
        render("zh-CN", "vote.unknown_target", {"raw": plain(f"<#{t.channel.id}>")})
    ]
    assert votes(await state_of(t, d)) == [
        (a, None, "vote.unknown_target"),
        (b, None, "vote.unknown_target"),
    ]
    typed = await t.player(a).slash(t.channel, "vote", target="**谁**")
    assert typed.ephemeral and typed.response is not None
    assert typed.response.content == render("en", "vote.unknown_target", {"raw": "\\*\\*谁\\*\\*"})


def hold_first_vote(t: Table, monkeypatch: pytest.MonkeyPatch) -> tuple[asyncio.Event, list[int]]:
    """The first vote post's recording waits (its game busy, the database slow) until the
    event is set; its message id is listed once it waits. Its edits' wait for it is told to
    simcord as the external wait it depends on."""
    service = t.bot.runtime.service
    submit = service.submit
    recorded = asyncio.Event()
    held: list[int] = []

    async def slow_first(game_id: int, command: Any, **kwargs: Any) -> Any:
        if not held and not getattr(command, "edited_unseen", True):
            held.append(kwargs["message_id"])
            await t.env.external_wait(recorded.wait(), reason="the database is slow")
        return await submit(game_id, command, **kwargs)

    monkeypatch.setattr(service, "submit", slow_first)
    votes_in = t.bot.runtime.votes
    read_done = getattr(votes_in, "read_done", None)

    async def told_to_simcord(post_id: int) -> None:  # the edit's wait is on the held post
        assert read_done is not None
        await t.env.external_wait(read_done(post_id), reason="the post's reading, held above")

    monkeypatch.setattr(votes_in, "read_done", told_to_simcord, raising=False)
    return recorded, held


async def test_an_edit_handled_while_its_post_is_being_read_waits_for_it(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vote post is still being recorded (its game busy, the database slow) when its author
    fixes a typo in it: the edit waits for the post's own reading, so the vote counts as first
    posted and the edit is answered as an edit of a vote. (It recorded the edited text first, as
    a post edited before the judge read it, and the original was then dropped as its duplicate:
    the vote was void.)"""
    t = table
    d, roles = await day_one(t)
    a, b = by_role(roles, "civilian")[:2]
    recorded, held = hold_first_vote(t, monkeypatch)
    made = await t.player(a).send(t.channel, f"投 {b}")
    await t.player(a).edit(made, f"投 {b}号 理由：划水")  # a typo fixed, the same vote
    recorded.set()
    await t.env.settle()
    assert held == [made.id]
    assert votes(await state_of(t, d)) == [(a, b, None)]
    assert replies_to(t.channel, made) == [render("zh-CN", "vote.edited", {})]


async def test_two_edits_waiting_for_their_post_are_answered_once(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two quick edits of a vote post still being recorded both wait for it: the judge answers
    「编辑投票帖无效」 once, as for any later edit (both answered when they woke together)."""
    t = table
    d, roles = await day_one(t)
    a, b = by_role(roles, "civilian")[:2]
    recorded, held = hold_first_vote(t, monkeypatch)
    made = await t.player(a).send(t.channel, f"投 {b}")
    await t.player(a).edit(made, f"投 {b}号")
    await t.player(a).edit(made, f"投 {b}号！")
    recorded.set()
    await t.env.settle()
    assert held == [made.id]
    assert votes(await state_of(t, d)) == [(a, b, None)]
    assert replies_to(t.channel, made) == [render("zh-CN", "vote.edited", {})]


async def test_vote_command_typed_by_hand_takes_a_name_as_written(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slash command's option shows no Markdown: a target typed by hand that is a player's
    name exactly is that player, though a post would read its `~~…~~` as struck through (it
    voted for 「小明」 when 「小明~~大~~」 was typed)."""
    t = table
    d, roles = await day_one(t)
    a = by_role(roles, "civilian")[0]
    named = {n: f"p{n}" for n in range(1, 9)} | {3: "小明", 4: "小明~~大~~"}
    contexts = t.bot.runtime.contexts
    monkeypatch.setattr(contexts, "known_seat_names", lambda game_id, state: named)
    answer = await t.player(a).slash(t.channel, "vote", target="小明~~大~~")
    assert answer.response is not None
    assert [(v, target) for v, target, why in votes(await state_of(t, d))] == [(a, 4)]

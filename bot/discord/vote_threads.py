"""A forum game's 投票帖s on Discord: each day's vote post opened with its vote window and locked
at its 看表帖 (the steps as data: ``bot.runtime.hosting``).

Each step is idempotent, so a retry or a restart after a crash neither opens a second post nor
loses the first: the post's id is remembered under its day's own key (``vote_post:N``) once made;
a post made just before a crash, whose id was not remembered, is found by its title (which names
the game and the day) among the forum's posts before one is made. The main post's link to it is
marked due (``vote_post_link_due:N``) in the same write as the id and unmarked once sent, so a
retry after a failed send still links it. Opening a day's post again (a run-off) unlocks it;
locking a locked post does nothing.

The players vote in the 投票帖, so it is told each new deadline, as the main post is: a run-off's
reopening posts its own deadline there (sent once: a retry finds it among the post's newest
messages), and a moderator's notice of a moved, paused or resumed clock goes to the open day's
post too (`deadline_post`; the performer's send looks before posting).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import discord

from bot.discord.channels import channel_if_there, channel_of
from bot.discord.forum_tags import required_tags
from bot.records.render import Context, deadline_text
from bot.runtime.hosting import VotePostStep, is_forum, vote_post_key, vote_posts
from engine.effects import Announce
from engine.model import PhaseKind
from engine.state import GameState
from engine.windows import is_vote_window

if TYPE_CHECKING:
    from bot.discord.judge import Judge

log = logging.getLogger(__name__)


SendOnce = Callable[[discord.abc.Messageable, str], Awaitable[None]]

LINK_DUE = "vote_post_link_due:"
"""Game-row key prefix: a day's vote post whose link in the main post may not be sent yet."""

DEADLINE_NOTICES = frozenset({"deadline", "paused", "resumed"})
"""The 【管理】 notices (the engine's `mod.` announcements) of a clock moved (extend, shorten,
set-deadline), paused or resumed: posted in the main post, and in the open day's 投票帖 too
(`deadline_post`)."""


async def perform(judge: Judge, send_once: SendOnce, game_id: int, step: VotePostStep) -> None:
    """Open (or reopen) day `day`'s vote post and link it in the main post, or lock it (`day`
    None: every one of the game). `send_once`: the performer's send that looks before posting."""
    action, day = step.action, step.day
    info = await judge.runtime.service.info(game_id)
    posts = vote_posts(info.channels)
    if action == "close":  # one an admin deleted has nothing to lock
        for number, thread_id in posts.items():
            if day is None or number == day:
                thread = await channel_if_there(judge.client, thread_id)
                if isinstance(thread, discord.Thread) and not thread.locked:
                    await thread.edit(locked=True, reason="faguan: the day's 看表帖")
        return
    assert day is not None
    state = await judge.runtime.service.state(game_id)
    ctx = await judge.runtime.contexts.context(game_id, state)
    due = f"{LINK_DUE}{day}"
    thread = await channel_if_there(judge.client, posts[day]) if day in posts else None
    if thread is not None:  # opened before: a run-off (or a retry) opens it again
        post_id = thread.id
        if isinstance(thread, discord.Thread) and (thread.locked or thread.archived):
            await thread.edit(locked=False, archived=False, reason="faguan: a run-off")
        judge.runtime.routes.add_vote_post(game_id, day, post_id)
        window = state.window
        if (
            window is not None
            and is_vote_window(window)
            and window.revote > 0
            and window.number == day
            and isinstance(thread, discord.Thread)
        ):
            # the opening names the day's first deadline: the run-off's own is said there
            shown = _deadline_words(ctx, state, day, _deadline_shown(state, step))
            await send_once(thread, ctx.t("forum.vote_post_reopened", day=day, deadline=shown))
        if due not in info.channels:  # linked already (a run-off never links again)
            return
    else:  # not opened yet, or deleted by an admin: a new one, linked in the main post
        post_id = await _open(judge, game_id, ctx, state, step)
        await judge.runtime.service.set_channels(
            game_id, {vote_post_key(day): str(post_id), due: True}
        )
        judge.runtime.routes.add_vote_post(game_id, day, post_id)
    main = await channel_of(judge.client, int(info.channels["game"]))
    assert isinstance(main, discord.abc.Messageable)
    await send_once(main, ctx.t("forum.vote_post_link", day=day, link=f"<#{post_id}>"))
    await judge.runtime.service.set_channels(game_id, {due: None})


async def replace_deleted(judge: Judge, send_once: SendOnce, game_id: int, thread_id: int) -> None:
    """An admin deleted the 投票帖 of the day whose vote is open: the rest of the day's votes
    go in a new one, linked in the main post (the votes posted in the old one still count).
    Under the game's lock, so no input or delivery of the game interleaves; nothing if the
    vote has closed meanwhile, or the post was another day's."""
    service = judge.runtime.service
    async with service.holding(game_id):
        if not await service.is_active(game_id):
            return
        state = await service.state(game_id)
        window = state.window
        if window is None or not is_vote_window(window) or window.kind is not PhaseKind.DAY:
            return
        if vote_posts((await service.info(game_id)).channels).get(window.number) != thread_id:
            return
        step = VotePostStep("open", window.number, state.deadline)
        await perform(judge, send_once, game_id, step)


async def _open(
    judge: Judge, game_id: int, ctx: Context, state: GameState, step: VotePostStep
) -> int:
    """The id of the day's vote post: the one made before a retry, or a new one."""
    info = await judge.runtime.service.info(game_id)
    forum = await channel_of(judge.client, int(info.channels["vote"]))
    assert isinstance(forum, discord.ForumChannel)
    title = ctx.t("forum.vote_post_title", day=step.day, game=game_id)
    post = await _made_before(forum, title)
    if post is not None:
        log.info("game %s: reusing day %s's vote post made before a retry", game_id, step.day)
        return post.id
    deadline = _deadline_words(ctx, state, step.day, _deadline_shown(state, step))
    body = ctx.t("forum.vote_post_body", day=step.day, deadline=deadline)
    made = await forum.create_thread(name=title, content=body, applied_tags=required_tags(forum))
    return made.thread.id


async def deadline_post(
    judge: Judge, game_id: int, state: GameState, notice: Announce
) -> discord.Thread | None:
    """The 投票帖 a moderator's notice of the clock (`DEADLINE_NOTICES`) is posted in besides
    the main post: the open vote window's, where the players vote, or None (not a forum game,
    no vote open, its post not opened yet: it opens naming the deadline in force). Also None
    for a notice no longer in force in `state` (performed late, after another deadline was set,
    or in another window): the post is told only the deadline that stands."""
    section, _, name = notice.key.partition(".")
    if section != "mod" or name not in DEADLINE_NOTICES:
        return None
    info = await judge.runtime.service.info(game_id)
    window = state.window
    if not is_forum(info.channels) or window is None or not is_vote_window(window):
        return None
    deadline = dict(notice.params).get("deadline")
    in_force = state.paused if name == "paused" else not state.paused and deadline == state.deadline
    post_id = vote_posts(info.channels).get(window.number)
    if not in_force or post_id is None:
        return None
    thread = await channel_of(judge.client, post_id)
    return thread if isinstance(thread, discord.Thread) else None


def _deadline_words(ctx: Context, state: GameState, day: int | None, deadline: int | None) -> str:
    """Day `day`'s vote deadline as its 投票帖 names it: `deadline`, or while that day's window
    is paused the time kept (the clock stopped, there is no deadline to name)."""
    window = state.window
    if state.paused and window and window.kind is PhaseKind.DAY and window.number == day:
        left = -(-(state.paused_remaining or 0) // 60_000)  # whole minutes, rounded up
        return ctx.t("notice.paused") + ctx.t("pending.paused_left", minutes=left)
    return deadline_text(ctx, deadline)


def _deadline_shown(state: GameState, step: VotePostStep) -> int | None:
    """The day vote's deadline as it stands while that vote is open (an extension counts), else
    the one it opened with: a retry performed later never shows another window's deadline."""
    window = state.window
    if window is not None and window.kind is PhaseKind.DAY and window.number == step.day:
        return state.deadline
    return step.deadline if step.deadline is not None else state.deadline


async def _made_before(forum: discord.ForumChannel, title: str) -> discord.Thread | None:
    """The forum's post with this title, if the bot made it before (its id not remembered)."""
    found = discord.utils.get(forum.threads, name=title)
    if found is None:
        async for thread in forum.archived_threads(limit=None):
            if thread.name == title:
                return thread
    return found

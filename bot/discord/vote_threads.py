"""A forum game's 投票帖s on Discord: each day's vote post opened with its vote window and locked
at its 看表帖 (the steps as data: ``bot.runtime.hosting``).

Each step is idempotent, so a retry or a restart after a crash neither opens a second post nor
loses the first: the post's id is remembered under its day's own key (``vote_post:N``) once made;
a post made just before a crash, whose id was not remembered, is found by its title (which names
the game and the day) among the forum's posts before one is made. The main post's link to it is
marked due (``vote_post_link_due:N``) in the same write as the id and unmarked once sent, so a
retry after a failed send still links it. Opening a day's post again (a run-off) unlocks it;
locking a locked post does nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import discord

from bot.discord.channels import channel_of
from bot.records.render import Context, deadline_text
from bot.runtime.hosting import VotePostStep, vote_post_key, vote_posts
from engine.model import PhaseKind
from engine.state import GameState

if TYPE_CHECKING:
    from bot.discord.judge import Judge

log = logging.getLogger(__name__)


SendOnce = Callable[[discord.abc.Messageable, str], Awaitable[None]]

LINK_DUE = "vote_post_link_due:"
"""Game-row key prefix: a day's vote post whose link in the main post may not be sent yet."""


async def perform(judge: Judge, send_once: SendOnce, game_id: int, step: VotePostStep) -> None:
    """Open (or reopen) day `day`'s vote post and link it in the main post, or lock it (`day`
    None: every one of the game). `send_once`: the performer's send that looks before posting."""
    action, day = step.action, step.day
    info = await judge.runtime.service.info(game_id)
    posts = vote_posts(info.channels)
    if action == "close":
        for number, thread_id in posts.items():
            if day is None or number == day:
                thread = await channel_of(judge.client, thread_id)
                if isinstance(thread, discord.Thread) and not thread.locked:
                    await thread.edit(locked=True, reason="faguan: the day's 看表帖")
        return
    assert day is not None
    state = await judge.runtime.service.state(game_id)
    ctx = await judge.runtime.contexts.context(game_id, state)
    due = f"{LINK_DUE}{day}"
    if day in posts:  # opened before: a run-off (or a retry) opens it again
        post_id = posts[day]
        thread = await channel_of(judge.client, post_id)
        if isinstance(thread, discord.Thread) and (thread.locked or thread.archived):
            await thread.edit(locked=False, archived=False, reason="faguan: a run-off")
        judge.runtime.routes.add_vote_post(game_id, day, post_id)
        if due not in info.channels:  # linked already (a run-off never links again)
            return
    else:
        post_id = await _open(judge, game_id, ctx, state, step)
        await judge.runtime.service.set_channels(
            game_id, {vote_post_key(day): str(post_id), due: True}
        )
        judge.runtime.routes.add_vote_post(game_id, day, post_id)
    main = await channel_of(judge.client, int(info.channels["game"]))
    assert isinstance(main, discord.abc.Messageable)
    await send_once(main, ctx.t("forum.vote_post_link", day=day, link=f"<#{post_id}>"))
    await judge.runtime.service.set_channels(game_id, {due: None})


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
    deadline = deadline_text(ctx, _deadline_shown(state, step))
    body = ctx.t("forum.vote_post_body", day=step.day, deadline=deadline)
    return (await forum.create_thread(name=title, content=body)).thread.id


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

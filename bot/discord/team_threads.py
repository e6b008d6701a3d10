"""Changing who is in a team thread (the killers', the police's, the thieves'), when Discord
will not: the thread archived, or the bot without what it needs there.

Discord archives a thread after its auto-archive duration without a message (the team threads
are made with the longest, a week: `bot.discord.effects`) and then neither adds a member to it
nor takes one out (400, 50083) until it is unarchived. A change it refuses outright (403: the
bot lacks Manage Threads) is skipped, not retried: a game's private effects are delivered in
order, so a retried one would hold every later one (the night's power menus, the check results)
until someone fixes the server. Its moderators are told privately instead, and the next start
puts each thread's members right (`bot.discord.permissions.set_team_threads`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord

from bot.discord.moderator_notices import dm_moderators
from bot.discord.required_permissions import REQUIRED_PERMISSIONS, permission_names
from bot.records.i18n import render
from engine.model import Team

if TYPE_CHECKING:
    from bot.discord.judge import Judge

log = logging.getLogger(__name__)

THREAD_ARCHIVED = 50083
"""Discord's error code for a change to an archived thread (adding or removing a member)."""
THREADS_REFUSED = "threads_refused:"
"""Game-row key prefix: the game's moderators were told that Discord refused a change to its
team threads' members, for this cause (what the bot lacks there): once per game and cause."""
THREAD_PERMISSIONS = ("view_channel", "send_messages_in_threads", "manage_threads")
"""What adding a member to a team thread or taking one out needs (Manage Threads: the threads
are private and not invitable), by discord.py's names."""


def team_thread_name(game_id: int, team: Team, locale: str) -> str:
    """A team thread's name, in the game's language: it names the game and the team (seen only
    by the team and the server's thread managers), so a retry finds the thread it made."""
    team_name = render(locale, f"thread_team.{team.value}")
    return render(locale, "names.team_thread", {"game": game_id, "team": team_name})


async def thread_member(thread: discord.Thread, user: discord.abc.Snowflake, *, add: bool) -> None:
    """Add `user` to a team thread or take them out. Discord refuses both on an archived thread
    (400, 50083): unarchived first when the cache says it is, and on that error (the cache may
    be behind, or the thread archived since) unarchived and tried once more. Unarchiving a
    thread that is not locked needs no more than posting in it."""
    change = thread.add_user if add else thread.remove_user
    if thread.archived:
        await thread.edit(archived=False)
    try:
        await change(user)
    except discord.HTTPException as exc:
        if exc.code != THREAD_ARCHIVED:
            raise
        await thread.edit(archived=False)
        await change(user)


async def tell_threads_refused(judge: Judge, game_id: int, thread: discord.Thread) -> None:
    """Discord refused to add a member to one of the game's team threads or take one out (403):
    the game goes on without it, and its moderators are told by DM what the bot lacks there,
    once per game and cause (the mark claimed before the DMs: of two at once, one tells). On
    resume `bot.discord.permissions.reconcile` sets each team thread's members from the state
    (`set_team_threads`), as the notice says.

    When it fails depends on hidden roles (a dead killer leaving the killers' thread), so only
    the game's moderators hear of it, privately: never one who plays in it (`moderators_of`),
    nothing in the game channel or the override log, no log line above DEBUG. The notice names
    the channel holding the threads, not the thread (nor the team, nor the player)."""
    me = thread.guild.me
    rights = thread.permissions_for(me) if me is not None and thread.parent is not None else None
    lacking = [
        name for name in THREAD_PERMISSIONS if rights is not None and not getattr(rights, name)
    ] or ["manage_threads"]
    # the key names the cause by Discord's English names, as games stored it before
    key = THREADS_REFUSED + ", ".join(REQUIRED_PERMISSIONS[name] for name in lacking)
    log.debug("game %s: Discord refused a change to a team thread's members (%s)", game_id, key)
    info = await judge.runtime.service.info(game_id)
    if info.channels.get(key):  # told: no write
        return
    # claimed before anything is said: of two at once (a restart's reconcile beside the private
    # lane), one tells; a notice lost half-way (a crash) is not said again
    if not await judge.runtime.service.claim_channel(game_id, key):
        return
    ctx = await judge.runtime.contexts.context(game_id)
    missing = f"{permission_names(ctx.locale, lacking)} (<#{thread.parent_id}>)"
    notice = ctx.t("log.threads_refused", game=game_id, missing=missing)
    await dm_moderators(judge, game_id, notice, privately=True)

"""A post of the judge's that the server's AutoMod blocked: the moderators are told what to do.

Discord's AutoMod applies its keyword rules to bots too unless their role is exempted, and a
server's word list can hold the game's own words (杀手, 投票…): the post is refused (Discord:
200000, "Message was blocked by AutoMod"; 200001 for a title) and retried like any failure, so
the game waits until the server lets it through. Instead of the stuck notice's "check Discord"
five tries later, the game's moderators are told at once, by DM, what blocked it and how to let
the judge through; once per game per process. The notice names neither the post nor where it
went (it may have been a team's thread: when that fails depends on roles), and says nothing in
a channel.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord

from bot.discord.moderator_notices import dm_moderators

if TYPE_CHECKING:
    from bot.discord.judge import Judge

log = logging.getLogger(__name__)

BLOCKED = frozenset({200000, 200001})
"""Discord's error codes for a message (or a forum post's title) AutoMod blocked."""


async def tell_if_blocked(judge: Judge, game_id: int, exc: Exception) -> None:
    """If `exc` is AutoMod's refusal, tell the game's moderators (once per game)."""
    if not isinstance(exc, discord.HTTPException) or exc.code not in BLOCKED:
        return
    if game_id in judge.automod_told:
        return
    judge.automod_told.add(game_id)
    log.warning("game %s: the server's AutoMod blocked a post of the judge's; moderators told",
                game_id)  # fmt: skip
    ctx = await judge.runtime.contexts.context(game_id)
    await dm_moderators(judge, game_id, ctx.t("log.automod_blocked", game=game_id), privately=True)

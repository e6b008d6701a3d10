"""Telling a game's moderators what needs them — a judge stuck, a permission refused, the
players' role or a channel deleted: by DM to each moderator of the game (never one who plays in
it: `moderators_of`), and, for what is no secret, in the server's override log channel if one
is set. Each part on its own: a closed DM or a log channel that refuses stops neither the other
nor the game; what is lost is logged (at DEBUG where its timing could follow hidden roles).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord

from bot.discord.interactions import moderators_of
from bot.discord.override_log import log_channel

if TYPE_CHECKING:
    from bot.discord.judge import Judge

log = logging.getLogger(__name__)

QUIET = discord.AllowedMentions.none()
"""A notice pings no one."""


async def dm_moderators(judge: Judge, game_id: int, text: str, *, privately: bool = False) -> None:
    """`text` by DM to each moderator of the game; a refused DM is logged (`privately`: at
    DEBUG only, as what the notice is about — a team thread — is hidden)."""
    for moderator in await moderators_of(judge, game_id):
        try:
            await moderator.send(text, allowed_mentions=QUIET)
        except discord.HTTPException:
            log.log(logging.DEBUG if privately else logging.WARNING,
                    "game %s: a moderator does not accept DMs", game_id)  # fmt: skip


async def to_override_log(judge: Judge, game_id: int, text: str) -> None:
    """`text` in the override log channel of the game's server, if one is set."""
    try:
        info = await judge.runtime.service.info(game_id)
        channel = await log_channel(judge, info.server_id)
        if channel is not None:
            await channel.send(text, allowed_mentions=QUIET)
    except Exception as exc:  # the database or the channel away: the log line stands
        log.warning(
            "game %s: could not write to the override log (%s)", game_id, type(exc).__name__
        )


async def tell_moderators(judge: Judge, game_id: int, text: str) -> None:
    """`text` in the override log and by DM to each moderator of the game."""
    await to_override_log(judge, game_id, text)
    await dm_moderators(judge, game_id, text)

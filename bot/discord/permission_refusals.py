"""Discord refused one of a game's permission edits (the bot lacks Manage Roles in its channels,
or a member's top role is above the bot's): the game goes on.

The permissions only mirror the game: who may vote, who is out, who is silenced is the engine's
to say, and it refuses what the rules refuse whatever the channels allow. So a refused edit is
not retried (it would hold every public effect behind it, the day's post and its deadline
included, until someone fixes the server). What the overwrite would have stopped is caught as
it happens instead: a post in the discussion by a player the game keeps from speaking there is
taken down and the author told privately (`bot.discord.cogs.play`; this needs Manage Messages;
in the vote channel, a post Discord would not take down is counted as the rules say).

Moderators are told once per game per process: a warning in the log and, if the server has
one, a line in its override log channel. Neither names a player: whose overwrite it was would
say nothing hidden (deaths and silences are announced), but the line need not.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord

if TYPE_CHECKING:
    from bot.discord.judge import Judge

log = logging.getLogger(__name__)


async def tell_refused(judge: Judge, game_id: int) -> None:
    """Say, once per game, that its channels' permissions could not be set."""
    if game_id in judge.refused_permissions:
        return
    judge.refused_permissions.add(game_id)
    log.warning(
        "game %s: Discord refused a permission edit in the game's channels (the bot lacks "
        "Manage Roles there, or a player's top role is above the bot's); the game goes on, and "
        "posts the game does not allow are taken down instead",
        game_id,
    )
    from bot.discord.override_log import log_channel

    try:
        info = await judge.runtime.service.info(game_id)
        channel = await log_channel(judge, info.server_id)
        if channel is None:
            return
        ctx = await judge.runtime.contexts.context(game_id)
        await channel.send(
            ctx.t("log.permissions_refused", game=game_id),
            allowed_mentions=discord.AllowedMentions.none(),
        )
    except Exception as exc:  # the database or the channel away: the log line stands
        log.warning(
            "game %s: could not write the warning to the override log (%s)",
            game_id,
            type(exc).__name__,
        )

"""Authority from the config, checked against each server: a moderator role that exists in no
role of a server is named in a warning (the log, and the server's override log channel if set),
at start and when the bot joins a server."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord

from bot.records.i18n import render

if TYPE_CHECKING:
    from bot.discord.judge import Judge

log = logging.getLogger(__name__)


def has_moderator_role(judge: Judge, guild: discord.Guild) -> bool:
    """Whether the configured moderator role is one of this server's roles (never @everyone)."""
    wanted = judge.runtime.settings.discord.moderator_role
    return any(wanted.matches(r.id, r.name) for r in guild.roles if not r.is_default())


async def warn_missing_moderator_role(judge: Judge, guild: discord.Guild) -> bool:
    """Warn when the moderator role is missing here (then only Manage Server moderates); True
    if a warning was given. The override log line is best effort: the log line always stands."""
    if has_moderator_role(judge, guild):
        return False
    wanted = judge.runtime.settings.discord.moderator_role
    log.warning(
        "guild %s: the moderator role (discord.moderator_role = %s) is no role of this server; "
        "only members with Manage Server can moderate there",
        guild.id,
        wanted,
    )
    from bot.discord.override_log import log_channel

    try:
        channel = await log_channel(judge, guild.id)
        if channel is not None:
            text = render(
                judge.runtime.settings.game.language, "log.no_moderator_role", {"role": str(wanted)}
            )
            await channel.send(text, allowed_mentions=discord.AllowedMentions.none())
    except Exception as exc:  # the database or the channel away: the log line stands
        log.warning(
            "guild %s: could not write the warning to the override log (%s)",
            guild.id,
            type(exc).__name__,
        )
    return True

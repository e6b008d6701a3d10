"""The Discord work of a game's start, as outbox effects of the shell's own (not the engine's).

Why shell-side: the players' role and the channels' permission overwrites are Discord plumbing,
not rules. The engine knows nothing of Discord, its effects are what a replay reproduces, and the
public replay format must not change; so these effects never reach ``engine.codec``. They are
written in the transaction that creates the game, before its engine effects (the role DMs, the
first window's channel permissions, which need the role), and performed in that order by
``bot.discord.effects`` (the steps as data: ``bot.runtime.start_steps``). Each step is
idempotent, so a retry or a restart after a crash finishes the start without doing anything
twice:

- ``overwrites``: the bot's own allow overwrite on the game and vote channels (setting the same
  overwrite again changes nothing);
- ``role``: the players' role, found by its id in the game's channels, else by its name (which
  names the game, so a role created just before a crash is found, not created again), else
  created; its id is remembered in ``channels["players_role"]``;
- ``members``: every seat holder added to that role (members who have it already are skipped).

A step Discord refuses for good (no Manage Roles, a player who left the server) is logged and
skipped rather than retried forever: it must not hold back the role DMs queued behind it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import discord

from bot.discord import permissions
from bot.discord.permission_refusals import tell_refused
from bot.records.i18n import LOCALES, render
from bot.runtime.hosting import is_forum

if TYPE_CHECKING:
    from bot.discord.judge import Judge

log = logging.getLogger(__name__)


def role_name(game_id: int, locale: str) -> str:
    """The players' role's name, in the game's language: it names the game, so a retry finds
    the role it made."""
    return render(locale, "names.players_role", {"game": game_id})


BOT_ALLOW = {
    "send_messages": True,
    "read_messages": True,
    "add_reactions": True,
    "manage_threads": True,
    "create_private_threads": True,
    "send_messages_in_threads": True,
}
"""The bot's own overwrite on a game's channels: it keeps posting (its 看表帖 and results) when
players are silenced."""


async def perform(judge: Judge, game_id: int, step: str) -> None:
    """Perform one start step on Discord (idempotent: see the module)."""
    info = await judge.runtime.service.info(game_id)
    guild = judge.client.get_guild(info.server_id)
    if guild is None:
        raise RuntimeError(f"game {game_id}: its server is not available")
    if step == "overwrites":
        wanted = discord.PermissionOverwrite(**BOT_ALLOW)
        for channel in _channels(guild, info.channels):
            if isinstance(channel, discord.ForumChannel):  # its posts: players only
                try:
                    await permissions.set_everyone(channel, closed=True)
                except discord.Forbidden:  # no Manage Roles: non-players' votes are refused
                    log.warning("game %s: cannot close the forum to non-players", game_id)
                    await tell_refused(judge, game_id)
            if channel.overwrites_for(guild.me) != wanted:
                try:
                    await channel.set_permissions(guild.me, overwrite=wanted)
                except discord.Forbidden:  # no Manage Roles there: logged, the game goes on
                    log.warning("game %s: cannot set the bot's own overwrite", game_id)
                    await tell_refused(judge, game_id)
    elif step == "role":
        try:
            await _role(judge, guild, game_id)
        except discord.Forbidden:  # no Manage Roles: the game goes on, its channels stay open
            log.warning("game %s: cannot make the players' role (missing permission)", game_id)
            await tell_refused(judge, game_id)
    else:
        role = await _known_role(judge, guild, game_id)
        if role is None:
            log.warning("game %s: no players' role to add the players to", game_id)
            return
        for user_id in sorted(await seat_holders(judge, game_id)):
            try:
                member = guild.get_member(user_id) or await guild.fetch_member(user_id)
                if all(r.id != role.id for r in member.roles):
                    await member.add_roles(role, reason="faguan: joined a game")
            except (discord.NotFound, discord.Forbidden) as exc:  # left the server, or above us
                why = type(exc).__name__
                log.warning("game %s: a player was not given the role (%s)", game_id, why)


def _channels(guild: discord.Guild, channels: Mapping[str, Any]) -> list[permissions.Hosting]:
    """The game and vote channels (a forum game: the forum; its main post is one of its posts)."""
    names = ("vote",) if is_forum(channels) else ("game", "vote")
    found: list[permissions.Hosting] = []
    for cid in dict.fromkeys(int(channels[name]) for name in names):
        channel = guild.get_channel(cid)
        if not isinstance(channel, discord.TextChannel | discord.ForumChannel):
            raise RuntimeError(f"channel {cid} is not available")
        found.append(channel)
    return found


async def _known_role(judge: Judge, guild: discord.Guild, game_id: int) -> discord.Role | None:
    """The role remembered for the game, if it still exists."""
    role_id = (await judge.runtime.service.info(game_id)).channels.get("players_role")
    return guild.get_role(int(role_id)) if role_id is not None else None


async def _role(judge: Judge, guild: discord.Guild, game_id: int) -> None:
    """Find or make the players' role, and remember its id."""
    if await _known_role(judge, guild, game_id) is not None:
        return
    locale = judge.runtime.contexts.locale_of(await judge.runtime.service.info(game_id))
    # found by its name in any language (one made by a version that named it in Chinese only)
    names = {role_name(game_id, other) for other in LOCALES}
    role = next((r for r in guild.roles if r.name in names), None)
    if role is None:  # not in the cache: ask Discord before making one
        role = next((r for r in await guild.fetch_roles() if r.name in names), None)
    if role is None:
        name = role_name(game_id, locale)
        role = await guild.create_role(name=name, reason="faguan: players of a game")
    else:
        log.info("game %s: reusing the players' role made before a retry", game_id)
    await judge.runtime.service.set_channels(game_id, {"players_role": str(role.id)})


async def seat_holders(judge: Judge, game_id: int) -> set[int]:
    """The user ids holding the game's seats now."""
    seats = await judge.runtime.service.repo.current_seats(game_id)
    return {term.user_id for term in seats.values() if term.user_id is not None}

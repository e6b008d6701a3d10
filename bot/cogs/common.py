"""What the cogs share: the game an interaction is about, and answers in the asker's language."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord

from bot.i18n import render
from bot.store import GameNotFound, GameStatus

if TYPE_CHECKING:
    from bot.app import FaguanBot


class NoGame(Exception):
    """The interaction is not about any game (with the message key saying why)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


async def find_game(
    bot: FaguanBot, interaction: discord.Interaction[Any], game_id: int | None = None
) -> int:
    """The game of this channel (or thread), or the user's only active game in a DM."""
    if game_id is not None:
        try:
            info = await bot.service.info(game_id)
        except GameNotFound:
            raise NoGame("notice.no_game") from None
        # A game is reached from its own server, or from a DM by one of its players.
        if interaction.guild is not None:
            if info.server_id != interaction.guild.id:
                raise NoGame("notice.no_game")
        else:
            repo = bot.service.repo
            held = await repo.games_of_user(interaction.user.id, statuses=tuple(GameStatus))
            if all(game != game_id for game, _seat in held):
                raise NoGame("notice.no_game")
        return game_id
    channel = interaction.channel
    if channel is not None:
        for cid in (channel.id, getattr(channel, "parent_id", None)):
            if cid is not None and cid in bot.channel_games:
                return bot.channel_games[cid]
    ids = sorted(
        {game for game, _seat in await bot.service.repo.games_of_user(interaction.user.id)}
    )
    if len(ids) == 1:
        return int(ids[0])
    raise NoGame("notice.no_game" if not ids else "notice.which_game")


def is_moderator(bot: FaguanBot, member: discord.abc.User) -> bool:
    """Moderator role (from the config) or Manage Server."""
    if not isinstance(member, discord.Member):
        return False
    if member.guild_permissions.manage_guild:
        return True
    wanted = bot.settings.discord.moderator_role
    return any(wanted.matches(role.id, role.name) for role in member.roles)


def text(bot: FaguanBot, interaction: discord.Interaction[Any], key: str, **params: object) -> str:
    """A catalog text in the language of the person asking."""
    return render(bot.locale_of(interaction), key, params)

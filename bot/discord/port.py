"""The runtime's port on Discord: the few reads, sends and look-ups only Discord can do.

`bot.runtime.port.ChatPort` says what the runtime needs; this is the one implementation. It holds
no game logic: which posts are votes, whom to remind and when to lock are the runtime's.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import discord

from bot.discord import lost_channels, membership, permissions
from bot.discord.channels import channel_if_there
from bot.discord.judge import judge_of
from bot.discord.moderator_notices import dm_moderators
from bot.records.i18n import render
from bot.runtime.port import ChannelPost

if TYPE_CHECKING:
    from bot.discord.effects import DiscordEffects
    from bot.discord.judge import Judge

log = logging.getLogger(__name__)


class DiscordPort:
    """`ChatPort` on a discord.py client (its caches first, its HTTP calls when they miss)."""

    def __init__(self, client: discord.Client, effects: DiscordEffects) -> None:
        self.client = client
        self.effects = effects

    @property
    def judge(self) -> Judge:
        """The client's judge (built after this port: the runtime needs its port first)."""
        return judge_of(self.client)

    def serves(self, server_id: int) -> bool:
        return self.judge.client.get_guild(server_id) is not None

    def member_name(self, server_id: int, user_id: int) -> str | None:
        guild = self.judge.client.get_guild(server_id)
        member = guild.get_member(user_id) if guild is not None else None
        return member.display_name if member is not None else None

    async def posts_after(self, channel_id: int, after_id: int) -> AsyncIterator[ChannelPost]:
        # a forum game's vote post may be out of the cache (locked, archived)
        channel = await channel_if_there(self.judge.client, channel_id)
        if not isinstance(channel, discord.TextChannel | discord.Thread):
            return
        history = channel.history(limit=None, after=discord.Object(after_id), oldest_first=True)
        async for message in history:
            if is_persons_post(message):
                yield post_of(message)

    async def send_private(self, user_id: int, text: str) -> bool:
        client = self.judge.client
        try:
            user = client.get_user(user_id) or await client.fetch_user(user_id)
            dm = user.dm_channel or await user.create_dm()
            await self.effects.send_once(dm, text)
        except discord.Forbidden:
            return False
        return True

    async def tell_stuck(self, game_id: int, attempts: int, *, privately: bool = False) -> None:
        info = await self.judge.runtime.service.info(game_id)
        language = self.judge.runtime.contexts.locale_of(info)
        text = render(language, "notice.stuck", {"attempts": attempts})
        if privately:  # a private effect fails: when it does depends on roles
            private = render(
                language, "notice.stuck_private", {"attempts": attempts, "game": game_id}
            )
            await dm_moderators(self.judge, game_id, private)
            return
        channel = await channel_if_there(self.judge.client, int(info.channels["game"]))
        if isinstance(channel, discord.TextChannel | discord.Thread):
            wanted = self.judge.runtime.settings.discord.moderator_role
            role = next((r for r in channel.guild.roles if wanted.matches(r.id, r.name)), None)
            pings = discord.AllowedMentions(roles=[role] if role else False)  # that role only
            content = f"{role.mention} {text}" if role else text
            try:
                await channel.send(content, allowed_mentions=pings)
                return
            except discord.HTTPException as exc:  # the channel is what fails: told by DM
                log.info("game %s: stuck notice refused there: %s", game_id, type(exc).__name__)
        told = render(language, "notice.stuck_dm", {"attempts": attempts, "game": game_id})
        await dm_moderators(self.judge, game_id, told)

    async def lost_channel(self, game_id: int) -> str | None:
        return await lost_channels.lost_channel(self.judge, game_id)

    async def tell_stopped(self, game_id: int, lost: str) -> None:
        await lost_channels.tell_stopped(self.judge, game_id, lost)

    async def reconcile_permissions(self, game_id: int) -> None:
        await membership.roles_back(self.judge, game_id)
        await permissions.reconcile(self.judge, game_id)

    def recovering(self, on: bool) -> None:
        self.effects.recovering = on


def is_persons_post(message: discord.Message) -> bool:
    """Whether a message is a person's own post: no bot's or webhook's, and no system message
    (Discord writes those: a thread's creation, whose text is the thread's name, a pin, a
    member joining), even where Discord names a person as its author."""
    return not message.author.bot and message.webhook_id is None and not message.is_system()


def post_of(message: discord.Message) -> ChannelPost:
    """A Discord message as the runtime reads a post: its own id, author, text and time."""
    return ChannelPost(
        id=message.id,
        author_id=message.author.id,
        content=message.content,
        created_at=message.created_at,
        edited=message.edited_at is not None,
    )

"""Channels and threads by id: from discord.py's cache, else asked of Discord.

The cache misses what the gateway has not sent: an archived thread (a locked 投票帖, a team
thread after a restart), a channel of a guild still loading. One place asks, so every caller
treats a miss the same way.
"""

from __future__ import annotations

import discord

Channel = discord.abc.GuildChannel | discord.Thread


async def channel_of(client: discord.Client, channel_id: int) -> Channel:
    """A channel or thread by id: from the cache, else from Discord (raises if it is gone)."""
    channel = client.get_channel(channel_id) or await client.fetch_channel(channel_id)
    assert isinstance(channel, discord.abc.GuildChannel | discord.Thread)
    return channel


async def channel_if_there(client: discord.Client, channel_id: int) -> Channel | None:
    """``channel_of``, or None if the channel was deleted or the bot may no longer see it."""
    try:
        return await channel_of(client, channel_id)
    except (discord.NotFound, discord.Forbidden):
        return None

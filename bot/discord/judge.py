"""What every part of the Discord layer is given: the discord.py client and the runtime it serves.

Cogs, views, the effect performer and the helpers take a `Judge` rather than the client class, so
none of them imports the client module (`bot.discord.client` imports them, never the reverse).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import discord
from discord.ext import commands

from bot.runtime.runtime import Runtime


@dataclass(frozen=True)
class Judge:
    """The client (Discord's caches and HTTP calls) and the runtime (games, deadlines, store)."""

    client: commands.Bot
    runtime: Runtime
    refused_permissions: set[int] = field(default_factory=set)
    """Games whose permission edits Discord refused, told once per process (see
    `bot.discord.permission_refusals.tell_refused`)."""
    automod_told: set[int] = field(default_factory=set)
    """Games whose moderators were told that AutoMod blocked a post (`bot.discord.automod`)."""


def judge_of(client: discord.Client) -> Judge:
    """The judge a client holds (for persistent views, which discord.py gives only the client)."""
    judge = getattr(client, "judge", None)
    if not isinstance(judge, Judge):
        raise TypeError("this client holds no faguan Judge")
    return judge

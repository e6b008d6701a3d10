"""Sending once: Discord has no idempotent send, so an effect performed again (a retry, or
recovery after a crash between the send and its done mark) first looks for its own earlier send
among the bot's messages in the channel, and skips the send if it is there.

It looks from shortly before the effect was recorded on, oldest first: its own send came after
the record, and an older message with the same text (a second identical confirmation, a pass on
two nights) is no sign of it. Where the record time is not known, among the newest messages."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from dataclasses import dataclass

import discord

from bot.store import OutboxItem

RECENT = 30
"""The newest messages looked at where the record time is not known."""
SINCE_LIMIT = 100
"""Messages looked at from the record time on (one page of Discord's history)."""
CLOCK_SLACK = dt.timedelta(seconds=2)
"""How far before the record time the look begins: the bot's clock against Discord's."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """How an effect is performed: for the first time, or maybe again (`again`), and then
    since when it was recorded (`since`; None: not known)."""

    again: bool
    since: dt.datetime | None = None

    @classmethod
    def of(cls, item: OutboxItem, recovering: bool) -> Attempt:
        """The attempt `item` is: maybe again while recovering or after a failed attempt."""
        return cls(again=recovering or item.attempts > 0, since=item.created_at)

    def earlier(self, channel: discord.abc.Messageable) -> AsyncIterator[discord.Message]:
        """The messages among which a repeat looks for its own earlier send."""
        if self.since is None:
            return channel.history(limit=RECENT)
        after = discord.Object(discord.utils.time_snowflake(self.since - CLOCK_SLACK))
        return channel.history(limit=SINCE_LIMIT, after=after, oldest_first=True)


MAYBE_AGAIN = Attempt(again=True)
"""An attempt that may repeat one whose record time is not known."""

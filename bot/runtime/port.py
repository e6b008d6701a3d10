"""The port: what the runtime asks of the chat platform, as a Protocol the Discord layer implements.

The runtime decides (which posts to read, when to lock, whom to remind); only the platform can
read a channel's history, send a private message or look a member up. Keeping those few calls
behind this Protocol lets the runtime run without Discord (tests/runtime drive it with a fake).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

DISCORD_EPOCH_MS = 1_420_070_400_000
"""Message ids are snowflakes: milliseconds since this instant, shifted left by 22 bits."""


def snowflake_at(when: datetime) -> int:
    """The lowest message id a post made at `when` can have (a history read starts after it)."""
    return (int(when.timestamp() * 1000) - DISCORD_EPOCH_MS) << 22


@dataclass(frozen=True, kw_only=True)
class ChannelPost:
    """A person's post in a game's vote channel, as the runtime reads it."""

    id: int
    author_id: int
    content: str
    created_at: datetime
    edited: bool = False


class ChatPort(Protocol):
    """The platform's side of the runtime: reads, sends and look-ups only it can do."""

    def serves(self, server_id: int) -> bool:
        """Whether this process holds the server (sharding: another process holds the rest)."""
        ...

    def member_name(self, server_id: int, user_id: int) -> str | None:
        """A member's display name from the platform's cache, if it is there."""
        ...

    def posts_after(self, channel_id: int, after_id: int) -> AsyncIterator[ChannelPost]:
        """People's posts in a channel after a message id, oldest first (bots', webhooks' and
        the platform's system messages left out; nothing if the channel is not there)."""
        ...

    async def send_private(self, user_id: int, text: str) -> bool:
        """Send a private message unless the same text is already there; False if refused."""
        ...

    async def tell_stuck(self, game_id: int, attempts: int, *, privately: bool = False) -> None:
        """Tell a game's moderators that the judge keeps failing (no details): in the game
        channel, or by DM to each (`privately`)."""
        ...

    async def lost_channel(self, game_id: int) -> str | None:
        """Which of a game's own channels ("game" or "vote") the platform says was deleted, if
        one was (looked up where it is not known to be there)."""
        ...

    async def tell_stopped(self, game_id: int, lost: str) -> None:
        """Tell a stopped game's moderators and players that it cannot go on (its `lost`
        channel was deleted), and take away what the game set up on the server."""
        ...

    async def reconcile_permissions(self, game_id: int) -> None:
        """Set who may post in a game's channels from its state."""
        ...

    def recovering(self, on: bool) -> None:
        """While on, the outbox's undone effects are performed again after a stop: each may have
        been done before it (the platform looks before sending twice)."""
        ...

"""Which game a channel belongs to: posts and commands in a game's channels are routed to it."""

from __future__ import annotations

from typing import Any


class ChannelRoutes:
    """Game and vote channel ids → the game played there (filled at start and at recovery)."""

    def __init__(self) -> None:
        self.channel_games: dict[int, int] = {}
        """Game and vote channel ids → the game played there."""
        self.vote_channels: set[int] = set()

    def register(self, game_id: int, channels: dict[str, Any]) -> None:
        """Route posts and commands in a game's channels to it."""
        self.channel_games[int(channels["game"])] = game_id
        self.channel_games[int(channels["vote"])] = game_id
        self.vote_channels.add(int(channels["vote"]))

    def game_of(self, channel_id: int) -> int | None:
        """The game played in this channel, if any."""
        return self.channel_games.get(channel_id)

    def is_vote_channel(self, game_id: int, channel_id: int) -> bool:
        """Whether posts in this channel are read as votes of this game."""
        return channel_id in self.vote_channels and self.channel_games.get(channel_id) == game_id

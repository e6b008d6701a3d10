"""Which game a channel belongs to: posts and commands in a game's channels are routed to it."""

from __future__ import annotations

from typing import Any

from bot.runtime.hosting import is_forum, vote_posts


class ChannelRoutes:
    """Game and vote channel ids → the game played there (filled at start and at recovery)."""

    def __init__(self) -> None:
        self.channel_games: dict[int, int] = {}
        """Game and vote channel ids → the game played there."""
        self.vote_channels: set[int] = set()
        self.open_vote_posts: dict[int, int] = {}
        """A forum game → its newest day's vote post (the only one whose posts are votes)."""
        self.team_channels: dict[int, set[int]] = {}
        """A text channel holding forum games' team threads → those games (`teams_users`). Not
        a game channel (several forum games may keep their team threads in one), but no text
        game may use it: its overwrites for a player out of that game would reach the threads."""

    def register(self, game_id: int, channels: dict[str, Any]) -> None:
        """Route posts and commands in a game's channels to it (in a forum game, its main post
        and its days' vote posts; the forum itself is routed too, as a text game's vote channel)."""
        self.channel_games[int(channels["game"])] = game_id
        self.channel_games[int(channels["vote"])] = game_id
        if not is_forum(channels):
            self.vote_channels.add(int(channels["vote"]))
            return
        if channels.get("teams"):
            self.team_channels.setdefault(int(channels["teams"]), set()).add(game_id)
        for day, thread in vote_posts(channels).items():
            self.add_vote_post(game_id, day, thread)

    def add_vote_post(self, game_id: int, day: int, thread_id: int) -> None:
        """Route a forum game's day's vote post to it; the newest day's post takes the votes."""
        self.channel_games[thread_id] = game_id
        newest = self.open_vote_posts.get(game_id)
        if newest is None or thread_id >= newest:
            self.open_vote_posts[game_id] = thread_id

    def teams_users(self, channel_id: int) -> set[int]:
        """The forum games (in play or not: the caller asks) keeping their team threads in this
        text channel."""
        return set(self.team_channels.get(channel_id, ()))

    def game_of(self, channel_id: int) -> int | None:
        """The game played in this channel, if any."""
        return self.channel_games.get(channel_id)

    def is_vote_channel(self, game_id: int, channel_id: int) -> bool:
        """Whether posts in this channel are read as votes of this game."""
        if self.open_vote_posts.get(game_id) == channel_id:
            return True
        return channel_id in self.vote_channels and self.channel_games.get(channel_id) == game_id

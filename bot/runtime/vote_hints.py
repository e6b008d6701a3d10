"""A vote posted where votes do not count: the judge points to the vote channel, once a day.

A post in the game's discussion channel that reads as a vote (`投 5号`, `弃权`…) is not a vote:
only the vote channel's posts count. Its author gets one short hint per day pointing there. The
hint is the same for everyone (a player, a player out of the game, a spectator: it tells nothing
of roles or of whether the vote would have been valid), and it changes nothing in the game: no
event, only a mark in the game's row so a restart does not hint twice. A spectator's post that
names no one (「投票好激烈」) is talk about the vote, as in the vote channel (`is_chat`): no hint.
"""

from __future__ import annotations

from bot.runtime.contexts import Contexts
from bot.runtime.port import ChannelPost
from bot.runtime.service import GameService
from bot.runtime.vote_posts import is_chat, maps_of
from engine.voteparse import parse_vote_post
from engine.windows import is_vote_window

HINTED = "vote_hint:"
"""Game-row key prefix: the author's id → the day (window number) they were last hinted on."""


class VoteHints:
    """Decides whether a post in the discussion channel earns its author the day's hint."""

    def __init__(self, service: GameService, contexts: Contexts) -> None:
        self.service = service
        self.contexts = contexts
        self._claimed: dict[int, tuple[int, set[int]]] = {}
        """Per game, its newest day and the authors already hinted (or being hinted) on it by
        this process: a later day replaces an earlier one, so this stays one day per game."""

    async def due(self, game_id: int, post: ChannelPost) -> bool:
        """Whether to hint this post's author now (and, if so, the hint is marked as given)."""
        if not await self.service.is_active(game_id):
            return False
        state = await self.service.state(game_id)
        names, mentions = maps_of(state, await self.contexts.seat_names(game_id, state))
        parsed = parse_vote_post(post.content, names=names, mentions=mentions)
        if is_chat(parsed, seated=state.seat_of(str(post.author_id)) is not None):
            return False  # not a vote, or a spectator's talk about the vote (「投票好激烈」)
        if state.window is None or not is_vote_window(state.window):
            return False  # votes are cast in a vote window: a vote-like line at night is talk
        day = state.window.number
        claimed_day, authors = self._claimed.get(game_id, (day, set()))
        if claimed_day > day:
            return False  # a post read before a later day opened
        if claimed_day < day:
            authors = set()
        if post.author_id in authors:
            return False
        authors.add(post.author_id)  # before the next await: a second post cannot claim it too
        self._claimed[game_id] = (day, authors)
        key = f"{HINTED}{post.author_id}"
        info = await self.service.info(game_id)
        if info.channels.get(key) == day:
            return False  # hinted before a restart
        await self.service.set_channels(game_id, {key: day})
        return True

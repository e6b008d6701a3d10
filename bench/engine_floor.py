"""The engine floor: the Python floor with the engine's own work on every post; and the engine
alone on the same posts.

Issue #16 asks of the bot, with 100 games taking posts at once, 0.25 of the rate at which C
`sqlite3` commits bare rows 100 posts to a commit. Before any layer of the bot's own, a post
costs what the engine does with it in the bot: read it as a vote (`vote_command`), `decide`,
fold its events and say what to tell (`effects_and_state`, `for_delivery`), and the codec and JSON
of its rows. Measured here on the bench's own games and posts:

- the engine floor: the Python floor (`baselines.sqlite_floor`, a durable group commit of the
  rows of the posts waiting together) with that work making each post's rows: the most any bot
  on this engine keeping the bot's durability could do, with no lock, idempotency row, sequence
  check, delivery or done mark;
- the engine alone: the same work on the same posts, one after another, with no commit at all:
  a rate no program on this engine could pass here even if its commits cost nothing.

The bench's games are not changed: the engine's states are values, advanced here in copies.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bench.baselines import PostRows
from bench.stores import utcnow
from bench.vote_plan import Plan
from bot.runtime.port import ChannelPost
from bot.runtime.vote_posts import SeatMaps, vote_command
from bot.store.sqlite_group import json_dumps
from engine import codec
from engine.effects import ReplyToPost, for_delivery
from engine.errors import EngineError
from engine.game import decide
from engine.publish import effects_and_state
from engine.state import GameState


@dataclass
class EnginePosts:
    """Each game's posts still to decide and its state so far (games by their index)."""

    states: list[GameState]
    maps: Sequence[SeatMaps]
    posts: list[deque[ChannelPost]]
    refused: int = 0
    decided: int = field(default=0)

    @classmethod
    def of(
        cls,
        states: Mapping[int, GameState],
        maps: Mapping[int, SeatMaps],
        plan: Plan,
        ids: Sequence[int],
    ) -> EnginePosts:
        """The posts of `plan` (game id → (text, author) in order) with message ids from `ids`,
        on the games' `states`, read with their seat `maps`."""
        games = list(plan)
        fresh = iter(ids)
        now = utcnow()
        return cls(
            states=[states[g] for g in games],
            maps=[maps[g] for g in games],
            posts=[
                deque(
                    ChannelPost(id=next(fresh), author_id=author, content=text, created_at=now)
                    for text, author in plan[g]
                )
                for g in games
            ],
        )

    def rows_for(self, game: int) -> PostRows:
        """Decide the game's next post as the service does; its events' and effects' JSON."""
        post = self.posts[game].popleft()
        command = vote_command(post, *self.maps[game])
        if command is None:
            return [], []
        self.decided += 1
        state = self.states[game]
        try:
            events = decide(state, command)
        except EngineError as error:  # the bot records a refusal's reply only
            self.refused += 1
            reply = ReplyToPost(post_id=command.post_id, key=error.key)
            return [], [json_dumps(codec.dump(reply))]
        published, self.states[game] = effects_and_state(state, events)
        return (
            [json_dumps(codec.dump(e)) for e in events],
            [json_dumps(codec.dump(e)) for part in for_delivery(published) for e in part],
        )

    def time_alone(self) -> float:
        """Seconds to decide every post, game after game, with nothing else."""
        start = time.perf_counter()
        for game, posts in enumerate(self.posts):
            for _ in range(len(posts)):
                self.rows_for(game)
        return time.perf_counter() - start

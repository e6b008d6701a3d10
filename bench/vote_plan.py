"""What the ingest benches post: vote posts as players write them, by living players for living
seats, planned from a seed before any is timed."""

from __future__ import annotations

import random

from bot.runtime.service import GameService

Plan = dict[int, list[tuple[str, int]]]
"""Game id → its posts in order: (text, the author's Discord user id)."""


def post_texts(seat: int, user_id: int) -> list[str]:
    """Ways players write a vote for `seat` (docs/rules.md §1.1), plus an abstention."""
    return [
        f"投{seat}号",
        f"投 {seat}",
        f"vote {seat}",
        f"投{seat}号，理由：昨天发言前后矛盾",
        f"投 玩家{seat}",
        f"投 <@{user_id}>",
        "弃权",
    ]


async def plan_posts(service: GameService, game_ids: list[int], posts: int, seed: int) -> Plan:
    """`posts` vote posts spread over the games in turn, each by a living player of its game
    for a living seat (or an abstention), in one of the ways players write them."""
    rng = random.Random(seed)
    plan: Plan = {g: [] for g in game_ids}
    for i in range(posts):
        game_id = game_ids[i % len(game_ids)]
        state = service.cached_state(game_id) or await service.state(game_id)
        alive = [s for s in state.seats if s.alive]
        author = rng.choice(alive)
        target = rng.choice(alive)
        text = rng.choice(post_texts(int(target.seat), int(target.player)))
        plan[game_id].append((text, int(author.player)))
    return plan

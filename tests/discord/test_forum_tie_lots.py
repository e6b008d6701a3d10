"""A forum game's tie drawn by lots: the draw is posted in the day's 投票帖 (where the forum
draws lots), not in the main post, and names the tied seats and what `faguan verify` needs."""

from __future__ import annotations

from pathlib import Path

from envclock import EnvClock
from gamebot import Driver, by_role, running_table

SEED = "forum-lots"


async def test_a_forum_days_tie_is_drawn_in_its_vote_post(tmp_path: Path) -> None:
    async with running_table(tmp_path / "f.db", 8, EnvClock(), SEED, "forum") as t:
        d = Driver(t, "basic")
        roles = await d.start()
        for killer in by_role(roles, "killer"):
            await d.power_by_command(killer, "kill", None)
        await d.lock()  # day 1, everyone alive
        a, b = 1, 2
        for seat in range(1, 9):
            target = a if seat > 4 else b
            await d.post_vote(seat, f"投 {target}", target)
        vote_post = t.vote_channel()
        main_before = t.public()
        await d.lock()
        drawn = [m.content for m in vote_post.history() if m.author.bot and "抽签" in m.content]
        assert len(drawn) == 1, [m.content for m in vote_post.history()]
        assert "1号" in drawn[0] and "2号" in drawn[0]
        assert not any(p == drawn[0] for p in t.public()[len(main_before) :])
        state = await t.bot.runtime.service.state(d.game_id)
        assert sum(1 for s in state.seats if not s.alive) == 1
        assert not await t.bot.runtime.service.repo.undone_effects()

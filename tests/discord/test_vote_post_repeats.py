"""A forum day's 投票帖 opened again: the retry of an open whose link in the main post failed
still posts the link (once), and a run-off reopens the day's post without linking it again."""

from __future__ import annotations

from pathlib import Path

import discord
from envclock import EnvClock
from faultkit import drain
from gamebot import Driver, Table, by_role, running_table

from bot.discord.vote_threads import LINK_DUE
from bot.runtime.hosting import vote_posts
from engine.model import Seat

SEED = "vote-post-repeats"


async def day_one(t: Table, tie: str = "lots") -> tuple[Driver, dict[int, str]]:
    """A v2 game through its first night, the link's send failing once on the way into day 1."""
    d = Driver(t, "v2", tie=tie)
    roles = await d.start()
    await d.power_by_menu(by_role(roles, "killer")[0], "kill", by_role(roles, "civilian")[0])
    # the link's send (a resend: it reads the main post's history first) fails once
    t.env.inject_error("GET", f"/channels/{t.channel.id}/messages*", status=503, times=1)
    await d.lock()
    await drain(t)
    return d, roles


async def links(t: Table, game_id: int, day: int) -> list[str]:
    """The main post's links to day `day`'s vote post (none marked due any more)."""
    info = await t.bot.runtime.service.info(game_id, refresh=True)
    assert not [k for k in info.channels if k.startswith(LINK_DUE)]
    post = vote_posts(info.channels)[day]
    return [p for p in t.public() if f"第{day}天 投票帖：<#{post}>" in p]


async def test_a_failed_link_is_posted_by_the_retry(tmp_path: Path) -> None:
    async with running_table(tmp_path / "f.db", 8, EnvClock(), SEED, "forum") as t:
        d, _ = await day_one(t)
        assert len(await links(t, d.game_id, 1)) == 1


async def test_a_run_off_reopens_the_days_post_without_a_second_link(tmp_path: Path) -> None:
    async with running_table(tmp_path / "f.db", 8, EnvClock(), SEED, "forum") as t:
        d, _ = await day_one(t, tie="revote")
        state = await t.bot.runtime.service.state(d.game_id)
        alive = [int(s.seat) for s in state.seats if s.alive]
        a, b = alive[0], alive[1]
        for i, seat in enumerate(alive[2:6]):  # two votes each: a tie, then a run-off (PK)
            await d.post_vote(seat, f"投 {(a, b)[i % 2]}", (a, b)[i % 2])
        post = t.vote_channel()
        await d.lock()
        assert any("PK" in text for text in t.public())
        assert t.vote_channel().id == post.id  # the run-off is voted in the same post, open
        thread = t.bot.get_channel(post.id)
        assert isinstance(thread, discord.Thread) and not thread.locked
        assert len(await links(t, d.game_id, 1)) == 1
        for seat in alive[2:5]:
            await d.post_vote(seat, f"投 {a}", a)
        await d.lock()
        state = await t.bot.runtime.service.state(d.game_id)
        assert not state.seat(Seat(a)).alive

"""`/vote` racing the lock (issue 12), on simcord. The bot posts the vote publicly for the voter,
then records it; the lock's catch-up reads people's posts only, never the bot's. So the post and
its record are one step under the game's lock: a lock that comes in between waits for the
record, and the vote, stamped at the deadline, counts in the day it was posted in."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import discord
import pytest
from gamebot import Driver, Table, by_role

from bot.runtime.deadlines import fire_deadline
from engine.commands import Lock
from engine.model import PhaseKind, Seat
from engine.state import DayRecord

SEED = "vote-races"
ACCEPTED = "Received"
pytestmark = pytest.mark.table(seed=SEED)


async def test_a_deadline_between_the_slash_votes_post_and_its_record_counts_the_vote(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = Driver(table, "v2")
    roles = await d.start()
    await d.lock()  # a quiet night: day 1 is open
    service = table.bot.runtime.service
    state = await service.state(d.game_id)
    assert state.window is not None and state.window.kind is PhaseKind.DAY
    assert state.deadline is not None
    await table.env.advance_time((state.deadline - table.env.now().timestamp() * 1000) / 1000)
    voter, target = by_role(roles, "civilian")[:2]

    submit = service.submit
    locking = asyncio.Event()

    async def submitted(game_id: int, command: Any, **kwargs: Any) -> Any:
        if isinstance(command, Lock):  # the deadline job's lock, past its catch-up
            locking.set()
        return await submit(game_id, command, **kwargs)

    send = discord.abc.Messageable.send
    job: list[asyncio.Task[Any]] = []

    async def sent(self: Any, *args: Any, **kwargs: Any) -> Any:
        """The /vote's post is made, stamped at the deadline; then the deadline job fires, and
        the vote's record waits until that job's lock is submitted (or the job has ended)."""
        message = await send(self, *args, **kwargs)
        if not job:
            job.append(asyncio.create_task(fire_deadline(runner.key, d.game_id)))
            waiting = asyncio.create_task(locking.wait())
            await asyncio.wait({job[0], waiting}, return_when=asyncio.FIRST_COMPLETED)
            waiting.cancel()
        return message

    runner = table.bot.runtime.deadlines
    monkeypatch.setattr(service, "submit", submitted)
    monkeypatch.setattr(discord.abc.Messageable, "send", sent)
    result = await d.slash_vote(voter, target)
    assert job, "the /vote posted nothing"
    await job[0]
    await table.env.settle()

    said = [m.content for m in result.followups]
    if result.response is not None:
        said.insert(0, result.response.content)
    assert said and ACCEPTED in said[-1], said
    state = await service.state(d.game_id)
    days = [r for r in state.history if isinstance(r, DayRecord)]
    assert [r.number for r in days] == [1]  # the deadline locked day 1
    assert dict(days[0].votes).get(Seat(voter)) == Seat(target), days[0].votes
    assert not [p for p in days[0].void_posts if p.author == str(table.player(voter).id)]


async def test_a_post_after_the_deadline_read_once_the_run_off_is_recorded_does_not_count(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Day 1 ties and goes to a run-off (PK). A vote post made just after the deadline reaches
    the bot's reader only once the lock is recorded (Discord delivered it late): it is void in
    the run-off (vote.before_window), as it is void in the day (late) when read before the
    lock. What counts never depends on arrival order."""
    d = Driver(table, "v2", tie="revote")
    roles = await d.start()
    await d.lock()  # a quiet night: day 1 is open
    k1, k2 = by_role(roles, "killer")
    c1, c2, late, c4 = by_role(roles, "civilian")[:4]
    for voter, target in ((c1, k1), (c2, k1), (k1, c4), (k2, c4)):
        await d.post_vote(voter, f"投 {target}", target)
    votes = table.bot.runtime.votes
    ingest = votes.ingest
    delivered = asyncio.Event()

    async def delivered_late(game_id: int, post: Any) -> Any:
        if post.author_id == table.player(late).id:
            await table.env.external_wait(delivered.wait(), reason="Discord delivers it late")
        return await ingest(game_id, post)

    monkeypatch.setattr(votes, "ingest", delivered_late)
    port = table.bot.runtime.port
    posts_after = port.posts_after

    async def read_before_it(channel_id: int, after_id: int) -> AsyncIterator[Any]:
        async for post in posts_after(channel_id, after_id):  # the lock's catch-up: made after
            if post.author_id != table.player(late).id:  # its read of the channel
                yield post

    monkeypatch.setattr(port, "posts_after", read_before_it)
    state = await table.bot.runtime.service.state(d.game_id)
    assert state.deadline is not None
    await table.env.advance_time(state.deadline / 1000 - table.env.now().timestamp() + 0.2)
    made = await table.player(late).send(table.vote_channel(), f"投 {k1}")  # 0.2 s late
    await table.env.advance_time(1.0)  # the deadline job runs a second later
    await d.lock()  # the tie: a run-off between k1 and c4
    delivered.set()
    await table.env.settle()
    state = await table.bot.runtime.service.state(d.game_id)
    assert state.window is not None and state.window.revote == 1
    (post,) = [p for p in state.posts if p.post_id == str(made.id)]
    assert post.void_reason == "vote.before_window"
    await d.post_vote(late, f"投 {k1}", k1)  # after the run-off opened: it counts
    state = await table.bot.runtime.service.state(d.game_id)
    assert state.posts[-1].void_reason is None

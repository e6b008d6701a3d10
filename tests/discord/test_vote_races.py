"""`/vote` racing the lock (issue 12), on simcord. The bot posts the vote publicly for the voter,
then records it; the lock's catch-up reads people's posts only, never the bot's. So the post and
its record are one step under the game's lock: a lock that comes in between waits for the
record, and the vote, stamped at the deadline, counts in the day it was posted in."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import discord
import pytest
import pytest_asyncio
from envclock import EnvClock
from gamebot import Driver, Table, by_role, running_table

from bot.runtime.deadlines import fire_deadline
from engine.commands import Lock
from engine.model import PhaseKind, Seat
from engine.state import DayRecord

SEED = "vote-races"
ACCEPTED = "Received"


@pytest_asyncio.fixture
async def table(tmp_path: Path) -> AsyncIterator[Table]:
    async with running_table(tmp_path / "votes.db", 8, EnvClock(), seed=SEED) as t:
        yield t


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

"""A first end-to-end game on simcord: sign-up, deal, DMs, a night, a vote, the lock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from conftest import EnvClock
from gamebot import Table, build_table, make_bot
from simcord import Env


@pytest_asyncio.fixture
async def table(tmp_path: Path) -> AsyncIterator[Table]:
    clock = EnvClock()
    env = Env(make_bot(tmp_path / "g.db", clock))
    clock.bind(env)
    t = build_table(env, 8)
    await env.start()
    try:
        yield t
    finally:
        await env.shutdown()


async def test_signup_and_deal(table: Table) -> None:
    r = await table.moderator.slash(table.channel, "game new", ruleset="v2")
    assert not r.ephemeral, r.response
    for p in table.players:
        await p.slash(table.channel, "game join")
    r = await table.moderator.slash(table.channel, "game start")
    print(table.public())
    for p in table.players:
        print([m.content for m in table.dms(p)])
    assert any("开局" in c for c in table.public())

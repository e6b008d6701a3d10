"""`faguan bench`'s discord section stops the bot it plays on: simcord's shutdown detaches a bot
without closing it, and the section left the bot's database connections (aiosqlite's threads),
its SQLite commit thread and writer process running on a database whose folder it then removed,
for as long as the bench's process lived on (the whole bench, the whole test session)."""

from __future__ import annotations

from leftovers import Running, left_running

from bench.discord_calls import count_calls


async def test_the_discord_section_leaves_nothing_of_its_bot_running() -> None:
    before = Running.now()
    phases, info = await count_calls(nights=1)
    assert phases and info["bot_errors"] == []
    left = left_running(before, grace=2.0)
    assert not left, f"left running: {left.describe()}"

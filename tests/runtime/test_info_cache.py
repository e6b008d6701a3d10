"""A game's cached row (its channels, team threads, DM marks, status) when a read and a write
of it interleave, without Discord: a read that started before `set_channels` wrote the row, and
ended after, is not cached (the next team notice would not find the thread just remembered, and
make a second one)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from fakes import Wired, runtime_on
from test_runtime import new_game

from bot.store import GameInfo


@pytest.fixture
async def wired(tmp_path: Path) -> Any:
    w = await runtime_on(tmp_path)
    yield w
    w.runtime.close()
    await w.database.dispose()


def read_held(w: Wired, method: str) -> tuple[asyncio.Event, asyncio.Event]:
    """The repository's `method` reads, then waits (its result in hand) until `go` is set."""
    repo = w.runtime.service.repo
    original: Callable[..., Awaitable[Any]] = getattr(repo, method)
    read, go = asyncio.Event(), asyncio.Event()

    async def held(*args: Any, **kwargs: Any) -> Any:
        result = await original(*args, **kwargs)
        if not read.is_set():
            read.set()
            await go.wait()
        return result

    setattr(repo, method, held)
    return read, go


@pytest.mark.parametrize("reader", ["info", "active_infos"])
async def test_a_read_started_before_set_channels_is_not_cached_after_it(
    wired: Wired, reader: str
) -> None:
    """Which team thread a game has is remembered in its row: a read of the row from before
    the thread was remembered, cached after, would have the next team notice make another."""
    w = wired
    service = w.runtime.service
    game_id = await new_game(w)
    await service.set_channels(game_id, {})  # nothing cached
    method = "get_game" if reader == "info" else "active_games_info"
    read, go = read_held(w, method)
    reading = asyncio.create_task(
        service.info(game_id) if reader == "info" else service.active_infos()
    )
    await read.wait()  # the old row is read
    await service.set_channels(game_id, {"thread_killers": "42"})
    go.set()
    await reading
    info: GameInfo = await service.info(game_id)
    assert info.channels.get("thread_killers") == "42"

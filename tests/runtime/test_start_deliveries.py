"""A new game's start, performed once and in full, whatever happens between its commit and its
delivery:

- a reconnect's ``recover`` that reads the outbox right after the start's commit and takes the
  new game's lock first performs the start's effects; the start then reads them back instead of
  performing what it recorded a second time (the deal notice, the night's announcement);
- answering ``/game start`` fails (its interaction expired): the game is committed, so its deal
  still goes out (its role DMs, its deadline) rather than waiting for a restart."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from fakes import Wired, performing
from test_delivery_races import Platform, all_effects, assert_once
from test_runtime import new_game

from bot.runtime.schedule import GameSchedule, WindowLength

pytestmark = pytest.mark.asyncio


@pytest.fixture
async def wired(tmp_path: Path) -> AsyncIterator[tuple[Wired, Platform]]:
    async with performing(tmp_path, Platform()) as pair:
        yield pair


async def test_a_recover_between_the_starts_commit_and_its_delivery(
    wired: tuple[Wired, Platform], monkeypatch: pytest.MonkeyPatch
) -> None:
    w, platform = wired
    repo = w.runtime.service.repo
    create_game = repo.create_game
    recovering: list[asyncio.Task[Any]] = []

    async def committed_then_recovered(*args: Any, **kwargs: Any) -> Any:
        result = await create_game(*args, **kwargs)  # committed
        platform.hold(1)
        recovering.append(asyncio.create_task(w.runtime.service.recover()))
        await platform.inside.wait()  # recover holds the new game's lock, performing its start
        platform.released.set()
        return result

    monkeypatch.setattr(repo, "create_game", committed_then_recovered)
    game_id = await new_game(w)
    await asyncio.gather(*recovering)
    assert recovering and platform.performed
    assert_once(platform, await all_effects(w, game_id))


async def test_a_start_whose_answer_fails_still_deals(wired: tuple[Wired, Platform]) -> None:
    w, platform = wired
    repo = w.runtime.service.repo
    hour = WindowLength(dt.timedelta(hours=1))
    schedule = GameSchedule(power=hour, vote=hour, timezone=ZoneInfo("UTC"))
    settings = {"ruleset": "v2", "tie": "lots", "language": "zh-CN",
                "schedule": schedule.to_json(), "options": {}}  # fmt: skip
    opened = await repo.lobbies.open(
        server_id=1, channel_id=401, vote_channel_id=501, min_players=8, max_players=8,
        settings=settings,
    )  # fmt: skip
    for i in range(1, 9):
        await repo.lobbies.join(opened.id, 1000 + i, f"p{i}")
    lobby = await repo.lobbies.newest(401)
    assert lobby is not None

    async def answer(game_id: int) -> None:
        raise RuntimeError("404 Unknown interaction")  # the 3 s to answer had passed

    with pytest.raises(RuntimeError, match="Unknown interaction"):
        await w.runtime.start_game(lobby, answer)
    (game_id,) = await w.runtime.service.active_games()
    assert_once(platform, await all_effects(w, game_id))  # every start effect, once
    kinds = set(platform.kinds.values())
    assert {"ScheduleDeadline", "Whisper"} <= kinds  # its deadline, and the role DMs

"""A restart's recovery when it stops a game, or is itself stopped; a clean stop that waits no
longer than it may.

- a game whose log cannot be read is stopped, and the cached row that said it was active is
  dropped: it takes no input, its deadline is not run;
- a clean stop during the restart's pass over the outbox ends it after the call in flight: the
  games not reached yet keep every effect in the outbox, and the next start performs each once;
- a stop whose deliveries outlive its timeout says so and returns; the delivery it left performs
  no further effect, and the call it waited for is still marked done when it returns.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fakes import Wired, performing
from sqlalchemy import text
from test_clean_stop import STILL_WAITING, Platform, lock_held_in_flight, stop, undone
from test_runtime import new_game

from bot.runtime.service import Outcome
from bot.store import GameStatus


@pytest.fixture
async def wired(tmp_path: Path) -> AsyncIterator[tuple[Wired, Platform]]:
    async with performing(tmp_path, Platform()) as pair:
        yield pair


async def test_a_game_recovery_stops_is_no_longer_cached_as_active(
    wired: tuple[Wired, Platform],
) -> None:
    w, _ = wired
    service = w.runtime.service
    broken, fine = await new_game(w, seed="a"), await new_game(w, seed="b")
    assert await service.is_active(broken)  # its row is cached, as active
    async with w.database.engine.begin() as conn:  # SQLite stores any text
        await conn.execute(
            text("UPDATE events SET payload = '{not json' WHERE game_id = :g AND seq = 1"),
            {"g": broken},
        )
    stopped = await service.recover()
    assert stopped == {broken: "replay failed at an unreadable event: CorruptLog"}
    assert not await service.is_active(broken)  # not the cached row from before
    info = await service.info(broken)
    assert (info.status, info.status_error) == (GameStatus.STOPPED_ERROR, stopped[broken])
    assert await service.is_active(fine)
    assert await w.runtime.deadlines.lock_due(broken, forced=True) is None  # takes no lock


async def test_a_stop_during_recovery_leaves_the_games_not_reached_in_the_outbox(
    wired: tuple[Wired, Platform],
) -> None:
    w, platform = wired
    platform.failing = True  # every start's effects fail: undone, for the restart's pass
    first, second = await new_game(w, seed="a"), await new_game(w, server_id=2, seed="b")
    left = {game_id: await undone(w, game_id) for game_id in (first, second)}
    assert all(len(keys) > 2 for keys in left.values())
    platform.failing, platform.held = False, True
    recovering = asyncio.create_task(w.runtime.service.recover())
    await platform.inside.wait()  # the first game's first effect in flight
    stopping = asyncio.create_task(stop(w))
    done, _ = await asyncio.wait({stopping}, timeout=STILL_WAITING)
    assert not done, "the stop returned with an effect in flight"
    platform.released.set()
    await stopping
    assert await recovering == {}
    (performed,) = platform.performed  # the call in flight, and nothing after it
    assert performed in left[first]
    assert await undone(w, first) == left[first] - {performed}
    assert await undone(w, second) == left[second]  # not reached: all of it still to do

    again = await w.restart()  # the next start performs the rest, each once
    later = Platform()
    again.runtime.service.set_performer(later)
    await again.runtime.service.recover()
    await again.runtime.service.flush()
    assert await undone(again, first) == set() and await undone(again, second) == set()
    everything = platform.performed + later.performed
    assert set(everything) == left[first] | left[second]
    assert [key for key, n in Counter(everything).items() if n > 1] == []


async def test_a_stop_that_outlives_its_timeout_says_so_and_the_delivery_does_no_more(
    wired: tuple[Wired, Platform], caplog: pytest.LogCaptureFixture
) -> None:
    w, platform = wired
    service = w.runtime.service
    game_id = await new_game(w)
    before = list(platform.performed)
    lock = await lock_held_in_flight(w, platform, game_id)  # the lock's first call in flight
    with caplog.at_level(logging.WARNING, logger="bot.runtime"):
        finished = await service.deliveries.finish(timeout=0.05)
    assert finished is False
    assert "stopping: 1 deliveries still under way after 0.05s" in caplog.text
    waiting = await undone(w, game_id)
    platform.released.set()  # the platform answers at last
    outcome = await lock
    assert isinstance(outcome, Outcome) and outcome.ok
    (in_flight,) = platform.performed[len(before) :]  # no effect after it was started
    await service.flush()
    assert await undone(w, game_id) == waiting - {in_flight}  # marked done; the rest wait
    assert await service.deliveries.finish(timeout=0.05) is True  # nothing under way now

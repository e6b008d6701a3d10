"""A clean stop while effects are being performed (a lock's announcements half sent, a restart's
pass over the outbox).

The contract: a clean stop leaves no effect performed but not marked done — the next owner of
the game (this process restarted, or another shard process) would perform it again — and
performs nothing after it returns. So the stop waits for the platform call in flight, starts no
further effect (those stay in the outbox, committed and in order, for the next start) and then
flushes the done marks; only after that is the shard's claim released (`faguan run`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fakes import Wired, performing
from test_runtime import new_game

from bot.store import OutboxItem, Repository

STILL_WAITING = 0.3
"""Seconds after which a stop that did not wait for the delivery has long returned."""


class Platform:
    """The performer: what it performed, by key; once `held`, its next call waits in flight
    until `released`; while `failing`, every call fails."""

    def __init__(self) -> None:
        self.performed: list[str] = []
        self.held = False
        self.failing = False
        self.inside = asyncio.Event()
        self.released = asyncio.Event()

    async def __call__(self, item: OutboxItem) -> None:
        if self.failing:
            raise RuntimeError("the platform is away")
        if self.held:
            self.held = False
            self.inside.set()
            await self.released.wait()
        self.performed.append(item.idempotency_key)


@pytest.fixture
async def wired(tmp_path: Path) -> AsyncIterator[tuple[Wired, Platform]]:
    async with performing(tmp_path, Platform()) as pair:
        yield pair


async def stop(w: Wired) -> None:
    """What `FaguanBot.close` does around Discord's own close."""
    await w.runtime.aclose()
    await w.runtime.service.close()


async def at_deadline(w: Wired, game_id: int) -> None:
    state = await w.runtime.service.state(game_id)
    assert state.deadline is not None
    w.clock.set(max(w.clock.now(), dt.datetime.fromtimestamp(state.deadline / 1000, dt.UTC)))


async def undone(w: Wired, game_id: int) -> set[str]:
    """The keys of the game's effects not marked done, as the next start reads them."""
    items = await Repository(w.database.sessions).undone_effects(game_id)
    return {item.idempotency_key for item in items}


async def lock_held_in_flight(w: Wired, platform: Platform, game_id: int) -> asyncio.Task[object]:
    """The night's lock, its first effect's platform call in flight."""
    await at_deadline(w, game_id)
    platform.held = True
    lock = asyncio.create_task(w.runtime.deadlines.lock_due(game_id))
    await platform.inside.wait()
    return lock


async def test_a_clean_stop_waits_for_the_call_in_flight_and_leaves_the_rest_in_order(
    wired: tuple[Wired, Platform],
) -> None:
    w, platform = wired
    game_id = await new_game(w)
    started = len(platform.performed)
    lock = await lock_held_in_flight(w, platform, game_id)
    stopping = asyncio.create_task(stop(w))
    done, _ = await asyncio.wait({stopping}, timeout=STILL_WAITING)
    assert not done, "the stop returned with an effect in flight"
    platform.released.set()
    await stopping
    at_stop = list(platform.performed)
    await lock
    assert platform.performed == at_stop  # nothing performed after the stop returned
    assert len(at_stop) == started + 1  # the call in flight, and no further effect
    left = await undone(w, game_id)
    assert left and at_stop[-1] not in left  # it is marked done; the lock's others wait
    assert not left & set(at_stop)


async def test_a_clean_stop_during_a_restarts_outbox_pass_ends_it_after_the_call_in_flight(
    wired: tuple[Wired, Platform],
) -> None:
    w, platform = wired
    platform.failing = True  # the game's first effects fail: undone, for the restart's pass
    game_id = await new_game(w)
    waiting = await undone(w, game_id)
    assert len(waiting) > 2
    platform.failing, platform.held = False, True
    recovering = asyncio.create_task(w.runtime.service.recover())
    await platform.inside.wait()
    stopping = asyncio.create_task(stop(w))
    done, _ = await asyncio.wait({stopping}, timeout=STILL_WAITING)
    assert not done, "the stop returned with an effect in flight"
    platform.released.set()
    await stopping
    await recovering
    assert len(platform.performed) == 1  # the call in flight, not the rest of the pass
    assert await undone(w, game_id) == waiting - set(platform.performed)


async def test_once_stopping_no_delivery_starts_and_its_effects_wait_in_the_outbox(
    wired: tuple[Wired, Platform],
) -> None:
    w, platform = wired
    held, other = await new_game(w, seed="a"), await new_game(w, server_id=2, seed="b")
    await at_deadline(w, other)
    lock = await lock_held_in_flight(w, platform, held)
    stopping = asyncio.create_task(stop(w))
    await asyncio.wait({stopping}, timeout=STILL_WAITING)
    before = list(platform.performed)
    outcome = await w.runtime.deadlines.lock_due(other)  # an input while stopping: recorded
    assert outcome is not None and outcome.ok
    assert platform.performed == before  # its effects not performed
    platform.released.set()
    await stopping
    await lock
    waiting = await undone(w, other)
    assert waiting and not waiting & set(platform.performed)  # in the outbox, for the next start
    assert not await undone(w, held) & set(platform.performed)  # the rest wait, unperformed

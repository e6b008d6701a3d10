"""``timer_due``: whether a small SQLite group's ``COMMIT`` may hold the event loop (no timer due
within ``FREE_FOR``) or goes to its thread (``bot.store.sqlite_here``)."""

from __future__ import annotations

import asyncio

import pytest

from bot.store.sqlite_here import FREE_FOR, timer_due

pytestmark = pytest.mark.asyncio


async def test_a_timer_is_due_only_within_the_margin() -> None:
    loop = asyncio.get_running_loop()
    later = loop.call_later(FREE_FOR * 50, lambda: None)
    assert not timer_due(loop)
    soon = loop.call_later(FREE_FOR / 4, lambda: None)
    assert timer_due(loop)
    soon.cancel()
    later.cancel()


async def test_of_a_loop_not_asyncio_s_nothing_is_known() -> None:
    assert timer_due(object())  # type: ignore[arg-type]


async def test_a_timer_fallen_due_this_turn_counts_until_it_runs() -> None:
    """Two timers due at the same time: the loop moves both to its ready queue before running
    the first, so from the first the second is no longer in the heap, only waiting to run."""
    loop = asyncio.get_running_loop()
    seen: list[bool] = []
    at = loop.time() + 0.01
    loop.call_at(at, lambda: seen.append(timer_due(loop)))
    loop.call_at(at, lambda: seen.append(timer_due(loop)))
    await asyncio.sleep(0.05)
    assert seen == [True, False]  # the first saw the second waiting; the second, nothing


async def test_ready_callbacks_that_are_not_timers_do_not_count() -> None:
    """The posts' callers resumed by a group's answers are ready at every commit: were they to
    count, no ``COMMIT`` would ever run on the loop."""
    loop = asyncio.get_running_loop()
    seen: list[bool] = []
    loop.call_soon(lambda: seen.append(timer_due(loop)))
    loop.call_soon(lambda: None)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert seen == [False]

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

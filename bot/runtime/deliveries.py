"""The outbox deliveries under way, so that a clean stop finishes them instead of cutting them.

An effect performed is marked done only after its platform call returns (``mark_done_soon``). A
stop that let a delivery run on past it — or cancelled it in the middle — would leave effects
performed but not marked, and the next owner of the game (this process restarted, or another
shard process) would perform them again. So a clean stop first closes this gate — no delivery
starts after it, and one under way performs no further effect (``bot.store.deliver`` asks
``is_stopping`` before each): those effects stay in the outbox, committed and in order, for the
next start — then waits until the platform calls in flight have returned, and only then are the
done marks flushed and the shard's claim released.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)

FINISH_SECONDS = 30.0
"""How long a stop waits for the deliveries under way (a platform that hangs must not hold the
stop for ever: what is left is performed again by the next start, under the same keys)."""


class Deliveries:
    """Counts the deliveries under way; once ``stopping``, refuses new ones."""

    def __init__(self) -> None:
        self._running = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._stopping = False
        """A stop has begun: no delivery starts any more (read by `is_stopping`)."""

    def is_stopping(self) -> bool:
        """Whether a stop has begun (asked before each effect a delivery performs)."""
        return self._stopping

    def delivering(self) -> _Delivering:
        """Around one delivery: enters as False (deliver nothing) once the stop has begun."""
        return _Delivering(self)

    @contextmanager
    def under_way(self) -> Iterator[None]:
        """Around work that performs effects and that a stop waits for, but never refuses
        (recovery: only a running runtime starts it; it asks ``is_stopping`` before each
        effect)."""
        self._begin()
        try:
            yield
        finally:
            self._end()

    def _begin(self) -> None:
        self._running += 1
        self._idle.clear()

    def _end(self) -> None:
        self._running -= 1
        if not self._running:
            self._idle.set()

    async def finish(self, timeout: float = FINISH_SECONDS) -> bool:
        """Refuse new deliveries and wait for those under way; False if they outlived
        ``timeout`` (logged: their last effects may be performed again by the next start)."""
        self._stopping = True
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            log.warning("stopping: %s deliveries still under way after %ss", self._running,
                        timeout)  # fmt: skip
            return False
        return True


class _Delivering:
    """``Deliveries.delivering``: a class, not a generator, as every input's delivery takes it
    (two nested generator-based context managers cost a vote post ~3 µs of the loop's time)."""

    __slots__ = ("_counted", "_deliveries")

    def __init__(self, deliveries: Deliveries) -> None:
        self._deliveries = deliveries
        self._counted = False

    def __enter__(self) -> bool:
        if self._deliveries.is_stopping():
            return False
        self._deliveries._begin()
        self._counted = True
        return True

    def __exit__(self, *_: object) -> None:
        if self._counted:
            self._deliveries._end()

"""Start-up work queued per game: after a restart the bot is ready once every deadline is
scheduled; reading each vote channel (catch-up) and setting each game's permissions go on behind
it, a few games at a time, so a thousand games' platform calls neither hold the start up nor go
out all at once.

A game queued again before its turn (a reconnect while the queue is worked) is done once, with
an overdue lock if either queueing asked for one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

WORKERS = 4
"""Games worked at once (each is a history read and a few permission edits on the platform)."""

Work = Callable[[int, bool], Awaitable[None]]
"""One game's start-up work: (game id, whether to lock an overdue window after the catch-up)."""


class CatchUps:
    """A queue of games, worked in order by at most `workers` tasks."""

    def __init__(self, work: Work, *, workers: int = WORKERS) -> None:
        self._work = work
        self._workers = workers
        self._queue: dict[int, bool] = {}
        """Game → lock an overdue window after its catch-up; in the order queued."""
        self._tasks: set[asyncio.Task[None]] = set()

    def add(self, game_id: int, *, overdue: bool = False) -> None:
        """Queue a game's start-up work (no I/O here: the workers do it)."""
        self._queue[game_id] = self._queue.get(game_id, False) or overdue
        if len(self._tasks) < min(self._workers, len(self._queue)):
            task = asyncio.get_running_loop().create_task(self._worker())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    @property
    def pending(self) -> int:
        """Games queued and not yet taken by a worker."""
        return len(self._queue)

    async def wait(self) -> None:
        """Until every queued game's work is done (tests, the bench)."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def close(self) -> None:
        """Stop: the games not done yet are left to the next start (their deadlines run anyway)."""
        self._queue.clear()
        for task in self._tasks:
            task.cancel()

    async def _worker(self) -> None:
        while self._queue:
            game_id = next(iter(self._queue))
            overdue = self._queue.pop(game_id)
            try:
                await self._work(game_id, overdue)
            except Exception as exc:  # one game's trouble never stops the others'
                log.error("game %s: start-up work failed: %s", game_id, type(exc).__name__)

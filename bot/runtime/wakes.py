"""The owner's side of an input another shard process recorded (Discord sends every DM to shard
0): that process performs nothing of the game (``GameService._submit``) and notifies; the owner
performs the game's undone effects (``GameService.wake``).

A notice may be lost (the listening connection down, the sender killed between its commit and its
notify). What catches it: a sweep after every (re)connect of the listener and at every tick,
waking each owned game with an effect recorded before the previous tick and never tried (one tried
and failed is on its retry schedule already); and the owner's next input to the game (its stale
state conflicts, and its delivery reads the outbox back).

The ticks are jobs of the runtime's deadline scheduler, every ``TICK_SECONDS``: no task waits in
the background (a test's simulated clock drives them as it drives deadlines).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections.abc import Coroutine

from sqlalchemy.engine import URL

from bot.runtime.service import GameService
from bot.runtime.timing import DeadlineScheduler
from bot.store import Shards
from bot.store.notices import GameNotices

log = logging.getLogger(__name__)

TICK_SECONDS = 30.0
"""How often the owner checks its listening connection and sweeps for lost notices."""

_WAKES: dict[int, Wakes] = {}
"""The running wakes, by key (scheduler jobs name them so: module-level functions only)."""


async def fire_wakes(key: int) -> None:
    """The tick job (module-level, as APScheduler wants)."""
    wakes = _WAKES.get(key)
    if wakes is not None:
        await wakes.tick()


class Wakes:
    """Listens for notices of the games this process owns, and sweeps for the lost ones."""

    def __init__(
        self,
        service: GameService,
        shards: Shards,
        url: str | URL,
        scheduler: DeadlineScheduler | None = None,
        *,
        tick_seconds: float = TICK_SECONDS,
    ) -> None:
        self.service = service
        self.shards = shards
        self.notices = GameNotices(url, self._heard, self._connected)
        self._scheduler = scheduler
        self._tick = dt.timedelta(seconds=tick_seconds)
        self._queued: set[int] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._last_sweep: dt.datetime | None = None
        self.key = id(self)
        self._job = f"wakes:{self.key}"

    def start(self) -> None:
        """Notify the owners of foreign inputs recorded here; listen and sweep from the first
        tick on (now)."""
        self.service.on_foreign_input(self.notices.notify)
        _WAKES[self.key] = self
        self._schedule(self.service.clock.now())

    def close(self) -> None:
        """Stop ticking; the wakes under way go on (``aclose`` waits for them)."""
        _WAKES.pop(self.key, None)
        if self._scheduler is not None:
            self._scheduler.cancel(self._job)

    async def aclose(self) -> None:
        """``close``, then wait for the wakes under way (after the service's
        ``finish_deliveries``, none starts a delivery: a cancelled one would leave an effect
        performed without its done mark) and close the connections."""
        self.close()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.notices.aclose()

    async def tick(self) -> None:
        """Check the listening connection (connecting it, then sweeping everything), sweep for
        lost notices, and come again in ``TICK_SECONDS``."""
        try:
            await self.notices.check()
            await self.sweep()
        except Exception as exc:  # the database away: the next tick tries again
            log.warning("wakes: tick failed (%s)", type(exc).__name__)
        finally:
            if self.key in _WAKES:
                self._schedule(self.service.clock.now() + self._tick)

    def _schedule(self, when: dt.datetime) -> None:
        if self._scheduler is not None:
            self._scheduler.schedule(self._job, when, fire_wakes, self.key)

    def _spawn(self, work: Coroutine[object, object, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _heard(self, game_id: int) -> None:
        if game_id not in self._queued:  # one wake waiting per game is enough
            self._queued.add(game_id)
            self._spawn(self._wake(game_id))

    def _connected(self) -> None:
        self._spawn(self.sweep(everything=True))

    async def _wake(self, game_id: int) -> None:
        self._queued.discard(game_id)  # a notice from now on wakes it again
        try:
            if await self.service.owns(game_id):
                await self.service.wake(game_id)
        except Exception as exc:  # the database away: the next sweep finds it
            log.warning("game %s: wake failed (%s)", game_id, type(exc).__name__)

    async def sweep(self, *, everything: bool = False) -> None:
        """Wake each owned game with an effect never tried and recorded before the previous
        sweep (``everything``: recorded at any time; after a reconnect)."""
        began = self.service.clock.now()
        before = None if everything else self._last_sweep
        self._last_sweep = began
        if before is None and not everything:
            return  # the first periodic sweep only marks the time
        untried: dict[int, bool] = {}
        old: set[int] = set()
        for item in await self.service.repo.undone_effects(shards=self.shards):
            untried[item.game_id] = untried.get(item.game_id, True) and item.attempts == 0
            if before is None or item.created_at is None or item.created_at <= before:
                old.add(item.game_id)
        for game_id in sorted(old):
            if untried[game_id]:
                self._heard(game_id)

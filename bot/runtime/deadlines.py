"""Deadlines: the job that locks a game's window when its deadline comes, and its retries.

Theory of operation (DESIGN.md, "Time and deadlines"): a deadline is game state in the database;
the scheduler only wakes the runner at it. At a deadline the runner first reads the vote channel
for posts made up to it (catch-up), then submits the `Lock` naming the window open when it
started, so whichever of the deadline job, a moderator's advance, a retried job or recovery comes
second is refused by the engine instead of locking the next window. A lock that cannot be done
now (the platform or the database failing) is tried again with backoff: never dropped.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import logging

from bot.runtime.port import ChatPort
from bot.runtime.reminders import Reminders
from bot.runtime.schedule import from_ms, to_ms
from bot.runtime.service import GameService, Outcome
from bot.runtime.timing import Clock, DeadlineScheduler
from bot.runtime.vote_posts import VotePosts
from engine.model import Instant

log = logging.getLogger(__name__)

RETRY_CAP_SECONDS = 300
STUCK_AFTER = 5
"""Attempts after which the moderators are told that something is stuck."""

_RUNNERS: dict[int, DeadlineRunner] = {}
"""Running deadline runners by key, so the module-level jobs find theirs."""


def backoff(attempts: int) -> float:
    """Seconds before the next try: 2, 4, 8 … capped at five minutes."""
    return float(min(2**attempts, RETRY_CAP_SECONDS))


async def fire_deadline(runner_key: int, game_id: int) -> None:
    """The deadline job (module-level, as APScheduler wants): lock the game's window.

    If the lock cannot be done now (the platform or the database failing), it is tried again
    later: a deadline is never dropped, and votes are judged by their own times whenever it
    happens."""
    runner = _RUNNERS.get(runner_key)
    if runner is None:
        return
    try:
        await runner.lock_due(game_id)
        runner.lock_failures.pop(game_id, None)
    except Exception as exc:
        tries = runner.lock_failures.get(game_id, 0) + 1
        runner.lock_failures[game_id] = tries
        log.error("game %s: lock failed (attempt %s): %s", game_id, tries, type(exc).__name__)
        runner.scheduler.schedule(
            f"game:{game_id}:deadline",
            runner.clock.now() + dt.timedelta(seconds=backoff(tries)),
            fire_deadline,
            runner_key,
            game_id,
        )
        await runner.tell_stuck(game_id, tries)


async def retry_effects(runner_key: int, game_id: int) -> None:
    """The retry job: perform a game's undone effects again."""
    runner = _RUNNERS.get(runner_key)
    if runner is not None and await runner.serves(game_id):
        await runner.service.retry(game_id)


class DeadlineRunner:
    """Schedules each game's deadline, locks at it, and retries what failed."""

    def __init__(
        self,
        service: GameService,
        *,
        scheduler: DeadlineScheduler,
        clock: Clock,
        votes: VotePosts,
        reminders: Reminders,
        port: ChatPort,
    ) -> None:
        self.service = service
        self.scheduler = scheduler
        self.clock = clock
        self.votes = votes
        self.reminders = reminders
        self.port = port
        self.lock_failures: dict[int, int] = {}
        """Game → deadline jobs failed in a row (cleared by the next lock that works)."""
        self._stuck_told: set[tuple[int, bool]] = set()
        self.key = id(self)
        """What the scheduled jobs name this runner by."""
        _RUNNERS[self.key] = self

    def close(self) -> None:
        """Jobs still scheduled for this runner find nothing to do."""
        _RUNNERS.pop(self.key, None)

    def now_ms(self) -> Instant:
        """Now, as the engine's Instant."""
        return Instant(to_ms(self.clock.now()))

    def schedule_deadline(self, game_id: int, deadline: int | None) -> None:
        """Wake at `deadline` to lock the game's window (None: no timer)."""
        job = f"game:{game_id}:deadline"
        self.reminders.schedule(game_id, deadline)
        if deadline is None:
            self.scheduler.cancel(job)
            return
        self.scheduler.schedule(job, from_ms(deadline), fire_deadline, self.key, game_id)

    async def serves(self, game_id: int) -> bool:
        """Whether the bot is on the game's server (else it waits: `Runtime.leave_server`)."""
        return self.port.serves((await self.service.info(game_id)).server_id)

    def forget(self, game_id: int) -> None:
        """A game stopped: no deadline, reminder or retry of it fires any more."""
        self.schedule_deadline(game_id, None)
        self.scheduler.cancel(f"game:{game_id}:retry")
        self.lock_failures.pop(game_id, None)

    def schedule_retry(self, game_id: int, attempts: int, privately: bool = False) -> None:
        """Try a game's failed effects again later, backing off; tell moderators if stuck
        (`privately` when only a private effect fails: see `tell_stuck`)."""
        when = self.clock.now() + dt.timedelta(seconds=backoff(attempts))
        self.scheduler.schedule(f"game:{game_id}:retry", when, retry_effects, self.key, game_id)
        if attempts >= STUCK_AFTER:
            task = self.tell_stuck(game_id, attempts, privately=privately)
            asyncio.get_running_loop().create_task(task)

    async def tell_stuck(self, game_id: int, attempts: int, *, privately: bool = False) -> None:
        """Once per game, tell the moderators that the judge keeps failing (no details):
        `privately` (by DM) when what fails is a private effect — a DM to the police, a team's
        thread — whose failure, and so the time of the notice, depends on roles."""
        if attempts < STUCK_AFTER or (game_id, privately) in self._stuck_told:
            return
        self._stuck_told.add((game_id, privately))
        log.error("game %s: stuck after %s attempts; moderators told", game_id, attempts)
        try:
            await self.port.tell_stuck(game_id, attempts, privately=privately)
        except Exception as exc:  # the channel may be what is failing; the log line stands
            log.error("game %s: could not tell moderators: %s", game_id, type(exc).__name__)

    async def lock_due(
        self, game_id: int, *, forced: bool = False, by: str = "", window: int | None = None
    ) -> Outcome | None:
        """The deadline is reached (or a moderator advances): sweep the vote channel, then lock.

        The lock names the window open when this started (`window`: the one the moderator's
        command saw; by default the one open now, before the catch-up's awaits), so whichever of
        the deadline job, a moderator, a retried job or recovery comes second is refused by the
        engine (`phase.window_locked`) instead of locking the window opened by the first."""
        if not await self.service.is_active(game_id) or not await self.serves(game_id):
            return None
        state = await self.service.state(game_id)
        if window is None and state.window is not None:
            window = state.window_index
        if not forced and (state.window is None or state.deadline is None):
            return None
        if not forced and state.deadline is not None and self.now_ms() < state.deadline:
            self.schedule_deadline(game_id, state.deadline)
            return None
        if not forced and state.deadline is not None and self.service.metrics is not None:
            late = (self.now_ms() - state.deadline) / 1000
            self.service.metrics.deadline_lateness.observe(late)
        if state.window is not None:
            await self.votes.catch_up(game_id)
        info = await self.service.info(game_id)
        command = self.service.lock_command(state, info, forced=forced, window=window)
        if by:  # a moderator's advance: recorded and announced as an override
            command = dataclasses.replace(command, by=by)
        return await self.service.submit(game_id, command)

    async def reconcile(self, game_id: int) -> None:
        """Lock an overdue window now (votes are judged by their own times); schedule the rest.

        A failure touches this game only: one game's trouble never keeps the others' deadlines
        from being scheduled."""
        state = await self.service.state(game_id)
        if state.deadline is None:
            return
        if state.deadline <= self.now_ms():
            await fire_deadline(self.key, game_id)  # retried later if it cannot lock now
        else:
            self.schedule_deadline(game_id, state.deadline)

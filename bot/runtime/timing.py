"""Time for the shell: a clock interface and a scheduler that wakes the bot at deadlines.

Theory of operation: deadlines are game state in the database; this module only wakes the bot
at them. Everything that needs "now" takes a `Clock`: `SystemClock` in production, `FakeClock`
(or any object with `now()`) in tests. `DeadlineScheduler` has two modes:

- real (the default with `SystemClock`): jobs go to an APScheduler 3 `AsyncIOScheduler` as
  one-shot date-trigger jobs with `replace_existing=True`, `misfire_grace_time=None` (a late
  deadline still fires, however late: after a restart it fires at start) and `coalesce=True`.
- manual (the default with any other clock): jobs wait in a dict and fire only when a test
  calls `await scheduler.run_due()`, which runs every job whose time is `<= clock.now()` in
  time order, including jobs that due jobs schedule. No sleeping, no threads, deterministic.

Job functions must be module-level `async def` functions (importable by reference, as a
persistent APScheduler job store needs) taking plain, picklable arguments; they find the running
application themselves. Ids are stable strings such as `game:{id}:window:{n}`
(`window_job_id`), so scheduling a deadline again replaces it instead of doubling it.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any, Final, Protocol, runtime_checkable

from apscheduler.jobstores.base import JobLookupError  # type: ignore[import-untyped]
from apscheduler.schedulers.asyncio import AsyncIOScheduler  # type: ignore[import-untyped]
from apscheduler.schedulers.base import STATE_RUNNING  # type: ignore[import-untyped]
from apscheduler.triggers.date import DateTrigger  # type: ignore[import-untyped]

__all__ = [
    "Clock",
    "DeadlineScheduler",
    "FakeClock",
    "JobFunc",
    "ScheduledJob",
    "SystemClock",
    "window_job_id",
]

#: Where a `FakeClock` starts unless told otherwise (the same instant simcord starts at).
FAKE_EPOCH: Final = datetime(2026, 1, 1, tzinfo=UTC)

#: A deadline job: a module-level coroutine function.
JobFunc = Callable[..., Coroutine[Any, Any, object]]

# run_due() stops after this many jobs in one call: a job that keeps rescheduling itself
# in the past is a bug, not a workload.
_MAX_JOBS_PER_RUN: Final = 10_000


@runtime_checkable
class Clock(Protocol):
    """Where the shell reads the time."""

    def now(self) -> datetime:
        """The current instant, timezone-aware, in UTC."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        """The current instant from the operating system, in UTC."""
        return datetime.now(UTC)


def _require_aware(when: datetime, name: str) -> datetime:
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware, got naive {when.isoformat()}")
    return when.astimezone(UTC)


class FakeClock:
    """A clock that moves only when a test moves it."""

    def __init__(self, start: datetime = FAKE_EPOCH) -> None:
        self._now = _require_aware(start, "start")

    def now(self) -> datetime:
        """The instant the test last set."""
        return self._now

    def set(self, when: datetime) -> None:
        """Jump to `when` (timezone-aware; earlier instants are allowed for odd tests)."""
        self._now = _require_aware(when, "when")

    def advance(self, delta: timedelta | float) -> datetime:
        """Move forward by `delta` (a timedelta or seconds) and return the new instant."""
        step = delta if isinstance(delta, timedelta) else timedelta(seconds=delta)
        if step < timedelta(0):
            raise ValueError(f"a clock only moves forward; got {step}")
        self._now += step
        return self._now


def window_job_id(game_id: int | str, window: int) -> str:
    """The stable job id for the deadline of window `window` of game `game_id`."""
    return f"game:{game_id}:window:{window}"


@dataclass(frozen=True, slots=True)
class ScheduledJob:
    """A job waiting for its time."""

    id: str
    when: datetime
    func: JobFunc
    args: tuple[object, ...]


@dataclass(frozen=True, slots=True)
class _Entry:
    job: ScheduledJob
    seq: int


@cache  # checked once per function (a restart schedules thousands of jobs with a few)
def _check_job_func(func: JobFunc) -> None:
    if not inspect.iscoroutinefunction(func):
        raise TypeError(f"deadline jobs must be `async def` functions, got {func!r}")
    module_name = getattr(func, "__module__", None)
    qualname = getattr(func, "__qualname__", "")
    if not module_name or "<" in qualname or "." in qualname:
        raise ValueError(
            f"deadline jobs must be module-level functions (importable by reference), "
            f"got {module_name}:{qualname}"
        )
    try:
        found = getattr(importlib.import_module(module_name), qualname)
    except (ImportError, AttributeError):
        found = None
    if found is not func:
        raise ValueError(f"{module_name}:{qualname} does not import back to the same function")
    # APScheduler checks every job's arguments against `inspect.signature(func)`: kept on the
    # function (where `inspect` looks first), a restart's thousands of jobs do not each work it
    # out again (2,000 jobs: ~105 → ~76 ms)
    setattr(func, "__signature__", inspect.signature(func))  # noqa: B010


OVERLAPPING_RUNS = 1_000
"""Runs of one job id at once that APScheduler allows (in effect no limit: see below)."""


class DeadlineScheduler:
    """Wakes the bot at deadlines: APScheduler in production, `run_due()` in tests."""

    def __init__(self, clock: Clock | None = None, *, manual: bool | None = None) -> None:
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._manual = not isinstance(self._clock, SystemClock) if manual is None else manual
        self._entries: dict[str, _Entry] = {}
        self._seq = itertools.count()
        self._running = False
        self._aps: Any = None
        if not self._manual:
            # A job may run while its own id is scheduled again and comes due (a lock's
            # catch-up schedules the next deadline; a shortened deadline's reminder): with one
            # instance at a time APScheduler drops the second, silently. The jobs are safe to
            # overlap: each takes the game's turn and names the window it closes.
            self._aps = AsyncIOScheduler(
                timezone=UTC,
                job_defaults={
                    "misfire_grace_time": None,
                    "coalesce": True,
                    "max_instances": OVERLAPPING_RUNS,
                },
            )

    @property
    def clock(self) -> Clock:
        """The clock `run_due()` compares against."""
        return self._clock

    @property
    def manual(self) -> bool:
        """True when jobs fire only through `run_due()`."""
        return self._manual

    @property
    def running(self) -> bool:
        """Between `start()` and `shutdown()`."""
        return self._running

    def schedule(self, job_id: str, when: datetime, func: JobFunc, *args: object) -> None:
        """Run `await func(*args)` at `when`, replacing any job with the same id."""
        if not isinstance(job_id, str) or not job_id:
            raise ValueError("job_id must be a non-empty string")
        when = _require_aware(when, "when")
        _check_job_func(func)
        job = ScheduledJob(id=job_id, when=when, func=func, args=tuple(args))
        if self._manual:
            self._entries[job_id] = _Entry(job, next(self._seq))
            return
        if not self._aps.running:
            # Before start, APScheduler queues jobs without de-duplicating ids.
            self.cancel(job_id)
        self._aps.add_job(
            func,
            trigger=DateTrigger(run_date=when, timezone=UTC),
            args=job.args,
            id=job_id,
            name=job_id,
            replace_existing=True,
            misfire_grace_time=None,
            coalesce=True,
        )

    @contextmanager
    def many(self) -> Iterator[None]:
        """Around a run of `schedule` calls with no `await` among them (a restart's thousands
        of jobs): APScheduler is woken once after them, not once per job. Each wake-up queued a
        scan of every job on the event loop and a write to its self-pipe: 1,000 games' restart,
        2,000 of each. Jobs due meanwhile run after the run, as they would have (the loop runs
        nothing else during it)."""
        aps = self._aps
        if aps is None or aps.state != STATE_RUNNING:
            yield
            return
        aps.pause()
        try:
            yield
        finally:
            aps.resume()  # one wake-up: jobs due, and the timer for the next

    def cancel(self, job_id: str) -> bool:
        """Drop the job with this id; False if there was none."""
        if self._manual:
            return self._entries.pop(job_id, None) is not None
        try:
            self._aps.remove_job(job_id)
        except JobLookupError:
            return False
        return True

    def get(self, job_id: str) -> ScheduledJob | None:
        """The waiting job with this id, if any."""
        if self._manual:
            entry = self._entries.get(job_id)
            return entry.job if entry is not None else None
        aps_job = self._aps.get_job(job_id)
        return self._from_aps(aps_job) if aps_job is not None else None

    def jobs(self) -> list[ScheduledJob]:
        """Every waiting job, earliest first."""
        if self._manual:
            entries = sorted(self._entries.values(), key=lambda e: (e.job.when, e.seq))
            return [entry.job for entry in entries]
        found = [self._from_aps(aps_job) for aps_job in self._aps.get_jobs()]
        return sorted(found, key=lambda job: job.when)

    @staticmethod
    def _from_aps(aps_job: Any) -> ScheduledJob:
        run_date: datetime = aps_job.trigger.run_date
        return ScheduledJob(
            id=str(aps_job.id),
            when=run_date.astimezone(UTC),
            func=aps_job.func,
            args=tuple(aps_job.args),
        )

    def start(self) -> None:
        """Begin firing jobs (real mode: needs a running event loop)."""
        if self._running:
            return
        if not self._manual:
            self._aps.start()
        self._running = True

    def shutdown(self) -> None:
        """Stop firing jobs; jobs that are running are cancelled, waiting ones are dropped."""
        if not self._running:
            return
        self._running = False
        if not self._manual:
            self._aps.shutdown(wait=False)

    async def run_due(self) -> list[str]:
        """Run every job due by `clock.now()` in time order, one at a time; return their ids.

        Jobs that due jobs schedule (or cancel) are taken into account. Each job is removed
        before it runs. If jobs raise, the rest still run and an ExceptionGroup follows.
        """
        fired: list[str] = []
        errors: list[Exception] = []
        for _ in range(_MAX_JOBS_PER_RUN):
            job = self._pop_next_due()
            if job is None:
                break
            fired.append(job.id)
            try:
                await job.func(*job.args)
            except Exception as exc:
                exc.add_note(f"in deadline job {job.id!r}")
                errors.append(exc)
        else:
            raise RuntimeError(f"run_due() ran {_MAX_JOBS_PER_RUN} jobs; a job reschedules itself")
        if errors:
            raise ExceptionGroup(f"{len(errors)} deadline job(s) failed", errors)
        return fired

    def _pop_next_due(self) -> ScheduledJob | None:
        now = self._clock.now()
        due = [job for job in self.jobs() if job.when <= now]
        if not due:
            return None
        job = due[0]
        self.cancel(job.id)
        return job

"""bot.timing: clocks, and deadlines fired by a fake clock or by APScheduler for real."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.runtime.timing import (
    FAKE_EPOCH,
    Clock,
    DeadlineScheduler,
    FakeClock,
    SystemClock,
    window_job_id,
)

CALLS: list[tuple[str, object]] = []
FIRED: dict[str, asyncio.Event] = {}
SCHEDULER: list[DeadlineScheduler] = []


@pytest.fixture(autouse=True)
def _reset() -> Iterator[None]:
    CALLS.clear()
    FIRED.clear()
    SCHEDULER.clear()
    yield
    CALLS.clear()


async def record(name: str, payload: object = None) -> None:
    CALLS.append((name, payload))


async def fail(name: str) -> None:
    CALLS.append((name, None))
    raise RuntimeError(f"{name} broke")


async def chain(name: str, delay_seconds: float) -> None:
    """Close one window and schedule the next one `delay_seconds` later."""
    CALLS.append((name, None))
    scheduler = SCHEDULER[0]
    scheduler.schedule(
        f"{name}+next",
        scheduler.clock.now() + timedelta(seconds=delay_seconds),
        record,
        f"{name}+next",
    )


async def set_event(name: str) -> None:
    CALLS.append((name, time.monotonic()))
    FIRED[name].set()


def not_async(name: str) -> None:
    CALLS.append((name, None))


class Holder:
    async def method(self) -> None:
        pass


def at(minutes: float) -> datetime:
    return FAKE_EPOCH + timedelta(minutes=minutes)


# --------------------------------------------------------------------------- clocks


def test_fake_clock_moves_only_when_told() -> None:
    clock = FakeClock()
    assert clock.now() == FAKE_EPOCH == datetime(2026, 1, 1, tzinfo=UTC)
    assert clock.now() == clock.now()

    assert clock.advance(90) == FAKE_EPOCH + timedelta(seconds=90)
    assert clock.advance(timedelta(hours=1)) == FAKE_EPOCH + timedelta(hours=1, seconds=90)

    shanghai = datetime(2026, 3, 1, 22, 0, tzinfo=ZoneInfo("Asia/Shanghai"))
    clock.set(shanghai)
    assert clock.now() == shanghai and clock.now().tzinfo is UTC

    with pytest.raises(ValueError, match="forward"):
        clock.advance(-1)
    with pytest.raises(ValueError, match="timezone-aware"):
        clock.set(datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="timezone-aware"):
        FakeClock(datetime(2026, 1, 1))


def test_system_clock_is_aware_utc() -> None:
    clock: Clock = SystemClock()
    before = datetime.now(UTC)
    now = clock.now()
    assert now.tzinfo is UTC
    assert before <= now <= datetime.now(UTC)
    assert isinstance(FakeClock(), Clock)


def test_window_job_ids() -> None:
    assert window_job_id(12, 3) == "game:12:window:3"
    assert window_job_id("abc", 0) == "game:abc:window:0"


def test_mode_follows_the_clock() -> None:
    assert DeadlineScheduler(FakeClock()).manual
    assert not DeadlineScheduler(SystemClock()).manual
    assert not DeadlineScheduler().manual
    assert DeadlineScheduler(SystemClock(), manual=True).manual


# --------------------------------------------------------------------------- manual mode


@pytest.mark.asyncio
async def test_run_due_fires_due_jobs_in_time_order() -> None:
    clock = FakeClock()
    scheduler = DeadlineScheduler(clock)
    scheduler.schedule("c", at(30), record, "c")
    scheduler.schedule("a", at(10), record, "a", {"seat": 1})
    scheduler.schedule("late", at(60), record, "late")
    scheduler.schedule("b", at(20), record, "b")
    scheduler.schedule("b2", at(20), record, "b2")  # same instant: the order scheduled

    assert await scheduler.run_due() == []
    assert CALLS == []

    clock.set(at(30))
    assert await scheduler.run_due() == ["a", "b", "b2", "c"]
    assert CALLS == [("a", {"seat": 1}), ("b", None), ("b2", None), ("c", None)]
    assert [job.id for job in scheduler.jobs()] == ["late"]

    assert await scheduler.run_due() == []  # nothing fires twice
    clock.advance(timedelta(minutes=45))
    assert await scheduler.run_due() == ["late"]
    assert scheduler.jobs() == []


@pytest.mark.asyncio
async def test_schedule_replaces_a_job_with_the_same_id() -> None:
    clock = FakeClock()
    scheduler = DeadlineScheduler(clock)
    job_id = window_job_id(7, 1)
    scheduler.schedule(job_id, at(10), record, "first")
    scheduler.schedule(job_id, at(20), record, "second")

    (job,) = scheduler.jobs()
    assert (job.id, job.when, job.args) == (job_id, at(20), ("second",))

    clock.set(at(15))
    assert await scheduler.run_due() == []
    clock.set(at(20))
    assert await scheduler.run_due() == [job_id]
    assert CALLS == [("second", None)]


@pytest.mark.asyncio
async def test_cancel_drops_a_job() -> None:
    clock = FakeClock()
    scheduler = DeadlineScheduler(clock)
    scheduler.schedule("keep", at(5), record, "keep")
    scheduler.schedule("drop", at(5), record, "drop")

    assert scheduler.cancel("drop") is True
    assert scheduler.cancel("drop") is False
    assert scheduler.cancel("never") is False
    assert scheduler.get("drop") is None
    keep = scheduler.get("keep")
    assert keep is not None and keep.when == at(5)

    clock.set(at(5))
    assert await scheduler.run_due() == ["keep"]
    assert CALLS == [("keep", None)]


@pytest.mark.asyncio
async def test_jobs_scheduled_by_due_jobs_fire_in_the_same_run_when_due() -> None:
    clock = FakeClock()
    scheduler = DeadlineScheduler(clock)
    SCHEDULER.append(scheduler)
    # Run at 20: night's follow-up lands at 15 (already past), day's at 30 (not yet due).
    scheduler.schedule("night", at(10), chain, "night", -300)
    scheduler.schedule("day", at(20), chain, "day", 600)

    clock.set(at(20))
    assert await scheduler.run_due() == ["night", "night+next", "day"]
    assert [job.id for job in scheduler.jobs()] == ["day+next"]
    assert scheduler.jobs()[0].when == at(30)


@pytest.mark.asyncio
async def test_a_failing_job_does_not_stop_the_others() -> None:
    clock = FakeClock()
    scheduler = DeadlineScheduler(clock)
    scheduler.schedule("game:1:window:1", at(1), fail, "broken")
    scheduler.schedule("game:2:window:1", at(2), record, "fine")
    clock.set(at(2))

    with pytest.raises(ExceptionGroup) as caught:
        await scheduler.run_due()

    assert CALLS == [("broken", None), ("fine", None)]
    (error,) = caught.value.exceptions
    assert isinstance(error, RuntimeError)
    assert "in deadline job 'game:1:window:1'" in error.__notes__
    assert scheduler.jobs() == []


def test_schedule_rejects_what_cannot_be_a_deadline_job() -> None:
    scheduler = DeadlineScheduler(FakeClock())

    with pytest.raises(ValueError, match="timezone-aware"):
        scheduler.schedule("x", datetime(2026, 1, 1), record, "x")
    with pytest.raises(TypeError, match="async def"):
        scheduler.schedule("x", at(1), not_async, "x")  # type: ignore[arg-type]

    async def nested() -> None:
        pass

    with pytest.raises(ValueError, match="module-level"):
        scheduler.schedule("x", at(1), nested)
    with pytest.raises(ValueError, match="module-level"):
        scheduler.schedule("x", at(1), Holder().method)
    with pytest.raises(ValueError, match="non-empty"):
        scheduler.schedule("", at(1), record, "x")
    assert scheduler.jobs() == []


@pytest.mark.asyncio
async def test_start_and_shutdown_in_manual_mode() -> None:
    scheduler = DeadlineScheduler(FakeClock())
    assert not scheduler.running
    scheduler.start()
    scheduler.start()
    assert scheduler.running
    scheduler.shutdown()
    scheduler.shutdown()
    assert not scheduler.running


# --------------------------------------------------------------------------- real mode


@pytest.mark.asyncio
async def test_apscheduler_fires_for_real_late_deadlines_first() -> None:
    scheduler = DeadlineScheduler(SystemClock())
    now = datetime.now(UTC)
    FIRED["missed"] = asyncio.Event()
    FIRED["soon"] = asyncio.Event()
    # A deadline that passed while the bot was down still fires (misfire_grace_time=None) ...
    scheduler.schedule("game:1:window:1", now - timedelta(minutes=5), set_event, "missed")
    # ... and a job scheduled twice under one id fires once, with the last arguments.
    scheduler.schedule("game:1:window:2", now + timedelta(seconds=0.2), set_event, "dropped")
    scheduler.schedule("game:1:window:2", now + timedelta(seconds=0.2), set_event, "soon")
    scheduler.schedule("game:1:window:3", now + timedelta(minutes=5), set_event, "cancelled")
    assert scheduler.cancel("game:1:window:3")
    assert [job.id for job in scheduler.jobs()] == ["game:1:window:1", "game:1:window:2"]
    started = time.monotonic()

    scheduler.start()
    try:
        await asyncio.wait_for(FIRED["soon"].wait(), timeout=5)
        assert FIRED["missed"].is_set()
        assert [name for name, _ in CALLS] == ["missed", "soon"]
        soon_at = CALLS[1][1]
        assert isinstance(soon_at, float) and soon_at - started >= 0.15
        assert scheduler.jobs() == []
    finally:
        scheduler.shutdown()
    assert not scheduler.running


@pytest.mark.asyncio
async def test_many_jobs_scheduled_at_once_wake_apscheduler_once_and_still_fire() -> None:
    scheduler = DeadlineScheduler(SystemClock())
    scheduler.start()
    wakeups: list[None] = []
    wake = scheduler._aps.wakeup
    scheduler._aps.wakeup = lambda: (wakeups.append(None), wake())[1]
    try:
        now = datetime.now(UTC)
        FIRED["due"] = asyncio.Event()
        with scheduler.many():  # a restart's run of jobs
            scheduler.schedule("game:1:window:1", now - timedelta(seconds=1), set_event, "due")
            for game in range(2, 12):
                later = now + timedelta(hours=1)
                scheduler.schedule(f"game:{game}:window:1", later, record, "later")
        assert len(wakeups) == 1  # once, after the run: not once per job
        await asyncio.wait_for(FIRED["due"].wait(), timeout=5)  # a job due then fires
        assert len(scheduler.jobs()) == 10
        woken = len(wakeups)
        scheduler.schedule("game:12:window:1", now + timedelta(hours=1), record, "later")
        assert len(wakeups) == woken + 1  # one job alone wakes it, as before
    finally:
        scheduler.shutdown()


@pytest.mark.asyncio
async def test_a_job_s_arguments_are_checked_against_its_function_each_time() -> None:
    scheduler = DeadlineScheduler(SystemClock())
    scheduler.start()
    try:
        later = datetime.now(UTC) + timedelta(hours=1)
        scheduler.schedule("game:1:window:1", later, record, "one")  # its signature now kept
        with pytest.raises(ValueError, match="arguments"):
            scheduler.schedule("game:2:window:1", later, record, "one", "two", "three")
        assert [job.id for job in scheduler.jobs()] == ["game:1:window:1"]
    finally:
        scheduler.shutdown()


GATE: list[asyncio.Event] = []


async def held(name: str) -> None:
    """A job that runs until the test lets it end (a lock's catch-up, a reminder's sends)."""
    CALLS.append((name, "started"))
    await GATE[0].wait()
    CALLS.append((name, "ended"))


async def test_a_job_rescheduled_under_its_own_id_while_it_runs_still_runs() -> None:
    """A running deadline job may schedule its own id again, due now (a catch-up's effects, a
    shortened deadline's reminder). APScheduler ran one instance of an id at a time and
    dropped a job due meanwhile, silently: that deadline never fired. Failed before the fix."""
    GATE[:] = [asyncio.Event()]
    scheduler = DeadlineScheduler(SystemClock())
    scheduler.start()
    try:
        FIRED["second"] = asyncio.Event()
        scheduler.schedule("game:1:deadline", datetime.now(UTC), held, "first")
        for _ in range(250):
            if CALLS:
                break
            await asyncio.sleep(0.02)
        assert CALLS == [("first", "started")]
        scheduler.schedule("game:1:deadline", datetime.now(UTC), set_event, "second")
        await asyncio.wait_for(FIRED["second"].wait(), timeout=5)  # while the first still runs
        GATE[0].set()
        await asyncio.sleep(0.05)
        assert [c for c in CALLS if c[1] == "ended"] == [("first", "ended")]
        assert scheduler.jobs() == []
    finally:
        GATE[0].set()
        scheduler.shutdown()

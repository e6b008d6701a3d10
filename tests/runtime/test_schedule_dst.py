"""Deadlines across daylight-saving changes (issue 12): the minimum window and window lengths are
real elapsed time, in America/New_York's spring-forward (2026-03-08, 02:00 EST → 03:00 EDT) and
fall-back (2026-11-01, 02:00 EDT → 01:00 EST) nights."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from bot.config import DailyAt, WindowLength
from bot.runtime.schedule import MIN_WINDOW, GameSchedule, next_deadline

NY = ZoneInfo("America/New_York")


def local(*args: int, fold: int = 0) -> dt.datetime:
    return dt.datetime(*args, tzinfo=NY, fold=fold)  # type: ignore[misc]


def utc(*args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=dt.UTC)


def test_spring_forward_a_daily_time_five_real_minutes_away_moves_to_the_next_day() -> None:
    opened = local(2026, 3, 8, 1, 55)  # EST: 06:55 UTC; 03:00 EDT is 07:00 UTC
    deadline = next_deadline(DailyAt(dt.time(3, 0)), opened, NY)
    assert deadline - opened.astimezone(dt.UTC) >= MIN_WINDOW
    assert deadline == local(2026, 3, 9, 3, 0).astimezone(dt.UTC) == utc(2026, 3, 9, 7, 0)


def test_spring_forward_a_daily_time_far_enough_in_real_time_stays_that_day() -> None:
    opened = local(2026, 3, 8, 1, 45)  # 06:45 UTC; 03:00 EDT (07:00 UTC) is 15 real minutes on
    assert next_deadline(DailyAt(dt.time(3, 0)), opened, NY) == utc(2026, 3, 8, 7, 0)


def test_fall_back_a_daily_time_an_hour_of_real_time_away_is_that_day() -> None:
    # 01:55 EDT (05:55 UTC); 02:00 EST is 07:00 UTC: 65 real minutes, 5 on the wall clock
    opened = local(2026, 11, 1, 1, 55)
    deadline = next_deadline(DailyAt(dt.time(2, 0)), opened, NY)
    assert deadline == utc(2026, 11, 1, 7, 0)
    assert deadline - opened.astimezone(dt.UTC) == dt.timedelta(minutes=65)


@pytest.mark.parametrize(
    ("opened", "expected"),
    [
        # 01:55 EST: the skipped 02:30 is read as 03:30 EDT (07:30 UTC), 35 minutes on
        (local(2026, 3, 8, 1, 55), utc(2026, 3, 8, 7, 30)),
        # 03:25 EDT: that is 5 minutes on; the next day's 02:30 EDT, never an earlier reading
        (local(2026, 3, 8, 3, 25), utc(2026, 3, 9, 6, 30)),
    ],
)
def test_spring_forward_a_skipped_time_is_read_with_the_offset_before(
    opened: dt.datetime, expected: dt.datetime
) -> None:
    assert next_deadline(DailyAt(dt.time(2, 30)), opened, NY) == expected


@pytest.mark.parametrize(
    ("opened", "expected"),
    [
        # 01:00 EDT: the first 01:30 (EDT, 05:30 UTC) is 30 minutes on
        (local(2026, 11, 1, 1, 0), utc(2026, 11, 1, 5, 30)),
        # 01:25 EDT: 01:30 EDT is 5 minutes on, too close; 01:30 EST (06:30 UTC) is 65
        (local(2026, 11, 1, 1, 25), utc(2026, 11, 1, 6, 30)),
        # 01:00 EST, the second 1 o'clock: 01:30 EDT has passed; 01:30 EST is 30 minutes on
        (local(2026, 11, 1, 1, 0, fold=1), utc(2026, 11, 1, 6, 30)),
        # 01:25 EST: both 01:30s are too close or past; the next day's (EST, 06:30 UTC)
        (local(2026, 11, 1, 1, 25, fold=1), utc(2026, 11, 2, 6, 30)),
    ],
)
def test_fall_back_a_repeated_time_is_its_first_occurrence_far_enough_away(
    opened: dt.datetime, expected: dt.datetime
) -> None:
    assert next_deadline(DailyAt(dt.time(1, 30)), opened, NY) == expected


@pytest.mark.parametrize(
    ("opened", "expected"),
    [
        # 01:30 EST + 1 h of real time is 03:30 EDT (07:30 UTC), not the skipped 02:30
        (local(2026, 3, 8, 1, 30), utc(2026, 3, 8, 7, 30)),
        # 01:30 EDT (the first one) + 1 h is 01:30 EST (06:30 UTC), not 02:30 EST
        (local(2026, 11, 1, 1, 30, fold=0), utc(2026, 11, 1, 6, 30)),
        # 23:00 EDT the evening before + 6 h is 04:00 EST (09:00 UTC)
        (local(2026, 10, 31, 23, 0), utc(2026, 11, 1, 9, 0)),
    ],
)
def test_a_window_length_across_a_change_is_real_elapsed_time(
    opened: dt.datetime, expected: dt.datetime
) -> None:
    length = dt.timedelta(hours=6) if opened.hour == 23 else dt.timedelta(hours=1)
    deadline = next_deadline(WindowLength(length), opened, NY)
    assert deadline == expected
    assert deadline.tzinfo is dt.UTC
    assert deadline - opened == length  # aware datetimes in different zones: real time


def test_a_game_schedule_in_new_york_gives_utc_deadlines_at_least_the_minimum_away() -> None:
    schedule = GameSchedule(power=DailyAt(dt.time(3, 0)), vote=DailyAt(dt.time(2, 0)), timezone=NY)
    start = utc(2026, 3, 8, 5, 0)
    for minutes in range(0, 24 * 60, 5):  # every opening moment of both change days
        for day in (start, utc(2026, 11, 1, 4, 0)):
            opened = day + dt.timedelta(minutes=minutes)
            for kind in ("night", "day"):
                deadline = schedule.deadline(kind, opened)
                assert MIN_WINDOW <= deadline - opened <= dt.timedelta(hours=25, minutes=10)

"""A one-off deadline written as a wall-clock time (`/mod set-deadline`) across daylight-saving
changes: America/New_York's spring-forward (2026-03-08, 02:00 EST → 03:00 EDT) and fall-back
(2026-11-01, 02:00 EDT → 01:00 EST) nights, and two odder changes.

A time the clocks skip was read with the offset before the change — 02:30 silently became 03:30 —
and is now refused with the gap; a time they repeat was always its first occurrence, so the
second could not be set at all once the first had passed (it was refused as past), and is now
the next time the clocks show it."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from bot.runtime.schedule import SkippedTime, moment_of

NY = ZoneInfo("America/New_York")
JANUARY = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def wall(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> dt.datetime:
    return dt.datetime(year, month, day, hour, minute)


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> dt.datetime:
    return dt.datetime(year, month, day, hour, minute, tzinfo=dt.UTC)


@pytest.mark.parametrize("minute", [0, 1, 30, 59])
def test_a_time_the_clocks_skip_is_refused_with_its_gap(minute: int) -> None:
    with pytest.raises(SkippedTime) as refused:
        moment_of(wall(2026, 3, 8, 2, minute), NY, now=JANUARY)
    assert (refused.value.start, refused.value.end) == (wall(2026, 3, 8, 2, 0), wall(2026, 3, 8, 3))


@pytest.mark.parametrize(
    ("local", "expected"),
    [
        (wall(2026, 3, 8, 1, 59), utc(2026, 3, 8, 6, 59)),  # EST, the last minute before
        (wall(2026, 3, 8, 3, 0), utc(2026, 3, 8, 7, 0)),  # EDT, the first after
        (wall(2026, 7, 1, 12, 0), utc(2026, 7, 1, 16, 0)),  # an ordinary summer day
    ],
)
def test_the_times_around_the_gap_are_read_as_the_clocks_show_them(
    local: dt.datetime, expected: dt.datetime
) -> None:
    assert moment_of(local, NY, now=JANUARY) == expected


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (JANUARY, utc(2026, 11, 1, 5, 30)),  # before both: the first, 01:30 EDT
        (utc(2026, 11, 1, 5, 29), utc(2026, 11, 1, 5, 30)),  # a minute before the first
        (utc(2026, 11, 1, 5, 30), utc(2026, 11, 1, 6, 30)),  # the first is now: 01:30 EST
        (utc(2026, 11, 1, 6, 10), utc(2026, 11, 1, 6, 30)),  # 01:10 EST, in the second hour
    ],
)
def test_a_time_the_clocks_repeat_is_the_next_time_they_show_it(
    now: dt.datetime, expected: dt.datetime
) -> None:
    assert moment_of(wall(2026, 11, 1, 1, 30), NY, now=now) == expected


def test_a_repeated_time_both_past_is_past_so_it_is_refused_as_past() -> None:
    now = utc(2026, 11, 2)
    assert moment_of(wall(2026, 11, 1, 1, 30), NY, now=now) < now


def test_half_an_hour_gaps_and_a_whole_day_skipped() -> None:
    with pytest.raises(SkippedTime) as lord_howe:  # +10:30 → +11:00
        moment_of(wall(2026, 10, 4, 2, 15), ZoneInfo("Australia/Lord_Howe"), now=JANUARY)
    assert (lord_howe.value.start, lord_howe.value.end) == (
        wall(2026, 10, 4, 2, 0),
        wall(2026, 10, 4, 2, 30),
    )
    with pytest.raises(SkippedTime) as samoa:  # across the date line: 2011-12-30 never was
        moment_of(wall(2011, 12, 30, 12, 0), ZoneInfo("Pacific/Apia"), now=JANUARY)
    assert (samoa.value.start, samoa.value.end) == (wall(2011, 12, 30), wall(2011, 12, 31))


def test_a_zone_without_daylight_saving_reads_every_time() -> None:
    shanghai = ZoneInfo("Asia/Shanghai")
    for hour in range(24):
        moment = moment_of(wall(2026, 3, 8, hour, 30), shanghai, now=JANUARY)
        assert moment == utc(2026, 3, 8, hour, 30) - dt.timedelta(hours=8)

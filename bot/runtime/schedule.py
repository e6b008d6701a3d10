"""When a window closes: the game's schedule (daily times or window lengths) applied to a moment."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from bot.config import DailyAt, DeadlineRule, Schedule, WindowLength, parse_deadline_rule

MIN_WINDOW = dt.timedelta(minutes=10)
"""A daily deadline closer than this to the window's opening moves to the next day."""


@dataclass(frozen=True, kw_only=True)
class GameSchedule:
    """A game's deadlines: for the night power window and for the day vote window."""

    power: DeadlineRule
    vote: DeadlineRule
    timezone: ZoneInfo

    def to_json(self) -> dict[str, str]:
        """The form stored with the game."""
        return {"power": str(self.power), "vote": str(self.vote), "timezone": self.timezone.key}

    @staticmethod
    def from_json(data: Mapping[str, str]) -> GameSchedule:
        """Read the stored form."""
        return GameSchedule(
            power=parse_deadline_rule(data["power"]),
            vote=parse_deadline_rule(data["vote"]),
            timezone=ZoneInfo(data["timezone"]),
        )

    @staticmethod
    def from_defaults(schedule: Schedule, timezone: ZoneInfo) -> GameSchedule:
        """The configured default schedule."""
        return GameSchedule(power=schedule.power, vote=schedule.vote, timezone=timezone)

    def deadline(self, kind: str, opened_at: dt.datetime) -> dt.datetime:
        """The deadline of a window of `kind` ("night" or "day") opening at `opened_at` (UTC)."""
        rule = self.power if kind == "night" else self.vote
        return next_deadline(rule, opened_at, self.timezone)


def next_deadline(rule: DeadlineRule, opened_at: dt.datetime, tz: ZoneInfo) -> dt.datetime:
    """The first deadline of `rule` at least MIN_WINDOW after `opened_at`, as an aware UTC time.

    Lengths and the minimum are real elapsed time, measured in UTC: across a daylight-saving
    change a local difference of wall-clock times is an hour off (a rule `03:00` opened at 01:55
    on the spring-forward night is 5 minutes away, not 65). A daily time the clocks skip is read
    with the offset before the change (02:30 on that night is 03:30 after it); one they repeat
    is its first occurrence, or its second if the first is too close (a window opening at the
    second 01:00 closes at the second 01:30, not a day later)."""
    opened = opened_at.astimezone(dt.UTC)
    if isinstance(rule, WindowLength):
        return opened + rule.duration
    assert isinstance(rule, DailyAt)
    day = opened.astimezone(tz).date()
    while True:
        # fold=1: a repeated time's second occurrence (a skipped time's is earlier: never taken)
        for fold in (0, 1):
            local = dt.datetime.combine(day, rule.time.replace(fold=fold), tzinfo=tz)
            candidate = local.astimezone(dt.UTC)
            if candidate - opened >= MIN_WINDOW:
                return candidate
        day += dt.timedelta(days=1)


def to_ms(when: dt.datetime) -> int:
    """An aware datetime as epoch milliseconds (the engine's Instant)."""
    return round(when.timestamp() * 1000)


def from_ms(ms: int) -> dt.datetime:
    """Epoch milliseconds as an aware UTC datetime."""
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC)


class SkippedTime(ValueError):
    """A wall-clock time the clocks skip when they go forward: no moment has it."""

    def __init__(self, start: dt.datetime, end: dt.datetime) -> None:
        super().__init__(f"the clocks go from {start:%Y-%m-%d %H:%M} to {end:%H:%M}")
        self.start = start
        """The first wall-clock time skipped (naive, local)."""
        self.end = end
        """What the clocks show at the jump (naive, local): the first time after the gap."""


def moment_of(local: dt.datetime, tz: ZoneInfo, *, now: dt.datetime) -> dt.datetime:
    """The moment (aware UTC) the wall-clock time `local` (naive) names in `tz`, for a one-off
    deadline (`/mod set-deadline`).

    A time the clocks skip names none: `SkippedTime`, with the gap (the moderator writes another;
    read with the offset before, as a daily deadline is, 02:30 would silently be 03:30). A time
    they repeat is the next time the clocks show it: its first occurrence, or its second once
    the first is not after `now`. That is how a daily deadline reads it too (`next_deadline`),
    and the format names no occurrence: always the first, the second would be out of reach (a
    time already past is refused)."""
    first = local.replace(tzinfo=tz, fold=0)
    second = local.replace(tzinfo=tz, fold=1)
    if first.astimezone(dt.UTC).astimezone(tz).replace(tzinfo=None) != local:
        raise _gap_around(local, tz)
    if second.utcoffset() != first.utcoffset() and first.astimezone(dt.UTC) <= now:
        return second.astimezone(dt.UTC)
    return first.astimezone(dt.UTC)


def _gap_around(local: dt.datetime, tz: ZoneInfo) -> SkippedTime:
    """The gap of skipped wall-clock times `local` is in: bisected, as zoneinfo names no
    transition (its moment is where the offset changes between the two readings of `local`)."""
    before = local.replace(tzinfo=tz, fold=0).utcoffset()
    after = local.replace(tzinfo=tz, fold=1).utcoffset()
    assert before is not None and after is not None and after > before
    low = (local - after).replace(tzinfo=dt.UTC)  # still the offset before
    high = (local - before).replace(tzinfo=dt.UTC)  # already the offset after
    while high - low > dt.timedelta(seconds=1):
        middle = low + (high - low) / 2
        if middle.astimezone(tz).utcoffset() == after:
            high = middle
        else:
            low = middle
    change = high.replace(microsecond=0, tzinfo=None)
    return SkippedTime(start=change + before, end=change + after)

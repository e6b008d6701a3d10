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
    """The first deadline of `rule` at least MIN_WINDOW after `opened_at`, as an aware UTC time."""
    if isinstance(rule, WindowLength):
        return opened_at + rule.duration
    assert isinstance(rule, DailyAt)
    local = opened_at.astimezone(tz)
    candidate = dt.datetime.combine(local.date(), rule.time, tzinfo=tz)
    while candidate - local < MIN_WINDOW:
        candidate = dt.datetime.combine(
            candidate.date() + dt.timedelta(days=1), rule.time, tzinfo=tz
        )
    return candidate.astimezone(dt.UTC)


def to_ms(when: dt.datetime) -> int:
    """An aware datetime as epoch milliseconds (the engine's Instant)."""
    return round(when.timestamp() * 1000)


def from_ms(ms: int) -> dt.datetime:
    """Epoch milliseconds as an aware UTC datetime."""
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC)

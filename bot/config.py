"""Settings for the bot: one TOML file (or a mapping shaped like one), validated at start.

Theory of operation: `load()` reads the raw tables, then walks the known layout (`LAYOUT`) one
section at a time. Every reader appends to one list of problems instead of raising, so a config
with five mistakes reports five lines, each "key: what is wrong; allowed: ...". Unknown keys are
problems too (typo protection), with the nearest valid key suggested. Cross-field checks (the
schedule's two deadlines, the reminder against the windows) run only on values that parsed.
`load(running=True)` (`faguan run`) adds what only a running bot needs — a token, and every
shard in its one process on SQLite — to the same list.
Only when the list is empty is a frozen `Settings` built; otherwise one `ConfigError` carries
all problems. The token comes from the environment (`DISCORD_TOKEN`) before the file, and is
wrapped in `Secret` so it never shows in a repr, a log line or a traceback.
"""

from __future__ import annotations

import datetime as dt
import difflib
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, TypeVar, cast, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

__all__ = [
    "DEFAULT_DATABASE_URL",
    "LANGUAGES",
    "LAYOUT",
    "NO_FILE",
    "TOKEN_ENV",
    "ConfigError",
    "DailyAt",
    "DatabaseSettings",
    "DeadlineRule",
    "DiscordSettings",
    "GameDefaults",
    "Language",
    "RoleRef",
    "Schedule",
    "Secret",
    "Settings",
    "WindowLength",
    "load",
    "parse_deadline_rule",
    "setting_in",
]

TOKEN_ENV: Final = "DISCORD_TOKEN"
DEFAULT_DATABASE_URL: Final = "sqlite+aiosqlite:///./faguan.db"
DEFAULT_TIMEZONE: Final = "Asia/Shanghai"
DEFAULT_MODERATOR_ROLE: Final = "主持人"
DEFAULT_POWER_DEADLINE: Final = "12:00"
DEFAULT_VOTE_DEADLINE: Final = "22:00"
DEFAULT_REMINDER: Final = dt.timedelta(hours=2)
MAX_WINDOW: Final = dt.timedelta(days=30)
TOKEN_HELP_URL: Final = "https://discord.com/developers/applications"
NO_FILE: Final = "the environment (no config file)"
"""The source of settings read without a file (`load(None)`): the defaults, and what the
environment gives (`DISCORD_TOKEN`). A problem then is the environment's: its heading says so."""

Language = Literal["zh-CN", "en"]
LANGUAGES: Final[tuple[Language, ...]] = get_args(Language)

# Drivers the bot can use: it is async end to end (SQLAlchemy asyncio).
DATABASE_DRIVERS: Final = ("sqlite+aiosqlite", "postgresql+asyncpg")

#: Every section ("" is the file's top level) and the keys it may hold; sub-tables are keys too.
LAYOUT: Final[Mapping[str, tuple[str, ...]]] = {
    "": ("discord", "database", "game", "metrics", "backup"),
    "discord": ("token", "moderator_role", "shard_count", "shard_ids"),
    "database": ("url",),
    "game": ("timezone", "language", "reminder", "live_tally", "schedule"),
    "game.schedule": ("power", "vote"),
    "metrics": ("host", "port"),
    "backup": ("folder", "every", "keep"),
}


def _join(section: str, key: str) -> str:
    return f"{section}.{key}" if section else key


ALL_KEYS: Final[tuple[str, ...]] = tuple(
    _join(section, key) for section, keys in LAYOUT.items() for key in keys
)


# --------------------------------------------------------------------------- value types


class ConfigError(Exception):
    """The configuration is unusable; `problems` lists every mistake found, one line each."""

    def __init__(self, problems: Sequence[str], *, source: str = "configuration") -> None:
        self.problems: tuple[str, ...] = tuple(problems)
        self.source = source
        super().__init__(self._render())

    def _render(self) -> str:
        count = len(self.problems)
        noun = "problem" if count == 1 else "problems"
        lines = [f"{self.source}: {count} {noun}:"]
        lines.extend(f"  - {problem}" for problem in self.problems)
        return "\n".join(lines)


class Secret:
    """A string that never shows itself in repr/str; call `reveal()` to use it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """Return the secret value (for the one place that needs it)."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('**********')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))


@dataclass(frozen=True, slots=True)
class DailyAt:
    """A deadline at this wall-clock time every day, in the game's timezone."""

    time: dt.time

    def __str__(self) -> str:
        return self.time.strftime("%H:%M")


@dataclass(frozen=True, slots=True)
class WindowLength:
    """A deadline this long after the window opens."""

    duration: dt.timedelta

    def __str__(self) -> str:
        return _format_duration(self.duration)


DeadlineRule = DailyAt | WindowLength


@dataclass(frozen=True, slots=True)
class Schedule:
    """When the power (night) and vote (day) windows close by default."""

    power: DeadlineRule
    vote: DeadlineRule

    def window_lengths(self) -> tuple[dt.timedelta, dt.timedelta]:
        """(power window, vote window); daily times give the gap from the other deadline."""
        if isinstance(self.power, DailyAt) and isinstance(self.vote, DailyAt):
            return (_gap(self.vote.time, self.power.time), _gap(self.power.time, self.vote.time))
        if isinstance(self.power, WindowLength) and isinstance(self.vote, WindowLength):
            return (self.power.duration, self.vote.duration)
        raise ValueError("power and vote deadlines are of different kinds")


@dataclass(frozen=True, slots=True)
class RoleRef:
    """The moderator role, by id or by exact name (exactly one is set)."""

    id: int | None = None
    name: str | None = None

    def matches(self, role_id: int, role_name: str) -> bool:
        """Whether a role with this id and name is the one meant."""
        return role_id == self.id if self.id is not None else role_name == self.name

    def __str__(self) -> str:
        return f"id {self.id}" if self.id is not None else f"name {self.name!r}"


@dataclass(frozen=True, slots=True)
class DiscordSettings:
    """How the bot connects: token, moderator role, sharding."""

    token: Secret | None
    token_from: str | None
    moderator_role: RoleRef
    shard_count: int | None
    shard_ids: tuple[int, ...] | None


@dataclass(frozen=True, slots=True)
class MetricsSettings:
    """The Prometheus endpoint (`/metrics`), off unless a port is set."""

    host: str = "127.0.0.1"
    port: int | None = None


@dataclass(frozen=True, slots=True)
class BackupSettings:
    """Backups the bot takes of its SQLite database (`bot.runtime.backups`), off unless a folder
    is set."""

    folder: str | None = None
    every: dt.timedelta = dt.timedelta(hours=6)
    keep: int = 28


@dataclass(frozen=True, slots=True)
class DatabaseSettings:
    """Where events and the outbox live (an async SQLAlchemy URL)."""

    url: str = field(repr=False)

    def __repr__(self) -> str:
        shown = make_url(self.url).render_as_string(hide_password=True)
        return f"DatabaseSettings(url={shown!r})"


@dataclass(frozen=True, slots=True)
class GameDefaults:
    """Defaults for new games; a game may override them when it is created."""

    timezone: ZoneInfo
    language: Language
    schedule: Schedule
    reminder: dt.timedelta | None
    live_tally: bool


@dataclass(frozen=True, slots=True)
class Settings:
    """The validated configuration; build it with `load()`."""

    discord: DiscordSettings
    database: DatabaseSettings
    game: GameDefaults
    source: str = NO_FILE
    metrics: MetricsSettings = MetricsSettings()
    backup: BackupSettings = BackupSettings()

    def require_token(self) -> str:
        """Return the bot token, or raise a ConfigError that says exactly how to provide one."""
        if self.discord.token is not None:
            return self.discord.token.reveal()
        raise ConfigError([_no_token(self.source)], source=self.source)


def setting_in(source: str) -> str:
    """Where an operator writes a setting, for settings read from `source`: that file, or the
    file to make when none was read."""
    if source in (NO_FILE, "mapping"):
        return "your config file (copy config.example.toml to config.toml)"
    return source


def _no_token(source: str) -> str:
    """The problem of a configuration read from `source` with no token anywhere."""
    return (
        f"discord.token: no Discord bot token; allowed: set the {TOKEN_ENV} environment "
        f'variable (export {TOKEN_ENV}=...) or put token = "..." under [discord] in '
        f"{setting_in(source)}. "
        f"Get a token at {TOKEN_HELP_URL} -> your application -> Bot -> Reset Token, "
        "and enable the Server Members and Message Content intents on that page."
    )


# --------------------------------------------------------------------------- parsing helpers


class _Invalid(Exception):
    """One value is wrong: what is wrong, and what is allowed."""

    def __init__(self, what: str, allowed: str) -> None:
        super().__init__(what)
        self.what = what
        self.allowed = allowed


_T = TypeVar("_T")

_DURATION = re.compile(r"(?:(?P<d>\d+)d)?(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?", re.ASCII)
_CLOCK = re.compile(r"(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)", re.ASCII)
_DURATION_ALLOWED = "a duration like 24h, 90m, 1h30m or 2d (units d, h, m)"
_DEADLINE_ALLOWED = f'a daily time HH:MM from 00:00 to 23:59 (e.g. "22:00") or {_DURATION_ALLOWED}'


def _describe(value: object) -> str:
    kind = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a table",
    }.get(type(value), type(value).__name__)
    shown = repr(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{shown} ({kind})"


def _format_duration(value: dt.timedelta) -> str:
    hours, minutes = divmod(int(value.total_seconds() // 60), 60)
    parts = [f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m")) if n]
    return "".join(parts) or "0m"


def _gap(start: dt.time, end: dt.time) -> dt.timedelta:
    """Time from `start` to the next `end` on a 24-hour clock."""
    minutes = (end.hour * 60 + end.minute - start.hour * 60 - start.minute) % (24 * 60)
    return dt.timedelta(minutes=minutes)


def _parse_duration(value: object) -> dt.timedelta:
    if not isinstance(value, str):
        raise _Invalid(f"got {_describe(value)}", _DURATION_ALLOWED)
    text = value.strip().lower().replace(" ", "")
    match = _DURATION.fullmatch(text)
    if not text or match is None or not any(match.groupdict().values()):
        raise _Invalid(f"{value!r} is not a duration", _DURATION_ALLOWED)
    try:
        parts = {k: int(v) for k, v in match.groupdict().items() if v}
        return dt.timedelta(
            days=parts.get("d", 0), hours=parts.get("h", 0), minutes=parts.get("m", 0)
        )
    except (OverflowError, ValueError):  # beyond timedelta, or too many digits for int()
        raise _Invalid(f"{_describe(value)} is too long", _DURATION_ALLOWED) from None


def _parse_window(value: object) -> dt.timedelta:
    duration = _parse_duration(value)
    if duration <= dt.timedelta(0) or duration > MAX_WINDOW:
        raise _Invalid(
            f"{value!r} is out of range",
            f"a duration longer than 0m and at most {MAX_WINDOW.days}d",
        )
    return duration


def _parse_deadline(value: object) -> DeadlineRule:
    if isinstance(value, dt.time):  # a TOML local time such as 22:00:00
        if value.tzinfo is not None or value.second or value.microsecond:
            raise _Invalid(f"got {value.isoformat()}", _DEADLINE_ALLOWED)
        return DailyAt(value)
    if not isinstance(value, str):
        raise _Invalid(f"got {_describe(value)}", _DEADLINE_ALLOWED)
    text = value.strip()
    clock = _CLOCK.fullmatch(text)
    if clock is not None:
        return DailyAt(dt.time(int(clock["h"]), int(clock["m"])))
    if ":" in text:
        raise _Invalid(f"{value!r} is not a time of day", _DEADLINE_ALLOWED)
    if not _DURATION.fullmatch(text.lower().replace(" ", "")):
        raise _Invalid(f"{value!r} is neither a time of day nor a duration", _DEADLINE_ALLOWED)
    return WindowLength(_parse_window(text))


def parse_deadline_rule(value: object) -> DeadlineRule:
    """A deadline rule from text ("22:00" or "24h"), or ValueError saying what is allowed."""
    try:
        return _parse_deadline(value)
    except _Invalid as exc:
        raise ValueError(f"{exc.what}; allowed: {exc.allowed}") from None


def _parse_reminder(value: object) -> dt.timedelta | None:
    allowed = f'{_DURATION_ALLOWED}, or 0 / "off" / false to disable reminders'
    if value is False or (value == 0 and not isinstance(value, bool)):
        return None
    if isinstance(value, str) and value.strip().lower() in ("0", "off", "none", "no", "false"):
        return None
    if not isinstance(value, str):
        raise _Invalid(f"got {_describe(value)}", allowed)
    try:
        duration = _parse_duration(value)
    except _Invalid as exc:
        raise _Invalid(exc.what, allowed) from None
    return duration or None


def _parse_timezone(value: object) -> ZoneInfo:
    allowed = 'an IANA timezone name such as "Asia/Shanghai", "Europe/Berlin" or "UTC"'
    if not isinstance(value, str) or not value.strip():
        raise _Invalid(f"got {_describe(value)}", allowed)
    try:
        return ZoneInfo(value.strip())
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a directory, a long name
        raise _Invalid(f"unknown timezone {value!r}", allowed) from None


def _parse_language(value: object) -> Language:
    allowed = ", ".join(f'"{lang}"' for lang in LANGUAGES)
    if value == "zh-CN" or value == "en":
        return value
    if isinstance(value, str):
        for lang in LANGUAGES:  # say so when only the spelling is off ("zh_cn", "EN")
            if value.strip().replace("_", "-").lower() == lang.lower():
                raise _Invalid(f"{value!r} is not spelled {lang!r}", allowed)
        raise _Invalid(f"unsupported language {value!r}", allowed)
    raise _Invalid(f"got {_describe(value)}", allowed)


def _parse_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise _Invalid(f"got {_describe(value)}", "true or false (no quotes)")


EVERYONE_NAMES = ("everyone", "here")
"""Names (with or without `@`) that stand for every member: never a moderator role."""


def _parse_role(value: object) -> RoleRef:
    allowed = (
        "a role id (an integer such as 1234567890123456789) "
        'or an exact role name (a string such as "主持人")'
    )
    if isinstance(value, int) and not isinstance(value, bool):
        if 0 < value < 1 << 64:
            return RoleRef(id=value)
        raise _Invalid(f"{value} is not a Discord id", allowed)
    if isinstance(value, str):
        name = value.strip()
        if not name:
            raise _Invalid("the role name is empty", allowed)
        if name.isdigit() and 15 <= len(name) <= 20:
            raise _Invalid(f"{name!r} looks like a role id in quotes", "the id without quotes")
        if len(name) > 100:
            raise _Invalid(f"the role name has {len(name)} characters", "at most 100 characters")
        if name.lstrip("@").casefold() in EVERYONE_NAMES:
            raise _Invalid(
                f"{name!r} is every member of the server (it would make everyone a moderator)",
                "a role only the moderators have",
            )
        return RoleRef(name=name)
    raise _Invalid(f"got {_describe(value)}", allowed)


def _parse_shard_count(value: object) -> int:
    allowed = (
        "a whole number of at least 1, or leave it out to run one unsharded connection "
        "(Discord requires shards from 2,500 servers on)"
    )
    if isinstance(value, int) and not isinstance(value, bool):
        if value >= 1:
            return value
        raise _Invalid(f"{value} is below 1", allowed)
    raise _Invalid(f"got {_describe(value)}", allowed)


def _parse_shard_ids(value: object) -> tuple[int, ...]:
    allowed = (
        "a non-empty list of distinct whole numbers, e.g. [0, 1], or leave it out for all shards"
    )
    if not isinstance(value, list) or not value:
        raise _Invalid(f"got {_describe(value)}", allowed)
    if not all(isinstance(item, int) and not isinstance(item, bool) for item in value):
        raise _Invalid(f"got {_describe(value)}", allowed)
    ids = tuple(cast(list[int], value))
    if len(set(ids)) != len(ids):
        raise _Invalid(f"{list(ids)} repeats a shard id", allowed)
    return ids


def _parse_host(value: object) -> str:
    allowed = 'an address to listen on, e.g. "127.0.0.1" (this machine only) or "0.0.0.0"'
    if isinstance(value, str) and value.strip() and len(value) <= 255 and " " not in value:
        return value.strip()
    raise _Invalid(f"got {_describe(value)}", allowed)


def _parse_port(value: object) -> int:
    allowed = "a port from 1 to 65535 (leave it out: no metrics endpoint)"
    if isinstance(value, int) and not isinstance(value, bool):
        if 1 <= value <= 65535:
            return value
        raise _Invalid(f"{value} is not a port", allowed)
    raise _Invalid(f"got {_describe(value)}", allowed)


MIN_BACKUP_EVERY: Final = dt.timedelta(minutes=10)
MAX_BACKUP_EVERY: Final = dt.timedelta(days=7)


def _parse_folder(value: object) -> str:
    allowed = 'a folder for the backups, e.g. "backups" (leave it out: no backups)'
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise _Invalid(f"got {_describe(value)}", allowed)


def _parse_backup_every(value: object) -> dt.timedelta:
    duration = _parse_duration(value)
    if not MIN_BACKUP_EVERY <= duration <= MAX_BACKUP_EVERY:
        raise _Invalid(
            f"{value!r} is out of range",
            f"a duration from {_format_duration(MIN_BACKUP_EVERY)} to {MAX_BACKUP_EVERY.days}d",
        )
    return duration


def _parse_keep(value: object) -> int:
    allowed = "a number of backups from 1 to 10000"
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 10000:
        return value
    raise _Invalid(f"got {_describe(value)}", allowed)


def _parse_database_url(value: object) -> str:
    allowed = (
        "sqlite+aiosqlite:///PATH (e.g. sqlite+aiosqlite:///./faguan.db) or "
        "postgresql+asyncpg://USER:PASSWORD@HOST:5432/DATABASE"
    )
    if not isinstance(value, str) or not value.strip():
        raise _Invalid(f"got {_describe(value)}", allowed)
    try:
        url: URL = make_url(value.strip())
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise _Invalid("not a database URL", allowed) from None
    if url.drivername not in DATABASE_DRIVERS:
        hint = {
            "sqlite": " (use the async driver: sqlite+aiosqlite)",
            "postgresql": " (use the async driver: postgresql+asyncpg)",
            "postgres": " (use the async driver: postgresql+asyncpg)",
            "postgresql+psycopg2": " (use the async driver: postgresql+asyncpg)",
        }.get(url.drivername, "")
        raise _Invalid(f"unsupported driver {url.drivername!r}{hint}", allowed)
    if url.drivername.startswith("sqlite") and not url.database:
        raise _Invalid("no database file named", allowed)
    return value.strip()


def _parse_token(value: object) -> Secret | None:
    allowed = "the bot token from the Discord developer portal, as a string (or leave it empty)"
    if not isinstance(value, str):
        # Never echo a token-ish value back; name its type only.
        raise _Invalid(f"got a value of type {type(value).__name__}", allowed)
    text = value.strip()
    if not text:
        return None
    if text.lower().startswith("bot "):
        raise _Invalid('the token starts with "Bot "', 'the bare token, without the "Bot " prefix')
    if any(ch.isspace() for ch in text):
        raise _Invalid("the token contains whitespace", allowed)
    return Secret(text)


# --------------------------------------------------------------------------- the reader


def _nearest_key(section: str, key: str) -> str | None:
    """The valid key the user most likely meant by `key` in `section`."""
    here = LAYOUT.get(section, ())
    close = difflib.get_close_matches(key, here, n=1, cutoff=0.6)
    if close:
        return _join(section, close[0])
    dotted = difflib.get_close_matches(_join(section, key), ALL_KEYS, n=1, cutoff=0.75)
    if dotted:
        return dotted[0]
    by_leaf: dict[str, str] = {}
    for full in ALL_KEYS:
        by_leaf.setdefault(full.rsplit(".", 1)[-1], full)
    leaf = difflib.get_close_matches(key, list(by_leaf), n=1, cutoff=0.75)
    return by_leaf[leaf[0]] if leaf else None


class _Reader:
    """Walks the raw tables, collecting every problem."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self._seen: set[str] = set()

    def problem(self, key: str, what: str, allowed: str) -> None:
        self.problems.append(f"{key}: {what}; allowed: {allowed}")

    def table(self, raw: Mapping[str, Any], section: str) -> Mapping[str, Any]:
        """The table at `section` (empty when absent), after reporting unknown keys in it."""
        node: object = raw
        for name in section.split(".") if section else ():
            node = node.get(name, {}) if isinstance(node, Mapping) else {}
        if not isinstance(node, Mapping):
            if section not in self._seen:
                self.problem(section, f"got {_describe(node)}", f"a table ([{section}])")
            self._seen.add(section)
            return {}
        known = LAYOUT[section]
        for key in node:
            if not isinstance(key, str) or key not in known:
                suggestion = _nearest_key(section, str(key))
                hint = f" (did you mean {suggestion}?)" if suggestion else ""
                listed = ", ".join(_join(section, k) for k in known)
                self.problem(_join(section, str(key)), f"unknown key{hint}", listed)
        return cast(Mapping[str, Any], node)

    def value(
        self,
        table: Mapping[str, Any],
        section: str,
        key: str,
        parse: Callable[[object], _T],
        default: _T,
    ) -> tuple[_T, bool]:
        """(parsed value or default, whether it is valid); problems are recorded."""
        if key not in table:
            return default, True
        try:
            return parse(table[key]), True
        except _Invalid as exc:
            self.problem(_join(section, key), exc.what, exc.allowed)
            return default, False


def _read(
    raw: Mapping[str, Any], env: Mapping[str, str], source: str, *, running: bool = False
) -> Settings:
    reader = _Reader()
    reader.table(raw, "")

    # [discord]
    discord_table = reader.table(raw, "discord")
    file_token, token_ok = reader.value(discord_table, "discord", "token", _parse_token, None)
    token = file_token
    token_from = f"discord.token in {source}" if file_token is not None else None
    env_token = env.get(TOKEN_ENV, "")
    if env_token.strip():
        try:
            token = _parse_token(env_token)
            token_from = f"environment variable {TOKEN_ENV}"
        except _Invalid as exc:
            token_ok = False
            reader.problem(f"{TOKEN_ENV} (environment variable)", exc.what, exc.allowed)
    if running and token is None and token_ok:  # told with the file's mistakes, not after them
        reader.problems.append(_no_token(source))
    default_role = RoleRef(name=DEFAULT_MODERATOR_ROLE)
    role, _ = reader.value(discord_table, "discord", "moderator_role", _parse_role, default_role)
    shard_count, count_ok = reader.value(
        discord_table, "discord", "shard_count", _parse_shard_count, None
    )
    shard_ids, ids_ok = reader.value(discord_table, "discord", "shard_ids", _parse_shard_ids, None)
    shards_ok = ids_ok and count_ok
    if shard_ids is not None and shards_ok:
        if shard_count is None:
            shards_ok = False
            reader.problem(
                "discord.shard_ids",
                "set without discord.shard_count",
                "shard_ids together with shard_count, or neither",
            )
        elif any(not 0 <= shard < shard_count for shard in shard_ids):
            shards_ok = False
            reader.problem(
                "discord.shard_ids",
                f"{list(shard_ids)} has ids outside 0..{shard_count - 1}",
                f"ids from 0 to shard_count - 1 = {shard_count - 1}",
            )

    # [metrics]
    metrics_table = reader.table(raw, "metrics")
    metrics_host, _ = reader.value(metrics_table, "metrics", "host", _parse_host, "127.0.0.1")
    metrics_port, _ = reader.value(metrics_table, "metrics", "port", _parse_port, None)

    # [database]
    database_table = reader.table(raw, "database")
    url, url_ok = reader.value(
        database_table, "database", "url", _parse_database_url, DEFAULT_DATABASE_URL
    )
    if running and url_ok and shards_ok and shard_count is not None and shard_ids is not None:
        _check_one_sqlite_process(reader, url, shard_count, shard_ids)

    # [backup]
    backup_table = reader.table(raw, "backup")
    defaults = BackupSettings()
    folder, _ = reader.value(backup_table, "backup", "folder", _parse_folder, None)
    every, _ = reader.value(backup_table, "backup", "every", _parse_backup_every, defaults.every)
    keep, _ = reader.value(backup_table, "backup", "keep", _parse_keep, defaults.keep)

    # [game] and [game.schedule]
    game_table = reader.table(raw, "game")
    default_zone = ZoneInfo(DEFAULT_TIMEZONE)
    zone, _ = reader.value(game_table, "game", "timezone", _parse_timezone, default_zone)
    default_language: Language = "zh-CN"
    language, _ = reader.value(game_table, "game", "language", _parse_language, default_language)
    default_reminder: dt.timedelta | None = DEFAULT_REMINDER
    reminder, reminder_ok = reader.value(
        game_table, "game", "reminder", _parse_reminder, default_reminder
    )
    live_tally, _ = reader.value(game_table, "game", "live_tally", _parse_bool, False)
    schedule_table = reader.table(raw, "game.schedule")
    default_power = _parse_deadline(DEFAULT_POWER_DEADLINE)
    default_vote = _parse_deadline(DEFAULT_VOTE_DEADLINE)
    power, power_ok = reader.value(
        schedule_table, "game.schedule", "power", _parse_deadline, default_power
    )
    vote, vote_ok = reader.value(
        schedule_table, "game.schedule", "vote", _parse_deadline, default_vote
    )
    schedule = Schedule(power=power, vote=vote)
    if power_ok and vote_ok:
        _check_schedule(reader, schedule, reminder if reminder_ok else None)

    if reader.problems:
        raise ConfigError(reader.problems, source=source)
    return Settings(
        discord=DiscordSettings(
            token=token,
            token_from=token_from,
            moderator_role=role,
            shard_count=shard_count,
            shard_ids=shard_ids,
        ),
        database=DatabaseSettings(url=url),
        game=GameDefaults(
            timezone=zone,
            language=language,
            schedule=schedule,
            reminder=reminder,
            live_tally=live_tally,
        ),
        source=source,
        metrics=MetricsSettings(host=metrics_host, port=metrics_port),
        backup=BackupSettings(folder=folder, every=every, keep=keep),
    )


def _check_one_sqlite_process(
    reader: _Reader, url: str, shard_count: int, shard_ids: tuple[int, ...]
) -> None:
    """SQLite is for one process (the claim refuses a second): that process runs every shard,
    or the servers of the others have no judge."""
    left = sorted(set(range(shard_count)) - set(shard_ids))
    if not left or make_url(url).get_backend_name() != "sqlite":
        return
    reader.problem(
        "discord.shard_ids",
        f"{list(shard_ids)} of {shard_count} leaves shards {', '.join(map(str, left))} to no "
        "process: SQLite is for one process",
        "every shard id on SQLite (leave shard_ids out), or a PostgreSQL database.url for "
        "several shard processes",
    )


def _check_schedule(reader: _Reader, schedule: Schedule, reminder: dt.timedelta | None) -> None:
    power, vote = schedule.power, schedule.vote
    if type(power) is not type(vote):
        reader.problem(
            "game.schedule",
            f"power is {power} and vote is {vote}, one a time of day and one a duration",
            'two daily times (power = "12:00", vote = "22:00") or two durations '
            '(power = "24h", vote = "24h")',
        )
        return
    if isinstance(power, DailyAt) and isinstance(vote, DailyAt) and power.time == vote.time:
        reader.problem(
            "game.schedule",
            f"power and vote are both at {power}",
            "two different times of day",
        )
        return
    if reminder is None:
        return
    power_window, vote_window = schedule.window_lengths()
    shortest, name = min((power_window, "power"), (vote_window, "vote"))
    if reminder >= shortest:
        reader.problem(
            "game.reminder",
            f"{_format_duration(reminder)} is not shorter than the {_format_duration(shortest)} "
            f"{name} window",
            f'a lead time shorter than {_format_duration(shortest)}, or 0 / "off"',
        )


# --------------------------------------------------------------------------- entry point


def load(
    source: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    running: bool = False,
) -> Settings:
    """Read and validate settings from a TOML file path, a mapping of the same shape, or defaults.

    `env` defaults to `os.environ`; `DISCORD_TOKEN` in it wins over `discord.token` in the file.
    `running`: also what only `faguan run` needs — a token, and on SQLite (one process) every
    shard id in this process — listed with the other problems.
    Raises `ConfigError` listing every problem found.
    """
    environment: Mapping[str, str] = os.environ if env is None else env
    if source is None:
        return _read({}, environment, NO_FILE, running=running)
    if isinstance(source, Mapping):
        return _read(source, environment, "mapping", running=running)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        return _read(_read_toml(path), environment, str(path), running=running)
    raise TypeError(f"load() takes a path, a mapping or None, not {type(source).__name__}")


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(
            [f"{path}: file not found; allowed: a TOML file (copy config.example.toml to start)"],
            source=str(path),
        ) from None
    except IsADirectoryError:
        raise ConfigError(
            [f"{path}: is a directory; allowed: a TOML file"], source=str(path)
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            [f"{path}: not UTF-8 text (byte {exc.start}); allowed: a UTF-8 encoded TOML file"],
            source=str(path),
        ) from None
    except OSError as exc:
        raise ConfigError(
            [f"{path}: cannot be read ({exc.strerror}); allowed: a readable TOML file"],
            source=str(path),
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            [f"{path}: invalid TOML ({exc}); allowed: TOML syntax, see config.example.toml"],
            source=str(path),
        ) from None

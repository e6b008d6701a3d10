"""bot.config: every key's validation, the token's sources, and the example file."""

from __future__ import annotations

import dataclasses
import re
from datetime import time, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot import config
from bot.config import (
    ALL_KEYS,
    ConfigError,
    DailyAt,
    RoleRef,
    Settings,
    WindowLength,
    load,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "config.example.toml"
TOKEN = "MTIz.fake-token.for-tests"
NO_ENV: dict[str, str] = {}


def problems_of(source: Any, env: dict[str, str] | None = None) -> tuple[str, ...]:
    with pytest.raises(ConfigError) as caught:
        load(source, env=NO_ENV if env is None else env)
    return caught.value.problems


# --------------------------------------------------------------------------- defaults


def test_defaults() -> None:
    settings = load(None, env=NO_ENV)

    assert settings.discord.token is None
    assert settings.discord.moderator_role == RoleRef(name="主持人")
    assert (settings.discord.shard_count, settings.discord.shard_ids) == (None, None)
    assert settings.database.url == "sqlite+aiosqlite:///./faguan.db"
    assert settings.game.timezone.key == "Asia/Shanghai"
    assert settings.game.language == "zh-CN"
    assert settings.game.schedule.power == DailyAt(time(12, 0))
    assert settings.game.schedule.vote == DailyAt(time(22, 0))
    assert settings.game.reminder == timedelta(hours=2)
    assert settings.game.live_tally is False
    assert settings.backup.folder is None  # no backups unless a folder is set
    assert (settings.backup.every, settings.backup.keep) == (timedelta(hours=6), 28)
    assert settings.source == config.NO_FILE == "the environment (no config file)"


def test_settings_are_frozen() -> None:
    settings = load(None, env=NO_ENV)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.game = settings.game  # type: ignore[misc]


# --------------------------------------------------------------------------- valid values


def _get(settings: Settings, dotted: str) -> Any:
    value: Any = settings
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


VALID: list[tuple[dict[str, Any], str, Any]] = [
    ({"discord": {"token": TOKEN}}, "discord.token", config.Secret(TOKEN)),
    ({"discord": {"token": "  "}}, "discord.token", None),
    ({"discord": {"moderator_role": "Mods"}}, "discord.moderator_role", RoleRef(name="Mods")),
    (
        {"discord": {"moderator_role": 1234567890123456789}},
        "discord.moderator_role",
        RoleRef(id=1234567890123456789),
    ),
    ({"discord": {"shard_count": 4}}, "discord.shard_count", 4),
    ({"discord": {"shard_count": 4, "shard_ids": [2, 3]}}, "discord.shard_ids", (2, 3)),
    (
        {"database": {"url": "postgresql+asyncpg://u:p@127.0.0.1:5432/faguan"}},
        "database.url",
        "postgresql+asyncpg://u:p@127.0.0.1:5432/faguan",
    ),
    (
        {"database": {"url": "sqlite+aiosqlite:////tmp/x.db"}},
        "database.url",
        "sqlite+aiosqlite:////tmp/x.db",
    ),
    ({"game": {"timezone": "Europe/Berlin"}}, "game.timezone.key", "Europe/Berlin"),
    ({"game": {"timezone": "UTC"}}, "game.timezone.key", "UTC"),
    ({"game": {"language": "en"}}, "game.language", "en"),
    ({"game": {"reminder": "90m"}}, "game.reminder", timedelta(minutes=90)),
    ({"game": {"reminder": "1h30m"}}, "game.reminder", timedelta(minutes=90)),
    ({"game": {"reminder": "0"}}, "game.reminder", None),
    ({"game": {"reminder": 0}}, "game.reminder", None),
    ({"game": {"reminder": "off"}}, "game.reminder", None),
    ({"game": {"reminder": False}}, "game.reminder", None),
    ({"game": {"live_tally": True}}, "game.live_tally", True),
    (
        {"game": {"schedule": {"power": "8:30", "vote": "23:59"}}},
        "game.schedule.power",
        DailyAt(time(8, 30)),
    ),
    (
        {"game": {"schedule": {"power": time(12, 0), "vote": time(22, 0)}}},  # TOML local times
        "game.schedule.power",
        DailyAt(time(12, 0)),
    ),
    (
        {"game": {"schedule": {"power": "24h", "vote": "1d12h"}}},
        "game.schedule.vote",
        WindowLength(timedelta(hours=36)),
    ),
    ({"backup": {"folder": " backups "}}, "backup.folder", "backups"),
    ({"backup": {"folder": "b", "every": "10m"}}, "backup.every", timedelta(minutes=10)),
    ({"backup": {"folder": "b", "every": "7d"}}, "backup.every", timedelta(days=7)),
    ({"backup": {"folder": "b", "keep": 1}}, "backup.keep", 1),
    (  # PostgreSQL too: pg_dump archives (bot.store.pg_backup)
        {"backup": {"folder": "b"}, "database": {"url": "postgresql+asyncpg://u@h/d"}},
        "backup.folder",
        "b",
    ),
]


@pytest.mark.parametrize(("raw", "key", "expected"), VALID, ids=[case[1] for case in VALID])
def test_valid_values(raw: dict[str, Any], key: str, expected: Any) -> None:
    assert _get(load(raw, env=NO_ENV), key) == expected


# --------------------------------------------------------------------------- invalid values

# (raw mapping, the key the problem must name, a fragment of what it must say)
INVALID: list[tuple[dict[str, Any], str, str]] = [
    ({"discord": {"token": 123}}, "discord.token", "type int"),
    ({"discord": {"token": "Bot abc.def"}}, "discord.token", 'without the "Bot " prefix'),
    ({"discord": {"token": "abc def"}}, "discord.token", "whitespace"),
    ({"discord": {"moderator_role": ""}}, "discord.moderator_role", "empty"),
    ({"discord": {"moderator_role": True}}, "discord.moderator_role", "a role id"),
    ({"discord": {"moderator_role": -5}}, "discord.moderator_role", "not a Discord id"),
    ({"discord": {"moderator_role": "x" * 101}}, "discord.moderator_role", "at most 100"),
    ({"discord": {"moderator_role": "@everyone"}}, "discord.moderator_role", "every member"),
    ({"discord": {"moderator_role": "@here"}}, "discord.moderator_role", "every member"),
    ({"discord": {"moderator_role": " Everyone "}}, "discord.moderator_role", "every member"),
    (
        {"discord": {"moderator_role": "1234567890123456789"}},
        "discord.moderator_role",
        "without quotes",
    ),
    ({"discord": {"shard_count": 0}}, "discord.shard_count", "at least 1"),
    ({"discord": {"shard_count": "2"}}, "discord.shard_count", "whole number"),
    ({"discord": {"shard_ids": [0]}}, "discord.shard_ids", "without discord.shard_count"),
    ({"discord": {"shard_count": 2, "shard_ids": [0, 2]}}, "discord.shard_ids", "0..1"),
    ({"discord": {"shard_count": 2, "shard_ids": [1, 1]}}, "discord.shard_ids", "repeats"),
    ({"discord": {"shard_count": 2, "shard_ids": []}}, "discord.shard_ids", "non-empty list"),
    ({"discord": {"shard_count": 2, "shard_ids": 1}}, "discord.shard_ids", "non-empty list"),
    ({"database": {"url": "sqlite:///x.db"}}, "database.url", "sqlite+aiosqlite"),
    ({"database": {"url": "postgresql://u@h/db"}}, "database.url", "postgresql+asyncpg"),
    ({"database": {"url": "mysql+aiomysql://u@h/db"}}, "database.url", "unsupported driver"),
    ({"database": {"url": "not a url"}}, "database.url", "not a database URL"),
    ({"database": {"url": "sqlite+aiosqlite://"}}, "database.url", "no database file"),
    ({"database": {"url": 5}}, "database.url", "allowed: sqlite+aiosqlite:///PATH"),
    ({"game": {"timezone": "Asia/Shangai"}}, "game.timezone", "unknown timezone"),
    ({"game": {"timezone": "../etc/passwd"}}, "game.timezone", "unknown timezone"),
    ({"game": {"timezone": 8}}, "game.timezone", "IANA timezone"),
    ({"game": {"language": "fr"}}, "game.language", 'allowed: "zh-CN", "en"'),
    ({"game": {"language": "zh_cn"}}, "game.language", "not spelled 'zh-CN'"),
    ({"game": {"language": None}}, "game.language", "zh-CN"),
    ({"game": {"reminder": "2 hours"}}, "game.reminder", "not a duration"),
    ({"game": {"reminder": 2}}, "game.reminder", '0 / "off"'),
    ({"game": {"reminder": "12h"}}, "game.reminder", "not shorter than the 10h vote window"),
    ({"game": {"live_tally": "off"}}, "game.live_tally", "true or false"),
    ({"game": {"live_tally": 1}}, "game.live_tally", "true or false"),
    ({"game": {"schedule": {"power": "24:00"}}}, "game.schedule.power", "not a time of day"),
    ({"game": {"schedule": {"vote": "22:60"}}}, "game.schedule.vote", "not a time of day"),
    ({"game": {"schedule": {"vote": "soon"}}}, "game.schedule.vote", "neither a time of day"),
    ({"game": {"schedule": {"vote": 22}}}, "game.schedule.vote", "daily time HH:MM"),
    (
        {"game": {"schedule": {"vote": time(22, 0, 30)}}},
        "game.schedule.vote",
        "daily time HH:MM",
    ),
    (
        {"game": {"schedule": {"power": "0m", "vote": "24h"}}},
        "game.schedule.power",
        "out of range",
    ),
    (
        {"game": {"schedule": {"power": "31d", "vote": "24h"}}},
        "game.schedule.power",
        "at most 30d",
    ),
    ({"game": {"schedule": {"power": "24h"}}}, "game.schedule", "one a time of day"),
    (
        {"game": {"schedule": {"power": "22:00", "vote": "22:00"}}},
        "game.schedule",
        "both at 22:00",
    ),
    (
        {"game": {"reminder": "24h", "schedule": {"power": "24h", "vote": "48h"}}},
        "game.reminder",
        "24h power window",
    ),
    ({"backup": {"folder": ""}}, "backup.folder", "leave it out: no backups"),
    ({"backup": {"folder": 7}}, "backup.folder", "a folder for the backups"),
    ({"backup": {"every": "9m"}}, "backup.every", "from 10m to 7d"),
    ({"backup": {"every": "8d"}}, "backup.every", "out of range"),
    ({"backup": {"every": "often"}}, "backup.every", "not a duration"),
    ({"backup": {"keep": 0}}, "backup.keep", "from 1 to 10000"),
    ({"backup": {"keep": True}}, "backup.keep", "from 1 to 10000"),
    ({"game": "Asia/Shanghai"}, "game", "a table ([game])"),
    ({"game": {"schedule": "22:00"}}, "game.schedule", "a table ([game.schedule])"),
]


@pytest.mark.parametrize(
    ("raw", "key", "fragment"), INVALID, ids=[f"{c[1]}:{c[2]}" for c in INVALID]
)
def test_invalid_values_name_the_key_and_what_is_allowed(
    raw: dict[str, Any], key: str, fragment: str
) -> None:
    problems = problems_of(raw)

    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{key}: "), problems[0]
    assert "; allowed: " in problems[0]
    assert fragment in problems[0]


UNKNOWN: list[tuple[dict[str, Any], str, str | None]] = [
    ({"discord": {"tokn": "x"}}, "discord.tokn", "discord.token"),
    ({"game": {"timezon": "UTC"}}, "game.timezon", "game.timezone"),
    ({"game": {"live-tally": True}}, "game.live-tally", "game.live_tally"),
    ({"game": {"schedule": {"votes": "22:00"}}}, "game.schedule.votes", "game.schedule.vote"),
    ({"databse": {}}, "databse", "database"),
    ({"timezone": "UTC"}, "timezone", "game.timezone"),  # right key, wrong section
    ({"token": "x"}, "token", "discord.token"),
    ({"game": {"shard_count": 2}}, "game.shard_count", "discord.shard_count"),
    ({"discord": {"zzzz": 1}}, "discord.zzzz", None),
]


@pytest.mark.parametrize(("raw", "key", "nearest"), UNKNOWN, ids=[c[1] for c in UNKNOWN])
def test_unknown_keys_are_errors_with_the_nearest_valid_key(
    raw: dict[str, Any], key: str, nearest: str | None
) -> None:
    (problem,) = problems_of(raw)

    assert problem.startswith(f"{key}: unknown key")
    if nearest is None:
        assert "did you mean" not in problem
    else:
        assert f"(did you mean {nearest}?)" in problem
    assert "; allowed: " in problem


def test_every_problem_is_reported_at_once() -> None:
    raw = {
        "discord": {"tokn": "x", "shard_count": 0, "moderator_role": ""},
        "database": {"url": "sqlite:///x.db"},
        "game": {
            "timezone": "Nowhere/City",
            "language": "de",
            "live_tally": "yes",
            "schedule": {"power": "25:00", "vote": "later"},
        },
        "extra": 1,
    }

    problems = problems_of(raw, env={"DISCORD_TOKEN": "Bot nope"})

    keys = [problem.split(": ", 1)[0] for problem in problems]
    assert sorted(keys) == sorted(
        [
            "extra",
            "discord.tokn",
            "DISCORD_TOKEN (environment variable)",
            "discord.moderator_role",
            "discord.shard_count",
            "database.url",
            "game.timezone",
            "game.language",
            "game.live_tally",
            "game.schedule.power",
            "game.schedule.vote",
        ]
    )
    with pytest.raises(ConfigError) as caught:
        load(raw, env={"DISCORD_TOKEN": "Bot nope"})
    message = str(caught.value)
    assert message.startswith("mapping: 11 problems:")
    assert all(f"  - {problem}" in message for problem in problems)


# --------------------------------------------------------------------------- the token


@pytest.mark.parametrize(
    ("file_token", "env", "expected", "origin"),
    [
        (None, {"DISCORD_TOKEN": TOKEN}, TOKEN, "environment variable DISCORD_TOKEN"),
        ("file.token.x", {"DISCORD_TOKEN": TOKEN}, TOKEN, "environment variable DISCORD_TOKEN"),
        ("file.token.x", {}, "file.token.x", "discord.token in mapping"),
        ("file.token.x", {"DISCORD_TOKEN": "  "}, "file.token.x", "discord.token in mapping"),
        (None, {"DISCORD_TOKEN": f" {TOKEN}\n"}, TOKEN, "environment variable DISCORD_TOKEN"),
    ],
)
def test_environment_token_wins_over_the_file(
    file_token: str | None, env: dict[str, str], expected: str, origin: str
) -> None:
    raw = {"discord": {"token": file_token}} if file_token is not None else {}

    settings = load(raw, env=env)

    assert settings.require_token() == expected
    assert settings.discord.token_from == origin


def test_load_reads_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", TOKEN)
    assert load(None).require_token() == TOKEN
    monkeypatch.delenv("DISCORD_TOKEN")
    assert load(None).discord.token is None


def test_missing_token_says_exactly_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[game]\nlanguage = "en"\n', encoding="utf-8")
    settings = load(path, env=NO_ENV)

    with pytest.raises(ConfigError) as caught:
        settings.require_token()

    message = str(caught.value)
    assert caught.value.problems[0].startswith("discord.token: no Discord bot token")
    assert "export DISCORD_TOKEN=" in message
    assert 'token = "..." under [discord] in ' + str(path) in message
    assert "https://discord.com/developers/applications" in message


def test_the_token_never_shows() -> None:
    settings = load({"discord": {"token": "file.secret.token"}}, env={"DISCORD_TOKEN": TOKEN})

    for text in (repr(settings), str(settings), repr(settings.discord), f"{settings.discord}"):
        assert TOKEN not in text and "file.secret.token" not in text
        assert "Secret('**********')" in text
    assert settings.discord.token is not None and settings.discord.token.reveal() == TOKEN


def test_a_bad_token_is_not_echoed_in_the_error() -> None:
    problems = problems_of({}, env={"DISCORD_TOKEN": "Bot secret.value.here"})
    assert all("secret.value.here" not in problem for problem in problems)


def test_the_database_password_is_masked() -> None:
    settings = load(
        {"database": {"url": "postgresql+asyncpg://faguan:hunter2@db:5432/faguan"}}, env=NO_ENV
    )
    assert "hunter2" not in repr(settings)
    assert "postgresql+asyncpg://faguan:***@db:5432/faguan" in repr(settings.database)
    assert settings.database.url.endswith(":hunter2@db:5432/faguan")


# --------------------------------------------------------------------------- sources


def test_a_file_and_a_mapping_give_the_same_settings(tmp_path: Path) -> None:
    text = """
[discord]
token = "file.token.x"
moderator_role = 42
shard_count = 2
shard_ids = [1]

[database]
url = "sqlite+aiosqlite:///./test.db"

[game]
timezone = "UTC"
language = "en"
reminder = "30m"
live_tally = true

[game.schedule]
power = 09:00:00
vote = "21:30"
"""
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    raw = {
        "discord": {
            "token": "file.token.x",
            "moderator_role": 42,
            "shard_count": 2,
            "shard_ids": [1],
        },
        "database": {"url": "sqlite+aiosqlite:///./test.db"},
        "game": {
            "timezone": "UTC",
            "language": "en",
            "reminder": "30m",
            "live_tally": True,
            "schedule": {"power": "09:00", "vote": "21:30"},
        },
    }

    from_file = load(path, env=NO_ENV)
    from_str_path = load(str(path), env=NO_ENV)
    from_mapping = load(raw, env=NO_ENV)

    assert from_file.source == from_str_path.source == str(path)
    assert from_mapping.source == "mapping"

    def origin_free(settings: Settings) -> Settings:
        discord = dataclasses.replace(settings.discord, token_from=None)
        return dataclasses.replace(settings, source="x", discord=discord)

    assert origin_free(from_file) == origin_free(from_mapping)
    assert from_file.discord.token_from == f"discord.token in {path}"
    assert from_mapping.discord.token_from == "discord.token in mapping"


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    (problem,) = problems_of(missing)
    assert problem.startswith(f"{missing}: file not found")

    broken = tmp_path / "broken.toml"
    broken.write_text("[game]\nlanguage = \n", encoding="utf-8")
    (problem,) = problems_of(broken)
    assert problem.startswith(f"{broken}: invalid TOML") and "line 2" in problem

    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe")
    (problem,) = problems_of(binary)
    assert "not UTF-8" in problem

    (problem,) = problems_of(tmp_path)
    assert "is a directory" in problem

    bad = tmp_path / "bad.toml"
    bad.write_text('[game]\nlanguage = "fr"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load(bad, env=NO_ENV)
    assert caught.value.source == str(bad)
    assert str(caught.value).startswith(f"{bad}: 1 problem:")


def test_load_rejects_other_sources() -> None:
    with pytest.raises(TypeError):
        load(42, env=NO_ENV)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the example file


def test_the_example_file_loads_cleanly() -> None:
    settings = load(EXAMPLE, env=NO_ENV)

    assert settings.source == str(EXAMPLE)
    assert dataclasses.replace(settings, source="x") == dataclasses.replace(
        load(None, env=NO_ENV), source="x"
    )


def test_the_example_file_documents_every_key() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    sections = {
        match.group(1): match.start() for match in re.finditer(r"^\[([\w.]+)\]$", text, re.M)
    }
    for key in ALL_KEYS:
        if key in sections:
            continue
        section, _, leaf = key.rpartition(".")
        start = sections[section] if section else 0
        ends = [pos for pos in sections.values() if pos > start]
        body = text[start : min(ends) if ends else len(text)]
        assert re.search(rf"^#? ?{re.escape(leaf)} = ", body, re.M), f"{key} is not documented"

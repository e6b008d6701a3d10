"""Fuzzing the config loader (hypothesis): any mapping, any TOML file and any DISCORD_TOKEN give
`Settings` or a `ConfigError` whose every line names a key; never another exception; the input
is not modified and the token is never echoed."""

from __future__ import annotations

import copy
import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rbkit import examples, toml_document

from bot.config import ALL_KEYS, LAYOUT, TOKEN_ENV, ConfigError, Settings, load

texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
offsets = st.integers(-1439, 1439).map(lambda m: dt.timezone(dt.timedelta(minutes=m)))
scalars = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(),
    texts,
    st.datetimes(timezones=st.none() | offsets),
    st.dates(),
    st.times(),
)
toml_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=10,
)
SECTIONS = [s for s in LAYOUT if s]
LEAVES = {s: list(keys) for s, keys in LAYOUT.items()}

# Values that look right, and values that are wrong in the ways people get them wrong.
DURATIONS = st.sampled_from(["1h", "90m", "1h30m", "2d", "24h", "30d", " 12 h ", "1H"])
BAD_DURATIONS = st.sampled_from(
    ["0m", "31d", "99999999999d", "1" * 5000 + "m", "h", "1.5h", "-1h", "1w", "", "１h", "1h2d"]
)
CLOCKS = st.sampled_from(["12:00", "22:00", "0:00", "23:59", dt.time(9, 30)])
BAD_CLOCKS = st.sampled_from(
    ["25:99", "24:00", "12:60", "12:00:30", "noon", dt.time(12, 0, 30), "22:00+08:00", "２２:00"]
)
VALID: dict[str, st.SearchStrategy[Any]] = {
    "discord.token": st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", min_size=8, max_size=72).filter(lambda t: not t.lower().startswith("bot")),
    "discord.moderator_role": st.integers(1, 2**63) | st.sampled_from(["主持人", "Mods", "👑"]),
    "database.url": st.sampled_from(
        ["sqlite+aiosqlite:///./x.db", "postgresql+asyncpg://u:p@localhost:5432/test"]
    ),
    "game.timezone": st.sampled_from(["UTC", "Asia/Shanghai", "Europe/Berlin", "America/New_York"]),
    "game.language": st.sampled_from(["zh-CN", "en"]),
    "game.reminder": st.sampled_from(["off", False, 0, "0", "30m", "none"]),
    "game.live_tally": st.booleans(),
}  # fmt: skip
WRONG: dict[str, st.SearchStrategy[Any]] = {
    "discord.token": st.sampled_from(["Bot abc.def", "abc def", "tok\ten"]) | st.integers(),
    "discord.moderator_role": st.sampled_from(["", "  ", "123456789012345678", "x" * 101])
    | st.integers(max_value=0)
    | st.integers(min_value=2**64, max_value=2**70)
    | st.floats()
    | st.lists(st.integers(), max_size=2),
    "discord.shard_count": st.integers(max_value=0) | texts | st.floats(),
    "database.url": st.sampled_from(
        [
            "",
            "sqlite:///x.db",
            "postgresql://u:p@h/d",
            "mysql+aiomysql://h/d",
            "sqlite+aiosqlite://",
            "postgresql+asyncpg://u:p@h:notaport/d",
            "sqlite+aiosqlite://:memory:",
            "postgresql+asyncpg://[::1",
            "://",
            "not a url",
        ]
    )
    | st.integers(),
    "game.timezone": st.sampled_from(
        [
            "Mars/Olympus",
            "America",
            "Etc",
            "A" * 300,
            "../../etc/passwd",
            "/etc/localtime",
            "UTC\x00",
            "",
            "  ",
        ]
    )
    | st.integers(),
    "game.language": st.sampled_from(["zh_cn", "EN", "fr", "中文", ""])
    | st.lists(texts, max_size=2),
    "game.reminder": st.sampled_from(
        ["99999999999d", "1" * 5000 + "m", "h", "1.5h", "-1h", "1w", "", True, 1, 7.5, "never"]
    ),
    "game.live_tally": st.sampled_from(["true", "yes", 1, 0, None.__class__.__name__]),
    "game.schedule.power": BAD_CLOCKS | BAD_DURATIONS | st.integers() | st.floats(),
    "game.schedule.vote": BAD_CLOCKS | BAD_DURATIONS | st.integers() | st.floats(),
}


def named_key(problem: str, known: set[str]) -> str | None:
    """The key a problem line starts with (`key: what is wrong; allowed: ...`)."""
    keys = [k for k in known if problem.startswith(k + ": ")]
    return max(keys, key=len) if keys else None


def nest(flat: dict[str, Any]) -> dict[str, Any]:
    """{"game.schedule.power": x} → {"game": {"schedule": {"power": x}}}."""
    out: dict[str, Any] = {}
    for dotted, value in flat.items():
        node = out
        *parents, leaf = dotted.split(".")
        for name in parents:
            node = node.setdefault(name, {})
        node[leaf] = value
    return out


def paths(raw: Any, prefix: str = "") -> set[str]:
    """Every dotted key path in a nested mapping."""
    found: set[str] = set()
    if isinstance(raw, dict):
        for key, value in raw.items():
            here = f"{prefix}.{key}" if prefix else str(key)
            found.add(here)
            found |= paths(value, here)
    return found


def check_load(raw: Any, env: dict[str, str] | None = None) -> Settings | ConfigError:
    """Load; assert the contract; return what came out."""
    before = copy.deepcopy(raw)
    try:
        result: Settings | ConfigError = load(raw, env=env or {})
    except ConfigError as exc:
        assert exc.problems, "a ConfigError with no problem"
        known = set(ALL_KEYS) | set(SECTIONS) | paths(raw) | {f"{TOKEN_ENV} (environment variable)"}
        for problem in exc.problems:
            assert "; allowed: " in problem, f"not 'key: what; allowed: ...': {problem!r}"
            assert named_key(problem, known) is not None, f"names no key: {problem!r}"
        tokens = [(env or {}).get(TOKEN_ENV, "")]
        if isinstance(raw, dict) and isinstance(raw.get("discord"), dict):
            tokens.append(raw["discord"].get("token"))
        for token in tokens:
            if isinstance(token, str) and "MTIz." in token:
                assert token.strip() not in str(exc), "the token is echoed"
        result = exc
    else:
        assert isinstance(result, Settings)
        token = result.discord.token
        if token is not None and "MTIz." in token.reveal():
            assert token.reveal() not in repr(result)
    assert raw == before or raw != raw, "load() changed its input"  # (nan never equals itself)
    return result


sections = st.fixed_dictionaries(
    {},
    optional={
        section: st.dictionaries(
            st.sampled_from(LEAVES[section]) | texts,
            toml_values | VALID.get("x", toml_values),
            max_size=4,
        )
        for section in ("discord", "database", "game")
    },
)


@settings(max_examples=examples(120), deadline=None)
@given(
    st.dictionaries(st.sampled_from(SECTIONS) | texts | st.integers(), toml_values, max_size=4)
    | sections
)
def test_arbitrary_mappings(raw: dict[Any, Any]) -> None:
    check_load(raw)


@st.composite
def one_wrong_value(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    """A consistent valid config with one key made wrong: (the config, that key)."""
    flat = {key: draw(strategy) for key, strategy in VALID.items() if draw(st.booleans())}
    if draw(st.booleans()):
        flat["game.schedule.power"], flat["game.schedule.vote"] = draw(
            st.sampled_from(
                [("12:00", "22:00"), (dt.time(9), "21:30"), ("24h", "24h"), ("2d", "1h")]
            )
        )
        flat["game.reminder"] = "off"
    if draw(st.booleans()):
        count = draw(st.integers(1, 8))
        flat["discord.shard_count"] = count
        flat["discord.shard_ids"] = draw(
            st.lists(st.integers(0, count - 1), min_size=1, unique=True)
        )
    key = draw(st.sampled_from(sorted(WRONG)))
    flat[key] = draw(WRONG[key])
    return nest(flat), key


@settings(max_examples=examples(200), deadline=None)
@given(one_wrong_value())
def test_one_wrong_value_is_named(case: tuple[dict[str, Any], str]) -> None:
    raw, key = case
    result = check_load(raw)
    assert isinstance(result, ConfigError), f"{key} = {raw} was accepted"
    known = set(ALL_KEYS) | set(SECTIONS)
    named = [named_key(p, known) or "" for p in result.problems]
    assert any(key == n or key.startswith(n + ".") for n in named), (key, result.problems)


@settings(max_examples=examples(100), deadline=None)
@given(
    st.sampled_from(["MTIz.", "Bot MTIz.", " MTIz. ", "MTIz. ", "\tMTIz.\n"]),
    st.text(max_size=80) | st.sampled_from(["a b c d e f", "\x00" * 9, "x" * 5000]),
)
def test_any_token_in_the_environment(prefix: str, token: str) -> None:
    check_load({}, {TOKEN_ENV: prefix + token})
    check_load({"discord": {"token": prefix + token}})


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.one_of(
        st.dictionaries(st.sampled_from(SECTIONS) | texts, toml_values, max_size=3).map(
            toml_document
        ),
        one_wrong_value().map(lambda case: toml_document(case[0])),
        st.text(st.characters(exclude_categories=("Cs",)), max_size=200),
        st.text(alphabet='[]="=.#\n abcdegimnorstuz0123456789:', max_size=120),
    )
)
def test_arbitrary_toml_files(tmp_path: Path, text: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text, "utf-8")
    try:
        load(path, env={})
    except ConfigError as exc:
        assert exc.source == str(path) and exc.problems


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        pytest.param({"game": {"reminder": "99999999999d"}}, "game.reminder", id="huge-reminder"),
        pytest.param(
            {"game": {"schedule": {"power": "99999999999d", "vote": "1h"}}},
            "game.schedule.power",
            id="huge-window",
        ),
        pytest.param({"game": {"reminder": "1" * 5000 + "m"}}, "game.reminder", id="5000-digits"),
        pytest.param({"game": {"timezone": "America"}}, "game.timezone", id="tz-directory"),
        pytest.param({"game": {"timezone": "A" * 300}}, "game.timezone", id="tz-too-long"),
        pytest.param(
            {"database": {"url": "postgresql+asyncpg://u:p@h:notaport/d"}},
            "database.url",
            id="url-bad-port",
        ),
        pytest.param(
            {"database": {"url": "sqlite+aiosqlite://:memory:"}}, "database.url", id="url-colon"
        ),
    ],
)
def test_found_by_fuzzing(raw: dict[str, Any], key: str) -> None:
    """Each of these once escaped as OverflowError, ValueError, IsADirectoryError or OSError."""
    with pytest.raises(ConfigError) as refused:
        load(raw, env={})
    assert [p.split(":")[0] for p in refused.value.problems] == [key]

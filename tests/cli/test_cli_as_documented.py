"""`faguan run` and `faguan db upgrade` as README.md and config.example.toml describe them to an
operator, where following the docs once showed something else.

- "`faguan run` checks the file and names every mistake": a file with mistakes and no token
  named the file's mistakes only, and the missing token at the next run.
- "SQLite is for one process": a SQLite bot started with only some of its shard ids ran them
  and left the others' servers to no process, without a word.
- "Leave both out": the settings said Discord would choose the number of shards; the bot runs
  one connection (shard 0 of 1) without `shard_count`.
- A SQLite file in a folder that does not exist: `faguan run` told the operator to check that
  "the server is running" and the URL's host, port and password, where `faguan db upgrade`
  says to check the folder.
- A config mistake found by `faguan db upgrade` is told under its own name, like `faguan db
  backup`'s and `restore`'s.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli_errors import TOKEN, faguan

from bot.cli import main
from bot.config import ConfigError, load
from bot.operator_errors import Exit


def problems(stderr: str) -> list[str]:
    """The problems a configuration error lists, one a line."""
    return [line.removeprefix("  - ") for line in stderr.splitlines() if line.startswith("  - ")]


def write(path: Path, text: str) -> str:
    path.write_text(text, "utf-8")
    return str(path)


# --------------------------------------------------------------------------- every mistake at once


def test_run_names_a_missing_token_with_the_files_mistakes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    monkeypatch.chdir(tmp_path)
    config = write(
        tmp_path / "config.toml",
        '[game]\ntimezone = "Asia/Shangai"\nlanguage = "EN"\n',
    )

    status = main(["run", "--config", config])

    err = capsys.readouterr().err
    assert status == Exit.CONFIG
    assert err.startswith(f"faguan run: {config}: 3 problems:\n"), err
    named = [problem.split(":")[0] for problem in problems(err)]
    assert named == ["discord.token", "game.timezone", "game.language"], err
    assert f'token = "..." under [discord] in {config}' in err
    assert not (tmp_path / "faguan.db").exists()  # nothing opened before the file was right


def test_run_names_no_token_problem_when_the_token_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", TOKEN)
    config = write(tmp_path / "config.toml", '[game]\nlanguage = "EN"\n')

    assert main(["run", "--config", config]) == Exit.CONFIG

    assert [p.split(":")[0] for p in problems(capsys.readouterr().err)] == ["game.language"]


def test_a_token_that_is_wrong_is_named_once() -> None:
    with pytest.raises(ConfigError) as caught:
        load({"discord": {"token": "Bot abc"}}, env={}, running=True)
    assert [p.split(":")[0] for p in caught.value.problems] == ["discord.token"]
    assert "Bot " in caught.value.problems[0]


def test_only_run_needs_a_token() -> None:
    assert load({}, env={}).discord.token is None  # `faguan db` reads the same file
    with pytest.raises(ConfigError):
        load({}, env={}, running=True)
    assert load({}, env={"DISCORD_TOKEN": TOKEN}, running=True).discord.token is not None


# --------------------------------------------------------------------------- SQLite and shards


SHARDS = "[discord]\nshard_count = 4\nshard_ids = [0, 1]\n"


def test_run_refuses_some_shards_on_sqlite(tmp_path: Path) -> None:
    config = write(tmp_path / "config.toml", SHARDS)

    result = faguan(tmp_path, "run", "--config", config)

    assert result.returncode == Exit.CONFIG, result.stderr
    (problem,) = problems(result.stderr)
    assert problem.startswith("discord.shard_ids: [0, 1] of 4 leaves shards 2, 3 to no process")
    assert "SQLite is for one process" in problem and "PostgreSQL" in problem
    assert not (tmp_path / "faguan.db").exists()


@pytest.mark.parametrize(
    "raw",
    [
        {"discord": {"shard_count": 4, "shard_ids": [3, 1, 2, 0]}},
        {"discord": {"shard_count": 4}},
        {
            "discord": {"shard_count": 4, "shard_ids": [0, 1]},
            "database": {"url": "postgresql+asyncpg://faguan@127.0.0.1:5432/faguan"},
        },
    ],
)
def test_every_shard_on_sqlite_or_some_on_postgresql_is_fine(raw: dict[str, object]) -> None:
    settings = load(raw, env={"DISCORD_TOKEN": TOKEN}, running=True)
    assert settings.discord.shard_count == 4


def test_some_shards_on_sqlite_are_still_read_outside_run() -> None:
    """`faguan db` and the tests' own shard processes read such a file as before."""
    assert load({"discord": {"shard_count": 4, "shard_ids": [1]}}, env={}).discord.shard_ids == (1,)


def test_leaving_shard_count_out_is_told_as_it_is() -> None:
    """Without `shard_count` the bot is one connection, shard 0 of 1 (`create_bot`, the claim):
    Discord does not choose a number of shards for it."""
    with pytest.raises(ConfigError) as caught:
        load({"discord": {"shard_count": 0}}, env={})
    (problem,) = caught.value.problems
    assert "Discord choose" not in problem
    assert "leave it out to run one unsharded connection" in problem


# --------------------------------------------------------------------------- what the line says


def test_run_on_a_sqlite_file_in_a_missing_folder_says_to_check_the_folder(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "no-such-folder" / "faguan.db"
    config = write(tmp_path / "config.toml", f'[database]\nurl = "sqlite+aiosqlite:///{missing}"\n')

    result = faguan(tmp_path, "run", "--config", config)

    assert result.returncode == Exit.DATABASE_UNREACHABLE, result.stderr
    assert "Traceback" not in result.stderr
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("faguan run:")]
    assert line.startswith(f"faguan run: cannot open the SQLite file {missing} ("), line
    assert "check that its directory exists and is writable" in line
    assert "server" not in line and "host, port" not in line


def test_db_upgrade_names_itself_on_a_config_mistake(tmp_path: Path) -> None:
    config = write(tmp_path / "config.toml", '[game]\nlanguage = "EN"\n')

    result = faguan(tmp_path, "db", "upgrade", "--config", config, token=False)

    assert result.returncode == Exit.CONFIG, result.stderr
    assert result.stderr.startswith(f"faguan db upgrade: {config}: 1 problem:\n"), result.stderr
    assert not (tmp_path / "faguan.db").exists()

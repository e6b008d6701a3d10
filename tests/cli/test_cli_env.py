"""What the environment means to `faguan db upgrade|backup|restore`.

- `DISCORD_TOKEN`: only `faguan run` uses the token. A malformed one in the environment (a
  unit's EnvironmentFile shared with `run`) made the database commands refuse to start (exit 2)
  although they never use it; `faguan run` still refuses it.
- `FAGUAN_DATABASE_URL`: README.md and docs/deploy.md name the database by `database.url` in the
  config file or `--database-url`, and nothing else; the variable is Alembic's own command line's
  (alembic.ini). The faguan commands do not read it: with no config file, the database is
  ./faguan.db whatever the variable says.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from bot.operator_errors import Exit

MALFORMED = "Bot nope"
"""A token `bot.config` refuses (a `Bot ` prefix, and not three dot-separated parts)."""


def faguan(cwd: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`faguan ARGS` in a new process in `cwd`, with `env` added to an environment that has
    neither variable."""
    code = f"import sys\nfrom bot.cli import main\nsys.exit(main({list(args)!r}))\n"
    base = {
        k: v for k, v in os.environ.items() if k not in ("FAGUAN_DATABASE_URL", "DISCORD_TOKEN")
    }
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=base | env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def test_the_database_commands_do_not_read_a_malformed_token(tmp_path: Path) -> None:
    env = {"DISCORD_TOKEN": MALFORMED}
    upgraded = faguan(tmp_path, "db", "upgrade", env=env)
    assert upgraded.returncode == Exit.OK, upgraded.stderr
    assert "alembic_version" in tables(tmp_path / "faguan.db")
    backed = faguan(tmp_path, "db", "backup", "copy.db", env=env)
    assert backed.returncode == Exit.OK, backed.stderr
    assert (tmp_path / "copy.db").is_file()
    restored = faguan(tmp_path, "db", "restore", "copy.db", env=env)
    assert restored.returncode == Exit.OK, restored.stderr
    assert "DISCORD_TOKEN" not in upgraded.stderr + backed.stderr + restored.stderr


def test_nor_with_a_config_file(tmp_path: Path) -> None:
    """The file is still checked whole; only the environment's token is not read."""
    (tmp_path / "config.toml").write_text(
        f'[database]\nurl = "sqlite+aiosqlite:///{tmp_path / "named.db"}"\n', encoding="utf-8"
    )
    upgraded = faguan(
        tmp_path, "db", "upgrade", "--config", "config.toml", env={"DISCORD_TOKEN": MALFORMED}
    )
    assert upgraded.returncode == Exit.OK, upgraded.stderr
    assert "alembic_version" in tables(tmp_path / "named.db")
    (tmp_path / "bad.toml").write_text("[database]\nurl = 3\n", encoding="utf-8")
    refused = faguan(tmp_path, "db", "upgrade", "--config", "bad.toml", env={})
    assert refused.returncode == Exit.CONFIG
    assert "database.url" in refused.stderr


def test_run_still_refuses_a_malformed_token(tmp_path: Path) -> None:
    result = faguan(tmp_path, "run", env={"DISCORD_TOKEN": MALFORMED})
    assert result.returncode == Exit.CONFIG
    assert "DISCORD_TOKEN (environment variable)" in result.stderr
    assert "nope" not in result.stderr  # never echoed


def test_faguan_database_url_is_not_read_by_the_faguan_commands(tmp_path: Path) -> None:
    """As the corrected docstrings say (`main_db_upgrade`, `bot.store.db.URL_ENV`): the variable
    is Alembic's; the documented ways are database.url and --database-url."""
    elsewhere = tmp_path / "elsewhere.db"
    env = {"FAGUAN_DATABASE_URL": f"sqlite+aiosqlite:///{elsewhere}"}
    upgraded = faguan(tmp_path, "db", "upgrade", env=env)
    assert upgraded.returncode == Exit.OK, upgraded.stderr
    assert (tmp_path / "faguan.db").is_file() and not elsewhere.exists()
    assert "faguan.db" in upgraded.stdout

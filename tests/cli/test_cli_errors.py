"""`faguan run` and `faguan db upgrade` failing as an operator meets them: one line, an exit status.

Each case runs the real command in a fresh Python process (logging, asyncio.run and discord.py's
own start-up included). Discord is faked only where it must be: an HTTP server on 127.0.0.1 that
answers 401 (a rejected token), a closed port (Discord unreachable), and a gateway that closes
with code 4014 (privileged intents not enabled) — discord.py turns each into its real exception.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import sqlite3
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import asyncpg
import pytest
from pgserver import PgServer
from sqlalchemy.engine import make_url

from bot.operator_errors import Exit
from bot.store.claims import SHARD_KEYS, claim

LOG_RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (?P<level>[A-Z]+) \S+: ")
TOKEN = "MTIz.fake.token"


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def faguan(
    cwd: Path, *args: str, patch: str = "", token: bool = True
) -> subprocess.CompletedProcess[str]:
    """`faguan ARGS` in a new process, after `patch` (Python run first, to fake Discord), with a
    token in the environment unless `token` is False (logging and asyncio.run as the console
    script has them)."""
    code = f"import sys\n{patch}\nfrom bot.cli import main\nsys.exit(main({list(args)!r}))\n"
    env = {k: v for k, v in os.environ.items() if k not in ("FAGUAN_DATABASE_URL", "DISCORD_TOKEN")}
    if token:
        env["DISCORD_TOKEN"] = TOKEN
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def one_line(result: subprocess.CompletedProcess[str], code: Exit) -> str:
    """The single line the failure printed (INFO log records aside), after checking the rest."""
    err = result.stderr
    assert result.returncode == code, err
    assert "Traceback" not in err
    assert "PyNaCl" not in err and "davey" not in err  # voice warnings: the bot has no voice
    records = [LOG_RECORD.match(line) for line in err.splitlines()]
    assert all(r.group("level") == "INFO" for r in records if r), err
    lines = [line for line, record in zip(err.splitlines(), records, strict=True) if not record]
    assert len(lines) == 1, err
    return lines[0]


def upgraded(path: Path) -> str:
    """A SQLite database at the latest schema; its URL."""
    url = f"sqlite+aiosqlite:///{path}"
    result = faguan(path.parent, "db", "upgrade", "--database-url", url)
    assert result.returncode == 0, result.stderr
    return url


def config(tmp_path: Path, url: str) -> str:
    path = tmp_path / "config.toml"
    path.write_text(f'[database]\nurl = "{url}"\n', "utf-8")
    return str(path)


class _Unauthorized(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'{"message": "401: Unauthorized", "code": 0}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def refusing_discord() -> Iterator[str]:
    """The base URL of an API that rejects every token, as Discord does a wrong one."""
    server = HTTPServer(("127.0.0.1", 0), _Unauthorized)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api/v10"
    finally:
        server.shutdown()
        server.server_close()


def api_at(base: str) -> str:
    return f"import discord.http\ndiscord.http.Route.BASE = {base!r}\n"


# --------------------------------------------------------------------------- faguan run: Discord


def test_run_token_rejected(tmp_path: Path, refusing_discord: str) -> None:
    url = upgraded(tmp_path / "f.db")
    result = faguan(
        tmp_path, "run", "--config", config(tmp_path, url), patch=api_at(refusing_discord)
    )
    line = one_line(result, Exit.TOKEN_REJECTED)
    assert line.startswith("faguan run: Discord rejected the bot token")
    assert "Reset Token" in line and "DISCORD_TOKEN" in line
    assert TOKEN not in result.stderr + result.stdout


async def test_run_a_second_process_on_one_sqlite_file(tmp_path: Path) -> None:
    url = upgraded(tmp_path / "f.db")
    held = await claim(url, None, None)  # the first process, running
    try:
        result = faguan(tmp_path, "run", "--config", config(tmp_path, url))
    finally:
        await held.release()
    line = one_line(result, Exit.ALREADY_RUNNING)
    assert line.startswith("faguan run: another faguan process is running on the SQLite file")
    assert "PostgreSQL" in line


def test_run_discord_unreachable(tmp_path: Path) -> None:
    url = upgraded(tmp_path / "f.db")
    base = f"http://127.0.0.1:{closed_port()}/api/v10"
    result = faguan(tmp_path, "run", "--config", config(tmp_path, url), patch=api_at(base))
    line = one_line(result, Exit.DISCORD_UNREACHABLE)
    assert line.startswith("faguan run: cannot reach Discord (ClientConnectorError")
    assert "network" in line


INTENTS_PATCH = """
import types
import discord
from discord.gateway import DiscordWebSocket

async def login(self, token):  # as if Discord accepted the token
    pass

async def from_client(cls, client, **kwargs):  # the gateway closes with 4014, as Discord does
    raise discord.ConnectionClosed(types.SimpleNamespace(close_code=4014), shard_id=None)

discord.Client.login = login
DiscordWebSocket.from_client = classmethod(from_client)
"""


def test_run_privileged_intents_not_enabled(tmp_path: Path) -> None:
    url = upgraded(tmp_path / "f.db")
    result = faguan(tmp_path, "run", "--config", config(tmp_path, url), patch=INTENTS_PATCH)
    line = one_line(result, Exit.INTENTS_DISABLED)
    assert "Server Members Intent" in line and "Message Content Intent" in line
    assert "https://discord.com/developers/applications" in line


def test_run_verbose_adds_the_traceback(tmp_path: Path) -> None:
    url = upgraded(tmp_path / "f.db")
    base = f"http://127.0.0.1:{closed_port()}/api/v10"
    args = ("run", "--verbose", "--config", config(tmp_path, url))
    result = faguan(tmp_path, *args, patch=api_at(base))
    assert result.returncode == Exit.DISCORD_UNREACHABLE
    assert "Traceback" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("faguan run: cannot reach Discord")


def test_run_help_names_the_token_variable(tmp_path: Path) -> None:
    result = faguan(tmp_path, "run", "--help")
    assert result.returncode == 0 and "DISCORD_TOKEN" in result.stdout


# --------------------------------------------------------------------------- faguan run: metrics

ON_SIMCORD = Path(__file__).resolve().parents[1] / "robustness" / "deployfaguan.py"
"""`faguan` with a simcord world for Discord: the bot starts (and opens its metrics endpoint)."""


@pytest.mark.parametrize("where", ["port in use", "not this machine's address"])
def test_run_metrics_endpoint_that_cannot_listen_is_a_config_error(
    tmp_path: Path, where: str
) -> None:
    """Once reported as the database unreachable (status 6): the operator is sent to the
    [metrics] settings instead, with a configuration mistake's status."""
    url = upgraded(tmp_path / "f.db")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        host, port = "127.0.0.1", held.getsockname()[1]
        if where == "not this machine's address":
            host = "203.0.113.7"  # TEST-NET-3: documentation's, no machine's own
        path = tmp_path / "config.toml"
        path.write_text(f'[database]\nurl = "{url}"\n[metrics]\nhost = "{host}"\nport = {port}\n')
        env = {k: v for k, v in os.environ.items() if k != "FAGUAN_DATABASE_URL"}
        result = subprocess.run(
            [sys.executable, str(ON_SIMCORD), "run", "--config", str(path)],
            cwd=tmp_path,
            env={**env, "DISCORD_TOKEN": TOKEN},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert result.returncode == Exit.CONFIG, result.stderr
    assert "Traceback" not in result.stderr
    said = f"faguan run: {path}: 1 problem:\n  - metrics.host/metrics.port: cannot listen on"
    assert f"{said} {host}:{port} (" in result.stderr


# --------------------------------------------------------------------------- both: the database


def garbage(path: Path) -> Path:
    path.write_bytes(b"these are not the bytes of a SQLite database\n" * 200)
    return path


def newer_schema(path: Path) -> Path:
    upgraded(path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE alembic_version SET version_num = 'f00dfeed9999'")
    return path


@pytest.mark.parametrize("command", ["run", "db"])
def test_postgresql_unreachable(tmp_path: Path, command: str) -> None:
    url = f"postgresql+asyncpg://faguan:s3cret@127.0.0.1:{closed_port()}/faguan"
    args = (
        ("run", "--config", config(tmp_path, url))
        if command == "run"
        else ("db", "upgrade", "--database-url", url)
    )
    line = one_line(faguan(tmp_path, *args), Exit.DATABASE_UNREACHABLE)
    assert "cannot connect to the database postgresql+asyncpg://faguan:***@127.0.0.1" in line
    assert "ConnectionRefusedError" in line and "s3cret" not in line


@pytest.mark.parametrize("command", ["run", "db"])
def test_not_a_sqlite_file(tmp_path: Path, command: str) -> None:
    url = f"sqlite+aiosqlite:///{garbage(tmp_path / 'f.db')}"
    args = (
        ("run", "--config", config(tmp_path, url))
        if command == "run"
        else ("db", "upgrade", "--database-url", url)
    )
    line = one_line(faguan(tmp_path, *args), Exit.NOT_A_DATABASE)
    assert f"{tmp_path / 'f.db'} is not a faguan SQLite database" in line
    assert (tmp_path / "f.db").read_bytes().startswith(b"these are not")  # left as it was


def test_a_corrupt_sqlite_database(tmp_path: Path) -> None:
    path = tmp_path / "f.db"
    upgraded(path)
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the first page's b-tree: sqlite_master unreadable
    path.write_bytes(bytes(data))
    line = one_line(
        faguan(tmp_path, "db", "upgrade", "--database-url", f"sqlite:///{path}"),
        Exit.NOT_A_DATABASE,
    )
    assert "is not a faguan SQLite database" in line


@pytest.mark.parametrize("command", ["run", "db"])
def test_schema_newer_than_this_version(tmp_path: Path, command: str) -> None:
    path = newer_schema(tmp_path / "f.db")
    url = f"sqlite+aiosqlite:///{path}"
    args = (
        ("run", "--config", config(tmp_path, url))
        if command == "run"
        else ("db", "upgrade", "--database-url", url)
    )
    line = one_line(faguan(tmp_path, *args), Exit.SCHEMA_TOO_NEW)
    assert "f00dfeed9999" in line and "newer faguan" in line
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [
            ("f00dfeed9999",)
        ]


def test_db_upgrade_refuses_an_unsupported_url_as_run_does(tmp_path: Path) -> None:
    url = "mysql://faguan:s3cret@127.0.0.1/faguan"
    line = one_line(faguan(tmp_path, "db", "upgrade", "--database-url", url), Exit.CONFIG)
    assert line.startswith("faguan db upgrade: --database-url: unsupported driver 'mysql'")
    assert "s3cret" not in line
    run = faguan(tmp_path, "run", "--config", config(tmp_path, url))
    assert run.returncode == Exit.CONFIG and "unsupported driver 'mysql'" in run.stderr
    assert "MySQLdb" not in run.stderr + line


def test_a_bug_keeps_its_traceback(tmp_path: Path) -> None:
    """Only failures the operator can fix are shortened; anything else is shown in full."""
    patch = "import bot.store.migrate as m\nasync def boom(*a, **k):\n    raise KeyError('bug')\nm.upgrade = boom\n"
    url = f"sqlite+aiosqlite:///{tmp_path / 'f.db'}"
    result = faguan(tmp_path, "db", "upgrade", "--database-url", url, patch=patch)
    assert result.returncode == 1 and "Traceback" in result.stderr and "KeyError" in result.stderr


def test_reconnect_logs_are_one_line() -> None:
    """discord.py logs each reconnect attempt with `exc_info`: one line with the reason, unless
    --verbose."""
    import logging

    from bot.operator_errors import OneLineExceptions

    try:
        raise ConnectionResetError(104, "Connection reset by peer")
    except ConnectionResetError:
        record = logging.LogRecord(
            "discord.client",
            logging.ERROR,
            __file__,
            1,
            "Attempting a reconnect in %.2fs",
            (1.5,),
            sys.exc_info(),
        )
    short = OneLineExceptions("%(levelname)s %(name)s: %(message)s").format(record)
    assert (
        short
        == "ERROR discord.client: Attempting a reconnect in 1.50s (ConnectionResetError: [Errno 104] Connection reset by peer)"
    )
    full = logging.Formatter("%(levelname)s %(name)s: %(message)s").format(record)
    assert "Traceback" in full  # the same record, verbose


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("not a url", "not a database URL"),
        ("postgresql://u@127.0.0.1:99999/db", "port 99999 is not a port"),
    ],
)
def test_db_upgrade_refuses_a_url_that_is_not_one(tmp_path: Path, url: str, said: str) -> None:
    line = one_line(faguan(tmp_path, "db", "upgrade", "--database-url", url), Exit.CONFIG)
    assert line.startswith(f"faguan db upgrade: --database-url: {said}")


# ------------------------------------------------------- faguan run: its shard claim lost running


async def test_run_stops_when_its_shard_claim_is_lost(tmp_path: Path, pg_server: PgServer) -> None:
    """The real `faguan run` (simcord for Discord) on PostgreSQL, running shard 0 of 2: its
    claim's session is ended from outside (as a PostgreSQL restart, a failover or a dropped
    connection ends it). It stops as on SIGTERM and exits with status 6 and one line, for its
    supervisor to start it again; it does not run on without the shard's lock."""
    name = f"claimlost_{uuid.uuid4().hex[:12]}"
    await pg_server.create_database(name)
    url = pg_server.url(name)
    path = tmp_path / "config.toml"
    path.write_text(
        f'[discord]\nshard_count = 2\nshard_ids = [0]\n[database]\nurl = "{url}"\n', "utf-8"
    )
    env = {k: v for k, v in os.environ.items() if k != "FAGUAN_DATABASE_URL"}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ON_SIMCORD),
        "run",
        "--config",
        str(path),
        cwd=tmp_path,
        env={**env, "DISCORD_TOKEN": TOKEN},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    try:
        before: list[str] = []
        while not any("resumed 0 active games (shards: [0] of 2)" in line for line in before):
            line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
            assert line, "".join(before)  # it ended before serving
            before.append(line)
        admin = await asyncpg.connect(dsn)
        try:
            pid = await admin.fetchval(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 "
                "AND objid = $2 AND objsubid = 2 AND granted",
                SHARD_KEYS,
                2 * 65536 + 0,
            )
            assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid) is True
        finally:
            await admin.close()
        rest = (await asyncio.wait_for(process.stderr.read(), 30)).decode()
        code = await asyncio.wait_for(process.wait(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await pg_server.drop_database(name)
    assert code == Exit.DATABASE_UNREACHABLE, rest
    assert "Traceback" not in rest
    records = [LOG_RECORD.match(line) for line in rest.splitlines()]
    errors = [
        line
        for line, r in zip(rest.splitlines(), records, strict=True)
        if r and r["level"] == "ERROR"
    ]
    assert (
        len(errors) == 1 and " bot.store.claims: lost the claim on shards [0] of 2 (" in errors[0]
    )
    lines = [line for line, record in zip(rest.splitlines(), records, strict=True) if not record]
    assert len(lines) == 1, rest
    assert lines[0].startswith("faguan run: lost the claim on shards [0] of 2 (its PostgreSQL")
    assert "another process may run them now" in lines[0] and "Start faguan again" in lines[0]

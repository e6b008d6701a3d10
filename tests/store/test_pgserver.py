"""The tests' own PostgreSQL server (tests/pgserver.py): it is theirs alone, it really stops and
starts (the outage tests rely on it), and what a killed test run leaves behind is swept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest
from pgserver import OWNER, PREFIX, ThrowawayServer, sweep


async def test_the_server_is_a_throwaway_one_that_stops_and_starts(
    own_pg_server: ThrowawayServer,
) -> None:
    server = own_pg_server
    assert server.root.name.startswith(PREFIX) and server.port != 5432
    assert (server.root / OWNER).read_text() == str(os.getpid())
    if os.geteuid() == 0:  # PostgreSQL refuses root: it runs as an unprivileged account
        assert server.account is not None and server.account.pw_uid != 0
        assert server.data.stat().st_uid == server.account.pw_uid
    name = "faguan_pgserver_check"
    await server.create_database(name)
    try:
        dsn = server.url(name).replace("postgresql+asyncpg", "postgresql")
        connection = await asyncpg.connect(dsn)
        await connection.execute("CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)")
        with server.down():
            assert not server.running()
            with pytest.raises((OSError, asyncpg.PostgresError)):
                await connection.fetchval("SELECT 1")
            with pytest.raises(OSError):
                await asyncpg.connect(dsn, timeout=5)
        connection.terminate()
        assert server.running()
        again = await asyncpg.connect(dsn)
        assert await again.fetchval("SELECT n FROM kept") == 7  # the same data, after a restart
        await again.close()
    finally:
        await server.drop_database(name)


def test_folders_of_killed_runs_are_swept_and_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    killed, live, sibling, foreign = (
        tmp_path / f"{PREFIX}a",
        tmp_path / f"{PREFIX}b",
        tmp_path / f"{PREFIX}c",
        tmp_path / f"{PREFIX}d",
    )
    for folder in (killed, live, sibling, foreign):
        (folder / "data").mkdir(parents=True)
    (killed / OWNER).write_text(dead.stdout.strip())
    (live / OWNER).write_text(str(os.getpid()))
    # Another live test process (a parallel worker, `pytest -n`) whose server is up: its own.
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (sibling / OWNER).write_text(str(other.pid))
        sweep(tmp_path)
        assert sibling.exists()
    finally:
        other.kill()
        other.wait()
    sweep(tmp_path)
    assert not sibling.exists()  # and once that process is gone, its folder goes too
    assert not killed.exists()
    assert live.exists() and foreign.exists()  # a live run's, and one without an owner: not ours

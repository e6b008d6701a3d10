"""One process per SQLite file, one process per shard on PostgreSQL (issue 17, point 2)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from bot.store.claims import SHARD_KEYS, Claimed, claim, shard_ids

ROOT = Path(__file__).resolve().parents[2]


def test_the_shards_a_process_runs() -> None:
    assert shard_ids(None, None) == (0,)
    assert shard_ids(4, None) == (0, 1, 2, 3)
    assert shard_ids(4, [1, 3]) == (1, 3)


async def test_a_second_process_on_one_sqlite_file_is_refused_until_the_first_ends(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'one.db'}"
    first = await claim(url, None, None)
    with pytest.raises(Claimed, match="SQLite is for one process"):
        await claim(url, None, None)
    other = await claim(f"sqlite+aiosqlite:///{tmp_path / 'other.db'}", None, None)
    await first.release()
    again = await claim(url, None, None)
    await again.release()
    await other.release()


async def test_a_killed_process_leaves_its_sqlite_file_free(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'one.db'}"
    hold = (
        "import asyncio, os, signal\n"
        "from bot.store.claims import claim\n"
        "async def main():\n"
        f"    await claim({url!r}, None, None)\n"
        "    print('held', flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "asyncio.run(main())\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", hold], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert run.stdout.strip() == "held" and run.returncode == -9, run.stderr
    mine = await claim(url, None, None)  # the OS dropped the dead process's lock
    await mine.release()


async def test_postgresql_shards_belong_to_one_process_and_one_layout(pg_server: object) -> None:
    url = pg_server.admin_url  # type: ignore[attr-defined]
    a = await claim(url, 2, [0])
    with pytest.raises(Claimed, match="shard 0 of 2 is already run"):
        await claim(url, 2, [0, 1])
    b = await claim(url, 2, [1])  # the other shard: another process may run it
    with pytest.raises(Claimed, match="shard_count = 2 still run"):
        await claim(url, 4, [2])  # a new layout while the old one runs
    await a.release()
    with pytest.raises(Claimed, match="shard_count = 2 still run"):
        await claim(url, 4, [0])
    await b.release()
    new = [await claim(url, 4, [s]) for s in range(4)]  # every old process gone
    for held in new:
        await held.release()


# ------------------------------------------- a PostgreSQL claim whose session ends while it runs


@contextlib.asynccontextmanager
async def own_database(server: object) -> AsyncIterator[str]:
    """The URL of a new, empty database on `server`, dropped after (whoever is still on it)."""
    name = f"claims_{uuid.uuid4().hex[:12]}"
    await server.create_database(name)  # type: ignore[attr-defined]
    try:
        yield server.url(name)  # type: ignore[attr-defined]
    finally:
        await server.drop_database(name)  # type: ignore[attr-defined]


async def admin(url: str, sql: str, *args: object) -> object:
    """One value from `sql` on a connection of its own (another process's, as it were)."""
    connection = await asyncpg.connect(
        make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    )
    try:
        return await connection.fetchval(sql, *args)
    finally:
        await connection.close()


async def holder(url: str, shard: int, count: int) -> object:
    """The backend pid of the session holding the advisory lock of `shard` of `count`."""
    return await admin(
        url,
        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND objid = $2 "
        "AND objsubid = 2 AND granted",
        SHARD_KEYS,
        count * 65536 + shard,
    )


async def test_a_claim_whose_session_is_terminated_is_lost_at_once(
    pg_server: object, caplog: pytest.LogCaptureFixture
) -> None:
    """What a PostgreSQL restart, a failover or `pg_terminate_backend` does to a running process:
    the server drops its locks, and another process could claim its shards straight away."""
    async with own_database(pg_server) as url:
        held = await claim(url, 2, [0])  # the shipped check interval: the closing is seen at once
        pid = await holder(url, 0, 2)
        assert pid is not None and not held.lost.is_set()
        assert await admin(url, "SELECT pg_terminate_backend($1)", pid) is True
        await asyncio.wait_for(held.lost.wait(), 3)
        errors = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert [r.name for r in errors] == ["bot.store.claims"]
        said = errors[0].getMessage()
        assert said.startswith("lost the claim on shards [0] of 2 (") and "closed" in said
        assert str(held.lost_error()).startswith("lost the claim on shards [0] of 2 (")
        other = await claim(url, 2, [0])  # why it must stop: the shard is free for another
        await other.release()
        await asyncio.wait_for(held.release(), 5)


class FreezingProxy:
    """A TCP relay to PostgreSQL that can stop relaying without closing anything: a connection a
    NAT or firewall dropped in silence (neither end is told)."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.frozen = asyncio.Event()
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        for writer in self.writers:
            writer.transport.abort()  # the server's end learns at last: the session ends

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        self.writers += [writer, up_writer]
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                if self.frozen.is_set():
                    await asyncio.Event().wait()  # swallowed, and nothing more ever passes
                writer.write(data)
                await writer.drain()


async def test_a_claim_whose_connection_stops_answering_is_lost(
    pg_server: object, caplog: pytest.LogCaptureFixture
) -> None:
    """A connection dropped in silence is never closed: the periodic check finds it, and the
    claim's release does not hang on it. The server may still hold the session (it has not
    noticed yet), so the shard is not free — which is why the process stops and a fresh process
    claims it again, rather than the claim being quietly taken anew."""
    async with own_database(pg_server) as url:
        where = make_url(url)
        proxy = FreezingProxy(where.host or "127.0.0.1", where.port or 5432)
        async with proxy as port:
            through = where.set(port=port).render_as_string(hide_password=False)
            held = await claim(through, 2, [0], watch_seconds=0.2, watch_timeout=0.5)
            await asyncio.sleep(0.6)
            assert not held.lost.is_set()  # checks answered
            proxy.frozen.set()
            await asyncio.wait_for(held.lost.wait(), 3)
            said = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
            assert len(said) == 1 and "did not answer within 0.5 s" in said[0]
            assert said[0].startswith("lost the claim on shards [0] of 2 (")
            await asyncio.wait_for(held.release(), 5)
            with pytest.raises(Claimed, match="shard 0 of 2 is already run"):
                await claim(url, 2, [0])  # the old session still holds it


async def test_a_released_claim_is_not_lost(
    pg_server: object, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    async with own_database(pg_server) as url:
        held = await claim(url, 2, [1], watch_seconds=0.05)
        await asyncio.sleep(0.3)  # checks under way when it is released
        await held.release()
        await asyncio.sleep(0.2)
        assert not held.lost.is_set()
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    sqlite = await claim(f"sqlite+aiosqlite:///{tmp_path / 'one.db'}", None, None)
    assert not sqlite.lost.is_set()
    await sqlite.release()

"""Who may run what on one database: one process per SQLite file, one process per shard on
PostgreSQL.

Two processes performing the same game's effects would post twice and fire its deadlines twice, so
a process claims what it runs before it recovers or schedules anything, and holds the claim for its
whole life:

- **SQLite** is for one process. The first takes an exclusive OS lock (`flock`) on a file beside
  the database; a second is refused. The OS drops the lock when the process ends, even by SIGKILL.
- **PostgreSQL** serves several shard processes. Each takes, on a connection of its own held open
  for its life, a session advisory lock per shard id it runs (keyed by the layout's shard count
  and the id), and a shared lock on its layout (the shard count). A process whose shard is held,
  or that finds a process of another layout running (a resharding while old processes still run),
  is refused; the caller may wait and try again (a restart overlapping the old process's drain).
  PostgreSQL releases a session's locks when its connection ends, so a killed process frees its
  shards at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from sqlalchemy import text
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.store.db import create_engine, in_memory, resolve_url

try:  # POSIX; elsewhere SQLite runs unguarded (see `_lock_file`)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

RETRY_SECONDS = 5.0
"""How often a process whose shards are held tries again (the other may be draining)."""

SHARD_KEYS = 0x46A60001
"""Advisory lock class of a shard: (SHARD_KEYS, shard_count × 65536 + shard id)."""
LAYOUT_KEYS = 0x46A60002
"""Advisory lock class of a layout: (LAYOUT_KEYS, shard_count), taken shared."""


class Claimed(Exception):
    """Another process holds what this one would run; the message says which, in one line."""


@dataclass
class Claim:
    """What this process holds; `release()` at shutdown (the OS or the server also drop it when
    the process or its connection ends)."""

    shards: tuple[int, ...]
    shard_count: int
    _file: IO[bytes] | None = None
    _engine: AsyncEngine | None = None
    _connection: AsyncConnection | None = field(default=None, repr=False)

    async def release(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()  # closing the descriptor drops the flock
            self._file = None
        if self._connection is not None:
            with contextlib.suppress(Exception):
                await self._connection.close()  # the session ends: its advisory locks go
            self._connection = None
        if self._engine is not None:
            await self._engine.dispose()
            self._engine = None


def shard_ids(shard_count: int | None, ids: Sequence[int] | None) -> tuple[int, ...]:
    """The shard ids a process runs: the configured ones, every one of the layout, or 0 alone."""
    if shard_count is None:
        return (0,)
    return tuple(ids) if ids is not None else tuple(range(shard_count))


async def claim(url: str | URL | None, shard_count: int | None, ids: Sequence[int] | None) -> Claim:
    """Claim the database (SQLite) or the shards (PostgreSQL) for this process, or raise
    `Claimed`."""
    resolved = resolve_url(url)
    shards = shard_ids(shard_count, ids)
    count = shard_count or 1
    if resolved.get_backend_name() == "sqlite":
        return Claim(shards, count, _file=_lock_file(resolved))
    engine = create_engine(resolved, pool_size=1, max_overflow=0)
    connection = await engine.connect()
    try:
        await _lock_shards(connection, count, shards)
    except BaseException:
        await connection.close()
        await engine.dispose()
        raise
    return Claim(shards, count, _engine=engine, _connection=connection)


async def claim_patiently(
    url: str | URL | None, shard_count: int | None, ids: Sequence[int] | None
) -> Claim:
    """`claim`, waiting on PostgreSQL while another process holds the shards (a restart that
    overlaps the old process's drain); on SQLite a taken file is refused at once."""
    told = False
    while True:
        try:
            held = await claim(url, shard_count, ids)
        except Claimed as refused:
            if resolve_url(url).get_backend_name() == "sqlite":
                raise
            if not told:
                log.warning("waiting to start: %s", refused)
                told = True
            await asyncio.sleep(RETRY_SECONDS)
            continue
        log.info("running shards %s of %s", list(held.shards), held.shard_count)
        return held


def _lock_file(url: URL) -> IO[bytes] | None:
    if in_memory(url):
        return None  # an in-memory database belongs to its process anyway
    database = url.database or ""
    if fcntl is None:  # pragma: no cover - no flock on this platform: one process, by hand
        return None
    path = os.path.abspath(database) + ".faguan-lock"
    handle = open(path, "wb")  # noqa: SIM115 - held open for the process's life
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise Claimed(
            f"another faguan process is running on the SQLite file {database} (it holds "
            f"{path}); SQLite is for one process: stop the other one, or use PostgreSQL to run "
            "several shard processes"
        ) from None
    return handle


async def _lock_shards(connection: AsyncConnection, count: int, shards: Sequence[int]) -> None:
    async def scalar(sql: str, **params: Any) -> Any:
        return (await connection.execute(text(sql), params)).scalar()

    await scalar("SELECT pg_advisory_lock_shared(:c, :k)", c=LAYOUT_KEYS, k=count)
    other = await scalar(
        "SELECT min(objid) FROM pg_locks WHERE locktype = 'advisory' AND classid = :c "
        "AND objsubid = 2 AND granted AND objid <> :k "
        "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        c=LAYOUT_KEYS,
        k=count,
    )
    if other is not None:
        raise Claimed(
            f"processes with discord.shard_count = {other} still run on this database; stop them "
            f"all before starting processes with shard_count = {count} (a resharding restarts "
            "every process)"
        )
    for shard in shards:
        key = count * 65536 + shard
        if not await scalar("SELECT pg_try_advisory_lock(:c, :k)", c=SHARD_KEYS, k=key):
            raise Claimed(
                f"shard {shard} of {count} is already run by another faguan process on this "
                "database; each shard id belongs to one process (check discord.shard_ids)"
            )
    await connection.commit()  # session locks outlive the transaction; end it

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

The session can also end while the process lives (a PostgreSQL restart or failover, a NAT or
firewall dropping the idle TCP connection, `idle_session_timeout`, `pg_terminate_backend`): the
server then releases its locks and a waiting process takes the shards. So the claim is watched
(`WATCH_SECONDS`): when its connection closes or stops answering, `Claim.lost` is set and an
ERROR names the shards; `faguan run` stops its bot and exits non-zero for its supervisor to
start it again, which claims the shards anew once they are free. The locks are never quietly
taken again: another process may hold them already.
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

WATCH_SECONDS = 5.0
"""How often a process checks the connection that holds its PostgreSQL shard locks (`SELECT 1`).
The server releases the locks when that session ends, and a waiting process may take the shards
within its own `RETRY_SECONDS`; a connection that closes is seen at once (asyncpg's termination
callback), one that silently stops answering (a dropped TCP connection) within this interval plus
`WATCH_TIMEOUT`."""
WATCH_TIMEOUT = 10.0
"""How long a check waits for its answer before the claim counts as lost: a connection that no
longer answers may hold no session, hence no locks, any more."""

SHARD_KEYS = 0x46A60001
"""Advisory lock class of a shard: (SHARD_KEYS, shard_count × 65536 + shard id)."""
LAYOUT_KEYS = 0x46A60002
"""Advisory lock class of a layout: (LAYOUT_KEYS, shard_count), taken shared."""


class Claimed(Exception):
    """Another process holds what this one would run; the message says which, in one line."""


class ClaimLost(Exception):
    """The claim ended while the process ran (its PostgreSQL session is gone, and the shard locks
    with it); the message says which shards and why, in one line."""


@dataclass
class Claim:
    """What this process holds; `release()` at shutdown (the OS or the server also drop it when
    the process or its connection ends). On PostgreSQL, `lost` is set if the claim's session
    ends before that (see `WATCH_SECONDS`); `lost_error()` then says so."""

    shards: tuple[int, ...]
    shard_count: int
    _file: IO[bytes] | None = None
    _engine: AsyncEngine | None = None
    _connection: AsyncConnection | None = field(default=None, repr=False)
    lost: asyncio.Event = field(default_factory=asyncio.Event, repr=False, compare=False)
    """Set once the claim is lost: stop, performing nothing more (never set on SQLite, whose lock
    lasts as long as the process)."""
    lost_reason: str | None = None
    _driver: Any = field(default=None, repr=False)
    _watch: asyncio.Task[None] | None = field(default=None, repr=False)

    def lost_error(self) -> ClaimLost:
        """The error to stop with once `lost` is set: one line for the operator."""
        return ClaimLost(
            f"lost the claim on shards {list(self.shards)} of {self.shard_count} "
            f"({self.lost_reason or 'its PostgreSQL session ended'}): PostgreSQL released their "
            "locks, so another process may run them now; stopped to run nothing twice. Start "
            "faguan again (a supervisor's restart does): it claims them once they are free."
        )

    def _watch_connection(self, driver: Any, every: float, timeout: float) -> None:
        """Watch the session holding the locks: its closing, and a `SELECT 1` every `every`
        seconds answered within `timeout`."""
        self._driver = driver
        with contextlib.suppress(AttributeError):  # a driver without the callback: checks only
            driver.add_termination_listener(self._terminated)
        self._watch = asyncio.create_task(self._check(driver, every, timeout))

    def _terminated(self, _connection: object) -> None:
        self._lose("its PostgreSQL connection closed")

    async def _check(self, driver: Any, every: float, timeout: float) -> None:
        while not self.lost.is_set():
            await asyncio.sleep(every)
            try:
                await asyncio.wait_for(driver.fetchval("SELECT 1"), timeout)
            except TimeoutError:
                self._lose(f"its PostgreSQL connection did not answer within {timeout:g} s")
            except Exception as exc:
                self._lose(f"its PostgreSQL connection failed: {type(exc).__name__}")

    def _lose(self, reason: str) -> None:
        if self.lost.is_set() or self._driver is None:  # told already, or released
            return
        self.lost_reason = reason
        log.error(
            "lost the claim on shards %s of %s (%s); stopping: another process may run them now",
            list(self.shards),
            self.shard_count,
            reason,
        )
        self.lost.set()

    async def release(self) -> None:
        driver, self._driver = self._driver, None  # from here on, a closing is no loss
        if driver is not None:
            with contextlib.suppress(AttributeError):
                driver.remove_termination_listener(self._terminated)
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._watch
            self._watch = None
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()  # closing the descriptor drops the flock
            self._file = None
        if self._connection is not None:
            if self.lost.is_set() and driver is not None:
                # A connection that stopped answering would hang a polite close: drop it.
                with contextlib.suppress(Exception):
                    driver.terminate()
                with contextlib.suppress(Exception):
                    await self._connection.invalidate()
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


async def claim(
    url: str | URL | None,
    shard_count: int | None,
    ids: Sequence[int] | None,
    *,
    watch_seconds: float = WATCH_SECONDS,
    watch_timeout: float = WATCH_TIMEOUT,
) -> Claim:
    """Claim the database (SQLite) or the shards (PostgreSQL) for this process, or raise
    `Claimed`. A PostgreSQL claim is watched every `watch_seconds` (`WATCH_SECONDS`), each check
    answered within `watch_timeout` (`WATCH_TIMEOUT`), until `Claim.release()`."""
    resolved = resolve_url(url)
    shards = shard_ids(shard_count, ids)
    count = shard_count or 1
    if resolved.get_backend_name() == "sqlite":
        return Claim(shards, count, _file=_lock_file(resolved))
    engine = create_engine(resolved, pool_size=1, max_overflow=0)
    connection = await engine.connect()
    try:
        await _lock_shards(connection, count, shards)
        driver = (await connection.get_raw_connection()).driver_connection
    except BaseException:
        await connection.close()
        await engine.dispose()
        raise
    held = Claim(shards, count, _engine=engine, _connection=connection)
    held._watch_connection(driver, watch_seconds, watch_timeout)
    return held


async def claim_patiently(
    url: str | URL | None,
    shard_count: int | None,
    ids: Sequence[int] | None,
    *,
    watch_seconds: float = WATCH_SECONDS,
    watch_timeout: float = WATCH_TIMEOUT,
) -> Claim:
    """`claim`, waiting on PostgreSQL while another process holds the shards (a restart that
    overlaps the old process's drain); on SQLite a taken file is refused at once."""
    told = False
    while True:
        try:
            held = await claim(
                url, shard_count, ids, watch_seconds=watch_seconds, watch_timeout=watch_timeout
            )
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

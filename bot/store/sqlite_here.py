"""SQLite's small groups, written on the bot's own connection (``SqliteProcess`` sends the rest
to its writer process).

A small group (fewer than ``SMALL_GROUP`` inputs, at most ``SMALL_PAYLOAD`` JSON values, no
snapshot: one game's or a few games' posts) costs less to write than to ship: on this project's
2-core VM (docs/performance.md) a round trip to the writer process cost the loop ~100 µs of CPU,
and each process idling and waking once a commit makes its next work run slower. Its statements
run on the event loop (a few hundred µs). Its ``COMMIT`` (the WAL's pages and the fsync) runs on
the loop too unless a timer is due soon (``timer_due``, within ``FREE_FOR``) or the disk is slow
(a ``COMMIT`` on the loop took over ``SLOW_COMMIT``: the next ``SLOW_FOR`` seconds' go to the
thread): handing it to a thread and back cost ~75 µs of a one-game post's ~430 and woke two
threads instead of one (one game median 1,245 → 1,860 posts/s, ten games 4,700 → 5,200,
measured: docs/performance.md, twelfth pass). With a timer due (a deadline's job), it runs on a
thread of its own, so the loop serves on while the disk is waited for (with every ``COMMIT`` on
the loop, deadlines' job-start p99 under a ten-game ingest went 2 → 6–21 ms). The loop's other
work (the next posts) waits for the disk meanwhile: a fraction of a millisecond on a fast disk; on
a slow one (a busy or spinning disk, tens of ms a fsync) once in ``SLOW_FOR`` at most.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from bot.store import sqlite_group
from bot.store.sqlite_group import PlannedAppend, Stage, Written
from bot.store.writer import SPLIT_FROM

SMALL_GROUP = SPLIT_FROM // 2
"""Groups with fewer inputs are written in this process (``SqliteProcess.small_group``). A
burst the group writer splits (``SPLIT_FROM``) makes halves of at least this many: those go to
the writer process, so one half is written while the loop makes the other's next posts."""
SMALL_PAYLOAD = 2_000
"""Most JSON values (in every dict and list) of a group written in this process: more (a lock's
record of a long day, hundreds of posts) would hold the event loop for milliseconds of JSON."""


FREE_FOR = 0.02
"""A ``COMMIT`` runs on the event loop only if no timer is due within this many seconds (the
deadlines' job-start target is a p99 of 20 ms late): a deadline due sooner is never held behind
the disk."""

SLOW_COMMIT = 0.005
"""A ``COMMIT`` on the event loop that took longer than this (seconds) held everything else the
loop does: the disk is slow now, and the next ``SLOW_FOR`` seconds' ``COMMIT``s go to the thread."""
SLOW_FOR = 1.0
"""How long a slow ``COMMIT`` on the loop keeps the next ones on the thread; then one is tried on
the loop again (so a slow disk holds the loop at most once in this many seconds)."""

_CONTAINERS = (dict, list, tuple)
"""What JSON nests (the serializer writes no other container)."""


def small_payloads(appends: Sequence[PlannedAppend], most: int = SMALL_PAYLOAD) -> bool:
    """Whether the events, effects and outcomes of ``appends`` hold at most ``most`` JSON
    values (counted by the lengths of their dicts and lists, stopping once over)."""
    left = most
    open_: list[Any] = []
    for append in appends:
        open_ += [payload.values() for payload in append.events]
        open_ += [payload.values() for payload in append.effects]
        if append.outcome is not None:
            open_.append(append.outcome.values())
    while open_:
        values = open_.pop()
        left -= len(values)
        if left < 0:
            return False
        for value in values:
            if isinstance(value, _CONTAINERS):
                open_.append(value.values() if isinstance(value, dict) else value)
    return True


def timer_due(loop: asyncio.AbstractEventLoop, within: float = FREE_FOR) -> bool:
    """Whether a timer of ``loop`` is due within ``within`` seconds (read from asyncio's own
    loop's heap of timers; of any other loop nothing is known: True), or has just fallen due: a
    loop's turn moves every timer due to its queue of ready callbacks before it runs any of
    them, so a timer that fell due this turn waits there behind the callback asking (and would
    wait for its ``COMMIT``). Only timers count among the ready callbacks: the posts' callers
    resumed by the previous group are ready at every commit. A cancelled timer counts until the
    loop drops it: at worst a ``COMMIT`` goes to the thread when it need not have."""
    timers = getattr(loop, "_scheduled", None)
    ready = getattr(loop, "_ready", None)
    if not isinstance(timers, list) or not isinstance(ready, deque):
        return True
    if timers and timers[0].when() <= loop.time() + within:
        return True
    return any(isinstance(handle, asyncio.TimerHandle) for handle in ready)


def busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is SQLite's "database is locked" (another connection holds it)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF == sqlite3.SQLITE_BUSY


class Here:
    """This process's own connection for small groups, opened on first use by the event loop
    using it (a loop's first use closes one another loop opened). Its busy timeout is 0: a
    database held by another process is said at once, and the group goes to the writer process,
    which waits off the loop. A group's statements run on the loop (a few hundred µs); its
    ``COMMIT`` (the WAL's pages and the fsync, the wait for the disk) too, unless a timer is due
    soon (``timer_due``) or the disk was slow lately (``SLOW_COMMIT``): then on a thread of its
    own, so the loop serves on meanwhile (a deadline's job starts on time)."""

    def __init__(self, args: list[Any], kwargs: dict[str, Any]) -> None:
        self._args, self._kwargs = args, kwargs
        self._conn: sqlite3.Connection | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: ThreadPoolExecutor | None = None
        self._committing: Future[Any] | None = None
        """The ``COMMIT`` on the thread, until the connection is used again."""
        self._slow_until = 0.0
        """Until this time of the loop, every ``COMMIT`` goes to the thread (the disk was slow)."""
        self.info: dict[str, Any] = {}
        """The pragmas known in force (``synchronous``), as ``sqlite_group.commit`` keeps them."""

    def get(self) -> sqlite3.Connection:
        """The connection, once no ``COMMIT`` runs on it (one whose caller stopped waiting is
        waited for here: rare, and short)."""
        self._settle()
        loop = asyncio.get_running_loop()
        if self._conn is None or self._loop is not loop:
            self.close()
            # its COMMIT runs on the thread: the connection is used from two threads, in turn
            conn = sqlite3.connect(*self._args, **{**self._kwargs, "check_same_thread": False})
            try:
                sqlite_group.configure(conn, 0)
            except BaseException:
                conn.close()
                raise
            self._conn, self._loop, self.info = conn, loop, {"synchronous": "FULL"}
        return self._conn

    @property
    def opened(self) -> bool:
        return self._conn is not None and self._loop is asyncio.get_running_loop()

    async def commit(self, conn: sqlite3.Connection) -> None:
        """``COMMIT`` here, or on the thread if a timer is due soon or the disk was slow lately
        (``SLOW_COMMIT``). If the caller stops waiting for the thread, it runs on all the same,
        and the connection is not used again until it ends (``committing``)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        if now >= self._slow_until and not timer_due(loop):
            conn.execute("COMMIT")
            if loop.time() - now > SLOW_COMMIT:
                self._slow_until = loop.time() + SLOW_FOR
            return
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="faguan-sqlite-commit")
        self._committing = self._thread.submit(conn.execute, "COMMIT")
        await asyncio.wrap_future(self._committing)
        self._committing = None

    @property
    def committing(self) -> bool:
        """Whether a ``COMMIT`` runs on the thread (its caller stopped waiting)."""
        return self._committing is not None and not self._committing.done()

    def _settle(self) -> None:
        if self._committing is not None:
            with contextlib.suppress(Exception):  # told to its caller, if it still waited
                self._committing.result()
            self._committing = None

    async def write(
        self,
        stage: Stage,
        durable: bool,
        at: str,
        marks: Sequence[int],
        appends: Sequence[PlannedAppend],
    ) -> Written:
        """``sqlite_group.commit`` on this connection, its ``COMMIT`` by ``commit``
        (``stage.committing`` set before it: a failure from then on has an unknown outcome)."""
        conn = self.get()
        sqlite_group.begin(conn, self.info, durable)
        try:
            written = sqlite_group.write(conn, at, marks, appends, {})
            stage.committing = True
            await self.commit(conn)
        except BaseException:
            if not self.committing and conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return written

    def close(self) -> None:
        self._settle()
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._thread is not None:
            self._thread.shutdown(wait=False)
            self._thread = None

"""SQLite's group commits: a small group written here, a large one in a writer process of its
own (``sqlite_child``), held while used.

A large group's Python work (the JSON of every event, effect and outcome, its rows,
``executemany``) would hold the event loop for milliseconds; in a child process it has a GIL of
its own, and while one group is written there the loop makes the next (``Writer``'s split).

A small group (fewer than ``SMALL_GROUP`` inputs, small payloads, no snapshot: what one game's or a
few games' posts make) is written here, on this process's own connection: its statements on the
loop (a few hundred µs), its ``COMMIT`` (the WAL's pages, the fsync) on a thread of its own, so the
loop serves on while the disk is waited for. Shipping it costs more than writing it: on this
project's 2-core VM (docs/performance.md) the request's pickles, the pipe and waking the other
process cost the loop ~100 µs of CPU a commit, and each process idling and waking once a commit
makes its next work run slower. Measured in separate processes, alternating: one game's posts
1,318–1,712 → 1,878–2,337 a second, ten games' 3,923–5,213 → 4,482–6,697, thirty and a hundred
games' the same; the ``COMMIT`` on its thread measured the same rates as on the loop, and keeps
deadlines' job starts as before (held on the loop, their p99 went 2 → 6–21 ms). Only when its
``BEGIN IMMEDIATE`` finds the database held by another process (busy timeout 0 here) does a small
group go to the writer process after all, which waits for it off the loop.

The child is started on the first request (``python -I -S``: no site-packages to import) and
serves one request at a time on one connection, opened as the engine opens its own (the dialect's
connect arguments, ``sqlite_group.configure``: WAL, ``synchronous=FULL``, the busy timeout).
The event loop reads the answers from the child's stdout (``loop.connect_read_pipe``: a loop with
pipe support, as asyncio's default loop on Unix), each to the future waiting first. (A reader
thread would take an answer up only once it got the GIL from a busy loop: up to the 5 ms switch
interval late.) A caller that stopped waiting has its request run all the same, and its answer is
dropped. A child serves the loop that started it; a request from another loop (a test's) starts
another.

The child never outlives the bot: it ends at the end of its stdin, which closes with this process
however it ends (``aclose`` at a clean stop, ``Database.dispose``, an exit without either, a
crash). A child that dies mid-request leaves that request's outcome unknown (``WriterLost``); the
next request starts a new one. An in-memory database has no second connection (nor a second
process): the repository keeps the pool's there.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import os
import sqlite3
import subprocess
import sys
import weakref
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import IO, Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store import db, sqlite_group
from bot.store.sqlite_frames import FrameReader, frame
from bot.store.sqlite_group import PlannedAppend, Stage, Written, as_fields, stored_time
from bot.store.writer import SPLIT_FROM

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sqlite_child.py")
"""The writer process's program."""

SMALL_GROUP = SPLIT_FROM // 2
"""Groups with fewer inputs are written in this process (``SqliteProcess.small_group``). A
burst the group writer splits (``SPLIT_FROM``) makes halves of at least this many: those go to
the writer process, so one half is written while the loop makes the other's next posts."""
SMALL_PAYLOAD = 2_000
"""Most JSON values (in every dict and list) of a group written in this process: more (a lock's
record of a long day, hundreds of posts) would hold the event loop for milliseconds of JSON."""


class WriterLost(Exception):
    """The writer process ended before it answered: what the request did is unknown."""


class _Answers(asyncio.Protocol):
    """The child's answers, read by the event loop from its stdout as they arrive, each to the
    future waiting first (the futures in the order of their requests); then, at the end of its
    stdout (the child gone), ``WriterLost`` to those still waiting, and the child reaped."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process
        self._frames = FrameReader()
        self._futures: deque[asyncio.Future[Any]] = deque()
        self.lost = False
        """The child's stdout ended: it answers nothing more."""

    def expect(self, future: asyncio.Future[Any]) -> None:
        if self.lost:
            raise WriterLost("the SQLite writer process has ended")
        self._futures.append(future)

    def data_received(self, data: bytes) -> None:
        for value in self._frames.feed(data):
            future = self._futures.popleft()
            if not future.done():  # its caller was cancelled: the request ran anyway
                future.set_result(value)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        # reaped on a worker thread at once (no zombie until the next request replaces it); a
        # loop that is closing has no executor left, and the exit reaps it
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop().run_in_executor(None, self._process.wait)
        futures, self._futures = self._futures, deque()
        for future in futures:
            if not future.done():
                future.set_exception(WriterLost("the SQLite writer process ended mid-request"))


class _Child:
    """One writer process, serving the event loop that started it. That loop reads its answers
    (no thread: an answer is taken up at the loop's next turn, not whenever a reader thread next
    gets the GIL from a busy loop, up to the 5 ms switch interval later)."""

    def __init__(self, process: subprocess.Popen[bytes], answers: _Answers) -> None:
        assert process.stdin is not None
        self.loop = asyncio.get_running_loop()
        self.process, self.answers = process, answers
        self.stdin: IO[bytes] = process.stdin
        # Dropped unclosed (its repository dropped): its stdin closes, and the child ends.
        weakref.finalize(self, self.stdin.close)

    @classmethod
    async def start(cls, begin: tuple[list[Any], dict[str, Any], int]) -> _Child:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        answers = _Answers(process)
        try:
            await asyncio.get_running_loop().connect_read_pipe(lambda: answers, process.stdout)
        except BaseException:
            assert process.stdin is not None
            process.stdin.close()  # the child ends
            raise
        child = cls(process, answers)
        child.send(frame(begin))
        return child

    def send(self, request: bytes) -> None:
        try:
            self.stdin.write(request)
            self.stdin.flush()
        except (OSError, ValueError):  # the child is gone (a broken pipe), or closed: its
            pass  # stdout ends too, and its answers tell

    async def ask(self, request: bytes) -> Any:
        """Send a request frame; its answer."""
        future: asyncio.Future[Any] = self.loop.create_future()
        self.answers.expect(future)
        self.send(request)
        return await future

    def end(self) -> None:
        """Close its stdin: it answers what it was sent, then closes its connection and ends."""
        with contextlib.suppress(OSError):
            self.stdin.close()


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


def _busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is SQLite's "database is locked" (another connection holds it)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF == sqlite3.SQLITE_BUSY


class _Here:
    """This process's own connection for small groups, opened on first use by the event loop
    using it (a loop's first use closes one another loop opened). Its busy timeout is 0: a
    database held by another process is said at once, and the group goes to the writer process,
    which waits off the loop. A group's statements run on the loop (a few hundred µs); its
    ``COMMIT`` (the WAL's pages and the fsync, the wait for the disk) on a thread of its own, so
    the loop serves on meanwhile (a deadline's job starts on time)."""

    def __init__(self, args: list[Any], kwargs: dict[str, Any]) -> None:
        self._args, self._kwargs = args, kwargs
        self._conn: sqlite3.Connection | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: ThreadPoolExecutor | None = None
        self._committing: Future[Any] | None = None
        """The ``COMMIT`` on the thread, until the connection is used again."""
        self.info: dict[str, Any] = {}
        """The pragmas known in force (``synchronous``), as ``sqlite_group.commit`` keeps them."""

    def get(self) -> sqlite3.Connection:
        """The connection, once no ``COMMIT`` runs on it (one whose caller stopped waiting is
        waited for here: rare, and short)."""
        self._settle()
        loop = asyncio.get_running_loop()
        if self._conn is None or self._loop is not loop:
            self.close()
            conn = sqlite3.connect(*self._args, **self._kwargs)
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
        """``COMMIT`` on the thread. If the caller stops waiting, it runs on all the same, and
        the connection is not used again until it ends (``committing``)."""
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

    def close(self) -> None:
        self._settle()
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._thread is not None:
            self._thread.shutdown(wait=False)
            self._thread = None


class SqliteProcess:
    """The SQLite group writer of one database: its own connection here for small groups, and
    its writer process for the rest, each opened on first use."""

    def __init__(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        self._connect = (list(args), dict(kwargs))
        self._child: _Child | None = None
        self._here = _Here(*self._connect)
        self._wrote_here = False
        """Whether the last group was written here (``pragma`` reads where it was)."""
        self.small_group = SMALL_GROUP
        """Groups with fewer inputs (and small payloads, no snapshot) are written here; 0: none."""

    @classmethod
    def for_engine(cls, engine: AsyncEngine) -> SqliteProcess | None:
        """A writer on ``engine``'s SQLite file (ended when the engine is disposed of), or None
        for another backend or a memory database."""
        if engine.dialect.name != "sqlite" or db.in_memory(engine.url):
            return None
        args, kwargs = engine.dialect.create_connect_args(engine.url)
        writer = cls(args, kwargs)
        ref = weakref.ref(writer)  # the engine does not keep it alive

        def disposed(_engine: Any) -> None:
            alive = ref()
            if alive is not None:
                alive.end()

        event.listen(engine.sync_engine, "engine_disposed", disposed)
        return writer

    @property
    def pid(self) -> int | None:
        """The running writer process's id (None: none is running)."""
        return None if self._child is None else self._child.process.pid

    async def _running(self) -> _Child:
        """The child serving this event loop: started if none is, or it ended, or it serves
        another loop (the old one is ended)."""
        child = self._child
        if child is None or child.answers.lost or child.loop is not asyncio.get_running_loop():
            if child is not None:
                child.end()
            self._child = None
            child = await _Child.start((*self._connect, db.SQLITE_BUSY_TIMEOUT_MS))
            if self._child is not None:  # another caller started one meanwhile: use it
                child.end()
                return self._child
            self._child = child
        return child

    async def commit(
        self,
        stage: Stage,
        durable: bool,
        now: datetime,
        marks: Sequence[int],
        appends: Sequence[PlannedAppend],
        snapshots: Mapping[int, tuple[int, str, Mapping[str, Any]]],
    ) -> Written:
        """``sqlite_group.commit``: here for a small group, else in the writer process.
        ``stage.committing`` is set once ``COMMIT`` may have been sent (before the request is
        sent to the writer process, cleared again if it failed before ``COMMIT``): a failure
        with it set has an unknown outcome."""
        if len(appends) < self.small_group and not snapshots and small_payloads(appends):
            try:
                written = await self._commit_here(stage, durable, stored_time(now), marks, appends)
            except sqlite3.Error as exc:
                if stage.committing or not _busy(exc):
                    raise
                # held by another process: the writer process waits for it, off the loop
            else:
                self._wrote_here = True
                return written
        self._wrote_here = False
        fields = [as_fields(append) for append in appends]
        request = frame(("commit", durable, stored_time(now), list(marks), fields, snapshots))
        child = await self._running()
        stage.committing = True
        ok, *answer = await child.ask(request)
        if not ok:
            if not answer[2]:
                stage.committing = False
            raise _error(*answer)
        changed, written = answer[0]
        return Written(set(changed), written)

    async def _commit_here(
        self,
        stage: Stage,
        durable: bool,
        at: str,
        marks: Sequence[int],
        appends: Sequence[PlannedAppend],
    ) -> Written:
        """``sqlite_group.commit`` on the connection here, its ``COMMIT`` on its thread."""
        here = self._here
        conn = here.get()
        sqlite_group.begin(conn, here.info, durable)
        try:
            written = sqlite_group.write(conn, at, marks, appends, {})
            stage.committing = True
            await here.commit(conn)
        except BaseException:
            if not here.committing and conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return written

    async def pragma(self, name: str, value: str | int | None = None) -> Any:
        """Set ``PRAGMA name`` to ``value`` (a word or a number) on both of the writer's
        connections (e.g. ``query_only``, for a database refusing writes), or only read it: its
        value after, on the connection that wrote the last group (the writer process's before
        any)."""
        ok, *answer = await (await self._running()).ask(frame(("pragma", name, value)))
        if not ok:
            raise _error(*answer)
        if value is not None:
            return sqlite_group.pragma(self._here.get(), self._here.info, name, value)
        if self._wrote_here and self._here.opened:
            return sqlite_group.pragma(self._here.get(), self._here.info, name, None)
        return answer[0]

    def end(self) -> None:
        """Close the connection here, and end the writer process once it has answered what it
        was asked (without waiting)."""
        self._here.close()
        if self._child is not None:
            self._child.end()
            self._child = None

    async def aclose(self) -> None:
        """Close the connection here, and the writer process's once the requests sent are
        answered, and wait for the process to end (a clean stop: the last connection to close
        checkpoints the WAL into the file). A later request opens them again."""
        self._here.close()
        child, self._child = self._child, None
        if child is None:
            return
        if child.loop is asyncio.get_running_loop() and not child.answers.lost:
            with contextlib.suppress(WriterLost):
                await child.ask(frame(("close",)))
        child.end()
        await asyncio.to_thread(child.process.wait)


def _error(
    name: str, message: str, _committing: bool, code: int | None, code_name: str | None
) -> Exception:
    """The writer process's error, raised here as the same type when it is sqlite3's or a
    built-in one (a failed statement is a ``sqlite3.Error``, as on the pool's connections)."""
    kind = getattr(sqlite3, name, None)
    if not (isinstance(kind, type) and issubclass(kind, sqlite3.Error)):
        kind = getattr(builtins, name, None)
    if isinstance(kind, type) and issubclass(kind, Exception):
        with contextlib.suppress(Exception):  # a type that takes other arguments: as below
            error = kind(message)
            if code is not None:
                error.sqlite_errorcode = code  # type: ignore[attr-defined]
                error.sqlite_errorname = code_name  # type: ignore[attr-defined]
            return error
    return RuntimeError(f"{name} in the SQLite writer process: {message}")

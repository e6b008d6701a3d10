"""SQLite's group commits: a large group in a writer process of its own (``sqlite_child``), held
while used; a small one on the bot's own connection (``sqlite_here``).

A large group's Python work (the JSON of every event, effect and outcome, its rows,
``executemany``) would hold the event loop for milliseconds; in a child process it has a GIL of
its own, and while one group is written there the loop makes the next (``Writer``'s split).

A small group (fewer than ``SMALL_GROUP`` inputs, small payloads, no snapshot) is written on the
bot's own connection instead (``sqlite_here``): shipping it costs more than writing it. Measured in
separate processes, alternating: one game's posts 1,318–1,712 → 1,878–2,337 a second, ten games'
3,923–5,213 → 4,482–6,697, thirty and a hundred games' the same. Only when its ``BEGIN IMMEDIATE``
finds the database held by another process (busy timeout 0 there) does a small group come here
after all, to be waited for off the loop.

The child is started on the first request (``python -I -S``: no site-packages to import, only
orjson's directory where it is installed, ~3 ms of a ~35 ms start) and serves one request at a
time on one connection, opened as the engine opens its own (the dialect's connect arguments,
``sqlite_group.configure``: WAL, ``synchronous=FULL``, the busy timeout).
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
import importlib.util
import os
import sqlite3
import subprocess
import sys
import weakref
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import IO, Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store import db, sqlite_group, sqlite_lock
from bot.store.sqlite_frames import FrameReader, frame
from bot.store.sqlite_group import PlannedAppend, Stage, Written, as_fields, stored_time
from bot.store.sqlite_here import SMALL_GROUP, Here, busy, small_payloads

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sqlite_child.py")
"""The writer process's program."""


def _orjson_home() -> str | None:
    """The directory holding the installed ``orjson`` (site-packages), for the writer process:
    it has no site-packages (``-S``) and looks there for orjson alone. None: not installed."""
    try:
        spec = importlib.util.find_spec("orjson")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    found = spec.submodule_search_locations  # a package: its directory; a module: its file
    return os.path.dirname(found[0] if found else spec.origin)


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

    def __init__(
        self, process: subprocess.Popen[bytes], answers: _Answers, lock: str | None
    ) -> None:
        assert process.stdin is not None
        self.loop = asyncio.get_running_loop()
        self.process, self.answers = process, answers
        self.stdin: IO[bytes] = process.stdin
        if lock is not None:
            _RUNNING[lock] += 1
        # Dropped unclosed (its repository dropped): its stdin closes, and the child ends.
        self._ended = weakref.finalize(self, _let_go, self.stdin, lock)

    @classmethod
    async def start(cls, begin: tuple[list[Any], dict[str, Any], int], lock: str | None) -> _Child:
        """A writer process on the database ``begin`` opens (``lock``: its ``sqlite_lock`` file,
        the writer process takes it as it starts)."""
        home = _orjson_home()
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", CHILD, *([home] if home else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        answers = _Answers(process)
        try:
            await asyncio.get_running_loop().connect_read_pipe(lambda: answers, process.stdout)
        except BaseException:
            assert process.stdin is not None
            process.stdin.close()  # the child ends
            raise
        child = cls(process, answers, lock)
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
        """Close its stdin: it answers what it was sent, then closes its connection and ends
        (from now on an earlier run's, as far as ``sqlite_lock`` goes)."""
        self._ended()


_RUNNING: Counter[str] = Counter()
"""Lock file (``sqlite_lock``) → this process's writer processes on its database that are
running and were not told to end. While one is, this process is past its start: the lock held
tells nothing of an earlier run (a test's second bot beside its first, say, need not wait)."""


def _let_go(stdin: IO[bytes], lock: str | None) -> None:
    """``_Child.end``, once: its stdin closed, and no longer counted as running."""
    if lock is not None:
        _RUNNING[lock] -= 1
        if _RUNNING[lock] <= 0:
            del _RUNNING[lock]
    with contextlib.suppress(OSError):
        stdin.close()


class SqliteProcess:
    """The SQLite group writer of one database: its own connection here for small groups, and
    its writer process for the rest, each opened on first use."""

    def __init__(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        self._connect = (list(args), dict(kwargs))
        self._lock = sqlite_lock.lock_path(args, kwargs)
        self._child: _Child | None = None
        self._here = Here(*self._connect)
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

    async def earlier_writer_ended(self) -> float | None:
        """Once no writer process of another run can still commit (``sqlite_lock``), waiting at
        most the busy timeout (what an earlier one's last commit may take): the seconds waited,
        None if one still runs then (a live process's: a tool beside the bot). At once while
        this process runs a writer process on the database (``_RUNNING``): past its start."""
        if self._lock is None or _RUNNING[self._lock]:
            return 0.0
        return await sqlite_lock.wait_until_free(self._lock, db.SQLITE_BUSY_TIMEOUT_MS / 1000)

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
            child = await _Child.start((*self._connect, db.SQLITE_BUSY_TIMEOUT_MS), self._lock)
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
                written = await self._here.write(stage, durable, stored_time(now), marks, appends)
            except sqlite3.Error as exc:
                if stage.committing or not busy(exc):
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

    async def pragma(self, name: str, value: str | int | None = None) -> Any:
        """Set ``PRAGMA name`` to ``value`` (a word or a number) on both of the writer's
        connections (e.g. ``query_only``, for a database refusing writes), or only read it: its
        value after, on the connection that wrote the last group (the writer process's before
        any)."""
        if value is None and self._wrote_here and self._here.opened:
            return sqlite_group.pragma(self._here.get(), self._here.info, name, None)
        ok, *answer = await (await self._running()).ask(frame(("pragma", name, value)))
        if not ok:
            raise _error(*answer)
        if value is not None:
            return sqlite_group.pragma(self._here.get(), self._here.info, name, value)
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

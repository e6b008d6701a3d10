"""SQLite's group commits in a writer process of their own (``sqlite_child``), held while used.

Written in this process, a group's Python work (the JSON of every event, effect and outcome, its
rows, ``executemany``) holds the GIL, and each sqlite3 call that lets the GIL go has to take it
back from the event loop: while a group is written the loop hardly runs. In a child process that
work has a GIL of its own; this process only pickles the group (``sqlite_frames``) and waits.

The child is started on the first request (``python -I -S``: no site-packages to import) and
serves one request at a time on one connection, opened as the engine opens its own (the dialect's
connect arguments, ``sqlite_group.configure``: WAL, ``synchronous=FULL``, the busy timeout).
Answers are read by a daemon thread that blocks on the child's stdout (portable: no event loop
readers) and hands each to the future waiting first, on that future's loop; a caller that stopped
waiting has its request run all the same, and its answer is dropped.

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
import threading
import weakref
from collections import deque
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import IO, Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store import db
from bot.store.sqlite_frames import frame, read_frame
from bot.store.sqlite_group import PlannedAppend, Stage, Written, as_fields

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sqlite_child.py")
"""The writer process's program."""


class WriterLost(Exception):
    """The writer process ended before it answered: what the request did is unknown."""


def _settle(future: asyncio.Future[Any], value: Any) -> None:
    if future.done():  # the caller was cancelled: its request ran anyway
        return
    if isinstance(value, WriterLost):
        future.set_exception(value)
    else:
        future.set_result(value)


def _tell(future: asyncio.Future[Any], value: Any) -> None:
    with contextlib.suppress(RuntimeError):  # the caller's loop closed: nobody waits
        future.get_loop().call_soon_threadsafe(_settle, future, value)


class _Waiting:
    """The futures waiting for a child's answers, in the order of their requests (shared with
    the thread that reads the answers)."""

    def __init__(self) -> None:
        self._futures: deque[asyncio.Future[Any]] = deque()
        self._lock = threading.Lock()
        self.lost = False
        """The child's stdout ended: it answers nothing more."""

    def expect(self, future: asyncio.Future[Any]) -> None:
        with self._lock:
            if self.lost:
                raise WriterLost("the SQLite writer process has ended")
            self._futures.append(future)

    def answer(self, value: Any) -> None:
        with self._lock:
            future = self._futures.popleft() if self._futures else None
        if future is not None:
            _tell(future, value)

    def lose(self) -> None:
        with self._lock:
            self.lost = True
            futures, self._futures = list(self._futures), deque()
        for future in futures:
            _tell(future, WriterLost("the SQLite writer process ended mid-request"))


def _read_answers(process: subprocess.Popen[bytes], waiting: _Waiting) -> None:
    """The reader thread: every answer to its future, then (the child gone) ``WriterLost`` to
    those still waiting; and the child reaped."""
    assert process.stdout is not None
    try:
        while True:
            waiting.answer(read_frame(process.stdout))
    except (EOFError, OSError):
        pass
    finally:
        waiting.lose()
        process.stdout.close()
        process.wait()


class _Child:
    """One writer process: its stdin, and the answers its reader thread hands on."""

    def __init__(self, start: tuple[list[Any], dict[str, Any], int]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert self.process.stdin is not None
        self.stdin: IO[bytes] = self.process.stdin
        self.waiting = _Waiting()
        # Only the reader thread keeps the process object: when this one goes unclosed (its
        # repository dropped), its stdin closes and the child ends.
        weakref.finalize(self, self.stdin.close)
        threading.Thread(
            target=_read_answers,
            args=(self.process, self.waiting),
            name=f"faguan-writer-{self.process.pid}",
            daemon=True,
        ).start()
        self.stdin.write(frame(start))
        self.stdin.flush()

    async def ask(self, request: bytes) -> Any:
        """Send a request frame; its answer."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting.expect(future)
        try:
            self.stdin.write(request)
            self.stdin.flush()
        except (OSError, ValueError):  # the child is gone (a broken pipe), or closed
            self.waiting.lose()
        return await future

    def end(self) -> None:
        """Close its stdin: it answers what it was sent, then closes its connection and ends."""
        with contextlib.suppress(OSError):
            self.stdin.close()


class SqliteProcess:
    """The SQLite writer process of one database, started on first use."""

    def __init__(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        self._connect = (list(args), dict(kwargs))
        self._child: _Child | None = None

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

    def _running(self) -> _Child:
        if self._child is None or self._child.waiting.lost:
            if self._child is not None:
                self._child.end()
            start = (*self._connect, db.SQLITE_BUSY_TIMEOUT_MS)
            self._child = _Child(start)
        return self._child

    async def commit(
        self,
        stage: Stage,
        durable: bool,
        now: datetime,
        marks: Sequence[int],
        appends: Sequence[PlannedAppend],
        snapshots: Mapping[int, tuple[int, str, Mapping[str, Any]]],
    ) -> Written:
        """``sqlite_group.commit`` in the writer process. ``stage.committing`` is set before the
        request is sent, and cleared again if it failed before ``COMMIT`` (nothing written); a
        failure with it set has an unknown outcome."""
        fields = [as_fields(append) for append in appends]
        request = frame(("commit", durable, now, list(marks), fields, snapshots))
        child = self._running()
        stage.committing = True
        ok, *answer = await child.ask(request)
        if not ok:
            if not answer[2]:
                stage.committing = False
            raise _error(*answer)
        changed, written = answer[0]
        return Written(set(changed), written)

    async def pragma(self, name: str, value: str | int | None = None) -> Any:
        """Set ``PRAGMA name`` to ``value`` (a word or a number) on the writer's connection, or
        only read it: its value after (e.g. ``query_only``, for a database refusing writes)."""
        ok, *answer = await self._running().ask(frame(("pragma", name, value)))
        if not ok:
            raise _error(*answer)
        return answer[0]

    def end(self) -> None:
        """End the writer process once it has answered what it was asked (without waiting)."""
        if self._child is not None:
            self._child.end()
            self._child = None

    async def aclose(self) -> None:
        """Close the connection once the requests sent are answered, and wait for the process
        to end (a clean stop: the last connection to close checkpoints the WAL into the file).
        A later request starts a new one."""
        child, self._child = self._child, None
        if child is None:
            return
        if not child.waiting.lost:
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

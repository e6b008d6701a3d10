"""SQLite's group commits on a connection and a thread of their own, held for the process's life.

A pooled connection costs every group a check-out and a check-in (a fifth of a busy game's CPU per
vote post) and hands the write to aiosqlite's thread through its private calls. The writer needs
neither: this process writes one group at a time (``Repository._write_lock``), so one connection
on one thread serves every group, called as aiosqlite calls its own (a queue in, the loop's
``call_soon_threadsafe`` out).

The thread is a daemon: it never keeps the process alive (aiosqlite's would, unless closed), so a
bot that dies without disposing of its database still exits. A write cut off by the exit is a
crash, which the store is built to survive: nobody was told it was written, and SQLite's WAL
keeps the file whole.

The connection is opened as the engine opens its own (the dialect's connect arguments, then
``bot.store.db.configure_sqlite``), so WAL, ``synchronous=FULL`` and the busy timeout hold for it
too. An in-memory database has no second connection: the repository keeps the pool's there.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Callable
from functools import partial
from queue import SimpleQueue
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.db import configure_sqlite, in_memory

T = TypeVar("T")

_Call = tuple[asyncio.Future[Any], Callable[[sqlite3.Connection, dict[str, Any]], Any] | None]
"""A call to run and the future for its answer; no call: close."""


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():  # the caller was cancelled: the call ran anyway, as aiosqlite's would
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class SqliteWriter:
    """One SQLite connection, opened on first use, and the one thread that runs calls on it."""

    def __init__(self, connect: Callable[[], sqlite3.Connection]) -> None:
        self._connect = connect
        self._calls: SimpleQueue[_Call] | None = None
        """The running thread's queue (None: no thread; the next call starts one)."""

    @classmethod
    def for_engine(cls, engine: AsyncEngine) -> SqliteWriter | None:
        """A writer on ``engine``'s SQLite file, or None for another backend or a memory
        database."""
        if engine.dialect.name != "sqlite" or in_memory(engine.url):
            return None
        args, kwargs = engine.dialect.create_connect_args(engine.url)
        kwargs["check_same_thread"] = False  # opened and used on the thread; closed from anywhere
        return cls(partial(sqlite3.connect, *args, **kwargs))

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(connection, info, *args)`` on the writer's thread (``info``: the settings in
        force on the connection, as a pooled connection's ``info``)."""
        if self._calls is None:
            self._calls = SimpleQueue()
            thread = threading.Thread(
                target=self._serve, args=(self._calls,), name="faguan-writer", daemon=True
            )
            thread.start()
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._calls.put((future, partial(_with_args, fn, args)))
        return await future

    def _serve(self, calls: SimpleQueue[_Call]) -> None:
        conn: sqlite3.Connection | None = None
        info: dict[str, Any] = {}
        while True:
            future, call = calls.get()
            if call is None:  # asked to close: the calls before it are done
                if conn is not None:
                    conn.close()
                _tell(future, True, None)
                return
            try:
                if conn is None:
                    conn = self._connect()
                    configure_sqlite(conn)
                    info = {"synchronous": "FULL"}
                value, ok = self._call(conn, info, call), True
            except BaseException as exc:  # handed to the caller, whatever it is
                value, ok = exc, False
            _tell(future, ok, value)

    def _call(
        self, conn: sqlite3.Connection, info: dict[str, Any], call: Callable[..., Any]
    ) -> Any:
        return call(conn, info)

    async def aclose(self) -> None:
        """Close the connection once the calls asked for are done, and end the thread (a
        clean stop: the last connection to close checkpoints the WAL into the file). A later
        call starts them again."""
        if self._calls is None:
            return
        calls, self._calls = self._calls, None
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        calls.put((future, None))
        await future


def _with_args(
    fn: Callable[..., Any], args: tuple[Any, ...], conn: sqlite3.Connection, info: dict[str, Any]
) -> Any:
    return fn(conn, info, *args)


def _tell(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    with contextlib.suppress(RuntimeError):  # the caller's loop closed: nobody waits
        future.get_loop().call_soon_threadsafe(_settle, future, ok, value)

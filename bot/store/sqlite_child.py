"""The writer process: SQLite's group commits, run away from the bot's GIL (``sqlite_process``).

A group's Python work (JSON of every event, effect and outcome, its rows, ``executemany``) and
each of sqlite3's hand-offs of the GIL would otherwise compete with the bot's event loop. Here
they have a process of their own; the bot only pickles the group and waits for the answer.

Started as ``python -I -S sqlite_child.py [directory]`` (a fast start: no site-packages), so it
imports only the standard library, ``sqlite_group`` (found beside this file) and, from the
directory given (where the bot found it installed), ``orjson`` for ``sqlite_group.json_dumps``.
It reads request frames from stdin, one at a time, runs them on its one connection, and writes
an answer frame for each to stdout (``sqlite_frames``). The first frame says how to open the
connection: ``(connect args, connect kwargs, busy timeout in ms)``, as the engine opens its own.
Requests: ``("commit", durable, at, marks, appends, snapshots)`` (``appends`` as
``sqlite_group.as_fields`` tuples; ``at``: the rows' time as ``sqlite_group.stored_time`` writes
it), ``("pragma", name, value or None)``, ``("close",)``. Answers:
``(True, value)``, or ``(False, type name, message, whether COMMIT was sent, sqlite error code,
sqlite error name)`` (the last two None for an error not sqlite3's).

It ends on a close request or at the end of stdin (the bot closed it, or died), closing its
connection (the last one to close checkpoints the WAL into the file). Interrupts meant for the bot
(Ctrl-C, a service stop) are ignored: the bot ends it after its last group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from bot.store import sqlite_group, sqlite_lock
    from bot.store.sqlite_frames import frame, read_frame
else:  # run as a script, without the package: its modules beside it are top-level modules
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))  # after the standard library
    sys.path += sys.argv[1:2]  # where orjson is installed, if it is (sqlite_process)
    import sqlite_group
    import sqlite_lock
    from sqlite_frames import frame, read_frame


@dataclass(slots=True)
class _Stage:
    committing: bool = False


class Connection:
    """The one connection, opened on the first request (its failure is that request's)."""

    def __init__(self, args: list[Any], kwargs: dict[str, Any], busy_timeout_ms: int) -> None:
        self._args, self._kwargs, self._busy = args, kwargs, busy_timeout_ms
        self._conn: sqlite3.Connection | None = None
        self.info: dict[str, Any] = {}
        """The pragmas known in force (``synchronous``), as ``sqlite_group.commit`` keeps them."""

    def get(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(*self._args, **self._kwargs)
            sqlite_group.configure(conn, self._busy)
            self._conn, self.info = conn, {"synchronous": "FULL"}
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def run(conn: Connection, request: tuple[Any, ...], stage: _Stage) -> Any:
    """One request's value."""
    op, *args = request
    if op == "commit":
        durable, at, marks, appends, snapshots = args
        plans = [sqlite_group.PlannedAppend(*fields) for fields in appends]
        written = sqlite_group.commit(
            conn.get(), conn.info, durable, stage, at, marks, plans, snapshots
        )
        return sorted(written.changed), written.appends
    if op == "pragma":
        return sqlite_group.pragma(conn.get(), conn.info, *args)
    raise ValueError(f"unknown request {op!r}")


def serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Answer requests until a close request or the end of ``stdin``: once the database's
    writer lock is held (``sqlite_lock``; an earlier writer process may still be finishing what
    its bot sent before it died), for the rest of this process's life."""
    args, kwargs, busy_timeout_ms = read_frame(stdin)
    path = sqlite_lock.lock_path(args, kwargs)
    if path is not None:
        sqlite_lock.hold(path)  # kept: let go when this process ends
    conn = Connection(args, kwargs, busy_timeout_ms)
    try:
        while True:
            try:
                request = read_frame(stdin)
            except EOFError:
                return
            if request[0] == "close":
                conn.close()
                stdout.write(frame((True, None)))
                stdout.flush()
                return
            stage = _Stage()
            try:
                answer: tuple[Any, ...] = (True, run(conn, request, stage))
            except Exception as exc:  # told to the bot, which raises it there
                answer = (
                    False, type(exc).__name__, str(exc), stage.committing,
                    getattr(exc, "sqlite_errorcode", None), getattr(exc, "sqlite_errorname", None),
                )  # fmt: skip
            stdout.write(frame(answer))
            stdout.flush()
    finally:
        conn.close()


def main() -> None:
    for name in ("SIGINT", "SIGTERM"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not break the frames
    with contextlib.suppress(BrokenPipeError):  # the bot is gone: nobody to answer
        serve(stdin, stdout)


if __name__ == "__main__":
    main()

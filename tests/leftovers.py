"""What a test may not leave running: our threads and processes, each the sign of a store, a
bot or a connection left open (`tests/conftest.py`'s `_nothing_left_running` fails the test).

Left open, they ran on until the garbage collector found them: dozens a worker by the end of a
run, whose last full collection (pytest's own, at the end of the session) then took so long
that execnet interrupted the worker (a `KeyboardInterrupt` at the end of every run).

Only ours are looked at (an idle library pool's thread, asyncio's default executor's say, comes
and goes as it likes and says nothing of an open resource):
- threads named `faguan…` (the SQLite commit thread of `bot.store.sqlite_here`);
- aiosqlite's connection threads (one per connection open);
- the SQLite writer processes (`bot.store.sqlite_child`) among this process's children, unless
  they ended (a zombie not yet reaped holds nothing).
"""

from __future__ import annotations

import glob
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

GRACE_SECONDS = 5.0
"""How long what a test left is waited for before the test fails: a closed connection's thread
and an ended writer process take a moment to go, on a loaded machine longer (a process's exit,
~30 ms alone). Only a test that left something waits at all."""

WRITER_PROGRAM = "sqlite_child.py"
"""What a SQLite writer process runs (`bot.store.sqlite_process.CHILD`)."""

AIOSQLITE_THREAD = "(_connection_worker_thread)"
"""How aiosqlite's connection threads' names end (threading names a thread after its target)."""


def ours(thread: threading.Thread) -> bool:
    """Whether `thread` is one of ours (see the module's docstring)."""
    return thread.name.startswith("faguan") or thread.name.endswith(AIOSQLITE_THREAD)


def our_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if ours(t) and t.is_alive()}


def _children() -> set[int]:
    """This process's children's ids (Linux: /proc; elsewhere none are known)."""
    found: set[int] = set()
    for path in glob.glob("/proc/self/task/*/children"):
        try:
            with open(path) as file:
                found.update(int(pid) for pid in file.read().split())
        except OSError:  # the thread ended meanwhile
            continue
    return found


def _running_writer(pid: int) -> bool:
    """Whether process `pid` is a SQLite writer process that has not ended."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            command = file.read()
        with open(f"/proc/{pid}/stat") as file:
            state = file.read().rsplit(")", 1)[1].split()[0]
    except OSError:  # gone
        return False
    return WRITER_PROGRAM.encode() in command and state not in ("Z", "X")


def writer_processes() -> set[int]:
    """The SQLite writer processes among this process's children still running."""
    return {pid for pid in _children() if _running_writer(pid)}


@dataclass(frozen=True)
class Running:
    """Our threads and writer processes running at one moment."""

    threads: frozenset[threading.Thread]
    processes: frozenset[int]

    @classmethod
    def now(cls) -> Running:
        return cls(frozenset(our_threads()), frozenset(writer_processes()))

    def since(self, before: Running) -> Running:
        """What runs now and did not at `before`."""
        return Running(self.threads - before.threads, self.processes - before.processes)

    def __bool__(self) -> bool:
        return bool(self.threads or self.processes)

    def describe(self) -> str:
        threads = [f"thread {t.name}" for t in sorted(self.threads, key=lambda t: t.name)]
        processes = [f"SQLite writer process {pid}" for pid in sorted(self.processes)]
        return ", ".join(threads + processes)


def left_running(before: Running, grace: float = GRACE_SECONDS) -> Running:
    """What started after `before` and still runs once `grace` seconds have passed (returning
    at once when nothing is left, as soon as the last of it ends otherwise)."""
    deadline = time.monotonic() + grace
    left = Running.now().since(before)
    while left and time.monotonic() < deadline:
        for thread in left.threads:
            thread.join(max(0.0, min(0.05, deadline - time.monotonic())))
        if left.processes:
            time.sleep(0.01)
        left = Running.now().since(before)
    return left


@contextmanager
def nothing_left_running(why: str | None = None, grace: float = GRACE_SECONDS) -> Iterator[None]:
    """Fails (`pytest.fail`) naming what of ours started inside and still runs `grace` seconds
    after it; nothing is looked at if `why` says why something may be left (a test's
    `leaves_running` marker), which must be a reason, not empty."""
    if why is not None:
        if not why.strip():
            raise TypeError("leaving something running takes a reason why")
        yield
        return
    before = Running.now()
    yield
    left = left_running(before, grace)
    if left:
        pytest.fail(f"the test left running: {left.describe()}", pytrace=False)

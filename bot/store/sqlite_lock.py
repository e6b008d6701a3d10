"""The writer process's lock: a restarted bot reads nothing before an earlier writer has ended.

A writer process (``sqlite_child``) answers every request it was sent before it ends, also when
the bot that sent it died: a group already on its way commits after the crash. A bot restarted
at once could read the games before that commit lands and never see it: the inputs of the group
would be found again (their message ids), but its effects would stay undone until the game's
next conflict or the next restart (a finished game's last posts: never). So each writer process
holds a shared ``flock`` on a file beside the database (``<database>-writer``) for its whole life
(the kernel drops it when the process ends, however it ends), and the bot's recovery first waits
until nobody holds it (``wait_until_free``: an exclusive lock could be taken). Shared, so that
writers of live processes (a command-line tool beside the bot) never wait for each other; the
wait is bounded, so a writer that lives on (such a tool) delays a start by ``at_most`` only.

Standard library only: the writer process imports it too. Where ``fcntl`` is missing (Windows)
there is no lock, and the restart's wait is only what a process start takes.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]

POLL_SECONDS = 0.01
"""How often a restarted bot looks whether the earlier writer process has ended."""


def lock_path(args: Sequence[Any], kwargs: Mapping[str, Any]) -> str | None:
    """The lock file of the database that ``sqlite3.connect(*args, **kwargs)`` opens, or None for
    a memory database (nothing outlives its process) or where locks are not supported."""
    if fcntl is None:
        return None
    database = kwargs.get("database", args[0] if args else None)
    if isinstance(database, bytes | os.PathLike):
        database = os.fsdecode(database)
    if not isinstance(database, str) or database in ("", ":memory:"):
        return None
    if kwargs.get("uri"):
        parts = urlsplit(database)
        if parts.scheme != "file" or parse_qs(parts.query).get("mode") == ["memory"]:
            return None
        database = parts.path
    return f"{database}-writer"


def hold(path: str) -> int | None:
    """Take a share of the lock and keep it: the open descriptor, never closed by the writer
    process (the lock is let go when the process ends). None where the file cannot be opened
    (a safeguard, not a condition of writing: the writes go on)."""
    assert fcntl is not None
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    fcntl.flock(fd, fcntl.LOCK_SH)
    return fd


def is_free(path: str) -> bool:
    """Whether no writer process holds a share of the lock now (taken whole and let go at once
    if free); a file that cannot be opened holds no lock."""
    assert fcntl is not None
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # lets the lock go, if it was taken
    return True


async def wait_until_free(path: str, at_most: float) -> float | None:
    """Once nobody holds the lock, or after ``at_most`` seconds: the seconds waited (0.0: it was
    free), None if it was still held then. Polled, so a cancelled wait leaves no thread blocked
    behind it."""
    if is_free(path):
        return 0.0
    loop = asyncio.get_running_loop()
    start = loop.time()
    while loop.time() - start < at_most:
        await asyncio.sleep(POLL_SECONDS)
        if is_free(path):
            return loop.time() - start
    return None

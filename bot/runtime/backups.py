"""Backups the bot takes of its own database, when `[backup] folder` is set.

Each is `faguan db backup`: on SQLite (`bot.store.backup`) one commit's database, checked, a new
file, taken on a worker thread; on PostgreSQL (`bot.store.pg_backup`) a `pg_dump` archive of one
snapshot, read back, by the `pg_dump` on the bot's PATH. The bot goes on meanwhile. They are named
by the time they were taken (`faguan-20261203T040000Z.db`, or `.dump` for PostgreSQL; UTC), so
the next one is due `every` after the newest in the folder — a bot restarted more often than
`every` still takes them — and all but the newest `keep` of those names are removed (nothing else
in the folder is touched). Each file is its owner's alone (mode 0600, whatever the umask: it holds
the sealed seeds of the games in play). A failure is logged and tried again `every` later; it never
stops the bot. Log lines name files, counts and the database's or the tool's reason only.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import re
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]  # no type information shipped
from sqlalchemy.engine import URL

from bot.config import BackupSettings
from bot.runtime.metrics import Metrics
from bot.runtime.timing import Clock
from bot.store import pg_backup
from bot.store.backup import BackupRefused, backup, os_reason

log = logging.getLogger(__name__)

NAME = re.compile(r"faguan-(\d{8}T\d{6}Z)\.(?:db|dump)")
"""The name of a backup the bot took: the UTC time it was taken (.dump: a pg_dump archive)."""
STAMP = "%Y%m%dT%H%M%SZ"


class AutoBackups:
    """Takes a backup every `settings.every`, keeping the newest `settings.keep`."""

    def __init__(
        self, url: URL, settings: BackupSettings, clock: Clock, metrics: Metrics | None = None
    ) -> None:
        assert settings.folder is not None
        self.metrics = metrics
        """Where each backup taken or failed is counted (the /metrics endpoint), if it is on."""
        self.url = url
        self.folder = Path(settings.folder)
        self.every = settings.every
        self.keep = settings.keep
        self.clock = clock
        self._task: asyncio.Task[None] | None = None
        self._tried: dt.datetime | None = None
        """When the last backup was tried (a failed one leaves no file to count from)."""

    def start(self) -> None:
        """Run in the running event loop until `close`."""
        self._task = asyncio.get_running_loop().create_task(self._run())
        log.info(
            "backups: every %s into %s, the newest %s kept", self.every, self.folder, self.keep
        )

    def close(self) -> None:
        """Stop (a SQLite backup on its worker thread finishes or removes its partial file; a
        `pg_dump` under way is ended and its partial file removed)."""
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _run(self) -> None:
        while True:
            try:
                wait = (self.due() - self.clock.now()).total_seconds()
            except OSError as exc:  # the folder unreadable: said, and looked at again later
                self._failed(os_reason(exc))
                wait = self.every.total_seconds()
            if wait > 0:
                await asyncio.sleep(wait)
            self._tried = self.clock.now()
            try:
                await self.take()
            except Exception as exc:  # unforeseen: said (its kind only), and the timer goes on
                self._failed(f"{type(exc).__name__} (a bug: please report it)")

    def taken(self) -> list[tuple[dt.datetime, Path]]:
        """The bot's backups in the folder, oldest first."""
        if not self.folder.is_dir():
            return []
        found = []
        for path in self.folder.iterdir():
            match = NAME.fullmatch(path.name)
            if match is not None:
                when = dt.datetime.strptime(match[1], STAMP).replace(tzinfo=dt.UTC)
                found.append((when, path))
        return sorted(found)

    def due(self) -> dt.datetime:
        """When the next backup is due: `every` after the newest in the folder and after the
        last one tried (so a failing one is tried again `every` later, not at once); now if
        there is neither."""
        taken = self.taken()
        after = [when for when in (taken[-1][0] if taken else None, self._tried) if when]
        return max(after) + self.every if after else self.clock.now()

    async def take(self) -> Path | None:
        """One backup now, then the oldest beyond `keep` removed; None if it failed (logged)."""
        now = self.clock.now().astimezone(dt.UTC)
        postgres = self.url.get_backend_name() == "postgresql"
        path = self.folder / f"faguan-{now.strftime(STAMP)}.{'dump' if postgres else 'db'}"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            if postgres:
                copy = await pg_backup.backup(self.url, path)
            else:
                copy = await asyncio.to_thread(backup, self.url, path)
        except BackupRefused as refused:
            self._failed(refused.line)
            return None
        except OSError as exc:
            self._failed(os_reason(exc))
            return None
        except asyncpg.PostgresError as exc:  # the server's reason (no game's content is in it)
            self._failed(f"PostgreSQL: {type(exc).__name__}: {exc}")
            return None
        log.info(
            "backup taken: %s (%s games, %s in play, %.1f MB)",
            path, copy.games, copy.active, copy.size / 1e6,
        )  # fmt: skip
        if self.metrics is not None:
            self.metrics.backup_taken.set(now.timestamp())
        for _, old in self.taken()[: -self.keep]:
            with contextlib.suppress(FileNotFoundError):
                old.unlink()
        return path

    def _failed(self, why: str) -> None:
        log.error("backup not taken: %s", why)
        if self.metrics is not None:
            self.metrics.backups_failed.inc()

"""Backups of a SQLite database: a consistent copy taken while the bot runs, and putting one back.

Copying the file (`cp`) while the bot writes can give a torn database: the newest commits live in
the WAL file beside it. SQLite's online backup copies every page inside one read transaction, so
a copy is the database as of one commit, and the bot goes on writing meanwhile (in WAL mode a
reader blocks no writer). Each copy is written beside its destination, checked (`PRAGMA
integrity_check`, a faguan schema this faguan knows or an older one), made one self-contained
file (no WAL of its own) and only then given its name, which it never takes from an existing
file: a failed or refused backup leaves nothing that looks like one.

A restore needs the bot stopped: the caller holds the lock a running bot holds
(`bot.store.claims`). The database it replaces is kept, renamed with its WAL and shared-memory
files (SQLite pairs them by name, so the kept copy stays whole and the restored file is never
given a stale WAL). Outbox ids are never reused (each is an effect's idempotency key): the
restored file's outbox counter jumps past any id the replaced timeline may have used.

PostgreSQL: `bot.store.pg_backup`, by its own tools, checked the same way.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from pathlib import Path

from sqlalchemy.engine import URL

from bot.store.db import in_memory
from bot.store.migrate import is_known_revision

OUTBOX_GAP = 1 << 32
"""How far a restore moves the outbox counter past the restored file's last id: more effects than
any game ever records between a backup and its restore."""


class Refusal(Enum):
    """Why a backup or a restore was not done (the CLI turns each into an exit status)."""

    POSTGRESQL = "postgresql"
    IN_MEMORY = "in_memory"
    EXISTS = "exists"
    MISSING = "missing"
    NOT_FAGUAN = "not_faguan"
    DAMAGED = "damaged"
    TOO_NEW = "too_new"
    NO_TOOL = "no_tool"
    TOOL_FAILED = "tool_failed"
    IN_USE = "in_use"
    NO_PRIVILEGE = "no_privilege"


class BackupRefused(Exception):
    """A backup or restore that was not done; nothing was changed. The message says what to do."""

    def __init__(self, why: Refusal, line: str) -> None:
        super().__init__(line)
        self.why = why
        self.line = line


@dataclass(frozen=True)
class Copy:
    """A checked database file: where it is, its games and its schema revision."""

    path: Path
    games: int
    active: int
    revision: str
    size: int


def os_reason(exc: OSError) -> str:
    """An operating-system failure in a line: what went wrong, and with which file (if any: a
    connection to a database server names none)."""
    what = exc.strerror or str(exc) or type(exc).__name__
    return what if exc.filename is None else f"{what}: {exc.filename}"


def database_file(url: URL) -> Path:
    """The SQLite file of `url`; refused for PostgreSQL and for an in-memory database."""
    if url.get_backend_name() != "sqlite":
        raise BackupRefused(
            Refusal.POSTGRESQL,
            "the database is PostgreSQL: its backups are pg_dump archives (faguan db backup and "
            "restore run pg_dump and pg_restore for it; docs/deploy.md, Backups)",
        )
    if in_memory(url):
        raise BackupRefused(Refusal.IN_MEMORY, "an in-memory database has no file to back up")
    return Path(url.database or "")


def backup(url: URL, dest: Path) -> Copy:
    """Copy the bot's database to `dest` (a new file), consistent as of one commit, while the bot
    may be running; checked before it takes its name."""
    source = database_file(url)
    new_file(dest)
    if not source.is_file():
        raise BackupRefused(Refusal.MISSING, f"no database at {source}")
    with partial_beside(dest, "backup") as partial:
        _copy(source, partial)
        checked = _check(partial, f"the database {source}")
        place(partial, dest)
    return dataclasses.replace(checked, path=dest)


def new_file(dest: Path) -> None:
    """Refused unless `dest` can be a new file: a free name in an existing folder."""
    if dest.exists():
        raise BackupRefused(Refusal.EXISTS, f"{dest} exists: name a new file")
    if not dest.parent.is_dir():
        raise BackupRefused(Refusal.MISSING, f"no folder {dest.parent} for {dest.name}")


def restore(url: URL, backup_file: Path, now: datetime) -> tuple[Copy, Path | None]:
    """Put `backup_file` in the place of the bot's database (the bot stopped: the caller holds its
    lock). Returns the restored database and where the one it replaced is kept (None if there was
    none)."""
    target = database_file(url)
    if not backup_file.is_file():
        raise BackupRefused(Refusal.MISSING, f"no backup at {backup_file}")
    with partial_beside(target, "restoring") as partial:
        _copy(backup_file, partial)
        checked = _check(partial, f"the backup {backup_file}")
        _move_outbox_counter(partial)
        kept = _keep(target, now)
        try:
            place(partial, target)
        except BaseException:
            if kept is not None:  # put the replaced database back as it was
                _rename_with_sidecars(kept, target)
            raise
    return dataclasses.replace(checked, path=target), kept


@contextlib.contextmanager
def partial_beside(beside: Path, what: str) -> Iterator[Path]:
    """A scratch file in `beside`'s folder (so it can be renamed into place), removed unless it
    was placed."""
    partial = beside.with_name(f".{beside.name}.{what}-{os.getpid()}")
    try:
        yield partial
    finally:
        for leftover in (partial, *_sidecars(partial)):
            leftover.unlink(missing_ok=True)


def _sidecars(database: Path) -> tuple[Path, Path]:
    """SQLite's WAL and shared-memory files of `database` (named after it)."""
    return database.with_name(database.name + "-wal"), database.with_name(database.name + "-shm")


def _copy(source: Path, to: Path) -> None:
    """SQLite's online backup of `source` into `to`, in one step (one read transaction: one
    commit's database), then made a single file (rollback journal, not WAL)."""
    try:
        with (
            contextlib.closing(sqlite3.connect(source)) as src,
            contextlib.closing(sqlite3.connect(to)) as dst,
        ):
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")
    except sqlite3.DatabaseError as exc:
        raise BackupRefused(
            Refusal.NOT_FAGUAN, f"{source} is not a SQLite database ({exc})"
        ) from None


def _check(copy: Path, what: str) -> Copy:
    """The copy's integrity and schema, and what it holds; refused if it is not a whole faguan
    database this faguan can run."""
    with contextlib.closing(sqlite3.connect(copy)) as conn:
        try:
            found = conn.execute("PRAGMA integrity_check").fetchall()
            if found != [("ok",)]:
                first = found[0][0] if found else "no answer"
                raise BackupRefused(Refusal.DAMAGED, f"{what} is damaged: {first}")
            revisions = [r for (r,) in conn.execute("SELECT version_num FROM alembic_version")]
            games, active = conn.execute(
                "SELECT count(*), count(*) FILTER (WHERE status = 'active') FROM games"
            ).fetchone()
        except sqlite3.OperationalError:  # no such table
            raise BackupRefused(Refusal.NOT_FAGUAN, f"{what} is not a faguan database") from None
        except sqlite3.DatabaseError as exc:  # malformed
            raise BackupRefused(Refusal.DAMAGED, f"{what} is damaged ({exc})") from None
    if len(revisions) != 1:
        raise BackupRefused(Refusal.NOT_FAGUAN, f"{what} has no faguan schema revision")
    revision = revisions[0]
    if not is_known_revision(revision):
        raise BackupRefused(
            Refusal.TOO_NEW,
            f"{what} is at schema revision {revision}, which this faguan does not have: a newer "
            "faguan wrote it (upgrade faguan first)",
        )
    return Copy(copy, int(games), int(active or 0), revision, copy.stat().st_size)


def _move_outbox_counter(database: Path) -> None:
    """Outbox ids continue past any the replaced timeline may have given (`OUTBOX_GAP`)."""
    with contextlib.closing(sqlite3.connect(database)) as conn:
        (last,) = conn.execute(
            "SELECT max(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'outbox'), 0), "
            "COALESCE((SELECT max(id) FROM outbox), 0))"
        ).fetchone()
        with conn:
            conn.execute("DELETE FROM sqlite_sequence WHERE name = 'outbox'")
            conn.execute(
                "INSERT INTO sqlite_sequence (name, seq) VALUES ('outbox', ?)",
                (int(last) + OUTBOX_GAP,),
            )


def _keep(database: Path, now: datetime) -> Path | None:
    """Rename the database being replaced, with its WAL and shared-memory files (so the kept
    copy is whole and none of them is left for the restored file); None if there is none."""
    if not database.exists():
        return None
    stamp = f"{database.name}.before-restore-{now:%Y%m%dT%H%M%SZ}"
    kept, n = database.with_name(stamp), 1
    while any(p.exists() for p in (kept, *_sidecars(kept))):  # two restores within a second
        n += 1
        kept = database.with_name(f"{stamp}-{n}")
    _rename_with_sidecars(database, kept)
    return kept


def _rename_with_sidecars(database: Path, to: Path) -> None:
    for old, new in zip((database, *_sidecars(database)), (to, *_sidecars(to)), strict=True):
        if old.exists():
            old.rename(new)


def place(partial: Path, dest: Path) -> None:
    """Give the checked copy its name, durably, never over an existing file."""
    with open(partial, "rb") as handle:
        os.fsync(handle.fileno())
    try:
        os.link(partial, dest)  # fails if dest exists (a rename would replace it)
    except FileExistsError:
        raise BackupRefused(Refusal.EXISTS, f"{dest} exists: name a new file") from None
    except OSError:  # no hard links on this file system (some network or FAT mounts)
        if dest.exists():
            raise BackupRefused(Refusal.EXISTS, f"{dest} exists: name a new file") from None
        partial.rename(dest)
    else:
        partial.unlink()
    with contextlib.suppress(OSError):  # not every file system syncs a folder
        folder = os.open(dest.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)

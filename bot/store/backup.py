"""Backups of a SQLite database: a consistent copy taken while the bot runs, and putting one back.

Copying the file (`cp`) while the bot writes can give a torn database: the newest commits live in
the WAL file beside it. SQLite's online backup copies every page inside one read transaction, so
a copy is the database as of one commit, and the bot goes on writing meanwhile (in WAL mode a
reader blocks no writer). Each copy is written beside its destination, checked (`PRAGMA
integrity_check`, a faguan schema this faguan knows or an older one), made one self-contained
file (no WAL of its own) and only then given its name, which it never takes from an existing
file: a failed or refused backup leaves nothing that looks like one.

A restore needs the bot stopped: the caller holds the lock a running bot holds
(`bot.store.claims`). The bot's path names a whole database at every step, so a restore killed
half-way leaves the old database or the new one there, never none (a bot started on none would
begin a new, empty one): the WAL of the database being replaced is first folded into it (a
checkpoint: what it holds is unchanged), the file is given its kept name as a second name, its
WAL and shared-memory files (if any are left) go to the kept name too (SQLite pairs them by name:
the kept copy stays whole and the restored file is never given a stale WAL), and the restored
file then takes the bot's path in one rename. Outbox ids are never reused (each is an effect's
idempotency key): the restored file's outbox counter jumps past any id the replaced timeline may
have used.

Every file written is its owner's alone (`PRIVATE`): the database holds the sealed seeds of the
games in play, from which every hidden role follows. A restored database takes the mode of the
one it replaces (the operator's choice for that path).

PostgreSQL: `bot.store.pg_backup`, by its own tools, checked the same way.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import sqlite3
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from pathlib import Path

from sqlalchemy.engine import URL

from bot.store.db import in_memory
from bot.store.migrate import is_known_revision

PRIVATE = 0o600
"""The mode of every backup and scratch file: the owner's alone, whatever the umask and whatever
the source file's mode (group or world bits there are for the live file, not for copies of its
secrets that travel; a pg_dump archive has no source file). Read and write for the owner: a
backup is read to restore it, and a scratch file is written while it is made."""

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
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else PRIVATE
    with partial_beside(target, "restoring") as partial:
        _copy(backup_file, partial)
        checked = _check(partial, f"the backup {backup_file}")
        _move_outbox_counter(partial)
        _sync(partial)
        os.chmod(partial, mode)  # the replaced file's: whoever could open it, and no one else
        _fold_wal(target)
        kept = _keep(target, now)
        try:
            os.replace(partial, target)  # one step: the old database or the new one, never none
        except BaseException:
            if kept is not None:  # put the replaced database back as it was
                _unkeep(kept, target)
            raise
        _sync_folder(target.parent)
    return dataclasses.replace(checked, path=target), kept


@contextlib.contextmanager
def partial_beside(beside: Path, what: str) -> Iterator[Path]:
    """A scratch file in `beside`'s folder (so it can be renamed into place), new and empty, of
    mode `PRIVATE` from its first byte on (SQLite and pg_dump write into it and keep its mode);
    removed unless it was placed."""
    partial = beside.with_name(f".{beside.name}.{what}-{os.getpid()}")
    scratch = (partial, *_sidecars(partial), partial.with_name(partial.name + "-journal"))
    try:
        for leftover in scratch:  # of a killed process that had this process's id
            leftover.unlink(missing_ok=True)
        handle = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE)
        try:
            os.fchmod(handle, PRIVATE)  # not less for a stricter umask: it is written to
        finally:
            os.close(handle)
        yield partial
    finally:
        for leftover in scratch:
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


def _fold_wal(database: Path) -> None:
    """Fold the database's WAL into its file (a checkpoint: what it holds is unchanged; SQLite
    does the same when it next opens it), so that the file alone is the whole database while its
    WAL moves to the kept name. A file SQLite cannot open is left as it is (its WAL still goes
    with it to the kept name)."""
    wal, _ = _sidecars(database)
    if not wal.exists() or wal.stat().st_size == 0:
        return
    with (
        contextlib.suppress(sqlite3.DatabaseError),
        contextlib.closing(sqlite3.connect(database)) as conn,
    ):
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()


def _keep(database: Path, now: datetime) -> Path | None:
    """Give the database being replaced its kept name as a second name (it stays at its own until
    the restored file takes that in one step) and move its WAL and shared-memory files, if any,
    to the kept name (so the kept copy is whole and none of them is left for the restored file);
    None if there is no database."""
    if not database.exists():
        return None
    stamp = f"{database.name}.before-restore-{now:%Y%m%dT%H%M%SZ}"
    kept, n = database.with_name(stamp), 1
    while any(p.exists() for p in (kept, *_sidecars(kept))) or not _second_name(database, kept):
        n += 1  # two restores within a second
        kept = database.with_name(f"{stamp}-{n}")
    try:
        for old, new in zip(_sidecars(database), _sidecars(kept), strict=True):
            if old.exists():
                old.rename(new)
    except BaseException:
        _unkeep(kept, database)
        raise
    return kept


def _second_name(database: Path, kept: Path) -> bool:
    """`kept` made a second name of `database` (a copy, of the same mode, where the file system
    has no hard links); False if `kept` exists (never replaced)."""
    try:
        os.link(database, kept, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError:  # no hard links on this file system (some network or FAT mounts)
        try:
            handle = os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE)
        except FileExistsError:
            return False
        try:
            with open(database, "rb") as source, open(handle, "wb", closefd=False) as copy:
                shutil.copyfileobj(source, copy)
                copy.flush()
                os.fsync(handle)
            os.fchmod(handle, stat.S_IMODE(database.stat().st_mode))
        except BaseException:
            kept.unlink(missing_ok=True)
            raise
        finally:
            os.close(handle)
    return True


def _unkeep(kept: Path, database: Path) -> None:
    """Undo `_keep` (the database still at its own name): its WAL and shared-memory files back,
    the kept name removed."""
    for new, old in zip(_sidecars(kept), _sidecars(database), strict=True):
        if new.exists():
            new.rename(old)
    kept.unlink(missing_ok=True)


def _sync(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def _sync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system syncs a folder
        handle = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


def place(partial: Path, dest: Path) -> None:
    """Give the checked copy its name, durably, never over an existing file; of mode `PRIVATE`
    (whatever wrote it)."""
    with open(partial, "rb") as handle:
        os.fchmod(handle.fileno(), PRIVATE)
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
    _sync_folder(dest.parent)

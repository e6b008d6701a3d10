"""Backups of a PostgreSQL database by PostgreSQL's own tools, checked as a SQLite backup is.

backup: ``pg_dump`` (its custom format) of one snapshot — exported by a read-only repeatable-read
transaction of ours, in which the schema revision and the games the dump holds are read too —
written beside the destination, read back whole (``pg_restore`` of every block, to nowhere), and
only then given its name, never an existing file's (``bot.store.backup.place``). The bot goes on
writing meanwhile. The file is its owner's alone (mode 0600, ``bot.store.backup.PRIVATE``) from
before pg_dump writes its first byte: pg_dump writes into the file made for it and keeps its mode.

restore: with every faguan process stopped, ``pg_restore`` into a new database on the same
server, checked there (a faguan schema this faguan knows), its outbox counter moved on
(``OUTBOX_GAP``: no effect id given twice across the two timelines); then the two databases swap
names in one transaction: the restored one takes the bot's database name, and the one it replaces
is kept whole as ``<name>_before_restore_<UTC time>``. A running bot keeps connections open to
its database: a restore refuses while any is (checked first, and by PostgreSQL itself, which
renames no database anyone is connected to), so it cannot pull a database from under a bot.

The tools are PostgreSQL's client programs on ``PATH``, of the server's major version (checked
first): an older ``pg_dump`` refuses the server, a newer one writes archives only a newer
``pg_restore`` reads, and what a newer ``pg_restore`` sends may not load on an older server. The
password goes to them in their environment, never on a command line (``ps`` shows those to every
user).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import asyncpg  # type: ignore[import-untyped]  # no type information shipped
from sqlalchemy.engine import URL

from bot.store.backup import (
    OUTBOX_GAP,
    BackupRefused,
    Copy,
    Refusal,
    new_file,
    partial_beside,
    place,
)
from bot.store.migrate import is_known_revision

T = TypeVar("T")

ADMIN_DATABASES = ("postgres", "template1")
"""Where CREATE and ALTER DATABASE are run from (not the bot's own: it is renamed)."""
NAME_MAX = 63
"""PostgreSQL's longest identifier, in bytes."""


def _dsn(url: URL, database: str | None = None) -> str:
    """A libpq / asyncpg URL of `url`'s server (and `database`, if given), with its password."""
    plain = url.set(drivername="postgresql")
    if database is not None:
        plain = plain.set(database=database)
    return plain.render_as_string(hide_password=False)


def _tool_env(url: URL) -> dict[str, str]:
    """The tools' environment: this process's, with the password (not on their command line)."""
    env = dict(os.environ)
    if url.password is not None:
        env["PGPASSWORD"] = str(url.password)
    return env


def _tool_dsn(url: URL, database: str | None = None) -> str:
    """The URL the tools connect with: no password in it."""
    return _dsn(url.set(password=None), database)


def _tool(name: str, env: dict[str, str]) -> str:
    """Where the tool is, on the `PATH` of the environment it will run in."""
    found = shutil.which(name, path=env.get("PATH"))
    if found is None:
        raise BackupRefused(
            Refusal.NO_TOOL,
            f"{name} not found on PATH: install PostgreSQL's client programs (of the server's "
            "major version or newer) or put their folder first on PATH",
        )
    return found


async def _run_tool(name: str, *args: str, env: dict[str, str]) -> str:
    """Run a PostgreSQL tool; its standard output, or BackupRefused with its last error line."""
    process = await asyncio.create_subprocess_exec(
        _tool(name, env),
        *args,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await process.communicate()
    except BaseException:  # cancelled (the bot stopping): the tool does not outlive the call
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise
    if process.returncode != 0:
        raise BackupRefused(Refusal.TOOL_FAILED, f"{name} failed: {_reason(err)}")
    return out.decode(errors="replace")


def _reason(stderr: bytes) -> str:
    """A tool's failure in a line: its error, detail and hint lines (else its last line)."""
    lines = [line.strip() for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    said = [line for line in lines if any(k in line for k in ("error:", "detail:", "hint:"))]
    return " / ".join(said or lines[-1:])


async def _tool_major(name: str, env: dict[str, str]) -> int:
    """The major version of a PostgreSQL tool (`pg_restore (PostgreSQL) 16.4` → 16)."""
    found = re.search(r"\) (\d+)", await _run_tool(name, "--version", env=env))
    return int(found[1]) if found else 0


async def _check_version(name: str, env: dict[str, str], conn: Any, *, older_ok: bool) -> None:
    """Refused unless the tool is of the server's major version (or older, if `older_ok`): a
    newer pg_dump writes archives only a newer pg_restore reads, and what a newer pg_restore
    sends may not load on an older server (PostgreSQL 17's `SET transaction_timeout` on 15)."""
    tool = await _tool_major(name, env)
    server = int(await conn.fetchval("SHOW server_version_num")) // 10_000
    if tool > server or (tool < server and not older_ok):
        raise BackupRefused(
            Refusal.NO_TOOL,
            f"{name} is PostgreSQL {tool}'s and the server {server}: put PostgreSQL {server}'s "
            f"client programs first on PATH (on Debian and Ubuntu: postgresql-client-{server}, "
            f"then PATH=/usr/lib/postgresql/{server}/bin:$PATH)",
        )


async def _held(conn: Any, what: str, path: Path) -> Copy:
    """What the database on `conn` holds; refused unless it is a faguan schema this faguan
    knows."""
    try:
        revisions = [
            r["version_num"] for r in await conn.fetch("SELECT version_num FROM alembic_version")
        ]
        games, active = await conn.fetchrow(
            "SELECT count(*), count(*) FILTER (WHERE status = 'active') FROM games"
        )
    except asyncpg.UndefinedTableError:
        raise BackupRefused(Refusal.NOT_FAGUAN, f"{what} is not a faguan database") from None
    if len(revisions) != 1:
        raise BackupRefused(Refusal.NOT_FAGUAN, f"{what} has no faguan schema revision")
    revision = str(revisions[0])
    if not is_known_revision(revision):
        raise BackupRefused(
            Refusal.TOO_NEW,
            f"{what} is at schema revision {revision}, which this faguan does not have: a newer "
            "faguan wrote it (upgrade faguan first)",
        )
    size = path.stat().st_size if path.exists() else 0
    return Copy(path, int(games), int(active), revision, size)


async def backup(url: URL, dest: Path) -> Copy:
    """Dump the bot's database to `dest` (a new file) as of one snapshot, while the bot may run;
    read back before it takes its name."""
    new_file(dest)
    env = _tool_env(url)
    for tool in ("pg_dump", "pg_restore"):  # both there before anything is written
        _tool(tool, env)
    conn = await asyncpg.connect(_dsn(url))
    try:
        await _check_version("pg_dump", env, conn, older_ok=False)
        with partial_beside(dest, "backup") as partial:
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                snapshot = await conn.fetchval("SELECT pg_export_snapshot()")
                held = await _held(conn, f"the database {url.database}", partial)
                await _run_tool(
                    "pg_dump", "--format=custom", f"--snapshot={snapshot}", f"--file={partial}",
                    f"--dbname={_tool_dsn(url)}", env=env,
                )  # fmt: skip
            # every block read back and decoded (a restore's SQL, thrown away)
            await _run_tool("pg_restore", f"--file={os.devnull}", str(partial), env=env)
            size = partial.stat().st_size
            place(partial, dest)
    finally:
        await conn.close()
    return Copy(dest, held.games, held.active, held.revision, size)


async def restore(url: URL, dump: Path, now: datetime) -> tuple[Copy, str | None]:
    """Put the dump `dump` in the place of the bot's database (every faguan process stopped).
    Returns what the restored database holds (as the backup file's) and the name the replaced
    one is kept under (None if there was none)."""
    name = str(url.database or "")
    if not dump.is_file():
        raise BackupRefused(Refusal.MISSING, f"no backup at {dump}")
    env = _tool_env(url)
    listing = await _listing(dump, env)
    if not {"alembic_version", "games", "outbox"} <= listing:
        raise BackupRefused(Refusal.NOT_FAGUAN, f"the backup {dump} is not a faguan database")
    kept = _fit(name, f"_before_restore_{now:%Y%m%dt%H%M%Sz}")  # lower case: no quoting
    async with _admin(url) as admin:
        if await admin.fetchval(_OTHERS_CONNECTED, name):  # at once, not after a whole restore
            raise _in_use(name)
        await _check_version("pg_restore", env, admin, older_ok=True)
        async with _scratch(admin, _fit(name, f"_restoring_{os.getpid()}")) as scratch:
            await _run_tool(
                "pg_restore", "--no-owner", "--no-privileges", "--exit-on-error",
                "--single-transaction", f"--dbname={_tool_dsn(url, scratch)}", str(dump),
                env=env,
            )  # fmt: skip
            held = await _in_database(url, scratch, lambda conn: _check_restored(conn, dump))
            exists = await admin.fetchval(_EXISTS, name)
            kept = await _free_name(admin, kept)
            try:
                async with admin.transaction():  # the two names swap at once, or neither does
                    if exists:
                        await admin.execute(
                            f"ALTER DATABASE {_ident(name)} RENAME TO {_ident(kept)}"
                        )
                    await admin.execute(
                        f"ALTER DATABASE {_ident(scratch)} RENAME TO {_ident(name)}"
                    )
            except asyncpg.ObjectInUseError:  # connected since (PostgreSQL waited five seconds)
                raise _in_use(name) from None
    return held, kept if exists else None


async def _free_name(admin: Any, name: str) -> str:
    """`name`, or with the first free suffix `_2`, `_3`… (two restores within a second)."""
    candidate, n = name, 1
    while await admin.fetchval(_EXISTS, candidate):
        n += 1
        candidate = f"{name}_{n}"
    return candidate


_EXISTS = "SELECT 1 FROM pg_database WHERE datname = $1"
_OTHERS_CONNECTED = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()"
)


def _in_use(name: str) -> BackupRefused:
    return BackupRefused(
        Refusal.IN_USE,
        f"the database {name} is in use (a running bot, or another connection): stop every "
        "faguan process first",
    )


async def _check_restored(conn: Any, dump: Path) -> Copy:
    """The restored database's contents, and its outbox counter moved on."""
    held = await _held(conn, f"the backup {dump}", dump)
    sequence = await conn.fetchval("SELECT pg_get_serial_sequence('outbox', 'id')")
    given = await conn.fetchval(f"SELECT last_value FROM {sequence}")  # a name the server quoted
    last = max(int(given), int(await conn.fetchval("SELECT coalesce(max(id), 0) FROM outbox")))
    await conn.execute("SELECT setval($1::regclass, $2)", sequence, last + OUTBOX_GAP)
    return held


async def _listing(dump: Path, env: dict[str, str]) -> set[str]:
    """The tables whose rows a dump holds; refused if it is not a pg_dump archive."""
    try:
        text = await _run_tool("pg_restore", "--list", str(dump), env=env)
    except BackupRefused as failed:
        if failed.why is Refusal.NO_TOOL:
            raise
        if "unsupported version" in failed.line:
            raise BackupRefused(
                Refusal.NO_TOOL,
                f"{dump} was written by a newer pg_dump than this pg_restore ({failed.line}): "
                "put the client programs of the server's PostgreSQL version first on PATH",
            ) from None
        raise BackupRefused(
            Refusal.NOT_FAGUAN, f"{dump} is not a pg_dump archive ({failed.line})"
        ) from None
    tables = set()
    for line in text.splitlines():
        words = line.split()
        if not line.startswith(";") and "TABLE DATA" in line and len(words) >= 7:
            tables.add(words[words.index("DATA") + 2])
    return tables


def _fit(name: str, suffix: str) -> str:
    """`name` + `suffix`, `name` cut short so that the whole, and a `_NN` after it, stays within
    PostgreSQL's identifier length (which would otherwise cut it silently)."""
    room = NAME_MAX - len(suffix.encode()) - 3
    return name.encode()[:room].decode(errors="ignore") + suffix


def _ident(name: str) -> str:
    """A database name quoted as an identifier."""
    return '"' + name.replace('"', '""') + '"'


@contextlib.asynccontextmanager
async def _admin(url: URL) -> AsyncIterator[Any]:
    """A connection to the server's maintenance database, never the bot's own (no connection
    can rename the database it is connected to): `postgres`, else `template1`."""
    last: Exception | None = None
    for database in (d for d in ADMIN_DATABASES if d != url.database):
        try:
            conn = await asyncpg.connect(_dsn(url, database))
        except asyncpg.InvalidCatalogNameError as exc:  # no such database: try the next
            last = exc
            continue
        try:
            yield conn
        finally:
            await conn.close()
        return
    assert last is not None
    raise last


@contextlib.asynccontextmanager
async def _scratch(admin: Any, name: str) -> AsyncIterator[str]:
    """A new database `name`, dropped again unless it was renamed (restored into place)."""
    try:
        await admin.execute(f"CREATE DATABASE {_ident(name)}")
    except asyncpg.InsufficientPrivilegeError:
        raise BackupRefused(
            Refusal.NO_PRIVILEGE,
            "the database's role may not create databases (CREATEDB): restore as a role that may "
            "and owns the bot's database, or by hand (docs/deploy.md, Backups)",
        ) from None
    try:
        yield name
    finally:
        with contextlib.suppress(asyncpg.PostgresError):
            await admin.execute(f"DROP DATABASE IF EXISTS {_ident(name)} WITH (FORCE)")


async def _in_database(url: URL, database: str, work: Callable[[Any], Awaitable[T]]) -> T:
    conn = await asyncpg.connect(_dsn(url, database))
    try:
        return await work(conn)
    finally:
        await conn.close()

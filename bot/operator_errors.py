"""What an operator sees when `faguan run` or `faguan db upgrade` cannot go on.

Each failure an operator can fix (Discord or the database unreachable, a rejected token, missing
intents, sharding Discord requires, a file that is not a database, a schema from a newer faguan)
becomes one line — what went wrong, what to do — and its own exit status, like configuration
mistakes (`bot.config`). Anything else is a bug and keeps its traceback. `--verbose` shows the
traceback in every case.

Discord unreachable *at start* exits (status 5) instead of retrying: at start an operator or a
supervisor (systemd's Restart=on-failure, a container's restart policy) is watching, and the
usual causes — no network yet, DNS, a proxy, a firewall — are theirs to fix or to wait out with
their own backoff; a bot quietly retrying would hide them. Once connected, discord.py reconnects
by itself with backoff, and each attempt is logged in one line (`OneLineExceptions`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Iterator
from enum import IntEnum

from sqlalchemy.engine import URL
from sqlalchemy.exc import ArgumentError

from bot.config import TOKEN_HELP_URL, ConfigError, load
from bot.store.claims import Claimed
from bot.store.db import normalize_url
from bot.store.migrate import SchemaTooNew

PORTAL = f"{TOKEN_HELP_URL} -> your application -> Bot"
"""Where a bot's token and privileged intents are set."""


class Exit(IntEnum):
    """Exit statuses of `faguan run` and `faguan db upgrade` (documented in the README)."""

    OK = 0
    BUG = 1
    CONFIG = 2  # a configuration or command-line mistake, an unsupported database URL included
    TOKEN_REJECTED = 3
    INTENTS_DISABLED = 4
    DISCORD_UNREACHABLE = 5
    DATABASE_UNREACHABLE = 6
    NOT_A_DATABASE = 7
    SCHEMA_TOO_NEW = 8
    ALREADY_RUNNING = 9  # another process holds the SQLite file, or this process's shards
    SHARDS_REFUSED = 10  # Discord requires sharding (4011) or refused the shard settings (4010)
    OUTDATED = 11  # Discord refused the gateway version or intents this faguan sends (4012, 4013)


class OperatorError(Exception):
    """A failure the operator can fix: one line and the exit status."""

    def __init__(self, code: Exit, line: str) -> None:
        super().__init__(line)
        self.code = code
        self.line = line


SQLITE_CORRUPT = 11
SQLITE_CANTOPEN = 14
SQLITE_NOTADB = 26

_PG_CONNECT_CLASSES = ("08", "28", "3D")
"""SQLSTATE classes of a refused connection: connection exception, authorization, no database."""


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, the driver error SQLAlchemy wraps, and their causes."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop(0)
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        orig = getattr(item, "orig", None)
        todo.extend(
            [orig if isinstance(orig, BaseException) else None, item.__cause__, item.__context__]
        )


def describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def shown(url: URL) -> str:
    """A database URL as the operator may see it: never its password."""
    return url.render_as_string(hide_password=True)


def check_database_url(url: str | URL, *, given_as: str) -> None:
    """Refuse a URL `faguan run` would refuse, with the same words (`bot.config`). A plain
    driver name (`sqlite:`, `postgresql:`) is first given its async driver, as `db upgrade`
    always has."""
    text = url
    if isinstance(url, str):
        with contextlib.suppress(ArgumentError, ValueError):  # not a URL: the check says so
            url = normalize_url(url)
    if isinstance(url, URL):
        text = url.render_as_string(hide_password=False)
    try:
        load({"database": {"url": text}}, env={})
    except ConfigError as exc:
        problem = exc.problems[0].removeprefix("database.url: ")
        raise OperatorError(Exit.CONFIG, f"{given_as}: {problem}") from None
    if isinstance(url, URL) and url.port is not None and not 0 < url.port < 65536:
        raise OperatorError(Exit.CONFIG, f"{given_as}: port {url.port} is not a port (1–65535)")


def database_error(exc: BaseException, url: URL) -> OperatorError | None:
    """The operator error `exc` (raised while opening or migrating `url`) is, if it is one."""
    where = shown(url)
    for item in _chain(exc):
        if isinstance(item, Claimed):
            return OperatorError(Exit.ALREADY_RUNNING, str(item))
        if isinstance(item, SchemaTooNew):
            revisions = ", ".join(item.revisions)
            return OperatorError(
                Exit.SCHEMA_TOO_NEW,
                f"the database {where} is at schema revision {revisions}, which this faguan does "
                "not know: a newer faguan has upgraded it. Run that newer version, or restore a "
                "backup taken before the upgrade; nothing was changed.",
            )
        code = getattr(item, "sqlite_errorcode", None)
        if code in (SQLITE_NOTADB, SQLITE_CORRUPT):
            return OperatorError(
                Exit.NOT_A_DATABASE,
                f"{url.database} is not a faguan SQLite database ({item}): point the database "
                "URL at the right file, or restore the file from a backup; nothing was changed.",
            )
        if code == SQLITE_CANTOPEN:
            return OperatorError(
                Exit.DATABASE_UNREACHABLE,
                f"cannot open the SQLite file {url.database} ({item}): check that its directory "
                "exists and is writable.",
            )
        sqlstate = getattr(item, "sqlstate", None)
        refused = isinstance(sqlstate, str) and sqlstate[:2] in _PG_CONNECT_CLASSES
        if refused or isinstance(item, (OSError, asyncio.TimeoutError)):
            # The server's own words for a refusal; the exception's type for a network failure.
            reason = str(item).strip() if refused else describe(item)
            return OperatorError(
                Exit.DATABASE_UNREACHABLE,
                f"cannot connect to the database {where} ({reason}): check that the "
                "server is running and that the database URL's host, port, user, password and "
                "database name are right.",
            )
    return None


class OneLineExceptions(logging.Formatter):
    """Log records with an exception end with one `(Type: message)` instead of a traceback.

    discord.py logs each reconnect attempt with its traceback; the operator needs the reason.
    """

    def format(self, record: logging.LogRecord) -> str:
        info = record.exc_info
        if not info or info[1] is None:
            return super().format(record)
        saved = record.exc_info, record.exc_text
        record.exc_info, record.exc_text = None, None
        try:
            return f"{super().format(record)} ({describe(info[1])})"
        finally:
            record.exc_info, record.exc_text = saved


def configure_logging(*, verbose: bool) -> None:
    """INFO and above to stderr; exceptions in one line unless `verbose`; Discord's ids out of
    discord.py's request lines (`DiscordIdsRedacted`)."""
    fmt = "%(asctime)s %(levelname)s %(name)s: %(message)s"
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter(fmt) if verbose else OneLineExceptions(fmt))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    logging.getLogger("discord.http").addFilter(DiscordIdsRedacted())


class DiscordIdsRedacted(logging.Filter):
    """discord.py logs a rate-limited request's URL at WARNING: a team thread's members
    (`/channels/<thread>/thread-members/<user>`) or a player's DM channel. Which thread a user
    is added to or removed from is a hidden role; the line keeps the route, not the ids."""

    IDS = re.compile(r"(?<=/)\d{6,}")

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.INFO:
            record.msg = self.IDS.sub("…", record.getMessage())
            record.args = ()
        return True

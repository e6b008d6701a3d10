"""`faguan db backup` and `faguan db restore` on SQLite (PostgreSQL: test_db_backup_pg.py): a copy
taken while the bot records posts is the database as of one commit; a restore needs the bot
stopped, keeps what it replaces, and never lets an outbox id be given twice; every refusal changes
nothing and says why."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import itertools
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.ingest import prepare_games, run_ingest
from bench.stores import Bench, Snowflakes, create_game, noop_performer, sqlite_url
from bot.cli import main
from bot.operator_errors import Exit
from bot.runtime.service import GameService, fold
from bot.runtime.snapshots import SNAPSHOTS
from bot.runtime.timing import SystemClock
from bot.store import Repository, open_database, upgrade
from bot.store.backup import OUTBOX_GAP, backup, restore
from bot.store.claims import claim
from bot.store.db import resolve_url


@dataclass
class Bot:
    """A bot's storage and service on a SQLite file (no Discord)."""

    path: Path
    bench: Bench

    @property
    def url(self) -> str:
        return self.bench.url

    @property
    def service(self) -> GameService:
        return self.bench.service


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[Bot]:
    path = tmp_path / "faguan.db"
    url = sqlite_url(path)
    await upgrade(url)
    db = open_database(url)
    repo = Repository(db.sessions)
    service = GameService(repo, SystemClock())
    service.set_performer(noop_performer)
    yield Bot(path, Bench(backend="sqlite", url=url, db=db, repo=repo, service=service))
    await repo.flush()
    await db.dispose()


async def loaded_games(url: str) -> dict[int, int]:
    """Every game of the database at `url` rebuilt from its rows: game id → its last seq."""
    db = open_database(url)
    try:
        repo = Repository(db.sessions)
        ids = [info.id for info in await repo.list_games()]
        return {g: (await repo.load_game(g, fold, snapshot=SNAPSHOTS)).seq for g in ids}
    finally:
        await db.dispose()


def rows(path: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql, params).fetchall()


def db_args(action: str, bot: Bot, file: Path) -> list[str]:
    return ["db", action, str(file), "--database-url", bot.url]


async def test_backups_taken_while_posts_are_recorded_each_hold_one_commits_database(
    bot: Bot, tmp_path: Path
) -> None:
    games = await prepare_games(bot.bench, 3)
    before = await loaded_games(bot.url)
    ingest = asyncio.create_task(run_ingest(bot.bench, games, 600, ids=Snowflakes()))
    copies = []
    while not ingest.done() or not copies:
        copy = tmp_path / f"backup-{len(copies)}.db"
        await asyncio.to_thread(backup, resolve_url(bot.url), copy)
        copies.append(copy)
    assert (await ingest).refused == 0
    after = await loaded_games(bot.url)
    seen = []
    for copy in copies:
        assert rows(copy, "PRAGMA integrity_check") == [("ok",)]
        assert rows(copy, "PRAGMA journal_mode") == [("delete",)]  # one file, no WAL beside it
        held = await loaded_games(sqlite_url(copy))  # raises on a gap or a torn game row
        assert held.keys() == after.keys()
        assert all(before[g] <= held[g] <= after[g] for g in held)
        seen.append(sum(held.values()))
    # taken while posts were being recorded: some copy holds part of them
    assert any(sum(before.values()) < n < sum(after.values()) for n in seen), seen


async def test_a_backup_never_replaces_a_file_nor_makes_a_folder(bot: Bot, tmp_path: Path) -> None:
    await create_game(bot.service, 1)
    file = tmp_path / "kept.db"
    file.write_bytes(b"an older backup")
    code = await asyncio.to_thread(main, db_args("backup", bot, file))
    assert code == Exit.CONFIG
    assert file.read_bytes() == b"an older backup"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    nowhere = tmp_path / "no such folder" / "copy.db"
    assert await asyncio.to_thread(main, db_args("backup", bot, nowhere)) == Exit.CONFIG
    assert not nowhere.parent.exists()


async def test_a_restore_puts_the_backup_in_place_and_keeps_the_database_it_replaced(
    bot: Bot, tmp_path: Path
) -> None:
    first = await create_game(bot.service, 1)
    file = tmp_path / "backup.db"
    assert await asyncio.to_thread(main, db_args("backup", bot, file)) == Exit.OK
    later = await create_game(bot.service, 2)  # after the backup: only in the replaced database
    await bot.service.flush()
    (last_id,) = rows(bot.path, "SELECT max(id) FROM outbox")[0]
    await bot.bench.db.dispose()  # the bot stopped
    assert await asyncio.to_thread(main, db_args("restore", bot, file)) == Exit.OK
    assert (await loaded_games(bot.url)).keys() == {first}
    (kept,) = [
        p
        for p in tmp_path.iterdir()
        if p.name.startswith("faguan.db.before-restore-") and not p.name.endswith(("-wal", "-shm"))
    ]
    assert (await loaded_games(sqlite_url(kept))).keys() == {first, later}
    # the next effect's id (its idempotency key) was never given, in either timeline
    restarted = open_database(bot.url)
    try:
        service = GameService(Repository(restarted.sessions), SystemClock())
        service.set_performer(noop_performer)
        await create_game(service, 3)
    finally:
        await restarted.dispose()
    (first_new,) = rows(bot.path, "SELECT min(id) FROM outbox WHERE game_id <> ?", first)[0]
    (backed_up,) = rows(file, "SELECT max(id) FROM outbox")[0]
    assert isinstance(first_new, int) and isinstance(last_id, int) and isinstance(backed_up, int)
    assert first_new > last_id  # after every id of the replaced timeline
    assert first_new == backed_up + OUTBOX_GAP + 1  # as long as it had fewer than OUTBOX_GAP


async def test_a_restore_while_the_bot_runs_is_refused(bot: Bot, tmp_path: Path) -> None:
    await create_game(bot.service, 1)
    file = tmp_path / "backup.db"
    assert await asyncio.to_thread(main, db_args("restore", bot, file)) == Exit.CONFIG  # none yet
    assert await asyncio.to_thread(main, db_args("backup", bot, file)) == Exit.OK
    await bot.service.flush()
    before = bot.path.read_bytes()
    held = await claim(bot.url, None, None)  # what `faguan run` holds for its life
    try:
        code = await asyncio.to_thread(main, db_args("restore", bot, file))
    finally:
        await held.release()
    assert code == Exit.ALREADY_RUNNING
    assert bot.path.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if ".before-restore-" in p.name]


@pytest.mark.parametrize(
    ("spoil", "code", "says"),
    [
        pytest.param("not sqlite", Exit.NOT_A_DATABASE, "not a SQLite database", id="junk"),
        pytest.param("no tables", Exit.NOT_A_DATABASE, "not a faguan database", id="other-db"),
        pytest.param("damaged", Exit.NOT_A_DATABASE, "damaged", id="damaged"),
        pytest.param("newer", Exit.SCHEMA_TOO_NEW, "newer faguan", id="newer-schema"),
    ],
)
async def test_a_restore_of_a_file_the_bot_cannot_run_is_refused_and_changes_nothing(
    bot: Bot,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    spoil: str,
    code: Exit,
    says: str,
) -> None:
    await create_game(bot.service, 1)
    file = tmp_path / "backup.db"
    assert await asyncio.to_thread(main, db_args("backup", bot, file)) == Exit.OK
    if spoil == "not sqlite":
        file.write_bytes(b"these are not the pages of a database" * 200)
    elif spoil == "no tables":
        file.unlink()
        with sqlite3.connect(file) as conn:
            conn.execute("CREATE TABLE notes (text TEXT)")
    elif spoil == "damaged":
        data = bytearray(file.read_bytes())
        page = 4096
        data[3 * page : 6 * page] = b"\xff" * (3 * page)  # a few pages past the header
        file.write_bytes(bytes(data))
    else:
        with sqlite3.connect(file) as conn:
            conn.execute("UPDATE alembic_version SET version_num = 'f00dfeed'")
    await bot.service.flush()
    before = bot.path.read_bytes()
    capsys.readouterr()
    assert await asyncio.to_thread(main, db_args("restore", bot, file)) == code
    err = capsys.readouterr().err
    assert says in err and "nothing changed" in err and "Traceback" not in err
    assert bot.path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if "restor" in p.name] == []


async def test_a_backup_onto_a_file_system_without_hard_links_is_renamed_into_place(
    bot: Bot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await create_game(bot.service, 1)

    def no_links(src: object, dst: object) -> None:
        raise PermissionError(1, "Operation not permitted")  # as on some network mounts

    monkeypatch.setattr("bot.store.backup.os.link", no_links)
    file = tmp_path / "copy.db"
    copy = await asyncio.to_thread(backup, resolve_url(bot.url), file)
    assert copy.path == file and copy.games == 1
    assert rows(file, "PRAGMA integrity_check") == [("ok",)]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


async def test_two_restores_within_a_second_keep_both_databases_they_replaced(
    bot: Bot, tmp_path: Path
) -> None:
    first = await create_game(bot.service, 1)
    file = tmp_path / "backup.db"
    assert await asyncio.to_thread(main, db_args("backup", bot, file)) == Exit.OK
    later = await create_game(bot.service, 2)
    await bot.service.flush()
    await bot.bench.db.dispose()  # the bot stopped
    now = dt.datetime(2026, 12, 3, 4, 0, tzinfo=dt.UTC)
    url = resolve_url(bot.url)
    _, kept_first = await asyncio.to_thread(restore, url, file, now)
    _, kept_second = await asyncio.to_thread(restore, url, file, now)  # the same second
    assert kept_first is not None and kept_second is not None
    assert kept_second.name == kept_first.name + "-2"
    assert (await loaded_games(sqlite_url(kept_first))).keys() == {first, later}
    assert (await loaded_games(sqlite_url(kept_second))).keys() == {first}


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """The umask most systems give (022): a file made under it is readable by every local user."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("database_mode", [0o600, 0o640])
async def test_backups_are_the_owners_alone_and_a_restored_database_keeps_its_files_mode(
    bot: Bot,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    loose_umask: None,
    database_mode: int,
) -> None:
    # the database holds the sealed seeds of the games in play: every hidden role follows
    await create_game(bot.service, 1)
    bot.path.chmod(database_mode)
    scratch_modes: list[int] = []
    real_place = backup_module().place

    def place(partial: Path, dest: Path) -> None:  # what the copy was while it was made
        scratch_modes.append(mode(partial))
        real_place(partial, dest)

    monkeypatch.setattr("bot.store.backup.place", place)
    file = tmp_path / "backup.db"
    assert await asyncio.to_thread(main, db_args("backup", bot, file)) == Exit.OK
    assert mode(file) == 0o600 and scratch_modes == [0o600]
    await bot.service.flush()
    await bot.bench.db.dispose()  # the bot stopped
    assert await asyncio.to_thread(main, db_args("restore", bot, file)) == Exit.OK
    assert mode(bot.path) == database_mode  # the replaced file's: the bot's user still opens it
    (kept,) = [p for p in tmp_path.iterdir() if p.name.startswith("faguan.db.before-restore-")]
    assert mode(kept) == database_mode
    # restored where there was no database: the owner's alone
    fresh = tmp_path / "fresh.db"
    _, none_kept = await asyncio.to_thread(
        restore, resolve_url(sqlite_url(fresh)), file, dt.datetime.now(dt.UTC)
    )
    assert none_kept is None and mode(fresh) == 0o600


def backup_module() -> object:
    import bot.store.backup as module

    return module


def kill_the_bot_mid_write(path: Path) -> None:
    """A commit that only the WAL holds, as a bot killed (not stopped) leaves it."""
    crash = (
        "import os, sqlite3, sys; conn = sqlite3.connect(sys.argv[1]); "
        "conn.execute('PRAGMA wal_autocheckpoint=0'); conn.execute('CREATE TABLE last_commit (x)'); "
        "conn.commit(); os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", crash, str(path)], check=True)
    assert path.with_name(path.name + "-wal").stat().st_size > 0


def opened_as_after_a_kill(path: Path, scratch: Path) -> tuple[set[int], bool]:
    """The games of the database at `path` (with its WAL, as the next `faguan run` opens it, on
    copies) and whether it has the commit only the WAL held; fails unless it is whole."""
    scratch.mkdir()
    for name in (path.name, path.name + "-wal"):
        if (path.parent / name).exists():
            shutil.copyfile(path.parent / name, scratch / name)
    copy = scratch / path.name
    assert copy.exists(), "no database at the bot's path"
    with contextlib.closing(sqlite3.connect(copy)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        games = {int(g) for (g,) in conn.execute("SELECT id FROM games")}
        names = {n for (n,) in conn.execute("SELECT name FROM sqlite_master")}
    return games, "last_commit" in names


def every_step(monkeypatch: pytest.MonkeyPatch, folder: Path, check: Callable[[str], None]) -> None:
    """`check` before each change of a name in `folder` (where a kill would leave things)."""
    for name in ("link", "rename", "replace", "unlink"):
        real = getattr(os, name)

        def step(
            *args: object, _real: Callable[..., object] = real, _name: str = name, **kw: object
        ) -> object:
            if any(str(a).startswith(str(folder)) for a in args[:2]):
                check(f"{_name}{tuple(str(a) for a in args[:2])}")
            return _real(*args, **kw)

        monkeypatch.setattr(os, name, step)


async def backed_up_then_killed(bot: Bot, tmp_path: Path) -> tuple[int, int, Path]:
    """A game, a backup of it, a later game, and the bot killed with its last commit only in
    the WAL: (the first game, the later one, the backup file)."""
    first = await create_game(bot.service, 1)
    file = tmp_path / "backup.db"
    assert await asyncio.to_thread(main, db_args("backup", bot, file)) == Exit.OK
    later = await create_game(bot.service, 2)
    await bot.service.flush()
    await bot.bench.db.dispose()
    kill_the_bot_mid_write(bot.path)
    return first, later, file


async def test_a_restore_killed_at_any_step_leaves_the_old_or_the_new_database_at_the_bots_path(
    bot: Bot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, later, file = await backed_up_then_killed(bot, tmp_path)
    old, new = ({first, later}, True), ({first}, False)
    scratch = tmp_path / "as-killed"
    scratch.mkdir()
    steps: list[str] = []
    kills = itertools.count()

    def whole(step: str) -> None:
        found = opened_as_after_a_kill(bot.path, scratch / str(next(kills)))
        assert found in (old, new), f"before {step}: {found}"
        steps.append(step)

    with monkeypatch.context() as patched:
        every_step(patched, tmp_path, whole)
        _, kept = restore(resolve_url(bot.url), file, dt.datetime(2026, 12, 3, 4, 0, tzinfo=dt.UTC))
    assert len(steps) >= 2, steps  # the old database renamed or linked, the new one put in place
    assert opened_as_after_a_kill(bot.path, scratch / "end") == new
    assert kept is not None and opened_as_after_a_kill(kept, scratch / "kept") == old


async def test_a_restore_that_fails_as_it_puts_the_file_in_place_leaves_the_old_database(
    bot: Bot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, later, file = await backed_up_then_killed(bot, tmp_path)
    real_replace = os.replace

    def fails(src: object, dst: object) -> None:
        if Path(str(dst)) == bot.path:
            raise OSError(5, "Input/output error", str(dst))
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", fails)
    with pytest.raises(OSError, match="Input/output"):
        restore(resolve_url(bot.url), file, dt.datetime(2026, 12, 3, 4, 0, tzinfo=dt.UTC))
    monkeypatch.undo()
    assert opened_as_after_a_kill(bot.path, tmp_path / "after") == ({first, later}, True)
    assert [p.name for p in tmp_path.iterdir() if "restor" in p.name] == []

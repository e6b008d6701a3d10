"""One process per SQLite file, one process per shard on PostgreSQL (issue 17, point 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bot.store.claims import Claimed, claim, shard_ids

ROOT = Path(__file__).resolve().parents[2]


def test_the_shards_a_process_runs() -> None:
    assert shard_ids(None, None) == (0,)
    assert shard_ids(4, None) == (0, 1, 2, 3)
    assert shard_ids(4, [1, 3]) == (1, 3)


async def test_a_second_process_on_one_sqlite_file_is_refused_until_the_first_ends(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'one.db'}"
    first = await claim(url, None, None)
    with pytest.raises(Claimed, match="SQLite is for one process"):
        await claim(url, None, None)
    other = await claim(f"sqlite+aiosqlite:///{tmp_path / 'other.db'}", None, None)
    await first.release()
    again = await claim(url, None, None)
    await again.release()
    await other.release()


async def test_a_killed_process_leaves_its_sqlite_file_free(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'one.db'}"
    hold = (
        "import asyncio, os, signal\n"
        "from bot.store.claims import claim\n"
        "async def main():\n"
        f"    await claim({url!r}, None, None)\n"
        "    print('held', flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "asyncio.run(main())\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", hold], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert run.stdout.strip() == "held" and run.returncode == -9, run.stderr
    mine = await claim(url, None, None)  # the OS dropped the dead process's lock
    await mine.release()


async def test_postgresql_shards_belong_to_one_process_and_one_layout(pg_server: object) -> None:
    url = pg_server.admin_url  # type: ignore[attr-defined]
    a = await claim(url, 2, [0])
    with pytest.raises(Claimed, match="shard 0 of 2 is already run"):
        await claim(url, 2, [0, 1])
    b = await claim(url, 2, [1])  # the other shard: another process may run it
    with pytest.raises(Claimed, match="shard_count = 2 still run"):
        await claim(url, 4, [2])  # a new layout while the old one runs
    await a.release()
    with pytest.raises(Claimed, match="shard_count = 2 still run"):
        await claim(url, 4, [0])
    await b.release()
    new = [await claim(url, 4, [s]) for s in range(4)]  # every old process gone
    for held in new:
        await held.release()

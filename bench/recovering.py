"""A recovering process: a fresh OS process that rebuilds active games as a starting bot does
and says what that took (`python -m bench.recovering URL all|COUNT:ID,ID…`, one JSON line).

Its own interpreter, heap and RSS: what a restarted bot pays, without what the bench's process
did before (a process that has run other work reuses the memory that work freed, and its RSS
hardly grows). Used by the restart section (memory per active game) and the shards section
(each shard process against one recovering its quarter alone).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench.stores import noop_performer
from bot.runtime.service import GameService
from bot.runtime.timing import SystemClock
from bot.store import Repository, open_database
from bot.store.values import Shards


def resident() -> int:
    """The process's resident set, in bytes (Linux: /proc; elsewhere the peak, from getrusage)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def recover_here(url: str, shards: Shards | None) -> dict[str, Any]:
    """In this process: rebuild the games of `shards` (all, if None) as a starting bot does;
    its games, wall and CPU seconds, the RSS the rebuild added and the heap it keeps."""
    db = open_database(url)
    repo = Repository(db.sessions)
    try:
        gc.collect()
        rss0 = resident()
        wall, cpu = time.perf_counter(), time.process_time()
        service = GameService(repo, SystemClock())
        service.set_performer(noop_performer)
        stopped = await service.recover(shards)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        games = len(await service.active_games(shards))
        gc.collect()
        rss = resident() - rss0
        if stopped:
            raise AssertionError(f"games stopped on rebuild: {stopped}")
        del service
        gc.collect()
        tracemalloc.start()
        try:
            service = GameService(repo, SystemClock())
            service.set_performer(noop_performer)
            await service.recover(shards)
            gc.collect()
            heap, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        return {"games": games, "wall": wall, "cpu": cpu, "rss": rss, "heap": heap}
    finally:
        await db.dispose()


def spawn(url: str, shards: Shards | None) -> subprocess.Popen[str]:
    """A recovering process (a real OS process: its own interpreter, heap and RSS)."""
    layout = "all" if shards is None else f"{shards.count}:{','.join(map(str, shards.ids))}"
    return subprocess.Popen(
        [sys.executable, "-m", "bench.recovering", url, layout],
        stdout=subprocess.PIPE,
        text=True,
    )


def answer(process: subprocess.Popen[str]) -> dict[str, Any]:
    """What a recovering process said (games, wall and CPU seconds, RSS added, heap kept)."""
    out, _ = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"a recovering process failed (exit {process.returncode})")
    found: dict[str, Any] = json.loads(out)
    return found


def recover_apart(url: str, layouts: list[Shards | None]) -> list[dict[str, Any]]:
    """A process for each of `layouts`, one after the other (each alone on the machine, as the
    figure it is judged against: on 2 cores, four at once measure the contention); what each
    says."""
    return [answer(spawn(url, shards)) for shards in layouts]


def _layout(value: str) -> Shards | None:
    if value == "all":
        return None
    count, ids = value.split(":")
    return Shards(int(count), tuple(int(i) for i in ids.split(",")))


if __name__ == "__main__":  # python -m bench.recovering URL all|COUNT:ID,ID…
    _, url, layout = sys.argv
    print(json.dumps(asyncio.run(recover_here(url, _layout(layout)))))

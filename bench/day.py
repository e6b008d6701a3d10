"""One long day: the cost of a vote post late in a 5,000-post day against one early in a day.

One 16-player game in day 1's vote window takes `posts` vote posts one after another through the
bot's whole path (`bench.ingest.ingest_one`). Its last `window` posts are taken in turns with a
second game's posts `window + 1` to `2 × window` (after as many to warm it up): the CPU of each
post (the process's, its threads', and SQLite's writer process's), so both ends of a day are
measured in the same seconds: on a shared VM the speed of the machine drifts by ±30 % over
seconds, more than a whole day's growth would show. The bytes written per post are counted per
window of the long day (SQLite: what the process and its writer process handed to `write()`,
`/proc/<pid>/io` wchar, so the WAL and its checkpoints wherever a group is written; PostgreSQL: the
server's WAL, `pg_current_wal_lsn()`), its last fifth against its first. Nothing in a post's cost
should grow with the day. The posts run with the cyclic GC as a started bot has it
(`settle_started_heap`).
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

from sqlalchemy import text

from bench.ingest import ingest_one, prepare_games, writer_cpu
from bench.report import Row
from bench.stores import Bench, Snowflakes
from bench.vote_plan import post_texts
from bot.runtime.collector import collector_restored, settle_started_heap

GAME_BASE = 80_000
"""The bench's game number for the long day (the short one's is the next)."""


async def written_bytes(bench: Bench) -> int:
    """Bytes written so far: SQLite's by this process and its writer process (`write()`), or
    PostgreSQL's WAL position."""
    if bench.backend == "postgresql":
        async with bench.db.engine.connect() as conn:
            lsn = (await conn.execute(text("SELECT pg_current_wal_lsn()::text"))).scalar_one()
        high, low = str(lsn).split("/")
        return (int(high, 16) << 32) | int(low, 16)
    writer = bench.repo.sqlite_writer_pid
    return _wchar("self") + (_wchar(str(writer)) if writer is not None else 0)


def _wchar(pid: str) -> int:
    """Bytes process ``pid`` handed to ``write()`` so far (0 where /proc does not tell)."""
    try:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("wchar:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def process_cpu(bench: Bench) -> float:
    """CPU seconds so far of this process and of SQLite's writer process."""
    return time.process_time() + writer_cpu(bench)


class _Game:
    """One of the bench's games taking vote posts from its living players, at random."""

    def __init__(self, bench: Bench, game_id: int, alive: list[Any], rng: random.Random) -> None:
        self.bench, self.game_id, self.alive, self.rng = bench, game_id, alive, rng

    @classmethod
    async def start(cls, bench: Bench, first: int, rng: random.Random) -> _Game:
        (game_id,) = await prepare_games(bench, 1, first=first)
        state = await bench.service.state(game_id)
        return cls(bench, game_id, [s for s in state.seats if s.alive], rng)

    async def post(self, ids: Snowflakes) -> None:
        author, target = self.rng.choice(self.alive), self.rng.choice(self.alive)
        body = self.rng.choice(post_texts(int(target.seat), int(target.player)))
        await ingest_one(self.bench, self.game_id, body, int(author.player), ids.next())


async def _in_turns(long: _Game, short: _Game, posts: int, ids: Snowflakes) -> tuple[float, float]:
    """CPU seconds of `posts` posts to each game, taken in turns (one to each, then again)."""
    spent = [0.0, 0.0]
    for _ in range(posts):
        for n, game in enumerate((long, short)):
            cpu = process_cpu(game.bench)
            await game.post(ids)
            spent[n] += process_cpu(game.bench) - cpu
    return spent[0], spent[1]


async def measure(bench: Bench, *, posts: int, window: int = 100) -> list[Row]:
    """The long-day rows for one backend."""
    rng = random.Random(16)
    day = await _Game.start(bench, GAME_BASE, rng)
    fresh = await _Game.start(bench, GAME_BASE + 1, rng)
    ids = Snowflakes()
    windows: list[tuple[float, float, int]] = []  # (cpu s, wall s, bytes) per window
    alone = max(0, posts - window)  # the long day's posts before the last, taken in turns
    done = 0
    with collector_restored():
        settle_started_heap()  # the games are running: the collector as a started bot has it
        for _ in range(window):  # the fresh day's first posts: a warm-up
            await fresh.post(ids)
        while done < alone:
            n = min(window, alone - done)
            await bench.repo.flush()
            written, cpu, wall = await written_bytes(bench), process_cpu(bench), time.perf_counter()
            for _ in range(n):
                await day.post(ids)
            await bench.repo.flush()
            windows.append(
                (
                    process_cpu(bench) - cpu,
                    time.perf_counter() - wall,
                    await written_bytes(bench) - written,
                )
            )
            done += n
        last, early = await _in_turns(day, fresh, posts - alone, ids)
    taken = max(1, posts - alone)
    cpu_ratio = last / early if early else None
    # Bytes come in bursts (checkpoints): compare the first and last fifths of the day.
    fifth = max(1, len(windows) // 5)
    early_bytes = sum(w[2] for w in windows[:fifth]) / (fifth * window)
    late_bytes = sum(w[2] for w in windows[-fifth:]) / (fifth * window)
    bytes_ratio = late_bytes / early_bytes if early_bytes else None
    lock_start = time.perf_counter()
    info = await bench.service.info(day.game_id)
    state = await bench.service.state(day.game_id)
    outcome = await bench.service.submit(
        day.game_id, bench.service.lock_command(state, info, forced=True)
    )
    lock_ms = (time.perf_counter() - lock_start) * 1000
    what = f"{bench.backend}: one day of {posts} vote posts"
    where = "write()s, bot and writer process" if bench.backend == "sqlite" else "PostgreSQL WAL"
    return [
        Row(
            section="day",
            what=f"{what}: CPU of the last {taken} posts",
            figure=f"{last / taken * 1000:.2f} ms/post",
            baseline=f"posts {window + 1}–{window + taken} of a fresh day, in turns with them: "
            f"{early / taken * 1000:.2f} ms/post",
            ratio=cpu_ratio,
            target="ratio ≤ 1.2",
            met=cpu_ratio is not None and cpu_ratio <= 1.2,
            note="CPU of the bot's process (its threads too) and SQLite's writer process; the "
            f"long day's windows before, {window} posts each: "
            f"{ms_range(windows, window)} ms/post; the lock that ends the day took "
            f"{lock_ms:.0f} ms" + ("" if outcome.ok else f" and was refused ({outcome.error})"),
            values={
                "windows": [{"cpu_s": c, "wall_s": w, "bytes": b} for c, w, b in windows],
                "last_cpu_s": last,
                "fresh_cpu_s": early,
                "lock_ms": lock_ms,
            },
        ),
        Row(
            section="day",
            what=f"{what}: bytes written per post, last fifth",
            figure=f"{late_bytes / 1024:.1f} KB/post",
            baseline=f"first fifth: {early_bytes / 1024:.1f} KB/post ({where})",
            ratio=bytes_ratio,
            target="ratio ≤ 1.2",
            met=bytes_ratio is not None and bytes_ratio <= 1.2,
            values={"early_bytes_per_post": early_bytes, "late_bytes_per_post": late_bytes},
        ),
    ]


def ms_range(windows: list[tuple[float, float, int]], window: int) -> str:
    """The least and most CPU per post of the windows, in ms."""
    if not windows:
        return "none"
    cpu = [w[0] / window * 1000 for w in windows]
    return f"{min(cpu):.2f}–{max(cpu):.2f}"

"""One long day: the cost of a vote post late in a 5,000-post day against one early in it.

One 16-player game in day 1's vote window takes `posts` vote posts one after another through the
bot's whole path (`bench.ingest.ingest_one`). Per window of posts: CPU per post (the process's,
and SQLite's writer process's), and the bytes written per post (SQLite: what the process and its
writer process handed to `write()`, `/proc/<pid>/io` wchar, so the WAL and its checkpoints
wherever a group is written; PostgreSQL: the server's WAL, `pg_current_wal_lsn()`). The first
window after a warm-up is the baseline for the last one; nothing in a post's cost should grow
with the day. The posts run with the cyclic GC as a started bot has it (`settle_started_heap`).
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from sqlalchemy import text

from bench.ingest import ingest_one, prepare_games, writer_cpu
from bench.report import Row
from bench.stores import Bench, Snowflakes
from bench.vote_plan import post_texts
from bot.runtime.collector import collector_restored, settle_started_heap

GAME_BASE = 80_000
"""The bench's game number for the long day."""


async def _written(bench: Bench) -> int:
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


def _cpu(bench: Bench) -> float:
    """CPU seconds so far of this process and of SQLite's writer process."""
    return time.process_time() + writer_cpu(bench)


async def measure(bench: Bench, *, posts: int, window: int = 100) -> list[Row]:
    """The long-day rows for one backend."""
    (game_id,) = await prepare_games(bench, 1, first=GAME_BASE)
    state = await bench.service.state(game_id)
    alive = [s for s in state.seats if s.alive]
    rng = random.Random(16)
    ids = Snowflakes()
    windows: list[tuple[float, float, int]] = []  # (cpu s, wall s, bytes) per window
    done = 0
    with collector_restored():
        settle_started_heap()  # the game is running: the collector as a started bot has it
        while done < posts:
            n = min(window, posts - done)
            plan = [(rng.choice(alive), rng.choice(alive)) for _ in range(n)]
            await bench.repo.flush()
            written, cpu, wall = await _written(bench), _cpu(bench), time.perf_counter()
            for author, target in plan:
                body = rng.choice(post_texts(int(target.seat), int(target.player)))
                await ingest_one(bench, game_id, body, int(author.player), ids.next())
            await bench.repo.flush()
            windows.append(
                (
                    _cpu(bench) - cpu,
                    time.perf_counter() - wall,
                    await _written(bench) - written,
                )
            )
            done += n
    # The first window warms caches: the baseline is the second (posts 101–200 by default).
    first, last = windows[1] if len(windows) > 2 else windows[0], windows[-1]
    cpu_ratio = last[0] / first[0] if first[0] else None
    # Bytes come in bursts (checkpoints): compare the first and last fifths of the day.
    fifth = max(1, len(windows) // 5)
    early = sum(w[2] for w in windows[:fifth]) / (fifth * window)
    late = sum(w[2] for w in windows[-fifth:]) / (fifth * window)
    bytes_ratio = late / early if early else None
    lock_start = time.perf_counter()
    info = await bench.service.info(game_id)
    state = await bench.service.state(game_id)
    outcome = await bench.service.submit(
        game_id, bench.service.lock_command(state, info, forced=True)
    )
    lock_ms = (time.perf_counter() - lock_start) * 1000
    what = f"{bench.backend}: one day of {posts} vote posts"
    where = "write()s, bot and writer process" if bench.backend == "sqlite" else "PostgreSQL WAL"
    return [
        Row(
            section="day",
            what=f"{what}: CPU of the last {window} posts",
            figure=f"{last[0] / window * 1000:.2f} ms/post",
            baseline=f"posts {window + 1}–{2 * window}: {first[0] / window * 1000:.2f} ms/post",
            ratio=cpu_ratio,
            target="ratio ≤ 1.2",
            met=cpu_ratio is not None and cpu_ratio <= 1.2,
            note="CPU of the bot's process and SQLite's writer process; "
            f"wall {first[1] / window * 1000:.2f} → {last[1] / window * 1000:.2f} ms per "
            f"post; the lock that ends the day took {lock_ms:.0f} ms"
            + ("" if outcome.ok else f" and was refused ({outcome.error})"),
            values={
                "windows": [{"cpu_s": c, "wall_s": w, "bytes": b} for c, w, b in windows],
                "lock_ms": lock_ms,
            },
        ),
        Row(
            section="day",
            what=f"{what}: bytes written per post, last fifth",
            figure=f"{late / 1024:.1f} KB/post",
            baseline=f"first fifth: {early / 1024:.1f} KB/post ({where})",
            ratio=bytes_ratio,
            target="ratio ≤ 1.2",
            met=bytes_ratio is not None and bytes_ratio <= 1.2,
            values={"early_bytes_per_post": early, "late_bytes_per_post": late},
        ),
    ]

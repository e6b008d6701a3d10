"""Restart: rebuild K active games the way a starting bot does, against a raw read of the rows.

Each game is a 16-player v2 game played through the bot's own path (`GameService.create_game`, then
`GameService.submit` for every night power, vote post and lock, all games at once), so its events
and its snapshots are the ones the bot writes (`bot.runtime.snapshots`: after every phase change,
and within a window on a geometric cadence). The game is left in an open window with its commands
submitted, as at a restart. Ready to serve is what `Runtime.resume_games` takes on a fresh
runtime (a no-op port, the real scheduler): `GameService.recover` — every active game rebuilt from
its newest snapshot and the events after it (two bulk reads, `Repository.load_active_games`), then
the outbox — and each game's deadline and reminder scheduled, its catch-up queued. Recovery alone
is a row of its own, checked to give each game the state the playing service holds. The
baseline runs the same two statements through C `sqlite3` (or `asyncpg`) and `json.loads` every
row. It runs once more without snapshots (a full replay of every
event), beside a game-by-game read through the engine, for comparison. Full and baseline runs
alternate; each figure is the median of `repeats`."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import os
import random
import resource
import statistics
import time
import tracemalloc
from pathlib import Path

from sqlalchemy import text

from bench import baselines
from bench.games import day_commands, night_commands
from bench.noop_port import NoopPort
from bench.report import Row
from bench.stores import Bench, Snowflakes, create_game, noop_performer, utcnow
from bot.config import load
from bot.runtime.runtime import Runtime
from bot.runtime.schedule import to_ms
from bot.runtime.service import GameService, fold, give_back_freed_memory
from bot.runtime.snapshots import SNAPSHOTS
from bot.runtime.timing import DeadlineScheduler, SystemClock
from bot.store import recover
from engine.commands import PostVote
from engine.model import PhaseKind

GAME_BASE = 50_000
"""The bench's game numbers for restart games (apart from the ingest games)."""


async def play_game(bench: Bench, n: int, *, windows: int, posts: int, ids: Snowflakes) -> None:
    """One game through the service: `windows` windows, the last left open (not locked)."""
    service = bench.service
    game_id = await create_game(service, GAME_BASE + n)
    rng = random.Random(f"restart-{n}")
    for window in range(windows):
        state = await service.state(game_id)
        if state.over or state.window is None:
            return
        at = to_ms(utcnow())
        if state.window.kind is PhaseKind.NIGHT:
            for command in night_commands(state, rng, at):
                await service.submit(game_id, command)  # refused powers change nothing
        else:
            for command in day_commands(state, rng, at, posts, 0):
                assert isinstance(command, PostVote)
                message_id = ids.next()
                post = dataclasses.replace(command, post_id=str(message_id))
                await service.submit(game_id, post, message_id=message_id)
        if window == windows - 1:
            return
        info = await service.info(game_id)
        state = await service.state(game_id)
        lock = service.lock_command(state, info, forced=True)
        outcome = await service.submit(game_id, lock)
        if outcome.error is not None:
            raise RuntimeError(f"game {game_id}: lock refused: {outcome.error.key}")
        await asyncio.sleep(0)


async def play_games(bench: Bench, count: int, *, windows: int, posts: int) -> list[int]:
    """`count` games played at once through the service; the ids of those still active."""
    ids = Snowflakes()
    await asyncio.gather(
        *(play_game(bench, n, windows=windows, posts=posts, ids=ids) for n in range(count))
    )
    await bench.repo.flush()  # the last done marks and snapshots
    return await bench.repo.active_game_ids()


async def stored_rows(bench: Bench, game_ids: list[int]) -> tuple[float, float]:
    """Events per game, and events after the newest snapshot per game (averages)."""
    async with bench.db.engine.connect() as conn:
        events = (
            await conn.execute(
                text("SELECT count(*) FROM events e JOIN games g ON g.id = e.game_id "
                     "WHERE g.status = 'active'")
            )
        ).scalar_one()  # fmt: skip
        tail = (
            await conn.execute(
                text(
                    "SELECT count(*) FROM events e JOIN games g ON g.id = e.game_id "
                    "WHERE g.status = 'active' AND e.seq > COALESCE((SELECT max(s.seq) "
                    "FROM snapshots s WHERE s.game_id = e.game_id AND s.version = :v), 0)"
                ),
                {"v": SNAPSHOTS.version},
            )
        ).scalar_one()
    count = max(1, len(game_ids))
    return events / count, tail / count


async def raw_read(bench: Bench, game_ids: list[int], *, snapshots: bool) -> float:
    """Seconds to read the rows a rebuild reads, plainly, game by game."""
    newest = text(
        "SELECT seq, state FROM snapshots WHERE game_id = :g AND version = :v "
        "ORDER BY seq DESC LIMIT 1"
    )
    events = text("SELECT seq, payload FROM events WHERE game_id = :g AND seq > :s ORDER BY seq")
    start = time.perf_counter()
    for game_id in game_ids:
        async with bench.db.engine.connect() as conn:
            after = 0
            if snapshots:
                row = (await conn.execute(newest, {"g": game_id, "v": SNAPSHOTS.version})).first()
                after = row[0] if row is not None else 0
            (await conn.execute(events, {"g": game_id, "s": after})).all()
    return time.perf_counter() - start


async def rebuild(bench: Bench, *, snapshots: bool) -> tuple[float, int, GameService]:
    """Seconds for a start's rebuild (with or without snapshots), the games rebuilt, and the
    service holding them (with snapshots)."""
    service = await bench.new_service()
    start = time.perf_counter()
    if snapshots:
        stopped = await service.recover()
    else:
        report = await recover(bench.repo, fold, noop_performer)
        stopped = report.stopped
    seconds = time.perf_counter() - start
    if snapshots:
        rebuilt = {g: service.cached_state(g) for g in await bench.repo.active_game_ids()}
    else:
        rebuilt = {g: loaded.state for g, loaded in report.games.items()}
    if stopped:
        raise AssertionError(f"games stopped on rebuild: {stopped}")
    for game_id, state in rebuilt.items():
        if state != bench.service.cached_state(game_id):
            raise AssertionError(f"game {game_id} rebuilt into another state")
    return seconds, len(rebuilt), service


async def ready(bench: Bench, games: int) -> tuple[float, float, float]:
    """A starting bot's `Runtime.resume_games` on a fresh service and runtime (a no-op port,
    the real scheduler running, the default settings: a deadline and a reminder job per game):
    seconds until it returns, ready to serve (every game rebuilt, its deadline scheduled, its
    catch-up queued, the outbox performed); its CPU seconds; seconds until the queued catch-ups
    are done too."""
    service = await bench.new_service()
    clock = SystemClock()
    scheduler = DeadlineScheduler(clock)
    scheduler.start()
    settings = load({"database": {"url": bench.url}}, env={})
    runtime = Runtime(settings, port=NoopPort(), clock=clock, scheduler=scheduler)
    runtime.start(service)
    try:
        start, cpu = time.perf_counter(), time.process_time()
        await runtime.resume_games()
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        await runtime.caught_up()
        drained = time.perf_counter() - start
        deadlines = [job for job in scheduler.jobs() if job.id.endswith(":deadline")]
    finally:
        gc.unfreeze()  # resume_games froze the heap, as the bot does once started
        scheduler.shutdown()
        runtime.close()
    if len(deadlines) != games:
        raise AssertionError(f"{len(deadlines)} deadlines scheduled for {games} games")
    return seconds, cpu, drained


def _rss() -> int:
    """The process's resident set, in bytes (Linux: /proc; elsewhere the peak, from getrusage)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def memory_per_game(bench: Bench, games: int) -> tuple[float, float]:
    """Bytes per active game a rebuilt service holds: the RSS it added, and the Python heap it
    keeps (tracemalloc), each divided by the games. Two rebuilds: tracemalloc's own tables (a
    trace per live block) would count in the RSS. The RSS before is taken once the heap's free
    pages are given back, as the rebuild does at its end (else pages freed before the measure,
    given back by it, would be subtracted from what it keeps)."""
    gc.collect()
    give_back_freed_memory()
    rss0 = _rss()
    _, _, service = await rebuild(bench, snapshots=True)
    gc.collect()
    rss = _rss() - rss0
    del service
    gc.collect()
    tracemalloc.start()
    try:
        _, _, service = await rebuild(bench, snapshots=True)
        gc.collect()
        heap, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del service
    return rss / max(1, games), heap / max(1, games)


async def measure(
    bench: Bench, *, games: int, windows: int = 4, posts: int = 24, repeats: int = 3
) -> list[Row]:
    """The restart rows for one backend."""
    game_ids = await play_games(bench, games, windows=windows, posts=posts)
    per_game, tail = await stored_rows(bench, game_ids)
    rows = []
    for snapshots in (True, False):
        full_times: list[float] = []
        raw_times: list[float] = []
        ready_times: list[tuple[float, float, float]] = []
        rebuilt = 0
        decoded = 0
        await raw_read(bench, game_ids, snapshots=snapshots)  # warm the cache for both
        for _ in range(repeats):
            if snapshots:
                seconds, decoded = await baselines.read_decode(bench, SNAPSHOTS.version)
                raw_times.append(seconds)
            else:
                raw_times.append(await raw_read(bench, game_ids, snapshots=False))
            seconds, rebuilt, _ = await rebuild(bench, snapshots=snapshots)
            full_times.append(seconds)
            if snapshots:
                ready_times.append(await ready(bench, rebuilt))
        full = statistics.median(full_times)
        raw = statistics.median(raw_times)
        ratio = full / raw if raw else None
        if snapshots:
            driver = "C sqlite3" if bench.backend == "sqlite" else "asyncpg"
            baseline = f"{driver} read + json.loads {raw * 1000:.0f} ms ({decoded} rows)"
            up, cpu, drained = (statistics.median(t) for t in zip(*ready_times, strict=True))
            up_ratio = up / raw if raw else None
            rows.append(
                Row(
                    section="restart",
                    what=f"{bench.backend}: {rebuilt} active games ready to serve "
                    "(Runtime.resume_games)",
                    figure=f"{up * 1000:.0f} ms ({up / max(1, rebuilt) * 1000:.2f} ms/game)",
                    baseline=baseline,
                    ratio=up_ratio,
                    target="≤ 3× read + decode",
                    met=up_ratio is not None and up_ratio <= 3.0,
                    note=f"a fresh runtime's resume_games (no-op port, the scheduler running): "
                    f"every game rebuilt, its deadline and reminder scheduled, its catch-up "
                    f"queued, the outbox performed; CPU {cpu * 1000:.0f} ms "
                    f"({cpu / max(1, rebuilt) * 1000:.2f} ms/game); the queued catch-ups done "
                    f"{drained * 1000:.0f} ms after the start",
                    values={
                        "games": rebuilt,
                        "seconds": up,
                        "cpu_seconds": cpu,
                        "caught_up_seconds": drained,
                        "read_decode_seconds": raw,
                        "all_seconds": [t[0] for t in ready_times],
                        "all_read_decode_seconds": raw_times,
                    },
                )
            )
            rows.append(
                Row(
                    section="restart",
                    what=f"{bench.backend}: rebuild {rebuilt} active games, newest snapshot + "
                    "events after it",
                    figure=f"{full * 1000:.0f} ms ({full / max(1, rebuilt) * 1000:.2f} ms/game)",
                    baseline=baseline,
                    ratio=ratio,
                    note=f"GameService.recover alone, on a fresh service (games rebuilt, outbox "
                    f"performed): the first part of the row above; games "
                    f"played through GameService ({windows} windows, {posts} vote posts a "
                    f"day), snapshots written by the bot; {per_game:.0f} events per game, "
                    f"{tail:.0f} after the newest snapshot; the baseline reads the same rows "
                    f"in two bulk queries",
                    values={
                        "games": rebuilt,
                        "events_per_game": per_game,
                        "tail": tail,
                        "seconds": full,
                        "ms_per_game": full / max(1, rebuilt) * 1000,
                        "read_decode_seconds": raw,
                        "all_seconds": full_times,
                        "all_read_decode_seconds": raw_times,
                    },
                )
            )
            rss, heap = await memory_per_game(bench, rebuilt)
            worst = max(rss, heap) / 1024
            rows.append(
                Row(
                    section="restart",
                    what=f"{bench.backend}: memory per active game ({rebuilt} rebuilt)",
                    figure=f"{worst:.1f} KB",
                    baseline=f"RSS +{rss / 1024:.1f} KB, heap {heap / 1024:.1f} KB per game",
                    target="≤ 25 KB",
                    met=worst <= 25.0,
                    note="the larger of the RSS a fresh service's rebuild added and the Python "
                    "heap it keeps (tracemalloc), per game",
                    values={"rss_per_game": rss, "heap_per_game": heap},
                )
            )
            continue
        rows.append(
            Row(
                section="restart",
                what=f"{bench.backend}: rebuild {rebuilt} active games, every event (no snapshot)",
                figure=f"{full * 1000:.0f} ms ({rebuilt / full:.0f} games/s)",
                baseline=f"pooled SQLAlchemy read {raw * 1000:.0f} ms ({per_game:.0f} events)",
                ratio=ratio,
                note="for comparison: a start that ignores the snapshots; the baseline reads "
                "game by game through the engine (nothing decoded)",
                values={"games": rebuilt, "seconds": full, "raw_seconds": raw},
            )
        )
    return rows

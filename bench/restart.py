"""Restart: rebuild K active games the way a starting bot does, against a raw read of the rows.

The games are 16-player v2 games (`bench.seeding`): a few played through the bot's own path
(`GameService.create_game`, then `GameService.submit` for every night power, vote post and lock),
so their events and snapshots are the ones the bot writes (`bot.runtime.snapshots`: after every
phase change, and within a window on a geometric cadence), each left in an open window with its
commands submitted, as at a restart; every other game is one of them copied in bulk under its
own id, channels and players. Ready to serve is what `Runtime.resume_games` takes on a fresh
runtime (a no-op port, the real scheduler): `GameService.recover` — every active game rebuilt from
its newest snapshot and the events after it (two bulk reads, `Repository.load_active_games`), then
the outbox — and each game's deadline and reminder scheduled, its catch-up queued. Recovery alone
is a row of its own, checked to give each game the state played (a copy: its template's). The
baseline runs the same two statements through C `sqlite3` (or `asyncpg`) and `json.loads` every
row. It runs once more without snapshots (a full replay of every
event), beside a game-by-game read through the engine, for comparison. Full and baseline runs
alternate; each figure is the median of `repeats`."""

from __future__ import annotations

import asyncio
import statistics
import time

from sqlalchemy import text

from bench import baselines
from bench.noop_port import NoopPort
from bench.recovering import recover_apart
from bench.report import Row
from bench.seeding import TEMPLATES, Played, copy_games, play_templates
from bench.stores import SERVER_ID, Bench, noop_performer
from bot.config import load
from bot.runtime.collector import collector_restored
from bot.runtime.runtime import Runtime
from bot.runtime.service import GameService, fold
from bot.runtime.snapshots import SNAPSHOTS
from bot.runtime.timing import DeadlineScheduler, SystemClock
from bot.store import recover
from bot.store.values import Shards


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


async def seed(bench: Bench, games: int, *, windows: int, posts: int) -> Played:
    """`games` active games: up to `TEMPLATES` played through the service, the rest copies of
    them (`bench.seeding`) on the same server; the states they must be rebuilt into."""
    templates = await play_templates(bench, min(games, TEMPLATES), windows=windows, posts=posts)
    if not templates:
        raise RuntimeError("every template game ended while played")
    plan = [(templates[c % len(templates)], SERVER_ID) for c in range(games - len(templates))]
    return Played(bench.service, await copy_games(bench, plan))


async def rebuild(
    bench: Bench, played: Played, *, snapshots: bool
) -> tuple[float, int, GameService]:
    """Seconds for a start's rebuild (with or without snapshots), the games rebuilt, and the
    service holding them (with snapshots). Each game must have been rebuilt into the state
    played (`Played`: a copy, its template's with its own players)."""
    service = await bench.new_service()
    start = time.perf_counter()
    if snapshots:
        stopped = await service.recover()
    else:
        report = await recover(bench.repo, fold, noop_performer)
        stopped = report.stopped
    seconds = time.perf_counter() - start
    if stopped:
        raise AssertionError(f"games stopped on rebuild: {stopped}")
    if snapshots:
        rebuilt = {g: service.cached_state(g) for g in await bench.repo.active_game_ids()}
    else:
        rebuilt = {g: loaded.state for g, loaded in report.games.items()}
    if wrong := played.unlike(rebuilt):
        raise AssertionError(
            f"games not rebuilt into the state played: {wrong[:10]} ({len(wrong)})"
        )
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
        with collector_restored():  # resume_games settles the collector, as in a started bot
            start, cpu = time.perf_counter(), time.process_time()
            await runtime.resume_games()
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
            await runtime.caught_up()
            drained = time.perf_counter() - start
        deadlines = [job for job in scheduler.jobs() if job.id.endswith(":deadline")]
    finally:
        scheduler.shutdown()
        runtime.close()
    if len(deadlines) != games:
        raise AssertionError(f"{len(deadlines)} deadlines scheduled for {games} games")
    return seconds, cpu, drained


async def memory_per_game(bench: Bench, games: int) -> tuple[float, float]:
    """Bytes per active game a restarted bot holds: in a fresh OS process (`bench.recovering`),
    the RSS its rebuild added and the Python heap a second rebuild keeps (tracemalloc), each
    divided by the games. Not in the bench's own process: there the rebuild reuses the memory
    the work before it freed, and its RSS moves by what ran before (1,000 games: −9 to +40 KB a
    game), not by what the games keep."""
    every: list[Shards | None] = [None]
    # as after a clean stop: this process's SQLite writer ended (it starts again on its next
    # group), else the fresh process, a restarted bot, would wait for it (`bot.store.sqlite_lock`)
    await bench.repo.close()
    (found,) = await asyncio.get_running_loop().run_in_executor(
        None, recover_apart, bench.url, every
    )
    if found["games"] != games:
        raise AssertionError(f"a fresh process rebuilt {found['games']} games, not {games}")
    return found["rss"] / max(1, games), found["heap"] / max(1, games)


async def measure(
    bench: Bench, *, games: int, windows: int = 4, posts: int = 24, repeats: int = 3
) -> list[Row]:
    """The restart rows for one backend."""
    played = await seed(bench, games, windows=windows, posts=posts)
    game_ids = await bench.repo.active_game_ids()
    copies = len(played.copies)
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
            seconds, rebuilt, service = await rebuild(bench, played, snapshots=snapshots)
            del service  # else alive beside the next measure (the memory's: sharing its strings)
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
                    f"performed): the first part of the row above; {len(game_ids) - copies} games "
                    f"played through GameService ({windows} windows, {posts} vote posts a "
                    f"day), snapshots written by the bot, {copies} copies of their rows "
                    f"(own ids, channels, players); {per_game:.0f} events per game, "
                    f"{tail:.0f} after the newest snapshot; the baseline reads the same rows "
                    f"in two bulk queries",
                    values={
                        "games": rebuilt,
                        "played": len(game_ids) - copies,
                        "copies": copies,
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
                    note="the larger of the RSS a fresh OS process's rebuild added (as a "
                    "restarted bot's) and the Python heap it keeps (tracemalloc), per game",
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

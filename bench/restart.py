"""Restart: rebuild K active games the way a starting bot does, against a raw read of the rows.

Each game is a 16-player v2 game played through the bot's own path (`GameService.create_game`, then
`GameService.submit` for every night power, vote post and lock, all games at once), so its events
and its snapshots are the ones the bot writes (`bot.runtime.snapshots`: after every phase change
and every `EVERY` events). The game is left in an open window with its commands submitted, as at a
restart. The full path is what `GameService.recover` runs at start on a fresh service: every active
game rebuilt by `Repository.load_game` from its newest snapshot and the events after it, then the
outbox; it is checked to give each game the state the playing service holds. It runs once more
without snapshots (a full replay of every event), for comparison. The baseline reads the same rows
(the newest snapshot and the events after it; or every event) with one plain SELECT each through
the same engine, game by game, and decodes nothing. Full and raw runs alternate; each figure is the
median of `repeats`."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import statistics
import time

from sqlalchemy import text

from bench.games import day_commands, night_commands
from bench.report import Row
from bench.stores import Bench, Snowflakes, create_game, noop_performer, utcnow
from bot.runtime.schedule import to_ms
from bot.runtime.service import fold
from bot.runtime.snapshots import EVERY, SNAPSHOTS
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


async def rebuild(bench: Bench, *, snapshots: bool) -> tuple[float, int]:
    """Seconds for a start's rebuild (with or without snapshots), and the games rebuilt."""
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
    return seconds, len(rebuilt)


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
        rebuilt = 0
        await raw_read(bench, game_ids, snapshots=snapshots)  # warm the cache for both
        for _ in range(repeats):
            raw_times.append(await raw_read(bench, game_ids, snapshots=snapshots))
            seconds, rebuilt = await rebuild(bench, snapshots=snapshots)
            full_times.append(seconds)
        full = statistics.median(full_times)
        raw = statistics.median(raw_times)
        ratio = full / raw if raw else None
        label = "newest snapshot + events after it" if snapshots else "every event (no snapshot)"
        read = f"1 snapshot + {tail:.0f} events per game" if snapshots else f"{per_game:.0f} events"
        rows.append(
            Row(
                section="restart",
                what=f"{bench.backend}: rebuild {rebuilt} active games, {label}",
                figure=f"{full * 1000:.0f} ms ({rebuilt / full:.0f} games/s)",
                baseline=f"raw read {raw * 1000:.0f} ms ({read})",
                ratio=ratio,
                target="≤ 2× raw" if snapshots else "",
                met=(ratio is not None and ratio <= 2.0) if snapshots else None,
                note=(
                    f"games played through GameService ({windows} windows, {posts} vote posts "
                    f"a day), snapshots written by the bot (each phase change, every {EVERY} "
                    f"events); {per_game:.0f} events per game"
                )
                if snapshots
                else "for comparison: a start that ignores the snapshots",
                values={
                    "games": rebuilt,
                    "events_per_game": per_game,
                    "tail": tail if snapshots else per_game,
                    "seconds": full,
                    "raw_seconds": raw,
                    "all_seconds": full_times,
                    "all_raw_seconds": raw_times,
                },
            )
        )
    return rows

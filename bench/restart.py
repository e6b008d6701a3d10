"""Restart: rebuild K active games the way a starting bot does, against a raw read of the rows.

Each game is a 16-player game played in memory for a few windows (`bench.games.play`) and stored
with its events; a snapshot of its state (the engine's state as JSON through `engine.codec`,
checked to load back equal) covers all but the last `tail` events. The full path is
`bot.store.recover` (what `GameService.recover` runs at start: the active games, each rebuilt by
`Repository.load_game` with the snapshot and the events after it, then the outbox), once with the
snapshot codec and once without (a full replay of every event, which is what the bot does today:
it does not write snapshots yet). The baseline reads the same rows (the newest snapshot and the
events after it; or every event) with one plain SELECT each through the same engine, game by
game, and decodes nothing. Full and raw runs alternate; each figure is the median of `repeats`.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from sqlalchemy import text

from bench.games import play
from bench.report import Row
from bench.stores import SERVER_ID, Bench, noop_performer
from bot.service import fold
from bot.store import Loaded, SeatSpec, SnapshotCodec, recover
from engine import codec
from engine.game import evolve
from engine.state import GameState

VERSION = "bench-1"


def _resume(state: GameState, tail: list[dict[str, Any]]) -> GameState:
    for payload in tail:
        state = evolve(state, codec.load(payload))
    return state


SNAPSHOTS: SnapshotCodec[GameState] = SnapshotCodec(
    version=VERSION, dump=codec.dump, load=codec.load, resume=_resume
)
"""Engine state ↔ JSON: what the bot could store as a snapshot."""


async def store_games(bench: Bench, count: int, *, windows: int, posts: int, tail: int) -> int:
    """`count` active games with their events and a snapshot; returns the events per game."""
    total = 0
    for n in range(count):
        game = play("v2", 16, f"restart-{n}", windows=windows, posts_per_day=posts)
        events = game.dumped()
        total += len(events)
        result = await bench.repo.create_game(
            server_id=SERVER_ID,
            ruleset=game.created.ruleset,
            seed=game.created.seed,
            commitment=game.created.commitment,
            seats=[SeatSpec(seat=i, name=f"玩家{i}") for i in range(1, 17)],
            events=events,
            options={"tie": "lots"},
            channels={"game": str(30_000 + n), "vote": str(40_000 + n)},
            schedule={},
        )
        upto = max(1, len(events) - tail)
        state = fold(events[:upto])
        if codec.load(codec.dump(state)) != state:
            raise AssertionError("the engine state does not round-trip through engine.codec")
        await bench.repo.save_snapshot(result.game_id, Loaded(state=state, seq=upto), SNAPSHOTS)
    return total // max(1, count)


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
                row = (await conn.execute(newest, {"g": game_id, "v": VERSION})).first()
                after = row[0] if row is not None else 0
            (await conn.execute(events, {"g": game_id, "s": after})).all()
    return time.perf_counter() - start


async def rebuild(bench: Bench, *, snapshots: bool) -> tuple[float, int]:
    """Seconds for `bot.store.recover` (with or without snapshots), and the games rebuilt."""
    start = time.perf_counter()
    report = await recover(
        bench.repo, fold, noop_performer, snapshot=SNAPSHOTS if snapshots else None
    )
    seconds = time.perf_counter() - start
    if report.stopped:
        raise AssertionError(f"games stopped on rebuild: {report.stopped}")
    return seconds, len(report.games)


async def measure(
    bench: Bench, *, games: int, windows: int = 5, posts: int = 30, tail: int = 10,
    repeats: int = 3,
) -> list[Row]:  # fmt: skip
    """The restart rows for one backend."""
    per_game = await store_games(bench, games, windows=windows, posts=posts, tail=tail)
    game_ids = await bench.repo.active_game_ids()
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
        label = "snapshot + last events" if snapshots else "every event (no snapshot)"
        read = f"{tail} events + 1 snapshot" if snapshots else f"{per_game} events"
        rows.append(
            Row(
                section="restart",
                what=f"{bench.backend}: rebuild {rebuilt} active games, {label}",
                figure=f"{full * 1000:.0f} ms ({rebuilt / full:.0f} games/s)",
                baseline=f"raw read {raw * 1000:.0f} ms ({read} per game)",
                ratio=ratio,
                target="≤ 2× raw" if snapshots else "",
                met=(ratio is not None and ratio <= 2.0) if snapshots else None,
                note="" if snapshots else "what the bot does at start today (no snapshots yet)",
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

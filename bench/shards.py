"""Shards: a restart of N active games split over 4 shard processes on one PostgreSQL (#17).

Each shard process is a real OS process (`python -m bench.shards recover …`) that opens the
database, rebuilds its own games with `GameService.recover(shards)` (what a starting bot runs;
no Discord) and says its time and memory. The four run one after the other (on a 2-core
machine, four at once would measure the cores' contention, not the process); beside them, one
process recovering all N, and one process recovering N/4 alone on a database holding nothing
else (the figure a shard process must match: its cost depends on its own games only).

The games: a few 16-player v2 games are played through the bot's own path (`restart.play_game`:
`GameService` for every power, vote post and lock, snapshots written by the bot), on a server of
shard 0; then their rows (game, secret, seats, events, snapshots) are copied in bulk
(`INSERT … SELECT`) under new game ids and new servers, spread over the shards. Shard 0's quarter
is made first and measured alone, then the other three quarters are added.

Judged on CPU seconds of the process (the machine is shared: wall times are noisier) and on
memory: the RSS the rebuild added and the Python heap it
keeps (tracemalloc, in a second rebuild).
"""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from sqlalchemy import Table, TextClause, text

from bench.report import Row
from bench.restart import _rss, play_game
from bench.stores import SERVER_ID, Bench, Snowflakes, noop_performer
from bot.runtime.service import GameService
from bot.runtime.timing import SystemClock
from bot.store import Repository, open_database
from bot.store.models import Event, Game, GameSecret, Seat, Snapshot
from bot.store.values import Shards

SHARD_COUNT = 4
TEMPLATES = 8
"""Games played through the service; every other game is a copy of one of them."""
WITHIN = 1.3
"""A shard process's time and memory must be within this of one process recovering its
quarter alone."""
_SHIFT = 22
_COPIED = (GameSecret, Seat, Event, Snapshot)
"""The rows of a game a rebuild reads, or the bot keeps beside them (inputs and the outbox,
all done, are not copied: the copies' events carry no input)."""


def server_on(shard: int, n: int) -> int:
    """The n-th server id of `shard` (of SHARD_COUNT): shard = (id >> 22) % count."""
    return ((SERVER_ID >> _SHIFT) + n * SHARD_COUNT + shard) << _SHIFT | 777


async def play_templates(bench: Bench) -> list[int]:
    """The template games, played through the service on a server of shard 0."""
    assert (SERVER_ID >> _SHIFT) % SHARD_COUNT == 0
    ids = Snowflakes()
    await asyncio.gather(
        *(play_game(bench, n, windows=4, posts=24, ids=ids) for n in range(TEMPLATES))
    )
    await bench.repo.flush()
    return await bench.repo.active_game_ids()


async def copy_games(bench: Bench, templates: list[int], shards: list[int], per_shard: int) -> None:
    """`per_shard` copies of the templates (round robin) on each of `shards`, each copy on a new
    server of its shard, in one `INSERT … SELECT` per table."""
    copies = per_shard * len(shards)
    async with bench.db.engine.begin() as conn:
        base = (await conn.execute(text("SELECT max(id) FROM games"))).scalar_one()
        # copy c (1…copies): game base + c, a copy of templates[c % T], on shard shards[c % S]
        plan = (
            "SELECT c, CAST(:base AS BIGINT) + c AS game, "
            "(CAST(:templates AS BIGINT[]))[1 + c % CAST(:t AS INT)] AS template, "
            "((CAST(:root AS BIGINT) + (CAST(:first AS BIGINT) + c) * CAST(:count AS INT) "
            "+ (CAST(:shards AS INT[]))[1 + c % CAST(:s AS INT)]) << 22) | 777 AS server "
            "FROM generate_series(1, CAST(:copies AS INT)) AS c"
        )
        first = (await conn.execute(text("SELECT count(*) FROM servers"))).scalar_one()
        params = {
            "base": base,
            "templates": templates,
            "t": len(templates),
            "root": SERVER_ID >> _SHIFT,
            "first": first,
            "count": SHARD_COUNT,
            "shards": shards,
            "s": len(shards),
            "copies": copies,
        }
        await conn.execute(
            text(
                f"INSERT INTO servers (id, settings, created_at, updated_at) "
                f"SELECT p.server, '{{}}', now(), now() FROM ({plan}) p"
            ),
            params,
        )
        copy = _copy_rows(plan)
        await conn.execute(copy(Game.__table__, {"id": "p.game", "server_id": "p.server"}), params)
        for model in _COPIED:
            replaced = {"game_id": "p.game", "message_id": "NULL"}
            await conn.execute(copy(model.__table__, replaced, "game_id"), params)
        await conn.execute(
            text(
                "SELECT setval(pg_get_serial_sequence('games', 'id'), (SELECT max(id) FROM games))"
            )
        )


def _copy_rows(plan: str) -> Callable[..., TextClause]:
    """The statement copying a table's rows of each copy's template, `replaced` columns set
    from the plan (`p.game`, `p.server`) and the rest as the template's."""

    def statement(table: Table, replaced: dict[str, str], key: str = "id") -> TextClause:
        columns = [c.name for c in table.columns]
        chosen = ", ".join(replaced.get(name, f"r.{name}") for name in columns)
        return text(
            f"INSERT INTO {table.name} ({', '.join(columns)}) SELECT {chosen} "
            f"FROM ({plan}) p JOIN {table.name} r ON r.{key} = p.template"
        )

    return statement


async def recover_here(url: str, shards: Shards | None) -> dict[str, Any]:
    """In this process: rebuild the games of `shards` (all, if None) as a starting bot does;
    its games, wall and CPU seconds, the RSS the rebuild added and the heap it keeps."""
    db = open_database(url)
    repo = Repository(db.sessions)
    try:
        gc.collect()
        rss0 = _rss()
        wall, cpu = time.perf_counter(), time.process_time()
        service = GameService(repo, SystemClock())
        service.set_performer(noop_performer)
        stopped = await service.recover(shards)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        games = len(await service.active_games(shards))
        gc.collect()
        rss = _rss() - rss0
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
        [sys.executable, "-m", "bench.shards", "recover", url, layout],
        stdout=subprocess.PIPE,
        text=True,
    )


def answer(process: subprocess.Popen[str]) -> dict[str, Any]:
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


async def measure(bench: Bench, *, games: int) -> list[Row]:
    """The shard rows (PostgreSQL)."""
    quarter = max(TEMPLATES, games // SHARD_COUNT)
    templates = await play_templates(bench)
    await copy_games(bench, templates, [0], quarter - len(templates))
    loop = asyncio.get_running_loop()
    alone_layout: list[Shards | None] = [None]
    (alone,) = await loop.run_in_executor(None, recover_apart, bench.url, alone_layout)
    await copy_games(bench, templates, [1, 2, 3], quarter)
    layouts: list[Shards | None] = [Shards(SHARD_COUNT, (k,)) for k in range(SHARD_COUNT)]
    shards = await loop.run_in_executor(None, recover_apart, bench.url, layouts)
    (everything,) = await loop.run_in_executor(None, recover_apart, bench.url, alone_layout)
    return rows(alone, shards, everything)


def rows(
    alone: dict[str, Any], shards: list[dict[str, Any]], everything: dict[str, Any]
) -> list[Row]:
    """One row per shard process against the quarter alone, and the one-process figure."""
    out = []
    total = sum(s["games"] for s in shards)
    for k, shard in enumerate(shards):
        cpu = shard["cpu"] / alone["cpu"]
        memory = max(shard["rss"] / max(1, alone["rss"]), shard["heap"] / alone["heap"])
        out.append(
            Row(
                section="shards",
                what=f"postgresql: shard {k} of {SHARD_COUNT} recovers {shard['games']} of "
                f"{total} games",
                figure=f"{shard['cpu']:.2f} s CPU, heap {_mb(shard['heap'])}, RSS +"
                f"{_mb(shard['rss'])}",
                baseline=f"{alone['games']} alone: {alone['cpu']:.2f} s CPU, heap "
                f"{_mb(alone['heap'])}, RSS +{_mb(alone['rss'])}",
                ratio=max(cpu, memory),
                target=f"time and memory ≤ {WITHIN}× alone",
                met=cpu <= WITHIN and memory <= WITHIN,
                note=f"wall {shard['wall']:.2f} s (alone {alone['wall']:.2f} s); ratio: the larger "
                "of CPU time, RSS added and heap kept; each its own OS process, one at a time",
                values={"shard": shard, "alone": alone, "cpu_ratio": cpu, "memory_ratio": memory},
            )
        )
    out.append(
        Row(
            section="shards",
            what=f"postgresql: one process recovers all {everything['games']} games",
            figure=f"{everything['cpu']:.2f} s CPU, heap {_mb(everything['heap'])}, RSS +"
            f"{_mb(everything['rss'])}",
            baseline=f"largest shard process: {max(s['cpu'] for s in shards):.2f} s CPU, heap "
            f"{_mb(max(s['heap'] for s in shards))}",
            ratio=everything["cpu"] / max(s["cpu"] for s in shards),
            note=f"for comparison: what one unsharded process pays (wall {everything['wall']:.2f}"
            " s); a shard process pays for its own quarter only",
            values={"everything": everything},
        )
    )
    return out


def _mb(size: float) -> str:
    return f"{size / 2**20:.0f} MB"


def _layout(value: str) -> Shards | None:
    if value == "all":
        return None
    count, ids = value.split(":")
    return Shards(int(count), tuple(int(i) for i in ids.split(",")))


if __name__ == "__main__":  # python -m bench.shards recover URL all|COUNT:ID,ID…
    _, command, url, layout = sys.argv
    assert command == "recover"
    print(json.dumps(asyncio.run(recover_here(url, _layout(layout)))))

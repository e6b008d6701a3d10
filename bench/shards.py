"""Shards: a restart of N active games split over 4 shard processes on one PostgreSQL (#17).

Each shard process is a real OS process (`bench.recovering`) that opens the database, rebuilds
its own games with `GameService.recover(shards)` (what a starting bot runs; no Discord) and says
its time and memory. The four run one after the other (on a 2-core
machine, four at once would measure the cores' contention, not the process); beside them, one
process recovering all N, and one process recovering N/4 alone on a database holding nothing
else (the figure a shard process must match: its cost depends on its own games only). Each of
these is run `REPEATS` times and judged on its least figures; each round of the four starts one
shard later than the one before.

The games (`bench.seeding`): a few 16-player v2 games are played through the bot's own path
(`GameService` for every power, vote post and lock, snapshots written by the bot), on a server of
shard 0; then their rows are copied in bulk (`copy_games`: `INSERT … SELECT`) under new game ids,
channels and players, on new servers spread over the shards. Shard 0's quarter is made first and
measured alone, then the other three quarters are added.

Judged on CPU seconds of the process (the machine is shared: wall times are noisier) and on
memory: the RSS the rebuild added and the Python heap it
keeps (tracemalloc, in a second rebuild).
"""

from __future__ import annotations

import asyncio
from typing import Any

from bench.recovering import recover_apart
from bench.report import Row
from bench.seeding import TEMPLATES, copy_games, play_templates
from bench.stores import SERVER_ID, Bench
from bot.store.values import Shards

SHARD_COUNT = 4
WITHIN = 1.3
"""A shard process's time and memory must be within this of one process recovering its
quarter alone."""
REPEATS = 5
"""Runs of each process measured (alone, and each shard, in rounds), each figure's least kept:
on this shared 2-core VM one run of the very same process varied by a quarter of its CPU time
(and on 2026-12-06 from 0.82 to 1.49 s for 2,500 games, pinned to either vCPU or not, with any
hash seed), more than the target's margin; interference only adds, so the least of a few runs is
the process's own cost. With 3 runs, one shard's least was still a slow run in two full benches
out of three that day, of the code before and after a change that did not touch recovery."""
_SHIFT = 22


def server_on(shard: int, n: int) -> int:
    """The n-th server id of `shard` (of SHARD_COUNT): shard = (id >> 22) % count."""
    return ((SERVER_ID >> _SHIFT) + n * SHARD_COUNT + shard) << _SHIFT | 777


def copies_plan(
    templates: list[int], shards: list[int], per_shard: int, first: int
) -> list[tuple[int, int]]:
    """`per_shard` copies of the templates (round robin) on each of `shards`, each on a new
    server of its shard (servers numbered from `first`): `(template, server)` for `copy_games`."""
    return [
        (templates[c % len(templates)], server_on(shards[c % len(shards)], first + c))
        for c in range(1, per_shard * len(shards) + 1)
    ]


async def measure(bench: Bench, *, games: int) -> list[Row]:
    """The shard rows (PostgreSQL)."""
    quarter = max(TEMPLATES, games // SHARD_COUNT)
    assert (SERVER_ID >> _SHIFT) % SHARD_COUNT == 0  # the templates are on shard 0
    templates = await play_templates(bench, TEMPLATES)
    await copy_games(bench, copies_plan(templates, [0], quarter - len(templates), 1))
    loop = asyncio.get_running_loop()
    alone_layout: list[Shards | None] = [None]
    runs = await loop.run_in_executor(None, recover_apart, bench.url, alone_layout * REPEATS)
    alone = least(runs)
    await copy_games(bench, copies_plan(templates, [1, 2, 3], quarter, quarter))
    order: list[Shards | None] = [rotated(k, r) for r in range(REPEATS) for k in range(SHARD_COUNT)]
    runs = await loop.run_in_executor(None, recover_apart, bench.url, order)
    shards = [
        least([run for at, run in zip(order, runs, strict=True) if at == own]) for own in layouts()
    ]
    (everything,) = await loop.run_in_executor(None, recover_apart, bench.url, alone_layout)
    return rows(alone, shards, everything)


def layouts() -> list[Shards]:
    """Each shard process's shards: one each."""
    return [Shards(SHARD_COUNT, (k,)) for k in range(SHARD_COUNT)]


def rotated(k: int, r: int) -> Shards:
    """The `k`-th process to run in round `r`: each round starts one shard later, so no shard
    is always the first process after the previous one (or, in round 0, after the copies are
    made) and no position in a round weighs on one shard's least figure."""
    return layouts()[(k + r) % SHARD_COUNT]


def least(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's least over `runs` of one process (`REPEATS`), which all rebuilt the same
    games."""
    if len({run["games"] for run in runs}) != 1:
        raise ValueError(f"runs of one process rebuilt different games: {runs}")
    return {key: min(run[key] for run in runs) for key in runs[0]}


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
                "of CPU time, RSS added and heap kept; each its own OS process, one at a time, "
                f"each figure the least of {REPEATS} runs",
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

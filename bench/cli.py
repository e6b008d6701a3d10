"""`faguan bench`: the flags, and the run that prints the table (or JSON with `--json`).

Only `argparse` is imported at module level, so building the `faguan` parser stays cheap; the
benchmarks are imported when `faguan bench` runs.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import math
import sys
import time
from typing import Any

#: The sections of the table, in the order they run.
SECTIONS = ("ingest", "restart", "deadlines", "day", "shards", "discord", "engine")
#: The databases the store sections can measure.
BACKENDS = ("sqlite", "postgresql")
#: The optional dependencies `faguan bench` needs beyond the runtime install (with the versions
#: CI tested, as the README installs everything).
EXTRA = "pip install -c constraints.txt -e '.[bench]'"


class _HelpWithDefaults(argparse.HelpFormatter):
    """Each option's help ends with its default, unless the help gives it already (in words:
    "both", "all") or there is none to give (a switch, a value left out)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        return f"{text} (default: %(default)s)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `faguan bench` (sizes: issue #16's; the defaults take ~8 min on 2 cores),
    each shown with its default in `faguan bench --help`."""
    parser.formatter_class = _HelpWithDefaults
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument(
        "--backends",
        default="sqlite,postgresql",
        help="databases to measure, comma-separated: sqlite, postgresql (default: both; "
        "PostgreSQL is skipped, and said so, when it does not answer)",
    )
    parser.add_argument(
        "--pg-url",
        default=None,
        help="PostgreSQL server to create a scratch database on "
        "(default: postgresql+asyncpg://postgres@127.0.0.1:5432/test)",
    )
    parser.add_argument("--posts", type=int, default=800, help="ingest: vote posts (N)")
    parser.add_argument(
        "--games",
        default="1,10,100",
        help="ingest: games at once (M), comma-separated runs (default: 1,10,100)",
    )
    parser.add_argument(
        "--raw-rows", type=int, default=2000, help="ingest: rows per driver baseline (C / asyncpg)"
    )
    parser.add_argument(
        "--restart-games",
        type=int,
        default=1000,
        help="restart: active games to rebuild (K; default 1000, issue #16's size: 8 played "
        "through the bot, the rest copies of their rows)",
    )
    parser.add_argument(
        "--shard-games",
        type=int,
        default=10_000,
        help="shards: active games split over 4 shard processes (PostgreSQL only; default 10000)",
    )
    parser.add_argument(
        "--day-posts", type=int, default=5000, help="day: vote posts in one long day"
    )
    parser.add_argument(
        "--night-submissions",
        type=int,
        default=5000,
        help="day: power submissions in one long night (a player's /act again and again)",
    )
    parser.add_argument("--timers", type=int, default=1000, help="deadlines: games' timers per run")
    parser.add_argument(
        "--spread",
        default="15,3",
        help="deadlines: seconds the timers are spread over, comma-separated runs (default: "
        "15,3, the issue's two cases)",
    )
    parser.add_argument(
        "--engine-seconds", type=float, default=2.0, help="engine: seconds per engine figure"
    )
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"sections to run, comma-separated: {', '.join(SECTIONS)} (default: all)",
    )


async def run(args: argparse.Namespace, progress: Any = None) -> list[Any]:
    """Every asked-for section; the rows of the table in order."""
    from bench import day, deadlines, engine_speed, ingest, night, restart, shards
    from bench.report import Row
    from bench.stores import DEFAULT_PG_URL, open_bench, pg_reachable

    say = progress or (lambda _text: None)
    only = set(_names(args.only))
    rows: list[Row] = []
    pg_url = args.pg_url or DEFAULT_PG_URL
    for backend in _names(args.backends):
        if not only & {"ingest", "restart", "deadlines", "day"}:
            break
        if backend == "postgresql" and (why := await pg_reachable(pg_url)) is not None:
            rows.append(Row(section="store", what="postgresql", figure="skipped",
                            note=f"PostgreSQL at {pg_url} does not answer: {why}"))  # fmt: skip
            continue
        async with open_bench(backend, pg_url) as bench:
            # Restart first: it rebuilds every active game, so only its own are there yet.
            if "restart" in only:
                say(f"{backend}: restart")
                rows += await restart.measure(bench, games=args.restart_games)
            if "ingest" in only:
                say(f"{backend}: ingest")
                rows += await ingest.measure(
                    bench, posts=args.posts, games=_counts(args.games), raw_rows=args.raw_rows
                )
            if "deadlines" in only:
                say(f"{backend}: deadlines")
                rows += await deadlines.measure(
                    bench,
                    timers=args.timers,
                    spreads=[float(x) for x in _names(args.spread)],
                    games=min(10, max(_counts(args.games))),
                )
            if "day" in only:
                say(f"{backend}: one long day")
                rows += await day.measure(bench, posts=args.day_posts)
                say(f"{backend}: one long night")
                rows += await night.measure(bench, submissions=args.night_submissions)
    if "shards" in only:
        if "postgresql" not in _names(args.backends):
            why = "shard processes share PostgreSQL, not in --backends"
            rows.append(Row(section="shards", what="postgresql", figure="skipped", note=why))
        elif (why := await pg_reachable(pg_url)) is not None:
            rows.append(Row(section="shards", what="postgresql", figure="skipped",
                            note=f"PostgreSQL at {pg_url} does not answer: {why}"))  # fmt: skip
        else:
            say(f"shards: {args.shard_games} games over 4 processes")
            async with open_bench("postgresql", pg_url) as bench:
                rows += await shards.measure(bench, games=args.shard_games)
    if "discord" in only:
        from bench import discord_calls  # simcord: the bench extra

        say("discord calls (simcord)")
        rows += await discord_calls.measure()
    if "engine" in only:
        say("engine")
        rows += engine_speed.measure(args.engine_seconds)
    return rows


def _counts(value: str) -> list[int]:
    return [int(name) for name in _names(value)]


def _names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


COUNTS = (
    "posts", "raw_rows", "restart_games", "shard_games", "day_posts", "night_submissions", "timers"
)  # fmt: skip
"""The flags (as `args` names them) that each give a count: 1 or more, or a section divides by
zero or measures nothing."""


def refusal(args: argparse.Namespace) -> str | None:
    """Why these flags cannot run, in one line (None when they can): an unknown section or
    backend, a count or time that is not one (`--games 0`, `--spread x`), or the Discord
    section without simcord (the `bench` extra). All is checked before any section runs, so a
    mistake is not found after minutes of the sections before it."""
    flags = (("--only", args.only, SECTIONS), ("--backends", args.backends, BACKENDS))
    for flag, given, known in flags:
        unknown = [name for name in _names(given) if name not in known]
        if unknown:
            return f"{flag}: unknown {', '.join(unknown)} (known: {', '.join(known)})"
        if not _names(given):
            return f"{flag}: names nothing (known: {', '.join(known)})"
    for name in COUNTS:
        if getattr(args, name) < 1:
            return f"--{name.replace('_', '-')}: a count of 1 or more, not {getattr(args, name)}"
    if (why := _games_refused(args.games)) is not None:
        return why
    if (why := _spreads_refused(args.spread)) is not None:
        return why
    if not 0 < args.engine_seconds < math.inf:
        return f"--engine-seconds: seconds above 0, not {args.engine_seconds}"
    if "discord" in _names(args.only) and importlib.util.find_spec("simcord") is None:
        others = ",".join(s for s in SECTIONS if s != "discord")
        return (
            f"the discord section needs simcord, the faguan[bench] extra: {EXTRA} "
            f"(or leave it out: --only {others})"
        )
    return None


def _games_refused(value: str) -> str | None:
    try:
        counts = _counts(value)
    except ValueError:
        return f"--games: not whole numbers: {value}"
    if not counts or any(count < 1 for count in counts):
        return f"--games: counts of 1 or more, comma-separated: {value}"
    return None


def _spreads_refused(value: str) -> str | None:
    try:
        spreads = [float(x) for x in _names(value)]
    except ValueError:
        return f"--spread: not numbers: {value}"
    if not spreads or any(not 0 < x < math.inf for x in spreads):  # nan and inf too
        return f"--spread: seconds above 0, comma-separated: {value}"
    return None


def main(args: argparse.Namespace) -> int:
    """Run the benchmarks and print one table (or JSON); 2 with one line if the flags cannot run."""
    from bench.report import as_json, machine, render_table

    if (why := refusal(args)) is not None:
        print(f"faguan bench: {why}", file=sys.stderr)
        return 2
    started = time.perf_counter()

    def progress(text: str) -> None:
        print(f"[{time.perf_counter() - started:5.1f} s] {text}", file=sys.stderr, flush=True)

    rows = asyncio.run(run(args, progress))
    info = machine()
    info["seconds"] = round(time.perf_counter() - started, 1)
    if args.json:
        options = {k: v for k, v in vars(args).items() if k not in ("func",)}
        print(json.dumps(as_json(rows, info, options), ensure_ascii=False, indent=2))
    else:
        print(render_table(rows, info))
        print(f"\n({info['seconds']} s)")
    return 0

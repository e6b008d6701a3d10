"""Ingest: vote posts through the bot's whole path, against the drivers' own durable append rate.

The full path per post is what `PlayCog.ingest` does for a message in a vote channel: the game's
state and seat names (cached), `parse_vote_post`, then `GameService.submit(PostVote, message_id)`:
load → decide → one transaction with the input, the event and the outbox row → the effect (the ✅
reply) handed to a no-op performer and marked done. M games take posts at once, each game's posts
one after another (as Discord delivers them), so the per-game lock and the database see
concurrency.

The bot's store uses group commit (`bot.store.repository`): posts to different games recorded
while a transaction is being written share the next commit, each post still waiting for that
durable commit (the same `synchronous` setting) before its effect is performed.

The baselines (`bench.baselines`) append comparable rows (one `events` row and one `outbox` row,
with the same JSON payloads) without the bot's layers: C `sqlite3` on the same file and settings,
one post per commit and M posts per commit; `asyncpg` with one and N connections, and grouped.
Each run is judged against the baseline issue #16 sets for it (`_target`). The runs alternate in
rounds, so drift (page cache, WAL growth, checkpoints) falls on all of them.
"""

from __future__ import annotations

import asyncio
import json
import time
import weakref
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from bench import baselines
from bench.engine_floor import EnginePosts
from bench.noop_port import NoopPort
from bench.report import Row, in_ms, rate
from bench.stores import Bench, Snowflakes, create_game, lock_now, utcnow
from bench.vote_plan import plan_posts
from bot.runtime.collector import collector_restored, settle_started_heap
from bot.runtime.contexts import Contexts
from bot.runtime.port import ChannelPost
from bot.runtime.schedule import to_ms
from bot.runtime.service import GameService
from bot.runtime.vote_posts import VotePosts
from engine import codec
from engine.effects import ReplyToPost
from engine.events import VotePosted
from engine.model import Instant, Seat
from engine.state import VotePost

RAW_GAME = 999_999
"""The bench's game number for the raw rows (its own game row, so foreign keys hold)."""
SPREAD_GAMES = 1_000_000
"""The first of the bench's game numbers for the raw rows spread over as many games as the
bot's largest run has (`baselines.sqlite_append_spread`)."""
FLOOR_GAMES = 100
"""From this many games at once, the SQLite run is also shown beside the Python floor
(`baselines.sqlite_floor`), C writing the bot's own rows (`baselines.sqlite_bot_rows`) and the
engine floor (`bench.engine_floor`): there the C rate of bare rows is beyond what any Python
program reaches."""


@dataclass
class IngestResult:
    """What one ingest run measured."""

    posts: int
    games: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    refused: int = 0

    @property
    def rate(self) -> float:
        """Posts per second."""
        return rate(self.posts, self.seconds)


async def prepare_games(bench: Bench, games: int, first: int = 0) -> list[int]:
    """`games` started games, each moved to day 1's vote window by a forced lock."""
    ids = []
    for n in range(first, first + games):
        game_id = await create_game(bench.service, n)
        await lock_now(bench.service, game_id)
        ids.append(game_id)
    return ids


async def ingest_one(bench: Bench, game_id: int, text: str, author: int, message_id: int) -> bool:
    """One vote post through the bot's own path (`VotePosts.ingest`, what `PlayCog.ingest`
    calls); True if accepted."""
    return await _ingest(_vote_posts(bench.service), game_id, text, author, message_id)


async def _ingest(votes: VotePosts, game_id: int, text: str, author: int, message_id: int) -> bool:
    """`ingest_one` with the runtime's reader at hand (as the bot's cog has it)."""
    post = ChannelPost(id=message_id, author_id=author, content=text, created_at=utcnow())
    outcome = await votes.ingest(game_id, post)
    return outcome is not None and outcome.ok


_VOTE_POSTS: weakref.WeakKeyDictionary[GameService, VotePosts] = weakref.WeakKeyDictionary()


def _vote_posts(service: GameService) -> VotePosts:
    """The runtime's vote-post reader on `service` (one per service, as the runtime keeps one),
    with a platform that does nothing (seat names come from the store, as the bot's do)."""
    votes = _VOTE_POSTS.get(service)
    if votes is None:
        port = NoopPort()
        votes = VotePosts(service, Contexts(service, port, "zh-CN"), port)
        _VOTE_POSTS[service] = votes
    return votes


async def run_ingest(
    bench: Bench, game_ids: list[int], posts: int, *, seed: int = 7, ids: Snowflakes | None = None
) -> IngestResult:
    """`posts` vote posts spread over the games, all games at once; latency per post."""
    ids = ids or Snowflakes()
    plan = await plan_posts(bench.service, game_ids, posts, seed)
    result = IngestResult(posts=posts, games=len(game_ids), seconds=0.0)
    votes = _vote_posts(bench.service)

    async def one_game(game_id: int) -> None:
        for text, author in plan[game_id]:
            t0 = time.perf_counter()
            ok = await _ingest(votes, game_id, text, author, ids.next())
            result.latencies.append(time.perf_counter() - t0)
            if not ok:
                result.refused += 1

    start = time.perf_counter()
    await asyncio.gather(*(one_game(g) for g in game_ids))
    result.seconds = time.perf_counter() - start
    return result


def _raw_objects() -> tuple[Any, Any]:
    """What a vote post appends: its event and its ✅ reply, as the codec's dicts."""
    post = VotePost(
        post_id="1456089543475200005", author="1400000000000000105", seat=Seat(5),
        target=Seat(9), abstain=False, at=Instant(to_ms(utcnow())),
    )  # fmt: skip
    reply = ReplyToPost(post_id=post.post_id, key=None)
    return codec.dump(VotePosted(post=post)), codec.dump(reply)


def _raw_payloads() -> tuple[str, str]:
    """The JSON a vote post appends (as text, for the C drivers)."""
    dumps = partial(json.dumps, ensure_ascii=False, separators=(",", ":"))
    event, reply = _raw_objects()
    return dumps(event), dumps(reply)


@dataclass
class _Baselines:
    """Seconds and rows per baseline variant, summed over the rounds."""

    seconds: dict[str, float] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)
    """Posts the engine refused in the engine floor's last round (a plan's vote it cannot take)."""

    def add(self, name: str, rows: int, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds
        self.rows[name] = self.rows.get(name, 0) + rows

    def rate(self, name: str) -> float:
        return rate(self.rows.get(name, 0), self.seconds.get(name, 0.0))


async def _engine_posts(
    bench: Bench, game_ids: list[int], posts: int, seed: int, ids: Snowflakes
) -> EnginePosts:
    """`posts` vote posts for the engine floor on copies of the games' states, planned as the
    bot's runs are, read with the maps the bot's reader keeps."""
    votes = _vote_posts(bench.service)
    states, maps = {}, {}
    for game_id in game_ids:
        states[game_id] = state = await bench.service.state(game_id)
        names = await votes.contexts.seat_names(game_id, state)
        maps[game_id] = votes.maps.get(game_id, state, names)
    plan = await plan_posts(bench.service, game_ids, posts, seed)
    return EnginePosts.of(states, maps, plan, [ids.next() for _ in range(posts)])


async def _baseline_round(
    bench: Bench,
    game_id: int,
    rows: int,
    sets: dict[int, list[int]],
    first: int,
    out: _Baselines,
    ids: Snowflakes,
    spread: list[int],
) -> int:
    """One round of every baseline variant (`sets`: the bot's games, by how many at once;
    `spread`: games of the bench's own for the spread rows); the next free seq."""
    payloads = _raw_payloads()
    groups = sorted(c for c in sets if c > 1)
    if bench.backend == "sqlite":
        for per in [1, *groups]:
            n = max(per, rows // per * per)
            out.add(f"c/{per}", n, baselines.sqlite_append(bench, game_id, payloads, n, per, first))
            first += n
        for games in (g for g in groups if g >= FLOOR_GAMES):
            n = max(games, rows // games * games)
            bare = baselines.bare_rows(_raw_objects())
            seconds, first = await baselines.sqlite_floor(bench, game_id, bare, games, n, first)
            out.add(f"floor/{games}", n, seconds)
            seconds = baselines.sqlite_append_spread(bench, spread, payloads, n, first)
            out.add(f"spread/{games}", n, seconds)
            first += n // games
            posts = await _engine_posts(bench, sets[games], n, first, ids)
            seconds, first = await baselines.sqlite_floor(
                bench, game_id, posts.rows_for, games, n, first
            )  # a post the engine answers with several events takes a seq for each
            out.add(f"engine/{games}", n, seconds)
            out.refused[f"engine/{games}"] = posts.refused
            alone = await _engine_posts(bench, sets[games], n, first, ids)
            out.add(f"alone/{games}", n, alone.time_alone())
            seconds = baselines.sqlite_bot_rows(bench, game_id, payloads, n, games, first)
            out.add(f"rows/{games}", n, seconds)
            first += n
        return first
    conns_tried = sorted({min(g, 10) for g in groups})  # a server allows ~100 clients in all
    for conns, per in [(1, 1), *((c, 1) for c in conns_tried), *((1, g) for g in groups)]:
        n = max(conns * per, rows // (conns * per) * conns * per)
        seconds = await baselines.pg_append(
            bench, game_id, payloads, n, connections=conns, per_commit=per, first=first
        )
        out.add(f"pg/{conns}x{per}", n, seconds)
        first += n
    return first


async def _spread_games(bench: Bench, games: int) -> list[int]:
    """Games of the bench's own for the raw rows spread as the bot's `games`-game groups are
    (SQLite, from `FLOOR_GAMES` games at once; none otherwise)."""
    if bench.backend != "sqlite" or games < FLOOR_GAMES:
        return []
    return [await create_game(bench.service, SPREAD_GAMES + n) for n in range(games)]


def _target(backend: str, games: int, base: _Baselines) -> tuple[str, float, str, float] | None:
    """(baseline label, its rate, target text, least ratio) the issue sets for this run."""
    if backend == "sqlite":
        if games in (1, 10):
            least = 0.25 if games == 1 else 0.6
            return "C sqlite3, 1 post per commit", base.rate("c/1"), f"ratio ≥ {least}", least
        if games >= 100:
            per = f"c/{games}"
            return f"C sqlite3, {games} posts per commit", base.rate(per), "ratio ≥ 0.25", 0.25
        return None
    if games == 10:
        return "asyncpg, 10 connections", base.rate("pg/10x1"), "ratio ≥ 0.5", 0.5
    return None


def writer_cpu(bench: Bench) -> float:
    """CPU seconds used so far by the store's SQLite writer process (Linux: its schedstat, in
    ns); 0 with none running, or where /proc does not tell."""
    pid = bench.repo.sqlite_writer_pid
    if pid is None:
        return 0.0
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


async def measure(
    bench: Bench, *, posts: int, games: list[int] | int, raw_rows: int, rounds: int = 2
) -> list[Row]:
    """The ingest rows for one backend: the bot with 1, 10, 100 games at once, each beside the
    driver's own rate measured in the same rounds."""
    counts = [games] if isinstance(games, int) else list(games)
    ids = Snowflakes()
    sets: dict[int, list[int]] = {}
    first_game = 0
    for count in counts:
        sets[count] = await prepare_games(bench, count, first=first_game)
        first_game += count
    raw_game = await create_game(bench.service, RAW_GAME)
    spread = await _spread_games(bench, max(counts))
    for count in counts:  # warm-up: imports, statement caches, connections
        await run_ingest(bench, sets[count], min(posts, 2 * count), seed=1, ids=ids)
    base = _Baselines()
    next_seq = 1_000_000
    next_seq = await _baseline_round(
        bench, raw_game, 2 * max(counts), sets, next_seq, _Baselines(), ids, spread
    )
    full = {c: IngestResult(posts=0, games=c, seconds=0.0) for c in counts}
    cpu = dict.fromkeys(counts, 0.0)
    writer = dict.fromkeys(counts, 0.0)
    per_round = max(1, posts // rounds)
    with collector_restored():
        settle_started_heap()  # the games are running: the collector as a started bot has it
        for r in range(rounds):
            for count in counts:
                cpu0 = time.process_time(), writer_cpu(bench)
                part = await run_ingest(bench, sets[count], per_round, seed=10 + r, ids=ids)
                cpu[count] += time.process_time() - cpu0[0]
                writer[count] += writer_cpu(bench) - cpu0[1]
                one = full[count]
                one.posts += part.posts
                one.seconds += part.seconds
                one.latencies += part.latencies
                one.refused += part.refused
            next_seq = await _baseline_round(
                bench, raw_game, raw_rows // rounds, sets, next_seq, base, ids, spread
            )
    rows = []
    context = ", ".join(f"{name} {base.rate(name):.0f}/s" for name in base.rows)
    for count in counts:
        result = full[count]
        writer_ms = writer[count] / max(1, result.posts) * 1000
        cpu_ms = cpu[count] / max(1, result.posts) * 1000 + writer_ms
        sqlite = bench.backend == "sqlite"
        in_writer = f", {writer_ms:.2f} of it in SQLite's writer process" if sqlite else ""
        p50, p99 = in_ms(result.latencies)
        target = _target(bench.backend, count, base)
        label, against, aim, least = target if target else ("", 0.0, "", 0.0)
        ratio = result.rate / against if against else None
        rows.append(
            Row(
                section="ingest",
                what=f"{bench.backend}: {result.posts} vote posts, {count} game(s) at once",
                figure=f"{result.rate:.0f} posts/s",
                baseline=f"{label}: {against:.0f}/s" if label else "",
                ratio=ratio,
                p50_ms=p50,
                p99_ms=p99,
                target=aim,
                met=(ratio is not None and ratio >= least) if target else None,
                note=f"CPU {cpu_ms:.2f} ms per post (whole process{in_writer}); the bot "
                "group-commits, each "
                f"post awaiting its durable commit before its effect; the drivers alone, 1 events "
                f"+ 1 outbox row per post (c = sqlite3, pg = asyncpg connections x posts per "
                f"commit, floor = the Python floor below): {context}; {result.refused} post(s) "
                "refused by the engine",
                values={
                    "posts": result.posts,
                    "games": count,
                    "seconds": result.seconds,
                    "posts_per_s": result.rate,
                    "cpu_ms_per_post": cpu_ms,
                    "writer_cpu_ms_per_post": writer_ms,
                    "baseline_per_s": against,
                    "drivers_per_s": {name: base.rate(name) for name in base.rows},
                    "p50_ms": p50,
                    "p99_ms": p99,
                    "refused": result.refused,
                },
            )
        )
        floor = f"floor/{count}"
        if floor in base.rows:
            c_rate = base.rate(f"c/{count}")
            rows.append(_floor_row(count, base.rate(floor), c_rate, result.rate))
            rows.append(_bot_rows_row(count, base.rate(f"rows/{count}"), c_rate, result.rate))
            rows.append(_spread_row(count, base.rate(f"spread/{count}"), c_rate, result.rate))
            rows.append(
                _engine_floor_row(
                    count,
                    base.rate(f"engine/{count}"),
                    base.rate(f"alone/{count}"),
                    c_rate,
                    result.rate,
                    base.refused.get(f"engine/{count}", 0),
                )
            )
        if count == 10:
            rows.append(
                Row(
                    section="ingest",
                    what=f"{bench.backend}: CPU per post, 10 games at once (whole path)",
                    figure=f"{cpu_ms:.2f} ms",
                    target="≤ 0.35 ms",
                    met=cpu_ms <= 0.35,
                    note="process CPU time (event loop and driver threads, and SQLite's writer "
                    "process) over the posts; a PostgreSQL server's own CPU is not counted",
                    values={"cpu_ms_per_post": cpu_ms},
                )
            )
    return rows


def _floor_row(games: int, floor: float, c_rate: float, bot: float) -> Row:
    """The Python floor beside the C rate the bot's `games`-game run is judged against: how
    much of that target any Python program could meet, and how far the bot is from the floor."""
    return _beside_c_rate(
        games,
        f"the Python floor, {games} games at once (no parsing, no rules)",
        floor,
        c_rate,
        f"asyncio tasks that only encode a post's two payloads and await their group's durable "
        f"commit (C sqlite3 on a worker thread); the bot ({bot:.0f} posts/s) does "
        f"{bot / floor if floor else 0:.2f} of this floor's rate while parsing each post, "
        f"applying the rules and keeping the state",
        bot,
    )


def _bot_rows_row(games: int, bot_rows: float, c_rate: float, bot: float) -> Row:
    """C writing every row the bot writes per post, `games` posts to a commit, beside the bare
    rows' C rate the bot's `games`-game run is judged against: how much of that target the
    bot's durable, idempotent rows leave before any Python runs, and how near the bot comes."""
    return _beside_c_rate(
        games,
        f"the bot's rows by C sqlite3, {games} posts per commit (no Python layer)",
        bot_rows,
        c_rate,
        f"per post its inputs row (the idempotency key), its game row's sequence-checked bump, "
        f"its events and outbox rows and its reply's done mark (with the next commit), as the "
        f"bot's group commit writes them, one commit after another; the bot ({bot:.0f} posts/s) "
        f"does {bot / bot_rows if bot_rows else 0:.2f} of this rate while running its Python "
        f"(parse, rules, state, JSON) between commits",
        bot,
    )


def _spread_row(games: int, spread: float, c_rate: float, bot: float) -> Row:
    """C writing the same bare rows as the target's baseline, each commit's spread over
    `games` games as the bot's groups are: how much of the one-game rate is what the bot's
    grouping costs any writer (an insertion point in every index for each game of a commit)."""
    return _beside_c_rate(
        games,
        f"the same bare rows by C sqlite3, {games} per commit spread over {games} games",
        spread,
        c_rate,
        f"one events + one outbox row per post as in the target's baseline, but each commit "
        f"holds one post of each of {games} games, as the bot's group commit does with "
        f"{games} games posting (the target's baseline writes one game's rows); the bot "
        f"({bot:.0f} posts/s) does {bot / spread if spread else 0:.2f} of this rate. Not the "
        f"target's baseline, which issue #16 set as the one-game rate",
        bot,
    )


def _engine_floor_row(
    games: int, floor: float, alone: float, c_rate: float, bot: float, refused: int
) -> Row:
    """The engine floor beside the C rate the bot's `games`-game run is judged against: what is
    left of that rate once each post is parsed and decided at all (`bench.engine_floor`)."""
    row = _beside_c_rate(
        games,
        f"the engine floor, {games} games at once (the engine's work, no bot layers)",
        floor,
        c_rate,
        f"the Python floor with the engine's own work on every post making its rows (read as a "
        f"vote, decide, fold, effects, codec, JSON), no lock, idempotency row, sequence check or "
        f"delivery; the engine alone on the same posts, with no commit at all: {alone:.0f} "
        f"posts/s = {alone / c_rate if c_rate else 0:.2f} of the C rate, the most one process "
        f"on this engine could do here if its commits cost nothing; the bot ({bot:.0f} posts/s) "
        f"does {bot / floor if floor else 0:.2f} of the engine floor; {refused} post(s) refused "
        f"by the engine in its last round",
        bot,
    )
    row.values.update(engine_alone_per_s=alone, refused=refused)
    return row


def _beside_c_rate(games: int, what: str, rate: float, c_rate: float, how: str, bot: float) -> Row:
    """A context row (no target) for the `games`-game run: `rate` beside C's bare rows."""
    return Row(
        section="ingest",
        what=f"sqlite: {what}",
        figure=f"{rate:.0f} posts/s",
        baseline=f"C sqlite3, {games} posts per commit: {c_rate:.0f}/s",
        ratio=rate / c_rate if c_rate else None,
        note=f"context for the {games}-game target: {how}",
        values={"posts_per_s": rate, "baseline_per_s": c_rate, "bot_per_s": bot},
    )

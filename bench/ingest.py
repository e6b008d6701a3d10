"""Ingest: vote posts through the bot's whole path, against the store's raw durable append rate.

The full path per post is what `PlayCog.ingest` does for a message in a vote channel: the game's
state and seat names (cached), `parse_vote_post`, then `GameService.submit(PostVote, message_id)`:
load → decide → one transaction with the input, the event and the outbox row → the effect (the ✅
reply) handed to a no-op performer and marked done. M games take posts at once, each game's posts
one after another (as Discord delivers them), so the per-game lock and the database see
concurrency.

The bot's store uses group commit (`bot.store.repository`): posts to different games recorded
while a transaction is being written share the next commit, each post still waiting for that
durable commit (the same `synchronous` setting) before its effect is performed.

The raw baseline appends comparable rows (one `events` row and one `outbox` row, with the same
JSON payloads) in one transaction per post, committed, through the same SQLAlchemy engine: the
store's durable append rate. It runs with one writer and with M writers; the faster is the
baseline. For context (not the baseline), the same raw rows are also appended M to a commit, as
the group commit does at best. The runs alternate in rounds, so drift (page cache, WAL growth,
checkpoints) falls on all of them.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import Table, insert

from bench.report import Row, in_ms, rate
from bench.stores import Bench, Snowflakes, create_game, lock_now, utcnow
from bot.runtime.schedule import to_ms
from bot.store.models import Event, Outbox
from engine import codec
from engine.commands import PostVote
from engine.effects import ReplyToPost
from engine.events import VotePosted
from engine.model import Instant, Seat
from engine.state import VotePost
from engine.voteparse import Abstain, NotAVote, UnknownTarget, VoteFor, parse_vote_post

RAW_GAME = 999_999
"""The bench's game number for the raw rows (its own game row, so foreign keys hold)."""


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


@dataclass
class RawResult:
    """What the raw append measured (best of the concurrencies tried)."""

    rows: int
    seconds: float
    writers: int
    by_writers: dict[int, float] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        """Appends (transactions) per second."""
        return rate(self.rows, self.seconds)


def post_texts(seat: int, user_id: int) -> list[str]:
    """Ways players write a vote for `seat` (docs/rules.md §1.1), plus an abstention."""
    return [
        f"投{seat}号",
        f"投 {seat}",
        f"vote {seat}",
        f"投{seat}号，理由：昨天发言前后矛盾",
        f"投 玩家{seat}",
        f"投 <@{user_id}>",
        "弃权",
    ]


async def prepare_games(bench: Bench, games: int, first: int = 0) -> list[int]:
    """`games` started games, each moved to day 1's vote window by a forced lock."""
    ids = []
    for n in range(first, first + games):
        game_id = await create_game(bench.service, n)
        await lock_now(bench.service, game_id)
        ids.append(game_id)
    return ids


async def ingest_one(bench: Bench, game_id: int, text: str, author: int, message_id: int) -> bool:
    """One vote post through the bot's path (PlayCog.ingest); True if accepted."""
    service = bench.service
    if not await service.is_active(game_id):
        return False
    state = await service.state(game_id)
    names = {f"玩家{int(s.seat)}": int(s.seat) for s in state.seats}
    mentions = {int(s.player): int(s.seat) for s in state.seats if s.player.isdigit()}
    parsed = parse_vote_post(text, names=names, mentions=mentions)
    if isinstance(parsed, NotAVote):
        return False
    command = PostVote(
        player=str(author),
        post_id=str(message_id),
        target=Seat(parsed.seat) if isinstance(parsed, VoteFor) else None,
        abstain=isinstance(parsed, Abstain),
        raw=parsed.token if isinstance(parsed, UnknownTarget) else "",
        at=Instant(to_ms(utcnow())),
    )
    outcome = await service.submit(game_id, command, message_id=message_id)
    return outcome.ok


async def run_ingest(
    bench: Bench, game_ids: list[int], posts: int, *, seed: int = 7, ids: Snowflakes | None = None
) -> IngestResult:
    """`posts` vote posts spread over the games, all games at once; latency per post."""
    rng = random.Random(seed)
    ids = ids or Snowflakes()
    plan: dict[int, list[tuple[str, int]]] = {g: [] for g in game_ids}
    for i in range(posts):
        game_id = game_ids[i % len(game_ids)]
        state = bench.service.cached_state(game_id) or await bench.service.state(game_id)
        alive = [s for s in state.seats if s.alive]
        author = rng.choice(alive)
        target = rng.choice(alive)
        text = rng.choice(post_texts(int(target.seat), int(target.player)))
        plan[game_id].append((text, int(author.player)))
    result = IngestResult(posts=posts, games=len(game_ids), seconds=0.0)

    async def one_game(game_id: int) -> None:
        for text, author in plan[game_id]:
            t0 = time.perf_counter()
            ok = await ingest_one(bench, game_id, text, author, ids.next())
            result.latencies.append(time.perf_counter() - t0)
            if not ok:
                result.refused += 1

    start = time.perf_counter()
    await asyncio.gather(*(one_game(g) for g in game_ids))
    result.seconds = time.perf_counter() - start
    return result


def _raw_payloads(game_id: int) -> tuple[dict[str, Any], dict[str, Any]]:
    post = VotePost(
        post_id="1456089543475200005", author="1400000000000000105", seat=Seat(5),
        target=Seat(9), abstain=False, at=Instant(to_ms(utcnow())),
    )  # fmt: skip
    event = codec.dump(VotePosted(post=post))
    effect = codec.dump(ReplyToPost(post_id=post.post_id, key=None))
    return event, effect


async def raw_append(bench: Bench, game_id: int, rows: int, writers: int, first_seq: int) -> float:
    """Append `rows` (events + outbox row, one commit each) with `writers` at once; seconds."""
    event, effect = _raw_payloads(game_id)
    events = insert(cast(Table, Event.__table__))
    outbox = insert(cast(Table, Outbox.__table__))
    engine = bench.db.engine
    per = rows // writers

    async def writer(w: int) -> None:
        base = first_seq + w * per
        for i in range(per):
            now = utcnow()
            async with engine.begin() as conn:
                await conn.execute(
                    events,
                    {"game_id": game_id, "seq": base + i, "type": "VotePosted",
                     "payload": event, "message_id": None, "created_at": now},
                )  # fmt: skip
                await conn.execute(
                    outbox,
                    {"game_id": game_id, "seq": base + i, "message_id": None, "payload": effect,
                     "attempts": 0, "last_error": None, "created_at": now, "done_at": None},
                )  # fmt: skip

    start = time.perf_counter()
    await asyncio.gather(*(writer(w) for w in range(writers)))
    return time.perf_counter() - start


async def raw_append_grouped(
    bench: Bench, game_id: int, rows: int, per_commit: int, first_seq: int
) -> float:
    """Append `rows` (events + outbox row each), `per_commit` of them to a commit; seconds."""
    event, effect = _raw_payloads(game_id)
    events = insert(cast(Table, Event.__table__))
    outbox = insert(cast(Table, Outbox.__table__))
    start = time.perf_counter()
    for base in range(first_seq, first_seq + rows, per_commit):
        now = utcnow()
        seqs = range(base, min(base + per_commit, first_seq + rows))
        async with bench.db.engine.begin() as conn:
            await conn.execute(
                events,
                [{"game_id": game_id, "seq": seq, "type": "VotePosted", "payload": event,
                  "message_id": None, "created_at": now} for seq in seqs],
            )  # fmt: skip
            await conn.execute(
                outbox,
                [{"game_id": game_id, "seq": seq, "message_id": None, "payload": effect,
                  "attempts": 0, "last_error": None, "created_at": now, "done_at": None}
                 for seq in seqs],
            )  # fmt: skip
    return time.perf_counter() - start


async def measure(
    bench: Bench, *, posts: int, games: int, raw_rows: int, rounds: int = 4
) -> list[Row]:
    """The ingest row of the table for one backend.

    The full path and the raw appends alternate in `rounds` rounds (raw with one writer, the
    full path, raw with `games` writers), so whatever else the machine does falls on both.
    """
    ids = Snowflakes()
    game_ids = await prepare_games(bench, games)
    raw_game = await create_game(bench.service, RAW_GAME)
    # Warm-up: a few posts through both paths (imports, statement caches, connections).
    await run_ingest(bench, game_ids, min(posts, 2 * games), seed=1, ids=ids)
    next_seq = 1_000_000
    await raw_append(bench, raw_game, 2 * games, 1, next_seq)
    next_seq += 2 * games
    writers_tried = sorted({1, games})
    raw_time = dict.fromkeys(writers_tried, 0.0)
    raw_rows_by = dict.fromkeys(writers_tried, 0)
    full = IngestResult(posts=0, games=games, seconds=0.0)
    per_round = max(1, posts // rounds)
    raw_per_round = max(games, raw_rows // rounds // len(writers_tried))
    grouped_rows, grouped_time = 0, 0.0
    for r in range(rounds):
        for writers in writers_tried:
            n = (raw_per_round // writers) * writers
            if writers == writers_tried[-1]:
                part = await run_ingest(bench, game_ids, per_round, seed=10 + r, ids=ids)
                full.posts += part.posts
                full.seconds += part.seconds
                full.latencies += part.latencies
                full.refused += part.refused
            raw_time[writers] += await raw_append(bench, raw_game, n, writers, next_seq)
            raw_rows_by[writers] += n
            next_seq += n
        grouped_time += await raw_append_grouped(bench, raw_game, raw_per_round, games, next_seq)
        grouped_rows += raw_per_round
        next_seq += raw_per_round
    grouped = rate(grouped_rows, grouped_time)
    by_writers = {w: rate(raw_rows_by[w], raw_time[w]) for w in writers_tried}
    best = max(by_writers, key=lambda w: by_writers[w])
    raw = RawResult(rows=raw_rows_by[best], seconds=raw_time[best], writers=best,
                    by_writers=by_writers)  # fmt: skip
    p50, p99 = in_ms(full.latencies)
    ratio = full.rate / raw.rate if raw.rate else None
    others = ", ".join(f"{w} writer(s) {r:.0f}/s" for w, r in sorted(by_writers.items()))
    sync = "WAL, synchronous=FULL" if bench.backend == "sqlite" else "INSERT + COMMIT"
    return [
        Row(
            section="ingest",
            what=f"{bench.backend}: {full.posts} vote posts, {games} games at once",
            figure=f"{full.rate:.0f} posts/s",
            baseline=f"{raw.rate:.0f} raw appends/s ({sync})",
            ratio=ratio,
            p50_ms=p50,
            p99_ms=p99,
            target="ratio ≥ 0.5",
            met=ratio is not None and ratio >= 0.5,
            note=f"the bot group-commits (posts to different games recorded at once share one "
            f"durable commit, each awaited before its effect); raw = 1 events row + 1 outbox row "
            f"per commit, same engine, best of {others}; for context, raw rows {games} to a "
            f"commit: {grouped:.0f}/s; {full.refused} post(s) refused by the engine",
            values={
                "posts": full.posts,
                "games": games,
                "seconds": full.seconds,
                "posts_per_s": full.rate,
                "raw_appends_per_s": raw.rate,
                "raw_by_writers": by_writers,
                "raw_writers": raw.writers,
                "raw_grouped_per_s": grouped,
                "raw_grouped_per_commit": games,
                "p50_ms": p50,
                "p99_ms": p99,
                "refused": full.refused,
            },
        )
    ]

"""Load: 200 concurrent games in one process, with bursts of vote posts across games.

simcord runs one interaction at a time through discord.py's whole stack; starting 200 games there
(about 2,400 interactions before the first vote) would take minutes, so the load runs one level
down, on exactly what the bot's vote handler calls: `GameService.submit(PostVote, message_id)` on
the real `Repository` (SQLite file, WAL, synchronous=FULL), a no-op effect performer, and the real
`DeadlineScheduler` on the `SystemClock` (APScheduler) locking each game at its deadline.

Asserted: every post is in exactly one tally (its game's), none twice, a redelivered post is a
no-op, every deadline locks its game, and the stored events rebuild the same games. Printed (not
asserted: timing belongs to bench/): posts per second and deadline lateness p50/p99/max.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import random
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from rbkit import SCALE

from bot.config import WindowLength
from bot.schedule import GameSchedule, to_ms
from bot.service import GameService, PlayerSpec, fold
from bot.store import OutboxItem, Repository, open_database, upgrade
from bot.timing import DeadlineScheduler, SystemClock
from engine.commands import Lock, PostVote
from engine.model import Instant, PhaseKind, Seat
from engine.state import DayRecord

GAMES = max(2, round(200 * min(SCALE, 1)))
PLAYERS = 8
SHARE = (0.3, 0.15)
"""Burst rounds: the share of each game's players posting in each (a vote, then changes)."""
REDELIVERED = 0.1
"""Share of posts delivered twice (Discord redelivers events after a reconnect)."""
LEAD_S = 2.0
SPREAD_S = 4.0
"""Deadlines fall between LEAD_S and LEAD_S + SPREAD_S after the bursts begin."""
HOUR_MS = 3_600_000


@dataclass
class Harness:
    service: GameService
    deadlines: dict[int, int] = field(default_factory=dict)
    fired: dict[int, float] = field(default_factory=dict)
    """Game → wall time (ms) the deadline job started."""
    locked: dict[int, float] = field(default_factory=dict)
    """Game → wall time (ms) its lock was committed."""
    errors: list[BaseException] = field(default_factory=list)


_HARNESS: dict[str, Harness] = {}


async def lock_at_deadline(key: str, game_id: int) -> None:
    """The deadline job (module-level, as the scheduler requires): lock the game's window."""
    harness = _HARNESS[key]
    harness.fired[game_id] = time.time() * 1000
    deadline = harness.deadlines[game_id]
    try:
        outcome = await harness.service.submit(
            game_id,
            Lock(
                at=Instant(deadline),
                next_deadline=Instant(deadline + HOUR_MS),
                runoff_deadline=Instant(deadline + HOUR_MS),
                forced=True,  # the window was opened with a one-hour deadline; this one is sooner
            ),
        )
        assert outcome.ok, outcome.error
    except BaseException as exc:  # recorded, asserted by the test
        harness.errors.append(exc)
        raise
    harness.locked[game_id] = time.time() * 1000


async def _nothing(item: OutboxItem) -> None:
    """The no-op performer (Discord is not part of this measure)."""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def test_200_games_with_bursts_of_votes(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'load.db'}"
    await upgrade(url)
    database = open_database(url)
    clock = SystemClock()
    service = GameService(Repository(database.sessions), clock)
    service.set_performer(_nothing)
    scheduler = DeadlineScheduler(clock)
    assert not scheduler.manual  # the real APScheduler
    harness = Harness(service=service)
    key = str(id(harness))
    _HARNESS[key] = harness
    rnd = random.Random(200)
    schedule = GameSchedule(
        power=WindowLength(dt.timedelta(hours=1)),
        vote=WindowLength(dt.timedelta(hours=1)),
        timezone=ZoneInfo("UTC"),
    )
    try:
        # -- 200 games, each moved to its day-1 vote window ------------------------------------
        started = time.perf_counter()

        async def new_game(g: int) -> int:
            players = [
                PlayerSpec(user_id=10_000 * (g + 1) + i, name=f"g{g}p{i}")
                for i in range(1, PLAYERS + 1)
            ]
            gid = await service.create_game(
                server_id=1 + g % 7,
                ruleset="v2",
                players=players,
                seed=f"load-{g}-{rnd.getrandbits(64):x}",
                options={"tie": "lots"},
                channels={"game": str(g), "vote": str(g)},
                schedule=schedule,
            )
            # A quiet first night: its lock opens day 1 (its deadline is set below).
            now = Instant(to_ms(clock.now()))
            night = Lock(at=now, next_deadline=Instant(now + HOUR_MS), forced=True)
            assert (await service.submit(gid, night)).ok
            return gid

        games: list[int] = list(await asyncio.gather(*(new_game(g) for g in range(GAMES))))
        setup_s = time.perf_counter() - started
        t0 = to_ms(clock.now())
        for i, gid in enumerate(games):
            state = await service.state(gid)
            assert state.window is not None and state.window.kind is PhaseKind.DAY
            deadline = t0 + round((LEAD_S + SPREAD_S * i / len(games)) * 1000)
            harness.deadlines[gid] = deadline
            scheduler.schedule(
                f"game:{gid}:deadline",
                dt.datetime.fromtimestamp(deadline / 1000, dt.UTC),
                lock_at_deadline,
                key,
                gid,
            )
        scheduler.start()

        # -- bursts ------------------------------------------------------------------------------
        message_id = 10**15
        sent: dict[int, list[PostVote]] = {gid: [] for gid in games}
        duplicates = late_skipped = 0
        outcomes: list[Any] = []
        burst_start = time.perf_counter()
        submitted = 0
        for share in SHARE:
            now = to_ms(clock.now())
            batch: list[tuple[int, PostVote]] = []
            for gid in games:
                if harness.deadlines[gid] - now < 700:  # too close to its lock to be sure
                    late_skipped += 1
                    continue
                state = service.cached_state(gid)
                assert state is not None
                for seat in state.alive():
                    if rnd.random() > share:
                        continue
                    message_id += 1
                    abstain = rnd.random() < 0.1
                    target = None if abstain else rnd.choice(state.alive())
                    post = PostVote(
                        player=state.seat(seat).player,
                        post_id=str(message_id),
                        target=target,
                        abstain=abstain,
                        raw="",
                        at=Instant(now),
                    )
                    batch.append((gid, post))
                    sent[gid].append(post)
                    if rnd.random() < REDELIVERED:
                        batch.append((gid, post))
                        duplicates += 1
            rnd.shuffle(batch)  # posts of all games interleaved
            submitted += len(batch)
            outcomes += await asyncio.gather(
                *(service.submit(gid, post, message_id=int(post.post_id)) for gid, post in batch)
            )
            await asyncio.sleep(0.002)  # the next round's posts are stamped later
        burst_s = time.perf_counter() - burst_start

        # -- every deadline locks its game ------------------------------------------------------
        wait_until = time.monotonic() + 60
        while len(harness.locked) < len(games) and not harness.errors:
            assert time.monotonic() < wait_until, f"{len(harness.locked)} of {len(games)} locked"
            await asyncio.sleep(0.05)
        assert not harness.errors, harness.errors

        # -- nothing lost, nothing doubled -------------------------------------------------------
        assert sum(o.duplicate for o in outcomes) == duplicates
        assert all(o.ok for o in outcomes), [o.error for o in outcomes if not o.ok][:3]
        posts_total = 0
        for gid in games:
            state = await service.state(gid)
            days = [r for r in state.history if isinstance(r, DayRecord)]
            assert len(days) == 1, (gid, "one vote window, locked once")
            day = days[0]
            seen = [p.post_id for p in day.posts]
            assert len(seen) == len(set(seen)), (gid, "a post counted twice")
            assert set(seen) == {p.post_id for p in sent[gid]}, (gid, "a post lost or misplaced")
            assert not day.void_posts, (gid, [p.void_reason for p in day.void_posts][:3])
            latest: dict[Seat, PostVote] = {}
            for post in sent[gid]:  # the last post of each voter is their vote (改票)
                latest[state.seat_of(post.player)] = post  # type: ignore[index]
            expected = {s: (None if p.abstain else p.target) for s, p in latest.items()}
            assert dict(day.votes) == expected, gid
            posts_total += len(seen)
        for gid in rnd.sample(games, 10):  # the log rebuilds the games
            assert fold(await service.repo.load_events(gid)) == await service.state(gid)
    finally:
        scheduler.shutdown()
        _HARNESS.pop(key, None)
        await database.dispose()

    late_start = [harness.fired[g] - harness.deadlines[g] for g in games]
    late_lock = [harness.locked[g] - harness.deadlines[g] for g in games]
    print(
        f"\nload: {len(games)} games (setup {setup_s:.1f} s); {posts_total} posts "
        f"+ {duplicates} redelivered = {submitted} submissions in {len(SHARE)} bursts, "
        f"{submitted / burst_s:.0f} per second ({burst_s:.1f} s); no post lost, none counted "
        f"twice, every redelivery a no-op; {len(harness.locked)}/{len(games)} deadlines held; "
        f"lateness of the deadline job p50 {statistics.median(late_start):.0f} ms, "
        f"p99 {percentile(late_start, 0.99):.0f} ms, max {max(late_start):.0f} ms; "
        f"of the committed lock p50 {statistics.median(late_lock):.0f} ms, "
        f"p99 {percentile(late_lock, 0.99):.0f} ms, max {max(late_lock):.0f} ms"
    )

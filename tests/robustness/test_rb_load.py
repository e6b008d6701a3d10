"""Load: 200 concurrent games in one process, with bursts of vote posts across games.

simcord runs one interaction at a time through discord.py's whole stack; starting 200 games there
(about 2,400 interactions before the first vote) would take minutes, so the load runs one level
down, on exactly what the bot's vote handler calls: `GameService.submit(PostVote, message_id)` on
the real `Repository` (SQLite file, WAL, synchronous=FULL). Deadlines go the bot's own way: the
runtime (no Discord: a port with no platform behind it) whose effect performer schedules each
`ScheduleDeadline` with `DeadlineRunner.schedule_deadline` on the real `DeadlineScheduler`
(APScheduler, `SystemClock`), whose job `fire_deadline` runs `lock_due` — the first night's short
window and each day's deadline
(moved by a moderator's set-deadline) are locked by that job, never by a forced `Lock`.

Asserted: every post is in exactly one tally (its game's), none twice, a redelivered post is a
no-op, every deadline locks its game once through the deadline job, and the stored events rebuild
the same games. Printed (not asserted: timing belongs to bench/): posts per second and deadline
lateness p50/p99/max.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import random
import statistics
import time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import rbkit  # noqa: F401  (puts tests/discord on sys.path, for gamebot)
from gamebot import settings_for
from rbkit import SCALE

from bench.noop_port import NoopPort
from bot.config import WindowLength
from bot.runtime.deadlines import DeadlineRunner
from bot.runtime.runtime import Runtime
from bot.runtime.schedule import GameSchedule, to_ms
from bot.runtime.service import GameService, Outcome, PlayerSpec, fold
from bot.runtime.timing import DeadlineScheduler, SystemClock
from bot.store import OutboxItem, Repository, open_database, upgrade
from engine import codec
from engine.commands import PostVote, SetDeadline
from engine.effects import ScheduleDeadline
from engine.model import Instant, PhaseKind, Seat
from engine.state import DayRecord, NightRecord, OverrideRecord

GAMES = max(2, round(200 * min(SCALE, 1)))
PLAYERS = 8
SHARE = (0.3, 0.15)
"""Burst rounds: the share of each game's players posting in each (a vote, then changes)."""
REDELIVERED = 0.1
"""Share of posts delivered twice (Discord redelivers events after a reconnect)."""
NIGHT_MS = 1_000
"""The first night's deadline, moved by a moderator to a second after the game starts: its
deadline job opens day 1 (a one-hour window) while the other games start."""
LEAD_S = 2.0
SPREAD_S = 4.0
"""Deadlines fall between LEAD_S and LEAD_S + SPREAD_S after the bursts begin."""


class Timed:
    """A runtime's deadline runner, its path as is, timed for the lateness printed below."""

    def __init__(self, runner: DeadlineRunner) -> None:
        self.deadlines: dict[int, int] = {}
        """Game → its day-1 deadline (ms), once set."""
        self.fired: dict[int, float] = {}
        """Game → wall time (ms) the day's deadline job started."""
        self.locked: dict[int, float] = {}
        """Game → wall time (ms) its day's lock was committed."""
        self.refused: list[Outcome] = []
        self._lock_due = runner.lock_due
        runner.lock_due = self.lock_due  # type: ignore[method-assign]

    async def lock_due(self, game_id: int, **kwargs: Any) -> Outcome | None:
        day = game_id in self.deadlines
        if day:
            self.fired.setdefault(game_id, time.time() * 1000)
        outcome = await self._lock_due(game_id, **kwargs)
        if outcome is not None and not outcome.ok:
            self.refused.append(outcome)
        elif day and outcome is not None and outcome.events:
            self.locked[game_id] = time.time() * 1000
        return outcome


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def test_200_games_with_bursts_of_votes(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'load.db'}"
    await upgrade(url)
    database = open_database(url)
    clock = SystemClock()
    scheduler = DeadlineScheduler(clock)
    assert not scheduler.manual  # the real APScheduler
    runtime = Runtime(
        settings_for(tmp_path / "load.db"), port=NoopPort(), clock=clock, scheduler=scheduler
    )
    service = GameService(Repository(database.sessions), clock)
    runtime.start(service)  # what the bot's setup_hook does, without Discord
    bot = Timed(runtime.deadlines)

    async def perform(item: OutboxItem) -> None:
        """Discord is not part of this measure: only the deadlines are performed, as the bot's
        DiscordEffects performs them."""
        effect = codec.load(item.payload)
        if isinstance(effect, ScheduleDeadline):
            runtime.deadlines.schedule_deadline(item.game_id, effect.deadline)

    service.set_performer(perform)
    scheduler.start()
    rnd = random.Random(200)
    schedule = GameSchedule(
        power=WindowLength(dt.timedelta(hours=1)),
        vote=WindowLength(dt.timedelta(hours=1)),
        timezone=ZoneInfo("UTC"),
    )
    try:
        # -- 200 games; the deadline job of each one's first night opens its day 1 --------------
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
            now = Instant(to_ms(clock.now()))
            soon = SetDeadline(deadline=Instant(now + NIGHT_MS), by="mod", at=now, window=1)
            assert (await service.submit(gid, soon)).ok
            return gid

        games: list[int] = list(await asyncio.gather(*(new_game(g) for g in range(GAMES))))
        wait_until = time.monotonic() + 60
        while True:  # every night locked by its own deadline job
            days = [s.window for s in map(service.cached_state, games) if s and s.window]
            if sum(w.kind is PhaseKind.DAY for w in days) == len(games):
                break
            assert time.monotonic() < wait_until, "a first night was not locked by its job"
            await asyncio.sleep(0.05)
        setup_s = time.perf_counter() - started
        # a moderator's set-deadline moves each day's deadline into the next few seconds
        t0 = to_ms(clock.now())
        for i, gid in enumerate(games):
            state = await service.state(gid)
            assert state.window is not None and state.window.kind is PhaseKind.DAY
            deadline = t0 + round((LEAD_S + SPREAD_S * i / len(games)) * 1000)
            moved = SetDeadline(
                deadline=Instant(deadline), by="mod", at=Instant(t0), window=state.window_index
            )
            assert (await service.submit(gid, moved)).ok
            bot.deadlines[gid] = deadline

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
                if bot.deadlines[gid] - now < 700:  # too close to its lock to be sure
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
        while len(bot.locked) < len(games) and not runtime.deadlines.lock_failures:
            assert time.monotonic() < wait_until, f"{len(bot.locked)} of {len(games)} locked"
            await asyncio.sleep(0.05)
        assert not runtime.deadlines.lock_failures, (
            runtime.deadlines.lock_failures
        )  # no deadline job failed
        assert not bot.refused, [o.error for o in bot.refused][:3]

        # -- nothing lost, nothing doubled -------------------------------------------------------
        assert sum(o.duplicate for o in outcomes) == duplicates
        assert all(o.ok for o in outcomes), [o.error for o in outcomes if not o.ok][:3]
        posts_total = 0
        for gid in games:
            state = await service.state(gid)
            days = [r for r in state.history if isinstance(r, DayRecord)]
            assert len(days) == 1, (gid, "one vote window, locked once")
            assert [r.number for r in state.history if isinstance(r, NightRecord)] == [1]
            overrides = [r.command for r in state.history if isinstance(r, OverrideRecord)]
            assert overrides == ["set_deadline"] * 2, (gid, "locked by the deadline job only")
            assert state.window is not None and state.window.kind is PhaseKind.NIGHT
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
        runtime.close()
        scheduler.shutdown()  # the database is the test's
        await database.dispose()

    late_start = [bot.fired[g] - bot.deadlines[g] for g in games]
    late_lock = [bot.locked[g] - bot.deadlines[g] for g in games]
    print(
        f"\nload: {len(games)} games (setup {setup_s:.1f} s); {posts_total} posts "
        f"+ {duplicates} redelivered = {submitted} submissions in {len(SHARE)} bursts, "
        f"{submitted / burst_s:.0f} per second ({burst_s:.1f} s); no post lost, none counted "
        f"twice, every redelivery a no-op; {len(bot.locked)}/{len(games)} deadlines held; "
        f"lateness of the deadline job p50 {statistics.median(late_start):.0f} ms, "
        f"p99 {percentile(late_start, 0.99):.0f} ms, max {max(late_start):.0f} ms; "
        f"of the committed lock p50 {statistics.median(late_lock):.0f} ms, "
        f"p99 {percentile(late_lock, 0.99):.0f} ms, max {max(late_lock):.0f} ms"
    )

"""Locks that race (issue 12), on simcord: the deadline job and `/mod advance` fired together, or
two moderators' `/mod advance` at once, lock the window once — day 1 resolves, night 2 stays
open — and a moderator's deadline moved into the past is refused with the current time, so the
votes acknowledged with ✅ still count. On SQLite and PostgreSQL. The general race suite is
tests/robustness/test_rb_races.py."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import inspect
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from envclock import EnvClock
from gamebot import BotEnv, Driver, Table, build_table, by_role, settings_for
from pgserver import PgServer
from simcord import MemberActor

from bot.discord.client import FaguanBot, create_bot
from bot.records.i18n import render
from bot.runtime.deadlines import fire_deadline
from bot.runtime.timing import DeadlineScheduler
from engine.model import PhaseKind
from engine.state import DayRecord, GameState, NightRecord, OverrideRecord

SEED = "lock-races"
ALREADY = "That window was already locked"
ACCEPTED = "Received"


@pytest_asyncio.fixture(params=["sqlite", "postgresql"])
async def table(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Table]:
    """A started bot with eight players, on a SQLite file or a fresh PostgreSQL database."""
    pg: PgServer | None = None
    name = ""
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'races.db'}"
    else:
        pg = request.getfixturevalue("pg_server")
        name = f"faguan_locks_{uuid.uuid4().hex[:10]}"
        await pg.create_database(name)
        url = pg.url(name)
    clock = EnvClock()
    settings = settings_for(tmp_path / "unused.db")
    settings = dataclasses.replace(
        settings, database=dataclasses.replace(settings.database, url=url)
    )
    bot = create_bot(
        settings, clock=clock, scheduler=DeadlineScheduler(clock), seed_source=lambda: SEED
    )
    env = BotEnv(bot)
    clock.bind(env)
    t = build_table(env, 8)
    await env.start()
    try:
        yield t
    finally:
        await env.shutdown()
        if pg is not None:
            await pg.drop_connections(name)
            await pg.drop_database(name)


async def slash_at_once(who: MemberActor, table: Table, name: str) -> Any:
    """A slash command that may overlap another: simcord's guarded verb refuses overlapping
    operations, so this is the unguarded one (as tests/robustness/racekit.py fires them)."""
    return await inspect.unwrap(MemberActor.slash)(who, table.channel, name)


INTERLEAVINGS = [(0, 0), (0, 3), (3, 0), (0, 12), (12, 0), (0, 40), (40, 0)]
"""Turns of the event loop each lock waits, in arrival order, once all have arrived: either one
first, or both overlapping at several depths."""


def issued_together(bot: FaguanBot, yields: tuple[int, ...]) -> None:
    """Hold every `lock_due` (the deadline job's, each `/mod advance`'s) until all len(yields) of
    them have started — so each was issued while the same window was open, as when they come
    at the same moment — then let the k-th to arrive go on after yields[k] turns of the loop."""
    held_together(bot.runtime.deadlines, ("lock_due",), yields)


def held_together(target: Any, names: tuple[str, ...], yields: tuple[int, ...]) -> None:
    """Hold every call of `target`'s methods `names` until len(yields) calls have arrived, then
    let the k-th to arrive go on after yields[k] turns of the event loop."""
    arrived: list[str] = []
    everyone = asyncio.Event()

    def hold(name: str) -> None:
        original = getattr(target, name)

        async def held(*args: Any, **kwargs: Any) -> Any:
            mine = len(arrived)
            arrived.append(name)
            if len(arrived) == len(yields):
                everyone.set()
            await asyncio.wait_for(everyone.wait(), timeout=30)
            for _ in range(yields[mine]):
                await asyncio.sleep(0)
            return await original(*args, **kwargs)

        setattr(target, name, held)

    for name in names:
        hold(name)


def answer(result: Any) -> str:
    """The private answer to an interaction, whether sent at once or after a deferral."""
    texts = [m.content for m in result.followups]
    if result.response is not None:
        texts.insert(0, result.response.content)
    assert texts, "no answer"
    return texts[-1]


async def day_one(d: Driver) -> tuple[dict[int, str], GameState]:
    """A started game moved to day 1 by its own deadline job (a quiet night)."""
    roles = await d.start()
    await d.lock()
    state = await d.table.bot.runtime.service.state(d.game_id)
    assert state.window is not None and state.window.kind is PhaseKind.DAY
    return roles, state


def assert_day_one_locked_once(state: GameState) -> None:
    """Day 1 resolved once and night 2 is open, not locked ("无人投票 本轮无人出局" is not posted
    for it)."""
    assert [r.number for r in state.history if isinstance(r, DayRecord)] == [1]
    assert [r.number for r in state.history if isinstance(r, NightRecord)] == [1]
    assert state.window is not None
    assert (state.window.kind, state.window.number) == (PhaseKind.NIGHT, 2)
    assert state.deadline is not None


def advances(state: GameState) -> list[OverrideRecord]:
    return [r for r in state.history if isinstance(r, OverrideRecord) and r.command == "advance"]


@pytest.mark.parametrize("yields", INTERLEAVINGS)
async def test_the_deadline_job_and_mod_advance_at_once_lock_the_day_once(
    table: Table, yields: tuple[int, int]
) -> None:
    d = Driver(table, "v2")
    roles, state = await day_one(d)
    civilians = by_role(roles, "civilian")
    await d.post_vote(civilians[0], f"投 {civilians[1]}号", civilians[1])
    assert state.deadline is not None
    await table.env.advance_time((state.deadline - table.env.now().timestamp() * 1000) / 1000)
    issued_together(table.bot, yields)
    fired, advanced = await asyncio.gather(
        table.bot.runtime.scheduler.run_due(), slash_at_once(table.moderator, table, "mod advance")
    )
    await table.env.settle()
    assert any(job.endswith(":deadline") for job in fired)
    state = await table.bot.runtime.service.state(d.game_id)
    assert_day_one_locked_once(state)
    day = next(r for r in state.history if isinstance(r, DayRecord))
    assert dict(day.votes)[civilians[0]] == civilians[1]  # the vote counted, once
    # the moderator is told what happened: their advance locked the day, or it was too late
    said = answer(advanced)
    assert (ACCEPTED in said) if advances(state) else (ALREADY in said), said
    # night 2's own deadline job is still there, for night 2
    jobs = [j for j in table.bot.runtime.scheduler.jobs() if j.id.endswith(":deadline")]
    assert len(jobs) == 1 and jobs[0].when.timestamp() * 1000 == state.deadline
    assert sum("第2夜" in p and "无人" in p for p in table.public()) == 0


@pytest.mark.parametrize("yields", INTERLEAVINGS)
async def test_two_mod_advance_at_once_lock_once_and_the_second_is_told(
    table: Table, yields: tuple[int, int]
) -> None:
    d = Driver(table, "v2")
    await day_one(d)
    second: MemberActor = table.guild.add_member(
        table.env.create_user("mod2"), roles=[table.mod_role]
    )
    issued_together(table.bot, yields)
    first_said, second_said = await asyncio.gather(
        slash_at_once(table.moderator, table, "mod advance"),
        slash_at_once(second, table, "mod advance"),
    )
    await table.env.settle()
    state = await table.bot.runtime.service.state(d.game_id)
    assert_day_one_locked_once(state)
    assert len(advances(state)) == 1  # one recorded (and announced) override
    said = sorted([answer(first_said), answer(second_said)], key=lambda s: ALREADY in s)
    assert ACCEPTED in said[0] and ALREADY in said[1], said
    announced = [p for p in table.public() if p.startswith("【管理】")]
    assert len(announced) == 1, announced


@pytest.mark.parametrize("yields", [(0, 0, 0), (0, 2, 7), (7, 2, 0), (0, 20, 40)])
async def test_a_retried_deadline_job_and_recovery_at_once_lock_once(
    table: Table, yields: tuple[int, int, int]
) -> None:
    """The deadline job, a retry of it and recovery's reconcile all at the deadline: one lock."""
    d = Driver(table, "v2")
    _, state = await day_one(d)
    assert state.deadline is not None
    await table.env.advance_time((state.deadline - table.env.now().timestamp() * 1000) / 1000)
    bot = table.bot
    issued_together(bot, yields)
    await asyncio.gather(
        fire_deadline(bot.runtime.deadlines.key, d.game_id),
        fire_deadline(bot.runtime.deadlines.key, d.game_id),
        bot.runtime.deadlines.reconcile(d.game_id),
    )
    await table.env.settle()
    state = await bot.runtime.service.state(d.game_id)
    assert_day_one_locked_once(state)
    assert not bot.runtime.deadlines.lock_failures
    assert advances(state) == []


async def test_a_deadline_moved_into_the_past_is_refused_and_the_votes_count(
    table: Table,
) -> None:
    d = Driver(table, "v2")
    roles, state = await day_one(d)  # day 1 opened at 01:00 UTC (09:00 Beijing time)
    civilians = by_role(roles, "civilian")
    opened = table.env.now()
    await table.env.advance_time(20 * 60)
    posts = [
        await d.post_vote(civilians[0], f"投 {civilians[1]}号", civilians[1]),
        await d.post_vote(civilians[2], f"投 {civilians[1]}号", civilians[1]),
    ]
    for post in posts:  # acknowledged: counted as long as the deadline is not before them
        shown = next(m for m in table.channel.history() if m.id == post.id)
        assert any(str(r.emoji) == "✅" for r in shown.reactions)
    await table.env.advance_time(10 * 60)  # now 09:30 Beijing time; the deadline is 10:00
    before = await table.bot.runtime.service.state(d.game_id)
    past = (opened + dt.timedelta(minutes=10)).astimezone(dt.timezone(dt.timedelta(hours=8)))
    refused = await table.moderator.slash(
        table.channel, "mod set-deadline", time=past.strftime("%Y-%m-%d %H:%M")
    )
    said = answer(refused)
    assert refused.ephemeral
    now_local = table.env.now().astimezone(dt.timezone(dt.timedelta(hours=8)))
    assert now_local.strftime("%Y-%m-%d %H:%M:%S") in said, said  # the current time, game zone
    assert "Beijing time" in said and "/mod advance" in said, said
    shortened = await table.moderator.slash(table.channel, "mod shorten", minutes=45)
    assert "/mod advance" in answer(shortened) and now_local.strftime("%H:%M:%S") in answer(
        shortened
    )
    after = await table.bot.runtime.service.state(d.game_id)
    assert after.deadline == before.deadline and after.history == before.history  # unchanged
    assert not [p for p in table.public() if p.startswith("【管理】")]
    await table.run_deadline()  # the real deadline, 10:00
    state = await table.bot.runtime.service.state(d.game_id)
    day = next(r for r in state.history if isinstance(r, DayRecord))
    assert dict(day.votes) == {civilians[0]: civilians[1], civilians[2]: civilians[1]}
    assert not day.void_posts
    assert day.left == (civilians[1],)


async def test_a_deadline_moved_once_it_has_passed_is_refused_and_the_late_vote_stays_void(
    table: Table,
) -> None:
    """The deadline has passed and its lock is due (the job not yet run, as in a catch-up or a
    retry): `/mod extend`, `/mod shorten` and `/mod set-deadline` are refused to the moderator
    alone, saying so, and change nothing — a vote posted after the deadline stays void, as it
    would be whenever the lock reads it."""
    d = Driver(table, "v2")
    roles, state = await day_one(d)
    civilians = by_role(roles, "civilian")
    assert state.deadline is not None
    await table.env.advance_time((state.deadline - table.env.now().timestamp() * 1000) / 1000 + 60)
    await d.post_vote(civilians[0], f"投 {civilians[1]}号", civilians[1])  # a minute late
    before = await table.bot.runtime.service.state(d.game_id)
    beijing = dt.timezone(dt.timedelta(hours=8))
    later = (table.env.now() + dt.timedelta(hours=1)).astimezone(beijing)
    deadline = dt.datetime.fromtimestamp(state.deadline / 1000, dt.UTC).astimezone(beijing)
    expected = render(
        "en",
        "mod.deadline_passed",
        {"deadline": deadline.strftime("%Y-%m-%d %H:%M:%S"), "zone": "Beijing time"},
    )
    for name, options in [
        ("mod extend", {"minutes": 30}),
        ("mod shorten", {"minutes": 1}),
        ("mod set-deadline", {"time": later.strftime("%Y-%m-%d %H:%M")}),
    ]:
        refused = await table.moderator.slash(table.channel, name, **options)
        assert refused.ephemeral, name
        assert answer(refused) == expected, name
    after = await table.bot.runtime.service.state(d.game_id)
    assert after.deadline == before.deadline and after.history == before.history  # unchanged
    assert not [p for p in table.public() if p.startswith("【管理】")]
    await table.run_deadline()  # the lock that was due, cut at the deadline
    state = await table.bot.runtime.service.state(d.game_id)
    day = next(r for r in state.history if isinstance(r, DayRecord))
    assert dict(day.votes) == {} and day.left == ()
    assert [p.void_reason for p in day.void_posts] == ["vote.after_deadline"]

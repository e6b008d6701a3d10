"""Injected faults: Discord failing (5xx, 429, timeouts) and an outage across a deadline. The bot
keeps running, retries with backoff, tells moderators when stuck, and the game ends exactly as
the same game without faults."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from envclock import EnvClock
from faultkit import assert_same_game, drain
from gamebot import Driver, Table, by_role, make_bot, running_table

from bot.records.i18n import render
from engine.model import Seat
from engine.state import DayRecord

SEED = "fault-seed"
pytestmark = pytest.mark.table(seed=SEED)


@pytest_asyncio.fixture(params=["text", "forum"])
async def hosted(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Table]:
    """The table in both hostings: text channels, and a forum (a main post, a 投票帖 per day)."""
    async with running_table(tmp_path / "g.db", 8, EnvClock(), SEED, request.param) as t:
        yield t


async def play(d: Driver, roles: dict[int, str], between: Any = None) -> dict[str, Any]:
    """A fixed short game; `between` runs before each lock (to inject faults)."""
    k1, k2 = by_role(roles, "killer")
    c1, c2 = by_role(roles, "civilian")[:2]
    await d.power_by_menu(k1, "kill", c1)
    if between:
        await between(d)
    await d.lock()
    if between:
        await drain(d.table)  # the fault clears; the retries finish what the lock began
    for seat in (s for s in range(1, 9) if s not in (c1, k1)):
        await d.post_vote(seat, f"投 {k1}", k1)
    if between:
        await between(d)
    await d.lock()
    if between:
        await drain(d.table)
    await d.power_by_menu(k2, "kill", c2)
    await d.lock()
    for seat in (s for s in range(1, 9) if s not in (c1, c2, k1)):
        await d.post_vote(seat, f"投 {k2}", k2)
    await d.lock()
    state = await d.table.bot.runtime.service.state(d.game_id)
    return d.record(state)


async def test_discord_5xx_and_429_are_retried_and_the_game_ends_the_same(table: Table) -> None:
    d = Driver(table, "v2")
    roles = await d.start()

    async def fail_sends(drv: Driver) -> None:
        env = drv.table.env
        env.inject_error(
            "POST",
            f"/channels/{drv.table.channel.id}/messages",
            status=503,
            code=0,
            message="unavailable",
            times=2,
        )
        env.inject_error(
            "PUT",
            f"/channels/{drv.table.channel.id}/permissions/*",
            status=429,
            code=0,
            message="rate limited",
            times=1,
        )

    async def lock_and_drain(drv: Driver) -> None:
        await fail_sends(drv)

    faulty = await play(d, roles, between=lock_and_drain)
    await drain(table)
    assert not await table.bot.runtime.service.repo.undone_effects()
    # The same game without faults (the engine's verdict on the same actions) gives the same record.
    assert_same_game(faulty, d, roles, SEED)
    posts = table.public()
    assert len([p for p in posts if p.startswith("【看表】第1夜")]) == 1  # retried, never doubled


async def test_timeouts_on_dms_are_retried(table: Table) -> None:
    bot = table.bot
    original = bot.http.request
    failures = {"left": 3}

    async def flaky(route: Any, **kwargs: Any) -> Any:
        if (
            failures["left"]
            and route.method == "POST"
            and "/channels/" in route.path
            and "messages" in route.path
        ):
            failures["left"] -= 1
            raise TimeoutError
        return await original(route, **kwargs)

    bot.http.request = flaky  # type: ignore[method-assign]
    d = Driver(table, "v2")
    roles = await d.start()
    bot.http.request = original  # type: ignore[method-assign]
    await drain(table)
    for seat in range(1, 9):
        texts = [m.content for m in table.dms(table.player(seat))]
        assert len([t for t in texts if "身份" in t or "role" in t]) == 1, (seat, texts)
    assert roles


async def run_retries(table: Table, times: int) -> None:
    """Let the retry job run, up to `times` times, as its backoff says."""
    for _ in range(times):
        jobs = [j for j in table.bot.runtime.scheduler.jobs() if j.id.endswith(":retry")]
        if not jobs:
            break
        await table.advance(max(0.0, (min(j.when for j in jobs) - table.env.now()).total_seconds()))
        await table.bot.runtime.scheduler.run_due()
        await table.env.settle()


async def test_moderators_are_told_when_something_is_stuck(table: Table) -> None:
    d = Driver(table, "v2")
    roles = await d.start()
    killer = by_role(roles, "killer")[0]
    await d.power_by_menu(killer, "kill", by_role(roles, "civilian")[0])
    table.env.inject_error(
        "PUT",
        f"/channels/{table.channel.id}/permissions/*",
        status=500,
        code=0,
        message="down",
        times=8,
    )
    await d.lock()
    await run_retries(table, 8)
    assert any("法官暂时无法完成操作" in p for p in table.public())
    await drain(table)
    assert not await table.bot.runtime.service.repo.undone_effects()


async def test_a_failing_private_effect_holds_up_no_public_one_and_is_told_privately(
    table: Table,
) -> None:
    # Before: a DM to the police failing at dawn blocked the game's next public posts until it
    # went through, and the stuck notice came in the game channel — both at times only a
    # police check causes.
    d = Driver(table, "v2")
    roles = await d.start()
    police = by_role(roles, "police")[0]
    await d.power_by_menu(by_role(roles, "killer")[0], "kill", by_role(roles, "civilian")[0])
    await d.power_by_menu(police, "check", by_role(roles, "killer")[0])
    dm = table.player(police).user.dm_channel
    assert dm is not None
    table.env.inject_error(
        "POST", f"/channels/{dm.id}/messages", status=500, code=0, message="down", times=8
    )
    await d.lock()  # night 1: the check's DM fails
    assert any(p.startswith("【看表】第1夜") for p in table.public())
    assert any("第1天" in p for p in table.public()[-2:]), table.public()[-3:]  # day 1 is open
    before = [m.content for m in table.dms(table.moderator)]
    await run_retries(table, 8)
    assert not any("法官暂时无法完成" in p for p in table.public())
    told = [m.content for m in table.dms(table.moderator)][len(before) :]
    assert any("私下操作" in text for text in told), told
    await drain(table)
    assert not await table.bot.runtime.service.repo.undone_effects()
    assert any("杀手" in m.content for m in table.dms(table.player(police))[-2:])


async def test_outage_across_a_deadline_counts_posts_by_their_own_time(hosted: Table) -> None:
    table = hosted
    d = Driver(table, "v2")
    roles = await d.start()
    await d.lock()  # day 1
    k1 = by_role(roles, "killer")[0]
    others = [s for s in range(1, 9) if s != k1]
    state = await table.bot.runtime.service.state(d.game_id)
    deadline = dt.datetime.fromtimestamp(state.deadline / 1000, dt.UTC)  # type: ignore[operator]
    first = await d.post_vote(others[0], f"投 {k1}", k1)
    await table.bot.ws.close()  # the bot is down for an hour of game time
    await table.player(others[1]).send(table.vote_channel(), f"投 {k1}")
    edited = await table.player(others[2]).send(table.vote_channel(), f"投 {k1}")
    await table.player(others[2]).edit(edited, f"投 {others[0]}")  # the original stands
    await table.player(others[0]).delete(first)  # deleting does not retract
    await table.advance((deadline - table.env.now()).total_seconds() + 60)
    late = await table.player(others[3]).send(
        table.vote_channel(), f"投 {others[0]}"
    )  # after the deadline
    await table.advance(3600)
    new = make_bot(table.db, table.clock, seed=SEED)  # type: ignore[attr-defined]
    await table.env.restart_bot(new)
    await table.env.settle()
    state = await new.runtime.service.state(d.game_id)
    day = [r for r in state.history if isinstance(r, DayRecord)][-1]
    # posts made before the deadline count (a deleted one too); the one edited before the judge
    # could read it is void (its original is unknown); the one after the deadline is void
    assert dict(day.tally) == {k1: 2}
    assert sorted((p.post_id, p.void_reason) for p in day.void_posts) == sorted(
        [(str(edited.id), "vote.edited_unseen"), (str(late.id), "vote.after_deadline")]
    )
    assert state.phase is not None and state.phase.label() == "night 2"


async def test_posts_while_down_count_when_the_days_opening_is_performed_again(
    hosted: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The day's opening (its channels opened, where catch-up reads from set) was performed, but
    the process died before its done mark was written: the restart performs it again. Its mark
    stays where the day opened, so the votes posted while the bot was down are read and count
    (moved to the restart, they were never read)."""
    table = hosted
    d = Driver(table, "v2")
    roles = await d.start()
    repo = table.bot.runtime.service.repo
    monkeypatch.setattr(repo, "mark_done_soon", lambda outbox_id: None)  # marks lost: the crash
    await d.lock()  # day 1 opens: its effects performed, none marked done
    await table.bot.ws.close()  # the process dies
    k1 = by_role(roles, "killer")[0]
    voters = [s for s in range(1, 9) if s != k1][:5]
    for seat in voters:
        await table.player(seat).send(table.vote_channel(), f"投 {k1}")
    await table.advance(1800)  # half an hour later, before the deadline
    new = make_bot(table.db, table.clock, seed=SEED)  # type: ignore[attr-defined]
    await table.env.restart_bot(new)
    await table.env.settle()
    await table.run_deadline()
    state = await new.runtime.service.state(d.game_id)
    day = [r for r in state.history if isinstance(r, DayRecord)][-1]
    assert dict(day.tally) == {k1: len(voters)}


async def test_database_away_while_votes_are_posted(table: Table) -> None:
    """Posts that could not be recorded while the database was away still count at the lock."""
    from sqlalchemy.exc import OperationalError

    d = Driver(table, "v2")
    roles = await d.start()
    await d.lock()  # day 1
    k1 = by_role(roles, "killer")[0]
    voters = [s for s in range(1, 9) if s != k1]
    repo = table.bot.runtime.service.repo
    original = repo.record

    async def away(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("INSERT", {}, Exception("database is locked"))

    repo.record = away  # type: ignore[method-assign]
    for seat in voters[:3]:
        await table.player(seat).send(table.channel, f"投 {k1}")
        await table.env.settle()
    repo.record = original  # type: ignore[method-assign]
    await d.post_vote(voters[3], f"投 {k1}", k1)  # recorded: it is now the last post recorded
    await table.run_deadline()
    state = await table.bot.runtime.service.state(d.game_id)
    day = [r for r in state.history if isinstance(r, DayRecord)][-1]
    assert dict(day.tally) == {k1: 4}


@pytest.mark.parametrize("committed", [False, True])
async def test_a_slash_vote_whose_record_fails_leaves_no_post_the_count_lacks(
    table: Table, monkeypatch: pytest.MonkeyPatch, committed: bool
) -> None:
    """`/vote` posts the vote for the voter, then records it. The record fails: not written
    (the database away), the post is taken down and the voter told; written after all (the
    commit went through, its answer was lost), the post stays and the vote counts. Either way
    the channel shows no vote the count does not have."""
    from sqlalchemy.exc import OperationalError

    d = Driver(table, "v2")
    roles = await d.start()
    await d.lock()  # day 1
    k1 = by_role(roles, "killer")[0]
    voter = by_role(roles, "civilian")[0]
    repo = table.bot.runtime.service.repo
    record = repo.record

    async def failing(*args: Any, **kwargs: Any) -> Any:
        if committed:
            await record(*args, **kwargs)
        raise OperationalError("COMMIT", {}, Exception("disk I/O error"))

    before = {m.id for m in table.vote_channel().history()}
    monkeypatch.setattr(repo, "record", failing)
    answer = await table.player(voter).slash(table.channel, "vote", target=str(k1))
    monkeypatch.setattr(repo, "record", record)
    await table.env.settle()
    shown = [m for m in table.vote_channel().history() if m.author.bot and m.id not in before]
    await table.run_deadline()
    state = await table.bot.runtime.service.state(d.game_id)
    day = [r for r in state.history if isinstance(r, DayRecord)][-1]
    if committed:
        assert len(shown) == 1 and dict(day.votes) == {Seat(voter): Seat(k1)}
    else:
        assert answer.response is not None and answer.ephemeral
        assert answer.response.content == render("en", "vote.post_not_recorded", {})
        assert shown == [] and dict(day.votes) == {}


async def test_a_command_while_the_database_is_away_is_answered_and_changes_nothing(
    table: Table,
) -> None:
    from sqlalchemy.exc import OperationalError

    d = Driver(table, "v2")
    roles = await d.start()
    killer = by_role(roles, "killer")[0]
    repo = table.bot.runtime.service.repo
    original = repo.record

    async def away(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("INSERT", {}, Exception("server closed the connection"))

    repo.record = away  # type: ignore[method-assign]
    before = await table.bot.runtime.service.state(d.game_id)
    r = await table.player(killer).slash(
        table.channel, "act", power="kill", target=5 if killer != 5 else 6
    )
    repo.record = original  # type: ignore[method-assign]
    assert r.ephemeral and "try again" in r.response.content, table.env.errors
    assert await table.bot.runtime.service.state(d.game_id) == before


async def test_history_reads_failing_are_retried_and_no_post_is_lost(table: Table) -> None:
    """Posts made while the bot was away exist only in the channel's history: when reading it
    fails (at startup, then at the deadline), the lock is retried and every post still counts."""
    d = Driver(table, "v2")
    roles = await d.start()
    await d.lock()  # day 1
    k1 = by_role(roles, "killer")[0]
    voters = [s for s in range(1, 9) if s != k1]
    await d.post_vote(voters[0], f"投 {k1}", k1)
    await table.bot.ws.close()  # down: the next posts reach only the channel
    for seat in voters[1:4]:
        await table.player(seat).send(table.channel, f"投 {k1}")
    table.env.inject_error(
        "GET",
        f"/channels/{table.channel.id}/messages",
        status=503,
        code=0,
        message="unavailable",
        times=2,
    )
    new = make_bot(table.db, table.clock, seed=SEED)  # type: ignore[attr-defined]
    await table.env.restart_bot(new)  # its catch-up at startup fails
    await table.env.settle()
    assert len((await new.runtime.service.state(d.game_id)).posts) == 1
    await table.run_deadline()  # the lock's sweep of the channel fails too: tried again later
    state = await new.runtime.service.state(d.game_id)
    assert state.phase is not None and state.phase.label() == "day 1"
    assert new.runtime.deadlines.lock_failures[d.game_id] == 1
    await table.run_deadline()
    state = await new.runtime.service.state(d.game_id)
    day = [r for r in state.history if isinstance(r, DayRecord)][-1]
    assert dict(day.tally) == {k1: 4}


async def test_an_overdue_lock_that_fails_at_startup_is_retried(table: Table) -> None:
    d = Driver(table, "v2")
    roles = await d.start()
    await d.lock()  # day 1
    k1 = by_role(roles, "killer")[0]
    voters = [s for s in range(1, 9) if s != k1]
    await table.bot.ws.close()
    for seat in voters[:5]:
        await table.player(seat).send(table.channel, f"投 {k1}")
    await table.advance(2 * 3600)  # the deadline passes while the bot is down
    table.env.inject_error(
        "GET", f"/channels/{table.channel.id}/messages", status=500, code=0, message="down", times=2
    )
    new = make_bot(table.db, table.clock, seed=SEED)  # type: ignore[attr-defined]
    await table.env.restart_bot(new)
    await table.env.settle()
    assert (await new.runtime.service.state(d.game_id)).phase.label() == "day 1"  # type: ignore[union-attr]
    assert new.runtime.deadlines.lock_failures[d.game_id] == 1
    await table.run_deadline()  # the retry
    state = await new.runtime.service.state(d.game_id)
    day = [r for r in state.history if isinstance(r, DayRecord)][-1]
    assert dict(day.tally) == {k1: 5}


async def test_resuming_games_when_the_database_is_away_is_retried(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bot reconnects while the database is away: the games are resumed later, with their
    deadlines, instead of being left without timers until the next reconnect."""
    from sqlalchemy.exc import OperationalError

    from bot.runtime.service import GameService

    d = Driver(table, "v2")
    await d.start()
    recover = GameService.recover
    fails = {"left": 2}

    async def away_then_back(self: GameService, shards: Any = None) -> Any:
        if fails["left"]:
            fails["left"] -= 1
            raise OperationalError("SELECT", {}, Exception("could not connect to server"))
        return await recover(self, shards)

    monkeypatch.setattr(GameService, "recover", away_then_back)
    new = make_bot(table.db, table.clock, seed=SEED)  # type: ignore[attr-defined]
    await table.env.restart_bot(new)
    await table.env.settle()
    jobs = {j.id for j in new.runtime.scheduler.jobs()}
    assert f"game:{d.game_id}:deadline" not in jobs and "faguan:resume" in jobs
    for _ in range(2):
        when = next(j.when for j in new.runtime.scheduler.jobs() if j.id == "faguan:resume")
        await table.advance((when - table.env.now()).total_seconds())
        await new.runtime.scheduler.run_due()
        await table.env.settle()
    assert fails["left"] == 0
    assert f"game:{d.game_id}:deadline" in {j.id for j in new.runtime.scheduler.jobs()}
    await d.lock()
    state = await new.runtime.service.state(d.game_id)
    assert state.phase is not None and state.phase.label() == "day 1"

"""Shared by the fault tests: a fixed short game, draining retries, and comparing a faulty game's
record with the engine's replay of the same actions."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from gamebot import Driver, Table, by_role, compare_with_replay

from bot.records.replay import run
from engine.state import DayRecord


async def drain(t: Table) -> None:
    """Let the retries run until the outbox is empty (the fault has cleared)."""
    for _ in range(20):
        if not await t.bot.runtime.service.repo.undone_effects():
            return
        jobs = [j for j in t.bot.runtime.scheduler.jobs() if j.id.endswith(":retry")]
        if jobs:
            await t.advance(max(0.0, (min(j.when for j in jobs) - t.env.now()).total_seconds()))
        await t.bot.runtime.scheduler.run_due()
        await t.env.settle()
    raise AssertionError("effects still undone")


def assert_same_game(faulty: dict[str, Any], d: Driver, roles: dict[int, str], seed: str) -> None:
    """The game played with faults has the record of the same actions replayed without any."""
    compare_with_replay(faulty, run(d.replay_input(roles, seed)).record)


async def play_through_a_fault(
    table: Table, fault: Callable[[], AbstractContextManager[None]], seed: str
) -> None:
    """A short v2 game with the database refusing service twice: across the night's deadline
    (with a command tried meanwhile) and while day votes are posted. While it lasts, a command is
    answered "try again" and changes nothing, the lock is tried again later, the posts are read
    back from the channel at the lock; the game ends as the same actions replayed without it."""
    service = table.bot.runtime.service
    d = Driver(table, "v2")
    roles = await d.start()
    k1, k2 = by_role(roles, "killer")
    c1, c2 = by_role(roles, "civilian")[:2]
    police = by_role(roles, "police")[0]
    await d.power_by_menu(k1, "kill", c1)

    before = await service.state(d.game_id)
    with fault():
        answer = await table.player(police).slash(table.channel, "act", power="check", target=k1)
        assert answer.ephemeral and "try again" in answer.response.content
        await d.lock()  # the deadline fires but cannot be recorded
        assert not any(p.startswith("【看表】") for p in table.public())
    assert await service.state(d.game_id) == before  # nothing changed
    assert table.bot.runtime.deadlines.lock_failures[d.game_id] == 1
    await table.run_deadline()  # tried again now that the database is back
    await drain(table)
    state = await service.state(d.game_id)
    assert state.phase is not None and state.phase.label() == "day 1"

    voters = [s for s in range(1, 9) if s not in (c1, k1)]
    with fault():  # posted while nothing can be recorded: read back at the lock
        for seat in voters[:3]:
            await d.post_vote(seat, f"投 {k1}", k1)
    assert (await service.state(d.game_id)).posts == ()  # none of them was recorded
    for seat in voters[3:]:
        await d.post_vote(seat, f"投 {k1}", k1)
    await d.lock()
    await drain(table)
    state = await service.state(d.game_id)
    day = [r for r in state.history if isinstance(r, DayRecord)][-1]
    assert dict(day.tally) == {k1: len(voters)}

    await d.power_by_menu(k2, "kill", c2)
    await d.lock()
    for seat in (s for s in range(1, 9) if s not in (c1, c2, k1)):
        await d.post_vote(seat, f"投 {k2}", k2)
    await d.lock()
    await drain(table)
    state = await service.state(d.game_id)
    assert state.over
    faulty = d.record(state)
    assert_same_game(faulty, d, roles, seed)
    assert len([p for p in table.public() if p.startswith("【看表】第1夜")]) == 1  # never doubled


def fail_once(t: Table, holding: str) -> list[str]:
    """The bot's next message whose text holds `holding` fails before reaching Discord (a
    timeout: nothing sent); the texts that failed."""
    request = t.bot.http.request
    failed: list[str] = []

    async def flaky(route: Any, **kwargs: Any) -> Any:
        payload = kwargs.get("json")
        content = payload.get("content") if isinstance(payload, dict) else None
        if not failed and route.method == "POST" and content and holding in content:
            failed.append(content)
            raise TimeoutError("injected")
        return await request(route, **kwargs)

    t.bot.http.request = flaky  # type: ignore[method-assign]
    return failed

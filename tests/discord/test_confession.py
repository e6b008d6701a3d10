"""认匪 (confess) on Discord: a killer's /act confess ends the day, and the night it opens has its
deadline from the schedule, as a lock's next window has; /pass is "不行使", which on confess means
nothing, so it is neither offered nor accepted.

Each test failed before the fix: the night after a confession opened with no deadline (no timer:
the game waited for a moderator), and /pass power:confess confessed, the killer out and shown."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_asyncio
from gamebot import Driver, Table, by_role

from bot.records.i18n import render
from engine.model import Seat

pytestmark = pytest.mark.table(seed="confession-seed")


@pytest_asyncio.fixture
async def day_one(table: Table) -> tuple[Table, Driver, int]:
    """A basic game of 8 on day 1 (a quiet night), and a killer's seat."""
    driver = Driver(table, "basic")
    roles = await driver.start()
    await driver.quiet_night()
    return table, driver, by_role(roles, "killer")[0]


def answer(result: Any) -> str:
    """The private answer to an interaction, whether sent at once or after a deferral."""
    texts = [m.content for m in result.followups if m.ephemeral]
    if result.response is not None:
        texts.insert(0, result.response.content)
    return "\n".join(texts)


async def test_the_night_after_a_confession_has_a_deadline_and_locks(
    day_one: tuple[Table, Driver, int],
) -> None:
    table, driver, killer = day_one
    service = table.bot.runtime.service
    day_deadline = (await service.state(driver.game_id)).deadline
    await table.player(killer).slash(table.channel, "act", power="confess")
    await table.env.settle()
    state = await service.state(driver.game_id)
    assert state.window is not None and state.window.kind.value == "night"
    assert not state.seat(Seat(killer)).alive
    assert state.deadline is not None and day_deadline is not None
    jobs = {j.id for j in table.bot.runtime.scheduler.jobs()}
    assert f"game:{driver.game_id}:deadline" in jobs
    fired = await table.run_deadline()  # the night locks by itself, with no moderator
    assert any(job.endswith(":deadline") for job in fired)
    after = await service.state(driver.game_id)
    assert after.window is not None and after.window.kind.value == "day"


async def test_pass_neither_offers_nor_takes_a_confession(
    day_one: tuple[Table, Driver, int],
) -> None:
    table, driver, killer = day_one
    member = table.player(killer)
    offered_act = await member.autocomplete(table.channel, "act", "power", "")
    offered_pass = await member.autocomplete(table.channel, "pass", "power", "")
    assert "confess" in {c["value"] for c in offered_act}
    assert "confess" not in {c["value"] for c in offered_pass}
    before = len(table.public())
    result = await member.slash(table.channel, "pass", power="confess")
    await table.env.settle()
    power = render("en", "power.confess", {})  # the asker's client speaks English
    assert answer(result) == render("en", "actor.no_pass", {"power": power})
    state = await table.bot.runtime.service.state(driver.game_id)
    assert state.seat(Seat(killer)).alive and state.window is not None
    assert state.window.kind.value == "day"
    assert table.public()[before:] == []


async def test_a_confession_while_paused_leaves_the_clock_stopped(
    day_one: tuple[Table, Driver, int],
) -> None:
    """A moderator's pause is theirs to end: a confession then opens the night with no deadline
    (the moderator sets one or advances), as a removal's last-act window does. Before: the
    night took its deadline from the schedule, and a player's input restarted the clock."""
    table, driver, killer = day_one
    await table.moderator.slash(table.channel, "mod pause")
    await table.player(killer).slash(table.channel, "act", power="confess")
    await table.env.settle()
    state = await table.bot.runtime.service.state(driver.game_id)
    assert state.window is not None and state.window.kind.value == "night"
    assert state.deadline is None
    jobs = {j.id for j in table.bot.runtime.scheduler.jobs()}
    assert f"game:{driver.game_id}:deadline" not in jobs

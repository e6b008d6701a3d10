"""Non-interference of DM failures: who is DMed when depends on roles (the police's check result
at dawn), so nothing public and nothing logged at INFO or above may depend on when a player's DM
failed. Two games with the same seed and inputs, two seats' roles (police, civilian) swapped at
the deal; the seat whose player closed their DMs after the deal acts at night only in game A.

Both tests failed before the fix: a seat taken back after a replacement got the public
"⚠ 无法私信" notice only if no private DM to its player had failed before, and a moderator's closed
DMs were logged at WARNING at the moment a player's private DM failed."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from nikit import dealing
from rbkit import EnvClock  # (puts tests/discord on the path)

# isort: split
from gamebot import BotEnv, Driver, Table, build_table, by_role, close_dms, make_bot

from engine.events import GameCreated

SEED = "dm-failure-seed"


async def night_with_closed_dms(
    tmp: Path, pair: tuple[int, int] | None, *, moderator_closed: bool = False
) -> tuple[Table, Driver, tuple[int, int], list[GameCreated]]:
    """A basic game of 8 up to dawn: the player of the pair's first seat (police in game A, where
    `pair` is None and found; civilian in game B, its roles swapped) closes their DMs after the
    deal, and the police checks the killer."""
    clock = EnvClock()
    env = BotEnv(make_bot(tmp / "g.db", clock, seed=SEED))
    clock.bind(env)
    table = build_table(env, 8)
    await env.start()
    if moderator_closed:
        await table.moderator.user.send_dm("hi")  # opens the moderator's DM channel
        close_dms(table, table.moderator.user.dm_channel.id)
    deals: list[GameCreated] = []
    with dealing(deals, pair):
        driver = Driver(table, "basic")
        roles = await driver.start()
    if pair is None:
        pair = (by_role(roles, "police")[0], by_role(roles, "civilian")[0])
    closed, other = pair
    close_dms(table, table.player(closed).user.dm_channel.id)
    police = closed if roles[closed] == "police" else other  # the power follows the role
    await driver.power_by_command(police, "check", by_role(roles, "killer")[0])
    return table, driver, pair, deals


async def test_a_seat_taken_back_is_announced_the_same_whatever_its_role(tmp_path: Path) -> None:
    seen = []
    pair = None
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        table, driver, pair, deals = await night_with_closed_dms(tmp_path / name, pair)
        try:
            await driver.lock()  # dawn: only in game A is the closed seat DMed (its result)
            before = len(table.public())
            seat = pair[0]
            out = await table.moderator.slash(
                table.channel, "mod replace", seat=seat, member=table.outside
            )
            back = await table.moderator.slash(
                table.channel, "mod replace", seat=seat, member=table.player(seat)
            )
            await table.env.settle()
            seen.append((table.public()[before:], out.response.content, back.response.content))
        finally:
            await table.env.shutdown()
    assert deals[0].roles[pair[0] - 1].value == "civilian"  # game B: the closed seat is not police
    posts = seen[0][0]
    assert any("无法私信" in post for post in posts), posts  # the role message's notice
    assert seen[0] == seen[1]


async def test_a_moderators_closed_dms_are_logged_the_same_whatever_the_roles(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    logged = []
    pair = None
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        table, driver, pair, _ = await night_with_closed_dms(
            tmp_path / name, pair, moderator_closed=True
        )
        try:
            caplog.clear()
            await driver.lock()  # dawn: in game A the police's result fails, then the moderator's
            logged.append([r.getMessage() for r in caplog.records if r.levelno >= logging.INFO])
        finally:
            await table.env.shutdown()
    assert logged[0] == logged[1]

"""A command whose submission is slow still gets its answer. A submission waits for the game's
turn and for the private effects queued before its own (the deal's role DMs, a dawn's results),
and Discord drops an interaction not answered within 3 s: a slow one is deferred ("…is
thinking") and answered later; and one whose interaction expired all the same gets its
confirmation by DM, since the confirmation was taken out of the DM for that answer.

The last test failed before the fix: the kill was recorded, but the killer saw "interaction
failed" and got no confirmation at all."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import discord
import pytest
from envclock import EnvClock
from gamebot import Driver, Table, by_role, running_table
from simcord import MemberActor

from bot.discord import interactions
from bot.records.i18n import render
from bot.runtime.service import is_private
from engine.commands import SubmitPower
from engine.model import Power, Seat


async def act_while_a_dm_is_held(
    t: Table, d: Driver, roles: dict[int, str], meanwhile: Callable[[], Awaitable[None]]
) -> tuple[Any, int, int]:
    """The police checks; while its confirmation DM is being sent, the killer uses /act kill,
    and `meanwhile` runs (from the test, not the bot). The kill's result, the killer and the
    kill's target."""
    killer, police = by_role(roles, "killer")[0], by_role(roles, "police")[0]
    target = by_role(roles, "civilian")[1]
    service = t.bot.runtime.service
    performer = t.bot.effects
    inside, go, holding, release = (asyncio.Event() for _ in range(4))
    state = await service.state(d.game_id)
    police_player = state.seat(Seat(police)).player

    async def slow(item: Any) -> None:
        payload = item.payload
        police_confirmed = is_private(item) and payload.get("key") == "power.accepted"
        by_police = police_confirmed and state.seat(Seat(payload["seat"])).player == police_player
        if by_police and not go.is_set():
            inside.set()
            await go.wait()
            holding.set()
            await release.wait()
        await performer(item)

    service.set_performer(slow)
    check = SubmitPower(
        player=police_player,
        power=Power.CHECK,
        target=Seat(by_role(roles, "civilian")[0]),
        at=t.bot.runtime.now_ms(),
    )
    checking = asyncio.create_task(service.submit(d.game_id, check))
    await asyncio.wait_for(inside.wait(), 10)
    slash = inspect.unwrap(MemberActor.slash)  # not settled first: the police's DM is held
    acting = asyncio.create_task(
        slash(d.member(killer), t.channel, "act", power="kill", target=target)
    )
    for _ in range(1000):  # until the kill is recorded: its confirmation queues behind the DM
        if any(s.power is Power.KILL for s in (await service.state(d.game_id)).submissions):
            break
        await asyncio.sleep(0.005)
    go.set()
    await asyncio.wait_for(holding.wait(), 10)
    await meanwhile()
    release.set()
    await checking
    result = await acting
    await t.env.settle()
    state = await service.state(d.game_id)
    kills = [s for s in state.submissions.latest().values() if s.power is Power.KILL]
    assert [int(s.target or 0) for s in kills] == [target], "the kill is recorded"
    return result, killer, target


class _Response:
    """What `_deferred_if_slow` uses of an interaction's response: whether it is done, and
    `defer`, noted."""

    def __init__(self) -> None:
        self.deferred: list[bool] = []

    def is_done(self) -> bool:
        return bool(self.deferred)

    async def defer(self, *, ephemeral: bool, thinking: bool) -> None:
        self.deferred.append(thinking)


async def _outcome_after(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "outcome"


async def test_a_slow_submission_is_deferred_and_a_quick_one_is_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """(On the real clock: simcord runs the bot's timers on its own, which only moves when a
    test moves it, and moving it waits for the bot to settle, which a held submission is not.)"""
    monkeypatch.setattr(interactions, "DEFER_AFTER", 0.02)
    quick, slow = SimpleNamespace(response=_Response()), SimpleNamespace(response=_Response())
    answers = await asyncio.gather(
        interactions._deferred_if_slow(quick, _outcome_after(0), thinking=True),  # type: ignore[arg-type]
        interactions._deferred_if_slow(slow, _outcome_after(0.2), thinking=True),  # type: ignore[arg-type]
    )
    assert answers == ["outcome", "outcome"]
    assert quick.response.deferred == [] and slow.response.deferred == [True]


async def test_an_answer_after_the_interaction_expired_confirms_by_dm(tmp_path: Path) -> None:
    async with running_table(tmp_path / "g.db", 8, EnvClock(), "expired-answer") as t:
        d = Driver(t, "v2")
        roles = await d.start()
        await t.env.settle()

        async def four_seconds() -> None:  # the police's DM takes 4 s of Discord's time only
            t.env.backend.clock.advance(4.0)  # (not the bot's: it does not defer)

        result, killer, _ = await act_while_a_dm_is_held(t, d, roles, four_seconds)
        answered = [m.content for m in result.followups]
        if result.response is not None and result.response.content:
            answered.append(result.response.content)
        assert answered == []  # the interaction had expired
        dms = [m.content for m in t.dms(d.member(killer))]
        assert any("Received: " in dm for dm in dms), dms[-2:]


async def _slow_then_failing(*args: Any, **kwargs: Any) -> Any:
    await asyncio.sleep(0.2)  # the database away: its request times out
    raise ConnectionError("database away")


@pytest.mark.parametrize("how", ["menu", "command"])
async def test_a_slow_submission_that_fails_is_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Deferred (slow) and then failed, a choice is told to try again. Before: a menu click
    deferred as an update counted as answered, and the player saw the choice taken."""
    monkeypatch.setattr(interactions, "DEFER_AFTER", 0.02)
    async with running_table(tmp_path / "g.db", 8, EnvClock(), "menu-failure") as t:
        d = Driver(t, "v2")
        roles = await d.start()
        await t.env.settle()
        killer, target = by_role(roles, "killer")[0], by_role(roles, "civilian")[0]
        monkeypatch.setattr(t.bot.runtime.service, "submit", _slow_then_failing)
        if how == "menu":
            result = await d.power_by_menu(killer, "kill", target)
        else:
            result = await d.power_by_command(killer, "kill", target)
        await t.env.settle()
        said = [m.content for m in result.followups]
        if result.response is not None and result.response.content:
            said.append(result.response.content)
        assert render("en", "notice.try_again", {}) in said, said


class _Owed:
    """What `answer_failure` reads and sends on an interaction: its response's type, its
    extras, its locale, and the answers it is given (`respond`: a follow-up once deferred)."""

    def __init__(self, kind: discord.InteractionResponseType, answered: bool) -> None:
        self.sent: list[str] = []
        self.extras: dict[str, Any] = {interactions.ANSWERED: True} if answered else {}
        self.locale = "en-US"
        self.response = SimpleNamespace(type=kind, is_done=lambda: True)

        async def send(text: str, **_: Any) -> None:
            self.sent.append(text)

        self.followup = SimpleNamespace(send=send)


@pytest.mark.parametrize(
    ("kind", "answered", "told"),
    [
        (discord.InteractionResponseType.deferred_channel_message, False, True),
        (discord.InteractionResponseType.deferred_message_update, False, True),  # a slow click
        (discord.InteractionResponseType.deferred_channel_message, True, False),  # answered
        (discord.InteractionResponseType.channel_message, False, False),
    ],
)
async def test_a_failure_is_told_to_try_again_only_where_no_answer_was_given(
    kind: discord.InteractionResponseType, answered: bool, told: bool
) -> None:
    """A deferred interaction's response type says it was deferred, not whether its answer
    followed: a slow command answered "Received." and failing after was also told "nothing
    changed, try again"; a slow menu click (deferred as an update) that failed was told
    nothing."""
    judge = SimpleNamespace(runtime=SimpleNamespace(metrics=None, settings=None))
    owed = _Owed(kind, answered)
    await interactions.answer_failure(judge, owed, ConnectionError("away"), "a test")  # type: ignore[arg-type]
    assert owed.sent == ([render("en", "notice.try_again", {})] if told else [])

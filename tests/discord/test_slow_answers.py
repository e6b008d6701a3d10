"""A command is answered once it is recorded: not after its effects, whose private part
depends on others' roles (the team thread a shot player leaves, a dawn's results queued before
it), and not after Discord's 3 s: one slow to be recorded is deferred ("…is thinking") and
answered later, and one whose interaction expired all the same gets its confirmation by DM (it
is not DMed otherwise: the answer carries it).

Before: the answer waited for the input's private effects and those queued before them; the
killer's /act behind a held DM saw "interaction failed" and got no confirmation at all."""

from __future__ import annotations

import asyncio
import inspect
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


async def hold_the_police_confirmation(
    t: Table, d: Driver, roles: dict[int, str]
) -> tuple[asyncio.Event, asyncio.Task[Any]]:
    """The police checks, and its confirmation DM is held (the private lane busy) until the
    event returned is set; the check's submission."""
    service = t.bot.runtime.service
    performer = t.bot.effects
    inside, release = asyncio.Event(), asyncio.Event()
    state = await service.state(d.game_id)
    police = state.seat(Seat(by_role(roles, "police")[0])).player

    async def slow(item: Any) -> None:
        payload = item.payload
        confirming = is_private(item) and payload.get("key") == "power.accepted"
        if confirming and state.seat(Seat(payload["seat"])).player == police:
            inside.set()
            await release.wait()
        await performer(item)

    service.set_performer(slow)
    target = Seat(by_role(roles, "civilian")[0])
    check = SubmitPower(player=police, power=Power.CHECK, target=target, at=t.bot.runtime.now_ms())
    checking = asyncio.create_task(service.submit(d.game_id, check))
    await asyncio.wait_for(inside.wait(), 10)
    return release, checking


def said(result: Any) -> list[str]:
    texts = [m.content for m in result.followups]
    if result.response is not None and result.response.content:
        texts.insert(0, result.response.content)
    return texts


async def test_a_command_is_answered_while_private_effects_before_it_are_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_table(tmp_path / "g.db", 8, EnvClock(), "answered-at-once") as t:
        d = Driver(t, "v2")
        roles = await d.start()
        await t.env.settle()
        killer, target = by_role(roles, "killer")[0], by_role(roles, "civilian")[1]
        answered: list[str] = []
        respond = interactions.respond

        async def noted(interaction: Any, text: str, **kwargs: Any) -> None:
            answered.append(text)
            await respond(interaction, text, **kwargs)

        monkeypatch.setattr(interactions, "respond", noted)
        release, checking = await hold_the_police_confirmation(t, d, roles)
        slash = inspect.unwrap(MemberActor.slash)  # not settled first: a DM is held
        acting = asyncio.create_task(
            slash(d.member(killer), t.channel, "act", power="kill", target=target)
        )
        for _ in range(2000):  # while the police's DM is still held
            if answered:
                break
            await asyncio.sleep(0.005)
        assert [text.split(" → ")[0] for text in answered] == ["Received: kill (杀人)"]
        release.set()
        await checking
        result = await acting
        await t.env.settle()
        assert said(result) == answered
        dms = [m.content for m in t.dms(d.member(killer))]
        assert not any(dm.startswith("Received: ") for dm in dms)  # confirmed once, above


async def test_an_answer_after_the_interaction_expired_confirms_by_dm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_table(tmp_path / "g.db", 8, EnvClock(), "expired-answer") as t:
        d = Driver(t, "v2")
        roles = await d.start()
        await t.env.settle()
        killer, target = by_role(roles, "killer")[0], by_role(roles, "civilian")[1]
        repo = t.bot.runtime.service.repo
        record = repo.record

        async def slow_record(*args: Any, **kwargs: Any) -> Any:
            t.env.backend.clock.advance(4.0)  # the database slow: 4 s of Discord's time pass
            return await record(*args, **kwargs)

        monkeypatch.setattr(repo, "record", slow_record)
        result = await d.member(killer).slash(t.channel, "act", power="kill", target=target)
        await t.env.settle()
        assert said(result) == []  # the interaction had expired
        dms = [m.content for m in t.dms(d.member(killer))]
        assert len([dm for dm in dms if dm.startswith("Received: kill")]) == 1, dms[-2:]


class _Response:
    """What `answer_command` uses of an interaction's response: whether it is done, and
    `defer`, noted."""

    def __init__(self) -> None:
        self.deferred: list[bool] = []

    def is_done(self) -> bool:
        return bool(self.deferred)

    async def defer(self, *, ephemeral: bool, thinking: bool) -> None:
        self.deferred.append(thinking)


async def test_a_command_slow_to_be_recorded_is_deferred_and_none_waits_for_its_effects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """(On the real clock: simcord runs the bot's timers on its own, which only moves when a
    test moves it, and moving it waits for the bot to settle, which a held submission is not.)"""
    monkeypatch.setattr(interactions, "DEFER_AFTER", 0.05)
    loop = asyncio.get_running_loop()
    events: list[str] = []

    async def answer(*args: Any, **kwargs: Any) -> None:
        events.append("answered")

    monkeypatch.setattr(interactions, "_answer", answer)
    runs = []
    for recording in (0.0, 0.3):

        async def submit(
            game_id: int, command: Any, *, name: Any, recorded: Any, wait: float = recording
        ) -> str:
            await asyncio.sleep(wait)
            recorded("outcome", ())
            await asyncio.sleep(0.3)  # its effects: the answer does not wait for them
            events.append("performed")
            return "outcome"

        events.clear()
        judge = SimpleNamespace(runtime=SimpleNamespace(service=SimpleNamespace(submit=submit)))
        interaction = SimpleNamespace(response=_Response(), extras={}, user=SimpleNamespace(id=1))
        started = loop.time()
        outcome = await interactions.answer_command(judge, interaction, 1, "cmd", by_menu=True)  # type: ignore[arg-type]
        runs.append((outcome, interaction.response.deferred, events[:]))
        assert loop.time() - started >= 0.3  # it returns once the effects are performed
    assert runs == [
        ("outcome", [], ["answered", "performed"]),
        ("outcome", [False], ["answered", "performed"]),  # a click: deferred, nothing owed
    ]


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

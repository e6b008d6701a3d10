"""Two /mod commands at the same moment on a game not in memory (after a restart, a reload, or
another process's game): each names what the game was as it arrived, read once — before the
awaits of the command's own checks — so the second is told, and does not act again.

Before, such a game's state was read after those checks, and for a clock command twice (the
window, then the deadline seen): a command held in its checks while another acted saw the game
as the other had left it, and acted a second time."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import discord
import pytest
from gamebot import Driver, Table, by_role
from simcord import MemberActor

import bot.discord.cogs.moderator as moderator_cog
from bot.records.i18n import render
from bot.records.render import error_text
from engine.model import Seat
from engine.state import OverrideRecord

SEED = "cold-races-seed"
pytestmark = pytest.mark.table(seed=SEED)


def en(key: str, **params: object) -> str:
    return render("en", key, params)


def private(result: Any) -> str:
    """The private answer to an interaction, whether sent at once or after a deferral."""
    texts = [m.content for m in result.followups if m.ephemeral]
    if result.response is not None:
        texts.insert(0, result.response.content)
    assert texts, "no answer"
    return str(texts[0])


def overrides(state: Any, command: str) -> list[OverrideRecord]:
    return [r for r in state.history if isinstance(r, OverrideRecord) and r.command == command]


def cold(t: Table, d: Driver) -> None:
    """The game's state no longer in memory, as after a restart."""
    t.bot.runtime.service._loaded.pop(d.game_id)
    assert t.bot.runtime.service.cached_state(d.game_id) is None


def first_acts_while_second_checks(
    t: Table, monkeypatch: pytest.MonkeyPatch, first: MemberActor, second: MemberActor
) -> None:
    """Both commands arrive together; the second's own checks (the moderators' check, with its
    database reads) last until the first has acted: the first's input is held until the second
    is in its checks, and the second's checks end once the first's input is recorded."""
    service = t.bot.runtime.service
    submit = service.submit
    checking, acted = asyncio.Event(), asyncio.Event()

    async def held_submit(game_id: int, command: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(command, "by", None) != str(first.id):
            return await submit(game_id, command, *args, **kwargs)
        await asyncio.wait_for(checking.wait(), timeout=30)
        try:
            return await submit(game_id, command, *args, **kwargs)
        finally:
            acted.set()

    original = moderator_cog.moderates

    async def slow_check(judge: Any, interaction: discord.Interaction[Any], gid: Any) -> bool:
        if interaction.user.id == second.id:
            checking.set()
            await asyncio.wait_for(acted.wait(), timeout=30)
        return await original(judge, interaction, gid)

    monkeypatch.setattr(service, "submit", held_submit)
    monkeypatch.setattr(moderator_cog, "moderates", slow_check)


async def at_once(*calls: tuple[MemberActor, str, dict[str, Any]], t: Table) -> list[Any]:
    """Slash commands sent together (simcord's guarded verb refuses overlapping ones)."""
    slash = inspect.unwrap(MemberActor.slash)
    results = await asyncio.gather(*(slash(who, t.channel, name, **o) for who, name, o in calls))
    await t.env.settle()
    return list(results)


async def test_two_extends_at_once_on_a_cold_game_move_the_deadline_once(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = table
    d = Driver(t, "v2")
    await d.start()
    before = (await t.bot.runtime.service.state(d.game_id)).deadline
    assert before is not None
    second = t.guild.add_member(t.env.create_user("管理乙"), roles=[t.mod_role])
    await t.env.settle()
    cold(t, d)
    first_acts_while_second_checks(t, monkeypatch, t.moderator, second)
    did, told = await at_once(
        (t.moderator, "mod extend", {"minutes": 30}), (second, "mod extend", {"minutes": 30}), t=t
    )
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.deadline == before + 30 * 60_000
    assert len(overrides(state, "extend")) == 1
    ctx = await t.bot.runtime.contexts.context(d.game_id, locale="en")
    assert private(did) == en("notice.accepted")
    assert private(told) == error_text(ctx, "mod.deadline_moved", {"deadline": state.deadline})


async def test_an_extend_of_a_paused_game_is_refused_once_another_moderator_resumed_it(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second moderator saw the game paused (no deadline): the first's resume lands first,
    and the extend would move a deadline its moderator never saw. It is refused, as it is in
    the other order (paused). Before: it was applied."""
    t = table
    d = Driver(t, "v2")
    await d.start()
    await t.moderator.slash(t.channel, "mod pause")
    second = t.guild.add_member(t.env.create_user("管理乙"), roles=[t.mod_role])
    await t.env.settle()
    cold(t, d)
    first_acts_while_second_checks(t, monkeypatch, t.moderator, second)
    did, told = await at_once(
        (t.moderator, "mod resume", {}), (second, "mod extend", {"minutes": 30}), t=t
    )
    state = await t.bot.runtime.service.state(d.game_id)
    assert state.deadline is not None and not state.paused
    assert overrides(state, "extend") == []
    ctx = await t.bot.runtime.contexts.context(d.game_id, locale="en")
    assert private(did) == en("notice.accepted")
    assert private(told) == error_text(ctx, "mod.deadline_moved", {"deadline": state.deadline})


async def test_two_replacements_of_one_seat_at_once_on_a_cold_game_replace_it_once(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = table
    d = Driver(t, "v2")
    roles = await d.start()
    idle = by_role(roles, "civilian")[0]
    second = t.guild.add_member(t.env.create_user("管理乙"), roles=[t.mod_role])
    other = t.guild.add_member(t.env.create_user("路人乙"))
    await t.env.settle()
    cold(t, d)
    first_acts_while_second_checks(t, monkeypatch, t.moderator, second)
    did, told = await at_once(
        (t.moderator, "mod replace", {"seat": idle, "member": t.outside}),
        (second, "mod replace", {"seat": idle, "member": other}),
        t=t,
    )
    state = await t.bot.runtime.service.state(d.game_id)
    assert len(overrides(state, "replace")) == 1
    assert state.seat(Seat(idle)).player == str(t.outside.id)
    assert private(did) == en("notice.accepted")
    assert private(told) == en("mod.seat_changed", seat=idle)
    assert t.dms(other) == []  # never sent the seat's role


async def test_a_game_id_typed_by_anyone_is_not_read_before_it_is_checked(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the game of the channel a command is used in is read on arrival: a game id typed in
    an option (anyone's to type, from a DM) is checked first (its row: whose server, whose
    seat), so an outsider's `/role game_id:` never has a game's whole log read and kept (it was:
    every game named that way, on any server, stayed in memory)."""
    t = table
    d = Driver(t, "basic")
    await d.start()
    service = t.bot.runtime.service
    service._loaded.pop(d.game_id)
    loads: list[int] = []
    load_game = service.repo.load_game

    async def counted(game_id: int, *args: Any, **kwargs: Any) -> Any:
        loads.append(game_id)
        return await load_game(game_id, *args, **kwargs)

    monkeypatch.setattr(service.repo, "load_game", counted)
    await t.outside.user.send_dm("hi")  # opens the DM channel
    for game_id in (d.game_id, d.game_id + 1000):
        answer = await t.outside.user.slash("role", game_id=game_id)
        assert answer.response is not None and answer.ephemeral
    assert loads == [] and service.cached_state(d.game_id) is None

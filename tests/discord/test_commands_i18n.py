"""Every slash command, option and description has a zh-CN translation; autocomplete offers only
valid targets."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from discord import Locale, app_commands
from envclock import EnvClock
from gamebot import Driver, Table, build_table, make_bot
from simcord import Env

from bot.discord.translator import FaguanTranslator


@pytest_asyncio.fixture
async def table(tmp_path: Path) -> AsyncIterator[Table]:
    clock = EnvClock()
    env = Env(make_bot(tmp_path / "g.db", clock))
    clock.bind(env)
    t = build_table(env, 8)
    await env.start()
    try:
        yield t
    finally:
        await env.shutdown()


def _strings(
    command: app_commands.Command | app_commands.Group | app_commands.ContextMenu,
) -> list[str]:  # type: ignore[type-arg]
    if isinstance(command, app_commands.ContextMenu):  # a name only (判为无效, 替补, 移出游戏)
        return [command.name]
    found = [command.name, str(command.description)]
    if isinstance(command, app_commands.Group):
        for child in command.commands:
            found += _strings(child)
    else:
        for param in command.parameters:
            found.append(param.name)
    return found


async def test_every_command_name_and_description_is_translated(table: Table) -> None:
    translator = FaguanTranslator()
    missing = []
    for command in table.bot.tree.get_commands():
        for text in _strings(command):  # type: ignore[arg-type]
            got = await translator.translate(app_commands.locale_str(text), Locale.chinese, None)  # type: ignore[arg-type]
            if got is None:
                missing.append(text)
    assert missing == []


async def test_act_autocomplete_offers_only_valid_targets(table: Table) -> None:
    d = Driver(table, "basic")
    roles = await d.start()
    police = [s for s, r in roles.items() if r == "police"]
    choices = await table.player(police[0]).autocomplete(
        table.channel, "act", "target", "", power="check"
    )
    offered = {c["value"] for c in choices}
    assert offered == {s for s in range(1, 9) if s not in police}  # police may not check police
    powers = await table.player(police[0]).autocomplete(table.channel, "act", "power", "")
    assert [c["value"] for c in powers] == ["check"]

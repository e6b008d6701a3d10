"""What a restart changed that it should not have, found by the restart-anywhere check
(`tests/robustness/test_rb_restart_anywhere.py`), each reproduced here on its own (each test
failed before its fix):

- `/mod replace` after a restart left the players' role (`法官·第N局`) on the replaced player: the
  handover took the role from the old player only if the bot's member cache held them, and after
  a restart it holds only those seen since (Discord's GUILD_CREATE inlines few members; the rest
  come by chunking, if at all). The substitute was fetched when not cached; the old player now is
  too.
"""

from __future__ import annotations

from typing import Any

import pytest
from gamebot import Driver, Table, restarted

SEED = "restart-differences-seed"
pytestmark = pytest.mark.table(seed=SEED)


async def started(t: Table) -> tuple[int, Any]:
    """A v2 game started: the id of its players' role, and the member seat 8 holds (the one
    replaced)."""
    d = Driver(t, "v2")
    await d.start()
    info = await t.bot.runtime.service.info(d.game_id)
    return int(info.channels["players_role"]), d.member(8)


def holders(t: Table, role_id: int) -> list[int]:
    """Who holds the role, on the server itself (not the bot's cache)."""
    guild = t.env.backend.guilds[t.guild.id]
    return sorted(m.user_id for m in guild.members.values() if role_id in m.role_ids)


async def test_a_replacement_after_a_restart_takes_the_players_role_from_the_replaced(
    table: Table,
) -> None:
    t = table
    role_id, replaced = await started(t)
    assert replaced.id in holders(t, role_id)
    new = await restarted(t)
    guild = new.get_guild(t.guild.id)
    assert guild is not None and guild.get_member(replaced.id) is None  # not seen since
    r = await t.moderator.slash(t.channel, "mod replace", seat=8, member=t.outside)
    assert r.ephemeral
    await t.env.settle()
    assert t.outside.id in holders(t, role_id)
    assert replaced.id not in holders(t, role_id)
    assert not await new.runtime.service.repo.undone_effects()


async def test_a_replaced_player_who_left_the_server_holds_no_handover_up(table: Table) -> None:
    """The other side of fetching the replaced player: one who left the server is not found,
    and the handover goes on without them (the substitute gets the role, nothing stays undone)."""
    t = table
    role_id, replaced = await started(t)
    new = await restarted(t)
    t.guild.remove_member(replaced)
    await t.env.settle()
    r = await t.moderator.slash(t.channel, "mod replace", seat=8, member=t.outside)
    assert r.ephemeral
    await t.env.settle()
    assert t.outside.id in holders(t, role_id)
    assert not await new.runtime.service.repo.undone_effects()
    assert not list(t.env.errors)

"""A night power menu acts for the seat it was sent for, and for no other: its custom id names
the seat in every game (not only where a player holds several cards, 5.0 双身份). A player
replaced out of a seat (moderators may not re-seat them in another) who clicks the menu of the
seat they no longer hold is refused privately, and nothing is recorded. Menus sent before
seats were named in every custom id (`faguan:act:{game}:{night}:{power}`) still act as they
did."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import discord
from envclock import EnvClock
from gamebot import Driver, Table, by_role, running_table
from simcord import MemberActor

from bot.discord.views import PASS, PowerSelect
from bot.records.i18n import render
from engine.model import Power

SEED = "e2e-seed"


def _kill_menu(t: Table, member: MemberActor, game_id: int) -> tuple[discord.Message, str]:
    """The night-1 kill select in a member's DMs (the only one), with its custom id."""
    prefix = f"faguan:act:{game_id}:1:kill"
    found = [
        (message, str(child.custom_id))
        for message in t.dms(member)
        for row in message.components
        for child in getattr(row, "children", [])
        if str(getattr(child, "custom_id", "")).startswith(prefix)
    ]
    assert len(found) == 1, found
    return found[0]


async def test_the_menu_of_a_seat_the_player_left_acts_for_no_other_seat(tmp_path: Path) -> None:
    """The killer in seat A is replaced by an outsider; made the substitute of the other killer,
    in seat B, they would act for seat B with seat A's menu — and carry seat A's knowledge into
    another seat: that re-seating is refused (`mod.played_before`, tests/discord/
    test_moderator_audit.py). Seat A's night-1 kill menu, clicked now, is refused (privately, no
    one's role named) and records no kill."""
    async with running_table(tmp_path / "g.db", 8, EnvClock(), SEED) as t:
        d = Driver(t, "v2")
        roles = await d.start()
        first, second = by_role(roles, "killer")
        victim = by_role(roles, "civilian")[0]
        old = d.member(first)
        menu, custom_id = _kill_menu(t, old, d.game_id)

        await t.moderator.slash(t.channel, "mod replace", seat=first, member=t.outside)
        await t.env.settle()
        refused = await t.moderator.slash(t.channel, "mod replace", seat=second, member=old)
        await t.env.settle()
        assert refused.response is not None and refused.ephemeral
        assert refused.response.content == render(
            "en", "mod.played_before", {"player": f"<@{old.id}>"}
        )
        state = await t.bot.runtime.service.state(d.game_id)
        assert state.seats_of(str(old.id)) == ()
        public = t.public()

        clicked = await old.user.select(menu, [str(victim)], custom_id=custom_id)
        state = await t.bot.runtime.service.state(d.game_id)
        assert state.submissions == ()  # no kill from seat A's menu
        assert clicked.ephemeral and clicked.response is not None
        assert clicked.response.content == render("en", "actor.not_player", {})
        assert "killer" not in clicked.response.content.lower()
        assert t.public() == public  # nothing public


async def test_a_menu_click_acts_in_a_one_card_game(tmp_path: Path) -> None:
    async with running_table(tmp_path / "g.db", 8, EnvClock(), SEED) as t:
        d = Driver(t, "v2")
        roles = await d.start()
        killer = by_role(roles, "killer")[0]
        police = by_role(roles, "police")[0]
        victim = by_role(roles, "civilian")[0]
        _menu, custom_id = _kill_menu(t, d.member(killer), d.game_id)
        assert custom_id == f"faguan:act:{d.game_id}:1:kill:{killer}"
        await d.power_by_menu(killer, "kill", victim)
        await d.power_by_menu(police, "check", None)  # a pass
        state = await t.bot.runtime.service.state(d.game_id)
        got = {(int(s.seat), s.power.value, s.target) for s in state.submissions}
        assert got == {(killer, "kill", victim), (police, "check", None)}


async def test_a_menu_click_acts_in_a_five_card_game(tmp_path: Path) -> None:
    async with running_table(tmp_path / "g.db", 8, EnvClock(), "v5-threads") as t:
        d = Driver(t, "v5")
        roles = await d.start()
        killer = by_role(roles, "killer")[0]
        victim = next(
            s for s, r in roles.items() if r == "civilian" and d.member(s) != d.member(killer)
        )
        await d.power_by_menu(killer, "kill", victim)  # `…:kill:{card}`
        state = await t.bot.runtime.service.state(d.game_id)
        assert [(int(s.seat), s.target) for s in state.submissions] == [(killer, victim)]


async def test_a_menu_sent_without_its_seat_still_acts(tmp_path: Path) -> None:
    """A menu sent before every custom id named its seat (`faguan:act:{game}:1:kill`, still in
    the DMs of running games) acts as it did: for the player's seat holding the power."""
    async with running_table(tmp_path / "g.db", 8, EnvClock(), SEED) as t:
        d = Driver(t, "v2")
        roles = await d.start()
        killer = by_role(roles, "killer")[0]
        victim = by_role(roles, "civilian")[0]
        member = d.member(killer)
        options = [
            discord.SelectOption(label=PASS, value=PASS),
            discord.SelectOption(label=str(victim), value=str(victim)),
        ]
        select = PowerSelect(d.game_id, 1, Power.KILL, options)
        custom_id = f"faguan:act:{d.game_id}:1:kill"
        assert select.item.custom_id == custom_id and select.card is None
        view = discord.ui.View(timeout=None)
        view.add_item(select)
        user: Any = t.bot.get_user(member.id) or await t.bot.fetch_user(member.id)
        await user.send("an old menu", view=view)
        await t.env.settle()
        message = next(
            m
            for m in reversed(t.dms(member))
            for row in m.components
            for child in getattr(row, "children", [])
            if str(getattr(child, "custom_id", "")) == custom_id
        )
        await member.user.select(message, [str(victim)], custom_id=custom_id)
        state = await t.bot.runtime.service.state(d.game_id)
        assert [(int(s.seat), s.target) for s in state.submissions] == [(killer, victim)]

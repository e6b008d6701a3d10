"""A night power menu offers every valid target, however many: Discord takes at most 25 options a
select, so a power whose targets do not fit in one (5.0 双身份 with 16 players: 32 cards, a
"pass" and up to 31 targets) is split over several selects, each of which submits the same
power for the same card. A card's menu never takes more than Discord's 5 action rows."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import discord
from envclock import EnvClock
from gamebot import Driver, Table, make_bot, running_table

from bot.discord.views import PASS, PowerSelect
from engine.rulesets import RULESETS

SEED = "v5-pages"
PLAYERS = 16  # 32 cards


def _menus(t: Table, d: Driver, member: Any, card: int) -> list[tuple[discord.Message, Any]]:
    """The night-1 kill selects of `card` in its holder's DMs, with their messages."""
    prefix = f"faguan:act:{d.game_id}:1:kill:{card}"
    found = []
    for message in t.dms(member):
        for row in message.components:
            for child in getattr(row, "children", []):
                custom_id = str(getattr(child, "custom_id", ""))
                if custom_id == prefix or custom_id.startswith(prefix + ":"):
                    found.append((message, child))
    return found


async def test_a_card_above_the_25th_is_chosen_from_the_menu(tmp_path: Path) -> None:
    async with running_table(tmp_path / "g.db", PLAYERS, EnvClock(), SEED) as t:
        d = Driver(t, "v5")
        roles = await d.start()  # night 1
        assert len(roles) == 32
        killer = next(s for s, role in sorted(roles.items()) if role == "killer")
        member = d.member(killer)
        mine = {killer, killer + 1 if killer % 2 else killer - 1}
        target = max(s for s in roles if s not in mine and s > 25)

        menus = _menus(t, d, member, killer)
        offered = [str(o.value) for _message, select in menus for o in select.options]
        # every other card of the game, and "pass" once
        assert sorted(offered) == sorted([PASS, *(str(s) for s in roles if s != killer)])
        assert offered.count(PASS) == 1
        assert all(len(select.options) <= 25 for _m, select in menus)
        ids = [str(select.custom_id) for _m, select in menus]
        assert len(set(ids)) == len(ids) == 2

        message, select = next(
            (m, s) for m, s in menus if str(target) in {str(o.value) for o in s.options}
        )
        await member.user.select(message, [str(target)], custom_id=str(select.custom_id))
        await t.env.settle()
        state = await t.bot.runtime.service.state(d.game_id)
        assert [(int(s.seat), s.power.value, s.target) for s in state.submissions] == [
            (killer, "kill", target)
        ]


async def test_a_later_select_still_acts_after_a_restart(tmp_path: Path) -> None:
    """The menus are `DynamicItem`s: a bot started again reads the card and power from a later
    select's custom id as from the first's."""
    clock = EnvClock()
    async with running_table(tmp_path / "g.db", PLAYERS, clock, SEED) as t:
        d = Driver(t, "v5")
        roles = await d.start()
        killer = next(s for s, role in sorted(roles.items()) if role == "killer")
        member = d.member(killer)
        message, select = next(
            (m, s) for m, s in _menus(t, d, member, killer) if str(s.custom_id).endswith(":p2")
        )
        target = int(select.options[-1].value)
        assert target > 25
        new = make_bot(tmp_path / "g.db", clock, seed=SEED)
        await t.env.restart_bot(new)
        await t.env.settle()
        await member.user.select(message, [str(target)], custom_id=str(select.custom_id))
        await t.env.settle()
        state = await new.runtime.service.state(d.game_id)
        assert [(int(s.seat), s.target) for s in state.submissions] == [(killer, target)]


def test_a_cards_menu_fits_in_five_action_rows_in_every_ruleset() -> None:
    """The worst case of every ruleset: its most powers on a card, each with a "pass" (and a
    "use") and every card of the largest table as a target."""
    for ruleset in RULESETS.values():
        powers = max((len(p) for p in ruleset.role_powers.values()), default=1)
        options = 2 + ruleset.max_players * ruleset.cards_per_player
        assert powers * math.ceil(options / 25) <= 5, ruleset.id


def test_a_later_page_maps_to_the_same_power_and_card() -> None:
    pattern = PowerSelect.__discord_ui_compiled_template__  # type: ignore[attr-defined]
    match = pattern.fullmatch("faguan:act:12:3:kill:27:p2")
    assert match is not None
    assert (match["game"], match["night"], match["power"], match["card"]) == (
        "12",
        "3",
        "kill",
        "27",
    )
    single = pattern.fullmatch("faguan:act:12:3:check:p2")  # a player holding one card
    assert single is not None and single["card"] is None and single["power"] == "check"

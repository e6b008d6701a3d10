"""Clicks on a night's power menu, which stays in the DM for good: after its night a choice made
in it is refused (by day, and in the next night, where it would otherwise be taken as that
night's choice); after the game's end, or by a player replaced by a substitute, too; a player
in two games acts in each game from its own menu. Every refusal is private, names no one's
role, and changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envclock import EnvClock
from gamebot import Driver, Table, by_role, running_table

from bot.records.i18n import render

SEED = "e2e-seed"


def _dm_with(t: Table, member: Any, custom_id: str) -> Any:
    for message in reversed(t.dms(member)):
        for row in message.components:
            for child in getattr(row, "children", []):
                if str(getattr(child, "custom_id", "")) == custom_id:
                    return message
    raise AssertionError(f"no DM with {custom_id}")


async def test_a_menu_of_night_1_is_refused_by_day_and_in_night_2(tmp_path: Path) -> None:
    async with running_table(tmp_path / "g.db", 8, EnvClock(), SEED) as t:
        d = Driver(t, "v2")
        roles = await d.start()
        killer = by_role(roles, "killer")[0]
        first, second = by_role(roles, "civilian")[:2]
        member = d.member(killer)
        custom_id = f"faguan:act:{d.game_id}:1:kill:{killer}"
        night_1 = _dm_with(t, member, custom_id)
        refused = render("en", "phase.menu_over", {"night": 1})

        await d.lock()  # a quiet night 1
        by_day = await member.user.select(night_1, [str(first)], custom_id=custom_id)
        assert by_day.ephemeral and by_day.response is not None
        assert by_day.response.content == refused

        await d.lock()  # a day without votes: night 2
        state = await t.bot.runtime.service.state(d.game_id)
        assert state.window is not None and state.window.number == 2 and not state.over
        later = await member.user.select(night_1, [str(second)], custom_id=custom_id)
        assert later.ephemeral and later.response is not None
        assert later.response.content == refused
        state = await t.bot.runtime.service.state(d.game_id)
        assert state.submissions == ()  # night 2 took nothing from night 1's menu

        # night 2's own menu acts
        await d.power_by_menu(killer, "kill", second)
        state = await t.bot.runtime.service.state(d.game_id)
        assert [(int(s.seat), s.target) for s in state.submissions] == [(killer, second)]


async def test_a_menu_after_the_end_or_by_a_replaced_player_is_refused(tmp_path: Path) -> None:
    async with running_table(tmp_path / "g.db", 8, EnvClock(), SEED) as t:
        d = Driver(t, "v2")
        roles = await d.start()
        killer = by_role(roles, "killer")[0]
        victim = by_role(roles, "civilian")[0]
        old = d.member(killer)
        custom_id = f"faguan:act:{d.game_id}:1:kill:{killer}"
        menu = _dm_with(t, old, custom_id)

        await t.moderator.slash(t.channel, "mod replace", seat=killer, member=t.outside)
        await t.env.settle()
        replaced = await old.user.select(menu, [str(victim)], custom_id=custom_id)
        assert replaced.ephemeral and replaced.response is not None
        assert replaced.response.content == render("en", "actor.not_player", {})
        state = await t.bot.runtime.service.state(d.game_id)
        assert state.submissions == ()  # nothing for the seat the substitute holds now

        await t.moderator.slash(t.channel, "mod end", winner="draw")
        await t.env.settle()
        new = _dm_with(t, t.outside, custom_id)  # the substitute's own menu
        ended = await t.outside.user.select(new, [str(victim)], custom_id=custom_id)
        assert ended.ephemeral and ended.response is not None
        assert ended.response.content == render("en", "phase.game_over", {})


async def test_a_player_in_two_games_acts_in_each_from_its_menu(tmp_path: Path) -> None:
    async with running_table(tmp_path / "g.db", 8, EnvClock(), SEED) as t:
        first = Driver(t, "v2")
        roles1 = await first.start()
        home = t.channel
        t.channel = t.guild.create_text_channel("game-2")
        t.players.reverse()  # other seats in the second game
        second = Driver(t, "v2")
        roles2 = await second.start()
        t.players.reverse()
        t.channel = home
        powers = {"killer": "kill", "police": "check"}
        member, seat1, seat2 = next(
            (m, i + 1, len(t.players) - i)
            for i, m in enumerate(t.players)
            if roles1[i + 1] in powers and roles2[len(t.players) - i] in powers
        )
        power1, power2 = powers[roles1[seat1]], powers[roles2[seat2]]
        target1 = by_role(roles1, "civilian")[0]
        target2 = by_role(roles2, "civilian")[-1]
        id1 = f"faguan:act:{first.game_id}:1:{power1}:{seat1}"
        id2 = f"faguan:act:{second.game_id}:1:{power2}:{seat2}"
        await member.user.select(_dm_with(t, member, id2), [str(target2)], custom_id=id2)
        await member.user.select(_dm_with(t, member, id1), [str(target1)], custom_id=id1)
        for driver, want in ((first, (seat1, power1, target1)), (second, (seat2, power2, target2))):
            state = await t.bot.runtime.service.state(driver.game_id)
            assert [(int(s.seat), s.power.value, s.target) for s in state.submissions] == [want]
